// SPDX-License-Identifier: GPL-2.0
/*
 * User-space unit tests of the pure RDMAP protocol logic
 * (rdmap/rdmap_proto.c): exact octets on the wire, every control octet
 * against the rules of RFC 5040 written out here once more, every cut of
 * a Terminate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <asm/unaligned.h>
#include "rdmap_proto.h"

#include "kselftest_harness.h"

#define ASSERT_RDMAP_ERR(ret, e, t, c) do {		\
	const struct rdmap_err *_e = &(e);		\
							\
	ASSERT_EQ(-EINVAL, (ret));			\
	ASSERT_EQ(RDMAP_WIRE_LAYER_RDMAP, _e->layer);	\
	ASSERT_EQ((t), _e->etype);			\
	ASSERT_EQ((c), _e->ecode);			\
} while (0)

/* RFC 5040 sections 4.2 and 5.1, independently of rdmap_proto.c */
static int expect_ctrl(unsigned int c, bool tagged, unsigned int qn)
{
	static const int qn_of[8] = { -1, 1, -1, 0, 0, 0, 0, 2 };
	unsigned int op = c & 0xf;

	if (c >> 6 != 1)
		return RDMAP_WIRE_ECODE_VERSION;
	if (op > 7)
		return RDMAP_WIRE_ECODE_OPCODE;
	if (tagged)
		return op == 0 || op == 2 ? -1 : RDMAP_WIRE_ECODE_OPCODE;
	return qn_of[op] == (int)qn ? -1 : RDMAP_WIRE_ECODE_OPCODE;
}

TEST(control_octets)
{
	unsigned int c, qn, ok = 0;
	int t;

	for (c = 0; c < 256; c++) {
		for (t = 0; t < 2; t++) {
			for (qn = 0; qn < 4; qn++) {
				u8 rsvdulp[5] = { c, 0xa1, 0xb2, 0xc3, 0xd4 };
				struct rdmap_hdr h = { 0 };
				struct rdmap_err e = { 0 };
				int want = expect_ctrl(c, t, qn);
				int ret = rdmap_hdr_check(rsvdulp, t, qn, &h, &e);

				if (want < 0) {
					ASSERT_EQ(0, ret);
					ASSERT_EQ(c & 0xf, h.op);
					ok++;
				} else {
					ASSERT_RDMAP_ERR(ret, e, RDMAP_WIRE_ETYPE_OPERATION, want);
				}
			}
		}
	}
	/* tagged: 2 opcodes x 4 QNs; untagged: 6 opcodes; x 4 Rsv values */
	ASSERT_EQ((2 * 4 + 6) * 4, ok);
}

TEST(opcode_table)
{
	ASSERT_EQ(0x40, rdmap_ctrl(RDMAP_WIRE_OP_WRITE));
	ASSERT_EQ(0x47, rdmap_ctrl(RDMAP_WIRE_OP_TERMINATE));
	ASSERT_TRUE(rdmap_op_tagged(RDMAP_WIRE_OP_WRITE));
	ASSERT_TRUE(rdmap_op_tagged(RDMAP_WIRE_OP_READ_RESP));
	ASSERT_FALSE(rdmap_op_tagged(RDMAP_WIRE_OP_READ_REQ));
	ASSERT_EQ(-EINVAL, rdmap_op_qn(RDMAP_WIRE_OP_WRITE));
	ASSERT_EQ(-EINVAL, rdmap_op_qn(RDMAP_WIRE_OP_READ_RESP));
	ASSERT_EQ(-EINVAL, rdmap_op_qn(8));
	ASSERT_EQ(RDMAP_WIRE_QN_READ_REQ, rdmap_op_qn(RDMAP_WIRE_OP_READ_REQ));
	ASSERT_EQ(RDMAP_WIRE_QN_TERMINATE, rdmap_op_qn(RDMAP_WIRE_OP_TERMINATE));
	ASSERT_EQ(RDMAP_WIRE_QN_SEND, rdmap_op_qn(RDMAP_WIRE_OP_SEND_SE_INV));
}

