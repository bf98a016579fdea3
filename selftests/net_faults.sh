#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Byte-exact transfers under network faults (TAP): two network namespaces
# joined by a veth pair (MTU 1500), tools/mpa-cat and tools/ddp-xfer with
# markers and CRC both ways, the received octets compared by SHA-256 with
# what was sent. One case per fault, each run with both tools:
#
#   clean       no fault (the reference time)
#   loss        netem loss 1 % on both ends
#   reorder     netem delay 1ms reorder 25 % 50 % on both ends
#   duplicate   netem duplicate 2 % on both ends
#   jitter      netem delay 2ms 1ms on both ends (reorders too)
#   mtu         MTU 1500 -> 1280 -> 9000 on both ends in mid-transfer (after
#               a quarter and half of the data; netem rate FAULT_MB mbit)
#   rcvbuf      a tiny receive buffer: net.ipv4.tcp_rmem "4096 4096 4096"
#               in the receiver's namespace (neither tool has an option)
#
# Environment: FAULT_MB, octets per transfer in MiB (default 8);
# FAULT_CASES, the cases to run (default all, in the order above).
#
# The ddp mtu case once failed: DDP cut a message into segments by the
# MULPDU at its start, and when the MTU shrank in mid-message MPA refused
# the next segment (EMSGSIZE). MPA now cuts the message itself
# (mpa_send_msg_locked()), by the MULPDU of the moment for each segment.
# Needs root, mpa.ko and ddp.ko loaded, veth and sch_netem.
# Exit status: 0 all passed, 1 a failure, 4 skipped.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
cat=$here/../tools/mpa-cat
xfer=$here/../tools/ddp-xfer
mb=${FAULT_MB:-8}
read -r -a cases <<< "${FAULT_CASES:-clean loss reorder duplicate jitter mtu rcvbuf}"
na=nfa$$ nb=nfb$$
ipa=10.77.0.1 ipb=10.77.0.2
# below the ephemeral ports (32768 up), which a client's socket may hold
port=$((20000 + RANDOM % 10000))
tmp=$(mktemp -d)
pids=() rmem=

cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	ip netns del "$na" 2>/dev/null
	ip netns del "$nb" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

show() { sed 's/^/# /' "$@"; }
now() { date +%s.%N; }
A() { ip netns exec "$na" "$@"; }
B() { ip netns exec "$nb" "$@"; }

echo "TAP version 13"
echo "1..$((2 * ${#cases[@]}))"

skip_all() {
	local c t

	for c in "${cases[@]}"; do
		for t in mpa ddp; do
			n=$((n + 1))
			echo "ok $n $t $c # SKIP $1"
		done
	done
	exit 4
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -x "$cat" ] && [ -x "$xfer" ] || skip_all "tools not built (make -C tools)"
grep -q '^ddp ' /proc/modules || skip_all "ddp.ko not loaded"
modprobe -q veth 2>/dev/null
modprobe -q sch_netem 2>/dev/null || skip_all "no sch_netem"

setup() {
	ip netns add "$na" && ip netns add "$nb" &&
	ip link add va netns "$na" type veth peer name vb netns "$nb" &&
	A ip addr add "$ipa/24" dev va && B ip addr add "$ipb/24" dev vb &&
	A ip link set lo up && B ip link set lo up &&
	A ip link set va up mtu 1500 && B ip link set vb up mtu 1500
}
setup || skip_all "cannot create the namespaces and the veth pair"

# a process in each namespace: its /proc/PID/net shows the namespace
# without the cost of "ip netns exec" (over a second on a loaded host)
ip netns exec "$na" sleep 1000000 > /dev/null 2>&1 &
pa=$!
ip netns exec "$nb" sleep 1000000 > /dev/null 2>&1 &
pb=$!
pids+=("$pa" "$pb")

# fault CASE: the conditions of a case on a fresh pair of ends
fault() {
	tc -n "$na" qdisc del dev va root 2>/dev/null
	tc -n "$nb" qdisc del dev vb root 2>/dev/null
	ip -n "$na" link set va mtu 1500
	ip -n "$nb" link set vb mtu 1500
	if [ -n "$rmem" ]; then
		B sysctl -qw net.ipv4.tcp_rmem="$rmem"
		rmem=
	fi
	case $1 in
	loss)		netem loss 1% ;;
	reorder)	netem delay 1ms reorder 25% 50% ;;
	duplicate)	netem duplicate 2% ;;
	jitter)		netem delay 2ms 1ms ;;
	# at least 8 s for the transfer, so that the MTU changes come in time
	mtu)		netem rate "${mb}mbit" ;;
	rcvbuf)		rmem=$(B sysctl -n net.ipv4.tcp_rmem)
			B sysctl -qw net.ipv4.tcp_rmem="4096 4096 4096" ;;
	esac
}

netem() {
	tc -n "$na" qdisc add dev va root netem "$@" &&
	tc -n "$nb" qdisc add dev vb root netem "$@"
}

# rx_bytes PID: octets received by vb, read through a process in the
# receiver's namespace without forking (the machine may be slow)
rx_bytes() {
	local dev v

	while read -r dev v _; do
		[ "$dev" = vb: ] && { echo "$v"; return; }
	done 2>/dev/null < "/proc/$1/net/dev"
}

