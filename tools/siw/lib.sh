# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tools/siw/lib.sh - helpers shared by the siw bench scripts (sourced, not
# run). Needs the namespaces of tools/siw/netns-up.

# siw_listening NS PORT: a TCP socket listens on PORT in namespace NS
siw_listening() {
	ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# siw_wait_listen NS PORT [PID [SECONDS]]: wait until a TCP socket listens
# on PORT in namespace NS, at most SECONDS (default 60; TCG is slow, and
# every probe forks ip and ss). Gives up at once when process PID (the
# server) has ended.
siw_wait_listen() {
	local ns=$1 port=$2 pid=${3:-} end=$((SECONDS + ${4:-60}))

	while [ "$SECONDS" -lt "$end" ]; do
		siw_listening "$ns" "$port" && return 0
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# siw_wait_closed NS PORT [SECONDS]: wait until nothing listens on PORT in
# namespace NS, at most SECONDS (default 10): a server started while the
# listener of the run before is still there could see its client's
# connection go to that one. Returns 1 if something still listens.
siw_wait_closed() {
	local ns=$1 port=$2 end=$((SECONDS + ${3:-10}))

	while siw_listening "$ns" "$port"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
	return 0
}

# siw_capture_start NS IF FILE ERRFILE [DUMPCAP ARGS...]: start dumpcap in
# namespace NS on interface IF, writing FILE; sets SIW_CAP_PID. Waits until
# dumpcap reports that it captures (at most 60 s).
SIW_CAP_PID=
siw_capture_start() {
	local ns=$1 ifc=$2 file=$3 err=$4 end

	shift 4
	rm -f "$file"
	ip netns exec "$ns" dumpcap -q -i "$ifc" -w "$file" "$@" >"$err" 2>&1 &
	SIW_CAP_PID=$!
	end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		grep -q 'Capturing on' "$err" && break
		kill -0 "$SIW_CAP_PID" 2>/dev/null || return 1
		sleep 0.2
	done
	sleep 0.5
	return 0
}

# siw_capture_stop: stop the capture started last (SIGINT, so the file is
# complete); returns at once if dumpcap ended by itself (-c N)
siw_capture_stop() {
	[ -n "$SIW_CAP_PID" ] || return 0
	sleep 0.5
	kill -INT "$SIW_CAP_PID" 2>/dev/null
	wait "$SIW_CAP_PID" 2>/dev/null
	SIW_CAP_PID=
}

# siw_capture_lost LOG: 0 if the capture whose dumpcap -q output is LOG
# kept every packet the interface gave it; else 1, printing "C/R/D" (the
# packets captured, received and dropped: dumpcap's statistics at its end)
siw_capture_lost() {
	awk '/Packets captured:/ { c = $NF }
	     /Packets received\/dropped/ { split($(NF - 2), rd, "/") }
	     END {
		if (c == "" || rd[1] == "" || c != rd[1] || rd[2] != 0) {
			printf "%s/%s/%s\n", c == "" ? "?" : c,
				rd[1] == "" ? "?" : rd[1], rd[2] == "" ? "?" : rd[2]
			exit 1
		}
	     }' "$1"
}

# siw_bw_avg FILE: the "BW average[MB/sec]" column of ib_write_bw's result
# line (perftest: MB = 2^20 bytes). Under TCG perftest's cycle-counter
# clock is unusable ("Correlation coefficient r^2 < 0.9") and it prints
# 0.00: use siw_bw_iters.
siw_bw_avg() {
	awk '/#bytes/ { hdr = 1; next } hdr && NF >= 4 && $1 ~ /^[0-9]+$/ { print $4; exit }' "$1"
}

# siw_bw_iters FILE SECONDS: MiB/s from the result line's #bytes and
# #iterations of an `ib_write_bw -D SECONDS` run (the iterations completed
# in the measured period, which perftest times with alarm(), not cycles)
siw_bw_iters() {
	awk -v secs="$2" '/#bytes/ { hdr = 1; next }
		hdr && NF >= 2 && $1 ~ /^[0-9]+$/ { printf "%.2f\n", $1 * $2 / secs / 1048576; exit }' "$1"
}

# siw_fpdus TSHARK-ARGS...: one line per MPA FPDU of a capture, decoded by
# tshark (-T pdml; at most 600 s): "SRC DST OPCODE TAGGED LAST DATA MO RDSZ
# CRC": the TCP ports, the RDMAP opcode (- if none), the DDP T and L flags
# (0/1), the data octets (ULPDU length less the DDP/RDMAP header: 14
# tagged, 18 untagged), the message offset, a Read Request's size, 1
# if the CRC is good, and a Read Request's Data Sink STag (- if none).
# TSHARK-ARGS name the capture (-r FILE) and options.
siw_fpdus() {
	timeout 600 tshark "$@" -T pdml 2>/dev/null | awk '
	function attr(a,   r) {
		r = $0
		if (!match(r, a "=\"[^\"]*\""))
			return ""
		return substr(r, RSTART + length(a) + 2, RLENGTH - length(a) - 3)
	}
	function flag(v) { return v == "1" || v == "True" || v == "true" }
	function flush() {
		if (have)
			print src, dst, (op == "" ? "-" : op), tg, last,
				ulen - (tg ? 14 : 18), mo + 0, rdsz + 0, crc,
				(sink == "" ? "-" : sink)
		have = 0
	}
	/<field name="/ {
		name = attr("name")
		if (name == "tcp.srcport") {
			flush(); src = attr("show")
		} else if (name == "tcp.dstport") {
			dst = attr("show")
		} else if (name == "iwarp_mpa.fpdu") {
			flush(); have = 1; crc = 0; op = ""; tg = 0; last = 0
			ulen = 0; mo = 0; rdsz = 0; nul = 0; sink = ""
		} else if (have && name == "iwarp_mpa.ulpdulength" && !nul++) {
			ulen = attr("show")
		} else if (have && name == "iwarp_mpa.crc_check") {
			crc = attr("showname") ~ /Good/ ? 1 : 0
		} else if (have && name == "iwarp_ddp.tagged_flag") {
			tg = flag(attr("show"))
		} else if (have && name == "iwarp_ddp.last_flag") {
			last = flag(attr("show"))
		} else if (have && name == "iwarp_ddp.mo") {
			mo = attr("show")
		} else if (have && name == "iwarp_rdma.rdmardsz") {
			rdsz = attr("show")
		} else if (have && name == "iwarp_rdma.sinkstag") {
			sink = attr("show")
		} else if (have && name == "iwarp_rdma.opcode" && op == "") {
			op = attr("show")
		}
	}
	END { flush() }'
}
