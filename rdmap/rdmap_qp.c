// SPDX-License-Identifier: GPL-2.0
/*
 * RDMAP (RFC 5040) over DDP: queue pairs.
 *
 * A queue pair is a DDP stream with RDMAP's three untagged queues. The
 * receive side runs in DDP's event callback (softirq, or the socket
 * owner's backlog): every message is checked (rdmap_hdr_check()), a Send
 * with Invalidate invalidates its STag before its completion is reported,
 * a Read Request is decoded and its Data Source checked against the
 * registered buffer, which is held for the response. What must be sent
 * in answer, Read Responses in the order of their requests and the one
 * Terminate, is sent by the transmit thread of the queue pair's CPU,
 * which may sleep.
 *
 * See include/net/rdmap.h for the API and Documentation/rdmap.rst.
 */
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smpboot.h>
#include <linux/spinlock.h>
#include <linux/wait_bit.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/iwarp_compat.h>
#include <net/mpa.h>
#include <net/rdmap.h>
#include <net/sock.h>

#include "rdmap_proto.h"

/*
 * What a queue pair sends in answer goes from the transmit thread of its
 * CPU (one per CPU, "rdmap_tx/N", parked while the CPU is offline): a
 * Read Response neither waits for a worker nor runs on the requester's
 * CPU. A queue pair whose CPU is offline, or whose thread is not up yet,
 * has its work item run by rdmap_wq instead. Neither needs memory to run
 * (the queue's rescuer, WQ_MEM_RECLAIM): the Read Responses of a kernel
 * ULP's stream (the host side of NVMe over Fabrics answers its target's
 * Reads of the pages it writes back) must not wait for an allocation.
 */
static struct workqueue_struct *rdmap_wq;

/**
 * struct rdmap_txq - the queue pairs a CPU's transmit thread is to run
 * @lock: protects the rest, and the @tx_entry and @tx_running of the
 *	queue pairs of this CPU
 * @qps: queue pairs kicked and not run yet, oldest first
 * @up: the thread runs (from its setup or unpark to its park): kicks go
 *	to it; otherwise to rdmap_wq
 */
struct rdmap_txq {
	spinlock_t		lock;	/* @qps, @up, the QPs' tx fields */
	struct list_head	qps;
	bool			up;
};

static DEFINE_PER_CPU(struct rdmap_txq, rdmap_txq);
static DEFINE_PER_CPU(struct task_struct *, rdmap_tx_task);

static bool rdmap_rx_answer = true;
module_param_named(rx_answer, rdmap_rx_answer, bool, 0644);
MODULE_PARM_DESC(rx_answer,
		 "Send a Read Response that goes at once in one segment from the receive path of its request, when nothing waits before it; false leaves every one to the transmit threads; default true");

/* RDMAP's own receive buffers, all in one page */
#define RDMAP_RREQ_SLOT		32	/* one Read Request (28 octets) each */
#define RDMAP_TERM_OFF		(RDMAP_MAX_IRD * RDMAP_RREQ_SLOT)
#define RDMAP_TERM_SLOT		64
#define RDMAP_TERM_BUFS		2
/* cookies of the Terminate buffers, after those of the IRD slots */
#define RDMAP_TERM_COOKIE	RDMAP_MAX_IRD
/* RFC 6581's zero-length RDMA Write and Read name this STag, as siw's */
#define RDMAP_RTR_STAG		1

/* the Responder's wait for RFC 6581's RTR, see rdmap_rx_rtr() */
enum rdmap_rtr_rx {
	RDMAP_RTR_RX_UNKNOWN,	/* no message received yet */
	RDMAP_RTR_RX_NONE,	/* no RTR to wait for, or it came */
	RDMAP_RTR_RX_AWAIT,	/* the first message must be the RTR */
};

/**
 * struct rdmap_inbound - a Read Request of the peer, to be answered
 * @rr: the request
 * @mr: its Data Source, held (NULL for a Read of 0 octets)
 */
struct rdmap_inbound {
	struct rdmap_read_req	rr;
	struct ddp_mr		*mr;
};

/**
 * struct rdmap_outbound - an RDMA Read of this end, not complete yet
 * @sink_stag: where its Read Response goes
 * @sink_to: tagged offset there
 * @len: octets
 * @cookie: the consumer's
 * @rtr: RFC 6581's RTR, RDMAP's own: not reported
 */
struct rdmap_outbound {
	u32	sink_stag;
	u64	sink_to;
	u32	len;
	u64	cookie;
	bool	rtr;
};

/**
 * struct rdmap_qp - a queue pair
 * @s: its DDP stream (NULL until ddp_stream_bind() returned)
 * @sock: the socket, the owner's
 * @ops: the consumer's callbacks
 * @priv: the consumer's cookie
 * @ird: Read Requests the peer may have outstanding
 * @ord: Read Requests this end may have outstanding
 * @page: RDMAP's receive buffers: IRD Read Request slots, two Terminates
 * @lock: the rings and the state, against the receive path
 * @in: the peer's Read Requests, in arrival order
 * @in_head: oldest entry of @in
 * @in_count: entries in @in
 * @in_tx: the oldest request, taken off @in to be answered (under
 *	@work_mutex, as @in_tx_held)
 * @in_tx_held: @in_tx waits for its answer: a round without waiting
 *	could not send it (set also under @lock; the receive path reads it
 *	there, and answers in place only while it is clear)
 * @out: this end's outstanding Reads, in the order sent
 * @out_head: oldest entry of @out
 * @out_count: entries in @out
 * @read_mutex: entries of @out are added in the order their requests go
 * @terminated: an error ended the stream: nothing more is received,
 *	sends fail. Set under @lock and the socket lock: the receive
 *	callbacks, which run under the socket lock, read it without @lock
 * @term_pending: @term_buf waits to be sent
 * @term_sent: the Terminate went (at most one per stream)
 * @closing: rdmap_qp_destroy() runs: no more Read Responses. Set under
 *	@lock; rdmap_qp_ended() reads it, and @terminated, without
 * @work_mutex: one round of the work; taken to set @released
 * @released: the stream is being released: the work sends nothing
 * @rtr_rx: enum rdmap_rtr_rx, under the socket lock
 * @rtr_type: the RTR awaited, MPA_F_RTR_*
 * @rtr_mutex: the Initiator's RTR goes once, before anything else
 * @rtr_tx_done: the Initiator's RTR is sent, or there is none to send
 * @slots_posted: the buffers of queues 1 and 2 are posted (under the
 *	socket lock: by rdmap_qp_create(), or by the refill of a message
 *	that MPA held and delivered within ddp_stream_bind())
 * @term_len: octets of @term_buf
 * @term_buf: the encoded Terminate
 * @work: sends the Read Responses and the Terminate from rdmap_wq
 *	while the thread of @cpu is not up
 * @cpu: the CPU whose transmit thread sends them: the one
 *	rdmap_qp_create() ran on
 * @tx_entry: in the @qps of @cpu's &struct rdmap_txq, or empty
 * @tx_running: @cpu's transmit thread runs this queue pair
 */
struct rdmap_qp {
	struct ddp_stream		*s;
	struct socket			*sock;
	const struct rdmap_qp_ops	*ops;
	void				*priv;
	u32				ird;
	u32				ord;
	struct page			*page;

