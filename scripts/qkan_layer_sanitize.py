"""A forward + backward of lockstep.qkan.QKANLayer on CUDA for compute-sanitizer: the fused
layer kernels over tile tails (B 37/300/2000, I 33/65/40, O 9/17/5), float32 and float64, the
natural and the g == I table layouts, a pruned edge, trainable postacts and preacts. Prints a
checksum per case; scripts/test_gpu.sh runs it under memcheck and racecheck.

    compute-sanitizer --tool memcheck python3 scripts/qkan_layer_sanitize.py
"""
import torch

import lockstep.qkan as lq

CASES = [
    (37, 33, 9, {}),
    (300, 65, 17, dict(postact_weight_trainable=True, postact_bias_trainable=True,
                       p_dtype=torch.float64, c_dtype=torch.complex128)),
    (70, 33, 5, dict(group=33, postact_bias_trainable=True)),
    (2000, 40, 9, dict(preact_trainable=True)),
]

torch.manual_seed(0)
for B, I, O, kw in CASES:
    layer = lq.QKANLayer(I, O, reps=3, device="cuda", **kw)
    with torch.no_grad():
        layer.mask[1, 2] = 0
    x = (torch.rand(B, I, device="cuda", dtype=layer.theta.dtype) * 2 - 1).requires_grad_(True)
    y = layer(x)
    params = [p for p in layer.parameters() if p.requires_grad]
    grads = torch.autograd.grad(y.pow(2).sum(), [x] + params)
    torch.cuda.synchronize()
    print(B, I, O, float(y.abs().sum()), [float(g.abs().sum()) for g in grads])
