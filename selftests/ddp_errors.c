// SPDX-License-Identifier: GPL-2.0
/*
 * DDP receive errors (RFC 5041 section 7): a hostile peer sends hand-made
 * DDP segments to a DDP stream. The peer is a plain MPA socket in user
 * mode, the Initiator (fds[0]): each send() on it is one ULPDU, that is
 * one DDP segment, and each recv() returns one segment sent by the DDP
 * end, the Responder (fds[1]).
 *
 * For every error: the DDP_EV_ERROR event has the exact error type and
 * code, the offending header and the segment length; nothing is placed
 * (the sink and the posted buffer lie between guard areas: all of it must
 * keep its pattern); later valid segments are dropped silently; and the
 * DDP end can still send one last message (what a ULP's Terminate needs).
 * Needs mpa.ko and ddp.ko loaded.
 */
#include "kselftest_harness.h"
#include "ddp_test_util.h"

#define NQUEUES		3
#define SINK_LEN	8192
#define RBUF_LEN	1024
#define BASE_TO		0x100000ULL
#define RBUF_COOKIE	0xc0c0ULL

struct seg {
	__u8	b[2048];
	size_t	hlen;
	size_t	len;
};

static void seg_tagged(struct seg *s, __u8 ctrl, __u32 stag, __u64 to, size_t plen)
{
	struct ddp_tagged_hdr h = {
		.ctrl = ctrl,
		.rsvdulp = 0x40,
		.stag = htonl(stag),
		.to = htobe64(to),
	};

	memcpy(s->b, &h, sizeof(h));
	s->hlen = sizeof(h);
	s->len = s->hlen + plen;
	dt_fill(s->b + s->hlen, plen, stag ^ (__u32)to);
}

static void seg_untagged(struct seg *s, __u8 ctrl, __u32 qn, __u32 msn, __u32 mo,
			 size_t plen)
{
	struct ddp_untagged_hdr h = {
		.ctrl = ctrl,
		.rsvdulp = { 0x43, 1, 2, 3, 4 },
		.qn = htonl(qn),
		.msn = htonl(msn),
		.mo = htonl(mo),
	};

	memcpy(s->b, &h, sizeof(h));
	s->hlen = sizeof(h);
	s->len = s->hlen + plen;
	dt_fill(s->b + s->hlen, plen, qn ^ msn ^ mo);
}

FIXTURE(raw)
{
	int fds[2];	/* [0] raw MPA peer, [1] DDP end */
	int pd;
	int sfd;
	struct dt_gbuf sink;
	struct dt_gbuf rbuf;
	__u32 stag;
	__u64 fpdus;	/* FPDUs sent by the raw peer so far */
};

FIXTURE_SETUP(raw)
{
	self->pd = -1;
	self->sfd = -1;
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, DDP_TMO_MS));
	ASSERT_EQ(0, dt_ddp_end(self->fds[1], NQUEUES, &self->pd, &self->sfd, &self->sink,
				SINK_LEN, BASE_TO, &self->stag, &self->rbuf, RBUF_LEN));
	/* one buffer on queue 0 (MSN 1), none on queues 1 and 2 */
	ASSERT_EQ(0, iw_ddp_post_recv(self->sfd, self->rbuf.buf, RBUF_LEN, 0, RBUF_COOKIE));
	self->fpdus = 0;
}

FIXTURE_TEARDOWN(raw)
{
	dt_release(&self->sfd, &self->pd, self->fds, &self->sink);
	dt_gbuf_free(&self->rbuf);
}

static void raw_send(struct __test_metadata *_metadata, struct _test_data_raw *self,
		     const struct seg *s)
{
	ASSERT_EQ((ssize_t)s->len, send(self->fds[0], s->b, s->len, 0));
	self->fpdus++;
}

/* The sink, the posted buffer and their guards still hold the pattern. */
static void expect_intact(struct __test_metadata *_metadata, struct _test_data_raw *self)
{
	EXPECT_EQ(-1, dt_find_not(self->sink.map, self->sink.maplen, DDP_PATTERN));
	EXPECT_EQ(-1, dt_find_not(self->rbuf.map, self->rbuf.maplen, DDP_PATTERN));
}

