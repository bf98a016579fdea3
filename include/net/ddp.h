/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel API of DDP (RFC 5041) over MPA, for the protocol above it
 * (an RDMAP-like ULP). See Documentation/ddp.rst.
 *
 * A protection domain (struct ddp_pd) holds registered memory, named by
 * STags. A stream (struct ddp_stream) is one MPA connection bound to DDP.
 * Tagged segments are placed straight from the socket buffers into the
 * registered pages in softirq; completions and errors reach the ULP
 * through its event callback, in softirq or in process context with the
 * socket lock held: it must not sleep and must not call DDP back except
 * ddp_stream_priv(), ddp_stream_mpa_info(), ddp_stream_halt(),
 * ddp_invalidate_remote(), ddp_mr_get(), ddp_mr_put(), ddp_repost(), and
 * (not for DDP_EV_FLUSH, which comes without the socket lock)
 * ddp_send_msg() and ddp_send_mr() for a message with @rx. Every other
 * function here sleeps.
 */
#ifndef _NET_DDP_H
#define _NET_DDP_H

#include <linux/mm_types.h>
#include <linux/net.h>
#include <linux/types.h>
#include <linux/uio.h>
/* the DDP_EV_*, DDP_WIRE_ETYPE_*, DDP_WIRE_ECODE_* and DDP_ACCESS_* numbers */
#include <uapi/linux/ddp.h>

struct ddp_mr;
struct ddp_pd;
struct mpa_conn_attrs;
struct ddp_region_view;
struct ddp_stream;

/* runs of one buffer ddp_post_recv_sg() takes at most */
#define DDP_MAX_SGE	16

/**
 * struct ddp_sge - one run of kernel pages of an untagged buffer
 * @pages: the pages; they must stay until the buffer comes back
 * @first: offset of the run's first octet in its first page
 * @len: its length in octets
 */
struct ddp_sge {
	struct page	**pages;
	u32		first;
	u32		len;
};

/**
 * struct ddp_msg - what to send, see ddp_send_msg()
 * @tagged: a tagged message, placed by the peer into its buffer @stag at
 *	@to; else an untagged message to the peer's queue @qn
 * @qn: untagged: queue number (the MSN is DDP's)
 * @stag: tagged: the sink's steering tag
 * @to: tagged: tagged offset of the message's first octet
 * @rsvdulp: the RsvdULP bits: [0] for a tagged header (the others must
 *	be 0), [0..4] in wire order for an untagged one
 * @more: another message follows at once: its last FPDU, like the
 *	others, may wait for the next one (MSG_MORE: FPDU trains, small
 *	FPDUs sharing a segment); the next send without @more pushes both
 * @nowait: send the message whole at once or not at all: ddp_send_msg()
 *	returns -EAGAIN, having sent nothing, when it is longer than one
 *	segment, while another sender has the stream, or when MPA cannot
 *	take its FPDU without waiting (send space, startup, RFC 5044's rule
 *	4). For a sender that must not sleep on the peer, e.g. in a system
 *	call that a signal could cut.
 * @rx: send from the event callback (softirq, or a task with the socket
 *	lock), as @nowait and only a tagged message of one segment: -EAGAIN,
 *	nothing sent, also while another sender is in the middle of a message
 *	(mpa_sendv_rx()). An answer sent where its request arrived, without
 *	waking a task.
 */
struct ddp_msg {
	bool	tagged;
	bool	more;
	bool	nowait;
	bool	rx;
	u32	qn;
	u32	stag;
	u64	to;
	u8	rsvdulp[5];
};

/**
 * struct ddp_stream_event - what the ULP's event callback receives
 * @type: enum ddp_event_type (DDP_EV_*)
 * @err_type: DDP_EV_ERROR: DDP_WIRE_ETYPE_*, or DDP_WIRE_ETYPE_LLP for an MPA error
 * @err_code: DDP_EV_ERROR: DDP_WIRE_ECODE_*, or the RFC 5044 code for LLP errors
 * @qn: untagged queue number
 * @msn: untagged message sequence number
 * @len: octets of the message (error: the segment length)
 * @stag: tagged: steering tag
 * @to: tagged: tagged offset of the message's first octet
 * @cookie: the buffer's cookie (DDP_EV_RECV, DDP_EV_FLUSH)
 * @rsvdulp: the RsvdULP bits of the message
 * @hdr: DDP_EV_ERROR: the offending DDP header; DDP_EV_RECV and
 *	DDP_EV_TAGGED: the header of the message's last segment (for the
 *	ULP's own checks and Terminate). Valid during the call.
 * @hdr_len: its length, 0 when there is none
 */
