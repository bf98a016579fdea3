#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics over iWARP (TAP): the kernel's NVMe/RDMA target
# (nvmet, nvmet-rdma, configured through configfs) and host (nvme-rdma,
# driven by nvme-cli) over two RDMA devices of one type, iwmpa (iwmpa.ko)
# or siw (soft-iWARP). Run as root inside the project VM by run_tests.sh,
# with iwmpa.ko installed where modprobe finds it (tools/vm/run
# --extra-modules) or as ../rdmap/iwmpa.ko.
#
# Why everything is in the initial network namespace: nvme-rdma and
# nvmet-rdma create their rdma_cm IDs with rdma_create_id(&init_net, ...)
# (drivers/nvme/host/rdma.c and drivers/nvme/target/rdma.c, 6.1 and 6.12),
# so both ends resolve and listen in init_net only. A veth pair created
# here gives each device its own netdev and address (documentation range):
#   target: nvtveth 192.0.2.1/24, RDMA device <type>t (iwmt or siwt)
#   host:   nvhveth 192.0.2.2/24, RDMA device <type>h (iwmh or siwh)
# nvme connect -w 192.0.2.2 binds the host's queues to the host device;
# the target listens on 192.0.2.1:4420. rdma_cm resolves the target's
# address for the host's cm_id, bound to nvhveth, as a neighbour on
# nvhveth (ARP over the pair), and the veth ends accept a local source
# address (accept_local=1, rp_filter=0) for that: a pair of local
# addresses is martian otherwise and the connect ends in an address
# error. The TCP connections the devices then make between the two
# addresses, both local to init_net, run over lo, where the capture is
# taken (dumpcap -i lo, tcp port 4420); no other address is used and the
# VM has no NIC.
#
# Storage: null_blk with memory_backed=1 (1 GiB, /dev/nullb0; keeps what
# is written), namespace 1 of subsystem $nqn (allow_any_host), port 1:
# trtype rdma, adrfam ipv4, traddr 192.0.2.1, trsvcid 4420.
#
# Tests:
#   1  modules (configfs, null_blk, nvmet, nvmet-rdma, nvme-rdma, the
#      device's), veth pair up
#   2  rdma link add <type>t (nvtveth), <type>h (nvhveth): ports ACTIVE
#   3  target configured; a TCP socket listens on 192.0.2.1:4420
#   4  nvme connect: controller live over rdma at traddr 192.0.2.1,
#      host_traddr 192.0.2.2, queue_count 1 + nr-io-queues (2), its
#      namespace's block device as large as /dev/nullb0; with nvmet-rdma's
#      use_srq (IWMPA_NVME_SRQ, default 1) the target device has a shared
#      receive queue (rdma resource show: srq 1 or more), where the
#      target's receives of every queue are posted (ib_post_srq_recv)
#   5  captured I/O: 1 MiB written with bs=128k and 64 KiB with bs=4k
#      (oflag=direct), read back (iflag=direct), equal
#   6  tshark on the capture of connect and test 5: one MPA Request and
#      one Reply per queue, C=1 in both (required for iwmpa and for the
#      siw-crc build), every FPDU's CRC good, no Terminate, no Send with
#      SE; host -> target only Sends and Read Responses (and on iwmpa,
#      which asks for RFC 6581's peer-to-peer model, exactly one RTR per
#      queue: a zero-length RDMA Write), target -> host
#      only Sends, Sends with Invalidate, RDMA Writes and Read Requests;
#      every command capsule (host Send) is 64 octets plus in-capsule data
#      (1024: Connect of an I/O queue, 4096: a 4 KiB write) when the port
#      has in-capsule data, every response capsule 16 octets; exactly 16
#      Sends of 4160 octets (the bs=4k writes) and nr-io-queues of 1088;
#      the target Reads exactly 1 MiB + 1024 octets (the bs=128k writes
#      and the admin queue's Connect data; without in-capsule data also
#      the 4 KiB writes and the I/O queues' Connect data), one Read
#      Response per Read Request, Read Response data = the sum of the
#      Read Requests' sizes; the target Writes at least the 1 MiB + 64
#      KiB read back; at least 32 Sends with Invalidate (one per command
#      of test 5 with a keyed SGL: the 8 + 8 bs=128k, the 16 bs=4k reads)
#   7-9  8 MiB of random data each with dd bs=4k, bs=128k, bs=1M
#      (oflag=direct, conv=fsync) to separate regions, caches dropped,
#      read back with the same bs (iflag=direct), equal
#   10 the target's null_blk holds the data of tests 5 and 7-9 (read on
#      the target side, iflag=direct)
#   11 fio: randwrite of 8 MiB with a bs mix (4k..128k), direct, libaio,
#      iodepth 8, --verify=crc32c: exit 0, no error, as much read back as
#      written (skipped without fio)
#   12 controller reset (reset_controller): nvme-rdma tears its queues
#      down and connects them again from its reset work, which runs on a
#      workqueue with a rescuer (nvme-reset-wq, WQ_MEM_RECLAIM), as it
#      does after a path failure; the target frees its queues from
#      nvmet-wq (WQ_MEM_RECLAIM). No kernel warning while it runs (a
#      reclaim worker that flushes or cancels work of a queue without a
#      rescuer is one: "workqueue: WQ_MEM_RECLAIM ... is flushing
#      !WQ_MEM_RECLAIM"), the controller live again with queue_count
#      1 + nr-io-queues, the region of test 5 read back and 1 MiB more
#      written and read back (bs=128k, at 40 MiB)
#   13 nvme disconnect -n $nqn: "disconnected 1 controller(s)", the
#      controller and its block device gone
#   14 teardown: configfs entries removed (port link, port, namespace,
#      subsystem), RDMA links and veth pair deleted, and the modules this
#      script loaded unloaded (nvme_rdma, nvme_fabrics, nvmet_rdma,
#      nvmet, nvme_core, on 6.12 nvme_auth and nvme_keyring, null_blk,
#      iwmpa and rdmap, or siw) so that later tests can unload ddp.ko and
#      mpa.ko
#
# Diagnostics ("#" lines, not tests): rdma resource show (the MRs, QPs
# and CQs of both devices while connected), the port's effective
# in-capsule data size, and kprobe hit counts of ib_alloc_mr and
# ib_map_mr_sg (the REG_MRs of both ends) when the kernel has kprobe
# events.
#
# Every program that can block in the kernel or on the network (modprobe,
# insmod, rmmod, ip, rdma, sysctl, mount, nvme, dd, fio, dumpcap, tshark,
# the configfs port link and the removals) runs under timeout; a failed
# connect fails its tests and the rest, and the teardown always runs
# (trap).
#
# Skipped (exit 4): not root, no module support, no ip/rdma/ss, no
# nvme-cli, no nvmet/nvmet-rdma/nvme-rdma/null_blk/configfs modules, nvmet
# or null_blk in use already, siw.ko missing (IWMPA_NVME_DEV=siw).
# The capture test is skipped without dumpcap/tshark, the fio test
# without fio.
#
# Usage: iwmpa_nvme.sh [-h|--help]
# Environment: IWMPA_NVME_DEV=iwmpa|siw (default iwmpa), SIW_KO (default
# ../build/siw-crc/siw.ko if it exists, else ../build/siw/siw.ko; on
# another kernel series than 6.1 ../build/k-SERIES/...), IWMPA_NVME_SRQ=1|0
# (nvmet-rdma's use_srq, default 1), IWMPA_NVME_OUT (a directory to keep
# the logs and the capture in).
# Exit status 0 when all passed, 1 otherwise, 4 when skipped.

