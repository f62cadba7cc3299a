"""Where the GPU time of one QKAN layer step goes: every CUDA kernel of a forward + backward of
lockstep.qkan.QKANLayer, with its time, from torch.profiler (eager calls; a graph replay runs
the same kernels). JSON on stdout and, with --out, in a file.

    PYTHONPATH=python python3 bench/qkan_cuda_profile.py --shape 1024,10,10 --out prof.json
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

    for _ in range(10):
        step()
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
    rows = sorted(({"kernel": n[:120], "calls_per_step": v["calls"] / args.steps,
                    "us_per_step": v["us"] / args.steps} for n, v in kernels.items()),
                  key=lambda r: -r["us_per_step"])
    res = {"shape": [B, I, O], "reps": args.reps, "steps": args.steps,
           "gpu": torch.cuda.get_device_name(), "kernels": rows,
           "kernel_us_per_step": sum(r["us_per_step"] for r in rows)}
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
