#!/usr/bin/env bash
# The whole test suite, exactly what CI runs (.ci/run): install what is missing and build (scripts/build.sh),
# run calibrate/'s and the Python module's tests, run the unit, CLI, golden and validation tests under
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh), then fuzz every parser and the
# simulator for a minute (scripts/fuzz.sh). Day to day, all of it unsanitized in seconds:
#   scripts/build.sh && ctest --test-dir build --output-on-failure -j2
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase() { echo "== test.sh: $1 done at $((SECONDS - start)) s"; }
# The simulator's suite (trainsim_tests) runs once, under the sanitizers, which check more than the release
# build does; building it a second time, optimised, would cost CI two minutes of its ten. The release build
# compiles everything else and runs the rest: calibrate/'s tests and the Python module's.
scripts/build.sh trainsim trainsim-calibrate trainsim_calibrate_tests trainsim_python trainsim_bench
phase "release build"
ctest --test-dir build --output-on-failure -j"$(nproc)" -E '^trainsim_tests_NOT_BUILT$'
phase "release tests"
scripts/sanitize.sh
phase "sanitized build and suite"
scripts/fuzz.sh 60
phase "fuzzing"
