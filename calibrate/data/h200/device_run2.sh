#!/bin/bash
# The fourth device call of 2026-11-28, after the harness prepared each benchmark's op once (not per Google
# Benchmark trial and repetition) and estimated its length from two probes: the whole plan of the first run
# (device_run.sh: the 11 NeMo 24.07 scenarios' GEMMs in bf16 and both FP8 accumulators, the kernel grid and
# the scenarios' kernels) in one go. Same binary setup as device_run.sh.
set -u
C=.devcarry
libs=$(find /usr/local /opt /usr/lib \( -name libcublasLt.so.13 -o -name libnccl.so.2 -o -name libcudart.so.13 \) \
           2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$C/lib:$libs
export TRAINSIM_DATA_DIR=$PWD/scenarios
nvidia-smi dmon -s puc -d 1 > $OUT/dmon2.txt 2>&1 &
scen=""
for f in gpt3-5b-64gpu-fp8 gpt3-20b-64gpu-fp8 gpt3-175b-128gpu-fp8 nemotron4-340b-128gpu-fp8 llama2-7b-8gpu-fp8 \
         llama2-13b-16gpu-fp8 llama2-70b-64gpu-fp8 llama3-8b-8gpu-fp8 llama3-70b-64gpu-fp8 nemotron3-22b-64gpu-fp8 \
         nemotron3-8b-64gpu-fp8; do
    scen="$scen --scenario scenarios/nemo/$f.json"
done
echo "== calibrate ($(date -u +%T))"
timeout ${RUN_LIMIT_S:-180} $C/trainsim-calibrate run --backend cuda $scen --min-time 0.02 --repetitions 3 \
    --output $OUT/h200-cuda-run2.json 2> $OUT/h200-cuda-run2.stderr.txt
echo "calibrate rc=$? ($(date -u +%T))"; grep -v '\[=*' $OUT/h200-cuda-run2.stderr.txt | grep -v "left out the scenario" | tail -5
tail -c 250 $OUT/h200-cuda-run2.stderr.txt; echo; ls -la $OUT
