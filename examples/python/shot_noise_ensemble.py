"""A shot-noise ensemble of the Dudley supercontinuum: 100 members (one photon per mode of
random phase each), advanced in lockstep, and the first-order coherence |g12(λ)| of their output
spectra (Dudley, Genty & Coen, Rev. Mod. Phys. 78, 1135 (2006), Fig. 10).

    .venv/bin/python examples/python/shot_noise_ensemble.py [--out ensemble_out] [--members 100] [--device cpu]
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import numpy as np

import lockstep.prop as lp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="ensemble_out")
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--length", default="15 cm")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    recipe = {"fibre": {"length": args.length}, "output": {"n_save": 20},
              "ensemble": {"members": args.members, "seed": 1}}
    s = lp.scan(recipe, args.out, base="ensemble", device=args.device)
    lam, g12 = lp.coherence(s.results)
    mean = np.mean([np.abs(m.Ew[-1]) ** 2 for m in s.results.flat], axis=0)
    weight = mean / mean.sum()
    print(f"{s.members} members: spectrally weighted mean |g12| = {np.sum(weight * g12):.3f}")
    path = pathlib.Path(args.out) / "coherence.png"
    lp.plot_coherence(s.results).savefig(path, dpi=120)
    print(f"  {path}")
    assert np.all((g12 >= 0) & (g12 <= 1 + 1e-9))


if __name__ == "__main__":
    main()
