// SPDX-License-Identifier: GPL-2.0
/*
 * Pure RDMAP (RFC 5040) protocol logic: the control field in DDP's
 * RsvdULP and its receive checks, the RDMA Read Request header, and the
 * Terminate message (section 4.8) with the error numbers of section 7.
 *
 * Reserved bits are sent as 0 and not checked on receipt: the control
 * field's two Rsv bits, the RsvdULP octets after the control field of an
 * untagged message other than a Send with Invalidate, the 13 reserved
 * bits of the Terminate control field.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <net/iwarp_compat.h>

#include "rdmap_proto.h"

static int rdmap_fail(struct rdmap_err *err, u8 etype, u8 ecode)
{
	err->layer = RDMAP_WIRE_LAYER_RDMAP;
	err->etype = etype;
	err->ecode = ecode;
	return -EINVAL;
}

/**
 * rdmap_op_tagged() - does opcode @op travel in tagged DDP messages?
 * @op: RDMAP_WIRE_OP_*
 *
 * Return: true for RDMA Write and RDMA Read Response.
 */
bool rdmap_op_tagged(u8 op)
{
	return op == RDMAP_WIRE_OP_WRITE || op == RDMAP_WIRE_OP_READ_RESP;
}

/**
 * rdmap_op_qn() - the untagged queue of opcode @op (RFC 5040 section 5.1)
 * @op: RDMAP_WIRE_OP_*
 *
 * Return: RDMAP_WIRE_QN_*, or -EINVAL for a tagged or reserved opcode.
 */
int rdmap_op_qn(u8 op)
{
	switch (op) {
	case RDMAP_WIRE_OP_SEND:
	case RDMAP_WIRE_OP_SEND_INV:
	case RDMAP_WIRE_OP_SEND_SE:
	case RDMAP_WIRE_OP_SEND_SE_INV:
		return RDMAP_WIRE_QN_SEND;
	case RDMAP_WIRE_OP_READ_REQ:
		return RDMAP_WIRE_QN_READ_REQ;
	case RDMAP_WIRE_OP_TERMINATE:
		return RDMAP_WIRE_QN_TERMINATE;
	default:
		return -EINVAL;
	}
}

/**
 * rdmap_op_invalidates() - does opcode @op carry an STag to invalidate?
 * @op: RDMAP_WIRE_OP_*
 *
 * Return: true for Send with Invalidate and Send with Solicited Event and
 * Invalidate.
 */
bool rdmap_op_invalidates(u8 op)
{
	return op == RDMAP_WIRE_OP_SEND_INV || op == RDMAP_WIRE_OP_SEND_SE_INV;
}

/**
 * rdmap_rsvdulp_untagged() - the 40 RsvdULP bits of an untagged message
 * @op: RDMAP_WIRE_OP_* of an untagged message
 * @inv_stag: the STag to invalidate, used only if @op invalidates
 * @rsvdulp: out: the five octets in wire order
 */
void rdmap_rsvdulp_untagged(u8 op, u32 inv_stag, u8 rsvdulp[5])
{
	rsvdulp[0] = rdmap_ctrl(op);
	put_unaligned_be32(rdmap_op_invalidates(op) ? inv_stag : 0, rsvdulp + 1);
}

/**
 * rdmap_hdr_check() - receive checks of the RDMAP control field
 * @rsvdulp: the RsvdULP of a DDP message: one octet if @tagged, else five
 * @tagged: DDP delivered the message as tagged
 * @qn: untagged: the queue it arrived on
 * @out: the opcode and, for a Send with Invalidate, the STag
 * @err: out: the Terminate's error number when the message is refused
 *
 * An RV other than 01b is an invalid RDMAP version; a reserved opcode, an
 * opcode that belongs to the other kind of DDP message (RDMA Write and
 * Read Response tagged, the others untagged) or to another queue is an
 * unexpected opcode. Both are Remote Operation Errors (RFC 5040 section
 * 7.2, codes 0x05 and 0x06).
 *
 * Return: 0, or -EINVAL with @err set.
 */
int rdmap_hdr_check(const u8 *rsvdulp, bool tagged, u32 qn,
		    struct rdmap_hdr *out, struct rdmap_err *err)
{
	u8 op = rsvdulp[0] & RDMAP_WIRE_OP_MASK;

	if ((rsvdulp[0] & RDMAP_WIRE_RV_MASK) != RDMAP_WIRE_RV)
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_VERSION);
	if (op > RDMAP_WIRE_OP_TERMINATE || rdmap_op_tagged(op) != tagged ||
	    (!tagged && rdmap_op_qn(op) != (int)qn))
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_OPCODE);
	out->op = op;
	out->inv_stag = !tagged && rdmap_op_invalidates(op) ?
			get_unaligned_be32(rsvdulp + 1) : 0;
	return 0;
}

