#!/usr/bin/env bash
# The whole test suite, exactly what CI runs (.ci/run): install what is missing and build (scripts/build.sh),
# run the unit, CLI, golden and validation tests, run them again under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh), then fuzz every parser and the simulator for a minute
# (scripts/fuzz.sh). For the quick part alone: ctest --test-dir build --output-on-failure -j2
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
scripts/sanitize.sh
scripts/fuzz.sh 60