	spinlock_t			lock;	/* rings and state */
	struct rdmap_inbound		in[RDMAP_MAX_IRD];
	u32				in_head;
	u32				in_count;
	struct rdmap_inbound		in_tx;
	bool				in_tx_held;
	struct rdmap_outbound		out[RDMAP_MAX_ORD];
	u32				out_head;
	u32				out_count;
	struct mutex			read_mutex;	/* @out order */
	bool				terminated;
	bool				term_pending;
	bool				term_sent;
	bool				closing;
	struct mutex			work_mutex;	/* against @released */
	bool				released;
	u8				rtr_rx;
	u32				rtr_type;
	struct mutex			rtr_mutex;	/* the Initiator's RTR */
	bool				rtr_tx_done;
	bool				slots_posted;
	u32				term_len;
	u8				term_buf[RDMAP_TERM_MAX_LEN];
	struct work_struct		work;
	int				cpu;
	struct list_head		tx_entry;
	bool				tx_running;
};

/*
 * Have @qp's Read Responses and Terminate sent by its own CPU's thread,
 * not on the CPU that received the request: over veth or loopback that
 * is the requester's, whose process the work would preempt before the
 * response could go. Any context.
 */
static void rdmap_kick(struct rdmap_qp *qp)
{
	struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, qp->cpu);
	unsigned long flags;
	bool wake = false;

	spin_lock_irqsave(&q->lock, flags);
	if (!q->up) {
		queue_work(rdmap_wq, &qp->work);
	} else if (list_empty(&qp->tx_entry)) {
		/* a thread with queue pairs to run is awake already */
		wake = list_empty(&q->qps);
		list_add_tail(&qp->tx_entry, &q->qps);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (wake)
		wake_up_process(per_cpu(rdmap_tx_task, qp->cpu));
}

static void rdmap_report(struct rdmap_qp *qp, const struct rdmap_event *ev)
{
	qp->ops->event(qp, ev);
}

/*
 * The outstanding Reads will not complete: report each, oldest first.
 * Under the socket lock or after the stream is released.
 */
static void rdmap_flush_reads(struct rdmap_qp *qp)
{
	struct rdmap_event ev = { .type = RDMAP_EV_READ_FLUSH };
	bool rtr;

	for (;;) {
		spin_lock_bh(&qp->lock);
		if (!qp->out_count) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		ev.cookie = qp->out[qp->out_head].cookie;
		rtr = qp->out[qp->out_head].rtr;
		qp->out_head = (qp->out_head + 1) % RDMAP_MAX_ORD;
		qp->out_count--;
		spin_unlock_bh(&qp->lock);
		if (!rtr)
			rdmap_report(qp, &ev);
	}
}

/*
 * End the stream @s of @qp with the error @t found by this end: stop
 * placement, encode the Terminate for the work to send, report it, flush
 * the Reads. @t's headers are read here only. Does nothing once the
 * stream is ended. Under the socket lock.
 */
static void rdmap_fail(struct rdmap_qp *qp, struct ddp_stream *s,
		       const struct rdmap_term *t)
{
	struct rdmap_event ev = {
		.type = RDMAP_EV_TERMINATE,
		.layer = t->err.layer,
		.etype = t->err.etype,
		.ecode = t->err.ecode,
	};
	int len = rdmap_term_encode(t, qp->term_buf, sizeof(qp->term_buf));

	spin_lock_bh(&qp->lock);
	if (qp->terminated) {
		spin_unlock_bh(&qp->lock);
		return;
	}
	WRITE_ONCE(qp->terminated, true);
	ddp_stream_halt(s);
	if (len >= 0) {
		qp->term_len = len;
		qp->term_pending = true;
	}
	spin_unlock_bh(&qp->lock);
	if (len >= 0)
		rdmap_kick(qp);
	rdmap_report(qp, &ev);
	rdmap_flush_reads(qp);
}

/* an RDMAP-layer error in the message whose last DDP header is @hdr */
static void rdmap_fail_msg(struct rdmap_qp *qp, struct ddp_stream *s,
			   const struct rdmap_err *err,
			   const u8 *hdr, u32 hdr_len, u32 seg_len,
			   const u8 *rdma_hdr)
{
	struct rdmap_term t = { .err = *err };

	if (hdr && hdr_len) {
		t.ddp_hdr = hdr;
		t.ddp_hdr_len = hdr_len;
		if (seg_len <= U16_MAX) {
			t.seg_len_valid = true;
			t.seg_len = seg_len;
		}
		if (rdma_hdr) {
			t.rdma_hdr = rdma_hdr;
			t.rdma_hdr_len = RDMAP_READ_REQ_LEN;
		}
	}
	rdmap_fail(qp, s, &t);
}

static void rdmap_fail_code(struct rdmap_qp *qp, struct ddp_stream *s,
			    u8 etype, u8 ecode,
			    const struct ddp_stream_event *ev, u32 seg_len,
			    const u8 *rdma_hdr)
{
	struct rdmap_err err = {
		.layer = RDMAP_WIRE_LAYER_RDMAP,
		.etype = etype,
		.ecode = ecode,
	};

	rdmap_fail_msg(qp, s, &err, ev->hdr, ev->hdr_len, seg_len, rdma_hdr);
}

/* the length of the last segment of an untagged message, header included */
static u32 rdmap_untagged_seg_len(const struct ddp_stream_event *ev)
{
	const struct ddp_untagged_hdr *h = (const void *)ev->hdr;

	if (ev->hdr_len < sizeof(*h))
		return U32_MAX;
	return sizeof(*h) + ev->len - get_unaligned_be32(&h->mo);
}

static u8 *rdmap_slot(struct rdmap_qp *qp, u32 off)
{
	return (u8 *)page_address(qp->page) + off;
}

/* a Send's length, a Read Request's size (U32_MAX when malformed) */
static u32 rdmap_untagged_len(struct rdmap_qp *qp,
			      const struct ddp_stream_event *ev, u8 op)
{
	const u8 *buf;

	if (op != RDMAP_WIRE_OP_READ_REQ)
		return ev->len;
	if (ev->len != RDMAP_READ_REQ_LEN)
		return U32_MAX;
	buf = rdmap_slot(qp, ev->cookie * RDMAP_RREQ_SLOT);
	return get_unaligned_be32(buf + offsetof(struct rdmap_wire_read_req, size));
}

/*
 * RFC 6581: on a connection that agreed on the peer-to-peer model, the
 * Responder's first message from the Initiator is the RTR of the agreed
 * type, zero octets: a Send or an RDMA Write is consumed here (the Send's
 * buffer comes back as RDMAP_EV_FLUSH), a Read Request is answered as any
 * other. Another first message is an unexpected opcode (0x2/0x06).
 * @len: the Send's or Write's length, the Read Request's size.
 * Return: 0 for a message to process, 1 for an RTR consumed, -EPROTO
 * when the stream was ended.
 */
