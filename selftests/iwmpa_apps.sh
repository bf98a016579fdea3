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
#     Sends, Read Requests, Read Responses and Writes rping makes);
#     rdma_server <- rdma_client;
#     ib_send_bw, ib_write_bw, ib_read_bw (-R -F -n 1000 -s 65536: the
#     receiver posts more receives than DDP holds at once) and
#     ib_send_lat, ib_write_lat, ib_read_lat (-R -F -n 100), server in
#     apps0, client in apps1: exit status and the result table line (the
#     numbers are not checked: under TCG perftest's cycle counter does not
#     calibrate);
#   iwm0 (iwmpa) <-> siw1 (siw, veth1, apps1), iwm1 deleted first: rping
#     and ib_write_bw -R both ways;
# then teardown: links deleted, namespaces gone, and the modules this
# script loaded unloaded (iwmpa, then rdmap, siw) so that later tests can
# unload ddp.ko and mpa.ko. Every program runs under timeout 120.
#
# A tool that is missing skips its tests (rping and rdma_server/client:
# package rdmacm-utils; ib_*: perftest; dumpcap/tshark; siw.ko:
# tools/siw/build); an iwmpa.ko that does not load or work fails them.
#
# Usage: iwmpa_apps.sh [-h|--help]
# Environment: SIW_KO (default ../build/siw/siw.ko, on another kernel
# series than 6.1 ../build/k-SERIES/siw/siw.ko, where tools/siw/build puts
# it), IWMPA_APPS_SIW_ONLY=1 (siw0 <-> siw1 instead of iwm0 <-> iwm1 and
# siw0 <-> a new siw1 for the mixed tests, no iwmpa at all: checks the
# test's command lines against siw; SIW_KO=../build/siw-crc/siw.ko for
# the CRC check of the capture), IWMPA_APPS_OUT (a directory to keep the logs and the
# capture in).
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
siw_only=${IWMPA_APPS_SIW_ONLY:-0}
out=${IWMPA_APPS_OUT:-}
ns0=apps0
ns1=apps1
a0=192.0.2.1
a1=192.0.2.2
count=100
tmp=$(mktemp -d)
spid=
n=0 fail=0
NTESTS=18
loaded_iwmpa=0 loaded_rdmap=0 loaded_siw=0 iwmpa_here=0

# siw_wait_listen, siw_capture_start/stop
# shellcheck source=../tools/siw/lib.sh disable=SC1091
. "$top/tools/siw/lib.sh"

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
show() { sed 's/^/# /' "$@"; }
mod_loaded() { grep -q "^$1 " /proc/modules; }
dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# rmmod_wait MODULE: device teardown is asynchronous, retry for 10 s
rmmod_wait() {
	for _ in $(seq 50); do
		mod_loaded "$1" || return 0
		rmmod "$1" 2> /dev/null && return 0
		sleep 0.2
	done
	rmmod "$1"
}

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
	if [ "$loaded_iwmpa" = 1 ]; then
		rmmod_wait iwmpa || { echo "# cannot unload iwmpa"; r=1; }
		loaded_iwmpa=0
	fi
	if [ "$loaded_rdmap" = 1 ]; then
		rmmod_wait rdmap || { echo "# cannot unload rdmap"; r=1; }
		loaded_rdmap=0
	fi
	if [ "$loaded_siw" = 1 ]; then
		rmmod_wait siw || { echo "# cannot unload siw"; r=1; }
		loaded_siw=0
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
names=("modules loaded ($type), veth pair $ns0/veth0 $a0 <-> $ns1/veth1 $a1 up"
	"rdma link add $d0 (veth0) and $d1 (veth1): both ports ACTIVE"
	"rping -s ($d0) <- rping -c -C $count -V -S 1000 ($d1): $count pings verified"
	"rping -s ($d1) <- rping -c -C $count -V -S 1000 ($d0): $count pings verified"
	"tshark: rping $d0 <- $d1 on veth1: MPA C=1, every FPDU's CRC good, RDMAP messages"
	"rdma_server ($d0) <- rdma_client ($d1)"
	"ib_send_bw -R $bw ($d0 server, $d1 client)"
	"ib_write_bw -R $bw ($d0 server, $d1 client)"
	"ib_read_bw -R $bw ($d0 server, $d1 client)"
	"ib_send_lat -R $lat ($d0 server, $d1 client)"
	"ib_write_lat -R $lat ($d0 server, $d1 client)"
	"ib_read_lat -R $lat ($d0 server, $d1 client)"
	"mixed: rdma link delete $d1, rdma link add siw1 type siw netdev veth1"
	"mixed: rping -s ($d0, $type) <- rping -c -C $count -V -S 1000 (siw1)"
	"mixed: rping -s (siw1) <- rping -c -C $count -V -S 1000 ($d0, $type)"
	"mixed: ib_write_bw -R $bw, $d0 ($type) server, siw1 client"
	"mixed: ib_write_bw -R $bw, siw1 server, $d0 ($type) client"
	"teardown: links deleted, namespaces gone, modules loaded here unloaded")

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
elif [ "$siw_only" = 1 ] && mod_loaded siw; then
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
	mod_loaded "$m" || { echo "# $m not loaded"; r=1; }
