#!/bin/sh
# Checks that the Debian packages karat needs are installed; installs the
# missing ones when run as root, otherwise prints the exact apt-get line.
# Usage: scripts/deps.sh [build|test|fuzz|memcheck]   (test adds the test
# framework, fuzz clang and its libFuzzer runtime, memcheck valgrind)
set -eu
pkgs="build-essential pkg-config libgsl-dev libcsv-dev libinih-dev gnuplot-nox"
[ "${1:-build}" = test ] && pkgs="$pkgs libcriterion-dev parallel"
[ "${1:-build}" = fuzz ] && pkgs="$pkgs clang libclang-rt-14-dev"
[ "${1:-build}" = memcheck ] && pkgs="$pkgs valgrind"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "karat: installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
else
	echo "karat: missing Debian packages; install them with:" >&2
	echo "  sudo apt-get install -y$missing" >&2
	exit 1
fi
