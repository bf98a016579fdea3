/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel API of RDMAP (RFC 5040) over DDP (ddp.ko), for a kernel
 * consumer: an RDMA device driver or a test module. See
 * Documentation/rdmap.rst.
 *
 * A queue pair (struct rdmap_qp) is one DDP stream bound with RDMAP's
 * three untagged queues: 0 carries the Sends into buffers the consumer
 * posts, 1 the peer's RDMA Read Requests (RDMAP's own buffers, as many
 * as the IRD), 2 the Terminate. Memory is registered with DDP
 * (ddp_reg_pages() on the PD, or on rdmap_qp_stream() for an STag bound
 * to the queue pair). The peer's Read Requests are checked in softirq
 * and answered by RDMAP from the registered pages; a Send with
 * Invalidate invalidates its STag before its completion is reported.
 *
 * Completions and errors reach the consumer through its event callback,
 * in softirq or in process context with the socket lock held: it must
 * not sleep and must not call RDMAP back except rdmap_qp_priv() (and
 * rdmap_post_recv() with GFP_ATOMIC from the refill callback). Every
 * other function here sleeps.
 *
 * When MPA revision 2 agreed on RFC 6581's peer-to-peer model, RDMAP
 * sends the Initiator's ready-to-receive message (RTR) and consumes the
 * Responder's first message as the RTR; the Responder's sends wait for
 * it (MPA's rule 4, RFC 5044 section 7.1.2).
 */
#ifndef _NET_RDMAP_H
#define _NET_RDMAP_H

#include <linux/mm_types.h>
#include <linux/net.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <net/ddp.h>
/* RDMAP_WIRE_OP_*, RDMAP_WIRE_LAYER_*, RDMAP_WIRE_ETYPE_*, RDMAP_WIRE_ECODE_* */
#include <uapi/linux/iwarp_wire.h>

struct rdmap_qp;

#define RDMAP_MAX_IRD	64	/* Read Requests the peer may have outstanding */
#define RDMAP_MAX_ORD	64	/* Read Requests this end may have outstanding */

/**
 * enum rdmap_event_type - what the consumer's event callback reports
 * @RDMAP_EV_RECV: a Send (any of the four) completed into a posted
 *	buffer: @cookie, @len, @op; for a Send with Invalidate, @inv_stag was
 *	invalidated before the call (kernel pages of that buffer must stay
 *	until rdmap_qp_destroy() returns, see ddp_invalidate_remote())
 * @RDMAP_EV_READ_DONE: the Read Response of the oldest outstanding RDMA
 *	Read was placed whole: @cookie, @len
 * @RDMAP_EV_FLUSH: a posted buffer comes back without a Send in it: at
 *	teardown, or a Send that was refused (the error's Terminate is
 *	reported first) or completed after the stream was terminated:
 *	@cookie
 * @RDMAP_EV_READ_FLUSH: an outstanding RDMA Read will not complete
 *	(error or teardown): @cookie
 * @RDMAP_EV_TERMINATE: the stream is terminated: @layer, @etype, @ecode
 *	of the error; @remote when the peer's Terminate said so, else this
 *	end found the error (or the consumer called rdmap_terminate()) and
 *	sends the Terminate. Reported once, before the RDMAP_EV_READ_FLUSH of
 *	every outstanding Read. Nothing is received after it, calls fail
 *	with -ECONNABORTED.
 * @RDMAP_EV_PEER_CLOSED: the peer closed the stream gracefully
 *
 * Events come in the order of what they report on the stream. At
 * teardown the posted buffers come back (RDMAP_EV_FLUSH, in the order
 * posted) before the outstanding Reads (RDMAP_EV_READ_FLUSH).
 */
enum rdmap_event_type {
	RDMAP_EV_RECV = 1,
	RDMAP_EV_READ_DONE,
	RDMAP_EV_FLUSH,
	RDMAP_EV_READ_FLUSH,
	RDMAP_EV_TERMINATE,
	RDMAP_EV_PEER_CLOSED,
};

/**
 * struct rdmap_event - what the consumer's event callback receives
 * @type: enum rdmap_event_type
 * @op: RDMAP_EV_RECV: the Send's opcode (RDMAP_WIRE_OP_SEND*)
 * @remote: RDMAP_EV_TERMINATE: the peer sent the Terminate
 * @layer: RDMAP_EV_TERMINATE: RDMAP_WIRE_LAYER_*
 * @etype: RDMAP_EV_TERMINATE: error type of that layer
 * @ecode: RDMAP_EV_TERMINATE: error code of that type
 * @len: RDMAP_EV_RECV, RDMAP_EV_READ_DONE: octets placed
 * @inv_stag: RDMAP_EV_RECV: the STag invalidated, 0 for a plain Send
 * @cookie: the buffer's or the Read's cookie
 */
struct rdmap_event {
	u16	type;
	u8	op;
	bool	remote;
	u8	layer;
	u8	etype;
	u8	ecode;
	u32	len;
	u32	inv_stag;
	u64	cookie;
};

/**
 * struct rdmap_qp_ops - the consumer's callbacks
 * @event: a completion, an error or the peer's close, see struct
 *	rdmap_event. Softirq or process context, must not sleep.
 * @refill: optional: a Send arrived and no buffer is posted for it;
 *	post more with rdmap_post_recv() and GFP_ATOMIC before it is
 *	refused. Same context as @event.
 */
struct rdmap_qp_ops {
	void (*event)(struct rdmap_qp *qp, const struct rdmap_event *ev);
	void (*refill)(struct rdmap_qp *qp);
};

/**
 * struct rdmap_qp_attr - limits of a queue pair
 * @ird: RDMA Read Requests the peer may have outstanding,
 *	1..RDMAP_MAX_IRD (RDMAP posts that many buffers on queue 1)
 * @ord: RDMA Reads this end may have outstanding, 1..RDMAP_MAX_ORD
 */
struct rdmap_qp_attr {
	u32	ird;
	u32	ord;
};

/**
 * struct rdmap_read_wr - an RDMA Read
 * @sink_stag: the local buffer the data goes to (DDP_ACCESS_REMOTE_WRITE)
 * @sink_to: its tagged offset
 * @src_stag: the peer's buffer (remote read access)
 * @src_to: its tagged offset
 * @len: octets to read, 0 allowed
 * @cookie: returned in RDMAP_EV_READ_DONE or RDMAP_EV_READ_FLUSH
 */
struct rdmap_read_wr {
	u32	sink_stag;
	u64	sink_to;
	u32	src_stag;
	u64	src_to;
	u32	len;
	u64	cookie;
};

struct rdmap_qp *rdmap_qp_create(struct ddp_pd *pd, struct socket *sock,
				 const struct rdmap_qp_attr *attr,
				 const struct rdmap_qp_ops *ops, void *priv);
void rdmap_qp_destroy(struct rdmap_qp *qp, bool abortive);
void *rdmap_qp_priv(struct rdmap_qp *qp);
struct ddp_stream *rdmap_qp_stream(struct rdmap_qp *qp);

int rdmap_post_recv_sg(struct rdmap_qp *qp, const struct ddp_sge *sg, u32 nsg,
		       u64 cookie, gfp_t gfp);
int rdmap_post_recv(struct rdmap_qp *qp, struct page **pages, u32 npages,
		    u32 first, u64 len, u64 cookie, gfp_t gfp);
int rdmap_send(struct rdmap_qp *qp, u8 op, u32 inv_stag,
	       struct iov_iter *data, int flags);
int rdmap_write(struct rdmap_qp *qp, u32 stag, u64 to, struct iov_iter *data,
		int flags);
int rdmap_read(struct rdmap_qp *qp, const struct rdmap_read_wr *wr, int flags);
int rdmap_terminate(struct rdmap_qp *qp, u8 layer, u8 etype, u8 ecode);

#endif /* _NET_RDMAP_H */
