"""Shared fixtures for lockstep's Python tests.

* Every output and gradient buffer the package allocates is poisoned with NaN before the C++
  call, so an element the kernels do not write fails the comparison.
* Every test draws fresh random inputs from a generator seeded by its own node id, so each
  parametrization sees different numbers (and a failure reproduces); set
  LOCKSTEP_TEST_SEED_SALT to draw another set.
* The propagation engine keeps its FFTW wisdom in a file of the session (LOCKSTEP_FFTW_WISDOM).
* The C++ path under test is $LOCKSTEP_QKAN_PATH (automatic by default; `reference` or
  `fused` to pin one), read by lockstep.qkan itself.
"""

import os
import tempfile
import zlib

import pytest
import torch

import lockstep
import lockstep.qkan as lq

lq._POISON_OUTPUTS = True

# The propagation engine's FFTW wisdom (measured plans) in a file of this session, shared with the
# CLI processes the tests start, and not in the user's cache.
os.environ.setdefault("LOCKSTEP_FFTW_WISDOM", os.path.join(tempfile.mkdtemp(prefix="lockstep-tests-"), "fftw.wisdom"))

# Per-precision tolerances (absolute, relative): forward values, then gradients (reductions
# over the batch and over o/l, so a little looser).
TOL = {
    torch.float32: {"fwd": (1e-5, 1e-5), "grad": (5e-5, 5e-5)},
    torch.float64: {"fwd": (1e-10, 1e-10), "grad": (1e-9, 1e-9)},
}

# Paths a test runs explicitly: the reference path, and the session's default (None: the path
# $LOCKSTEP_QKAN_PATH names, else automatic, i.e. the fused kernels where they apply).
PATHS = ["reference", None]

ANSATZE = ["pz_encoding", "rpz_encoding", "px_encoding", "real", "mix"]
# upstream's complex compute dtype -> our real dtype
DTYPES = [(torch.complex64, torch.float32), (torch.complex128, torch.float64)]


def pytest_report_header(config):
    path = os.environ.get(lq.PATH_ENV, "automatic")
    return [f"{lockstep.build_summary()}", f"lockstep.qkan path: {path} -> {lq.explain()}"]


def node_seed(request) -> int:
    # LOCKSTEP_TEST_SEED_SALT=n draws other inputs (soak runs); unset, a run reproduces.
    salt = os.environ.get("LOCKSTEP_TEST_SEED_SALT", "")
    return zlib.crc32((request.node.nodeid + salt).encode())


@pytest.fixture
def seed(request) -> int:
    return node_seed(request)


@pytest.fixture
def gen(request) -> torch.Generator:
    return torch.Generator().manual_seed(node_seed(request))


def assert_close(actual, expected, dtype, kind="fwd", msg=""):
    atol, rtol = TOL[dtype][kind]
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=False,
                               msg=lambda m: f"{msg}\n{m}" if msg else m)


def theta_shape(ansatz, reps):
    return (reps if ansatz == "real" else reps + 1, 2 if ansatz in ("pz_encoding", "mix") else 1)


def make_inputs(gen, ansatz, *, B, O, I, reps, group, dtype, px_safe=None):
    """x, theta, w, c for a call; `group` is "natural", "grouped" (g < I) or "shared" (g == I).

    px needs |w·x + c| <= 1 (arccos): small w, c and x in [-0.5, 0.5] keep it at <= 0.75.
    """
    px = ansatz == "px_encoding" if px_safe is None else px_safe

    def u(*shape, lo=-1.0, hi=1.0):
        return (torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)

    R, K = theta_shape(ansatz, reps)
    if group == "natural":
        lead = (O, I)
    elif group == "grouped":
        lead = (max(1, I // 2),)
    elif group == "shared":
        lead = (I,)
    else:
        raise AssertionError(group)
    if px:
        x = u(B, I, lo=-0.5, hi=0.5)
        w = u(*lead, reps, lo=-0.9, hi=0.9)
        c = u(*lead, reps, lo=-0.3, hi=0.3)
    else:
        x = u(B, I, lo=-1.5, hi=1.5)
        w = 1 + 0.5 * u(*lead, reps)
        c = 0.5 * u(*lead, reps)
    theta = u(*lead, R, K, lo=-3.0, hi=3.0)
    return x, theta, w, c


def group_kwarg(group, O, I, theta):
    """The `group` kwarg upstream's QKANLayer would pass for these tables."""
    return tuple(theta.shape[:-2])

