/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the MPA socket API selftests that also use the pure
 * protocol code (mpa_proto.c) to build and check wire images: startup,
 * state and counters, raw TCP peers, FPDU encoding.
 *
 * Include after "mpa_proto.h", <linux/mpa.h>, "kselftest_harness.h"
 * and "mpa_test_util.h".
 */
#ifndef _MPA_SOCK_UTIL_H
#define _MPA_SOCK_UTIL_H

#define RAW_TMO_MS	5000

static int mt_start(int fd, __u32 role, __u32 flags, const void *pd, __u16 pd_len,
		    const void *lsm, __u32 lsm_len)
{
	size_t len = sizeof(struct mpa_start) + pd_len + lsm_len;
	struct mpa_start *s = calloc(1, len);
	int ret;

	if (!s)
		return -1;
	s->role = role;
	s->flags = flags;
	s->pd_len = pd_len;
	s->lsm_len = lsm_len;
	if (pd_len)
		memcpy(s->data, pd, pd_len);
	if (lsm_len)
		memcpy(s->data + pd_len, lsm, lsm_len);
	ret = setsockopt(fd, SOL_MPA, MPA_START, s, len);
	free(s);
	return ret;
}

static struct mpa_info mt_info(int fd)
{
	struct mpa_info i;
	socklen_t len = sizeof(i);

	memset(&i, 0xff, sizeof(i));
	if (getsockopt(fd, SOL_MPA, MPA_INFO, &i, &len))
		i.state = 0xdead;
	return i;
}

static __u32 mt_error(int fd)
{
	socklen_t len = sizeof(__u32);
	__u32 v = 0xdead;

	getsockopt(fd, SOL_MPA, MPA_ERROR, &v, &len);
	return v;
}

static int mt_so_error(int fd)
{
	socklen_t len = sizeof(int);
	int v = -1;

	getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &len);
	return v;
}

static struct mpa_stats mt_stats(int fd)
{
	struct mpa_stats s;
	socklen_t len = sizeof(s);

	memset(&s, 0xff, sizeof(s));
	getsockopt(fd, SOL_MPA, MPA_STATS, &s, &len);
	return s;
}

/* Wait until MPA_INFO shows @state; 0 when reached, -1 after @ms. */
static int mt_wait_state(int fd, __u32 state, int ms)
{
	for (; ms > 0; ms -= 2) {
		if (mt_info(fd).state == state)
			return 0;
		usleep(2000);
	}
	return mt_info(fd).state == state ? 0 : -1;
}

/* Read exactly @n octets (less on EOF, error or after @ms without data). */
static ssize_t mt_readn(int fd, void *buf, size_t n, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		if (poll(&p, 1, ms) != 1)
			break;
		r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return got ? (ssize_t)got : r;
		got += r;
	}
	return got;
}

static int mt_writen(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/* Write one octet per TCP segment. */
static int mt_dribble(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return -1;
	while (n--) {
		if (write(fd, p++, 1) != 1)
			return -1;
		usleep(1000);
	}
	return 0;
}

/* A Request or Reply frame built by hand, independently of mpa_proto.c. */
static size_t mt_frame(__u8 *buf, int request, __u8 flags, __u8 rev, const void *pd,
		       __u16 pd_len)
{
	memcpy(buf, request ? "MPA ID Req Frame" : "MPA ID Rep Frame", 16);
	buf[16] = flags;
	buf[17] = rev;
	buf[18] = pd_len >> 8;
	buf[19] = pd_len & 0xff;
	if (pd_len)
		memcpy(buf + 20, pd, pd_len);
	return 20 + pd_len;
}

static void mt_fill(void *buf, size_t n, __u32 seed)
{
	__u8 *p = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = seed >> 16;
	}
}

struct mt_src {
	const __u8 *p;
};

static int mt_copy(void *ctx, void *dst, u32 len)
{
	struct mt_src *s = ctx;

	memcpy(dst, s->p, len);
	s->p += len;
	return 0;
}

