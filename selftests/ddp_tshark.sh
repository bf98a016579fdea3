#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DDP on the wire, checked by Wireshark's iWARP dissectors (TAP): a small
# exchange between two /dev/ddp streams over 127.0.0.1 (ddp_place
# --capture-run) is captured with tshark and decoded; every DDP header
# field must be what was sent, every CRC good, and there must be no
# expert warning or error. RsvdULP carries RDMAP headers (RDMA Write,
# Send) so that the RDMAP dissector accepts the segments.
# Needs mpa.ko and ddp.ko loaded, and tshark (skipped without it).

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
prog=$here/ddp_place
use_tmp

echo "TAP version 13"
echo "1..7"
if ! command -v tshark > /dev/null; then
	for i in 1 2 3 4 5 6 7; do
		echo "ok $i ddp_tshark $i # SKIP no tshark"
	done
	exit 4
fi

# below the ephemeral ports (32768 up), which a client's socket may hold
port=$((20000 + RANDOM % 10000))
cap=$tmp/cap.pcapng
start_capture "$port" "$cap"
sleep 1
"$prog" --capture-run "$port" > "$tmp/run.out" 2> "$tmp/run.err"
st=$?
sleep 1
kill -INT "$tpid"
wait "$tpid"
sed 's/^/# /' "$tmp/run.out" "$tmp/run.err"
check "ddp_place --capture-run: exchange completed" [ "$st" = 0 ]

stag=$(sed -n 's/^stag //p' "$tmp/run.out")
to=$(sed -n 's/^to //p' "$tmp/run.out")
wlen=$(sed -n 's/^write //p' "$tmp/run.out")

# One line per FPDU: dir ulpdu_len T L DV stag to qn msn mo opcode crc_ok,
# dir ">" for Initiator -> Responder (to the listening port)
tshark -r "$cap" -T pdml 2> /dev/null | awk -v port="$port" '
function attr(a,   r) {
	r = $0
	if (!match(r, a "=\"[^\"]*\""))
		return ""
	r = substr(r, RSTART + length(a) + 2, RLENGTH - length(a) - 3)
	return r
}
function v(name) {
	return f[name] == "" ? "-" : f[name]
}
function flush() {
	if (have)
		print dir, v("iwarp_mpa.ulpdulength"), v("iwarp_ddp.tagged_flag"),
		      v("iwarp_ddp.last_flag"), v("iwarp_ddp.dv"),
		      v("iwarp_ddp.stag"), v("iwarp_ddp.tagged_offset"),
		      v("iwarp_ddp.qn"), v("iwarp_ddp.msn"), v("iwarp_ddp.mo"),
		      v("iwarp_rdma.opcode"), crc
	have = 0
}
/<field name="/ {
	name = attr("name")
	if (name == "tcp.dstport") {
		flush()
		dir = attr("show") == port ? ">" : "<"
	} else if (name == "iwarp_mpa.fpdu") {
		flush()
		have = 1
		crc = 0
		split("", f)
	} else if (have && name == "iwarp_mpa.crc_check") {
		crc = attr("showname") ~ /Good/ ? 1 : 0
	} else if (have && name ~ /^iwarp_(mpa|ddp|rdma)\./ && !(name in f)) {
		f[name] = attr("show")
	}
}
END { flush() }
' > "$tmp/fpdus"
sed 's/^/# fpdu /' "$tmp/fpdus"

# Initiator -> Responder, tagged: one RDMA Write cut into segments
awk -v stag="$stag" -v to="$to" -v wlen="$wlen" '
function hex(s,   i, c, v) {
	v = 0
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
$1 == ">" && $3 == 1 {
	n++
	if (hex($6) != hex(stag) || $5 != 1 || $11 != "0x00" || !$12)
		bad++
	if (hex($7) != hex(to) + sum)
		bad++
	if ($4 != 0)
		last++
	lastn = n
	if ($4 == 1)
		lastat = n
	sum += $2 - 14
}
END {
	printf "# tagged: %d segments, %d payload octets, %d bad, L=1 at %d of %d\n",
	       n, sum, bad, lastat, lastn
	exit !(n >= 1 && sum == wlen && !bad && last == 1 && lastat == lastn)
}' "$tmp/fpdus"
check "RDMA Write: STag, TOs, L bits, DV, opcode, lengths as sent" [ $? = 0 ]

# untagged: Sends (opcode 3) on QN 0, MSN 1 and 2 from the Initiator,
# MSN 1 from the Responder, MO 0, L=1, with the lengths sent
untagged() {	# DIR
	awk -v d="$1" '$1 == d && $3 == 0 {
		print $2 - 18, $4, $5, $8, $9, $10, $11, $12
	}' "$tmp/fpdus" | tr '\n' ';'
}
u=$(untagged ">")
echo "# untagged >: $u"
check "Sends Initiator -> Responder: QN 0, MSN 1 and 2, MO 0" \
	[ "$u" = "50 1 1 0 1 0 0x03 1;60 1 1 0 2 0 0x03 1;" ]
u=$(untagged "<")
echo "# untagged <: $u"
check "Send Responder -> Initiator: QN 0, MSN 1, MO 0" [ "$u" = "70 1 1 0 1 0 0x03 1;" ]

total=$(wc -l < "$tmp/fpdus")
good=$(awk '$12 == 1' "$tmp/fpdus" | wc -l)
echo "# $total FPDUs, $good with a good CRC"
check "every FPDU has a good CRC" [ "$total" -ge 5 -a "$good" = "$total" ]

tshark -r "$cap" -q -z expert,warn > "$tmp/x.txt" 2> /dev/null
sed 's/^/# /' "$tmp/x.txt"
check "no expert warning or error" \
	[ "$(grep -ciE 'iwarp|mpa|ddp|rdma|malformed' "$tmp/x.txt")" = 0 ]

req=$(tshark -r "$cap" -Y iwarp_mpa.req 2> /dev/null | wc -l)
rep=$(tshark -r "$cap" -Y iwarp_mpa.rep 2> /dev/null | wc -l)
check "one MPA Request and one Reply" [ "$req" = 1 -a "$rep" = 1 ]

exit $fail
