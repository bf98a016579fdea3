// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the RDMAP control field checks, the RDMA Read Request
 * decoder and source checks, and the Terminate codec (rdmap/rdmap_proto.c).
 *
 * Input: one octet that picks the part, then its input: a control field
 * (five RsvdULP octets, the T bit and the QN), a Read Request message, a
 * Terminate message, a DDP error with its header, or a buffer's view and
 * a Read's source range.
 *
 * Checks that the decoders stay inside their input (exact-size copy under
 * ASan), return exactly what a reference model of RFC 5040 says, and that
 * a Terminate decodes to what encoding it gives back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <asm/unaligned.h>
#include "rdmap_proto.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: %s\n", \
	__FILE__, __LINE__, #x); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

static void fuzz_ctrl(const u8 *d, size_t n)
{
	static const int qn_of[16] = { -1, 1, -1, 0, 0, 0, 0, 2,
				       -1, -1, -1, -1, -1, -1, -1, -1 };
	struct rdmap_err e = { 0xee, 0xee, 0xee };
	struct rdmap_hdr h = { 0xee, 0xeeeeeeee };
	bool tagged;
	u8 op, ok;
	u32 qn;
	int ret;

	if (n < 10)
		return;
	tagged = d[5] & 1;
	qn = get_unaligned_be32(d + 6);
	op = d[0] & 0xf;
	ret = rdmap_hdr_check(d, tagged, qn, &h, &e);
	if (d[0] >> 6 != 1) {
		CHECK(ret == -EINVAL && e.layer == 0 && e.etype == 2 && e.ecode == 5);
		return;
	}
	ok = tagged ? op == 0 || op == 2 : qn_of[op] >= 0 && (u32)qn_of[op] == qn;
	if (!ok) {
		CHECK(ret == -EINVAL && e.layer == 0 && e.etype == 2 && e.ecode == 6);
		return;
	}
	CHECK(ret == 0 && h.op == op);
	CHECK(h.inv_stag == (!tagged && (op == 4 || op == 6) ?
			     get_unaligned_be32(d + 1) : 0));
}

static void fuzz_read_req(const u8 *d, size_t n)
{
	struct rdmap_err e = { 0xee, 0xee, 0xee };
	struct rdmap_wire_read_req w;
	struct rdmap_read_req rr;
	int ret;

	ret = rdmap_read_req_decode(d, n, &rr, &e);
	if (n != 28) {
		CHECK(ret == -EINVAL && e.layer == 0 && e.etype == 2 && e.ecode == 7);
		return;
	}
	CHECK(rr.sink_stag == get_unaligned_be32(d));
	CHECK(rr.sink_to == get_unaligned_be64(d + 4));
	CHECK(rr.size == get_unaligned_be32(d + 12));
	CHECK(rr.src_stag == get_unaligned_be32(d + 16));
	CHECK(rr.src_to == get_unaligned_be64(d + 20));
	/* exact arithmetic: TO + size wraps in 64 bits at 2^64 */
	if ((__uint128_t)rr.src_to + rr.size >= (__uint128_t)1 << 64 ||
	    (__uint128_t)rr.sink_to + rr.size >= (__uint128_t)1 << 64) {
		CHECK(ret == -EINVAL && e.layer == 0 && e.etype == 1 && e.ecode == 4);
		return;
	}
	CHECK(ret == 0);
	rdmap_read_req_encode(&rr, &w);
	CHECK(!memcmp(&w, d, 28));
}

static void fuzz_term(const u8 *d, size_t n)
{
	u8 out[RDMAP_TERM_MAX_LEN];
	struct rdmap_term t, u;
	u32 ctrl;
	int len;

	if (rdmap_term_decode(d, n, &t))
		return;
	ctrl = get_unaligned_be32(d);
	CHECK(t.err.layer == ctrl >> 28 && t.err.etype == ((ctrl >> 24) & 0xf) &&
	      t.err.ecode == ((ctrl >> 16) & 0xff));
	CHECK(t.ddp_hdr_len <= 18 && t.rdma_hdr_len <= 28 && n <= RDMAP_TERM_MAX_LEN);
	CHECK(!t.ddp_hdr || (t.ddp_hdr > d && t.ddp_hdr + t.ddp_hdr_len <= d + n));
	CHECK(!t.rdma_hdr || t.rdma_hdr + t.rdma_hdr_len == d + n);
	len = rdmap_term_encode(&t, out, sizeof(out));
	/* only a DDP header shorter than its T bit says is not sent back */
	if (len < 0) {
		CHECK(len == -EINVAL && t.ddp_hdr_len &&
		      t.ddp_hdr_len < (t.ddp_hdr[0] & DDP_FLAG_T ? 14U : 18U));
		return;
	}
	CHECK((size_t)len == n);
	/* what differs: the reserved bits, a segment length sent without M */
	CHECK(get_unaligned_be32(out) == (ctrl & ~RDMAP_WIRE_TERM_RSVD));
	if (t.seg_len_valid || n == 4)
		CHECK(!memcmp(out + 4, d + 4, n - 4));
	else
		CHECK(get_unaligned_be16(out + 4) == 0 && !memcmp(out + 6, d + 6, n - 6));
	CHECK(!rdmap_term_decode(out, len, &u));
	CHECK(!memcmp(&t.err, &u.err, sizeof(t.err)));
	CHECK(t.seg_len_valid == u.seg_len_valid && t.seg_len == u.seg_len);
	CHECK(t.ddp_hdr_len == u.ddp_hdr_len && t.rdma_hdr_len == u.rdma_hdr_len);
	CHECK(!memcmp(t.ddp_hdr ? t.ddp_hdr : out, u.ddp_hdr ? u.ddp_hdr : out,
		      t.ddp_hdr_len));
	CHECK(!memcmp(t.rdma_hdr ? t.rdma_hdr : out, u.rdma_hdr ? u.rdma_hdr : out,
		      t.rdma_hdr_len));
}

