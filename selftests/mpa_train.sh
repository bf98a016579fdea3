#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# FPDU trains and packed FPDUs (RFC 5044 section 5.1, appendix A.1) over a
# veth pair between two network namespaces at MTU 1500 (MSS 1448, so
# MULPDU 1442 and a full FPDU of exactly 1448 octets). mpa-cat sends
# 2 MiB with MSG_MORE (-M), markers off, fixed ULPDU sizes, so the stream
# offset of every FPDU is known; a capture on the sender's veth checks:
#
#  1. TSO and GSO off, 1442-octet ULPDUs: every data segment starts with
#     an FPDU, and carries exactly one.
#  2. TSO and GSO off, 100-octet ULPDUs: every data segment starts with
#     an FPDU, and FPDUs share segments (at least 4 per segment on
#     average: 13 fit in 1448 octets).
#  3. GSO on (veth's default), 1442-octet ULPDUs: the capture sees the
#     skbs before GSO cuts them: trains of several FPDUs appear (at least
#     one skb of 4 or more), each starts with an FPDU and is a whole
#     number of FPDUs.
#
# A receive window that ends inside an skb makes TCP cut it there (with
# Nagle off, tcp_mss_split_point()), and the rest of that skb's segments
# then start inside FPDUs; Documentation/mpa.rst gives the share measured
# with a slow reader and the default buffer. So the sender must never be
# limited by the receive window, only by its congestion window (cut at
# MSS multiples): the receiver's buffer (tcp_rmem) covers the whole
# transfer and the sender's congestion window is locked at 40 segments
# (57920 octets), below the 64 KiB a new connection's window starts with
# (on 6.12 the window grows more slowly than cwnd in slow start, and a
# loaded host ran into it). Each case also checks that the data arrived
# intact; on failure it prints the first segments that broke the rule.
# MPA_TRAIN_KEEP=DIR keeps the captures there. TAP; needs tshark,
# ip (iproute2), ethtool, mpa.ko loaded, root.

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cat=$top/tools/mpa-cat
tmp=$(mktemp -d)
NA=mpa-train-a
NB=mpa-train-b
# shellcheck disable=SC2317 # runs through the trap
cleanup() {
	ip netns del "$NA" 2> /dev/null
	ip netns del "$NB" 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

cases=("off 1442" "off 100" "on 1442")
names=("TSO/GSO off, 1442-octet ULPDUs: one FPDU per segment"
       "TSO/GSO off, 100-octet ULPDUs: packed FPDUs"
       "GSO on, 1442-octet ULPDUs: FPDU trains")
n=0 fail=0

echo "TAP version 13"
echo "1..${#cases[@]}"
for t in tshark ip ethtool; do
	if ! command -v $t > /dev/null || [ ! -x "$cat" ]; then
		for name in "${names[@]}"; do
			n=$((n + 1))
			echo "ok $n $name # SKIP needs tshark, ip, ethtool and tools/mpa-cat"
		done
		exit 0
	fi
done

if ! { ip netns add "$NA" && ip netns add "$NB" &&
ip link add mtr0 netns "$NA" type veth peer name mtr1 netns "$NB" &&
ip -n "$NA" addr add 192.0.2.1/24 dev mtr0 &&
ip -n "$NB" addr add 192.0.2.2/24 dev mtr1 &&
ip -n "$NA" link set mtr0 mtu 1500 up &&
ip -n "$NB" link set mtr1 mtu 1500 up &&
ip -n "$NA" link set lo up && ip -n "$NB" link set lo up &&
ip -n "$NA" route replace 192.0.2.0/24 dev mtr0 cwnd lock 40 &&
# a receive window that always covers the transfer: see below
ip netns exec "$NB" sysctl -qw net.ipv4.tcp_rmem="4096 8388608 8388608"; }; then
	echo "Bail out! cannot set up the veth pair"
	exit 1
fi
head -c $((2 << 20)) /dev/urandom > "$tmp/in"

# check CAPTURE SIZE PORT: prints "segments fpdu-starts whole max-fpdus
# fpdus" for the Initiator's data segments after its Request; "whole"
# counts those that start with an FPDU and hold whole FPDUs of SIZE, or
# end where the stream ends (the shorter last FPDU; a retransmission or a
# loss probe may carry it alone or behind others). The first five
# segments that break a rule go to $tmp/bad, with the frame number,
# stream offset, length and the receive window's right edge of the last
# ACK before them.
check() {
	tshark -r "$1" -o tcp.relative_sequence_numbers:TRUE \
		-Y "tcp.port==$3" -T fields -e frame.number -e tcp.dstport \
		-e tcp.seq -e tcp.len -e tcp.ack -e tcp.window_size 2> /dev/null |
	awk -v s="$2" -v p="$3" -v bad="$tmp/bad" '
		BEGIN { w = 2 + s + (4 - (2 + s) % 4) % 4 + 4; req = -1 }
		$2 != p { edge = $5 + $6; next }
		$4 == 0 { next }
		req < 0 { req = $4; next }
		{ t++; fr[t] = $1; off[t] = $3 - 1 - req; len[t] = $4
		  ed[t] = edge - 1 - req
		  if (off[t] + len[t] > end) end = off[t] + len[t] }
		END { for (i = 1; i <= t; i++) {
			o = off[i] % w == 0
			wh = o && (len[i] % w == 0 || off[i] + len[i] == end)
			a += o; whole += wh
			if (!wh && nbad++ < 5)
				printf "frame %d offset %d length %d window edge %d\n",
				       fr[i], off[i], len[i], ed[i] > bad
			k = int((len[i] + w - 1) / w); if (k > m) m = k; sum += k
		      }
		      print t + 0, a + 0, whole + 0, m + 0, sum + 0 }'
}

for i in "${!cases[@]}"; do
	read -r gso size <<< "${cases[$i]}"
	n=$((n + 1))
	port=$((7300 + n))
	ip netns exec "$NA" ethtool -K mtr0 tso "$gso" gso "$gso" > /dev/null 2>&1
	ip netns exec "$NA" tshark -i mtr0 -f "tcp port $port" -s 128 -B 16 -w "$tmp/cap" > "$tmp/t.err" 2>&1 &
	tpid=$!
	for _ in $(seq 1800); do
		grep -q 'Capture started' "$tmp/t.err" && break
		sleep 0.1
	done
	ip netns exec "$NB" "$cat" -l 192.0.2.2 "$port" > "$tmp/out" 2> "$tmp/l.err" &
	lpid=$!
	for _ in $(seq 100); do
		ip netns exec "$NB" grep -qi "$(printf ':%04X ' "$port")" /proc/net/tcp && break
		sleep 0.1
	done
	ip netns exec "$NA" "$cat" -M -s "$size" 192.0.2.2 "$port" < "$tmp/in" 2> "$tmp/i.err"
	ist=$?
	wait "$lpid"
	lst=$?
	sleep 1
	kill -INT "$tpid"
	wait "$tpid"
	[ -n "${MPA_TRAIN_KEEP:-}" ] && cp "$tmp/cap" "$MPA_TRAIN_KEEP/cap$n.pcap"
	rm -f "$tmp/bad"
	read -r segs starts whole maxk fpdus <<< "$(check "$tmp/cap" "$size" "$port")"
	echo "# ${names[$i]}: $segs data segments, $starts start with an FPDU," \
	     "$whole hold whole FPDUs, at most $maxk FPDUs in one, $fpdus FPDUs in all"
	ok=0
	if [ "$ist" = 0 ] && [ "$lst" = 0 ] && cmp -s "$tmp/in" "$tmp/out" &&
	   [ "$segs" -gt 0 ] && [ "$starts" = "$segs" ] && [ "$whole" = "$segs" ]; then
		case $i in
		0) [ "$maxk" = 1 ] && ok=1 ;;
		1) [ "$fpdus" -ge $((4 * segs)) ] && ok=1 ;;
		2) [ "$maxk" -ge 4 ] && ok=1 ;;
		esac
	fi
	if [ "$ok" = 1 ]; then
		echo "ok $n ${names[$i]}"
	else
		echo "not ok $n ${names[$i]}"
		sed 's/^/# /' "$tmp/bad" "$tmp/i.err" "$tmp/l.err" 2> /dev/null
		fail=1
	fi
done
exit $fail
