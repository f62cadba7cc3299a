"""lockstep.prop on the CUDA engine against the CPU engine: a run in memory, a scan split into
several batches by its memory budget, float32, and an interrupted run resumed on the GPU.

Skipped as a module without a CUDA device or without a CUDA build of lockstep."""
import numpy as np
import pytest

lockstep = pytest.importorskip("lockstep")
try:
    import lockstep.prop as lp
except ImportError as e:  # a build without the propagation engine
    pytest.skip(str(e), allow_module_level=True)
if not lockstep.cuda_available():
    pytest.skip("CUDA tests: no CUDA device or no CUDA backend in this build "
                f"(lockstep.cuda_available() is False; {lockstep.build_summary()})", allow_module_level=True)

# The Dudley case on a smaller grid and fibre at a tight tolerance: a few seconds on the CPU.
SHORT = {"grid": {"points": 4096, "time_window": "6 ps"}, "fibre": {"length": "3 cm"},
         "stepping": {"rtol": 1e-8}, "output": {"n_save": 20}}
# A peak-power scan of the same case, shorter still.
SCAN = {**SHORT, "fibre": {"length": "1 cm"}, "stepping": {"rtol": 1e-6},
        "scan": {"pulse.peak_power": ["5 kW", "8 kW", "10 kW", "12 kW"]}}


def relative_difference(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def cpu_short():
    return lp.propagate(SHORT)


def test_propagate_on_cuda_matches_the_cpu(cpu_short):
    gpu = lp.propagate(SHORT, device="cuda")
    assert gpu.path is None
    # Rounding differences between FFT libraries can move a step's acceptance; each run meets
    # rtol on every step, and the planes are saved at the same z.
    assert abs(gpu.ledger["accepted_steps"] - cpu_short.ledger["accepted_steps"]) <= 30
    assert np.array_equal(gpu.z, cpu_short.z)
    difference = relative_difference(gpu.Ew, cpu_short.Ew)
    assert difference < 1e-5, difference
    assert gpu.stats["energy"][-1] == pytest.approx(cpu_short.stats["energy"][-1], rel=1e-8)


def test_float32_on_cuda_stays_near_the_double_precision_run(cpu_short):
    gpu = lp.propagate({**SHORT, "stepping": {"rtol": 1e-5}}, device="cuda", precision="f32")
    assert np.array_equal(gpu.z, cpu_short.z)
    # Single precision at a looser tolerance: the spectrum near its peak, the energy closely.
    difference = relative_difference(gpu.Ew, cpu_short.Ew)
    assert difference < 2e-2, difference
    assert gpu.stats["energy"][-1] == pytest.approx(cpu_short.stats["energy"][-1], rel=1e-4)


def test_scan_in_several_batches_on_cuda_matches_the_cpu(tmp_path):
    seen = []
    gpu = lp.scan(SCAN, tmp_path / "gpu", device="cuda", batch_memory=1, progress=lambda *a: seen.append(a))
    assert max(a[1] for a in seen) > 1, "a 1 MiB budget should split the four members into batches"
    # The same batches on the CPU: members of one batch share its steps.
    cpu = lp.scan(SCAN, tmp_path / "cpu", batch_memory=1, progress=False)
    assert gpu.shape == cpu.shape == (4,)
    for g, c in zip(gpu.results, cpu.results):
        assert g.label == c.label
        assert relative_difference(g.Ew, c.Ew) < 1e-5
    again = lp.load_scan(tmp_path / "gpu")
    assert np.array_equal(again.results[3].Ew, gpu.results[3].Ew)


def test_interrupt_on_cuda_then_resume_ends_as_an_uninterrupted_run(tmp_path):
    whole = lp.run(SHORT, tmp_path / "whole", device="cuda", progress=False)

    # Ctrl-C as the progress function sees it, at a given step: a GPU run of this case can end
    # before a timer would fire.
    def interrupt(batch, batches, members, z, length, steps, rate, finished):
        if steps >= 100:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lp.run(SHORT, tmp_path / "parts", device="cuda", progress=interrupt)
    saved = lp.load(tmp_path / "parts" / "run.h5")
    assert 0 < saved.ledger["z"] < 0.03
    resumed = lp.resume([tmp_path / "parts" / "run.h5"], SHORT, device="cuda", progress=False)
    assert resumed.ledger["accepted_steps"] == whole.ledger["accepted_steps"]
    assert relative_difference(resumed.Ew, whole.Ew) < 1e-8
