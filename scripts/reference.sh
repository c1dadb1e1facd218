#!/bin/sh
# The reference solves (tests/reference/*.ini): 900 solves and queries over
# five models, every shipped system, three workloads and every pipelined
# schedule.  Their CSVs are committed, so anyone can show that a change
# leaves the solver's answers byte for byte as they were.
# Usage: scripts/reference.sh check|record [KARAT]
#   check    solves into build/reference/ and compares with tests/reference/
#   record   rewrites tests/reference/*.csv (only for a change meant to move
#            answers; list the moved answers in the commit body)
# KARAT: the binary (default build/karat).  About 30 s on 2 cores.
set -eu
cd "$(dirname "$0")/.."
mode=${1:-check}
K=${2:-build/karat}
case $mode in
check) out=build/reference ;;
record) out=tests/reference ;;
*) echo "usage: scripts/reference.sh check|record [KARAT]" >&2; exit 2 ;;
esac
[ -x "$K" ] || { echo "reference: no binary $K (run make first)" >&2; exit 2; }
mkdir -p "$out" build
status=0
for ini in tests/reference/*.ini; do
	name=$(basename "$ini" .ini)
	"$K" sweep "$ini" --output "$out/$name.csv" -j 2 2> "build/reference-$name.log" || {
		echo "reference: $name: karat failed:" >&2
		cat "build/reference-$name.log" >&2
		exit 1
	}
	[ "$mode" = check ] || continue
	if cmp -s "tests/reference/$name.csv" "$out/$name.csv"; then
		echo "reference: $name: identical ($(($(wc -l < "$out/$name.csv") - 1)) rows)"
	else
		status=1
		moved=$(diff "tests/reference/$name.csv" "$out/$name.csv" | grep -c '^>' || true)
		echo "reference: $name: $moved rows DIFFER; see: diff tests/reference/$name.csv $out/$name.csv" >&2
	fi
done
exit $status
