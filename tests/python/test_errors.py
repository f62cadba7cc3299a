"""Every bad input is a ValueError naming the argument (C++ std::invalid_argument surfaces as
ValueError through the binding)."""

import numpy as np
import pytest
import torch

import lockstep
import lockstep.qkan as lq
from lockstep import _lockstep as _C
from conftest import make_inputs

B, O, I, L = 4, 3, 2, 2


@pytest.fixture
def ok(gen):
    x, theta, w, c = make_inputs(gen, "pz_encoding", B=B, O=O, I=I, reps=L, group="natural",
                                 dtype=torch.float32)
    W = torch.rand(O, I, generator=gen)
    return dict(x=x, theta=theta, preacts_weight=w, preacts_bias=c, weight=W)


def call(fn, a, **kw):
    kw.setdefault("preacts_trainable", True)
    if fn == "solve":
        return lq.solve(a["x"], a["theta"], a["preacts_weight"], a["preacts_bias"],
                        a.get("reps", L), **kw)
    return lq.contract(a["x"], a["theta"], a["preacts_weight"], a["preacts_bias"], a["weight"],
                       a.get("reps", L), **kw)


def replaced(ok, **changes):
    d = dict(ok)
    d.update(changes)
    return d


BAD_TENSORS = [
    ("x 1-D", "x", lambda a: a["x"][:, 0], r"\bx\b.*shape"),
    ("x 3-D", "x", lambda a: a["x"][None], r"\bx\b.*shape"),
    ("x wrong I", "x", lambda a: torch.zeros(B, I + 1), r"theta|x"),
    ("theta wrong rows", "theta", lambda a: torch.zeros(O, I, L + 2, 2), r"theta has shape"),
    ("theta wrong cols", "theta", lambda a: torch.zeros(O, I, L + 1, 1), r"theta has shape"),
    ("theta wrong rank", "theta", lambda a: torch.zeros(L + 1, 2), r"theta has shape"),
    ("theta wrong I", "theta", lambda a: torch.zeros(O, I + 1, L + 1, 2), r"theta has shape"),
    ("w wrong reps", "preacts_weight", lambda a: torch.ones(O, I, L + 1), r"preacts_weight"),
    ("c differs from w", "preacts_bias", lambda a: torch.zeros(O, I, L - 1), r"preacts_bias"),
    ("w wrong O", "preacts_weight", lambda a: torch.ones(O + 1, I, L), r"preacts_weight|O differ"),
    ("int x", "x", lambda a: a["x"].to(torch.int64), r"\bx\b.*dtype"),
    ("int theta", "theta", lambda a: a["theta"].to(torch.int32), r"theta.*dtype"),
    ("mixed theta", "theta", lambda a: a["theta"].double(), r"theta has dtype torch.float64 but x"),
    ("mixed w", "preacts_weight", lambda a: a["preacts_weight"].double(), r"preacts_weight has dtype"),
    ("complex x", "x", lambda a: a["x"].to(torch.complex64), r"\bx\b.*dtype"),
    ("bf16 x", "x", lambda a: a["x"].to(torch.bfloat16), r"\bx\b.*dtype"),
    ("w None", "preacts_weight", lambda a: None, r"preacts_weight is None"),
    ("c None", "preacts_bias", lambda a: None, r"preacts_bias is None"),
    ("theta not a tensor", "theta", lambda a: a["theta"].numpy(), r"theta must be a torch.Tensor"),
    ("theta on meta", "theta", lambda a: torch.empty(O, I, L + 1, 2, device="meta"), r"theta is on meta"),
]


@pytest.mark.parametrize("fn", ["solve", "contract"])
@pytest.mark.parametrize("what,arg,make,pattern", BAD_TENSORS, ids=[b[0] for b in BAD_TENSORS])
def test_bad_tensor(ok, fn, what, arg, make, pattern):
    with pytest.raises(ValueError, match=pattern):
        call(fn, replaced(ok, **{arg: make(ok)}))


