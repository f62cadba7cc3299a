"""The CUDA path of lockstep.qkan, against independent oracles on fresh random inputs.

* solve / contract on CUDA tensors == the same call on CPU copies (the CPU path; at the small
  size also the CPU reference path, a separate double-precision spinor simulation), for every
  ansatz x data-angle combination, both measures, float32/float64, natural / grouped / shared
  theta layouts and odd sizes: values and every gradient (torch.autograd.grad).
* qkan.QKAN(..., solver="lockstep") on CUDA == solver="exact" on CUDA (torch autograd through
  qkan's exact solver is the gradient oracle), same parameters.
* lockstep.qkan.QKANLayer on CUDA == the same layer on the CPU, and == qkan.QKANLayer(exact).
* Streams (a side stream orders the kernels after earlier work on it), CUDA graph capture of a
  whole training step replayed on new data == the same steps run eagerly, and the error cases.

Skipped as a module without a CUDA device or without a CUDA build of lockstep. Every test
draws its inputs from a generator seeded by its node id (conftest.py); conftest also poisons
every output buffer with NaN, so an element a kernel does not write fails the comparison.
"""

import itertools

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import lockstep
import lockstep.qkan as lq

if not torch.cuda.is_available():
    pytest.skip("CUDA tests: torch sees no CUDA device (torch.cuda.is_available() is False)",
                allow_module_level=True)
if not lockstep.cuda_available():
    pytest.skip("CUDA tests: this lockstep build has no CUDA backend "
                f"(lockstep.cuda_available() is False; {lockstep.build_summary()})",
                allow_module_level=True)

import qkan  # noqa: E402
from conftest import make_inputs  # noqa: E402

CUDA = torch.device("cuda")
REPS = 3

# Forward values: max absolute error, on the scale max(1, max|reference|) (a postact is in
# [-1, 1]; a contraction or a layer sums I of them).
VAL_TOL = {torch.float32: 2e-5, torch.float64: 1e-11}
# Gradients: max absolute error relative to the reference tensor's max magnitude. float32 gets
# more room than its values: the fast measure's slope sqrt(1 + r) / (2 r) multiplies a
# transverse Bloch component r that carries ~1e-7 absolute rounding error, so the rare
# evaluations near a pole (r -> 0) have f32 gradients off by ~1e-7 / r relative in *either*
# implementation; at ~1e5 evaluations per call that reaches a few 1e-5 of the tensor maximum.
GRAD_TOL = {torch.float32: 2e-4, torch.float64: 1e-10}

# Every ansatz with the raw and the encoded data angle; rpz always encodes (here with
# preacts_trainable=False, upstream's special case), px needs the encoding.
COMBOS = [
    ("pz_encoding", False), ("pz_encoding", True), ("rpz_encoding", False),
    ("px_encoding", True), ("real", False), ("real", True), ("mix", False), ("mix", True),
]
SIZES = [(37, 5, 3), (300, 33, 7)]  # (B, I, O): nothing a multiple of a block or a warp
SMALL = SIZES[0]
LAYOUTS = ["natural", "grouped", "shared"]  # theta (O, I, ..), (I // 2, ..), (I, ..)
DTYPES = [torch.float32, torch.float64]


def _dt(dtype):
    return str(dtype).replace("torch.", "")


def _encoding(ansatz, pt):
    return pt or ansatz == "rpz_encoding"


# ---------------------------------------------------------------------------------------------
# Comparison helpers
# ---------------------------------------------------------------------------------------------
def check_values(got, ref, dtype, what):
    assert got.shape == ref.shape, f"{what}: shape {tuple(got.shape)} != {tuple(ref.shape)}"
    assert got.dtype == ref.dtype == dtype, f"{what}: dtype {got.dtype} / {ref.dtype}, want {dtype}"
    g, r = got.detach().cpu().double(), ref.detach().cpu().double()
    assert torch.isfinite(g).all(), f"{what}: non-finite values (an output left unwritten?)"
    if g.numel() == 0:
        return
    err = (g - r).abs().max().item()
    scale = max(1.0, r.abs().max().item())
    assert err <= VAL_TOL[dtype] * scale, (
        f"{what}: max |cuda - ref| = {err:.3e} > {VAL_TOL[dtype]:.0e} x {scale:.3g}")


