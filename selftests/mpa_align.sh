#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# FPDU alignment (RFC 5044 section 5.1): the share of TCP data segments
# that start with an FPDU, measured in a capture of an mpa-cat transfer
# over 127.0.0.1 (markers off, fixed ULPDU sizes, so FPDU starts are
# known). TAP; needs tshark, mpa.ko loaded, root.

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cat=$top/tools/mpa-cat
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
use_tmp
sizes=(1000 16000)

echo "TAP version 13"
echo "1..${#sizes[@]}"
if ! command -v tshark > /dev/null || [ ! -x "$cat" ]; then
	for s in "${sizes[@]}"; do
		n=$((n + 1))
		echo "ok $n FPDU alignment, $s-octet ULPDUs # SKIP needs tshark and tools/mpa-cat"
	done
	exit 0
fi
head -c $((2 << 20)) /dev/urandom > "$tmp/in"

for s in "${sizes[@]}"; do
	n=$((n + 1))
	for attempt in 1 2 3; do
		port=$((7200 + 10 * n + attempt))
		start_capture "$port" "$tmp/cap"
	"$cat" -l 127.0.0.1 "$port" > "$tmp/out" 2> "$tmp/l.err" &
	lpid=$!
	for _ in $(seq 100); do
		grep -qi "$(printf ':%04X ' "$port")" /proc/net/tcp && break
		sleep 0.1
	done
	"$cat" -s "$s" 127.0.0.1 "$port" < "$tmp/in" 2> "$tmp/i.err"
	ist=$?
	wait "$lpid"
	lst=$?
	sleep 1
	kill -INT "$tpid"
	wait "$tpid"
	# offsets are counted from the SYN: a capture that started late
	# (a loaded machine) cannot say anything; run the transfer again
	syn=$(tshark -r "$tmp/cap" -Y "tcp.dstport==$port && tcp.flags.syn==1" 2> /dev/null |
		wc -l)
	[ "$syn" -gt 0 ] && break
	echo "# $s-octet ULPDUs: the capture missed the SYN (attempt $attempt)"
	done
	# data segments of the Initiator; its stream starts with the 20-octet
	# Request, then FPDUs of 2 + s + pad + 4 octets
	res=$(tshark -r "$tmp/cap" -o tcp.relative_sequence_numbers:TRUE \
		-Y "tcp.dstport==$port && tcp.len>0" -T fields -e tcp.seq 2> /dev/null |
		awk -v s="$s" 'BEGIN { w = 2 + s + (4 - (2 + s) % 4) % 4 + 4 }
			{ off = $1 - 1 - 20; if (off < 0) next; t++; if (off % w == 0) a++ }
			END { print t + 0, a + 0 }')
	read -r total starts <<< "$res"
	share=$(awk -v t="$total" -v a="$starts" 'BEGIN { printf "%.3f", t ? a / t : 0 }')
	echo "# $s-octet ULPDUs: $starts of $total data segments start with an FPDU (share $share)"
	if [ "$ist" = 0 ] && [ "$lst" = 0 ] && cmp -s "$tmp/in" "$tmp/out" &&
	   [ "$total" -gt 0 ] && awk -v x="$share" 'BEGIN { exit !(x >= 0.95) }'; then
		echo "ok $n FPDU alignment, $s-octet ULPDUs"
	else
		echo "not ok $n FPDU alignment, $s-octet ULPDUs"
		sed 's/^/# /' "$tmp/i.err" "$tmp/l.err"
		fail=1
	fi
done
exit $fail