done
if [ "$siw_only" = 1 ]; then
	if insmod "$ko" 2> "$tmp/mod"; then
		loaded_siw=1
	else
		show "$tmp/mod"
		r=1
	fi
elif mod_loaded iwmpa; then
	echo "# iwmpa loaded already: using it, leaving it loaded"
else
	mod_loaded rdmap || loaded_rdmap=1
	if ! modprobe iwmpa 2> "$tmp/mod"; then
		# not installed: the build tree's, after what modprobe can load
		modprobe -a ddp rdmap 2>> "$tmp/mod" ||
			insmod "$top/rdmap/rdmap.ko" 2>> "$tmp/mod"
		insmod "$top/rdmap/iwmpa.ko" 2>> "$tmp/mod"
	fi
	mod_loaded rdmap || loaded_rdmap=0
	if mod_loaded iwmpa; then
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
		# MPA Request/Reply: octets 16, 17 of the frame (flags, Rev)
		tshark -r "$tmp/rping.pcapng" -Y 'iwarp_mpa.req or iwarp_mpa.rep' \
			-T fields -e tcp.srcport -e tcp.payload > "$tmp/rr.txt" 2> /dev/null
		awk '{ gsub(":", "", $2)
		       k = substr($2, 1, 32) == "4d504120494420526571204672616d65" ? "Request" : "Reply"
		       print k, substr($2, 33, 2), substr($2, 35, 2) }' "$tmp/rr.txt" > "$tmp/rr.chk"
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
		tshark -r "$tmp/rping.pcapng" -T pdml 2> /dev/null | awk '
		function attr(a,   r) {
			r = $0
			if (!match(r, a "=\"[^\"]*\""))
				return ""
			return substr(r, RSTART + length(a) + 2, RLENGTH - length(a) - 3)
		}
		function flush() {
			if (have)
				print dir, (op == "" ? "-" : op), crc
			have = 0
		}
		/<field name="/ {
			name = attr("name")
			if (name == "tcp.srcport") {
				flush(); src = attr("show")
			} else if (name == "tcp.dstport") {
				dir = attr("show") == 7201 ? "c>s" : "s>c"
			} else if (name == "iwarp_mpa.fpdu") {
				flush(); have = 1; crc = 0; op = ""
			} else if (have && name == "iwarp_mpa.crc_check") {
				crc = attr("showname") ~ /Good/ ? 1 : 0
			} else if (have && name == "iwarp_rdma.opcode" && op == "") {
				op = attr("show")
			}
		}
		END { flush() }' > "$tmp/fpdus.txt"
		awk '{ k = $1 " op " $2; c[k]++; g[k] += $3 }
		     END { for (k in c) printf "# FPDUs %s: %d, %d with a good CRC\n", k, c[k], g[k] }' \
			"$tmp/fpdus.txt" | sort
		total=$(wc -l < "$tmp/fpdus.txt")
		good=$(awk '$3 == 1' "$tmp/fpdus.txt" | wc -l)
		echo "# $total FPDUs, $good with a good CRC"
		[ "$total" -gt 0 ] || bad="$bad no-fpdus"
		[ "$crc_on" != 2 ] || [ "$good" = "$total" ] || bad="$bad crc"
		tshark -r "$tmp/rping.pcapng" -q -z expert,warn > "$tmp/expert.txt" 2> /dev/null
		grep -iE 'iwarp|mpa|ddp|rdma|malformed' "$tmp/expert.txt" |
			grep -vE 'Res field is NOT set to zero|Rev field is NOT set to one' \
			> "$tmp/expert.bad"
		sed 's/^/# expert: /' "$tmp/expert.bad"
		[ -s "$tmp/expert.bad" ] && bad="$bad expert"
		# rping -C N: per ping the client Sends its buffer's STag, the
		# server Reads it (Read Request, Read Response(s)), Sends, Writes
		# it back (-V), the client Sends again and the server answers; a
		# Read Response or Write of 1000 octets may take several FPDUs
		fl() { awk -v d="$1" -v o="$2" '$1 == d && $2 == o' "$tmp/fpdus.txt" | wc -l; }
		want() {	# DIR OPCODE MIN MAX
			local got

			got=$(fl "$1" "$2")
			if [ "$got" -lt "$3" ] || [ "$got" -gt "$4" ]; then
				echo "# $1 opcode $2: $got FPDUs, expected $3..$4"
				bad="$bad $1-$2"
			fi
		}
		if [ "$res_rp1" = 0 ]; then
			want 'c>s' 0x03 $((2 * count)) $((2 * count))
			want 's>c' 0x03 $((2 * count)) $((2 * count))
			want 's>c' 0x01 "$count" "$count"
			want 'c>s' 0x02 "$count" $((4 * count))
			want 's>c' 0x00 "$count" $((4 * count))
		else
			bad="$bad rping-failed"
		fi
		if [ -z "$bad" ]; then
			ok "${names[4]}"
		else
			echo "# capture check failed:$bad"
			not_ok "${names[4]}"
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