def check_grad(got, ref, dtype, what):
    assert got is not None and ref is not None, f"{what}: a gradient is missing"
    assert got.shape == ref.shape, f"{what}: shape {tuple(got.shape)} != {tuple(ref.shape)}"
    assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype} != {ref.dtype}"
    g, r = got.detach().cpu().double(), ref.detach().cpu().double()
    assert torch.isfinite(g).all(), f"{what}: non-finite gradient (an element left unwritten?)"
    if g.numel() == 0:
        return
    err = (g - r).abs().max().item()
    scale = r.abs().max().item()
    assert err <= GRAD_TOL[dtype] * scale, (
        f"{what}: max |cuda - ref| = {err:.3e} > {GRAD_TOL[dtype]:.0e} x max|ref| {scale:.3g}")


def run_with_grads(fn, tensors, needs, device, cot_seed):
    """fn(*leaves) on copies of `tensors` on `device`; gradients of sum(out * cot) for the
    leaves flagged in `needs` (cot: a fixed random cotangent, the same on every device)."""
    leaves = [None if t is None else t.detach().to(device, copy=True).requires_grad_(n)
              for t, n in zip(tensors, needs)]
    out = fn(*leaves)
    cot = torch.randn(out.shape, generator=torch.Generator().manual_seed(cot_seed),
                      dtype=torch.float64).to(device=device, dtype=out.dtype)
    wrt = [t for t, n in zip(leaves, needs) if n]
    grads = torch.autograd.grad((out * cot).sum(), wrt)
    return out.detach(), grads


def assert_all_on_cuda(*tensors):
    for t in tensors:
        assert t.is_cuda, f"expected a CUDA tensor, got one on {t.device}"


# ---------------------------------------------------------------------------------------------
# solve / contract: CUDA == CPU
# ---------------------------------------------------------------------------------------------
def grid():
    for (ansatz, pt), fast, dtype, layout, size in itertools.product(
            COMBOS, [True, False], DTYPES, LAYOUTS, SIZES):
        yield pytest.param(
            ansatz, pt, fast, dtype, layout, size,
            id=f"{ansatz}-{'enc' if pt else 'raw'}-{'fast' if fast else 'z'}-{_dt(dtype)}-"
               f"{layout}-B{size[0]}I{size[1]}O{size[2]}")


def _kwargs(ansatz, pt, fast, theta, O):
    # group as upstream's QKANLayer passes it: the leading shape of the tables.
    return dict(ansatz=ansatz, preacts_trainable=pt, fast_measure=fast, out_dim=O,
                group=tuple(theta.shape[:-2]))


@pytest.mark.parametrize("ansatz,pt,fast,dtype,layout,size", list(grid()))
def test_solve_cuda_matches_cpu(gen, seed, ansatz, pt, fast, dtype, layout, size):
    B, I, O = size
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=REPS, group=layout, dtype=dtype)
    kw = _kwargs(ansatz, pt, fast, theta, O)
    enc = _encoding(ansatz, pt)
    needs = [True, True, enc, enc]
    names = ["x", "theta", "preacts_weight", "preacts_bias"][:2 + 2 * enc]

    def fn(x, t, w, c):
        return lq.solve(x, t, w, c, REPS, **kw)

    out_d, g_d = run_with_grads(fn, (x, theta, w, c), needs, CUDA, seed)
    out_h, g_h = run_with_grads(fn, (x, theta, w, c), needs, "cpu", seed)
    assert out_d.shape == (B, 1 if layout == "shared" else O, I)
    assert_all_on_cuda(out_d, *g_d)
    check_values(out_d, out_h, dtype, "postacts")
    for name, a, b in zip(names, g_d, g_h):
        check_grad(a, b, dtype, f"grad {name}")
    if size == SMALL:  # the reference path: an independent spinor simulation
        out_r, g_r = run_with_grads(lambda *a: lq.solve(*a, REPS, path="reference", **kw),
                                    (x, theta, w, c), needs, "cpu", seed)
        check_values(out_d, out_r, dtype, "postacts vs reference path")
        for name, a, b in zip(names, g_d, g_r):
            check_grad(a, b, dtype, f"grad {name} vs reference path")