case ${1:-} in
-h | --help) sed -n '4,/^# Exit status/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
series=$(uname -r | cut -d. -f1,2)
kbuild=$top/build
[ "$series" = 6.1 ] || kbuild=$top/build/k-$series
if [ -n "${SIW_KO:-}" ]; then
	ko=$SIW_KO
elif [ -f "$kbuild/siw-crc/siw.ko" ]; then
	ko=$kbuild/siw-crc/siw.ko
else
	ko=$kbuild/siw/siw.ko
fi
type=${IWMPA_NVME_DEV:-iwmpa}
out=${IWMPA_NVME_OUT:-}
use_srq=${IWMPA_NVME_SRQ:-1}
nqn=nqn.2014-08.org.example:iwmpa-nvme-selftest
hostid=5d1c0f6e-2b7a-4c39-9e8d-3f4a6b2c1d0e
hostnqn=nqn.2014-08.org.nvmexpress:uuid:$hostid
taddr=192.0.2.1
haddr=192.0.2.2
tveth=nvtveth
hveth=nvhveth
port=4420
nio=2
cfs=/sys/kernel/config
nvmet=$cfs/nvmet
sub=$nvmet/subsystems/$nqn
nport=$nvmet/ports/1
tmp=$(mktemp -d)
n=0 fail=0
NTESTS=14
mounted_cfs=0 connected=0 blk='' ctrl=''
# the modules this script may load, in the order they are unloaded
unload_order=(nvme_rdma nvme_fabrics nvmet_rdma nvmet nvme_core nvme_auth
	nvme_keyring null_blk iwmpa rdmap siw)
before=

# siw_capture_stop
# shellcheck source=../tools/siw/lib.sh disable=SC1091
. "$top/tools/siw/lib.sh"

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
show() { sed 's/^/# /' "$@"; }
mod_loaded() { grep -q "^$1 " /proc/modules; }
# loaded, or built into the kernel (the debug kernel's RDMA core, veth)
present() {
	mod_loaded "$1" ||
		grep -q "/$1\.ko\$" "/lib/modules/$(uname -r)/modules.builtin" 2> /dev/null
}
dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# Diagnostics, not tests: kprobes count ib_alloc_mr (MRs the ULPs
# allocate) and ib_map_mr_sg (one per IB_WR_REG_MR nvme-rdma and rdma_rw
# post) through kprobe_profile; nothing when the kernel has no kprobe
# events
tr=/sys/kernel/tracing
[ -e "$tr/kprobe_events" ] || tr=/sys/kernel/debug/tracing
kprobes=0
kp_on() {
	[ -w "$tr/kprobe_events" ] || return 0
	echo 'p:iwnvme/iwnvme_alloc_mr ib_alloc_mr' >> "$tr/kprobe_events" 2> /dev/null &&
		echo 'p:iwnvme/iwnvme_map_mr_sg ib_map_mr_sg' >> "$tr/kprobe_events" 2> /dev/null &&
		echo 1 > "$tr/events/iwnvme/enable" 2> /dev/null && kprobes=1
	[ "$kprobes" = 1 ] || kp_off
}
kp_hits() {	# EVENT: hits so far (kprobe_profile: event name, hits, misses)
	awk -v e="iwnvme_$1" '$1 == e { print $2 }' "$tr/kprobe_profile" 2> /dev/null
}
kp_off() {
	[ -d "$tr/events/iwnvme" ] || return 0
	echo 0 > "$tr/events/iwnvme/enable"
	echo '-:iwnvme/iwnvme_alloc_mr' >> "$tr/kprobe_events"
	echo '-:iwnvme/iwnvme_map_mr_sg' >> "$tr/kprobe_events"
	kprobes=0
}

case $type in
iwmpa) short=iwm ;;
siw) short=siw ;;
*) echo "IWMPA_NVME_DEV must be iwmpa or siw, not $type" >&2; exit 2 ;;
esac
dt=${short}t
dh=${short}h

