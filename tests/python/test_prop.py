"""lockstep.prop: recipes from text, files and dicts; run, scan, resume and propagate; results and
their files; Ctrl-C; the CLI's files from Python; bad input."""
import os
import pathlib
import signal
import subprocess
import threading

import numpy as np
import pytest

lockstep = pytest.importorskip("lockstep")
try:
    import lockstep.prop as lp
except ImportError as e:  # a build without the propagation engine
    pytest.skip(str(e), allow_module_level=True)

# A fundamental soliton over 1 cm on a small grid: a fraction of a second per member.
# P0 = |β2| / (γ T0²), T0 = FWHM / (2 acosh √2) (Agrawal, Nonlinear Fiber Optics, §5.2).
P0 = 11.83e-27 / (0.11 * (50e-15 / (2 * np.arccosh(np.sqrt(2)))) ** 2)
SOLITON = {
    "grid": {"points": 1024, "time_window": "2 ps"},
    "fibre": {"length": "1 cm", "betas_unit": "ps^k/m", "betas": [-11.83e-3], "gamma": "0.11 /W/m",
              "self_steepening": False, "raman": "none"},
    "pulse": {"shape": "sech", "fwhm": "50 fs", "peak_power": f"{P0} W"},
    "output": {"n_save": 11},
}

SOLITON_TOML = (pathlib.Path(__file__).parents[1] / "data" / "soliton.toml").read_text().format(p0=P0)


def with_scan(recipe, axes):
    return {**recipe, "scan": axes}


