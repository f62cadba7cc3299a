"""QKAN circuit solvers for PyTorch, backed by lockstep's C++ kernels.

* :func:`solve` — drop-in for ``qkan.solver.torch_exact_solver``: postacts ``(B, O', I)``.
* :func:`contract` — ``y[b, o] = Σ_i postacts[b, o, i] · weight[o, i]``, ``(B, O)``, without ever
  materialising ``(B, O, I)`` (forward or backward).
* :class:`QKANLayer` — ``qkan.QKANLayer``'s parameters, initialisation and state_dict, computed
  through :func:`contract` (on CUDA with the SiLU base branch, the whole layer in one fused
  kernel each way).

Both functions are differentiable (first order) through ``torch.autograd.Function``; the
backward is the C++ state-free adjoint and computes only the gradients autograd asks for.
Second derivatives are not provided: differentiating a gradient raises a RuntimeError that
points to ``solver="exact"``.

Importing this module registers a solver named ``"lockstep"`` in ``qkan``'s registry when the
``qkan`` package is importable, so ``qkan.QKAN(width, ..., solver="lockstep")`` works unchanged.

Which C++ implementation runs (``"automatic"``: the fused CPU kernels when they implement the
configuration, else the reference path; ``"reference"``; ``"fused"``) is chosen by the
``path=`` keyword, else by the environment variable ``LOCKSTEP_QKAN_PATH``, else
``"automatic"``. :func:`explain` tells which path a configuration takes and why.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Callable, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.dlpack import to_dlpack as _to_dlpack

from . import _lockstep as _C

__all__ = [
    "solve",
    "contract",
    "explain",
    "QKANLayer",
    "SOLVER_NAME",
    "PATH_ENV",
    "qkan_registered",
]

SOLVER_NAME = "lockstep"
#: Environment variable selecting the C++ path when no ``path=`` keyword is given.
PATH_ENV = "LOCKSTEP_QKAN_PATH"

#: Tests set this to fill every output and gradient buffer with NaN before the C++ call, so an
#: element the kernels fail to write shows up. Also enabled by LOCKSTEP_POISON_OUTPUTS=1.
_POISON_OUTPUTS = os.environ.get("LOCKSTEP_POISON_OUTPUTS", "0") == "1"

_SECOND_ORDER_MSG = (
    "lockstep's QKAN solver provides first derivatives only; second derivatives are not "
    "provided (double backward, or differentiating a gradient taken with create_graph=True). "
    'Use qkan\'s exact solver (solver="exact", qkan.solver.torch_exact_solver) for them.'
)

# Keyword arguments of upstream's solver interface (qkan.solver.QKANSolver.__call__), plus ours.
_SOLVER_KWARGS = frozenset(
    {"ansatz", "preacts_trainable", "fast_measure", "out_dim", "dtype", "group", "path"}
)
# Passed by upstream's QKANLayer; accepted and ignored.
_IGNORED_KWARGS = frozenset({"device", "checkpoint_reps"})

_ENCODING_ALWAYS = ("rpz_encoding", "rpz")
_SUPPORTED_COMPUTE = (torch.float32, torch.float64)

# The `dtype` kwarg: upstream's complex compute dtype, or a real one, -> our real compute dtype.
# bfloat16 (upstream's mixed-precision mode) computes in float32 and returns float32.
_COMPUTE_DTYPE = {
    torch.complex64: torch.float32,
    torch.float32: torch.float32,
    torch.bfloat16: torch.float32,
    torch.complex128: torch.float64,
    torch.float64: torch.float64,
}


# ---------------------------------------------------------------------------------------------
# Argument handling
# ---------------------------------------------------------------------------------------------
def _default_path() -> str:
    return os.environ.get(PATH_ENV, "automatic") or "automatic"


def _encoding_active(ansatz: str, preacts_trainable: bool) -> bool:
    return bool(preacts_trainable) or ansatz in _ENCODING_ALWAYS


def _check_kwargs(where: str, kwargs: dict) -> None:
    unknown = sorted(set(kwargs) - _SOLVER_KWARGS - _IGNORED_KWARGS)
    if unknown:
        raise ValueError(
            f"[{where}] unknown keyword argument(s): {', '.join(unknown)}; supported: "
            f"{', '.join(sorted(_SOLVER_KWARGS))} (and {', '.join(sorted(_IGNORED_KWARGS))}, ignored)"
        )


def _compute_dtype(where: str, dtype, x: torch.Tensor) -> torch.dtype:
    if dtype is None:
        if x.dtype not in _SUPPORTED_COMPUTE:
            raise ValueError(
                f"[{where}] x has dtype {x.dtype}; expected torch.float32 or torch.float64 "
                "(or pass dtype= to choose the compute precision)"
            )
        return x.dtype
    if dtype not in _COMPUTE_DTYPE:
        raise ValueError(
            f"[{where}] dtype {dtype!r} is not supported; expected one of "
            "torch.complex64/float32/bfloat16 (compute in float32) or "
            "torch.complex128/float64 (compute in float64), or None (x's dtype)"
        )
    return _COMPUTE_DTYPE[dtype]


def _check_tensor(where: str, name: str, t, x: torch.Tensor, explicit_dtype: bool) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"[{where}] {name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise ValueError(f"[{where}] {name} has dtype {t.dtype}; expected a floating-point tensor")
    if t.device != x.device:
        raise ValueError(f"[{where}] {name} is on {t.device} but x is on {x.device}")
    if not explicit_dtype and t.dtype != x.dtype:
        raise ValueError(
            f"[{where}] {name} has dtype {t.dtype} but x has {x.dtype}; pass tensors of one "
            "dtype, or dtype= to cast them all to one compute precision"
        )


def _check_device(where: str, x: torch.Tensor) -> None:
    if x.device.type == "cpu":
        return
    if x.device.type == "cuda":
        if not _C.cuda_available():
            raise RuntimeError(
                f"[{where}] x is a CUDA tensor but lockstep was built without CUDA "
                "(lockstep.cuda_available() is False): move the tensors to the CPU"
            )
        return
    raise RuntimeError(f"[{where}] tensors on {x.device} are not supported; use CPU or CUDA tensors")


def _stream(x: torch.Tensor) -> int:
    """The stream a call on x launches on: torch's current stream of x's device (0 on the CPU)."""
    return torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0


def _device_guard(x: torch.Tensor):
    """Makes x's CUDA device the current one around a C++ call: the kernels launch on the
    current device. A no-op on the CPU and when x's device is already current."""
    return torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext()


