"""lockstep.qkan.solve / contract against qkan's torch_exact_solver (the oracle): values and
first derivatives, over every ansatz x fast_measure x preacts_trainable x table layout x dtype."""

import itertools

import pytest
import torch
from qkan.solver import torch_exact_solver

import lockstep.qkan as lq
from conftest import ANSATZE, DTYPES, PATHS, assert_close, make_inputs

B, O, I, REPS = 12, 4, 5, 3
GROUPS = ["natural", "grouped", "shared"]


def grid():
    for ansatz, fast, pt, group, dts in itertools.product(
            ANSATZE, [True, False], [True, False], GROUPS, DTYPES):
        if ansatz == "px_encoding" and not pt:
            continue  # px needs the encoding (an error case, tested in test_errors.py)
        yield pytest.param(ansatz, fast, pt, group, dts,
                           id=f"{ansatz}-{'fast' if fast else 'z'}-{'enc' if pt else 'raw'}-"
                              f"{group}-{str(dts[1]).replace('torch.', '')}")


def group_kw(group, theta):
    # The forms upstream's QKANLayer passes: (O, I) natural, (g,) grouped; also a plain int.
    if group == "natural":
        return tuple(theta.shape[:2])
    if group == "grouped":
        return int(theta.shape[0])
    return (int(theta.shape[0]),)


def kwargs_for(ansatz, fast, pt, group, cdtype, theta):
    return dict(ansatz=ansatz, fast_measure=fast, preacts_trainable=pt, out_dim=O, dtype=cdtype,
                group=group_kw(group, theta), device="cpu")


@pytest.mark.parametrize("ansatz,fast,pt,group,dts", list(grid()))
def test_forward_matches_exact(gen, ansatz, fast, pt, group, dts):
    cdtype, dtype = dts
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=REPS, group=group, dtype=dtype)
    kw = kwargs_for(ansatz, fast, pt, group, cdtype, theta)
    expected = torch_exact_solver(x, theta, w, c, REPS, **kw)
    got = lq.solve(x, theta, w, c, REPS, **kw)
    assert got.dtype == dtype
    assert got.shape == expected.shape == (B, 1 if group == "shared" else O, I)
    assert torch.isfinite(got).all()
    assert_close(got, expected, dtype, "fwd")


