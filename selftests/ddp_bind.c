// SPDX-License-Identifier: GPL-2.0
/*
 * Binding and unbinding a DDP stream while the peer is in the middle of an
 * FPDU. The peer is a raw TCP socket (fds[0]) that plays the MPA Initiator
 * with hand-encoded frames, so it can stop anywhere inside an FPDU; the
 * module end (fds[1]) is the Responder, accepted from user space before
 * DDP binds it, as ddp-xfer and ddp-bench do. Needs mpa.ko and ddp.ko.
 */
#include <signal.h>

#include "mpa_proto.h"

#include "kselftest_harness.h"
#include "ddp_test_util.h"
#include "mpa_sock_util.h"

#define SINK_LEN	4096
#define BASE_TO		0x200000ULL
#define SEG_LEN		3000	/* one tagged segment: header and payload */
#define PAYLOAD_LEN	(SEG_LEN - sizeof(struct ddp_tagged_hdr))
#define FIRST_PART	100	/* octets of the FPDU sent before the bind */

FIXTURE(bind)
{
	int fds[2];	/* [0] raw Initiator, [1] module Responder */
	int pd;
	int sfd;
	struct dt_gbuf sink;
	__u32 stag;
	__u32 pos;	/* stream position of the raw peer's next FPDU */
	__u8 seg[SEG_LEN];
	__u8 wire[SEG_LEN + 64];
	int wlen;
};

FIXTURE_SETUP(bind)
{
	self->pd = -1;
	self->sfd = -1;
	self->pos = 0;
	ASSERT_EQ(0, dt_raw_initiator_pair(self->fds));
	self->pd = iw_ddp_open();
	ASSERT_LE(0, self->pd);
	ASSERT_EQ(0, dt_gbuf_alloc(&self->sink, SINK_LEN, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->sink.buf, SINK_LEN, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, -1, &self->stag));
}

FIXTURE_TEARDOWN(bind)
{
	dt_release(&self->sfd, &self->pd, self->fds, &self->sink);
}

/* one tagged segment (last of its message) as an FPDU in self->wire */
static void tagged_fpdu(struct _test_data_bind *self, __u32 seed)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
		.stag = htonl(self->stag),
		.to = htobe64(BASE_TO),
	};

	memcpy(self->seg, &h, sizeof(h));
	dt_fill(self->seg + sizeof(h), PAYLOAD_LEN, seed);
	self->wlen = mt_enc(self->wire, sizeof(self->wire), self->pos, false, true,
			    self->seg, SEG_LEN);
	self->pos += self->wlen;
}

static void expect_placed(struct __test_metadata *_metadata, struct _test_data_bind *self)
{
	struct ddp_event ev;

	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_TAGGED, ev.type);
	EXPECT_EQ(self->stag, ev.stag);
	EXPECT_EQ(BASE_TO, ev.to);
	EXPECT_EQ(PAYLOAD_LEN, ev.len);
	EXPECT_EQ(0, memcmp(self->sink.buf, self->seg + sizeof(struct ddp_tagged_hdr),
			    PAYLOAD_LEN));
	EXPECT_EQ(-1, dt_gbuf_guards(&self->sink));
}

/* The bind comes while the first 100 octets of an FPDU wait in MPA. */
TEST_F(bind, bind_in_mid_fpdu)
{
	tagged_fpdu(self, 1);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire, FIRST_PART));
	usleep(200 * 1000);
	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire + FIRST_PART,
			       self->wlen - FIRST_PART));
	expect_placed(_metadata, self);
}

/* Each octet of the FPDU in its own segment, the bind in the middle. */
TEST_F(bind, bind_between_dribbled_octets)
{
	tagged_fpdu(self, 2);
	ASSERT_EQ(0, mt_dribble(self->fds[0], self->wire, 30));
	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire + 30, self->wlen - 30));
	expect_placed(_metadata, self);
}

