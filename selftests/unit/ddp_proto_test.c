// SPDX-License-Identifier: GPL-2.0
/*
 * User-space unit tests of the pure DDP protocol logic (ddp/ddp_proto.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <asm/unaligned.h>
#include "ddp_proto.h"

#include "kselftest_harness.h"

#define U64_MAX_	(~(u64)0)

/* ret is -EINVAL and err holds type/code */
#define ASSERT_DDP_ERR(ret, e, t, c) do {	\
	const struct ddp_err *_e = &(e);	\
						\
	ASSERT_EQ(-EINVAL, (ret));		\
	ASSERT_EQ((t), _e->type);		\
	ASSERT_EQ((c), _e->code);		\
} while (0)

#define STREAM	7

static const struct ddp_region_view region = {
	.valid = true,
	.stream_or_pd = STREAM,
	.base_to = 0x1000,
	.len = 0x1000,
	.access = DDP_VIEW_WRITE,
};

static struct ddp_seg tseg(u64 to, u32 len)
{
	struct ddp_seg s = {
		.tagged = true, .last = true, .dv = DDP_WIRE_VERSION,
		.stag = 0x1234, .to = to, .payload_len = len,
	};

	return s;
}

static const struct ddp_uq_view queue = {
	.exists = true,
	.expected_msn = 5,
	.nbuf_posted = 3,
	.buf_len = 100,
};

static struct ddp_seg useg(u32 msn, u32 mo, u32 len)
{
	struct ddp_seg s = {
		.last = true, .dv = DDP_WIRE_VERSION,
		.qn = 0, .msn = msn, .mo = mo, .payload_len = len,
	};

	return s;
}

/* ---- header encoding and decoding ---- */

/* RFC 5044 Figure 5: the 42-octet ULPDU, an untagged DDP segment */
static const u8 fig5_ulpdu[42] = {
	0x41,				/* untagged, last, DV 1 */
	0x43, 0x00, 0x00, 0x00, 0x00,	/* RsvdULP (RDMAP Send ctrl) */
	0x00, 0x00, 0x00, 0x00,		/* QN 0 */
	0x00, 0x00, 0x00, 0x01,		/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,		/* MO 0 */
	/* 24 octets of zeros */
};

TEST(header_sizes)
{
	ASSERT_EQ(14, sizeof(struct ddp_tagged_hdr));
	ASSERT_EQ(18, sizeof(struct ddp_untagged_hdr));
	ASSERT_EQ(14, DDP_TAGGED_HDR_LEN);
	ASSERT_EQ(18, DDP_UNTAGGED_HDR_LEN);
	ASSERT_EQ(1486, ddp_seg_payload_max(1500, true));
	ASSERT_EQ(1482, ddp_seg_payload_max(1500, false));
	ASSERT_EQ(114, ddp_seg_payload_max(128, true));
	ASSERT_EQ(110, ddp_seg_payload_max(128, false));
	ASSERT_EQ(0, ddp_seg_payload_max(14, true));
	ASSERT_EQ(1, ddp_seg_payload_max(15, true));
	ASSERT_EQ(0, ddp_seg_payload_max(18, false));
	ASSERT_EQ(0, ddp_seg_payload_max(17, false));
	ASSERT_EQ(0, ddp_seg_payload_max(0, true));
	ASSERT_EQ(65535 - 18, ddp_seg_payload_max(65535, false));
}

TEST(fig5_parse)
{
	static const u8 rsvdulp[5] = { 0x43, 0, 0, 0, 0 };
	struct ddp_err e = { 0xff, 0xff };
	struct ddp_seg s;

	ASSERT_EQ(0, ddp_hdr_parse(fig5_ulpdu, sizeof(fig5_ulpdu), &s, &e));
	ASSERT_EQ(0xff, e.type);	/* untouched on success */
	ASSERT_FALSE(s.tagged);
	ASSERT_TRUE(s.last);
	ASSERT_EQ(1, s.dv);
	ASSERT_EQ(0, memcmp(s.rsvdulp_u, rsvdulp, 5));
	ASSERT_EQ(0, s.qn);
	ASSERT_EQ(1, s.msn);
	ASSERT_EQ(0, s.mo);
	ASSERT_EQ(24, s.payload_len);
	ASSERT_TRUE(s.payload == fig5_ulpdu + 18);
	ASSERT_EQ(0, s.stag);
	ASSERT_EQ(0, s.to);
}

