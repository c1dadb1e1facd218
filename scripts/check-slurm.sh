#!/bin/sh
# A real Slurm, end to end: installs slurm-wlm and munge from Debian (as
# root), starts munged, slurmctld and slurmd on this machine (one node,
# proctrack/linuxproc, no cgroups, in a temporary folder with ports of its
# own), and runs scripts/sweep-slurm.sh as a cluster user would:
#   1. an array of 3 shards in which task 2 fails;
#   2. the merge, which must refuse the set and name the missing shard;
#   3. --resume --submit, which reruns that shard alone;
#   4. the merge, which must equal the unsharded sweep byte for byte;
#   5. the merge chained with afterany (docs/sweeps.md) after an array with a
#      failing task, which must run and say what to rerun;
#   6. a 0-based array (--array=0-2) run the same way.
# The daemons are stopped by their PIDs.  Exit 0 passed, 1 failed, 77
# skipped (not root, the packages cannot be installed, or Slurm does not
# start here: the reason is printed).
# Usage: scripts/check-slurm.sh [KARAT]   (default build/karat)
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
karat=$(cd "$(dirname "${1:-$repo/build/karat}")" && pwd)/$(basename "${1:-$repo/build/karat}")
skip() {
	echo "check-slurm: skipped: $*" >&2
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (it starts slurmctld, slurmd and munged)"
[ -x "$karat" ] || { echo "check-slurm: no binary $karat (make first)" >&2; exit 1; }
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
	echo "check-slurm: installing slurm-wlm and munge" >&2
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge; } \
		>/dev/null 2>&1 || skip "slurm-wlm and munge cannot be installed (no registry?)"
fi
t=$(mktemp -d /tmp/karat-slurm.XXXXXX)
stop() { # by PID, then wait for each to be gone (10 s at most)
	ps=
	for f in "$t/slurmd.pid" "$t/slurmctld.pid" "$t/munged.pid"; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill "$p" 2>/dev/null && ps="$ps $p"
	done
	for p in $ps; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	done
	rm -rf "$t"
}
trap stop EXIT INT TERM
mkdir -p "$t/state" "$t/spool" "$t/log"
host=$(hostname -s)
base=$((20000 + $$ % 20000)) # ports of its own
cat > "$t/slurm.conf" <<EOF
ClusterName=karatcheck
SlurmctldHost=$host
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$t/munge.sock
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/log/slurmctld.log
SlurmdLogFile=$t/log/slurmd.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$t/slurm.conf"
dd if=/dev/urandom of="$t/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$t/munge.key"
munged --key-file="$t/munge.key" --socket="$t/munge.sock" --pid-file="$t/munged.pid" \
	--seed-file="$t/munge.seed" --log-file="$t/log/munged.log" -f 2>/dev/null ||
	skip "munged does not start here"
slurmctld -f "$SLURM_CONF" 2>/dev/null || skip "slurmctld does not start here"
slurmd -f "$SLURM_CONF" 2>/dev/null || skip "slurmd does not start here"
n=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
	n=$((n + 1))
	[ $n -lt 30 ] || skip "the node did not come up in 30 s ($(tail -n 3 "$t/log/slurmd.log" | tr '\n' ' '))"
	sleep 1
done
echo "check-slurm: slurmctld and slurmd up on $host (Slurm $(sinfo -V | cut -d' ' -f2))" >&2

# the sweep, and a karat that fails shard 2 the first time it runs
cat > "$t/s.ini" <<EOF
[sweep]
model = deepseek-v3.2, glm-5.2
system = gpu-only, gpu-karat
context = 4K, 16K
batch = 8
samples = 8
EOF
cat > "$t/karat" <<EOF
#!/bin/sh
case " \$* " in *" --shard 2/3 "*)
	if [ ! -e "$t/failed-once" ]; then
		touch "$t/failed-once"
		echo "karat: a failure made by check-slurm" >&2
		exit 1
	fi ;;
