#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iwmpa.ko, the iWARP RDMA device over rdmap.ko, driven by the stock
# tools (TAP): iproute2's rdma, ibverbs-utils and, through libibverbs and
# rdma-core's siw provider, iwmpa_verbs (make -C selftests). Run as root
# inside the project VM by run_tests.sh, with iwmpa.ko installed where
# modprobe finds it (tools/vm/run --extra-modules) or as ../rdmap/iwmpa.ko.
#
# In the namespaces iwmpa0 and iwmpa1 joined by a veth pair: modprobe
# iwmpa (and the rescuer threads of its two workqueues), "rdma link add iwm0 type iwmpa netdev veth0", the device and its
# port as rdma, ibv_devices and ibv_devinfo show them (transport iWARP,
# the limits exactly), a second device on the same netdev refused, a PD
# and two MRs (1 MiB, and 5000 octets at an odd address) seen by "rdma
# resource show" while iwmpa_verbs holds them, the device's counters
# (rdma statistic, hw_counters) all 0, the port state following
# the veth carrier, a graceful disconnect while a Send is stuck in TCP
# (iwmpa_disc between iwm0 and iwm1 on veth1, every packet to veth1
# dropped: rdma_disconnect() returns within 10 s, every Send completes),
# "rdma link delete", a device removed with its netdev,
# and rmmod iwmpa removing the device left. Everything is torn down at
# the end (namespaces, iwmpa unloaded).
#
# Usage: iwmpa_device.sh [-h|--help]
# Exit status 0 when all passed, 1 otherwise, 4 when skipped (no rdma,
# ibv_devinfo, iwmpa_verbs or iwmpa.ko, not root).

case ${1:-} in
-h | --help) sed -n '4,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
ns0=iwmpa0
ns1=iwmpa1
tmp=$(mktemp -d)
hpid=
NTESTS=19
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"

skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
# run in namespace iwmpa0 (RDMA devices are shared by all namespaces)
in0() { ip netns exec "$ns0" "$@"; }
dev_exists() { rdma dev show "$1" > /dev/null 2>&1; }

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	[ -z "$hpid" ] || kill "$hpid" 2> /dev/null
	for d in iwm0 iwm1 iwm2; do
		! dev_exists "$d" || rdma link delete "$d" 2> /dev/null
	done
	ip netns del "$ns0" 2> /dev/null
	ip netns del "$ns1" 2> /dev/null
	# run_tests.sh and later tests unload ddp.ko and mpa.ko: iwmpa.ko
	# must go first, and rdmap.ko (its soft dependency) if loaded here
	unload iwmpa || echo "# cannot unload iwmpa"
	[ "$rdmap_before" = 1 ] || unload rdmap || echo "# cannot unload rdmap"
	rm -rf "$tmp"
}

names=("modprobe iwmpa (ib_core, ib_uverbs, ddp, mpa, rdmap with it), its workqueues' rescuers"
	"rdma link add iwm0 type iwmpa netdev veth0"
	"a second device on veth0 is refused"
	"rdma dev show iwm0: node_type rnic, GUID from the MAC"
	"rdma link show iwm0/1: state ACTIVE, LINK_UP, netdev veth0"
	"ibv_devices lists iwm0"
	"ibv_devinfo -d iwm0: transport iWARP, port active, Ethernet"
	"ibv_devinfo -v -d iwm0: the device's limits, exactly"
	"iwmpa_verbs iwm0: siw provider opens it, PD, MRs, a CQ and a QP"
	"rdma resource show pd: iwmpa_verbs's PD on iwm0"
	"rdma resource show mr: 1 MiB and 5000 octets on iwm0"
	"rdma statistic show link iwm0/1: the 13 counters, all 0"
	"port state follows the veth carrier (DOWN, then ACTIVE)"
	"iwmpa_disc: rdma_disconnect() with a Send stuck in TCP returns, all completed"
	"iwmpa_disc connect: rdma_connect() that TCP cannot complete fails in time"
	"rdma link delete iwm0"
	"device removed with its netdev (ip link del)"
	"rmmod iwmpa removes the device left"
	"nothing left: no iwmpa device, namespaces gone")

echo "TAP version 13"
echo "1..$NTESTS"