# 7-12: perftest, server in apps0 on d0, client in apps1 on d1
i=6 port=7220
for t in send_bw write_bw read_bw send_lat write_lat read_lat; do
	prog=ib_$t
	nt=$(need "$prog" perftest)
	if [ -n "$nt" ]; then
		skip "${names[$i]}" "$nt"
	elif [ -n "$nodev" ]; then
		echo "# $nodev"
		not_ok "${names[$i]}"
	else
		case $t in
		*_bw)
			# shellcheck disable=SC2086 # $bw: several words
			perf "$t" "$prog" "$port" "$ns0" "$d0" "$ns1" "$d1" "$a0" 65536 "$bw_n" $bw ;;
		*)
			# shellcheck disable=SC2086 # $lat: several words
			perf "$t" "$prog" "$port" "$ns0" "$d0" "$ns1" "$d1" "$a0" "" 100 $lat ;;
		esac
		result $? "${names[$i]}"
	fi
	i=$((i + 1)) port=$((port + 1))
done

# 13-17: iwm0 against siw1 (IWMPA_APPS_SIW_ONLY: siw0 against a new siw1)
mwhy=
if [ "$siw_only" = 1 ]; then
	:
elif [ ! -f "$ko" ]; then
	mwhy="no $ko (run tools/siw/build on the host)"
elif mod_loaded siw; then
	mwhy="siw is loaded already: not touching it"
fi
if [ -n "$mwhy" ]; then
	for i in 12 13 14 15 16; do skip "${names[$i]}" "$mwhy"; done
else
	r=1
	if [ -n "$nodev" ]; then
		echo "# $nodev"
	else
		r=0
		rdma link delete "$d1" 2>&1 | show
		for _ in $(seq 50); do dev_exists "$d1" || break; sleep 0.1; done
		dev_exists "$d1" && { echo "# $d1 still there"; r=1; }
		# IWMPA_APPS_SIW_ONLY: loaded for the first part already
		if [ "$loaded_siw" != 1 ]; then
			if insmod "$ko" 2> "$tmp/siwmod"; then
				loaded_siw=1
			else
				show "$tmp/siwmod"
				r=1
			fi
		fi
		if [ "$loaded_siw" != 1 ]; then
			:
		elif ! ip netns exec "$ns1" rdma link add siw1 type siw netdev veth1 \
			2> "$tmp/add"; then
			show "$tmp/add"
			r=1
		elif ! port_active "$ns1" siw1; then
			r=1
		fi
		rdma link show 2>&1 | show
	fi
	result "$r" "${names[12]}"
	mixok=$r

	if [ -n "$no_rping" ]; then
		skip "${names[13]}" "$no_rping"
		skip "${names[14]}" "$no_rping"
	elif [ "$mixok" != 0 ]; then
		not_ok "${names[13]}"
		not_ok "${names[14]}"
	else
		rping_pair mrp1 "$ns0" "$ns1" 7231
		result $? "${names[13]}"
		rping_pair mrp2 "$ns1" "$ns0" 7232
		result $? "${names[14]}"
	fi
	nt=$(need ib_write_bw perftest)
	if [ -n "$nt" ]; then
		skip "${names[15]}" "$nt"
		skip "${names[16]}" "$nt"
	elif [ "$mixok" != 0 ]; then
		not_ok "${names[15]}"
		not_ok "${names[16]}"
	else
		# shellcheck disable=SC2086 # $bw: several words
		perf mwb1 ib_write_bw 7233 "$ns0" "$d0" "$ns1" siw1 "$a0" 65536 "$bw_n" $bw
		result $? "${names[15]}"
		# shellcheck disable=SC2086
		perf mwb2 ib_write_bw 7234 "$ns1" siw1 "$ns0" "$d0" "$a1" 65536 "$bw_n" $bw
		result $? "${names[16]}"
	fi
fi

# 18: teardown
r=0
teardown || r=1
for d in iwm0 iwm1 siw0 siw1; do
	! dev_exists "$d" || { echo "# $d still there"; r=1; }
done
! ip netns list | grep -Eqw "^($ns0|$ns1)" || { echo "# namespaces left"; r=1; }
if [ "$iwmpa_here" = 1 ]; then
	! mod_loaded iwmpa || { echo "# iwmpa still loaded"; r=1; }
fi
result "$r" "${names[17]}"

exit "$fail"