TEST(fig5_build)
{
	static const u8 rsvdulp[5] = { 0x43, 0, 0, 0, 0 };
	struct ddp_untagged_hdr h;

	memset(&h, 0xee, sizeof(h));
	ddp_untagged_hdr_build(&h, DDP_WIRE_VERSION, true, rsvdulp, 0, 1, 0);
	ASSERT_EQ(0, memcmp(&h, fig5_ulpdu, 18));
}

TEST(untagged_build_bytes)
{
	static const u8 rsvdulp[5] = { 0xa1, 0xa2, 0xa3, 0xa4, 0xa5 };
	static const u8 want[18] = {
		0x01, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5,
		0x01, 0x02, 0x03, 0x04,		/* QN */
		0xff, 0xff, 0xff, 0xff,		/* MSN */
		0x80, 0x00, 0x00, 0x10,		/* MO */
	};
	struct ddp_untagged_hdr h;
	struct ddp_err e;
	struct ddp_seg s;

	memset(&h, 0xee, sizeof(h));
	ddp_untagged_hdr_build(&h, DDP_WIRE_VERSION, false, rsvdulp, 0x01020304,
			       0xffffffff, 0x80000010);
	ASSERT_EQ(0, memcmp(&h, want, 18));
	ddp_untagged_hdr_build(&h, DDP_WIRE_VERSION, true, rsvdulp, 0x01020304,
			       0xffffffff, 0x80000010);
	ASSERT_EQ(0x41, ((u8 *)&h)[0]);
	ASSERT_EQ(0, memcmp((u8 *)&h + 1, want + 1, 17));

	ASSERT_EQ(0, ddp_hdr_parse(want, 18, &s, &e));
	ASSERT_FALSE(s.tagged);
	ASSERT_FALSE(s.last);
	ASSERT_EQ(0, memcmp(s.rsvdulp_u, rsvdulp, 5));
	ASSERT_EQ(0x01020304, s.qn);
	ASSERT_EQ(0xffffffff, s.msn);
	ASSERT_EQ(0x80000010, s.mo);
	ASSERT_EQ(0, s.payload_len);
	ASSERT_TRUE(s.payload == want + 18);
}

/* DV=0 after an MPA revision 0 startup (RFC 5044 Appendix C) */
TEST(build_dv0)
{
	static const u8 rsvdulp[5] = { 0 };
	struct ddp_untagged_hdr uh;
	struct ddp_tagged_hdr th;
	struct ddp_err e;
	struct ddp_seg s;

	ddp_untagged_hdr_build(&uh, 0, true, rsvdulp, 2, 7, 0);
	ASSERT_EQ(0x40, ((u8 *)&uh)[0]);
	ddp_untagged_hdr_build(&uh, 0, false, rsvdulp, 2, 7, 0);
	ASSERT_EQ(0x00, ((u8 *)&uh)[0]);
	ASSERT_EQ(0, ddp_hdr_parse_dv(&uh, sizeof(uh), 0, &s, &e));
	ASSERT_EQ(0, s.dv);
	ASSERT_EQ(2, s.qn);
	ASSERT_EQ(7, s.msn);
	/* a DV=1 stream refuses it */
	ASSERT_EQ(-EINVAL, ddp_hdr_parse(&uh, sizeof(uh), &s, &e));
	ASSERT_EQ(DDP_WIRE_ETYPE_UNTAGGED, e.type);
	ASSERT_EQ(DDP_WIRE_ECODE_U_INVALID_DV, e.code);

	ddp_tagged_hdr_build(&th, 0, true, 0x5a, 0x1234, 0x8000000000000001ULL);
	ASSERT_EQ(0xc0, ((u8 *)&th)[0]);
	ddp_tagged_hdr_build(&th, 0, false, 0x5a, 0x1234, 0x8000000000000001ULL);
	ASSERT_EQ(0x80, ((u8 *)&th)[0]);
	ASSERT_EQ(0, ddp_hdr_parse_dv(&th, sizeof(th), 0, &s, &e));
	ASSERT_EQ(0x1234, s.stag);
	ASSERT_EQ(0x8000000000000001ULL, s.to);
	ASSERT_EQ(-EINVAL, ddp_hdr_parse(&th, sizeof(th), &s, &e));
	ASSERT_EQ(DDP_WIRE_ETYPE_TAGGED, e.type);
	ASSERT_EQ(DDP_WIRE_ECODE_T_INVALID_DV, e.code);
}

