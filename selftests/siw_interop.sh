#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Live interoperability with siw, the kernel's soft-iWARP (TAP). Run as
# root inside the project VM by run_tests.sh, with the current directory
# selftests/ and the project modules (mpa, ddp) loaded. Builds nothing: it
# needs build/siw/siw.ko (tools/siw/build, run on the host), rping,
# rdma_server and rdma_client from rdmacm-utils and tools/rdmap-peer
# (make -C tools); without siw.ko or rping every test is skipped (exit 4).
#
# Brings up the bench of tools/siw/netns-up (namespaces iw0/iw1, veth pair
# 192.0.2.1 <-> 192.0.2.2, siw0/siw1), runs rping siw <-> siw with data
# verification, then the project's stack (MPA revision 2 with CRC, DDP,
# RDMAP in tools/rdmap-peer) against siw in both MPA roles:
#   rdma_server (siw, iw0)      <- rdmap-peer --send-exchange (iw1)
#   rdmap-peer -l (iw0)         <- rdma_client (siw, iw1)
#   rping -s (siw, iw0)         <- rdmap-peer --rping -c N (iw1)
#   rdmap-peer -l --rping (iw0) <- rping -c -C N -V (siw, iw1)
# and the same two rping runs with the kernel's RDMAP (rdmap.ko, through
# the test module rdmap_rping: rdmap-peer --kernel; both are unloaded at
# the end), with dumpcap on veth1 and a tshark decode of those six
# connections
# (MPA Request/Reply revision 2 with C=1, every FPDU's CRC good, the
# RDMAP opcodes of each flow, no expert warnings but the two revision 2
# ones tshark 4.0 always gives), and tears everything down again (rdma
# links, namespaces, siw unloaded).
#
# Usage: siw_interop.sh [-h|--help]
# Environment: SIW_KO (default ../build/siw/siw.ko, on a kernel of another
# series than 6.1 such as 6.12 ../build/k-6.12/siw/siw.ko: where
# tools/siw/build puts it), SIW_RPING_COUNT (100),
# SIW_INTEROP_OUT (a directory to keep the logs and the capture in).

case ${1:-} in
-h | --help) sed -n '4,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
series=$(uname -r | cut -d. -f1,2)
siwdir=$top/build
[ "$series" = 6.1 ] || siwdir=$top/build/k-$series
ko=${SIW_KO:-$siwdir/siw/siw.ko}
count=${SIW_RPING_COUNT:-100}
tools=$top/tools/siw
peer=$top/tools/rdmap-peer
out=${SIW_INTEROP_OUT:-}
tmp=$(mktemp -d)
spid=
up=0
NTESTS=16
kload=0

# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
# shellcheck source=../tools/siw/lib.sh disable=SC1091
. "$tools/lib.sh"

skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2> /dev/null
	siw_capture_stop
	if [ -n "$out" ]; then
		mkdir -p "$out" && cp -a "$tmp"/. "$out"/
	fi
	# interrupted between bring-up and teardown: leave nothing behind
	[ "$up" != 1 ] || "$tools/netns-down" --quiet > /dev/null 2>&1
	# later tests unload ddp.ko and mpa.ko: rdmap.ko must go too
	if [ "$kload" = 1 ]; then
		for m in rdmap_rping rdmap; do
			unload "$m" || echo "# cannot unload $m"
		done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

