"""A two-axis scan of the Dudley case: peak power × fibre length, every point a member of one
lockstep run (members of equal length share a batch), and the −20 dB bandwidth of each output
spectrum as a 2-D map.

    .venv/bin/python examples/python/peak_power_length_scan.py [--out scan_out] [--powers 6] [--lengths 5]
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import lockstep.prop as lp


def bandwidth_nm(result, level_db: float = -20.0) -> float:
    """Width in nm between the outermost wavelengths whose S(λ) is within level_db of its peak."""
    lam, s = lp.wavelength_spectrum(result)
    above = lam[s >= s.max() * 10 ** (level_db / 10)]
    return (above[-1] - above[0]) * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="scan_out")
    parser.add_argument("--powers", type=int, default=6, help="peak powers from 2 to 10 kW")
    parser.add_argument("--lengths", type=int, default=5, help="fibre lengths from 3 to 15 cm")
    parser.add_argument("--points", type=int, default=8192, help="grid points")
    args = parser.parse_args()
    powers = np.linspace(2, 10, args.powers)
    lengths = np.linspace(3, 15, args.lengths)
    recipe = {
        "grid": {"points": args.points},
        "scan": {"pulse.peak_power": [f"{p:g} kW" for p in powers],
                 "fibre.length": [f"{z:g} cm" for z in lengths]},
    }
    s = lp.scan(recipe, args.out, base="scan")
    widths = np.vectorize(bandwidth_nm)(s.results)  # (powers, lengths)
    fig, ax = plt.subplots(constrained_layout=True)
    mesh = ax.pcolormesh(lengths, powers, widths, shading="nearest", cmap="viridis")
    ax.set(xlabel="fibre length (cm)", ylabel="peak power (kW)", title="output bandwidth at -20 dB")
    fig.colorbar(mesh, ax=ax, label="bandwidth (nm)")
    path = pathlib.Path(args.out) / "bandwidth.png"
    fig.savefig(path, dpi=120)
    print(f"{len(s.results.flat)} members; bandwidth from {widths.min():.0f} to {widths.max():.0f} nm: {path}")
    assert np.all(np.isfinite(widths))


if __name__ == "__main__":
    main()
