#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/mpa-cat end to end (TAP): 4 MiB over IPv4 and IPv6 with markers and
# CRC, private data both ways, the exit status of MPA errors, and a tshark
# capture checked by Wireshark's iWARP MPA dissector. Needs mpa.ko loaded.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
cat=$here/../tools/mpa-cat
use_tmp
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
show() { sed 's/^/# /' "$@"; }

echo "TAP version 13"
echo "1..8"
if [ ! -x "$cat" ]; then
	for i in 1 2 3 4 5 6 7 8; do
		skip "mpa_cat $i" "$cat not built (make -C tools)"
	done
	exit 4
fi

# below the ephemeral ports (32768 up), which a client's socket may hold
port=$((20000 + RANDOM % 10000))

# run_pair NAME ADDR [-6] LISTENER-OPTS -- INITIATOR-OPTS: responder reads
# $tmp/r.in and writes $tmp/r.out, initiator reads $tmp/i.in and writes $tmp/i.out
run_pair() {
	local addr=$1 fam=$2 lopts=() iopts=()

	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do lopts+=("$1"); shift; done
	shift
	iopts=("$@")
	port=$((port + 1))
	"$cat" -l $fam "${lopts[@]}" "$addr" "$port" < "$tmp/r.in" > "$tmp/r.out" \
		2> "$tmp/r.err" &
	lpid=$!
	pids+=("$lpid")
	wait_listen "$port" || { echo "# listener did not start"; show "$tmp/r.err"; }
	timeout 120 "$cat" $fam "${iopts[@]}" "$addr" "$port" < "$tmp/i.in" \
		> "$tmp/i.out" 2> "$tmp/i.err"
	ist=$?
	wait "$lpid"
	lst=$?
	show "$tmp/i.err" "$tmp/r.err"
}

same() { cmp -s "$1" "$2" && [ "$(sha256sum < "$1")" = "$(sha256sum < "$2")" ]; }

head -c $((4 << 20)) /dev/urandom > "$tmp/big"

# 1, 2: 4 MiB Initiator -> Responder, markers both ways, CRC
for fam in 4 6; do
	if [ $fam = 4 ]; then addr=127.0.0.1 f=; else addr=::1 f=-6; fi
	cp "$tmp/big" "$tmp/i.in"
	: > "$tmp/r.in"
	run_pair "$addr" "$f" -m -v -- -m -v
	if [ "$ist" = 0 ] && [ "$lst" = 0 ] && same "$tmp/big" "$tmp/r.out" &&
	   [ ! -s "$tmp/i.out" ] &&
	   grep -q '^mpa-cat: Initiator, rev 1, markers rx on tx on, crc on, mulpdu' "$tmp/i.err" &&
	   grep -q '^mpa-cat: Responder, rev 1, markers rx on tx on, crc on, mulpdu' "$tmp/r.err" &&
	   grep -q '^mpa-cat: stats: rx_fpdus [1-9][0-9]* rx_octets 4194304 ' "$tmp/r.err" &&
	   grep -q '^mpa-cat: stats: tx_fpdus [1-9][0-9]* tx_octets 4194304 ' "$tmp/i.err"; then
		ok "mpa_cat 4 MiB over IPv$fam, markers and CRC, sha256 equal"
	else
		not_ok "mpa_cat 4 MiB over IPv$fam (exit $ist/$lst)"
	fi
done

# 3: private data both ways, data both ways (the Responder sends after the
# Initiator's first FPDU), markers only towards the Responder, small ULPDUs
printf 'ping\n' > "$tmp/i.in"
head -c 100000 /dev/urandom > "$tmp/r.in"
run_pair 127.0.0.1 "" -m -p "hello from the responder" -- -p 'hi\there' -s 1000
if [ "$ist" = 0 ] && [ "$lst" = 0 ] && same "$tmp/r.in" "$tmp/i.out" &&
   [ "$(cat "$tmp/r.out")" = ping ] &&
   grep -qx 'mpa-cat: Responder private data (24 octets): hello from the responder' "$tmp/i.err" &&
   grep -qx 'mpa-cat: Initiator private data (8 octets): hi\\x5cthere' "$tmp/r.err" &&
   grep -q '^mpa-cat: Initiator, rev 1, markers rx off tx on, crc on, mulpdu [0-9]*, send size 1000$' "$tmp/i.err" &&
   grep -q '^mpa-cat: Responder, rev 1, markers rx on tx off, crc on' "$tmp/r.err"; then
	ok "mpa_cat private data both ways, data both ways"
else
	not_ok "mpa_cat private data both ways (exit $ist/$lst)"
fi