# mtu_changer PID BASE TOTAL: MTU 1280 after a quarter of the data, 9000
# after half of it (while PID, the receiver, runs). veth drops what is
# larger than the receiving end's MTU: the sender's end goes down first
# and up last.
mtu_changer() {
	local pid=$1 base=$2 total=$3 step=1 m got

	for m in 1280 9000; do
		while got=$(rx_bytes "$pid") && [ -n "$got" ] &&
		      [ $((got - base)) -lt $((total * step / 4)) ]; do
			sleep 0.01
		done
		[ -n "$got" ] || return
		if [ $m -lt 1500 ]; then
			ip -n "$na" link set va mtu $m
			ip -n "$nb" link set vb mtu $m
		else
			ip -n "$nb" link set vb mtu $m
			ip -n "$na" link set va mtu $m
		fi
		echo "mtu $m after $((got - base)) octets" >> "$tmp/mtu.log"
		step=$((step + 1))
	done
}

# one transfer with tool $1 (mpa or ddp), case $2; sets $st and $secs
transfer() {
	local tool=$1 c=$2 lpid mpid=0 t0 lst ist base limit sz

	port=$((port + 1))
	fault "$c"
	: > "$tmp/mtu.log"
	limit=$((120 + mb * 20))
	if [ "$tool" = mpa ]; then
		ip netns exec "$nb" timeout "$limit" "$cat" -l -m -v "$ipb" "$port" < /dev/null \
			> "$tmp/out" 2> "$tmp/l.err" &
	else
		ip netns exec "$nb" timeout "$limit" "$xfer" -l -m -v -t 120 "$ipb" "$port" \
			> "$tmp/out" 2> "$tmp/l.err" &
	fi
	lpid=$!
	pids+=("$lpid")
	wait_listen "$port" "/proc/$pb/net" || echo "# the receiver does not listen"
	base=$(rx_bytes "$lpid")
	if [ "$c" = mtu ]; then
		mtu_changer "$lpid" "$base" $((mb << 20)) &
		mpid=$!
		pids+=("$mpid")
	fi
	t0=$(now)
	# mpa-cat sends ULPDUs of the MULPDU of the startup: when the MTU
	# shrinks they fail with EMSGSIZE, so use a size that fits MTU 1280
	sz=()
	[ "$c" = mtu ] && sz=(-s 1000)
	if [ "$tool" = mpa ]; then
		A timeout "$limit" "$cat" -m -v "${sz[@]}" "$ipb" "$port" < "$tmp/in" \
			> /dev/null 2> "$tmp/i.err"
	else
		A timeout "$limit" "$xfer" -m -v -t 120 "$ipb" "$port" < "$tmp/in" \
			> /dev/null 2> "$tmp/i.err"
	fi
	ist=$?
	wait "$lpid"
	lst=$?
	secs=$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
	if [ "$mpid" != 0 ]; then
		kill "$mpid" 2>/dev/null
		wait "$mpid" 2>/dev/null
	fi
	st="$ist/$lst"
	sum=$(sha256sum < "$tmp/out" | cut -d' ' -f1)
	size=$(stat -c %s "$tmp/out")
	# what the fault did
	echo "# $tool $c: exit $st, $size octets in ${secs}s" \
	     "($(awk -v s="$size" -v t="$secs" 'BEGIN { printf "%.2f", s / (t + 0.01) / 1048576 }') MiB/s)"
	if [ "$c" != mtu ] && [ "$c" != rcvbuf ] && [ "$c" != clean ]; then
		tc -n "$na" -s qdisc show dev va | sed -n 's/^ *Sent/# sender netem: sent/p'
		tc -n "$nb" -s qdisc show dev vb | sed -n 's/^ *Sent/# receiver netem: sent/p'
	fi
	awk '/^Tcp:/ { if (!n++) { for (i = 1; i <= NF; i++) f[$i] = i; next }
		      print "# sender TCP retransmitted segments (all so far): " $f["RetransSegs"] }' \
		"/proc/$pa/net/snmp"
	show "$tmp/mtu.log"
}

# the MPA counters that must stay 0 on both ends
no_mpa_errors() {
	! grep -h 'rx_crc_errors\|rx_marker_errors' "$tmp/l.err" "$tmp/i.err" |
		grep -q 'errors [1-9]'
}

head -c $((mb << 20)) /dev/urandom > "$tmp/in"
want=$(sha256sum < "$tmp/in" | cut -d' ' -f1)
echo "# $mb MiB per transfer, sha256 $want"

for c in "${cases[@]}"; do
	for tool in mpa ddp; do
		transfer "$tool" "$c"
		if [ "$c" = mtu ] && [ "$(wc -l < "$tmp/mtu.log")" != 2 ]; then
			show "$tmp/i.err" "$tmp/l.err"
			not_ok "$tool $c: the MTU did not change twice in mid-transfer (exit $st)"
		elif [ "$st" = 0/0 ] && [ "$sum" = "$want" ] && no_mpa_errors; then
			ok "$tool $c: $mb MiB, sha256 equal, ${secs}s"
		else
			show "$tmp/i.err" "$tmp/l.err"
			not_ok "$tool $c: exit $st, $size octets, sha256 ${sum:0:16}"
		fi
	done
done
exit $fail
