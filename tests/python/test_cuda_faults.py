"""The CUDA engines under contention and faults, on a GPU (skipped as a module without one).

QKAN, through torch:
* the layer used from two CUDA streams at once (two threads, a stream each, interleaved
  forward + backward calls) gives the results of the same calls made one after another;
* a captured CUDA graph of a layer's forward + backward, replayed while another process loads
  the GPU, gives the eager result on every replay.

Propagation, through the `lockstep` CLI (LOCKSTEP_CLI):
* `prop scan --device cuda` killed with SIGKILL mid-run, then `prop resume`, ends on the files of
  an uninterrupted run;
* a batch that does not fit in the memory another process leaves free is split until it fits,
  and the run ends on the files of a run that fitted at once (to the tolerance: the split batches
  take steps of their own);
* a member that does not fit alone fails with an error naming the memory needed and free; every
  file stays valid and `prop resume` finishes it once the memory is back;
* an error inside one batch leaves the other batches' files complete (and its own resumable),
  as on the CPU (test_cli_prop.py).
"""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import torch

import lockstep

if not torch.cuda.is_available():
    pytest.skip("CUDA fault tests: torch sees no CUDA device", allow_module_level=True)
if not lockstep.cuda_available():
    pytest.skip(f"CUDA fault tests: this lockstep build has no CUDA ({lockstep.build_summary()})",
                allow_module_level=True)

import lockstep.qkan as lq  # noqa: E402

CLI = os.environ.get("LOCKSTEP_CLI", "")
needs_cli = pytest.mark.skipif(
    not (CLI and os.access(CLI, os.X_OK)
         and subprocess.run([CLI, "prop", "--help"], capture_output=True).returncode == 0),
    reason="set LOCKSTEP_CLI to a lockstep built with the propagation engine")
h5py = pytest.importorskip("h5py")


