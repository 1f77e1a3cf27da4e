#!/usr/bin/env bash
# Installs the Debian packages trainsim needs to build and test, and any named, those not installed yet.
#   scripts/install_packages.sh [PACKAGE...]     e.g. results/regenerate.sh adds python3-matplotlib
set -euo pipefail

packages=(cmake ninja-build g++ libboost-graph-dev libboost-program-options-dev libeigen3-dev
          nlohmann-json3-dev zlib1g-dev libbenchmark-dev libgtest-dev clang libclang-rt-14-dev libopenmpi-dev
          openmpi-bin python3-dev pybind11-dev libprotobuf-dev protobuf-compiler python3-jsonschema "$@")
# The headless browser that draws the HTML report in its screenshot test, without its recommended
# packages (systemd, perl, printing: 129 packages instead of 18; about 30 s instead of minutes).
bare_packages=(chromium-headless-shell)
missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(missing_of "${packages[@]}")
mapfile -t missing_bare < <(missing_of "${bare_packages[@]}")
if ((${#missing[@]} + ${#missing_bare[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install_packages: installing ${missing[*]} ${missing_bare[*]}" >&2
  $sudo apt-get update -qq
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  fi
  if ((${#missing_bare[@]})); then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing_bare[@]}"
  fi
fi