def _runs_on_cuda(call: "_Call") -> bool:
    """Whether the CUDA kernels take this call; when not (the reference path was asked for, or
    the configuration is one they do not implement), it runs on the CPU instead."""
    try:
        _C.explain(str(call.out_dtype).replace("torch.", ""), device="cuda", **call.opts)
    except ValueError:
        return False
    return True


def _on_host(*tensors):
    return tuple(t.cpu() if isinstance(t, torch.Tensor) else t for t in tensors)


def _check_group(where: str, group, theta: torch.Tensor, pw: Optional[torch.Tensor]) -> None:
    """`group` must agree with the tables' shapes; the shapes themselves decide broadcasting."""
    if group is None:
        return
    if isinstance(group, bool) or not isinstance(group, (int, tuple, list, torch.Size)):
        raise ValueError(f"[{where}] group must be an int or a tuple, got {group!r}")
    if isinstance(group, int):
        if group == -1:
            return
        if group < 1:
            raise ValueError(f"[{where}] group must be -1 or >= 1, got {group}")
        expect = (group,)
    else:
        expect = tuple(int(g) for g in group)
    if tuple(theta.shape[:-2]) != expect:
        raise ValueError(
            f"[{where}] group={group!r} but theta has shape {tuple(theta.shape)}: "
            f"expected theta of shape {expect + tuple(theta.shape[-2:])}"
        )
    if pw is not None and tuple(pw.shape[:-1]) != expect:
        raise ValueError(
            f"[{where}] group={group!r} but preacts_weight has shape {tuple(pw.shape)}: "
            f"expected {expect + tuple(pw.shape[-1:])}"
        )


class _Call:
    """A validated call: compute-dtype, contiguous, detached-or-not tensors and C++ options."""

    __slots__ = ("x", "theta", "w", "c", "weight", "opts", "out_dtype")


