// SPDX-License-Identifier: GPL-2.0
/*
 * Pure MPA (RFC 5044) protocol logic: startup frames, MULPDU, FPDU
 * encoding with markers and CRC32c, and an incremental FPDU decoder.
 *
 * Stream positions are u32 octet offsets relative to the first marker
 * position; markers start where pos % 512 == 0. Since 2^32 is a multiple
 * of 512, all arithmetic is simply done modulo 2^32.
 *
 * An FPDU owns every marker from its first octet (a marker that precedes
 * its ULPDU_Length field, FPDUPTR 0) up to the last octet of its CRC field.
 * The CRC covers every wire octet from the first one of the FPDU up to,
 * but excluding, the first octet of the CRC field, which includes a marker
 * right after the pad (RFC 5044 section 4.4). When the stream position of
 * FPDUs is a multiple of 4, as it always is in a stream that starts with a
 * marker, no marker can split the header or the CRC; the code nevertheless
 * handles any position consistently on both sides.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <net/iwarp_compat.h>

#include "mpa_proto.h"

/**
 * mpa_frame_decode() - parse an MPA Request/Reply frame header
 * @hdr: the 20 octets of the header
 * @rev_mask: accepted revisions, bit n set means revision n is accepted
 * @info: decoded header
 *
 * @info is filled in whenever the key is valid, also when the revision or
 * the private data length is refused, so that callers can report them.
 *
 * Return: 0, -EBADMSG for an unknown key, -EPROTONOSUPPORT for a revision
 * not in @rev_mask or -EMSGSIZE for a private data length above 512.
 */
int mpa_frame_decode(const void *hdr, u32 rev_mask, struct mpa_frame_info *info)
{
	const struct mpa_frame_hdr *h = hdr;

	if (!memcmp(h->key, MPA_WIRE_KEY_REQ, MPA_WIRE_KEY_LEN))
		info->request = true;
	else if (!memcmp(h->key, MPA_WIRE_KEY_REP, MPA_WIRE_KEY_LEN))
		info->request = false;
	else
		return -EBADMSG;

	info->markers = !!(h->flags & MPA_FLAG_M);
	info->crc = !!(h->flags & MPA_FLAG_C);
	info->reject = !!(h->flags & MPA_FLAG_R);
	info->rev = h->rev;
	/* the enhanced-data flag is a reserved bit before revision 2 */
	info->enhanced = info->rev >= 2 && (h->flags & MPA_FLAG_E);
	info->pd_len = get_unaligned_be16(&h->pd_len);

	if (info->rev >= 32 || !(rev_mask & (1U << info->rev)))
		return -EPROTONOSUPPORT;
	if (info->pd_len > MPA_MAX_PD_LEN)
		return -EMSGSIZE;
	return 0;
}

/**
 * mpa_frame_encode() - build an MPA Request/Reply frame
 * @buf: destination
 * @size: room in @buf
 * @info: header contents; the key is chosen by @info->request
 * @pd: @info->pd_len octets of private data (may be NULL when 0)
 *
 * Return: the frame length (20 + pd_len), -EINVAL when pd_len exceeds 512
 * or -ENOSPC when @size is too small.
 */
int mpa_frame_encode(void *buf, u32 size, const struct mpa_frame_info *info,
		     const void *pd)
{
	struct mpa_frame_hdr *h = buf;
	u32 total = MPA_FRAME_HDR_LEN + info->pd_len;
	u8 flags = 0;

	if (info->pd_len > MPA_MAX_PD_LEN)
		return -EINVAL;
	if (size < total)
		return -ENOSPC;

	if (info->markers)
		flags |= MPA_FLAG_M;
	if (info->crc)
		flags |= MPA_FLAG_C;
	if (info->reject)
		flags |= MPA_FLAG_R;
	if (info->enhanced)
		flags |= MPA_FLAG_E;

	memcpy(h->key, info->request ? MPA_WIRE_KEY_REQ : MPA_WIRE_KEY_REP, MPA_WIRE_KEY_LEN);
	h->flags = flags;
	h->rev = info->rev;
	put_unaligned_be16(info->pd_len, &h->pd_len);
	/* the caller may have built the private data in place */
	if (info->pd_len && pd != (u8 *)buf + MPA_FRAME_HDR_LEN)
		memcpy((u8 *)buf + MPA_FRAME_HDR_LEN, pd, info->pd_len);
	return total;
}