/* Reference wire image of one FPDU at stream position @pos (mpa_proto.c). */
static int mt_enc(__u8 *out, __u32 size, __u32 pos, bool markers, bool crc,
		  const void *ulpdu, __u32 len)
{
	struct mt_src s = { .p = ulpdu };

	return mpa_fpdu_encode(out, size, pos, markers, crc, len, mt_copy, &s);
}

/* Pair with SO_RCVBUF set on the connecting end before connect (0: default). */
static int mt_pair_rcvbuf(int family, int fds[2], int rcvbuf)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int lfd;

	lfd = mpa_test_listener(family, &addr, &alen);
	if (lfd < 0)
		return -1;
	fds[0] = socket(family, SOCK_STREAM, 0);
	if (fds[0] < 0 ||
	    (rcvbuf && setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) ||
	    connect(fds[0], (struct sockaddr *)&addr, alen)) {
		close(lfd);
		return -1;
	}
	fds[1] = accept(lfd, NULL, NULL);
	close(lfd);
	return fds[1] < 0 ? -1 : 0;
}

/* Module Initiator fds[0], module Responder fds[1], both in full operation. */
static int mt_full_pair(int family, int fds[2], __u32 iflags, __u32 rflags)
{
	if (mpa_test_pair(family, fds) || mpa_test_set_ulp(fds[0]) ||
	    mpa_test_set_ulp(fds[1]) ||
	    mt_start(fds[1], MPA_ROLE_RESPONDER, rflags, NULL, 0, NULL, 0) ||
	    mt_start(fds[0], MPA_ROLE_INITIATOR, iflags, NULL, 0, NULL, 0) ||
	    mt_wait_state(fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS) ||
	    setsockopt(fds[1], SOL_MPA, MPA_ACCEPT, "", 0) ||
	    mt_wait_state(fds[0], MPA_S_FULL, RAW_TMO_MS))
		return -1;
	return 0;
}

/*
 * Module Initiator fds[0] (MPA_START @iflags), raw Responder fds[1]: reads
 * the Request, answers with a Reply with @rep_flags (MPA_FLAG_*).
 */
static int mt_raw_responder(int family, int fds[2], __u32 iflags, __u8 rep_flags,
			    int rcvbuf)
{
	__u8 req[20], rep[20];

	if (mt_pair_rcvbuf(family, fds, rcvbuf) || mpa_test_set_ulp(fds[0]) ||
	    mt_start(fds[0], MPA_ROLE_INITIATOR, iflags, NULL, 0, NULL, 0) ||
	    mt_readn(fds[1], req, 20, RAW_TMO_MS) != 20 ||
	    memcmp(req, "MPA ID Req Frame", 16))
		return -1;
	mt_frame(rep, 0, rep_flags, 1, NULL, 0);
	if (mt_writen(fds[1], rep, 20) ||
	    mt_wait_state(fds[0], (rep_flags & MPA_FLAG_R) ? MPA_S_REJECTED : MPA_S_FULL,
			  RAW_TMO_MS))
		return -1;
	return 0;
}

/* Receive one ULPDU; returns its length, -1 with errno, sets *eor. */
static ssize_t mt_recv(int fd, void *buf, size_t len, int flags, int *msg_flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	n = recvmsg(fd, &mh, flags);
	if (msg_flags)
		*msg_flags = mh.msg_flags;
	return n;
}

/* Set /sys/module/mpa/parameters/allow_no_crc; returns the old value or -1. */
static int mt_allow_no_crc(int val)
{
	const char *path = "/sys/module/mpa/parameters/allow_no_crc";
	char c = 0;
	int fd, old;

	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1) {
		close(fd);
		return -1;
	}
	old = c == 'Y' || c == '1';
	c = val ? '1' : '0';
	if (pwrite(fd, &c, 1, 0) != 1)
		old = -1;
	close(fd);
	return old;
}

#endif /* _MPA_SOCK_UTIL_H */
