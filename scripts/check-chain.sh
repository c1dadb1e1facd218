#!/bin/sh
# The files of src/solve/ call one way only (issue 26):
#   pool <- plan <- price <- place <- assign <- fluid <- sample <- eval <- search
#   <- probe
# Each file may use what the files to its left define, never what a file
# to its right defines, so there is no call cycle.  Read from the object
# files' symbol tables (nm): every symbol a solve object uses that another
# solve object defines is an edge, and every edge must point left.
# Also: no source file in src/ or tests/ is over 600 lines.
# Usage: scripts/check-chain.sh [BUILD_DIR]   (default build; run make first)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
chain="pool plan price place assign fluid sample eval search probe"
status=0
# every file of src/solve/ is in the chain, and every link of it exists
for f in src/solve/*.c; do
	n=$(basename "$f" .c)
	case " $chain " in
	*" $n "*) ;;
	*) echo "check-chain: src/solve/$n.c is not in the chain ($chain)" >&2; status=1 ;;
	esac
done
rank() { # position of a file in the chain
	i=0
	for c in $chain; do
		[ "$c" = "$1" ] && { echo "$i"; return; }
		i=$((i + 1))
	done
	echo -1
}
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
for n in $chain; do
	o=$B/src/solve/$n.o
	[ -f "$o" ] || { echo "check-chain: no $o (run make first)" >&2; exit 2; }
	nm --defined-only -g "$o" | awk -v f="$n" 'NF == 3 { print $3, f }' >> "$defs"
done
edges=0
for n in $chain; do
	rn=$(rank "$n")
	for sym in $(nm -u "$B/src/solve/$n.o" | awk '{ print $NF }'); do
		to=$(awk -v s="$sym" '$1 == s { print $2; exit }' "$defs")
		[ -n "$to" ] || continue
		edges=$((edges + 1))
		if [ "$(rank "$to")" -ge "$rn" ]; then
			echo "check-chain: $n.c uses $sym of $to.c, which is not to its left" >&2
			status=1
		fi
	done
done
long=$(wc -l src/*/*.c src/*/*.h src/*.h tests/*.c tests/*.h 2>/dev/null |
	awk '$2 != "total" && $1 > 600 { print $2 " (" $1 " lines)" }')
if [ -n "$long" ]; then
	echo "check-chain: over 600 lines:" >&2
	echo "$long" >&2
	status=1
fi
[ $status -eq 0 ] && echo "check-chain: solve/ calls one way ($edges uses across files); no file over 600 lines"
exit $status
