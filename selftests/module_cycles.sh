#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load/unload cycles of mpa.ko and ddp.ko with live connections and
# traffic (TAP, one line per cycle). Each cycle:
#
#   1. loads mpa.ko and ddp.ko;
#   2. starts CONNS tools/mpa-cat connections over loopback whose
#      Initiators send half of their data and wait, starts a tools/ddp-xfer
#      transfer and opens a PD (/dev/ddp);
#   3. tries to unload ddp.ko and mpa.ko while all that is open: both must
#      be refused as in use, and both modules must stay loaded;
#   4. waits for the DDP transfer (exit 0, sha256 equal), closes the PD and
#      unloads ddp.ko, while the MPA connections stay open;
#   5. tries to unload mpa.ko, now held by the connections alone: refused;
#   6. sends the rest of the data, closes, checks every connection's
#      octets (sha256) and exit status;
#   7. unloads mpa.ko; it may have to wait for the closed sockets to go
#      (FIN_WAIT, LAST_ACK hold the ULP), at most 10 s.
#
# Environment: CYCLES (default 10), CONNS (default 3), MPA_KO and DDP_KO
# (set by run_tests.sh). Needs root and tools/mpa-cat, tools/ddp-xfer.
# The modules are loaded again at the end for the tests that follow.
# Exit status: 0 all passed, 1 a failure, 4 skipped.

here=$(cd "$(dirname "$0")" && pwd)
cat=$here/../tools/mpa-cat
xfer=$here/../tools/ddp-xfer
cycles=${CYCLES:-10}
conns=${CONNS:-3}
mpa_ko=${MPA_KO:-$here/../mpa/mpa.ko}
ddp_ko=${DDP_KO:-$here/../ddp/ddp.ko}
# below the ephemeral ports (32768 up), which a client's socket may hold
port=$((20000 + RANDOM % 10000))
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
use_tmp
show() { sed 's/^/# /' "$@"; }

echo "TAP version 13"
echo "1..$((cycles + 1))"
if [ "$(id -u)" != 0 ] || [ ! -x "$cat" ] || [ ! -x "$xfer" ] ||
   [ ! -f "$mpa_ko" ] || [ ! -f "$ddp_ko" ]; then
	for i in $(seq $((cycles + 1))); do
		echo "ok $i module cycle $i # SKIP needs root, the tools and the modules"
	done
	exit 4
fi

# refused NAME: rmmod must fail because the module is in use
refused() {
	local out

	out=$(rmmod "$1" 2>&1) && { echo "# rmmod $1 succeeded while in use"; return 1; }
	loaded "$1" || { echo "# $1 gone after a failed rmmod"; return 1; }
	case $out in
	*"in use"*) return 0 ;;
	esac
	echo "# rmmod $1: $out"
	return 1
}

head -c $((256 << 10)) /dev/urandom > "$tmp/data"
head -c $((2 << 20)) /dev/urandom > "$tmp/ddp.in"
want=$(sha256sum < "$tmp/data" | cut -d' ' -f1)
dwant=$(sha256sum < "$tmp/ddp.in" | cut -d' ' -f1)

# held NAME: what holds module NAME (its count, the modules using it, the
# MPA sockets of this namespace), for a failure's message
held() {
	echo "# $1: refcnt $(cat "/sys/module/$1/refcnt" 2>/dev/null)," \
		"used by: $(cd "/sys/module/$1/holders" 2>/dev/null && echo *)"
	ss -tanHi 2>/dev/null | grep -c "ulp-mpa" | sed 's/^/# MPA sockets here: /'
	ip netns list 2>/dev/null | sed 's/^/# netns /'
}

# unload_both SECONDS: ddp.ko, then mpa.ko, each given SECONDS to lose
# its users; $held_by names what stays (no cycle can run then)
unload_both() {
	if ! unload ddp "$1"; then
		held ddp
		held_by=" ddp mpa"	# ddp.ko holds mpa.ko
	elif ! unload mpa "$1"; then
		held mpa
		held_by=" mpa"
	fi
}

# Users of the modules left by the tests before (closed sockets waiting
# for their peer's FIN, tcp_fin_timeout 60 s) may hold them for a while.
modprobe -q crc32c
held_by=
t0=$SECONDS
unload_both 90
[ $((SECONDS - t0)) -lt 10 ] ||
	echo "# waited $((SECONDS - t0)) s for the modules' users before the test"