/* The DDP end sends an untagged message; the raw peer gets its exact bytes. */
static void expect_last_send(struct __test_metadata *_metadata,
			     struct _test_data_raw *self, __u32 msn)
{
	static const __u8 rsv[5] = { 0x43, 0, 0, 0, 0 };
	struct ddp_untagged_hdr h = {
		.ctrl = DDP_FLAG_L | DDP_WIRE_VERSION,
		.rsvdulp = { 0x43, 0, 0, 0, 0 },
		.qn = htonl(1),
		.msn = htonl(msn),
		.mo = 0,
	};
	struct pollfd p = { .fd = self->fds[0], .events = POLLIN };
	__u8 msg[40], got[256];

	dt_fill(msg, sizeof(msg), 77);
	ASSERT_EQ(0, iw_ddp_send_untagged(self->sfd, msg, sizeof(msg), 1, rsv));
	ASSERT_EQ(1, poll(&p, 1, DDP_TMO_MS));
	ASSERT_EQ((ssize_t)(sizeof(h) + sizeof(msg)),
		  recv(self->fds[0], got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(got, &h, sizeof(h)));
	EXPECT_EQ(0, memcmp(got + sizeof(h), msg, sizeof(msg)));
}

/*
 * Send @bad, expect exactly the error @type/@code for it, then check that
 * nothing was placed, that later valid segments are dropped silently and
 * that the DDP end can still send.
 */
static void expect_error(struct __test_metadata *_metadata, struct _test_data_raw *self,
			 const struct seg *bad, __u8 type, __u8 code)
{
	struct ddp_event ev;
	struct seg ok;

	raw_send(_metadata, self, bad);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_ERROR, ev.type);
	EXPECT_EQ(type, ev.err_type);
	EXPECT_EQ(code, ev.err_code);
	EXPECT_EQ(bad->hlen, ev.hdr_len);
	EXPECT_EQ(0, memcmp(ev.hdr, bad->b, bad->hlen));
	EXPECT_EQ(bad->len, ev.len);
	expect_intact(_metadata, self);

	/* the stream is stopped: valid segments are dropped, silently */
	seg_tagged(&ok, DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION, self->stag,
		   BASE_TO + 100, 64);
	raw_send(_metadata, self, &ok);
	seg_untagged(&ok, DDP_FLAG_L | DDP_WIRE_VERSION, 0, 1, 0, 32);
	raw_send(_metadata, self, &ok);
	ASSERT_EQ(0, dt_wait_rx_fpdus(self->fds[1], self->fpdus));
	EXPECT_EQ(0, iw_ddp_event(self->sfd, &ev, 200));
	expect_intact(_metadata, self);

	expect_last_send(_metadata, self, 1);
}

#define T_LAST	(DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION)
#define U_LAST	(DDP_FLAG_L | DDP_WIRE_VERSION)

