# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the shell tools for the options every tool has.
#
# iw_version [NAME]: print "NAME (iwarp-mpa-ddp) VERSION" on stdout, the
# line the C tools print for --version; NAME defaults to the script's
# name, VERSION is that of the top Makefile.
iw_version() {
	local top v

	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	v=$(sed -n 's/^VERSION := *//p' "$top/Makefile" 2>/dev/null)
	printf '%s (iwarp-mpa-ddp) %s\n' "${1:-$(basename "$0")}" "${v:-unknown}"
}

# iw_usage_header: the comment block at the top of the script, the usage
# text of a tool without a usage() of its own
iw_usage_header() {
	sed -n '2,/^[^#]/{/^[^#]/d;/SPDX-License-Identifier/d;/shellcheck/d;s/^# \{0,1\}//;p}' "$0"
}

# iw_std_opts NAME ARGS...: for a tool without options of its own:
# --version, -h/--help, and exit 2 (usage error) for any other option
iw_std_opts() {
	local name=$1 a

	shift
	for a in "$@"; do
		case $a in
		--version) iw_version "$name"; exit 0 ;;
		-h | --help) iw_usage_header; exit 0 ;;
		--) break ;;
		-*)
			echo "$name: unknown option: $a" >&2
			iw_usage_header >&2
			exit 2 ;;
		esac
	done
}
