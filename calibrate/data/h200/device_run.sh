#!/bin/bash
# The device run of 2026-11-28 on one H200 (this workplace's lent GPU), as it was run: the CUDA calibration
# for the GEMM shapes of the NeMo 24.07 validation rows, then the PyTorch cross-checks. The caller copied
# a Release trainsim-calibrate built with -DCMAKE_CUDA_ARCHITECTURES=90 and its two non-CUDA libraries
# (Boost.Program_options, Google Benchmark) into .devcarry/; cuBLASLt, NCCL and the CUDA runtime are the
# device image's. Writes into $OUT.
set -u
C=.devcarry
libs=$(find /usr/local /opt /usr/lib \( -name libcublasLt.so.13 -o -name libnccl.so.2 -o -name libcudart.so.13 \) \
           2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$C/lib:$libs
export TRAINSIM_DATA_DIR=$PWD/scenarios
{ date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE,COMPUTE; echo "libs: $libs"; ldd $C/trainsim-calibrate; } > $OUT/smi.txt 2>&1
nvidia-smi dmon -s puc -d 1 > $OUT/dmon.txt 2>&1 &
scen=""
for f in gpt3-5b-64gpu-fp8 gpt3-20b-64gpu-fp8 gpt3-175b-128gpu-fp8 nemotron4-340b-128gpu-fp8 llama2-7b-8gpu-fp8 \
         llama2-13b-16gpu-fp8 llama2-70b-64gpu-fp8 llama3-8b-8gpu-fp8 llama3-70b-64gpu-fp8 nemotron3-22b-64gpu-fp8 \
         nemotron3-8b-64gpu-fp8; do
    scen="$scen --scenario scenarios/nemo/$f.json"
done
echo "== calibrate ($(date -u +%T))"
timeout 270 $C/trainsim-calibrate run --backend cuda $scen --min-time 0.03 --repetitions 3 \
    --output $OUT/h200_run.json 2> $OUT/calibrate_stderr.txt
echo "calibrate rc=$?"; grep -v '\[=*' $OUT/calibrate_stderr.txt | tail -15; tail -c 300 $OUT/calibrate_stderr.txt; echo
echo "== torch ($(date -u +%T))"
PYTHONUNBUFFERED=1 timeout 100 python3 calibrate/data/h200/torch_crosscheck.py
echo "torch rc=$?"
[ -f $OUT/h200_gemm_trace.json ] && gzip -9 $OUT/h200_gemm_trace.json
{ date -u; nvidia-smi -q -d CLOCK,PERFORMANCE; } > $OUT/smi_after.txt 2>&1
echo "== done ($(date -u +%T))"; ls -la $OUT