TEST_F(raw, tagged_unknown_stag)
{
	struct seg s;

	/* an index that is not registered */
	seg_tagged(&s, T_LAST, self->stag + (7 << 8), BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
}

TEST_F(raw, tagged_wrong_key)
{
	struct seg s;

	/* the right index, a wrong key */
	seg_tagged(&s, T_LAST, self->stag ^ 0x01, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
}

TEST_F(raw, tagged_stag_zero)
{
	struct seg s;

	seg_tagged(&s, T_LAST, 0, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
}

TEST_F(raw, tagged_invalidated_stag)
{
	struct dt_gbuf g;
	struct seg s;
	__u32 stag;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, SINK_LEN, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, g.buf, SINK_LEN, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, stag));
	EXPECT_EQ(-1, iw_ddp_invalidate(self->pd, stag));
	EXPECT_EQ(ENOENT, errno);
	seg_tagged(&s, T_LAST, stag, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	EXPECT_EQ(-1, dt_find_not(g.map, g.maplen, DDP_PATTERN));
	dt_gbuf_free(&g);
}

TEST_F(raw, tagged_no_remote_write)
{
	struct dt_gbuf g;
	struct seg s;
	__u32 stag;

	/* DDP has no code for access rights: 0x1/0x00 */
	ASSERT_EQ(0, dt_gbuf_alloc(&g, SINK_LEN, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, g.buf, SINK_LEN, BASE_TO,
				   DDP_ACCESS_REMOTE_READ, -1, &stag));
	seg_tagged(&s, T_LAST, stag, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	EXPECT_EQ(-1, dt_find_not(g.map, g.maplen, DDP_PATTERN));
	dt_gbuf_free(&g);
}

TEST_F(raw, tagged_to_below_base)
{
	struct seg s;

	seg_tagged(&s, T_LAST, self->stag, BASE_TO - 1, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

TEST_F(raw, tagged_one_octet_past_the_end)
{
	struct seg s;

	seg_tagged(&s, T_LAST, self->stag, BASE_TO + SINK_LEN - 16 + 1, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

TEST_F(raw, tagged_to_past_the_end)
{
	struct seg s;

	seg_tagged(&s, T_LAST, self->stag, BASE_TO + SINK_LEN, 1);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

TEST_F(raw, tagged_longer_than_the_buffer)
{
	struct seg s;

	/* a payload longer than the whole buffer, at its base */
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, self->stag));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->sink.buf, 1000, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, -1, &self->stag));
	seg_tagged(&s, T_LAST, self->stag, BASE_TO, 1001);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

TEST_F(raw, tagged_stag_of_another_stream)
{
	struct ddp_event ev;
	struct dt_gbuf g, own;
	int fds2[2], s2;
	__u32 stag2, ostag;
	struct seg s;

	/* a second stream of the same PD */
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds2, 0, 0, DDP_TMO_MS));
	s2 = iw_ddp_bind(self->pd, fds2[1], 1);
	ASSERT_LE(0, s2);
	ASSERT_EQ(0, dt_gbuf_alloc(&g, SINK_LEN, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, g.buf, SINK_LEN, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, s2, &stag2));
	/* a buffer bound to this very stream works */
	ASSERT_EQ(0, dt_gbuf_alloc(&own, 64, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, own.buf, 64, 0, DDP_ACCESS_REMOTE_WRITE,
				   self->sfd, &ostag));
	seg_tagged(&s, T_LAST, ostag, 0, 64);
	raw_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_TAGGED, ev.type);
	EXPECT_EQ(ostag, ev.stag);
	EXPECT_EQ(64U, ev.len);
	EXPECT_EQ(0, memcmp(own.buf, s.b + s.hlen, 64));
	EXPECT_EQ(-1, dt_gbuf_guards(&own));

	seg_tagged(&s, T_LAST, stag2, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_STAG_NOT_ASSOC);
	EXPECT_EQ(-1, dt_find_not(g.map, g.maplen, DDP_PATTERN));
	close(s2);
	close(fds2[0]);
	close(fds2[1]);
	dt_gbuf_free(&g);
	dt_gbuf_free(&own);
}

TEST_F(raw, tagged_to_wrap)
{
	struct seg s;
	__u32 stag;

	/* a buffer at the very top of the TO space: the wrap is checked first */
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->sink.buf, SINK_LEN, -(__u64)SINK_LEN,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
	seg_tagged(&s, T_LAST, stag, -8ULL, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
}

TEST_F(raw, tagged_invalid_dv)
{
	struct seg s;

	seg_tagged(&s, DDP_FLAG_T | DDP_FLAG_L | 2, self->stag, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_DV);
}

TEST_F(raw, tagged_dv_zero)
{
	struct seg s;

	seg_tagged(&s, DDP_FLAG_T | DDP_FLAG_L, self->stag, BASE_TO, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_DV);
}

TEST_F(raw, untagged_invalid_dv)
{
	struct seg s;

	seg_untagged(&s, DDP_FLAG_L | 3, 0, 1, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_DV);
}

TEST_F(raw, untagged_invalid_qn)
{
	struct seg s;

	seg_untagged(&s, U_LAST, NQUEUES, 1, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_QN);
}

TEST_F(raw, untagged_huge_qn)
{
	struct seg s;

	seg_untagged(&s, U_LAST, 0xffffffff, 1, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_QN);
}

TEST_F(raw, untagged_no_buffer)
{
	struct seg s;

	seg_untagged(&s, U_LAST, 1, 1, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED,
		     DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF);
}

TEST_F(raw, untagged_msn_beyond_the_window)
{
	struct seg s;

	seg_untagged(&s, U_LAST, 0, 5, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED,
		     DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
}

TEST_F(raw, untagged_msn_just_past_the_window)
{
	struct seg s;

	/* one buffer posted: MSN 1 only */
	seg_untagged(&s, U_LAST, 0, 2, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED,
		     DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
}

TEST_F(raw, untagged_msn_zero_before_the_window)
{
	struct seg s;

	seg_untagged(&s, U_LAST, 0, 0, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED,
		     DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
}

TEST_F(raw, untagged_msn_already_completed)
{
	struct ddp_event ev;
	struct seg s;

	/* MSN 1 completes, one more buffer is posted for MSN 2; MSN 1 again */
	seg_untagged(&s, U_LAST, 0, 1, 0, 8);
	raw_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_RECV, ev.type);
	EXPECT_EQ(RBUF_COOKIE, ev.cookie);
	EXPECT_EQ(1U, ev.msn);
	EXPECT_EQ(8U, ev.len);
	EXPECT_EQ(0, memcmp(self->rbuf.buf, s.b + s.hlen, 8));
	memset(self->rbuf.buf, DDP_PATTERN, 8);
	ASSERT_EQ(0, iw_ddp_post_recv(self->sfd, self->rbuf.buf, RBUF_LEN, 0, RBUF_COOKIE));
	seg_untagged(&s, U_LAST, 0, 1, 0, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED,
		     DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
}

TEST_F(raw, untagged_invalid_mo)
{
	struct seg s;

	seg_untagged(&s, U_LAST, 0, 1, RBUF_LEN, 16);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MO);
}

TEST_F(raw, untagged_too_long)
{
	struct seg s;

	seg_untagged(&s, U_LAST, 0, 1, 0, RBUF_LEN + 1);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
}

TEST_F(raw, untagged_too_long_at_an_offset)
{
	struct seg s;

	/* a non-last segment at MO 1000 that ends 1 octet past the buffer */
	seg_untagged(&s, DDP_WIRE_VERSION, 0, 1, 1000, RBUF_LEN - 1000 + 1);
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
}

TEST_F(raw, segment_shorter_than_its_header)
{
	struct seg s;

	/* no error number of its own: Local Catastrophic, see ddp_proto.c */
	seg_tagged(&s, T_LAST, self->stag, BASE_TO, 0);
	s.hlen = 5;
	s.len = 5;
	expect_error(_metadata, self, &s, DDP_WIRE_ETYPE_CATASTROPHIC,
		     DDP_WIRE_ECODE_CATASTROPHIC);
}

TEST_F(raw, error_after_valid_segments)
{
	struct ddp_event ev;
	struct seg s, s2;

	/* a placed first segment of a message, then an error in its second */
	seg_tagged(&s, DDP_FLAG_T | DDP_WIRE_VERSION, self->stag, BASE_TO + 8, 100);
	raw_send(_metadata, self, &s);
	seg_tagged(&s2, T_LAST, self->stag ^ 0x80, BASE_TO + 108, 16);
	raw_send(_metadata, self, &s2);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_ERROR, ev.type);
	EXPECT_EQ(DDP_WIRE_ETYPE_TAGGED, ev.err_type);
	EXPECT_EQ(DDP_WIRE_ECODE_T_INVALID_STAG, ev.err_code);
	EXPECT_EQ(14U, ev.hdr_len);
	EXPECT_EQ(0, memcmp(ev.hdr, s2.b, 14));
	EXPECT_EQ(30U, ev.len);
	EXPECT_EQ(0, memcmp(self->sink.buf + 8, s.b + s.hlen, 100));
	EXPECT_EQ(-1, dt_find_not(self->sink.buf + 108, SINK_LEN - 108, DDP_PATTERN));
	EXPECT_EQ(-1, dt_gbuf_guards(&self->sink));
	EXPECT_EQ(0, iw_ddp_event(self->sfd, &ev, 200));
	expect_last_send(_metadata, self, 1);
}

TEST_F(raw, peer_fin_on_a_segment_boundary)
{
	struct ddp_event ev;
	struct seg s;

	seg_tagged(&s, T_LAST, self->stag, BASE_TO, 100);
	raw_send(_metadata, self, &s);
	ASSERT_EQ(0, shutdown(self->fds[0], SHUT_WR));
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_TAGGED, ev.type);
	EXPECT_EQ(self->stag, ev.stag);
	EXPECT_EQ(BASE_TO, ev.to);
	EXPECT_EQ(100U, ev.len);
	EXPECT_EQ(0x40, ev.rsvdulp[0]);
	EXPECT_EQ(0, memcmp(self->sink.buf, s.b + s.hlen, 100));
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_PEER_CLOSED, ev.type);
	EXPECT_EQ(0, iw_ddp_event(self->sfd, &ev, 200));
	/* half-closed: this end can still send */
	expect_last_send(_metadata, self, 1);
}

TEST_F(raw, peer_fin_inside_a_message)
{
	struct ddp_event ev;
	struct seg s;

	/* L=0: the message is incomplete, but the FPDU boundary is clean */
	seg_tagged(&s, DDP_FLAG_T | DDP_WIRE_VERSION, self->stag, BASE_TO, 100);
	raw_send(_metadata, self, &s);
	ASSERT_EQ(0, dt_wait_rx_fpdus(self->fds[1], 1));
	ASSERT_EQ(0, shutdown(self->fds[0], SHUT_WR));
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_PEER_CLOSED, ev.type);
	EXPECT_EQ(0, memcmp(self->sink.buf, s.b + s.hlen, 100));
	EXPECT_EQ(0, iw_ddp_event(self->sfd, &ev, 200));
}

/*
 * LLP errors: the peer is a plain TCP socket that speaks MPA by hand, so
 * that it can break the framing. The DDP end is the Responder.
 */
FIXTURE(llp)
{
	int fds[2];	/* [0] plain TCP peer, [1] DDP end */
	int pd;
	int sfd;
	struct dt_gbuf sink;
	__u32 stag;
};

FIXTURE_SETUP(llp)
{
	self->pd = -1;
	self->sfd = -1;
	ASSERT_EQ(0, dt_raw_initiator_pair(self->fds));
	self->pd = iw_ddp_open();
	ASSERT_LE(0, self->pd);
	self->sfd = iw_ddp_bind(self->pd, self->fds[1], NQUEUES);
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, dt_gbuf_alloc(&self->sink, SINK_LEN, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->sink.buf, SINK_LEN, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, -1, &self->stag));
}