esac
exec "$karat" "\$@"
EOF
chmod +x "$t/karat"
export KARAT="$t/karat"
"$karat" sweep "$t/s.ini" --output "$t/plain.csv" 2>/dev/null
out=$t/shards
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "check-slurm: ok: $*" >&2; }
bad() { fail=$((fail + 1)); echo "check-slurm: FAILED: $*" >&2; }
mkdir -p "$out/logs"
cd "$t"
sbatch --wait --array=1-3 --output="$out/logs/slurm-%A_%a.log" "$repo/scripts/sweep-slurm.sh" \
	--shards 3 "$t/s.ini" "$out" >/dev/null 2>&1 || true # one task fails
if "$karat" merge "$out"/s.shard-*-of-3.csv --output "$t/m.csv" 2>"$t/merge.err"; then
	bad "the merge of an incomplete set exited 0"
elif grep -q "missing 1 of 3 shards: 2/3" "$t/merge.err"; then
	ok "the merge names the missing shard"
else
	bad "the merge said: $(cat "$t/merge.err")"
fi
"$repo/scripts/sweep-slurm.sh" --shards 3 --resume "$t/s.ini" "$out" > "$t/resume.txt"
if grep -q "rerun: sbatch --array=2 " "$t/resume.txt"; then
	ok "resume names shard 2 alone"
else
	bad "resume said: $(cat "$t/resume.txt")"
fi
sbatch --wait --array=2 --output="$out/logs/slurm-%A_%a.log" \
	"$repo/scripts/sweep-slurm.sh" --shards 3 "$t/s.ini" "$out" >/dev/null 2>&1 || true
if "$karat" merge "$out"/s.shard-*-of-3.csv --output "$t/m.csv" 2>"$t/merge.err" &&
	cmp -s "$t/m.csv" "$t/plain.csv"; then
	ok "after the rerun the merge is the unsharded sweep, byte for byte"
else
	bad "after the rerun: $(cat "$t/merge.err")"
fi
if [ -s "$out/logs/s.shard-2-of-3.log" ]; then
	ok "each task logged its points in $out/logs"
else
	bad "no per-point log for shard 2"
fi
# the chained merge of docs/sweeps.md: afterany runs it whatever the tasks did
rm -f "$t/failed-once"
outc=$t/chain
mkdir -p "$outc/logs"
jid=$(sbatch --parsable --array=1-3 --output="$outc/logs/slurm-%A_%a.log" \
	"$repo/scripts/sweep-slurm.sh" --shards 3 "$t/s.ini" "$outc")
sbatch --wait --dependency=afterany:"$jid" --output="$outc/logs/merge.log" --wrap \
	"$karat merge $outc/s.shard-*-of-3.csv --output $t/mc.csv || $repo/scripts/sweep-slurm.sh --shards 3 --resume $t/s.ini $outc" \
	>/dev/null 2>&1 || true
if grep -q "missing 1 of 3 shards: 2/3" "$outc/logs/merge.log" &&
	grep -q "rerun: sbatch --array=2 " "$outc/logs/merge.log"; then
	ok "the chained merge (afterany) ran after a failed task and said what to rerun"
else
	bad "the chained merge: $(cat "$outc/logs/merge.log" 2>/dev/null)"
fi
out0=$t/zero
mkdir -p "$out0/logs"
sbatch --wait --array=0-2 --output="$out0/logs/slurm-%A_%a.log" "$repo/scripts/sweep-slurm.sh" \
	--shards 3 "$t/s.ini" "$out0" >/dev/null 2>&1 || true
if "$karat" merge "$out0"/s.shard-*-of-3.csv --output "$t/m0.csv" 2>"$t/merge.err" &&
	cmp -s "$t/m0.csv" "$t/plain.csv"; then
	ok "a 0-based array gives the same result"
else
	bad "a 0-based array: $(cat "$t/merge.err")"
fi
echo "check-slurm: $pass passed, $fail failed"
[ "$fail" = 0 ]
