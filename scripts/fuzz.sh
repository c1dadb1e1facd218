#!/bin/sh
# Runs each libFuzzer target for a bounded time with a seed corpus made of
# the project's own files, and reports what it found.
# Usage: scripts/fuzz.sh SECONDS TARGET...   (from the project root; the
# targets are built by `make fuzz` into build-fuzz/)
set -u
secs=$1
shift
dir=build-fuzz
report=$dir/fuzz-report.txt
: > "$report"
status=0
seeds_for() {
	case $1 in
	ini) echo models hw hw/links hw/systems workloads tests/fixtures ;;
	model) echo models ;;
	device) echo hw ;;
	link) echo hw/links ;;
	system) echo hw/systems ;;
	workload) echo workloads tests/fixtures ;;
	trace) echo fuzz/seeds/trace ;;
	units) echo fuzz/seeds/units ;;
	algo) echo fuzz/seeds/algo ;;
	override) echo fuzz/seeds/override ;;
	valid) echo validation ;;
	sched) echo fuzz/seeds/sched ;;
	design) echo fuzz/seeds/design ;;
	sweep) echo sweeps tests/fixtures ;;
	study) echo studies ;;
	shard) echo fuzz/seeds/shard ;;
	plot) echo fuzz/seeds/plot ;;
	esac
}
for t in "$@"; do
	corpus=$dir/corpus-$t
	mkdir -p "$corpus" "$dir/crashes-$t"
	for s in $(seeds_for "$t"); do
		find "$s" -maxdepth 1 -type f -exec cp {} "$corpus/" \;
	done
	log=$dir/fuzz-$t.log
	printf 'fuzz %-9s %ss ... ' "$t" "$secs"
	case $t in sweep | study | shard | plot) quiet=-close_fd_mask=3 ;; *) quiet= ;; esac
	# a sweep's --dry-run plans every point of the file: 60 points took
	# 3.3 s under the sanitizers here, over 10 s on a loaded machine
	limit=10
	[ "$t" = sweep ] && limit=60
	# shellcheck disable=SC2086
	"$dir/fuzz-$t" $quiet -max_total_time="$secs" -timeout="$limit" -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/crashes-$t/" \
		"$corpus" > "$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		line="$t: ${runs:-?} inputs in ${secs} s, ${cov:-cov ?}, no crash, leak or sanitizer report"
		echo ok
	else
		line="$t: FOUND a problem after ${runs:-?} inputs (exit $rc): see $log and $dir/crashes-$t/"
		echo FAILED
		status=1
	fi
	echo "$line" >> "$report"
done
echo
cat "$report"
exit $status
