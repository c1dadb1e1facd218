#!/bin/sh
# A large sweep as N shards run by GNU parallel (Debian: apt-get install
# parallel), then merged:
#   scripts/sweep-parallel.sh [--workdir DIR] [--dry-run] SWEEP.ini N RESULT.csv
# The shards and a log per shard go to DIR (default RESULT.csv.shards/),
# which is kept: a shard that fails leaves the finished ones there, its
# error is shown, and running the same command again runs only the
# shards not finished (a shard stopped part-way goes on where it stopped).
# The result equals the unsharded sweep byte for byte.
#
# Several machines: give GNU parallel's own options in PARALLEL_ARGS, e.g.
#   PARALLEL_ARGS='--sshlogin 4/node1,4/node2' scripts/sweep-parallel.sh ...
# with DIR on a folder every machine sees at the same path (NFS): each
# task writes its shard there.  KARAT names the binary (default: karat on
# the PATH; the same path on every machine); JOBS how many shards run at
# once on this machine (default N).
set -eu
usage() {
	echo "usage: scripts/sweep-parallel.sh [--workdir DIR] [--dry-run] SWEEP.ini N RESULT.csv" >&2
	exit 2
}
work=''
dry=''
while [ $# -gt 0 ]; do
	case $1 in
	--workdir) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
	--dry-run) dry=1; shift ;;
	--) shift; break ;;
	-*) echo "sweep-parallel: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 3 ] || usage
sweep=$1 n=$2 result=$3
case $n in *[!0-9]* | '' | 0) echo "sweep-parallel: N '$n' is not a whole number >= 1" >&2; exit 2 ;; esac
karat=${KARAT:-karat}
work=${work:-$result.shards}
name=$(basename "$sweep" .ini)
# the result's folder first, not after the work
rdir=$(dirname "$result")
if [ ! -d "$rdir" ] || [ ! -w "$rdir" ]; then
	echo "sweep-parallel: $rdir: no such folder, or not writable" >&2
	exit 1
fi
parallel --version 2>/dev/null | grep -q "GNU parallel" ||
	{ echo "sweep-parallel: GNU parallel is not installed (moreutils' parallel is another program)" >&2; exit 77; }
mkdir -p "$work/logs"
if [ -n "$dry" ]; then
	"$karat" sweep "$sweep" --shards "$n" --dry-run --output "$work/$name.csv" | grep -v '^run:'
	exit 0
fi
todo=
for k in $(seq 1 "$n"); do
	[ -f "$work/$name.shard-$k-of-$n.csv" ] || todo="$todo $k"
done
if [ -n "$todo" ]; then
	echo "sweep-parallel: shards$todo of $n -> $work (a line per point in $work/logs/)" >&2
	# every shard runs even when one fails; its stderr is shown with its number
	# shellcheck disable=SC2086
	if ! printf '%s\n' $todo | parallel --will-cite --tag -j "${JOBS:-$n}" ${PARALLEL_ARGS:-} \
		"$karat" sweep "$sweep" --shard "{}/$n" --output "$work/$name.shard-{}-of-$n.csv" \
		--log "$work/logs/$name.shard-{}-of-$n.log"; then
		left=
		for k in $(seq 1 "$n"); do
			[ -f "$work/$name.shard-$k-of-$n.csv" ] || left="$left $k"
		done
		echo "sweep-parallel: shards$left of $n did not finish; the others are kept in $work:" >&2
		echo "  run the same command again to run only those" >&2
		exit 1
	fi
fi
"$karat" merge "$work/$name.shard-"*"-of-$n.csv" --output "$result"