static noinline int
rdmap_rx_rtr_first(struct rdmap_qp *qp, struct ddp_stream *s,
		   const struct ddp_stream_event *ev, u8 op, u32 len,
		   u32 seg_len)
{
	struct mpa_conn_attrs a;
	bool ok;

	if (qp->rtr_rx == RDMAP_RTR_RX_UNKNOWN) {
		ddp_stream_mpa_info(s, &a);
		qp->rtr_type = a.rtr;
		if (!a.p2p || !a.rtr || a.role != MPA_ROLE_RESPONDER) {
			qp->rtr_rx = RDMAP_RTR_RX_NONE;
			return 0;
		}
	}
	/* the peer may end the stream at any time */
	if (op == RDMAP_WIRE_OP_TERMINATE)
		return 0;
	qp->rtr_rx = RDMAP_RTR_RX_NONE;
	switch (qp->rtr_type) {
	case MPA_F_RTR_SEND:
		ok = op == RDMAP_WIRE_OP_SEND;
		break;
	case MPA_F_RTR_WRITE:
		ok = op == RDMAP_WIRE_OP_WRITE;
		break;
	case MPA_F_RTR_READ:
		ok = op == RDMAP_WIRE_OP_READ_REQ;
		break;
	default:
		ok = false;
	}
	if (!ok || len) {
		rdmap_fail_code(qp, s, RDMAP_WIRE_ETYPE_OPERATION,
				RDMAP_WIRE_ECODE_OPCODE, ev, seg_len, NULL);
		return -EPROTO;
	}
	return op == RDMAP_WIRE_OP_READ_REQ ? 0 : 1;
}

/* every message's check: the first one's work is out of line */
static inline int rdmap_rx_rtr(struct rdmap_qp *qp, struct ddp_stream *s,
			       const struct ddp_stream_event *ev, u8 op,
			       u32 len, u32 seg_len)
{
	if (likely(qp->rtr_rx == RDMAP_RTR_RX_NONE))
		return 0;
	return rdmap_rx_rtr_first(qp, s, ev, op, len, seg_len);
}

/*
 * The Read Response to @rr from the held Data Source @mr (NULL for a
 * Read of no octets), sent as @nowait and @rx say (struct ddp_msg).
 */
static int rdmap_send_read_resp(struct ddp_stream *s,
				const struct rdmap_read_req *rr,
				struct ddp_mr *mr, bool nowait, bool rx)
{
	struct ddp_msg msg = {
		.tagged = true,
		.nowait = nowait,
		.rx = rx,
		.stag = rr->sink_stag,
		.to = rr->sink_to,
		.rsvdulp = { rdmap_ctrl(RDMAP_WIRE_OP_READ_RESP) },
	};
	struct iov_iter empty;

	if (mr)
		return ddp_send_mr(s, &msg, mr, rr->src_to, rr->size);
	iov_iter_kvec(&empty, ITER_SOURCE, NULL, 0, 0);
	return ddp_send_msg(s, &msg, &empty);
}

/*
 * Answer the Read Request @rr where it arrived, as an RNIC does: no
 * wake-up of the transmit thread, no context switch before the Read
 * Response goes. Only when it goes whole at once in one segment and no
 * other sender is in the middle of a message (ddp_send_mr() with @rx).
 * Return: 0 when it went (@mr put, a slot of queue 1 posted again), or
 * a negative errno, nothing sent: the request takes the ring.
 */
static int rdmap_answer_rx(struct rdmap_qp *qp, struct ddp_stream *s,
			   const struct rdmap_read_req *rr, struct ddp_mr *mr)
{
	int ret = rdmap_send_read_resp(s, rr, mr, false, true);

	if (ret)
		return ret;
	if (mr)
		ddp_mr_put(mr);
	/* cannot fail: the request's own slot is the one queue 1 kept */
	ddp_repost(s, RDMAP_WIRE_QN_READ_REQ);
	return 0;
}

/* A Read Request of the peer arrived in slot @ev->cookie. */
static void rdmap_rx_read_req(struct rdmap_qp *qp, struct ddp_stream *s,
			      const struct ddp_stream_event *ev)
{
	u32 slot = ev->cookie, seg_len = rdmap_untagged_seg_len(ev);
	const u8 *buf = rdmap_slot(qp, slot * RDMAP_RREQ_SLOT);
	struct ddp_region_view view;
	struct rdmap_inbound *in;
	struct rdmap_read_req rr;
	struct rdmap_err err;
	struct ddp_mr *mr = NULL;
	u32 bound = 0;

	if (rdmap_read_req_decode(buf, ev->len, &rr, &err)) {
		rdmap_fail_msg(qp, s, &err, ev->hdr, ev->hdr_len, seg_len,
			       ev->len == RDMAP_READ_REQ_LEN ? buf : NULL);
		return;
	}
	if (rr.size)
		mr = ddp_mr_get(s, rr.src_stag, &view, &bound);
	if (rdmap_check_read_src(&rr, mr ? &view : NULL, bound, &err)) {
		if (mr)
			ddp_mr_put(mr);
		rdmap_fail_msg(qp, s, &err, ev->hdr, ev->hdr_len, seg_len, buf);
		return;
	}
	spin_lock_bh(&qp->lock);
	if (qp->terminated || qp->closing || qp->in_count >= qp->ird)
		goto drop;
	/* nothing older waits or is being answered: answer it here */
	if (!qp->in_count && !READ_ONCE(qp->in_tx_held) && !qp->term_pending &&
	    READ_ONCE(rdmap_rx_answer)) {
		spin_unlock_bh(&qp->lock);
		if (!rdmap_answer_rx(qp, s, &rr, mr))
			return;
		spin_lock_bh(&qp->lock);
		if (qp->terminated || qp->closing)
			goto drop;
	}
	in = &qp->in[(qp->in_head + qp->in_count) % RDMAP_MAX_IRD];
	in->rr = rr;
	in->mr = mr;
	qp->in_count++;
	spin_unlock_bh(&qp->lock);
	rdmap_kick(qp);
	return;
drop:
	/* the last cannot happen: only IRD slots are posted */
	spin_unlock_bh(&qp->lock);
	if (mr)
		ddp_mr_put(mr);
}

/* The peer's Terminate arrived: the stream ends, nothing is sent back. */
static void rdmap_rx_term(struct rdmap_qp *qp, struct ddp_stream *s,
			  const struct ddp_stream_event *ev)
{
	const u8 *buf = rdmap_slot(qp, RDMAP_TERM_OFF +
				   (ev->cookie - RDMAP_TERM_COOKIE) * RDMAP_TERM_SLOT);
	struct rdmap_event rev = { .type = RDMAP_EV_TERMINATE, .remote = true };
	struct rdmap_term t;

	/*
	 * The error number is filled in whenever the control field is
	 * there; without it the peer's reason is unknown.
	 */
	if (rdmap_term_decode(buf, ev->len, &t) && ev->len < RDMAP_TERM_CTRL_LEN) {
		t.err.layer = RDMAP_WIRE_LAYER_RDMAP;
		t.err.etype = RDMAP_WIRE_ETYPE_OPERATION;
		t.err.ecode = RDMAP_WIRE_ECODE_UNSPECIFIED;
	}
	spin_lock_bh(&qp->lock);
	if (qp->terminated) {
		spin_unlock_bh(&qp->lock);
		return;
	}
	WRITE_ONCE(qp->terminated, true);
	spin_unlock_bh(&qp->lock);
	ddp_stream_halt(s);
	rev.layer = t.err.layer;
	rev.etype = t.err.etype;
	rev.ecode = t.err.ecode;
	rdmap_report(qp, &rev);
	rdmap_flush_reads(qp);
}

