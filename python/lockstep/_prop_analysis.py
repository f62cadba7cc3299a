"""Analysis and figures of lockstep.prop results (re-exported by lockstep.prop; docs/PYTHON.md).

Conventions, as the result files store them: ``Ew`` is Ã(ω) on the ascending absolute ``omega``
(the unnormalised DFT of A), ``Et`` is A(T) on ``t`` with Et = fft(ifftshift(Ew)) / n, so that
the energy is Σ|A|² dt = Σ|Ã|² dt / n.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from . import _lockstep

_HBAR = 1.054571817e-34  # J s (CODATA 2018, exact)
_C = 299792458.0  # m/s


def _dt(result) -> float:
    return float(result.t[1] - result.t[0])


def _to_time(result, spectrum: np.ndarray) -> np.ndarray:
    return np.fft.fft(np.fft.ifftshift(spectrum, axes=-1), axis=-1) / len(result.t)


def energy(result, plane: int = -1) -> float:
    """The pulse energy in J at a saved plane: Σ|A|² dt (the statistics' energy at that z)."""
    return float(np.sum(np.abs(result.Et[plane]) ** 2) * _dt(result))


def photon_number(result, plane: int = -1) -> float:
    """The photon number at a saved plane: Σ |Ã|² / (ħω) · dt / n (the statistics' photon_number)."""
    ew = result.Ew[plane]
    return float(np.sum(np.abs(ew) ** 2 / result.omega) * _dt(result) / (len(result.t) * _HBAR))


def spectral_density(result, plane: int = -1) -> np.ndarray:
    """The energy spectral density S(ω) in J/(rad/s) on ``result.omega``: ∫S dω is the energy."""
    dt = _dt(result)
    return np.abs(result.Ew[plane]) ** 2 * dt * dt / (2 * np.pi)


def wavelength_spectrum(result, plane: int = -1) -> Tuple[np.ndarray, np.ndarray]:
    """(λ ascending in m, S(λ) in J/m): the energy spectral density per wavelength, with the
    Jacobian |dω/dλ| = 2πc/λ², so that ∫S dλ is the energy. Negative frequencies (a grid
    wider than its centre) are left out."""
    positive = result.omega > 0
    lam = result.wavelength[positive][::-1]
    s = spectral_density(result, plane)[positive][::-1] * 2 * np.pi * _C / lam ** 2
    return lam, s


def bandpass(result, low: float, high: float, plane: int = -1, *, in_wavelength: bool = True,
             order: int = 8) -> np.ndarray:
    """A(T) on ``result.t`` of the plane's field through a super-Gaussian band-pass between
    ``low`` and ``high`` (wavelengths in m; ``in_wavelength=False``: angular frequencies in
    rad/s): |H(x)|² = 2^(−|(x − x0)/w|^order), x0 the band's centre and w its half width, so
    that half the power passes at the band's edges."""
    if not (high > low > 0):
        raise ValueError(f"[prop.bandpass] need 0 < low < high, got {low}, {high}")
    if order < 2 or order % 2:
        raise ValueError(f"[prop.bandpass] order must be an even number ≥ 2, got {order}")
    x = np.where(result.omega > 0, result.wavelength, np.inf) if in_wavelength else result.omega
    centre, half_width = (low + high) / 2, (high - low) / 2
    with np.errstate(over="ignore", invalid="ignore"):
        u = np.abs((x - centre) / half_width)
        h = np.where(np.isfinite(u), np.exp(-0.5 * np.log(2) * u ** order), 0.0)  # |H|² = 1/2 at the edges
    return _to_time(result, result.Ew[plane] * h)


def _gated(result, field: np.ndarray, gate_at, delays: np.ndarray) -> np.ndarray:
    n, dt = len(result.t), _dt(result)
    out = np.empty((len(delays), n))
    for i, tau in enumerate(delays):
        g = field * gate_at(tau)
        spectrum = np.fft.fftshift(np.fft.ifft(g)) * n  # Ã of the gated field, ascending ω
        out[i] = np.abs(spectrum) ** 2 * dt * dt / (2 * np.pi)
    return out


def spectrogram(result, gate_fwhm: float, plane: int = -1, delays: Optional[np.ndarray] = None):
    """The gated spectrogram S(τ, ω) = |∫ A(t) g(t − τ) e^{iωt} dt|² with a Gaussian intensity
    gate of ``gate_fwhm`` seconds; returns (τ in s, ω in rad/s ascending, S of shape (len(τ), n)).
    delays: default every 8th time sample."""
    if not gate_fwhm > 0:
        raise ValueError(f"[prop.spectrogram] gate_fwhm must be > 0 s, got {gate_fwhm}")
    t = result.t
    delays = t[::8] if delays is None else np.asarray(delays, dtype=float)
    sigma = gate_fwhm / (2 * np.sqrt(2 * np.log(2)))  # of the intensity |g|²
    field = result.Et[plane]
    return delays, result.omega, _gated(result, field, lambda tau: np.exp(-((t - tau) ** 2) / (4 * sigma ** 2)),
                                        delays)


def xfrog(result, reference: np.ndarray, plane: int = -1, delays: Optional[np.ndarray] = None):
    """The cross-correlation FROG trace |∫ A(t) R(t − τ) e^{iωt} dt|² with a reference field R
    given on ``result.t`` (e.g. the input pulse, ``result.Et[0]``); returns (τ, ω, trace) as
    ``spectrogram`` does. R(t − τ) is interpolated on the grid."""
    reference = np.asarray(reference, dtype=complex)
    t = result.t
    if reference.shape != t.shape:
        raise ValueError(f"[prop.xfrog] the reference has shape {reference.shape}, the grid {t.shape}")
    delays = t[::8] if delays is None else np.asarray(delays, dtype=float)

    def shifted(tau):
        return (np.interp(t - tau, t, reference.real, left=0, right=0)
                + 1j * np.interp(t - tau, t, reference.imag, left=0, right=0))

    return delays, result.omega, _gated(result, result.Et[plane], shifted, delays)


def coherence(results: Sequence, plane: int = -1) -> Tuple[np.ndarray, np.ndarray]:
    """|g12| of an ensemble's members at a plane (Dudley, Genty & Coen, Rev. Mod. Phys. 78, 1135
    (2006)), computed as the CLI's coherence figure does: (λ in m, |g12|) on ``results[0].wavelength``.
    ``results``: Results of one configuration, or a Scan's ``results`` array."""
    members = list(np.asarray(results, dtype=object).flat)
    if len(members) < 2:
        raise ValueError(f"[prop.coherence] the coherence needs at least 2 members, got {len(members)}")
    first = members[0]
    spectra = np.ascontiguousarray(np.stack([m.Ew[plane] for m in members]))
    return first.wavelength, _lockstep.prop.coherence(first.config, spectra)


# --- figures (matplotlib, imported when a figure is drawn) --------------------------------------

def _decibels(power: np.ndarray, floor_db: float) -> np.ndarray:
    peak = np.max(power)
    return 10 * np.log10(np.maximum(power, peak * 10 ** (floor_db / 10)) / peak)


def spectral_evolution(result, floor_db: float = -40.0):
    """The spectral evolution's data as the CLI draws it: (λ in m for ``result.omega`` > 0, z in m,
    |Ã|² in dB of its peak over all planes, shape (P, points))."""
    positive = result.omega > 0
    return result.wavelength[positive], result.z, _decibels(np.abs(result.Ew[:, positive]) ** 2, floor_db)


def temporal_evolution(result, floor_db: float = -40.0):
    """(t in s, z in m, |A|² in dB of its peak over all planes, shape (P, points))."""
    return result.t, result.z, _decibels(np.abs(result.Et) ** 2, floor_db)


def _span(axis_values: np.ndarray, above: np.ndarray, margin: float = 0.1) -> Tuple[float, float]:
    """The range of axis_values where `above` holds anywhere, widened by `margin` of itself but
    not past the axis' own ends (a spectrum reaching the grid's edge shows no blank beyond it)."""
    inside = axis_values[above]
    lo, hi = float(inside.min()), float(inside.max())
    pad = margin * (hi - lo) if hi > lo else abs(lo) * margin + 1e-30
    finite = axis_values[np.isfinite(axis_values)]
    return max(lo - pad, float(finite.min())), min(hi + pad, float(finite.max()))


def _figure(figsize=(6.4, 4.8)):
    import matplotlib.pyplot as plt  # optional: only the figures need it
    fig, ax = plt.subplots(figsize=figsize, constrained_layout=True)
    return fig, ax


def _evolution_figure(x, z, db, floor_db, xlabel, title, colour_label, ax):
    """An evolution map (x × z, dB), the x axis zoomed to where the data lie above the floor."""
    fig, ax = _figure() if ax is None else (ax.figure, ax)
    mesh = ax.pcolormesh(x, z, db, shading="nearest", vmin=floor_db, vmax=0, cmap="magma")
    ax.set(xlabel=xlabel, ylabel="z (m)", title=title, xlim=_span(x, np.any(db > floor_db, axis=0)))
    fig.colorbar(mesh, ax=ax, label=colour_label)
    return fig


def plot_spectral_evolution(result, floor_db: float = -40.0, ax=None):
    """Spectral evolution (wavelength in nm × z in m, dB); returns the Figure."""
    lam, z, db = spectral_evolution(result, floor_db)
    return _evolution_figure(lam * 1e9, z, db, floor_db, "wavelength (nm)", result.label or "spectral evolution",
                             "|Ã|² (dB)", ax)


def plot_temporal_evolution(result, floor_db: float = -40.0, ax=None):
    """Temporal evolution (delay in ps × z in m, dB); returns the Figure."""
    t, z, db = temporal_evolution(result, floor_db)
    return _evolution_figure(t * 1e12, z, db, floor_db, "delay (ps)", result.label or "temporal evolution",
                             "|A|² (dB)", ax)


def plot_spectrum(result, planes: Sequence[int] = (0, -1), floor_db: float = -60.0, ax=None):
    """The spectra of the given planes (default: input and output) in dB of each one's peak,
    against wavelength in nm; returns the Figure."""
    fig, ax = _figure() if ax is None else (ax.figure, ax)
    positive = result.omega > 0
    for p in planes:
        ax.plot(result.wavelength[positive] * 1e9, _decibels(np.abs(result.Ew[p, positive]) ** 2, floor_db),
                label=f"z = {result.z[p]:.4g} m")
    above = np.any([_decibels(np.abs(result.Ew[p, positive]) ** 2, floor_db) > floor_db for p in planes], axis=0)
    ax.set(xlabel="wavelength (nm)", ylabel="|Ã|² (dB)", ylim=(floor_db, 3), title=result.label or "spectrum",
           xlim=_span(result.wavelength[positive] * 1e9, above))
    ax.legend()
    return fig


def plot_spectrogram(result, gate_fwhm: float, plane: int = -1, floor_db: float = -40.0, ax=None):
    """The gated spectrogram of a plane (delay in ps × wavelength in nm, dB); returns the Figure."""
    tau, omega, s = spectrogram(result, gate_fwhm, plane)
    positive = omega > 0
    fig, ax = _figure() if ax is None else (ax.figure, ax)
    db = _decibels(s[:, positive], floor_db)
    lam = result.wavelength[positive]
    mesh = ax.pcolormesh(tau * 1e12, lam * 1e9, db.T, shading="nearest", vmin=floor_db, vmax=0, cmap="magma")
    ax.set(xlabel="delay (ps)", ylabel="wavelength (nm)", title=f"spectrogram at z = {result.z[plane]:.4g} m",
           xlim=_span(tau * 1e12, np.any(db > floor_db, axis=1)), ylim=_span(lam * 1e9, np.any(db > floor_db, axis=0)))
    fig.colorbar(mesh, ax=ax, label="dB")
    return fig


def plot_coherence(results: Sequence, plane: int = -1, ax=None):
    """|g12(λ)| of an ensemble with its mean spectrum (dB), as the CLI's coherence.png; returns
    the Figure."""
    lam, g12 = coherence(results, plane)
    members = list(np.asarray(results, dtype=object).flat)
    mean = np.mean([np.abs(m.Ew[plane]) ** 2 for m in members], axis=0)
    positive = members[0].omega > 0
    fig, ax = _figure() if ax is None else (ax.figure, ax)
    ax.plot(lam[positive] * 1e9, g12[positive], label="|g12|")
    ax.set(xlabel="wavelength (nm)", ylabel="|g12|", ylim=(0, 1.05),
           title=f"coherence of {len(members)} members")
    twin = ax.twinx()
    twin.plot(lam[positive] * 1e9, _decibels(mean[positive], -60.0), color="0.6", lw=0.8, label="mean spectrum")
    twin.set_ylabel("mean |Ã|² (dB)")
    return fig
