// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel consumer API of MPA (include/net/mpa.h), driven through
 * the test module selftests/kmod/mpa_echo.ko: a kernel consumer binds a
 * socket (mpa_bind), starts MPA (mpa_start), accepts or rejects
 * (mpa_accept, mpa_reject), echoes every ULPDU (mpa_send, mpa_sendv,
 * mpa_send_msg_locked),
 * aborts (mpa_abort) and reports what its callbacks saw. User space is
 * the peer, through the MPA socket API or as a raw TCP peer.
 * Needs mpa.ko; loads mpa_echo.ko (modprobe, else kmod/mpa_echo.ko) and
 * unloads it at the end if it loaded it.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"
#include "kmod/mpa_echo.h"

#define ECHO_DEV	"/dev/mpa_echo"
#define TMO_MS		5000

static int echo_loaded;

/* Load the module once, in the parent of the tests, and unload it at exit. */
static void __attribute__((constructor)) echo_load(void)
{
	if (!access(ECHO_DEV, F_OK))
		return;
	if (system("modprobe -q mpa_echo 2>/dev/null || insmod kmod/mpa_echo.ko"))
		return;
	echo_loaded = 1;
}

static void __attribute__((destructor)) echo_unload(void)
{
	if (echo_loaded && system("rmmod mpa_echo"))
		fprintf(stderr, "# cannot unload mpa_echo\n");
}

static int echo_open(void)
{
	return open(ECHO_DEV, O_RDWR | O_CLOEXEC);
}

static int echo_bind(int dev, int fd, __u32 role, __u16 rev, __u32 flags, __u32 mode,
		     const char *pd)
{
	struct mpa_echo_bind b = {
		.fd = fd, .role = role, .rev = rev, .flags = flags, .mode = mode,
	};

	if (pd) {
		b.pd_len = strlen(pd);
		memcpy(b.pd, pd, b.pd_len);
	}
	return ioctl(dev, MPA_ECHO_IOC_BIND, &b);
}

static struct mpa_echo_status echo_status(int dev)
{
	struct mpa_echo_status st;

	memset(&st, 0xff, sizeof(st));
	if (ioctl(dev, MPA_ECHO_IOC_STATUS, &st))
		st.state = 0xdead;
	return st;
}

/* Poll the status until its __u32 field at @off is @val; 0, or -1 after TMO_MS. */
static int echo_wait(int dev, size_t off, __u32 val, struct mpa_echo_status *st)
{
	__u32 v;
	int ms;

	for (ms = 0; ms < TMO_MS; ms += 2) {
		*st = echo_status(dev);
		memcpy(&v, (char *)st + off, sizeof(v));
		if (v == val)
			return 0;
		usleep(2000);
	}
	return -1;
}

#define ECHO_WAIT(dev, st, field, val) \
	echo_wait(dev, offsetof(struct mpa_echo_status, field), val, &(st))

/* MPA_START with a revision (iw_mpa_start() leaves it to default_rev). */
static int echo_user_start(int fd, __u32 role, __u16 rev, __u32 flags, const char *pd)
{
	size_t pd_len = pd ? strlen(pd) : 0;
	struct {
		struct mpa_start s;
		char pd[64];
	} a = { .s = { .role = role, .flags = flags, .rev = rev, .pd_len = pd_len } };

	memcpy(a.pd, pd, pd_len);
	return setsockopt(fd, SOL_MPA, MPA_START, &a, sizeof(a.s) + pd_len);
}

static int peer_pd(int fd, char *buf, size_t size)
{
	socklen_t len = size;

	memset(buf, 0, size);
	if (getsockopt(fd, SOL_MPA, MPA_PEER_PD, buf, &len))
		return -1;
	return len;
}

