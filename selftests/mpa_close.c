// SPDX-License-Identifier: GPL-2.0
/*
 * Ending an MPA connection: a FIN never cuts an FPDU whose send()
 * succeeded, whether the end comes from shutdown(), close() with or
 * without SO_LINGER, or while another thread's send() sleeps; the peer
 * sees whole ULPDUs and then a clean end (or a reset for SO_LINGER with
 * a zero time), never RFC 5044 error 1. connect(AF_UNSPEC) is refused.
 * Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

#define MAX_FILL	512

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

static __u8 sbuf[65536], rbuf[65536], want[65536], bbuf[65536];

/* how the sender ends the connection */
enum { END_SHUT_WR, END_SHUT_RDWR, END_CLOSE, END_LINGER, END_LINGER_ZERO };

struct drain {
	int	ulpdus;		/* whole ULPDUs with the right content */
	int	bad;		/* ULPDUs with a wrong length or content */
	int	end;		/* 0: end of stream, else errno of recv */
	__u32	mpa_err;	/* MPA_ERROR afterwards */
	__u32	flags;		/* MPA_INFO flags afterwards */
	int	tcp_state;	/* TCP_INFO state afterwards */
	int	delay_ms;	/* wait this long before reading */
	int	fd;
	int	mulpdu;
};

static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	return ti.tcpi_state;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Read ULPDUs until the stream ends; ULPDU k is mt_fill(seed 100 + k). */
static void *drain(void *arg)
{
	struct drain *d = arg;
	struct pollfd p = { .fd = d->fd, .events = POLLIN };
	ssize_t n;

	usleep(d->delay_ms * 1000);
	for (;;) {
		if (poll(&p, 1, 10000) != 1) {
			d->end = ETIMEDOUT;
			break;
		}
		n = mt_recv(d->fd, rbuf, sizeof(rbuf), 0, NULL);
		if (n <= 0) {
			d->end = n ? errno : 0;
			break;
		}
		mt_fill(want, d->mulpdu, 100 + d->ulpdus + d->bad);
		if (n == d->mulpdu && !memcmp(rbuf, want, n))
			d->ulpdus++;
		else
			d->bad++;
	}
	d->mpa_err = iw_mpa_error(d->fd);
	d->flags = iw_mpa_info_of(d->fd).flags;
	d->tcp_state = tcp_state(d->fd);
	return NULL;
}

/*
 * Receiver fds[0] (Responder, receive buffer @rcvbuf or the default,
 * does not read yet), sender fds[1] (Initiator, 16 KiB send buffer), in
 * full operation.
 */
static int close_pair(int fds[2], int rcvbuf)
{
	int sndbuf = 16384;

	if (iw_loopback_pair_rcvbuf(AF_INET, fds, rcvbuf) || iw_mpa_attach(fds[0]) ||
	    iw_mpa_attach(fds[1]) ||
	    setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) ||
	    iw_mpa_start(fds[0], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0) ||
	    iw_mpa_start(fds[1], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0) ||
	    iw_mpa_wait_state(fds[0], MPA_S_REQ_RCVD, RAW_TMO_MS) ||
	    setsockopt(fds[0], SOL_MPA, MPA_ACCEPT, "", 0) ||
	    iw_mpa_wait_state(fds[1], MPA_S_FULL, RAW_TMO_MS))
		return -1;
	return 0;
}

/*
 * TCP takes an FPDU whole when it has the space for it: the module's
 * tx_split_test knob puts each FPDU into two skbs, so that the second
 * part needs send space of its own and may stay with MPA.
 */
#define SPLIT		1000