/**
 * mpa_v2_decode() - read RFC 6581 enhanced connection data
 * @data: the first 4 octets of a revision 2 frame's private data
 * @v: decoded values
 */
void mpa_v2_decode(const void *data, struct mpa_v2_info *v)
{
	const u8 *p = data;
	u16 ird = get_unaligned_be16(p);
	u16 ord = get_unaligned_be16(p + 2);

	v->ird = ird & MPA_V2_IRD_ORD_MASK;
	v->ord = ord & MPA_V2_IRD_ORD_MASK;
	v->p2p = ird & MPA_V2_P2P;
	v->rtr = (ird & MPA_V2_RTR_SEND ? MPA_F_RTR_SEND : 0) |
		 (ord & MPA_V2_RTR_WRITE ? MPA_F_RTR_WRITE : 0) |
		 (ord & MPA_V2_RTR_READ ? MPA_F_RTR_READ : 0);
}

/**
 * mpa_v2_encode() - write RFC 6581 enhanced connection data
 * @data: 4 octets
 * @v: values; IRD and ORD above 0x3fff are clamped
 */
void mpa_v2_encode(void *data, const struct mpa_v2_info *v)
{
	u16 ird = min_t(u16, v->ird, MPA_V2_IRD_ORD_MASK);
	u16 ord = min_t(u16, v->ord, MPA_V2_IRD_ORD_MASK);
	u8 *p = data;

	if (v->p2p)
		ird |= MPA_V2_P2P;
	if (v->rtr & MPA_F_RTR_SEND)
		ird |= MPA_V2_RTR_SEND;
	if (v->rtr & MPA_F_RTR_WRITE)
		ord |= MPA_V2_RTR_WRITE;
	if (v->rtr & MPA_F_RTR_READ)
		ord |= MPA_V2_RTR_READ;
	put_unaligned_be16(ird, p);
	put_unaligned_be16(ord, p + 2);
}

/**
 * mpa_v2_answer() - the Responder's enhanced data for its Reply
 * @req: what the Request carried
 * @local: the Responder's own limits and the RTR types it accepts
 * @reply: out: the values to send
 *
 * IRD and ORD swap roles: the Reply's IRD is at most the Request's ORD
 * and the Reply's ORD at most the Request's IRD. A peer-to-peer Request
 * gets exactly one RTR type that both sides allow (RDMA Write first,
 * then Read, then Send).
 *
 * Return: 0, or -EOPNOTSUPP when the Request asks for the peer-to-peer
 * model and no RTR type (or no peer-to-peer at all) is acceptable here.
 */
int mpa_v2_answer(const struct mpa_v2_info *req, const struct mpa_v2_info *local,
		  struct mpa_v2_info *reply)
{
	u8 common = req->rtr & local->rtr;

	memset(reply, 0, sizeof(*reply));
	reply->ird = min(local->ird, req->ord);
	reply->ord = min(local->ord, req->ird);
	if (!req->p2p)
		return 0;
	if (!local->p2p || !common)
		return -EOPNOTSUPP;
	reply->p2p = true;
	if (common & MPA_F_RTR_WRITE)
		reply->rtr = MPA_F_RTR_WRITE;
	else if (common & MPA_F_RTR_READ)
		reply->rtr = MPA_F_RTR_READ;
	else
		reply->rtr = MPA_F_RTR_SEND;
	return 0;
}

/**
 * mpa_v2_check_reply() - the Initiator checks a revision 2 Reply
 * @req: what its Request carried
 * @reply: what the Reply carries
 *
 * Return: 0, or -EPROTO when the Reply breaks RFC 6581: peer-to-peer not
 * echoed, not exactly one RTR type or one that was not offered, an
 * RTR type without peer-to-peer, or an ORD above the Request's IRD.
 */
int mpa_v2_check_reply(const struct mpa_v2_info *req, const struct mpa_v2_info *reply)
{
	if (reply->ord > req->ird)
		return -EPROTO;
	if (!req->p2p)
		return reply->p2p || reply->rtr ? -EPROTO : 0;
	if (!reply->p2p || hweight8(reply->rtr) != 1 || !(reply->rtr & req->rtr))
		return -EPROTO;
	return 0;
}

/**
 * mpa_lens_check() - the ULPDU lengths of one send (MPA_CMSG_LENS)
 * @lens: the lengths
 * @n: their number
 * @total: octets of data the send carries
 *
 * Return: 0 when there is at least one length and they add up to @total,
 * -EINVAL otherwise.
 */