def relative_difference(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_recipes_from_text_file_and_dict_are_the_same(tmp_path):
    path = tmp_path / "soliton.toml"
    path.write_text(SOLITON_TOML)
    hashes = {lp.recipe(SOLITON).config_hash, lp.recipe(SOLITON_TOML).config_hash,
              lp.recipe(path).config_hash, lp.recipe(str(path)).config_hash}
    assert len(hashes) == 1
    r = lp.recipe(SOLITON)
    assert "fibre" in r.canonical and r.labels == [""]
    assert lp.recipe(r) is r
    # Numbers and unit strings as in TOML: 0.11 /W/m written either way.
    assert lp.recipe({**SOLITON, "fibre": {**SOLITON["fibre"], "gamma": 0.11}}).config_hash == r.config_hash
    assert lp.recipe(None).config_hash == lp.recipe({}).config_hash  # the built-in Dudley case


def test_bad_recipes_raise_value_errors_with_the_cli_messages(tmp_path):
    with pytest.raises(ValueError, match=r"\[prop.recipe\] fibre.length: must be > 0"):
        lp.recipe({"fibre": {"length": "-1 cm"}})
    with pytest.raises(ValueError, match=r"\[prop.recipe\] fibre.lenght"):
        lp.recipe({"fibre": {"lenght": "1 cm"}})
    with pytest.raises(ValueError, match=r"\[prop.recipe\] fibre.length: .*not a TOML value"):
        lp.recipe({"fibre": {"length": object()}})
    with pytest.raises(ValueError, match=r"\[prop.recipe\]"):
        lp.recipe("[fibre\nlength = 1")
    with pytest.raises(FileNotFoundError):
        lp.recipe(tmp_path / "missing.toml")
    with pytest.raises(TypeError):
        lp.recipe(3.5)


def test_run_writes_files_that_load_equal_to_the_result(tmp_path):
    r = lp.run(SOLITON, tmp_path, progress=False, base="soliton")
    assert r.path == str(tmp_path / "soliton.h5") and os.path.exists(r.path)
    assert r.Ew.shape == r.Et.shape == (11, 1024) and r.Ew.dtype == np.complex128
    np.testing.assert_allclose(r.z, np.linspace(0, 0.01, 11), rtol=0, atol=1e-15)
    assert r.ledger["z"] == pytest.approx(0.01) and r.ledger["accepted_steps"] > 0
    loaded = lp.load(r.path)
    for name in ("z", "t", "omega", "wavelength", "Ew", "Et"):
        assert np.array_equal(getattr(loaded, name), getattr(r, name)), name
    for name, column in r.stats.items():
        assert np.array_equal(loaded.stats[name], column), name
    assert loaded.ledger == r.ledger and loaded.config == r.config and loaded.label == ""
    # SI units: ω ascending, λ = 2πc/ω, |A|² in W (the input's peak power).
    assert np.all(np.diff(r.omega) > 0)
    np.testing.assert_allclose(r.wavelength, 2 * np.pi * 299792458.0 / r.omega, rtol=1e-15)
    assert np.max(np.abs(r.Et[0]) ** 2) == pytest.approx(P0, rel=1e-3)
    # A fundamental soliton keeps its peak power.
    assert np.max(np.abs(r.Et[-1]) ** 2) == pytest.approx(P0, rel=2e-2)


def test_propagate_in_memory_equals_the_run(tmp_path):
    on_disk = lp.run(SOLITON, tmp_path, progress=False)
    in_memory = lp.propagate(SOLITON)
    assert in_memory.path is None and not any(tmp_path.glob("memory*"))
    assert in_memory.ledger["accepted_steps"] == on_disk.ledger["accepted_steps"]
    assert relative_difference(in_memory.Ew, on_disk.Ew) < 1e-10


def test_scan_on_its_axes_and_load_scan(tmp_path):
    recipe = with_scan(SOLITON, {"pulse.peak_power": ["100 W", "120 W", "140 W"], "fibre.gamma": [0.1, 0.11]})
    s = lp.scan(recipe, tmp_path, progress=False, base="scan")
    assert s.shape == (3, 2) and s.members == 0
    assert s.axes == [("pulse.peak_power", ["100W", "120W", "140W"]), ("fibre.gamma", ["0.1", "0.11"])]
    assert s.results[2, 0].label == "peak_power=140W,gamma=0.1"
    energy = s.stack("energy")
    assert energy.shape == (3, 2)
    # Energy grows with the peak power, and not with γ.
    assert np.all(np.diff(energy[:, 0]) > 0)
    assert energy[1, 0] == pytest.approx(energy[1, 1], rel=1e-9)
    assert s.stack("Ew").shape == (3, 2, 11, 1024)
    again = lp.load_scan(tmp_path)
    assert again.shape == (3, 2)
    assert np.array_equal(again.results[1, 1].Ew, s.results[1, 1].Ew)
    os.remove(tmp_path / "scan_peak_power-140W_gamma-0.11.h5")
    with pytest.raises(ValueError, match="lacks 1 member"):
        lp.load_scan(tmp_path)
    with pytest.raises(ValueError, match="one member"):
        lp.scan(SOLITON, tmp_path / "one")


# A helium-filled capillary over 5 cm, launched by energy (a fraction of a second per member).
CAPILLARY = {
    "grid": {"points": 512, "time_window": "1 ps", "center_wavelength": "800 nm"},
    "fibre": {"type": "capillary", "length": "5 cm", "gas": "He", "pressure": "1 bar", "radius": "125 um"},
    "pulse": {"shape": "sech", "fwhm": "30 fs", "energy": "20 uJ"},
    "output": {"n_save": 3},
}


def test_capillary_launched_by_energy_and_scanned_over_pressure(tmp_path):
    r = lp.propagate(CAPILLARY)
    assert r.stats["energy"][0] == pytest.approx(20e-6, rel=1e-12)
    # The mode's loss: the energy falls (by about α·L = 0.14 /m × 5 cm), no Raman, no β_k.
    assert 0.99 < r.stats["energy"][-1] / r.stats["energy"][0] < 0.999
    assert 'type = "capillary"' in r.config and "energy = " in r.config
    assert "betas" not in r.config and "peak_power" not in r.config
    s = lp.scan(with_scan(CAPILLARY, {"fibre.pressure": ["0.5 bar", "2 bar"], "pulse.energy": ["10 uJ", "20 uJ"]}),
                tmp_path, progress=False, base="capillary")
    assert s.shape == (2, 2)
    assert s.results[1, 0].label == "pressure=2bar,energy=10uJ"
    launched = [[s.results[i, j].stats["energy"][0] for j in range(2)] for i in range(2)]
    np.testing.assert_allclose(launched, [[10e-6, 20e-6], [10e-6, 20e-6]], rtol=1e-12)
    with pytest.raises(ValueError, match=r"fibre.gamma: applies to fibre.type = \"coefficients\" only"):
        lp.recipe({**CAPILLARY, "fibre": {**CAPILLARY["fibre"], "gamma": 0.1}})
    with pytest.raises(ValueError, match=r"pulse.peak_power: give either pulse.peak_power or pulse.energy"):
        lp.recipe({**CAPILLARY, "pulse": {**CAPILLARY["pulse"], "peak_power": "1 kW"}})


def test_ensemble_member_index_last(tmp_path):
    recipe = {**with_scan(SOLITON, {"pulse.peak_power": ["100 W", "120 W"]}),
              "ensemble": {"members": 3, "seed": 7}}
    s = lp.scan(recipe, tmp_path, progress=False)
    assert s.shape == (2, 3) and s.members == 3
    assert s.results[1, 2].label.endswith("member=2")


def test_progress_function_and_its_exception(tmp_path):
    seen = []
    lp.run(SOLITON, tmp_path / "a", progress=lambda *a: seen.append(a))
    assert seen and seen[-1][7] is True and seen[-1][3] == pytest.approx(0.01)

    def fail(*args):
        raise RuntimeError("from the progress function")

    with pytest.raises(RuntimeError, match="from the progress function"):
        lp.run(SOLITON, tmp_path / "b", progress=fail)
    # The files were saved where the run stopped, and resume finishes them.
    r = lp.resume(tmp_path / "b", progress=False)
    assert r.ledger["z"] == pytest.approx(0.01)


# The Dudley case on a smaller grid and fibre at a tight tolerance: a few seconds of stepping.
SHORT = {"grid": {"points": 4096, "time_window": "6 ps"}, "fibre": {"length": "3 cm"},
         "stepping": {"rtol": 1e-8}, "output": {"n_save": 20}}


def test_ctrl_c_raises_keyboard_interrupt_after_saving_and_resume_ends_as_an_uninterrupted_run(tmp_path):
    whole = lp.run(SHORT, tmp_path / "whole", progress=False)
    # SIGINT while the run is inside the library (the GIL released), as Ctrl-C sends it.
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            lp.run(SHORT, tmp_path / "parts", progress=False)
    finally:
        timer.cancel()
    saved = lp.load(tmp_path / "parts" / "run.h5")
    assert 0 < saved.ledger["z"] < 0.03
    resumed = lp.resume([tmp_path / "parts" / "run.h5"], SHORT, progress=False)
    assert resumed.ledger["accepted_steps"] == whole.ledger["accepted_steps"]
    assert relative_difference(resumed.Ew, whole.Ew) < 1e-8
    # A recipe that differs is refused, naming the field.
    with pytest.raises(ValueError, match="rtol"):
        lp.resume(tmp_path / "parts", {**SHORT, "stepping": {"rtol": 1e-7}})


def test_bad_run_options(tmp_path):
    with pytest.raises(ValueError, match="device"):
        lp.propagate(SOLITON, device="tpu")
    with pytest.raises(ValueError, match="precision"):
        lp.propagate(SOLITON, precision="f16")
    with pytest.raises(ValueError, match="evaluation"):
        lp.propagate(SOLITON, evaluation="fast")
    with pytest.raises(ValueError, match="CPU only"):
        lp.propagate(SOLITON, device="cuda", evaluation="reference")
    with pytest.raises(TypeError):
        lp.propagate(SOLITON, progress="yes")
    with pytest.raises(FileNotFoundError):
        lp.resume([tmp_path / "none.h5"])
    with pytest.raises(ValueError, match="no result files"):
        lp.resume(tmp_path)


CLI = os.environ.get("LOCKSTEP_CLI", "")


@pytest.mark.skipif(not (CLI and os.access(CLI, os.X_OK)), reason="set LOCKSTEP_CLI to compare with the CLI")
def test_python_files_match_the_cli(tmp_path):
    path = tmp_path / "soliton.toml"
    path.write_text(SOLITON_TOML)
    subprocess.run([CLI, "prop", "run", str(path), "-o", str(tmp_path / "cli"), "--quiet", "--no-plots"],
                   check=True, capture_output=True, timeout=120)
    cli = lp.load(tmp_path / "cli" / "soliton.h5")
    py = lp.run(path, tmp_path / "py", progress=False)
    assert pathlib.Path(py.path).name == "soliton.h5"
    assert py.config_hash == cli.config_hash and py.recipe == cli.recipe
    assert py.ledger["accepted_steps"] == cli.ledger["accepted_steps"]
    assert np.array_equal(py.z, cli.z)
    # Both processes take their measured FFTW plans from the session's wisdom file (conftest.py):
    # the same plans, the same bits.
    assert np.array_equal(py.stats["z"], cli.stats["z"])
    assert np.array_equal(py.Ew, cli.Ew)


@pytest.mark.skipif(not (CLI and os.access(CLI, os.X_OK)), reason="set LOCKSTEP_CLI to run the CLI")
def test_fftw_wisdom_is_kept_between_processes_and_can_be_turned_off(tmp_path):
    path = tmp_path / "soliton.toml"
    path.write_text(SOLITON_TOML)

    def cli_run(out, **env):
        environment = {k: v for k, v in os.environ.items() if k not in ("LOCKSTEP_FFTW_WISDOM", "XDG_CACHE_HOME")}
        subprocess.run([CLI, "prop", "run", str(path), "-o", str(tmp_path / out), "--quiet", "--no-plots"],
                       check=True, capture_output=True, timeout=120, env={**environment, **env})
        return lp.load(tmp_path / out / "soliton.h5")

    # By default under $XDG_CACHE_HOME/lockstep, one file per FFTW version and CPU model.
    first = cli_run("a", XDG_CACHE_HOME=str(tmp_path / "cache"))
    files = list((tmp_path / "cache" / "lockstep").glob("fftw-*.wisdom"))
    assert len(files) == 1 and files[0].read_text().startswith("(fftw-3")
    written = files[0].stat().st_mtime_ns
    # Later runs read it and measure nothing new, so the file stays as it was; they plan alike and
    # compute the same bits. (The first run's estimated plans came before any wisdom, so its
    # rounding may differ.)
    second = cli_run("b", XDG_CACHE_HOME=str(tmp_path / "cache"))
    third = cli_run("b2", XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert files[0].stat().st_mtime_ns == written
    assert np.array_equal(second.Ew, third.Ew)
    assert relative_difference(first.Ew, second.Ew) < 1e-9
    # A file named by LOCKSTEP_FFTW_WISDOM; "off" keeps none.
    cli_run("c", LOCKSTEP_FFTW_WISDOM=str(tmp_path / "w" / "plans"))
    assert (tmp_path / "w" / "plans").read_text().startswith("(fftw-3")
    cli_run("d", LOCKSTEP_FFTW_WISDOM="off", XDG_CACHE_HOME=str(tmp_path / "none"))
    assert not (tmp_path / "none").exists()
    # A cache that cannot be written is no error.
    (tmp_path / "file").write_text("")
    cli_run("e", LOCKSTEP_FFTW_WISDOM=str(tmp_path / "file" / "plans"))


def test_build_summary_names_the_propagation_engine():
    assert "propagation: CPU" in lockstep.build_summary()


# --- analysis and figures ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def soliton_result():
    return lp.propagate(SOLITON)


def test_energy_and_photon_number_match_the_statistics(soliton_result):
    r = soliton_result
    assert lp.energy(r) == pytest.approx(r.stats["energy"][-1], rel=1e-12)
    assert lp.photon_number(r) == pytest.approx(r.stats["photon_number"][-1], rel=1e-12)
    assert lp.energy(r, 0) == pytest.approx(r.stats["energy"][0], rel=1e-12)


def test_spectral_densities_integrate_to_the_energy(soliton_result):
    r = soliton_result
    domega = r.omega[1] - r.omega[0]
    assert np.sum(lp.spectral_density(r)) * domega == pytest.approx(lp.energy(r), rel=1e-12)
    lam, s = lp.wavelength_spectrum(r)
    assert np.all(np.diff(lam) > 0)
    # The Jacobian: ∫S(λ)dλ = ∫S(ω)dω (the trapezoid rule on the non-uniform λ grid).
    assert np.trapz(s, lam) == pytest.approx(lp.energy(r), rel=1e-4)


def test_bandpass(soliton_result):
    r = soliton_result
    lam0 = 2 * np.pi * 299792458.0 / r.omega[np.argmax(np.abs(r.Ew[-1]))]
    wide = lp.bandpass(r, lam0 / 2, lam0 * 2, order=16)
    np.testing.assert_allclose(wide, r.Et[-1], atol=1e-6 * np.max(np.abs(r.Et[-1])))
    narrow = lp.bandpass(r, lam0 * 0.999, lam0 * 1.001)
    assert np.sum(np.abs(narrow) ** 2) < 0.1 * np.sum(np.abs(r.Et[-1]) ** 2)
    in_omega = lp.bandpass(r, r.omega[0], r.omega[-1] * 2, in_wavelength=False, order=16)
    assert np.sum(np.abs(in_omega) ** 2) == pytest.approx(np.sum(np.abs(r.Et[-1]) ** 2), rel=1e-3)
    with pytest.raises(ValueError, match="low < high"):
        lp.bandpass(r, 2e-6, 1e-6)
    with pytest.raises(ValueError, match="even"):
        lp.bandpass(r, 1e-6, 2e-6, order=3)


def test_spectrogram_marginal_and_xfrog_with_the_gate(soliton_result):
    r = soliton_result
    fwhm = 40e-15
    tau, omega, s = lp.spectrogram(r, fwhm)
    assert s.shape == (len(tau), len(r.t)) and np.array_equal(omega, r.omega)
    # ∫∫ S dω dτ = E · ∫|g|² dτ = E · σ√(2π), σ the intensity gate's standard deviation.
    sigma = fwhm / (2 * np.sqrt(2 * np.log(2)))
    total = np.sum(s) * (omega[1] - omega[0]) * (tau[1] - tau[0])
    assert total == pytest.approx(lp.energy(r) * sigma * np.sqrt(2 * np.pi), rel=1e-6)
    # XFROG with the gate itself as reference: the same trace (delays on the grid's samples).
    gate = np.exp(-(r.t ** 2) / (4 * sigma ** 2))
    _, _, x = lp.xfrog(r, gate, delays=tau)
    np.testing.assert_allclose(x, s, rtol=0, atol=1e-12 * np.max(s))
    with pytest.raises(ValueError):
        lp.spectrogram(r, 0)
    with pytest.raises(ValueError, match="shape"):
        lp.xfrog(r, gate[:10])


def test_coherence_of_an_ensemble(tmp_path):
    recipe = {**SOLITON, "ensemble": {"members": 4, "seed": 3}}
    s = lp.scan(recipe, tmp_path, progress=False)
    lam, g12 = lp.coherence(s.results)
    spectra = np.stack([m.Ew[-1] for m in s.results.flat])
    m = len(spectra)
    cross = np.abs(np.sum(spectra, axis=0)) ** 2 - np.sum(np.abs(spectra) ** 2, axis=0)
    mean = np.mean(np.abs(spectra) ** 2, axis=0)
    expected = np.where(mean > 0, np.abs(cross / (m * (m - 1))) / np.where(mean > 0, mean, 1), 0)
    np.testing.assert_allclose(g12, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(lam, s.results.flat[0].wavelength)
    # Shot noise on a soliton: coherent where the pulse is, not far out in the wings.
    centre = np.argmax(mean)
    assert g12[centre] > 0.99 and np.min(g12) < 0.5
    with pytest.raises(ValueError, match="at least 2"):
        lp.coherence(s.results.flat[:1])
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    line = lp.plot_coherence(s.results).axes[0].get_lines()[0]
    positive = s.results.flat[0].omega > 0
    np.testing.assert_allclose(line.get_ydata(), g12[positive])


def test_figures_show_the_data(soliton_result, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    r = soliton_result
    fig = lp.plot_spectrum(r)
    lines = fig.axes[0].get_lines()
    positive = r.omega > 0
    for line, p in zip(lines, (0, -1)):
        power = np.abs(r.Ew[p, positive]) ** 2
        expected = 10 * np.log10(np.maximum(power, power.max() * 1e-6) / power.max())
        np.testing.assert_allclose(line.get_ydata(), expected)
        np.testing.assert_allclose(line.get_xdata(), r.wavelength[positive] * 1e9)
    lam, z, db = lp.spectral_evolution(r)
    fig = lp.plot_spectral_evolution(r)
    np.testing.assert_allclose(fig.axes[0].collections[0].get_array().reshape(db.shape), db)
    assert db.max() == 0 and db.min() >= -40
    t, z, db = lp.temporal_evolution(r)
    fig = lp.plot_temporal_evolution(r)
    np.testing.assert_allclose(fig.axes[0].collections[0].get_array().reshape(db.shape), db)
    fig = lp.plot_spectrogram(r, 40e-15)
    assert fig.axes[0].collections
    fig.savefig(tmp_path / "spectrogram.png")
    assert (tmp_path / "spectrogram.png").stat().st_size > 0
