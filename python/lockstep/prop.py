"""lockstep.prop: nonlinear pulse propagation (the GNLSE), many members in lockstep.

Recipes are the TOML recipes of the command-line tool (docs/RECIPES.md), given as text, as a
file, or as nested dicts with the same keys (units as strings or numbers exactly as in TOML)::

    import lockstep.prop as lp
    r = lp.run({"fibre": {"length": "15 cm"}}, "out")      # one member: a Result
    r.Ew, r.wavelength                                       # numpy arrays, SI units

``run``, ``scan`` and ``resume`` write one HDF5 result file per member (checkpointed while they
run; Ctrl-C stops after saving them, raising KeyboardInterrupt, and ``resume`` continues them);
``propagate`` keeps everything in memory. A bad recipe raises ValueError with the same
``[prop.recipe] key: ...`` message as the CLI. ``mode`` is the guide calculator of a gas-filled
hollow capillary (dispersion, loss, zero-dispersion wavelength, γ, soliton order, RDW), as
``lockstep prop mode`` computes it.
"""

from __future__ import annotations

import math
import os
import pathlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _lockstep
from ._prop_analysis import (bandpass, coherence, energy, photon_number, plot_coherence, plot_spectral_evolution,
                             plot_spectrogram, plot_spectrum, plot_temporal_evolution, spectral_density,
                             spectral_evolution, spectrogram, temporal_evolution, wavelength_spectrum, xfrog)

if not hasattr(_lockstep, "prop"):
    raise ImportError("this lockstep was built without the propagation engine (LOCKSTEP_PROP=OFF)")
_P = _lockstep.prop

Recipe = _P.Recipe
RecipeLike = Union[None, str, os.PathLike, Mapping[str, Any], "Recipe"]

__all__ = ["Recipe", "Result", "Scan", "bandpass", "coherence", "energy", "load", "load_scan", "mode", "photon_number",
           "plot_coherence", "plot_spectral_evolution", "plot_spectrogram", "plot_spectrum", "plot_temporal_evolution",
           "propagate", "recipe", "resume", "run", "scan", "spectral_density", "spectral_evolution", "spectrogram",
           "temporal_evolution", "wavelength_spectrum", "xfrog"]


# --- recipes ----------------------------------------------------------------------------------

_BARE_KEY = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _toml_key(key: str) -> str:
    if not isinstance(key, str) or not key:
        raise ValueError(f"[prop.recipe] recipe keys must be non-empty strings, not {key!r}")
    return key if set(key) <= _BARE_KEY else _toml_string(key)


def _toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_toml_value(v, where) for v in value) + "]"
    raise ValueError(f"[prop.recipe] {where}: a {type(value).__name__} is not a TOML value "
                     "(strings, numbers, booleans and lists of them)")


def _toml(tables: Mapping[str, Any]) -> str:
    """TOML text of nested dicts: scalars and lists as key = value, dicts as tables."""
    lines: list[str] = []

    def emit(table: Mapping[str, Any], path: list[str]) -> None:
        subtables = []
        for key, value in table.items():
            if isinstance(value, Mapping):
                subtables.append((key, value))
            else:
                lines.append(f"{_toml_key(key)} = {_toml_value(value, '.'.join(path + [str(key)]))}")
        for key, value in subtables:
            lines.append("")
            lines.append("[" + ".".join(_toml_key(k) for k in path + [key]) + "]")
            emit(value, path + [key])

    emit(tables, [])
    return "\n".join(lines) + "\n"


def _is_path(source) -> bool:
    """Whether a recipe source names a file: a path object, or a one-line str ending in .toml."""
    return isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                               and source.strip().endswith(".toml"))


def recipe(source: RecipeLike = None) -> Recipe:
    """A parsed recipe from TOML text, a ``.toml`` file (str or path), nested dicts with the
    recipe's keys, or None for the built-in Dudley supercontinuum. ``canonical`` is its
    configuration in SI units, ``config_hash`` that text's SHA-256, ``labels`` its members."""
    if source is None:
        return _P.default_recipe()
    if isinstance(source, Recipe):
        return source
    if isinstance(source, Mapping):
        return _P.parse_recipe(_toml(source), "<dict>")
    if _is_path(source):
        path = pathlib.Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"[prop.recipe] no recipe file {path}")
        return _P.load_recipe(str(path))
    if isinstance(source, str):
        return _P.parse_recipe(source, "<text>")
    raise TypeError(f"a recipe is TOML text, a path, a dict or None, not {type(source).__name__}")


def _base_name(source: RecipeLike, base: Optional[str]) -> str:
    if base:
        return base
    if source is None:
        return "dudley"
    if _is_path(source):
        return pathlib.Path(source).stem
    return "run"


