/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the DDP selftests: MPA connections in full operation,
 * /dev/ddp ioctls, events, guarded buffers.
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

static inline long long ddp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline int ddp_mpa_start(int fd, __u32 role, __u32 flags)
{
	struct mpa_start st = { .role = role, .flags = flags };

	return setsockopt(fd, SOL_MPA, MPA_START, &st, sizeof(st));
}

static inline int ddp_mpa_state(int fd)
{
	struct mpa_info info;
	socklen_t len = sizeof(info);

	if (getsockopt(fd, SOL_MPA, MPA_INFO, &info, &len))
		return -1;
	return info.state;
}

static inline int ddp_mpa_wait_full(int fd)
{
	long long end = ddp_now_ms() + DDP_TMO_MS;

	while (ddp_now_ms() < end) {
		int st = ddp_mpa_state(fd);

		if (st == MPA_S_FULL)
			return 0;
		if (st < 0 || st == MPA_S_ERROR || st == MPA_S_REJECTED)
			return -1;
		usleep(2000);
	}
	return -1;
}

/*
 * Responder half of the startup on @fd (a socket with the "mpa" ULP whose
 * peer is, or will be, the Initiator): wait for the Request and accept.
 */
static inline int ddp_mpa_accept(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, DDP_TMO_MS) != 1)
		return -1;
	if (setsockopt(fd, SOL_MPA, MPA_ACCEPT, "", 0))
		return -1;
	return ddp_mpa_wait_full(fd);
}

/*
 * Two MPA sockets in full operation over loopback: fds[0] is the
 * Initiator (it must send first, RFC 5044 rule 4), fds[1] the Responder.
 */
static inline int ddp_mpa_connect(int fds[2], int family, __u32 flags)
{
	if (mpa_test_pair(family, fds))
		return -1;
	if (mpa_test_set_ulp(fds[0]) || mpa_test_set_ulp(fds[1]) ||
	    ddp_mpa_start(fds[1], MPA_ROLE_RESPONDER, flags) ||
	    ddp_mpa_start(fds[0], MPA_ROLE_INITIATOR, flags) ||
	    ddp_mpa_accept(fds[1]) || ddp_mpa_wait_full(fds[0]))
		goto err;
	return 0;
err:
	close(fds[0]);
	close(fds[1]);
	return -1;
}

static inline __u32 ddp_mulpdu(int sock)
{
	__u32 m = 0;
	socklen_t len = sizeof(m);

	if (getsockopt(sock, SOL_MPA, MPA_MULPDU, &m, &len))
		return 0;
	return m;
}

static inline int ddp_mpa_stats(int sock, struct mpa_stats *st)
{
	socklen_t len = sizeof(*st);

	return getsockopt(sock, SOL_MPA, MPA_STATS, st, &len);
}

/* Wait until @sock has received and validated @n FPDUs in all. */
static inline int ddp_wait_rx_fpdus(int sock, __u64 n)
{
	long long end = ddp_now_ms() + DDP_TMO_MS;
	struct mpa_stats st;

	while (ddp_now_ms() < end) {
		if (ddp_mpa_stats(sock, &st))
			return -1;
		if (st.rx_fpdus >= n)
			return 0;
		usleep(2000);
	}
	return -1;
}

static inline int ddp_open_pd(void)
{
	return open("/dev/ddp", O_RDWR | O_CLOEXEC);
}

/* Bind @sock to @pd: the stream fd, or -1. */
static inline int ddp_bind(int pd, int sock, __u32 nqueues)
{
	struct ddp_bind b = { .sock_fd = sock, .nqueues = nqueues, .stream_fd = -1 };

	if (ioctl(pd, DDP_IOC_BIND, &b))
		return -1;
	return b.stream_fd;
}

/* Register @len octets at @addr: 0 and *@stag, or -1. */
static inline int ddp_reg(int pd, void *addr, __u64 len, __u64 base_to,
			  __u32 access, int stream_fd, __u32 *stag)
{
	struct ddp_reg_mr r = {
		.addr = (uintptr_t)addr,
		.len = len,
		.base_to = base_to,
		.access = access,
		.stream_fd = stream_fd,
	};

	if (ioctl(pd, DDP_IOC_REG_MR, &r))
		return -1;
	*stag = r.stag;
	return 0;
}

static inline int ddp_invalidate(int pd, __u32 stag)
{
	return ioctl(pd, DDP_IOC_INVALIDATE, &stag);
}

static inline int ddp_post(int sfd, void *addr, __u64 len, __u32 qn, __u64 cookie)
{
	struct ddp_post_recv pr = {
		.addr = (uintptr_t)addr,
		.len = len,
		.qn = qn,
		.cookie = cookie,
	};

	return ioctl(sfd, DDP_IOC_POST_RECV, &pr);
}

static inline int ddp_send_tagged(int sfd, const void *buf, __u64 len,
				  __u32 stag, __u64 to, __u8 rsvdulp)
{
	struct ddp_send sd = {
		.addr = (uintptr_t)buf,
		.len = len,
		.flags = DDP_SEND_TAGGED,
		.stag = stag,
		.to = to,
		.rsvdulp = { rsvdulp },
	};

	return ioctl(sfd, DDP_IOC_SEND, &sd);
}

static inline int ddp_send_untagged(int sfd, const void *buf, __u64 len,
				    __u32 qn, const __u8 rsvdulp[5])
{
	struct ddp_send sd = {
		.addr = (uintptr_t)buf,
		.len = len,
		.qn = qn,
	};

	memcpy(sd.rsvdulp, rsvdulp, 5);
	return ioctl(sfd, DDP_IOC_SEND, &sd);
}

/* One event within @ms: 1, 0 on timeout, -1 on error. */
static inline int ddp_event(int sfd, struct ddp_event *ev, int ms)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return 0;
	n = read(sfd, ev, sizeof(*ev));
	if (n != sizeof(*ev))
		return -1;
	return 1;
}

/*
 * A guarded buffer: @len usable octets between two DDP_GUARD areas, in an
 * anonymous mapping (MAP_SHARED when @shared, so that a child sees it).
 * Everything is filled with DDP_PATTERN.
 */
struct ddp_gbuf {
	__u8	*map;	/* guard + buffer + guard */
	__u8	*buf;
	size_t	len;
	size_t	maplen;
};

static inline int ddp_gbuf_alloc(struct ddp_gbuf *g, size_t len, int shared)
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

static inline void ddp_gbuf_free(struct ddp_gbuf *g)
{
	if (g->map)
		munmap(g->map, g->maplen);
	g->map = NULL;
}

/* Offset of the first octet of [@p, @p + @len) that is not @c, or -1. */
static inline long ddp_find_not(const __u8 *p, size_t len, __u8 c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return i;
	return -1;
}

/* Both guard areas are intact: -1, else the offset of a damage in the map. */
static inline long ddp_gbuf_guards(const struct ddp_gbuf *g)
{
	long r = ddp_find_not(g->map, DDP_GUARD, DDP_PATTERN);

	if (r >= 0)
		return r;
	r = ddp_find_not(g->buf + g->len, DDP_GUARD, DDP_PATTERN);
	return r < 0 ? -1 : (long)(DDP_GUARD + g->len) + r;
}

/* Deterministic pseudo-random octets. */
static inline void ddp_fill(__u8 *p, size_t len, __u32 seed)
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