static int set_split(unsigned int val)
{
	const char *path = "/sys/module/mpa/parameters/tx_split_test";
	char v[16];
	int fd, n, ret;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = snprintf(v, sizeof(v), "%u", val);
	ret = write(fd, v, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

static int mulpdu_of(int fd)
{
	socklen_t len = sizeof(__u32);
	__u32 v = 0;

	getsockopt(fd, SOL_MPA, MPA_MULPDU, &v, &len);
	return v;
}

/*
 * Send MULPDU ULPDUs without waiting until send space runs out for good
 * (the receiver's window is full): the second part of the last one that
 * succeeded then stays with MPA. Returns how many send() accepted.
 */
static int fill(int fd, int mulpdu)
{
	int n = 0, k;

	do {
		for (k = 0; n < MAX_FILL; k++, n++) {
			mt_fill(sbuf, mulpdu, 100 + n);
			if (send(fd, sbuf, mulpdu, MSG_DONTWAIT | MSG_NOSIGNAL) != mulpdu)
				break;
		}
		usleep(200000);
	} while (k && n < MAX_FILL);
	return n;
}

FIXTURE(ending)
{
	int fds[2];
};

FIXTURE_VARIANT(ending)
{
	int end;
};

FIXTURE_VARIANT_ADD(ending, shut_wr)
{
	.end = END_SHUT_WR,
};

FIXTURE_VARIANT_ADD(ending, shut_rdwr)
{
	.end = END_SHUT_RDWR,
};

FIXTURE_VARIANT_ADD(ending, close)
{
	.end = END_CLOSE,
};

FIXTURE_VARIANT_ADD(ending, close_linger)
{
	.end = END_LINGER,
};

FIXTURE_VARIANT_ADD(ending, close_linger_zero)
{
	.end = END_LINGER_ZERO,
};

FIXTURE_SETUP(ending)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	ASSERT_EQ(0, set_split(SPLIT));
	ASSERT_EQ(0, close_pair(self->fds, 4096));
}

FIXTURE_TEARDOWN(ending)
{
	set_split(0);
	iw_close_pair(self->fds);
}

/*
 * The sender ends the connection while part of its last FPDU waits in
 * MPA; the receiver has stopped reading and reads only afterwards.
 */
TEST_F(ending, fin_after_pending_fpdu)
{
	struct linger lg = { .l_onoff = 1 };
	struct drain d = { .fd = self->fds[0] };
	struct timespec t0;
	pthread_t th;
	int n, ret;
	long ms;

	d.mulpdu = mulpdu_of(self->fds[1]);
	ASSERT_GE(d.mulpdu, 128);
	n = fill(self->fds[1], d.mulpdu);
	ASSERT_GT(n, 0);
	ASSERT_LT(n, MAX_FILL);
	ASSERT_EQ(EAGAIN, errno);
	/* without the fix an old module raised SIGPIPE despite MSG_NOSIGNAL */
	signal(SIGPIPE, SIG_IGN);

	/* with lingering the reader has to start while close() waits */
	d.delay_ms = 300;
	ASSERT_EQ(0, pthread_create(&th, NULL, drain, &d));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	switch (variant->end) {
	case END_SHUT_WR:
	case END_SHUT_RDWR:
		ret = shutdown(self->fds[1], variant->end == END_SHUT_WR ? SHUT_WR : SHUT_RDWR);
		ASSERT_EQ(0, ret);
		/* nothing may start after the FIN */
		EXPECT_EQ(-1, send(self->fds[1], sbuf, 10, MSG_NOSIGNAL));
		EXPECT_EQ(EPIPE, errno);
		break;
	case END_LINGER:
	case END_LINGER_ZERO:
		lg.l_linger = variant->end == END_LINGER ? 10 : 0;
		ASSERT_EQ(0, setsockopt(self->fds[1], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
		fallthrough;
	default:
		ASSERT_EQ(0, close(self->fds[1]));
		self->fds[1] = -1;
		break;
	}
	ms = ms_since(&t0);
	/* shutdown() does not wait; close() waits only when lingering */
	EXPECT_EQ(variant->end == END_LINGER, ms >= 250);
	ASSERT_EQ(0, pthread_join(th, NULL));

	EXPECT_EQ(0, d.bad);
	if (variant->end == END_LINGER_ZERO) {
		/* a reset, not a FIN: TCP is closed, not in CLOSE_WAIT */
		EXPECT_LE(d.ulpdus, n);
		EXPECT_EQ(ECONNRESET, d.end);
		EXPECT_EQ(TCP_CLOSE, d.tcp_state);
		return;
	}
	/* every ULPDU send() accepted, whole, then a FIN on an FPDU boundary */
	EXPECT_EQ(n, d.ulpdus);
	EXPECT_EQ(0, d.end);
	EXPECT_EQ(0, d.mpa_err);
	EXPECT_EQ(MPA_I_PEER_FIN, d.flags & MPA_I_PEER_FIN);
	EXPECT_EQ(TCP_CLOSE_WAIT, d.tcp_state);

	if (variant->end == END_SHUT_WR) {
		/* half closed: the sender still receives */
		ASSERT_EQ(4, send(self->fds[0], "back", 4, 0));
		ASSERT_EQ(4, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
		EXPECT_EQ(0, memcmp(rbuf, "back", 4));
	}
}

struct blocked_send {
	int	fd;
	int	len;
	int	seed;
	ssize_t	ret;
	int	err;
};

static void *send_blocking(void *arg)
{
	struct blocked_send *b = arg;

	mt_fill(bbuf, b->len, b->seed);
	b->ret = send(b->fd, bbuf, b->len, MSG_NOSIGNAL);
	b->err = errno;
	return NULL;
}

/*
 * shutdown() while another thread's send() sleeps in the middle of an
 * FPDU (it cannot take the socket's transmit lock): the FIN waits for it.
 */
TEST(shutdown_while_send_sleeps)
{
	struct blocked_send b = { .ret = -2 };
	struct drain d = { 0 };
	bool sleeping;
	pthread_t th;
	int fds[2], n;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, set_split(SPLIT));
	ASSERT_EQ(0, close_pair(fds, 4096));
	d.fd = fds[0];
	d.mulpdu = mulpdu_of(fds[1]);
	n = fill(fds[1], d.mulpdu);
	ASSERT_GT(n, 0);
	ASSERT_LT(n, MAX_FILL);

	b.fd = fds[1];
	b.len = d.mulpdu;
	b.seed = 100 + n;
	ASSERT_EQ(0, pthread_create(&th, NULL, send_blocking, &b));
	usleep(200000);
	/* the send sleeps: the receiver has not read anything */
	sleeping = b.ret == -2;
	ASSERT_EQ(0, shutdown(fds[1], SHUT_WR));
	if (!sleeping)
		TH_LOG("the send was not sleeping at shutdown time: %zd, errno %d",
		       b.ret, b.err);

	drain(&d);
	ASSERT_EQ(0, pthread_join(th, NULL));
	/* that send either made it whole before the FIN or failed with EPIPE */
	if (b.ret != b.len) {
		EXPECT_EQ(-1, b.ret);
		EXPECT_EQ(EPIPE, b.err);
	}
	EXPECT_EQ(0, d.bad);
	EXPECT_EQ(n + (b.ret == b.len), d.ulpdus);
	EXPECT_EQ(0, d.end);
	EXPECT_EQ(0, d.mpa_err);
	EXPECT_EQ(TCP_CLOSE_WAIT, d.tcp_state);
	close(fds[0]);
	close(fds[1]);
	set_split(0);
}

static int disconnect(int fd)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };

	return connect(fd, &sa, sizeof(sa));
}

FIXTURE(disc)
{
	int fds[2];
};

FIXTURE_VARIANT(disc)
{
	bool started;
};

FIXTURE_VARIANT_ADD(disc, attached)
{
	.started = false,
};

FIXTURE_VARIANT_ADD(disc, full_operation)
{
	.started = true,
};

FIXTURE_SETUP(disc)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	if (variant->started) {
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, RAW_TMO_MS));
	} else {
		ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->fds));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	}
}