TEST(send_with_invalidate)
{
	static const u8 inv[5] = { 0x44, 0x12, 0x34, 0x56, 0x78 };
	static const u8 se_inv[5] = { 0x46, 0xde, 0xad, 0xbe, 0xef };
	static const u8 send[5] = { 0x43, 0x12, 0x34, 0x56, 0x78 };
	struct rdmap_hdr h;
	struct rdmap_err e;
	u8 out[5];

	ASSERT_EQ(0, rdmap_hdr_check(inv, false, 0, &h, &e));
	ASSERT_EQ(RDMAP_WIRE_OP_SEND_INV, h.op);
	ASSERT_EQ(0x12345678, h.inv_stag);
	/* the other Sends' RsvdULP octets are reserved: not looked at */
	ASSERT_EQ(0, rdmap_hdr_check(send, false, 0, &h, &e));
	ASSERT_EQ(RDMAP_WIRE_OP_SEND, h.op);
	ASSERT_EQ(0, h.inv_stag);

	rdmap_rsvdulp_untagged(RDMAP_WIRE_OP_SEND_SE_INV, 0xdeadbeef, out);
	ASSERT_EQ(0, memcmp(se_inv, out, 5));
	rdmap_rsvdulp_untagged(RDMAP_WIRE_OP_SEND, 0xdeadbeef, out);
	ASSERT_EQ(0, memcmp("\x43\0\0\0\0", out, 5));
}

static const u8 rreq_wire[28] = {
	0x01, 0x02, 0x03, 0x04,					/* sink STag */
	0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,		/* sink TO */
	0x21, 0x22, 0x23, 0x24,					/* size */
	0x31, 0x32, 0x33, 0x34,					/* source STag */
	0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,		/* source TO */
};

TEST(read_request_octets)
{
	const struct rdmap_read_req rr = {
		.sink_stag = 0x01020304, .sink_to = 0x1112131415161718ULL,
		.size = 0x21222324, .src_stag = 0x31323334,
		.src_to = 0x4142434445464748ULL,
	};
	struct rdmap_wire_read_req w;
	struct rdmap_read_req back;
	struct rdmap_err e;

	ASSERT_EQ(28, sizeof(w));
	rdmap_read_req_encode(&rr, &w);
	ASSERT_EQ(0, memcmp(rreq_wire, &w, 28));
	ASSERT_EQ(0, rdmap_read_req_decode(rreq_wire, 28, &back, &e));
	ASSERT_EQ(rr.sink_stag, back.sink_stag);
	ASSERT_EQ(rr.sink_to, back.sink_to);
	ASSERT_EQ(rr.size, back.size);
	ASSERT_EQ(rr.src_stag, back.src_stag);
	ASSERT_EQ(rr.src_to, back.src_to);
}

TEST(read_request_length)
{
	u8 buf[29] = { 0 };
	struct rdmap_read_req rr;
	struct rdmap_err e;
	u32 len;

	for (len = 0; len <= 29; len++) {
		if (len == 28)
			continue;
		memset(&e, 0, sizeof(e));
		ASSERT_RDMAP_ERR(rdmap_read_req_decode(buf, len, &rr, &e), e,
				 RDMAP_WIRE_ETYPE_OPERATION, RDMAP_WIRE_ECODE_CATA_STREAM);
	}
	ASSERT_EQ(0, rdmap_read_req_decode(buf, 28, &rr, &e));
	ASSERT_EQ(0, rr.size);
}

static int rreq_at(u64 src_to, u64 sink_to, u32 size, struct rdmap_err *e)
{
	struct rdmap_read_req rr = {
		.sink_stag = 1, .sink_to = sink_to, .size = size, .src_stag = 2,
		.src_to = src_to,
	};
	struct rdmap_wire_read_req w;
	struct rdmap_read_req back;

	rdmap_read_req_encode(&rr, &w);
	return rdmap_read_req_decode(&w, sizeof(w), &back, e);
}