names=("modules loaded ($type, nvmet, nvmet-rdma, nvme-rdma, null_blk), $tveth $taddr <-> $hveth $haddr up"
	"rdma link add $dt ($tveth) and $dh ($hveth): both ports ACTIVE"
	"nvmet: subsystem, namespace (null_blk), port rdma $taddr:$port listening"
	"nvme connect -t rdma -a $taddr -s $port -w $haddr: controller live, block device"
	"captured I/O: 1 MiB bs=128k and 64 KiB bs=4k written and read back (direct)"
	"tshark: MPA per queue, every FPDU's CRC good, RDMAP opcodes and sizes of NVMe/RDMA"
	"dd bs=4k: 8 MiB written (oflag=direct) and read back (iflag=direct), equal"
	"dd bs=128k: 8 MiB written (oflag=direct) and read back (iflag=direct), equal"
	"dd bs=1M: 8 MiB written (oflag=direct) and read back (iflag=direct), equal"
	"target side: /dev/nullb0 holds the data written over the fabric"
	"fio randwrite 8 MiB, bs 4k..128k, direct, --verify=crc32c"
	"reset_controller: queues reconnected, no kernel warning, data read and written"
	"nvme disconnect -n $nqn: controller and block device gone"
	"teardown: configfs entries, links, veth pair removed, modules unloaded")

echo "TAP version 13"
echo "1..$NTESTS"

why=
if [ "$(id -u)" != 0 ]; then
	why="needs root"
elif [ ! -e /proc/modules ]; then
	why="this kernel cannot load modules (run it in the VM)"
elif ! command -v rdma > /dev/null || ! command -v ip > /dev/null ||
	! command -v ss > /dev/null; then
	why="rdma, ip or ss missing (package iproute2)"
elif ! command -v nvme > /dev/null; then
	why="nvme missing (package nvme-cli)"
elif [ "$type" = siw ] && [ ! -f "$ko" ]; then
	why="no $ko (run tools/siw/build on the host)"
elif [ "$type" = siw ] && mod_loaded siw; then
	why="siw is loaded already: not touching it"
elif mod_loaded null_blk; then
	why="null_blk is loaded already: not touching it"
elif [ -d "$nvmet" ] && [ -n "$(ls -A "$nvmet/subsystems" "$nvmet/ports" 2> /dev/null)" ]; then
	why="nvmet is configured already: not touching it"
elif timeout 30 ip link show "$tveth" > /dev/null 2>&1 || timeout 30 ip link show "$hveth" > /dev/null 2>&1; then
	why="$tveth or $hveth exists already"
else
	for m in configfs nvmet nvmet-rdma nvme-rdma nvme-fabrics null_blk rdma_cm; do
		if ! timeout 30 modprobe -n "$m" > /dev/null 2>&1; then
			why="module $m not found for $(uname -r)"
			break
		fi
	done
fi
if [ -n "$why" ]; then
	for t in "${names[@]}"; do skip "$t" "$why"; done
	exit 4
fi

before=$(cut -d' ' -f1 /proc/modules)

# nqn_ctrl: the controller (sysfs) of subsystem $nqn, if any
nqn_ctrl() {
	local c

	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$nqn" ] && echo "$c"
	done
}

# nqn_subsys: the host's subsystem (sysfs) of $nqn, if any (multipath)
nqn_subsys() {
	local s

	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ -e "$s/subsysnqn" ] && [ "$(cat "$s/subsysnqn")" = "$nqn" ] && echo "$s"
	done
}

# unload_ours: the modules of unload_order this script loaded; in order,
# but in several passes for 10 s at most (what depends on what differs
# between kernels, and device and controller teardown is asynchronous)
unload_ours() {
	local m left

	for _ in $(seq 50); do
		left=
		for m in "${unload_order[@]}"; do
			grep -qx "$m" <<< "$before" && continue
			mod_loaded "$m" || continue
			timeout 10 rmmod "$m" 2> /dev/null || left="$left $m"
		done
		[ -z "$left" ] && return 0
		sleep 0.2
	done
	echo "# cannot unload:$left"
	return 1
}

# disconnect the host, remove the target's configfs entries (port link,
# port, namespace, subsystem), links, veth; 0 when everything went
target_down() {
	local r=0

	if [ -L "$nport/subsystems/$nqn" ]; then
		timeout 60 rm "$nport/subsystems/$nqn" || r=1
	fi
	if [ -d "$nport" ]; then
		timeout 60 rmdir "$nport" || r=1
	fi
	if [ -d "$sub/namespaces/1" ]; then
		echo 0 > "$sub/namespaces/1/enable"
		timeout 60 rmdir "$sub/namespaces/1" || r=1
	fi
	if [ -d "$sub" ]; then
		timeout 60 rmdir "$sub" || r=1
	fi
	return $r
}

# teardown: everything this script set up, then the modules it loaded;
# 0 when everything went
teardown() {
	local r=0 d m

	kp_off 2> /dev/null
	# also a controller of a connect that timed out
	if [ "$connected" = 1 ] || [ -n "$(nqn_ctrl)" ]; then
		timeout 60 nvme disconnect -n "$nqn" > /dev/null 2>&1 || r=1
		connected=0
	fi
	target_down || r=1
	for d in "$dt" "$dh"; do
		! dev_exists "$d" || timeout 30 rdma link delete "$d" 2>&1 | show
	done
	! timeout 30 ip link show "$tveth" > /dev/null 2>&1 || timeout 30 ip link del "$tveth" || r=1
	unload_ours || r=1
	if [ "$mounted_cfs" = 1 ]; then
		timeout 30 umount "$cfs" || r=1
		mounted_cfs=0
	fi
	return $r
}

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	siw_capture_stop
	if [ -n "$out" ]; then
		mkdir -p "$out" && cp -a "$tmp"/. "$out"/
	fi
	teardown > /dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# the reason the later tests cannot pass, empty while all is well
broken=
# fail_rest FROM TO: not ok for tests FROM..TO (indices into names), with
# the reason
fail_rest() {
	local i

	for i in $(seq "$1" "$2"); do
		echo "# $broken"
		not_ok "${names[$i]}"
	done
}

# 1: modules, configfs, veth pair
r=0
# libcrc32c keeps the crc32c driver that was best when it loaded (siw)
timeout 30 modprobe -q crc32c_intel 2> /dev/null
for m in configfs ib_core iw_cm rdma_cm libcrc32c veth nvmet nvmet_rdma nvme_fabrics nvme_rdma; do
	a=()
	[ "$m" != nvmet_rdma ] || a=("use_srq=$use_srq")
	timeout 60 modprobe "$m" "${a[@]}" 2>&1 | show
	present "$m" || { echo "# $m not loaded"; r=1; }