TEST(tagged_build_bytes)
{
	static const u8 want[14] = {
		0xc1, 0xa5,
		0xde, 0xad, 0xbe, 0xef,				/* STag */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* TO */
	};
	u8 buf[14 + 3] = { 0 };
	struct ddp_tagged_hdr h;
	struct ddp_err e;
	struct ddp_seg s;

	memset(&h, 0xee, sizeof(h));
	ddp_tagged_hdr_build(&h, DDP_WIRE_VERSION, true, 0xa5, 0xdeadbeef,
			     0x0102030405060708ULL);
	ASSERT_EQ(0, memcmp(&h, want, 14));
	ddp_tagged_hdr_build(&h, DDP_WIRE_VERSION, false, 0xa5, 0xdeadbeef,
			     0x0102030405060708ULL);
	ASSERT_EQ(0x81, ((u8 *)&h)[0]);
	ASSERT_EQ(0, memcmp((u8 *)&h + 1, want + 1, 13));

	/* unaligned, with 3 octets of payload */
	memcpy(buf, want, 14);
	buf[14] = 1;
	buf[15] = 2;
	buf[16] = 3;
	ASSERT_EQ(0, ddp_hdr_parse(buf, sizeof(buf), &s, &e));
	ASSERT_TRUE(s.tagged);
	ASSERT_TRUE(s.last);
	ASSERT_EQ(1, s.dv);
	ASSERT_EQ(0xa5, s.rsvdulp_t);
	ASSERT_EQ(0xdeadbeef, s.stag);
	ASSERT_EQ(0x0102030405060708ULL, s.to);
	ASSERT_EQ(3, s.payload_len);
	ASSERT_TRUE(s.payload == buf + 14);
	ASSERT_EQ(0, s.qn);
	ASSERT_EQ(0, s.msn);
	ASSERT_EQ(0, s.mo);

	/* high bits of TO */
	ddp_tagged_hdr_build(&h, DDP_WIRE_VERSION, true, 0, 0, 0xfedcba9876543210ULL);
	ASSERT_EQ(0, ddp_hdr_parse(&h, 14, &s, &e));
	ASSERT_EQ(0xfedcba9876543210ULL, s.to);
	ASSERT_EQ(0, s.payload_len);
}

TEST(parse_ignores_rsvd_bits)
{
	u8 t[14] = { 0xc1 | DDP_FLAG_RSVD, 0x11, 0, 0, 0, 9 };
	u8 u[18] = { 0x01 | 0x04 };
	struct ddp_err e;
	struct ddp_seg s;

	ASSERT_EQ(0, ddp_hdr_parse(t, 14, &s, &e));
	ASSERT_TRUE(s.tagged);
	ASSERT_TRUE(s.last);
	ASSERT_EQ(1, s.dv);
	ASSERT_EQ(9, s.stag);
	ASSERT_EQ(0, ddp_hdr_parse(u, 18, &s, &e));
	ASSERT_FALSE(s.tagged);
	ASSERT_FALSE(s.last);
}

TEST(parse_bad_version)
{
	u8 b[32] = { 0 };
	struct ddp_err e;
	struct ddp_seg s;
	u8 dv;

	for (dv = 0; dv < 4; dv++) {
		if (dv == DDP_WIRE_VERSION)
			continue;
		b[0] = DDP_FLAG_T | DDP_FLAG_L | dv;
		ASSERT_DDP_ERR(ddp_hdr_parse(b, 32, &s, &e), e,
			       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_DV);
		ASSERT_TRUE(s.tagged);
		ASSERT_EQ(dv, s.dv);
		/* the version is checked before the length */
		ASSERT_DDP_ERR(ddp_hdr_parse(b, 1, &s, &e), e,
			       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_DV);
		b[0] = dv;
		ASSERT_DDP_ERR(ddp_hdr_parse(b, 32, &s, &e), e,
			       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_DV);
		ASSERT_FALSE(s.tagged);
		ASSERT_FALSE(s.last);
		ASSERT_DDP_ERR(ddp_hdr_parse(b, 17, &s, &e), e,
			       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_DV);
	}
}

