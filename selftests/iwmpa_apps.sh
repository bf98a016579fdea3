#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iwmpa.ko under the stock RDMA applications (TAP): rping, rdma_server /
# rdma_client (rdmacm-utils) and perftest over rdma_cm, between two
# iwmpa devices, then against siw (the kernel's soft-iWARP). Run as root
# inside the project VM by run_tests.sh, with iwmpa.ko installed where
# modprobe finds it (tools/vm/run --extra-modules) or as ../rdmap/iwmpa.ko.
#
# Namespaces apps0 and apps1 joined by a veth pair, veth0 192.0.2.1/24
# (ifindex 20) <-> veth1 192.0.2.2/24 (ifindex 21); RDMA netns mode
# shared, rdma_cm picks the device by the route of the caller's namespace.
#   iwm0 (iwmpa, veth0, apps0)  <->  iwm1 (iwmpa, veth1, apps1):
#     rping -s -S 1000 -C 100 <- rping -c -C 100 -V -S 1000, both ways,
#     with dumpcap on veth1 during the first one and a tshark decode
#     (MPA Request/Reply with C=1, every FPDU's CRC good, the RDMAP
#     Sends, Read Requests, Read Responses and Writes rping makes, the
#     server's Reads all naming one Data Sink STag: its region's);
#     rdma_server <- rdma_client;
#     iwmpa_srq server <- iwmpa_srq client (this directory's): two
#     connections whose server QPs share an SRQ with its limit armed,
#     every receive of two SGEs in two regions
#     (receive order, the limit event, last-WQE events, the SRQ's
#     receives kept when the QPs end; between two siw devices all but the
#     last-WQE events hold, which siw does not raise: skipped if it
#     fails there);
#     ib_send_bw, ib_write_bw, ib_read_bw (-R -F -n 1000 -s 65536: the
#     receiver posts more receives than DDP holds at once) and
#     ib_send_lat, ib_write_lat, ib_read_lat (-R -F -n 100), then
#     ib_send_bw and ib_send_lat with --use-srq (the receiver's receives
#     in a shared receive queue), server in apps0, client in apps1: exit
#     status and the result table line (the numbers are not checked:
#     under TCG perftest's cycle counter does not calibrate);
#   iwm0 (iwmpa, apps0) <-> siw1 (siw, veth1, apps1), iwm1 deleted first,
#     once per MPA revision:
#     revision 2: iwmpa with its defaults (mpa_rev=2 crc=1 p2p=1) against
#       the siw.ko in use (SIW_KO; stock siw: revision 2, no peer-to-peer,
#       CRC when the peer asks);
#     revision 1: iwmpa's mpa_rev set to 1 (written to
#       /sys/module/iwmpa/parameters/mpa_rev, put back at the end) against
#       siw-rev1 (SIW_REV1_KO, built by tools/siw/build --rev1: siw whose
#       Requests are revision 1), which replaces siw (iwm0 and siw1
#       created again around the module change);
#     in each: rping both ways, each captured on veth1 and decoded with
#     tshark (one Request and one Reply, both of that revision, no M, no
#     R; C=1 in the Reply and in iwmpa's Request; every FPDU's CRC good;
#     the RDMAP messages rping makes, one Data Sink STag in the server's
#     Reads); ib_send_bw, ib_write_bw,
#     ib_read_bw (-R -F -n 200 -s 65536), ib_send_lat, ib_write_lat,
#     ib_read_lat (-R -F -n 100), ib_send_bw and ib_send_lat with
#     --use-srq, iwm0 server <- siw1 client, then siw1
#     server <- iwm0 client (exit status and the result line); in
#     revision 1, which does not negotiate IRD/ORD, ib_read_bw with -o
#     the lower max_qp_rd_atom of the two devices (ibv_devinfo).
#     Skipped, with the reason: in revision 1, rping with the server on
#     siw when it fails (siw_rev1_server_why below: siw's bug, whatever
#     the client); not run unless IWMPA_APPS_PASSIVE_FIRST=1: ib_write_lat
#     with iwm0 server and siw1 client when siw1's Request asked for no
#     RTR (stock siw, and any revision 1): its server must write first,
#     which RFC 5044 7.1.2 rule 4 forbids iwm0 as Responder (its Write
#     waits, then fails with EPIPE when the client gives up and closes;
#     passive_first_why below);
# then teardown: links deleted, namespaces gone, iwmpa's mpa_rev as it
# was, and the modules this script loaded unloaded (iwmpa, then rdmap,
# siw) so that later tests can unload ddp.ko and mpa.ko. Every program
# runs under timeout 120.
#
# A tool that is missing skips its tests (rping and rdma_server/client:
# package rdmacm-utils; ib_*: perftest; dumpcap/tshark; siw.ko and
# siw-rev1's siw.ko: tools/siw/build, tools/siw/build --rev1); an
# iwmpa.ko that does not load or work fails them.
#
# Usage: iwmpa_apps.sh [-h|--help]
# Environment: SIW_KO (default ../build/siw/siw.ko, on another kernel
# series than 6.1 ../build/k-SERIES/siw/siw.ko, where tools/siw/build puts
# it), SIW_REV1_KO (default ../build/siw-rev1/siw.ko, or
# ../build/k-SERIES/siw-rev1/siw.ko), IWMPA_APPS_SIW_ONLY=1 (siw0 <-> siw1
# instead of iwm0 <-> iwm1, and for the mixed tests siw0 <-> a new siw1,
# both of siw-rev1 for revision 1: no iwmpa at all, checks the test's
# command lines against siw; SIW_KO=../build/siw-crc/siw.ko for the CRC
# check of the captures), IWMPA_APPS_PASSIVE_FIRST=1 (run the ib_write_lat
# above anyway), IWMPA_APPS_OUT (a directory to keep the logs and the
# captures in).
# Exit status 0 when all passed, 1 otherwise, 4 when skipped (not root,
# no ip/rdma, none of rping, rdma_server and perftest).

