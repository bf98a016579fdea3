// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/ddp_stat. Each test runs in a network namespace of its own,
 * where the counters start at zero, and checks every counter for its
 * exact value after a known sequence: messages placed, one test per RFC
 * 5041 section 7.2 error (sent by a hostile peer, a user-mode MPA socket
 * whose every send() is one DDP segment), an MPA (LLP) error, a reader
 * that does not keep up, STags registered and invalidated. The ddp
 * tracepoints are read back through tracefs.
 * Needs mpa.ko and ddp.ko loaded.
 */
#include <errno.h>
#include <sys/mount.h>
#include <string.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "tracefs_util.h"
#include "ddp_test_util.h"

static const char stat_names[][32] = {
	"DdpTaggedMsgs", "DdpTaggedOctets", "DdpUntaggedMsgs", "DdpUntaggedOctets",
	"DdpErrCatastrophic", "DdpErrTaggedInvalidStag", "DdpErrTaggedBaseBounds",
	"DdpErrTaggedStagNotAssoc", "DdpErrTaggedToWrap", "DdpErrTaggedInvalidDv",
	"DdpErrUntaggedInvalidQn", "DdpErrUntaggedNoBuffer", "DdpErrUntaggedMsnRange",
	"DdpErrUntaggedInvalidMo", "DdpErrUntaggedTooLong", "DdpErrUntaggedInvalidDv",
	"DdpErrLlp", "DdpInvalidStagAttempts", "DdpStagRegistered", "DdpStagInvalidated",
};

#define NSTATS ARRAY_SIZE(stat_names)

enum {
	T_MSGS, T_OCTETS, U_MSGS, U_OCTETS, E_CATA,
	E_T_STAG, E_T_BOUNDS, E_T_ASSOC, E_T_WRAP, E_T_DV,
	E_U_QN, E_U_NOBUF, E_U_MSN, E_U_MO, E_U_LONG, E_U_DV,
	E_LLP, INVAL_STAG, STAG_REG, STAG_INVAL,
};

#define NQUEUES		3
#define SINK_LEN	8192
#define RBUF_LEN	1024
#define BASE_TO		0x100000ULL
#define T_LAST		(DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION)
#define U_LAST		(DDP_FLAG_L | DDP_WIRE_VERSION)

/* Reads /proc/net/ddp_stat; every name must be there, in this order. */
static int read_stats(unsigned long *v)
{
	return mt_read_proc_stats("/proc/net/ddp_stat", stat_names, NSTATS, v);
}

struct seg {
	__u8	b[2048];
	size_t	len;
};

static void seg_tagged(struct seg *s, __u8 ctrl, __u32 stag, __u64 to, size_t plen)
{
	struct ddp_tagged_hdr h = {
		.ctrl = ctrl,
		.stag = htonl(stag),
		.to = htobe64(to),
	};

	memcpy(s->b, &h, sizeof(h));
	s->len = sizeof(h) + plen;
	dt_fill(s->b + sizeof(h), plen, stag ^ (__u32)to);
}

static void seg_untagged(struct seg *s, __u8 ctrl, __u32 qn, __u32 msn, __u32 mo,
			 size_t plen)
{
	struct ddp_untagged_hdr h = {
		.ctrl = ctrl,
		.qn = htonl(qn),
		.msn = htonl(msn),
		.mo = htonl(mo),
	};

	memcpy(s->b, &h, sizeof(h));
	s->len = sizeof(h) + plen;
	dt_fill(s->b + sizeof(h), plen, qn ^ msn ^ mo);
}

FIXTURE(ddp)
{
	int fds[2];	/* [0] user-mode MPA peer, [1] DDP end */
	int pd;
	int sfd;
	struct dt_gbuf sink;
	struct dt_gbuf rbuf;
	__u32 stag;
	__u64 fpdus;	/* FPDUs sent by the peer so far */
	unsigned long v[NSTATS];
};

