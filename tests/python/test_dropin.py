"""The drop-in: qkan.QKAN(..., solver="lockstep") against solver="exact", and
lockstep.qkan.QKANLayer against qkan.QKANLayer (state_dict both ways, forward, gradients)."""

import pytest
import qkan
import torch
from qkan.solver import get_registry

import lockstep.qkan as lq
from conftest import assert_close


def test_registered():
    assert lq.qkan_registered
    solver = get_registry()[lq.SOLVER_NAME]
    assert isinstance(solver, qkan.solver.QKANSolver) and solver.name == "lockstep"


def grads_of(model, x, gen, params=True):
    out = model(x)
    cot = torch.randn(out.shape, generator=gen, dtype=torch.float64).to(out.dtype)
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad and params]
    names = [n for n, _ in named]
    params = [p for _, p in named]
    xs = [x] if x.requires_grad else []
    gs = torch.autograd.grad((out * cot).sum(), params + xs)
    return out.detach(), dict(zip(names + ["input"] * len(xs), gs))


MODEL_CASES = [
    dict(),
    dict(ansatz="rpz_encoding"),
    dict(ansatz="mix", fast_measure=False),
    dict(group=2),
    dict(preact_trainable=False, postact_bias_trainable=False, ba_trainable=False),
    dict(is_batchnorm=True, base_activation="gelu"),
    dict(c_dtype=torch.complex128, p_dtype=torch.float64),
]