int mpa_lens_check(const u32 *lens, u32 n, u64 total)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++)
		sum += lens[i];
	return n && sum == total ? 0 : -EINVAL;
}

/**
 * mpa_mulpdu() - largest ULPDU that fits in one segment (RFC 5044 4.5)
 * @emss: effective maximum segment size of the TCP connection
 * @markers: markers are inserted on this half connection
 *
 * Return: EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4) with markers,
 * EMSS - (6 + EMSS mod 4) without, never below 128 nor above 65535.
 */
u32 mpa_mulpdu(u32 emss, bool markers)
{
	u32 overhead = MPA_HDR_LEN + MPA_CRC_LEN + emss % 4;
	u32 mulpdu;

	if (markers)
		overhead += MPA_MARKER_LEN * (emss / MPA_MARKER_PERIOD +
					      !!(emss % MPA_MARKER_PERIOD));
	if (emss < overhead + MPA_MIN_MULPDU)
		return MPA_MIN_MULPDU;
	mulpdu = emss - overhead;
	return min_t(u32, mulpdu, MPA_MAX_ULPDU);
}

/**
 * mpa_fpdu_wire_len() - on-wire size of an FPDU
 * @pos: stream position of the first octet of the FPDU
 * @ulpdu_len: ULPDU octets carried (at most 65535)
 * @markers: markers are inserted
 *
 * Counts the header, the ULPDU, the pad, the CRC and every marker from a
 * marker at @pos (which precedes the FPDU) up to one right after the pad.
 * A marker right after the CRC belongs to the next FPDU.
 *
 * Return: the number of octets the FPDU occupies in the stream.
 */
u32 mpa_fpdu_wire_len(u32 pos, u32 ulpdu_len, bool markers)
{
	u32 plain = mpa_fpdu_plain_len(ulpdu_len);
	u32 gap, n;

	if (!markers)
		return plain;
	/*
	 * The i-th marker is at offset gap + 512 * i and has gap + 508 * i
	 * FPDU octets before it; it is part of the FPDU while that is less
	 * than the FPDU size.
	 */
	gap = mpa_marker_gap(pos);
	if (plain <= gap)
		return plain;
	n = (plain - gap - 1) / (MPA_MARKER_PERIOD - MPA_MARKER_LEN) + 1;
	return plain + n * MPA_MARKER_LEN;
}

struct mpa_enc {
	u8	*out;
	u32	off;
	u32	pos;		/* stream position of out[0] */
	u32	hdr_pos;	/* stream position of ULPDU_Length */
	bool	markers;
	bool	started;	/* first header octet written */
};

static void mpa_enc_marker(struct mpa_enc *e)
{
	u32 mpos = e->pos + e->off;
	u16 ptr = 0;

	if (!e->markers || mpos % MPA_MARKER_PERIOD)
		return;
	if (e->started)
		ptr = (u16)(mpos - e->hdr_pos);
	put_unaligned_be16(0, e->out + e->off);
	put_unaligned_be16(ptr, e->out + e->off + 2);
	e->off += MPA_MARKER_LEN;
}

/*
 * Write @len FPDU octets, inserting markers where they fall, taken from
 * @src, or from @copy if set, or zeros if both are NULL. A marker due
 * right after the last octet is not written.
 */
static int mpa_enc_put(struct mpa_enc *e, const u8 *src, u32 len,
		       mpa_copy_fn copy, void *ctx)
{
	while (len) {
		u32 run = len;
		int ret;

		mpa_enc_marker(e);
		if (!e->started) {
			e->started = true;
			e->hdr_pos = e->pos + e->off;
		}
		if (e->markers)
			run = min_t(u32, run, mpa_marker_gap(e->pos + e->off));
		if (copy) {
			ret = copy(ctx, e->out + e->off, run);
			if (ret)
				return ret;
		} else if (src) {
			memcpy(e->out + e->off, src, run);
			src += run;
		} else {
			memset(e->out + e->off, 0, run);
		}
		e->off += run;
		len -= run;
	}
	return 0;
}

/**
 * mpa_fpdu_seal() - finish an FPDU without markers around its ULPDU
 * @out: the FPDU, its ULPDU in place at @out + MPA_HDR_LEN
 * @ulpdu_len: ULPDU octets, at most 65535
 * @crc: compute the CRC (otherwise the CRC field is 0)
 *
 * Writes the header, the pad and the CRC.
 *
 * Return: the wire length, mpa_fpdu_wire_len(pos, @ulpdu_len, false).
 */