static void set_rcvtimeo(int fd)
{
	struct timeval tv = { .tv_sec = TMO_MS / 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

FIXTURE(echo)
{
	int dev;
	int fds[2];	/* [0] connected, [1] accepted */
};

FIXTURE_VARIANT(echo)
{
	__u16 rev;
	__u32 flags;
	__u32 mode;
};

FIXTURE_VARIANT_ADD(echo, rev1)
{
	.rev = 1,
};

FIXTURE_VARIANT_ADD(echo, rev1_markers_sendv)
{
	.rev = 1, .flags = MPA_F_MARKERS, .mode = MPA_ECHO_SENDV,
};

FIXTURE_VARIANT_ADD(echo, rev2)
{
	.rev = 2,
};

FIXTURE_VARIANT_ADD(echo, rev2_markers_sendv)
{
	.rev = 2, .flags = MPA_F_MARKERS, .mode = MPA_ECHO_SENDV,
};

FIXTURE_SETUP(echo)
{
	self->dev = echo_open();
	ASSERT_LE(0, self->dev) TH_LOG("open %s: %s", ECHO_DEV, strerror(errno));
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->fds));
	set_rcvtimeo(self->fds[0]);
	set_rcvtimeo(self->fds[1]);
}

FIXTURE_TEARDOWN(echo)
{
	close(self->fds[0]);
	close(self->fds[1]);
	close(self->dev);
}

/* User space Initiator, kernel Responder: every ULPDU comes back intact. */
TEST_F(echo, roundtrip)
{
	static const size_t sizes[] = { 1, 3, 4, 5, 1000, 0 /* MULPDU */ };
	static char out[65536], in[65536];
	struct mpa_echo_status st;
	struct mpa_stats stats;
	char pd[MPA_MAX_PD_LEN];
	__u32 mulpdu, mulpdu_r;
	socklen_t len = sizeof(mulpdu);
	size_t i, n;
	int fl;

	ASSERT_EQ(0, echo_bind(self->dev, self->fds[1], MPA_ROLE_RESPONDER, variant->rev,
			       variant->flags, variant->mode, NULL));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, echo_user_start(self->fds[0], MPA_ROLE_INITIATOR, variant->rev,
				     variant->flags, "hello-echo"));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, TMO_MS));
	EXPECT_EQ(variant->rev, iw_mpa_info_of(self->fds[0]).rev);
	ASSERT_EQ(11, peer_pd(self->fds[0], pd, sizeof(pd)));
	EXPECT_EQ(0, memcmp(pd, MPA_ECHO_ACCEPT_PD, 11));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_MULPDU, &mulpdu, &len));
	/* each end has its own MSS, thus MULPDU (6.12: not always equal) */
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_MULPDU, &mulpdu_r, &len));
	if (mulpdu_r < mulpdu)
		mulpdu = mulpdu_r;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i] ? sizes[i] : mulpdu;
		mt_fill(out, n, n);
		ASSERT_EQ(n, send(self->fds[0], out, n, 0));
		memset(in, 0, n);
		ASSERT_EQ(n, mt_recv(self->fds[0], in, sizeof(in), 0, &fl)) TH_LOG("size %zu", n);
		EXPECT_TRUE(fl & MSG_EOR);
		ASSERT_EQ(0, memcmp(out, in, n)) TH_LOG("size %zu", n);
	}

	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, echoed, 6));
	EXPECT_EQ(1, st.requests);
	EXPECT_EQ(0, st.replies);
	EXPECT_EQ(10, st.peer_pd_len);
	EXPECT_EQ(0, memcmp(st.peer_pd, "hello-echo", 10));
	EXPECT_EQ(0, st.answer_err);
	EXPECT_EQ(6, st.ulpdus);
	EXPECT_EQ(0, st.dropped);
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(0, st.send_err);
	EXPECT_EQ(0, st.peer_closed);
	EXPECT_EQ(MPA_S_FULL, st.state);
	EXPECT_EQ(variant->rev, st.rev);
	/* the MSS may grow with the window (6.12): read it when st was */
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_MULPDU, &mulpdu_r, &len));
	EXPECT_EQ(mulpdu_r, st.mulpdu);
	stats = iw_mpa_stats_of(self->fds[0]);
	EXPECT_EQ(6, stats.rx_fpdus);
	EXPECT_EQ(6, stats.tx_fpdus);
	EXPECT_EQ(stats.tx_octets, stats.rx_octets);

	/* the peer's FIN on an FPDU boundary: peer_closed() */
	ASSERT_EQ(0, shutdown(self->fds[0], SHUT_WR));
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, peer_closed, 1));
	EXPECT_EQ(0, st.errors);
}