# 4: -n without allow_no_crc is refused (MPA_START fails with EPERM)
param=/sys/module/mpa/parameters/allow_no_crc
[ -w "$param" ] && echo 0 > "$param"
port=$((port + 1))
"$cat" -l 127.0.0.1 "$port" < /dev/null > /dev/null 2> "$tmp/l.err" &
lpid=$!
pids+=("$lpid")
wait_listen "$port"
"$cat" -n 127.0.0.1 "$port" < /dev/null > /dev/null 2> "$tmp/e.err"
st=$?
wait "$lpid"
show "$tmp/e.err" "$tmp/l.err"
if [ "$st" = 10 ] && grep -qx 'mpa-cat: MPA_START: Operation not permitted' "$tmp/e.err"; then
	ok "mpa_cat -n refused without allow_no_crc: exit 10"
else
	not_ok "mpa_cat -n without allow_no_crc: exit $st"
fi

# 5: --help and a bad option
"$cat" --help > "$tmp/h.out" 2>&1
st=$?
"$cat" -x a b > /dev/null 2>&1
st2=$?
if [ "$st" = 0 ] && [ "$st2" = 2 ] && grep -q '^usage: mpa-cat ' "$tmp/h.out"; then
	ok "mpa_cat --help exits 0, a bad option 2"
else
	not_ok "mpa_cat --help ($st) and a bad option ($st2)"
fi

# 6: a bad Request (Rev 3, unknown) from a raw peer: the Responder exits with 20 + error 4
port=$((port + 1))
"$cat" -l 127.0.0.1 "$port" < /dev/null > /dev/null 2> "$tmp/e.err" &
lpid=$!
pids+=("$lpid")
wait_listen "$port"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'MPA ID Req Frame\x40\x03\x00\x00' >&3
wait "$lpid"
st=$?
exec 3>&-
show "$tmp/e.err"
if [ "$st" = 24 ] &&
   grep -qx 'mpa-cat: MPA error 4 (startup failed): Software caused connection abort' "$tmp/e.err"; then
	ok "mpa_cat bad Request: exit 24"
else
	not_ok "mpa_cat bad Request: exit $st"
fi

# 7: a silent raw peer: the Responder's startup timeout, 20 + error 4
port=$((port + 1))
"$cat" -l -t 300 127.0.0.1 "$port" < /dev/null > /dev/null 2> "$tmp/e.err" &
lpid=$!
pids+=("$lpid")
wait_listen "$port"
exec 3<>"/dev/tcp/127.0.0.1/$port"
wait "$lpid"
st=$?
exec 3>&-
show "$tmp/e.err"
if [ "$st" = 24 ] &&
   grep -qx 'mpa-cat: MPA error 4 (startup failed): Connection timed out' "$tmp/e.err"; then
	ok "mpa_cat startup timeout: exit 24"
else
	not_ok "mpa_cat startup timeout: exit $st"
fi

# 8: Wireshark's iWARP MPA dissector (a TCP heuristic) checks every CRC
name="mpa_cat tshark: every FPDU has a good CRC, no MPA expert warnings"
if ! command -v tshark > /dev/null; then
	skip "$name" "no tshark"
else
	port=$((port + 1))
	cap=$tmp/cap.pcapng
	start_capture "$port" "$cap"
	port=$((port - 1))
	head -c $((256 << 10)) "$tmp/big" > "$tmp/i.in"
	: > "$tmp/r.in"
	# small FPDUs: the dissector does not reassemble FPDUs across segments
	run_pair 127.0.0.1 "" -m -v -- -m -p tshark -s 1000
	sleep 1
	kill -INT "$tpid"
	wait "$tpid"
	fpdus=$(sed -n 's/^mpa-cat: stats: rx_fpdus \([0-9]*\) .*/\1/p' "$tmp/r.err")
	# one pass: packet details and the expert summary (warnings and errors)
	tshark -r "$cap" -V -z expert,warn > "$tmp/t.txt" 2>/dev/null
	good=$(grep -c 'CRC check: 0x[0-9a-f]* (Good CRC32)$' "$tmp/t.txt")
	bad=$(grep -c 'CRC check: .*Bad' "$tmp/t.txt")
	reqs=$(grep -c 'Request frame header' "$tmp/t.txt")
	reps=$(grep -c 'Reply frame header' "$tmp/t.txt")
	sed -n '/^Errors\|^Warns/,$p' "$tmp/t.txt" > "$tmp/x.txt"
	experts=$(grep -ci 'iwarp_mpa' "$tmp/x.txt")
	echo "# tshark: $reqs Request, $reps Reply, $good good and $bad bad CRCs," \
	     "$experts MPA expert warnings; mpa-cat received $fpdus FPDUs"
	if [ "$ist" = 0 ] && [ "$lst" = 0 ] && same "$tmp/i.in" "$tmp/r.out" &&
	   [ "$reqs" = 1 ] && [ "$reps" = 1 ] && [ "$bad" = 0 ] && [ "$experts" = 0 ] &&
	   [ -n "$fpdus" ] && [ "$good" -gt 0 ] && [ "$good" -le "$fpdus" ]; then
		ok "$name"
	else
		show "$tmp/t.err" "$tmp/x.txt"
		not_ok "$name"
	fi
fi

exit $fail