def _prepare(where: str, x, theta, preacts_weight, preacts_bias, weight, reps, kwargs) -> _Call:
    _check_kwargs(where, kwargs)
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"[{where}] x must be a torch.Tensor, got {type(x).__name__}")
    if isinstance(reps, bool) or not isinstance(reps, int):
        raise ValueError(f"[{where}] reps must be an int, got {reps!r}")
    if reps < 1:
        raise ValueError(f"[{where}] reps must be >= 1, got {reps}")
    ansatz = kwargs.get("ansatz", "pz_encoding")
    if not isinstance(ansatz, str):
        raise ValueError(
            f"[{where}] ansatz must be a str (pz_encoding/pz, rpz_encoding/rpz, px_encoding/px, "
            f"real, mix); custom callables need solver=\"exact\", got {ansatz!r}"
        )
    preacts_trainable = bool(kwargs.get("preacts_trainable", False))
    fast_measure = bool(kwargs.get("fast_measure", True))
    out_dim = kwargs.get("out_dim", -1)
    out_dim = -1 if out_dim is None else out_dim
    if isinstance(out_dim, bool) or not isinstance(out_dim, int):
        raise ValueError(f"[{where}] out_dim must be an int, got {out_dim!r}")
    path = kwargs.get("path") or _default_path()
    if not isinstance(path, str):
        raise ValueError(f"[{where}] path must be a str, got {path!r}")
    dtype = kwargs.get("dtype", None)

    if x.dim() != 2:
        raise ValueError(f"[{where}] x has shape {tuple(x.shape)}, expected (B, I)")
    explicit = dtype is not None
    if explicit and not x.is_floating_point():
        raise ValueError(f"[{where}] x has dtype {x.dtype}; expected a floating-point tensor")
    cdt = _compute_dtype(where, dtype, x)

    encoding = _encoding_active(ansatz, preacts_trainable)
    _check_tensor(where, "theta", theta, x, explicit)
    if encoding:
        for name, t in (("preacts_weight", preacts_weight), ("preacts_bias", preacts_bias)):
            if t is None:
                raise ValueError(
                    f"[{where}] {name} is None but the encoding is active "
                    f"(preacts_trainable={preacts_trainable}, ansatz={ansatz!r})"
                )
            _check_tensor(where, name, t, x, explicit)
    if weight is not None:
        _check_tensor(where, "weight", weight, x, explicit)
        if weight.dim() != 2:
            raise ValueError(f"[{where}] weight has shape {tuple(weight.shape)}, expected (O, I)")
    _check_group(where, kwargs.get("group"), theta, preacts_weight if encoding else None)
    _check_device(where, x)

    def prep(t):
        return None if t is None else t.to(cdt).contiguous()

    call = _Call()
    call.x = prep(x)
    call.theta = prep(theta)
    call.w = prep(preacts_weight) if encoding else None
    call.c = prep(preacts_bias) if encoding else None
    call.weight = prep(weight)
    call.opts = dict(
        ansatz=ansatz,
        reps=reps,
        preacts_trainable=preacts_trainable,
        fast_measure=fast_measure,
        out_dim=out_dim,
        path=path,
    )
    call.out_dtype = cdt
    return call


def _d(t: Optional[torch.Tensor]):
    """What the C++ shim receives: a DLPack capsule of the detached tensor. The capsule, made
    by torch's C++ exporter, skips Tensor.__dlpack__'s Python-level device and stream checks,
    about 9 us per tensor and the largest part of a small layer's eager step; the kernels
    launch on the stream passed explicitly (_stream), so that handshake has nothing to do."""
    return None if t is None else _to_dlpack(t.detach())


def _alloc(shape, like: torch.Tensor) -> torch.Tensor:
    if _POISON_OUTPUTS:
        return torch.full(tuple(shape), float("nan"), dtype=like.dtype, device=like.device)
    return torch.empty(tuple(shape), dtype=like.dtype, device=like.device)


def _alloc_like(t: torch.Tensor) -> torch.Tensor:
    return _alloc(t.shape, t)


# ---------------------------------------------------------------------------------------------
# Raw (non-autograd) calls
# ---------------------------------------------------------------------------------------------
def _solve_forward(x, theta, w, c, opts) -> torch.Tensor:
    with _device_guard(x):
        shape = _C.solve_output_shape(_d(x), _d(theta), _d(w), _d(c), **opts)
        out = _alloc(shape, x)
        _C.solve_forward(_d(x), _d(theta), _d(w), _d(c), _d(out), **opts, stream=_stream(x))
    return out


def _contract_forward(x, theta, w, c, weight, opts) -> torch.Tensor:
    y = _alloc((x.shape[0], weight.shape[0]), x)
    with _device_guard(x):
        _C.contract_forward(_d(x), _d(theta), _d(w), _d(c), _d(weight), _d(y), **opts,
                            stream=_stream(x))
    return y


class _NoSecondOrder(torch.autograd.Function):
    """Identity on the first-order gradients, anchored to the backward's inputs in the graph;
    differentiating through it raises RuntimeError(_SECOND_ORDER_MSG)."""

    @staticmethod
    def forward(ctx, n_grads, *tensors):
        return tuple(None if g is None else g.clone() for g in tensors[:n_grads])

    @staticmethod
    def backward(ctx, *unused):
        raise RuntimeError(_SECOND_ORDER_MSG)