# --- results ----------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Result:
    """One member's propagation, in SI units.

    ``z`` (P,) m: the saved planes; ``t`` (n,) s; ``omega`` (n,) absolute rad/s, ascending;
    ``wavelength`` (n,) m (2πc/ω); ``Ew`` (P, n) complex: Ã(z, ω) on ``omega`` (√W, the
    unnormalised DFT of A); ``Et`` (P, n) complex: A(z, T) on ``t`` (√W, power |A|² in W);
    ``stats``: one row per accepted step (z, dz, error_norm, energy in J, photon_number,
    peak_power in W, spectral_centroid in rad/s); ``ledger``: the run's accounting (steps,
    evaluations, wall time, ...); ``config``: the member's configuration as a canonical recipe;
    ``label``: what distinguishes the member in a scan or ensemble ("" for one run); ``path``:
    its result file (None in memory)."""

    label: str
    z: np.ndarray
    t: np.ndarray
    omega: np.ndarray
    wavelength: np.ndarray
    Et: np.ndarray
    Ew: np.ndarray
    stats: dict
    ledger: dict
    config: str
    config_hash: str
    recipe: str = field(repr=False)
    path: Optional[str] = None

    @staticmethod
    def _from(d: dict, path: Optional[str]) -> "Result":
        return Result(path=path, **d)

    def __repr__(self) -> str:
        where = f", path={self.path!r}" if self.path else ""
        return (f"Result(label={self.label!r}, planes={len(self.z)}, points={len(self.t)}, "
                f"z_end={self.ledger['z']:.6g} m, steps={self.ledger['accepted_steps']}{where})")


def load(path: Union[str, os.PathLike]) -> Result:
    """A result file written by ``run``, ``scan``, ``resume`` or the CLI (its seal checked)."""
    return Result._from(_P.load(str(path)), str(path))


@dataclass(frozen=True, eq=False)
class Scan:
    """A scan's or ensemble's results on its axes: ``results[i, j, ..., m]`` for the scan's
    axes in the order written (``axes``: key and the values' labels), the ensemble's member
    index last where there is one (``members``)."""

    axes: list
    members: int
    results: np.ndarray

    @property
    def shape(self) -> tuple:
        return self.results.shape

    def stack(self, name: str) -> np.ndarray:
        """The results' attribute ``name`` (e.g. "Ew", "energy" from the stats' last row) as one
        array of shape ``self.shape + its shape``."""
        def value(r: Result):
            if name in r.stats:
                return r.stats[name][-1]
            return getattr(r, name)
        return np.array([value(r) for r in self.results.flat]).reshape(
            self.shape + np.shape(value(self.results.flat[0])))


def _scan_of(results: Sequence[Result], rec: Recipe) -> Scan:
    axes = list(rec.scan_axes)
    members = int(rec.ensemble_members)
    shape = tuple(len(labels) for _, labels in axes) + ((members,) if members > 1 else ())
    labels = list(rec.labels)
    if len(results) != len(labels):
        raise ValueError(f"[prop] the scan has {len(labels)} members; {len(results)} results were given")
    grid = np.empty(len(labels), dtype=object)
    index = {label: i for i, label in enumerate(labels)}
    for r in results:
        if r.label not in index:
            raise ValueError(f"[prop] member {r.label!r} is not one of the scan's")
        grid[index[r.label]] = r
    return Scan(axes=axes, members=members, results=grid.reshape(shape or (1,)))


def load_scan(directory: Union[str, os.PathLike]) -> Scan:
    """The result files of a scan or ensemble in ``directory`` on the scan's axes (from the
    recipe the files hold); ValueError naming the members that are missing."""
    files = sorted(pathlib.Path(directory).glob("*.h5"))
    if not files:
        raise ValueError(f"[prop] no result files (*.h5) in {directory}")
    results = [load(f) for f in files]
    rec = _P.parse_recipe(results[0].recipe, str(pathlib.Path(directory) / "recipe.toml"))
    missing = sorted(set(rec.labels) - {r.label for r in results})
    if missing:
        raise ValueError(f"[prop] {directory} lacks {len(missing)} member(s) of the scan: " + ", ".join(missing[:10]))
    return _scan_of(results, rec)


# --- runs -------------------------------------------------------------------------------------

