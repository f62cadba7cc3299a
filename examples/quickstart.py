"""qkan's quick start, trained with the "lockstep" solver and with qkan's "exact" solver.

Fits the J0-like f(x) = sin(20x)/(20x) on [0, 1] with QKAN([1, 1], reps=3) (pre-, post- and
base-activation weights trainable) and LBFGS (lr 5e-2, 100 steps), once per solver, with the
same seed, data and training loop, and prints the train/test MSE and wall time of each and the
speed-up. Exits non-zero if lockstep's test loss is not finite.

    .venv/bin/python examples/quickstart.py [--steps 100] [--seed 0]

Importing lockstep.qkan registers the solver; after that `solver="lockstep"` is all it takes.
"""

import argparse
import math
import sys
import time

import torch
import qkan

import lockstep
import lockstep.qkan  # registers solver="lockstep" with qkan


def target(x: torch.Tensor) -> torch.Tensor:
    """sin(20x)/(20x), with the limit 1 at x = 0 (torch.sinc(t) = sin(πt)/(πt), sinc(0) = 1)."""
    return torch.sinc(20.0 * x / math.pi)


def train(solver: str, dataset: dict, steps: int, seed: int):
    model = qkan.QKAN(
        [1, 1],
        reps=3,
        preact_trainable=True,
        postact_weight_trainable=True,
        postact_bias_trainable=True,
        ba_trainable=True,
        seed=seed,
        solver=solver,
    )
    # Zero tolerances: no step stops early. The strong-Wolfe line search still makes the number
    # of loss evaluations differ a little between runs, so time per evaluation is printed too.
    opt = torch.optim.LBFGS(model.parameters(), lr=5e-2, history_size=10,
                            line_search_fn="strong_wolfe", tolerance_grad=1e-32,
                            tolerance_change=1e-32)
    loss_fn = torch.nn.MSELoss()
    xtr, ytr = dataset["train_input"], dataset["train_label"]
    evals = 0

    def closure():
        nonlocal evals
        evals += 1
        opt.zero_grad()
        loss = loss_fn(model(xtr), ytr)
        loss.backward()
        return loss

    start = time.perf_counter()
    for _ in range(steps):
        opt.step(closure)
    seconds = time.perf_counter() - start
    with torch.no_grad():
        train_loss = loss_fn(model(xtr), ytr).item()
        test_loss = loss_fn(model(dataset["test_input"]), dataset["test_label"]).item()
    return train_loss, test_loss, seconds, evals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    print(lockstep.build_summary())
    print("lockstep path:", " - ".join(lockstep.qkan.explain(ansatz="pz_encoding",
                                                          preacts_trainable=True)))
    dataset = qkan.create_dataset(target, n_var=1, ranges=[0, 1], train_num=1000,
                                  test_num=1000, seed=args.seed)

    results = {}
    for solver in ("lockstep", "exact"):
        train_loss, test_loss, seconds, evals = train(solver, dataset, args.steps, args.seed)
        results[solver] = (train_loss, test_loss, seconds)
        results[solver] += (seconds / evals,)
        print(f"{solver:>8}: train MSE {train_loss:.3e}  test MSE {test_loss:.3e}  "
              f"wall {seconds:6.2f} s  ({args.steps} LBFGS steps, {evals} loss+grad evaluations, "
              f"{1e3 * seconds / evals:.2f} ms each)")
    print(f"speed-up (exact / lockstep): {results['exact'][2] / results['lockstep'][2]:.1f}x wall, "
          f"{results['exact'][3] / results['lockstep'][3]:.1f}x per evaluation")

    if not math.isfinite(results["lockstep"][1]):
        print("error: lockstep's test loss is not finite", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