/* one ULPDU of an MPA_ECHO_MSG echo: its header, then @data_len octets */
static int echo_msg_recv(int fd, char *buf, size_t size, __u32 *off,
			 __u32 *len, int *last)
{
	struct mpa_echo_msg_hdr h;
	ssize_t n;
	int fl;

	n = mt_recv(fd, buf, size, 0, &fl);
	if (n < (ssize_t)sizeof(h))
		return -1;
	memcpy(&h, buf, sizeof(h));
	*off = ntohl(h.off);
	*len = ntohl(h.len) & ~MPA_ECHO_MSG_LAST;
	*last = !!(ntohl(h.len) & MPA_ECHO_MSG_LAST);
	return n - sizeof(h);
}

/*
 * mpa_send_msg_locked(): MPA cuts a message into ULPDUs of the MULPDU,
 * each with the header the consumer's next() wrote; a failing next()
 * stops the message after what was sent, which still leaves.
 */
TEST_F(echo, send_msg)
{
	static char out[65536], in[65536];
	const size_t hl = sizeof(struct mpa_echo_msg_hdr);
	struct mpa_echo_status st;
	__u32 mulpdu, mulpdu_r, off, len;
	socklen_t sl = sizeof(mulpdu);
	int last;

	/* on lo the MSS, and the MULPDU, may grow with the window (6.12) */
	iw_close_pair(self->fds);
	ASSERT_EQ(0, iw_loopback_pair_mss(AF_INET, self->fds, 1000));
	set_rcvtimeo(self->fds[0]);
	set_rcvtimeo(self->fds[1]);
	ASSERT_EQ(0, echo_bind(self->dev, self->fds[1], MPA_ROLE_RESPONDER, variant->rev,
			       variant->flags, MPA_ECHO_MSG, NULL));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, echo_user_start(self->fds[0], MPA_ROLE_INITIATOR, variant->rev,
				     variant->flags, NULL));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_MULPDU, &mulpdu, &sl));
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_MULPDU, &mulpdu_r, &sl));
	ASSERT_EQ(mulpdu, mulpdu_r);
	ASSERT_GE(1000 - MPA_HDR_LEN - MPA_CRC_LEN, mulpdu);

	/* a full ULPDU comes back as MULPDU - 8 octets, then the last 8 */
	mt_fill(out, mulpdu, 7);
	ASSERT_EQ(mulpdu, send(self->fds[0], out, mulpdu, 0));
	ASSERT_EQ(mulpdu_r - hl, echo_msg_recv(self->fds[0], in, sizeof(in), &off, &len, &last));
	EXPECT_EQ(0, off);
	EXPECT_EQ(mulpdu_r - hl, len);
	EXPECT_FALSE(last);
	EXPECT_EQ(0, memcmp(out, in + hl, len));
	ASSERT_EQ(mulpdu - len, echo_msg_recv(self->fds[0], in, sizeof(in), &off, &len, &last));
	EXPECT_EQ(mulpdu_r - hl, off);
	EXPECT_EQ(mulpdu - off, len);
	EXPECT_TRUE(last);
	EXPECT_EQ(0, memcmp(out + off, in + hl, len));

	/* a short message is one ULPDU, a zero-length one a header alone */
	ASSERT_EQ(3, send(self->fds[0], "abc", 3, 0));
	ASSERT_EQ(3, echo_msg_recv(self->fds[0], in, sizeof(in), &off, &len, &last));
	EXPECT_EQ(0, off);
	EXPECT_EQ(3, len);
	EXPECT_TRUE(last);
	EXPECT_EQ(0, memcmp("abc", in + hl, 3));
	ASSERT_EQ(0, send(self->fds[0], out, 0, 0));
	ASSERT_EQ(0, echo_msg_recv(self->fds[0], in, sizeof(in), &off, &len, &last));
	EXPECT_EQ(0, off);
	EXPECT_EQ(0, len);
	EXPECT_TRUE(last);
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, echoed, 3));
	EXPECT_EQ(0, st.send_err);

	/* a header over MPA_MSG_HDR_MAX: -EINVAL, nothing sent */
	memcpy(out, MPA_ECHO_MSG_BIGHDR, strlen(MPA_ECHO_MSG_BIGHDR));
	ASSERT_EQ(100, send(self->fds[0], out, 100, 0));
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, send_err, (__u32)-EINVAL));

	/* next() fails on the second ULPDU: the first, full one still leaves */
	memcpy(out, MPA_ECHO_MSG_FAIL, strlen(MPA_ECHO_MSG_FAIL));
	ASSERT_EQ(mulpdu, send(self->fds[0], out, mulpdu, 0));
	ASSERT_EQ(mulpdu_r - hl, echo_msg_recv(self->fds[0], in, sizeof(in), &off, &len, &last));
	EXPECT_EQ(0, off);
	EXPECT_FALSE(last);
	EXPECT_EQ(0, memcmp(out, in + hl, len));
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, send_err, (__u32)-ENOBUFS));
	EXPECT_EQ(3, st.echoed);
	EXPECT_EQ(5, st.ulpdus);
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(-1, recv(self->fds[0], in, sizeof(in), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
}

/* Kernel Initiator, user space Responder: the kernel speaks first. */
TEST_F(echo, kernel_initiator)
{
	struct mpa_echo_status st;
	char pd[MPA_MAX_PD_LEN], buf[64];

	ASSERT_EQ(0, echo_bind(self->dev, self->fds[0], MPA_ROLE_INITIATOR, variant->rev,
			       variant->flags, variant->mode, "from-kernel"));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, echo_user_start(self->fds[1], MPA_ROLE_RESPONDER, variant->rev,
				     variant->flags, NULL));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, TMO_MS));
	ASSERT_EQ(11, peer_pd(self->fds[1], pd, sizeof(pd)));
	EXPECT_EQ(0, memcmp(pd, "from-kernel", 11));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, "user-ok", 7));

	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(10, recv(self->fds[1], buf, sizeof(buf), 0));
	EXPECT_STREQ(MPA_ECHO_HELLO, buf);
	ASSERT_EQ(4, send(self->fds[1], "ping", 4, 0));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(4, recv(self->fds[1], buf, sizeof(buf), 0));
	EXPECT_STREQ("ping", buf);

	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, echoed, 2));
	EXPECT_EQ(0, st.requests);
	EXPECT_EQ(1, st.replies);
	EXPECT_EQ(0, st.rejected);
	EXPECT_EQ(7, st.peer_pd_len);
	EXPECT_EQ(0, memcmp(st.peer_pd, "user-ok", 7));
	EXPECT_EQ(1, st.ulpdus);
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(MPA_S_FULL, st.state);
	EXPECT_EQ(variant->rev, st.rev);
}

