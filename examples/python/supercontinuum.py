"""The Dudley–Genty–Coen supercontinuum (Rev. Mod. Phys. 78, 1135 (2006), Fig. 3): a 50 fs,
10 kW sech pulse at 835 nm in 15 cm of photonic-crystal fibre, the built-in recipe, run from
Python; prints the energy, photon-number drift and −40 dB bandwidth, and writes the spectral and
temporal evolution, the final spectrum and a spectrogram of the output.

    .venv/bin/python examples/python/supercontinuum.py [--out prop_out] [--length 15cm]
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # files, no window

import numpy as np

import lockstep.prop as lp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="prop_out", help="directory of the result file and figures")
    parser.add_argument("--length", default="15 cm", help="fibre length (shorter: a quicker run)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)

    r = lp.run({"fibre": {"length": args.length}}, out, base="supercontinuum")
    drift = r.stats["photon_number"][-1] / r.stats["photon_number"][0] - 1
    lam, s = lp.wavelength_spectrum(r)
    above = lam[s > s.max() * 1e-4]
    print(f"{r.path}: {r.ledger['accepted_steps']} steps, energy {lp.energy(r) * 1e12:.2f} pJ, "
          f"photon-number drift {drift:.1e}, -40 dB bandwidth {above[0] * 1e9:.0f}-{above[-1] * 1e9:.0f} nm")
    figures = {
        "spectral": lp.plot_spectral_evolution(r),
        "temporal": lp.plot_temporal_evolution(r),
        "spectrum": lp.plot_spectrum(r),
        "spectrogram": lp.plot_spectrogram(r, gate_fwhm=50e-15),
    }
    for name, fig in figures.items():
        fig.savefig(out / f"supercontinuum_{name}.png", dpi=120)
        print(f"  {out / f'supercontinuum_{name}.png'}")
    assert np.isfinite(lp.energy(r))


if __name__ == "__main__":
    main()
