#!/bin/sh
# One shard of a large sweep per Slurm array task; merge them when all are
# done.  Usage (N tasks, each with C cores):
#   sbatch --array=1-N --cpus-per-task=C scripts/sweep-slurm.sh SWEEP.ini OUTDIR
#   karat merge OUTDIR/shard-*.csv --output RESULT.csv    (after the array ends)
# Task K writes OUTDIR/shard-K.csv: the points i with i % N == K - 1.  The
# merge equals the unsharded sweep byte for byte.  KARAT names the binary
# (default: karat on the PATH).
#SBATCH --job-name=karat-sweep
#SBATCH --output=karat-sweep-%A_%a.log
set -eu
sweep=${1:?usage: sbatch --array=1-N scripts/sweep-slurm.sh SWEEP.ini OUTDIR}
outdir=${2:?usage: sbatch --array=1-N scripts/sweep-slurm.sh SWEEP.ini OUTDIR}
n=${SLURM_ARRAY_TASK_COUNT:?run as a Slurm job array (sbatch --array=1-N)}
k=${SLURM_ARRAY_TASK_ID:?run as a Slurm job array (sbatch --array=1-N)}
mkdir -p "$outdir"
exec "${KARAT:-karat}" sweep "$sweep" --shard "$k/$n" -j "${SLURM_CPUS_PER_TASK:-1}" \
	--output "$outdir/shard-$k.csv"