TEST(parse_truncated)
{
	u8 b[18] = { 0 };
	struct ddp_err e;
	struct ddp_seg s;
	u32 len;
	u8 *p;

	ASSERT_DDP_ERR(ddp_hdr_parse(b, 0, &s, &e), e,
		       DDP_WIRE_ETYPE_CATASTROPHIC, DDP_WIRE_ECODE_CATASTROPHIC);
	for (len = 1; len < 14; len++) {
		/* exact-size copy so that ASan sees an over-read */
		p = malloc(len);
		ASSERT_NE(NULL, p);
		memset(p, 0, len);
		p[0] = 0xc1;
		ASSERT_DDP_ERR(ddp_hdr_parse(p, len, &s, &e), e,
			       DDP_WIRE_ETYPE_CATASTROPHIC, DDP_WIRE_ECODE_CATASTROPHIC);
		ASSERT_TRUE(s.tagged);
		ASSERT_TRUE(s.last);
		ASSERT_EQ(NULL, s.payload);
		ASSERT_EQ(0, s.payload_len);
		free(p);
	}
	for (len = 1; len < 18; len++) {
		p = malloc(len);
		ASSERT_NE(NULL, p);
		memset(p, 0, len);
		p[0] = 0x41;
		ASSERT_DDP_ERR(ddp_hdr_parse(p, len, &s, &e), e,
			       DDP_WIRE_ETYPE_CATASTROPHIC, DDP_WIRE_ECODE_CATASTROPHIC);
		ASSERT_FALSE(s.tagged);
		ASSERT_EQ(0, s.payload_len);
		free(p);
	}
	b[0] = 0xc1;
	ASSERT_EQ(0, ddp_hdr_parse(b, 14, &s, &e));
	ASSERT_EQ(0, s.payload_len);
	b[0] = 0x41;
	ASSERT_EQ(0, ddp_hdr_parse(b, 18, &s, &e));
	ASSERT_EQ(0, s.payload_len);
}

/* ---- tagged checks (RFC 5041 section 7.1) ---- */

TEST(tagged_ok)
{
	struct ddp_err e = { 0xff, 0xff };
	struct ddp_seg s;

	s = tseg(0x1000, 0x1000);	/* the whole buffer */
	ASSERT_EQ(0, ddp_check_tagged(&s, &region, STREAM, &e));
	s = tseg(0x1000, 1);
	ASSERT_EQ(0, ddp_check_tagged(&s, &region, STREAM, &e));
	s = tseg(0x1fff, 1);		/* last octet */
	ASSERT_EQ(0, ddp_check_tagged(&s, &region, STREAM, &e));
	ASSERT_EQ(0xff, e.type);
}

TEST(tagged_zero_length_not_checked)
{
	struct ddp_region_view r = region;
	struct ddp_err e;
	struct ddp_seg s = tseg(U64_MAX_, 0);

	ASSERT_EQ(0, ddp_check_tagged(&s, NULL, STREAM, &e));
	r.valid = false;
	ASSERT_EQ(0, ddp_check_tagged(&s, &r, STREAM + 1, &e));
	s.to = 0;
	ASSERT_EQ(0, ddp_check_tagged(&s, &region, STREAM, &e));
}

TEST(tagged_invalid_stag)
{
	struct ddp_region_view r = region;
	struct ddp_err e;
	struct ddp_seg s = tseg(0x1000, 10);

	ASSERT_DDP_ERR(ddp_check_tagged(&s, NULL, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	r.valid = false;
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	/* no remote write access: the buffer does not allow placement */
	r = region;
	r.access = 0;
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	r.access = ~DDP_VIEW_WRITE;
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
}

TEST(tagged_not_associated)
{
	struct ddp_err e;
	struct ddp_seg s = tseg(0x1000, 10);

	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM + 1, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_STAG_NOT_ASSOC);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, 0, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_STAG_NOT_ASSOC);
}

