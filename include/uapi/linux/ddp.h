/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * DDP (RFC 5041) user-space API: /dev/ddp.
 *
 * Opening /dev/ddp gives a protection domain (PD). Memory registered in
 * the PD gets an STag. DDP_IOC_BIND turns a connected MPA socket into a
 * DDP stream of the PD and returns a stream file descriptor: untagged
 * buffers are posted on it, messages sent with it, and read() on it
 * returns struct ddp_event records (poll() tells when one is there).
 * See Documentation/ddp.rst.
 */
#ifndef _UAPI_LINUX_DDP_H
#define _UAPI_LINUX_DDP_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/iwarp_wire.h>

#define DDP_MAX_QUEUES		16
#define DDP_DEFAULT_QUEUES	3

/* struct ddp_reg_mr.access */
#define DDP_ACCESS_REMOTE_WRITE	(1U << 0)	/* the peer may place tagged data */
#define DDP_ACCESS_REMOTE_READ	(1U << 1)	/* reserved for the ULP (RDMA Read) */

/**
 * struct ddp_bind - argument of DDP_IOC_BIND (on the PD fd)
 * @sock_fd: a connected TCP socket with the "mpa" ULP, in full operation
 *	or in startup (ULPDUs received before the bind are not lost)
 * @nqueues: untagged queues 0..nqueues-1, 0 for DDP_DEFAULT_QUEUES
 * @flags: 0
 * @stream_fd: out: the stream file descriptor
 */
struct ddp_bind {
	__s32	sock_fd;
	__u32	nqueues;
	__u32	flags;
	__s32	stream_fd;
};

/**
 * struct ddp_reg_mr - argument of DDP_IOC_REG_MR (on the PD fd)
 * @addr: start of the user buffer
 * @len: its length in octets
 * @base_to: tagged offset of its first octet
 * @access: DDP_ACCESS_*
 * @stream_fd: -1: usable by every stream of the PD; else only this stream
 * @stag: out: the steering tag
 */
struct ddp_reg_mr {
	__u64	addr;
	__u64	len;
	__u64	base_to;
	__u32	access;
	__s32	stream_fd;
	__u32	stag;
	__u32	pad;
};

/**
 * struct ddp_post_recv - argument of DDP_IOC_POST_RECV (on a stream fd)
 * @addr: untagged receive buffer
 * @len: its length
 * @qn: queue number
 * @pad: 0
 * @cookie: returned in the completion
 */
struct ddp_post_recv {
	__u64	addr;
	__u64	len;
	__u32	qn;
	__u32	pad;
	__u64	cookie;
};

/* struct ddp_send.flags */
#define DDP_SEND_TAGGED		(1U << 0)

/**
 * struct ddp_send - argument of DDP_IOC_SEND (on a stream fd)
 * @addr: the message
 * @len: its length, < 2^32
 * @flags: DDP_SEND_TAGGED for a tagged message, else untagged
 * @qn: untagged: queue number (the MSN is DDP's)
 * @stag: tagged: the sink's steering tag
 * @to: tagged: tagged offset of the first octet
 * @rsvdulp: RsvdULP bits: [0] for a tagged header, [0..4] for untagged
 * @pad: 0
 */
struct ddp_send {
	__u64	addr;
	__u64	len;
	__u32	flags;
	__u32	qn;
	__u32	stag;
	__u32	pad0;
	__u64	to;
	__u8	rsvdulp[5];
	__u8	pad[3];
};

/* most messages one DDP_IOC_SEND_BATCH takes */
#define DDP_SEND_BATCH_MAX	1024

/**
 * struct ddp_send_batch - argument of DDP_IOC_SEND_BATCH (on a stream fd)
 * @sends: an array of @count struct ddp_send, sent in order
 * @count: its length, 1 to DDP_SEND_BATCH_MAX
 * @done: set to the number of messages sent; when it is less than
 *	@count, the ioctl fails with the error of message @done
 */
struct ddp_send_batch {
	__u64	sends;
	__u32	count;
	__u32	done;
};

/* struct ddp_event.type */
enum ddp_event_type {
	DDP_EV_RECV = 1,	/* an untagged message completed into a posted buffer */
	DDP_EV_TAGGED,		/* a tagged message (L=1 segment) was placed */
	DDP_EV_ERROR,		/* DDP error (RFC 5041 7.2) or LLP error: stream stopped */
	DDP_EV_FLUSH,		/* a posted buffer returned unused at teardown */
	DDP_EV_PEER_CLOSED,	/* the peer closed the stream gracefully */
};

/**
 * struct ddp_event - a record read() from a stream fd
 * @type: enum ddp_event_type
 * @err_type: DDP_EV_ERROR: DDP_WIRE_ETYPE_*, or DDP_WIRE_ETYPE_LLP for an MPA error
 * @err_code: DDP_EV_ERROR: DDP_WIRE_ECODE_*, or the RFC 5044 code for LLP errors
 * @hdr_len: DDP_EV_ERROR: octets of @hdr that are valid
 * @qn: untagged queue number
 * @msn: untagged message sequence number
 * @len: octets of the message (error: the segment length)
 * @stag: tagged: steering tag
 * @cookie: the buffer's cookie (DDP_EV_RECV, DDP_EV_FLUSH)
 * @to: tagged: tagged offset of the message's first octet
 * @rsvdulp: the RsvdULP bits of the message
 * @pad: 0
 * @hdr: DDP_EV_ERROR: the offending DDP header
 */