/**
 * rdmap_read_req_encode() - an RDMA Read Request header in wire order
 * @rr: the request
 * @w: out: its 28 octets
 */
void rdmap_read_req_encode(const struct rdmap_read_req *rr,
			   struct rdmap_wire_read_req *w)
{
	put_unaligned_be32(rr->sink_stag, &w->sink_stag);
	put_unaligned_be64(rr->sink_to, &w->sink_to);
	put_unaligned_be32(rr->size, &w->size);
	put_unaligned_be32(rr->src_stag, &w->src_stag);
	put_unaligned_be64(rr->src_to, &w->src_to);
}

/*
 * @size octets from @to wrap: TO + size, an unsigned 64-bit sum, is below
 * @to. As in DDP's check of a tagged segment (ddp_check_tagged()), a
 * range that ends with the octet at 2^64 - 1 wraps too: the Read Response
 * that would fill it is refused by the Data Sink's DDP.
 */
static bool rdmap_to_wraps(u64 to, u32 size)
{
	return to + size < to;
}

/**
 * rdmap_read_req_decode() - decode and check an RDMA Read Request message
 * @buf: the untagged message on queue 1
 * @len: its length
 * @rr: out: the request
 * @err: out: the Terminate's error number when it is refused
 *
 * The message is the header and nothing else (RFC 5040 section 4.4): any
 * other length cannot be served, a Remote Operation Error, catastrophic
 * for the stream (0x2/0x07). A Read whose source or sink TO plus size
 * wraps in 64 bits is a Remote Protection Error, TO wrap (0x1/0x04): no
 * Read Response could be placed (the rule of ddp_check_tagged()). A size
 * of 0 is valid (RFC 6581's zero-length Read, a ready-to-receive). The
 * source STag is checked against memory with rdmap_check_read_src().
 *
 * Return: 0, or -EINVAL with @err set.
 */
int rdmap_read_req_decode(const void *buf, u32 len, struct rdmap_read_req *rr,
			  struct rdmap_err *err)
{
	const struct rdmap_wire_read_req *w = buf;

	if (len != RDMAP_READ_REQ_LEN)
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_CATA_STREAM);
	rr->sink_stag = get_unaligned_be32(&w->sink_stag);
	rr->sink_to = get_unaligned_be64(&w->sink_to);
	rr->size = get_unaligned_be32(&w->size);
	rr->src_stag = get_unaligned_be32(&w->src_stag);
	rr->src_to = get_unaligned_be64(&w->src_to);
	if (rdmap_to_wraps(rr->src_to, rr->size) ||
	    rdmap_to_wraps(rr->sink_to, rr->size))
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_PROTECTION,
				  RDMAP_WIRE_ECODE_TO_WRAP);
	return 0;
}

/**
 * rdmap_check_read_src() - may the peer read what its Read Request names?
 * @rr: the decoded request (rdmap_read_req_decode())
 * @r: the buffer its Data Source STag names, or NULL when the STag is unknown
 * @stream_id: Stream ID or PD ID the STag must be bound to
 * @err: out: the Terminate's error number when it may not
 *
 * A Read of 0 octets reads nothing and passes, as a zero-length tagged
 * segment does in DDP. Otherwise, in this order, Remote Protection
 * Errors (RFC 5040 section 7.2): unknown or invalidated STag -> 0x1/0x00;
 * bound to another stream or PD -> 0x1/0x03; no remote read access ->
 * 0x1/0x02; the range not within the buffer -> 0x1/0x01. TO wrap was
 * refused by the decoder.
 *
 * Return: 0, or -EINVAL with @err set.
 */
int rdmap_check_read_src(const struct rdmap_read_req *rr,
			 const struct ddp_region_view *r, u32 stream_id,
			 struct rdmap_err *err)
{
	if (!rr->size)
		return 0;
	if (!r || !r->valid)
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_PROTECTION,
				  RDMAP_WIRE_ECODE_INVALID_STAG);
	if (r->stream_or_pd != stream_id)
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_PROTECTION,
				  RDMAP_WIRE_ECODE_STAG_NOT_ASSOC);
	if (!(r->access & DDP_VIEW_READ))
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_PROTECTION,
				  RDMAP_WIRE_ECODE_ACCESS);
	if (rr->src_to < r->base_to || rr->size > r->len ||
	    rr->src_to - r->base_to > r->len - rr->size)
		return rdmap_fail(err, RDMAP_WIRE_ETYPE_PROTECTION,
				  RDMAP_WIRE_ECODE_BASE_BOUNDS);
	return 0;
}