case ${1:-} in
-h | --help) sed -n '4,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
series=$(uname -r | cut -d. -f1,2)
siwdir=$top/build
[ "$series" = 6.1 ] || siwdir=$top/build/k-$series
ko=${SIW_KO:-$siwdir/siw/siw.ko}
ko1=${SIW_REV1_KO:-$siwdir/siw-rev1/siw.ko}
siw_only=${IWMPA_APPS_SIW_ONLY:-0}
passive_first=${IWMPA_APPS_PASSIVE_FIRST:-0}
out=${IWMPA_APPS_OUT:-}
ns0=apps0
ns1=apps1
a0=192.0.2.1
a1=192.0.2.2
count=100
tmp=$(mktemp -d)
spid=
NTESTS=56
loaded_iwmpa=0 loaded_rdmap=0 loaded_siw=0 iwmpa_here=0
# the siw.ko loaded here; iwmpa's mpa_rev before this script changed it
siw_ko=
rev_param=/sys/module/iwmpa/parameters/mpa_rev
rev_saved=

# ok, not_ok, loaded, unload
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
# siw_wait_listen, siw_capture_start/stop
# shellcheck source=../tools/siw/lib.sh disable=SC1091
. "$top/tools/siw/lib.sh"

skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
# known failures of others: skip_failed STATUS NAME WHY: ok if it passed,
# else skipped with the reason
skip_failed() { if [ "$1" = 0 ]; then ok "$2"; else skip "$2" "$3"; fi; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
show() { sed 's/^/# /' "$@"; }
dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# teardown: links, namespaces, the modules loaded here (iwmpa first: it
# holds rdmap, which holds ddp and mpa); 0 when everything went
teardown() {
	local r=0 d

	for d in iwm0 iwm1 siw0 siw1; do
		! dev_exists "$d" || rdma link delete "$d" 2>&1 | show
	done
	for d in "$ns0" "$ns1"; do
		! ip netns list | grep -qw "^$d" || ip netns del "$d" || r=1
	done
	if [ -n "$rev_saved" ]; then
		echo "$rev_saved" 2> /dev/null > "$rev_param" ||
			{ echo "# cannot put iwmpa's mpa_rev back to $rev_saved"; r=1; }
		rev_saved=
	fi
	if [ "$loaded_iwmpa" = 1 ]; then
		unload iwmpa || { echo "# cannot unload iwmpa"; r=1; }
		loaded_iwmpa=0
	fi
	if [ "$loaded_rdmap" = 1 ]; then
		unload rdmap || { echo "# cannot unload rdmap"; r=1; }
		loaded_rdmap=0
	fi
	if [ "$loaded_siw" = 1 ]; then
		unload siw || { echo "# cannot unload siw"; r=1; }
		loaded_siw=0 siw_ko=
	fi
	return $r
}

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2> /dev/null
	siw_capture_stop
	if [ -n "$out" ]; then
		mkdir -p "$out" && cp -a "$tmp"/. "$out"/
	fi
	teardown > /dev/null 2>&1
	rm -rf "$tmp"
}

# the devices of the first part: iwmpa <-> iwmpa, or siw <-> siw
if [ "$siw_only" = 1 ]; then
	type=siw d0=siw0 d1=siw1
else
	type=iwmpa d0=iwm0 d1=iwm1
fi
bw_n=1000
bw="-n $bw_n -s 65536"
lat="-n 100"
# the perftest runs: ib_PROG, or ib_PROG --use-srq for PROG_srq
progs=(send_bw write_bw read_bw send_lat write_lat read_lat send_bw_srq send_lat_srq)
pname() { case $1 in *_srq) echo "ib_${1%_srq} -R --use-srq" ;; *) echo "ib_$1 -R" ;; esac; }
names=("modules loaded ($type), veth pair $ns0/veth0 $a0 <-> $ns1/veth1 $a1 up"
	"rdma link add $d0 (veth0) and $d1 (veth1): both ports ACTIVE"
	"rping -s ($d0) <- rping -c -C $count -V -S 1000 ($d1): $count pings verified"
	"rping -s ($d1) <- rping -c -C $count -V -S 1000 ($d0): $count pings verified"
	"tshark: rping $d0 <- $d1 on veth1: MPA C=1, every FPDU's CRC good, RDMAP messages"
	"rdma_server ($d0) <- rdma_client ($d1)"
	"iwmpa_srq server ($d0) <- client ($d1): two QPs on one SRQ, its limit event, last-WQE events"
	"teardown: links deleted, namespaces gone, modules loaded here unloaded")
tdown=${names[7]}
unset 'names[7]'
for t in "${progs[@]}"; do
	a=$lat
	[ "${t%_bw*}" = "$t" ] || a=$bw
	names+=("$(pname "$t") $a ($d0 server, $d1 client)")
done

# the mixed tests, 20 per MPA revision: names[15..34] revision 2,
# names[35..54] revision 1, teardown last
mbw_n=200
mbw="-n $mbw_n -s 65536"
mlat_n=100
mlat="-n $mlat_n"
mixed_names() {	# REV FIRST KO
	local rev=$1 i=$2 mko=$3 t a

	names[i++]="mixed rev $rev: siw1 (siw, veth1, ${mko#"$top"/}) and $d0 ($type, MPA revision $rev): ports ACTIVE"
	names[i++]="mixed rev $rev: rping -s ($d0, $type) <- rping -c -C $count -V -S 1000 (siw1)"
	names[i++]="mixed rev $rev: rping -s (siw1) <- rping -c -C $count -V -S 1000 ($d0, $type)"
	names[i++]="mixed rev $rev: tshark: both rpings on veth1: MPA Rev $rev Request and Reply, C=1, every FPDU's CRC good, RDMAP messages"
	for t in "${progs[@]}"; do
		a=$mlat
		[ "${t%_bw*}" = "$t" ] || a=$mbw
		[ "$rev$t" != 1read_bw ] || a="$a -o ORD"
		names[i++]="mixed rev $rev: $(pname "$t") $a ($d0 $type server, siw1 client)"
	done
	for t in "${progs[@]}"; do
		a=$mlat
		[ "${t%_bw*}" = "$t" ] || a=$mbw
		[ "$rev$t" != 1read_bw ] || a="$a -o ORD"
		names[i++]="mixed rev $rev: $(pname "$t") $a (siw1 server, $d0 $type client)"
	done
}
mixed_names 2 15 "$ko"
mixed_names 1 35 "$ko1"
names[55]=$tdown

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
elif ! command -v rping > /dev/null && ! command -v rdma_server > /dev/null &&
	! command -v ib_send_bw > /dev/null; then
	why="no rping, rdma_server or ib_send_bw (packages rdmacm-utils, perftest)"
