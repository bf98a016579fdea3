/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * iWARP wire formats: MPA (RFC 5044), DDP (RFC 5041) and RDMAP (RFC 5040).
 *
 * This is the only place where on-the-wire layouts are defined. It is
 * shared by the kernel modules, the user-space unit tests, the fuzzers
 * and the tools, so it depends on nothing but <linux/types.h>.
 */
#ifndef _UAPI_LINUX_IWARP_WIRE_H
#define _UAPI_LINUX_IWARP_WIRE_H

#include <linux/types.h>

/* ---- MPA startup (RFC 5044 section 7.1.1, Figure 8) ---- */

#define MPA_WIRE_KEY_LEN		16
#define MPA_WIRE_KEY_REQ		"MPA ID Req Frame"
#define MPA_WIRE_KEY_REP		"MPA ID Rep Frame"
#define MPA_MAX_PD_LEN		512

/* bits of mpa_frame_hdr.flags */
#define MPA_FLAG_M		0x80	/* markers required on what I receive */
#define MPA_FLAG_C		0x40	/* CRC preferred */
#define MPA_FLAG_R		0x20	/* Reply only: connection rejected */
#define MPA_FLAG_E		0x10	/* Rev 2 (RFC 6581): enhanced data in the PD */
#define MPA_FLAG_RES		0x0f	/* reserved: send 0, ignore */

/**
 * struct mpa_frame_hdr - MPA Request/Reply frame header (20 octets)
 * @key: "MPA ID Req Frame" or "MPA ID Rep Frame", no terminating NUL
 * @flags: M, C, R and reserved bits
 * @rev: MPA revision
 * @pd_len: number of private data octets that follow, 0..512
 */
struct mpa_frame_hdr {
	__u8	key[MPA_WIRE_KEY_LEN];
	__u8	flags;
	__u8	rev;
	__be16	pd_len;
};

/*
 * RFC 6581 (MPA revision 2): the first 4 octets of the private data of a
 * revision 2 Request or Reply carry the enhanced connection data.
 */
#define MPA_V2_P2P		0x8000	/* ird: peer-to-peer model, an RTR follows */
#define MPA_V2_RTR_SEND		0x4000	/* ird: zero-length Send RTR */
#define MPA_V2_RTR_WRITE	0x8000	/* ord: zero-length RDMA Write RTR */
#define MPA_V2_RTR_READ		0x4000	/* ord: zero-length RDMA Read RTR */
#define MPA_V2_IRD_ORD_MASK	0x3fff

/**
 * struct mpa_wire_v2_data - RFC 6581 enhanced RDMA connection data
 * @ird: inbound RDMA Read queue depth (14 bits), P2P and Send RTR flags
 * @ord: outbound RDMA Read queue depth (14 bits), Write and Read RTR flags
 */
struct mpa_wire_v2_data {
	__be16	ird;
	__be16	ord;
};

/* RFC 5044 section 8 error codes */
#define MPA_ERR_TCP_CLOSED	1	/* TCP closed or lost inside an FPDU */
#define MPA_ERR_CRC		2	/* FPDU with a bad CRC */
#define MPA_ERR_MARKER		3	/* bad marker */
#define MPA_ERR_STARTUP		4	/* bad Request/Reply frame, startup failed */

/* ---- MPA full operation (RFC 5044 section 4) ---- */

#define MPA_HDR_LEN		2	/* ULPDU_Length */
#define MPA_CRC_LEN		4
#define MPA_MARKER_LEN		4
#define MPA_MARKER_PERIOD	512
#define MPA_MIN_MULPDU		128

/**
 * struct mpa_wire_marker - MPA marker (RFC 5044 Figure 3)
 * @rsvd: zero on transmit, ignored on receive except for the CRC
 * @fpduptr: octets back from the marker to the ULPDU_Length field of the
 *	FPDU that contains it, or 0 when the marker precedes an FPDU
 */
struct mpa_wire_marker {
	__be16	rsvd;
	__be16	fpduptr;
};

/* ---- DDP (RFC 5041 section 4) ---- */

#define DDP_FLAG_T		0x80	/* tagged */
#define DDP_FLAG_L		0x40	/* last segment of the message */
#define DDP_FLAG_RSVD		0x3c
#define DDP_DV_MASK		0x03
#define DDP_WIRE_VERSION		1

