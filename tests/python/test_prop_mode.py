"""lockstep.prop.mode and `lockstep prop mode`: the guide calculator's keys, units and SI numbers,
the hand formulas for γ, P0, N and the lengths, β1 and β2 against finite differences of β,
the zero-dispersion and RDW wavelengths against their conditions, the CLI's JSON equal to the
Python dict, and bad input."""
import json
import math
import os
import subprocess

import pytest

lockstep = pytest.importorskip("lockstep")
try:
    import lockstep.prop as lp
except ImportError as e:  # a build without the propagation engine
    pytest.skip(str(e), allow_module_level=True)

C = 299792458.0
KEYS = ["n_minus_1", "beta", "beta1", "beta2", "beta3", "beta4", "beta5", "beta6", "alpha", "loss_db_per_m", "aeff",
        "zdw", "n2", "gamma", "peak_power", "t0", "dispersion_length", "nonlinear_length", "soliton_order",
        "fission_length", "rdw_wavelength", "zdws"]
PULSE_KEYS = ["peak_power", "t0", "dispersion_length", "nonlinear_length", "soliton_order", "fission_length"]

CLI = os.environ.get("LOCKSTEP_CLI", "")
needs_cli = pytest.mark.skipif(not (CLI and os.access(CLI, os.X_OK)),
                               reason="set LOCKSTEP_CLI to the lockstep command-line tool (scripts/test.sh does)")


def cli(*args):
    return subprocess.run([CLI, "prop", "mode", *args], capture_output=True, text=True, timeout=60)


def test_keys_types_and_the_example():
    r = lp.mode("He", "5 bar", "75 um", "800 nm", energy="0.5 mJ", duration="30 fs")
    assert list(r) == KEYS
    assert all(isinstance(r[k], float) for k in KEYS if k != "zdws")
    assert r["zdws"] == [r["zdw"]]
    # The physics in broad strokes: helium's index, anomalous dispersion at 800 nm with the
    # ZDW to the blue, the RDW beyond it, γ of order 1e-9 /W/m.
    assert r["n_minus_1"] == pytest.approx(1.6e-4, rel=0.02)
    assert r["beta1"] == pytest.approx(1 / C, rel=1e-3)
    assert r["beta2"] < 0 < r["beta3"]
    assert r["rdw_wavelength"] < r["zdw"] < 800e-9
    assert 1e-9 < r["gamma"] < 3e-9
    assert r["loss_db_per_m"] == pytest.approx(10 / math.log(10) * r["alpha"], rel=1e-14)


def test_units_and_si_numbers_are_the_same_query():
    with_units = lp.mode("Ar", "500 mbar", "100 um", "1030 nm", temperature="25 degC", energy="200 uJ",
                         duration="40 fs", shape="gaussian")
    si = lp.mode("ar", 5e4, 100e-6, 1030e-9, temperature=298.15, energy=2e-4, duration=4e-14, shape="gaussian")
    assert with_units == si
    assert lp.mode("Ar", "1 atm", "100 um", "1 um") == lp.mode("Ar", 101325, "0.1 mm", "1000 nm")


def test_gamma_peak_power_soliton_order_and_lengths_by_hand():
    a, lam, energy, fwhm = 125e-6, 800e-9, 300e-6, 10e-15
    for shape in ("sech", "gaussian"):
        r = lp.mode("He", "0.4 bar", a, lam, model="reduced", energy=energy, duration=fwhm, shape=shape)
        w0 = 2 * math.pi * C / lam
        aeff = 1.497168950909 * a * a  # HE11: 2π (J1(u)⁴/4) / ∫ r J0(ur)⁴ dr, docs/GAS.md §4
        assert r["aeff"] == pytest.approx(aeff, rel=1e-12)
        gamma = r["n2"] * w0 / (C * aeff)
        assert r["gamma"] == pytest.approx(gamma, rel=1e-12)
        t0 = fwhm / (2 * math.acosh(math.sqrt(2))) if shape == "sech" else fwhm / (2 * math.sqrt(math.log(2)))
        p0 = energy / (2 * t0) if shape == "sech" else energy / (math.sqrt(math.pi) * t0)
        assert r["t0"] == pytest.approx(t0, rel=1e-15)
        assert r["peak_power"] == pytest.approx(p0, rel=1e-15)
        b2 = abs(r["beta2"])
        n = math.sqrt(gamma * p0 * t0 ** 2 / b2)
        assert r["soliton_order"] == pytest.approx(n, rel=1e-12)
        assert r["dispersion_length"] == pytest.approx(t0 ** 2 / b2, rel=1e-14)
        assert r["nonlinear_length"] == pytest.approx(1 / (gamma * p0), rel=1e-12)
        assert r["fission_length"] == pytest.approx(t0 ** 2 / b2 / n, rel=1e-12)