names=("siw bench up (iw0/siw0 <-> iw1/siw1 over veth)"
	"rping siw <-> siw, $count iterations, verified"
	"rdma_server (siw) <- rdmap-peer --send-exchange (MPA Initiator)"
	"rdmap-peer -l --send-exchange (MPA Responder) <- rdma_client (siw)"
	"rping -s (siw) <- rdmap-peer --rping -c $count (MPA Initiator)"
	"rdmap-peer -l --rping (MPA Responder) <- rping -c -C $count -V (siw)"
	"tshark: MPA rev 2 + CRC both ways, every CRC good, RDMAP flows as expected"
	"siw bench torn down, siw unloaded"
	"rdma_server (siw) <- rdmap-peer -r 1 --send-exchange (MPA revision 1 Initiator)"
	"rdmap-peer -r 1 -l --send-exchange <- rdma_client (siw built for MPA revision 1)"
	"rdma_server (siw peer-to-peer) <- rdmap-peer --p2p --send-exchange: RTR sent"
	"rdmap-peer --p2p -l --rping <- rping -c -C 10 -V (siw peer-to-peer): RTR received"
	"rping -s (siw) <- rdmap-peer --kernel --rping -c $count (rdmap.ko, MPA Initiator)"
	"rdmap-peer --kernel -l --rping (rdmap.ko, MPA Responder) <- rping -c -C $count -V (siw)"
	"rping -s (siw peer-to-peer) <- rdmap-peer --kernel --p2p --rping -c 10: rdmap.ko sends the RTR"
	"rdmap-peer --kernel --p2p -l --rping <- rping -c -C 10 -V (siw peer-to-peer): rdmap.ko takes the RTR")

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

# 3-7: against the project's own stack
pwhy=
if [ "$up" != 1 ]; then
	pwhy="bench not up"
elif [ ! -x "$peer" ]; then
	pwhy="no $peer (make -C tools)"
elif [ ! -e /dev/ddp ] || ! grep -q '^mpa ' /proc/modules; then
	pwhy="project modules mpa/ddp not loaded"
fi

# pair N SNS SPORT SERVER... -- CLIENT...: run SERVER in namespace SNS, wait
# until it listens on SPORT, run CLIENT in iw1; logs $tmp/N.srv, $tmp/N.cli
pair() {
	local t=$1 sns=$2 sport=$3 cst=1 sst
	local -a srv=()

	shift 3
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	ip netns exec "$sns" timeout 120 "${srv[@]}" > "$tmp/$t.srv" 2>&1 &
	spid=$!
	if siw_wait_listen "$sns" "$sport" "$spid"; then
		ip netns exec iw1 timeout 120 "$@" > "$tmp/$t.cli" 2>&1
		cst=$?
	else
		echo "server does not listen" > "$tmp/$t.cli"
	fi
	wait "$spid"
	sst=$?
	spid=
	echo "# ${srv[0]##*/} (server) exit $sst, ${1##*/} (client) exit $cst"
	grep -h '^rdmap-peer: .*\(done\|verified\|pings\|Terminate\|error\)' \
		"$tmp/$t.srv" "$tmp/$t.cli" | sed 's/^/# /'
	if [ "$cst" = 0 ] && [ "$sst" = 0 ]; then
		return 0
	fi
	tail -n 8 "$tmp/$t.srv" "$tmp/$t.cli" | sed 's/^/# /'
	return 1
}

# the kernel's RDMAP: rdmap_rping (selftests/kmod) pulls in rdmap.ko
kwhy=$pwhy
if [ -z "$kwhy" ]; then
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null
	kload=1
	if ! modprobe rdmap_rping > "$tmp/modprobe" 2>&1; then
		sed 's/^/# /' "$tmp/modprobe"
		kwhy="cannot load rdmap_rping (make test-modules, --extra-modules)"
	elif [ ! -w /sys/kernel/debug/rdmap_rping/ctl ]; then
		kwhy="no /sys/kernel/debug/rdmap_rping/ctl"
	fi
fi

capturing=0
if [ -z "$pwhy" ] && command -v dumpcap > /dev/null; then
	if siw_capture_start iw1 veth1 "$tmp/peer.pcapng" "$tmp/dumpcap.log" \
		-f 'tcp port 7471 or tcp port 7472 or tcp port 7174 or tcp port 7175 or tcp port 7176 or tcp port 7177'; then
		capturing=1
	else
		sed 's/^/# dumpcap: /' "$tmp/dumpcap.log"
	fi
fi

res=()
if [ -n "$pwhy" ]; then
	for i in 2 3 4 5 8 12 13; do skip "${names[$i]}" "$pwhy"; done