struct ddp_event {
	__u16	type;
	__u8	err_type;
	__u8	err_code;
	__u32	hdr_len;
	__u32	qn;
	__u32	msn;
	__u32	len;
	__u32	stag;
	__u64	cookie;
	__u64	to;
	__u8	rsvdulp[5];
	__u8	pad[3];
	__u8	hdr[24];
};

/*
 * 'J' 00-1F: a code that Documentation/userspace-api/ioctl/ioctl-number.rst
 * (Linux 6.1) gives to no one ('D' is s390 dasd's and pmcraid's). Every
 * argument is laid out the same on 32-bit and 64-bit ABIs (naturally
 * aligned fields, explicit padding), so 32-bit processes use the same
 * numbers and structures.
 */
#define DDP_IOC_MAGIC		'J'
#define DDP_IOC_BIND		_IOWR(DDP_IOC_MAGIC, 1, struct ddp_bind)
#define DDP_IOC_REG_MR		_IOWR(DDP_IOC_MAGIC, 2, struct ddp_reg_mr)
#define DDP_IOC_INVALIDATE	_IOW(DDP_IOC_MAGIC, 3, __u32)
#define DDP_IOC_POST_RECV	_IOW(DDP_IOC_MAGIC, 4, struct ddp_post_recv)
#define DDP_IOC_SEND		_IOW(DDP_IOC_MAGIC, 5, struct ddp_send)
#define DDP_IOC_SHUTDOWN	_IO(DDP_IOC_MAGIC, 6)	/* graceful: send all, then FIN */
#define DDP_IOC_SEND_BATCH	_IOWR(DDP_IOC_MAGIC, 7, struct ddp_send_batch)

/*
 * sock_diag (tools/iwarp-ss): a DDP stream's attributes, nested in the
 * MPA_DIAG_CONSUMER_INFO attribute of an MPA connection whose
 * MPA_DIAG_CONSUMER is "ddp" (see <linux/mpa.h>).
 */

/* DDP_DIAG_FLAGS */
#define DDP_DIAG_F_STOPPED	0x1	/* an error was reported, placement stopped */
#define DDP_DIAG_F_SHUT		0x2	/* the sending half is closed */

/**
 * enum ddp_diag_attr - attributes inside MPA_DIAG_CONSUMER_INFO for "ddp"
 * @DDP_DIAG_UNSPEC: unused
 * @DDP_DIAG_PAD: padding for the 64-bit counters
 * @DDP_DIAG_STREAM_ID: u32, the stream ID (that of the ddp tracepoints and
 *	of the stream file's fdinfo)
 * @DDP_DIAG_PD_ID: u32, its protection domain's ID
 * @DDP_DIAG_VERSION: u32, DDP version: 1, or 0 after an MPA revision 0
 *	startup
 * @DDP_DIAG_QUEUES: u32, untagged queues
 * @DDP_DIAG_POSTED: u32, buffers posted on all queues
 * @DDP_DIAG_FLAGS: u32, DDP_DIAG_F_*
 * @DDP_DIAG_ERROR: u32, the error that stopped the stream, RFC 5041
 *	section 7.2 type << 8 | code (type 3: MPA's error code instead);
 *	present only with DDP_DIAG_F_STOPPED
 * @DDP_DIAG_RX_TAGGED_MSGS: u64, tagged messages placed (last segment)
 * @DDP_DIAG_RX_TAGGED_OCTETS: u64, tagged payload octets placed
 * @DDP_DIAG_RX_UNTAGGED_MSGS: u64, untagged messages placed
 * @DDP_DIAG_RX_UNTAGGED_OCTETS: u64, untagged payload octets placed
 * @DDP_DIAG_TX_TAGGED_MSGS: u64, tagged messages sent
 * @DDP_DIAG_TX_TAGGED_OCTETS: u64, tagged payload octets sent
 * @DDP_DIAG_TX_UNTAGGED_MSGS: u64, untagged messages sent
 * @DDP_DIAG_TX_UNTAGGED_OCTETS: u64, untagged payload octets sent
 * @DDP_DIAG_RX_ERRORS: u64, segments refused with a section 7.2 error
 *	(at most one: the stream stops after it) plus MPA errors
 * @DDP_DIAG_RX_INVALID_STAG: u64, tagged segments refused for an invalid
 *	STag or one not associated with the stream
 * @__DDP_DIAG_MAX: one above the highest attribute
 */
enum ddp_diag_attr {
	DDP_DIAG_UNSPEC,
	DDP_DIAG_PAD,
	DDP_DIAG_STREAM_ID,
	DDP_DIAG_PD_ID,
	DDP_DIAG_VERSION,
	DDP_DIAG_QUEUES,
	DDP_DIAG_POSTED,
	DDP_DIAG_FLAGS,
	DDP_DIAG_ERROR,
	DDP_DIAG_RX_TAGGED_MSGS,
	DDP_DIAG_RX_TAGGED_OCTETS,
	DDP_DIAG_RX_UNTAGGED_MSGS,
	DDP_DIAG_RX_UNTAGGED_OCTETS,
	DDP_DIAG_TX_TAGGED_MSGS,
	DDP_DIAG_TX_TAGGED_OCTETS,
	DDP_DIAG_TX_UNTAGGED_MSGS,
	DDP_DIAG_TX_UNTAGGED_OCTETS,
	DDP_DIAG_RX_ERRORS,
	DDP_DIAG_RX_INVALID_STAG,
	__DDP_DIAG_MAX
};

#define DDP_DIAG_MAX (__DDP_DIAG_MAX - 1)

#endif /* _UAPI_LINUX_DDP_H */
