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
 * ddp_stream_priv(). Every other function here sleeps.
 */
#ifndef _NET_DDP_H
#define _NET_DDP_H

#include <linux/mm_types.h>
#include <linux/net.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <uapi/linux/ddp.h>

struct ddp_pd;
struct ddp_stream;

/**
 * struct ddp_stream_ops - the ULP's callbacks
 * @event: a completion (DDP_EV_RECV, DDP_EV_TAGGED), an error
 *	(DDP_EV_ERROR: placement stopped, later segments are dropped), a
 *	flushed buffer (DDP_EV_FLUSH) or the peer's close
 */
struct ddp_stream_ops {
	void (*event)(struct ddp_stream *s, const struct ddp_event *ev);
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
int ddp_post_recv_pages(struct ddp_stream *s, u32 qn, struct page **pages,
			u32 npages, u32 first, u64 len, u64 cookie);
int ddp_send_msg(struct ddp_stream *s, const struct ddp_send *desc,
		 struct iov_iter *data);

#endif /* _NET_DDP_H */