TEST(tagged_base_bounds)
{
	struct ddp_err e;
	struct ddp_seg s;

	s = tseg(0xfff, 1);		/* one octet below the base */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
	s = tseg(0, 0x2000);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
	s = tseg(0x1000, 0x1001);	/* one octet past the end */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
	s = tseg(0x1fff, 2);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
	s = tseg(0x2000, 1);		/* TO itself past the end */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
	s = tseg(0xffffffff00000000ULL, 1);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

TEST(tagged_to_wrap)
{
	struct ddp_region_view top = region, all = region;
	struct ddp_err e;
	struct ddp_seg s;

	/* digest conformance case 33 */
	s = tseg(U64_MAX_ - 9, 20);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &region, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);

	/* a buffer covering every TO but the last one */
	all.base_to = 0;
	all.len = U64_MAX_;
	s = tseg(U64_MAX_ - 9, 20);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &all, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	s = tseg(U64_MAX_, 1);		/* sum 2^64 */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &all, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	s = tseg(U64_MAX_ - 99, 100);	/* sum exactly 2^64 wraps to 0 */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &all, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	s = tseg(U64_MAX_ - 100, 100);	/* sum 2^64 - 1: no wrap, fits */
	ASSERT_EQ(0, ddp_check_tagged(&s, &all, STREAM, &e));
	s = tseg(U64_MAX_ - 0xffffffffULL, 0xffffffff);
	ASSERT_EQ(0, ddp_check_tagged(&s, &all, STREAM, &e));
	s = tseg(U64_MAX_ - 0xfffffffeULL, 0xffffffff);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &all, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	s = tseg(0, 0xffffffff);
	ASSERT_EQ(0, ddp_check_tagged(&s, &all, STREAM, &e));

	/* a buffer whose end, base + len, is exactly 2^64 */
	top.base_to = U64_MAX_ - 99;
	top.len = 100;
	s = tseg(U64_MAX_ - 99, 99);
	ASSERT_EQ(0, ddp_check_tagged(&s, &top, STREAM, &e));
	s = tseg(U64_MAX_ - 1, 1);
	ASSERT_EQ(0, ddp_check_tagged(&s, &top, STREAM, &e));
	s = tseg(U64_MAX_, 1);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &top, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	s = tseg(U64_MAX_ - 100, 1);	/* below the base */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &top, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

TEST(tagged_check_order)
{
	struct ddp_region_view r = region;
	struct ddp_err e;
	struct ddp_seg s = tseg(U64_MAX_, 2);	/* wraps, out of bounds */

	/* unknown STag beats everything */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, NULL, STREAM + 1, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	/* invalidated STag beats the stream association */
	r.valid = false;
	r.access = 0;
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM + 1, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	/* association beats access rights, wrap and bounds */
	r.valid = true;
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM + 1, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_STAG_NOT_ASSOC);
	/* access rights beat wrap and bounds */
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_INVALID_STAG);
	/* wrap beats bounds */
	r.access = DDP_VIEW_WRITE;
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	s = tseg(0, 2);
	ASSERT_DDP_ERR(ddp_check_tagged(&s, &r, STREAM, &e), e,
		       DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_BASE_BOUNDS);
}

/* ---- untagged checks (RFC 5041 section 7.1) ---- */

TEST(untagged_ok)
{
	struct ddp_err e = { 0xff, 0xff };
	struct ddp_seg s;

	s = useg(5, 0, 100);		/* the whole buffer */
	ASSERT_EQ(0, ddp_check_untagged(&s, &queue, &e));
	s = useg(6, 99, 1);		/* last octet, 2nd buffer */
	ASSERT_EQ(0, ddp_check_untagged(&s, &queue, &e));
	s = useg(7, 50, 50);		/* 3rd (last) buffer */
	ASSERT_EQ(0, ddp_check_untagged(&s, &queue, &e));
	ASSERT_EQ(0xff, e.type);
}

TEST(untagged_zero_length)
{
	struct ddp_uq_view q = queue;
	struct ddp_err e;
	struct ddp_seg s;

	/* a zero-length message still needs a queue, an MSN and a buffer */
	s = useg(5, 0, 0);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(5, 100, 0);		/* delivered length 100 fits */
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(5, 101, 0);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MO);
	q.buf_len = 0;
	s = useg(5, 0, 0);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(4, 0, 0);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, NULL, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_QN);
	q.nbuf_posted = 0;
	s = useg(5, 0, 0);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF);
}

TEST(untagged_invalid_qn)
{
	struct ddp_uq_view q = queue;
	struct ddp_err e;
	struct ddp_seg s = useg(5, 0, 10);

	ASSERT_DDP_ERR(ddp_check_untagged(&s, NULL, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_QN);
	q.exists = false;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_QN);
}

TEST(untagged_msn_nobuf)
{
	struct ddp_uq_view q = queue;
	struct ddp_err e;
	struct ddp_seg s = useg(5, 0, 10);

	q.nbuf_posted = 0;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF);
	s = useg(1, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF);
}

