#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ddp.ko loads and unloads cleanly (TAP).

ko=${DDP_KO:-$(dirname "$0")/../ddp/ddp.ko}
loaded() { grep -q '^ddp ' /proc/modules; }
n=0 fail=0
check() {	# description, command...
	local d=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $d"
	else
		echo "not ok $n $d"
		fail=$((fail + 1))
	fi
}

echo "TAP version 13"
echo "1..4"
loaded && rmmod ddp
check "ddp absent before the test" bash -c '! grep -q "^ddp " /proc/modules'
check "insmod ddp.ko" insmod "$ko"
check "ddp listed in /proc/modules" loaded
check "rmmod ddp" rmmod ddp
insmod "$ko"
[ $fail -eq 0 ]
