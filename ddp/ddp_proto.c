// SPDX-License-Identifier: GPL-2.0
/*
 * Pure DDP (RFC 5041) protocol logic: header encoding and decoding, the
 * receive checks of section 7.1, segmentation at the Data Source.
 *
 * The checks take a snapshot ("view") of what the Data Sink knows about
 * the target buffer, filled in by the caller under its own locks, and
 * report the first failed check as a section 7.2 error number. Nothing is
 * placed here: callers place only after every check passed (section 7.1,
 * section 8.1).
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/build_bug.h>
#include <net/iwarp_compat.h>

#include "ddp_proto.h"

static int ddp_fail(struct ddp_err *err, u8 type, u8 code)
{
	err->type = type;
	err->code = code;
	return -EINVAL;
}

/**
 * ddp_hdr_parse() - decode a DDP segment (an MPA ULPDU)
 * @seg: the segment, header first
 * @len: its length as reported by the LLP (RFC 5041 section 3, item 7)
 * @out: decoded segment; @out->payload points into @seg
 * @err: error number when the segment is refused
 *
 * The Rsvd bits of the control field are ignored (section 4.1). @out is
 * filled in as far as @len allows also on error, so that the caller can
 * include the header in its error report (section 7.1).
 *
 * DV is checked first: a header of another version cannot be decoded,
 * its length included. DV != 1 is reported as 0x1/0x04 when T is set and
 * 0x2/0x06 when it is not (sections 4.1, 6.2.2, 7.2).
 *
 * A segment shorter than its header (section 4.4: every segment MUST
 * carry a complete header) has no error number of its own in section 7.2:
 * the STag, TO, QN, MSN or MO the tagged and untagged codes talk about
 * are missing. It is an invalid header field, hence a fatal stream error
 * (section 6.2.2), reported as 0x0/0x00 (Local Catastrophic), the only
 * type that does not name a buffer; Linux siw uses it likewise for
 * errors without a specific code. Type 0x3 is left to the LLP itself.
 *
 * Return: 0, or -EINVAL with @err set.
 */
int ddp_hdr_parse(const void *seg, u32 len, struct ddp_seg *out,
		  struct ddp_err *err)
{
	return ddp_hdr_parse_dv(seg, len, DDP_WIRE_VERSION, out, err);
}

/**
 * ddp_hdr_parse_dv() - ddp_hdr_parse() for a stream of DDP version @dv
 * @seg: the segment
 * @len: its length
 * @dv: the stream's version: 1, or 0 after an MPA revision 0 startup
 *	(RFC 5044 Appendix C)
 * @out: the parsed segment
 * @err: error number when it fails
 *
 * Return: 0, or -EINVAL with @err set.
 */
int ddp_hdr_parse_dv(const void *seg, u32 len, u8 dv, struct ddp_seg *out,
		     struct ddp_err *err)
{
	const u8 *p = seg;
	u32 hlen;
	u8 ctrl;

	BUILD_BUG_ON(sizeof(struct ddp_tagged_hdr) != 14);
	BUILD_BUG_ON(sizeof(struct ddp_untagged_hdr) != 18);

	memset(out, 0, sizeof(*out));
	if (!len)
		return ddp_fail(err, DDP_WIRE_ETYPE_CATASTROPHIC,
				DDP_WIRE_ECODE_CATASTROPHIC);

	ctrl = p[0];
	out->tagged = !!(ctrl & DDP_FLAG_T);
	out->last = !!(ctrl & DDP_FLAG_L);
	out->dv = ctrl & DDP_DV_MASK;
	hlen = out->tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;

	if (len >= hlen) {
		if (out->tagged) {
			const struct ddp_tagged_hdr *h = seg;

			out->rsvdulp_t = h->rsvdulp;
			out->stag = get_unaligned_be32(&h->stag);
			out->to = get_unaligned_be64(&h->to);
		} else {
			const struct ddp_untagged_hdr *h = seg;

			memcpy(out->rsvdulp_u, h->rsvdulp, DDP_RSVDULP_U_LEN);
			out->qn = get_unaligned_be32(&h->qn);
			out->msn = get_unaligned_be32(&h->msn);
			out->mo = get_unaligned_be32(&h->mo);
		}
		out->payload = p + hlen;
		out->payload_len = len - hlen;
	}

