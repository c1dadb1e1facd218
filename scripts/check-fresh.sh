#!/bin/sh
# Checks that a clean clone of HEAD builds and passes on a pristine Debian
# 12: a minbase root made by mmdebstrap with only make and git, in which
# `make test` then `make run` must succeed (they install every other
# package themselves, as the README promises).
#
# Usage: scripts/check-fresh.sh [--keep]     (as root, from anywhere)
# Exit: 0 passed, 1 failed, 77 skipped (no root privileges, mmdebstrap not
# installable, or no package registry): the reason is printed.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
keep=${1:-}
skip() {
	echo "check-fresh: skipped: $*" >&2
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap and chroot)"
if ! command -v mmdebstrap >/dev/null 2>&1; then
	echo "check-fresh: installing mmdebstrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			mmdebstrap >/dev/null 2>&1 ||
		skip "mmdebstrap is not installed and cannot be installed (no registry?)"
fi
# the host's Debian mirror, else the default one
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
root=$(mktemp -d /tmp/karat-fresh.XXXXXX)
cleanup() {
	for m in proc sys dev; do
		umount -l "$root/$m" 2>/dev/null || true
	done
	[ "$keep" = --keep ] || rm -rf "$root"
}
trap cleanup EXIT INT TERM
echo "check-fresh: making a minbase Debian 12 root in $root from $mirror" >&2
if ! mmdebstrap --quiet --variant=minbase --include=make,git,ca-certificates bookworm \
	"$root" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" >&2; then
	skip "mmdebstrap could not make the root (no access to $mirror?)"
fi
# a clone of the committed HEAD: what CI sees, not the working tree
git clone --quiet --no-local "$repo" "$root/karat"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# a container without the right to mount or chroot cannot run this check
mount -t proc proc "$root/proc" || skip "cannot mount /proc in the root (no privilege?)"
mount --rbind /sys "$root/sys" || skip "cannot bind /sys into the root"
mount --rbind /dev "$root/dev" || skip "cannot bind /dev into the root"
chroot "$root" /bin/true || skip "cannot chroot (no privilege?)"
echo "check-fresh: make test, then make run, inside the root" >&2
start=$(date +%s)
if chroot "$root" /bin/sh -c 'cd /karat && make test && make run' >"$root.log" 2>&1; then
	tail -n 5 "$root.log"
	echo "check-fresh: passed in $(($(date +%s) - start)) s (log: $root.log)"
	exit 0
fi
tail -n 40 "$root.log"
echo "check-fresh: FAILED after $(($(date +%s) - start)) s (log: $root.log)" >&2
exit 1