@pytest.mark.parametrize("ansatz,pt,fast,dtype,layout,size", list(grid()))
def test_contract_cuda_matches_cpu(gen, seed, ansatz, pt, fast, dtype, layout, size):
    B, I, O = size
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=REPS, group=layout, dtype=dtype)
    W = torch.randn(O, I, generator=gen, dtype=torch.float64).to(dtype)
    kw = _kwargs(ansatz, pt, fast, theta, O)
    enc = _encoding(ansatz, pt)
    needs = [True, True, enc, enc, True]
    names = ["x", "theta"] + (["preacts_weight", "preacts_bias"] if enc else []) + ["weight"]

    def fn(x, t, w, c, W):
        return lq.contract(x, t, w, c, W, REPS, **kw)

    y_d, g_d = run_with_grads(fn, (x, theta, w, c, W), needs, CUDA, seed)
    y_h, g_h = run_with_grads(fn, (x, theta, w, c, W), needs, "cpu", seed)
    assert y_d.shape == (B, O)
    assert_all_on_cuda(y_d, *g_d)
    check_values(y_d, y_h, dtype, "y")
    for name, a, b in zip(names, g_d, g_h):
        check_grad(a, b, dtype, f"grad {name}")
    if size == SMALL:
        y_r, g_r = run_with_grads(lambda *a: lq.contract(*a, REPS, path="reference", **kw),
                                  (x, theta, w, c, W), needs, "cpu", seed)
        check_values(y_d, y_r, dtype, "y vs reference path")
        for name, a, b in zip(names, g_d, g_r):
            check_grad(a, b, dtype, f"grad {name} vs reference path")


@pytest.mark.parametrize("dtype", DTYPES, ids=_dt)
@pytest.mark.parametrize("reps", [1, 2, 5])
@pytest.mark.parametrize("ansatz,pt", COMBOS, ids=[f"{a}-{'enc' if p else 'raw'}" for a, p in COMBOS])
def test_other_reps_and_wider_layers(gen, seed, ansatz, pt, reps, dtype):
    """reps != 3 runs the kernels' generic (not unrolled) loops; I = 70 spans three chunks of
    32 inputs and O = 19 several output tiles, neither a multiple of its tile."""
    B, I, O = 130, 70, 19
    fast = reps != 2
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=reps, group="natural",
                                 dtype=dtype)
    W = torch.randn(O, I, generator=gen, dtype=torch.float64).to(dtype)
    kw = _kwargs(ansatz, pt, fast, theta, O)
    enc = _encoding(ansatz, pt)
    names = ["x", "theta"] + (["preacts_weight", "preacts_bias"] if enc else [])
    for what, fn, tensors, needs in [
        ("solve", lambda *a: lq.solve(*a, reps, **kw), (x, theta, w, c), [True, True, enc, enc]),
        ("contract", lambda *a: lq.contract(*a, reps, **kw), (x, theta, w, c, W),
         [True, True, enc, enc, True]),
    ]:
        out_d, g_d = run_with_grads(fn, tensors, needs, CUDA, seed)
        out_h, g_h = run_with_grads(fn, tensors, needs, "cpu", seed)
        check_values(out_d, out_h, dtype, what)
        for name, a, b in zip(names + (["weight"] if what == "contract" else []), g_d, g_h):
            check_grad(a, b, dtype, f"{what}: grad {name}")


# ---------------------------------------------------------------------------------------------
# Smaller behaviours of the CUDA path
# ---------------------------------------------------------------------------------------------
def test_explain_cuda():
    path, reason = lq.explain(device="cuda")
    assert path == "fused" and "CUDA" in reason, (path, reason)
    assert lq.explain(ansatz="mix", dtype=torch.float64, device="cuda")[0] == "fused"
    with pytest.raises(ValueError, match="reference path runs on the CPU"):
        lq.explain(path="reference", device="cuda")


def test_host_fallbacks_keep_cuda_tensors(gen, seed):
    """path="reference" and a configuration the CUDA kernels do not implement (reps > 16) run
    on CPU copies; the result and the gradients come back on the CUDA device."""
    for reps, path in [(REPS, "reference"), (17, None)]:
        x, theta, w, c = make_inputs(gen, "pz_encoding", B=9, O=3, I=4, reps=reps,
                                     group="natural", dtype=torch.float64)
        kw = dict(preacts_trainable=True, path=path)
        needs = [True, True, True, True]
        out_d, g_d = run_with_grads(lambda *a: lq.solve(*a, reps, **kw), (x, theta, w, c),
                                    needs, CUDA, seed)
        out_h, g_h = run_with_grads(lambda *a: lq.solve(*a, reps, **kw), (x, theta, w, c),
                                    needs, "cpu", seed)
        assert_all_on_cuda(out_d, *g_d)
        check_values(out_d, out_h, torch.float64, f"reps={reps} path={path}")
        for a, b in zip(g_d, g_h):
            check_grad(a, b, torch.float64, f"reps={reps} path={path} grad")