else
	pair ex1 iw0 7471 rdma_server -s 192.0.2.1 -p 7471 -- \
		"$peer" -v --send-exchange 192.0.2.1 7471
	res[2]=$?
	result "${res[2]}" "${names[2]}"

	pair ex2 iw0 7472 "$peer" -v -l --send-exchange 192.0.2.1 7472 -- \
		rdma_client -s 192.0.2.1 -p 7472
	res[3]=$?
	result "${res[3]}" "${names[3]}"

	pair rp1 iw0 7174 rping -s -a 192.0.2.1 -p 7174 -C "$count" -v -- \
		"$peer" --rping -c "$count" 192.0.2.1 7174
	r=$?
	got=$(grep -c '^server ping data: rdma-ping-' "$tmp/rp1.srv")
	echo "# rping server printed $got of $count pings"
	[ "$r" = 0 ] && [ "$got" = "$count" ] || r=1
	res[4]=$r
	result "$r" "${names[4]}"

	pair rp2 iw0 7175 "$peer" -l --rping -c "$count" 192.0.2.1 7175 -- \
		rping -c -a 192.0.2.1 -p 7175 -C "$count" -v -V
	r=$?
	got=$(grep -c '^ping data: rdma-ping-' "$tmp/rp2.cli")
	echo "# rping client verified $got of $count pings"
	[ "$r" = 0 ] && [ "$got" = "$count" ] || r=1
	res[5]=$r
	result "$r" "${names[5]}"

	# siw as Responder also takes revision 1 (as Initiator it needs 2)
	pair ex3 iw0 7473 rdma_server -s 192.0.2.1 -p 7473 -- \
		"$peer" -v -r 1 --send-exchange 192.0.2.1 7473
	result $? "${names[8]}"

	# the same rping runs with rdmap.ko speaking RDMAP
	if [ -n "$kwhy" ]; then
		skip "${names[12]}" "$kwhy"
		skip "${names[13]}" "$kwhy"
	else
		pair rk1 iw0 7176 rping -s -a 192.0.2.1 -p 7176 -C "$count" -v -- \
			"$peer" --kernel --rping -c "$count" 192.0.2.1 7176
		r=$?
		got=$(grep -c '^server ping data: rdma-ping-' "$tmp/rk1.srv")
		echo "# rping server printed $got of $count pings"
		[ "$r" = 0 ] && [ "$got" = "$count" ] || r=1
		res[12]=$r
		result "$r" "${names[12]}"

		pair rk2 iw0 7177 "$peer" --kernel -l --rping -c "$count" 192.0.2.1 7177 -- \
			rping -c -a 192.0.2.1 -p 7177 -C "$count" -v -V
		r=$?
		got=$(grep -c '^ping data: rdma-ping-' "$tmp/rk2.cli")
		echo "# rping client verified $got of $count pings"
		[ "$r" = 0 ] && [ "$got" = "$count" ] || r=1
		res[13]=$r
		result "$r" "${names[13]}"
	fi
fi
siw_capture_stop

# 8: the capture
if [ -n "$pwhy" ]; then
	skip "${names[6]}" "$pwhy"
elif [ "$capturing" != 1 ] || ! command -v tshark > /dev/null; then
	skip "${names[6]}" "no dumpcap/tshark or the capture did not start"
