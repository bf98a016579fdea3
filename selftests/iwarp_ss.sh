#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/iwarp-ss (TAP): lists an MPA connection made by two mpa-cat
# processes with both ends' state, role, revision, CRC, markers and
# counters, as lines and as JSON, and nothing for plain TCP; then a DDP
# stream made by two ddp-xfer processes that hold it open after a known
# transfer, with the stream's exact message, octet and error counters
# (MPA_DIAG_CONSUMER_INFO). Needs mpa.ko and ddp.ko.

# shellcheck disable=SC2317 # the helpers run through check
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
ss=$here/../tools/iwarp-ss
cat=$here/../tools/mpa-cat
xfer=$here/../tools/ddp-xfer
use_tmp

echo "TAP version 13"
echo "1..10"
if [ ! -x "$ss" ] || [ ! -x "$cat" ] || [ ! -x "$xfer" ]; then
	for i in $(seq 10); do
		echo "ok $i iwarp_ss $i # SKIP tools not built (make -C tools)"
	done
	exit 4
fi

# below the ephemeral ports (32768 up), which a client's socket may hold
port=$((20000 + RANDOM % 10000))
wait_for() {	# CMD...: up to 10 s
	local i

	for i in $(seq 200); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
listening() { grep -q "$(printf ':%04X ' "$port").* 0A " /proc/net/tcp; }
two_rows() { [ "$("$ss" | grep -c " full ")" -eq 2 ]; }

check "no MPA connection: no row, exit 0" \
	bash -c "[ -z \"\$('$ss')\" ] && [ \"\$('$ss' --json)\" = '[]' ]"

# 3000 octets from the Initiator (markers required by the Responder),
# then both ends stay open until killed
head -c 3000 /dev/zero >"$tmp/data"
(sleep 60 | "$cat" -l -m 127.0.0.1 "$port" >"$tmp/r.out") &
pids+=($!)
wait_for listening
(cat "$tmp/data"; sleep 60) | "$cat" 127.0.0.1 "$port" >/dev/null &
pids+=($!)
wait_for two_rows
wait_for bash -c "[ \$(stat -c %s '$tmp/r.out') -eq 3000 ]"
"$ss" -c >"$tmp/lines"
"$ss" --json >"$tmp/json"
sed 's/^/# /' "$tmp/lines"

check "two rows, both in full operation" two_rows
check "the Initiator: rev, CRC, markers to the Responder, 3000 octets sent" \
	grep -Eq "^127.0.0.1:[0-9]+ +127.0.0.1:$port +full +initiator +rev [12] crc markers -/tx .* consumer user .*tx_octets 3000 " "$tmp/lines"
check "the Responder: markers received, 3000 octets received" \
	grep -Eq "^127.0.0.1:$port +127.0.0.1:[0-9]+ +full +responder +rev [12] crc markers rx/- .*rx_octets 3000 " "$tmp/lines"
check "--json is valid JSON with the same fields" python3 -c "
import json, sys
rows = json.load(open('$tmp/json'))
r = {x['role']: x for x in rows}
assert len(rows) == 2 and set(r) == {'initiator', 'responder'}
assert r['initiator']['tx_octets'] == 3000 and r['responder']['rx_octets'] == 3000
assert r['initiator']['markers_tx'] and r['responder']['markers_rx']
assert r['initiator']['crc'] and r['initiator']['error'] == 0
assert r['initiator']['mulpdu'] > 0 and r['initiator']['consumer'] == ''
"
check "-6 lists no IPv4 connection" bash -c "[ -z \"\$('$ss' -6)\" ]"
check "usage error: exit 2" bash -c "'$ss' --bogus 2>/dev/null; [ \$? -eq 2 ]"
kill "${pids[@]}" 2>/dev/null
pids=()

# DDP: 100000 octets in one tagged write (the source's RTR is a
# zero-length tagged message that the sink reads before it binds), ADV
# (24 octets) and RESULT (40) from the sink, DONE (40) from the source;
# both ends then hold the stream open for iwarp-ss
port=$((port + 1))
head -c 100000 /dev/urandom >"$tmp/ddp.in"
"$xfer" -l -H 30 127.0.0.1 "$port" >"$tmp/ddp.out" 2>"$tmp/sink.err" &
pids+=($!)
wait_for listening
"$xfer" -H 30 127.0.0.1 "$port" <"$tmp/ddp.in" 2>"$tmp/src.err" &
pids+=($!)
two_ddp() { [ "$("$ss" | grep -c " consumer ddp stream ")" -eq 2 ]; }
wait_for two_ddp
wait_for cmp -s "$tmp/ddp.in" "$tmp/ddp.out"
"$ss" -c >"$tmp/ddp.lines"
"$ss" --json >"$tmp/ddp.json"
sed 's/^/# /' "$tmp/ddp.lines"

ddp_ctrs() {	# the ddp_* counters of the line for the row matching $1
	grep -E "$1" "$tmp/ddp.lines" | grep -oE "ddp_[a-z_]+ [0-9]+" | tr '\n' ' '
}
check "DDP sink (Responder): stream in the row, 1 tagged message of 100000 octets placed, DONE received, ADV and RESULT sent, no error" \
	bash -c "[ \"\$(grep -cE '^127.0.0.1:$port .* responder .* consumer ddp stream [0-9]+ pd [0-9]+ dv 1 queues 1 posted 0 ' '$tmp/ddp.lines')\" -eq 1 ] &&
	[ '$(ddp_ctrs "^127.0.0.1:$port ")' = 'ddp_rx_tagged_msgs 1 ddp_rx_tagged_octets 100000 ddp_rx_untagged_msgs 1 ddp_rx_untagged_octets 40 ddp_tx_tagged_msgs 0 ddp_tx_tagged_octets 0 ddp_tx_untagged_msgs 2 ddp_tx_untagged_octets 64 ddp_rx_errors 0 ddp_rx_invalid_stag 0 ' ]"
check "DDP source (Initiator): RTR and one tagged write of 100000 octets sent, DONE sent, ADV and RESULT received" \
	bash -c "[ \"\$(grep -cE '^127.0.0.1:[0-9]+ +127.0.0.1:$port .* initiator .* consumer ddp stream [0-9]+ pd [0-9]+ dv 1 queues 1 posted 0 ' '$tmp/ddp.lines')\" -eq 1 ] &&
	[ '$(ddp_ctrs "^127.0.0.1:[0-9]+ +127.0.0.1:$port ")' = 'ddp_rx_tagged_msgs 0 ddp_rx_tagged_octets 0 ddp_rx_untagged_msgs 2 ddp_rx_untagged_octets 64 ddp_tx_tagged_msgs 2 ddp_tx_tagged_octets 100000 ddp_tx_untagged_msgs 1 ddp_tx_untagged_octets 40 ddp_rx_errors 0 ddp_rx_invalid_stag 0 ' ]"
check "--json: the same DDP counters in a \"ddp\" object" python3 -c "
import json
rows = json.load(open('$tmp/ddp.json'))
r = {x['role']: x['ddp'] for x in rows if x['consumer'] == 'ddp'}
assert set(r) == {'initiator', 'responder'}, rows
s, d = r['initiator'], r['responder']
assert d['rx_tagged_msgs'] == 1 and d['rx_tagged_octets'] == 100000, d
assert d['rx_untagged_msgs'] == 1 and d['rx_untagged_octets'] == 40, d
assert d['tx_untagged_msgs'] == 2 and d['tx_untagged_octets'] == 64, d
assert s['tx_tagged_msgs'] == 2 and s['tx_tagged_octets'] == 100000, s
assert s['rx_untagged_msgs'] == 2 and s['tx_untagged_octets'] == 40, s
assert not s['stopped'] and not d['stopped'] and 'error_type' not in d
assert s['queues'] == 1 and s['version'] == 1 and s['stream'] != d['stream']
"
exit $fail
