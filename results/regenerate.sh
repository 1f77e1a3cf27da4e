#!/usr/bin/env bash
# Regenerates everything in results/ from scenarios/ with one command:
#   results/regenerate.sh
# 1. builds trainsim (only the executable, Release, in ./build-results) unless TRAINSIM=path/to/trainsim;
# 2. runs it for every table and figure (results/collect_data.py -> results/data/*.csv, *.json);
# 3. draws the figures (results/plot_figures.py -> results/figures/*.png, *.svg) with Debian's
#    python3-matplotlib, which scripts/install_packages.sh installs when it is missing (root, or sudo), and the two made
#    through the Python module `import trainsim` (results/microbatch_figure.py, results/whatif_figure.py;
#    the module is built beside the executable, in BUILD/python, or taken from TRAINSIM_PYTHONPATH);
# 4. rewrites the generated tables in results/README.md (validation, recompute policies; results/update_readme.py).
# The new data, figures and README are made in a temporary folder and moved into place only when every
# step succeeded: a failed run leaves results/ as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

# Debian packages: the build's and matplotlib.
scripts/install_packages.sh python3-matplotlib

# Debian's matplotlib is importable from Debian's python3, which may not be the first python3 on PATH.
python=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c "import matplotlib" 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "regenerate: no python3 can import matplotlib (install python3-matplotlib)" >&2
  exit 2
fi

if [ -z "${TRAINSIM:-}" ]; then
  build=build-results
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_BUILD_TESTS=OFF \
        -DTRAINSIM_BUILD_BENCHMARKS=OFF -DTRAINSIM_BUILD_CALIBRATE=OFF -DTRAINSIM_BUILD_PYTHON=ON >/dev/null
  cmake --build "$build" --target trainsim trainsim_python
  TRAINSIM=$build/trainsim
fi
# The Python module of the same build (build/python/trainsim*.so beside build/trainsim).
pythonpath=${TRAINSIM_PYTHONPATH:-$(dirname "$TRAINSIM")/python}
if ! PYTHONPATH=$pythonpath "$python" -c "import trainsim" 2>/dev/null; then
  echo "regenerate: cannot import trainsim from $pythonpath (build with pybind11-dev, or set TRAINSIM_PYTHONPATH)" >&2
  exit 2
fi
built=$(date +%s)

tmp=$(mktemp -d results/.regenerate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/data" "$tmp/figures"
"$python" results/collect_data.py --trainsim "$TRAINSIM" --out "$tmp/data"
"$python" results/plot_figures.py --data "$tmp/data" --out "$tmp/figures"
PYTHONPATH=$pythonpath "$python" results/microbatch_figure.py --jobs 2 --out "$tmp/figures"
PYTHONPATH=$pythonpath "$python" results/whatif_figure.py --jobs 2 --out "$tmp/figures"
"$python" results/update_readme.py --data "$tmp/data" --readme results/README.md --out "$tmp/README.md"
# The simulator's own speed is measured by results/scaling.sh (minutes of timed runs, not part of this
# regeneration): keep its table rather than delete it with the old data.
if [ -f results/data/simulator_scaling.csv ]; then
  cp results/data/simulator_scaling.csv "$tmp/data/"
fi

rm -rf results/data results/figures
mv "$tmp/data" results/data
mv "$tmp/figures" results/figures
mv "$tmp/README.md" results/README.md
end=$(date +%s)
echo "regenerate: results/ regenerated in $((end - start)) s (build $((built - start)) s, data and figures $((end - built)) s)"
