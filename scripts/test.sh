#!/usr/bin/env bash
# Builds the C++ library and its tests (CUDA compiled when nvcc is found), runs them with
# CTest, then runs the Python tests in the project venv made by scripts/setup_python_env.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${LOCKSTEP_BUILD_DIR:-build/test}"
cmake -S . -B "$BUILD" -DLOCKSTEP_CUDA=AUTO -DLOCKSTEP_TESTS=ON
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
"$ROOT/.venv/bin/python" -m pytest -q tests/python