static void env_setup(struct __test_metadata *_metadata, struct _test_data_ddp *self)
{
	self->pd = -1;
	self->sfd = -1;
	ASSERT_EQ(0, mt_new_netns());
	ASSERT_EQ(0, read_stats(self->v));
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, DDP_TMO_MS));
	ASSERT_EQ(0, dt_ddp_end(self->fds[1], NQUEUES, &self->pd, &self->sfd, &self->sink,
				SINK_LEN, BASE_TO, &self->stag, &self->rbuf, RBUF_LEN));
	/* one buffer on queue 0 (MSN 1), none on queues 1 and 2 */
	ASSERT_EQ(0, iw_ddp_post_recv(self->sfd, self->rbuf.buf, RBUF_LEN, 0, 1));
	self->fpdus = 0;
}

static void env_teardown(struct _test_data_ddp *self)
{
	dt_release(&self->sfd, &self->pd, self->fds, &self->sink);
	dt_gbuf_free(&self->rbuf);
}

FIXTURE_SETUP(ddp)
{
	env_setup(_metadata, self);
}

FIXTURE_TEARDOWN(ddp)
{
	env_teardown(self);
}

static void peer_send(struct __test_metadata *_metadata, struct _test_data_ddp *self,
		      const struct seg *s)
{
	ASSERT_EQ((ssize_t)s->len, send(self->fds[0], s->b, s->len, 0));
	self->fpdus++;
}

/* Every counter is as in @want. */
static void expect_stats(struct __test_metadata *_metadata, const unsigned long *want)
{
	unsigned long v[NSTATS];
	unsigned int i;

	ASSERT_EQ(0, read_stats(v));
	for (i = 0; i < NSTATS; i++)
		EXPECT_EQ(want[i], v[i]) TH_LOG("%s", stat_names[i]);
}

TEST_F(ddp, fresh_namespace_is_zero)
{
	unsigned int i;

	for (i = 0; i < NSTATS; i++)
		EXPECT_EQ(0, self->v[i]) TH_LOG("%s", stat_names[i]);
}

TEST_F(ddp, messages_placed)
{
	unsigned long want[NSTATS] = { [STAG_REG] = 1 };
	struct ddp_event ev;
	struct seg s;

	/* a tagged message in three segments: 100 + 200 + 3 octets */
	seg_tagged(&s, DDP_FLAG_T | DDP_WIRE_VERSION, self->stag, BASE_TO, 100);
	peer_send(_metadata, self, &s);
	seg_tagged(&s, DDP_FLAG_T | DDP_WIRE_VERSION, self->stag, BASE_TO + 100, 200);
	peer_send(_metadata, self, &s);
	seg_tagged(&s, T_LAST, self->stag, BASE_TO + 300, 3);
	peer_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_TAGGED, ev.type);
	ASSERT_EQ(303U, ev.len);
	/* a zero-length tagged message */
	seg_tagged(&s, T_LAST, self->stag, BASE_TO, 0);
	peer_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_TAGGED, ev.type);
	/* an untagged message in two segments: 500 + 24 octets */
	seg_untagged(&s, DDP_WIRE_VERSION, 0, 1, 0, 500);
	peer_send(_metadata, self, &s);
	seg_untagged(&s, U_LAST, 0, 1, 500, 24);
	peer_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_RECV, ev.type);
	ASSERT_EQ(524U, ev.len);

	want[T_MSGS] = 2;
	want[T_OCTETS] = 303;
	want[U_MSGS] = 1;
	want[U_OCTETS] = 524;
	expect_stats(_metadata, want);
}

TEST_F(ddp, stags_registered_and_invalidated)
{
	unsigned long want[NSTATS] = { 0 };
	__u32 stag[3];
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->sink.buf, SINK_LEN, 0,
					   DDP_ACCESS_REMOTE_WRITE, i ? -1 : self->sfd,
					   &stag[i]));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, stag[1]));
	/* twice, and an STag never registered: attempts, not invalidations */
	EXPECT_EQ(-1, iw_ddp_invalidate(self->pd, stag[1]));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, iw_ddp_invalidate(self->pd, stag[2] ^ 0x80));
	EXPECT_EQ(ENOENT, errno);
	want[STAG_REG] = 4;
	want[STAG_INVAL] = 1;
	want[INVAL_STAG] = 2;
	expect_stats(_metadata, want);

	/* the stream takes the STag bound to it, the PD the other two */
	close(self->sfd);
	self->sfd = -1;
	want[STAG_INVAL] = 2;
	expect_stats(_metadata, want);
	close(self->pd);
	self->pd = -1;
	want[STAG_INVAL] = 4;
	expect_stats(_metadata, want);
}