elif [ "$siw_only" = 1 ] && [ ! -f "$ko" ]; then
	why="no $ko (run tools/siw/build on the host)"
elif [ "$siw_only" = 1 ] && loaded siw; then
	why="siw is loaded already: not touching it"
elif ip netns list | grep -Eqw "^($ns0|$ns1)"; then
	why="namespace $ns0 or $ns1 exists already"
fi
if [ -n "$why" ]; then
	for t in "${names[@]}"; do skip "$t" "$why"; done
	exit 4
fi
trap cleanup EXIT

# why a tool's tests are skipped, empty when it is there
need() {	# PROGRAM PACKAGE
	command -v "$1" > /dev/null || echo "$1 missing (package $2)"
}
no_rping=$(need rping rdmacm-utils)
no_cmx=$(need rdma_server rdmacm-utils)$(need rdma_client rdmacm-utils)
no_cap=$(need dumpcap tshark)$(need tshark tshark)

# 1: modules. The stack of rdma_cm for the applications, veth, and the
# device's own module
r=0
# libcrc32c keeps the crc32c driver that was best when it loaded (siw)
modprobe -q crc32c_intel 2> /dev/null
for m in ib_core ib_uverbs iw_cm rdma_cm rdma_ucm libcrc32c veth; do
	modprobe "$m" 2>&1 | show
	present "$m" || { echo "# $m not loaded"; r=1; }
done
if [ "$siw_only" = 1 ]; then
	if insmod "$ko" 2> "$tmp/mod"; then
		loaded_siw=1
	else
		show "$tmp/mod"
		r=1
	fi
elif loaded iwmpa; then
	echo "# iwmpa loaded already: using it, leaving it loaded"
else
	loaded rdmap || loaded_rdmap=1
	if ! modprobe iwmpa 2> "$tmp/mod"; then
		# not installed: the build tree's, after what modprobe can load
		modprobe -a ddp rdmap 2>> "$tmp/mod" ||
			insmod "$top/rdmap/rdmap.ko" 2>> "$tmp/mod"
		insmod "$top/rdmap/iwmpa.ko" 2>> "$tmp/mod"
	fi
	loaded rdmap || loaded_rdmap=0
	if loaded iwmpa; then
		loaded_iwmpa=1 iwmpa_here=1
	else
		show "$tmp/mod"
		r=1
	fi
fi

mode=$(rdma system show 2> /dev/null | sed -n 's/.*netns \([a-z]*\).*/\1/p')
[ "$mode" = shared ] || rdma system set netns shared
ip netns add "$ns0"
ip netns add "$ns1"
# distinct ifindexes: a wildcard rdma_listen (perftest -R) makes rdma_cm
# listen on every iWARP device in the caller's namespace (siw binds one
# socket per device with SO_BINDTODEVICE its netdev's ifindex)
ip link add veth0 netns "$ns0" index 20 type veth peer name veth1 netns "$ns1" index 21
i=0
for ns in "$ns0" "$ns1"; do
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.veth$i.disable_ipv6=1"
	ip -n "$ns" addr add "192.0.2.$((i + 1))/24" dev "veth$i"
	ip -n "$ns" link set "veth$i" up
	i=$((i + 1))
done
carrier() { ip -n "$1" -o link show dev "$2" 2> /dev/null | grep -q 'LOWER_UP.* state UP'; }
up=0
for _ in $(seq 100); do
	carrier "$ns0" veth0 && carrier "$ns1" veth1 && { up=1; break; }
	sleep 0.1
done
[ "$up" = 1 ] || { echo "# veth0/veth1 did not come up"; r=1; }
result "$r" "${names[0]}"
modok=$r

# port_active NS DEV: wait up to 10 s for port 1 of DEV to be ACTIVE
port_active() {
	for _ in $(seq 100); do
		ip netns exec "$1" rdma link show "$2/1" 2> /dev/null | grep -q 'state ACTIVE' &&
			return 0
		sleep 0.1
	done
	ip netns exec "$1" rdma link show "$2/1" 2>&1 | show
	return 1
}

# 2: the devices
r=1
if [ "$modok" = 0 ]; then
	r=0
	for i in 0 1; do
		ns=apps$i d=$d0
		[ "$i" = 0 ] || d=$d1
		if ! ip netns exec "$ns" rdma link add "$d" type "$type" netdev "veth$i" \
			2> "$tmp/add"; then
			show "$tmp/add"
			r=1
		elif ! port_active "$ns" "$d"; then
			r=1
		fi
	done
	rdma link show 2>&1 | show
fi
result "$r" "${names[1]}"
devok=$r

# pair T SNS CNS SPORT SERVER... -- CLIENT...: SERVER in namespace SNS, once
# it listens on SPORT CLIENT in CNS, each under timeout 120, stdout line
# buffered (what a killed program printed stays in its log); logs
# $tmp/T.srv and $tmp/T.cli, exit statuses in $sst and $cst
lbuf=()
command -v stdbuf > /dev/null && lbuf=(stdbuf -oL)
sst=1 cst=1
pair() {
	local t=$1 sns=$2 cns=$3 sport=$4
	local -a srv=()

	shift 4
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	sst=1 cst=1
	ip netns exec "$sns" timeout 120 "${lbuf[@]}" "${srv[@]}" > "$tmp/$t.srv" 2>&1 &
	spid=$!
	if siw_wait_listen "$sns" "$sport" "$spid" 30; then
		ip netns exec "$cns" timeout 120 "${lbuf[@]}" "$@" > "$tmp/$t.cli" 2>&1
		cst=$?
		# the server ends with its client: 30 s at most, 5 s after a
		# client that failed (a server that never got a connection)
		grace=150
		[ "$cst" = 0 ] || grace=25
		for _ in $(seq "$grace"); do
			kill -0 "$spid" 2> /dev/null || break
			sleep 0.2
		done
	else
		echo "server does not listen on $sport" > "$tmp/$t.cli"
	fi
	kill "$spid" 2> /dev/null	# exit status 143 if it still ran
	wait "$spid"
	sst=$?
	spid=
	echo "# $t: ${srv[0]} (server, $sns) exit $sst, $1 (client, $cns) exit $cst"
	[ "$sst" = 0 ] && [ "$cst" = 0 ]
}

