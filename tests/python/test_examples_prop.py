"""The propagation examples (examples/python) run as a new user runs them, at reduced sizes."""
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")
try:
    import lockstep.prop  # noqa: F401
except ImportError as e:
    pytest.skip(str(e), allow_module_level=True)

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples" / "python"


@pytest.mark.parametrize("script,args,figures", [
    ("supercontinuum.py", ["--length", "2 cm"],
     ["supercontinuum_spectral.png", "supercontinuum_temporal.png", "supercontinuum_spectrum.png",
      "supercontinuum_spectrogram.png"]),
    ("peak_power_length_scan.py", ["--powers", "2", "--lengths", "2", "--points", "2048"], ["bandwidth.png"]),
    ("shot_noise_ensemble.py", ["--members", "4", "--length", "1 cm"], ["coherence.png"]),
])
def test_example_runs_and_draws(tmp_path, script, args, figures):
    r = subprocess.run([sys.executable, str(EXAMPLES / script), "--out", str(tmp_path), *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in figures:
        assert (tmp_path / name).stat().st_size > 1000, name