/*
 * MPA leaves Nagle to the socket's owner; DDP turns it off when it binds
 * (a message's short last FPDU must not wait for an ACK), and the owner
 * may turn it on again.
 */
TEST_F(bind, bind_turns_nagle_off)
{
	socklen_t len = sizeof(int);
	int v = -1, zero = 0;

	ASSERT_EQ(0, getsockopt(self->fds[1], IPPROTO_TCP, TCP_NODELAY, &v, &len));
	EXPECT_EQ(0, v);
	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, getsockopt(self->fds[1], IPPROTO_TCP, TCP_NODELAY, &v, &len));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, setsockopt(self->fds[1], IPPROTO_TCP, TCP_NODELAY, &zero, sizeof(zero)));
	ASSERT_EQ(0, getsockopt(self->fds[1], IPPROTO_TCP, TCP_NODELAY, &v, &len));
	EXPECT_EQ(0, v);
	tagged_fpdu(self, 4);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire, self->wlen));
	expect_placed(_metadata, self);
}

/* A stream released and bound again receives (rx_stop stayed set once). */
TEST_F(bind, rebind_after_unbind)
{
	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	close(self->sfd);
	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	tagged_fpdu(self, 3);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire, self->wlen));
	expect_placed(_metadata, self);
}

/*
 * Unbound while an FPDU was being placed: the rest of that ULPDU is
 * dropped, the next ULPDU goes to recvmsg() (documented in mpa.rst).
 */
TEST_F(bind, unbind_in_mid_fpdu_then_user_space)
{
	static const char next[] = "next ULPDU";
	__u8 buf[SEG_LEN];
	int n, fl = 0;

	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	tagged_fpdu(self, 4);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire, FIRST_PART));
	usleep(200 * 1000);
	close(self->sfd);
	self->sfd = -1;
	EXPECT_EQ(-1, mt_recv(self->fds[1], buf, sizeof(buf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire + FIRST_PART,
			       self->wlen - FIRST_PART));
	n = mt_enc(self->wire, sizeof(self->wire), self->pos, false, true, next,
		   sizeof(next));
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire, n));
	ASSERT_EQ(sizeof(next), mt_recv(self->fds[1], buf, sizeof(buf), 0, &fl));
	EXPECT_EQ(0, memcmp(buf, next, sizeof(next)));
	EXPECT_EQ(2, iw_mpa_stats_of(self->fds[1]).rx_fpdus);
	EXPECT_EQ(0, iw_mpa_error(self->fds[1]));
}

/* An ioctl on a half-closed stream fails with EPIPE and raises no SIGPIPE. */
TEST_F(bind, send_after_shutdown_no_sigpipe)
{
	static const __u8 rsv[5];
	const struct timespec zero = { 0 };
	__u8 msg[16] = "after shutdown";
	sigset_t pipe, old, pend;

	self->sfd = iw_ddp_bind(self->pd, self->fds[1], 1);
	ASSERT_LE(0, self->sfd);
	/* the Initiator's first FPDU lets the Responder send (rule 4) */
	tagged_fpdu(self, 5);
	ASSERT_EQ(0, iw_writen(self->fds[0], self->wire, self->wlen));
	expect_placed(_metadata, self);
	/* a SIGPIPE stays pending where the test can see it */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &pipe, &old));
	ASSERT_EQ(0, shutdown(self->fds[1], SHUT_WR));
	EXPECT_EQ(-1, iw_ddp_send_untagged(self->sfd, msg, sizeof(msg), 0, rsv));
	EXPECT_EQ(EPIPE, errno);
	ASSERT_EQ(0, sigpending(&pend));
	EXPECT_EQ(0, sigismember(&pend, SIGPIPE));
	sigtimedwait(&pipe, NULL, &zero);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

#define CUT_T_LEN	200	/* payload of the first tagged segment */
#define CUT_T2_LEN	101	/* of the second one (its FPDU has a pad) */
#define CUT_T2_TO	(BASE_TO + 1024)

