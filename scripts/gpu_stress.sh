#!/usr/bin/env bash
# Contention as a standing check: every GPU test binary run as N concurrent copies on the one
# GPU, for ROUNDS rounds, the way a shared GPU is used (a training job, a second scan, a
# notebook beside each other). A copy that fails is a failure of the round; the log of each copy
# is kept. Test cases whose CPU reference dominates their time (the whole-run comparisons with
# the CPU runner, the 64-bit indexing cases, the 16-rep rows configurations) are left out of the
# copies: they load the CPU, not the GPU, and the plain run (scripts/test_gpu.sh) runs them.
# The cases that take the device's memory on purpose (CudaMemoryExhausted) are left out too: the
# copies beside them would run out of memory by design.
#
# Usage: bash scripts/gpu_stress.sh BUILD_DIR N ROUNDS RESULTS_DIR [SUITE...]
#   SUITE: qkan, prop, faults, python (default: all); LOCKSTEP_PYTHON_TESTS overrides the pytest
#   file list of the python suite.
# Prints one line per suite and round ("failed: K of N"), and a summary; exits 1 on any failure.
set -uo pipefail
BUILD="$1"; N="$2"; ROUNDS="$3"; RESULTS="$4"; shift 4
SUITES=("$@"); [[ ${#SUITES[@]} -gt 0 ]] || SUITES=(qkan prop faults python)
mkdir -p "$RESULTS"
PY="${PYTHON:-python3}"

suite_command() {  # the command one copy of a suite runs
  case "$1" in
    qkan) echo "$BUILD/tests/cpp/lockstep_cuda_tests --gtest_filter=-*L16*:CudaLarge.*" ;;
    prop) echo "$BUILD/tests/cpp/prop/lockstep_prop_cuda_tests --gtest_filter=-CudaRunner.DudleyAdaptiveMatchesCpu:CudaRunner.ShotNoiseEnsembleMatchesCpu" ;;
    faults)
      local prop_faults="$BUILD/tests/cpp/prop/lockstep_prop_cuda_fault_tests"
      if [[ -x "$prop_faults" ]]; then echo "$prop_faults --gtest_filter=-CudaMemoryExhausted.* && $BUILD/tests/cpp/lockstep_cuda_fault_tests"
      else echo "$BUILD/tests/cpp/lockstep_cuda_fault_tests"; fi ;;
    python) echo "$PY -m pytest -q -x -p no:cacheprovider ${LOCKSTEP_PYTHON_TESTS:-tests/python/test_cuda.py}" ;;
    *) echo "unknown suite $1" >&2; return 1 ;;
  esac
}

total_failed=0
for suite in "${SUITES[@]}"; do
  cmd="$(suite_command "$suite")" || exit 2
  echo "== stress $suite: $N copies x $ROUNDS rounds of: $cmd"
  for ((round = 1; round <= ROUNDS; round++)); do
    t0=$SECONDS
    pids=()
    for ((copy = 1; copy <= N; copy++)); do
      bash -c "$cmd" >"$RESULTS/stress-$suite-r$round-c$copy.log" 2>&1 &
      pids+=($!)
    done
    failed=0
    for ((copy = 1; copy <= N; copy++)); do
      if ! wait "${pids[$((copy - 1))]}"; then
        failed=$((failed + 1))
        echo "   round $round copy $copy FAILED; its failures:"
        grep -E "^\[  FAILED  \]|FAILED|Error|error" "$RESULTS/stress-$suite-r$round-c$copy.log" | head -n 8 | sed 's/^/     /'
      fi
    done
    echo "   $suite round $round: failed $failed of $N ($((SECONDS - t0)) s)"
    total_failed=$((total_failed + failed))
  done
done
echo "== stress: $total_failed failed copies in all"
[[ $total_failed == 0 ]]