TEST(read_request_to_wrap)
{
	const u64 top = ~0ULL;
	struct rdmap_err e;

	/* TO + size wraps in 64 bits, as in DDP's tagged check */
	ASSERT_EQ(0, rreq_at(top - 1, 0, 1, &e));
	ASSERT_EQ(0, rreq_at(0, top - 1, 1, &e));
	ASSERT_EQ(0, rreq_at(top - 0xffffffffULL, 0, 0xffffffff, &e));
	/* a zero-length Read at any offset */
	ASSERT_EQ(0, rreq_at(top, top, 0, &e));
	ASSERT_RDMAP_ERR(rreq_at(top, 0, 1, &e), e, RDMAP_WIRE_ETYPE_PROTECTION,
			 RDMAP_WIRE_ECODE_TO_WRAP);
	ASSERT_RDMAP_ERR(rreq_at(0, top, 1, &e), e, RDMAP_WIRE_ETYPE_PROTECTION,
			 RDMAP_WIRE_ECODE_TO_WRAP);
	ASSERT_RDMAP_ERR(rreq_at(top - 0xfffffffeULL, 0, 0xffffffff, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_TO_WRAP);
}

static int read_src(u64 to, u32 size, const struct ddp_region_view *r,
		    struct rdmap_err *e)
{
	struct rdmap_read_req rr = { .src_stag = 9, .src_to = to, .size = size };

	return rdmap_check_read_src(&rr, r, 7, e);
}

TEST(read_source_checks)
{
	const struct ddp_region_view ok = {
		.valid = true, .stream_or_pd = 7, .base_to = 0x1000, .len = 0x1000,
		.access = DDP_VIEW_READ,
	};
	struct ddp_region_view r;
	struct rdmap_err e;

	/* nothing to read: nothing is checked */
	ASSERT_EQ(0, read_src(0, 0, NULL, &e));
	ASSERT_RDMAP_ERR(read_src(0x1000, 1, NULL, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_INVALID_STAG);
	r = ok;
	r.valid = false;
	ASSERT_RDMAP_ERR(read_src(0x1000, 1, &r, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_INVALID_STAG);
	r = ok;
	r.stream_or_pd = 8;
	ASSERT_RDMAP_ERR(read_src(0x1000, 1, &r, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_STAG_NOT_ASSOC);
	r = ok;
	r.access = DDP_VIEW_WRITE;
	ASSERT_RDMAP_ERR(read_src(0x1000, 1, &r, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_ACCESS);
	ASSERT_EQ(0, read_src(0x1000, 0x1000, &ok, &e));
	ASSERT_EQ(0, read_src(0x1fff, 1, &ok, &e));
	ASSERT_RDMAP_ERR(read_src(0xfff, 1, &ok, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_BASE_BOUNDS);
	ASSERT_RDMAP_ERR(read_src(0x2000, 1, &ok, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_BASE_BOUNDS);
	ASSERT_RDMAP_ERR(read_src(0x1001, 0x1000, &ok, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_BASE_BOUNDS);
	ASSERT_RDMAP_ERR(read_src(0x1000, 0x1001, &ok, &e), e,
			 RDMAP_WIRE_ETYPE_PROTECTION, RDMAP_WIRE_ECODE_BASE_BOUNDS);
	/* a buffer that ends at 2^64 - 1 */
	r = ok;
	r.base_to = ~0ULL - 0xfff;
	ASSERT_EQ(0, read_src(~0ULL - 0xfff, 0x1000, &r, &e));
	ASSERT_EQ(0, read_src(~0ULL, 1, &r, &e));
}

/* a tagged DDP header (T, L, DV 1) and an untagged one (L, DV 1, QN 1) */
static const u8 thdr[14] = { 0xc1, 0x40, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0x10, 0 };
static const u8 uhdr[18] = { 0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 0 };

TEST(terminate_ddp_tagged_error)
{
	static const u8 want[20] = {
		0x11, 0x01, 0xc0, 0x00,	/* DDP, tagged, base or bounds, M D */
		0x03, 0xe8,		/* segment length 1000 */
		0xc1, 0x40, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0x10, 0,
	};
	struct rdmap_term t, back;
	u8 buf[RDMAP_TERM_MAX_LEN];

	ASSERT_EQ(0, rdmap_term_from_ddp(&t, DDP_WIRE_ETYPE_TAGGED,
					 DDP_WIRE_ECODE_T_BASE_BOUNDS, thdr, 14, 1000));
	ASSERT_EQ(20, rdmap_term_len(&t));
	ASSERT_EQ(20, rdmap_term_encode(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp(want, buf, 20));
	ASSERT_EQ(-ENOSPC, rdmap_term_encode(&t, buf, 19));

	ASSERT_EQ(0, rdmap_term_decode(buf, 20, &back));
	ASSERT_EQ(RDMAP_WIRE_LAYER_DDP, back.err.layer);
	ASSERT_EQ(DDP_WIRE_ETYPE_TAGGED, back.err.etype);
	ASSERT_EQ(DDP_WIRE_ECODE_T_BASE_BOUNDS, back.err.ecode);
	ASSERT_TRUE(back.seg_len_valid);
	ASSERT_EQ(1000, back.seg_len);
	ASSERT_EQ(14, back.ddp_hdr_len);
	ASSERT_EQ(buf + 6, back.ddp_hdr);
	ASSERT_EQ(0, back.rdma_hdr_len);
}

TEST(terminate_without_header)
{
	struct rdmap_term t;
	u8 buf[RDMAP_TERM_MAX_LEN];

	/* MPA: layer LLP, type 0, the RFC 5044 code */
	ASSERT_EQ(0, rdmap_term_from_ddp(&t, DDP_WIRE_ETYPE_LLP, MPA_ERR_CRC, NULL, 0, 0));
	ASSERT_EQ(4, rdmap_term_encode(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp("\x20\x02\x00\x00", buf, 4));
	/* a DDP version error: the header is not sent */
	ASSERT_EQ(0, rdmap_term_from_ddp(&t, DDP_WIRE_ETYPE_UNTAGGED,
					 DDP_WIRE_ECODE_U_INVALID_DV, uhdr, 18, 100));
	ASSERT_EQ(4, rdmap_term_encode(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp("\x12\x06\x00\x00", buf, 4));
	/* a header shorter than its T bit says is not sent either */
	ASSERT_EQ(0, rdmap_term_from_ddp(&t, DDP_WIRE_ETYPE_UNTAGGED,
					 DDP_WIRE_ECODE_U_INVALID_QN, uhdr, 17, 100));
	ASSERT_EQ(4, rdmap_term_len(&t));
	/* an unknown segment length: D without M */
	ASSERT_EQ(0, rdmap_term_from_ddp(&t, DDP_WIRE_ETYPE_UNTAGGED,
					 DDP_WIRE_ECODE_U_INVALID_QN, uhdr, 18, 0x10000));
	ASSERT_EQ(24, rdmap_term_encode(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp("\x12\x01\x40\x00\x00\x00", buf, 6));
	ASSERT_EQ(-EINVAL, rdmap_term_from_ddp(&t, 4, 0, uhdr, 18, 100));
}

/* RDMAP: protection error on a Read Request, with both headers */
static int read_req_term(u8 *buf)
{
	struct rdmap_term t = {
		.err = { RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_PROTECTION,
			 RDMAP_WIRE_ECODE_ACCESS },
		.seg_len_valid = true, .seg_len = 46,
		.ddp_hdr = uhdr, .ddp_hdr_len = 18,
		.rdma_hdr = rreq_wire, .rdma_hdr_len = 28,
	};

	return rdmap_term_encode(&t, buf, RDMAP_TERM_MAX_LEN);
}

TEST(terminate_read_request_every_cut)
{
	u8 buf[RDMAP_TERM_MAX_LEN + 1] = { 0 };
	struct rdmap_term t;
	u32 len;

	ASSERT_EQ(52, RDMAP_TERM_MAX_LEN);
	ASSERT_EQ(52, read_req_term(buf));
	ASSERT_EQ(0, memcmp("\x01\x02\xe0\x00\x00\x2e", buf, 6));
	ASSERT_EQ(0, memcmp(uhdr, buf + 6, 18));
	ASSERT_EQ(0, memcmp(rreq_wire, buf + 24, 28));
	for (len = 0; len < 52; len++) {
		ASSERT_EQ(-EINVAL, rdmap_term_decode(buf, len, &t));
		/* the error number is there as soon as the control field is */
		if (len >= 4)
			ASSERT_EQ(RDMAP_WIRE_ECODE_ACCESS, t.err.ecode);
	}
	ASSERT_EQ(0, rdmap_term_decode(buf, 52, &t));
	ASSERT_EQ(28, t.rdma_hdr_len);
	ASSERT_EQ(buf + 24, t.rdma_hdr);
	/* an octet after what Hdrct says */
	ASSERT_EQ(-EINVAL, rdmap_term_decode(buf, 53, &t));
}

TEST(terminate_decode_hdrct)
{
	/* Linux siw: 14 of an untagged header's 18 octets */
	static const u8 siw_style[20] = {
		0x12, 0x02, 0xc0, 0x00, 0x00, 0x1c,
		0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7,
	};
	/* M alone: the segment length and no header */
	static const u8 m_only[6] = { 0x00, 0x02, 0x80, 0x00, 0x01, 0x00 };
	/* R without D */
	static const u8 r_only[6] = { 0x00, 0x01, 0x20, 0x00, 0x00, 0x00 };
	/* reserved bits set: not checked */
	static const u8 rsvd[4] = { 0x00, 0x02, 0x1f, 0xff };
	struct rdmap_term t;
	u8 buf[RDMAP_TERM_MAX_LEN];

	ASSERT_EQ(0, rdmap_term_decode(siw_style, 20, &t));
	ASSERT_EQ(14, t.ddp_hdr_len);
	ASSERT_EQ(28, t.seg_len);
	ASSERT_EQ(-EINVAL, rdmap_term_len(&t));	/* and we never send one */
	ASSERT_EQ(0, rdmap_term_decode(m_only, 6, &t));
	ASSERT_TRUE(t.seg_len_valid);
	ASSERT_EQ(256, t.seg_len);
	ASSERT_EQ(0, t.ddp_hdr_len);
	ASSERT_EQ(6, rdmap_term_encode(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp(m_only, buf, 6));
	ASSERT_EQ(-EINVAL, rdmap_term_decode(m_only, 5, &t));
	ASSERT_EQ(-EINVAL, rdmap_term_decode(r_only, 6, &t));
	ASSERT_EQ(0, rdmap_term_decode(rsvd, 4, &t));
	ASSERT_EQ(RDMAP_WIRE_ECODE_ACCESS, t.err.ecode);
	ASSERT_EQ(4, rdmap_term_encode(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp("\x00\x02\x00\x00", buf, 4));
	ASSERT_EQ(-EINVAL, rdmap_term_decode(rsvd, 5, &t));
}

TEST(terminate_refused_on_send)
{
	struct rdmap_term t = { .err = { 0, 1, 0 } };
	u8 buf[RDMAP_TERM_MAX_LEN];

	t.rdma_hdr = rreq_wire;
	t.rdma_hdr_len = 28;
	ASSERT_EQ(-EINVAL, rdmap_term_encode(&t, buf, sizeof(buf)));	/* R without D */
	t.ddp_hdr = thdr;
	t.ddp_hdr_len = 18;						/* T set: 14 */
	ASSERT_EQ(-EINVAL, rdmap_term_len(&t));
	t.ddp_hdr = uhdr;
	ASSERT_EQ(52, rdmap_term_len(&t));
	t.rdma_hdr_len = 27;
	ASSERT_EQ(-EINVAL, rdmap_term_len(&t));
	t.rdma_hdr_len = 0;
	t.err.layer = 16;
	ASSERT_EQ(-EINVAL, rdmap_term_len(&t));
	t.err.layer = 0;
	t.err.etype = 16;
	ASSERT_EQ(-EINVAL, rdmap_term_len(&t));
}

TEST_HARNESS_MAIN