	if (out->dv != dv) {
		if (out->tagged)
			return ddp_fail(err, DDP_WIRE_ETYPE_TAGGED,
					DDP_WIRE_ECODE_T_INVALID_DV);
		return ddp_fail(err, DDP_WIRE_ETYPE_UNTAGGED,
				DDP_WIRE_ECODE_U_INVALID_DV);
	}
	if (len < hlen)
		return ddp_fail(err, DDP_WIRE_ETYPE_CATASTROPHIC,
				DDP_WIRE_ECODE_CATASTROPHIC);
	return 0;
}

/**
 * ddp_check_tagged() - RFC 5041 section 7.1 checks of a tagged segment
 * @s: the parsed segment
 * @r: the buffer its STag names, or NULL when the STag is unknown
 * @stream_id: Stream ID or PD ID the STag must be bound to (section 8.2)
 * @err: error number of the first failed check
 *
 * A zero-length segment passes: its STag and TO MUST NOT be checked
 * (section 5.2). Otherwise, in this order (section 7.1, tagged list):
 *
 * - check 1: the STag is valid for this stream: unknown or invalidated -> 0x1/0x00,
 *   bound to another Stream ID or PD ID -> 0x1/0x02 (section 8.2);
 * - check 2: the STag's buffer allows placement (remote write) -> 0x1/0x00, there
 *   is no DDP code for access rights;
 * - check 5: TO + payload length, an unsigned 64-bit sum, does not wrap
 *   -> 0x1/0x03. The sum is exactly 2^64 when the last octet is at
 *   2^64 - 1, which also wraps to zero and is refused;
 * - check 3: TO is not below the base (nor past the end) of the buffer -> 0x1/0x01;
 * - check 4: TO + payload length is within the buffer -> 0x1/0x01.
 *
 * Check 5 is done before 3 and 4 on purpose. In exact arithmetic a sum
 * that wraps is at least 2^64, beyond the end of any buffer, so checks 3
 * or 4 would always fail first and 0x1/0x03 could never be reported; in
 * 64-bit arithmetic a wrapped sum could even pass check 4. Putting it
 * first makes every section 7.2 code reachable and the bounds test
 * overflow-free. The bounds test itself never overflows either, even for
 * a buffer that ends at 2^64.
 *
 * Return: 0 when the payload may be placed, -EINVAL with @err set if not.
 */
int ddp_check_tagged(const struct ddp_seg *s, const struct ddp_region_view *r,
		     u32 stream_id, struct ddp_err *err)
{
	u64 plen = s->payload_len;

	if (!plen)
		return 0;
	if (!r || !r->valid)
		return ddp_fail(err, DDP_WIRE_ETYPE_TAGGED,
				DDP_WIRE_ECODE_T_INVALID_STAG);
	if (r->stream_or_pd != stream_id)
		return ddp_fail(err, DDP_WIRE_ETYPE_TAGGED,
				DDP_WIRE_ECODE_T_STAG_NOT_ASSOC);
	if (!(r->access & DDP_VIEW_WRITE))
		return ddp_fail(err, DDP_WIRE_ETYPE_TAGGED,
				DDP_WIRE_ECODE_T_INVALID_STAG);
	if (s->to + plen < s->to)
		return ddp_fail(err, DDP_WIRE_ETYPE_TAGGED, DDP_WIRE_ECODE_T_TO_WRAP);
	if (s->to < r->base_to || plen > r->len ||
	    s->to - r->base_to > r->len - plen)
		return ddp_fail(err, DDP_WIRE_ETYPE_TAGGED,
				DDP_WIRE_ECODE_T_BASE_BOUNDS);
	return 0;
}

/**
 * ddp_run_in_order() - a run of segment octets is the one expected next
 * @next: offset in the segment where the next run must start (0 for a
 *	new segment)
 * @seg_len: the segment's length
 * @off: offset of the run in the segment
 * @len: its length
 *
 * The LLP hands a segment over in runs, in order and without gaps. A run
 * anywhere else must not be placed: the header, and with it the buffer,
 * of the octets before it is not known.
 *
 * Return: true when the run starts at @next and ends within the segment.
 */
