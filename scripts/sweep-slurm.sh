#!/bin/sh
# A large sweep as a Slurm job array: one shard per task, then the merge.
#
#   scripts/sweep-slurm.sh --shards N --dry-run SWEEP.ini OUTDIR
#       the plan: points per shard, expected imbalance, the lines to run
#   sbatch --array=1-N --output=OUTDIR/logs/slurm-%A_%a.log \
#       scripts/sweep-slurm.sh --shards N SWEEP.ini OUTDIR
#       task K writes OUTDIR/NAME.shard-K-of-N.csv (its rows as they
#       finish, in NAME.shard-K-of-N.csv.partial until the last) and logs a
#       line per point to OUTDIR/logs/NAME.shard-K-of-N.log
#   scripts/sweep-slurm.sh --shards N --resume [--submit] SWEEP.ini OUTDIR
#       lists the shards not finished (missing, or stopped part-way: run
#       again, a task goes on where it stopped) and the sbatch line that
#       runs exactly those; --submit runs it
#   karat merge OUTDIR/NAME.shard-*-of-N.csv --output RESULT.csv
#       after the array: byte for byte the unsharded sweep; it refuses a
#       set with a shard missing, incomplete, doubled or of another sweep
#
# N is given, not taken from the array (KARAT_SHARDS=N also works), so
# `sbatch --array=7,8 ...` reruns shards 7 and 8 alone.  An array that
# starts at 0 (--array=0-7) numbers its shards from 1 all the same.
# KARAT names the binary (default: karat on the PATH).
#SBATCH --job-name=karat-sweep
set -eu
usage() {
	echo "usage: sbatch --array=1-N scripts/sweep-slurm.sh --shards N SWEEP.ini OUTDIR" >&2
	echo "       scripts/sweep-slurm.sh --shards N (--dry-run | --resume [--submit]) SWEEP.ini OUTDIR" >&2
	exit 2
}
n=${KARAT_SHARDS:-}
mode=run
submit=
while [ $# -gt 0 ]; do
	case $1 in
	--shards) [ $# -ge 2 ] || usage; n=$2; shift 2 ;;
	--shards=*) n=${1#--shards=}; shift ;;
	--dry-run) mode=plan; shift ;;
	--resume) mode=resume; shift ;;
	--submit) submit=1; shift ;;
	--) shift; break ;;
	-*) echo "sweep-slurm: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
sweep=$1
outdir=$2
case $n in
'' ) echo "sweep-slurm: give the shard count: --shards N (or KARAT_SHARDS=N)" >&2; exit 2 ;;
*[!0-9]* | 0) echo "sweep-slurm: --shards '$n' is not a whole number >= 1" >&2; exit 2 ;;
esac
karat=${KARAT:-karat}
name=$(basename "$sweep" .ini)
shard_file() { echo "$outdir/$name.shard-$1-of-$n.csv"; }
logdir=$outdir/logs
sbatch_line() { # the array of shards $1
	echo "sbatch --array=$1 --output=$logdir/slurm-%A_%a.log $0 --shards $n $sweep $outdir"
}

case $mode in
plan)
	mkdir -p "$outdir" "$logdir" # sbatch writes its logs there: it must exist
	"$karat" sweep "$sweep" --shards "$n" --dry-run --output "$outdir/$name.csv" |
		sed "s|^run:   sbatch .*|run:   $(sbatch_line "1-$n")|"
	echo "logs:  $logdir (one line per finished point per shard; Slurm's own logs too)"
	exit 0
	;;
resume)
	todo=
	for k in $(seq 1 "$n"); do
		f=$(shard_file "$k")
		[ -f "$f" ] && continue
		if [ -f "$f.partial" ]; then
			echo "shard $k/$n: stopped part-way ($(($(wc -l < "$f.partial") - 2)) points written)"
		else
			echo "shard $k/$n: missing"
		fi
		todo=${todo:+$todo,}$k
	done
	if [ -z "$todo" ]; then
		echo "every shard is finished: karat merge $outdir/$name.shard-*-of-$n.csv --output RESULT.csv"
		exit 0
	fi
	echo "rerun: $(sbatch_line "$todo")"
	if [ -n "$submit" ]; then
		mkdir -p "$logdir"
		sbatch --array="$todo" --output="$logdir/slurm-%A_%a.log" "$0" --shards "$n" "$sweep" "$outdir"
	fi
	exit 0
	;;
esac

id=${SLURM_ARRAY_TASK_ID:?run as a Slurm job array (sbatch --array=1-$n), or use --dry-run or --resume}
k=$id
[ "${SLURM_ARRAY_TASK_MIN:-1}" = 0 ] && k=$((id + 1))
if [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
	echo "sweep-slurm: array task $id is no shard of $n (use --array=1-$n)" >&2
	exit 2
fi
mkdir -p "$outdir" "$logdir"
echo "sweep-slurm: shard $k/$n of $sweep -> $(shard_file "$k"); a line per point in $logdir/$name.shard-$k-of-$n.log" >&2
exec "$karat" sweep "$sweep" --shard "$k/$n" -j "${SLURM_CPUS_PER_TASK:-1}" \
	--output "$(shard_file "$k")" --log "$logdir/$name.shard-$k-of-$n.log"