/* The kernel Responder rejects: MPA exits on both ends, TCP stays open. */
TEST_F(echo, reject)
{
	struct mpa_echo_status st;
	char pd[MPA_MAX_PD_LEN];

	ASSERT_EQ(0, echo_bind(self->dev, self->fds[1], MPA_ROLE_RESPONDER, variant->rev,
			       variant->flags, variant->mode | MPA_ECHO_REJECT, NULL));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, echo_user_start(self->fds[0], MPA_ROLE_INITIATOR, variant->rev,
				     variant->flags, "please"));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_REJECTED, TMO_MS));
	EXPECT_TRUE(iw_mpa_info_of(self->fds[0]).flags & MPA_I_REJECTED);
	ASSERT_EQ(11, peer_pd(self->fds[0], pd, sizeof(pd)));
	EXPECT_EQ(0, memcmp(pd, MPA_ECHO_REJECT_PD, 11));

	/*
	 * The Responder's state changes once the Reject is sent: the
	 * Initiator may see it first (it did on the debug kernel).
	 */
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, state, MPA_S_REJECTED));
	EXPECT_EQ(1, st.requests);
	EXPECT_EQ(0, st.answer_err);
	EXPECT_EQ(MPA_S_REJECTED, st.state);
	EXPECT_EQ(0, st.ulpdus);
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(0, st.mulpdu);
}