/* One per RFC 5041 section 7.2 error DDP reports for a peer's segment. */
enum { OWN, UNKNOWN, OTHER };	/* which STag a tagged segment names */

FIXTURE(err)
{
	struct _test_data_ddp d;
};

FIXTURE_VARIANT(err)
{
	int field;	/* the counter of the error */
	__u8 type;
	__u8 code;
	__u8 ctrl;	/* of the bad segment */
	int stag;	/* OWN, UNKNOWN or OTHER */
	__u64 to;
	__u32 qn, msn, mo;
	size_t plen;
	size_t cut;	/* if not 0, only so many octets of the segment */
	__u64 reg_to;	/* OTHER: base TO of its buffer */
	bool stream2;	/* OTHER: bound to a second stream */
	bool attempt;	/* DdpInvalidStagAttempts counts it too */
};

FIXTURE_VARIANT_ADD(err, short_segment) {
	.field = E_CATA, .type = DDP_WIRE_ETYPE_CATASTROPHIC,
	.code = DDP_WIRE_ECODE_CATASTROPHIC, .ctrl = T_LAST, .to = BASE_TO,
	.cut = 5,
};

FIXTURE_VARIANT_ADD(err, t_invalid_stag) {
	.field = E_T_STAG, .type = DDP_WIRE_ETYPE_TAGGED,
	.code = DDP_WIRE_ECODE_T_INVALID_STAG, .ctrl = T_LAST, .stag = UNKNOWN,
	.to = BASE_TO, .plen = 16, .attempt = true,
};

FIXTURE_VARIANT_ADD(err, t_base_bounds) {
	.field = E_T_BOUNDS, .type = DDP_WIRE_ETYPE_TAGGED,
	.code = DDP_WIRE_ECODE_T_BASE_BOUNDS, .ctrl = T_LAST, .to = BASE_TO - 1,
	.plen = 16,
};

FIXTURE_VARIANT_ADD(err, t_stag_not_assoc) {
	.field = E_T_ASSOC, .type = DDP_WIRE_ETYPE_TAGGED,
	.code = DDP_WIRE_ECODE_T_STAG_NOT_ASSOC, .ctrl = T_LAST, .stag = OTHER,
	.to = BASE_TO, .plen = 16, .reg_to = BASE_TO, .stream2 = true,
	.attempt = true,
};

FIXTURE_VARIANT_ADD(err, t_to_wrap) {
	.field = E_T_WRAP, .type = DDP_WIRE_ETYPE_TAGGED,
	.code = DDP_WIRE_ECODE_T_TO_WRAP, .ctrl = T_LAST, .stag = OTHER,
	.to = -8ULL, .plen = 16, .reg_to = -(__u64)SINK_LEN,
};

FIXTURE_VARIANT_ADD(err, t_invalid_dv) {
	.field = E_T_DV, .type = DDP_WIRE_ETYPE_TAGGED,
	.code = DDP_WIRE_ECODE_T_INVALID_DV, .ctrl = DDP_FLAG_T | DDP_FLAG_L | 2,
	.to = BASE_TO, .plen = 16,
};

FIXTURE_VARIANT_ADD(err, u_invalid_qn) {
	.field = E_U_QN, .type = DDP_WIRE_ETYPE_UNTAGGED,
	.code = DDP_WIRE_ECODE_U_INVALID_QN, .ctrl = U_LAST, .qn = NQUEUES,
	.msn = 1, .plen = 16,
};

FIXTURE_VARIANT_ADD(err, u_no_buffer) {
	.field = E_U_NOBUF, .type = DDP_WIRE_ETYPE_UNTAGGED,
	.code = DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF, .ctrl = U_LAST, .qn = 1,
	.msn = 1, .plen = 16,
};

FIXTURE_VARIANT_ADD(err, u_msn_range) {
	.field = E_U_MSN, .type = DDP_WIRE_ETYPE_UNTAGGED,
	.code = DDP_WIRE_ECODE_U_INVALID_MSN_RANGE, .ctrl = U_LAST, .msn = 5,
	.plen = 16,
};

