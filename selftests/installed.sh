#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The installed package works (TAP): run by tools/deb-test in the VM after
# the iwarp-mpa-ddp-dkms package was installed on the host, with no module
# of the build tree given to the VM. mpa.ko and ddp.ko come from DKMS
# (/lib/modules/K/updates/dkms), TCP_ULP "mpa" loads mpa.ko on demand for
# a caller with CAP_NET_ADMIN only, and the modules-load.d snippet brings
# up /dev/ddp.

K=$(uname -r)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$here/lib.sh"
not_loaded() { ! loaded "$1"; }
from_dkms() { [[ $(modinfo -n "$1" 2>/dev/null) == /lib/modules/$K/updates/dkms/$1.ko* ]]; }

# Sets TCP_ULP "mpa" on a connected loopback socket; prints "ok" or the
# errno name.
ulp() {
	python3 - <<'PY'
import errno, socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
try:
    c.setsockopt(socket.IPPROTO_TCP, 31, b"mpa")  # TCP_ULP
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}
ulp_as_nobody() { [ "$(setpriv --reuid=65534 --regid=65534 --clear-groups \
	bash -c "$(declare -f ulp); ulp")" = ENOENT ]; }
ulp_as_root() { [ "$(ulp)" = ok ]; }
ddp_node() { [ -c /dev/ddp ] && [ "$(stat -c %a /dev/ddp)" = 666 ]; }
load_snippet() {
	local m
	while read -r m; do
		case $m in '#'*|'') continue ;; esac
		modprobe "$m" || return 1
	done </etc/modules-load.d/iwarp.conf
}

echo "TAP version 13"
echo "1..9"
check "mpa not loaded at start" not_loaded mpa
check "ddp not loaded at start" not_loaded ddp
check "modprobe finds mpa.ko from DKMS" from_dkms mpa
check "modprobe finds ddp.ko from DKMS" from_dkms ddp
check "TCP_ULP mpa without CAP_NET_ADMIN: ENOENT, nothing loaded" \
	bash -c "$(declare -f ulp ulp_as_nobody loaded not_loaded); ulp_as_nobody && not_loaded mpa"
check "TCP_ULP mpa as root loads mpa.ko" \
	bash -c "$(declare -f ulp ulp_as_root loaded); ulp_as_root && loaded mpa"
check "/etc/modules-load.d/iwarp.conf loads ddp.ko" \
	bash -c "$(declare -f load_snippet loaded); load_snippet && loaded ddp"
check "/dev/ddp is a character device, mode 0666" ddp_node
check "rmmod ddp mpa" rmmod ddp mpa
[ $fail -eq 0 ]