/**
 * struct ddp_tagged_hdr - DDP tagged buffer header (14 octets)
 * @ctrl: T=1, L, reserved, DV
 * @rsvdulp: 8 bits owned by the ULP
 * @stag: steering tag of the sink buffer
 * @to: tagged offset of the first payload octet
 */
struct ddp_tagged_hdr {
	__u8	ctrl;
	__u8	rsvdulp;
	__be32	stag;
	__be64	to;
} __attribute__((packed));

/**
 * struct ddp_untagged_hdr - DDP untagged buffer header (18 octets)
 * @ctrl: T=0, L, reserved, DV
 * @rsvdulp: 40 bits owned by the ULP
 * @qn: queue number
 * @msn: message sequence number, per queue, starting at 1
 * @mo: message offset of the first payload octet
 */
struct ddp_untagged_hdr {
	__u8	ctrl;
	__u8	rsvdulp[5];
	__be32	qn;
	__be32	msn;
	__be32	mo;
} __attribute__((packed));

/*
 * DDP error numbers reported to the ULP (RFC 5041 section 7.2): a 4-bit
 * error type and an 8-bit error code. Type 0x3 is reserved for the LLP.
 */
#define DDP_WIRE_ETYPE_CATASTROPHIC		0x0	/* local catastrophic */
#define DDP_WIRE_ETYPE_TAGGED		0x1	/* tagged buffer error */
#define DDP_WIRE_ETYPE_UNTAGGED		0x2	/* untagged buffer error */
#define DDP_WIRE_ETYPE_LLP			0x3	/* reserved for the LLP */

#define DDP_WIRE_ECODE_CATASTROPHIC		0x00

/* codes of DDP_WIRE_ETYPE_TAGGED */
#define DDP_WIRE_ECODE_T_INVALID_STAG	0x00
#define DDP_WIRE_ECODE_T_BASE_BOUNDS		0x01
#define DDP_WIRE_ECODE_T_STAG_NOT_ASSOC	0x02	/* not on this stream / PD */
#define DDP_WIRE_ECODE_T_TO_WRAP		0x03
#define DDP_WIRE_ECODE_T_INVALID_DV		0x04

/* codes of DDP_WIRE_ETYPE_UNTAGGED (there is no code 0x00) */
#define DDP_WIRE_ECODE_U_INVALID_QN		0x01
#define DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF	0x02	/* no buffer available */
#define DDP_WIRE_ECODE_U_INVALID_MSN_RANGE	0x03	/* MSN range is not valid */
#define DDP_WIRE_ECODE_U_INVALID_MO		0x04
#define DDP_WIRE_ECODE_U_MSG_TOO_LONG	0x05	/* too long for the buffer */
#define DDP_WIRE_ECODE_U_INVALID_DV		0x06

/* ---- RDMAP (RFC 5040 section 4) ---- */

/*
 * The RDMAP control field is the first octet of DDP's RsvdULP field, in
 * tagged and untagged headers: RV (2 bits, 01b), reserved (2 bits, sent
 * as 0), opcode (4 bits). In an untagged header the other 32 bits of
 * RsvdULP carry the STag to invalidate (Send with Invalidate, Send with
 * Solicited Event and Invalidate) and are 0 otherwise.
 */
#define RDMAP_WIRE_RV			0x40	/* RV = 01b */
#define RDMAP_WIRE_RV_MASK		0xc0
#define RDMAP_WIRE_CTRL_RSVD		0x30
#define RDMAP_WIRE_OP_MASK		0x0f

/* opcodes (RFC 5040 section 4.2, Figure 5); 0x8 to 0xf are reserved */
#define RDMAP_WIRE_OP_WRITE		0x0	/* tagged */
#define RDMAP_WIRE_OP_READ_REQ		0x1	/* untagged, QN 1 */
#define RDMAP_WIRE_OP_READ_RESP		0x2	/* tagged */
#define RDMAP_WIRE_OP_SEND		0x3	/* untagged, QN 0 */
#define RDMAP_WIRE_OP_SEND_INV		0x4	/* untagged, QN 0 */
#define RDMAP_WIRE_OP_SEND_SE		0x5	/* untagged, QN 0 */
#define RDMAP_WIRE_OP_SEND_SE_INV	0x6	/* untagged, QN 0 */
#define RDMAP_WIRE_OP_TERMINATE		0x7	/* untagged, QN 2 */

