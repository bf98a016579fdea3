// SPDX-License-Identifier: GPL-2.0
/*
 * mpa-cat - netcat over MPA (RFC 5044), using the "mpa" TCP ULP.
 *
 * Without -l it connects to HOST PORT and is the MPA Initiator; with -l it
 * accepts one connection on HOST PORT and is the Responder. Standard input
 * is sent as ULPDUs (one ULPDU per read of at most SIZE octets), every
 * received ULPDU is written to standard output. See mpa-cat(1).
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/iwarp_wire.h>
#include <linux/mpa.h>

#include "libiwarp.h"

#define MAX_PD		512
#define MAX_ULPDU	65535

/*
 * exit statuses: IW_EXIT_MPA + the RFC 5044 error code (21..24), IW_EXIT_SYS,
 * IW_EXIT_USAGE, IW_EXIT_REJECTED, IW_EXIT_RULE4
 */

struct opts {
	int listen;
	int family;
	unsigned int flags;
	const char *pd;
	unsigned int size;
	long timeout;
	int verbose;
	int more;
	const char *host;
	const char *port;
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: mpa-cat [-l] [-6] [-m] [-M] [-n] [-p TEXT] [-s SIZE] [-t MS] [-v] HOST PORT\n"
		"  -l       listen on HOST PORT, accept one connection (MPA Responder)\n"
		"           (default: connect to HOST PORT as the MPA Initiator)\n"
		"  -6       use IPv6 (default IPv4)\n"
		"  -m       require markers on what this end receives\n"
		"  -M       send full ULPDUs with MSG_MORE (FPDU trains)\n"
		"  -n       prefer no CRC (needs mpa.allow_no_crc=1)\n"
		"  -p TEXT  private data for the Request (Initiator) or Reply (Responder)\n"
		"  -s SIZE  largest ULPDU to send (default: MULPDU)\n"
		"  -t MS    MPA startup timeout in milliseconds (0: none)\n"
		"  -v       print the MPA statistics at the end\n"
		"  --help   this text\n"
		"  --version  print the version\n"
		"Exit status: 0 after a clean close, 2 usage, 10 system error,\n"
		"12 rejected, 13 Responder could not send, 21..24 MPA error 1..4.\n");
}

static void print_stats(int fd)
{
	struct mpa_stats st;

	if (iw_mpa_stats(fd, &st)) {
		iw_msg("MPA_STATS: %s", strerror(errno));
		return;
	}
	iw_msg("stats: tx_fpdus %llu tx_octets %llu tx_markers %llu",
	       (unsigned long long)st.tx_fpdus, (unsigned long long)st.tx_octets,
	       (unsigned long long)st.tx_markers);
	iw_msg("stats: rx_fpdus %llu rx_octets %llu rx_markers %llu",
	       (unsigned long long)st.rx_fpdus, (unsigned long long)st.rx_octets,
	       (unsigned long long)st.rx_markers);
	iw_msg("stats: rx_crc_errors %llu rx_marker_errors %llu",
	       (unsigned long long)st.rx_crc_errors,
	       (unsigned long long)st.rx_marker_errors);
}

/*
 * An operation on the socket failed with @err: report the MPA error if
 * there is one and exit with IW_EXIT_MPA + its code, otherwise with
 * IW_EXIT_SYS.
 */
static void die_mpa(int fd, const char *what, int err, const struct opts *o)
{
	__u32 code = iw_mpa_error(fd);
	int status = IW_EXIT_SYS;

	if (code >= MPA_ERR_TCP_CLOSED && code <= MPA_ERR_STARTUP) {
		iw_msg("MPA error %u (%s): %s", code, iw_mpa_err_name(code), strerror(err));
		status = IW_EXIT_MPA + code;
	} else {
		iw_msg("%s: %s", what, strerror(err));
	}
	if (o->verbose)
		print_stats(fd);
	exit(status);
}

/* The startup ended in MPA_S_ERROR: the reason is in SO_ERROR. */
static void die_startup(int fd, const struct opts *o)
{
	int err = iw_so_error(fd);

	if (err <= 0)
		err = ECONNABORTED;
	die_mpa(fd, "startup", err, o);
}

