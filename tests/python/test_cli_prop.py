"""`lockstep prop`: result files read with h5py, a run killed mid-way and resumed, interruption,
scans and ensembles, and bad input from the command line."""
import os
import pathlib
import signal
import subprocess
import time

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

CLI = os.environ.get("LOCKSTEP_CLI", "")
if not (CLI and os.access(CLI, os.X_OK)):
    pytest.skip("set LOCKSTEP_CLI to the lockstep command-line tool (scripts/test.sh does)",
                allow_module_level=True)
if subprocess.run([CLI, "prop", "--help"], capture_output=True).returncode != 0:
    pytest.skip("this lockstep was built without the propagation engine (LOCKSTEP_PROP=OFF)",
                allow_module_level=True)

# The Dudley case on a smaller grid and fibre, tight tolerance: a few seconds of stepping
# through soliton fission (the defaults fill in every other key).
SHORT = """
[grid]
points = 4096
time_window = "6 ps"
[fibre]
length = "3 cm"
[stepping]
rtol = 1e-8
[output]
n_save = 50
"""

# A fundamental soliton, 1 cm: a fraction of a second ({p0}: its peak power).
SOLITON = (pathlib.Path(__file__).parents[1] / "data" / "soliton.toml").read_text()


def run(*args, timeout=300):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)


def write(path, text):
    path.write_text(text)
    return str(path)


def soliton_p0():
    """P0 of the fundamental soliton, a Python float (so that repr() writes a plain number in a
    recipe, also under NumPy 2)."""
    t0 = 50e-15 / (2 * np.arccosh(np.sqrt(2)))
    return float(11.83e-27 / (0.11 * t0**2))


def test_result_file_layout_and_physics(tmp_path):
    """A fundamental soliton: the file's layout as documented, read by h5py, and the physics in
    it (|A|² kept, the phase advancing by γP0z/2)."""
    p0 = soliton_p0()
    recipe = write(tmp_path / "soliton.toml", SOLITON.format(p0=repr(p0)))
    r = run("prop", "run", recipe, "-o", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "out" / "soliton.h5", "r") as f:
        assert f["meta/schema"][()].decode() == "lockstep.prop/1"
        assert "[pulse]" in f["meta/recipe"][()].decode()
        assert len(f["meta/config_hash"][()].decode()) == 64
        t, omega, z = f["grid/t"][()], f["grid/omega"][()], f["planes/z"][()]
        et, ew = f["planes/Et"][()], f["planes/Ew"][()]
        assert et.dtype == np.complex128 and ew.dtype == np.complex128
        assert et.shape == ew.shape == (11, 1024)
        assert np.all(np.diff(omega) > 0) and np.all(omega > 0)
        assert z[0] == 0 and z[-1] == pytest.approx(0.01, rel=1e-12)
        assert f["ledger/z"][()] == pytest.approx(0.01, rel=1e-12)
        n = f["stats/photon_number"][()]
        assert np.max(np.abs(n / n[0] - 1)) < 1e-8
    # |A|² unchanged, phase at the peak γP0z/2 (tolerance: rtol 1e-6 of the stepper, the grid).
    peak = np.argmax(np.abs(et[0]))
    assert np.max(np.abs(np.abs(et[-1]) ** 2 - np.abs(et[0]) ** 2)) < 1e-5 * p0
    phase = np.angle(et[-1][peak] / et[0][peak])
    assert phase == pytest.approx(0.11 * p0 * 0.01 / 2, rel=1e-5)
    for kind in ("spectral", "temporal", "spectrum"):
        assert (tmp_path / "out" / f"soliton_{kind}.png").stat().st_size > 1000


def final_field(path):
    with h5py.File(path, "r") as f:
        return f["planes/Ew"][-1], f["ledger/z"][()], f["ledger/accepted_steps"][()]