why=
if [ "$(id -u)" != 0 ]; then
	why="needs root"
elif ! command -v rdma > /dev/null; then
	why="rdma missing (package iproute2)"
elif ! command -v ibv_devinfo > /dev/null; then
	why="ibv_devinfo missing (package ibverbs-utils)"
elif [ ! -x "$here/iwmpa_verbs" ]; then
	why="no $here/iwmpa_verbs (make -C selftests, needs libibverbs-dev)"
elif grep -q '^iwmpa ' /proc/modules; then
	why="iwmpa is loaded already: not touching it"
elif ! modinfo iwmpa > /dev/null 2>&1 && [ ! -f "$top/rdmap/iwmpa.ko" ]; then
	why="no iwmpa.ko"
fi
if [ -n "$why" ]; then
	for t in "${names[@]}"; do skip "$t" "$why"; done
	exit 4
fi
rdmap_before=0
grep -q '^rdmap ' /proc/modules && rdmap_before=1
trap cleanup EXIT

# 1: the module, and what it needs
if ! modprobe iwmpa 2> "$tmp/mod"; then
	# not installed: the build tree's, after what modprobe can load
	modprobe -a ib_uverbs ddp rdmap 2>> "$tmp/mod" ||
		insmod "$top/rdmap/rdmap.ko" 2>> "$tmp/mod"
	insmod "$top/rdmap/iwmpa.ko" 2>> "$tmp/mod"
fi
r=0
for m in iwmpa ib_core ib_uverbs ddp mpa rdmap; do
	present "$m" || { echo "# $m not loaded"; r=1; }
done
[ "$r" = 0 ] || sed 's/^/# /' "$tmp/mod"
# iwmpa's two workqueues (send queues, connections) have their rescuer
# threads: "iwmpa" and "iwmpa_cm" up to Linux 6.8, "kworker/R-" and the
# name since (cut to 15 characters in comm)
resc=$(cat /proc/[0-9]*/comm 2> /dev/null | grep -cE '^(kworker/R-)?iwmpa(_cm)?$')
echo "# rescuer threads of iwmpa's workqueues: $resc"
[ "$resc" = 2 ] || r=1
result "$r" "${names[0]}"
modprobe veth

mode=$(rdma system show 2> /dev/null | sed -n 's/.*netns \([a-z]*\).*/\1/p')
[ "$mode" = shared ] || rdma system set netns shared
ip netns add "$ns0"
ip netns add "$ns1"
ip link add veth0 netns "$ns0" type veth peer name veth1 netns "$ns1"
ip -n "$ns0" link set veth0 address 02:00:00:00:69:01
ip -n "$ns0" link set veth0 up
ip -n "$ns1" link set veth1 up
carrier() {	# ns dev: is the carrier of dev up?
	ip -n "$1" -o link show dev "$2" 2> /dev/null | grep -q 'LOWER_UP'
}
for _ in $(seq 50); do carrier "$ns0" veth0 && break; sleep 0.1; done

# 2-3: create, refuse a second one on the same netdev
in0 rdma link add iwm0 type iwmpa netdev veth0 2> "$tmp/add"
r=$?
[ "$r" = 0 ] || sed 's/^/# /' "$tmp/add"
result "$r" "${names[1]}"
if in0 rdma link add iwm9 type iwmpa netdev veth0 2> /dev/null; then
	not_ok "${names[2]}"
	rdma link delete iwm9
else
	ok "${names[2]}"
fi

# 4: rdma dev show; node GUID is the EUI-64 of 02:00:00:00:69:01
rdma dev show iwm0 > "$tmp/dev" 2>&1
sed 's/^/# /' "$tmp/dev"
grep -q 'iwm0: node_type rnic .*node_guid 0000:00ff:fe00:6901' "$tmp/dev"
result $? "${names[3]}"

# 5: the port; its state may lag the carrier by a moment. rdma names the
# netdev only to a caller in its namespace
port_state() { in0 rdma link show iwm0/1 2>&1 | tee "$tmp/link"; }
for _ in $(seq 50); do
	port_state | grep -q 'state ACTIVE' && break
	sleep 0.1
done
sed 's/^/# /' "$tmp/link"
grep -q 'link iwm0/1 state ACTIVE physical_state LINK_UP netdev veth0' "$tmp/link"
result $? "${names[4]}"