class _ProgressBar:
    """A tqdm bar per batch over the fibre's length (tqdm.auto: fine in a notebook)."""

    def __init__(self) -> None:
        from tqdm.auto import tqdm  # imported only when a bar is drawn
        self._tqdm = tqdm
        self._bar = None
        self._batch = None

    def __call__(self, batch, batches, members, z, length, steps, rate, finished) -> None:
        if self._bar is None or batch != self._batch:
            self.close()
            desc = "prop" + (f" batch {batch}/{batches}" if batches > 1 else "")
            desc += f" ({members} members)" if members > 1 else ""
            self._bar = self._tqdm(total=length, unit="m", desc=desc, leave=True,
                                   bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} m [{elapsed}<{remaining}{postfix}]")
            self._batch = batch
        self._bar.update(z - self._bar.n)
        self._bar.set_postfix_str(f"{steps} steps, {rate:.1f} steps/s", refresh=False)
        if finished:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _progress_function(progress: Union[bool, Callable, None]):
    if progress is True:
        try:
            return _ProgressBar()
        except ImportError:
            return None
    if progress in (False, None):
        return None
    if callable(progress):
        return progress
    raise TypeError("progress is True (a tqdm bar), False, or a function (batch, batches, members, z, length, "
                    "steps, rate, finished)")


def _run(job, device, precision, batch_memory, checkpoint, threads, evaluation, progress):
    """Runs the job; its results: a Result for one member, else a list of them."""
    bar = _progress_function(progress)
    try:
        job.run(device=device, precision=precision, evaluation=evaluation, batch_memory_mib=float(batch_memory),
                checkpoint_seconds=float(checkpoint), threads=int(threads), progress=bar)
    finally:
        if isinstance(bar, _ProgressBar):
            bar.close()
    files = job.files
    results = [Result._from(job.result(k), files[k] or None) for k in range(len(job))]
    return results[0] if len(results) == 1 else results


_RUN_DOC = """
    device: "cpu" or "cuda" (the whole batch on the current GPU); precision: "f64", or "f32"
    (CUDA only); batch_memory: working memory of one lockstep batch in MiB (0: 4096 on the CPU,
    80 % of the free device memory on CUDA); checkpoint: seconds between checkpoints of the
    files; threads: CPU threads (0: all); evaluation: "batched" or "reference" (each member in
    turn, CPU only); progress: True for a tqdm bar, False, or a function called after every
    accepted step with (batch, batches, members, z, length, steps, rate, finished)."""


def run(source: RecipeLike = None, output: Union[str, os.PathLike] = "prop_out", *, device: str = "cpu",
        precision: str = "f64", batch_memory: float = 0, checkpoint: float = 30, threads: int = 0,
        evaluation: str = "batched", progress: Union[bool, Callable] = True, replay: Optional[str] = None,
        base: Optional[str] = None):
    """Runs a recipe (default: the built-in Dudley supercontinuum), writing one result file per
    member into ``output`` ("<base>[_<label>].h5"; base: the recipe file's stem, "dudley" or
    "run"). Returns a Result for a recipe of one member, else a list of them (a Scan from
    ``scan``). ``replay``: step on the accepted steps of an earlier result file.
    """
    rec = recipe(source)
    job = _P.Job.from_recipe(rec, _base_name(source, base), str(output), None if replay is None else str(replay))
    return _run(job, device, precision, batch_memory, checkpoint, threads, evaluation, progress)


def scan(source: RecipeLike, output: Union[str, os.PathLike] = "prop_out", **options) -> Scan:
    """Runs a recipe's [scan] or [ensemble] (ValueError for a recipe of one member) as ``run``
    does; returns the results on the scan's axes."""
    rec = recipe(source)
    if len(rec.labels) < 2:
        raise ValueError("[prop] scan needs a recipe with a [scan] or an [ensemble] section; this one describes "
                         "one member (use run)")
    options.setdefault("base", _base_name(source, None))
    return _scan_of(run(rec, output, **options), rec)


def resume(files: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]], source: RecipeLike = None, *,
           device: str = "cpu", precision: str = "f64", batch_memory: float = 0, checkpoint: float = 30,
           threads: int = 0, evaluation: str = "batched", progress: Union[bool, Callable] = True):
    """Continues result files of an interrupted run (a list of files, or a directory: its
    ``*.h5``) to the end of the fibre. With ``source``, only if that recipe describes the same
    configurations (ValueError naming the fields that differ). Returns as ``run``."""
    if isinstance(files, (str, os.PathLike)) and pathlib.Path(files).is_dir():
        paths = sorted(str(p) for p in pathlib.Path(files).glob("*.h5"))
    elif isinstance(files, (str, os.PathLike)):
        paths = [str(files)]
    else:
        paths = [str(f) for f in files]
    if not paths:
        raise ValueError(f"[prop] no result files to resume in {files}")
    for p in paths:
        if not pathlib.Path(p).is_file():
            raise FileNotFoundError(f"[prop] no result file {p}")
    job = _P.Job.resume(paths, None if source is None else recipe(source))
    return _run(job, device, precision, batch_memory, checkpoint, threads, evaluation, progress)