/* mpa_abort(): the peer sees a reset. */
TEST_F(echo, abort)
{
	struct mpa_echo_status st;
	char buf[16];
	int err = ECONNABORTED, bad = 0;

	ASSERT_EQ(0, echo_bind(self->dev, self->fds[1], MPA_ROLE_RESPONDER, variant->rev,
			       variant->flags, variant->mode, NULL));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, echo_user_start(self->fds[0], MPA_ROLE_INITIATOR, variant->rev,
				     variant->flags, NULL));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, TMO_MS));
	ASSERT_EQ(3, send(self->fds[0], "one", 3, 0));
	ASSERT_EQ(3, recv(self->fds[0], buf, sizeof(buf), 0));
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, echoed, 1));

	EXPECT_EQ(-1, ioctl(self->dev, MPA_ECHO_IOC_ABORT, &bad));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ioctl(self->dev, MPA_ECHO_IOC_ABORT, &err));
	EXPECT_EQ(-1, recv(self->fds[0], buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
	/* the kernel end reports the errno given to mpa_abort() */
	EXPECT_EQ(ECONNABORTED, iw_so_error(self->fds[1]));
}

FIXTURE(raw)
{
	int dev;
	int fds[2];	/* [0] raw TCP peer, [1] bound to mpa_echo */
};

FIXTURE_SETUP(raw)
{
	self->dev = echo_open();
	ASSERT_LE(0, self->dev) TH_LOG("open %s: %s", ECHO_DEV, strerror(errno));
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->fds));
	set_rcvtimeo(self->fds[0]);
	ASSERT_EQ(0, echo_bind(self->dev, self->fds[1], MPA_ROLE_RESPONDER, 1, 0, 0, NULL));
}

FIXTURE_TEARDOWN(raw)
{
	close(self->fds[0]);
	close(self->fds[1]);
	close(self->dev);
}

/* An FPDU with a bad CRC reaches the consumer as error() with code 2. */
TEST_F(raw, bad_crc)
{
	__u8 frame[64], fpdu[64];
	struct mpa_echo_status st;
	int n;

	n = mt_frame(frame, 1, MPA_FLAG_C, 1, NULL, 0);
	ASSERT_EQ(0, iw_writen(self->fds[0], frame, n));
	ASSERT_EQ(20 + 11, iw_readn(self->fds[0], frame, 20 + 11, TMO_MS));
	ASSERT_EQ(0, memcmp(frame, "MPA ID Rep Frame", 16));
	ASSERT_EQ(MPA_FLAG_C, frame[16]);
	ASSERT_EQ(0, memcmp(frame + 20, MPA_ECHO_ACCEPT_PD, 11));

	n = mt_enc(fpdu, sizeof(fpdu), 0, false, true, "abcd", 4);
	ASSERT_EQ(12, n);
	fpdu[n - 1] ^= 1;
	ASSERT_EQ(0, iw_writen(self->fds[0], fpdu, n));
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, errors, 1));
	EXPECT_EQ(MPA_ERR_CRC, st.last_error);
	EXPECT_EQ(0, st.ulpdus);
	EXPECT_EQ(0, st.echoed);
}

/* A Reply sent to a Responder: startup error 4, TCP is reset. */
TEST_F(raw, bad_startup)
{
	struct mpa_echo_status st;
	__u8 frame[64];
	int n;

	n = mt_frame(frame, 0, MPA_FLAG_C, 1, NULL, 0);
	ASSERT_EQ(0, iw_writen(self->fds[0], frame, n));
	ASSERT_EQ(0, ECHO_WAIT(self->dev, st, errors, 1));
	EXPECT_EQ(MPA_ERR_STARTUP, st.last_error);
	EXPECT_EQ(MPA_S_ERROR, st.state);
	EXPECT_EQ(0, st.requests);
	EXPECT_EQ(-1, read(self->fds[0], frame, sizeof(frame)));
	EXPECT_EQ(ECONNRESET, errno);
}