def test_killed_run_resumes_to_the_same_field(tmp_path):
    """SIGKILL mid-run leaves a readable checkpoint; `prop resume` ends on the field of an
    uninterrupted run (same steps; round-off from FFTW's plans may differ between processes)."""
    recipe = write(tmp_path / "short.toml", SHORT)
    r = run("prop", "run", recipe, "-o", str(tmp_path / "whole"), "--quiet", "--no-plots")
    assert r.returncode == 0, r.stderr
    ref, z_ref, steps_ref = final_field(tmp_path / "whole" / "short.h5")

    out = tmp_path / "killed"
    proc = subprocess.Popen([CLI, "prop", "run", recipe, "-o", str(out), "--quiet", "--no-plots",
                             "--checkpoint", "0.2"])
    path = out / "short.h5"
    deadline = time.time() + 60
    z = 0.0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
        if path.exists():
            try:
                with h5py.File(path, "r") as f:
                    z = f["ledger/z"][()]
            except OSError:
                continue  # a reader may open the file just as it is renamed over
            if z > 0.008:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _, z_killed, _ = final_field(path)
    assert 0 < z_killed < 0.03, "the kill should land mid-run"

    r = run("prop", "resume", str(path), "--quiet", "--no-plots")
    assert r.returncode == 0, r.stderr
    got, z_got, steps_got = final_field(path)
    assert z_got == pytest.approx(z_ref, rel=1e-12)
    assert steps_got == steps_ref
    assert np.max(np.abs(got - ref)) <= 1e-9 * np.max(np.abs(ref))


# Two batches (a scanned stepping setting cannot share a batch): the first member's first step,
# 1 cm, is rejected and its next may not fall below 5 mm, so its batch fails at once; the second
# runs to the end.
FAILING_BATCH = SHORT + """
[scan]
"stepping.min_step" = ["5 mm", "0 m"]
"""
FAILING_BATCH = FAILING_BATCH.replace("rtol = 1e-8", 'rtol = 1e-8\ninitial_step = "1 cm"')


def check_failing_batch(tmp_path, *device):
    """An error inside one batch: the run reports it (exit 1, naming the member's file and that
    the files are resumable) after the other batch has run to its end; both files are valid."""
    recipe = write(tmp_path / "two.toml", FAILING_BATCH)
    out = tmp_path / "out"
    r = run("prop", "scan", recipe, "-o", str(out), "--quiet", "--no-plots", *device)
    assert r.returncode == 1, r.stderr
    assert "1 batch of the run failed" in r.stderr and "below stepping.min_step" in r.stderr, r.stderr
    assert "two_min_step-5mm.h5" in r.stderr and "prop resume" in r.stderr
    _, z_failed, _ = final_field(out / "two_min_step-5mm.h5")
    _, z_done, _ = final_field(out / "two_min_step-0m.h5")
    assert z_failed == 0
    assert z_done == pytest.approx(0.03, rel=1e-12)


def test_error_in_one_batch_leaves_the_others_complete(tmp_path):
    check_failing_batch(tmp_path)