bool ddp_run_in_order(u32 next, u32 seg_len, u32 off, u32 len)
{
	return off == next && off <= seg_len && len <= seg_len - off;
}

/**
 * ddp_check_untagged() - RFC 5041 section 7.1 checks of an untagged segment
 * @s: the parsed segment
 * @q: the queue its QN names, or NULL when there is none
 * @err: error number of the first failed check
 *
 * In this order (section 7.1, untagged list):
 *
 * - check 1: the QN is valid for this stream -> 0x2/0x01;
 * - check 2: (QN, MSN) has a buffer: none is posted on the queue at all
 *   -> 0x2/0x02 "no buffer available";
 * - check 5: the MSN is within the legal range, from the MSN of the first
 *   available buffer to the MSN of the last one, i.e. in
 *   [@q->expected_msn, @q->expected_msn + @q->nbuf_posted) modulo 2^32
 *   -> 0x2/0x03 (already completed messages as well as messages beyond
 *   the last posted buffer);
 * - check 3: MO is a legal offset of that buffer -> 0x2/0x04;
 * - check 4: MO + payload length is within that buffer -> 0x2/0x05.
 *
 * Checks 2 and 5 together decide whether the MSN selects a posted buffer,
 * and checks 3 and 4 test offsets of that very buffer: they are
 * meaningless (@q->buf_len describes nothing) for an MSN outside the
 * range, so check 5 is done before them. Taken literally, check 2 would
 * also cover every MSN outside the range and 0x2/0x03 would never be
 * reported; it is therefore restricted to the case where the range is
 * empty, which is the "system fault" of the section 7.1 note: a
 * legitimate message for which the local ULP posted no buffer.
 *
 * Section 7.1 lists its checks for non-zero-length segments only. A
 * zero-length untagged message still consumes an MSN and a buffer and is
 * delivered (section 5.4), so checks 1, 2 and 5 apply to it as well, and
 * its MO must not exceed the buffer length (the delivered length is
 * MO + 0). For a non-empty payload MO must be below the buffer length.
 *
 * Return: 0 when the payload may be placed, -EINVAL with @err set if not.
 */
int ddp_check_untagged(const struct ddp_seg *s, const struct ddp_uq_view *q,
		       struct ddp_err *err)
{
	if (!q || !q->exists)
		return ddp_fail(err, DDP_WIRE_ETYPE_UNTAGGED,
				DDP_WIRE_ECODE_U_INVALID_QN);
	if (!q->nbuf_posted)
		return ddp_fail(err, DDP_WIRE_ETYPE_UNTAGGED,
				DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF);
	if (!ddp_msn_in_window(s->msn, q->expected_msn, q->nbuf_posted))
		return ddp_fail(err, DDP_WIRE_ETYPE_UNTAGGED,
				DDP_WIRE_ECODE_U_INVALID_MSN_RANGE);
	if (s->mo > q->buf_len || (s->payload_len && s->mo == q->buf_len))
		return ddp_fail(err, DDP_WIRE_ETYPE_UNTAGGED,
				DDP_WIRE_ECODE_U_INVALID_MO);
	if ((u64)s->mo + s->payload_len > q->buf_len)
		return ddp_fail(err, DDP_WIRE_ETYPE_UNTAGGED,
				DDP_WIRE_ECODE_U_MSG_TOO_LONG);
	return 0;
}

/**
 * ddp_tagged_hdr_build() - fill in a tagged buffer header (section 4.2)
 * @h: header to write
 * @dv: DDP version of the stream: DDP_WIRE_VERSION, or 0 after an MPA
 *	revision 0 startup (RFC 5044 Appendix C)
 * @last: L bit, set on the last segment of the message only
 * @rsvdulp: the ULP's 8 bits
 * @stag: STag of the sink buffer
 * @to: tagged offset of the segment's first payload octet
 *
 * The control field is 0x81 or 0xC1 for DV=1: T=1, Rsvd=0 (section 4.1).
 */
void ddp_tagged_hdr_build(struct ddp_tagged_hdr *h, u8 dv, bool last,
			  u8 rsvdulp, u32 stag, u64 to)
{
	h->ctrl = DDP_FLAG_T | (last ? DDP_FLAG_L : 0) | (dv & DDP_DV_MASK);
	h->rsvdulp = rsvdulp;
	put_unaligned_be32(stag, &h->stag);
	put_unaligned_be64(to, &h->to);
}