static void rdmap_rx_untagged(struct rdmap_qp *qp, struct ddp_stream *s,
			      const struct ddp_stream_event *ev)
{
	struct rdmap_event rev = { .cookie = ev->cookie };
	u32 seg_len = rdmap_untagged_seg_len(ev);
	struct rdmap_err err;
	struct rdmap_hdr h;
	int ret;

	if (READ_ONCE(qp->terminated)) {
		/* a Send's buffer still goes back to the consumer */
		if (ev->qn == RDMAP_WIRE_QN_SEND) {
			rev.type = RDMAP_EV_FLUSH;
			rdmap_report(qp, &rev);
		}
		return;
	}
	if (rdmap_hdr_check(ev->rsvdulp, false, ev->qn, &h, &err)) {
		rdmap_fail_msg(qp, s, &err, ev->hdr, ev->hdr_len, seg_len, NULL);
		goto flush;
	}
	ret = rdmap_rx_rtr(qp, s, ev, h.op, rdmap_untagged_len(qp, ev, h.op),
			   seg_len);
	if (ret)
		goto flush;
	switch (ev->qn) {
	case RDMAP_WIRE_QN_SEND:
		if (rdmap_op_invalidates(h.op)) {
			ret = ddp_invalidate_remote(s, h.inv_stag);
			if (ret) {
				rdmap_fail_code(qp, s, ret == -EACCES ?
						RDMAP_WIRE_ETYPE_PROTECTION :
						RDMAP_WIRE_ETYPE_OPERATION,
						ret == -EACCES ?
						RDMAP_WIRE_ECODE_STAG_NOT_ASSOC :
						RDMAP_WIRE_ECODE_NO_INVALIDATE,
						ev, seg_len, NULL);
				goto flush;
			}
		}
		rev.type = RDMAP_EV_RECV;
		rev.op = h.op;
		rev.len = ev->len;
		rev.inv_stag = h.inv_stag;
		rdmap_report(qp, &rev);
		return;
	case RDMAP_WIRE_QN_READ_REQ:
		rdmap_rx_read_req(qp, s, ev);
		return;
	default:
		rdmap_rx_term(qp, s, ev);
		return;
	}
flush:
	if (ev->qn == RDMAP_WIRE_QN_SEND) {
		rev.type = RDMAP_EV_FLUSH;
		rdmap_report(qp, &rev);
	}
}

/*
 * A tagged message was placed: an RDMA Write, which the consumer does not
 * see, or the Read Response of the oldest outstanding Read, which must
 * match it (STag, offset, length); anything else is an unexpected opcode.
 */
static void rdmap_rx_tagged(struct rdmap_qp *qp, struct ddp_stream *s,
			    const struct ddp_stream_event *ev)
{
	struct rdmap_event rev = { .type = RDMAP_EV_READ_DONE };
	const struct ddp_tagged_hdr *th = (const void *)ev->hdr;
	u32 seg_len = U32_MAX;
	struct rdmap_outbound *o;
	struct rdmap_err err;
	struct rdmap_hdr h;
	bool rtr = false;

	if (ev->hdr_len >= sizeof(*th))
		seg_len = sizeof(*th) + ev->to + ev->len - get_unaligned_be64(&th->to);
	if (READ_ONCE(qp->terminated))
		return;
	if (rdmap_hdr_check(ev->rsvdulp, true, 0, &h, &err)) {
		rdmap_fail_msg(qp, s, &err, ev->hdr, ev->hdr_len, seg_len, NULL);
		return;
	}
	if (rdmap_rx_rtr(qp, s, ev, h.op, ev->len, seg_len) ||
	    h.op == RDMAP_WIRE_OP_WRITE)
		return;
	spin_lock_bh(&qp->lock);
	o = qp->out_count ? &qp->out[qp->out_head] : NULL;
	if (o && o->sink_stag == ev->stag && o->sink_to == ev->to &&
	    o->len == ev->len) {
		rev.cookie = o->cookie;
		rev.len = o->len;
		rtr = o->rtr;
		qp->out_head = (qp->out_head + 1) % RDMAP_MAX_ORD;
		qp->out_count--;
		o = NULL;
	} else {
		o = ERR_PTR(-EINVAL);
	}
	spin_unlock_bh(&qp->lock);
	if (IS_ERR(o)) {
		rdmap_fail_code(qp, s, RDMAP_WIRE_ETYPE_OPERATION,
				RDMAP_WIRE_ECODE_OPCODE, ev, seg_len, NULL);
		return;
	}
	if (!rtr)
		rdmap_report(qp, &rev);
}

/* DDP refused a segment (or MPA the stream): tell the peer why. */
static void rdmap_rx_error(struct rdmap_qp *qp, struct ddp_stream *s,
			   const struct ddp_stream_event *ev)
{
	struct rdmap_term t;

	if (rdmap_term_from_ddp(&t, ev->err_type, ev->err_code, ev->hdr,
				ev->hdr_len, ev->len))
		rdmap_term_from_ddp(&t, DDP_WIRE_ETYPE_CATASTROPHIC,
				    DDP_WIRE_ECODE_CATASTROPHIC, NULL, 0, 0);
	rdmap_fail(qp, s, &t);
}

/*
 * The queue pair of a stream's callback. A message that MPA held comes
 * within ddp_stream_bind(), before rdmap_qp_create() set @qp->s: it is
 * set here then (the same stream).
 */
static struct rdmap_qp *rdmap_qp_of(struct ddp_stream *s)
{
	struct rdmap_qp *qp = ddp_stream_priv(s);

	if (unlikely(!READ_ONCE(qp->s)))
		WRITE_ONCE(qp->s, s);
	return qp;
}

static void rdmap_ddp_event(struct ddp_stream *s,
			    const struct ddp_stream_event *ev)
{
	struct rdmap_qp *qp = rdmap_qp_of(s);
	struct rdmap_event rev = { .cookie = ev->cookie };

	switch (ev->type) {
	case DDP_EV_RECV:
		rdmap_rx_untagged(qp, s, ev);
		break;
	case DDP_EV_TAGGED:
		rdmap_rx_tagged(qp, s, ev);
		break;
	case DDP_EV_ERROR:
		rdmap_rx_error(qp, s, ev);
		break;
	case DDP_EV_FLUSH:
		/* RDMAP's own buffers need no word */
		if (ev->qn == RDMAP_WIRE_QN_SEND) {
			rev.type = RDMAP_EV_FLUSH;
			rdmap_report(qp, &rev);
		}
		break;
	case DDP_EV_PEER_CLOSED:
		rev.type = RDMAP_EV_PEER_CLOSED;
		rdmap_report(qp, &rev);
		break;
	}
}

static int rdmap_post_slot(struct rdmap_qp *qp, struct ddp_stream *s, u32 slot,
			   gfp_t gfp)
{
	if (slot < RDMAP_TERM_COOKIE)
		return ddp_post_recv_pages(s, RDMAP_WIRE_QN_READ_REQ, &qp->page,
					   1, slot * RDMAP_RREQ_SLOT,
					   RDMAP_READ_REQ_LEN, slot, gfp);
	return ddp_post_recv_pages(s, RDMAP_WIRE_QN_TERMINATE, &qp->page, 1,
				   RDMAP_TERM_OFF +
				   (slot - RDMAP_TERM_COOKIE) * RDMAP_TERM_SLOT,
				   RDMAP_TERM_MAX_LEN, slot, gfp);
}