# tails T: the end of both logs, for a failure
tails() { tail -n 12 "$tmp/$1.srv" "$tmp/$1.cli" | show; }

# rping_pair T SNS CNS PORT: rping server in SNS on the address of SNS,
# client in CNS with data verification; 0 when both exit 0 and the client
# printed $count verified pings, in order, and no mismatch
rping_pair() {
	local t=$1 sns=$2 cns=$3 port=$4 addr=$a0 got r=0

	[ "$sns" = "$ns0" ] || addr=$a1
	pair "$t" "$sns" "$cns" "$port" \
		rping -s -a "$addr" -p "$port" -C "$count" -S 1000 -v -- \
		rping -c -a "$addr" -p "$port" -C "$count" -S 1000 -v -V || r=1
	# -v: "ping data: rdma-ping-N: ABC...", N from 0 up
	got=$(awk -v c="$count" '/^ping data: rdma-ping-/ {
			split($3, f, "-"); if (f[3] + 0 == i && f[3] ~ /^[0-9]+:$/) i++ }
		END { print i + 0 }' "$tmp/$t.cli")
	echo "# $t: client verified $got of $count pings"
	[ "$got" = "$count" ] || r=1
	if grep -qi 'mismatch' "$tmp/$t.cli"; then
		echo "# $t: data mismatch"
		r=1
	fi
	[ "$r" = 0 ] || tails "$t"
	return $r
}

# table_line FILE SIZE ITERS: perftest's result line after its "#bytes"
# header: #bytes SIZE (any, if empty) and #iterations ITERS
table_line() {
	awk -v s="$2" -v it="$3" '/#bytes/ { hdr = 1; next }
		hdr && $1 ~ /^[0-9]+$/ && (s == "" || $1 == s) && $2 == it { ok = 1; print "# result: " $0 }
		END { exit !ok }' "$1"
}

# perf T PROG PORT SNS SDEV CNS CDEV CADDR SIZE ITERS ARGS...: perftest
# PROG -R -F ARGS server in SNS on device SDEV, client in CNS on CDEV to
# CADDR; 0 when both exit 0 and the client printed the result line
perf() {
	local t=$1 prog=$2 port=$3 sns=$4 sdev=$5 cns=$6 cdev=$7 caddr=$8
	local size=$9 iters=${10} r=0

	shift 10
	pair "$t" "$sns" "$cns" "$port" \
		"$prog" -R -F -d "$sdev" -p "$port" "$@" -- \
		"$prog" -R -F -d "$cdev" -p "$port" "$@" "$caddr" || r=1
	table_line "$tmp/$t.cli" "$size" "$iters" || { echo "# $t: no result line"; r=1; }
	[ "$r" = 0 ] || tails "$t"
	return $r
}

# the reason the device tests cannot pass (not a skip: the device failed)
nodev=
[ "$devok" = 0 ] || nodev="no devices (test 2 failed)"

# mpa_frames PCAP PFX: the capture's MPA Request and Reply (tcp.srcport
# and payload in $tmp/PFXrr.txt) as "Request|Reply FLAGS REV" (octets 16
# and 17 of the frame) in $tmp/PFXrr.chk
mpa_frames() {
	tshark -r "$1" -Y 'iwarp_mpa.req or iwarp_mpa.rep' \
		-T fields -e tcp.srcport -e tcp.payload > "$tmp/$2rr.txt" 2> /dev/null
	awk '{ gsub(":", "", $2)
	       k = substr($2, 1, 32) == "4d504120494420526571204672616d65" ? "Request" : "Reply"
	       print k, substr($2, 33, 2), substr($2, 35, 2) }' "$tmp/$2rr.txt" > "$tmp/$2rr.chk"
}

# fpdu_lines PCAP PORT PFX: one line per FPDU of the capture of a
# connection to PORT in $tmp/PFXfpdus.txt: direction (c>s to PORT), the
# RDMAP opcode, 1 if its CRC is good, a Read Request's Data Sink STag
# (- if none); prints the counts
fpdu_lines() {
	siw_fpdus -r "$1" | awk -v port="$2" '{
		print ($2 == port ? "c>s" : "s>c"), $3, $9, $10 }' > "$tmp/$3fpdus.txt"
	awk '{ k = $1 " op " $2; c[k]++; g[k] += $3 }
	     END { for (k in c) printf "# FPDUs %s: %d, %d with a good CRC\n", k, c[k], g[k] }' \
		"$tmp/$3fpdus.txt" | sort
}

# expert_bad PCAP PFX: tshark's expert warnings about iWARP in
# $tmp/PFXexpert.bad, but the two it gives every revision 2 frame; 1 if
# there are any
expert_bad() {
	tshark -r "$1" -q -z expert,warn > "$tmp/$2expert.txt" 2> /dev/null
	grep -iE 'iwarp|mpa|ddp|rdma|malformed' "$tmp/$2expert.txt" |
		grep -vE 'Res field is NOT set to zero|Rev field is NOT set to one' \
		> "$tmp/$2expert.bad"
	sed 's/^/# expert: /' "$tmp/$2expert.bad"
	[ ! -s "$tmp/$2expert.bad" ]
}

