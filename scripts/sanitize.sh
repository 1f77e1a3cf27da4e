#!/usr/bin/env bash
# Builds trainsim and its test suite with AddressSanitizer and UndefinedBehaviorSanitizer in ./build-asan
# and runs the suite with ctest. Any sanitizer report fails the run: ASan aborts at the first error and
# at exit on a leak, and -fno-sanitize-recover=undefined makes every UBSan check fatal. The CLI tests run
# the sanitized trainsim binary, so the command-line paths are checked too.
#
# Only the test executable and the CLI it runs are built (no benchmarks, no calibrate/), to keep CI short.
# With clang the same directory also holds the fuzzers (TRAINSIM_BUILD_FUZZERS): scripts/fuzz.sh then
# reuses the sanitized libraries instead of compiling them a second time. Their coverage instrumentation
# costs the tests little, and the sanitizer runtime provides the hooks it calls.
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. scripts/sanitize.sh -R Robustness
set -euo pipefail
cd "$(dirname "$0")/.."

cxx=clang++
fuzzers=ON
if ! command -v clang++ > /dev/null; then
  cxx=g++
  fuzzers=OFF
fi
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# No Python module: an ASan-instrumented extension cannot load into the uninstrumented interpreter.
# -O1 keeps the instrumented suite fast without inlining away the frames a report names; no NDEBUG, so
# that assertions run as well. The tests' own code (set-up and assertions) is compiled at -O0, 2.6x faster. scripts/fuzz.sh configures these same flags.
cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="$sanitizers -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" \
  -DTRAINSIM_BUILD_TESTS=ON -DTRAINSIM_TEST_OPTIMIZATION=-O0 -DTRAINSIM_BUILD_BENCHMARKS=OFF -DTRAINSIM_BUILD_CALIBRATE=OFF \
  -DTRAINSIM_BUILD_FUZZERS=$fuzzers -DTRAINSIM_BUILD_PYTHON=OFF > /dev/null
cmake --build build-asan --target trainsim_tests trainsim

asan="abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Open MPI's own start-up allocations are never freed, and its plugins are unloaded before LeakSanitizer
# reports, so they cannot be suppressed by name: the MPI sweep tests run without leak detection (every
# other check stays on), everything else with it.
mpi_tests='^SweepMpi\.'
if (($#)); then
  ASAN_OPTIONS="$asan:detect_leaks=1" ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@"
  exit
fi
ASAN_OPTIONS="$asan:detect_leaks=1" ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E "$mpi_tests"
ASAN_OPTIONS="$asan:detect_leaks=0" ctest --test-dir build-asan --output-on-failure -R "$mpi_tests"
