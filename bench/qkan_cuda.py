#!/usr/bin/env python3
"""QKAN layer benchmark on one GPU: lockstep's CUDA kernels against qkan's exact and flash.

Usage: python bench/qkan_cuda.py [--config bench/configs/qkan_cuda.json] [--out FILE.json]
                                 [--quick] [--peers lockstep,exact,...] [--shapes 1024x64x64,...]
                                 [--dry-run]

For ansatz pz_encoding, reps=3, float32 and each (B, I, O) of the config, times the LAYER
forward (under torch.no_grad()) and forward+backward (y = layer(x); autograd.grad of
sum(y * cot) into x and every trainable parameter) of

  lockstep        lockstep.qkan.QKANLayer on CUDA (the contracted kernels, no (B, O, I) tensor)
  lockstep_plain  qkan.QKANLayer(solver="lockstep"): upstream's layer through lockstep's plain solve
  exact           qkan.QKANLayer(solver="exact"): qkan's PyTorch solver, complex64 state vectors
  flash           qkan.QKANLayer(solver="flash"): qkan's Triton kernels

with the same parameters (one state_dict, theta drawn uniformly in [-pi, pi]) and the layer
defaults otherwise (recorded in the JSON). Reports per call: the median time (CUDA events,
do_bench style: warm-up, then repeated calls rotating among a few input batches), circuit
evaluations per second (B*I*O / time), the peak memory of one call above what was held
before it (torch.cuda.reset_peak_memory_stats / max_memory_allocated), the ratio to the
arithmetic floor (FLOP per evaluation from the config x B*I*O / the fp32 peak, measured once
per run with a cupy fmaf-chain kernel), the speedups of lockstep over the peers, and, at every
shape, lockstep's outputs and gradients against exact's and flash's (float32 tolerances).
Then the small HQKAN layer (1024, 10, 10): lockstep's forward+backward captured into a CUDA
graph, time per replay (target <= 20 us), next to the eager times of every peer there; and
every peer's forward+backward captured and replayed at the config's graph_peers shapes, the
device time of a step where eager calls time the host.

Process layout: the parent never initialises CUDA. Each peer runs in a child process over all
shapes (smallest first); a peer that dies or loses its CUDA context (an illegal address in a
Triton kernel is sticky) costs only the shape in progress: the parent records the failure
and starts a fresh child for the remaining shapes. OOM and other exceptions are caught in the
child, recorded (type and message) and memory is freed before the next measurement. Children
save their outputs and gradients to a temporary folder; the parent compares them on the CPU.
Writes JSON (--out, default bench/results/qkan_cuda.json) and prints a compact table last.
"""
import argparse
import copy
import gc
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONFIG = os.path.join(HERE, "configs", "qkan_cuda.json")
DEFAULT_OUT = os.path.join(HERE, "results", "qkan_cuda.json")
PEERS = ("lockstep", "lockstep_plain", "exact", "flash")
MODES = ("forward", "fwd_bwd")