# rping_ops FPDUS [PFX]: the RDMAP messages of rping -C $count in the FPDU
# lines of fpdu_lines; adds to $bad (keys prefixed with PFX, with the
# counts found). Per ping the client Sends its buffer's
# STag, the server Reads it (Read Request, Read Response(s)), Sends,
# Writes it back (-V), the client Sends again and the server answers; a
# Read Response or Write of 1000 octets may take several FPDUs. The
# server's Reads go to one buffer of a region with remote write access:
# each names it by the region's STag (iwmpa as siw and iWARP RNICs), one
# Data Sink STag in all of them
rping_ops() {
	local fp=$1 pfx=${2:-} sinks n

	fl() { awk -v d="$1" -v o="$2" '$1 == d && $2 == o' "$fp" | wc -l; }
	want() {	# DIR OPCODE MIN MAX
		local got

		got=$(fl "$1" "$2")
		if [ "$got" -lt "$3" ] || [ "$got" -gt "$4" ]; then
			echo "# $pfx$1 opcode $2: $got FPDUs, expected $3..$4"
			bad="$bad $pfx$1-$2=$got"
		fi
	}
	want 'c>s' 0x03 $((2 * count)) $((2 * count))
	want 's>c' 0x03 $((2 * count)) $((2 * count))
	want 's>c' 0x01 "$count" "$count"
	want 'c>s' 0x02 "$count" $((4 * count))
	want 's>c' 0x00 "$count" $((4 * count))
	sinks=$(awk '$1 == "s>c" && $2 == "0x01" { print $4 }' "$fp" | sort -u)
	n=$(echo "$sinks" | wc -w)
	if [ "$n" != 1 ] || [ "$sinks" = - ]; then
		echo "# ${pfx}server's Read Requests name $n Data Sink STags, expected 1: $(echo "$sinks" | head -4 | tr '\n' ' ')..."
		bad="$bad ${pfx}sink-stags=$n"
	fi
}

# 3-5: rping both ways, the first one captured on veth1
capturing=0
if [ -n "$no_rping" ]; then
	for i in 2 3 4; do skip "${names[$i]}" "$no_rping"; done
elif [ -n "$nodev" ]; then
	for i in 2 3 4; do echo "# $nodev"; not_ok "${names[$i]}"; done
