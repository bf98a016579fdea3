#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ddp.ko loads and unloads cleanly (TAP).

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
ko=${DDP_KO:-$here/../ddp/ddp.ko}

echo "TAP version 13"
echo "1..4"
loaded ddp && rmmod ddp
check "ddp absent before the test" bash -c '! grep -q "^ddp " /proc/modules'
check "insmod ddp.ko" insmod "$ko"
check "ddp listed in /proc/modules" loaded ddp
check "rmmod ddp" rmmod ddp
insmod "$ko"
[ $fail -eq 0 ]
