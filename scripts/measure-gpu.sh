#!/bin/sh
# measure-gpu.sh: measure the kernels karat prices on the GPU machine
# (issue 28 item 7): GEMMs at decode shapes (BF16 and FP8), HBM copy
# bandwidth, torch.topk at the models' rows and lengths, and a dense GQA
# decode attention, through PyTorch (scripts/measure_gpu.py).  Needs
# python3 with torch and a CUDA GPU; nothing of it runs in make test.
#
#   scripts/measure-gpu.sh [OUTDIR]     (default: $OUT, else results/measured)
#   scripts/measure-gpu.sh --list       the shapes it would measure
#
# On the device tool: run with command "scripts/measure-gpu.sh" and a
# timeout of 300 s; the CSVs come back from $OUT.  The GEMM and top-k
# files are validation tables (validation/*.csv's columns): copy them
# into validation/ with the GPU's name and clocks from gpu.txt in their
# source column, and karat validate checks them.
set -eu
here=$(dirname "$0")
if [ "${1:-}" = "--list" ]; then
	exec python3 "$here/measure_gpu.py" --list
fi
out=${1:-${OUT:-results/measured}}
mkdir -p "$out"
{
	date -u
	nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,driver_version,power.limit \
		--format=csv || echo "nvidia-smi failed"
} > "$out/gpu.txt"
PYTHONUNBUFFERED=1 python3 "$here/measure_gpu.py" --out "$out"
# the clocks again, after the load
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$out/gpu.txt" || true
echo "measure-gpu.sh: wrote $out/measured-gemm.csv, measured-topk.csv, hbm.csv, attention.csv, gpu.txt"