FIXTURE_TEARDOWN(disc)
{
	iw_close_pair(self->fds);
}

/*
 * connect(AF_UNSPEC) (tcp_disconnect) would keep the MPA context for a
 * next connection: refused with EOPNOTSUPP, as kTLS does, and the
 * connection goes on unchanged.
 */
TEST_F(disc, disconnect_is_refused)
{
	__u32 state = variant->started ? MPA_S_FULL : MPA_S_IDLE;
	char buf[16];

	ASSERT_EQ(-1, disconnect(self->fds[0]));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(TCP_ESTABLISHED, tcp_state(self->fds[0]));
	EXPECT_EQ(state, iw_mpa_info_of(self->fds[0]).state);
	EXPECT_EQ(0, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(0, iw_so_error(self->fds[0]));

	/* both directions still work, as ULPDUs or as plain TCP */
	ASSERT_EQ(5, send(self->fds[0], "hello", 5, 0));
	ASSERT_EQ(5, variant->started ? mt_recv(self->fds[1], buf, sizeof(buf), 0, NULL) :
					iw_readn(self->fds[1], buf, 5, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	ASSERT_EQ(5, send(self->fds[1], "world", 5, 0));
	ASSERT_EQ(5, variant->started ? mt_recv(self->fds[0], buf, sizeof(buf), 0, NULL) :
					iw_readn(self->fds[0], buf, 5, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "world", 5));
	EXPECT_EQ(state, iw_mpa_info_of(self->fds[0]).state);
}

TEST_HARNESS_MAIN