def test_beta1_and_beta2_are_the_derivatives_of_beta():
    # Central differences of β(ω) from the calculator at neighbouring wavelengths: step h = 1e-3 ω0,
    # truncation h²β3/6 relative to β1, rounding ~1e-16 β/h; β2 from the β1 values the same way.
    lam0 = 800e-9
    w0 = 2 * math.pi * C / lam0
    h = 1e-3 * w0
    at = {s: lp.mode("Ne", "3 bar", "100 um", 2 * math.pi * C / (w0 + s * h)) for s in (-1, 0, 1)}
    beta1 = (at[1]["beta"] - at[-1]["beta"]) / (2 * h)
    assert beta1 == pytest.approx(at[0]["beta1"], rel=1e-9)
    beta2 = (at[1]["beta1"] - at[-1]["beta1"]) / (2 * h)
    assert beta2 == pytest.approx(at[0]["beta2"], rel=1e-5)
    beta3 = (at[1]["beta2"] - at[-1]["beta2"]) / (2 * h)
    assert beta3 == pytest.approx(at[0]["beta3"], rel=1e-5)


def test_zero_dispersion_and_rdw_wavelengths_meet_their_conditions():
    q = dict(gas="Ar", pressure="1 bar", radius="75 um", energy="50 uJ", duration="20 fs")
    r = lp.mode(wavelength="800 nm", **q)
    # β2 changes sign at the ZDW: anomalous on its red side, normal on its blue side.
    assert lp.mode(wavelength=r["zdw"] * 1.01, **q)["beta2"] < 0 < lp.mode(wavelength=r["zdw"] * 0.99, **q)["beta2"]
    assert abs(lp.mode(wavelength=r["zdw"], **q)["beta2"]) < 1e-9 * abs(r["beta2"])
    # β(ω) − β(ω0) − β1(ω0)(ω − ω0) − γP0/2 = 0 at the RDW.
    w0, w = 2 * math.pi * C / 800e-9, 2 * math.pi * C / r["rdw_wavelength"]
    mismatch = lp.mode(wavelength=r["rdw_wavelength"], **q)["beta"] - r["beta"] - r["beta1"] * (w - w0)
    assert mismatch == pytest.approx(r["gamma"] * r["peak_power"] / 2, abs=1e-6)
    # Without a pulse the linear condition, the RDW a little to the red of the nonlinear one.
    linear = lp.mode("Ar", "1 bar", "75 um", "800 nm")
    assert r["rdw_wavelength"] < linear["rdw_wavelength"] < r["zdw"]


def test_without_a_pulse_or_in_normal_dispersion_values_are_none():
    r = lp.mode("Ar", "1 bar", "75 um", "800 nm")
    assert all(r[k] is None for k in PULSE_KEYS)
    assert r["rdw_wavelength"] is not None
    normal = lp.mode("Ar", "10 bar", "100 um", "400 nm", energy="0.1 mJ", duration="30 fs")
    assert normal["beta2"] > 0
    assert normal["fission_length"] is None and normal["rdw_wavelength"] is None
    assert normal["soliton_order"] > 0
    empty = lp.mode("He", 0, "75 um", "800 nm")  # evacuated: no gas, no zero of β2
    assert empty["zdw"] is None and empty["zdws"] == [] and empty["gamma"] == 0


def test_cladding_index_forms_and_the_vacuum_ultraviolet_window():
    base = dict(gas="Ar", pressure="1 bar", radius="75 um", wavelength="800 nm")
    a = lp.mode(**base, cladding_index=1.45 + 0.01j)
    assert a == lp.mode(**base, cladding_index="1.45+0.01i") == lp.mode(**base, cladding_index="1.45 + 1e-2j")
    assert lp.mode(**base, cladding_index=1.45) == lp.mode(**base, cladding_index="1.45")
    assert a["alpha"] != lp.mode(**base)["alpha"]
    # A helium RDW in the vacuum ultraviolet: outside the default window, found with the reduced
    # form and a wider one.
    he = dict(gas="He", pressure="1 bar", radius="125 um", wavelength="800 nm")
    assert lp.mode(**he)["rdw_wavelength"] is None
    vuv = lp.mode(**he, model="reduced", search_min="100 nm")
    assert 150e-9 < vuv["rdw_wavelength"] < 210e-9


