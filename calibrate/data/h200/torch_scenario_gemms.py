"""Every dense GEMM shape of the device run's plan (dense_gemm_shapes.json) through PyTorch on random data:
bf16 torch.matmul, and FP8 (E4M3) torch._scaled_mm with fast accumulation on (Transformer Engine's forward)
and off (its dgrad and wgrad), both cuBLASLt underneath. Written because trainsim-calibrate's own run of
2026-11-28 reached the FP8 cubes up to 8192 only before its time limit (calibrate/data/h200/README.md).
C[m, n] = A[m, k] . B[k, n]. Times: CUDA events around 10 back-to-back calls, median of 3 groups, after 3
warm-up calls. Writes $OUT/torch_scenario_gemms.json."""
import json
import os

import torch

OUT = os.environ.get("OUT", ".")
here = os.path.dirname(os.path.abspath(__file__))
shapes = json.load(open(os.path.join(here, "dense_gemm_shapes.json")))["shapes"]
dev = torch.device("cuda")
torch.manual_seed(0)


def timed(fn, warm=3, iters=10, groups=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(groups):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / iters)
    ts.sort()
    return ts[len(ts) // 2]


rows = []
one = torch.tensor(1.0, device=dev)
for m, n, k, batch in shapes:
    assert batch == 1
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    row = {"m": m, "n": n, "k": k, "batch": batch, "bf16_s": timed(lambda: torch.matmul(a, b))}
    a8 = (a * 0.5).to(torch.float8_e4m3fn)
    b8 = (b * 0.5).to(torch.float8_e4m3fn).t().contiguous().t()
    for fast, key in ((True, "fp8_s"), (False, "fp8_split_accumulator_s")):
        try:
            row[key] = timed(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                      use_fast_accum=fast))
        except Exception as exc:  # _scaled_mm needs m, n, k multiples of 16
            row[key + "_error"] = str(exc).splitlines()[0][:200]
    rows.append(row)
    del a, b, a8, b8
torch.cuda.empty_cache()
json.dump({"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
           "rows": rows}, open(os.path.join(OUT, "torch_scenario_gemms.json"), "w"), indent=1)
for r in rows:
    f = 2.0 * r["m"] * r["n"] * r["k"]
    print(r["m"], r["n"], r["k"], *(f"{f / r[k] / 1e12:.0f}" if k in r else "-"
                                    for k in ("bf16_s", "fp8_s", "fp8_split_accumulator_s")))