def _first_order_only(backward):
    """Like torch.autograd.function.once_differentiable, but with a message naming the exact
    solver, and connected to the real inputs (so torch.autograd.grad(g, inputs) reaches it).

    When the backward runs with create_graph=True, the gradients it returns are routed through
    _NoSecondOrder, whose inputs include the saved tensors and the incoming gradients.
    """

    def wrapper(ctx, *grad_outputs):
        create_graph = torch.is_grad_enabled()
        with torch.no_grad():
            grads = backward(ctx, *grad_outputs)
        if not create_graph:
            return grads
        anchors = [t for t in (*ctx.saved_tensors, *grad_outputs) if t is not None]
        return _NoSecondOrder.apply(len(grads), *grads, *anchors)

    wrapper.__name__ = backward.__name__
    wrapper.__doc__ = backward.__doc__
    return wrapper


class _SolveFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, theta, w, c, opts):
        ctx.opts = opts
        ctx.save_for_backward(x, theta, w, c)  # inputs only: the backward recomputes the states
        return _solve_forward(x, theta, w, c, opts)

    @staticmethod
    @_first_order_only
    def backward(ctx, grad_out):
        x, theta, w, c = ctx.saved_tensors
        need_x, need_t, need_w, need_c, _ = ctx.needs_input_grad
        gx = _alloc_like(x) if need_x else None
        gt = _alloc_like(theta) if need_t else None
        gw = _alloc_like(w) if (need_w and w is not None) else None
        gc = _alloc_like(c) if (need_c and c is not None) else None
        if any(g is not None for g in (gx, gt, gw, gc)):
            with _device_guard(x):
                _C.solve_backward(_d(x), _d(theta), _d(w), _d(c), _d(grad_out.contiguous()),
                                  *map(_d, (gx, gt, gw, gc)), **ctx.opts, stream=_stream(x))
        return gx, gt, gw, gc, None


class _ContractFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, theta, w, c, weight, opts):
        ctx.opts = opts
        ctx.save_for_backward(x, theta, w, c, weight)
        return _contract_forward(x, theta, w, c, weight, opts)

    @staticmethod
    @_first_order_only
    def backward(ctx, grad_y):
        x, theta, w, c, weight = ctx.saved_tensors
        need_x, need_t, need_w, need_c, need_W, _ = ctx.needs_input_grad
        gx = _alloc_like(x) if need_x else None
        gt = _alloc_like(theta) if need_t else None
        gw = _alloc_like(w) if (need_w and w is not None) else None
        gc = _alloc_like(c) if (need_c and c is not None) else None
        gW = _alloc_like(weight) if need_W else None
        if any(g is not None for g in (gx, gt, gw, gc, gW)):
            with _device_guard(x):
                _C.contract_backward(_d(x), _d(theta), _d(w), _d(c), _d(weight),
                                     _d(grad_y.contiguous()), *map(_d, (gx, gt, gw, gc, gW)),
                                     **ctx.opts, stream=_stream(x))
        return gx, gt, gw, gc, gW, None


def _layer_forward(x, theta, w, c, pw, pb, bw, mask, opts) -> torch.Tensor:
    y = _alloc((x.shape[0], pw.shape[0]), x)
    with _device_guard(x):
        _C.layer_forward(_d(x), _d(theta), _d(w), _d(c), _d(pw), _d(pb), _d(bw), _d(mask), _d(y), **opts,
                         stream=_stream(x))
    return y


class _LayerFunction(torch.autograd.Function):
    """A whole layer with a SiLU base branch in one C++ call each way (CUDA)."""

    @staticmethod
    def forward(ctx, x, theta, w, c, pw, pb, bw, mask, opts):
        ctx.opts = opts
        ctx.save_for_backward(x, theta, w, c, pw, pb, bw, mask)
        return _layer_forward(x, theta, w, c, pw, pb, bw, mask, opts)

    @staticmethod
    @_first_order_only
    def backward(ctx, grad_y):
        x, theta, w, c, pw, pb, bw, mask = ctx.saved_tensors
        grads = [_alloc_like(t) if need and t is not None else None
                 for t, need in zip((x, theta, w, c, pw, pb, bw), ctx.needs_input_grad)]
        if any(g is not None for g in grads):
            with _device_guard(x):
                _C.layer_backward(_d(x), _d(theta), _d(w), _d(c), _d(pw), _d(pb), _d(bw), _d(mask),
                                  _d(grad_y.contiguous()), *map(_d, grads), **ctx.opts,
                                  stream=_stream(x))
        return (*grads, None, None)


