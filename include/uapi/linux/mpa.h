/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * MPA (RFC 5044) socket options of the TCP upper layer protocol "mpa".
 *
 * After setsockopt(fd, SOL_TCP, TCP_ULP, "mpa") the options below live at
 * level SOL_MPA. See Documentation/mpa.rst.
 */
#ifndef _UAPI_LINUX_MPA_H
#define _UAPI_LINUX_MPA_H

#include <linux/types.h>
#include <linux/iwarp_wire.h>

/* Socket option level. The kernel's SOL_* numbers are all below 300. */
#define SOL_MPA			0x4d50

/* setsockopt */
#define MPA_START		1	/* struct mpa_start (+ private data) */
#define MPA_ACCEPT		2	/* Responder: accept, optval = private data */
#define MPA_REJECT		3	/* Responder: reject, optval = private data */
#define MPA_TIMEOUT		4	/* __u32 startup timeout in ms, 0 = none (also get) */
#define MPA_RECV_LENS		5	/* __u32 bool: several ULPDUs per recvmsg() (also get) */
/* getsockopt */
#define MPA_INFO		10	/* struct mpa_info */
#define MPA_PEER_PD		11	/* the peer's private data */
#define MPA_ERROR		12	/* __u32 RFC 5044 error code, MPA_ERR_* */
#define MPA_STATS		13	/* struct mpa_stats */
#define MPA_MULPDU		14	/* __u32 largest ULPDU that send accepts */

/*
 * Control message (cmsg_level SOL_MPA) of sendmsg(): the data is several
 * ULPDUs, of the __u32 lengths the message carries in order (they add up
 * to the data's length; each at most MPA_MULPDU). One call then sends
 * them all, as sendmmsg() would send one message each.
 * Of recvmsg() with MPA_RECV_LENS on: the lengths of the ULPDUs that the
 * data holds, one after the other.
 */
#define MPA_CMSG_LENS		1

/* struct mpa_start.role */
#define MPA_ROLE_INITIATOR	1
#define MPA_ROLE_RESPONDER	2

/* struct mpa_start.flags */
#define MPA_F_MARKERS		(1U << 0) /* require markers on what I receive */
#define MPA_F_NO_CRC		(1U << 1) /* prefer no CRC (needs the admin's allow_no_crc) */
/* revision 2 (RFC 6581) only */
#define MPA_F_P2P		(1U << 2) /* peer-to-peer model: an RTR message opens */
#define MPA_F_RTR_SEND		(1U << 3) /* zero-length Send is an acceptable RTR */
#define MPA_F_RTR_WRITE		(1U << 4) /* zero-length RDMA Write is acceptable */
#define MPA_F_RTR_READ		(1U << 5) /* zero-length RDMA Read is acceptable */
/* RFC 5044 Appendix C: accept revision 0 (RDMA Consortium) peers */
#define MPA_F_PERMISSIVE	(1U << 6)

/*
 * struct mpa_start.rev: speak revision 0 (RDMA Consortium, RFC 5044
 * Appendix C) ourselves: send Rev 0 frames with M and C set. Implies
 * MPA_F_PERMISSIVE. (0 in rev means the module's default revision.)
 */
#define MPA_REV_RDMAC		0x100

/**
 * struct mpa_start - argument of MPA_START
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER
 * @flags: MPA_F_*
 * @rev: MPA revision: 1, 2 (RFC 6581), MPA_REV_RDMAC for revision 0, or 0
 *	for the module's default_rev.
 *	A revision 2 Responder also accepts revision 1, a revision 2
 *	Initiator falls back to revision 1 when the Reply has it.
 * @pd_len: private data length (Initiator: in the Request), 0..512, or
 *	0..508 in revision 2, whose enhanced data takes 4 octets
 * @lsm_len: Responder only: "last streaming message" length, sent as
 *	plain TCP data before MPA waits for the Request (RFC 5044 7.1.5)
 * @ird: revision 2: inbound RDMA Read queue depth offered, 0..0x3fff
 * @ord: revision 2: outbound RDMA Read queue depth wanted, 0..0x3fff
 * @data: @pd_len octets of private data, then @lsm_len octets of the
 *	last streaming message
 */
struct mpa_start {
	__u32	role;
	__u32	flags;
	__u16	rev;
	__u16	pd_len;
	__u32	lsm_len;
	__u16	ird;
	__u16	ord;
	__u8	data[];
};

/* struct mpa_info.state */
enum mpa_state {
	MPA_S_IDLE = 0,		/* attached, not started: plain TCP */
	MPA_S_REQ_SENT,		/* Initiator: Request sent, waiting for the Reply */
	MPA_S_REQ_WAIT,		/* Responder: waiting for the Request */
	MPA_S_REQ_RCVD,		/* Responder: Request received, consumer decides */
	MPA_S_FULL,		/* full operation: FPDUs */
	MPA_S_REJECTED,		/* MPA exited after a reject, plain TCP */
	MPA_S_ERROR,		/* MPA error, see MPA_ERROR */
};

/* MPA_ERROR returns the RFC 5044 error codes MPA_ERR_* of <linux/iwarp_wire.h> */

/* struct mpa_info.flags */
#define MPA_I_MARKERS_RX	(1U << 0) /* the peer inserts markers */
#define MPA_I_MARKERS_TX	(1U << 1) /* we insert markers */
#define MPA_I_CRC		(1U << 2) /* CRCs generated and checked */
#define MPA_I_PEER_FIN		(1U << 3) /* the peer half-closed on an FPDU boundary */
#define MPA_I_REJECTED		(1U << 4) /* the Reply had R=1 */
#define MPA_I_P2P		(1U << 5) /* revision 2 peer-to-peer model agreed */