done
srq_param=$(cat /sys/module/nvmet_rdma/parameters/use_srq 2> /dev/null)
echo "# nvmet_rdma use_srq: ${srq_param:-?}"
case $use_srq$srq_param in 1Y | 0N) ;; *) echo "# use_srq is not $use_srq"; r=1 ;; esac
if ! grep -q " $cfs configfs " /proc/mounts; then
	if timeout 30 mount -t configfs configfs "$cfs"; then
		mounted_cfs=1
	else
		r=1
	fi
fi
[ -d "$nvmet" ] || { echo "# no $nvmet"; r=1; }
timeout 60 modprobe null_blk nr_devices=1 memory_backed=1 gb=1 2>&1 | show
for _ in $(seq 100); do
	[ -b /dev/nullb0 ] && break
	sleep 0.1
done
[ -b /dev/nullb0 ] || { echo "# no /dev/nullb0"; r=1; }
if [ "$type" = siw ]; then
	# what this build of siw needs (6.12's: ib_uverbs for ib_umem)
	for m in $(modinfo -F depends "$ko" 2> /dev/null | tr , ' '); do
		timeout 60 modprobe "$m" 2>&1 | show
	done
	timeout 60 insmod "$ko" 2> "$tmp/mod" || { show "$tmp/mod"; r=1; }
	echo "# siw: $ko"
elif ! mod_loaded iwmpa; then
	if ! timeout 60 modprobe iwmpa 2> "$tmp/mod"; then
		# not installed: the build tree's, after what modprobe can load
		timeout 60 modprobe -a ddp rdmap 2>> "$tmp/mod" ||
			timeout 60 insmod "$top/rdmap/rdmap.ko" 2>> "$tmp/mod"
		timeout 60 insmod "$top/rdmap/iwmpa.ko" 2>> "$tmp/mod"
	fi
	mod_loaded iwmpa || { show "$tmp/mod"; r=1; }
fi
mode=$(timeout 30 rdma system show 2> /dev/null | sed -n 's/.*netns \([a-z]*\).*/\1/p')
[ "$mode" = shared ] || timeout 30 rdma system set netns shared
if timeout 30 ip link add "$tveth" type veth peer name "$hveth"; then
	for d in "$tveth:$taddr" "$hveth:$haddr"; do
		timeout 30 sysctl -qw "net.ipv6.conf.${d%%:*}.disable_ipv6=1" \
			"net.ipv4.conf.${d%%:*}.accept_local=1" \
			"net.ipv4.conf.${d%%:*}.rp_filter=0" || r=1
		timeout 30 ip addr add "${d#*:}/24" dev "${d%%:*}" || r=1
		timeout 30 ip link set "${d%%:*}" up || r=1
	done
else
	r=1
fi
carrier() { timeout 30 ip -o link show dev "$1" 2> /dev/null | grep -q 'LOWER_UP.* state UP'; }
up=0
for _ in $(seq 100); do
	carrier "$tveth" && carrier "$hveth" && { up=1; break; }
	sleep 0.1
done
[ "$up" = 1 ] || { echo "# $tveth/$hveth did not come up"; r=1; }
result "$r" "${names[0]}"
[ "$r" = 0 ] || broken="setup failed (test 1)"

# port_active DEV: wait up to 10 s for port 1 of DEV to be ACTIVE
port_active() {
	for _ in $(seq 100); do
		timeout 10 rdma link show "$1/1" 2> /dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	timeout 10 rdma link show "$1/1" 2>&1 | show
	return 1
}

# 2: the devices
if [ -n "$broken" ]; then
	fail_rest 1 1
else
	r=0
	for d in "$dt:$tveth" "$dh:$hveth"; do
		if ! timeout 30 rdma link add "${d%%:*}" type "$type" netdev "${d#*:}" \
			2> "$tmp/add"; then
			show "$tmp/add"
			r=1
		elif ! port_active "${d%%:*}"; then
			r=1
		fi
	done
	timeout 10 rdma link show 2>&1 | show
	result "$r" "${names[1]}"
	[ "$r" = 0 ] || broken="no RDMA devices (test 2 failed)"
fi

# listening: a TCP socket listens on $taddr:$port (the device's)
listening() {
	timeout 10 ss -Hltn "src $taddr:$port" 2> /dev/null | grep -q .
}

# 3: the target
if [ -n "$broken" ]; then
	fail_rest 2 2
else
	r=0
	{
		mkdir "$sub" &&
			echo 1 > "$sub/attr_allow_any_host" &&
			mkdir "$sub/namespaces/1" &&
			echo /dev/nullb0 > "$sub/namespaces/1/device_path" &&
			echo 1 > "$sub/namespaces/1/enable" &&
			mkdir "$nport" &&
			echo rdma > "$nport/addr_trtype" &&
			echo ipv4 > "$nport/addr_adrfam" &&
			echo "$taddr" > "$nport/addr_traddr" &&
			echo "$port" > "$nport/addr_trsvcid" &&
			timeout 60 ln -s "$sub" "$nport/subsystems/$nqn"
	} 2> "$tmp/cfs" || { show "$tmp/cfs"; r=1; }
	# rdma_listen() ran before the symlink returned
	l=0
	for _ in $(seq 50); do
		listening && { l=1; break; }
		sleep 0.2
	done
	[ "$l" = 1 ] || { echo "# nothing listens on $taddr:$port"; r=1; }
	timeout 10 ss -Hltn "sport = :$port" 2>&1 | show
	result "$r" "${names[2]}"
	[ "$r" = 0 ] || broken="no target (test 3 failed)"
fi