u32 mpa_fpdu_seal(u8 *out, u32 ulpdu_len, bool crc)
{
	u32 crc_off = MPA_HDR_LEN + ulpdu_len + mpa_pad_len(ulpdu_len);

	put_unaligned_be16(ulpdu_len, out);
	memset(out + MPA_HDR_LEN + ulpdu_len, 0, mpa_pad_len(ulpdu_len));
	put_unaligned_le32(crc ? ~mpa_crc32c(~0U, out, crc_off) : 0, out + crc_off);
	return crc_off + MPA_CRC_LEN;
}

/**
 * mpa_fpdu_crc_good() - check the CRC of an FPDU without markers
 * @fpdu: the FPDU in one piece, from its ULPDU_Length field to its CRC
 * @ulpdu_len: its ULPDU_Length
 *
 * The receiving side of mpa_fpdu_seal().
 *
 * Return: true when the CRC field holds the CRC32c of the octets before it.
 */
bool mpa_fpdu_crc_good(const u8 *fpdu, u32 ulpdu_len)
{
	u32 crc_off = MPA_HDR_LEN + ulpdu_len + mpa_pad_len(ulpdu_len);

	return get_unaligned_le32(fpdu + crc_off) == ~mpa_crc32c(~0U, fpdu, crc_off);
}

/**
 * mpa_fpdu_encode() - build the wire image of one FPDU
 * @out: destination
 * @size: room in @out
 * @pos: stream position of out[0]
 * @markers: insert markers
 * @crc: compute the CRC (otherwise the CRC field is 0)
 * @ulpdu_len: ULPDU octets, at most 65535
 * @copy: called to fetch the ULPDU, once per run between markers
 * @ctx: argument of @copy
 *
 * Return: the wire length (mpa_fpdu_wire_len()), -EINVAL when @ulpdu_len
 * is too large, -ENOSPC when @size is too small, or the error of @copy.
 */
int mpa_fpdu_encode(u8 *out, u32 size, u32 pos, bool markers, bool crc,
		    u32 ulpdu_len, mpa_copy_fn copy, void *ctx)
{
	struct mpa_enc e = {
		.out = out,
		.pos = pos,
		.markers = markers,
	};
	u8 field[MPA_CRC_LEN];
	u32 wire, crc_off;
	int ret;

	if (ulpdu_len > MPA_MAX_ULPDU)
		return -EINVAL;
	wire = mpa_fpdu_wire_len(pos, ulpdu_len, markers);
	if (wire > size)
		return -ENOSPC;

	if (!markers) {
		/* header, ULPDU, pad and CRC in one run each */
		if (ulpdu_len) {
			ret = copy(ctx, out + MPA_HDR_LEN, ulpdu_len);
			if (ret)
				return ret;
		}
		return mpa_fpdu_seal(out, ulpdu_len, crc);
	}

	put_unaligned_be16(ulpdu_len, field);
	ret = mpa_enc_put(&e, field, MPA_HDR_LEN, NULL, NULL);
	if (!ret)
		ret = mpa_enc_put(&e, NULL, ulpdu_len, copy, ctx);
	if (ret)
		return ret;
	mpa_enc_put(&e, NULL, mpa_pad_len(ulpdu_len), NULL, NULL);
	/* a marker right after the pad is part of this FPDU and its CRC */
	mpa_enc_marker(&e);
	crc_off = e.off;

	put_unaligned_le32(crc ? ~mpa_crc32c(~0U, out, crc_off) : 0, field);
	mpa_enc_put(&e, field, MPA_CRC_LEN, NULL, NULL);
	return e.off;
}

/**
 * mpa_dec_init() - reset an FPDU decoder
 * @rx: decoder state
 * @buf: ULPDU destination of MPA_DEC_BUF_LEN octets, or NULL: the caller
 *	then sets @rx->buf and @rx->buf_len when mpa_dec_feed() asks for them
 * @markers: the received stream carries markers
 * @crc: check CRCs
 *
 * The stream position starts at 0, the position of the first marker. A
 * caller may set @rx->pos afterwards to any multiple of 4 (a marker is
 * expected wherever pos % 512 == 0).
 */
