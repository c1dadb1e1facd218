#!/bin/sh
# valgrind's memcheck on a fixed set of commands that reach every layer:
# listing and showing, the operator table, queries (fixed context, trace
# workload, the fluid path), solves at one count and with auto, a sweep
# and its shards merged, a study, figures, quantiles and a failing input.
# Any read of uninitialised memory, invalid access or leak fails it.
# Usage: scripts/memcheck.sh [KARAT]   (make memcheck)
set -eu
cd "$(dirname "$0")/.."
K=${1:-build/karat}
tmp=$(mktemp -d /tmp/karat-memcheck-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 bad=0
vg() { # expected exit status, then the command's arguments
	want=$1
	shift
	n=$((n + 1))
	rc=0
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--track-origins=yes "$K" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	if [ "$rc" = 99 ] || [ "$rc" != "$want" ]; then
		bad=$((bad + 1))
		echo "memcheck: FAILED (exit $rc, expected $want): karat $*" >&2
		sed 's/^/  /' "$tmp/err" | head -40 >&2
	fi
}
cat > "$tmp/s.ini" <<'INI'
[sweep]
model = deepseek-v3.2
system = gpu-only, gpu-karat
context = 4K, 32K
batch = 8
samples = 16
INI
vg 0 list hw
vg 0 show deepseek-v3.2
vg 0 show gpu-karat --set system.gpu=b200
vg 0 show agentic
vg 0 ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K --gpus 8
vg 0 query --model deepseek-v3.2 --system gpu-karat --context 32K --batch 64 --microbatches 2
vg 0 query --model glm-5.2 --system gpu-karat --workload agentic --batch 32 --samples 32
vg 0 query --model deepseek-v3.2 --system gpu-only --workload agentic --batch 4096 --samples 16 --microbatches 2
vg 0 query --model glm-5.2 --system gpu-karat --workload azure-conv --batch 20000 --samples 16 --microbatches 2
vg 0 solve --model minimax-m3 --system gpu-karat --workload agentic --samples 16 --microbatches 2
vg 0 solve --model deepseek-v3.2 --system gpu-attacc --context 16K --samples 8
vg 0 sweep "$tmp/s.ini" --output "$tmp/s.csv" -j 2
vg 0 sweep "$tmp/s.ini" --shard 1/2 --output "$tmp/a.csv"
vg 0 sweep "$tmp/s.ini" --shard 2/2 --output "$tmp/b.csv"
vg 0 merge "$tmp/a.csv" "$tmp/b.csv" --output "$tmp/m.csv"
if command -v gnuplot > /dev/null; then
	vg 0 validate --out "$tmp"
fi
vg 1 query --model deepseek-v3.2 --system gpu-only --context 4K --batch 8 --set moe.experts=1
vg 2 query --model deepseek-v3.2 --system gpu-only --context 4K --batch 8 --set gpu.bandwith=1TB/s
if cmp -s "$tmp/s.csv" "$tmp/m.csv"; then :; else
	bad=$((bad + 1))
	echo "memcheck: the merged shards differ from the sweep" >&2
fi
echo "memcheck: $((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