TEST(untagged_msn_range)
{
	struct ddp_err e;
	struct ddp_seg s;

	s = useg(4, 0, 10);		/* already completed */
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &queue, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	s = useg(0, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &queue, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	s = useg(8, 0, 10);		/* beyond the last posted buffer */
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &queue, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	s = useg(0x80000005, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &queue, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
}

TEST(untagged_msn_wrap)
{
	struct ddp_uq_view q = queue;
	struct ddp_err e;
	struct ddp_seg s;

	q.expected_msn = 0xffffffff;
	q.nbuf_posted = 2;
	s = useg(0xffffffff, 0, 10);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(0, 0, 10);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(1, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	s = useg(0xfffffffe, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);

	q.expected_msn = 0;		/* 0 follows 0xffffffff */
	q.nbuf_posted = 1;
	s = useg(0, 0, 10);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(0xffffffff, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);

	/* every MSN is legal with 2^32 - 1 buffers but the one before */
	q.expected_msn = 10;
	q.nbuf_posted = 0xffffffff;
	s = useg(9, 0, 10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	s = useg(8, 0, 10);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
}

TEST(untagged_mo_and_length)
{
	struct ddp_uq_view q = queue;
	struct ddp_err e;
	struct ddp_seg s;

	s = useg(5, 100, 1);		/* first octet past the end */
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MO);
	s = useg(5, 0xffffffff, 1);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MO);
	s = useg(5, 0, 101);		/* one octet too long */
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
	s = useg(5, 99, 2);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
	/* MO + length does not wrap around 2^32 */
	q.buf_len = 0xffffffff;
	s = useg(5, 0xfffffff0, 0x20);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
	s = useg(5, 0xfffffff0, 0xf);
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
	s = useg(5, 0xfffffff0, 0x10);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
	/* empty buffer: any payload has an invalid MO */
	q.buf_len = 0;
	s = useg(5, 0, 1);
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MO);
}

TEST(untagged_check_order)
{
	struct ddp_uq_view q = queue;
	struct ddp_err e;
	/* MSN out of range, MO and length beyond the buffer */
	struct ddp_seg s = useg(100, 200, 300);

	q.exists = false;
	q.nbuf_posted = 0;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_QN);
	q.exists = true;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF);
	q.nbuf_posted = 1;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	s.msn = 5;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_INVALID_MO);
	s.mo = 50;
	ASSERT_DDP_ERR(ddp_check_untagged(&s, &q, &e), e,
		       DDP_WIRE_ETYPE_UNTAGGED, DDP_WIRE_ECODE_U_MSG_TOO_LONG);
	s.payload_len = 50;
	ASSERT_EQ(0, ddp_check_untagged(&s, &q, &e));
}

/* ---- MSN arithmetic ---- */

TEST(msn_arith)
{
	ASSERT_EQ(2, ddp_msn_next(1));
	ASSERT_EQ(0, ddp_msn_next(0xffffffff));
	ASSERT_EQ(1, ddp_msn_next(0));
	ASSERT_TRUE(ddp_msn_before(1, 2));
	ASSERT_FALSE(ddp_msn_before(2, 1));
	ASSERT_FALSE(ddp_msn_before(7, 7));
	ASSERT_TRUE(ddp_msn_before(0xffffffff, 0));
	ASSERT_TRUE(ddp_msn_before(0xfffffff0, 5));
	ASSERT_TRUE(ddp_msn_after(0, 0xffffffff));
	ASSERT_FALSE(ddp_msn_after(0xffffffff, 0));
	ASSERT_TRUE(ddp_msn_before(0, 0x7fffffff));
	ASSERT_FALSE(ddp_msn_before(0, 0x80000001));
	ASSERT_TRUE(ddp_msn_in_window(0xffffffff, 0xffffffff, 2));
	ASSERT_TRUE(ddp_msn_in_window(0, 0xffffffff, 2));
	ASSERT_FALSE(ddp_msn_in_window(1, 0xffffffff, 2));
	ASSERT_FALSE(ddp_msn_in_window(0xfffffffe, 0xffffffff, 2));
	ASSERT_FALSE(ddp_msn_in_window(5, 5, 0));
}

/* ---- segmentation at the Data Source (RFC 5041 section 5.2) ---- */

