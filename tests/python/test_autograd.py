"""Autograd behaviour: no_grad skips the Function, only the needed gradients are computed,
second derivatives raise, dtype casts and non-contiguous inputs, empty batches."""

import pytest
import torch

import lockstep.qkan as lq
from conftest import assert_close, make_inputs

B, O, I, L = 8, 3, 4, 2


@pytest.fixture
def inputs(gen):
    x, theta, w, c = make_inputs(gen, "pz_encoding", B=B, O=O, I=I, reps=L, group="natural",
                                 dtype=torch.float64)
    W = torch.randn(O, I, generator=gen, dtype=torch.float64)
    return x, theta, w, c, W


class Spy:
    """Stands in for lockstep._lockstep and records each call's arguments."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __getattr__(self, name):
        fn = getattr(self.real, name)

        def wrapped(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return fn(*args, **kwargs)

        return wrapped


@pytest.fixture
def spy(monkeypatch):
    s = Spy(lq._C)
    monkeypatch.setattr(lq, "_C", s)
    return s


def test_no_grad_skips_autograd(inputs):
    x, theta, w, c, W = inputs
    theta.requires_grad_(True)
    W.requires_grad_(True)
    with torch.no_grad():
        assert lq.solve(x, theta, w, c, L, preacts_trainable=True).grad_fn is None
        assert lq.contract(x, theta, w, c, W, L, preacts_trainable=True).grad_fn is None
    # Nothing requires grad: no Function either.
    t = theta.detach()
    assert lq.solve(x, t, w, c, L).grad_fn is None
    assert lq.contract(x, t, w, c, W.detach(), L).grad_fn is None
    assert lq.solve(x, theta, w, c, L).grad_fn is not None


def test_only_needed_gradients_are_computed(inputs, spy):
    x, theta, w, c, W = inputs
    theta.requires_grad_(True)  # first layer: x needs no grad; frozen preacts and weight
    lq.contract(x, theta, w, c, W, L, preacts_trainable=True).sum().backward()
    (name, args, _), = [call for call in spy.calls if call[0].endswith("backward")]
    assert name == "contract_backward"
    gx, gt, gw, gc, gW = args[6:11]
    assert gx is None and gw is None and gc is None and gW is None and gt is not None
    assert theta.grad is not None and x.grad is None

    spy.calls.clear()
    x.requires_grad_(True)
    lq.solve(x, theta, w, c, L, preacts_trainable=True).sum().backward()
    (name, args, _), = [call for call in spy.calls if call[0].endswith("backward")]
    gx, gt, gw, gc = args[5:9]
    assert name == "solve_backward" and gx is not None and gt is not None and gw is None and gc is None


def test_saves_only_inputs(inputs):
    x, theta, w, c, W = inputs
    theta.requires_grad_(True)
    y = lq.contract(x, theta, w, c, W, L, preacts_trainable=True)
    saved = y.grad_fn.saved_tensors
    assert len(saved) == 5 and all(s is None or s.shape in {t.shape for t in inputs} for s in saved)


@pytest.mark.parametrize("fn", ["solve", "contract"])
def test_double_backward_raises(inputs, fn):
    x, theta, w, c, W = inputs
    theta.requires_grad_(True)
    x.requires_grad_(True)
    if fn == "solve":
        out = lq.solve(x, theta, w, c, L, preacts_trainable=True)
    else:
        out = lq.contract(x, theta, w, c, W, L, preacts_trainable=True)
    gt, gx = torch.autograd.grad(out.pow(2).sum(), [theta, x], create_graph=True)
    with pytest.raises(RuntimeError, match=r"(?s)second derivatives are not provided.*solver=\"exact\""):
        gt.pow(2).sum().backward()
    with pytest.raises(RuntimeError, match="exact"):
        torch.autograd.grad(gx.sum(), x)
    # Without create_graph the first derivative is plain.
    gt1, = torch.autograd.grad(lq.solve(x, theta, w, c, L, preacts_trainable=True).sum(), [theta])
    assert gt1.grad_fn is None


def test_dtype_kwarg_and_casts(inputs):
    x, theta, w, c, W = inputs  # float64
    x32 = x.float()
    y = lq.solve(x, theta, w, c, L, dtype=torch.complex64)
    assert y.dtype == torch.float32
    assert_close(y, lq.solve(x32, theta.float(), w.float(), c.float(), L), torch.float32)
    assert lq.solve(x32, theta.float(), w, c, L, dtype=torch.bfloat16).dtype == torch.float32
    assert lq.solve(x32, theta.float(), None, None, L, dtype=torch.float64).dtype == torch.float64
    assert lq.solve(x32, theta.float(), None, None, L).dtype == torch.float32
    # Gradients flow back through the cast, in the leaves' dtype.
    t = theta.clone().requires_grad_(True)
    lq.solve(x, t, w, c, L, dtype=torch.complex64).sum().backward()
    assert t.grad.dtype == torch.float64


def test_noncontiguous_inputs(inputs):
    x, theta, w, c, W = inputs
    xn = x.t().contiguous().t()
    tn = theta.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3)
    wn = w.permute(2, 0, 1).contiguous().permute(1, 2, 0)
    Wn = W.t().contiguous().t()
    assert not (xn.is_contiguous() or tn.is_contiguous() or wn.is_contiguous() or Wn.is_contiguous())
    kw = dict(preacts_trainable=True)
    torch.testing.assert_close(lq.solve(xn, tn, wn, c, L, **kw), lq.solve(x, theta, w, c, L, **kw),
                               atol=0, rtol=0)
    torch.testing.assert_close(lq.contract(xn, tn, wn, c, Wn, L, **kw),
                               lq.contract(x, theta, w, c, W, L, **kw), atol=0, rtol=0)
    # ... and an expanded (stride-0) upstream gradient.
    t = theta.clone().requires_grad_(True)
    lq.contract(x, t, w, c, W, L, **kw).sum().backward()
    t2 = theta.clone().requires_grad_(True)
    torch.autograd.grad(lq.contract(x, t2, w, c, W, L, **kw), t2, torch.ones(1, 1, dtype=x.dtype).expand(B, O))
    assert torch.isfinite(t.grad).all()


def test_empty_batch(inputs):
    x, theta, w, c, W = inputs
    x0 = x[:0]
    t = theta.clone().requires_grad_(True)
    y = lq.solve(x0, t, w, c, L)
    assert y.shape == (0, O, I)
    y.sum().backward()
    assert torch.equal(t.grad, torch.zeros_like(theta))
    t.grad = None
    yc = lq.contract(x0, t, w, c, W, L)
    assert yc.shape == (0, O)
    yc.sum().backward()
    assert torch.equal(t.grad, torch.zeros_like(theta))


def test_path_kwarg_and_env(inputs, monkeypatch):
    x, theta, w, c, W = inputs
    ref = lq.solve(x, theta, w, c, L, path="reference")
    auto = lq.solve(x, theta, w, c, L, path="automatic")
    assert_close(auto, ref, torch.float64)
    monkeypatch.setenv(lq.PATH_ENV, "reference")
    assert lq.explain()[0] == "reference"
    assert lq.explain(path="automatic")[0] in ("fused", "reference")
    with pytest.raises(ValueError, match="path"):
        lq.solve(x, theta, w, c, L, path="gpu")


def test_threads_and_summary():
    import lockstep

    n = lockstep.num_threads()
    assert n >= 1
    try:
        lockstep.set_num_threads(1)
        assert lockstep.num_threads() == 1
    finally:
        lockstep.set_num_threads(n)
    with pytest.raises(ValueError, match="n must be >= 1"):
        lockstep.set_num_threads(0)
    assert lockstep.__version__ in lockstep.build_summary()
    # cuda_available(): built with CUDA and a device present; without a device it is False.
    if not torch.cuda.is_available():
        assert lockstep.cuda_available() is False
    assert ("CUDA on" in lockstep.build_summary()) or lockstep.cuda_available() is False


def test_gil_is_released_during_compute(gen):
    """While a (slow, reference-path) solve runs in one thread, Python code runs in another."""
    import threading
    import time

    x, theta, w, c = make_inputs(gen, "pz_encoding", B=40000, O=6, I=6, reps=3, group="natural",
                                 dtype=torch.float64)
    done = threading.Event()
    t0 = time.perf_counter()

    def work():
        lq.solve(x, theta, w, c, 3, path="reference")
        done.set()

    th = threading.Thread(target=work)
    th.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    th.join()
    elapsed = time.perf_counter() - t0
    assert elapsed > 0.02, "too fast to tell"
    assert ticks >= 5
