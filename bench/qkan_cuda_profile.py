"""Where the GPU time of one QKAN layer step goes: every CUDA kernel of a forward + backward of
lockstep.qkan.QKANLayer, with its time, from torch.profiler: eager calls, or with --graph the
step captured once in a CUDA graph and replayed. JSON on stdout and, with --out, in a file.

    PYTHONPATH=python python3 bench/qkan_cuda_profile.py --shape 1024,10,10 [--graph] --out prof.json
"""
import argparse
import json

import torch

import lockstep.qkan as lq


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="1024,10,10", help="B,I,O")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--graph", action="store_true", help="profile replays of the captured step")
    ap.add_argument("--out")
    args = ap.parse_args()
    B, I, O = (int(v) for v in args.shape.split(","))
    layer = lq.QKANLayer(I, O, reps=args.reps, device="cuda")
    x = torch.rand(B, I, device="cuda", requires_grad=True)
    cot = torch.randn(B, O, device="cuda")
    params = [p for p in layer.parameters() if p.requires_grad]

    def step():
        y = layer(x)
        torch.autograd.grad(y, [x] + params, grad_outputs=cot)

    side = torch.cuda.Stream()  # warm-up on a side stream, as graph capture requires
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(10):
            step()
    torch.cuda.current_stream().wait_stream(side)
    if args.graph:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        step = graph.replay
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
    kernels = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            k = kernels.setdefault(ev.name, {"calls": 0, "us": 0.0})
            k["calls"] += 1
            k["us"] += ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(args.steps):
        step()
    stop.record()
    torch.cuda.synchronize()
    step_us = start.elapsed_time(stop) * 1e3 / args.steps  # unprofiled, back to back
    rows = sorted(({"kernel": n[:120], "calls_per_step": v["calls"] / args.steps,
                    "us_per_step": v["us"] / args.steps} for n, v in kernels.items()),
                  key=lambda r: -r["us_per_step"])
    res = {"shape": [B, I, O], "reps": args.reps, "steps": args.steps, "graph": args.graph,
           "gpu": torch.cuda.get_device_name(), "kernels": rows,
           "kernel_us_per_step": sum(r["us_per_step"] for r in rows), "step_us": step_us}
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