def test_empty_batch_cuda(gen):
    x, theta, w, c = make_inputs(gen, "mix", B=0, O=3, I=5, reps=REPS, group="natural",
                                 dtype=torch.float32)
    W = torch.randn(3, 5, generator=gen)
    t = theta.cuda().requires_grad_(True)
    Wd = W.cuda().requires_grad_(True)
    post = lq.solve(x.cuda(), t, w.cuda(), c.cuda(), REPS, ansatz="mix")
    assert post.shape == (0, 3, 5) and post.is_cuda
    gt, = torch.autograd.grad(post.sum(), [t])
    assert torch.equal(gt.cpu(), torch.zeros_like(theta))
    y = lq.contract(x.cuda(), t, w.cuda(), c.cuda(), Wd, REPS, ansatz="mix")
    assert y.shape == (0, 3) and y.is_cuda
    gt, gW = torch.autograd.grad(y.sum(), [t, Wd])
    assert torch.equal(gt.cpu(), torch.zeros_like(theta)) and torch.equal(gW.cpu(), torch.zeros_like(W))


def test_noncontiguous_and_dtype_cast_cuda(gen):
    x, theta, w, c = make_inputs(gen, "pz_encoding", B=21, O=3, I=6, reps=REPS, group="natural",
                                 dtype=torch.float64)
    W = torch.randn(3, 6, generator=gen, dtype=torch.float64)
    xd, td, wd, cd, Wd = (t.cuda() for t in (x, theta, w, c, W))
    xn = xd.t().contiguous().t()
    tn = td.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3)
    Wn = Wd.t().contiguous().t()
    assert not (xn.is_contiguous() or tn.is_contiguous() or Wn.is_contiguous())
    kw = dict(preacts_trainable=True)
    check_values(lq.contract(xn, tn, wd, cd, Wn, REPS, **kw),
                 lq.contract(x, theta, w, c, W, REPS, **kw).cuda(), torch.float64, "non-contiguous")
    # dtype=complex64: computed in float32 on the device, gradients back in the leaves' dtype.
    t = td.clone().requires_grad_(True)
    y = lq.contract(xd, t, wd, cd, Wd, REPS, dtype=torch.complex64, **kw)
    assert y.dtype == torch.float32 and y.is_cuda
    check_values(y, lq.contract(x.float(), theta.float(), w.float(), c.float(), W.float(), REPS,
                                **kw).cuda(), torch.float32, "dtype=complex64")
    g, = torch.autograd.grad(y.sum(), [t])
    assert g.dtype == torch.float64 and g.is_cuda and torch.isfinite(g).all()


# ---------------------------------------------------------------------------------------------
# Upstream's model through the registry: solver="lockstep" == solver="exact", both on CUDA
# ---------------------------------------------------------------------------------------------
MODEL_CASES = [
    dict(),
    dict(preact_trainable=True, postact_weight_trainable=True, postact_bias_trainable=True,
         ba_trainable=True),
    dict(ansatz="rpz_encoding"),
    dict(ansatz="mix", fast_measure=False, preact_trainable=True),
    dict(group=2),
    dict(c_dtype=torch.complex128, p_dtype=torch.float64, preact_trainable=True),
]


def _perturb(module, gen, small_preacts=False):
    """Moves every parameter off its special initial value (w = 1, c = 0, ...), identically
    for any module given the same generator state; the mask stays as it is."""
    with torch.no_grad():
        for n, p in module.named_parameters():
            if n.endswith("mask") or ".bn." in n or n.startswith("bn."):
                continue
            scale = 0.1 if (small_preacts and "preacts" in n) else 0.3
            d = scale * torch.randn(p.shape, generator=gen, dtype=torch.float64)
            p.add_(d.to(device=p.device, dtype=p.dtype))
    # Upstream caches "mask is all ones" / "frozen postact bias is zero" flags and refreshes
    # them only on load: reload, so that a qkan module sees its own edits.
    module.load_state_dict(module.state_dict())