# the capture: dumpcap on lo (both ends are local addresses of init_net)
no_cap=
command -v dumpcap > /dev/null || no_cap="dumpcap missing (package tshark)"
command -v tshark > /dev/null || no_cap="tshark missing (package tshark)"
capturing=0
if [ -z "$broken" ] && [ -z "$no_cap" ]; then
	rm -f "$tmp/nvme.pcapng"
	# a kernel buffer of 64 MiB (dumpcap's default is 2): the I/O of test
	# 5 comes in bursts of megabytes, and a dropped segment loses FPDUs
	# in the decode (seen in CI on a loaded host)
	timeout 600 dumpcap -q -B 64 -i lo -f "tcp port $port" \
		-w "$tmp/nvme.pcapng" > "$tmp/dumpcap.log" 2>&1 &
	SIW_CAP_PID=$!
	for _ in $(seq 300); do
		grep -q 'Capturing on' "$tmp/dumpcap.log" && { capturing=1; break; }
		kill -0 "$SIW_CAP_PID" 2> /dev/null || break
		sleep 0.2
	done
	sleep 0.5
	[ "$capturing" = 1 ] || show "$tmp/dumpcap.log"
fi

# 4: connect, find the controller and its namespace's block device
if [ -n "$broken" ]; then
	fail_rest 3 3
else
	r=0
	kp_on
	timeout -k 10 120 nvme connect -t rdma -a "$taddr" -s "$port" -w "$haddr" -n "$nqn" \
		-q "$hostnqn" -I "$hostid" -i "$nio" -l 30 -c 2 > "$tmp/connect" 2>&1
	st=$?
	show "$tmp/connect"
	echo "# nvme connect: exit $st"
	if [ "$st" != 0 ]; then
		r=1
		timeout 30 ip neigh show 2>&1 | show
		timeout 30 dmesg | grep -E 'nvme|rdma|siw|iwm' | tail -n 20 | show
	fi
	ctrl=$(nqn_ctrl | head -n 1)
	if [ -z "$ctrl" ]; then
		echo "# no controller with subsysnqn $nqn"
		r=1
	else
		connected=1
		for f in transport state address queue_count sqsize kato; do
			echo "# ${ctrl##*/} $f: $(cat "$ctrl/$f" 2> /dev/null)"
		done
		[ "$(cat "$ctrl/transport")" = rdma ] || r=1
		grep -Eq "^traddr=$taddr,trsvcid=$port,(host_traddr|src_addr)=$haddr\$" \
			"$ctrl/address" || r=1
		[ "$(cat "$ctrl/queue_count")" = $((nio + 1)) ] || r=1
		# namespace scanning runs after connect returns: wait for it;
		# with native multipath the disk is the subsystem's nvmeXnY,
		# else the controller's
		for _ in $(seq 150); do
			s=$(nqn_subsys | head -n 1)
			for d in "$ctrl"/nvme*n* ${s:+"$s"/nvme*n*}; do
				[ -e "$d/size" ] || continue
				b=${d##*/}
				# nvmeXcYnZ: a path of a multipath disk, no block device
				case $b in *c*n*) continue ;; esac
				[ -b "/dev/$b" ] && blk=/dev/$b
			done
			[ -n "$blk" ] && [ "$(cat "$ctrl/state")" = live ] && break
			sleep 0.2
		done
		echo "# state $(cat "$ctrl/state" 2> /dev/null), block device: ${blk:-none}"
		[ "$(cat "$ctrl/state" 2> /dev/null)" = live ] || r=1
		if [ -z "$blk" ]; then
			r=1
		else
			bs=$(cat "/sys/block/${blk#/dev/}/size")
			ns=$(cat /sys/block/nullb0/size)
			echo "# ${blk#/dev/}: $bs sectors, nullb0: $ns sectors"
			[ "$bs" = "$ns" ] || r=1
		fi
	fi
	[ "$kprobes" != 1 ] ||
		echo "# connect: $(kp_hits alloc_mr) ib_alloc_mr, $(kp_hits map_mr_sg) ib_map_mr_sg"
	timeout 10 rdma resource show 2>&1 | tee "$tmp/res" | show
	timeout 10 rdma resource show qp 2>&1 | show
	# the target's SRQs (one per completion vector), in use from the
	# first queue's connect on
	nsrq=$(awk -v d="$dt" '$2 == d ":" { for (i = 3; i < NF; i++)
		if ($i == "srq") print $(i + 1) }' "$tmp/res")
	echo "# $dt: ${nsrq:-no} SRQs (use_srq $use_srq)"
	if [ "$use_srq" = 1 ]; then
		[ "${nsrq:-0}" -ge 1 ] || r=1
	fi
	inline=$(cat "$nport/param_inline_data_size" 2> /dev/null)
	echo "# port's in-capsule data size: ${inline:-?}"
	result "$r" "${names[3]}"
	[ "$r" = 0 ] || broken="not connected (test 4 failed)"
fi

# wr_rd T SRC BS OFF_MIB: write SRC at OFF_MIB MiB of the disk with bs BS
# (oflag=direct, conv=fsync), drop the caches, read it back with iflag=
# direct and compare; logs $tmp/T.*; 0 when equal
wr_rd() {
	local t=$1 src=$2 bsz=$3 off=$4 len cnt blocks

	len=$(stat -c %s "$src")
	blocks=$(numfmt --from=iec "${bsz^^}")
	cnt=$((len / blocks))
	if ! timeout 300 dd if="$src" of="$blk" bs="$bsz" count="$cnt" \
		seek=$((off * 1048576 / blocks)) oflag=direct conv=fsync status=none \
		2> "$tmp/$t.wr"; then
		echo "# $t: write failed"
		show "$tmp/$t.wr"
		return 1
	fi
	sync
	echo 3 > /proc/sys/vm/drop_caches
	if ! timeout 300 dd if="$blk" of="$tmp/$t.back" bs="$bsz" count="$cnt" \
		skip=$((off * 1048576 / blocks)) iflag=direct status=none 2> "$tmp/$t.rd"; then
		echo "# $t: read failed"
		show "$tmp/$t.rd"
		return 1
	fi
	if ! cmp "$src" "$tmp/$t.back" > "$tmp/$t.cmp" 2>&1; then
		show "$tmp/$t.cmp"
		return 1
	fi
	rm -f "$tmp/$t.back"
}

# the data: random, one file per region (a mix-up of regions shows)
head -c 1048576 /dev/urandom > "$tmp/c128k"
head -c 65536 /dev/urandom > "$tmp/c4k"
for f in r4k r128k r1m; do head -c 8388608 /dev/urandom > "$tmp/$f"; done