/* What the ioctls refuse, with the errno of the MPA call behind them. */
TEST(bind_errors)
{
	int dev, dev2, fds[2], tcp, err = ECONNABORTED;
	struct mpa_echo_bind b = { .pd_len = MPA_ECHO_PD_MAX + 1 };
	struct mpa_echo_status st;

	dev = echo_open();
	ASSERT_LE(0, dev);
	EXPECT_EQ(-1, ioctl(dev, MPA_ECHO_IOC_STATUS, &st));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(dev, MPA_ECHO_IOC_ABORT, &err));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(dev, MPA_ECHO_IOC_BIND, &b));
	EXPECT_EQ(EINVAL, errno);
	/* not a socket */
	EXPECT_EQ(-1, echo_bind(dev, dev, MPA_ROLE_RESPONDER, 1, 0, 0, NULL));
	EXPECT_EQ(ENOTSOCK, errno);
	/* a TCP socket that is not connected: mpa_bind() fails as TCP_ULP */
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, tcp);
	EXPECT_EQ(-1, echo_bind(dev, tcp, MPA_ROLE_RESPONDER, 1, 0, 0, NULL));
	EXPECT_EQ(ENOTCONN, errno);
	close(tcp);

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	/* bound, but mpa_start() refuses the role */
	EXPECT_EQ(-1, echo_bind(dev, fds[1], 3, 1, 0, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	st = echo_status(dev);
	EXPECT_EQ(MPA_S_IDLE, st.state);
	EXPECT_EQ(0, st.mulpdu);
	/* one socket per file */
	EXPECT_EQ(-1, echo_bind(dev, fds[0], MPA_ROLE_INITIATOR, 1, 0, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	/* one consumer per socket */
	dev2 = echo_open();
	ASSERT_LE(0, dev2);
	EXPECT_EQ(-1, echo_bind(dev2, fds[1], MPA_ROLE_RESPONDER, 1, 0, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	close(dev2);
	close(dev);
	close(fds[0]);
	close(fds[1]);
}

static int echo_register(int dev, const char *name, __u32 get_info,
			 __u32 info_size)
{
	struct mpa_echo_register r = {
		.info_size = info_size,
		.get_info = get_info,
	};

	snprintf(r.name, sizeof(r.name), "%s", name);
	return ioctl(dev, MPA_ECHO_IOC_REGISTER, &r);
}

/* What mpa_register_consumer() refuses, and the limits it accepts. */
TEST(register_errors)
{
	int dev = echo_open();

	ASSERT_LE(0, dev);
	EXPECT_EQ(0, echo_register(dev, "echo-try", 0, 0));
	EXPECT_EQ(0, echo_register(dev, "echo-try", 1, 1));
	EXPECT_EQ(0, echo_register(dev, "echo-try", 1, MPA_ECHO_INFO_MAX));
	/* the longest name: MPA_CONSUMER_NAME_MAX - 1 octets */
	EXPECT_EQ(0, echo_register(dev, "fifteen-octets!", 0, 0));
	EXPECT_EQ(-1, echo_register(dev, "sixteen-octets!!", 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, echo_register(dev, "", 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* get_info needs an info_size of 1 to MPA_ECHO_INFO_MAX */
	EXPECT_EQ(-1, echo_register(dev, "echo-try", 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, echo_register(dev, "echo-try", 1, MPA_ECHO_INFO_MAX + 1));
	EXPECT_EQ(EINVAL, errno);
	/* the name is taken by mpa_echo itself */
	EXPECT_EQ(-1, echo_register(dev, "mpa_echo", 0, 0));
	EXPECT_EQ(EEXIST, errno);
	close(dev);
}

TEST_HARNESS_MAIN