/*
 * One connection: two tagged FPDUs; the DDP stream binds after the first
 * @cut octets. Untagged segments are not used: an untagged header that
 * arrives before the bind is checked at the bind, before a buffer can be
 * posted (no buffer: error 2/2, as RFC 5041 asks).
 * Returns 0 when both were placed exactly and nothing else was written.
 */
static int bind_after(struct _test_data_bind *self, const __u8 *wire, size_t len,
		      size_t cut, const __u8 *pay1, const __u8 *pay2)
{
	struct ddp_event ev[2];
	int fds[2], sfd = -1, ret = -1, i;
	const __u8 *p = self->sink.buf;

	memset(self->sink.map, DDP_PATTERN, self->sink.maplen);
	if (dt_raw_initiator_pair(fds))
		return -2;
	if (iw_writen(fds[0], wire, cut))
		goto out;
	sfd = iw_ddp_bind(self->pd, fds[1], 1);
	if (sfd < 0)
		goto out;
	ret = -3;
	if (iw_writen(fds[0], wire + cut, len - cut))
		goto out;
	for (i = 0; i < 2; i++)
		if (iw_ddp_event(sfd, &ev[i], DDP_TMO_MS) != 1)
			goto out;
	ret = -4;
	if (ev[0].type != DDP_EV_TAGGED || ev[0].len != CUT_T_LEN || ev[0].to != BASE_TO ||
	    ev[1].type != DDP_EV_TAGGED || ev[1].len != CUT_T2_LEN || ev[1].to != CUT_T2_TO)
		goto out;
	ret = -5;
	if (memcmp(p, pay1, CUT_T_LEN) || memcmp(p + 1024, pay2, CUT_T2_LEN) ||
	    dt_find_not(p + CUT_T_LEN, 1024 - CUT_T_LEN, DDP_PATTERN) != -1 ||
	    dt_find_not(p + 1024 + CUT_T2_LEN, SINK_LEN - 1024 - CUT_T2_LEN,
			DDP_PATTERN) != -1 ||
	    dt_gbuf_guards(&self->sink) != -1)
		goto out;
	ret = 0;
out:
	if (sfd >= 0)
		close(sfd);
	close(fds[0]);
	close(fds[1]);
	return ret;
}

static int tagged_enc(__u8 *out, size_t size, __u32 pos, __u32 stag, __u64 to,
		      __u8 *seg, const __u8 *pay, size_t plen)
{
	struct ddp_tagged_hdr th = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
		.stag = htonl(stag),
		.to = htobe64(to),
	};

	memcpy(seg, &th, sizeof(th));
	memcpy(seg + sizeof(th), pay, plen);
	return mt_enc(out, size, pos, false, true, seg, sizeof(th) + plen);
}

/* The bind after every prefix of two FPDUs: a header, a payload or a CRC cut. */
TEST_F_TIMEOUT(bind, bind_at_every_cut, 600)
{
	__u8 pay1[CUT_T_LEN], pay2[CUT_T2_LEN], seg[512], wire[1024];
	size_t cut, len;
	int n, ret;

	/* the fixture's own connection is not used here */
	dt_fill(pay1, sizeof(pay1), 5);
	dt_fill(pay2, sizeof(pay2), 6);
	n = tagged_enc(wire, sizeof(wire), 0, self->stag, BASE_TO, seg, pay1, CUT_T_LEN);
	ASSERT_LT(0, n);
	len = n;
	n = tagged_enc(wire + len, sizeof(wire) - len, len, self->stag, CUT_T2_TO, seg,
		       pay2, CUT_T2_LEN);
	ASSERT_LT(0, n);
	len += n;
	for (cut = 0; cut < len; cut++) {
		ret = bind_after(self, wire, len, cut, pay1, pay2);
		if (ret)
			TH_LOG("bind after %zu of %zu octets: %d", cut, len, ret);
		ASSERT_EQ(0, ret);
	}
}

TEST_HARNESS_MAIN