# 5: the captured I/O: regions 0 (1 MiB) and 1 (64 KiB)
if [ -n "$broken" ]; then
	fail_rest 4 4
else
	r=0
	wr_rd c128k "$tmp/c128k" 128k 0 || r=1
	wr_rd c4k "$tmp/c4k" 4k 1 || r=1
	result "$r" "${names[4]}"
fi
siw_capture_stop
# dumpcap's count of what the kernel dropped: the decode cannot judge a
# capture with holes
cap_drops=$(sed -n 's|.*received/dropped on interface.*: [0-9]*/\([0-9]*\).*|\1|p' \
	"$tmp/dumpcap.log" 2> /dev/null | head -n 1)
# from connect to here: what the capture shows (Sends with Invalidate,
# Read Requests) against the registrations
maps=
[ "$kprobes" != 1 ] || maps=$(kp_hits map_mr_sg)

# tshark on the capture; its NVMe/TCP dissector claims port 4420 and
# hides the MPA stream from the (heuristic) iWARP dissectors
tsh=(-r "$tmp/nvme.pcapng" --disable-protocol nvme-tcp)

# one line per FPDU of the capture: direction (h>t: to port 4420), RDMAP
# opcode, tagged, last, data octets (ULPDU length less the DDP/RDMAP
# header: 14 tagged, 18 untagged), message offset, Read Request size,
# CRC good
fpdus() {
	siw_fpdus "${tsh[@]}" | awk -v port="$port" '{
		print ($2 == port ? "h>t" : "t>h"), $3, $4, $5, $6, $7, $8, $9 }'
}

# 6: the capture
if [ -n "$no_cap" ]; then
	skip "${names[5]}" "$no_cap"
elif [ -n "$broken" ]; then
	fail_rest 5 5
elif [ "$capturing" != 1 ]; then
	echo "# dumpcap did not start"
	not_ok "${names[5]}"