else
	# MPA Request/Reply frames: port, then the frame header octets 16..19
	# (flags, Rev, PD_Length) and the first private data octets
	tshark -r "$tmp/peer.pcapng" -Y 'iwarp_mpa.req or iwarp_mpa.rep' \
		-T fields -e tcp.srcport -e tcp.dstport -e tcp.payload \
		> "$tmp/rr.txt" 2> /dev/null
	sed 's/^/# req\/rep /' "$tmp/rr.txt"
	# one line per FPDU: server_port dir opcode crc_good
	siw_fpdus -r "$tmp/peer.pcapng" | awk '{
		if ($2 == 7471 || $2 == 7472 || $2 == 7174 || $2 == 7175 ||
		    $2 == 7176 || $2 == 7177)
			print $2, "c>s", $3, $9
		else
			print $1, "s>c", $3, $9
	}' > "$tmp/fpdus.txt"
	awk '{ k = $1 " " $2 " op " $3; c[k]++; g[k] += $4 }
	     END { for (k in c) printf "# fpdus %s: %d, %d with a good CRC\n", k, c[k], g[k] }' \
		"$tmp/fpdus.txt" | sort
	tshark -r "$tmp/peer.pcapng" -q -z expert,warn > "$tmp/expert.txt" 2> /dev/null
	grep -iE 'iwarp|mpa|ddp|rdma|malformed' "$tmp/expert.txt" |
		grep -vE 'Res field is NOT set to zero|Rev field is NOT set to one' \
		> "$tmp/expert.bad"
	sed 's/^/# expert: /' "$tmp/expert.bad"

	bad=
	total=$(wc -l < "$tmp/fpdus.txt")
	good=$(awk '$4 == 1' "$tmp/fpdus.txt" | wc -l)
	echo "# $total FPDUs, $good with a good CRC"
	[ "$total" -gt 0 ] && [ "$good" = "$total" ] || bad="$bad crc"
	[ -s "$tmp/expert.bad" ] && bad="$bad expert"
	# Request/Reply octets 16, 17 (flags, Rev): ours (our Requests, every
	# Reply: siw follows our C=1; ports 7471, 7174, 7176: we are the
	# Initiator) 0x50 02 (C, enhanced, Rev 2); siw's
	# Requests 0x10 02 (enhanced, Rev 2, C=0: stock siw asks for no CRC)
	awk '{ gsub(":", "", $3); k = substr($3, 1, 32) == "4d504120494420526571204672616d65" ? "req" : "rep"
	       p = k == "req" ? $2 : $1
	       want = (k == "rep" || p == 7471 || p == 7174 || p == 7176) ? "5002" : "1002"
	       print k, p, substr($3, 33, 4), want }' "$tmp/rr.txt" > "$tmp/rr.chk"
	nrr=$(wc -l < "$tmp/rr.chk")
	nrr2=$(awk '$3 == $4' "$tmp/rr.chk" | wc -l)
	echo "# $nrr MPA Request/Reply frames, $nrr2 with the expected flags and Rev 2"
	[ "$nrr" -ge 2 ] && [ "$nrr2" = "$nrr" ] || bad="$bad mpa-frames"
	# per flow: port dir opcode expected-count (only flows that passed)
	fl() { awk -v p="$1" -v d="$2" -v o="$3" '$1 == p && $2 == d && $3 == o' "$tmp/fpdus.txt" | wc -l; }
	want() {
		local got

		got=$(fl "$1" "$2" "$3")
		[ "$got" = "$4" ] || { echo "# port $1 $2 opcode $3: $got FPDUs, expected $4"; bad="$bad $1"; }
	}
	if [ "${res[2]}" = 0 ]; then
		want 7471 'c>s' 0x03 1
		want 7471 's>c' 0x03 1
	fi
	if [ "${res[3]}" = 0 ]; then
		want 7472 'c>s' 0x03 1
		want 7472 's>c' 0x03 1
	fi
	# rping: userspace RDMAP (7174, 7175) and rdmap.ko (7176, 7177)
	for pr in 7174:4 7175:5 7176:12 7177:13; do
		p=${pr%:*}
		[ "${res[${pr#*:}]:-1}" = 0 ] || continue
		want "$p" 'c>s' 0x03 $((2 * count))
		want "$p" 's>c' 0x03 $((2 * count))
		want "$p" 's>c' 0x01 "$count"
		want "$p" 'c>s' 0x02 "$count"
		want "$p" 's>c' 0x00 "$count"
	done
	if [ -z "$bad" ]; then
		ok "${names[6]}"
	else
		echo "# capture check failed:$bad"
		not_ok "${names[6]}"
	fi
fi

# 9: teardown
up=0
if "$tools/netns-down" --quiet > "$tmp/down" 2>&1 &&
	! grep -q '^siw ' /proc/modules && ! ip netns list | grep -qw '^iw[01]'; then
	ok "${names[7]}"
else
	sed 's/^/# /' "$tmp/down"
	not_ok "${names[7]}"
fi

