"""Converts the device run of 2026-11-28 (this folder, README.md) into trainsim measurement files:

  h200-torch-gemms.measurements.json  every dense GEMM shape through PyTorch (torch_scenario_gemms.json):
                                      bf16, FP8 fast accumulation, FP8 split accumulator
  h200-cuda-gemms.measurements.json   the GEMM records of trainsim-calibrate's own run (h200-cuda-run.json,
                                      medians), without its device context, so that a profile of another
                                      GPU with the same chip (H100 SXM5: GH100, 132 SMs) can take its GEMM
                                      curves from them without the H200's HBM, memory or name

Run from the repository root: python3 calibrate/data/h200/to_measurements.py"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE = ("one NVIDIA H200 SXM 141GB (driver 580, CUDA 13.0, 132 SMs, 700 W power limit) lent to the "
          "trainsim session of 2026-11-28; calibrate/data/h200/README.md")


def write(name, description, sources, gemms):
    doc = {"schema": "trainsim-measurements/1", "description": description, "sources": sources,
           "gemm": gemms, "kernels": [], "collectives": []}
    with open(os.path.join(HERE, name), "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")


def wave_factor(m, n, k, sms=132, tile_m=256, tile_n=128):
    """The cost model's wave factor (calibrate/fit/gemm_fit.cc gemm_wave_factor, the profiles' 256x128 tile)."""
    tiles = -(-m // tile_m) * -(-n // tile_n)
    cube_tiles = (m * n * k) ** (2.0 / 3.0) / (tile_m * tile_n)
    return min(1.0, min(1.0, tiles / sms) / min(1.0, cube_tiles / sms))


# Left out of the files (README.md, "What the model cannot hold"): shapes with fewer output tiles than SMs
# and a deep K, which cuBLASLt splits along K, so that they run faster than the wave factor allows and no
# curve of fractions of the peak can hold them. Their timings stay in torch_scenario_gemms.json.
SPLIT_K = {(512, 2688, 18432), (512, 2304, 18432), (512, 3072, 12288)}

# PyTorch's calls below 1e10 FLOPs (the 128-1024 cubes) are timed from a Python loop that cannot issue them
# as fast as the GPU runs them (16-18 us a call where cuBLASLt driven from C++ takes 7-11 us): they measure
# the host, so only the harness's records cover that range.
TORCH_MIN_FLOPS = 1e10

torch_rows = json.load(open(os.path.join(HERE, "torch_scenario_gemms.json")))
gemms = []
for r in torch_rows["rows"]:
    if (r["m"], r["n"], r["k"]) in SPLIT_K:
        assert wave_factor(r["m"], r["n"], r["k"]) < 0.4
        continue
    if 2.0 * r["m"] * r["n"] * r["k"] < TORCH_MIN_FLOPS:
        continue
    for key, dtype in (("bf16_s", "bf16"), ("fp8_s", "fp8"), ("fp8_split_accumulator_s", "fp8_split_accumulator")):
        if key not in r:
            continue
        gemms.append({"id": f"torch-{dtype}-{r['m']}x{r['n']}x{r['k']}", "m": r["m"], "n": r["n"], "k": r["k"],
                      "batch": r["batch"], "class": "dense", "dtype": dtype, "time_us": round(r[key] * 1e6, 3),
                      "source": "S-H200-TORCH", "tags": ["torch", dtype]})
write("h200-torch-gemms.measurements.json",
      "Dense GEMMs on one H200 through PyTorch " + torch_rows["torch"] + " (CUDA " + torch_rows["cuda"] +
      "): torch.matmul in bf16 and torch._scaled_mm with FP8 E4M3 inputs and BF16 output, fast accumulation "
      "on (dtype fp8) and off (fp8_split_accumulator), random data, every shape of dense_gemm_shapes.json "
      "(torch_scenario_gemms.py), from 1e10 FLOPs up (below, a Python loop times the host: to_measurements.py).",
      {"S-H200-TORCH": DEVICE + ": calibrate/data/h200/torch_scenario_gemms.py -> torch_scenario_gemms.json"},
      gemms)

run = json.load(open(os.path.join(HERE, "h200-cuda-run.json")))
gemms = []
pattern = re.compile(r"gemm/m:(\d+)/n:(\d+)/k:(\d+)/batch:(\d+)/class:(\w+)/dtype:(\w+?)/")
for b in run["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    m = pattern.match(b["name"])
    if not m or m[5] != "dense":
        continue
    assert b["time_unit"] == "us"
    dims = [int(m[i]) for i in range(1, 5)]
    if tuple(dims[:3]) in SPLIT_K:
        continue
    gemms.append({"id": f"cuda-{m[6]}-{dims[0]}x{dims[1]}x{dims[2]}", "m": dims[0], "n": dims[1], "k": dims[2],
                  "batch": dims[3], "class": "dense", "dtype": m[6], "time_us": round(b["real_time"], 3),
                  "source": "S-H200-CUDA", "tags": ["cublaslt", m[6]]})
write("h200-cuda-gemms.measurements.json",
      "Dense GEMMs on one H200 timed by trainsim-calibrate run --backend cuda (cuBLASLt, first heuristic "
      "algorithm, 32 MiB workspace, random data; medians of 3 repetitions): every bf16 shape of the plan, "
      "and FP8 for the cubes 128 to 8192 (the run's 270 s limit ended it there).",
      {"S-H200-CUDA": DEVICE + ": calibrate/data/h200/device_run.sh -> h200-cuda-run.json"}, gemms)
print(len(torch_rows["rows"]), "torch shapes;", len(gemms), "cuBLASLt records")