else
	bad=
	nq=$((nio + 1))
	echo "# capture: $(stat -c %s "$tmp/nvme.pcapng") octets, ${cap_drops:-?} dropped"
	[ "${cap_drops:-0}" = 0 ] || bad="$bad capture-drops"
	# MPA Request (to the target's port) and Reply: C, M, Rej, Rev, PD
	timeout 300 tshark "${tsh[@]}" -Y 'iwarp_mpa.req or iwarp_mpa.rep' \
		-T fields -e tcp.dstport -e iwarp_mpa.crc_flag -e iwarp_mpa.marker_flag \
		-e iwarp_mpa.rej_flag -e iwarp_mpa.rev -e iwarp_mpa.pdlength \
		2> /dev/null | awk -v port="$port" '{
			k = $1 == port ? "Request" : "Reply"
			for (i = 2; i <= 4; i++)
				$i = ($i == "1" || $i == "True") ? 1 : 0
			print k, "C=" $2, "M=" $3, "Rej=" $4, "Rev=" $5, "PD=" $6 }' > "$tmp/rr.txt"
	sed 's/^/# MPA /' "$tmp/rr.txt" | sort | uniq -c | sed 's/^ *\([0-9]*\) # /# \1x /'
	nreq=$(grep -c '^Request C=. M=0 Rej=0' "$tmp/rr.txt")
	nrep=$(grep -c '^Reply C=. M=0 Rej=0' "$tmp/rr.txt")
	ncrc=$(grep -c ' C=1 ' "$tmp/rr.txt")
	echo "# $nreq MPA Requests, $nrep Replies (M=0, Rej=0), $ncrc with C=1; queues: $nq"
	[ "$nreq" = "$nq" ] && [ "$nrep" = "$nq" ] || bad="$bad mpa-frames"
	crc_on=0
	[ "$ncrc" = $((2 * nq)) ] && crc_on=1
	if [ "$crc_on" != 1 ]; then
		case $type:$ko in
		siw:*siw-crc*) bad="$bad no-crc" ;;
		siw:*) echo "# siw without CRC (stock siw): the CRC check does not apply" ;;
		*) bad="$bad no-crc" ;;
		esac
	fi
	fpdus > "$tmp/fpdus.txt"
	awk '{ k = $1 " op " $2; c[k]++; g[k] += $8; d[k] += $5; l[k] += $4 }
	     END { for (k in c) printf "# FPDUs %s: %d (%d last), %d data octets, %d with a good CRC\n",
			k, c[k], l[k], d[k], g[k] }' "$tmp/fpdus.txt" | sort
	total=$(wc -l < "$tmp/fpdus.txt")
	good=$(awk '$8 == 1' "$tmp/fpdus.txt" | wc -l)
	echo "# $total FPDUs, $good with a good CRC"
	[ "$total" -gt 0 ] || bad="$bad no-fpdus"
	[ "$crc_on" != 1 ] || [ "$good" = "$total" ] || bad="$bad crc"
	timeout 300 tshark "${tsh[@]}" -q -z expert,warn > "$tmp/expert.txt" 2> /dev/null
	grep -iE 'iwarp|mpa|ddp|rdma|malformed' "$tmp/expert.txt" |
		grep -vE 'Res field is NOT set to zero|Rev field is NOT set to one' \
		> "$tmp/expert.bad"
	sed 's/^/# expert: /' "$tmp/expert.bad"
	[ -s "$tmp/expert.bad" ] && bad="$bad expert"

	# RDMAP opcodes (RFC 5040): 0x00 RDMA Write, 0x01 Read Request, 0x02
	# Read Response, 0x03 Send, 0x04 Send with Invalidate, 0x05 and 0x06
	# the SE variants, 0x07 Terminate. The host posts IB_WR_SEND commands
	# and answers Reads; the target posts RDMA Write and RDMA Read
	# (rdma_rw) and IB_WR_SEND or, for a command whose keyed SGL asks for
	# it (nvme-rdma: NVME_SGL_FMT_INVALIDATE), IB_WR_SEND_WITH_INV
	# RFC 6581: iwmpa's Initiator (the host) asks for the peer-to-peer
	# model (its p2p parameter, on by default) and sends the
	# ready-to-receive message first, a zero-length RDMA Write, once per
	# queue; siw asks for none
	rtr=$(awk '$1 == "h>t" && $2 == "0x00" && $5 == 0' "$tmp/fpdus.txt" | wc -l)
	want_rtr=0
	[ "$type" != iwmpa ] || want_rtr=$nq
	echo "# RTRs (zero-length RDMA Writes host -> target): $rtr (expected $want_rtr)"
	[ "$rtr" = "$want_rtr" ] || bad="$bad rtr"
	odd=$(awk '($1 == "h>t" && $2 != "0x03" && $2 != "0x02" &&
		!($2 == "0x00" && $5 == 0)) ||
		($1 == "t>h" && $2 != "0x00" && $2 != "0x01" && $2 != "0x03" && $2 != "0x04")' \
		"$tmp/fpdus.txt" | wc -l)
	[ "$odd" = 0 ] || { echo "# $odd FPDUs with an unexpected opcode"; bad="$bad opcodes"; }
	# messages: the last FPDU's message offset + data is the length of an
	# untagged message (Send)
	awk '$4 == 1 && !$3 { print $1, $2, $6 + $5 }' "$tmp/fpdus.txt" > "$tmp/msgs.txt"
	# command capsules: 64 octets of SQE and the in-capsule data
	awk '$1 == "h>t" && $2 == "0x03" { c[$3]++ }
	     END { for (k in c) printf "# host Sends of %d octets: %d\n", k, c[k] }' \
		"$tmp/msgs.txt" | sort -t' ' -k5n
	awk '$1 == "t>h" && ($2 == "0x03" || $2 == "0x04") { c[$2 " of " $3]++ }
	     END { for (k in c) printf "# target Sends (%s octets): %d\n", k, c[k] }' \
		"$tmp/msgs.txt" | sort
	msgs() {	# DIR OPCODE [LENGTH]: how many messages
		awk -v d="$1" -v o="$2" -v l="${3:-}" '$1 == d && $2 == o && (l == "" || $3 == l)' \
			"$tmp/msgs.txt" | wc -l
	}
	expect() {	# WHAT GOT WANT
		echo "# $1: $2 (expected $3)"
		[ "$2" = "$3" ] || bad="$bad $(echo "$1" | tr ' ' -)"
	}
	atleast() {	# WHAT GOT MIN
		echo "# $1: $2 (expected at least $3)"
		[ "$2" -ge "$3" ] || bad="$bad $(echo "$1" | tr ' ' -)"
	}
	cmds=$(msgs 'h>t' 0x03)
	rsps=$(( $(msgs 't>h' 0x03) + $(msgs 't>h' 0x04) ))
	if [ "${inline:-0}" -ge 4096 ]; then
		expect "host Sends of 4160 octets (bs=4k writes in capsule)" "$(msgs 'h>t' 0x03 4160)" 16
		expect "host Sends of 1088 octets (I/O queue Connect)" "$(msgs 'h>t' 0x03 1088)" "$nio"
		expect "host Sends of other sizes than 64, 1088, 4160" \
			"$(awk '$1 == "h>t" && $2 == "0x03" && $3 != 64 && $3 != 1088 && $3 != 4160' \
				"$tmp/msgs.txt" | wc -l)" 0
		want_rd=$((1048576 + 1024))
	else
		expect "host Sends of other sizes than 64" \
			"$(awk '$1 == "h>t" && $2 == "0x03" && $3 != 64' "$tmp/msgs.txt" | wc -l)" 0
		want_rd=$((1048576 + 65536 + 1024 + nio * 1024))
	fi
	expect "target Sends of other sizes than 16" \
		"$(awk '$1 == "t>h" && ($2 == "0x03" || $2 == "0x04") && $3 != 16' \
			"$tmp/msgs.txt" | wc -l)" 0
	echo "# $cmds command capsules, $rsps response capsules"
	[ "$cmds" -ge "$rsps" ] || bad="$bad more-responses-than-commands"
	rreq=$(awk '$1 == "t>h" && $2 == "0x01"' "$tmp/fpdus.txt" | wc -l)
	rrsp=$(awk '$1 == "h>t" && $2 == "0x02" && $4 == 1' "$tmp/fpdus.txt" | wc -l)
	rdsum=$(awk '$1 == "t>h" && $2 == "0x01" { s += $7 } END { print s + 0 }' "$tmp/fpdus.txt")
	rrdata=$(awk '$1 == "h>t" && $2 == "0x02" { s += $5 } END { print s + 0 }' "$tmp/fpdus.txt")
	wrdata=$(awk '$1 == "t>h" && $2 == "0x00" { s += $5 } END { print s + 0 }' "$tmp/fpdus.txt")
	expect "Read Responses (last FPDUs) per Read Request ($rreq)" "$rrsp" "$rreq"
	expect "Read Response data = sum of Read Request sizes ($rdsum)" "$rrdata" "$rdsum"
	expect "octets the target Read" "$rrdata" "$want_rd"
	atleast "octets the target Wrote" "$wrdata" $((1048576 + 65536))
	atleast "Sends with Invalidate" "$(msgs 't>h' 0x04)" 32
	[ -z "$maps" ] ||
		echo "# ib_map_mr_sg (REG_MR) since connect: $maps; Sends with Invalidate" \
			"$(msgs 't>h' 0x04) + Read Requests $rreq = $(( $(msgs 't>h' 0x04) + rreq ))"
	if [ -z "$bad" ]; then
		ok "${names[5]}"
	else
		echo "# capture check failed:$bad"
		not_ok "${names[5]}"
	fi
fi

# 7-9: 8 MiB each at 8, 16 and 24 MiB
i=6 off=8
for t in 4k:r4k 128k:r128k 1M:r1m; do
	if [ -n "$broken" ]; then
		fail_rest "$i" "$i"
	else
		wr_rd "${t#*:}" "$tmp/${t#*:}" "${t%%:*}" "$off"
		result $? "${names[$i]}"
	fi
	i=$((i + 1)) off=$((off + 8))
done