else
	if [ -z "$no_cap" ]; then
		if siw_capture_start "$ns1" veth1 "$tmp/rping.pcapng" "$tmp/dumpcap.log" \
			-f 'tcp port 7201'; then
			capturing=1
		else
			show "$tmp/dumpcap.log"
		fi
	fi
	rping_pair rp1 "$ns0" "$ns1" 7201
	res_rp1=$?
	siw_capture_stop
	result "$res_rp1" "${names[2]}"
	rping_pair rp2 "$ns1" "$ns0" 7202
	result $? "${names[3]}"

	if [ -n "$no_cap" ]; then
		skip "${names[4]}" "$no_cap"
	elif [ "$capturing" != 1 ]; then
		echo "# dumpcap did not start"
		not_ok "${names[4]}"
	else
		bad=
		mpa_frames "$tmp/rping.pcapng" ""
		sed 's/^/# MPA /; s/$/ (flags, Rev)/' "$tmp/rr.chk"
		nreq=$(awk '$1 == "Request"' "$tmp/rr.chk" | wc -l)
		nrep=$(awk '$1 == "Reply"' "$tmp/rr.chk" | wc -l)
		# C (0x40) asked and granted, no markers (0x80), no reject (0x20)
		crc_on=0
		while read -r _ f _; do
			[ -n "$f" ] || continue
			[ $((16#$f & 0xe0)) = $((0x40)) ] && crc_on=$((crc_on + 1))
		done < "$tmp/rr.chk"
		[ "$nreq" = 1 ] && [ "$nrep" = 1 ] || bad="$bad mpa-frames"
		if [ "$crc_on" != 2 ]; then
			if [ "$type" = iwmpa ]; then
				bad="$bad no-crc"
			else
				echo "# siw without CRC (stock siw): the CRC check does not apply"
			fi
		fi
		# one line per FPDU: direction, the RDMAP opcode, CRC good
		fpdu_lines "$tmp/rping.pcapng" 7201 ""
		total=$(wc -l < "$tmp/fpdus.txt")
		good=$(awk '$3 == 1' "$tmp/fpdus.txt" | wc -l)
		echo "# $total FPDUs, $good with a good CRC"
		[ "$total" -gt 0 ] || bad="$bad no-fpdus"
		[ "$crc_on" != 2 ] || [ "$good" = "$total" ] || bad="$bad crc=$good/$total"
		expert_bad "$tmp/rping.pcapng" "" ||
			bad="$bad expert=$(wc -l < "$tmp/expert.bad")"
		if [ "$res_rp1" = 0 ]; then
			rping_ops "$tmp/fpdus.txt"
		else
			bad="$bad rping-failed"
		fi
		# a capture that missed packets explains a failure, is none itself
		lost=$(siw_capture_lost "$tmp/dumpcap.log") ||
			echo "# dumpcap: $lost packets captured/received/dropped"
		[ -z "$bad" ] || [ -z "$lost" ] || bad="$bad capture=$lost"
		if [ -z "$bad" ]; then
			ok "${names[4]}"
		else
			echo "# capture check failed:$bad"
			not_ok "${names[4]} (failed:$bad)"
		fi
	fi
fi

# 6: rdma_server <- rdma_client (a Send each way, 16 octets, inline if
# the device allows it)
if [ -n "$no_cmx" ]; then
	skip "${names[5]}" "$no_cmx"
elif [ -n "$nodev" ]; then
	echo "# $nodev"
	not_ok "${names[5]}"
else
	r=0
	pair cm "$ns0" "$ns1" 7210 rdma_server -s "$a0" -p 7210 -- \
		rdma_client -s "$a0" -p 7210 || r=1
	grep -q '^rdma_server: end 0' "$tmp/cm.srv" || r=1
	grep -q '^rdma_client: end 0' "$tmp/cm.cli" || r=1
	show "$tmp/cm.srv" "$tmp/cm.cli"
	result "$r" "${names[5]}"
fi

# 7: a shared receive queue (iwmpa_srq, both roles)
if [ ! -x "$here/iwmpa_srq" ]; then
	skip "${names[6]}" "no $here/iwmpa_srq (make -C selftests, needs librdmacm-dev)"
elif [ -n "$nodev" ]; then
	echo "# $nodev"
	not_ok "${names[6]}"
else
	pair srq "$ns0" "$ns1" 7211 "$here/iwmpa_srq" server "$a0" 7211 -- \
		"$here/iwmpa_srq" client "$a0" 7211
	r=$?
	show "$tmp/srq.srv" "$tmp/srq.cli"
	if [ "$type" = siw ]; then
		skip_failed "$r" "${names[6]}" "siw raises no last-WQE event when a QP on an SRQ ends"
	else
		result "$r" "${names[6]}"
	fi
fi

# 8-15: perftest, server in apps0 on d0, client in apps1 on d1
i=7 port=7220
for t in "${progs[@]}"; do
	prog=ib_${t%_srq}
	nt=$(need "$prog" perftest)
	if [ -n "$nt" ]; then
		skip "${names[$i]}" "$nt"
	elif [ -n "$nodev" ]; then
		echo "# $nodev"
		not_ok "${names[$i]}"
	else
		srq=()
		[ "${t%_srq}" = "$t" ] || srq=(--use-srq)
		case $t in
		*_bw*)
			# shellcheck disable=SC2086 # $bw: several words
			perf "$t" "$prog" "$port" "$ns0" "$d0" "$ns1" "$d1" "$a0" 65536 "$bw_n" $bw "${srq[@]}" ;;
		*)
			# shellcheck disable=SC2086 # $lat: several words
			perf "$t" "$prog" "$port" "$ns0" "$d0" "$ns1" "$d1" "$a0" "" 100 $lat "${srq[@]}" ;;
		esac
		result $? "${names[$i]}"
	fi
	i=$((i + 1)) port=$((port + 1))
done

# mixed_setup REV KO: d0 (veth0) and siw1 (veth1) of the siw.ko KO, and
# iwmpa's mpa_rev REV; 0 when both ports are ACTIVE. The devices of what
# ran before go: iwm1 (or the siw1 of the revision before); to load
# another siw.ko, d0 goes too (the unload of siw would take iwmpa's
# devices along: they share RDMA_DRIVER_SIW) and is created again
mixed_setup() {
	local rev=$1 mko=$2 d r=0 gone

	gone=("$d1" siw1)
	[ "$loaded_siw" != 1 ] || [ "$siw_ko" = "$mko" ] || gone+=("$d0")
	for d in "${gone[@]}"; do
		dev_exists "$d" || continue
		rdma link delete "$d" 2>&1 | show
		for _ in $(seq 50); do dev_exists "$d" || break; sleep 0.1; done
		dev_exists "$d" && { echo "# $d still there"; r=1; }
	done
	if [ "$loaded_siw" = 1 ] && [ "$siw_ko" != "$mko" ]; then
		unload siw || { echo "# cannot unload siw"; return 1; }
		loaded_siw=0 siw_ko=
	fi
	if [ "$loaded_siw" != 1 ]; then
		if ! insmod "$mko" 2> "$tmp/siwmod"; then
			show "$tmp/siwmod"
			return 1
		fi
		loaded_siw=1 siw_ko=$mko
	fi
	echo "# siw: $mko"
	if [ "$type" = iwmpa ]; then
		[ -n "$rev_saved" ] || rev_saved=$(cat "$rev_param" 2> /dev/null)
		if ! echo "$rev" 2> /dev/null > "$rev_param" ||
			[ "$(cat "$rev_param" 2> /dev/null)" != "$rev" ]; then
			echo "# cannot set $rev_param to $rev"
			r=1
		fi
		echo "# iwmpa: mpa_rev $(cat "$rev_param" 2> /dev/null)," \
			"crc $(cat /sys/module/iwmpa/parameters/crc 2> /dev/null)," \
			"p2p $(cat /sys/module/iwmpa/parameters/p2p 2> /dev/null)"
	fi
	if ! dev_exists "$d0"; then
		if ! ip netns exec "$ns0" rdma link add "$d0" type "$type" netdev veth0 \
			2> "$tmp/add"; then
			show "$tmp/add"
			r=1
		fi
	fi
	port_active "$ns0" "$d0" || r=1
	if ! ip netns exec "$ns1" rdma link add siw1 type siw netdev veth1 \
		2> "$tmp/add"; then
		show "$tmp/add"
		r=1
	elif ! port_active "$ns1" siw1; then
		r=1
	fi
	rdma link show 2>&1 | show
	return $r
}

# mixed_cap PCAP PORT PFX REV INITIATOR RES: the decode of one mixed
# rping captured on veth1, INITIATOR (iwmpa or siw) the type of its
# client, RES rping's result; adds to $bad. One Request and one Reply,
# both of revision REV, without M or R; C=1 in the Reply, and in the
# Request when iwmpa sent it; every FPDU's CRC good; if rping passed, the
# RDMAP messages of rping and, from the client, exactly the RTR that the
# Reply agreed to (a zero-length Write or Read Request) or none: the
# rping client sends no other Write or Read Request
mixed_cap() {
	local pcap=$1 port=$2 pfx=$3 rev=$4 ini=$5 res=$6 k f v c creq='' crep=''
	local total good rtr lost w=0 rd=0 fp=$tmp/${pfx}fpdus.txt

	mpa_frames "$pcap" "$pfx"
	sed "s/^/# $pfx: MPA /; s/\$/ (flags, Rev)/" "$tmp/${pfx}rr.chk"
	# revision 2: the IRD and ORD words (RFC 6581: P2P is 0x8000 of
	# the IRD, RTR Write 0x8000 and RTR Read 0x4000 of the ORD)
	awk '{ gsub(":", "", $2)
	       k = substr($2, 1, 32) == "4d504120494420526571204672616d65" ? "Request" : "Reply"
	       if (substr($2, 35, 2) == "02" && length($2) >= 48)
			print k, "IRD 0x" substr($2, 41, 4), "ORD 0x" substr($2, 45, 4) }' \
		"$tmp/${pfx}rr.txt" | sed "s/^/# $pfx: MPA /"
	[ "$(awk '$1 == "Request"' "$tmp/${pfx}rr.chk" | wc -l)" = 1 ] &&
		[ "$(awk '$1 == "Reply"' "$tmp/${pfx}rr.chk" | wc -l)" = 1 ] ||
		bad="$bad $pfx-mpa-frames"
	while read -r k f v; do
		[ -n "$f" ] || continue
		[ "$v" = "0$rev" ] || bad="$bad $pfx-$k-rev-$v"
		# no markers (0x80), no reject (0x20)
		[ $((16#$f & 0xa0)) = 0 ] || bad="$bad $pfx-$k-flags-$f"
		c=$(((16#$f & 0x40) != 0))
		if [ "$k" = Request ]; then creq=$c; else crep=$c; fi
	done < "$tmp/${pfx}rr.chk"
	if [ "$crep" != 1 ] || { [ "$ini" = iwmpa ] && [ "$creq" != 1 ]; }; then
		if [ "$type" = iwmpa ]; then
			bad="$bad $pfx-no-crc"
		else
			echo "# $pfx: siw without CRC (stock siw): the CRC check does not apply"
		fi
	fi
	fpdu_lines "$pcap" "$port" "$pfx"
	total=$(wc -l < "$tmp/${pfx}fpdus.txt")
	good=$(awk '$3 == 1' "$tmp/${pfx}fpdus.txt" | wc -l)
	echo "# $pfx: $total FPDUs, $good with a good CRC"
	[ "$total" -gt 0 ] || bad="$bad $pfx-no-fpdus"
	[ "$crep" != 1 ] || [ "$good" = "$total" ] || bad="$bad $pfx-crc=$good/$total"
	expert_bad "$pcap" "$pfx" ||
		bad="$bad $pfx-expert=$(wc -l < "$tmp/${pfx}expert.bad")"
	# a capture that missed packets explains a failure, is none itself
	lost=$(siw_capture_lost "$tmp/$pfx.dumpcap.log") ||
		echo "# $pfx: dumpcap: $lost packets captured/received/dropped"
	# a failed rping is its own test's failure: the frames and CRCs of
	# what it sent are checked all the same, its messages not
	if [ "$res" = 0 ]; then
		rping_ops "$tmp/${pfx}fpdus.txt" "$pfx-"
		rtr=$(rtr_type "$pfx")
		case $rtr in
		write) w=1 ;;
		read) rd=1 ;;
		esac
		echo "# $pfx: RTR agreed: $rtr"
		[ "$(fl 'c>s' 0x00)" = "$w" ] || { echo "# $pfx: c>s Writes: $(fl 'c>s' 0x00), expected $w"; bad="$bad $pfx-rtr"; }
		[ "$(fl 'c>s' 0x01)" = "$rd" ] || { echo "# $pfx: c>s Read Requests: $(fl 'c>s' 0x01), expected $rd"; bad="$bad $pfx-rtr"; }
	fi
	[ -z "$bad" ] || [ -z "$lost" ] || bad="$bad $pfx-capture=$lost"
}

# siw_rev1_server_why: why rping fails with a siw server in revision 1
siw_rev1_server_why() {
	cat <<-EOF
	# siw as Responder reports IRD 0 and ORD 0 in the CONNECT_REQUEST of
	# a Request without RFC 6581's data (revision 1): it sets them only
	# from that data. rping's server accepts with rdma_accept(id, NULL),
	# so librdmacm takes those: siw's QP enters RTS with ORD 0
	# (siw_qp_readq_init) and its first RDMA Read is refused
	# (siw_activate_tx_from_sq: -EINVAL; rping: "post send error -1").
	# The client's side, siw or iwmpa, does not matter.
	EOF
}

# passive_first_why REV: why ib_write_lat with d0 (iwmpa) as server and
# siw1 as client is not run
passive_first_why() {
	cat <<-EOF
	# ib_write_lat's server writes first (perftest: the client waits for
	# it). iwm0 is the MPA Responder there, and siw1's Request (capture
	# m${1}rp1) asked for no peer-to-peer model, so no RTR comes: rule 4
	# of RFC 5044 7.1.2 holds the Responder's first FPDU until the
	# Initiator's first one arrives (mpa.ko's tx_allowed). Both programs
	# wait for each other; when the client gives up and closes, the
	# server's Write fails (EPIPE: the peer's FIN before any FPDU) and
	# its QP goes to error. siw as Responder does not keep rule 4, which
	# is why siw against siw passes.
	EOF
}

# rtr_type PFX: the RTR the Reply decoded by mpa_frames (PFX) agreed to:
# write or read if it is of revision 2 with RFC 6581's peer-to-peer model
# (P2P 0x8000 of its IRD word; RTR Write 0x8000, Read 0x4000 of its ORD
# word), none otherwise
rtr_type() {
	local w

	w=$(awk '{ gsub(":", "", $2) }
		substr($2, 1, 32) != "4d504120494420526571204672616d65" &&
		substr($2, 35, 2) == "02" && length($2) >= 48 { print substr($2, 41, 8) }' \
		"$tmp/$1rr.txt" 2> /dev/null)
	if [ -z "$w" ] || [ $((16#${w:0:4} & 0x8000)) = 0 ]; then
		echo none
	elif [ $((16#${w:4:4} & 0x8000)) != 0 ]; then
		echo write
	elif [ $((16#${w:4:4} & 0x4000)) != 0 ]; then
		echo read
	else
		echo none
	fi
}

# mixed REV KO FIRST PORT WHY: the 20 tests names[FIRST..FIRST+19] of MPA
# revision REV, d0 against siw1 of the siw.ko KO, on the ports PORT to
# PORT+13; all skipped for WHY if not empty
mixed() {
	local rev=$1 mko=$2 i=$3 port=$4 why=$5 t0=$SECONDS r j k t p prog nt
	local sns cns sdev cdev caddr pfx mok ord d
	local -a cap res

	if [ -n "$why" ]; then
		for j in $(seq "$i" $((i + 3 + 2 * ${#progs[@]}))); do
			skip "${names[$j]}" "$why"
		done
		return
	fi
	r=1
	if [ -n "$nodev" ]; then
		echo "# $nodev"
	else
		mixed_setup "$rev" "$mko"
		r=$?
	fi
	result "$r" "${names[$i]}"
	mok=$r

	# rping both ways, each captured on veth1: k=1 the server on d0,
	# k=2 the server on siw1
	if [ -n "$no_rping" ]; then
		for j in 1 2 3; do skip "${names[$((i + j))]}" "$no_rping"; done
	elif [ "$mok" != 0 ]; then
		for j in 1 2 3; do
			echo "# revision $rev: no devices"
			not_ok "${names[$((i + j))]}"
		done
	else
		for k in 1 2; do
			sns=$ns0 cns=$ns1
			[ "$k" = 1 ] || { sns=$ns1 cns=$ns0; }
			pfx=m${rev}rp$k
			p=$((port + k - 1))
			cap[k]=0
			if [ -z "$no_cap" ]; then
				if siw_capture_start "$ns1" veth1 "$tmp/$pfx.pcapng" \
					"$tmp/$pfx.dumpcap.log" -f "tcp port $p"; then
					cap[k]=1
				else
					show "$tmp/$pfx.dumpcap.log"
				fi
			fi
			rping_pair "$pfx" "$sns" "$cns" "$p"
			res[k]=$?
			siw_capture_stop
			if [ "$rev" = 1 ] && [ "$sns" = "$ns1" ] || [ "$type$rev" = siw1 ]; then
				siw_rev1_server_why
				skip_failed "${res[k]}" "${names[$((i + k))]}" "siw as revision 1 Responder accepts rping with ORD 0 (its Read fails): siw's bug"
			else
				result "${res[k]}" "${names[$((i + k))]}"
			fi
		done
		j=$((i + 3))
		if [ -n "$no_cap" ]; then
			skip "${names[$j]}" "$no_cap"
		elif [ "${cap[1]}" != 1 ] || [ "${cap[2]}" != 1 ]; then
			echo "# dumpcap did not start"
			not_ok "${names[$j]}"
		else
			bad=
			for k in 1 2; do
				pfx=m${rev}rp$k
				t=siw
				[ "$k" = 1 ] || t=$type
				echo "# capture $pfx: client $t, port $((port + k - 1))"
				mixed_cap "$tmp/$pfx.pcapng" $((port + k - 1)) "$pfx" "$rev" "$t" \
					"${res[k]}"
			done
			if [ -z "$bad" ]; then
				ok "${names[$j]}"
			else
				echo "# capture check failed:$bad"
				not_ok "${names[$j]} (failed:$bad)"
			fi
		fi
	fi

	# revision 1 negotiates no IRD/ORD (RFC 6581 does): perftest's client
	# would take its own device's max_qp_rd_atom as ORD (siw: 128), the
	# server the same as IRD (iwmpa: 64), and a Read Request past the IRD
	# ends the connection (a Terminate). ib_read_bw gets the lower of the
	# two as -o, the agreement RFC 5040 leaves to the ULP
	ord=
	if [ "$rev" = 1 ] && [ "$mok" = 0 ]; then
		ord=$(for d in "$d0" siw1; do ibv_devinfo -v -d "$d" 2> /dev/null |
			awk '/max_qp_rd_atom:/ { print $2 }'; done | sort -n | head -n 1)
		echo "# revision 1: ib_read_bw -o ${ord:-?} (the lower max_qp_rd_atom of $d0 and siw1)"
	fi

	# perftest: the server on d0, then the server on siw1
	j=$((i + 4)) p=$((port + 2))
	for k in 1 2; do
		sns=$ns0 sdev=$d0 cns=$ns1 cdev=siw1 caddr=$a0
		[ "$k" = 1 ] || { sns=$ns1 sdev=siw1 cns=$ns0 cdev=$d0 caddr=$a1; }
		for t in "${progs[@]}"; do
			prog=ib_${t%_srq}
			srq=()
			[ "${t%_srq}" = "$t" ] || srq=(--use-srq)
			nt=$(need "$prog" perftest)
			if [ -n "$nt" ]; then
				skip "${names[$j]}" "$nt"
			elif [ "$mok" != 0 ]; then
				echo "# revision $rev: no devices"
				not_ok "${names[$j]}"
			elif [ "$k$t$type" = 1write_latiwmpa ] && [ "$passive_first" != 1 ] &&
				[ "$(rtr_type "m${rev}rp1")" = none ]; then
				passive_first_why "$rev"
				skip "${names[$j]}" "the passive side writes first, without an RTR (rule 4 of RFC 5044 7.1.2); IWMPA_APPS_PASSIVE_FIRST=1 runs it"
			else
				case $t in
				read_bw)
					# shellcheck disable=SC2086 # $mbw: several words
					perf "m$rev$k$t" "$prog" "$p" "$sns" "$sdev" "$cns" "$cdev" \
						"$caddr" 65536 "$mbw_n" $mbw ${ord:+-o "$ord"} ;;
				*_bw*)
					# shellcheck disable=SC2086 # $mbw: several words
					perf "m$rev$k$t" "$prog" "$p" "$sns" "$sdev" "$cns" "$cdev" \
						"$caddr" 65536 "$mbw_n" $mbw "${srq[@]}" ;;
				*)
					# shellcheck disable=SC2086 # $mlat: several words
					perf "m$rev$k$t" "$prog" "$p" "$sns" "$sdev" "$cns" "$cdev" \
						"$caddr" "" "$mlat_n" $mlat "${srq[@]}" ;;
				esac
				result $? "${names[$j]}"
			fi
			j=$((j + 1)) p=$((p + 1))
		done
	done
	echo "# mixed revision $rev: $((SECONDS - t0)) s"
}

# 13-44: d0 against siw1, MPA revision 2 (13-28) and 1 (29-44);
# IWMPA_APPS_SIW_ONLY: siw0 against a new siw1
mwhy=
if [ "$siw_only" != 1 ] && loaded siw; then
	mwhy="siw is loaded already: not touching it"
fi
why2=$mwhy why1=$mwhy
[ -n "$why2" ] || [ -f "$ko" ] || why2="no $ko (run tools/siw/build on the host)"
[ -n "$why1" ] || [ -f "$ko1" ] || why1="no $ko1 (run tools/siw/build --rev1 on the host)"
mixed 2 "$ko" 15 7231 "$why2"
mixed 1 "$ko1" 35 7261 "$why1"

# 45: teardown
r=0
teardown || r=1
for d in iwm0 iwm1 siw0 siw1; do
	! dev_exists "$d" || { echo "# $d still there"; r=1; }
done
! ip netns list | grep -Eqw "^($ns0|$ns1)" || { echo "# namespaces left"; r=1; }
if [ "$iwmpa_here" = 1 ]; then
	! loaded iwmpa || { echo "# iwmpa still loaded"; r=1; }
fi
result "$r" "${names[55]}"

exit "$fail"