# 10: siw as a revision 1 Initiator needs a siw built so (tools/siw/build
# --rev1): stock siw 6.1 always starts with revision 2
ko1=${SIW_REV1_KO:-$siwdir/siw-rev1/siw.ko}
if [ ! -f "$ko1" ]; then
	skip "${names[9]}" "no $ko1 (tools/siw/build --rev1)"
elif ! "$tools/netns-up" --quiet --ko "$ko1" > "$tmp/up1" 2>&1; then
	sed 's/^/# /' "$tmp/up1"
	not_ok "${names[9]}"
else
	up=1
	pair ex4 iw0 7476 "$peer" -v -r 1 -l --send-exchange 192.0.2.1 7476 -- \
		rdma_client -s 192.0.2.1 -p 7476
	r=$?
	grep -q 'MPA rev 1' "$tmp/ex4.srv" || r=1
	up=0
	"$tools/netns-down" --quiet > /dev/null 2>&1 || r=1
	result "$r" "${names[9]}"
fi

# 11, 12: RFC 6581 peer-to-peer with the RTR message, against siw built to
# ask for it (tools/siw/build --p2p); both sides agree on an RDMA Write RTR
kop=${SIW_P2P_KO:-$siwdir/siw-p2p/siw.ko}
if [ ! -f "$kop" ]; then
	for i in 10 11 14 15; do skip "${names[$i]}" "no $kop (tools/siw/build --p2p)"; done
elif ! "$tools/netns-up" --quiet --ko "$kop" > "$tmp/up2" 2>&1; then
	sed 's/^/# /' "$tmp/up2"
	for i in 10 11 14 15; do not_ok "${names[$i]}"; done
else
	up=1
	pair p2a iw0 7491 rdma_server -s 192.0.2.1 -p 7491 -- \
		"$peer" --p2p -v --send-exchange 192.0.2.1 7491
	r=$?
	grep -q 'RTR sent: write' "$tmp/p2a.cli" || r=1
	result "$r" "${names[10]}"
	pair p2b iw0 7494 "$peer" --p2p -v -l --rping -c 10 192.0.2.1 7494 -- \
		rping -c -a 192.0.2.1 -p 7494 -C 10 -v -V
	r=$?
	got=$(grep -c '^ping data: rdma-ping-' "$tmp/p2b.cli")
	echo "# rping client verified $got of 10 pings"
	[ "$got" = 10 ] && grep -q 'RTR received: write' "$tmp/p2b.srv" || r=1
	r11=$r
	if [ -n "$kwhy" ]; then
		skip "${names[14]}" "$kwhy"
		skip "${names[15]}" "$kwhy"
	else
		# the RTR comes from rdmap.ko: first FPDU as Initiator, consumed as Responder
		pair p2k1 iw0 7495 rping -s -a 192.0.2.1 -p 7495 -C 10 -v -- \
			"$peer" --kernel --p2p -v --rping -c 10 192.0.2.1 7495
		r=$?
		got=$(grep -c '^server ping data: rdma-ping-' "$tmp/p2k1.srv")
		echo "# rping server printed $got of 10 pings"
		# 10 pings: 20 Sends and 10 Read Responses, and the RTR
		[ "$r" = 0 ] && [ "$got" = 10 ] &&
			grep -q 'MPA: tx 31 FPDUs' "$tmp/p2k1.cli" || r=1
		result "$r" "${names[14]}"
		pair p2k2 iw0 7496 "$peer" --kernel --p2p -v -l --rping -c 10 192.0.2.1 7496 -- \
			rping -c -a 192.0.2.1 -p 7496 -C 10 -v -V
		r=$?
		got=$(grep -c '^ping data: rdma-ping-' "$tmp/p2k2.cli")
		echo "# rping client verified $got of 10 pings"
		# siw's RTR, its 20 Sends and 10 Read Responses
		[ "$r" = 0 ] && [ "$got" = 10 ] &&
			grep -q 'rx 31 FPDUs' "$tmp/p2k2.srv" || r=1
		result "$r" "${names[15]}"
	fi
	r=$r11
	up=0
	"$tools/netns-down" --quiet > /dev/null 2>&1 || r=1
	result "$r" "${names[11]}"
fi

exit $fail
