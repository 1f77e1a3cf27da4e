#!/usr/bin/env bash
# Builds trainsim and all its tests run with AddressSanitizer and UndefinedBehaviorSanitizer in
# ./build-asan (scripts/configure_sanitized.sh) and runs every test with ctest: the simulator's unit, CLI, golden and
# validation tests, calibrate/'s tests and the Python module's. Any sanitizer report fails the run: ASan
# aborts at the first error and at exit on a leak, and -fno-sanitize-recover=undefined makes every UBSan
# check fatal. The CLI tests run the sanitized trainsim binary, so the command-line paths are checked too.
# This is the only build CI makes: an optimised copy of the same code would check nothing more.
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. scripts/sanitize.sh -R Robustness
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/configure_sanitized.sh > /dev/null
# What the tests run: not the fuzzers, which scripts/fuzz.sh builds (they need the coverage runtime, not the
# tests), nor trainsim_bench, which no test runs (scripts/build.sh compiles it; CI saves its 10 s of
# sanitized compiling). calibrate/ and the Python module exist where their packages were found.
targets=(trainsim trainsim_tests)
for t in trainsim-calibrate trainsim_calibrate_tests trainsim_python; do
  ninja -C build-asan -t query "$t" > /dev/null 2>&1 && targets+=("$t")
done
cmake --build build-asan --target "${targets[@]}"

asan="abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Open MPI's own start-up allocations are never freed, and its plugins are unloaded before LeakSanitizer
# reports, so they cannot be suppressed by name; the Python interpreter keeps its objects alive to exit
# likewise. Those tests run without leak detection (every other check stays on), everything else with it.
unleaky='^SweepMpi\.|^python\.'
if (($#)); then
  ASAN_OPTIONS="$asan:detect_leaks=1" ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@"
  exit
fi
ASAN_OPTIONS="$asan:detect_leaks=1" ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E "$unleaky"
ASAN_OPTIONS="$asan:detect_leaks=0" ctest --test-dir build-asan --output-on-failure -R "$unleaky"
