"""The quick-start fit, side by side: qkan's own training against `lockstep qkan fit`.

Both fit sin(20x)/(20x) on [0, 1] with QKAN([1, 1], reps 3) and L-BFGS with a strong-Wolfe line
search (bench/configs/qkan_fit.json), from the same data (qkan.create_dataset) and the same
initial weights (qkan.QKAN's, handed to the CLI as a safetensors file through --init). qkan runs
in this process with its "exact" solver and torch's LBFGS, once per torch thread count in
`qkan_threads` (the comparison takes the faster: two threads win on an idle machine, one on a
busy one); lockstep runs as a subprocess with --threads `threads`, once per compute precision in
`lockstep_dtypes` (f32 is qkan's own precision, so that row is the same configuration). Each
runs `repeats` times, interleaved; the JSON keeps every run, the minima (compared: the least
disturbed repeat of each on a shared machine) and the medians.

    .venv/bin/python bench/qkan_fit.py [--cli build/quickstart/lockstep] [--out FILE]

Wall times: qkan's is its training loop; lockstep's is the whole command (process start, reading
the files, training, writing the model and history), and its own training time is reported too.
CPU times (every thread's) are recorded beside them: on a machine others use, they tell what
the work costs when wall times also measure the waiting.
"""

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import qkan
from safetensors.torch import save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def target(x):
    """sin(20x)/(20x) with the limit 1 at x = 0 (torch.sinc(t) = sin(πt)/(πt))."""
    return torch.sinc(20.0 * x / math.pi)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or "unknown"


def new_model(cfg):
    return qkan.QKAN(cfg["width"], reps=cfg["reps"], ansatz=cfg["ansatz"], preact_trainable=True,
                     postact_weight_trainable=True, postact_bias_trainable=True, ba_trainable=True,
                     seed=cfg["seed"], solver="exact")


def run_qkan(cfg, data, threads):
    """qkan's own training on `threads` torch threads; returns wall seconds of the loop,
    evaluations, final losses."""
    torch.set_num_threads(threads)
    model = new_model(cfg)
    opt = torch.optim.LBFGS(model.parameters(), lr=cfg["lr"], history_size=cfg["history_size"],
                            max_iter=cfg["max_iter"], line_search_fn="strong_wolfe",
                            tolerance_grad=cfg["tolerance"], tolerance_change=cfg["tolerance"])
    mse = torch.nn.MSELoss()
    xtr, ytr = data["train_input"], data["train_label"]
    evals = 0

    def closure():
        nonlocal evals
        evals += 1
        opt.zero_grad()
        loss = mse(model(xtr), ytr)
        loss.backward()
        return loss

    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(cfg["steps"]):
        opt.step(closure)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    with torch.no_grad():
        train = mse(model(xtr), ytr).item()
        test = mse(model(data["test_input"]), data["test_label"]).item()
    return {"wall_s": seconds, "cpu_s": cpu, "evaluations": evals, "steps": cfg["steps"], "train_loss": train,
            "test_loss": test, "threads": threads}


def run_lockstep(cfg, cli, files, dtype, workdir):
    summary = os.path.join(workdir, f"summary_{dtype}.json")
    cmd = [cli, "qkan", "fit", "--quiet", "--init", files["init"], "--train-x", files["train_x"],
           "--train-y", files["train_y"], "--test-x", files["test_x"], "--test-y", files["test_y"],
           "--optimizer", "lbfgs", "--lr", repr(cfg["lr"]), "--steps", str(cfg["steps"]),
           "--dtype", dtype, "--threads", str(cfg["threads"]), "--ansatz", cfg["ansatz"],
           "--output", os.path.join(workdir, f"fit_{dtype}.safetensors"),
           "--history", os.path.join(workdir, f"fit_{dtype}.csv"), "--summary", summary,
           "--plot", ""]  # qkan's side draws no figure either
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(summary) as f:
        s = json.load(f)
    return {"wall_s": wall, "cpu_s": cpu, "own_s": s["seconds"], "evaluations": s["evaluations"], "steps": s["steps"],
            "train_loss": s["train_loss"], "test_loss": s["test_loss"], "threads": s["threads"],
            "command": " ".join(cmd)}


def summarise(runs, how):
    return {k: how(r[k] for r in runs) for k in runs[0] if isinstance(runs[0][k], (int, float))}