FIXTURE_TEARDOWN(llp)
{
	dt_release(&self->sfd, &self->pd, self->fds, &self->sink);
}

/* An FPDU carrying a valid tagged segment of 16 octets, with a zero CRC. */
static size_t llp_fpdu(__u8 *b, __u32 stag)
{
	struct ddp_tagged_hdr h = {
		.ctrl = T_LAST,
		.stag = htonl(stag),
		.to = htobe64(BASE_TO),
	};
	__u16 ulen = htons(sizeof(h) + 16);

	memcpy(b, &ulen, 2);
	memcpy(b + 2, &h, sizeof(h));
	dt_fill(b + 2 + sizeof(h), 16, 5);
	/* 2 + 30 octets need no pad; the CRC is 0, which is wrong here */
	memset(b + 32, 0, 4);
	return 36;
}

static void expect_llp_error(struct __test_metadata *_metadata,
			     struct _test_data_llp *self, __u8 code)
{
	struct ddp_event ev;

	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_ERROR, ev.type);
	EXPECT_EQ(DDP_WIRE_ETYPE_LLP, ev.err_type);
	EXPECT_EQ(code, ev.err_code);
	EXPECT_EQ(0U, ev.hdr_len);
	EXPECT_EQ(0, iw_ddp_event(self->sfd, &ev, 300));
	EXPECT_EQ(-1, dt_gbuf_guards(&self->sink));
}

TEST_F(llp, bad_crc)
{
	__u8 b[64];
	size_t n = llp_fpdu(b, self->stag);

	ASSERT_EQ((ssize_t)n, send(self->fds[0], b, n, 0));
	expect_llp_error(_metadata, self, MPA_ERR_CRC);
}

TEST_F(llp, fin_inside_an_fpdu)
{
	__u8 b[64];

	llp_fpdu(b, self->stag);
	ASSERT_EQ(12, send(self->fds[0], b, 12, 0));
	ASSERT_EQ(0, shutdown(self->fds[0], SHUT_WR));
	expect_llp_error(_metadata, self, MPA_ERR_TCP_CLOSED);
	/* the segment never completed: nothing may be placed */
	EXPECT_EQ(-1, dt_find_not(self->sink.map, self->sink.maplen, DDP_PATTERN));
}

TEST_HARNESS_MAIN