def propagate(source: RecipeLike = None, *, device: str = "cpu", precision: str = "f64", batch_memory: float = 0,
              threads: int = 0, evaluation: str = "batched", progress: Union[bool, Callable] = False):
    """Runs a recipe in memory (no files; no bar unless progress=True); returns as ``run``."""
    rec = recipe(source)
    job = _P.Job.from_recipe(rec, "memory", None, None)
    return _run(job, device, precision, batch_memory, 30, threads, evaluation, progress)


for _f in (run, resume, propagate):
    _f.__doc__ += _RUN_DOC


# --- the guide calculator -----------------------------------------------------------------------

Quantity = Union[str, float, int, None]


def _quantity_text(value: Quantity, name: str) -> str:
    """A value for the C++ parser: a string as written ("5 bar"), a number as its exact decimal
    in SI units, None as '' (the default)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"[prop.mode] {name}: a number (SI units) or a string with a unit, not {type(value).__name__}")
    return repr(float(value))


def _index_text(value: Union[str, complex, float, int, None]) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex, np.number)):
        raise TypeError(f"[prop.mode] cladding_index: a complex number or a string such as '1.45+0.001i', "
                        f"not {type(value).__name__}")
    z = complex(value)
    return f"{z.real!r}{'-' if z.imag < 0 else '+'}{abs(z.imag)!r}i"


def mode(gas: str, pressure: Quantity, radius: Quantity, wavelength: Quantity, *, temperature: Quantity = None,
         model: str = "full", cladding_index: Union[str, complex, float, None] = None, energy: Quantity = None,
         duration: Quantity = None, shape: str = "sech", helium: Optional[str] = None, search_min: Quantity = None,
         search_max: Quantity = None) -> dict:
    """The guide calculator: HE11 of a gas-filled hollow capillary at one wavelength (docs/GAS.md §7).

    Values are strings with units as recipes write them ("5 bar", "75 um", "800 nm", "20 degC",
    "0.5 mJ", "30 fs") or plain numbers in SI units (Pa, m, K, J, s)::

        lp.mode("He", "5 bar", "75 um", "800 nm", energy="0.5 mJ", duration="30 fs")

    gas: He, Ne, Ar, Kr, Xe, N2 or air. temperature: default 20 °C. model: "full" or "reduced"
    (Marcatili and Schmeltzer's effective index). cladding_index: None for fused silica
    (Malitson, 0.21–3.71 µm), or a complex index (1.45, 1.45+0.001j or "1.45+0.001i"; Im ≥ 0 is
    loss). energy and duration (intensity FWHM): both or neither; shape "sech" or "gaussian".
    helium: "ermolov" (default) or "borzsonyi". search_min, search_max: the wavelength window of
    the ZDW and RDW searches (default 0.21–3.71 µm; below 0.21 µm with model="reduced" or a given
    cladding_index).

    Returns a dict in SI units, the keys of ``lockstep prop mode --json``: n_minus_1, beta (1/m),
    beta1 … beta6 (s^k/m), alpha (1/m), loss_db_per_m, aeff (m²), zdw (m, nearest the centre
    wavelength), n2 (m²/W), gamma (1/(W m)), peak_power (W), t0 (s), dispersion_length,
    nonlinear_length, soliton_order, fission_length (m), rdw_wavelength (m) and zdws (every
    zero-dispersion wavelength found, a list). None where a value does not exist: the pulse
    values without a pulse, zdw without a zero in the window, fission_length and rdw_wavelength
    unless β2 < 0 at the centre wavelength, and lengths that diverge. The RDW is the root of
    β(ω) − β(ω0) − β1(ω0)(ω − ω0) − γP0/2 (without a pulse, of the same without γP0/2).
    A bad value raises ValueError with the CLI's message (``[prop.mode] pressure: ...``)."""
    return _P.mode(str(gas), _quantity_text(pressure, "pressure"), _quantity_text(radius, "radius"),
                   _quantity_text(wavelength, "wavelength"), temperature=_quantity_text(temperature, "temperature"),
                   model=model or "", cladding_index=_index_text(cladding_index),
                   energy=_quantity_text(energy, "energy"), duration=_quantity_text(duration, "duration"),
                   shape=shape or "", helium=helium or "", search_min=_quantity_text(search_min, "search_min"),
                   search_max=_quantity_text(search_max, "search_max"))