BAD_WEIGHTS = [
    ("weight wrong I", lambda a: torch.ones(O, I + 1), r"weight has shape"),
    ("weight 1-D", lambda a: torch.ones(O), r"weight has shape"),
    ("weight wrong O", lambda a: torch.ones(O + 1, I), r"theta/preacts have O|weight"),
    ("weight int", lambda a: torch.ones(O, I, dtype=torch.int64), r"weight has dtype"),
    ("weight mixed", lambda a: torch.ones(O, I, dtype=torch.float64), r"weight has dtype"),
    ("weight None", lambda a: None, r"weight is None"),
]


@pytest.mark.parametrize("what,make,pattern", BAD_WEIGHTS, ids=[b[0] for b in BAD_WEIGHTS])
def test_bad_weight(ok, what, make, pattern):
    with pytest.raises(ValueError, match=pattern):
        call("contract", replaced(ok, weight=make(ok)))


@pytest.mark.parametrize("fn", ["solve", "contract"])
def test_bad_options(ok, fn):
    with pytest.raises(ValueError, match="reps must be >= 1"):
        call(fn, replaced(ok, reps=0))
    with pytest.raises(ValueError, match="reps must be an int"):
        call(fn, replaced(ok, reps=2.0))
    with pytest.raises(ValueError, match="theta has shape"):
        call(fn, replaced(ok, reps=L + 1))  # theta built for L
    with pytest.raises(ValueError, match="unknown ansatz 'pzz'"):
        call(fn, ok, ansatz="pzz")
    with pytest.raises(ValueError, match="ansatz must be a str"):
        call(fn, ok, ansatz=lambda t: t)
    with pytest.raises(ValueError, match=r"px_encoding needs the encoding active \(preacts_trainable"):
        call(fn, replaced(ok, theta=torch.zeros(O, I, L + 1, 1)), ansatz="px", preacts_trainable=False)
    with pytest.raises(ValueError, match=r"unknown keyword argument\(s\): bogus, n_group"):
        call(fn, ok, bogus=1, n_group=2)
    with pytest.raises(ValueError, match="dtype"):
        call(fn, ok, dtype=torch.int32)
    with pytest.raises(ValueError, match="dtype"):
        call(fn, ok, dtype=torch.float16)
    # contract names out_dim; solve (C++) says "theta/preacts have O = 3 rows but the output
    # has O = 4" (reported upstream of this package: it should name out_dim).
    with pytest.raises(ValueError, match="out_dim|output has O"):
        call(fn, ok, out_dim=O + 1)
    with pytest.raises(ValueError, match="path"):
        call(fn, ok, path="cuda")
    with pytest.raises(ValueError, match="fused path was requested"):
        a = replaced(ok, reps=40, theta=torch.zeros(O, I, 41, 2),
                     preacts_weight=torch.ones(O, I, 40), preacts_bias=torch.zeros(O, I, 40))
        call(fn, a, path="fused")
    # device and checkpoint_reps (passed by upstream's QKANLayer) are accepted and ignored.
    call(fn, ok, device="cpu", checkpoint_reps=True)


@pytest.mark.parametrize("fn", ["solve", "contract"])
def test_inconsistent_group(ok, fn):
    with pytest.raises(ValueError, match=r"group=\(2, 2\) but theta has shape"):
        call(fn, ok, group=(2, 2))
    with pytest.raises(ValueError, match=r"group=2 but theta has shape"):
        call(fn, ok, group=2)
    with pytest.raises(ValueError, match=r"group must be an int or a tuple"):
        call(fn, ok, group="all")
    grouped = replaced(ok, theta=torch.zeros(2, L + 1, 2), preacts_weight=torch.ones(2, L),
                       preacts_bias=torch.zeros(2, L))
    call(fn, grouped, group=2, out_dim=O)
    call(fn, grouped, group=(2,), out_dim=O)
    with pytest.raises(ValueError, match=r"group=3 but theta"):
        call(fn, grouped, group=3, out_dim=O)
    with pytest.raises(ValueError, match=r"group=\(2,\) but preacts_weight has shape"):
        call(fn, replaced(grouped, preacts_weight=torch.ones(O, I, L), preacts_bias=torch.zeros(O, I, L)),
             group=(2,), out_dim=O)
    call(fn, ok, group=-1)
    call(fn, ok, group=(O, I))


