#!/usr/bin/env bash
# The main job (README, quick start): builds the `lockstep` command-line tool and fits
# sin(20x)/(20x) on [0, 1] with QKAN([1, 1], reps 3), every weight trainable, L-BFGS (lr 5e-2,
# 100 steps), in C++ alone (`lockstep qkan fit`, which writes the model and its loss history
# under build/quickstart/); then the same configuration in PyTorch through qkan, with
# solver="lockstep" and solver="exact" (examples/quickstart.py); then the propagation engine's
# built-in case, the Dudley–Genty–Coen supercontinuum (`lockstep prop run`, which writes the
# result file and its figures under build/quickstart/dudley/). Run scripts/setup_python_env.sh
# first (it installs the build dependencies and the venv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD=build/quickstart
# The model code runs on the CPU: the tool is built without the CUDA kernels, which would take
# minutes to compile here.
cmake -S . -B "$BUILD" -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_APPS=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target lockstep_cli
echo "== C++ alone: $BUILD/lockstep qkan fit (defaults: the quick start's task and settings)"
"$BUILD/lockstep" qkan fit --output "$BUILD/fit.safetensors" --history "$BUILD/fit_history.csv"
echo "== PyTorch with qkan: the same fit through solver=\"lockstep\" and solver=\"exact\""
"$ROOT/.venv/bin/python" examples/quickstart.py
echo "== Propagation: $BUILD/lockstep prop run (the built-in Dudley supercontinuum, 2^13 points, 15 cm)"
"$BUILD/lockstep" prop run --output "$BUILD/dudley"
echo "== figures: $BUILD/dudley/dudley_{spectral,temporal,spectrum}.png"
