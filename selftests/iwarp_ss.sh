#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/iwarp-ss (TAP): lists an MPA connection made by two mpa-cat
# processes with both ends' state, role, revision, CRC, markers and
# counters, as lines and as JSON, and nothing for plain TCP. Needs mpa.ko.

# shellcheck disable=SC2317 # the helpers run through check
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
ss=$here/../tools/iwarp-ss
cat=$here/../tools/mpa-cat
use_tmp

echo "TAP version 13"
echo "1..7"
if [ ! -x "$ss" ] || [ ! -x "$cat" ]; then
	for i in 1 2 3 4 5 6 7; do
		echo "ok $i iwarp_ss $i # SKIP tools not built (make -C tools)"
	done
	exit 4
fi

port=$((20000 + RANDOM % 20000))
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
exit $fail
