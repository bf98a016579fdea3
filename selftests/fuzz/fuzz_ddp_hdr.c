// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: DDP segment parser and the section 7.1 checks.
 *
 * Input: 48 octets of views (region: flags, stream, base, len, access;
 * stream ID; queue: flags, expected MSN, posted, buffer length; MULPDU),
 * then the DDP segment.
 *
 * Checks that the parser stays inside the segment (exact-size copy under
 * ASan), decodes exactly the big-endian fields, that each check returns
 * exactly the first failed condition in the documented order, that an
 * accepted segment lies inside its buffer, and that header building and
 * segmentation round-trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <asm/unaligned.h>
#include "ddp_proto.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: %s\n", \
	__FILE__, __LINE__, #x); abort(); } } while (0)

#define VIEW_LEN	48

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

static u64 be64(const u8 *p)
{
	return (u64)get_unaligned_be32(p) << 32 | get_unaligned_be32(p + 4);
}

static bool same_err(int ret, const struct ddp_err *e, u8 type, u8 code)
{
	return ret == -EINVAL && e->type == type && e->code == code;
}

/* reference model of ddp_check_tagged(), exact 128-bit arithmetic */
static void check_tagged(const struct ddp_seg *s,
			 const struct ddp_region_view *r, u32 stream)
{
	unsigned __int128 end = (unsigned __int128)s->to + s->payload_len;
	struct ddp_err e = { 0xee, 0xee };
	int ret = ddp_check_tagged(s, r, stream, &e);

	CHECK(ret == 0 || ret == -EINVAL);
	if (!s->payload_len) {
		CHECK(ret == 0);
		return;
	}
	if (!r || !r->valid) {
		CHECK(same_err(ret, &e, 1, DDP_WIRE_ECODE_T_INVALID_STAG));
	} else if (r->stream_or_pd != stream) {
		CHECK(same_err(ret, &e, 1, DDP_WIRE_ECODE_T_STAG_NOT_ASSOC));
	} else if (!(r->access & DDP_VIEW_WRITE)) {
		CHECK(same_err(ret, &e, 1, DDP_WIRE_ECODE_T_INVALID_STAG));
	} else if (end > ~(u64)0) {
		CHECK(same_err(ret, &e, 1, DDP_WIRE_ECODE_T_TO_WRAP));
	} else if (s->to < r->base_to ||
		   end > (unsigned __int128)r->base_to + r->len) {
		CHECK(same_err(ret, &e, 1, DDP_WIRE_ECODE_T_BASE_BOUNDS));
	} else {
		CHECK(ret == 0);
	}
	if (!ret) {
		/* accepted: inside the buffer, no overflow anywhere */
		CHECK(r && r->valid && r->stream_or_pd == stream);
		CHECK(r->base_to <= s->to);
		CHECK(end <= (unsigned __int128)r->base_to + r->len);
		CHECK(s->to + s->payload_len >= s->to);
	} else {
		CHECK(e.type == DDP_WIRE_ETYPE_TAGGED && e.code <= 3);
	}
}

/* reference model of ddp_check_untagged() */
static void check_untagged(const struct ddp_seg *s, const struct ddp_uq_view *q)
{
	u64 end = (u64)s->mo + s->payload_len;
	struct ddp_err e = { 0xee, 0xee };
	int ret = ddp_check_untagged(s, q, &e);
	u64 d;

	CHECK(ret == 0 || ret == -EINVAL);
	if (!q || !q->exists) {
		CHECK(same_err(ret, &e, 2, DDP_WIRE_ECODE_U_INVALID_QN));
		return;
	}
	/* distance from the first available MSN, modulo 2^32 */
	d = ((u64)s->msn + (1ULL << 32) - q->expected_msn) & 0xffffffffULL;
	if (!q->nbuf_posted)
		CHECK(same_err(ret, &e, 2, DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF));
	else if (d >= q->nbuf_posted)
		CHECK(same_err(ret, &e, 2, DDP_WIRE_ECODE_U_INVALID_MSN_RANGE));
	else if (s->mo > q->buf_len ||
		 (s->payload_len && s->mo >= q->buf_len))
		CHECK(same_err(ret, &e, 2, DDP_WIRE_ECODE_U_INVALID_MO));
	else if (end > q->buf_len)
		CHECK(same_err(ret, &e, 2, DDP_WIRE_ECODE_U_MSG_TOO_LONG));
	else
		CHECK(ret == 0);
	if (!ret) {
		CHECK(d < q->nbuf_posted);
		CHECK(end <= q->buf_len);
	}
}

