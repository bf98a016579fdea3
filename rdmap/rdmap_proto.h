/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure RDMAP (RFC 5040) protocol logic: the control field carried in
 * DDP's RsvdULP, the receive checks of section 7 on it, the RDMA Read
 * Request header and the Terminate message.
 *
 * Nothing here knows about sockets, skbs, DDP streams or memory, and
 * nothing allocates. The same source is built into the user-space unit
 * tests and the fuzzers (selftests/unit provides the few kernel headers it
 * needs), and into the RDMAP module.
 */
#ifndef _RDMAP_PROTO_H
#define _RDMAP_PROTO_H

#include <linux/types.h>
#include <uapi/linux/iwarp_wire.h>

#include "../ddp/ddp_proto.h"

#define RDMAP_READ_REQ_LEN	((u32)sizeof(struct rdmap_wire_read_req))	/* 28 */
#define RDMAP_TERM_CTRL_LEN	((u32)sizeof(struct rdmap_wire_term))	/* 4 */
#define RDMAP_TERM_SEGLEN_LEN	2
/* the longest Terminate: control, segment length, untagged DDP header, Read Request */
#define RDMAP_TERM_MAX_LEN	(RDMAP_TERM_CTRL_LEN + RDMAP_TERM_SEGLEN_LEN + \
				 DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)

/**
 * struct rdmap_err - what a Terminate reports (RFC 5040 section 7.1)
 * @layer: RDMAP_WIRE_LAYER_*
 * @etype: error type of that layer (RDMAP_WIRE_ETYPE_*, DDP_WIRE_ETYPE_*,
 *	0 for the LLP)
 * @ecode: error code of that type (RDMAP_WIRE_ECODE_*, DDP_WIRE_ECODE_*,
 *	MPA_ERR_*)
 */
struct rdmap_err {
	u8	layer;
	u8	etype;
	u8	ecode;
};

/**
 * struct rdmap_hdr - the RDMAP view of a DDP message, host byte order
 * @op: RDMAP_WIRE_OP_*
 * @inv_stag: the STag to invalidate (Send with Invalidate and Send with
 *	Solicited Event and Invalidate), 0 otherwise
 */
struct rdmap_hdr {
	u8	op;
	u32	inv_stag;
};

/**
 * struct rdmap_read_req - a decoded RDMA Read Request, host byte order
 * @sink_stag: Data Sink STag
 * @sink_to: Data Sink Tagged Offset
 * @size: RDMA Read Message Size
 * @src_stag: Data Source STag
 * @src_to: Data Source Tagged Offset
 */
struct rdmap_read_req {
	u32	sink_stag;
	u64	sink_to;
	u32	size;
	u32	src_stag;
	u64	src_to;
};

/**
 * struct rdmap_term - a Terminate message
 * @err: layer, error type and code
 * @seg_len_valid: Hdrct M: @seg_len holds the terminated segment's length
 * @seg_len: DDP Segment Length of the terminated segment
 * @ddp_hdr: Hdrct D: the terminated DDP header (14 or 18 octets by its T
 *	bit), NULL if none; decoding points it into the parsed buffer
 * @ddp_hdr_len: its length, 0 if none
 * @rdma_hdr: Hdrct R: the terminated RDMA Read Request header (28
 *	octets), NULL if none; only with a DDP header
 * @rdma_hdr_len: its length, 0 if none
 */
struct rdmap_term {
	struct rdmap_err	err;
	bool			seg_len_valid;
	u16			seg_len;
	const u8		*ddp_hdr;
	u32			ddp_hdr_len;
	const u8		*rdma_hdr;
	u32			rdma_hdr_len;
};

/* the RDMAP control octet of opcode @op */
static inline u8 rdmap_ctrl(u8 op)
{
	return RDMAP_WIRE_RV | (op & RDMAP_WIRE_OP_MASK);
}

bool rdmap_op_tagged(u8 op);
int rdmap_op_qn(u8 op);
bool rdmap_op_invalidates(u8 op);
void rdmap_rsvdulp_untagged(u8 op, u32 inv_stag, u8 rsvdulp[5]);
int rdmap_hdr_check(const u8 *rsvdulp, bool tagged, u32 qn,
		    struct rdmap_hdr *out, struct rdmap_err *err);

void rdmap_read_req_encode(const struct rdmap_read_req *rr,
			   struct rdmap_wire_read_req *w);
int rdmap_read_req_decode(const void *buf, u32 len, struct rdmap_read_req *rr,
			  struct rdmap_err *err);
int rdmap_check_read_src(const struct rdmap_read_req *rr,
			 const struct ddp_region_view *r, u32 stream_id,
			 struct rdmap_err *err);

int rdmap_term_from_ddp(struct rdmap_term *t, u8 ddp_etype, u8 ddp_ecode,
			const u8 *hdr, u32 hdr_len, u32 seg_len);
int rdmap_term_len(const struct rdmap_term *t);
int rdmap_term_encode(const struct rdmap_term *t, void *buf, u32 room);
int rdmap_term_decode(const void *buf, u32 len, struct rdmap_term *t);

#endif /* _RDMAP_PROTO_H */
