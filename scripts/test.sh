#!/usr/bin/env bash
# Builds the C++ library and its tests (CUDA compiled when nvcc is found), runs them with
# CTest (the CUDA tests, label gpu, only where `nvidia-smi -L` lists a GPU), then runs the
# Python tests in the project venv made by scripts/setup_python_env.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${LOCKSTEP_BUILD_DIR:-build/test}"
# cuFFTDx for the CUDA engine's fused evaluation: the venv's nvidia-mathdx (src/prop/cuda/cufftdx.cmake)
MATHDX_ROOT="$("$ROOT/.venv/bin/python" -c 'import nvidia.mathdx as m; print(m.__path__[0])' 2>/dev/null || true)"
cmake -S . -B "$BUILD" -DLOCKSTEP_CUDA=AUTO -DLOCKSTEP_TESTS=ON -DLOCKSTEP_MATHDX_ROOT="$MATHDX_ROOT" \
  -DCMAKE_CUDA_ARCHITECTURES="$(scripts/cuda_architectures.sh)"
cmake --build "$BUILD" -j"$(nproc)"
# The CUDA tests (label gpu) need a GPU; without one they are left out, saying so.
CTEST_EXTRA=()
if ! command -v nvidia-smi >/dev/null 2>&1; then
  GPU_MISSING="nvidia-smi is not installed"
elif ! GPU_LIST="$(nvidia-smi -L 2>&1)"; then
  GPU_MISSING="nvidia-smi -L failed: $(printf '%s' "$GPU_LIST" | head -n 1)"
elif ! grep -q '^GPU [0-9]' <<<"$GPU_LIST"; then
  GPU_MISSING="nvidia-smi -L lists no GPU"
else
  GPU_MISSING=""
fi
if [[ -n "$GPU_MISSING" ]]; then
  echo "test.sh: GPU tests (CTest label gpu) NOT run: no usable NVIDIA GPU ($GPU_MISSING)"
  CTEST_EXTRA+=(-LE '^gpu$')
fi
# ctest runs several test processes at once, each with its own OpenMP threads: with OpenMP's
# default (spinning) wait, threads of one process burn the cores another one needs.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" ${CTEST_EXTRA[@]+"${CTEST_EXTRA[@]}"}
# The command-line tool of this build, for the Python tests that run it.
CLI_PATH="$BUILD/lockstep"
[[ "$CLI_PATH" = /* ]] || CLI_PATH="$ROOT/$CLI_PATH"
LOCKSTEP_CLI="$CLI_PATH" "$ROOT/.venv/bin/python" -m pytest -q tests/python
