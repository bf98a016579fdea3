#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Live interoperability with siw, the kernel's soft-iWARP (TAP). Run as
# root inside the project VM by run_tests.sh, with the current directory
# selftests/. Builds nothing: it needs build/siw/siw.ko (tools/siw/build,
# run on the host) and rping from rdmacm-utils; without them every test is
# skipped (exit 4).
#
# Brings up the bench of tools/siw/netns-up (namespaces iw0/iw1, veth pair
# 192.0.2.1 <-> 192.0.2.2, siw0/siw1), runs rping siw <-> siw with data
# verification, and tears everything down again (rdma links, namespaces,
# siw unloaded). The tests against the project's own stack are listed as
# skipped until it speaks MPA revision 2 (RFC 6581) and RDMAP.
#
# Usage: siw_interop.sh [-h|--help]
# Environment: SIW_KO (default ../build/siw/siw.ko), SIW_RPING_COUNT (100).

case ${1:-} in
-h | --help) sed -n '4,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
ko=${SIW_KO:-$top/build/siw/siw.ko}
count=${SIW_RPING_COUNT:-100}
tools=$top/tools/siw
tmp=$(mktemp -d)
spid=
up=0
n=0 fail=0
pending="MPA revision 2 / RDMAP not implemented yet (issue 5)"
NTESTS=6

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2> /dev/null
	# interrupted between bring-up and teardown: leave nothing behind
	[ "$up" != 1 ] || "$tools/netns-down" --quiet > /dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

names=("siw bench up (iw0/siw0 <-> iw1/siw1 over veth)"
	"rping siw <-> siw, $count iterations, verified"
	"rdma_server(siw) <- project initiator"
	"project responder <- rdma_client(siw)"
	"rping siw vs project"
	"siw bench torn down, siw unloaded")

echo "TAP version 13"
echo "1..$NTESTS"

why=
if [ "$(id -u)" != 0 ]; then
	why="needs root"
elif [ ! -f "$ko" ]; then
	why="no $ko (run tools/siw/build on the host)"
elif ! command -v rping > /dev/null; then
	why="rping missing (package rdmacm-utils)"
elif ! command -v rdma > /dev/null; then
	why="rdma missing (package iproute2)"
elif [ ! -x "$tools/netns-up" ]; then
	why="no $tools/netns-up"
elif grep -q '^siw ' /proc/modules; then
	why="siw is loaded already: not touching it"
fi
if [ -n "$why" ]; then
	for t in "${names[@]}"; do skip "$t" "$why"; done
	exit 4
fi

# 1: bench up
if "$tools/netns-up" --quiet --ko "$ko" > "$tmp/up" 2>&1; then
	ok "${names[0]}"
	up=1
else
	sed 's/^/# /' "$tmp/up"
	not_ok "${names[0]}"
	up=0
fi

# 2: rping, server in iw0 on 192.0.2.1, client in iw1
if [ "$up" = 1 ]; then
	ip netns exec iw0 timeout 100 rping -s -a 192.0.2.1 -C "$count" -v > "$tmp/srv" 2>&1 &
	spid=$!
	end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$spid" 2> /dev/null; do
		ip netns exec iw0 ss -Hltn 'sport = :7174' 2> /dev/null | grep -q . && break
		sleep 0.2
	done
	ip netns exec iw1 timeout 100 rping -c -a 192.0.2.1 -C "$count" -v -V > "$tmp/cli" 2>&1
	cst=$?
	wait "$spid"
	sst=$?
	spid=
	got=$(grep -c '^ping data: rdma-ping-' "$tmp/cli")
	echo "# rping: client exit $cst, server exit $sst, $got of $count pings verified"
	if [ "$cst" = 0 ] && [ "$sst" = 0 ] && [ "$got" = "$count" ]; then
		ok "${names[1]}"
	else
		tail -n 5 "$tmp/cli" "$tmp/srv" | sed 's/^/# /'
		not_ok "${names[1]}"
	fi
else
	skip "${names[1]}" "bench not up"
fi

# 3-5: against the project's own stack
skip "${names[2]}" "$pending"
skip "${names[3]}" "$pending"
skip "${names[4]}" "$pending"

# 6: teardown
up=0
if "$tools/netns-down" --quiet > "$tmp/down" 2>&1 &&
	! grep -q '^siw ' /proc/modules && ! ip netns list | grep -qw '^iw[01]'; then
	ok "${names[5]}"
else
	sed 's/^/# /' "$tmp/down"
	not_ok "${names[5]}"
fi

exit $fail