void mpa_dec_init(struct mpa_dec *rx, u8 *buf, bool markers, bool crc)
{
	memset(rx, 0, sizeof(*rx));
	rx->buf = buf;
	rx->buf_len = buf ? MPA_DEC_BUF_LEN : 0;
	rx->markers = markers;
	rx->crc = crc;
	rx->state = MPA_DECS_HDR;
	rx->crc_acc = ~0U;
}

/**
 * mpa_dec_placing() - the decoder is inside a ULPDU that goes to @place
 * @rx: decoder
 *
 * Return: true from the end of the ULPDU_Length field of an FPDU whose
 * ULPDU is handed to @rx->place until its CRC has been collected.
 */
bool mpa_dec_placing(const struct mpa_dec *rx)
{
	return rx->placing && rx->state != MPA_DECS_HDR;
}

/* ULPDU (and pad) octets: to the buffer, or the ULPDU part to @place */
static void mpa_dec_data(struct mpa_dec *rx, const u8 *p, u32 len)
{
	u32 n;

	if (!rx->placing) {
		memcpy(rx->buf + rx->have, p, len);
		return;
	}
	n = rx->have < rx->ulpdu_len ? min_t(u32, len, rx->ulpdu_len - rx->have) : 0;
	/* @place may be gone (the consumer left in mid-ULPDU): drop */
	if (n && rx->place)
		rx->place(rx->place_ctx, rx->have, p, n);
}

static void mpa_dec_crc(struct mpa_dec *rx, const u8 *p, u32 len)
{
	if (rx->crc)
		rx->crc_acc = mpa_crc32c(rx->crc_acc, p, len);
}

/* collect marker octets; false on a bad FPDUPTR */
static bool mpa_dec_marker(struct mpa_dec *rx, const u8 *p, u32 len)
{
	u32 mpos, want;
	u16 ptr;

	/* a marker that splits the CRC field is not covered by it */
	if (rx->state != MPA_DECS_CRC || !rx->npartial)
		mpa_dec_crc(rx, p, len);
	memcpy(rx->partial + rx->nmark, p, len);
	rx->nmark += len;
	if (rx->nmark < MPA_MARKER_LEN)
		return true;

	rx->nmark = 0;
	rx->nmarkers++;
	mpos = rx->pos + len - MPA_MARKER_LEN;
	ptr = get_unaligned_be16(rx->partial + 2);
	if (mpa_dec_between(rx)) {
		want = 0;
		rx->in_fpdu = true;
	} else {
		want = (mpos - rx->fpdu_start) & 0xffff;
	}
	return (ptr & ~3U) == (want & ~3U);
}

static int mpa_dec_error(struct mpa_dec *rx, u32 err)
{
	rx->err = err;
	if (err == MPA_ERR_CRC)
		rx->crc_errors++;
	return MPA_DEC_ERROR;
}

/*
 * A whole FPDU at @p, @len octets on, on a decoder between FPDUs without
 * markers: its CRC is checked first and its ULPDU then goes to @place in
 * one run, or to @buf. Return the FPDU's wire length (with a bad CRC,
 * nothing placed and the decoder left as mpa_dec_feed() leaves it then),
 * or 0 when it is not whole in @p or has no buffer: mpa_dec_feed() then
 * takes it run by run.
 */
static u32 mpa_dec_whole(struct mpa_dec *rx, const u8 *p, u32 len)
{
	u32 ulen, wire;

	if (len < MPA_HDR_LEN)
		return 0;
	ulen = get_unaligned_be16(p);
	wire = mpa_fpdu_plain_len(ulen);
	if (len < wire || (!rx->place && rx->buf_len < wire - MPA_HDR_LEN - MPA_CRC_LEN))
		return 0;
	rx->fpdu_start = rx->pos;
	rx->ulpdu_len = ulen;
	rx->have = mpa_dec_need(rx);
	rx->pos += wire;
	rx->placing = !!rx->place;
	if (rx->crc && !mpa_fpdu_crc_good(p, ulen)) {
		/* as the octet-run decoder leaves a bad FPDU */
		rx->in_fpdu = true;
		rx->state = MPA_DECS_CRC;
		rx->npartial = MPA_CRC_LEN;
		return wire;
	}
	if (rx->place && ulen)
		rx->place(rx->place_ctx, 0, p + MPA_HDR_LEN, ulen);
	else if (!rx->place)
		memcpy(rx->buf, p + MPA_HDR_LEN, rx->have);
	rx->ulpdus++;
	return wire;
}

