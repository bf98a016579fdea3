// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: the "mpa" TCP ULP (RFC 5044): attach, startup, state,
 * counters, error names.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/iwarp_wire.h>

#include "libiwarp.h"

#define IW_STEP_MS	2

/**
 * iw_mpa_attach() - attach the "mpa" ULP to a connected TCP socket
 * @fd: the socket
 *
 * Return: 0, or -1 with errno set (ENOENT: mpa.ko is not loaded).
 */
int iw_mpa_attach(int fd)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_ULP, "mpa", sizeof("mpa"));
}

/**
 * iw_mpa_start_ex() - MPA_START with every field of struct mpa_start
 * @fd: socket with the "mpa" ULP
 * @hdr: role, flags, rev, pd_len, lsm_len, ird, ord (data ignored)
 * @pd: @hdr->pd_len octets of private data (may be NULL if 0)
 * @lsm: @hdr->lsm_len octets of the last streaming message (may be NULL
 *	if 0)
 *
 * Lengths are passed on unchecked: the module judges them.
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_start_ex(int fd, const struct mpa_start *hdr, const void *pd,
		    const void *lsm)
{
	size_t len = sizeof(*hdr) + hdr->pd_len + hdr->lsm_len;
	struct mpa_start *s = calloc(1, len);
	int ret, err;

	if (!s)
		return -1;
	*s = *hdr;
	if (hdr->pd_len)
		memcpy(s->data, pd, hdr->pd_len);
	if (hdr->lsm_len)
		memcpy(s->data + hdr->pd_len, lsm, hdr->lsm_len);
	ret = setsockopt(fd, SOL_MPA, MPA_START, s, len);
	err = errno;
	free(s);
	errno = err;
	return ret;
}

/**
 * iw_mpa_start() - MPA_START: begin the startup as Initiator or Responder
 * @fd: socket with the "mpa" ULP
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER
 * @flags: MPA_F_*
 * @pd: private data of the Request (Initiator)
 * @pd_len: its length
 * @lsm: last streaming message (Responder, RFC 5044 7.1.5)
 * @lsm_len: its length
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_start(int fd, __u32 role, __u32 flags, const void *pd, __u16 pd_len,
		 const void *lsm, __u32 lsm_len)
{
	struct mpa_start s = {
		.role = role,
		.flags = flags,
		.pd_len = pd_len,
		.lsm_len = lsm_len,
	};

	return iw_mpa_start_ex(fd, &s, pd, lsm);
}

/**
 * iw_mpa_accept() - MPA_ACCEPT: the Responder accepts the Request
 * @fd: socket in MPA_S_REQ_RCVD
 * @pd: private data of the Reply (may be NULL if @pd_len is 0)
 * @pd_len: its length
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_accept(int fd, const void *pd, __u16 pd_len)
{
	return setsockopt(fd, SOL_MPA, MPA_ACCEPT, pd_len ? pd : "", pd_len);
}

/**
 * iw_mpa_info() - MPA_INFO
 * @fd: socket with the "mpa" ULP
 * @info: the state and negotiated parameters; on failure all octets
 *	0xff and @info->state IW_MPA_INVALID
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_info(int fd, struct mpa_info *info)
{
	socklen_t len = sizeof(*info);

	if (!getsockopt(fd, SOL_MPA, MPA_INFO, info, &len))
		return 0;
	memset(info, 0xff, sizeof(*info));
	info->state = IW_MPA_INVALID;
	return -1;
}

/**
 * iw_mpa_info_of() - MPA_INFO as a value, for expressions
 * @fd: socket with the "mpa" ULP
 *
 * Return: the info; state IW_MPA_INVALID if the option fails.
 */
struct mpa_info iw_mpa_info_of(int fd)
{
	struct mpa_info i;

	iw_mpa_info(fd, &i);
	return i;
}

/**
 * iw_mpa_error() - MPA_ERROR: the RFC 5044 error code of the connection
 * @fd: socket with the "mpa" ULP
 *
 * Return: MPA_ERR_*, 0 if none, IW_MPA_INVALID if the option fails.
 */