/* The IRD's Read Request buffers and the Terminate's. Socket lock held. */
static int rdmap_post_slots(struct rdmap_qp *qp, struct ddp_stream *s,
			    gfp_t gfp)
{
	u32 slot;
	int ret;

	if (qp->slots_posted)
		return 0;
	qp->slots_posted = true;
	/* a slot whose request was taken goes back with ddp_repost() */
	ret = ddp_queue_keep(s, RDMAP_WIRE_QN_READ_REQ);
	if (ret)
		return ret;
	for (slot = 0; slot < qp->ird; slot++) {
		ret = rdmap_post_slot(qp, s, slot, gfp);
		if (ret)
			return ret;
	}
	for (slot = 0; slot < RDMAP_TERM_BUFS; slot++) {
		ret = rdmap_post_slot(qp, s, RDMAP_TERM_COOKIE + slot, gfp);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * DDP found no buffer for an untagged message. Within ddp_stream_bind(),
 * a message MPA held comes before rdmap_qp_create() could post RDMAP's
 * own buffers: they are posted here then (later, none: a Read Request
 * beyond the IRD gets DDP's error). For a Send, the consumer may post
 * one now. A failure leaves the message without a buffer: DDP's error.
 */
static void rdmap_ddp_refill(struct ddp_stream *s, u32 qn)
{
	struct rdmap_qp *qp = rdmap_qp_of(s);

	if (qn != RDMAP_WIRE_QN_SEND) {
		rdmap_post_slots(qp, s, GFP_ATOMIC);
		return;
	}
	if (qp->ops->refill)
		qp->ops->refill(qp);
}

static const struct ddp_stream_ops rdmap_ddp_ops = {
	.event = rdmap_ddp_event,
	.refill = rdmap_ddp_refill,
};

/*
 * Send the Read Response of @in, the oldest request; a failure ends the
 * stream. With @nowait only if it goes whole at once: -EAGAIN, nothing
 * sent, else. Return: 0, or -EAGAIN (@in is answered unless -EAGAIN).
 */
static int rdmap_answer_read(struct rdmap_qp *qp, struct rdmap_inbound *in,
			     bool nowait)
{
	int ret = rdmap_send_read_resp(qp->s, &in->rr, in->mr, nowait, false);

	if (ret == -EAGAIN && nowait)
		return ret;
	if (in->mr)
		ddp_mr_put(in->mr);
	if (ret) {
		struct rdmap_term t = {
			.err = {
				.layer = RDMAP_WIRE_LAYER_RDMAP,
				.etype = RDMAP_WIRE_ETYPE_CATASTROPHIC,
			},
		};

		lock_sock(qp->sock->sk);
		rdmap_fail(qp, qp->s, &t);
		release_sock(qp->sock->sk);
	}
	return 0;
}

static void rdmap_send_term(struct rdmap_qp *qp)
{
	struct ddp_msg msg = { .qn = RDMAP_WIRE_QN_TERMINATE };
	struct kvec kv = { .iov_base = qp->term_buf, .iov_len = qp->term_len };
	struct iov_iter it;

	rdmap_rsvdulp_untagged(RDMAP_WIRE_OP_TERMINATE, 0, msg.rsvdulp);
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, qp->term_len);
	/* nothing to do when it cannot go: the stream is broken already */
	ddp_send_msg(qp->s, &msg, &it);
	/* RFC 5040 section 5.4: the stream ends after the Terminate */
	kernel_sock_shutdown(qp->sock, SHUT_WR);
}

enum rdmap_tx_what {
	RDMAP_TX_NONE,
	RDMAP_TX_TERM,		/* the Terminate, taken */
	RDMAP_TX_READ,		/* the oldest Read Request, in @in_tx */
	RDMAP_TX_LATER,		/* left for rdmap_wq */
};

/*
 * What to send next, under @work_mutex: the Terminate first, else the
 * Read Response of the oldest request, in @in_tx: the one a round left
 * there (@in_tx_held), or the head of the ring, taken off it now, before
 * its answer, so that the peer's next request, which the answer allows,
 * finds room and a slot: queue 1 keeps the buffers it delivered and one
 * goes back per request taken. A request is decoded in its event, before
 * it enters the ring: the buffer posted again, the oldest kept, was read.
 * With @nowait the Terminate is left for rdmap_wq: its shutdown may wait.
 * *@more: something waits after it; what comes later kicks the queue
 * pair again.
 */
static enum rdmap_tx_what rdmap_tx_next(struct rdmap_qp *qp, bool nowait,
					bool *more)
{
	enum rdmap_tx_what what = RDMAP_TX_NONE;
	bool taken = false;

	spin_lock_bh(&qp->lock);
	if (qp->term_pending && nowait) {
		what = RDMAP_TX_LATER;
	} else if (qp->term_pending) {
		qp->term_pending = false;
		qp->term_sent = true;
		what = RDMAP_TX_TERM;
	} else if (qp->terminated || qp->closing) {
		what = RDMAP_TX_NONE;
	} else if (qp->in_tx_held) {
		what = RDMAP_TX_READ;
	} else if (qp->in_count) {
		qp->in_tx = qp->in[qp->in_head];
		qp->in_tx_held = true;
		qp->in_head = (qp->in_head + 1) % RDMAP_MAX_IRD;
		qp->in_count--;
		what = RDMAP_TX_READ;
		taken = true;
	}
	*more = qp->term_pending || qp->in_count;
	spin_unlock_bh(&qp->lock);
	/* cannot fail: the slot came back to the queue it was posted on */
	if (taken)
		ddp_repost(qp->s, RDMAP_WIRE_QN_READ_REQ);
	return what;
}

/*
 * Send what waits, in order, a round at a time under @work_mutex. With
 * @nowait (the transmit thread, which serves every queue pair of its CPU
 * and must not wait on one peer): only what goes at once. Return: false
 * when what is left is for rdmap_wq: a Terminate, a Read Response that
 * cannot go whole now (longer than a segment, no send space), or a round
 * that rdmap_wq runs already.
 */
static bool rdmap_tx(struct rdmap_qp *qp, bool nowait)
{
	enum rdmap_tx_what what;
	bool more = false;

	if (!READ_ONCE(qp->s))
		return true;	/* rdmap_qp_create() kicks it again */
	do {
		if (!nowait)
			mutex_lock(&qp->work_mutex);
		else if (!mutex_trylock(&qp->work_mutex))
			return false;
		what = qp->released ? RDMAP_TX_NONE :
		       rdmap_tx_next(qp, nowait, &more);
		if (what == RDMAP_TX_TERM) {
			rdmap_send_term(qp);
		} else if (what == RDMAP_TX_READ) {
			if (rdmap_answer_read(qp, &qp->in_tx, nowait))
				what = RDMAP_TX_LATER;
			else
				WRITE_ONCE(qp->in_tx_held, false);
		}
		mutex_unlock(&qp->work_mutex);
	} while (what != RDMAP_TX_NONE && what != RDMAP_TX_LATER && more);
	return what != RDMAP_TX_LATER;
}

static void rdmap_work(struct work_struct *work)
{
	rdmap_tx(container_of(work, struct rdmap_qp, work), false);
}

static int rdmap_tx_should_run(unsigned int cpu)
{
	return !list_empty(&per_cpu_ptr(&rdmap_txq, cpu)->qps);
}

/* the transmit thread of @cpu: run the queue pairs kicked, in order */
static void rdmap_tx_thread(unsigned int cpu)
{
	struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, cpu);
	struct rdmap_qp *qp;

	spin_lock_irq(&q->lock);
	while ((qp = list_first_entry_or_null(&q->qps, struct rdmap_qp,
					      tx_entry))) {
		list_del_init(&qp->tx_entry);
		qp->tx_running = true;
		spin_unlock_irq(&q->lock);
		if (!rdmap_tx(qp, true))
			queue_work(rdmap_wq, &qp->work);
		spin_lock_irq(&q->lock);
		qp->tx_running = false;
		/* under @lock, which the waiter's condition takes */
		wake_up_var(&qp->tx_running);
		if (need_resched()) {
			spin_unlock_irq(&q->lock);
			cond_resched();
			spin_lock_irq(&q->lock);
		}
	}
	spin_unlock_irq(&q->lock);
}

static void rdmap_tx_unpark(unsigned int cpu)
{
	struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, cpu);

	spin_lock_irq(&q->lock);
	q->up = true;
	spin_unlock_irq(&q->lock);
}