def interrupted_run(args, out, wait_for, delay=0.3):
    """Runs the CLI with `args` and sends SIGINT `delay` s after `wait_for` appears; returns
    whether it was interrupted (status 130) rather than finished."""
    proc = subprocess.Popen([CLI, *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not wait_for.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 130), err
    return proc.returncode == 130


def test_resume_completes_a_checkpoint_killed_during_its_renames(tmp_path):
    """A batch's files are staged, then renamed: a kill between two renames leaves one member
    at the new checkpoint and the next staged. `prop resume` completes the renames, so the batch
    resumes together and ends on the files of a resume of the whole checkpoint."""
    recipe = write(tmp_path / "pair.toml", SHORT + "\n[ensemble]\nmembers = 2\n")
    a, old = tmp_path / "a", tmp_path / "old"
    names = ["pair_member-0.h5", "pair_member-1.h5"]
    if not interrupted_run(["prop", "scan", recipe, "-o", str(a), "--quiet", "--no-plots"], a, a / names[0]):
        pytest.fail("the run ended before the interrupt; make SHORT longer")
    old.mkdir()
    for n in names:
        (old / n).write_bytes((a / n).read_bytes())
    # A later checkpoint in a (or the end, if the resume finishes first).
    interrupted_run(["prop", "resume", *(str(a / n) for n in names), "--quiet", "--no-plots"], a, a / names[0], 0.5)
    _, z_old, _ = final_field(old / names[1])
    _, z_new, _ = final_field(a / names[1])
    assert z_new > z_old

    # The kill between the renames: member 0 committed, member 1 staged.
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / names[0]).write_bytes((a / names[0]).read_bytes())
    (mixed / names[1]).write_bytes((old / names[1]).read_bytes())
    (mixed / (names[1] + ".tmp")).write_bytes((a / names[1]).read_bytes())
    r = run("prop", "resume", *(str(mixed / n) for n in names), "--quiet", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert "1 file(s) completed from the checkpoint a kill interrupted" in r.stderr
    r = run("prop", "resume", *(str(a / n) for n in names), "--quiet", "--no-plots")
    assert r.returncode == 0, r.stderr
    for n in names:
        got, z_got, steps_got = final_field(mixed / n)
        ref, z_ref, steps_ref = final_field(a / n)
        assert z_got == pytest.approx(z_ref, rel=1e-12) and steps_got == steps_ref
        assert np.max(np.abs(got - ref)) <= 1e-9 * np.max(np.abs(ref))

    # A staged file at no committed position (a kill while staging) is left alone.
    staged_only = tmp_path / "staged"
    staged_only.mkdir()
    for n in names:
        (staged_only / n).write_bytes((old / n).read_bytes())
    (staged_only / (names[1] + ".tmp")).write_bytes((a / names[1]).read_bytes())
    r = run("prop", "resume", *(str(staged_only / n) for n in names), "--quiet", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert "completed from the checkpoint" not in r.stderr


def test_interrupt_saves_and_resume_refuses_another_recipe(tmp_path):
    recipe = write(tmp_path / "short.toml", SHORT)
    out = tmp_path / "int"
    proc = subprocess.Popen([CLI, "prop", "run", recipe, "-o", str(out), "--quiet", "--no-plots"],
                            stderr=subprocess.PIPE, text=True)
    # The result file is written before the first step (setup takes about as long as the
    # stepping, about 1.4 s here): interrupt shortly after it appears, not after a fixed time.
    deadline = time.monotonic() + 60
    while not (out / "short.h5").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.fail("the run ended before the interrupt; make SHORT longer")
    assert proc.returncode == 130, err
    assert "interrupted" in err and "prop resume" in err
    _, z, _ = final_field(out / "short.h5")
    assert 0 < z < 0.03

    other = write(tmp_path / "other.toml", SHORT.replace('length = "3 cm"', 'length = "4 cm"'))
    r = run("prop", "resume", str(out / "short.h5"), "--recipe", other, "--quiet")
    assert r.returncode == 2
    assert "fibre.length" in r.stderr

    r = run("prop", "resume", str(out / "short.h5"), "--recipe", recipe, "--quiet", "--no-plots")
    assert r.returncode == 0, r.stderr
    _, z, _ = final_field(out / "short.h5")
    assert z == pytest.approx(0.03, rel=1e-12)


def test_ensemble_scan_batched_equals_reference(tmp_path):
    """Three shot-noise members in one lockstep batch: one file each, a coherence figure, and
    the same fields whether the batch evaluates them together or each in turn."""
    p0 = soliton_p0()
    recipe = write(tmp_path / "ens.toml",
                   SOLITON.format(p0=repr(4 * p0)) + "\n[ensemble]\nmembers = 3\nseed = 7\n")
    fields = {}
    for mode in ("batched", "reference"):
        out = tmp_path / mode
        r = run("prop", "scan", recipe, "-o", str(out), "--quiet", "--evaluation", mode)
        assert r.returncode == 0, r.stderr
        files = sorted(out.glob("*.h5"))
        assert len(files) == 3
        fields[mode] = [final_field(f)[0] for f in files]
        with h5py.File(files[0], "r") as f:
            assert f["meta/label"][()].decode() == "member=0"
        assert (out / "coherence.png").stat().st_size > 1000
        # An ensemble draws its first member's figures only (`prop plot` draws any other).
        assert sorted(p.name for p in out.glob("*_spectral.png")) == ["ens_member-0_spectral.png"]
    # Two processes may plan different FFT algorithms (FFTW_MEASURE): the same steps, with
    # round-off of 1e-16 grown through the propagation; within one process the runners agree
    # more tightly (the C++ runner tests).
    for a, b in zip(fields["batched"], fields["reference"]):
        assert np.max(np.abs(a - b)) <= 1e-10 * np.max(np.abs(b))
    # Different noise seeds: the members differ.
    assert np.max(np.abs(fields["batched"][0] - fields["batched"][1])) > 0


def test_capillary_example(tmp_path):
    """examples/capillary_he.toml runs from the command line: the pulse compresses and a part of
    its energy goes below 400 nm; the file's configuration is the capillary's."""
    example = pathlib.Path(__file__).parents[2] / "examples" / "capillary_he.toml"
    r = run("prop", "run", str(example), "-o", str(tmp_path), "--no-plots")
    assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "capillary_he.h5", "r") as f:
        config = f["meta/config"].asstr()[()]
        assert 'type = "capillary"' in config and 'gas = "He"' in config and "peak_power" not in config
        peak = f["stats/peak_power"][:]
        assert peak.max() > 1.8 * peak[0]
        assert f["stats/energy"][0] == pytest.approx(0.5e-3, rel=1e-12)
        spectrum = np.abs(f["planes/Ew"][-1]) ** 2
        ultraviolet = f["grid/wavelength"][:] < 400e-9
        assert spectrum[ultraviolet].sum() > 0.03 * spectrum.sum()


@pytest.mark.parametrize("args,message", [
    (["prop", "run", "{bad}"], "fibre.lenght"),
    (["prop", "run", "{neg}"], "fibre.length"),
    (["prop", "scan", "{one}"], "[scan]"),
    (["prop", "run", "missing.toml"], "missing.toml"),
    (["prop", "run", "--evaluation", "fast"], "evaluation"),
    (["prop", "resume", "{notfile}"], "notfile"),
    (["prop", "run", "--device", "gpu"], "--device"),
    (["prop", "run", "--precision", "f16"], "--precision"),
    (["prop", "run", "{one}", "--precision", "f32"], "CUDA only"),
    (["prop", "run", "--device", "cuda", "--evaluation", "reference"], "CPU only"),
])
def test_bad_input(tmp_path, args, message):
    files = {
        "bad": write(tmp_path / "bad.toml", "[fibre]\nlenght = \"1 m\"\n"),
        "neg": write(tmp_path / "neg.toml", "[fibre]\nlength = \"-1 m\"\n"),
        "one": write(tmp_path / "one.toml", SOLITON.format(p0="1000")),
        "notfile": write(tmp_path / "notfile.h5", "not an HDF5 file"),
    }
    r = run(*[a.format(**files) for a in args], "-o", str(tmp_path / "o")) if args[1] != "resume" \
        else run(*[a.format(**files) for a in args])
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert message in r.stderr
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr


def test_replayed_schedule(tmp_path):
    """--replay: a fixed schedule made of an earlier adaptive run's step ends (plus the save
    planes) reproduces that run's field to its tolerance, with no rejected step."""
    p0 = soliton_p0()
    recipe = write(tmp_path / "n2.toml", SOLITON.format(p0=repr(4 * p0)))
    assert run("prop", "run", recipe, "-o", str(tmp_path / "a"), "--quiet", "--no-plots").returncode == 0
    r = run("prop", "run", recipe, "-o", str(tmp_path / "b"), "--quiet", "--no-plots",
            "--replay", str(tmp_path / "a" / "n2.h5"))
    assert r.returncode == 0, r.stderr
    a, _, steps_a = final_field(tmp_path / "a" / "n2.h5")
    b, z_b, steps_b = final_field(tmp_path / "b" / "n2.h5")
    assert z_b == pytest.approx(0.01, rel=1e-12)
    assert steps_b >= steps_a
    with h5py.File(tmp_path / "b" / "n2.h5", "r") as f:
        assert f["ledger/rejected_steps"][()] == 0
    assert np.max(np.abs(a - b)) <= 1e-5 * np.max(np.abs(a))
    other = write(tmp_path / "long.toml", SOLITON.format(p0=repr(p0)).replace('"1 cm"', '"2 cm"'))
    r = run("prop", "run", other, "-o", str(tmp_path / "c"), "--replay", str(tmp_path / "a" / "n2.h5"))
    assert r.returncode == 2 and "fibre is 0.02 m long" in r.stderr


def test_device_cuda_runs_or_says_why_not(tmp_path):
    """`prop run --device cuda`: where CUDA cannot run (a build without it, or no visible GPU, as
    in CI) a clear error and exit status 1 before any file is written; where it can, the run
    writes the same file as on the CPU and the two fields agree."""
    recipe = write(tmp_path / "soliton.toml", SOLITON.format(p0=repr(soliton_p0())))
    r = run("prop", "run", recipe, "-o", str(tmp_path / "gpu"), "--device", "cuda", "--quiet", "--no-plots")
    if r.returncode != 0:
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert "CUDA" in r.stderr and "Traceback" not in r.stderr and "terminate" not in r.stderr
        assert not (tmp_path / "gpu").exists() or not any((tmp_path / "gpu").iterdir())
        return
    assert run("prop", "run", recipe, "-o", str(tmp_path / "cpu"), "--quiet", "--no-plots").returncode == 0
    gpu, _, _ = final_field(tmp_path / "gpu" / "soliton.h5")
    cpu, _, _ = final_field(tmp_path / "cpu" / "soliton.h5")
    assert np.max(np.abs(gpu - cpu)) <= 1e-9 * np.max(np.abs(cpu))
