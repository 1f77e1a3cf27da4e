#!/usr/bin/env bash
# Installs the Debian packages trainsim needs (once, scripts/install_packages.sh), then configures and builds
# it in ./build: everything, or only the targets named.   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_packages.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build ${1:+--target "$@"}