def compare(stats, cfg):
    """Speed-ups of each lockstep row over qkan's faster thread setting, and its test loss
    relative to qkan's."""
    ref = min((stats[f"qkan_exact_{t}t"] for t in cfg["qkan_threads"]), key=lambda r: r["wall_s"])
    out = {"qkan_reference_threads": ref["threads"]}
    dtypes = cfg["lockstep_dtypes"]
    for d in dtypes:
        m = stats[f"lockstep_{d}"]
        out[f"lockstep_{d}"] = {
            "speedup_wall": ref["wall_s"] / m["wall_s"],
            "speedup_own_time": ref["wall_s"] / m["own_s"],
            "speedup_per_evaluation": (ref["wall_s"] / ref["evaluations"]) / (m["own_s"] / m["evaluations"]),
            "test_loss_ratio": m["test_loss"] / ref["test_loss"],
            # CPU seconds (all threads; the command's whole process): what the work costs,
            # whatever else the machine runs.
            "cpu_ratio": ref["cpu_s"] / m["cpu_s"],
        }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.path.join(ROOT, "bench", "configs", "qkan_fit.json"))
    ap.add_argument("--cli", default=os.environ.get("LOCKSTEP_CLI", os.path.join(ROOT, "build", "quickstart", "lockstep")),
                    help="the lockstep command-line tool (default: $LOCKSTEP_CLI, else build/quickstart/lockstep)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "qkan_fit.json"))
    args = ap.parse_args()
    cfg = json.load(open(args.config))
    if cfg["lr"] <= 0 or cfg["steps"] < 1 or cfg["threads"] < 1 or cfg["repeats"] < 1 or not cfg["qkan_threads"]:
        sys.exit("error: the config needs lr > 0, steps >= 1, threads >= 1, repeats >= 1 and qkan_threads")
    if cfg["max_iter"] != 20 or cfg["tolerance"] != 1e-32:
        sys.exit("error: lockstep qkan fit runs max_iter 20 and tolerances 1e-32; keep them in the config")

    data = qkan.create_dataset(target, n_var=1, ranges=cfg["range"], train_num=cfg["train_num"],
                               test_num=cfg["test_num"], seed=cfg["seed"])
    with tempfile.TemporaryDirectory() as workdir:
        files = {k: os.path.join(workdir, k + ".npy") for k in ("train_x", "train_y", "test_x", "test_y")}
        for key, name in (("train_x", "train_input"), ("train_y", "train_label"), ("test_x", "test_input"),
                          ("test_y", "test_label")):
            np.save(files[key], data[name].numpy())
        files["init"] = os.path.join(workdir, "init.safetensors")
        save_file({k: v.contiguous() for k, v in new_model(cfg).state_dict().items()}, files["init"])

        load_before = os.getloadavg()
        runs = {**{f"qkan_exact_{t}t": [] for t in cfg["qkan_threads"]}, **{f"lockstep_{d}": [] for d in cfg["lockstep_dtypes"]}}
        for rep in range(cfg["repeats"]):  # interleaved, so that a change in the machine's load hits both
            for t in cfg["qkan_threads"]:
                runs[f"qkan_exact_{t}t"].append(run_qkan(cfg, data, t))
            for d in cfg["lockstep_dtypes"]:
                runs[f"lockstep_{d}"].append(run_lockstep(cfg, args.cli, files, d, workdir))
            print(f"repeat {rep + 1}/{cfg['repeats']}: " + ", ".join(
                f"{k} {v[-1]['wall_s']:.3f} s test {v[-1]['test_loss']:.3e}" for k, v in runs.items()), flush=True)
        load_after = os.getloadavg()

    # On a shared machine other work slows some repeats down; the fastest repeat of each side is
    # the least disturbed measurement, so the comparison uses minima (medians are kept too).
    best = {k: summarise(v, min) for k, v in runs.items()}
    med = {k: summarise(v, statistics.median) for k, v in runs.items()}
    result = {
        "config": cfg,
        "hardware": {"cpu": cpu_model(), "cores": os.cpu_count(), "load_average_before": load_before,
                     "load_average_after": load_after},
        "software": {"python": platform.python_version(), "torch": torch.__version__, "qkan": qkan.__version__,
                     "lockstep_cli": subprocess.run([args.cli, "info"], capture_output=True, text=True).stdout.strip()},
        "command": " ".join([sys.executable] + sys.argv),
        "runs": runs,
        "minima": best,
        "medians": med,
        "comparison": compare(best, cfg),
        "comparison_of_medians": compare(med, cfg),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    for label, comparison in (("fastest repeats", result["comparison"]), ("medians", result["comparison_of_medians"])):
        for k, c in comparison.items():
            if k.startswith("lockstep"):
                print(f"{label}: {k} against qkan on {comparison['qkan_reference_threads']} threads: "
                      f"{c['speedup_wall']:.1f}x wall (command vs qkan's loop), {c['speedup_own_time']:.1f}x own time, "
                      f"{c['speedup_per_evaluation']:.1f}x per evaluation, {c['cpu_ratio']:.1f}x CPU time; "
                      f"test loss ratio {c['test_loss_ratio']:.2f}")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
