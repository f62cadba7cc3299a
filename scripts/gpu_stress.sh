#!/usr/bin/env bash
# Contention as a standing check: every GPU test binary run as N concurrent copies on the one
# GPU, for ROUNDS rounds, the way a shared GPU is used (a training job, a second scan, a
# notebook beside each other). A copy that fails is a failure of the round; the log of each copy
# is kept. Test cases whose CPU reference dominates their time (the whole-run comparisons with
# the CPU runner, the 64-bit indexing cases, the rows kernel's cases other than the pz circuits
# at B = 257) are left out of the copies: they load the CPU, not the GPU, and the plain run
# (scripts/test_gpu.sh) runs them.
# The cases that take the device's memory on purpose (CudaMemoryExhausted) are left out too: the
# copies beside them would run out of memory by design.
#
# Usage: bash scripts/gpu_stress.sh [--together] [--seconds S] BUILD_DIR N ROUNDS RESULTS_DIR [SUITE...]
#   SUITE: qkan, prop, faults, python (default: all); LOCKSTEP_PYTHON_TESTS overrides the pytest
#   file list of the python suite.
#   --together: each round starts the N copies of every suite at once (N × suites processes on
#   the GPU), instead of one suite after the other: harsher, and slower on a 16-core host (one
#   round of 8 copies of the four suites, 32 processes, ran past 530 s on an H100 host).
#   --seconds S: starts no round that would end after S seconds, judged by the last round's
#   time (the rounds run are reported); each round runs every suite, so all suites run the same
#   number of rounds.
#   --copy-timeout S: a copy still running after S seconds is killed and counts as failed,
#   "timed out" (default 1200), so that a copy that waits forever shows as such.
# Prints one line per suite and round ("failed: K of N"), and a summary; exits 1 on any failure.
set -uo pipefail
TOGETHER=0 SECONDS_LIMIT=0 COPY_TIMEOUT=1200
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --together) TOGETHER=1; shift ;;
    --seconds) SECONDS_LIMIT="$2"; shift 2 ;;
    --copy-timeout) COPY_TIMEOUT="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
BUILD="$1"; N="$2"; ROUNDS="$3"; RESULTS="$4"; shift 4
SUITES=("$@"); [[ ${#SUITES[@]} -gt 0 ]] || SUITES=(qkan prop faults python)
mkdir -p "$RESULTS"
PY="${PYTHON:-python3}"

suite_command() {  # the command one copy of a suite runs
  case "$1" in
    qkan)
      # The rows kernel's cases keep the pz circuits at B = 257 (the others' CPU reference takes
      # 2-20 s each: 8 copies of them spent minutes on the CPU per round).
      echo "$BUILD/tests/cpp/lockstep_cuda_tests --gtest_filter=-*L16*:CudaLarge.*:QkanRows/*B513*:QkanRows/*/real_*:QkanRows/*/rpz_*:QkanRows/*/px_*:QkanRows/*/mix_*" ;;
    prop) echo "$BUILD/tests/cpp/prop/lockstep_prop_cuda_tests --gtest_filter=-CudaRunner.DudleyAdaptiveMatchesCpu:CudaRunner.ShotNoiseEnsembleMatchesCpu" ;;
    faults)
      local prop_faults="$BUILD/tests/cpp/prop/lockstep_prop_cuda_fault_tests"
      if [[ -x "$prop_faults" ]]; then echo "$prop_faults --gtest_filter=-CudaMemoryExhausted.* && $BUILD/tests/cpp/lockstep_cuda_fault_tests"
      else echo "$BUILD/tests/cpp/lockstep_cuda_fault_tests"; fi ;;
    python) echo "$PY -m pytest -q -x -p no:cacheprovider --durations=15 ${LOCKSTEP_PYTHON_TESTS:-tests/python/test_cuda.py tests/python/test_prop_cuda.py}" ;;
    *) echo "unknown suite $1" >&2; return 1 ;;
  esac
}

# round SUITE...: one round of N copies of each suite, all started at once; counts the failures.
round() {
  local t0=$SECONDS suite copy cmd pids=() logs=() failed=0 i
  for suite in "$@"; do
    cmd="$(suite_command "$suite")" || exit 2
    for ((copy = 1; copy <= N; copy++)); do
      logs+=("$RESULTS/stress-$suite-r$r-c$copy.log")
      timeout --kill-after=10 "$COPY_TIMEOUT" bash -c "$cmd" >"${logs[-1]}" 2>&1 &
      pids+=($!)
    done
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    local rc=$?
    if ((rc != 0)); then
      failed=$((failed + 1))
      if ((rc == 124 || rc == 137)); then echo "   ${logs[$i]} TIMED OUT after $COPY_TIMEOUT s; its last lines:"; tail -n 4 "${logs[$i]}" | sed 's/^/     /'; continue; fi
      echo "   ${logs[$i]} FAILED; its failures:"
      grep -E "^\[  FAILED  \]|FAILED|Error|error" "${logs[$i]}" | head -n 8 | sed 's/^/     /'
    fi
  done
  echo "   $* round $r: failed $failed of $((N * $#)) ($((SECONDS - t0)) s)"
  total_failed=$((total_failed + failed))
}

total_failed=0 rounds_run=0
GROUPS_RUN=()
if ((TOGETHER)); then GROUPS_RUN=("${SUITES[*]}"); else GROUPS_RUN=("${SUITES[@]}"); fi
for suite in "${SUITES[@]}"; do echo "== stress $suite: $N copies of: $(suite_command "$suite")"; done
# Round r runs every suite (one after the other, or together), so that a time limit cuts all
# suites to the same number of rounds.
last_round=0
for ((r = 1; r <= ROUNDS; r++)); do
  if ((SECONDS_LIMIT > 0 && SECONDS + last_round > SECONDS_LIMIT)); then
    echo "   stopped after $((r - 1)) rounds of $ROUNDS: another round ($last_round s the last) would pass the $SECONDS_LIMIT s given"
    break
  fi
  round_start=$SECONDS
  for group in "${GROUPS_RUN[@]}"; do
    read -ra members <<<"$group"
    round "${members[@]}"
  done
  last_round=$((SECONDS - round_start))
  rounds_run=$((rounds_run + 1))
done
echo "== stress: $total_failed failed copies in all, $rounds_run rounds"
[[ $total_failed == 0 ]]