def _needs_autograd(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------
def solve(
    x: torch.Tensor,
    theta: torch.Tensor,
    preacts_weight: Optional[torch.Tensor],
    preacts_bias: Optional[torch.Tensor],
    reps: int,
    **kwargs,
) -> torch.Tensor:
    """QKAN postacts, a drop-in for ``qkan.solver.torch_exact_solver``.

    Args:
        x: ``(B, I)``.
        theta: ``(O, I, R', k)`` natural, or ``(g, R', k)`` / ``(1, g, R', k)`` grouped (edge
            ``(o, i)`` uses row ``i mod g``); ``R' = reps + 1`` (``reps`` for ``real``),
            ``k = 2`` for pz/mix, else 1.
        preacts_weight, preacts_bias: ``(O, I, reps)`` or ``(g, reps)``; used only when the
            encoding is active (``preacts_trainable``, always for rpz), may be None otherwise.
        reps: circuit repetitions L >= 1.
        ansatz: ``"pz_encoding"`` (default) / ``"pz"``, ``"rpz_encoding"`` / ``"rpz"``,
            ``"px_encoding"`` / ``"px"``, ``"real"``, ``"mix"``.
        preacts_trainable: data angle ``w·x + c`` (True) or ``x`` (False, default).
        fast_measure: ``|α| - |β|`` (True, default) or ``⟨Z⟩`` (False).
        out_dim: O of the output; default: theta's O if natural, else I (as upstream).
        dtype: compute precision: complex64/float32/bfloat16 → float32 (bfloat16 returns
            float32), complex128/float64 → float64, None → x's dtype (float32/float64 only).
        group: int or tuple, checked against theta's shape (``g`` ⇒ theta is ``(g, R', k)``;
            a tuple must equal ``theta.shape[:-2]``); -1/None: no check.
        path: ``"automatic"``/``"reference"``/``"fused"``; default ``$LOCKSTEP_QKAN_PATH`` or
            automatic.
        device, checkpoint_reps: accepted (upstream's QKANLayer passes them) and ignored.

    Inputs are cast to the compute dtype and made contiguous; non-contiguous tensors are
    handled by copying them first. Tensors must all be on x's device, the CPU or a CUDA device
    (CUDA calls launch on torch's current stream, asynchronously, and can be captured in CUDA
    graphs; what the CUDA kernels do not implement, and ``path="reference"``, runs on the CPU
    on copies); without ``dtype`` they must also share x's dtype. Any other keyword is a
    ValueError.

    Returns:
        ``(B, O', I)`` in the compute dtype, ``O' = 1`` when every table is grouped with
        ``g == I`` (the circuit does not depend on o), else ``O``. NaN in gives NaN out; px with
        ``|w·x + c| > 1`` gives NaN. Differentiable once (see the module docstring).
    """
    call = _prepare("lockstep.qkan.solve", x, theta, preacts_weight, preacts_bias, None, reps, kwargs)
    if call.x.is_cuda and not _runs_on_cuda(call):
        return solve(*_on_host(x, theta, preacts_weight, preacts_bias), reps, **kwargs).to(x.device)
    if not _needs_autograd(call.x, call.theta, call.w, call.c):
        return _solve_forward(call.x, call.theta, call.w, call.c, call.opts)
    return _SolveFunction.apply(call.x, call.theta, call.w, call.c, call.opts)


def contract(
    x: torch.Tensor,
    theta: torch.Tensor,
    preacts_weight: Optional[torch.Tensor],
    preacts_bias: Optional[torch.Tensor],
    weight: torch.Tensor,
    reps: int,
    **kwargs,
) -> torch.Tensor:
    """``y[b, o] = Σ_i postacts[b, o, i] · weight[o, i]`` without materialising ``(B, O, I)``.

    Same arguments and keywords as :func:`solve`, plus ``weight`` ``(O, I)`` (in a QKAN layer:
    postact weights · mask); ``out_dim``, when given, must equal ``weight.shape[0]``. Returns
    ``(B, O)`` in the compute dtype. Differentiable once in x, theta, the preacts and weight.
    """
    if weight is None:
        raise ValueError("[lockstep.qkan.contract] weight is None; expected an (O, I) tensor")
    call = _prepare("lockstep.qkan.contract", x, theta, preacts_weight, preacts_bias, weight, reps,
                    kwargs)
    if call.x.is_cuda and not _runs_on_cuda(call):
        host = _on_host(x, theta, preacts_weight, preacts_bias, weight)
        return contract(*host, reps, **kwargs).to(x.device)
    if not _needs_autograd(call.x, call.theta, call.w, call.c, call.weight):
        return _contract_forward(call.x, call.theta, call.w, call.c, call.weight, call.opts)
    return _ContractFunction.apply(call.x, call.theta, call.w, call.c, call.weight, call.opts)


def explain(
    ansatz: str = "pz_encoding",
    reps: int = 3,
    preacts_trainable: bool = False,
    fast_measure: bool = True,
    dtype: Union[torch.dtype, str] = torch.float32,
    path: Optional[str] = None,
    device: Union[torch.device, str] = "cpu",
) -> tuple[str, str]:
    """``(path, reason)``: which C++ path a call with these options takes on ``device``
    (CPU or CUDA tensors), and why."""
    if isinstance(dtype, torch.dtype):
        if dtype not in _COMPUTE_DTYPE:
            raise ValueError(f"[lockstep.qkan.explain] dtype {dtype} is not supported")
        dtype = str(_COMPUTE_DTYPE[dtype]).replace("torch.", "")
    return tuple(
        _C.explain(dtype, device=torch.device(device).type, ansatz=ansatz, reps=reps,
                   preacts_trainable=preacts_trainable,
                   fast_measure=fast_measure, path=path or _default_path())
    )


# ---------------------------------------------------------------------------------------------
# The layer
# ---------------------------------------------------------------------------------------------
_ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "silu": nn.SiLU,
    "swish": nn.SiLU,
    "gelu": lambda: nn.GELU(approximate="none"),
    "gelu_exact": lambda: nn.GELU(approximate="none"),
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
}


