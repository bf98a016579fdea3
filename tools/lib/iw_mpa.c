// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: the "mpa" TCP ULP (RFC 5044): attach, startup, state,
 * counters, error names.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/iwarp_wire.h>

#include "libiwarp.h"

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

/* a wakeup that did not change the state waits this long before the next */
#define IW_STEP_MS	2
/* a state that only this end's own calls leave is looked at this often */
#define IW_LOCAL_MS	10

static bool iw_mpa_terminal(__u32 st)
{
	return st == MPA_S_ERROR || st == MPA_S_REJECTED || st == IW_MPA_INVALID;
}

/*
 * The poll events with which mpa.ko announces that state @st is left
 * because of the peer (mpa(7), "poll"): POLLOUT when an Initiator's
 * Reply brings full operation, POLLIN when a Responder's Request is in,
 * POLLPRI when the startup fails or is rejected. POLLERR and POLLHUP end
 * poll() anyway. @local: the state is left by a call of this end
 * (MPA_START, MPA_ACCEPT, MPA_REJECT), perhaps in another thread, which
 * no event announces.
 */
static short iw_mpa_leave_events(__u32 st, bool *local)
{
	*local = false;
	switch (st) {
	case MPA_S_REQ_SENT:
		return POLLOUT | POLLPRI;
	case MPA_S_REQ_WAIT:
		return POLLIN | POLLPRI;
	default:
		*local = true;
		return POLLPRI;
	}
}

/*
 * Sleep in poll() until @fd may have left state @st, or until @end
 * (iw_now_ms(); -1 for never), at most IW_LOCAL_MS in a state that only
 * this end leaves. @woke says whether the last sleep ended
 * by an event that did not change the state (POLLHUP stays set, an
 * older mpa.ko): then nap IW_STEP_MS first, so that nobody spins.
 *
 * Return: 0, or -1 with errno of poll (not EINTR).
 */
static int iw_mpa_sleep(int fd, __u32 st, long long end, bool *woke)
{
	long long left = end < 0 ? -1 : end - iw_now_ms();
	struct pollfd p = { .fd = fd };
	bool local;
	int ret;

	p.events = iw_mpa_leave_events(st, &local);
	if (*woke) {
		usleep(IW_STEP_MS * 1000);
		if (left > IW_STEP_MS)
			left -= IW_STEP_MS;
	}
	if (end >= 0 && left < 0)
		left = 0;
	if (local && (left < 0 || left > IW_LOCAL_MS))
		left = IW_LOCAL_MS;
	ret = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
	if (ret < 0 && errno != EINTR)
		return -1;
	*woke = ret > 0;
	return 0;
}

/**
 * iw_mpa_wait_change() - wait until the MPA state is no longer @from
 * @fd: socket with the "mpa" ULP
 * @from: the state to leave
 * @ms: the longest wait
 *
 * Sleeps in poll() on the events that announce leaving @from (mpa(7)).
 *
 * Return: the new state, @from after @ms, IW_MPA_INVALID if MPA_INFO
 * or poll fails.
 */
__u32 iw_mpa_wait_change(int fd, __u32 from, int ms)
{
	long long end = iw_now_ms() + ms;
	bool woke = false;
	__u32 st;

	for (;;) {
		st = iw_mpa_info_of(fd).state;
		if (st != from || iw_now_ms() >= end)
			return st;
		if (iw_mpa_sleep(fd, st, end, &woke))
			return IW_MPA_INVALID;
	}
}

/**
 * iw_mpa_wait_state() - wait until the MPA state is @state
 * @fd: socket with the "mpa" ULP
 * @state: enum mpa_state
 * @ms: the longest wait
 *
 * Sleeps in poll() on the events that announce a change of the current
 * state (mpa(7)). Gives up at once in a state that is never left
 * (MPA_S_ERROR, MPA_S_REJECTED) unless it is @state.
 *
 * Return: 0, or -1 with errno ETIMEDOUT, EPROTO (MPA_S_ERROR),
 * ECONNREFUSED (MPA_S_REJECTED) or that of MPA_INFO or poll.
 */
int iw_mpa_wait_state(int fd, __u32 state, int ms)
{
	long long end = iw_now_ms() + ms;
	bool woke = false;
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
		if (iw_mpa_sleep(fd, i.state, end, &woke))
			return -1;
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
 * Sleeps in poll(): the Initiator for POLLOUT (full operation) or
 * POLLPRI (rejected, or the startup failed), the Responder for POLLIN
 * (the Request) or POLLPRI; MPA_INFO is read once when poll returns.
 * MPA_S_ERROR and MPA_S_REJECTED also end the wait: look at
 * @info->state.
 *
 * Return: 0, or -1 with errno ETIMEDOUT or that of MPA_INFO or poll.
 */
int iw_mpa_wait_startup(int fd, __u32 role, int ms, struct mpa_info *info)
{
	bool resp = role == MPA_ROLE_RESPONDER;
	long long end = ms ? iw_now_ms() + ms : -1;
	bool woke = false;

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
		if (iw_mpa_sleep(fd, info->state, end, &woke))
			return -1;
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
 * iw_mpa_startup_pair() - take a connected pair of sockets to full operation
 * @fds: fds[0] the Initiator (it must send first, RFC 5044 rule 4),
 *	fds[1] the Responder, connected to each other
 * @iflags: MPA_F_* of the Initiator
 * @rflags: MPA_F_* of the Responder
 * @ms: the longest wait for each startup step
 *
 * Attaches "mpa" to both and runs the startup, with no private data.
 *
 * Return: 0, or -1 with errno set; the sockets stay open.
 */
int iw_mpa_startup_pair(const int fds[2], __u32 iflags, __u32 rflags, int ms)
{
	if (iw_mpa_attach(fds[0]) || iw_mpa_attach(fds[1]) ||
	    iw_mpa_start(fds[1], MPA_ROLE_RESPONDER, rflags, NULL, 0, NULL, 0) ||
	    iw_mpa_start(fds[0], MPA_ROLE_INITIATOR, iflags, NULL, 0, NULL, 0) ||
	    iw_mpa_respond(fds[1], ms))
		return -1;
	return iw_mpa_wait_state(fds[0], MPA_S_FULL, ms);
}

/**
 * iw_mpa_pair() - two loopback MPA sockets in full operation
 * @family: AF_INET or AF_INET6
 * @fds: fds[0] the Initiator, fds[1] the Responder (see
 *	iw_mpa_startup_pair()); both -1 on failure
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
	if (iw_loopback_pair(family, fds) ||
	    iw_mpa_startup_pair(fds, iflags, rflags, ms)) {
		err = errno;
		iw_close_pair(fds);
		errno = err;
		return -1;
	}
	return 0;
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