/* ahead of the CPU's processes, as a WQ_HIGHPRI worker */
static void rdmap_tx_setup(unsigned int cpu)
{
	sched_set_normal(current, MIN_NICE);
	rdmap_tx_unpark(cpu);
}

/* @cpu goes offline: what its thread was to run goes to rdmap_wq */
static void rdmap_tx_park(unsigned int cpu)
{
	struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, cpu);
	struct rdmap_qp *qp, *n;

	spin_lock_irq(&q->lock);
	q->up = false;
	list_for_each_entry_safe(qp, n, &q->qps, tx_entry) {
		list_del_init(&qp->tx_entry);
		queue_work(rdmap_wq, &qp->work);
		wake_up_var(&qp->tx_running);
	}
	spin_unlock_irq(&q->lock);
}

static struct smp_hotplug_thread rdmap_tx_threads = {
	.store			= &rdmap_tx_task,
	.thread_should_run	= rdmap_tx_should_run,
	.thread_fn		= rdmap_tx_thread,
	.thread_comm		= "rdmap_tx/%u",
	.setup			= rdmap_tx_setup,
	.park			= rdmap_tx_park,
	.unpark			= rdmap_tx_unpark,
};

/* @qp is neither waiting for its CPU's thread nor run by it */
static bool rdmap_tx_idle(struct rdmap_qp *qp)
{
	struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, qp->cpu);
	bool idle;

	spin_lock_irq(&q->lock);
	idle = list_empty(&qp->tx_entry) && !qp->tx_running;
	spin_unlock_irq(&q->lock);
	return idle;
}

/* wait for what was kicked before: on the thread, then in rdmap_wq */
static void rdmap_tx_flush(struct rdmap_qp *qp)
{
	wait_var_event(&qp->tx_running, rdmap_tx_idle(qp));
	flush_work(&qp->work);
}

/*
 * Nothing of @qp runs after this, or is left to run; only once nothing
 * kicks it any more: no callback, and every round finds @released.
 */
static void rdmap_tx_cancel(struct rdmap_qp *qp)
{
	struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, qp->cpu);

	spin_lock_irq(&q->lock);
	list_del_init(&qp->tx_entry);
	spin_unlock_irq(&q->lock);
	wait_var_event(&qp->tx_running, rdmap_tx_idle(qp));
	cancel_work_sync(&qp->work);
}

/*
 * Release the stream: a Terminate that waits still goes on a graceful
 * release; then the work sends nothing more, and no callback runs once
 * ddp_stream_release() returned.
 */
static void rdmap_qp_release(struct rdmap_qp *qp, struct ddp_stream *s,
			     bool abortive)
{
	struct rdmap_inbound *in;

	/* from here on no Read Request is queued: see rdmap_rx_read_req() */
	spin_lock_bh(&qp->lock);
	WRITE_ONCE(qp->closing, true);
	spin_unlock_bh(&qp->lock);
	if (!abortive)
		rdmap_tx_flush(qp);
	mutex_lock(&qp->work_mutex);
	qp->released = true;
	/* a Read Response that could not go at once, nor after */
	if (qp->in_tx_held && qp->in_tx.mr)
		ddp_mr_put(qp->in_tx.mr);
	WRITE_ONCE(qp->in_tx_held, false);
	mutex_unlock(&qp->work_mutex);
	/*
	 * The held Data Sources go back before the release, which waits
	 * for the users of the buffers bound to the stream.
	 */
	spin_lock_bh(&qp->lock);
	for (; qp->in_count; qp->in_count--) {
		in = &qp->in[qp->in_head];
		qp->in_head = (qp->in_head + 1) % RDMAP_MAX_IRD;
		if (in->mr)
			ddp_mr_put(in->mr);
	}
	spin_unlock_bh(&qp->lock);
	ddp_stream_release(s, abortive);
	/* a round kicked by the last callbacks finds @released */
	rdmap_tx_cancel(qp);
	rdmap_flush_reads(qp);
}

static int __rdmap_read(struct rdmap_qp *qp, const struct rdmap_read_wr *wr,
			bool rtr, bool nowait)
{
	struct rdmap_read_req rr = {
		.sink_stag = wr->sink_stag,
		.sink_to = wr->sink_to,
		.size = wr->len,
		.src_stag = wr->src_stag,
		.src_to = wr->src_to,
	};
	struct ddp_msg msg = {
		.qn = RDMAP_WIRE_QN_READ_REQ,
		.nowait = nowait,
	};
	struct rdmap_wire_read_req w;
	struct kvec kv = { .iov_base = &w, .iov_len = sizeof(w) };
	struct rdmap_outbound *o;
	struct iov_iter it;
	struct rdmap_err err;
	int ret;

	rdmap_read_req_encode(&rr, &w);
	/* what the peer would refuse: see rdmap_read_req_decode() */
	if (rdmap_read_req_decode(&w, sizeof(w), &rr, &err))
		return -EINVAL;
	if (!nowait)
		mutex_lock(&qp->read_mutex);
	else if (!mutex_trylock(&qp->read_mutex))
		return -EAGAIN;
	spin_lock_bh(&qp->lock);
	if (qp->terminated || qp->closing) {
		ret = -ECONNABORTED;
	} else if (qp->out_count >= qp->ord) {
		ret = -ENOBUFS;
	} else {
		/* in before the request goes: the response may be quick */
		o = &qp->out[(qp->out_head + qp->out_count) % RDMAP_MAX_ORD];
		o->sink_stag = wr->sink_stag;
		o->sink_to = wr->sink_to;
		o->len = wr->len;
		o->cookie = wr->cookie;
		o->rtr = rtr;
		qp->out_count++;
		ret = 0;
	}
	spin_unlock_bh(&qp->lock);
	if (ret)
		goto out;
	rdmap_rsvdulp_untagged(RDMAP_WIRE_OP_READ_REQ, 0, msg.rsvdulp);
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(w));
	ret = ddp_send_msg(qp->s, &msg, &it);
	if (ret) {
		/* not sent: no response can come; it is the newest entry */
		spin_lock_bh(&qp->lock);
		if (qp->out_count)
			qp->out_count--;
		spin_unlock_bh(&qp->lock);
	}
out:
	mutex_unlock(&qp->read_mutex);
	return ret;
}

/* RFC 6581's RTR of type @type (MPA_F_RTR_*): zero octets */
static int rdmap_send_rtr(struct rdmap_qp *qp, u32 type, bool nowait)
{
	struct rdmap_read_wr wr = {
		.sink_stag = RDMAP_RTR_STAG,
		.src_stag = RDMAP_RTR_STAG,
	};
	struct ddp_msg msg = { .nowait = nowait };
	struct iov_iter empty;

	iov_iter_kvec(&empty, ITER_SOURCE, NULL, 0, 0);
	switch (type) {
	case MPA_F_RTR_SEND:
		msg.qn = RDMAP_WIRE_QN_SEND;
		rdmap_rsvdulp_untagged(RDMAP_WIRE_OP_SEND, 0, msg.rsvdulp);
		return ddp_send_msg(qp->s, &msg, &empty);
	case MPA_F_RTR_WRITE:
		msg.tagged = true;
		msg.stag = RDMAP_RTR_STAG;
		msg.rsvdulp[0] = rdmap_ctrl(RDMAP_WIRE_OP_WRITE);
		return ddp_send_msg(qp->s, &msg, &empty);
	case MPA_F_RTR_READ:
		return __rdmap_read(qp, &wr, true, nowait);
	}
	return -EPROTO;
}

