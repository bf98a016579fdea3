/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the DDP selftests: guarded buffers, data patterns,
 * counters. MPA connections and the /dev/ddp calls are libiwarp's
 * (tools/lib).
 */
#ifndef _DDP_TEST_UTIL_H
#define _DDP_TEST_UTIL_H

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <endian.h>

#include <linux/ddp.h>
#include <linux/mpa.h>

#include "mpa_test_util.h"

#define DDP_TMO_MS	10000	/* generous: the VM is emulated */
#define DDP_GUARD	4096	/* guard area on each side of a buffer */
#define DDP_PATTERN	0xa5

/* Wait until @sock has received and validated @n FPDUs in all. */
static inline int dt_wait_rx_fpdus(int sock, __u64 n)
{
	long long end = iw_now_ms() + DDP_TMO_MS;
	struct mpa_stats st;

	while (iw_now_ms() < end) {
		if (iw_mpa_stats(sock, &st))
			return -1;
		if (st.rx_fpdus >= n)
			return 0;
		usleep(2000);
	}
	return -1;
}

/*
 * A raw Initiator fds[0] (plain TCP: a revision 1 Request with C set) and
 * a module Responder fds[1] that accepted it, in full operation; the
 * Reply (no R, no M, no private data) is read off fds[0], so the raw
 * peer's next octet is FPDU stream position 0. 0, or -1 (both closed
 * when they were made).
 */
static inline int dt_raw_initiator_pair(int fds[2])
{
	struct mpa_frame_hdr req = {
		.key = MPA_WIRE_KEY_REQ,
		.flags = MPA_FLAG_C,
		.rev = 1,
	}, rep;

	fds[0] = -1;
	fds[1] = -1;
	if (iw_loopback_pair(AF_INET, fds))
		return -1;
	if (iw_mpa_attach(fds[1]) ||
	    iw_mpa_start(fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0) ||
	    iw_writen(fds[0], &req, sizeof(req)) ||
	    iw_mpa_respond(fds[1], DDP_TMO_MS) ||
	    iw_readn(fds[0], &rep, sizeof(rep), DDP_TMO_MS) != sizeof(rep) ||
	    memcmp(rep.key, MPA_WIRE_KEY_REP, MPA_WIRE_KEY_LEN) ||
	    (rep.flags & (MPA_FLAG_R | MPA_FLAG_M)) || rep.pd_len) {
		iw_close_pair(fds);
		return -1;
	}
	return 0;
}

/*
 * A guarded buffer: @len usable octets between two DDP_GUARD areas, in an
 * anonymous mapping (MAP_SHARED when @shared, so that a child sees it).
 * Everything is filled with DDP_PATTERN.
 */
struct dt_gbuf {
	__u8	*map;	/* guard + buffer + guard */
	__u8	*buf;
	size_t	len;
	size_t	maplen;
};

static inline int dt_gbuf_alloc(struct dt_gbuf *g, size_t len, int shared)
{
	g->len = len;
	g->maplen = len + 2 * DDP_GUARD;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE,
		      (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED) {
		g->map = NULL;
		return -1;
	}
	g->buf = g->map + DDP_GUARD;
	memset(g->map, DDP_PATTERN, g->maplen);
	return 0;
}

static inline void dt_gbuf_free(struct dt_gbuf *g)
{
	if (g->map)
		munmap(g->map, g->maplen);
	g->map = NULL;
}

/* Close what a DDP fixture holds: stream, PD, connection, guarded buffer. */
static inline void dt_release(int *sfd, int *pd, int fds[2], struct dt_gbuf *g)
{
	if (*sfd >= 0)
		close(*sfd);
	if (*pd >= 0)
		close(*pd);
	*sfd = -1;
	*pd = -1;
	iw_close_pair(fds);
	dt_gbuf_free(g);
}

/*
 * The DDP end of a test on the MPA socket @sock: a PD *@pd and the stream
 * *@sfd bound to @sock with @nqueues queues, a guarded @sink of @sink_len
 * octets registered at @base_to for remote writes as *@stag, and a guarded
 * @rbuf of @rbuf_len octets for a receive buffer. 0, or -1 with what was
 * made so far left for dt_release() and dt_gbuf_free().
 */
static inline int dt_ddp_end(int sock, __u32 nqueues, int *pd, int *sfd,
			     struct dt_gbuf *sink, size_t sink_len, __u64 base_to,
			     __u32 *stag, struct dt_gbuf *rbuf, size_t rbuf_len)
{
	*pd = iw_ddp_open();
	if (*pd < 0)
		return -1;
	*sfd = iw_ddp_bind(*pd, sock, nqueues);
	if (*sfd < 0 || dt_gbuf_alloc(sink, sink_len, 0) || dt_gbuf_alloc(rbuf, rbuf_len, 0))
		return -1;
	return iw_ddp_reg_mr(*pd, sink->buf, sink_len, base_to, DDP_ACCESS_REMOTE_WRITE, -1,
			     stag);
}

/* Offset of the first octet of [@p, @p + @len) that is not @c, or -1. */
static inline long dt_find_not(const __u8 *p, size_t len, __u8 c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return i;
	return -1;
}

/* Both guard areas are intact: -1, else the offset of a damage in the map. */
static inline long dt_gbuf_guards(const struct dt_gbuf *g)
{
	long r = dt_find_not(g->map, DDP_GUARD, DDP_PATTERN);

	if (r >= 0)
		return r;
	r = dt_find_not(g->buf + g->len, DDP_GUARD, DDP_PATTERN);
	return r < 0 ? -1 : (long)(DDP_GUARD + g->len) + r;
}

/* Deterministic pseudo-random octets. */
static inline void dt_fill(__u8 *p, size_t len, __u32 seed)
{
	__u32 x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x >> 24;
	}
}

#endif /* _DDP_TEST_UTIL_H */