__u32 iw_mpa_error(int fd)
{
	socklen_t len = sizeof(__u32);
	__u32 v;

	if (getsockopt(fd, SOL_MPA, MPA_ERROR, &v, &len))
		return IW_MPA_INVALID;
	return v;
}

/**
 * iw_mpa_stats() - MPA_STATS
 * @fd: socket with the "mpa" ULP
 * @st: the counters; all octets 0xff on failure
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_stats(int fd, struct mpa_stats *st)
{
	socklen_t len = sizeof(*st);

	if (!getsockopt(fd, SOL_MPA, MPA_STATS, st, &len))
		return 0;
	memset(st, 0xff, sizeof(*st));
	return -1;
}

/**
 * iw_mpa_stats_of() - MPA_STATS as a value, for expressions
 * @fd: socket with the "mpa" ULP
 *
 * Return: the counters, all octets 0xff if the option fails.
 */
struct mpa_stats iw_mpa_stats_of(int fd)
{
	struct mpa_stats s;

	iw_mpa_stats(fd, &s);
	return s;
}

/**
 * iw_mpa_mulpdu() - MPA_MULPDU: the largest ULPDU a send accepts now
 * @fd: socket with the "mpa" ULP
 *
 * Return: the MULPDU, 0 if the option fails.
 */
__u32 iw_mpa_mulpdu(int fd)
{
	socklen_t len = sizeof(__u32);
	__u32 m = 0;

	if (getsockopt(fd, SOL_MPA, MPA_MULPDU, &m, &len))
		return 0;
	return m;
}

/**
 * iw_mpa_peer_pd() - MPA_PEER_PD: the private data of the peer's frame
 * @fd: socket with the "mpa" ULP
 * @buf: destination
 * @len: in: size of @buf, out: octets of private data
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_peer_pd(int fd, void *buf, socklen_t *len)
{
	return getsockopt(fd, SOL_MPA, MPA_PEER_PD, buf, len);
}

/*
 * Sleep until @fd is readable (the Request, data, EOF) or @step ms have
 * passed. A socket that stays readable does not make the caller spin.
 */
static void iw_mpa_nap(int fd, int step)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, step) != 0)
		usleep(step * 1000);
}

static bool iw_mpa_terminal(__u32 st)
{
	return st == MPA_S_ERROR || st == MPA_S_REJECTED || st == IW_MPA_INVALID;
}

/**
 * iw_mpa_wait_change() - wait until the MPA state is no longer @from
 * @fd: socket with the "mpa" ULP
 * @from: the state to leave
 * @ms: the longest wait
 *
 * Return: the new state, @from after @ms, IW_MPA_INVALID if MPA_INFO
 * fails.
 */
__u32 iw_mpa_wait_change(int fd, __u32 from, int ms)
{
	long long end = iw_now_ms() + ms;
	__u32 st;

	for (;;) {
		st = iw_mpa_info_of(fd).state;
		if (st != from || iw_now_ms() >= end)
			return st;
		iw_mpa_nap(fd, IW_STEP_MS);
	}
}

/**
 * iw_mpa_wait_state() - wait until the MPA state is @state
 * @fd: socket with the "mpa" ULP
 * @state: enum mpa_state
 * @ms: the longest wait
 *
 * Gives up at once in a state that is never left (MPA_S_ERROR,
 * MPA_S_REJECTED) unless it is @state.
 *
 * Return: 0, or -1 with errno ETIMEDOUT, EPROTO (MPA_S_ERROR),
 * ECONNREFUSED (MPA_S_REJECTED) or that of MPA_INFO.
 */