def _grads_of(module, x, params=True, cot_seed=1):
    out = module(x)
    cot = torch.randn(out.shape, generator=torch.Generator().manual_seed(cot_seed),
                      dtype=torch.float64).to(device=out.device, dtype=out.dtype)
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad] if params else []
    wrt = [p for _, p in named] + [x]
    gs = torch.autograd.grad((out * cot).sum(), wrt)
    return out.detach(), dict(zip([n for n, _ in named] + ["input"], gs))


@pytest.mark.parametrize("case", MODEL_CASES,
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_qkan_model_lockstep_matches_exact_on_cuda(seed, case, monkeypatch):
    devices = []
    real_solve = lq.solve
    monkeypatch.setattr(lq, "solve", lambda x, *a, **k: devices.append(x.device) or real_solve(x, *a, **k))
    kw = dict(reps=REPS, device="cuda", seed=seed % 10000)
    kw.update(case)
    width = [5, 7, 3]
    exact = qkan.QKAN(width, solver="exact", **kw)
    ours = qkan.QKAN(width, solver="lockstep", **kw)
    _perturb(exact, torch.Generator().manual_seed(seed))
    ours.load_state_dict(exact.state_dict())
    for (n1, p1), (n2, p2) in zip(exact.named_parameters(), ours.named_parameters()):
        assert n1 == n2 and p1.is_cuda and p2.is_cuda and torch.equal(p1, p2), n1
    dtype = kw.get("p_dtype", torch.float32)
    g = torch.Generator().manual_seed(seed + 1)
    x = (torch.rand(61, width[0], generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    for mode in ("train", "eval"):
        exact.train(mode == "train")
        ours.train(mode == "train")
        # In eval mode upstream folds postact/base weights into constants: input gradient only.
        train = mode == "train"
        y_e, g_e = _grads_of(exact, x.cuda().requires_grad_(True), params=train)
        y_o, g_o = _grads_of(ours, x.cuda().requires_grad_(True), params=train)
        assert y_o.is_cuda
        check_values(y_o, y_e, dtype, f"{mode}: model output")
        assert g_o.keys() == g_e.keys()
        for k in g_e:
            check_grad(g_o[k], g_e[k], dtype, f"{mode}: grad {k}")
    assert len(devices) == 4 and all(d.type == "cuda" for d in devices), devices


# ---------------------------------------------------------------------------------------------
# lockstep.qkan.QKANLayer: CUDA (the fused layer kernels where the base branch is SiLU, else the
# contracted kernels and torch) == CPU (contract and torch), and == qkan's exact layer on CUDA
# ---------------------------------------------------------------------------------------------
LAYER_CASES = [
    dict(),
    dict(preact_trainable=True, postact_weight_trainable=True, postact_bias_trainable=True),
    dict(ansatz="rpz_encoding", group=3),
    dict(group=40, postact_weight_trainable=True, postact_bias_trainable=True),  # g == I: O' = 1
    dict(ansatz="px_encoding", preact_trainable=True),
    dict(ansatz="mix", ba_trainable=False, base_activation="tanh", fast_measure=False),
    dict(ansatz="real", preact_trainable=True),
    dict(is_batchnorm=True, postact_weight_trainable=True, base_activation="gelu"),
    dict(c_dtype=torch.complex128, p_dtype=torch.float64, preact_trainable=True,
         postact_bias_trainable=True),
]


def _layer_pair(seed, case, B, I, O):
    """The same perturbed lq.QKANLayer on the CPU and on CUDA (one edge pruned), and x (B, I)."""
    kw = dict(reps=REPS, seed=seed % 10000)
    kw.update(case)
    ansatz = kw.get("ansatz", "pz_encoding")
    dtype = kw.get("p_dtype", torch.float32)
    host = lq.QKANLayer(I, O, **kw)
    _perturb(host, torch.Generator().manual_seed(seed), small_preacts=ansatz == "px_encoding")
    with torch.no_grad():
        host.mask[1, 2] = 0.0  # a pruned edge
    dev = lq.QKANLayer(I, O, device="cuda", **kw)
    dev.load_state_dict(host.state_dict())
    assert all(p.is_cuda for p in dev.parameters())
    lim = 0.4 if ansatz == "px_encoding" else 1.5  # px: |w·x + c| stays below 1
    g = torch.Generator().manual_seed(seed + 1)
    x = ((torch.rand(B, I, generator=g, dtype=torch.float64) * 2 - 1) * lim).to(dtype)
    return kw, ansatz, dtype, host, dev, x


def _layer_cuda_vs_cpu(host, dev, x, dtype):
    """Output and every gradient of the CUDA layer == the CPU layer's; returns the CUDA ones."""
    y_h, g_h = _grads_of(host, x.clone().requires_grad_(True))
    y_d, g_d = _grads_of(dev, x.cuda().requires_grad_(True))
    assert y_d.is_cuda and all(t.is_cuda for t in g_d.values())
    check_values(y_d, y_h, dtype, "layer output vs CPU")
    assert g_d.keys() == g_h.keys()
    for k in g_h:
        check_grad(g_d[k], g_h[k], dtype, f"grad {k} vs CPU")
    return y_d, g_d


@pytest.mark.parametrize("case", LAYER_CASES,
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_layer_cuda_matches_cpu_and_exact(seed, case):
    B, I, O = 129, 40, 9
    kw, ansatz, dtype, host, dev, x = _layer_pair(seed, case, B, I, O)
    y_d, g_d = _layer_cuda_vs_cpu(host, dev, x, dtype)

    if ansatz == "real":
        return  # upstream computes `real` in bfloat16: no oracle at these tolerances
    up = qkan.QKANLayer(I, O, solver="exact", device="cuda", **kw)
    up.load_state_dict(host.state_dict())  # also refreshes upstream's mask/bias flags
    y_u, g_u = _grads_of(up, x.cuda().requires_grad_(True))
    check_values(y_d, y_u, dtype, "layer output vs qkan exact")
    assert g_d.keys() == g_u.keys()
    for k in g_u:
        check_grad(g_d[k], g_u[k], dtype, f"grad {k} vs qkan exact")


# Layers large enough that their backward takes the rows kernel (lanes along batch rows), with
# 429 inputs (54 input warps) and 41 outputs, against the CPU layer: 1100 rows take it with 16
# rows per lane (3 row blocks of 512 × 54 = 162 blocks, at least one per multiprocessor on
# devices of up to 162; an H100 or H200 has 132), 549 rows with 8 (2 blocks of 512 × 54 = 108
# are too few on devices of more than 108, 3 of 256 × 54 = 162 enough).
ROWS_LAYER_CASES = [
    dict(),
    dict(preact_trainable=True, postact_weight_trainable=True, postact_bias_trainable=True),
    dict(c_dtype=torch.complex128, p_dtype=torch.float64, postact_weight_trainable=True,
         postact_bias_trainable=True),
    # 14 reps: 34 sums per edge, more than the 32 lanes of a warp
    dict(reps=14, postact_weight_trainable=True, postact_bias_trainable=True),
]


@pytest.mark.parametrize("B", [549, 1100], ids=["rows8", "rows16"])
@pytest.mark.parametrize("case", ROWS_LAYER_CASES,
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_large_layer_cuda_matches_cpu(seed, case, B):
    I, O = 429, 41
    _, _, dtype, host, dev, x = _layer_pair(seed, case, B, I, O)
    _layer_cuda_vs_cpu(host, dev, x, dtype)


# ---------------------------------------------------------------------------------------------
# Streams
# ---------------------------------------------------------------------------------------------
SLEEP_CYCLES = 20_000_000  # ~10 ms of GPU spin at H200 clocks


def test_side_stream_orders_after_earlier_work(gen, seed):
    """Under `with torch.cuda.stream(s)`, forward and backward launch on s: they see x that
    an earlier copy on s (queued behind a ~10 ms spin) wrote. Work launched on any other
    stream (torch's streams are non-blocking) would read the zeros that were there before."""
    B, I, O = 300, 33, 7
    x, theta, w, c = make_inputs(gen, "pz_encoding", B=B, O=O, I=I, reps=REPS, group="natural",
                                 dtype=torch.float32)
    W = torch.randn(O, I, generator=gen)
    kw = dict(preacts_trainable=True)
    needs = [False, True, True, True, True]
    y_h, g_h = run_with_grads(lambda *a: lq.contract(*a, REPS, **kw), (x, theta, w, c, W), needs,
                              "cpu", seed)
    p_h, gp_h = run_with_grads(lambda *a: lq.solve(*a, REPS, **kw), (x, theta, w, c), needs[:4],
                               "cpu", seed)

    x_src = x.cuda()
    xd = torch.zeros_like(x_src)
    leaves = [t.cuda().requires_grad_(True) for t in (theta, w, c, W)]
    cot_y = torch.randn(y_h.shape, generator=torch.Generator().manual_seed(seed),
                        dtype=torch.float64).float().cuda()
    cot_p = torch.randn(p_h.shape, generator=torch.Generator().manual_seed(seed),
                        dtype=torch.float64).float().cuda()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        xd.copy_(x_src)
        y = lq.contract(xd, *leaves, REPS, **kw)
        g_y = torch.autograd.grad((y * cot_y).sum(), leaves)
        p = lq.solve(xd, *leaves[:3], REPS, **kw)
        g_p = torch.autograd.grad((p * cot_p).sum(), leaves[:3])
    torch.cuda.current_stream().wait_stream(s)
    check_values(y, y_h, torch.float32, "y on a side stream")
    check_values(p, p_h, torch.float32, "postacts on a side stream")
    for name, a, b in zip(["theta", "w", "c", "weight"], g_y, g_h):
        check_grad(a, b, torch.float32, f"contract grad {name} on a side stream")
    for name, a, b in zip(["theta", "w", "c"], g_p, gp_h):
        check_grad(a, b, torch.float32, f"solve grad {name} on a side stream")


# ---------------------------------------------------------------------------------------------
# CUDA graphs: a whole training step captured once and replayed on new data
# ---------------------------------------------------------------------------------------------
def _graph_model(kind):
    if kind == "lockstep-layers":
        return nn.Sequential(
            lq.QKANLayer(4, 6, reps=3, device="cuda", preact_trainable=True,
                         postact_weight_trainable=True, postact_bias_trainable=True),
            lq.QKANLayer(6, 2, reps=2, device="cuda", ansatz="mix", fast_measure=False))
    return qkan.QKAN([4, 6, 2], reps=3, solver="lockstep", device="cuda",
                     preact_trainable=True, ba_trainable=True, postact_weight_trainable=True)


def _optimizer(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05)
    return torch.optim.Adam(params, lr=0.02, capturable=True)


def _train_step(model, opt, x, target):
    loss = F.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    return loss


@pytest.mark.parametrize("opt_kind", ["sgd", "adam-capturable"])
@pytest.mark.parametrize("model_kind", ["lockstep-layers", "qkan-model"])
def test_cuda_graph_training_step_matches_eager(seed, model_kind, opt_kind):
    B, steps, warmup = 33, 4, 3
    torch.manual_seed(seed % 10000)
    model = _graph_model(model_kind)
    eager = _graph_model(model_kind)
    _perturb(model, torch.Generator().manual_seed(seed))
    eager.load_state_dict(model.state_dict())
    opt = _optimizer(opt_kind, model.parameters())
    eager_opt = _optimizer(opt_kind, eager.parameters())
    g = torch.Generator().manual_seed(seed + 1)
    data = [(torch.rand(B, 4, generator=g) * 2 - 1).cuda() for _ in range(steps + 1)]
    targets = [torch.randn(B, 2, generator=g).cuda() for _ in range(steps + 1)]

    # Graphed: warm up on a side stream (PyTorch's recipe), capture one step, replay it.
    static_x = data[0].clone()
    static_t = targets[0].clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            opt.zero_grad(set_to_none=True)
            _train_step(model, opt, static_x, static_t)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = _train_step(model, opt, static_x, static_t)
    graph_losses = []
    for k in range(1, steps + 1):
        static_x.copy_(data[k])
        static_t.copy_(targets[k])
        graph.replay()
        graph_losses.append(static_loss.detach().clone())

    # Eager: the same warm-up steps and the same steps, from the same initial parameters.
    for k in [0] * warmup + list(range(1, steps + 1)):
        eager_opt.zero_grad(set_to_none=True)
        loss = _train_step(eager, eager_opt, data[k], targets[k])
        if k:
            eager_loss = loss.detach().clone()
            torch.testing.assert_close(graph_losses[k - 1], eager_loss, rtol=1e-5, atol=1e-6,
                                       msg=lambda m: f"step {k}: graph vs eager loss\n{m}")
    torch.cuda.synchronize()
    assert len({round(v.item(), 6) for v in graph_losses}) == steps, "replays did not see new data"
    for (n, p), (_, q) in zip(model.named_parameters(), eager.named_parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"parameter {n} after {steps} steps\n{m}")


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------
def test_mixed_devices_raise(gen):
    x, theta, w, c = make_inputs(gen, "pz_encoding", B=8, O=3, I=4, reps=2, group="natural",
                                 dtype=torch.float32)
    W = torch.randn(3, 4, generator=gen)
    d = torch.Tensor.cuda
    on = r"cuda(:\d+)?"
    with pytest.raises(ValueError, match=rf"theta is on cpu but x is on {on}"):
        lq.solve(d(x), theta, None, None, 2)
    with pytest.raises(ValueError, match=rf"theta is on {on} but x is on cpu"):
        lq.solve(x, d(theta), None, None, 2)
    with pytest.raises(ValueError, match=rf"preacts_weight is on cpu but x is on {on}"):
        lq.solve(d(x), d(theta), w, d(c), 2, preacts_trainable=True)
    with pytest.raises(ValueError, match=rf"\] weight is on cpu but x is on {on}"):
        lq.contract(d(x), d(theta), None, None, W, 2)
    with pytest.raises(ValueError, match=rf"theta is on {on} but x is on cpu"):
        lq.QKANLayer(4, 3, reps=2, device="cuda")(x)
    with pytest.raises(ValueError, match=rf"theta is on {on} but x is on cpu"):
        qkan.QKAN([4, 3], reps=2, solver="lockstep", device="cuda")(x)


@pytest.mark.parametrize("fn", ["solve", "contract", "layer"])
def test_second_derivative_raises_on_cuda(gen, fn):
    x, theta, w, c = make_inputs(gen, "pz_encoding", B=8, O=3, I=4, reps=2, group="natural",
                                 dtype=torch.float32)
    W = torch.randn(3, 4, generator=gen).cuda()
    x = x.cuda().requires_grad_(True)
    if fn == "layer":
        layer = lq.QKANLayer(4, 3, reps=2, device="cuda", preact_trainable=True)
        t = layer.theta
        out = layer(x)
    else:
        t = theta.cuda().requires_grad_(True)
        w, c = w.cuda(), c.cuda()
        out = (lq.solve(x, t, w, c, 2, preacts_trainable=True) if fn == "solve"
               else lq.contract(x, t, w, c, W, 2, preacts_trainable=True))
    gt, gx = torch.autograd.grad(out.pow(2).sum(), [t, x], create_graph=True)
    with pytest.raises(RuntimeError, match=r'(?s)second derivatives are not provided.*solver="exact"'):
        torch.autograd.grad(gt.pow(2).sum(), t)
    with pytest.raises(RuntimeError, match="exact"):
        torch.autograd.grad(gx.sum(), x)


# ---------------------------------------------------------------------------------------------
# A second device (runs only where there are two): x's device need not be the current one.
# ---------------------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_tensors_on_a_device_that_is_not_current(gen, seed):
    dev = torch.device("cuda:1")
    assert torch.cuda.current_device() != 1
    x, theta, w, c = make_inputs(gen, "mix", B=45, O=5, I=6, reps=REPS, group="natural",
                                 dtype=torch.float32)
    W = torch.randn(5, 6, generator=gen)
    kw = dict(ansatz="mix", preacts_trainable=True)
    needs = [True, True, True, True, True]
    y_d, g_d = run_with_grads(lambda *a: lq.contract(*a, REPS, **kw), (x, theta, w, c, W), needs,
                              dev, seed)
    y_h, g_h = run_with_grads(lambda *a: lq.contract(*a, REPS, **kw), (x, theta, w, c, W), needs,
                              "cpu", seed)
    assert y_d.device == dev and all(gr.device == dev for gr in g_d)
    check_values(y_d, y_h, torch.float32, "y on cuda:1")
    for a, b in zip(g_d, g_h):
        check_grad(a, b, torch.float32, "grad on cuda:1")