struct ddp_stream_event {
	u16		type;
	u8		err_type;
	u8		err_code;
	u32		qn;
	u32		msn;
	u32		len;
	u32		stag;
	u64		to;
	u64		cookie;
	u8		rsvdulp[5];
	const u8	*hdr;
	u32		hdr_len;
};

/**
 * struct ddp_stream_ops - the ULP's callbacks
 * @event: a completion (DDP_EV_RECV, DDP_EV_TAGGED), an error
 *	(DDP_EV_ERROR: placement stopped, later segments are dropped), a
 *	flushed buffer (DDP_EV_FLUSH) or the peer's close
 * @rx_kick: optional: received segments wait in TCP for a task of the
 *	ULP that waits to receive (so far only the stream files of
 *	/dev/ddp: a read() that sleeps); wake it, it places them on its own
 *	CPU. Softirq, must not sleep. See mpa_rx_wait_begin().
 * @refill: optional: an untagged message arrived on queue @qn for which
 *	no buffer is posted; post more now with ddp_post_recv_pages() and
 *	GFP_ATOMIC (a ULP whose consumer posts into a ring that user space
 *	writes without a system call, as siw's ABI does). Called before the
 *	message is refused, in softirq or with the socket lock held; must
 *	not sleep.
 */
struct ddp_stream_ops {
	void (*event)(struct ddp_stream *s, const struct ddp_stream_event *ev);
	void (*rx_kick)(struct ddp_stream *s);
	void (*refill)(struct ddp_stream *s, u32 qn);
};

struct ddp_pd *ddp_pd_alloc(void);
void ddp_pd_put(struct ddp_pd *pd);

struct ddp_stream *ddp_stream_bind(struct ddp_pd *pd, struct socket *sock,
				   u32 nqueues, const struct ddp_stream_ops *ops,
				   void *priv);
void ddp_stream_release(struct ddp_stream *s, bool abortive);
void *ddp_stream_priv(struct ddp_stream *s);

int ddp_reg_pages(struct ddp_pd *pd, struct ddp_stream *owner,
		  struct page **pages, u32 npages, u32 first, u64 len,
		  u64 base_to, u32 access, u32 *stag);
int ddp_invalidate(struct ddp_pd *pd, u32 stag);
int ddp_stag_reserve(struct ddp_pd *pd, u32 *stag);
void ddp_stag_release(struct ddp_pd *pd, u32 stag);
int ddp_reg_pages_at(struct ddp_pd *pd, struct page **pages, u32 npages,
		     u32 first, u64 len, u64 base_to, u32 access, u32 stag);
int ddp_post_recv_pages(struct ddp_stream *s, u32 qn, struct page **pages,
			u32 npages, u32 first, u64 len, u64 cookie, gfp_t gfp);
int ddp_post_recv_sg(struct ddp_stream *s, u32 qn, const struct ddp_sge *sg,
		     u32 nsg, u64 cookie, gfp_t gfp);
int ddp_queue_keep(struct ddp_stream *s, u32 qn);
int ddp_repost(struct ddp_stream *s, u32 qn);
int ddp_send_msg(struct ddp_stream *s, const struct ddp_msg *msg,
		 struct iov_iter *data);

/* for the ULP's remote operations; these five do not sleep */
void ddp_stream_mpa_info(struct ddp_stream *s, struct mpa_conn_attrs *attrs);
void ddp_stream_halt(struct ddp_stream *s);
int ddp_invalidate_remote(struct ddp_stream *s, u32 stag);
struct ddp_mr *ddp_mr_get(struct ddp_stream *s, u32 stag,
			  struct ddp_region_view *view, u32 *bound);
void ddp_mr_put(struct ddp_mr *mr);
int ddp_send_mr(struct ddp_stream *s, const struct ddp_msg *msg,
		struct ddp_mr *mr, u64 to, u32 len);

#endif /* _NET_DDP_H */