/*
 * RFC 6581: on a connection that agreed on the peer-to-peer model, the
 * Initiator's first message is the RTR of the agreed type. It goes from
 * rdmap_qp_create() when the connection is in full operation already,
 * else before the consumer's first message (@nowait: as that message is
 * sent, see struct ddp_msg).
 */
static noinline int rdmap_tx_rtr_first(struct rdmap_qp *qp, bool nowait)
{
	struct mpa_conn_attrs a;
	int ret = 0;

	if (!nowait)
		mutex_lock(&qp->rtr_mutex);
	else if (!mutex_trylock(&qp->rtr_mutex))
		return -EAGAIN;
	if (qp->rtr_tx_done)
		goto out;
	lock_sock(qp->sock->sk);
	ddp_stream_mpa_info(qp->s, &a);
	release_sock(qp->sock->sk);
	/* not yet: the send that follows says why, the next one tries again */
	if (a.state != MPA_S_FULL)
		goto out;
	if (a.p2p && a.rtr && a.role == MPA_ROLE_INITIATOR)
		ret = rdmap_send_rtr(qp, a.rtr, nowait);
	if (!ret)
		WRITE_ONCE(qp->rtr_tx_done, true);
out:
	mutex_unlock(&qp->rtr_mutex);
	return ret;
}

/* every send's check: the RTR's work is out of line, its attrs too */
static inline int rdmap_tx_rtr(struct rdmap_qp *qp, bool nowait)
{
	if (likely(READ_ONCE(qp->rtr_tx_done)))
		return 0;
	return rdmap_tx_rtr_first(qp, nowait);
}

/**
 * rdmap_qp_create() - make an MPA connection an RDMAP queue pair
 * @pd: the DDP protection domain of its memory
 * @sock: a TCP socket in MPA full operation, or about to be; the owner
 *	keeps it and closes it after rdmap_qp_destroy()
 * @attr: IRD and ORD
 * @ops: the consumer's callbacks
 * @priv: the consumer's cookie, see rdmap_qp_priv()
 *
 * Binds DDP with three queues and posts RDMAP's own buffers: IRD Read
 * Request slots and two for the Terminate. The peer should not send
 * before this returned: a Read Request or Terminate that arrives before
 * its buffer is posted is a DDP error. The Read Responses and the
 * Terminate go from the transmit thread of the CPU this is called on (as
 * siw's transmit thread of a queue pair, or nvmet-tcp's I/O CPU of a
 * queue), or from a work item while that CPU is offline.
 * Process context.
 * Return: the queue pair, or an ERR_PTR (-EINVAL for an IRD or ORD out
 * of range, or what ddp_stream_bind() returns).
 */
struct rdmap_qp *rdmap_qp_create(struct ddp_pd *pd, struct socket *sock,
				 const struct rdmap_qp_attr *attr,
				 const struct rdmap_qp_ops *ops, void *priv)
{
	struct ddp_stream *s;
	struct rdmap_qp *qp;
	int ret;

	if (!attr->ird || attr->ird > RDMAP_MAX_IRD ||
	    !attr->ord || attr->ord > RDMAP_MAX_ORD || !ops || !ops->event)
		return ERR_PTR(-EINVAL);
	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return ERR_PTR(-ENOMEM);
	qp->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!qp->page) {
		kfree(qp);
		return ERR_PTR(-ENOMEM);
	}
	qp->sock = sock;
	qp->ops = ops;
	qp->priv = priv;
	qp->ird = attr->ird;
	qp->ord = attr->ord;
	spin_lock_init(&qp->lock);
	mutex_init(&qp->read_mutex);
	mutex_init(&qp->work_mutex);
	mutex_init(&qp->rtr_mutex);
	INIT_WORK(&qp->work, rdmap_work);
	INIT_LIST_HEAD(&qp->tx_entry);
	/* the consumer's CPU; while it is offline rdmap_wq runs the work */
	qp->cpu = raw_smp_processor_id();

	s = ddp_stream_bind(pd, sock, RDMAP_WIRE_NQUEUES, &rdmap_ddp_ops, qp);
	if (IS_ERR(s)) {
		ret = PTR_ERR(s);
		goto err_free;
	}
	/* unless a message held by MPA made the refill post them already */
	lock_sock(sock->sk);
	ret = rdmap_post_slots(qp, s, GFP_KERNEL_ACCOUNT);
	release_sock(sock->sk);
	if (ret)
		goto err_release;
	WRITE_ONCE(qp->s, s);
	/* what the receive path found before @s was set */
	rdmap_kick(qp);
	/* an RTR that cannot go now goes with the first message */
	rdmap_tx_rtr(qp, false);
	return qp;

err_release:
	rdmap_qp_release(qp, s, true);
err_free:
	__free_page(qp->page);
	kfree(qp);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(rdmap_qp_create);

/**
 * rdmap_qp_destroy() - tear a queue pair down
 * @qp: the queue pair
 * @abortive: reset the connection instead of a graceful close
 *
 * Stops the Read Responses not sent yet, releases the DDP stream (posted
 * buffers come back as RDMAP_EV_FLUSH, buffers bound to the stream are
 * invalidated), then reports every outstanding Read as RDMAP_EV_READ_FLUSH.
 * No callback runs after this returns. Process context.
 */
void rdmap_qp_destroy(struct rdmap_qp *qp, bool abortive)
{
	rdmap_qp_release(qp, qp->s, abortive);
	__free_page(qp->page);
	kfree(qp);
}
EXPORT_SYMBOL_GPL(rdmap_qp_destroy);

/**
 * rdmap_qp_priv() - the cookie given to rdmap_qp_create()
 * @qp: the queue pair
 *
 * Return: the cookie.
 */
void *rdmap_qp_priv(struct rdmap_qp *qp)
{
	return qp->priv;
}
EXPORT_SYMBOL_GPL(rdmap_qp_priv);

/**
 * rdmap_qp_stream() - the DDP stream of a queue pair
 * @qp: the queue pair
 *
 * For ddp_reg_pages() of a buffer bound to this queue pair only.
 * Return: the stream.
 */
struct ddp_stream *rdmap_qp_stream(struct rdmap_qp *qp)
{
	return qp->s;
}
EXPORT_SYMBOL_GPL(rdmap_qp_stream);

/*
 * The stream ended, or is being released: nothing more to send or post.
 * A hint without @lock, which would not keep it true past the unlock
 * either: what races with the end is refused by DDP, or flushed.
 */
static bool rdmap_qp_ended(const struct rdmap_qp *qp)
{
	return READ_ONCE(qp->terminated) || READ_ONCE(qp->closing);
}

/**
 * rdmap_post_recv() - post kernel pages for one Send of the peer
 * @qp: the queue pair
 * @pages: the pages; they must stay until the buffer comes back
 * @npages: their number
 * @first: offset of the first octet in the first page
 * @len: length in octets
 * @cookie: returned in RDMAP_EV_RECV or RDMAP_EV_FLUSH
 * @gfp: GFP_KERNEL in process context, GFP_ATOMIC from the consumer's
 *	refill callback (the one call into RDMAP a callback may make)
 *
 * Return: 0, -ECONNABORTED once the stream is terminated, or what
 * ddp_post_recv_pages() returns.
 */
