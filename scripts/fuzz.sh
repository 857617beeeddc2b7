#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/, and runs each for a fixed number of inputs.
#   scripts/fuzz.sh                     the short run CI does (MIMIC_FUZZ_RUNS, default 100000)
#   MIMIC_FUZZ_RUNS=-1 scripts/fuzz.sh  run until a crash or Ctrl-C (long runs; the corpus
#                                       grows in build-fuzz/corpus/<target>)
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
for target in assembler image driver_api; do
  corpus="$FUZZ_DIR/corpus/$target"
  mkdir -p "$corpus"
  cp -n tests/fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  log="$FUZZ_DIR/fuzz-$target.log"
  if (cd "$FUZZ_DIR" && "tests/fuzz/mimic-fuzz-$target" -runs="$RUNS" -seed=1 -max_len=4096 \
        -print_final_stats=1 "corpus/$target") >"$log" 2>&1; then
    echo "fuzz: $target: $RUNS runs, no crash ($(grep -c . "$log") log lines in $log)"
  else
    tail -n 60 "$log"
    echo "fuzz: $target FAILED; its log is $log" >&2
    exit 1
  fi
done
