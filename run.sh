#!/usr/bin/env bash
# mimic's two commands:
#   ./run.sh        install what is missing, build, and run the main job (`mimic demo`: DDP
#                   training of a small transformer on 2 simulated devices) on the default preset
#   ./run.sh test   install what is missing, build, run every test, a short fuzz run and the
#                   stress program under the sanitizers
# Both are idempotent; a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-demo}"
case "$mode" in
  demo | test) ;;
  *)
    echo "usage: ./run.sh [test]" >&2
    exit 2
    ;;
esac

scripts/install_deps.sh
BUILD_DIR="${MIMIC_BUILD_DIR:-build}"
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" -j2
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

if [[ "$mode" == demo ]]; then
  exec "$BUILD_DIR/bin/mimic" demo
fi
(cd "$BUILD_DIR" && ctest -j2 --output-on-failure --timeout 300)
# Fuzzing and the stress program under AddressSanitizer and ThreadSanitizer (clang builds of
# their own in build-fuzz/ and build-tsan/).
exec scripts/sanitizers.sh