/* untagged queues (RFC 5040 section 5.1) */
#define RDMAP_WIRE_QN_SEND		0
#define RDMAP_WIRE_QN_READ_REQ		1
#define RDMAP_WIRE_QN_TERMINATE		2
#define RDMAP_WIRE_NQUEUES		3

/**
 * struct rdmap_wire_read_req - RDMA Read Request header (RFC 5040 4.4), 28 octets
 * @sink_stag: Data Sink STag, where the Read Response is placed
 * @sink_to: Data Sink Tagged Offset
 * @size: RDMA Read Message Size in octets
 * @src_stag: Data Source STag, what is read
 * @src_to: Data Source Tagged Offset
 */
struct rdmap_wire_read_req {
	__be32	sink_stag;
	__be64	sink_to;
	__be32	size;
	__be32	src_stag;
	__be64	src_to;
} __attribute__((packed));

/*
 * Terminate (RFC 5040 section 4.8): a 32-bit control field, Layer (4
 * bits), EType (4), Error Code (8), Hdrct (3: M, D, R), reserved (13);
 * then, when D or R is set, the DDP Segment Length (16 bits, valid when M
 * is set), the terminated DDP header (14 or 18 octets by its T bit) and,
 * when R is set, the terminated RDMA Read Request header (28 octets).
 */
#define RDMAP_WIRE_TERM_LAYER_SHIFT	28
#define RDMAP_WIRE_TERM_ETYPE_SHIFT	24
#define RDMAP_WIRE_TERM_ECODE_SHIFT	16
#define RDMAP_WIRE_TERM_M		0x00008000	/* DDP Segment Length valid */
#define RDMAP_WIRE_TERM_D		0x00004000	/* DDP header included */
#define RDMAP_WIRE_TERM_R		0x00002000	/* RDMA header included */
#define RDMAP_WIRE_TERM_RSVD		0x00001fff

/**
 * struct rdmap_wire_term - Terminate control field (RFC 5040 Figure 12)
 * @ctrl: Layer, EType, Error Code, Hdrct and reserved bits
 */
struct rdmap_wire_term {
	__be32	ctrl;
};

/* the layer that found the error (RFC 5040 section 7.1) */
#define RDMAP_WIRE_LAYER_RDMAP		0x0
#define RDMAP_WIRE_LAYER_DDP		0x1	/* EType and code: DDP_WIRE_* */
#define RDMAP_WIRE_LAYER_LLP		0x2	/* EType 0 (MPA), code: MPA_ERR_* */

/* RDMAP layer error types and codes (RFC 5040 section 7.2) */
#define RDMAP_WIRE_ETYPE_CATASTROPHIC	0x0	/* local catastrophic */
#define RDMAP_WIRE_ETYPE_PROTECTION	0x1	/* remote protection error */
#define RDMAP_WIRE_ETYPE_OPERATION	0x2	/* remote operation error */

#define RDMAP_WIRE_ECODE_INVALID_STAG	0x00	/* protection */
#define RDMAP_WIRE_ECODE_BASE_BOUNDS	0x01	/* protection */
#define RDMAP_WIRE_ECODE_ACCESS		0x02	/* protection: access rights */
#define RDMAP_WIRE_ECODE_STAG_NOT_ASSOC	0x03	/* protection: other stream/PD */
#define RDMAP_WIRE_ECODE_TO_WRAP	0x04	/* protection */
#define RDMAP_WIRE_ECODE_VERSION	0x05	/* operation: invalid RDMAP version */
#define RDMAP_WIRE_ECODE_OPCODE		0x06	/* operation: unexpected opcode */
#define RDMAP_WIRE_ECODE_CATA_STREAM	0x07	/* operation: catastrophic, this stream */
#define RDMAP_WIRE_ECODE_CATA_GLOBAL	0x08	/* operation: catastrophic, global */
#define RDMAP_WIRE_ECODE_NO_INVALIDATE	0x09	/* STag cannot be invalidated */
#define RDMAP_WIRE_ECODE_UNSPECIFIED	0xff

#endif /* _UAPI_LINUX_IWARP_WIRE_H */
