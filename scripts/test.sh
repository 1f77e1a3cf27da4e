#!/usr/bin/env bash
# The whole test suite, exactly what CI runs (.ci/run): install what is missing
# (scripts/install_packages.sh), build everything once under AddressSanitizer and
# UndefinedBehaviorSanitizer and run every test there (scripts/sanitize.sh: the simulator's unit, CLI,
# golden and validation tests, calibrate/'s and the Python module's; then the sweep's threads under
# ThreadSanitizer, tests/tsan/), then fuzz every parser and the
# simulator for a minute (scripts/fuzz.sh). Day to day, all of it unsanitized in seconds:
#   scripts/build.sh && ctest --test-dir build --output-on-failure -j2
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase() { echo "== test.sh: $1 done at $((SECONDS - start)) s"; }
scripts/install_packages.sh
phase "packages"
scripts/sanitize.sh
phase "sanitized build and suite"
scripts/fuzz.sh 60
phase "fuzzing"
