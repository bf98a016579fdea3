# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by the shell tests, sourced after "here" is set:
# TAP lines with a running count, module checks, and a temporary directory
# with background processes that go away when the test exits.

# shellcheck disable=SC2034 # n and fail are the sourcing test's
n=0 fail=0

# check DESCRIPTION COMMAND...: one TAP line for COMMAND's status
check() {
	local d=$1

	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $d"
	else
		echo "not ok $n $d"
		fail=1
	fi
}

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; }

# loaded MODULE: is it in /proc/modules
loaded() { grep -q "^$1 " /proc/modules; }
# loaded, or built into the kernel (the debug kernel's RDMA core, veth)
present() {
	loaded "$1" ||
		grep -q "/$1\.ko\$" "/lib/modules/$(uname -r)/modules.builtin" 2> /dev/null
}

# unload MODULE [SECONDS]: rmmod it, retrying while it is in use for
# SECONDS (default 10): device, socket and connection teardown is
# asynchronous. 0 when it is gone; else rmmod's last error on stderr.
unload() {
	local end=$((SECONDS + ${2:-10}))

	while loaded "$1"; do
		if [ "$SECONDS" -ge "$end" ]; then
			rmmod "$1"
			return
		fi
		rmmod "$1" 2> /dev/null && return 0
		sleep 0.2
	done
}

# wait_listen PORT [DIR]: wait up to 10 s for a socket in state LISTEN on
# PORT in DIR/tcp or DIR/tcp6; DIR is /proc/net, or /proc/PID/net for the
# network namespace of PID
wait_listen() {
	local hex dir=${2:-/proc/net}

	hex=$(printf ':%04X ' "$1")
	for _ in $(seq 200); do
		grep -q "$hex.* 0A " "$dir/tcp" "$dir/tcp6" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# start_capture PORT FILE: tshark on lo for tcp port PORT into FILE, its
# pid in $tpid (and $pids); waits up to 3 minutes (tshark starts slowly
# under emulation) for "Capture started": its earlier "Capturing on" line
# comes before the capture does, and packets sent then are missed. Even
# after "Capture started" a capture on 6.12 once missed a connection's
# first packets (its Request and Reply): then it probes the still closed
# PORT (a SYN and a RST) until FILE grows, which says packets arrive.
start_capture() {
	local size

	tshark -i lo -f "tcp port $1" -w "$2" > "$tmp/t.err" 2>&1 &
	tpid=$!
	pids+=("$tpid")
	for _ in $(seq 1800); do
		grep -q 'Capture started' "$tmp/t.err" && break
		sleep 0.1
	done
	grep -q 'Capture started' "$tmp/t.err" || return 1
	size=$(stat -c %s "$2" 2> /dev/null || echo 0)
	for _ in $(seq 60); do
		(exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null
		for _ in 1 2 3 4 5; do
			[ "$(stat -c %s "$2" 2> /dev/null || echo 0)" -gt "$size" ] && return 0
			sleep 0.2
		done
	done
	return 1
}

# use_tmp: $tmp, a fresh directory, and $pids, processes to kill; both
# cleaned up on exit
use_tmp() {
	tmp=$(mktemp -d)
	pids=()
	trap cleanup EXIT
}

# shellcheck disable=SC2317 # runs through the trap of use_tmp
cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
