#!/usr/bin/env bash
# Configures ./build-asan: everything trainsim has (simulator, its tests, calibrate/, the Python module, the
# benchmarks and, with clang, the fuzzers) under AddressSanitizer and UndefinedBehaviorSanitizer.
# scripts/sanitize.sh and scripts/fuzz.sh both call it, so that CI compiles each library once.
# Prints the compiler it chose (clang++, or g++ without fuzzers when clang is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

cxx=clang++
fuzzers=ON
if ! command -v clang++ > /dev/null; then
  cxx=g++
  fuzzers=OFF
fi
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# The Python module is a shared library loaded by the uninstrumented interpreter: its tests preload the
# sanitizer runtime (clang's shared ASan runtime carries the UBSan handlers; gcc's are two libraries).
if [ "$cxx" = clang++ ]; then
  preload=$(clang++ -print-file-name=libclang_rt.asan-x86_64.so)
else
  preload="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
fi
# -O1 keeps the instrumented code fast without inlining away the frames a report names; no NDEBUG, so
# that assertions run as well. The tests' own code (set-up and assertions) is compiled at -O0, 2.6x faster.
# No CUDA: its kernels need a GPU to run, and the CUDA runtime needs ASan's shadow-gap protection off;
# scripts/build.sh compiles them where CUDA is found.
# The libraries and commands compile as unity batches (TRAINSIM_UNITY_BUILD, CMakeLists.txt): their shared
# headers and templates are compiled and instrumented once per batch, not once per file. The one way a batch
# could change what a file means, a file-local function capturing another file's call, is refused in every
# build by the test lint.UnityBatchesCannotCaptureACall (scripts/check_unity_names.py).
# The executables link position-dependent (-no-pie): the sanitizers' metadata gives a PIE trainsim_tests 1.3
# million relative relocations for the loader to apply at each start, and ctest starts it some 830 times;
# a test that does nothing costs 0.082 s of CPU instead of 0.104 s. trainsim_tests' precompiled header also
# holds Boost.Graph (TRAINSIM_TESTS_EXTRA_PCH, CMakeLists.txt).
cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="$sanitizers -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers -no-pie" \
  -DTRAINSIM_BUILD_TESTS=ON -DTRAINSIM_TEST_OPTIMIZATION=-O0 -DTRAINSIM_BUILD_BENCHMARKS=ON \
  -DTRAINSIM_TESTS_EXTRA_PCH="<boost/graph/adjacency_list.hpp>" \
  -DTRAINSIM_BUILD_CALIBRATE=ON -DTRAINSIM_WITH_CUDA=OFF -DTRAINSIM_BUILD_FUZZERS=$fuzzers -DTRAINSIM_UNITY_BUILD=ON \
  -DTRAINSIM_PYTHON_TEST_PRELOAD="$preload" > /dev/null
echo "$cxx"