# 6-8: libibverbs through the siw provider
in0 ibv_devices > "$tmp/devs" 2>&1
sed 's/^/# /' "$tmp/devs"
grep -Eq '^[[:space:]]*iwm0[[:space:]]+000000fffe006901' "$tmp/devs"
result $? "${names[5]}"

in0 ibv_devinfo -d iwm0 > "$tmp/info" 2>&1
sed 's/^/# /' "$tmp/info"
r=0
for want in 'hca_id:[[:space:]]*iwm0$' 'transport:[[:space:]]*iWARP \(1\)$' \
	'phys_port_cnt:[[:space:]]*1$' 'state:[[:space:]]*PORT_ACTIVE \(4\)$' \
	'link_layer:[[:space:]]*Ethernet$' 'vendor_id:[[:space:]]*0x69776d$'; do
	grep -Eq "$want" "$tmp/info" || { echo "# missing: $want"; r=1; }
done
result "$r" "${names[6]}"

in0 ibv_devinfo -v -d iwm0 > "$tmp/infov" 2>&1
r=0
for kv in max_mr_size:0x100000000 page_size_cap:0x1000 max_qp:1024 \
	max_qp_wr:1024 max_sge:6 max_sge_rd:1 max_cq:1024 max_cqe:8192 \
	max_mr:16384 max_pd:1024 max_qp_rd_atom:64 max_qp_init_rd_atom:64 \
	max_res_rd_atom:65536 max_srq:1024 max_srq_wr:4096 max_srq_sge:6 \
	max_mw:0 atomic_cap:ATOMIC_NONE; do
	k=${kv%%:*} v=${kv#*:}
	got=$(sed -n "s/^[[:space:]]*$k:[[:space:]]*\([^[:space:]]*\).*/\1/p" "$tmp/infov" |
		head -n 1)
	echo "# $k: $got"
	[ "$got" = "$v" ] || { echo "# $k: want $v"; r=1; }
done
result "$r" "${names[7]}"

# 9-11: objects, held while rdma resource looks at them
in0 "$here/iwmpa_verbs" iwm0 "$tmp/go" > "$tmp/verbs" 2>&1 &
hpid=$!
for _ in $(seq 100); do
	grep -q '^# ready' "$tmp/verbs" && break
	kill -0 "$hpid" 2> /dev/null || break
	sleep 0.1
done
rdma resource show pd dev iwm0 > "$tmp/pd" 2>&1
rdma resource show mr dev iwm0 > "$tmp/mr" 2>&1
touch "$tmp/go"
wait "$hpid"
r=$?
hpid=
sed 's/^/# /' "$tmp/verbs"
result "$r" "${names[8]}"
sed 's/^/# /' "$tmp/pd" "$tmp/mr"
[ "$(grep -c 'dev iwm0 .*comm iwmpa_verbs' "$tmp/pd")" = 1 ]
result $? "${names[9]}"
grep -q 'dev iwm0 .*mrlen 1048576 .*comm iwmpa_verbs' "$tmp/mr" &&
	grep -q 'dev iwm0 .*mrlen 5000 .*comm iwmpa_verbs' "$tmp/mr" &&
	[ "$(grep -c 'dev iwm0 ' "$tmp/mr")" = 2 ]
result $? "${names[10]}"

# 12: the device's counters (hw_counters): nothing was sent or received,
# the flushed work requests of iwmpa_verbs do not count
r=0
rdma statistic show link iwm0/1 > "$tmp/stat" 2>&1
sed 's/^/# /' "$tmp/stat"
for c in send_tx write_tx read_tx tx_bytes recv_rx read_done rx_bytes \
	reg_mr local_inv remote_inv connections qp_fatal cq_overflow; do
	grep -Eq "(^|[[:space:]])$c 0([[:space:]]|\$)" "$tmp/stat" ||
		{ echo "# $c: want 0"; r=1; }
	[ "$(cat "/sys/class/infiniband/iwm0/ports/1/hw_counters/$c")" = 0 ] ||
		{ echo "# hw_counters/$c: want 0"; r=1; }
done
result "$r" "${names[11]}"

# 13: carrier off on veth0 when its peer goes down
wait_state() {	# STATE
	for _ in $(seq 50); do
		in0 rdma link show iwm0/1 2> /dev/null | grep -q "state $1 " && return 0
		sleep 0.1
	done
	in0 rdma link show iwm0/1 | sed 's/^/# /'
	return 1
}
ip -n "$ns1" link set veth1 down
wait_state DOWN
r=$?
ip -n "$ns1" link set veth1 up
wait_state ACTIVE || r=1
result "$r" "${names[12]}"

# 14: rdma_disconnect() while a Send waits for TCP's memory: iwmpa_disc
# server on iwm0, client on iwm1 (veth1), which drops every packet that
# arrives once connected
disc_test() {
	local cmd="tc qdisc add dev veth1 ingress && tc filter add dev veth1 ingress matchall action drop"
	local spid r=0

	ip -n "$ns0" addr add 192.0.2.1/24 dev veth0 &&
		ip -n "$ns1" addr add 192.0.2.2/24 dev veth1 &&
		ip netns exec "$ns1" rdma link add iwm1 type iwmpa netdev veth1 ||
		return 1
	in0 timeout 120 "$here/iwmpa_disc" server 192.0.2.1 7300 > "$tmp/disc.srv" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		in0 ss -Hltn 'sport = :7300' | grep -q . && break
		sleep 0.1
	done
	ip netns exec "$ns1" timeout 120 "$here/iwmpa_disc" client 192.0.2.1 7300 \
		"$cmd" > "$tmp/disc.cli" 2>&1 || r=1
	wait "$spid" || r=1
	sed 's/^/# /' "$tmp/disc.srv" "$tmp/disc.cli"
	ip netns exec "$ns1" tc qdisc del dev veth1 ingress 2> /dev/null
	return $r
}
# 15: rdma_connect() while every TCP packet arriving at veth1 is dropped
# (ARP still passes): it fails with ETIMEDOUT after mpa_timeout_ms
connect_test() {
	local cmd="tc qdisc add dev veth1 ingress && tc filter add dev veth1 ingress protocol ip u32 match ip protocol 6 0xff action drop"
	local r=0

	ip netns exec "$ns1" timeout 120 "$here/iwmpa_disc" connect 192.0.2.1 7301 \
		"$cmd" > "$tmp/conn.cli" 2>&1 || r=1
	sed 's/^/# /' "$tmp/conn.cli"
	ip netns exec "$ns1" tc qdisc del dev veth1 ingress 2> /dev/null
	return $r
}
if [ ! -x "$here/iwmpa_disc" ]; then
	skip "${names[13]}" "no $here/iwmpa_disc (make -C selftests, needs librdmacm-dev)"
	skip "${names[14]}" "no $here/iwmpa_disc (make -C selftests, needs librdmacm-dev)"
else
	disc_test
	result $? "${names[13]}"
	connect_test
	result $? "${names[14]}"
	rdma link delete iwm1 || echo "# cannot delete iwm1"
	ip -n "$ns0" addr flush dev veth0
	ip -n "$ns1" addr flush dev veth1
fi

# 16: delete
rdma link delete iwm0 2>&1 | sed 's/^/# /'
! dev_exists iwm0
result $? "${names[15]}"

# 17: a device on veth1 goes with it (the netdev notifier)
r=1
if ip netns exec "$ns1" rdma link add iwm1 type iwmpa netdev veth1 &&
	dev_exists iwm1; then
	ip -n "$ns1" link del veth1
	for _ in $(seq 50); do
		dev_exists iwm1 || { r=0; break; }
		sleep 0.1
	done
fi
result "$r" "${names[16]}"

# 18: unload with a device: veth0 went with veth1, so on lo of iwmpa0
r=1
if in0 rdma link add iwm2 type iwmpa netdev lo && dev_exists iwm2; then
	rmmod iwmpa && ! dev_exists iwm2 && r=0
fi
result "$r" "${names[17]}"

# 19: clean
ip netns del "$ns0"
ip netns del "$ns1"
! grep -q '^iwmpa ' /proc/modules && ! rdma dev show | grep -q ' iwm[0-9]:' &&
	! ip netns list | grep -Eq "^($ns0|$ns1)\b"
result $? "${names[18]}"

exit "$fail"