/* cut a message, check every property, return the number of segments */
static u64 cut(u64 msg_len, u32 mp)
{
	struct ddp_segmenter it;
	u64 n = 0, next = 0;
	bool last, seen_last = false;
	u32 off, len;

	if (ddp_seg_init(&it, msg_len, mp))
		return ~0ULL;
	while (ddp_seg_next(&it, &off, &len, &last)) {
		if (seen_last || off != next || len > mp)
			return ~0ULL;
		if (!last && len != mp)
			return ~0ULL;
		if (last && msg_len && !len)
			return ~0ULL;
		next += len;
		seen_last = last;
		n++;
	}
	if (!seen_last || next != msg_len)
		return ~0ULL;
	/* stays done */
	if (ddp_seg_next(&it, &off, &len, &last))
		return ~0ULL;
	return n;
}

TEST(segment_lengths)
{
	const u32 mp = ddp_seg_payload_max(1500, false);

	ASSERT_EQ(1, cut(0, mp));
	ASSERT_EQ(1, cut(1, mp));
	ASSERT_EQ(1, cut(mp - 1, mp));
	ASSERT_EQ(1, cut(mp, mp));
	ASSERT_EQ(2, cut(mp + 1, mp));
	ASSERT_EQ(2, cut(2 * mp, mp));
	ASSERT_EQ(3, cut(2 * mp + 1, mp));
	ASSERT_EQ((16 << 20) / mp + 1, cut(16 << 20, mp));
	ASSERT_EQ(16, cut(16 << 20, 1 << 20));
	ASSERT_EQ(17, cut((16 << 20) + 1, 1 << 20));
	ASSERT_EQ(5, cut(5, 1));
	ASSERT_EQ(1, cut(0xffffffff, 0xffffffff));
	ASSERT_EQ(2, cut(0xffffffff, 0xfffffffe));
}

/* the MULPDU shrinks and grows in mid-message */
TEST(segment_resize)
{
	struct ddp_segmenter it;
	bool last;
	u32 off, len;

	ASSERT_EQ(0, ddp_seg_init(&it, 1000, 400));
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(0, off);
	ASSERT_EQ(400, len);
	ASSERT_FALSE(last);
	ddp_seg_resize(&it, 300);
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(400, off);
	ASSERT_EQ(300, len);
	ASSERT_FALSE(last);
	ddp_seg_resize(&it, 0);		/* ignored */
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(700, off);
	ASSERT_EQ(300, len);
	ASSERT_TRUE(last);
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));
	/* a larger MULPDU after the end changes nothing */
	ddp_seg_resize(&it, 1000);
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));
}

TEST(segment_zero_length)
{
	struct ddp_segmenter it;
	bool last = false;
	u32 off = 1, len = 1;

	ASSERT_EQ(0, ddp_seg_init(&it, 0, 100));
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(0, off);
	ASSERT_EQ(0, len);
	ASSERT_TRUE(last);
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));
}

TEST(segment_exact)
{
	struct ddp_segmenter it;
	bool last;
	u32 off, len;

	ASSERT_EQ(0, ddp_seg_init(&it, 301, 100));
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(0, off);
	ASSERT_EQ(100, len);
	ASSERT_FALSE(last);
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(100, off);
	ASSERT_EQ(100, len);
	ASSERT_FALSE(last);
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(200, off);
	ASSERT_EQ(100, len);
	ASSERT_FALSE(last);
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(300, off);
	ASSERT_EQ(1, len);
	ASSERT_TRUE(last);
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));
}

TEST(segment_init_errors)
{
	struct ddp_segmenter it;

	ASSERT_EQ(-EMSGSIZE, ddp_seg_init(&it, 1ULL << 32, 100));
	ASSERT_EQ(-EMSGSIZE, ddp_seg_init(&it, ~0ULL, 100));
	ASSERT_EQ(0, ddp_seg_init(&it, 0xffffffff, 100));
	ASSERT_EQ(-EINVAL, ddp_seg_init(&it, 10, 0));
	ASSERT_EQ(-EINVAL, ddp_seg_init(&it, 0, 0));
}