/**
 * ddp_untagged_hdr_build() - fill in an untagged buffer header (section 4.3)
 * @h: header to write
 * @dv: DDP version of the stream, as for ddp_tagged_hdr_build()
 * @last: L bit, set on the last segment of the message only
 * @rsvdulp: the ULP's 40 bits, in wire order
 * @qn: queue number
 * @msn: message sequence number
 * @mo: message offset of the segment's first payload octet
 *
 * The control field is 0x01 or 0x41 for DV=1: T=0, Rsvd=0 (section 4.1).
 */
void ddp_untagged_hdr_build(struct ddp_untagged_hdr *h, u8 dv, bool last,
			    const u8 rsvdulp[DDP_RSVDULP_U_LEN], u32 qn,
			    u32 msn, u32 mo)
{
	h->ctrl = (last ? DDP_FLAG_L : 0) | (dv & DDP_DV_MASK);
	memcpy(h->rsvdulp, rsvdulp, DDP_RSVDULP_U_LEN);
	put_unaligned_be32(qn, &h->qn);
	put_unaligned_be32(msn, &h->msn);
	put_unaligned_be32(mo, &h->mo);
}

/**
 * ddp_seg_payload_max() - payload octets that fit in one segment
 * @mulpdu: the LLP's current MULPDU (section 5.2: header + payload)
 * @tagged: tagged (14-octet header) or untagged (18-octet header)
 *
 * Return: @mulpdu minus the header length, 0 if it does not even fit.
 */
u32 ddp_seg_payload_max(u32 mulpdu, bool tagged)
{
	u32 hlen = tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;

	return mulpdu > hlen ? mulpdu - hlen : 0;
}

/**
 * ddp_seg_init() - start cutting a ULP message into segments
 * @it: segmenter
 * @msg_len: message length in octets
 * @max_payload: payload octets per segment, from ddp_seg_payload_max()
 *
 * Return: 0, -EMSGSIZE when @msg_len is 2^32 or more (section 5.2) or
 * -EINVAL when @max_payload is 0.
 */
int ddp_seg_init(struct ddp_segmenter *it, u64 msg_len, u32 max_payload)
{
	if (msg_len > DDP_MAX_MSG_LEN)
		return -EMSGSIZE;
	if (!max_payload)
		return -EINVAL;
	it->msg_len = msg_len;
	it->done = 0;
	it->max_payload = max_payload;
	it->finished = false;
	return 0;
}

/**
 * ddp_seg_resize() - change the payload per segment from the next one on
 * @it: segmenter
 * @max_payload: payload octets per segment, from ddp_seg_payload_max();
 *	0 is ignored
 *
 * The LLP's MULPDU follows the path MTU, which may change in the middle
 * of a message (RFC 5041 section 5.2 only asks for segments that fit).
 */
void ddp_seg_resize(struct ddp_segmenter *it, u32 max_payload)
{
	if (max_payload)
		it->max_payload = max_payload;
}

/**
 * ddp_seg_next() - next segment of the message
 * @it: segmenter set up by ddp_seg_init()
 * @off: offset of the segment's payload in the message: its MO, or what
 *	to add to the initial TO (section 5.2)
 * @len: payload octets of the segment
 * @last: the segment carries L=1
 *
 * Segments are contiguous, in increasing offset order, each but the last
 * one carrying exactly max_payload octets; only the last one has L=1. A
 * zero-length message gives exactly one segment, with L=1 and no payload.
 *
 * Return: true when a segment was produced, false once the L=1 segment
 * has been produced.
 */
bool ddp_seg_next(struct ddp_segmenter *it, u32 *off, u32 *len, bool *last)
{
	u64 rem;

	if (it->finished || it->done > it->msg_len ||
	    (!it->max_payload && it->done != it->msg_len))
		return false;
	rem = it->msg_len - it->done;
	*off = (u32)it->done;
	*len = (u32)min_t(u64, rem, it->max_payload);
	it->done += *len;
	*last = it->done == it->msg_len;
	it->finished = *last;
	return true;
}