/**
 * struct mpa_info - state and negotiated parameters (MPA_INFO)
 * @state: enum mpa_state
 * @role: MPA_ROLE_*
 * @flags: MPA_I_*
 * @rev: negotiated revision
 * @error: RFC 5044 error code, 0 if none
 * @mulpdu: current MULPDU
 * @peer_pd_len: length of the peer's private data (without the
 *	revision 2 enhanced data)
 * @ird: revision 2: negotiated inbound RDMA Read queue depth
 * @ord: revision 2: negotiated outbound RDMA Read queue depth
 * @rtr: revision 2 peer-to-peer: the RTR type agreed, MPA_F_RTR_*
 * @peer_ird: revision 2: the IRD in the peer's frame
 * @peer_ord: revision 2: the ORD in the peer's frame
 */
struct mpa_info {
	__u32	state;
	__u32	role;
	__u32	flags;
	__u32	rev;
	__u32	error;
	__u32	mulpdu;
	__u32	peer_pd_len;
	__u32	ird;
	__u32	ord;
	__u32	rtr;
	__u32	peer_ird;
	__u32	peer_ord;
};

/**
 * struct mpa_stats - per-socket counters (MPA_STATS)
 * @tx_fpdus: FPDUs sent
 * @tx_octets: ULPDU octets sent
 * @tx_markers: markers inserted
 * @rx_fpdus: FPDUs received and validated
 * @rx_octets: ULPDU octets received
 * @rx_markers: markers removed
 * @rx_crc_errors: FPDUs with a bad CRC
 * @rx_marker_errors: bad markers
 */
struct mpa_stats {
	__u64	tx_fpdus;
	__u64	tx_octets;
	__u64	tx_markers;
	__u64	rx_fpdus;
	__u64	rx_octets;
	__u64	rx_markers;
	__u64	rx_crc_errors;
	__u64	rx_marker_errors;
};

/*
 * sock_diag (ss -tie, tools/iwarp-ss): with INET_DIAG_INFO requested by a
 * caller with CAP_NET_ADMIN, the kernel puts INET_DIAG_ULP_INFO with
 * INET_ULP_INFO_NAME "mpa" and one nested MPA_DIAG_ULP_INFO attribute
 * holding the MPA_DIAG_* attributes below. Its type lies far above the
 * kernel's INET_ULP_INFO_* values so that it cannot meet one of them.
 */
#define MPA_DIAG_ULP_INFO	0x3d00

/**
 * enum mpa_diag_attr - attributes inside MPA_DIAG_ULP_INFO
 * @MPA_DIAG_UNSPEC: unused
 * @MPA_DIAG_PAD: padding for the 64-bit counters
 * @MPA_DIAG_STATE: u32, enum mpa_state
 * @MPA_DIAG_ROLE: u32, MPA_ROLE_*
 * @MPA_DIAG_REV: u32, negotiated revision (0 before startup)
 * @MPA_DIAG_FLAGS: u32, MPA_I_* (CRC, markers each way, peer FIN, ...)
 * @MPA_DIAG_ERROR: u32, RFC 5044 error code, 0 if none
 * @MPA_DIAG_MULPDU: u32, MULPDU in full operation, else 0
 * @MPA_DIAG_IRD: u32, revision 2: negotiated IRD
 * @MPA_DIAG_ORD: u32, revision 2: negotiated ORD
 * @MPA_DIAG_RTR: u32, revision 2: MPA_F_RTR_* agreed
 * @MPA_DIAG_CONSUMER: string, the bound in-kernel consumer ("ddp"); absent
 *	while user space reads the connection
 * @MPA_DIAG_TX_FPDUS: u64, FPDUs sent
 * @MPA_DIAG_TX_OCTETS: u64, ULPDU octets sent
 * @MPA_DIAG_TX_MARKERS: u64, markers inserted
 * @MPA_DIAG_RX_FPDUS: u64, FPDUs received and validated
 * @MPA_DIAG_RX_OCTETS: u64, ULPDU octets received
 * @MPA_DIAG_RX_MARKERS: u64, markers removed
 * @MPA_DIAG_RX_CRC_ERRORS: u64, FPDUs with a bad CRC
 * @MPA_DIAG_RX_MARKER_ERRORS: u64, bad markers
 * @MPA_DIAG_CONSUMER_INFO: nested, the bound consumer's own attributes,
 *	whose meaning MPA_DIAG_CONSUMER names: for "ddp", the DDP_DIAG_*
 *	attributes of <linux/ddp.h>; absent when the consumer puts none
 * @__MPA_DIAG_MAX: one above the highest attribute
 */
enum mpa_diag_attr {
	MPA_DIAG_UNSPEC,
	MPA_DIAG_PAD,
	MPA_DIAG_STATE,
	MPA_DIAG_ROLE,
	MPA_DIAG_REV,
	MPA_DIAG_FLAGS,
	MPA_DIAG_ERROR,
	MPA_DIAG_MULPDU,
	MPA_DIAG_IRD,
	MPA_DIAG_ORD,
	MPA_DIAG_RTR,
	MPA_DIAG_CONSUMER,
	MPA_DIAG_TX_FPDUS,
	MPA_DIAG_TX_OCTETS,
	MPA_DIAG_TX_MARKERS,
	MPA_DIAG_RX_FPDUS,
	MPA_DIAG_RX_OCTETS,
	MPA_DIAG_RX_MARKERS,
	MPA_DIAG_RX_CRC_ERRORS,
	MPA_DIAG_RX_MARKER_ERRORS,
	MPA_DIAG_CONSUMER_INFO,
	__MPA_DIAG_MAX
};

#define MPA_DIAG_MAX (__MPA_DIAG_MAX - 1)

#endif /* _UAPI_LINUX_MPA_H */
