#!/usr/bin/env bash
# Sets up the Python environment for lockstep's Python package and tests (idempotent).
#
#   - Debian's python, /usr/bin/python3 (3.11), and Debian's torch 1.13 (CPU), numpy, pytest,
#     matplotlib, tqdm, scipy, plus the C++ build dependencies, from apt;
#   - a venv .venv at the repository root that sees those system packages
#     (--system-site-packages), into which pip installs nanobind and scikit-build-core (the
#     build backend, used with --no-build-isolation) and qkan (the peer/oracle; --no-deps
#     because its metadata asks for torch>=2 and pip would otherwise pull a multi-GB torch; it
#     runs on Debian's torch 1.13), and nvidia-mathdx (cuFFTDx's headers, for the CUDA
#     propagation engine's fused evaluation of N);
#   - then builds and installs lockstep itself into the venv (`pip install --no-build-isolation ./`).
#
# Usage: bash scripts/setup_python_env.sh        (from anywhere; needs root for apt-get)
# Then:  .venv/bin/python -m pytest tests/python
# Set LOCKSTEP_SKIP_APT=1 to skip the apt-get steps (e.g. when the packages are known present).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON=/usr/bin/python3
VENV="$ROOT/.venv"

APT_PACKAGES=(
  # the Python runtime and its Debian-packaged scientific stack
  python3 python3-dev python3-venv python3-pip
  python3-torch python3-numpy python3-pytest python3-matplotlib python3-tqdm python3-scipy
  python3-sympy  # imported by qkan (its dataset utilities)
  python3-h5py python3-sklearn  # reading propagation outputs; the digits data set in the tests
  # build dependencies of the C++ library
  cmake g++ libhwy-dev pkg-config libgtest-dev libbenchmark-dev
  libcli11-dev libfmt-dev libfftw3-dev libhdf5-dev libtomlplusplus-dev zlib1g-dev
  nlohmann-json3-dev  # the safetensors header
  clang-format  # the format test (tests/format.cmake)
)

if [[ "${LOCKSTEP_SKIP_APT:-0}" != "1" ]]; then
  SUDO=""
  if [[ "$(id -u)" != "0" ]]; then SUDO="sudo"; fi
  echo "== apt-get: ${APT_PACKAGES[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${APT_PACKAGES[@]}"
fi

echo "== Python used: $PYTHON ($("$PYTHON" -c 'import sys; print(sys.version.split()[0])'))," \
     "venv: $VENV (with --system-site-packages)"

if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -m venv --system-site-packages "$VENV"
fi
VPY="$VENV/bin/python"
# The venv must be built on Debian's python, not another python3 found on PATH.
if [[ "$("$VPY" -c 'import sys; print(sys._base_executable)')" != "$PYTHON" ]] &&
   [[ "$(readlink -f "$("$VPY" -c 'import sys; print(sys._base_executable)')")" != "$(readlink -f "$PYTHON")" ]]; then
  echo "error: $VENV was not made from $PYTHON; remove it and rerun" >&2
  exit 1
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
"$VPY" -m pip install -q "nanobind==3.1.0" "scikit-build-core==1.1.2"
"$VPY" -m pip install -q --no-deps "qkan==0.2.3"
# the reference safetensors writer: model files from PyTorch in the CLI tests
"$VPY" -m pip install -q "safetensors==0.8.0"
# cuFFTDx (NVIDIA MathDx, headers only): the CUDA propagation engine's fused evaluation of N,
# given to CMake as LOCKSTEP_MATHDX_ROOT (src/prop/cuda/cufftdx.cmake) here and by scripts/test.sh
"$VPY" -m pip install -q "nvidia-mathdx==25.6.0"
MATHDX_ROOT="$("$VPY" -c 'import nvidia.mathdx as m; print(m.__path__[0])')"

echo "== building and installing lockstep into $VENV"
# CUDA (where nvcc is found) for this machine's GPUs, or sm_90 alone without one
# (scripts/cuda_architectures.sh); a pip install without this compiles for every architecture.
"$VPY" -m pip install -q --no-build-isolation \
  --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES="$("$ROOT/scripts/cuda_architectures.sh")" \
  --config-settings=cmake.define.LOCKSTEP_MATHDX_ROOT="$MATHDX_ROOT" "$ROOT"

"$VPY" - <<'PY'
import sys, torch, lockstep
print(f"== ok: python {sys.executable} {sys.version.split()[0]}, torch {torch.__version__}")
print(f"== {lockstep.build_summary()}")
PY
echo "== run the tests with: $VPY -m pytest $ROOT/tests/python"