# 10: what the target's null_blk holds
if [ -n "$broken" ]; then
	fail_rest 9 9
else
	r=0
	echo 3 > /proc/sys/vm/drop_caches
	for t in c128k:0:1 c4k:1:1 r4k:8:8 r128k:16:8 r1m:24:8; do
		IFS=: read -r f o c <<< "$t"
		timeout 120 dd if=/dev/nullb0 of="$tmp/nb" bs=1M skip="$o" count="$c" \
			iflag=direct status=none 2>&1 | show
		# the 64 KiB region: the first 64 KiB of its MiB
		[ "$f" != c4k ] || truncate -s 65536 "$tmp/nb"
		cmp "$tmp/$f" "$tmp/nb" 2>&1 | show
		[ "${PIPESTATUS[0]}" = 0 ] || { echo "# $f: nullb0 differs"; r=1; }
	done
	rm -f "$tmp/nb"
	result "$r" "${names[9]}"
fi

# 11: fio with crc32c verification, 8 MiB at 32 MiB
if ! command -v fio > /dev/null; then
	skip "${names[10]}" "fio missing (package fio)"
elif [ -n "$broken" ]; then
	fail_rest 10 10
else
	r=0
	(cd "$tmp" && timeout 300 fio --name=nvme-verify --filename="$blk" \
		--offset=32M --size=8M --rw=randwrite --bssplit=4k/40:16k/20:64k/20:128k/20 \
		--direct=1 --ioengine=libaio --iodepth=8 --randseed=42 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		> "$tmp/fio.txt" 2>&1)
	st=$?
	echo "# fio: exit $st"
	grep -E 'err=|WRITE:|READ:|verify' "$tmp/fio.txt" | show
	[ "$st" = 0 ] || r=1
	grep -q 'err= 0' "$tmp/fio.txt" || r=1
	wio=$(sed -n 's/^ *WRITE:.* io=\([0-9.]*[KMG]iB\).*/\1/p' "$tmp/fio.txt")
	rio=$(sed -n 's/^ *READ:.* io=\([0-9.]*[KMG]iB\).*/\1/p' "$tmp/fio.txt")
	echo "# written $wio, read back (verify) $rio"
	[ -n "$wio" ] && [ "$wio" = "$rio" ] || r=1
	[ "$r" = 0 ] || tail -n 20 "$tmp/fio.txt" | show
	result "$r" "${names[10]}"
fi

# 12: controller reset; the sysfs write returns when the reset work
# is done (nvme_reset_ctrl_sync()), a reconnect that failed is retried
# every 2 s (-c 2)
if [ -n "$broken" ]; then
	fail_rest 11 11
else
	r=0
	mark="iwmpa_nvme: reset_controller $$"
	echo "$mark" > /dev/kmsg
	timeout 120 sh -c "echo 1 > '$ctrl/reset_controller'" 2>&1 | show
	for _ in $(seq 300); do
		[ "$(cat "$ctrl/state" 2> /dev/null)" = live ] && break
		sleep 0.1
	done
	for f in state queue_count; do
		echo "# after the reset, ${ctrl##*/} $f: $(cat "$ctrl/$f" 2> /dev/null)"
	done
	[ "$(cat "$ctrl/state" 2> /dev/null)" = live ] || r=1
	[ "$(cat "$ctrl/queue_count" 2> /dev/null)" = $((nio + 1)) ] || r=1
	timeout 30 dmesg | sed -n "/$mark/,\$p" | tail -n +2 > "$tmp/reset.dmesg"
	grep -E 'nvme|rdma|iwm|siw' "$tmp/reset.dmesg" | tail -n 12 | show
	if grep -E 'WARNING|BUG|MEM_RECLAIM|PF_MEMALLOC|Oops' "$tmp/reset.dmesg" > "$tmp/reset.bad"; then
		show "$tmp/reset.bad"
		r=1
	fi
	if [ "$r" = 0 ]; then
		echo 3 > /proc/sys/vm/drop_caches
		timeout 120 dd if="$blk" of="$tmp/c128k.again" bs=128k count=8 \
			iflag=direct status=none 2>&1 | show
		cmp "$tmp/c128k" "$tmp/c128k.again" 2>&1 | show
		[ "${PIPESTATUS[0]}" = 0 ] || { echo "# region 0 differs after the reset"; r=1; }
		rm -f "$tmp/c128k.again"
		head -c 1048576 /dev/urandom > "$tmp/rreset"
		wr_rd rreset "$tmp/rreset" 128k 40 || r=1
	fi
	result "$r" "${names[11]}"
fi

# 13: disconnect
if [ "$connected" != 1 ]; then
	broken=${broken:-not connected}
	fail_rest 12 12
else
	r=0
	timeout 60 nvme disconnect -n "$nqn" > "$tmp/disc" 2>&1 || r=1
	show "$tmp/disc"
	grep -q 'disconnected 1 controller' "$tmp/disc" || r=1
	connected=0
	[ "$kprobes" != 1 ] ||
		echo "# whole run: $(kp_hits alloc_mr) ib_alloc_mr, $(kp_hits map_mr_sg) ib_map_mr_sg"
	gone=0
	for _ in $(seq 100); do
		[ ! -e "$ctrl" ] && [ ! -b "$blk" ] && { gone=1; break; }
		sleep 0.1
	done
	[ "$gone" = 1 ] || { echo "# ${ctrl##*/} or $blk still there"; r=1; }
	result "$r" "${names[12]}"
fi

# 14: teardown
r=0
teardown || r=1
if [ -e "$sub" ] || [ -e "$nport" ]; then
	echo "# configfs entries left"
	r=1
fi
for d in "$dt" "$dh"; do
	! dev_exists "$d" || { echo "# $d still there"; r=1; }
done
! timeout 30 ip link show "$tveth" > /dev/null 2>&1 || { echo "# $tveth still there"; r=1; }
for m in "${unload_order[@]}"; do
	grep -qx "$m" <<< "$before" && continue
	! mod_loaded "$m" || { echo "# $m still loaded"; r=1; }
done
result "$r" "${names[13]}"

exit "$fail"
