/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the MPA socket API selftests that also use the pure
 * protocol code (mpa_proto.c) to build and check wire images: raw TCP
 * peers, frames, FPDU encoding. Startup, state and counters are
 * libiwarp's (tools/lib).
 *
 * Include after "mpa_proto.h", <linux/mpa.h>, "kselftest_harness.h"
 * and "mpa_test_util.h".
 */
#ifndef _MPA_SOCK_UTIL_H
#define _MPA_SOCK_UTIL_H

#define RAW_TMO_MS	5000

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

/*
 * Module Initiator fds[0] (MPA_START @iflags), raw Responder fds[1]: reads
 * the Request, answers with a Reply with @rep_flags (MPA_FLAG_*).
 */
static int mt_raw_responder(int family, int fds[2], __u32 iflags, __u8 rep_flags,
			    int rcvbuf)
{
	__u8 req[20], rep[20];

	if (iw_loopback_pair_rcvbuf(family, fds, rcvbuf) || iw_mpa_attach(fds[0]) ||
	    iw_mpa_start(fds[0], MPA_ROLE_INITIATOR, iflags, NULL, 0, NULL, 0) ||
	    iw_readn(fds[1], req, 20, RAW_TMO_MS) != 20 ||
	    memcmp(req, "MPA ID Req Frame", 16))
		return -1;
	mt_frame(rep, 0, rep_flags, 1, NULL, 0);
	if (iw_writen(fds[1], rep, 20) ||
	    iw_mpa_wait_state(fds[0], (rep_flags & MPA_FLAG_R) ? MPA_S_REJECTED : MPA_S_FULL,
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

/*
 * sendmsg() with @flags of @total octets from @buf and a control message of
 * @level and @type carrying the @n (at most 16) __u32s in @lens.
 */
static ssize_t mt_send_lens(int fd, const void *buf, size_t total, int level,
			    int type, const __u32 *lens, size_t n, int flags)
{
	union {
		char b[CMSG_SPACE(16 * sizeof(__u32))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = total };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.b, .msg_controllen = CMSG_SPACE(n * sizeof(__u32)),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	memset(&ctl, 0, sizeof(ctl));
	cm->cmsg_level = level;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(n * sizeof(__u32));
	memcpy(CMSG_DATA(cm), lens, n * sizeof(__u32));
	return sendmsg(fd, &m, flags);
}

/*
 * recvmsg() with @flags and MPA_RECV_LENS: @size octets of buffer, room for
 * exactly @nlens (at most 16) lengths (0: no control buffer); the lengths in
 * @lens, their number in *@n (-1 without the control message), the flags in
 * *@fl.
 */
static ssize_t mt_recv_lens(int fd, void *buf, size_t size, int nlens, int flags,
			    __u32 *lens, int *n, int *fl)
{
	union {
		char b[CMSG_SPACE(16 * sizeof(__u32))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = nlens ? ctl.b : NULL,
		.msg_controllen = nlens ? CMSG_LEN(nlens * sizeof(__u32)) : 0,
	};
	struct cmsghdr *cm;
	ssize_t r;

	r = recvmsg(fd, &m, flags);
	*fl = m.msg_flags;
	*n = -1;
	cm = nlens ? CMSG_FIRSTHDR(&m) : NULL;
	if (r >= 0 && cm && cm->cmsg_level == SOL_MPA && cm->cmsg_type == MPA_CMSG_LENS) {
		*n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(__u32);
		memcpy(lens, CMSG_DATA(cm), *n * sizeof(__u32));
	}
	return r;
}

#endif /* _MPA_SOCK_UTIL_H */
