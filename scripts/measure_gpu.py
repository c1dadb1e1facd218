#!/usr/bin/env python3
"""measure_gpu.py: the kernel timings karat prices, measured on a CUDA GPU
through PyTorch (issue 28 item 7).  Run by scripts/measure-gpu.sh on the
GPU machine; it needs torch there and nothing here.

Writes into OUT:
  measured-gemm.csv   GEMMs at decode shapes, BF16 and FP8 (a validation
                      table: the columns of validation/*.csv)
  measured-topk.csv   torch.topk over rows of FP32 scores (a validation table)
  hbm.csv             device-to-device copy bandwidth
  attention.csv       dense GQA decode attention (scaled_dot_product_attention)
  gpu.txt             the GPU, its clocks, torch's version, the command

Each time is the median of CUDA-event timings after warm-up; the weights
of a GEMM rotate over copies larger than the L2, so each call streams
them from HBM as decode does.  --list prints the shapes without torch.
"""
import argparse
import csv
import os
import statistics
import sys

# DeepSeek-V3 / V3.2 decode GEMMs (hidden 7168): the query down projection,
# the KV down projection, an expert's gate-and-up and down, the output
# projection of 128 heads x 128; m is the tokens a GPU runs at once.
GEMM_NK = [(1536, 7168), (576, 7168), (4096, 7168), (7168, 2048), (7168, 16384)]
GEMM_M = [1, 8, 16, 32, 64, 128, 256]
TOPK = [(rows, n, k) for rows in (1, 4, 16, 64, 256) for n in (8192, 65536, 131072)
        for k in (512, 2048) if k < n]
# GQA decode: batch x context, 64 query heads over 8 KV heads of 128 (Llama-3.1-70B)
ATTN = [(b, ctx) for b in (1, 8, 32, 128) for ctx in (4096, 32768)]
COLUMNS = ["kernel", "model", "device", "dtype", "batch", "context", "heads", "q_len", "topk",
           "m", "n", "k", "groups", "gpus", "measured", "unit", "source"]


def time_us(torch, fn, reps=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def row(**kw):
    r = {c: "" for c in COLUMNS}
    r.update({k: str(v) for k, v in kw.items()})
    return r


def gemms(torch, src):
    out = []
    dev = torch.device("cuda")
    for n, k in GEMM_NK:
        copies = max(2, int(256e6 // (n * k * 2)) + 1)  # > 256 MB of weights: past the L2
        wb = [torch.randn(n, k, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
        w8 = [w.to(torch.float8_e4m3fn) for w in wb]
        one = torch.ones((), device=dev, dtype=torch.float32)
        done8 = set()
        for m in GEMM_M:
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            i = [0]

            def bf16():
                i[0] = (i[0] + 1) % copies
                return x @ wb[i[0]].t()
            out.append(row(kernel="gemm", device="h200", dtype="bf16", m=m, n=n, k=k,
                           measured="%.3f" % time_us(torch, bf16), unit="us", source=src))
            # FP8 wants m in multiples of 16: the kernel a serving engine
            # pads a smaller batch to
            m8 = max(16, (m + 15) // 16 * 16)
            if m8 in done8:
                continue
            done8.add(m8)
            x8 = torch.randn(m8, k, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn)

            def fp8():
                i[0] = (i[0] + 1) % copies
                return torch._scaled_mm(x8, w8[i[0]].t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16)
            try:
                t = time_us(torch, fp8)
                out.append(row(kernel="gemm", device="h200", dtype="fp8", m=m8, n=n, k=k,
                               measured="%.3f" % t, unit="us", source=src + " (torch._scaled_mm)"))
            except RuntimeError as e:  # a shape the FP8 kernel refuses
                print("fp8 %dx%dx%d: %s" % (m8, n, k, e), file=sys.stderr)
        del wb, w8
        torch.cuda.empty_cache()
    return out


def topks(torch, src):
    out = []
    for rows, n, k in TOPK:
        s = torch.randn(rows, n, device="cuda", dtype=torch.float32)
        t = time_us(torch, lambda: torch.topk(s, k, dim=-1))
        out.append(row(kernel="topk", device="h200", dtype="fp32", batch=rows, context=n,
                       topk=k, measured="%.3f" % t, unit="us", source=src + " (torch.topk)"))
    return out


def hbm(torch):
    out = []
    for mb in (64, 256, 1024, 4096):
        a = torch.empty(mb << 20, device="cuda", dtype=torch.uint8)
        b = torch.empty_like(a)
        t = time_us(torch, lambda: b.copy_(a), reps=20, warm=5)
        out.append({"bytes": mb << 20, "us": "%.3f" % t,
                    "gb_s_read_and_written": "%.1f" % (2 * (mb << 20) / t / 1e3)})
    return out


def attention(torch):
    out = []
    F = torch.nn.functional
    for b, ctx in ATTN:
        q = torch.randn(b, 64, 1, 128, device="cuda", dtype=torch.bfloat16)
        kv = torch.randn(b, 8, ctx, 128, device="cuda", dtype=torch.bfloat16)
        try:
            t = time_us(torch, lambda: F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True))
        except (RuntimeError, TypeError) as e:
            print("attention %d x %d: %s" % (b, ctx, e), file=sys.stderr)
            continue
        out.append({"batch": b, "context": ctx, "heads": 64, "kv_heads": 8, "head_dim": 128,
                    "dtype": "bf16", "us": "%.3f" % t,
                    "kv_gb_s": "%.1f" % (2 * b * 8 * ctx * 128 * 2 / t / 1e3)})
    return out


def write(path, rows, cols):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/measured")
    ap.add_argument("--list", action="store_true", help="print the shapes, measure nothing")
    a = ap.parse_args()
    if a.list:
        m8 = {max(16, (m + 15) // 16 * 16) for m in GEMM_M}
        print("gemm (n, k) x m: %d bf16, %d fp8" % (len(GEMM_NK) * len(GEMM_M),
                                                  len(GEMM_NK) * len(m8)))
        print("topk (rows, n, k): %d" % len(TOPK))
        print("attention (batch, context): %d" % len(ATTN))
        return 0
    import torch
    if not torch.cuda.is_available():
        print("measure_gpu.py: no CUDA device", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    name = torch.cuda.get_device_name(0)
    src = "measured: scripts/measure-gpu.sh on %s, torch %s" % (name, torch.__version__)
    write(os.path.join(a.out, "measured-gemm.csv"), gemms(torch, src), COLUMNS)
    write(os.path.join(a.out, "measured-topk.csv"), topks(torch, src), COLUMNS)
    write(os.path.join(a.out, "hbm.csv"), hbm(torch), ["bytes", "us", "gb_s_read_and_written"])
    write(os.path.join(a.out, "attention.csv"), attention(torch),
          ["batch", "context", "heads", "kv_heads", "head_dim", "dtype", "us", "kv_gb_s"])
    with open(os.path.join(a.out, "gpu.txt"), "a") as f:
        f.write("device %s, torch %s, cuda %s\ncommand: %s\n" %
                (name, torch.__version__, torch.version.cuda, " ".join(sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
