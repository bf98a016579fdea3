#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load mpa.ko and ddp.ko, run the given test programs and scripts as
# kselftest does (TAP 13, each program's output nested behind "# "),
# then unload the modules. Works in the project VM and on any host that
# can load modules (run as root).
#
# Modules come from the build tree next to this directory (or $MPA_KO and
# $DDP_KO, as make check sets them for each kernel), unless they are
# already loaded or installed (modprobe finds them).

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
export MPA_KO="${MPA_KO:-$top/mpa/mpa.ko}" DDP_KO="${DDP_KO:-$top/ddp/ddp.ko}"

load() {	# name path
	grep -q "^$1 " /proc/modules && return 0
	if modprobe -q "$1" 2>/dev/null; then
		return 0
	fi
	insmod "$2"
}

[ $# -gt 0 ] || { echo "usage: $0 TEST..." >&2; exit 2; }
echo "TAP version 13"
echo "1..$#"

# mpa.ko takes a crc32c transform of the crypto API when it loads
modprobe -q crc32c 2>/dev/null
if ! load mpa "$MPA_KO" || ! load ddp "$DDP_KO"; then
	n=0
	for t in "$@"; do
		n=$((n + 1))
		echo "not ok $n selftests: mpa: $t # cannot load the modules"
	done
	exit 1
fi

# ours: the modules of this project (and siw) loaded, on one line; a test
# that leaves one loaded (or unloads one) is named, for the tests after it
ours() {
	awk 'BEGIN { split("mpa ddp rdmap iwmpa siw ddp_kconsumer rdmap_kconsumer " \
			   "rdmap_rping mpa_echo", m); for (i in m) w[m[i]] = 1 }
	     $1 in w { print $1 }' /proc/modules | sort | tr '\n' ' '
}

rc=0 n=0
for t in "$@"; do
	n=$((n + 1))
	echo "# selftests: mpa: $t"
	before=$(ours)
	(cd "$here" && ./"$t") 2>&1 | sed -u 's/^/# /'
	st=${PIPESTATUS[0]}
	after=$(ours)
	[ "$after" = "$before" ] ||
		echo "# $t: modules loaded before: $before; after: $after"
	if [ "$st" -eq 0 ]; then
		echo "ok $n selftests: mpa: $t"
	elif [ "$st" -eq 4 ]; then
		echo "ok $n selftests: mpa: $t # SKIP"
	else
		echo "not ok $n selftests: mpa: $t # exit=$st"
		rc=1
	fi
done

for m in rdmap ddp mpa; do
	if grep -q "^$m " /proc/modules && ! rmmod "$m"; then
		echo "# cannot unload $m"
		rc=1
	fi
done
exit $rc