@pytest.mark.parametrize("case", MODEL_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_qkan_model_lockstep_matches_exact(seed, case, monkeypatch):
    calls = []
    real_solve = lq.solve
    monkeypatch.setattr(lq, "solve", lambda *a, **k: calls.append(1) or real_solve(*a, **k))
    kw = dict(reps=3, preact_trainable=True, postact_weight_trainable=True,
              postact_bias_trainable=True, ba_trainable=True, seed=seed % 10000)
    kw.update(case)
    exact = qkan.QKAN([3, 4, 2], solver="exact", **kw)
    ours = qkan.QKAN([3, 4, 2], solver="lockstep", **kw)
    # Same seed -> same initialisation; then perturb every parameter identically so the
    # comparison does not sit at the special initial values (w = 1, c = 0, ...).
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for (n1, p1), (n2, p2) in zip(exact.named_parameters(), ours.named_parameters()):
            assert n1 == n2 and torch.equal(p1, p2), n1
            if n1.endswith("mask"):
                continue
            d = 0.3 * torch.randn(p1.shape, generator=g, dtype=torch.float64).to(p1.dtype)
            p1.add_(d)
            p2.add_(d)
    dtype = kw.get("p_dtype", torch.float32)
    x = (torch.rand(16, 3, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    for mode in ("train", "eval"):
        exact.train(mode == "train")
        ours.train(mode == "train")
        xe = x.clone().requires_grad_(True)
        xo = x.clone().requires_grad_(True)
        # In eval mode upstream folds the postact/base weights into constants (no parameter
        # gradients through them), so only the input gradient is compared there.
        train = mode == "train"
        y_e, g_e = grads_of(exact, xe, torch.Generator().manual_seed(1), params=train)
        y_o, g_o = grads_of(ours, xo, torch.Generator().manual_seed(1), params=train)
        assert y_o.dtype == y_e.dtype == dtype
        assert_close(y_o, y_e, dtype, "fwd", msg=mode)
        assert g_o.keys() == g_e.keys()
        for k in g_e:
            assert_close(g_o[k], g_e[k], dtype, "grad", msg=f"{mode}: grad {k}")
    assert len(calls) == 4  # two layers x (train, eval): the "lockstep" solver really ran


LAYER_CASES = [
    dict(),
    dict(preact_trainable=True, postact_weight_trainable=True, postact_bias_trainable=True),
    dict(ansatz="rpz_encoding", group=3),
    dict(ansatz="px_encoding", preact_trainable=True),
    dict(ansatz="mix", ba_trainable=False, base_activation="tanh"),
    dict(is_batchnorm=True, postact_weight_trainable=True),
    dict(theta_init="small_gaussian", preact_init=True, preact_trainable=True, group=(4,)),
    dict(c_dtype=torch.complex128, p_dtype=torch.float64, fast_measure=False),
]


def _perturb(layer, gen, ansatz):
    with torch.no_grad():
        for n, p in layer.named_parameters():
            if n in ("mask",) or n.startswith("bn."):
                continue
            scale = 0.1 if (ansatz == "px_encoding" and n.startswith("preacts")) else 0.3
            p.add_(scale * torch.randn(p.shape, generator=gen, dtype=torch.float64).to(p.dtype))
        layer.mask[0, 1] = 0.0  # a pruned edge


@pytest.mark.parametrize("direction", ["upstream_to_ours", "ours_to_upstream"])
@pytest.mark.parametrize("case", LAYER_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_layer_state_dict_and_numbers(seed, case, direction):
    I, O = 5, 3
    kw = dict(reps=2, seed=seed % 10000)
    kw.update(case)
    ansatz = kw.get("ansatz", "pz_encoding")
    up = qkan.QKANLayer(I, O, solver="exact", **kw)
    ours = lq.QKANLayer(I, O, **kw)
    # Same constructor + seed -> same state_dict (names, shapes, values) and requires_grad flags.
    sd_up, sd_ours = up.state_dict(), ours.state_dict()
    assert list(sd_up) == list(sd_ours)
    for k in sd_up:
        assert sd_up[k].shape == sd_ours[k].shape and torch.equal(sd_up[k], sd_ours[k]), k
    assert {n: p.requires_grad for n, p in up.named_parameters()} == \
        {n: p.requires_grad for n, p in ours.named_parameters()}

    src, dst = (up, ours) if direction == "upstream_to_ours" else (ours, up)
    _perturb(src, torch.Generator().manual_seed(seed), ansatz)
    # Upstream caches "mask is all ones" / "bias is zero" flags, refreshed on load: reload
    # so that upstream, as a source, sees its own edits.
    src.load_state_dict(src.state_dict(), strict=True)
    dst.load_state_dict(src.state_dict(), strict=True)

    dtype = kw.get("p_dtype", torch.float32)
    g = torch.Generator().manual_seed(seed + 1)
    lim = 0.5 if ansatz == "px_encoding" else 1.5
    x = ((torch.rand(20, I, generator=g, dtype=torch.float64) * 2 - 1) * lim).to(dtype)
    y_up, g_up = grads_of(up, x.clone().requires_grad_(True), torch.Generator().manual_seed(2))
    y_o, g_o = grads_of(ours, x.clone().requires_grad_(True), torch.Generator().manual_seed(2))
    assert torch.isfinite(y_o).all()
    assert_close(y_o, y_up, dtype, "fwd")
    assert g_o.keys() == g_up.keys()
    for k in g_up:
        assert_close(g_o[k], g_up[k], dtype, "grad", msg=f"grad {k}")


def test_layer_loads_p_dim2_checkpoint(seed):
    up = qkan.QKANLayer(4, 3, reps=2, p_dim=2, seed=seed % 1000, solver="exact")
    ours = lq.QKANLayer(4, 3, reps=2)
    ours.load_state_dict(up.state_dict(), strict=True)
    assert ours.theta.shape == (3, 4, 3, 2)
    torch.testing.assert_close(ours.theta.flatten(), up.theta.flatten(), atol=0, rtol=0)


def test_layer_rejects_unsupported():
    with pytest.raises(ValueError, match="p_dim"):
        lq.QKANLayer(2, 2, p_dim=2)
    with pytest.raises(ValueError, match="solver"):
        lq.QKANLayer(2, 2, solver="flash")
    with pytest.raises(ValueError, match="base_activation"):
        lq.QKANLayer(2, 2, base_activation="softplus")
    with pytest.raises(ValueError, match="x has shape"):
        lq.QKANLayer(2, 2)(torch.zeros(3, 5))


def test_layer_never_builds_boi(monkeypatch):
    """The layer's forward and backward go through contract, never the plain solve."""
    calls = []
    real_solve_forward = lq._C.solve_forward

    class Spy:
        def __getattr__(self, name):
            if name.startswith("solve_"):
                calls.append(name)
            return getattr(real_C, name)

    real_C = lq._C
    monkeypatch.setattr(lq, "_C", Spy())
    layer = lq.QKANLayer(3, 2, preact_trainable=True, postact_weight_trainable=True)
    layer(torch.rand(4, 3)).sum().backward()
    assert calls == [] and real_solve_forward is real_C.solve_forward


def test_real_ansatz_keeps_requested_precision(seed):
    """Upstream forces bfloat16 for `real`; through the registry we get dtype=bfloat16 and
    compute in float32, so the layer matches the complex64 exact solver, not the bf16 one."""
    from qkan.solver import torch_exact_solver

    layer = qkan.QKANLayer(3, 2, reps=2, ansatz="real", solver="lockstep", seed=seed % 1000)
    assert layer.c_dtype == torch.bfloat16
    x = torch.rand(10, 3, generator=torch.Generator().manual_seed(seed)) * 2 - 1
    post = torch_exact_solver(x, layer.theta, layer.preacts_weight, layer.preacts_bias, 2,
                              ansatz="real", dtype=torch.complex64, out_dim=2)
    ref = (post * layer.postact_weights).sum(-1) + torch.nn.functional.linear(
        torch.nn.functional.silu(x), layer.base_weight)
    assert_close(layer(x).detach(), ref.detach(), torch.float32)


def test_forward_no_sum_matches_upstream(seed):
    kw = dict(reps=2, seed=seed % 1000, preact_trainable=True, postact_bias_trainable=True)
    up = qkan.QKANLayer(4, 3, solver="exact", **kw)
    ours = lq.QKANLayer(4, 3, **kw)
    _perturb(ours, torch.Generator().manual_seed(seed), "pz_encoding")
    up.load_state_dict(ours.state_dict())
    x = torch.rand(6, 4, generator=torch.Generator().manual_seed(seed + 1))
    assert_close(ours.forward_no_sum(x), up.forward_no_sum(x), torch.float32)


def test_layer_solver_kwargs_path(seed):
    a = lq.QKANLayer(3, 2, seed=seed % 1000, solver_kwargs={"path": "reference"})
    b = lq.QKANLayer(3, 2, seed=seed % 1000)
    x = torch.rand(5, 3)
    assert_close(a(x), b(x), torch.float32)
    with pytest.raises(ValueError, match="unknown keyword"):
        lq.QKANLayer(3, 2, solver_kwargs={"tile": 4})
