#!/usr/bin/env python3
"""lockstep.prop against the CLI, on the CPU: the same recipes, wall time per run.

Usage: python bench/prop_python.py [--config bench/configs/prop_python.json] [--out FILE.json]
                                   [--cli build/test/lockstep]

  run        lp.run(None, dir, progress=False) against `lockstep prop run -o dir --quiet
             --no-plots` (the built-in Dudley case; the CLI's time includes its process start)
  ensemble   lp.propagate of an ensemble (members, length from the config; in memory) against
             `lockstep prop scan` of the same recipe (files, no figures)
  import     `python -c "import lockstep.prop"` in a fresh process minus `python -c pass` (the
             interpreter's own start), median of import_repeats

Each time is the median of `repeats` runs, each in a fresh process (FFTW plans and caches as a
new user meets them). Writes JSON (default bench/results/prop_python.json): the times, their
ratios (Python / CLI; the targets are <= 1.02 for run and <= 1 for ensemble, and the import
under 0.3 s), the machine and the commit.
"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def timed(command, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env, timeout=3600)
    return time.perf_counter() - t0


def median_of(repeats, make_command) -> float:
    times = []
    for k in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            times.append(timed(make_command(pathlib.Path(d))))
    return statistics.median(times)


def ensemble_toml(cfg) -> str:
    return (f'[fibre]\nlength = "{cfg["length"]}"\n[output]\nn_save = {cfg["n_save"]}\n'
            f'[ensemble]\nmembers = {cfg["members"]}\nseed = 1\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "bench/configs/prop_python.json"))
    parser.add_argument("--out", default=str(ROOT / "bench/results/prop_python.json"))
    parser.add_argument("--cli", default=os.environ.get("LOCKSTEP_CLI", str(ROOT / "build/test/lockstep")))
    args = parser.parse_args()
    cfg = json.loads(pathlib.Path(args.config).read_text())
    py = sys.executable
    repeats = cfg["repeats"]

    run_py = median_of(repeats, lambda d: [py, "-c", "import lockstep.prop as lp, sys; "
                                           "lp.run(None, sys.argv[1], progress=False)", str(d)])
    run_cli = median_of(repeats, lambda d: [args.cli, "prop", "run", "-o", str(d), "--quiet", "--no-plots"])

    with tempfile.TemporaryDirectory() as work:
        recipe = pathlib.Path(work) / "ensemble.toml"
        recipe.write_text(ensemble_toml(cfg["ensemble"]))
        ens_py = median_of(repeats, lambda d: [py, "-c", "import lockstep.prop as lp, sys; "
                                               "lp.propagate(sys.argv[1])", str(recipe)])
        ens_cli = median_of(repeats, lambda d: [args.cli, "prop", "scan", str(recipe), "-o", str(d), "--quiet",
                                                "--no-plots"])
    imports = statistics.median(timed([py, "-c", "import lockstep.prop"]) for _ in range(cfg["import_repeats"]))
    bare = statistics.median(timed([py, "-c", "pass"]) for _ in range(cfg["import_repeats"]))

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    result = {
        "benchmark": "prop_python", "config": cfg, "commit": commit,
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "python": platform.python_version()},
        "command": " ".join([pathlib.Path(sys.executable).name, *sys.argv]),
        "run_seconds": {"python": run_py, "cli": run_cli, "ratio": run_py / run_cli},
        "ensemble_seconds": {"python_propagate": ens_py, "cli_scan": ens_cli, "ratio": ens_py / ens_cli},
        "import_seconds": {"lockstep.prop": imports - bare, "with_interpreter": imports},
    }
    pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"run:      python {run_py:.2f} s, CLI {run_cli:.2f} s, ratio {run_py / run_cli:.3f} (target <= 1.02)")
    print(f"ensemble: propagate {ens_py:.2f} s, CLI scan {ens_cli:.2f} s, ratio {ens_py / ens_cli:.3f} (target <= 1)")
    print(f"import lockstep.prop: {imports - bare:.3f} s beyond the interpreter's start (target < 0.3 s)")


if __name__ == "__main__":
    main()
