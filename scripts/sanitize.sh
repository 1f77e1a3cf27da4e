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

cxx=$(scripts/configure_sanitized.sh)
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

# ThreadSanitizer cannot share a binary with ASan: the code threads share is built alone in ./build-tsan.
# Older TSan runtimes (clang < 18) abort on kernels with 32 bits of mmap randomisation; then the test runs
# with randomisation off (setarch -R), and where even that is refused it says so loudly and is skipped.
cmake -S tests/tsan -B build-tsan -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=None > /dev/null
cmake --build build-tsan
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
tsan_log=build-tsan/sweep_threads_tsan_test.log
if ! build-tsan/sweep_threads_tsan_test > "$tsan_log" 2>&1; then
  if grep -q "unexpected memory mapping" "$tsan_log"; then
    if ! setarch "$(uname -m)" -R build-tsan/sweep_threads_tsan_test > "$tsan_log" 2>&1; then
      if grep -q "unexpected memory mapping\|Operation not permitted" "$tsan_log"; then
        echo "sanitize: WARNING: ThreadSanitizer cannot run on this kernel; the sweep thread test was not run ($tsan_log)"
        exit 0
      fi
      cat "$tsan_log"
      exit 1
    fi
  else
    cat "$tsan_log"
    exit 1
  fi
fi
tail -n 1 "$tsan_log"
