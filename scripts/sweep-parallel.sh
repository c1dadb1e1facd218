#!/bin/sh
# A large sweep as N shards run by GNU parallel (Debian: apt-get install
# parallel), on one machine or, with parallel's --sshlogin, on several;
# then merged.  Usage: scripts/sweep-parallel.sh SWEEP.ini N RESULT.csv
# The result equals the unsharded sweep byte for byte.  KARAT names the
# binary (default: karat on the PATH); JOBS how many shards run at once
# (default N).
set -eu
sweep=${1:?usage: scripts/sweep-parallel.sh SWEEP.ini N RESULT.csv}
n=${2:?usage: scripts/sweep-parallel.sh SWEEP.ini N RESULT.csv}
result=${3:?usage: scripts/sweep-parallel.sh SWEEP.ini N RESULT.csv}
karat=${KARAT:-karat}
parallel --version 2>/dev/null | grep -q "GNU parallel" ||
	{ echo "sweep-parallel: GNU parallel is not installed (moreutils' parallel is another program)" >&2; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/karat-shards.XXXXXX")
trap 'rm -rf "$dir"' EXIT
seq 1 "$n" | parallel --will-cite --halt now,fail=1 -j "${JOBS:-$n}" \
	"$karat" sweep "$sweep" --shard "{}/$n" --output "$dir/shard-{}.csv" 2>/dev/null
# shellcheck disable=SC2046
"$karat" merge $(seq 1 "$n" | sed "s|.*|$dir/shard-&.csv|") --output "$result"
