#!/bin/sh
# Byte-identical outputs across a restructuring (issue 10): records the
# outputs of a fixed set of commands, then compares later runs with them.
# Usage: scripts/golden.sh record|check [--run]
#   record   writes build/golden/ref/ (do it before the change)
#   check    writes build/golden/now/ and diffs it against ref/
#   --run    also the whole `karat run` study (about 20 s)
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:?usage: scripts/golden.sh record|check [--run]}
full=${2:-}
K=build/karat
case $mode in
record) out=build/golden/ref ;;
check) out=build/golden/now ;;
*) echo "usage: scripts/golden.sh record|check [--run]" >&2; exit 2 ;;
esac
rm -rf "$out"
mkdir -p "$out"
n=0
g() { # one command: its stdout, stderr and exit status
	n=$((n + 1))
	f=$(printf '%s/%02d' "$out" "$n")
	echo "$*" > "$f.cmd"
	rc=0
	"$K" "$@" > "$f.out" 2> "$f.err" || rc=$?
	echo "$rc" > "$f.rc"
	# the checkout's own path, so that two checkouts compare
	sed -i "s|$root/||g" "$f.out" "$f.err"
}
for k in models hw systems workloads algos; do g list "$k"; done
for s in deepseek-v3.2 glm-5.2 h200 karat pcie5 gpu-karat agentic azure-code dsa quest; do g show "$s"; done
g ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K --gpus 8 --format csv
g ops --model glm-5.2 --hw h200 --batch 32 --context 64K --gpus 16
g ops --model minimax-m3 --hw karat --batch 8 --context 256K --format csv
g ops --model qwen3-235b-a22b --hw h200 --batch 16 --context 100K --gpus 8 --algo quest --format csv
g ops --model deepseek-v3 --hw h800 --batch 128 --context 4K --gpus 8 --mtp 0 --format csv
for sys in gpu-only gpu-attacc gpu-duplex gpu-karat; do
	g query --model deepseek-v3.2 --system "$sys" --workload agentic --batch 32 --microbatches 4 --format csv
done
g query --model glm-5.2 --system gpu-karat --workload azure-conv --batch 64 --schedule cmr --format csv
g query --model minimax-m3 --system gpu-karat --context 128K --batch 16 --exact --format csv
g solve --model deepseek-v3.2 --system gpu-karat --workload agentic --microbatches 2 --format csv
g solve --model qwen3-235b-a22b --algo quest --system gpu-karat --workload agentic-128k --microbatches 1 --format csv
cat > build/golden/sweep.ini <<'INI'
[sweep]
model = deepseek-v3.2, glm-5.2
system = gpu-only, gpu-karat
workload = agentic
microbatches = 1, 2
[set]
system.gpus = 16
INI
g sweep build/golden/sweep.ini --output - -j 2
# placement variants: requests split over devices, round-robin, CMR
g query --model deepseek-v3.2 --system gpu-karat --workload agentic --batch 96 --microbatches 3 --schedule cmr --set system.kv_shard=1 --set system.memdevs=8 --format csv
g query --model glm-5.2 --system gpu-karat --workload agentic --batch 64 --microbatches 2 --set system.admission=round-robin --format csv
g solve --model deepseek-v3.2 --system gpu-karat --workload agentic --microbatches 4 --schedule cmr --set system.kv_shard=1 --format csv
# every attention algorithm: its table row, its operators and its
# cache-side slots on a GQA and an MLA model
for a in $("$K" list algos | awk '$2 == "yes" || $2 == "no" { print $1 }'); do
	g show "$a"
	g ops --model qwen3-235b-a22b --hw h200 --batch 16 --context 100K --gpus 8 --algo "$a" --force --format csv
	g ops --model deepseek-v3.2 --hw h200 --batch 8 --context 150K --gpus 8 --algo "$a" --force --format csv
	g query --model glm-5.2 --system gpu-karat --workload agentic --batch 16 --microbatches 2 --algo "$a" --force --format csv
done
g query --model nosuch --system gpu-only --context 1K --batch 1
g ops --model deepseek-v3.2 --hw h200 --batch 1 --context 1M
if [ "$full" = --run ]; then
	g run -j 2
	cp results/headline.csv results/headline-points.csv "$out/" 2>/dev/null || true
fi
echo "golden: $n commands -> $out"
if [ "$mode" = check ]; then
	if diff -r build/golden/ref build/golden/now > build/golden/diff.txt; then
		echo "golden: identical to build/golden/ref"
	else
		echo "golden: DIFFERENT (build/golden/diff.txt):" >&2
		head -n 40 build/golden/diff.txt >&2
		exit 1
	fi
fi