# ---------------------------------------------------------------------------------------------
# Configuration (no torch needed)
# ---------------------------------------------------------------------------------------------
def merge(base, over):
    """Recursive dict merge: `over` wins; lists and scalars are replaced."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def parse_shapes(text):
    """'1024x64x64,4096x128x128' -> [{"name": "1024x64x64", "B": 1024, "I": 64, "O": 64}, ...]"""
    shapes = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            B, I, O = (int(v) for v in part.lower().split("x"))
        except ValueError:
            raise SystemExit(f"--shapes: {part!r} is not BxIxO (e.g. 1024x64x64)")
        if min(B, I, O) < 1:
            raise SystemExit(f"--shapes: {part!r} has a non-positive size")
        shapes.append({"name": part, "B": B, "I": I, "O": O})
    if not shapes:
        raise SystemExit("--shapes: no shape given")
    return shapes


def load_config(path, quick=False, peers=None, shapes=None):
    with open(path) as f:
        cfg = json.load(f)
    if quick:
        cfg = merge(cfg, cfg.get("quick", {}))
    cfg.pop("quick", None)
    if peers:
        names = [p.strip() for p in peers.split(",") if p.strip()]
        bad = [p for p in names if p not in PEERS]
        if bad or not names:
            raise SystemExit(f"--peers: unknown {bad or names}; choose from {', '.join(PEERS)}")
        cfg["peers"] = names
    if shapes:
        cfg["shapes"] = parse_shapes(shapes)
    for s in cfg["shapes"]:
        s.setdefault("name", f"{s['B']}x{s['I']}x{s['O']}")
    if cfg.get("dtype", "float32") != "float32":
        raise SystemExit("this benchmark times float32 layers only (config dtype must be float32)")
    return cfg


def shape_key(s):
    return f"{s['B']}x{s['I']}x{s['O']}"


def flops_per_eval(cfg, mode):
    f = cfg["flops_per_eval"][cfg["flops_key"]]
    return f["forward"] if mode == "forward" else f["forward"] + f["backward"]


def err_record(e, limit=600):
    msg = " ".join(str(e).split())
    return {"type": type(e).__name__, "message": msg[:limit] + ("..." if len(msg) > limit else "")}


def emit(event, **data):
    print(json.dumps({"event": event, **data}), flush=True)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Child side: everything that touches the device
# ---------------------------------------------------------------------------------------------
def _sync(device):
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def _free(device):
    """Drops unreferenced tensors and returns cached blocks (a no-op if the context is lost)."""
    import torch

    gc.collect()
    if device == "cuda":
        try:
            torch.cuda.empty_cache()
        except Exception:
            pass


def _cuda_alive():
    """False once the CUDA context is unusable (a sticky error such as an illegal address)."""
    import torch

    try:
        torch.cuda.synchronize()
        return torch.ones(1, device="cuda").add_(1).item() == 2.0
    except Exception:
        return False


class _Clock:
    """CUDA events on the GPU (time on the device's stream), perf_counter on the CPU."""

    def __init__(self, device):
        import torch

        self.cuda = device == "cuda"
        if self.cuda:
            self.a = torch.cuda.Event(enable_timing=True)
            self.b = torch.cuda.Event(enable_timing=True)

    def start(self):
        if self.cuda:
            self.a.record()
        else:
            self.t0 = time.perf_counter()

    def stop(self):
        if self.cuda:
            self.b.record()
        else:
            self.t1 = time.perf_counter()

    def ms(self):
        if self.cuda:
            self.b.synchronize()
            return self.a.elapsed_time(self.b)
        return (self.t1 - self.t0) * 1e3


def bench_call(fn, tcfg, device):
    """fn(k) -> outputs, k selecting the input batch. Returns median/min ms, repeats, and the
    peak memory of one call above what was allocated before it."""
    import torch

    cuda = device == "cuda"
    _sync(device)
    before = torch.cuda.memory_allocated() if cuda else None
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    clock = _Clock(device)
    clock.start()
    out = fn(1)
    clock.stop()
    est = clock.ms()  # synchronises
    peak = torch.cuda.max_memory_allocated() - before if cuda else None
    del out
    res = {"estimate_ms": est, "mem_before_bytes": before, "peak_mem_bytes": peak}
    if est >= tcfg["slow_call_ms"]:
        res.update(median_ms=est, min_ms=est, repeats=1, warmup_calls=0,
                   note=f"slow call (>= {tcfg['slow_call_ms']} ms): the estimating call is the one timed repeat")
        return res
    n_warm = int(min(tcfg["max_warmup_calls"], max(1, round(tcfg["warmup_ms"] / max(est, 1e-3)))))
    n_rep = int(min(tcfg["max_repeats"], max(tcfg["min_repeats"], round(tcfg["rep_ms"] / max(est, 1e-3)))))
    for k in range(n_warm):
        fn(k)
    clocks = [_Clock(device) for _ in range(n_rep)]
    for k, c in enumerate(clocks):
        c.start()
        fn(k)
        c.stop()
    _sync(device)
    samples = [c.ms() for c in clocks]
    res.update(median_ms=statistics.median(samples), min_ms=min(samples), repeats=n_rep,
               warmup_calls=n_warm)
    return res


def make_state(cfg, I, O):
    """The parameters every peer loads: lockstep's layer defaults (the same names, shapes and
    values as upstream's), theta drawn uniformly in [-pi, pi]. Deterministic across processes."""
    import torch

    import lockstep.qkan as lq

    ref = lq.QKANLayer(I, O, reps=cfg["reps"], ansatz=cfg["ansatz"])
    sd = {k: v.detach().clone() for k, v in ref.state_dict().items()}
    g = torch.Generator().manual_seed(cfg["seed"] * 7919 + I * 131 + O)
    t = sd["theta"]
    sd["theta"] = ((torch.rand(t.shape, generator=g, dtype=torch.float64) * 2 - 1) * math.pi).to(t.dtype)
    return sd


def make_batches(cfg, B, I, O, device, nb):
    import torch

    lo, hi = cfg["x_range"]
    g = torch.Generator().manual_seed(cfg["seed"] * 104729 + B * 7 + I * 3 + O)
    xs = [(torch.rand(B, I, generator=g) * (hi - lo) + lo).to(device).requires_grad_(True)
          for _ in range(nb)]
    cot = torch.randn(B, O, generator=g).to(device)
    return xs, cot


def build_layer(peer, cfg, I, O, device):
    import qkan

    import lockstep.qkan as lq  # registers solver="lockstep" with qkan

    kw = dict(reps=cfg["reps"], ansatz=cfg["ansatz"], device=device)
    if peer == "lockstep":
        layer = lq.QKANLayer(I, O, **kw)
    else:
        solver = {"lockstep_plain": "lockstep", "exact": "exact", "flash": "flash"}[peer]
        layer = qkan.QKANLayer(I, O, solver=solver, **kw)
    layer.load_state_dict(make_state(cfg, I, O), strict=True)
    return layer


def run_shape(peer, cfg, shape, device, workdir):
    import torch

    B, I, O = shape["B"], shape["I"], shape["O"]
    rec = {"peer": peer, "name": shape["name"], "B": B, "I": I, "O": O, "evals": B * I * O}
    tcfg = cfg["timing"]
    try:
        layer = build_layer(peer, cfg, I, O, device)
        xs, cot = make_batches(cfg, B, I, O, device, tcfg["batches"])
    except Exception as e:
        rec["error"] = err_record(e)
        return rec
    rec["layer"] = {"class": f"{type(layer).__module__}.{type(layer).__name__}",
                    "c_dtype": str(getattr(layer, "c_dtype", None)),
                    "base_activation": type(layer.base_activation).__name__}
    named = [(n, p) for n, p in layer.named_parameters() if p.requires_grad]
    params = [p for _, p in named]
    grad_names = ["x"] + [n for n, _ in named]
    rec["grad_names"] = grad_names
    nb = len(xs)

    def fwd(k):
        with torch.no_grad():
            return layer(xs[k % nb])

    def fwd_bwd(k):
        x = xs[k % nb]
        y = layer(x)
        return (y,) + tuple(torch.autograd.grad(y, [x] + params, grad_outputs=cot))

    saved = {}
    for mode, fn in (("forward", fwd), ("fwd_bwd", fwd_bwd)):
        if mode == "fwd_bwd" and "error" in rec.get("forward", {}):
            rec[mode] = {"error": {"type": "Skipped", "message": "the forward failed at this shape"}}
            continue
        res, failure = {}, None
        try:
            out = fn(0)  # correctness outputs; compiles / warms everything
            _sync(device)
            outs = out if isinstance(out, tuple) else (out,)
            if mode == "forward":
                saved["forward_y"] = outs[0].detach().float().cpu()
            else:
                saved["y"] = outs[0].detach().float().cpu()
                saved["grads"] = {n: g.detach().float().cpu() for n, g in zip(grad_names, outs[1:])}
            del out, outs
            res = bench_call(fn, tcfg, device)
        except Exception as e:  # OOM, Triton errors, ...: recorded, then memory is freed
            failure = err_record(e)
        if failure:
            res = {"error": failure}
        rec[mode] = res
        _free(device)
        if device == "cuda" and failure and not _cuda_alive():
            rec["context_lost"] = True
            break
    if saved:
        path = os.path.join(workdir, f"{peer}_{shape_key(shape)}.pt")
        torch.save(saved, path)
        rec["outputs_file"] = path
    return rec


def child_peer(args, cfg):
    import torch  # noqa: F401  (import before the first shape: fail early and whole)

    import lockstep.qkan  # noqa: F401

    device = args.device
    shapes = json.loads(args.child_shapes)
    for shape in shapes:
        emit("start", shape=shape)
        t0 = time.perf_counter()
        rec = run_shape(args.child_peer, cfg, shape, device, args.workdir)
        rec["wall_s"] = round(time.perf_counter() - t0, 3)
        emit("result", shape=shape, data=rec)
        if device == "cuda" and not rec.get("context_lost"):
            _free(device)
            rec["context_lost"] = not _cuda_alive()
        if rec.get("context_lost"):
            log(f"[{args.child_peer}] CUDA context lost at {shape_key(shape)}; exiting for a fresh child")
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(3)


def capture_step(step):
    """step() captured into a torch.cuda.CUDAGraph after a side-stream warm-up (as capture
    requires); returns the graph and the step's outputs, which each replay rewrites."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    return graph, out


def replay_times_us(graph, gcfg):
    """Per-replay times in us, one per round: CUDA events around replays_per_round back-to-back
    replays, after warmup_replays."""
    import torch

    for _ in range(gcfg["warmup_replays"]):
        graph.replay()
    torch.cuda.synchronize()
    n, per_replay_us = gcfg["replays_per_round"], []
    for _ in range(gcfg["rounds"]):
        clock = _Clock("cuda")
        clock.start()
        for _ in range(n):
            graph.replay()
        clock.stop()
        per_replay_us.append(clock.ms() * 1e3 / n)
    return per_replay_us


def child_graph(args, cfg):
    import torch

    gcfg = cfg["graph"]
    B, I, O = gcfg["B"], gcfg["I"], gcfg["O"]
    rec = {"B": B, "I": I, "O": O, "evals": B * I * O, "target_us": gcfg["target_us"]}
    if args.device != "cuda":
        rec["error"] = {"type": "Skipped", "message": "CUDA graphs need a CUDA device"}
        emit("result", data=rec)
        return
    try:
        layer = build_layer("lockstep", cfg, I, O, "cuda")
        xs, cot = make_batches(cfg, B, I, O, "cuda", 2)
        params = [p for _, p in layer.named_parameters() if p.requires_grad]
        x_static = xs[0].detach().clone().requires_grad_(True)

        def step():
            y = layer(x_static)
            return (y,) + tuple(torch.autograd.grad(y, [x_static] + params, grad_outputs=cot))

        graph, static_out = capture_step(step)

        # Correctness: a replay on new data against the same call made eagerly.
        with torch.no_grad():
            x_static.copy_(xs[1])
        graph.replay()
        torch.cuda.synchronize()
        got = [t.detach().clone() for t in static_out]
        xe = xs[1].detach().clone().requires_grad_(True)
        ye = layer(xe)
        ref = (ye,) + tuple(torch.autograd.grad(ye, [xe] + params, grad_outputs=cot))
        names = ["y", "x"] + [n for n, p in layer.named_parameters() if p.requires_grad]
        errs = {n: float((a - b).abs().max()) for n, a, b in zip(names, got, ref)}
        scales = {n: float(b.abs().max()) for n, b in zip(names, ref)}
        rec["replay_vs_eager_max_abs_err"] = errs
        # The same kernels on the same data: equal up to the order of the gradients' atomics.
        rec["replay_matches_eager"] = all(errs[n] <= 1e-5 * max(1.0, scales[n]) for n in names)

        per_replay_us = replay_times_us(graph, gcfg)
        med = statistics.median(per_replay_us)
        rec.update(replay_us_median=med, replay_us_min=min(per_replay_us),
                   replay_us_rounds=[round(v, 3) for v in per_replay_us],
                   replays_per_round=gcfg["replays_per_round"], rounds=gcfg["rounds"],
                   meets_target=med <= gcfg["target_us"],
                   evals_per_s=B * I * O / (med * 1e-6))

        def eager(k):
            x = xs[k % 2]
            y = layer(x)
            return (y,) + tuple(torch.autograd.grad(y, [x] + params, grad_outputs=cot))

        eager(0)
        rec["eager_fwd_bwd"] = bench_call(eager, cfg["timing"], "cuda")
    except Exception as e:
        rec["error"] = err_record(e)
    emit("result", data=rec)


def child_graph_peer(args, cfg):
    """Device time of one peer's layer step: forward + backward (the fwd_bwd call) captured into
    a CUDA graph at each of the config's graph_peers shapes, time per replay. Eager calls at
    small shapes time the host (Python, autograd, launches); replays time the kernels."""
    import torch

    gcfg = cfg["graph_peers"]
    peer = args.child_peer
    out = []
    for B, I, O in gcfg["shapes"]:
        rec = {"peer": peer, "B": B, "I": I, "O": O, "evals": B * I * O}
        out.append(rec)
        if args.device != "cuda":
            rec["error"] = {"type": "Skipped", "message": "CUDA graphs need a CUDA device"}
            continue
        try:
            layer = build_layer(peer, cfg, I, O, "cuda")
            xs, cot = make_batches(cfg, B, I, O, "cuda", 1)
            x = xs[0]
            params = [p for p in layer.parameters() if p.requires_grad]

            def step():
                y = layer(x)
                return (y,) + tuple(torch.autograd.grad(y, [x] + params, grad_outputs=cot))

            graph, _ = capture_step(step)
            per_replay_us = replay_times_us(graph, gcfg)
            rec.update(replay_us_median=statistics.median(per_replay_us), replay_us_min=min(per_replay_us),
                       replays_per_round=gcfg["replays_per_round"], rounds=gcfg["rounds"])
            del graph
        except Exception as e:
            rec["error"] = err_record(e)
            _free("cuda")
            if not _cuda_alive():
                break
    emit("result", data=out)


_FMA_TEMPLATE = r"""
extern "C" __global__ void fma_chains(float* __restrict__ out, const int iters, const float a,
                                      const float b) {
  const float s = 1.0f + 1e-6f * (float)threadIdx.x;
%(init)s
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int u = 0; u < %(unroll)d; ++u) {
%(body)s
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = %(sum)s;
}
"""


def measure_fp32_peak(pcfg):
    """The fp32 FMA rate of this GPU, measured: independent fmaf chains per thread."""
    import cupy as cp
    import numpy as np

    chains, unroll = int(pcfg["chains"]), int(pcfg["unroll"])
    src = _FMA_TEMPLATE % dict(
        init="\n".join(f"  float v{j} = s + {j} * 0.125f;" for j in range(chains)),
        unroll=unroll,
        body="\n".join(f"      v{j} = fmaf(v{j}, a, b);" for j in range(chains)),
        sum=" + ".join(f"v{j}" for j in range(chains)))
    kernel = cp.RawKernel(src, "fma_chains")
    dev = cp.cuda.Device(0)
    sms = int(dev.attributes["MultiProcessorCount"])
    threads = int(pcfg["block"])
    blocks = sms * int(pcfg["blocks_per_sm"])
    out = cp.empty(blocks * threads, dtype=cp.float32)
    a, b = np.float32(0.9999), np.float32(1e-4)

    def run(iters):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        kernel((blocks,), (threads,), (out, np.int32(iters), a, b))
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end)

    run(16)  # compiles
    t = run(512)
    iters = max(512, int(512 * pcfg["target_ms"] / max(t, 1e-3)))
    flop = 2.0 * chains * unroll * iters * blocks * threads
    rates = [flop / (run(iters) * 1e-3) for _ in range(int(pcfg["trials"]))]
    if not bool(cp.isfinite(out).all()):
        raise RuntimeError("the FMA kernel produced non-finite values")
    return {"flops": max(rates), "source": "measured",
            "method": f"cupy RawKernel, {chains} independent fmaf chains x unroll {unroll} per thread, "
                      f"{blocks} blocks x {threads} threads ({sms} SMs), {iters} iterations; best of "
                      f"{len(rates)} runs (CUDA events)",
            "trials_tflops": [round(r / 1e12, 3) for r in rates], "sm_count": sms}


def _versions():
    import torch

    v = {"python": platform.python_version(), "torch": torch.__version__,
         "torch_cuda": getattr(torch.version, "cuda", None)}
    for name in ("triton", "qkan", "cupy", "numpy"):
        try:
            v[name] = __import__(name).__version__
        except Exception as e:  # missing, or failing to import: say which
            v[name] = f"unavailable ({type(e).__name__}: {e})"[:200]
    try:
        import lockstep

        v["lockstep"] = lockstep.__version__
        v["lockstep_build"] = lockstep.build_summary()
        v["lockstep_cuda_available"] = bool(lockstep.cuda_available())
    except Exception as e:
        v["lockstep"] = f"unavailable ({type(e).__name__}: {e})"[:200]
    return v


def _nvidia_smi():
    fields = ["name", "driver_version", "clocks.max.sm", "clocks.max.mem", "power.limit",
              "memory.total", "pci.bus_id"]
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20, check=True).stdout.strip().splitlines()
    except Exception as e:
        return {"error": err_record(e)}
    return [dict(zip(fields, (v.strip() for v in line.split(",")))) for line in out]


def _layer_defaults():
    import inspect

    import qkan

    import lockstep.qkan as lq

    keys = ("preact_trainable", "postact_weight_trainable", "postact_bias_trainable",
            "ba_trainable", "fast_measure", "base_activation", "c_dtype", "p_dtype", "group",
            "theta_init", "is_batchnorm", "checkpoint_reps")
    out = {}
    for name, cls in (("qkan.QKANLayer", qkan.QKANLayer), ("lockstep.qkan.QKANLayer", lq.QKANLayer)):
        params = inspect.signature(cls.__init__).parameters
        out[name] = {k: str(params[k].default) if not isinstance(params[k].default, (bool, int, str))
                     else params[k].default for k in keys if k in params}
    return out


def child_probe(args, cfg):
    import torch

    rec = {"software": _versions(), "layer_defaults": _layer_defaults(), "device": args.device}
    if args.device == "cuda":
        props = torch.cuda.get_device_properties(0)
        free, total = torch.cuda.mem_get_info()
        hw = {"gpu": props.name, "gpu_count": torch.cuda.device_count(),
              "compute_capability": f"{props.major}.{props.minor}",
              "sm_count": props.multi_processor_count, "total_memory_bytes": props.total_memory,
              "free_memory_bytes_at_start": free,
              "l2_cache_bytes": getattr(props, "L2_cache_size", None),
              "nvidia_smi": _nvidia_smi()}
        try:
            hw["cuda_driver_api_version"] = torch._C._cuda_getDriverVersion()
        except Exception:
            pass
        smi = hw["nvidia_smi"]
        if isinstance(smi, list) and smi:
            hw["driver"] = smi[0].get("driver_version")
        rec["hardware"] = hw
        try:
            rec["peak_fp32"] = measure_fp32_peak(cfg["peak_fp32"])
        except Exception as e:
            rec["peak_fp32"] = {"flops": cfg["peak_fp32"]["fallback_flops"], "source": "datasheet",
                                "note": cfg["peak_fp32"]["fallback_note"],
                                "why_not_measured": err_record(e)}
    else:
        rec["hardware"] = {"cpu": platform.processor() or platform.machine(),
                           "note": "run with --device cpu: a harness check, not a GPU benchmark"}
        rec["peak_fp32"] = {"flops": cfg["peak_fp32"]["fallback_flops"], "source": "datasheet",
                            "note": cfg["peak_fp32"]["fallback_note"],
                            "why_not_measured": {"type": "Skipped", "message": "no GPU (--device cpu)"}}
    emit("result", data=rec)


# ---------------------------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------------------------
def run_child(common, extra, timeout_s, on_msg):
    """Runs this script as a child; calls on_msg for every JSON line it prints. Returns
    (returncode, timed_out, stderr tail). The child is a session leader, killed with its
    process group on timeout."""
    cmd = [sys.executable, os.path.abspath(__file__)] + common + extra
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            for line in proc.stdout:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                on_msg(msg)
            rc = proc.wait()
        finally:
            timer.cancel()
        err.seek(0)
        tail = err.read()[-2500:]
    return rc, timed_out.is_set(), tail


def run_single(common, extra, timeout_s, what):
    box = {}

    def on_msg(msg):
        if msg.get("event") == "result":
            box["data"] = msg["data"]

    rc, timed_out, tail = run_child(common, extra, timeout_s, on_msg)
    if "data" not in box:
        why = "timed out" if timed_out else f"exited with code {rc}"
        return {"error": {"type": "ChildFailed", "message": f"{what} child {why}; stderr: {tail}"}}
    return box["data"]


def run_peer(peer, shapes, common, timeout_s):
    results = {}
    remaining = list(shapes)
    while remaining:
        current = {}

        def on_msg(msg):
            if msg.get("event") == "start":
                current["shape"] = msg["shape"]
            elif msg.get("event") == "result":
                rec = msg["data"]
                results[shape_key(msg["shape"])] = rec
                current.pop("shape", None)
                log(_progress_line(rec))

        rc, timed_out, tail = run_child(
            common, ["--child", "peer", "--child-peer", peer,
                     "--child-shapes", json.dumps(remaining)], timeout_s, on_msg)
        if "shape" in current:  # died in the middle of a shape
            s = current["shape"]
            why = "timed out" if timed_out else f"died (exit code {rc})"
            results[shape_key(s)] = {"peer": peer, "name": s["name"], "B": s["B"], "I": s["I"],
                                     "O": s["O"], "evals": s["B"] * s["I"] * s["O"],
                                     "error": {"type": "ChildDied", "message": f"child {why}; stderr: {tail}"}}
            log(f"  {peer} {shape_key(s)}: child {why}")
        left = [s for s in remaining if shape_key(s) not in results]
        if len(left) == len(remaining):  # no progress (failed at start-up): give up on this peer
            for s in left:
                results[shape_key(s)] = {"peer": peer, "name": s["name"], "B": s["B"], "I": s["I"],
                                         "O": s["O"], "evals": s["B"] * s["I"] * s["O"],
                                         "error": {"type": "ChildFailed",
                                                   "message": f"child exited with code {rc} before this shape; stderr: {tail}"}}
            break
        remaining = left
    return results


def _progress_line(rec):
    parts = [f"  {rec['peer']:<15} {shape_key(rec):>16}"]
    if "error" in rec:
        parts.append(f"failed: {rec['error']['type']}")
    for mode in MODES:
        m = rec.get(mode)
        if not m:
            continue
        parts.append(f"{mode} {m['median_ms']:.4g} ms" if "median_ms" in m else f"{mode} {m['error']['type']}")
    return "  ".join(parts)


def compare(got, ref):
    import torch

    g, r = got.double(), ref.double()
    if g.shape != r.shape:
        return {"error": f"shape {tuple(g.shape)} vs {tuple(r.shape)}"}
    d = (g - r).abs()
    finite = bool(torch.isfinite(g).all())
    ref_max = float(r.abs().max()) if r.numel() else 0.0
    max_err = float(d.max()) if d.numel() else 0.0
    rnorm = float(r.norm())
    return {"max_abs_err": max_err, "ref_max_abs": ref_max,
            "rel_to_max": max_err / ref_max if ref_max > 0 else (0.0 if max_err == 0 else math.inf),
            "rel_l2": float(d.norm()) / rnorm if rnorm > 0 else (0.0 if max_err == 0 else math.inf),
            "finite": finite}


def check_pair(ours_file, peer_file, tol):
    """lockstep's saved outputs against a peer's: values and every gradient."""
    import torch

    a = torch.load(ours_file)
    b = torch.load(peer_file)
    out, ok = {}, True
    for key in ("forward_y", "y"):
        if key in a and key in b:
            m = compare(a[key], b[key])
            if "error" not in m:
                m["ok"] = m["finite"] and m["max_abs_err"] <= tol["value_rel_to_max"] * max(1.0, m["ref_max_abs"])
            ok &= m.get("ok", False)
            out[key] = m
    if "grads" in a and "grads" in b:
        out["grads"] = {}
        for name, ga in a["grads"].items():
            if name not in b["grads"]:
                out["grads"][name] = {"error": "missing in the peer"}
                ok = False
                continue
            m = compare(ga, b["grads"][name])
            if "error" not in m:
                m["ok"] = m["finite"] and m["rel_to_max"] <= tol["grad_rel_to_max"]
            ok &= m.get("ok", False)
            out["grads"][name] = m
    if not out:
        return {"skipped": "no common outputs"}
    out["ok"] = bool(ok)
    return out


def assemble(cfg, probe, peer_results, graph, wall_s, args):
    peak = probe.get("peak_fp32", {}).get("flops") or cfg["peak_fp32"]["fallback_flops"]
    shapes_out = []
    for s in cfg["shapes"]:
        key = shape_key(s)
        evals = s["B"] * s["I"] * s["O"]
        row = {"name": s["name"], "B": s["B"], "I": s["I"], "O": s["O"], "evals": evals,
               "floor_ms": {m: flops_per_eval(cfg, m) * evals / peak * 1e3 for m in MODES},
               "peers": {}, "speedup_of_lockstep": {}, "correctness": {}}
        for peer in cfg["peers"]:
            rec = dict(peer_results.get(peer, {}).get(key, {"error": {"type": "NotRun", "message": "no result"}}))
            for mode in MODES:
                m = rec.get(mode)
                if m and "median_ms" in m:
                    m["evals_per_s"] = evals / (m["median_ms"] * 1e-3)
                    m["ratio_to_floor"] = m["median_ms"] / row["floor_ms"][mode]
            row["peers"][peer] = rec
        ours = row["peers"].get("lockstep", {})
        for peer in cfg["peers"]:
            if peer == "lockstep":
                continue
            sp = {}
            for mode in MODES:
                a, b = ours.get(mode, {}), row["peers"][peer].get(mode, {})
                if "median_ms" in a and "median_ms" in b:
                    sp[mode] = b["median_ms"] / a["median_ms"]
            if sp:
                row["speedup_of_lockstep"][f"vs_{peer}"] = sp
        tol = cfg["tolerance"]
        pairs = [("lockstep", "exact"), ("lockstep", "flash"), ("lockstep", "lockstep_plain"),
                 ("lockstep_plain", "exact")]
        for mine, theirs in pairs:
            if mine not in cfg["peers"] or theirs not in cfg["peers"]:
                continue
            fa = row["peers"][mine].get("outputs_file")
            fb = row["peers"][theirs].get("outputs_file")
            name = f"{mine}_vs_{theirs}"
            if not fa or not fb:
                missing = mine if not fa else theirs
                err = row["peers"][missing].get("error") or row["peers"][missing].get("forward", {}).get("error")
                row["correctness"][name] = {"skipped": f"{missing} has no outputs at this shape"
                                            + (f" ({err['type']})" if err else "")}
                continue
            try:
                row["correctness"][name] = check_pair(fa, fb, tol)
            except Exception as e:
                row["correctness"][name] = {"error": err_record(e)}
        for rec in row["peers"].values():
            rec.pop("outputs_file", None)
        shapes_out.append(row)
    return {
        "benchmark": "qkan_cuda",
        "command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "quick": bool(args.quick),
        "config": cfg,
        "hardware": probe.get("hardware"),
        "software": probe.get("software"),
        "layer_defaults": probe.get("layer_defaults"),
        "peak_fp32": probe.get("peak_fp32"),
        "probe_error": probe.get("error"),
        "shapes": shapes_out,
        "graph": graph,
        "wall_s": round(wall_s, 1),
    }


def _fmt_ms(m):
    if not m:
        return "-"
    if "median_ms" in m:
        v = m["median_ms"]
        return f"{v:.3f}" if v < 10 else f"{v:.1f}"
    t = m.get("error", {}).get("type", "?")
    short = {"OutOfMemoryError": "OOM", "Skipped": "skip", "ChildDied": "died", "ChildFailed": "died",
             "NotRun": "-", "ImportError": "import", "CompilationError": "compile"}
    return short.get(t, t[:8])


def print_table(res):
    hw, sw = res.get("hardware") or {}, res.get("software") or {}
    pk = res.get("peak_fp32") or {}
    print()
    print(f"QKAN layer, {res['config']['ansatz']} reps={res['config']['reps']} float32 | "
          f"{hw.get('gpu', hw.get('cpu', '?'))} driver {hw.get('driver', '?')} | torch {sw.get('torch')} "
          f"triton {str(sw.get('triton'))[:12]} qkan {sw.get('qkan')}")
    print(f"fp32 peak {pk.get('flops', float('nan')) / 1e12:.1f} TFLOP/s ({pk.get('source', '?')})"
          + ("" if pk.get("source") == "measured" else f" -- not measured: {pk.get('why_not_measured', {}).get('message', '')[:80]}"))
    head = f"{'B x I x O':>16} {'peer':<15}{'fwd ms':>9}{'f+b ms':>9}{'Geval/s f+b':>12}{'MiB f+b':>9}{'xfloor f+b':>11}  check"
    print(head)
    for row in res["shapes"]:
        first = True
        for peer, rec in row["peers"].items():
            f, fb = rec.get("forward"), rec.get("fwd_bwd")
            if "error" in rec and not f:
                f = fb = {"error": rec["error"]}
            geps = f"{fb['evals_per_s'] / 1e9:.2f}" if fb and "evals_per_s" in fb else "-"
            mem = f"{fb['peak_mem_bytes'] / 2**20:.0f}" if fb and fb.get("peak_mem_bytes") is not None else "-"
            xfl = f"{fb['ratio_to_floor']:.1f}" if fb and "ratio_to_floor" in fb else "-"
            if peer == "lockstep":
                chk = "ref"
            else:
                c = row["correctness"].get(f"lockstep_vs_{peer}", {})
                chk = "ok" if c.get("ok") else ("FAIL" if "ok" in c else "-")
            label = f"{row['B']}x{row['I']}x{row['O']}" if first else ""
            first = False
            print(f"{label:>16} {peer:<15}{_fmt_ms(f):>9}{_fmt_ms(fb):>9}{geps:>12}{mem:>9}{xfl:>11}  {chk}")
        sp = row["speedup_of_lockstep"]
        if sp:
            print(f"{'':>16} speedup of lockstep: " + "; ".join(
                f"{k[3:]} " + "/".join(f"{v.get(m, float('nan')):.1f}x" for m in MODES)
                for k, v in sp.items()) + "  (fwd/f+b)")
    g = res.get("graph") or {}
    if "replay_us_median" in g:
        eager = g.get("eager_fwd_bwd", {}).get("median_ms")
        print(f"graph {g['B']}x{g['I']}x{g['O']} lockstep fwd+bwd: {g['replay_us_median']:.2f} us/replay "
              f"(target <= {g['target_us']} us: {'met' if g['meets_target'] else 'MISSED'})"
              + (f"; eager {eager * 1e3:.1f} us" if eager else "")
              + f"; replay == eager: {'ok' if g.get('replay_matches_eager') else 'FAIL'}")
    else:
        print(f"graph: {g.get('error', {}).get('type', 'not run')}: {g.get('error', {}).get('message', '')[:100]}")
    gp = res.get("graph_peers") or {}
    ours = {(r["B"], r["I"], r["O"]): r for r in gp.get("lockstep", []) if isinstance(r, dict) and "B" in r}
    for peer, recs in gp.items():
        for r in recs:
            where = f"{r['B']}x{r['I']}x{r['O']}" if "B" in r else "(no shape)"
            if "replay_us_median" not in r:
                print(f"graph replay {where} {peer}: {r.get('error', {}).get('type', '?')}: "
                      f"{r.get('error', {}).get('message', '')[:100]}")
                continue
            mine = ours.get((r["B"], r["I"], r["O"]), {}).get("replay_us_median")
            ratio = f"; lockstep {r['replay_us_median'] / mine:.1f}x faster" if mine and peer != "lockstep" else ""
            print(f"graph replay {where} {peer}: fwd+bwd {r['replay_us_median']:.1f} us{ratio}")
    print(f"wall {res['wall_s']} s")


def parent(args, cfg):
    t0 = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix="qkan_cuda_bench_")
    common = ["--config", os.path.abspath(args.config), "--device", args.device, "--workdir", workdir]
    if args.quick:
        common.append("--quick")
    if args.peers:
        common += ["--peers", args.peers]
    if args.shapes:
        common += ["--shapes", args.shapes]
    timeout = cfg["child_timeout_s"]
    try:
        log("probe: hardware, versions, fp32 peak ...")
        probe = run_single(common, ["--child", "probe"], timeout, "probe")
        pk = probe.get("peak_fp32", {})
        log(f"  {probe.get('hardware', {}).get('gpu', probe.get('hardware'))}; fp32 peak "
            f"{pk.get('flops', float('nan')) / 1e12:.1f} TFLOP/s ({pk.get('source')})")
        peer_results = {}
        for peer in cfg["peers"]:
            log(f"{peer}:")
            peer_results[peer] = run_peer(peer, cfg["shapes"], common, timeout)
        log("graph:")
        graph = run_single(common, ["--child", "graph"], timeout, "graph")
        graph_peers = {}
        for peer in cfg["peers"]:
            log(f"graph replay, {peer}:")
            got = run_single(common, ["--child", "graph_peer", "--child-peer", peer], timeout, "graph_peer")
            graph_peers[peer] = got if isinstance(got, list) else [got]
        res = assemble(cfg, probe, peer_results, graph, time.perf_counter() - t0, args)
        res["graph_peers"] = graph_peers
    finally:
        if not args.keep_outputs:
            shutil.rmtree(workdir, ignore_errors=True)
    out = args.out or DEFAULT_OUT
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=2, default=str)
    print_table(res)
    print("wrote", out)


def dry_run(cfg):
    peak = cfg["peak_fp32"]["fallback_flops"]
    plan = {"peers": cfg["peers"], "graph": cfg["graph"], "timing": cfg["timing"],
            "shapes": [{**s, "evals": s["B"] * s["I"] * s["O"],
                        "floor_ms_at_fallback_peak": {m: flops_per_eval(cfg, m) * s["B"] * s["I"] * s["O"] / peak * 1e3
                                                      for m in MODES}} for s in cfg["shapes"]]}
    print(json.dumps(plan, indent=2))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=DEFAULT_CONFIG)
    ap.add_argument("--out", default=None, help=f"JSON output (default: {os.path.relpath(DEFAULT_OUT)})")
    ap.add_argument("--quick", action="store_true", help="the config's shortened run (fewer shapes and repeats)")
    ap.add_argument("--peers", default=None, help=f"comma-separated subset of {','.join(PEERS)}")
    ap.add_argument("--shapes", default=None, help="override the shapes: BxIxO[,BxIxO...]")
    ap.add_argument("--dry-run", action="store_true", help="print the plan (no device needed) and exit")
    ap.add_argument("--keep-outputs", action="store_true", help="keep the children's saved outputs")
    # Internal: the device (cpu only checks the harness) and the child protocol.
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help=argparse.SUPPRESS)
    ap.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child", choices=("probe", "peer", "graph", "graph_peer"), default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-peer", choices=PEERS, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-shapes", default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args.config, args.quick, args.peers, args.shapes)
    if args.dry_run:
        dry_run(cfg)
        return
    if args.child == "probe":
        child_probe(args, cfg)
    elif args.child == "peer":
        child_peer(args, cfg)
    elif args.child == "graph":
        child_graph(args, cfg)
    elif args.child == "graph_peer":
        child_graph_peer(args, cfg)
    else:
        parent(args, cfg)


if __name__ == "__main__":
    main()
