"""Numerical policies: accuracy of fast_measure near the poles, NaN propagation, px's domain,
and gradcheck in float64."""

import math

import pytest
import torch
from qkan.solver import torch_exact_solver

import lockstep.qkan as lq
from conftest import ANSATZE, PATHS, assert_close, make_inputs



def near_pole_inputs(ansatz, dtype, sign):
    """reps = 1 circuits whose final ⟨Z⟩ is sign·cos δ for δ from 1e-1 down to 1e-4, where
    fast = |α| − |β| is 1 − O(δ) and computing it from z alone cancels catastrophically."""
    deltas = torch.tensor([1e-1, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4], dtype=torch.float64)
    B = deltas.numel()
    x = torch.linspace(-1.0, 1.0, B, dtype=torch.float64)[:, None]
    if ansatz == "real":
        # ⟨Z⟩ = sin(x − θ0) (L = 1): pick θ0 = x − sign·(π/2 − δ) per row, one row per δ.
        # theta is per edge, so use one input column per δ (I = B), one batch row.
        theta = (x[:, 0] - sign * (math.pi / 2 - deltas)).reshape(B, 1, 1)
        return x.T.to(dtype).contiguous(), theta.to(dtype)
    # pz: RY(θ[0,1]) takes (1,0,0) to z = −sin θ[0,1]; the RZ gates after keep z.
    t1 = -sign * (math.pi / 2 - deltas)
    theta = torch.zeros(B, 2, 2, dtype=torch.float64)
    theta[:, 0, 1] = t1
    return x.T.to(dtype).contiguous(), theta.to(dtype)


@pytest.mark.parametrize("path", PATHS, ids=["reference", "default"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("ansatz", ["pz_encoding", "real"])
def test_fast_measure_float32_accurate_near_poles(ansatz, sign, path):
    """float32 fast_measure must stay ~1e-5 accurate where ⟨Z⟩ → ±1 (upstream's complex64
    spinor gets ~1e-7 there). Computing |α| − |β| from z alone loses up to ε/(4 min(|α|,|β|))
    (the fused path did, ~1e-4, until it took r = √(n_x² + n_y²))."""
    x, theta = near_pole_inputs(ansatz, torch.float32, sign)
    got = lq.solve(x, theta, None, None, 1, ansatz=ansatz, path=path)
    truth = lq.solve(x.double(), theta.double(), None, None, 1, ansatz=ansatz, path="reference")
    assert (truth.abs() > 0.9).all()  # the construction really sits at the poles
    # The bar is reachable in float32: upstream's complex64 spinor meets it.
    upstream = torch_exact_solver(x, theta, None, None, 1, ansatz=ansatz, dtype=torch.complex64)
    assert_close(upstream.double(), truth, torch.float32, "fwd", msg="upstream complex64")
    assert_close(got.double(), truth, torch.float32, "fwd",
                 msg=f"{lq.explain(ansatz=ansatz, dtype=torch.float32, path=path)}")
    W = torch.ones(1, x.shape[1], dtype=torch.float32)
    y = lq.contract(x, theta, None, None, W, 1, ansatz=ansatz, path=path)
    assert_close(y.double(), truth.sum(-1), torch.float32, "fwd")


@pytest.mark.parametrize("path", PATHS, ids=["reference", "default"])
@pytest.mark.parametrize("ansatz", ANSATZE)
def test_nan_in_gives_nan_out(gen, ansatz, path):
    B, O, I, L = 6, 3, 4, 2
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=L, group="natural",
                                 dtype=torch.float64)
    x[2, 1] = float("nan")
    theta[0, 3, 0, 0] = float("nan")
    kw = dict(ansatz=ansatz, preacts_trainable=True, path=path)
    post = lq.solve(x, theta, w, c, L, **kw)
    nan = torch.zeros(B, O, I, dtype=torch.bool)
    nan[2, :, 1] = True
    nan[:, 0, 3] = True
    assert torch.equal(torch.isnan(post), nan)
    W = torch.rand(O, I, generator=gen, dtype=torch.float64)
    y = lq.contract(x, theta, w, c, W, L, **kw)
    assert torch.equal(torch.isnan(y), nan.any(-1))


@pytest.mark.parametrize("path", PATHS, ids=["reference", "default"])
def test_px_outside_domain_is_nan(path):
    x = torch.tensor([[0.5, 2.0]], dtype=torch.float64)
    theta = torch.zeros(1, 2, 3, 1, dtype=torch.float64)
    w = torch.ones(1, 2, 2, dtype=torch.float64)
    c = torch.zeros(1, 2, 2, dtype=torch.float64)
    post = lq.solve(x, theta, w, c, 2, ansatz="px", preacts_trainable=True, path=path)
    assert torch.isfinite(post[0, 0, 0]) and torch.isnan(post[0, 0, 1])


GC_CASES = [(a, f, pt) for a in ANSATZE for f in (True, False) for pt in (True, False)
            if not (a == "px_encoding" and not pt)]


@pytest.mark.parametrize("path", PATHS, ids=["reference", "default"])
@pytest.mark.parametrize("ansatz,fast,pt", GC_CASES,
                         ids=[f"{a}-{'fast' if f else 'z'}-{'enc' if p else 'raw'}" for a, f, p in GC_CASES])
def test_gradcheck_float64(gen, ansatz, fast, pt, path):
    B, O, I, L = 3, 2, 2, 2
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=L, group="natural",
                                 dtype=torch.float64)
    W = torch.randn(O, I, generator=gen, dtype=torch.float64)
    kw = dict(ansatz=ansatz, fast_measure=fast, preacts_trainable=pt, path=path)
    encoding = pt or ansatz == "rpz_encoding"
    leaves = [t.clone().requires_grad_(True) for t in (x, theta, w, c, W)]
    if not encoding:
        leaves[2].requires_grad_(False)
        leaves[3].requires_grad_(False)
    assert torch.autograd.gradcheck(
        lambda x, t, w, c: lq.solve(x, t, w, c, L, **kw), leaves[:4], eps=1e-6, atol=1e-6)
    assert torch.autograd.gradcheck(
        lambda x, t, w, c, W: lq.contract(x, t, w, c, W, L, **kw), leaves, eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("path", PATHS, ids=["reference", "default"])
def test_gradcheck_grouped_float64(gen, path):
    B, O, I, L = 3, 2, 3, 2
    for group in ("grouped", "shared"):
        x, theta, w, c = make_inputs(gen, "pz_encoding", B=B, O=O, I=I, reps=L, group=group,
                                     dtype=torch.float64)
        W = torch.randn(O, I, generator=gen, dtype=torch.float64)
        kw = dict(preacts_trainable=True, out_dim=O, path=path)
        leaves = [t.clone().requires_grad_(True) for t in (x, theta, w, c, W)]
        assert torch.autograd.gradcheck(
            lambda x, t, w, c: lq.solve(x, t, w, c, L, **kw), leaves[:4], eps=1e-6, atol=1e-6)
        assert torch.autograd.gradcheck(
            lambda x, t, w, c, W: lq.contract(x, t, w, c, W, L, **kw), leaves, eps=1e-6, atol=1e-6)