/* RFC 5041 section 5.2 examples: 2048 octets, MULPDU 1500 */
TEST(rfc_segment_examples)
{
	static const u8 rsvdulp[5] = { 0x43 };
	struct ddp_untagged_hdr uh;
	struct ddp_tagged_hdr th;
	struct ddp_segmenter it;
	struct ddp_err e;
	struct ddp_seg s;
	bool last;
	u32 off, len;

	ASSERT_EQ(0, ddp_seg_init(&it, 2048,
				  ddp_seg_payload_max(1500, false)));
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(0, off);
	ASSERT_EQ(1482, len);
	ASSERT_FALSE(last);
	ddp_untagged_hdr_build(&uh, DDP_WIRE_VERSION, last, rsvdulp, 0, 1, off);
	ASSERT_EQ(0x01, ((u8 *)&uh)[0]);
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(1482, off);
	ASSERT_EQ(566, len);
	ASSERT_TRUE(last);
	ddp_untagged_hdr_build(&uh, DDP_WIRE_VERSION, last, rsvdulp, 0, 1, off);
	ASSERT_EQ(0, ddp_hdr_parse(&uh, sizeof(uh), &s, &e));
	ASSERT_EQ(1482, s.mo);
	ASSERT_TRUE(s.last);
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));

	ASSERT_EQ(0, ddp_seg_init(&it, 2048, ddp_seg_payload_max(1500, true)));
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(0, off);
	ASSERT_EQ(1486, len);
	ASSERT_FALSE(last);
	ASSERT_TRUE(ddp_seg_next(&it, &off, &len, &last));
	ASSERT_EQ(1486, off);
	ASSERT_EQ(562, len);
	ASSERT_TRUE(last);
	ddp_tagged_hdr_build(&th, DDP_WIRE_VERSION, last, 0, 0x55, 16384 + off);
	ASSERT_EQ(0, ddp_hdr_parse(&th, sizeof(th), &s, &e));
	ASSERT_EQ(17870, s.to);
	ASSERT_FALSE(ddp_seg_next(&it, &off, &len, &last));
}

/* source to sink: every segment of a tagged message passes the checks */
TEST(tagged_round_trip)
{
	const u32 mulpdu = 128;
	const u32 mp = ddp_seg_payload_max(mulpdu, true);
	struct ddp_region_view r = region;
	static u8 msg[5000], sink[5000];
	u8 wire[128];
	struct ddp_segmenter it;
	struct ddp_err e;
	struct ddp_seg s;
	u32 off, len, i, n = 0;
	bool last;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = i * 7 + 3;
	r.base_to = 1ULL << 40;
	r.len = sizeof(sink);
	ASSERT_EQ(0, ddp_seg_init(&it, sizeof(msg), mp));
	while (ddp_seg_next(&it, &off, &len, &last)) {
		ddp_tagged_hdr_build((struct ddp_tagged_hdr *)wire, DDP_WIRE_VERSION,
				     last, 0x41, 0xabcd, r.base_to + off);
		memcpy(wire + DDP_TAGGED_HDR_LEN, msg + off, len);
		ASSERT_EQ(0, ddp_hdr_parse(wire, DDP_TAGGED_HDR_LEN + len,
					   &s, &e));
		ASSERT_LE(DDP_TAGGED_HDR_LEN + len, mulpdu);
		ASSERT_EQ(last, s.last);
		ASSERT_EQ(0xabcd, s.stag);
		ASSERT_EQ(0x41, s.rsvdulp_t);
		ASSERT_EQ(0, ddp_check_tagged(&s, &r, STREAM, &e));
		memcpy(sink + (s.to - r.base_to), s.payload, s.payload_len);
		n++;
	}
	ASSERT_EQ((sizeof(msg) + mp - 1) / mp, n);
	ASSERT_EQ(0, memcmp(msg, sink, sizeof(msg)));
}

/* Runs of a segment from the LLP: in order from 0, within the segment. */
TEST(run_in_order)
{
	ASSERT_TRUE(ddp_run_in_order(0, 100, 0, 100));
	ASSERT_TRUE(ddp_run_in_order(0, 100, 0, 1));
	ASSERT_TRUE(ddp_run_in_order(14, 100, 14, 86));
	ASSERT_TRUE(ddp_run_in_order(100, 100, 100, 0));
	/* a gap, a run again, a run from the past */
	ASSERT_FALSE(ddp_run_in_order(0, 100, 14, 10));
	ASSERT_FALSE(ddp_run_in_order(14, 100, 20, 10));
	ASSERT_FALSE(ddp_run_in_order(14, 100, 0, 10));
	/* past the end of the segment, without overflow */
	ASSERT_FALSE(ddp_run_in_order(0, 100, 0, 101));
	ASSERT_FALSE(ddp_run_in_order(90, 100, 90, 11));
	ASSERT_FALSE(ddp_run_in_order(90, 100, 90, 0xffffffff));
	ASSERT_FALSE(ddp_run_in_order(0xfffffff0, 100, 0xfffffff0, 0x20));
}

TEST_HARNESS_MAIN