# cycle N: prints why it failed; returns 0 when everything held.
# The children must not inherit the PD: it is opened after they started.
# Each Initiator gets the first half of the data at once and the rest
# when its gate FIFO is opened.
cycle() {
	local k lp ip dl ds pdfd lpids=() ipids=() bad=0 st

	insmod "$mpa_ko" || { held mpa; return 1; }
	insmod "$ddp_ko" || { held ddp; return 1; }

	for k in $(seq "$conns"); do
		port=$((port + 1))
		rm -f "$tmp/g$k"
		mkfifo "$tmp/g$k"
		timeout 120 "$cat" -l -m 127.0.0.1 "$port" < /dev/null > "$tmp/o$k" \
			2> "$tmp/l$k.err" &
		lp=$!
		lpids+=("$lp")
		pids+=("$lp")
		wait_listen "$port" || { echo "# listener $k did not start"; bad=1; }
		(head -c $((128 << 10)) "$tmp/data"; read -r _ < "$tmp/g$k"
		 tail -c +$(((128 << 10) + 1)) "$tmp/data") |
			timeout 120 "$cat" -m 127.0.0.1 "$port" > /dev/null 2> "$tmp/i$k.err" &
		ip=$!
		ipids+=("$ip")
		pids+=("$ip")
	done
	port=$((port + 1))
	timeout 120 "$xfer" -l -m -t 60 127.0.0.1 "$port" > "$tmp/d.out" 2> "$tmp/dl.err" &
	dl=$!
	pids+=("$dl")
	wait_listen "$port" || { echo "# ddp-xfer sink did not start"; bad=1; }
	timeout 120 "$xfer" -m -t 60 127.0.0.1 "$port" < "$tmp/ddp.in" 2> "$tmp/ds.err" &
	ds=$!
	pids+=("$ds")
	exec {pdfd}<>/dev/ddp || return 1

	# everything is open: both modules are in use
	refused ddp || bad=1
	refused mpa || bad=1

	# DDP done and its PD closed: ddp.ko goes, the MPA connections stay
	wait "$ds"
	st=$?
	wait "$dl"
	st="$st/$?"
	if [ "$st" != 0/0 ] || [ "$(sha256sum < "$tmp/d.out" | cut -d' ' -f1)" != "$dwant" ]; then
		echo "# ddp-xfer: exit $st"
		show "$tmp/ds.err" "$tmp/dl.err"
		bad=1
	fi
	exec {pdfd}>&-
	unload ddp || { held ddp; bad=1; }

	# the MPA connections carried their first half: mpa.ko is held by them
	for k in $(seq "$conns"); do
		for _ in $(seq 200); do
			[ "$(stat -c %s "$tmp/o$k")" -ge $((128 << 10)) ] && break
			sleep 0.05
		done
	done
	refused mpa || bad=1

	for k in $(seq "$conns"); do
		echo > "$tmp/g$k"
	done
	for k in $(seq "$conns"); do
		wait "${ipids[$((k - 1))]}"
		st=$?
		wait "${lpids[$((k - 1))]}"
		st="$st/$?"
		if [ "$st" != 0/0 ] ||
		   [ "$(sha256sum < "$tmp/o$k" | cut -d' ' -f1)" != "$want" ]; then
			echo "# mpa-cat connection $k: exit $st, $(stat -c %s "$tmp/o$k") octets"
			show "$tmp/i$k.err" "$tmp/l$k.err"
			bad=1
		fi
	done
	pids=()

	# closed: mpa.ko goes
	unload mpa || { held mpa; bad=1; }
	return $bad
}

fail=0
t0=$SECONDS
for i in $(seq "$cycles"); do
	if [ -n "$held_by" ]; then
		echo "not ok $i module cycle $i # cannot unload:$held_by"
		fail=1
	elif cycle "$i"; then
		echo "ok $i module cycle $i: $conns MPA connections, a DDP transfer, unloads refused while open"
	else
		echo "not ok $i module cycle $i"
		fail=1
		# the next cycle starts with neither loaded
		unload_both 30
	fi
done
echo "# $cycles cycles in $((SECONDS - t0)) s"

# load them again for the tests that follow
if { loaded mpa || insmod "$mpa_ko"; } && { loaded ddp || insmod "$ddp_ko"; }; then
	echo "ok $((cycles + 1)) modules loaded again"
else
	echo "not ok $((cycles + 1)) modules loaded again"
	fail=1
fi
exit $fail