@pytest.mark.parametrize("ansatz,fast,pt,group,dts", list(grid()))
def test_gradients_match_exact(gen, ansatz, fast, pt, group, dts):
    cdtype, dtype = dts
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=REPS, group=group, dtype=dtype)
    kw = kwargs_for(ansatz, fast, pt, group, cdtype, theta)
    encoding = pt or ansatz == "rpz_encoding"
    inputs = [x, theta] + ([w, c] if encoding else [])

    def grads(fn):
        leaves = [t.clone().requires_grad_(True) for t in inputs]
        lw = leaves[2:] if encoding else [w, c]
        out = fn(leaves[0], leaves[1], lw[0], lw[1], REPS, **kw)
        cot = torch.randn(out.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
        return torch.autograd.grad((out * cot.to(out.dtype)).sum(), leaves)

    expected = grads(torch_exact_solver)
    got = grads(lq.solve)
    for name, g, e in zip(["x", "theta", "preacts_weight", "preacts_bias"], got, expected):
        assert_close(g, e, dtype, "grad", msg=f"grad {name}")


CONTRACT_GRID = [
    pytest.param(a, f, pt, g, d, id=f"{a}-{'fast' if f else 'z'}-{'enc' if pt else 'raw'}-{g}-"
                                   f"{str(d[1]).replace('torch.', '')}")
    for a, f, pt, g, d in itertools.product(ANSATZE, [True, False], [True, False], GROUPS, DTYPES)
    if not (a == "px_encoding" and not pt) and (f or d[1] == torch.float64)
]


@pytest.mark.parametrize("ansatz,fast,pt,group,dts", CONTRACT_GRID)
def test_contract_matches_exact(gen, ansatz, fast, pt, group, dts):
    """contract == (exact * W).sum(-1), values and gradients in x, theta, w, c and W."""
    cdtype, dtype = dts
    x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=REPS, group=group, dtype=dtype)
    W = torch.randn(O, I, generator=gen, dtype=torch.float64).to(dtype)
    kw = kwargs_for(ansatz, fast, pt, group, cdtype, theta)
    encoding = pt or ansatz == "rpz_encoding"
    inputs = [x, theta, w, c, W]

    def run(fn):
        leaves = [t.clone().requires_grad_(True) for t in inputs]
        y = fn(*leaves)
        cot = torch.randn(y.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
        gs = torch.autograd.grad((y * cot.to(y.dtype)).sum(), leaves, allow_unused=True)
        return y.detach(), gs

    y_e, g_e = run(lambda x, t, w, c, W: (torch_exact_solver(x, t, w, c, REPS, **kw) * W).sum(-1))
    y_g, g_g = run(lambda x, t, w, c, W: lq.contract(x, t, w, c, W, REPS, **kw))
    assert y_g.shape == (B, O)
    for name, g, e in zip(["x", "theta", "preacts_weight", "preacts_bias", "weight"], g_g, g_e):
        if name.startswith("preacts") and not encoding:
            assert g is None and e is None
            continue
        assert_close(g, e, dtype, "grad", msg=f"grad {name}")
    assert_close(y_g, y_e, dtype, "fwd")


@pytest.mark.parametrize("path", PATHS, ids=["reference", "default"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_contract_equals_solve_times_weight(gen, path, dtype):
    for ansatz in ANSATZE:
        x, theta, w, c = make_inputs(gen, ansatz, B=B, O=O, I=I, reps=REPS, group="natural",
                                     dtype=dtype)
        W = torch.randn(O, I, generator=gen, dtype=torch.float64).to(dtype)
        kw = dict(ansatz=ansatz, preacts_trainable=True, path=path)
        y = lq.contract(x, theta, w, c, W, REPS, **kw)
        ref = (lq.solve(x, theta, w, c, REPS, **kw) * W).sum(-1)
        assert_close(y, ref, dtype, "fwd", msg=ansatz)


def test_reference_values():
    """docs/QKAN.md §1's reference values, on every path."""
    th = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8]], dtype=torch.float64)
    th = th.expand(1, 2, 4, 2).contiguous()
    x = torch.tensor([[0.5, -1.0]], dtype=torch.float64)
    for path in PATHS:
        z = lq.solve(x, th, None, None, 3, fast_measure=False, path=path)
        f = lq.solve(x, th, None, None, 3, fast_measure=True, path=path)
        torch.testing.assert_close(z[0, 0], torch.tensor([0.6049941972, -0.2323831948], dtype=torch.float64), atol=1e-10, rtol=0)
        torch.testing.assert_close(f[0, 0], torch.tensor([0.4514090388, -0.1654560026], dtype=torch.float64), atol=1e-10, rtol=0)
        r = lq.solve(torch.tensor([[0.5]], dtype=torch.float64),
                     torch.tensor([[[[0.1], [0.2], [0.3]]]], dtype=torch.float64), None, None, 3,
                     ansatz="real", fast_measure=False, path=path)
        torch.testing.assert_close(r, torch.full((1, 1, 1), 0.7833269096, dtype=torch.float64), atol=1e-10, rtol=0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("ansatz", ANSATZE)
def test_batch_chunks_and_threads_vs_reference(gen, ansatz, dtype, threads):
    """A batch that spans several kernel chunks and is not a multiple of any SIMD width, on 1
    and 2 threads: the default path against the reference path, values and all gradients."""
    import lockstep

    Bl, Ol, Il = 131, 3, 7
    x, theta, w, c = make_inputs(gen, ansatz, B=Bl, O=Ol, I=Il, reps=REPS, group="natural",
                                 dtype=dtype)
    W = torch.randn(Ol, Il, generator=gen, dtype=torch.float64).to(dtype)
    kw = dict(ansatz=ansatz, preacts_trainable=True, fast_measure=False)
    n = lockstep.num_threads()
    lockstep.set_num_threads(threads)
    try:
        results = {}
        for path in PATHS:
            leaves = [t.clone().requires_grad_(True) for t in (x, theta, w, c, W)]
            post = lq.solve(*leaves[:4], REPS, path=path, **kw)
            y = lq.contract(*leaves, REPS, path=path, **kw)
            cot_p = torch.randn(post.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
            cot_y = torch.randn(y.shape, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
            gs = torch.autograd.grad((post * cot_p.to(dtype)).sum(), leaves[:4])
            gc = torch.autograd.grad((y * cot_y.to(dtype)).sum(), leaves)
            results[path] = (post.detach(), y.detach(), gs, gc)
    finally:
        lockstep.set_num_threads(n)
    (p_r, y_r, gs_r, gc_r), (p_d, y_d, gs_d, gc_d) = results["reference"], results[None]
    assert_close(p_d, p_r, dtype, "fwd")
    # y and the parameter gradients are sums over I and over the batch: scale the tolerance.
    assert_close(y_d / Il, y_r / Il, dtype, "fwd")
    for name, a, b in zip(["x", "theta", "w", "c"], gs_d, gs_r):
        assert_close(a / Bl, b / Bl, dtype, "grad", msg=f"solve grad {name}")
    for name, a, b in zip(["x", "theta", "w", "c", "weight"], gc_d, gc_r):
        assert_close(a / Bl, b / Bl, dtype, "grad", msg=f"contract grad {name}")
