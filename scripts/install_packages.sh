#!/usr/bin/env bash
# Installs the Debian packages trainsim needs to build and test, and any named, those not installed yet.
#   scripts/install_packages.sh [PACKAGE...]     e.g. results/regenerate.sh adds python3-matplotlib
set -euo pipefail

packages=(cmake ninja-build g++ libboost-graph-dev libboost-program-options-dev libeigen3-dev
          nlohmann-json3-dev zlib1g-dev libbenchmark-dev libgtest-dev clang libclang-rt-14-dev libopenmpi-dev
          openmpi-bin python3-dev pybind11-dev libprotobuf-dev protobuf-compiler "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install_packages: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
