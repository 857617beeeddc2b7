#!/usr/bin/env bash
# The sanitizer builds (clang), each with only the model and the driver:
#  1. build-fuzz/: libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer. Each fuzz target
#     (tests/fuzz) runs for a fixed number of inputs, then the multi-threaded stress program.
#  2. build-tsan/: ThreadSanitizer, the stress program again.
#   scripts/sanitizers.sh                     what CI runs (MIMIC_FUZZ_RUNS, default 100000)
#   MIMIC_FUZZ_RUNS=-1 scripts/sanitizers.sh  fuzz until a crash or Ctrl-C (long runs; the
#                                             corpus grows in build-fuzz/corpus/<target>)
# A crash leaves its input in build-fuzz/crash-*: rerun one with
#   build-fuzz/tests/fuzz/mimic-fuzz-<target> build-fuzz/crash-<hash>
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_DIR="${MIMIC_FUZZ_DIR:-build-fuzz}"
RUNS="${MIMIC_FUZZ_RUNS:-100000}"
if [[ ! -f "$FUZZ_DIR/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$FUZZ_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIMIC_FUZZ=ON \
    >/dev/null
fi
cmake --build "$FUZZ_DIR" -j2
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
# SystemC switches stacks (its coroutines), which AddressSanitizer's fake stacks cannot follow.
export ASAN_OPTIONS="detect_stack_use_after_return=0:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
for target in assembler image driver_api kernel; do
  corpus="$FUZZ_DIR/corpus/$target"
  mkdir -p "$corpus"
  cp -n tests/fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  log="$FUZZ_DIR/fuzz-$target.log"
  runs="$RUNS"
  # Each kernel input loads, launches and synchronises a kernel (about 0.75 ms here, several
  # times the other targets): half the runs, 50000 in about 40 s, keep it under a minute.
  if [[ "$target" == kernel && "$RUNS" -gt 0 ]]; then runs=$((RUNS / 2)); fi
  if (cd "$FUZZ_DIR" && "tests/fuzz/mimic-fuzz-$target" -runs="$runs" -seed=1 -max_len=4096 \
        -print_final_stats=1 "corpus/$target") >"$log" 2>&1; then
    echo "fuzz: $target: $runs runs, no crash ($(grep -c . "$log") log lines in $log)"
  else
    tail -n 60 "$log"
    echo "fuzz: $target FAILED; its log is $log" >&2
    exit 1
  fi
done
echo "stress: host threads on many queues and devices, under ASan and UBSan"
"$FUZZ_DIR/tests/fuzz/mimic-stress-threads"

TSAN_DIR="${MIMIC_TSAN_DIR:-build-tsan}"
if [[ ! -f "$TSAN_DIR/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$TSAN_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIMIC_TSAN=ON \
    >/dev/null
fi
cmake --build "$TSAN_DIR" -j2
echo "stress: the same under ThreadSanitizer"
# Debian's libtbb is not instrumented, so ThreadSanitizer cannot see how its tasks synchronise:
# one host worker thread (MIMIC_HOST_THREADS=1) keeps kernels on the calling thread.
MIMIC_HOST_THREADS=1 TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$TSAN_DIR/tests/fuzz/mimic-stress-threads"