FIXTURE_VARIANT_ADD(err, u_invalid_mo) {
	.field = E_U_MO, .type = DDP_WIRE_ETYPE_UNTAGGED,
	.code = DDP_WIRE_ECODE_U_INVALID_MO, .ctrl = U_LAST, .msn = 1,
	.mo = RBUF_LEN, .plen = 16,
};

FIXTURE_VARIANT_ADD(err, u_too_long) {
	.field = E_U_LONG, .type = DDP_WIRE_ETYPE_UNTAGGED,
	.code = DDP_WIRE_ECODE_U_MSG_TOO_LONG, .ctrl = U_LAST, .msn = 1,
	.plen = RBUF_LEN + 1,
};

FIXTURE_VARIANT_ADD(err, u_invalid_dv) {
	.field = E_U_DV, .type = DDP_WIRE_ETYPE_UNTAGGED,
	.code = DDP_WIRE_ECODE_U_INVALID_DV, .ctrl = DDP_FLAG_L | 3, .msn = 1,
	.plen = 16,
};

FIXTURE_SETUP(err)
{
	env_setup(_metadata, &self->d);
}

FIXTURE_TEARDOWN(err)
{
	env_teardown(&self->d);
}

/*
 * The peer's bad segment: exactly its error is counted, once; later
 * valid segments are dropped and not counted as placed.
 */
TEST_F(err, peer_error)
{
	unsigned long want[NSTATS] = { [STAG_REG] = 1 };
	struct _test_data_ddp *d = &self->d;
	int fds2[2] = { -1, -1 }, s2 = -1;
	__u32 stag = d->stag;
	struct ddp_event ev;
	struct seg s;

	if (variant->stream2) {
		/* a second stream of the same PD */
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds2, 0, 0, DDP_TMO_MS));
		s2 = iw_ddp_bind(d->pd, fds2[1], 1);
		ASSERT_LE(0, s2);
	}
	if (variant->stag == OTHER) {
		/* bound to that stream, or at the very top of the TO space */
		ASSERT_EQ(0, iw_ddp_reg_mr(d->pd, d->sink.buf, SINK_LEN, variant->reg_to,
					   DDP_ACCESS_REMOTE_WRITE, s2, &stag));
		want[STAG_REG]++;
	} else if (variant->stag == UNKNOWN) {
		stag += 7 << 8;
	}
	want[INVAL_STAG] = variant->attempt;
	if (variant->ctrl & DDP_FLAG_T)
		seg_tagged(&s, variant->ctrl, stag, variant->to, variant->plen);
	else
		seg_untagged(&s, variant->ctrl, variant->qn, variant->msn,
			     variant->mo, variant->plen);
	if (variant->cut)
		s.len = variant->cut;
	peer_send(_metadata, d, &s);
	ASSERT_EQ(1, iw_ddp_event(d->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_ERROR, ev.type);
	ASSERT_EQ(variant->type, ev.err_type);
	ASSERT_EQ(variant->code, ev.err_code);
	/* dropped: counted neither as placed nor as another error */
	seg_tagged(&s, T_LAST, d->stag, BASE_TO, 64);
	peer_send(_metadata, d, &s);
	seg_tagged(&s, T_LAST, d->stag + (7 << 8), BASE_TO, 64);
	peer_send(_metadata, d, &s);
	seg_untagged(&s, U_LAST, 0, 1, 0, 32);
	peer_send(_metadata, d, &s);
	ASSERT_EQ(0, dt_wait_rx_fpdus(d->fds[1], d->fpdus));

	want[variant->field] = 1;
	expect_stats(_metadata, want);
	if (s2 >= 0)
		close(s2);
	if (fds2[0] >= 0)
		iw_close_pair(fds2);
}

/*
 * A reader that does not keep up: the ring's last slot takes a local
 * catastrophic error (0x0/0x00) and the stream stops. The message whose
 * event did not fit was placed; the ones after it are dropped.
 */
TEST_F(ddp, reader_overflow_is_catastrophic)
{
	unsigned long want[NSTATS] = { [STAG_REG] = 1, [E_CATA] = 1 };
	struct seg s;
	int i;

	seg_tagged(&s, T_LAST, self->stag, BASE_TO, 8);
	for (i = 0; i < 1030; i++)
		peer_send(_metadata, self, &s);
	ASSERT_EQ(0, dt_wait_rx_fpdus(self->fds[1], self->fpdus));
	want[T_MSGS] = 1024;
	want[T_OCTETS] = 1024 * 8;
	expect_stats(_metadata, want);
}