def _make_activation(kind: str) -> nn.Module:
    key = kind.lower()
    if key not in _ACTIVATIONS:
        raise ValueError(
            f"[lockstep.qkan.QKANLayer] unknown base_activation {kind!r}; supported: "
            f"{', '.join(sorted(_ACTIVATIONS))} or an nn.Module / callable"
        )
    return _ACTIVATIONS[key]()


def _theta_cols(ansatz: str) -> int:
    return 2 if ansatz in ("pz_encoding", "pz", "mix") else 1


def _theta_rows(ansatz: str, reps: int) -> int:
    return reps if ansatz == "real" else reps + 1


_KNOWN_ANSATZ = ("pz_encoding", "pz", "rpz_encoding", "rpz", "px_encoding", "px", "real", "mix")


class QKANLayer(nn.Module):
    """``qkan.QKANLayer`` computed by lockstep's contracted solver.

    Takes upstream's constructor arguments and has the same parameters (names, shapes,
    ``requires_grad`` flags, initialisation, RNG use under ``seed``) and state_dict, so
    checkpoints load both ways (``strict=True``)::

        y[b,o] = Σ_i (post[b,o,i] + pb[o,i]) · pw[o,i] · mask[o,i] + Σ_i act(x)[b,i] · bw[o,i] · mask[o,i]

    On CUDA, with the SiLU base branch (the default), every table in the compute dtype and the
    mask not trained, the whole layer runs in one fused kernel each way (its base branch, bias
    and masks included). Otherwise the forward calls :func:`contract` with ``W = pw · mask`` and
    adds the ``(O,)`` term ``Σ_i pb · W`` and ``act(x) @ (bw · mask)ᵀ``. Neither builds
    ``(B, O, I)``.

    Differences from upstream: parameters are stored with ``p_dim=4`` (natural shapes) only
    (``p_dim=2`` checkpoints still load: they are reshaped, as upstream does); ``solver`` must
    be ``"lockstep"``; custom ansatz callables and ``theta_size`` are not supported; ``c_dtype``
    chooses the compute precision (complex64/float32/bfloat16 → float32, complex128/float64 →
    float64), and ``real`` keeps it (upstream forces bfloat16 for ``real``). ``qml_device``,
    ``checkpoint_reps`` and ``solver_kwargs`` other than ``path`` are accepted and ignored.
    """

    _RESHAPABLE = ("theta", "preacts_weight", "preacts_bias", "base_weight", "postact_weights",
                   "postact_bias", "mask")

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        reps: int = 3,
        group: Union[int, tuple] = -1,
        device="cpu",
        solver: str = SOLVER_NAME,
        qml_device=None,
        ansatz: str = "pz_encoding",
        theta_size=None,
        preact_trainable: bool = False,
        preact_init: bool = False,
        postact_weight_trainable: bool = False,
        postact_bias_trainable: bool = False,
        base_activation: Union[str, nn.Module, Callable] = "silu",
        ba_trainable: bool = True,
        is_batchnorm: bool = False,
        fast_measure: bool = True,
        c_dtype: torch.dtype = torch.complex64,
        p_dtype: torch.dtype = torch.float32,
        seed=None,
        solver_kwargs: Optional[dict] = None,
        p_dim: int = 4,
        checkpoint_reps: bool = False,
        theta_init: str = "xavier",
    ):
        super().__init__()
        where = "lockstep.qkan.QKANLayer"
        if solver not in (SOLVER_NAME, None):
            raise ValueError(f"[{where}] solver must be {SOLVER_NAME!r}, got {solver!r}; "
                             "use qkan.QKANLayer for other solvers")
        if p_dim != 4:
            raise ValueError(f"[{where}] only p_dim=4 storage is supported, got p_dim={p_dim}")
        if theta_size is not None or not isinstance(ansatz, str):
            raise ValueError(f"[{where}] custom ansatz / theta_size are not supported; "
                             "use qkan.QKANLayer with solver=\"exact\"")
        if ansatz not in _KNOWN_ANSATZ:
            raise ValueError(f"[{where}] unknown ansatz {ansatz!r}; supported: "
                             f"{', '.join(_KNOWN_ANSATZ)}")
        if c_dtype not in _COMPUTE_DTYPE:
            raise ValueError(f"[{where}] c_dtype {c_dtype} is not supported")
        if theta_init not in ("xavier", "small_gaussian"):
            raise ValueError(f"[{where}] unknown theta_init {theta_init!r}")
        solver_kwargs = dict(solver_kwargs or {})
        _check_kwargs(where + " solver_kwargs", solver_kwargs)
        if isinstance(base_activation, str):
            base_activation = _make_activation(base_activation)

        if seed is not None:
            _seed_all(seed)

        if isinstance(group, int):
            group = (out_dim, in_dim) if group == -1 else (group,)
        group = tuple(int(g) for g in group)

        self.in_dim = in_dim
        self.out_dim = out_dim
        self.reps = reps
        self.group = group
        self.device = device
        self.solver = SOLVER_NAME
        self.ansatz = ansatz
        self.base_activation = base_activation
        self.ba_trainable = ba_trainable
        self.is_batchnorm = is_batchnorm
        self.fast_measure = fast_measure
        self.c_dtype = c_dtype
        self.p_dtype = p_dtype
        self.seed = seed
        self.preact_trainable = preact_trainable
        self.preact_init = preact_init
        self.postact_weight_trainable = postact_weight_trainable
        self.postact_bias_trainable = postact_bias_trainable
        self.theta_init = theta_init
        self.solver_kwargs = solver_kwargs
        self.p_dim = 4
        self.checkpoint_reps = checkpoint_reps
        self.init_parameters()

    # Same order of RNG use as upstream (seed, then xavier on theta, then optional preacts).
    def init_parameters(self) -> None:
        """Creates the parameters and initialises them (as upstream's ``init_parameters``)."""
        if self.seed is not None:
            _seed_all(self.seed)
        group, reps, device, p_dtype = self.group, self.reps, self.device, self.p_dtype
        theta_shape = (*group, _theta_rows(self.ansatz, reps), _theta_cols(self.ansatz))
        self.theta = nn.Parameter(torch.empty(*theta_shape, device=device, dtype=p_dtype))
        bias_trainable = self.preact_trainable or self.ansatz in _ENCODING_ALWAYS
        self.preacts_weight = nn.Parameter(
            torch.ones(*group, reps, device=device, dtype=p_dtype),
            requires_grad=self.preact_trainable)
        self.preacts_bias = nn.Parameter(
            torch.zeros(*group, reps, device=device, dtype=p_dtype),
            requires_grad=bias_trainable)
        oi = (self.out_dim, self.in_dim)
        if self.ba_trainable:
            self.base_weight = nn.Parameter(0.5 * torch.ones(*oi, device=device, dtype=p_dtype))
        else:
            self.base_weight = nn.Parameter(torch.zeros(*oi, device=device, dtype=p_dtype),
                                            requires_grad=False)
        self.postact_weights = nn.Parameter(torch.ones(*oi, device=device, dtype=p_dtype),
                                            requires_grad=self.postact_weight_trainable)
        self.postact_bias = nn.Parameter(torch.zeros(*oi, device=device, dtype=p_dtype),
                                         requires_grad=self.postact_bias_trainable)
        self.mask = nn.Parameter(torch.ones(*oi, device=device, dtype=p_dtype),
                                 requires_grad=False)
        if self.is_batchnorm:
            self.bn = nn.BatchNorm1d(self.in_dim, device=device, dtype=p_dtype)
        self.xavier_init()

    def xavier_init(self) -> None:
        """Initialises theta (xavier-normal or small gaussian) and, with preact_init, the preacts."""
        if self.theta_init == "small_gaussian":
            nn.init.normal_(self.theta.data, mean=0.0, std=1.0 / math.sqrt(max(self.reps, 1)))
        else:
            nn.init.xavier_normal_(self.theta.data)
        if self.preact_init:
            nn.init.xavier_normal_(self.preacts_weight.data)
            nn.init.xavier_normal_(self.preacts_bias.data)

    def reset_parameters(self) -> None:
        """Upstream's ``reset_parameters``: theta = 0, the other parameters to their defaults."""
        if self.seed is not None:
            _seed_all(self.seed)
        with torch.no_grad():
            self.theta.zero_()
            self.base_weight.fill_(0.5 if self.ba_trainable else 0.0)
            self.preacts_weight.fill_(1)
            self.preacts_bias.zero_()
            self.postact_weights.fill_(1)
            self.postact_bias.zero_()
            self.mask.fill_(1)
        if self.is_batchnorm:
            self.bn.reset_parameters()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Upstream p_dim=2 checkpoints store these flattened: reshape when the counts agree.
        for name in self._RESHAPABLE:
            key = prefix + name
            target = getattr(self, name, None)
            if key in state_dict and isinstance(target, torch.Tensor):
                src = state_dict[key]
                if src.shape != target.shape and src.numel() == target.numel():
                    state_dict[key] = src.reshape(target.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def _solver_kwargs(self) -> dict:
        return dict(ansatz=self.ansatz, group=self.group, preacts_trainable=self.preact_trainable,
                    fast_measure=self.fast_measure, dtype=self.c_dtype, **self.solver_kwargs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2 or x.shape[1] != self.in_dim:
            raise ValueError(f"[lockstep.qkan.QKANLayer] x has shape {tuple(x.shape)}, expected "
                             f"(B, {self.in_dim})")
        if self.is_batchnorm:
            x = self.bn(x)
        out_dtype = self.theta.dtype
        y = self._fused(x)
        if y is not None:
            return y
        W = self.postact_weights * self.mask
        y = contract(x, self.theta, self.preacts_weight, self.preacts_bias, W, self.reps,
                     out_dim=self.out_dim, **self._solver_kwargs()).to(out_dtype)
        bias = (self.postact_bias * W).sum(dim=1)  # (O,): Σ_i pb·W, the postact bias term
        base = F.linear(self.base_activation(x).to(out_dtype), self.base_weight * self.mask, bias)
        return y + base

    def _fused(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        """y from the fused layer kernels (CUDA, SiLU base branch, every table in the compute
        dtype, mask not trained), or None where they do not apply."""
        terms = (self.postact_weights, self.postact_bias, self.base_weight, self.mask)
        cdt = _COMPUTE_DTYPE[self.c_dtype]
        if (not x.is_cuda or type(self.base_activation) is not nn.SiLU or self.mask.requires_grad
                or x.dtype != cdt or any(t.dtype != cdt for t in (self.theta, *terms))):
            return None
        call = _prepare("lockstep.qkan.QKANLayer", x, self.theta, self.preacts_weight,
                        self.preacts_bias, self.postact_weights, self.reps,
                        dict(out_dim=self.out_dim, **self._solver_kwargs()))
        if call.opts["path"] == "reference" or not _runs_on_cuda(call):
            return None
        tensors = (call.x, call.theta, call.w, call.c, call.weight,
                   *(t.contiguous() for t in terms[1:]))
        if not _needs_autograd(*tensors):
            return _layer_forward(*tensors, call.opts)
        return _LayerFunction.apply(*tensors, call.opts)

    @torch.no_grad()
    def forward_no_sum(self, x: torch.Tensor) -> torch.Tensor:
        """Per-edge outputs ``(B, O, I)`` (diagnostics/plots; this one does build them)."""
        post = solve(x, self.theta, self.preacts_weight, self.preacts_bias, self.reps,
                     out_dim=self.out_dim, **self._solver_kwargs()).to(self.theta.dtype)
        base = torch.einsum("oi,bi->boi", self.base_weight, self.base_activation(x))
        return ((post + self.postact_bias) * self.postact_weights[None] + base) * self.mask[None]

    def extra_repr(self) -> str:
        return (f"in_dim={self.in_dim}, out_dim={self.out_dim}, reps={self.reps}, "
                f"ansatz={self.ansatz!r}, group={self.group}, fast_measure={self.fast_measure}")


def _seed_all(seed) -> None:
    import random

    import numpy as np

    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


# ---------------------------------------------------------------------------------------------
# Registration with the qkan package
# ---------------------------------------------------------------------------------------------
qkan_registered = False
"""True when importing this module registered the ``"lockstep"`` solver with ``qkan``."""


def _register_with_qkan() -> bool:
    try:
        from qkan.solver import QKANSolver, register
    except ImportError:
        return False

    class LockstepSolver(QKANSolver):
        """qkan solver ``"lockstep"``: delegates to :func:`lockstep.qkan.solve`."""

        name = SOLVER_NAME

        def __call__(self, x, theta, preacts_weight, preacts_bias, reps, **kwargs):
            return solve(x, theta, preacts_weight, preacts_bias, reps, **kwargs)

    register(LockstepSolver())
    globals()["LockstepSolver"] = LockstepSolver
    return True


qkan_registered = _register_with_qkan()