static void check_parse(const u8 *seg, u32 len, const struct ddp_seg *s,
			int ret, const struct ddp_err *e)
{
	u32 hlen;

	if (!len) {
		CHECK(same_err(ret, e, DDP_WIRE_ETYPE_CATASTROPHIC,
			       DDP_WIRE_ECODE_CATASTROPHIC));
		CHECK(!s->payload && !s->payload_len);
		return;
	}
	CHECK(s->tagged == !!(seg[0] & DDP_FLAG_T));
	CHECK(s->last == !!(seg[0] & DDP_FLAG_L));
	CHECK(s->dv == (seg[0] & DDP_DV_MASK));
	hlen = s->tagged ? 14 : 18;
	if (s->dv != DDP_WIRE_VERSION) {
		if (s->tagged)
			CHECK(same_err(ret, e, 1, DDP_WIRE_ECODE_T_INVALID_DV));
		else
			CHECK(same_err(ret, e, 2, DDP_WIRE_ECODE_U_INVALID_DV));
	} else if (len < hlen) {
		CHECK(same_err(ret, e, 0, 0));
	} else {
		CHECK(ret == 0);
	}
	if (len < hlen) {
		CHECK(!s->payload && !s->payload_len);
		return;
	}
	CHECK(s->payload == seg + hlen);
	CHECK(s->payload_len == len - hlen);
	if (s->tagged) {
		CHECK(s->rsvdulp_t == seg[1]);
		CHECK(s->stag == get_unaligned_be32(seg + 2));
		CHECK(s->to == be64(seg + 6));
		CHECK(!s->qn && !s->msn && !s->mo);
	} else {
		CHECK(!memcmp(s->rsvdulp_u, seg + 1, 5));
		CHECK(s->qn == get_unaligned_be32(seg + 6));
		CHECK(s->msn == get_unaligned_be32(seg + 10));
		CHECK(s->mo == get_unaligned_be32(seg + 14));
		CHECK(!s->stag && !s->to);
	}
}

/* build the same header again: identical but for the Rsvd bits */
static void check_build(const u8 *seg, const struct ddp_seg *s)
{
	u8 out[18];

	if (s->tagged) {
		ddp_tagged_hdr_build((struct ddp_tagged_hdr *)out, s->dv,
				     s->last, s->rsvdulp_t, s->stag, s->to);
		CHECK(out[0] == (seg[0] & ~DDP_FLAG_RSVD));
		CHECK(!memcmp(out + 1, seg + 1, 13));
	} else {
		ddp_untagged_hdr_build((struct ddp_untagged_hdr *)out, s->dv,
				       s->last, s->rsvdulp_u, s->qn, s->msn,
				       s->mo);
		CHECK(out[0] == (seg[0] & ~DDP_FLAG_RSVD));
		CHECK(!memcmp(out + 1, seg + 1, 17));
	}
}

static void check_segmenter(u32 msg_len, u32 mulpdu, bool tagged)
{
	u32 mp = ddp_seg_payload_max(mulpdu, tagged);
	struct ddp_segmenter it;
	u64 next = 0, n = 0;
	bool last = false;
	u32 off, len;

	if (ddp_seg_init(&it, msg_len, mp)) {
		CHECK(!mp);
		return;
	}
	/* bound the work: at most 4096 segments */
	if ((u64)msg_len / mp > 4096)
		return;
	while (ddp_seg_next(&it, &off, &len, &last)) {
		CHECK(off == next);
		CHECK(len <= mp);
		CHECK(last || len == mp);
		CHECK(!last || len || !msg_len);
		next += len;
		n++;
		if (last)
			break;
	}
	CHECK(last);
	CHECK(next == msg_len);
	CHECK(n == (msg_len ? ((u64)msg_len + mp - 1) / mp : 1));
	CHECK(!ddp_seg_next(&it, &off, &len, &last));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct ddp_region_view r;
	struct ddp_uq_view q;
	struct ddp_err e = { 0xee, 0xee };
	struct ddp_seg s;
	u32 stream, len;
	u8 *seg;
	int ret;

	if (size < VIEW_LEN)
		return 0;
	r.valid = data[0] & 1;
	r.stream_or_pd = data[1] & 3;	/* make matches likely */
	r.base_to = be64(data + 2);
	r.len = be64(data + 10);
	if (data[0] & 2)		/* small buffers are interesting too */
		r.len &= 0xffff;
	if (data[0] & 4)		/* and bases near the top */
		r.base_to = ~r.base_to & ~0xffffULL;
	r.access = get_unaligned_be32(data + 18);
	stream = data[22] & 3;
	q.exists = data[23] & 1;
	q.expected_msn = get_unaligned_be32(data + 24);
	q.nbuf_posted = get_unaligned_be32(data + 28);
	if (data[23] & 2)
		q.nbuf_posted &= 7;
	q.buf_len = get_unaligned_be32(data + 32);
	if (data[23] & 4)
		q.buf_len &= 0xfff;

	len = size - VIEW_LEN;
	/* exact-size copy so that ASan sees any over-read */
	seg = malloc(len ? len : 1);
	CHECK(seg);
	memcpy(seg, data + VIEW_LEN, len);

	memset(&s, 0xa5, sizeof(s));
	ret = ddp_hdr_parse(seg, len, &s, &e);
	CHECK(ret == 0 || ret == -EINVAL);
	check_parse(seg, len, &s, ret, &e);

	if (!ret) {
		check_build(seg, &s);
		if (s.payload_len) {
			/* read every payload octet (memcpy is checked) */
			u8 *copy = malloc(s.payload_len);

			CHECK(copy);
			memcpy(copy, s.payload, s.payload_len);
			CHECK(!memcmp(copy, seg + len - s.payload_len,
				      s.payload_len));
			free(copy);
		}
	}
	/* the checks must be safe whatever the parser said */
	if (s.tagged) {
		/* also with a payload length that is not real */
		check_tagged(&s, &r, stream);
		check_tagged(&s, NULL, stream);
		s.payload_len = get_unaligned_be32(data + 36);
		check_tagged(&s, &r, stream);
	} else {
		check_untagged(&s, &q);
		check_untagged(&s, NULL);
		s.payload_len = get_unaligned_be32(data + 36);
		check_untagged(&s, &q);
	}
	check_segmenter(get_unaligned_be32(data + 40),
			get_unaligned_be16(data + 44), data[46] & 1);

	free(seg);
	return 0;
}