# ---------------------------------------------------------------------------------------------
# Helpers: another process on the same GPU
# ---------------------------------------------------------------------------------------------
def _other_process(code):
    """A Python process on the GPU running `code`; it prints 'ready' once set up and runs until
    its stdin closes."""
    script = textwrap.dedent(code) + textwrap.dedent("""
        import sys
        print("ready", flush=True)
        sys.stdin.read()
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.strip() == "ready", f"the other process did not start: {line!r}"
    return p


def _stop(p):
    p.stdin.close()
    p.wait(timeout=60)


def memory_hog(leave_mib):
    """Another process that holds all the device memory but `leave_mib` MiB."""
    return _other_process(f"""
        import torch
        held = []
        while True:
            free, _ = torch.cuda.mem_get_info()
            take = min(free - {leave_mib} * 2**20, 256 * 2**20)
            if take < 2**20:
                break
            held.append(torch.empty(take, dtype=torch.uint8, device="cuda"))
    """)


def gpu_load():
    """Another process that keeps the GPU busy with matrix products until it is stopped."""
    return _other_process("""
        import threading, torch
        a = torch.randn(4096, 4096, device="cuda")
        stop = threading.Event()
        def spin():
            while not stop.is_set():
                for _ in range(20):
                    a @ a
                torch.cuda.synchronize()
        threading.Thread(target=spin, daemon=True).start()
    """)


# ---------------------------------------------------------------------------------------------
# QKAN
# ---------------------------------------------------------------------------------------------
# float64: the backward's batch sums are atomic, so repeated calls agree to rounding, not bit
# for bit; in float64 that rounding sits far below the tolerance of the comparisons.
TOL = dict(rtol=1e-9, atol=1e-12)


def _layer_and_data(seed, B=300, I=33, O=7):
    torch.manual_seed(seed)
    layer = lq.QKANLayer(I, O, reps=3, device="cuda", preact_trainable=True,
                         postact_weight_trainable=True, postact_bias_trainable=True,
                         c_dtype=torch.complex128, p_dtype=torch.float64)
    g = torch.Generator().manual_seed(seed + 1)
    xs = [(torch.rand(B, I, generator=g, dtype=torch.float64) * 2 - 1).cuda() for _ in range(6)]
    return layer, xs


def _forward_backward(layer, x):
    x = x.clone().requires_grad_(True)
    y = layer(x)
    grads = torch.autograd.grad((y * y).sum(), [x, *(p for p in layer.parameters() if p.requires_grad)])
    return [y.detach()] + [t.detach() for t in grads]


def test_layer_on_two_streams_at_once_matches_sequential_calls():
    layers = [_layer_and_data(11), _layer_and_data(12)]
    expected = [[_forward_backward(layer, x) for x in xs] for layer, xs in layers]
    torch.cuda.synchronize()
    got = [None, None]
    errors = []
    barrier = threading.Barrier(2)

    def worker(k):
        try:
            layer, xs = layers[k]
            s = torch.cuda.Stream()
            out = []
            with torch.cuda.stream(s):
                barrier.wait()
                for _ in range(5):  # repeated, so that the two streams' calls overlap
                    out = [_forward_backward(layer, x) for x in xs]
            s.synchronize()
            got[k] = out
        except Exception as e:  # noqa: BLE001 — reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(2):
        for call, (a, b) in enumerate(zip(got[k], expected[k])):
            for i, (u, v) in enumerate(zip(a, b)):
                torch.testing.assert_close(u, v, **TOL,
                                           msg=lambda m: f"layer {k} call {call} tensor {i}: {m}")


def test_graph_replayed_under_load_matches_eager():
    layer, xs = _layer_and_data(21)
    static_x = xs[0].clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            _forward_backward(layer, static_x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = _forward_backward(layer, static_x)
    eager = [_forward_backward(layer, x) for x in xs]
    load = gpu_load()
    try:
        for rep in range(10):
            for k, x in enumerate(xs):
                static_x.copy_(x)
                graph.replay()
                for i, (u, v) in enumerate(zip(static_out, eager[k])):
                    torch.testing.assert_close(u, v, **TOL,
                                               msg=lambda m: f"replay {rep}, input {k}, tensor {i}: {m}")
    finally:
        _stop(load)


# ---------------------------------------------------------------------------------------------
# Propagation through the CLI
# ---------------------------------------------------------------------------------------------
def cli(*args, timeout=600):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)


def fields(directory):
    """{file name: (final Ew, z, accepted steps)} of every result file in `directory`."""
    out = {}
    for path in sorted(directory.glob("*.h5")):
        with h5py.File(path, "r") as f:
            out[path.name] = (f["planes/Ew"][-1], f["ledger/z"][()], f["ledger/accepted_steps"][()])
    return out


def assert_same_fields(got, ref, rel):
    assert got.keys() == ref.keys()
    for name, (ew, z, _) in ref.items():
        g_ew, g_z, _ = got[name]
        assert g_z == pytest.approx(z, rel=1e-12), name
        assert np.max(np.abs(g_ew - ew)) <= rel * np.max(np.abs(ew)), name


# A shot-noise ensemble of the Dudley case: a few seconds on a GPU.
ENSEMBLE = """
[output]
n_save = 5
[ensemble]
members = 16
"""


@needs_cli
def test_killed_cuda_scan_resumes_to_the_same_files(tmp_path):
    recipe = tmp_path / "ens.toml"
    recipe.write_text(ENSEMBLE)
    common = ["--device", "cuda", "--quiet", "--no-plots"]
    r = cli("prop", "scan", str(recipe), "-o", str(tmp_path / "whole"), *common)
    assert r.returncode == 0, r.stderr
    ref = fields(tmp_path / "whole")

    out = tmp_path / "killed"
    proc = subprocess.Popen([CLI, "prop", "scan", str(recipe), "-o", str(out), *common,
                             "--checkpoint", "0.2"])
    probe = out / "ens_member-0.h5"
    deadline, z = time.time() + 300, 0.0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
        try:
            with h5py.File(probe, "r") as f:
                z = f["ledger/z"][()]
        except (OSError, KeyError):
            continue  # not there yet, or read just as it was renamed over
        if z > 0.03:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = fields(out)
    assert len(killed) == 16
    assert 0 < killed["ens_member-0.h5"][1] < 0.15, "the kill should land mid-run"

    r = cli("prop", "resume", *map(str, sorted(out.glob("*.h5"))), *common)
    assert r.returncode == 0, r.stderr
    got = fields(out)
    # The kill lands just after member 0's file was renamed, with the others' staged: the resume
    # completes that checkpoint, and the batch goes on together (docs/RECIPES.md).
    assert "completed from the checkpoint a kill interrupted" in r.stderr or \
        len({v[2] for v in killed.values()}) == 1, r.stderr
    assert_same_fields(got, ref, 1e-9)
    assert all(got[n][2] == ref[n][2] for n in ref), "a resumed run takes the same steps"


# An ensemble whose one batch needs about 2.1 GiB of device memory on the cuFFT path (2^15
# points, 128 members, DP5(4): about 34 rows of 16 bytes per point and member).
BIG = """
[grid]
points = 32768
time_window = "50 ps"
[fibre]
length = "2 mm"
[output]
n_save = 2
[ensemble]
members = 128
"""
BIG_MIB = 128 * 32768 * 16 * 34 / 2**20

# One member of 2^21 points needs about 1.1 GiB.
HUGE = BIG.replace("points = 32768", "points = 2097152").replace('"50 ps"', '"3.2 ns"') \
          .replace("members = 128", "members = 2")


@needs_cli
def test_batch_backs_off_when_another_process_holds_the_memory(tmp_path):
    recipe = tmp_path / "big.toml"
    recipe.write_text(BIG)
    common = ["--device", "cuda", "--quiet", "--no-plots", "--batch-memory", "100000"]
    r = cli("prop", "scan", str(recipe), "-o", str(tmp_path / "alone"), *common)
    assert r.returncode == 0, r.stderr
    ref = fields(tmp_path / "alone")
    # Half the batch free, and 1 GiB for the process's own context (less than that in fact):
    # the whole batch does not fit, its halves do.
    hog = memory_hog(1024 + int(0.5 * BIG_MIB))
    try:
        r = cli("prop", "scan", str(recipe), "-o", str(tmp_path / "shared"), *common)
    finally:
        _stop(hog)
    assert r.returncode == 0, r.stderr
    assert "retrying as batches of 64 and 64 members" in r.stderr, r.stderr
    assert "MiB are free" in r.stderr
    # Split batches take steps of their own: agreement to the tolerance, not to rounding (the
    # CUDA runner's adaptive comparison with the CPU runner allows the same, 1e-4).
    assert_same_fields(fields(tmp_path / "shared"), ref, 1e-4)


@needs_cli
def test_member_that_does_not_fit_fails_clearly_and_resumes(tmp_path):
    recipe = tmp_path / "one.toml"
    recipe.write_text(HUGE)
    out = tmp_path / "out"
    common = ["--device", "cuda", "--quiet", "--no-plots"]
    hog = memory_hog(1024)  # the context takes part of it: less than one member needs is left
    try:
        r = cli("prop", "scan", str(recipe), "-o", str(out), *common, "--batch-memory", "100000")
    finally:
        _stop(hog)
    if r.returncode == 0:
        pytest.fail("the run fitted in the memory left: " + r.stdout)
    assert r.returncode == 1, r.stderr
    assert "of the run failed" in r.stderr and "MiB" in r.stderr and "free" in r.stderr, r.stderr
    assert "terminate" not in r.stderr
    files = sorted(out.glob("*.h5"))
    assert len(files) == 2
    for path in files:  # valid files, at the start
        with h5py.File(path, "r") as f:
            assert f["ledger/z"][()] == 0 and f["state/field_w"].shape == (2097152,)
    r = cli("prop", "resume", *map(str, files), *common)
    assert r.returncode == 0, r.stderr
    for path in files:
        with h5py.File(path, "r") as f:
            assert f["ledger/z"][()] == pytest.approx(0.002, rel=1e-12)


@needs_cli
def test_error_in_one_cuda_batch_leaves_the_others_complete(tmp_path):
    from test_cli_prop import check_failing_batch
    check_failing_batch(tmp_path, "--device", "cuda")