static void print_pd(int fd, const char *who)
{
	unsigned char pd[MAX_PD];
	socklen_t len = sizeof(pd);
	char out[4 * MAX_PD + 1];
	size_t n = 0;
	socklen_t i;

	if (iw_mpa_peer_pd(fd, pd, &len))
		iw_die_sys("MPA_PEER_PD");
	for (i = 0; i < len; i++) {
		if (pd[i] >= 0x20 && pd[i] < 0x7f && pd[i] != '\\')
			out[n++] = pd[i];
		else
			n += sprintf(out + n, "\\x%02x", pd[i]);
	}
	out[n] = '\0';
	iw_msg("%s private data (%u octets): %s", who, (unsigned int)len, out);
}

static int open_socket(const struct opts *o)
{
	char err[256];
	int fd;

	fd = iw_tcp_open(o->host, o->port, o->family, o->listen, err, sizeof(err));
	if (fd < 0) {
		iw_msg("%s", err);
		exit(IW_EXIT_SYS);
	}
	return fd;
}

/* Attach the ULP, run the startup exchange, return the negotiated MPA_INFO. */
static void mpa_startup(int fd, const struct opts *o, struct mpa_info *info)
{
	size_t pd_len = o->pd ? strlen(o->pd) : 0;
	char buf[sizeof(struct mpa_start) + MAX_PD];
	struct mpa_start *s = (struct mpa_start *)buf;
	__u32 tmo;

	if (iw_mpa_attach(fd))
		iw_die_sys("TCP_ULP mpa (is mpa.ko loaded?)");
	if (o->timeout >= 0) {
		tmo = o->timeout;
		if (setsockopt(fd, SOL_MPA, MPA_TIMEOUT, &tmo, sizeof(tmo)))
			iw_die_sys("MPA_TIMEOUT");
	}
	memset(buf, 0, sizeof(buf));
	s->role = o->listen ? MPA_ROLE_RESPONDER : MPA_ROLE_INITIATOR;
	s->flags = o->flags;
	if (!o->listen) {
		s->pd_len = pd_len;
		memcpy(s->data, o->pd ? o->pd : "", pd_len);
	}
	if (iw_mpa_start_ex(fd, s, s->data, NULL))
		iw_die_sys("MPA_START");

	/* no limit here: MPA_TIMEOUT (-t) bounds the startup */
	if (iw_mpa_wait_startup(fd, s->role, 0, info))
		iw_die_sys("MPA_INFO");
	if (info->state == MPA_S_ERROR)
		die_startup(fd, o);

	if (o->listen) {
		print_pd(fd, "Initiator");
		if (iw_mpa_accept(fd, o->pd, pd_len))
			die_mpa(fd, "MPA_ACCEPT", errno, o);
		if (iw_mpa_info(fd, info))
			iw_die_sys("MPA_INFO");
		if (info->state == MPA_S_ERROR)
			die_startup(fd, o);
		return;
	}
	if (info->state == MPA_S_REJECTED) {
		print_pd(fd, "Responder");
		iw_msg("the Responder rejected the connection");
		exit(IW_EXIT_REJECTED);
	}
	print_pd(fd, "Responder");
}

