"""lockstep: many small independent systems advanced together through one schedule.

The QKAN engine's torch API lives in :mod:`lockstep.qkan` (importing it registers the
``"lockstep"`` solver with the ``qkan`` package when that is installed); the propagation
engine's in :mod:`lockstep.prop` (recipes, runs, result files; docs/PYTHON.md).
"""

from . import _lockstep
from ._lockstep import build_summary, cuda_available, num_threads, set_num_threads

__version__: str = _lockstep.version()


def version() -> str:
    """The library version (also ``lockstep.__version__``), e.g. ``"0.1.0"``."""
    return _lockstep.version()


__all__ = [
    "__version__",
    "build_summary",
    "cuda_available",
    "num_threads",
    "set_num_threads",
    "version",
]
