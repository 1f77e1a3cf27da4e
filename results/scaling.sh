#!/usr/bin/env bash
# How the simulator's own time and memory grow with GPUs, micro-batches and layers:
#   results/scaling.sh            (about 6 minutes on a 2-core machine)
# Runs `trainsim run` on scenarios/llama3-405b-16384gpu.json (TP 8, PP 16, v 2) with overrides, folded
# (the default, one simulated GPU per pipeline stage) and with --fold none (every GPU) where it fits in a
# few GiB, each under /usr/bin/time; writes results/data/simulator_scaling.csv and prints it as the
# markdown table of results/README.md ("Simulator speed and memory").
#   - GPUs: d = 8 … 128 (1,024 … 16,384 GPUs) at 16 micro-batches per pipeline (batch 16·d: weak scaling);
#   - micro-batches: 16 … 256 per pipeline at 16,384 GPUs folded, 16 … 128 at 1,024 GPUs unfolded;
#   - layers: 32 … 256 at 16,384 GPUs folded, 1,024 GPUs unfolded.
# Uses build/trainsim unless TRAINSIM=path/to/trainsim. Folded points take the best of 3 runs (the
# machine may be shared); unfolded points run once.
set -euo pipefail
cd "$(dirname "$0")/.."
trainsim=${TRAINSIM:-build/trainsim}
scenario=scenarios/llama3-405b-16384gpu.json
out=results/data/simulator_scaling.csv
[ -x "$trainsim" ] || { echo "scaling: no $trainsim (build it, or set TRAINSIM)" >&2; exit 2; }
mkdir -p results/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "axis,gpus,data_parallel,layers,microbatches,fold,simulated_gpus,events,iteration_time_s,cpu_s,wall_s,peak_rss_mib" > "$tmp/csv"

# point AXIS D LAYERS MICROBATCHES FOLD
point() {
  local axis=$1 d=$2 layers=$3 m=$4 fold=$5
  local batch=$((m * d)) runs=1 best_cpu="" best_wall="" rss=0
  [ "$fold" = "tp,dp" ] && runs=3
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%U %S %e %M" -o "$tmp/time" "$trainsim" run "$scenario" --format json --fold "$fold" \
      --set parallelism.data_parallel_size="$d" --set model.num_layers="$layers" \
      --set training.global_batch_size="$batch" > "$tmp/json"
    read -r user sys wall kb < "$tmp/time"
    local cpu
    cpu=$(python3 -c "print(round($user + $sys, 2))")
    if [ -z "$best_cpu" ] || python3 -c "import sys; sys.exit(0 if $cpu < $best_cpu else 1)"; then
      best_cpu=$cpu
      best_wall=$wall
    fi
    ((kb > rss)) && rss=$kb
  done
  python3 - "$tmp/json" "$axis" "$d" "$layers" "$m" "$fold" "$best_cpu" "$best_wall" "$rss" >> "$tmp/csv" <<'PY'
import json, sys
path, axis, d, layers, m, fold, cpu, wall, rss = sys.argv[1:]
r = json.load(open(path))
fold = "none" if fold == "none" else "tp+dp"
print(f"{axis},{r['num_gpus']},{d},{layers},{m},{fold},{r['simulated_gpus']},{r['events']},"
      f"{r['iteration_time_s']:.9f},{cpu},{wall},{int(rss) // 1024}")
PY
  tail -1 "$tmp/csv" >&2
}

for d in 8 16 32 64 128; do
  point gpus "$d" 128 16 tp,dp
  point gpus "$d" 128 16 none
done
for m in 16 32 64 128 256; do
  point microbatches 128 128 "$m" tp,dp
done
for m in 16 32 64 128; do
  point microbatches 8 128 "$m" none
done
for layers in 32 64 128 256; do
  point layers 128 "$layers" 16 tp,dp
  point layers 8 "$layers" 16 none
done
mv "$tmp/csv" "$out"

# The markdown table; and a check of DESIGN.md §3's promise that folding does not change the answer.
python3 - "$out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| axis | GPUs | layers | micro-batches | fold | simulated GPUs | events | iteration (s) | CPU (s) | wall (s) | peak RSS (MiB) |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['axis']} | {int(r['gpus']):,} | {r['layers']} | {r['microbatches']} | {r['fold']} | "
          f"{int(r['simulated_gpus']):,} | {int(r['events']):,} | {float(r['iteration_time_s']):.4f} | "
          f"{r['cpu_s']} | {r['wall_s']} | {int(r['peak_rss_mib']):,} |")
times = {}
for r in rows:
    times.setdefault((r['gpus'], r['layers'], r['microbatches']), set()).add(r['iteration_time_s'])
bad = [k for k, v in times.items() if len(v) > 1]
if bad:
    print(f"scaling: folded and unfolded iteration times differ at {bad}", file=sys.stderr)
    sys.exit(1)
PY
