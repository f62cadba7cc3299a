#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU, CUDA and a python3 that has torch with CUDA
# (plus nanobind, pytest and qkan==0.2.3 for the Python tests and the benchmark, h5py for the
# propagation's fault tests):
#   1. builds the library with CUDA, the C++ tests and the Python extension (build/gpu);
#   2. runs every C++ test, the GPU ones (label gpu) included, the fault tests among them
#      (device memory taken on purpose, 1000 failed calls; those run alone);
#   3. runs compute-sanitizer's four tools (memcheck, racecheck, initcheck, synccheck) over the
#      GPU tests' sanitizer subset and a forward + backward of the fused QKAN layer
#      (scripts/qkan_layer_sanitize.py), and over a short run of the propagation engine's trials
#      and its fused evaluation of N;
#   4. runs the Python tests (tests/python: test_cuda.py, test_prop_cuda.py and
#      test_cuda_faults.py included) against that build;
#   5. contention: every GPU test binary, test_cuda.py and test_prop_cuda.py as N concurrent
#      copies on the one GPU, one suite after the other, ROUNDS times (scripts/gpu_stress.sh; default 8 copies x 5
#      rounds);
#   6. runs the GPU benchmarks (bench/qkan_cuda.py; bench/prop_cuda.cpp with the propagation
#      engine), unless LOCKSTEP_SKIP_BENCH=1.
# Usage: bash scripts/test_gpu.sh [--stress N ROUNDS] [RESULTS_DIR]
#   (logs and JSON go to RESULTS_DIR; default build/gpu/results; --stress 0 0 leaves step 5 out)
#   LOCKSTEP_SKIP=name,name: leaves those steps out (e.g. ctest in a second session on one build).
# Dependencies that are not installed system-wide (Highway, GoogleTest) can be given through
# CMAKE_PREFIX_PATH; cuFFTDx (the fused evaluation of N) through LOCKSTEP_MATHDX_ROOT, the folder
# of nvidia-mathdx's include/ (without it, the nvidia-mathdx that $PYTHON imports), or the mathdx
# CMake package in CMAKE_PREFIX_PATH. Exits non-zero if any step failed, after running them all.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD=build/gpu
STRESS_COPIES=8 STRESS_ROUNDS=5
if [[ "${1:-}" == --stress ]]; then
  [[ $# -ge 3 && "$2" =~ ^[0-9]+$ && "$3" =~ ^[0-9]+$ ]] || { echo "usage: $0 [--stress N ROUNDS] [RESULTS_DIR]" >&2; exit 2; }
  STRESS_COPIES=$2 STRESS_ROUNDS=$3
  shift 3
fi
RESULTS="${1:-$BUILD/results}"
mkdir -p "$RESULTS"
PY="${PYTHON:-python3}"
status=0
step() {  # step NAME COMMAND...: runs it, logs to RESULTS/NAME.log, records a failure
  local name="$1"; shift
  if [[ ",${LOCKSTEP_SKIP:-}," == *",$name,"* ]]; then echo "== $name: skipped (LOCKSTEP_SKIP)"; return; fi
  echo "== $name: $*"
  local t0=$SECONDS
  if "$@" >"$RESULTS/$name.log" 2>&1; then echo "== $name: ok ($((SECONDS - t0)) s)"
  else echo "== $name: FAILED ($((SECONDS - t0)) s); last lines of $RESULTS/$name.log:"; tail -n 25 "$RESULTS/$name.log"; status=1; fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || { echo "no GPU"; exit 1; }
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
step configure cmake -S . -B "$BUILD" "${GEN[@]}" -DLOCKSTEP_CUDA=ON -DLOCKSTEP_TESTS=ON -DLOCKSTEP_PROP="${LOCKSTEP_PROP:-ON}" \
  -DLOCKSTEP_PYTHON=ON -DLOCKSTEP_APPS=ON -DPython_EXECUTABLE="$(command -v "$PY")" \
  -DCMAKE_CUDA_ARCHITECTURES="$(scripts/cuda_architectures.sh)" \
  -DLOCKSTEP_MATHDX_ROOT="${LOCKSTEP_MATHDX_ROOT:-$("$PY" -c 'import nvidia.mathdx as m; print(m.__path__[0])' 2>/dev/null)}"
step build cmake --build "$BUILD" -j"$(nproc)"
[[ $status == 0 ]] || exit 1
# The extension next to the package sources, so `import lockstep` finds this build.
cp "$BUILD"/python/_lockstep*.so python/lockstep/
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" LOCKSTEP_CLI="$ROOT/$BUILD/lockstep"

step ctest ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
# The sanitizers run the tile-boundary cases (I 33/65, O 9/17, B 37/300: every chunk and tail of
# the kernels), forward and backward, the forward over the whole grid (its small layers slice
# their inputs inside the block), the graph captures, and the rows kernel (the backward of a
# layer that fills the device) on two of its shapes and near the poles; the whole grid's backward
# would take far longer under them.
SAN_FILTER='QkanTiles/CudaVsReference.Forward/*:QkanTiles/CudaVsReference.Backward/*:Qkan/CudaVsReference.Forward/*:Qkan/CudaGraph*'
SAN_FILTER+=':Qkan/CudaRowsNearPoles.*:QkanRows/CudaRowsBackward.*/pz_enc_fast*B257*:QkanRows/CudaRowsBackward.*/mix_raw_fast*B257*'
SANITIZERS=(memcheck racecheck initcheck synccheck)
for tool in "${SANITIZERS[@]}"; do
  step "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 \
    "$BUILD/tests/cpp/lockstep_cuda_tests" --gtest_filter="$SAN_FILTER"
done
for tool in "${SANITIZERS[@]}"; do  # the fused layer, through torch (scripts/qkan_layer_sanitize.py)
  step "sanitizer-layer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 "$PY" scripts/qkan_layer_sanitize.py
done
if [[ "${LOCKSTEP_PROP:-ON}" == ON ]]; then
  for tool in memcheck initcheck synccheck; do
    step "sanitizer-prop-$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 \
      "$BUILD/tests/cpp/prop/lockstep_prop_cuda_tests" --gtest_filter='Schemes/CudaTrial.*:CudaEngine.*:Grids/FusedEvaluation.*'
  done
  # The fused evaluation of N shares its block's shared memory between transforms.
  step sanitizer-prop-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
    "$BUILD/tests/cpp/prop/lockstep_prop_cuda_tests" --gtest_filter='Grids/FusedEvaluation.*'
fi
step pytest "$PY" -X faulthandler -m pytest -v -ra tests/python
if (( STRESS_COPIES > 0 && STRESS_ROUNDS > 0 )); then
  SUITES=(qkan faults python); [[ "${LOCKSTEP_PROP:-ON}" == ON ]] && SUITES=(qkan prop faults python)
  step stress bash scripts/gpu_stress.sh "$BUILD" "$STRESS_COPIES" "$STRESS_ROUNDS" "$RESULTS/stress" "${SUITES[@]}"
  grep -E "round|stress:" "$RESULTS/stress.log"
fi
if [[ "${LOCKSTEP_SKIP_BENCH:-0}" != 1 ]]; then
  step bench "$PY" bench/qkan_cuda.py --out "$RESULTS/qkan_cuda.json"
  tail -n 40 "$RESULTS/bench.log"
  if [[ "${LOCKSTEP_PROP:-ON}" == ON ]]; then
    step bench-prop-build cmake --build "$BUILD" --target lockstep_prop_cuda_bench
    step bench-prop "$BUILD/bench/lockstep_prop_cuda_bench" "$RESULTS/prop_cuda.json"
    tail -n 15 "$RESULTS/bench-prop.log"
  fi
fi
exit $status