int iw_mpa_wait_state(int fd, __u32 state, int ms)
{
	long long end = iw_now_ms() + ms;
	struct mpa_info i;

	for (;;) {
		if (iw_mpa_info(fd, &i))
			return -1;
		if (i.state == state)
			return 0;
		if (iw_mpa_terminal(i.state)) {
			errno = i.state == MPA_S_ERROR ? EPROTO : ECONNREFUSED;
			return -1;
		}
		if (iw_now_ms() >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		iw_mpa_nap(fd, IW_STEP_MS);
	}
}

/**
 * iw_mpa_wait_startup() - wait for the end of this end's startup step
 * @fd: socket after MPA_START
 * @role: MPA_ROLE_INITIATOR: until the Reply is in (full operation or
 *	rejected); MPA_ROLE_RESPONDER: until the Request is in
 *	(MPA_S_REQ_RCVD)
 * @ms: the longest wait, 0 for none
 * @info: MPA_INFO at the end
 *
 * The Request makes the Responder's socket readable, so the Responder
 * sleeps in poll(); the Reply makes nothing readable, so the Initiator
 * looks at MPA_INFO every 10 ms. MPA_S_ERROR and MPA_S_REJECTED also end
 * the wait: look at @info->state.
 *
 * Return: 0, or -1 with errno ETIMEDOUT or that of MPA_INFO or poll.
 */
int iw_mpa_wait_startup(int fd, __u32 role, int ms, struct mpa_info *info)
{
	bool resp = role == MPA_ROLE_RESPONDER;
	long long end = iw_now_ms() + ms;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ret;

	for (;;) {
		if (iw_mpa_info(fd, info))
			return -1;
		if (iw_mpa_terminal(info->state))
			return 0;
		if (resp ? info->state == MPA_S_REQ_RCVD :
			   info->state != MPA_S_REQ_SENT)
			return 0;
		if (ms && iw_now_ms() >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		ret = poll(&p, 1, resp ? 1000 : 10);
		if (ret < 0 && errno != EINTR)
			return -1;
		if (ret > 0)	/* readable but no Request yet: data or EOF */
			usleep(10000);
	}
}

/**
 * iw_mpa_respond() - Responder: wait for the Request, accept it, wait
 *	for full operation
 * @fd: socket after MPA_START as Responder
 * @ms: the longest wait for each of the two steps
 *
 * Return: 0, or -1 with errno set (see iw_mpa_wait_state()).
 */
int iw_mpa_respond(int fd, int ms)
{
	if (iw_mpa_wait_state(fd, MPA_S_REQ_RCVD, ms) ||
	    iw_mpa_accept(fd, NULL, 0))
		return -1;
	return iw_mpa_wait_state(fd, MPA_S_FULL, ms);
}

/**
 * iw_mpa_pair() - two loopback MPA sockets in full operation
 * @family: AF_INET or AF_INET6
 * @fds: fds[0] the Initiator (it must send first, RFC 5044 rule 4),
 *	fds[1] the Responder; both -1 on failure
 * @iflags: MPA_F_* of the Initiator
 * @rflags: MPA_F_* of the Responder
 * @ms: the longest wait for each startup step
 *
 * Return: 0, or -1 with errno set.
 */
int iw_mpa_pair(int family, int fds[2], __u32 iflags, __u32 rflags, int ms)
{
	int err;

	fds[0] = -1;
	fds[1] = -1;
	if (iw_loopback_pair(family, fds))
		goto fail;
	if (iw_mpa_attach(fds[0]) || iw_mpa_attach(fds[1]) ||
	    iw_mpa_start(fds[1], MPA_ROLE_RESPONDER, rflags, NULL, 0, NULL, 0) ||
	    iw_mpa_start(fds[0], MPA_ROLE_INITIATOR, iflags, NULL, 0, NULL, 0) ||
	    iw_mpa_respond(fds[1], ms) ||
	    iw_mpa_wait_state(fds[0], MPA_S_FULL, ms))
		goto fail;
	return 0;
fail:
	err = errno;
	iw_close_pair(fds);
	errno = err;
	return -1;
}

/**
 * iw_mpa_err_name() - the name of an RFC 5044 error code
 * @code: MPA_ERR_* (MPA_ERROR, or err_code of a DDP_WIRE_ETYPE_LLP event)
 *
 * Return: a static string, "unknown" for other codes.
 */
const char *iw_mpa_err_name(unsigned int code)
{
	switch (code) {
	case MPA_ERR_TCP_CLOSED:
		return "TCP connection closed inside an FPDU";
	case MPA_ERR_CRC:
		return "CRC error";
	case MPA_ERR_MARKER:
		return "marker error";
	case MPA_ERR_STARTUP:
		return "startup failed";
	default:
		return "unknown";
	}
}
