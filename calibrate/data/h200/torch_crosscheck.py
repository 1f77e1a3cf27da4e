"""Cross-checks run beside `trainsim-calibrate run --backend cuda` on one GPU (device run of 2026-11-28).

PyTorch's own paths to the same libraries: bf16 matmul (cuBLAS/cuBLASLt) and FP8 torch._scaled_mm with
fast accumulation on and off, on random data, against the harness's cuBLASLt timings; causal attention
through scaled_dot_product_attention's cuDNN and flash backends (what Transformer Engine and FlashAttention
run), head dim 128 and 64, batch x sequence = 16k tokens as FlashAttention-3's figures use, forward and
forward+backward, against the profile's flash-attention curves; and one profiler trace of the GEMMs
(record_shapes=True) for `trainsim-calibrate import`'s Kineto reader. Writes JSON to $OUT.
Times: CUDA events around 20 back-to-back calls, median of 5 such groups, after 3 warm-up calls."""
import json
import os

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
torch.manual_seed(0)
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(0)
res = {
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
    "cudnn": torch.backends.cudnn.version(),
    "gpu": torch.cuda.get_device_name(0),
    "sms": props.multi_processor_count,
    "memory_bytes": props.total_memory,
    "gemm": [],
    "attention": [],
}


def timed(fn, warm=3, iters=20, groups=5):
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


def gemm_cases():
    # (m, n, k): cubes, and Megatron-shaped ones (tokens x out x in).
    return [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384), (8192, 12288, 4096),
            (8192, 4096, 16384), (16384, 6144, 4096), (8192, 28672, 8192)]


for m, n, k in gemm_cases():
    flops = 2.0 * m * n * k
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    t = timed(lambda: torch.matmul(a, b))
    res["gemm"].append({"m": m, "n": n, "k": k, "dtype": "bf16", "seconds": t, "tflops": flops / t / 1e12})
    a8 = (a * 0.5).to(torch.float8_e4m3fn)
    b8 = (b * 0.5).to(torch.float8_e4m3fn).t().contiguous().t()  # column-major, as _scaled_mm wants
    one = torch.tensor(1.0, device=dev)
    for fast in (True, False):
        t = timed(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                           use_fast_accum=fast))
        res["gemm"].append({"m": m, "n": n, "k": k, "dtype": "fp8" if fast else "fp8_split_accumulator",
                            "seconds": t, "tflops": flops / t / 1e12})
    del a, b, a8, b8
    torch.cuda.empty_cache()

from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

for backend_name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
    for d in (128, 64):
        heads = 2048 // d  # hidden 2048, as FlashAttention-3's benchmarks
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            batch = 16384 // seq
            q, kk, v = (torch.randn(batch, heads, seq, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                        for _ in range(3))
            grad = torch.randn(batch, heads, seq, d, device=dev, dtype=torch.bfloat16)
            row = {"backend": backend_name, "head_dim": d, "heads": heads, "seq": seq, "batch": batch,
                   "causal": True}
            try:
                with sdpa_kernel([backend]):
                    fwd = timed(lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True))

                    def step():
                        o = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
                        torch.autograd.grad(o, (q, kk, v), grad)

                    both = timed(step)
                # FlashAttention's convention: forward 4 s^2 d FLOPs per head, halved when causal;
                # backward 2.5x the forward.
                f = 4.0 * batch * heads * seq * seq * d / 2.0
                row.update({"forward_s": fwd, "backward_s": both - fwd, "forward_tflops": f / fwd / 1e12,
                            "backward_tflops": 2.5 * f / (both - fwd) / 1e12})
            except Exception as exc:  # a backend that refuses a shape is recorded, not fatal
                row["error"] = str(exc).splitlines()[0][:200]
            res["attention"].append(row)
            del q, kk, v, grad
    torch.cuda.empty_cache()

with open(os.path.join(OUT, "torch_crosscheck.json"), "w") as fh:
    json.dump(res, fh, indent=1)

# A profiler trace of a few GEMMs as PyTorch writes it, for the Kineto importer's tests.
a = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16)
w = torch.randn(12288, 4096, device=dev, dtype=torch.bfloat16)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                            record_shapes=True) as prof:
    for _ in range(3):
        y = F.linear(a, w)
        z = torch.matmul(y, w)
        z.add_(1.0)
    torch.cuda.synchronize()
prof.export_chrome_trace(os.path.join(OUT, "h200_gemm_trace.json"))

for g in res["gemm"]:
    print(f"gemm {g['m']}x{g['n']}x{g['k']} {g['dtype']:>22}: {g['tflops']:7.1f} TFLOP/s")
for r in res["attention"]:
    if "error" in r:
        print(f"attn {r['backend']} d{r['head_dim']} s{r['seq']}: {r['error']}")
    else:
        print(f"attn {r['backend']} d{r['head_dim']} s{r['seq']}: fwd {r['forward_tflops']:6.1f} "
              f"bwd {r['backward_tflops']:6.1f} TFLOP/s")