def test_device_errors(ok):
    # A tensor on a device this build cannot run is a clear error (meta stands in for CUDA here).
    a = {k: v.to("meta") for k, v in ok.items()}
    with pytest.raises(RuntimeError, match="not supported"):
        call("solve", a)


def test_cuda_message_without_cuda():
    """No CUDA tensor can be made here; the device check sees only `.device.type`."""
    if lockstep.cuda_available():
        pytest.skip("built with CUDA")

    class FakeCudaTensor:
        device = type("Device", (), {"type": "cuda"})()

    with pytest.raises(RuntimeError, match="lockstep was built without CUDA"):
        lq._check_device("lockstep.qkan.solve", FakeCudaTensor())


def test_binding_validates_and_maps_exceptions():
    """The shim itself: wrong dtype / non-contiguous / read-only arrays, C++ errors as ValueError."""
    x = np.zeros((3, 2), np.float32)
    th = np.zeros((2, 2, 4, 2), np.float32)
    out = np.zeros((3, 2, 2), np.float32)
    _C.solve_forward(x, th, None, None, out)  # numpy works too (DLPack / buffer protocol)
    with pytest.raises(ValueError, match=r"\[qkan.solve\] x has dtype int64"):
        _C.solve_forward(x.astype(np.int64), th, None, None, out)
    with pytest.raises(ValueError, match="x with shape .* is not C-contiguous"):
        _C.solve_forward(np.zeros((2, 3), np.float32).T, th, None, None, out)
    with pytest.raises(ValueError, match="postacts with shape .* is not C-contiguous"):
        _C.solve_forward(x, th, None, None, np.zeros((2, 2, 3), np.float32).transpose(2, 1, 0))
    with pytest.raises(ValueError, match=r"\[qkan.solve\] postacts has shape"):
        _C.solve_forward(x, th, None, None, np.zeros((3, 2, 3), np.float32))
    with pytest.raises(ValueError, match=r"postacts has dtype float64"):
        _C.solve_forward(x, th, None, None, np.zeros((3, 2, 2), np.float64))
    with pytest.raises(ValueError, match="unknown ansatz"):
        _C.solve_forward(x, th, None, None, out, ansatz="zz")
    with pytest.raises(ValueError, match="grad preacts_weight was requested but preacts_weight is missing"):
        _C.solve_backward(x, th, None, None, out, None, None,
                          np.zeros((2, 2, 3), np.float32), None, ansatz="pz")
    ro = np.zeros((3, 2, 2), np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError):  # nanobind refuses a read-only array where a writable one is needed
        _C.solve_forward(x, th, None, None, ro)
    with pytest.raises(ValueError, match="dtype must be"):
        _C.explain("float16")


def test_fused_layer_entry_points_need_cuda_tensors():
    """The whole-layer calls run on CUDA only; with CPU arrays each is a ValueError saying so,
    before any gradient buffer is written."""
    x = np.zeros((3, 2), np.float32)
    th = np.zeros((4, 2, 4, 2), np.float32)
    oi = [np.ones((4, 2), np.float32) for _ in range(3)]  # postact weights, bias, base weight
    with pytest.raises(ValueError, match=r"\[qkan.layer\] .*CUDA"):
        _C.layer_forward(x, th, None, None, *oi, None, np.zeros((3, 4), np.float32), ansatz="pz")
    grads = [np.full(a.shape, 7.0, np.float32) for a in (x, th, *oi)]
    with pytest.raises(ValueError, match=r"\[qkan.layer_backward\] .*CUDA"):
        _C.layer_backward(x, th, None, None, *oi, None, np.zeros((3, 4), np.float32),
                          grads[0], grads[1], None, None, *grads[2:], ansatz="pz")
    assert all((g == 7.0).all() for g in grads)


def test_cpp_exception_translation():
    with pytest.raises(ValueError, match="invalid_argument"):
        _C._raise_cpp_exception("invalid_argument")
    with pytest.raises(RuntimeError, match="runtime_error"):
        _C._raise_cpp_exception("runtime_error")
    with pytest.raises(OverflowError, match="overflow_error"):
        _C._raise_cpp_exception("overflow_error")