/*
 * An MPA error (here a bad CRC from a raw Initiator) reaches DDP as an
 * LLP error, type 0x3; nothing is placed.
 */
TEST(llp_error)
{
	unsigned long want[NSTATS] = { [E_LLP] = 1 };
	struct ddp_event ev;
	__u8 fpdu[28] = { 0 };
	struct seg s;
	int fds[2], pd, sfd;

	ASSERT_EQ(0, mt_new_netns());
	ASSERT_EQ(0, dt_raw_initiator_pair(fds));
	pd = iw_ddp_open();
	ASSERT_LE(0, pd);
	sfd = iw_ddp_bind(pd, fds[1], 1);
	ASSERT_LE(0, sfd);
	/* ULPDU_Length, a 20-octet ULPDU, 2 octets of pad, a wrong CRC */
	seg_untagged(&s, U_LAST, 0, 1, 0, 2);
	fpdu[1] = s.len;
	memcpy(fpdu + 2, s.b, s.len);
	memcpy(fpdu + 24, "\xde\xad\xbe\xef", 4);
	ASSERT_EQ(0, iw_writen(fds[0], fpdu, sizeof(fpdu)));
	ASSERT_EQ(1, iw_ddp_event(sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_ERROR, ev.type);
	ASSERT_EQ(DDP_WIRE_ETYPE_LLP, ev.err_type);
	ASSERT_EQ(MPA_ERR_CRC, ev.err_code);
	expect_stats(_metadata, want);
	close(sfd);
	close(pd);
	iw_close_pair(fds);
}

/* ---- tracepoints ---- */

static void expect_trace(struct __test_metadata *_metadata, const char *trace,
			 const char *want)
{
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s' in\n%s", want, trace);
}

/*
 * Every ddp event: an STag registered, a tagged and an untagged segment
 * placed, the STag invalidated, a segment refused.
 */
TEST_F(ddp, tracepoints)
{
	const char *dir = tracefs();
	char want[160], *trace;
	struct ddp_event ev;
	struct seg s;
	__u32 stag;

	ASSERT_NE(NULL, dir);
	ASSERT_EQ(0, write_file(dir, "events/ddp/enable", "1"));
	ASSERT_EQ(0, write_file(dir, "trace", ""));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->sink.buf, 4096, 0x5000,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
	seg_tagged(&s, T_LAST, stag, 0x5010, 100);
	peer_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_TAGGED, ev.type);
	seg_untagged(&s, DDP_WIRE_VERSION, 0, 1, 24, 40);
	peer_send(_metadata, self, &s);
	ASSERT_EQ(0, dt_wait_rx_fpdus(self->fds[1], self->fpdus));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, stag));
	seg_untagged(&s, U_LAST, 2, 1, 0, 16);
	peer_send(_metadata, self, &s);
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_ERROR, ev.type);
	ASSERT_EQ(0, write_file(dir, "events/ddp/enable", "0"));
	trace = read_trace(dir);
	ASSERT_NE(NULL, trace);

	snprintf(want, sizeof(want), " stag=0x%08x to=0x5000 len=4096", stag);
	expect_trace(_metadata, trace, want);
	expect_trace(_metadata, trace, "ddp_stag_reg: pd=");
	expect_trace(_metadata, trace, "ddp_stag_inval: pd=");
	snprintf(want, sizeof(want), " tagged stag=0x%x msn=0 to=0x5010 len=100 last\n",
		 stag);
	expect_trace(_metadata, trace, want);
	expect_trace(_metadata, trace, " untagged qn=0x0 msn=1 mo=0x18 len=40\n");
	snprintf(want, sizeof(want), " type=0x%x code=0x%02x len=%zu\n",
		 DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF,
		 s.len);
	expect_trace(_metadata, trace, want);
	expect_trace(_metadata, trace, "ddp_place: stream=");
	expect_trace(_metadata, trace, "ddp_refuse: stream=");
	free(trace);
}

TEST_HARNESS_MAIN