static void fuzz_from_ddp(const u8 *d, size_t n)
{
	u8 out[RDMAP_TERM_MAX_LEN];
	struct rdmap_term t, u;
	int ret, len;

	if (n < 6)
		return;
	ret = rdmap_term_from_ddp(&t, d[0], d[1], n > 6 ? d + 6 : NULL, n - 6,
				  get_unaligned_be32(d + 2));
	if (d[0] > 3) {
		CHECK(ret == -EINVAL);
		return;
	}
	CHECK(ret == 0);
	len = rdmap_term_encode(&t, out, sizeof(out));
	CHECK(len >= 4 && !rdmap_term_decode(out, len, &u));
	CHECK(u.err.layer == (d[0] == 3 ? 2 : 1) && u.err.ecode == d[1]);
	CHECK(u.err.etype == (d[0] == 3 ? 0 : d[0]));
	/* a header only with a tagged or untagged buffer error */
	CHECK(!u.ddp_hdr_len || d[0] == 1 || d[0] == 2);
	CHECK(u.ddp_hdr_len == 0 || !memcmp(u.ddp_hdr, d + 6, u.ddp_hdr_len));
}

/* view (valid, stream, base, len, access), Stream ID, source TO, size */
static void fuzz_read_src(const u8 *d, size_t n)
{
	struct rdmap_err e = { 0xee, 0xee, 0xee };
	struct ddp_region_view r;
	struct rdmap_read_req rr = { 0 };
	u32 stream;
	int ret;

	if (n < 38)
		return;
	r.valid = d[0] & 1;
	r.stream_or_pd = get_unaligned_be32(d + 1);
	r.base_to = get_unaligned_be64(d + 5);
	r.len = get_unaligned_be64(d + 13);
	r.access = d[21];
	stream = get_unaligned_be32(d + 22);
	rr.src_to = get_unaligned_be64(d + 26);
	rr.size = get_unaligned_be32(d + 34);
	ret = rdmap_check_read_src(&rr, d[0] & 2 ? NULL : &r, stream, &e);
	if (!rr.size)
		CHECK(ret == 0);
	else if ((d[0] & 2) || !r.valid)
		CHECK(ret == -EINVAL && e.etype == 1 && e.ecode == 0);
	else if (r.stream_or_pd != stream)
		CHECK(ret == -EINVAL && e.etype == 1 && e.ecode == 3);
	else if (!(r.access & DDP_VIEW_READ))
		CHECK(ret == -EINVAL && e.etype == 1 && e.ecode == 2);
	else if (rr.src_to < r.base_to ||
		 (__uint128_t)rr.src_to + rr.size > (__uint128_t)r.base_to + r.len)
		CHECK(ret == -EINVAL && e.etype == 1 && e.ecode == 1);
	else
		CHECK(ret == 0);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	u8 *d;

	if (!size)
		return 0;
	/* exact-size copy: ASan sees any read past the input */
	d = malloc(size - 1 ? size - 1 : 1);
	if (!d)
		return 0;
	memcpy(d, data + 1, size - 1);
	switch (data[0] % 5) {
	case 0:
		fuzz_ctrl(d, size - 1);
		break;
	case 1:
		fuzz_read_req(d, size - 1);
		break;
	case 2:
		fuzz_term(d, size - 1);
		break;
	case 3:
		fuzz_from_ddp(d, size - 1);
		break;
	default:
		fuzz_read_src(d, size - 1);
		break;
	}
	free(d);
	return 0;
}