/* a DDP header's full length, by its T bit */
static u32 rdmap_ddp_hdr_len(const u8 *hdr)
{
	return hdr[0] & DDP_FLAG_T ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

/**
 * rdmap_term_from_ddp() - the Terminate for an error DDP or MPA reported
 * @t: out: the Terminate
 * @ddp_etype: DDP_WIRE_ETYPE_*, DDP_WIRE_ETYPE_LLP for an MPA error
 * @ddp_ecode: DDP_WIRE_ECODE_*, or MPA_ERR_* for an MPA error
 * @hdr: the offending DDP header, NULL if none
 * @hdr_len: octets of @hdr available
 * @seg_len: the length of the offending DDP segment, above 0xffff if unknown
 *
 * An MPA error is reported by the LLP layer with error type 0 (MPA) and
 * no header. A DDP error carries the offending DDP header (Hdrct D) and
 * its segment length (M), except for a catastrophic error and an invalid
 * DDP version, whose header cannot be told apart from garbage. @t points
 * at @hdr: it must stay valid until @t is encoded.
 *
 * Return: 0, or -EINVAL for an error type that does not exist.
 */
int rdmap_term_from_ddp(struct rdmap_term *t, u8 ddp_etype, u8 ddp_ecode,
			const u8 *hdr, u32 hdr_len, u32 seg_len)
{
	memset(t, 0, sizeof(*t));
	t->err.ecode = ddp_ecode;
	switch (ddp_etype) {
	case DDP_WIRE_ETYPE_LLP:
		t->err.layer = RDMAP_WIRE_LAYER_LLP;
		return 0;
	case DDP_WIRE_ETYPE_CATASTROPHIC:
		t->err.layer = RDMAP_WIRE_LAYER_DDP;
		return 0;
	case DDP_WIRE_ETYPE_TAGGED:
	case DDP_WIRE_ETYPE_UNTAGGED:
		break;
	default:
		return -EINVAL;
	}
	t->err.layer = RDMAP_WIRE_LAYER_DDP;
	t->err.etype = ddp_etype;
	if ((ddp_etype == DDP_WIRE_ETYPE_TAGGED &&
	     ddp_ecode == DDP_WIRE_ECODE_T_INVALID_DV) ||
	    (ddp_etype == DDP_WIRE_ETYPE_UNTAGGED &&
	     ddp_ecode == DDP_WIRE_ECODE_U_INVALID_DV) ||
	    !hdr || !hdr_len || hdr_len < rdmap_ddp_hdr_len(hdr))
		return 0;
	t->ddp_hdr = hdr;
	t->ddp_hdr_len = rdmap_ddp_hdr_len(hdr);
	if (seg_len <= U16_MAX) {
		t->seg_len_valid = true;
		t->seg_len = seg_len;
	}
	return 0;
}

/* the DDP Segment Length field is sent when any Hdrct bit is */
static bool rdmap_term_has_seg_len(const struct rdmap_term *t)
{
	return t->seg_len_valid || t->ddp_hdr_len || t->rdma_hdr_len;
}

/**
 * rdmap_term_len() - the length of the Terminate message @t
 * @t: the Terminate
 *
 * Return: its length in octets, or -EINVAL if @t cannot be sent: a field
 * out of range, a DDP header that is not 14 (tagged) or 18 (untagged)
 * octets by its T bit, an RDMA header that is not a Read Request's 28
 * octets or comes without the DDP header it belongs to.
 */
int rdmap_term_len(const struct rdmap_term *t)
{
	u32 len = RDMAP_TERM_CTRL_LEN;

	if (t->err.layer > 0xf || t->err.etype > 0xf)
		return -EINVAL;
	if (t->ddp_hdr_len &&
	    (!t->ddp_hdr || t->ddp_hdr_len != rdmap_ddp_hdr_len(t->ddp_hdr)))
		return -EINVAL;
	if (t->rdma_hdr_len &&
	    (!t->rdma_hdr || t->rdma_hdr_len != RDMAP_READ_REQ_LEN || !t->ddp_hdr_len))
		return -EINVAL;
	if (rdmap_term_has_seg_len(t))
		len += RDMAP_TERM_SEGLEN_LEN;
	return len + t->ddp_hdr_len + t->rdma_hdr_len;
}

/**
 * rdmap_term_encode() - write the Terminate message @t
 * @t: the Terminate
 * @buf: out: the message (the payload of an untagged DDP message on queue 2)
 * @room: octets at @buf
 *
 * Return: the octets written, -EINVAL if @t cannot be sent
 * (rdmap_term_len()), -ENOSPC if @room is too short.
 */
int rdmap_term_encode(const struct rdmap_term *t, void *buf, u32 room)
{
	int len = rdmap_term_len(t);
	u8 *p = buf;
	u32 ctrl;

	if (len < 0)
		return len;
	if ((u32)len > room)
		return -ENOSPC;
	ctrl = (u32)t->err.layer << RDMAP_WIRE_TERM_LAYER_SHIFT |
	       (u32)t->err.etype << RDMAP_WIRE_TERM_ETYPE_SHIFT |
	       (u32)t->err.ecode << RDMAP_WIRE_TERM_ECODE_SHIFT;
	if (t->seg_len_valid)
		ctrl |= RDMAP_WIRE_TERM_M;
	if (t->ddp_hdr_len)
		ctrl |= RDMAP_WIRE_TERM_D;
	if (t->rdma_hdr_len)
		ctrl |= RDMAP_WIRE_TERM_R;
	put_unaligned_be32(ctrl, p);
	p += RDMAP_TERM_CTRL_LEN;
	if (rdmap_term_has_seg_len(t)) {
		put_unaligned_be16(t->seg_len_valid ? t->seg_len : 0, p);
		p += RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->ddp_hdr_len)
		memcpy(p, t->ddp_hdr, t->ddp_hdr_len);
	if (t->rdma_hdr_len)
		memcpy(p + t->ddp_hdr_len, t->rdma_hdr, t->rdma_hdr_len);
	return len;
}

/**
 * rdmap_term_decode() - decode a received Terminate message
 * @buf: the message (the payload of an untagged DDP message on queue 2)
 * @len: its length
 * @t: out: the Terminate; its headers point into @buf
 *
 * The error number is filled in as soon as the control field is there,
 * also when the rest is refused, so that the caller can report it. The
 * DDP Segment Length follows the control field when any Hdrct bit is
 * set; the DDP header is taken with the length its T bit gives, or as
 * far as the message goes (Linux siw sends 14 of an untagged header's 18
 * octets); the Read Request header only after a whole DDP header.
 *
 * Return: 0, or -EINVAL if the message is shorter than its control field
 * or than its Hdrct bits say, has R without D, or octets after what the
 * Hdrct bits say.
 */
int rdmap_term_decode(const void *buf, u32 len, struct rdmap_term *t)
{
	const u8 *p = buf;
	u32 ctrl, n;

	memset(t, 0, sizeof(*t));
	if (len < RDMAP_TERM_CTRL_LEN)
		return -EINVAL;
	ctrl = get_unaligned_be32(p);
	t->err.layer = ctrl >> RDMAP_WIRE_TERM_LAYER_SHIFT;
	t->err.etype = (ctrl >> RDMAP_WIRE_TERM_ETYPE_SHIFT) & 0xf;
	t->err.ecode = ctrl >> RDMAP_WIRE_TERM_ECODE_SHIFT;
	p += RDMAP_TERM_CTRL_LEN;
	len -= RDMAP_TERM_CTRL_LEN;
	if (!(ctrl & (RDMAP_WIRE_TERM_M | RDMAP_WIRE_TERM_D | RDMAP_WIRE_TERM_R)))
		return len ? -EINVAL : 0;
	if ((ctrl & RDMAP_WIRE_TERM_R) && !(ctrl & RDMAP_WIRE_TERM_D))
		return -EINVAL;
	if (len < RDMAP_TERM_SEGLEN_LEN)
		return -EINVAL;
	if (ctrl & RDMAP_WIRE_TERM_M) {
		t->seg_len_valid = true;
		t->seg_len = get_unaligned_be16(p);
	}
	p += RDMAP_TERM_SEGLEN_LEN;
	len -= RDMAP_TERM_SEGLEN_LEN;
	if (!(ctrl & RDMAP_WIRE_TERM_D))
		return len ? -EINVAL : 0;
	if (!len)
		return -EINVAL;
	n = min(len, rdmap_ddp_hdr_len(p));
	t->ddp_hdr = p;
	t->ddp_hdr_len = n;
	p += n;
	len -= n;
	if (!(ctrl & RDMAP_WIRE_TERM_R))
		return len ? -EINVAL : 0;
	if (n < rdmap_ddp_hdr_len(t->ddp_hdr) || len != RDMAP_READ_REQ_LEN)
		return -EINVAL;
	t->rdma_hdr = p;
	t->rdma_hdr_len = RDMAP_READ_REQ_LEN;
	return 0;
}