def test_bad_input_raises_value_errors_with_the_cli_messages():
    with pytest.raises(ValueError, match=r"\[prop.mode\] pressure: unknown unit 'bars'"):
        lp.mode("He", "5 bars", "75 um", "800 nm")
    with pytest.raises(ValueError, match=r"\[prop.mode\] gas: unknown gas \"helium\""):
        lp.mode("helium", "5 bar", "75 um", "800 nm")
    with pytest.raises(ValueError, match=r"\[prop.mode\] model: 'exact' is not full or reduced"):
        lp.mode("He", "5 bar", "75 um", "800 nm", model="exact")
    with pytest.raises(ValueError, match=r"\[prop.mode\] duration: a pulse needs both energy and duration"):
        lp.mode("He", "5 bar", "75 um", "800 nm", duration="30 fs")
    with pytest.raises(ValueError, match=r"\[prop.mode\] wavelength 5e-06 m must lie inside the search window"):
        lp.mode("He", "5 bar", "75 um", "5 um")
    with pytest.raises(ValueError, match=r"\[prop.mode\] core radius 0 m must be finite and > 0"):
        lp.mode("He", "5 bar", 0, "800 nm")
    with pytest.raises(ValueError, match=r"\[prop.mode\] cladding_index: .* negative imaginary part"):
        lp.mode("He", "5 bar", "75 um", "800 nm", cladding_index=1.45 - 0.1j)
    with pytest.raises(ValueError, match=r"\[prop.gas\]"):  # outside the equation of state
        lp.mode("He", "200 bar", "75 um", "800 nm")
    with pytest.raises(TypeError, match=r"\[prop.mode\] pressure"):
        lp.mode("He", [5], "75 um", "800 nm")


@needs_cli
def test_cli_json_is_the_python_dict():
    args = ["--gas", "He", "--pressure", "5 bar", "--radius", "75 um", "--wavelength", "800 nm"]
    for extra, kwargs in [([], {}),
                          (["--energy", "0.5 mJ", "--duration", "30 fs"], dict(energy="0.5 mJ", duration="30 fs")),
                          (["--model", "reduced", "--temperature", "300 K", "--cladding-index", "1.5+0.01i",
                            "--energy", "1e-4", "--duration", "2e-14", "--shape", "gaussian", "--helium", "borzsonyi"],
                           dict(model="reduced", temperature="300 K", cladding_index="1.5+0.01i", energy=1e-4,
                                duration=2e-14, shape="gaussian", helium="borzsonyi"))]:
        r = cli(*args, *extra, "--json")
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("\n") == 1
        assert json.loads(r.stdout) == lp.mode("He", "5 bar", "75 um", "800 nm", **kwargs)  # bit for bit, None = null


@needs_cli
def test_cli_table_has_units_and_omits_the_pulse_rows_without_a_pulse():
    args = ["--gas", "Ar", "--pressure", "1 bar", "--radius", "75 um", "--wavelength", "800 nm"]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("HE11 of a hollow capillary")
    for name, unit in [("beta2", "s^2/m"), ("loss", "dB/m"), ("A_eff", "m^2"), ("zero dispersion", "nm"),
                       ("gamma", "1/(W m)"), ("RDW", "nm")]:
        assert any(line.split()[:len(name.split())] == name.split() and unit in line for line in lines), name
    assert "soliton order" not in r.stdout and "pulse:" not in r.stdout
    r = cli(*args, "--energy", "50 uJ", "--duration", "20 fs")
    assert "soliton order N" in r.stdout and "fission length" in r.stdout and "peak power P0" in r.stdout


@needs_cli
def test_cli_bad_input_exits_2_with_the_message():
    r = cli("--gas", "He", "--pressure", "5 bars", "--radius", "75 um", "--wavelength", "800 nm")
    assert r.returncode == 2
    assert "[prop.mode] pressure: unknown unit 'bars'" in r.stderr
    r = cli("--gas", "He", "--pressure", "5 bar", "--radius", "75 um")
    assert r.returncode == 2 and "--wavelength is required" in r.stderr