/**
 * mpa_dec_feed() - run received stream octets through the FPDU decoder
 * @rx: decoder state
 * @data: received octets
 * @len: number of octets at @data
 * @consumed: set to the number of octets used
 *
 * Chunks may be split anywhere. Markers are removed and checked, the
 * ULPDU and its pad are copied to @rx->buf and the CRC is verified.
 * Decoding stops right after the CRC of a complete FPDU so that the
 * caller can deliver it and then call again with the rest of the chunk.
 * After an error the decoder stays in error and consumes nothing.
 * A ULPDU that is not placed and does not fit @rx->buf_len stops the
 * decoder after its ULPDU_Length field until the caller provides a
 * buffer of mpa_dec_need() octets.
 *
 * Return: MPA_DEC_ULPDU when @rx->buf holds @rx->ulpdu_len valid octets,
 * MPA_DEC_MORE when all of @data was used without completing an FPDU,
 * MPA_DEC_NEED_BUF when a buffer is needed to go on, or MPA_DEC_ERROR
 * with @rx->err set (MPA_ERR_MARKER or MPA_ERR_CRC).
 */
int mpa_dec_feed(struct mpa_dec *rx, const u8 *data, u32 len, u32 *consumed)
{
	u32 off = 0;

	*consumed = 0;
	if (rx->err)
		return MPA_DEC_ERROR;

	while (off < len) {
		const u8 *p = data + off;
		u32 n = len - off;
		u32 need, i;
		u32 whole;

		if (!rx->markers && mpa_dec_idle(rx)) {
			whole = mpa_dec_whole(rx, p, n);
			if (whole) {
				*consumed = off + whole;
				return rx->state == MPA_DECS_HDR ? MPA_DEC_ULPDU :
				       mpa_dec_error(rx, MPA_ERR_CRC);
			}
		}
		if (rx->markers && (rx->nmark || !(rx->pos % MPA_MARKER_PERIOD))) {
			bool ok;

			n = min_t(u32, n, MPA_MARKER_LEN - rx->nmark);
			ok = mpa_dec_marker(rx, p, n);
			off += n;
			rx->pos += n;
			if (!ok) {
				*consumed = off;
				return mpa_dec_error(rx, MPA_ERR_MARKER);
			}
			continue;
		}
		if (rx->markers)
			n = min_t(u32, n, mpa_marker_gap(rx->pos));

		switch (rx->state) {
		case MPA_DECS_HDR:
			if (!rx->npartial) {
				rx->fpdu_start = rx->pos;
				rx->in_fpdu = true;
				rx->acc = 0;
			}
			n = min_t(u32, n, MPA_HDR_LEN - rx->npartial);
			for (i = 0; i < n; i++)
				rx->acc = rx->acc << 8 | p[i];
			mpa_dec_crc(rx, p, n);
			rx->npartial += n;
			if (rx->npartial == MPA_HDR_LEN) {
				rx->ulpdu_len = rx->acc;
				rx->npartial = 0;
				rx->have = 0;
				/* a whole ULPDU goes one way, whatever @place becomes */
				rx->placing = !!rx->place;
				rx->state = MPA_DECS_DATA;
			}
			break;
		case MPA_DECS_DATA:
			need = mpa_dec_need(rx);
			if (!rx->placing && rx->buf_len < need) {
				*consumed = off;
				return MPA_DEC_NEED_BUF;
			}
			n = min_t(u32, n, need - rx->have);
			mpa_dec_data(rx, p, n);
			mpa_dec_crc(rx, p, n);
			rx->have += n;
			if (rx->have == need) {
				rx->acc = 0;
				rx->state = MPA_DECS_CRC;
			}
			break;
		default:
			n = min_t(u32, n, MPA_CRC_LEN - rx->npartial);
			for (i = 0; i < n; i++)
				rx->acc |= (u32)p[i] << (8 * (rx->npartial + i));
			rx->npartial += n;
			break;
		}
		off += n;
		rx->pos += n;

		if (rx->state == MPA_DECS_CRC && rx->npartial == MPA_CRC_LEN) {
			*consumed = off;
			if (rx->crc && rx->acc != ~rx->crc_acc)
				return mpa_dec_error(rx, MPA_ERR_CRC);
			rx->state = MPA_DECS_HDR;
			rx->npartial = 0;
			rx->in_fpdu = false;
			rx->crc_acc = ~0U;
			rx->ulpdus++;
			return MPA_DEC_ULPDU;
		}
	}
	*consumed = off;
	return MPA_DEC_MORE;
}