int rdmap_post_recv(struct rdmap_qp *qp, struct page **pages, u32 npages,
		    u32 first, u64 len, u64 cookie, gfp_t gfp)
{
	if (rdmap_qp_ended(qp))
		return -ECONNABORTED;
	return ddp_post_recv_pages(qp->s, RDMAP_WIRE_QN_SEND, pages, npages,
				   first, len, cookie, gfp);
}
EXPORT_SYMBOL_GPL(rdmap_post_recv);

/**
 * rdmap_post_recv_sg() - post runs of kernel pages for one Send of the peer
 * @qp: the queue pair
 * @sg: the runs, filled in this order (a receive of several SGEs)
 * @nsg: their number
 * @cookie: returned in RDMAP_EV_RECV or RDMAP_EV_FLUSH
 * @gfp: as for rdmap_post_recv()
 *
 * Return: 0, -ECONNABORTED once the stream is terminated, or what
 * ddp_post_recv_sg() returns.
 */
int rdmap_post_recv_sg(struct rdmap_qp *qp, const struct ddp_sge *sg, u32 nsg,
		       u64 cookie, gfp_t gfp)
{
	if (rdmap_qp_ended(qp))
		return -ECONNABORTED;
	return ddp_post_recv_sg(qp->s, RDMAP_WIRE_QN_SEND, sg, nsg, cookie,
				gfp);
}
EXPORT_SYMBOL_GPL(rdmap_post_recv_sg);

/**
 * rdmap_send() - send a Send message
 * @qp: the queue pair
 * @op: RDMAP_WIRE_OP_SEND, _SEND_INV, _SEND_SE or _SEND_SE_INV
 * @inv_stag: the peer's STag to invalidate (the two with Invalidate)
 * @data: the message
 * @flags: MSG_DONTWAIT: the message goes whole at once or not at all
 *	(-EAGAIN), as struct ddp_msg's @nowait says; or 0
 *
 * Context: process context; sleeps unless MSG_DONTWAIT.
 * Return: 0 once the message is with TCP, -EINVAL for another opcode,
 * -ECONNABORTED once the stream is terminated, or what ddp_send_msg()
 * returns.
 */
int rdmap_send(struct rdmap_qp *qp, u8 op, u32 inv_stag,
	       struct iov_iter *data, int flags)
{
	struct ddp_msg msg = {
		.qn = RDMAP_WIRE_QN_SEND,
		.nowait = flags & MSG_DONTWAIT,
	};
	int ret;

	if (op < RDMAP_WIRE_OP_SEND || op > RDMAP_WIRE_OP_SEND_SE_INV)
		return -EINVAL;
	if (rdmap_qp_ended(qp))
		return -ECONNABORTED;
	ret = rdmap_tx_rtr(qp, msg.nowait);
	if (ret)
		return ret;
	rdmap_rsvdulp_untagged(op, inv_stag, msg.rsvdulp);
	return ddp_send_msg(qp->s, &msg, data);
}
EXPORT_SYMBOL_GPL(rdmap_send);

/**
 * rdmap_write() - send an RDMA Write
 * @qp: the queue pair
 * @stag: the peer's buffer (remote write access)
 * @to: tagged offset of the first octet there
 * @data: the data
 * @flags: MSG_DONTWAIT or 0, as for rdmap_send()
 *
 * Context: process context; sleeps unless MSG_DONTWAIT.
 * Return: 0 once the message is with TCP, -ECONNABORTED once the stream is
 * terminated, or what ddp_send_msg() returns.
 */
int rdmap_write(struct rdmap_qp *qp, u32 stag, u64 to, struct iov_iter *data,
		int flags)
{
	struct ddp_msg msg = {
		.tagged = true,
		.stag = stag,
		.to = to,
		.rsvdulp = { rdmap_ctrl(RDMAP_WIRE_OP_WRITE) },
		.nowait = flags & MSG_DONTWAIT,
	};
	int ret;

	if (rdmap_qp_ended(qp))
		return -ECONNABORTED;
	ret = rdmap_tx_rtr(qp, msg.nowait);
	return ret ? ret : ddp_send_msg(qp->s, &msg, data);
}
EXPORT_SYMBOL_GPL(rdmap_write);

/**
 * rdmap_read() - send an RDMA Read Request
 * @qp: the queue pair
 * @wr: the source, the sink, the length and the cookie
 * @flags: MSG_DONTWAIT or 0, as for rdmap_send()
 *
 * The Read completes with RDMAP_EV_READ_DONE when its Read Response was
 * placed whole into @wr->sink_stag, which must be registered with
 * DDP_ACCESS_REMOTE_WRITE; Reads complete in the order they were sent.
 * Return: 0, -EINVAL for a range whose tagged offset wraps, -ENOBUFS when
 * ORD Reads are outstanding, -ECONNABORTED once the stream is terminated,
 * or what ddp_send_msg() returns.
 */
int rdmap_read(struct rdmap_qp *qp, const struct rdmap_read_wr *wr, int flags)
{
	bool nowait = flags & MSG_DONTWAIT;
	int ret = rdmap_tx_rtr(qp, nowait);

	return ret ? ret : __rdmap_read(qp, wr, false, nowait);
}
EXPORT_SYMBOL_GPL(rdmap_read);

/**
 * rdmap_terminate() - end the stream with an error the consumer found
 * @qp: the queue pair
 * @layer: RDMAP_WIRE_LAYER_*
 * @etype: error type of that layer
 * @ecode: error code of that type
 *
 * Sends a Terminate without headers, reports RDMAP_EV_TERMINATE and
 * flushes the outstanding Reads, as for an error RDMAP finds itself.
 * Return: 0, -EINVAL for a layer or type out of range, -ECONNABORTED
 * when the stream is terminated already.
 */
int rdmap_terminate(struct rdmap_qp *qp, u8 layer, u8 etype, u8 ecode)
{
	struct rdmap_term t = {
		.err = { .layer = layer, .etype = etype, .ecode = ecode },
	};

	if (rdmap_term_len(&t) < 0)
		return -EINVAL;
	lock_sock(qp->sock->sk);
	if (rdmap_qp_ended(qp)) {
		release_sock(qp->sock->sk);
		return -ECONNABORTED;
	}
	rdmap_fail(qp, qp->s, &t);
	release_sock(qp->sock->sk);
	return 0;
}
EXPORT_SYMBOL_GPL(rdmap_terminate);

static int __init rdmap_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu) {
		struct rdmap_txq *q = per_cpu_ptr(&rdmap_txq, cpu);

		spin_lock_init(&q->lock);
		INIT_LIST_HEAD(&q->qps);
	}
	rdmap_wq = alloc_workqueue("rdmap", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!rdmap_wq)
		return -ENOMEM;
	ret = smpboot_register_percpu_thread(&rdmap_tx_threads);
	if (ret)
		destroy_workqueue(rdmap_wq);
	return ret;
}

/* every queue pair is destroyed: its module holds this one */
static void __exit rdmap_exit(void)
{
	smpboot_unregister_percpu_thread(&rdmap_tx_threads);
	destroy_workqueue(rdmap_wq);
}

module_init(rdmap_init);
module_exit(rdmap_exit);
MODULE_DESCRIPTION("RDMAP (RFC 5040) over DDP");
MODULE_LICENSE("GPL");
