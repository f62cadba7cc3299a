#!/usr/bin/env python3
"""QKAN CPU benchmark: lockstep's fused contracted solve against qkan's exact solver.

Usage: python bench/qkan_cpu.py [--config bench/configs/qkan_cpu.json] [--out FILE.json]

Times, in one run, the contracted forward and forward + backward of lockstep
(lockstep.qkan.contract, the fused path) and, where a case names it, qkan's
`exact` solver (postacts then the same weighted sum, through torch autograd). Reports
seconds, circuit evaluations per second, the arithmetic floor (FLOPs per evaluation ×
evaluations / peak FLOP rate) and the ratio to it, and the peak memory of the contracted
path measured in a child process per size. Writes JSON.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import torch

import lockstep
import lockstep.qkan as lq
from qkan.solver import torch_exact_solver


def cpu_info():
    model, mhz, flags = "unknown", None, set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k == "model name":
                model = v
            elif k == "cpu MHz" and mhz is None:
                mhz = float(v)
            elif k == "flags" and not flags:
                flags = set(v.split())
    return model, mhz, flags


def peak_flops(cores, mhz, flags, dtype):
    """FMA-only peak: cores × clock × FMA pipes × lanes × 2. Two 512-bit FMA pipes where
    AVX-512 is present (full-width on this machine's Zen 5), else two 256-bit pipes."""
    lanes = (16 if "avx512f" in flags else 8) * (1 if dtype == "float32" else 0.5)
    return cores * mhz * 1e6 * 2 * lanes * 2


def make_inputs(B, I, O, reps, dtype, enc, seed=0):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    x = torch.rand(B, I, generator=g, dtype=dt) * 2 - 1
    theta = torch.randn(O, I, reps + 1, 2, generator=g, dtype=dt)
    w = 1 + 0.1 * torch.randn(O, I, reps, generator=g, dtype=dt) if enc else torch.ones(O, I, reps, dtype=dt)
    c = 0.1 * torch.randn(O, I, reps, generator=g, dtype=dt) if enc else torch.zeros(O, I, reps, dtype=dt)
    W = torch.randn(O, I, generator=g, dtype=dt)
    return x, theta, w, c, W


def timeit(fn, repeats, warmup):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), sorted(ts)[len(ts) // 2]


def run_case(cfg, case):
    B, I, O, reps = case["B"], case["I"], case["O"], cfg["reps"]
    enc, fast = case["preacts_trainable"], case["fast_measure"]
    kw = dict(ansatz=cfg["ansatz"], preacts_trainable=enc, fast_measure=fast)
    x, theta, w, c, W = make_inputs(B, I, O, reps, cfg["dtype"], enc)
    params = [theta, w, c, W] if enc else [theta, W]
    out = {"case": case["name"], "B": B, "I": I, "O": O, "evals": B * I * O,
           "preacts_trainable": enc, "fast_measure": fast}

    def ls_fwd():
        with torch.no_grad():
            lq.contract(x, theta, w, c, W, reps, **kw)

    def ls_fwd_bwd():
        for p in params:
            p.grad = None
            p.requires_grad_(True)
        lq.contract(x, theta, w, c, W, reps, **kw).sum().backward()

    out["lockstep_forward_s"], _ = timeit(ls_fwd, cfg["repeats"], cfg["warmup"])
    out["lockstep_fwd_bwd_s"], _ = timeit(ls_fwd_bwd, cfg["repeats"], cfg["warmup"])
    for p in params:
        p.requires_grad_(False)
    if "exact" in case.get("peers", []):
        ckw = dict(kw, out_dim=O, dtype=torch.complex64 if cfg["dtype"] == "float32" else torch.complex128)

        def ex_fwd():
            with torch.no_grad():
                (torch_exact_solver(x, theta, w, c, reps, **ckw) * W).sum(-1)

        def ex_fwd_bwd():
            for p in params:
                p.grad = None
                p.requires_grad_(True)
            (torch_exact_solver(x, theta, w, c, reps, **ckw) * W).sum(-1).sum().backward()

        reps_peer = max(1, cfg["repeats"] // 2)
        out["exact_forward_s"], _ = timeit(ex_fwd, reps_peer, 1)
        out["exact_fwd_bwd_s"], _ = timeit(ex_fwd_bwd, reps_peer, 1)
        for p in params:
            p.requires_grad_(False)
        out["speedup_forward_vs_exact"] = out["exact_forward_s"] / out["lockstep_forward_s"]
        out["speedup_fwd_bwd_vs_exact"] = out["exact_fwd_bwd_s"] / out["lockstep_fwd_bwd_s"]
    out["lockstep_forward_Mevals_per_s"] = out["evals"] / out["lockstep_forward_s"] / 1e6
    out["lockstep_fwd_bwd_Mevals_per_s"] = out["evals"] / out["lockstep_fwd_bwd_s"] / 1e6
    return out


def memory_child(B, I, O, reps, dtype):
    """Peak RSS growth (bytes) of one contracted forward + backward, inputs excluded: the
    kernel's high-water mark (VmHWM, reset just before the call through /proc/self/clear_refs)
    minus the resident size before it."""
    x, theta, w, c, W = make_inputs(B, I, O, reps, dtype, False)
    gy = torch.ones(B, O, dtype=x.dtype)
    for t in (theta, W):
        t.requires_grad_(True)
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))

    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak resident set size (VmHWM) to the current one
    base = status("VmRSS")
    y = lq.contract(x, theta, w, c, W, reps)
    y.backward(gy)
    return (status("VmHWM") - base) * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "configs", "qkan_cpu.json"))
    ap.add_argument("--out", default=None, help="JSON output (default: bench/results/qkan_cpu.json)")
    ap.add_argument("--memory-child", nargs=4, type=int, metavar=("B", "I", "O", "REPS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    cfg = json.load(open(args.config))
    if args.memory_child:
        print(memory_child(*args.memory_child, cfg["dtype"]))
        return

    model, mhz, flags = cpu_info()
    cores = lockstep.num_threads()
    peak = peak_flops(cores, mhz, flags, cfg["dtype"])
    result = {"config": cfg, "hardware": {"cpu": model, "mhz": mhz, "threads": cores, "avx512": "avx512f" in flags,
                                          "peak_fma_flops": peak},
              "build": lockstep.build_summary(), "python": platform.python_version(), "torch": torch.__version__,
              "cases": [], "memory": []}
    for case in cfg["cases"]:
        r = run_case(cfg, case)
        key = "pz_raw_fast" if r["fast_measure"] else "pz_raw_z"
        if not r["preacts_trainable"]:  # FLOPs counted for raw x (the encoding adds 3 sincos per eval)
            f = cfg["flops_per_eval"][key]
            r["floor_forward_s"] = f["forward"] * r["evals"] / peak
            r["floor_fwd_bwd_s"] = (f["forward"] + f["backward"]) * r["evals"] / peak
            r["forward_ratio_to_floor"] = r["lockstep_forward_s"] / r["floor_forward_s"]
            r["fwd_bwd_ratio_to_floor"] = r["lockstep_fwd_bwd_s"] / r["floor_fwd_bwd_s"]
        result["cases"].append(r)
        print(json.dumps(r), flush=True)
    for m in cfg["memory_cases"]:
        B, I, O = m["B"], m["I"], m["O"]
        out = subprocess.run([sys.executable, __file__, "--config", args.config, "--memory-child", str(B), str(I), str(O),
                              str(cfg["reps"])], check=True, capture_output=True, text=True).stdout
        elem = 4 if cfg["dtype"] == "float32" else 8
        r = {"B": B, "I": I, "O": O, "peak_growth_bytes": int(out.strip().splitlines()[-1]),
             "B_O_I_bytes": B * O * I * elem, "B_I_plus_O_bytes": B * (I + O) * elem}
        result["memory"].append(r)
        print(json.dumps(r), flush=True)
    path = args.out or os.path.join(os.path.dirname(__file__), "results", "qkan_cpu.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print("wrote", path)


if __name__ == "__main__":
    main()
