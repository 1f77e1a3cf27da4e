#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, AddressSanitizer and UndefinedBehaviorSanitizer and runs
# each one, starting from fuzz/corpus/TARGET, for its share of SECONDS (default 60 in all, what CI runs),
# as many at a time as there are cores. Fails on any crash, sanitizer report, leak, input slower than
# 20 s or over 2 GB: libFuzzer stops and leaves the input in build-asan/fuzz/findings/, to replay with
# `build-asan/fuzz/TARGET FILE`. New inputs accumulate in build-asan/fuzz/corpus/TARGET (fuzz/corpus
# stays as committed).
#
# The build directory is scripts/sanitize.sh's (scripts/configure_sanitized.sh): after it, only the fuzz
# targets themselves are compiled.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-60}
shift || true

if [ "$(scripts/configure_sanitized.sh)" != clang++ ]; then
  echo "fuzz: needs clang++ (libFuzzer); scripts/install_packages.sh installs it" >&2
  exit 1
fi
cmake --build build-asan --target fuzzers
out=build-asan/fuzz
mkdir -p $out/findings $out/logs

targets=("$@")
if ((${#targets[@]} == 0)); then
  read -r -a targets <<< "$(tr ';' ' ' < $out/fuzzers.txt)"
  # Fuzzers of code outside sim/ (calibrate/'s importer): run when they build, said loudly when not.
  read -r -a optional <<< "$(tr ';' ' ' < $out/optional_fuzzers.txt)"
  for target in "${optional[@]}"; do
    if cmake --build build-asan --target "$target" > "$out/logs/build-$target.log" 2>&1; then
      targets+=("$target")
    else
      echo "fuzz: WARNING: $target does not build with clang; not run ($out/logs/build-$target.log)"
    fi
  done
else
  cmake --build build-asan --target "${targets[@]}"
fi
jobs=$(nproc)
((jobs > ${#targets[@]})) && jobs=${#targets[@]}
# Each target's share of the wall-clock budget when `jobs` of them run side by side.
waves=$(( (${#targets[@]} + jobs - 1) / jobs ))
seconds=$(( total / waves ))
((seconds < 1)) && seconds=1

export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
run_one() {
  local target=$1 seeds=fuzz/corpus/$1 dict=fuzz/$1.dict
  mkdir -p "$out/corpus/$target"
  local args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$out/findings/$target-")
  [ -f "$dict" ] && args+=(-dict="$dict")
  [ -d "$seeds" ] || seeds=
  "$out/$target" "${args[@]}" "$out/corpus/$target" $seeds > "$out/logs/$target.log" 2>&1
}

echo "fuzzing ${targets[*]}: ${seconds} s each, ${jobs} at a time"
failed=()
pids=()
names=()
for target in "${targets[@]}"; do
  run_one "$target" &
  pids+=($!)
  names+=("$target")
  if ((${#pids[@]} == jobs)); then
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || failed+=("${names[$i]}")
    done
    pids=()
    names=()
  fi
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done

for target in "${targets[@]}"; do
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/logs/$target.log" | tail -1)
  printf '%-24s %10s inputs\n' "$target" "${runs:-?}"
done
if ((${#failed[@]})); then
  for target in "${failed[@]}"; do
    echo "== $target failed; its log ($out/logs/$target.log) ends:"
    tail -40 "$out/logs/$target.log"
  done
  echo "fuzz: FAILED: ${failed[*]} (inputs in $out/findings/)"
  exit 1
fi
echo "fuzz: no crash"