/* Full operation: stdin -> ULPDUs, ULPDUs -> stdout, until both ends closed. */
static void pump(int fd, const struct opts *o, unsigned int size)
{
	static char rbuf[MAX_ULPDU + 1], tbuf[MAX_ULPDU];
	int stdin_done = 0, peer_done = 0, may_send = !o->listen, busy = 0;
	size_t pend = 0;
	struct pollfd p[2];
	ssize_t n;

	while (!stdin_done || pend || !peer_done) {
		struct iovec iov = { .iov_base = rbuf, .iov_len = sizeof(rbuf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

		p[0].fd = (!stdin_done && !pend) ? STDIN_FILENO : -1;
		p[0].events = POLLIN;
		p[1].fd = fd;
		p[1].events = (peer_done ? 0 : POLLIN) |
			      (pend && may_send && !busy ? POLLOUT : 0);
		if (poll(p, 2, busy ? 1 : -1) < 0) {
			if (errno == EINTR)
				continue;
			iw_die_sys("poll");
		}
		if (busy)
			p[1].revents |= POLLOUT;
		busy = 0;

		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(STDIN_FILENO, tbuf, size);
			if (n < 0 && errno != EINTR && errno != EAGAIN)
				iw_die_sys("read");
			if (n == 0) {
				stdin_done = 1;
				if (shutdown(fd, SHUT_WR))
					die_mpa(fd, "shutdown", errno, o);
			} else if (n > 0) {
				pend = n;
			}
		}

		if (!peer_done && (p[1].revents & (POLLIN | POLLERR | POLLHUP))) {
			n = recvmsg(fd, &mh, MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				die_mpa(fd, "recv", errno, o);
			if (n == 0) {
				peer_done = 1;
			} else if (n > 0) {
				if (mh.msg_flags & MSG_TRUNC) {
					iw_msg("recv: ULPDU truncated");
					exit(IW_EXIT_SYS);
				}
				if (iw_writen(STDOUT_FILENO, rbuf, n))
					iw_die_sys("write");
				/* RFC 5044 7.1.2 rule 4: now the Responder may send */
				may_send = 1;
			}
		}

		if (pend && !may_send && peer_done) {
			iw_msg("cannot send: the Initiator sent no FPDU (RFC 5044 7.1.2 rule 4)");
			exit(IW_EXIT_RULE4);
		}
		if (pend && may_send && (p[1].revents & POLLOUT)) {
			n = send(fd, tbuf, pend, MSG_DONTWAIT | MSG_NOSIGNAL |
				 (o->more && pend == size ? MSG_MORE : 0));
			if (n < 0 && errno == EAGAIN)
				busy = 1;	/* room for less than one FPDU: retry in 1 ms */
			else if (n < 0 && errno != EINTR)
				die_mpa(fd, "send", errno, o);
			else if (n >= 0)
				pend = 0;
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .family = AF_INET, .timeout = -1 };
	struct mpa_info info;
	unsigned int size;
	socklen_t len;
	char *end;
	int c, fd;

	while ((c = getopt_long(argc, argv, "l6mMnp:s:t:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = 1;
			break;
		case '6':
			o.family = AF_INET6;
			break;
		case 'm':
			o.flags |= MPA_F_MARKERS;
			break;
		case 'M':
			o.more = 1;
			break;
		case 'n':
			o.flags |= MPA_F_NO_CRC;
			break;
		case 'p':
			o.pd = optarg;
			if (strlen(o.pd) > MAX_PD) {
				iw_msg("-p: at most %d octets of private data", MAX_PD);
				return IW_EXIT_USAGE;
			}
			break;
		case 's':
			errno = 0;
			o.size = strtoul(optarg, &end, 0);
			if (errno || *end || !o.size || o.size > MAX_ULPDU) {
				iw_msg("-s: a ULPDU size 1..%d", MAX_ULPDU);
				return IW_EXIT_USAGE;
			}
			break;
		case 't':
			errno = 0;
			o.timeout = strtol(optarg, &end, 0);
			if (errno || *end || o.timeout < 0 || o.timeout > UINT32_MAX) {
				iw_msg("-t: a timeout in milliseconds");
				return IW_EXIT_USAGE;
			}
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'V':
			iw_print_version();
			return 0;
		default:
			return iw_usage(print_usage, c == 'h');
		}
	}
	if (iw_host_port(argc, argv, &o.host, &o.port))
		return iw_usage(print_usage, false);
	signal(SIGPIPE, SIG_IGN);

	fd = open_socket(&o);
	mpa_startup(fd, &o, &info);

	size = o.size;
	if (!size) {
		len = sizeof(size);
		if (getsockopt(fd, SOL_MPA, MPA_MULPDU, &size, &len))
			iw_die_sys("MPA_MULPDU");
		if (!size || size > MAX_ULPDU)
			size = info.mulpdu ? info.mulpdu : MPA_MIN_MULPDU;
	}
	iw_msg("%s, rev %u, markers rx %s tx %s, crc %s, mulpdu %u, send size %u",
	       o.listen ? "Responder" : "Initiator", info.rev,
	       info.flags & MPA_I_MARKERS_RX ? "on" : "off",
	       info.flags & MPA_I_MARKERS_TX ? "on" : "off",
	       info.flags & MPA_I_CRC ? "on" : "off", info.mulpdu, size);

	pump(fd, &o, size);
	if (o.verbose)
		print_stats(fd);
	if (close(fd))
		iw_die_sys("close");
	return 0;
}
