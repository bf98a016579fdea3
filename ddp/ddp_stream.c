// SPDX-License-Identifier: GPL-2.0
/*
 * DDP streams: binding an MPA connection, teardown, posted untagged
 * buffers and the Data Source, which cuts messages into segments of at
 * most MULPDU octets (RFC 5041 sections 5, 6).
 */
#include <linux/idr.h>
#include <linux/net.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "ddp.h"

/* ---- streams ---- */

/*
 * A buffer that came back (delivered or flushed) holds kernel pages only:
 * freeing it does not sleep.
 */
void ddp_rbuf_free(struct ddp_rbuf *b)
{
	/* a page table in the buffer's own allocation goes with it */
	if (b->small)
		b->mem.pages = NULL;
	ddp_mem_release(&b->mem, false);
	kfree(b);
}

/*
 * Keep @b, a buffer that came back, as a spare of @s if it is of the small
 * kind (kernel pages, its page table in itself: nothing to release). A
 * consumer posts in bursts (a refill takes what its ring holds), so the
 * spares are bounded by what may be posted, not by fewer. Under @s->lock.
 * Return: whether it was kept.
 */
bool ddp_rbuf_keep(struct ddp_stream *s, struct ddp_rbuf *b)
{
	if (!b->small || s->nrbuf_spare >= DDP_MAX_POSTED)
		return false;
	list_add(&b->list, &s->rbuf_spare);
	WRITE_ONCE(s->nrbuf_spare, s->nrbuf_spare + 1);
	return true;
}

/**
 * ddp_stream_bind() - make an MPA connection a DDP stream
 * @pd: the stream's protection domain
 * @sock: a TCP socket; MPA may be started already (by user space or a
 *	kernel ULP) or later, and ULPDUs received before the bind go to DDP
 * @nqueues: untagged queues, 1..DDP_MAX_QUEUES
 * @ops: the ULP's callbacks
 * @priv: the ULP's cookie, see ddp_stream_priv(); whatever the callbacks
 *	need must be in place before the call, mpa_bind() may deliver at once
 *
 * The stream holds a reference on @pd. The bind sets TCP_NODELAY on
 * @sock. Process context, without the socket lock.
 * Return: the stream, or an ERR_PTR.
 */
struct ddp_stream *ddp_stream_bind(struct ddp_pd *pd, struct socket *sock,
				   u32 nqueues, const struct ddp_stream_ops *ops,
				   void *priv)
{
	struct ddp_stream *s;
	struct mpa_conn *conn;
	int i, id;

	if (!nqueues || nqueues > DDP_MAX_QUEUES)
		return ERR_PTR(-EINVAL);
	if (sock->type != SOCK_STREAM || sock->sk->sk_protocol != IPPROTO_TCP)
		return ERR_PTR(-EPROTOTYPE);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc_min(&ddp_ids, 1, GFP_KERNEL);
	if (id < 0) {
		kfree(s);
		return ERR_PTR(id);
	}
	s->id = id;
	s->pd = pd;
	s->sock = sock;
	s->ops = ops;
	s->priv = priv;
	s->mib = ddp_net_mib(sock_net(sock->sk));
	s->dv = DDP_WIRE_VERSION;
	s->nqueues = nqueues;
	for (i = 0; i < nqueues; i++) {
		INIT_LIST_HEAD(&s->q[i].bufs);
		INIT_LIST_HEAD(&s->q[i].kept);
		/* the first message of each queue has MSN 1 */
		s->q[i].head_msn = 1;
		s->q[i].tx_msn = 1;
	}
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->spare);
	INIT_LIST_HEAD(&s->rbuf_spare);
	mutex_init(&s->tx_lock);
	refcount_inc(&pd->ref);

	conn = mpa_bind(sock, "ddp", s);
	if (IS_ERR(conn)) {
		ddp_pd_put(pd);
		ida_free(&ddp_ids, s->id);
		kfree(s);
		return ERR_CAST(conn);
	}
	s->conn = conn;
	ddp_set_version(s, conn);
	/*
	 * DDP messages do not wait for Nagle (RFC 5044 appendix A.2 leaves
	 * that to the ULP): a message's last, short FPDU goes at once. The
	 * socket's owner may set TCP_NODELAY to 0 again.
	 */
	tcp_sock_set_nodelay(sock->sk);
	return s;
}
EXPORT_SYMBOL_GPL(ddp_stream_bind);

/**
 * ddp_stream_priv() - the cookie given to ddp_stream_bind()
 * @s: the stream
 *
 * Return: the cookie.
 */
void *ddp_stream_priv(struct ddp_stream *s)
{
	return s->priv;
}
EXPORT_SYMBOL_GPL(ddp_stream_priv);

/**
 * ddp_stream_mpa_info() - the state of the stream's MPA connection
 * @s: the stream
 * @attrs: out: what mpa_conn_info() gives (role, revision, RFC 6581's
 *	peer-to-peer model and RTR type once in full operation)
 *
 * Does not sleep. With the socket lock held: from the event callback, or
 * between lock_sock() and release_sock().
 */
void ddp_stream_mpa_info(struct ddp_stream *s, struct mpa_conn_attrs *attrs)
{
	mpa_conn_info(s->conn, attrs);
}
EXPORT_SYMBOL_GPL(ddp_stream_mpa_info);

/* Return every posted buffer with DDP_EV_FLUSH. */
static void ddp_flush(struct ddp_stream *s)
{
	struct ddp_stream_event ev = { .type = DDP_EV_FLUSH };
	struct ddp_rbuf *b;
	u32 qn;

	for (qn = 0; qn < s->nqueues; qn++) {
		for (;;) {
			spin_lock_bh(&s->lock);
			b = list_first_entry_or_null(&s->q[qn].bufs,
						     struct ddp_rbuf, list);
			if (b) {
				ev.cookie = b->cookie;
				list_del(&b->list);
				s->q[qn].nposted--;
				s->nposted--;
			}
			spin_unlock_bh(&s->lock);
			if (!b)
				break;
			ev.qn = qn;
			ddp_event(s, &ev);
			ddp_rbuf_free(b);
		}
	}
}

/**
 * ddp_stream_release() - tear a stream down
 * @s: the stream
 * @abortive: reset the connection instead of a graceful close
 *
 * No callback runs after this starts to return buffers: posted buffers
 * come back as DDP_EV_FLUSH events, buffers bound to the stream are
 * invalidated. The socket itself stays with its owner, who closes it;
 * an abortive release resets it first.
 */
void ddp_stream_release(struct ddp_stream *s, bool abortive)
{
	struct ddp_rbuf *b, *tmp;
	u32 qn;

	mutex_lock(&s->tx_lock);
	mpa_unbind(s->conn);
	if (abortive)
		mpa_abort(s->conn, ECONNABORTED);
	mutex_unlock(&s->tx_lock);
	ddp_flush(s);
	list_for_each_entry_safe(b, tmp, &s->rbuf_spare, list)
		kfree(b);
	for (qn = 0; qn < s->nqueues; qn++)
		list_for_each_entry_safe(b, tmp, &s->q[qn].kept, list)
			ddp_rbuf_free(b);
	ddp_invalidate_owned(s);
	if (s->remote_inval) {
		/* the buffers the peer invalidated: see ddp_invalidate_remote() */
		rcu_barrier();
		flush_workqueue(ddp_wq);
	}
	ddp_pd_put(s->pd);
	ida_free(&ddp_ids, s->id);
	kfree(s);
}
EXPORT_SYMBOL_GPL(ddp_stream_release);

/* queue @b on queue @qn; under @s->lock */
static void ddp_queue_rbuf_nolimit(struct ddp_stream *s, u32 qn,
				   struct ddp_rbuf *b)
{
	list_add_tail(&b->list, &s->q[qn].bufs);
	s->q[qn].nposted++;
	s->nposted++;
}

/* queue @b on queue @qn; under @s->lock. Return: 0 or -ENOBUFS */
static int ddp_queue_rbuf(struct ddp_stream *s, u32 qn, struct ddp_rbuf *b)
{
	if (s->nposted >= DDP_MAX_POSTED)
		return -ENOBUFS;
	ddp_queue_rbuf_nolimit(s, qn, b);
	return 0;
}

/* a buffer about to be posted (again): no message in it yet */
static void ddp_rbuf_arm(struct ddp_rbuf *b)
{
	b->placed = 0;
	b->msg_len = 0;
	b->last = false;
	b->last_mo = 0;
	memset(b->rsvdulp, 0, sizeof(b->rsvdulp));
}

/*
 * Post @b, zeroed, whose memory was set up with status @ret (0: it was), or
 * free it. Return: 0, @ret, -EINVAL for a bad queue or -ENOBUFS.
 */
static int ddp_post_rbuf(struct ddp_stream *s, u32 qn, struct ddp_rbuf *b,
			 int ret, u64 cookie)
{
	if (ret) {
		kfree(b);
		return ret;
	}
	b->cookie = cookie;
	ret = -EINVAL;
	if (qn < s->nqueues) {
		spin_lock_bh(&s->lock);
		ret = ddp_queue_rbuf(s, qn, b);
		spin_unlock_bh(&s->lock);
	}
	if (ret)
		ddp_rbuf_free(b);
	return ret;
}

/**
 * ddp_post_recv_pages() - post kernel pages as an untagged buffer
 * @s: the stream
 * @qn: queue number
 * @pages: the pages; they must stay until the buffer comes back
 * @npages: their number
 * @first: offset of the first octet in the first page
 * @len: length in octets
 * @cookie: returned in the DDP_EV_RECV or DDP_EV_FLUSH event
 * @gfp: GFP_KERNEL_ACCOUNT in process context; GFP_ATOMIC from the
 *	ULP's refill callback (struct ddp_stream_ops), which must not sleep
 *
 * A buffer of at most DDP_RBUF_PAGE_TAB pages (a Send's) is one object that
 * the stream keeps when it comes back (ddp_rbuf_keep()): a post takes one
 * of those and queues it in one section under the stream's lock, and
 * allocates only when there is none.
 *
 * Return: 0, -EINVAL for a bad queue or length, -ENOBUFS when too many
 * buffers are posted, -ENOMEM.
 */
int ddp_post_recv_pages(struct ddp_stream *s, u32 qn, struct page **pages,
			u32 npages, u32 first, u64 len, u64 cookie, gfp_t gfp)
{
	struct ddp_rbuf *b, *fresh = NULL;
	int ret;

	if (npages > DDP_RBUF_PAGE_TAB) {
		b = kzalloc(sizeof(*b), gfp);
		if (!b)
			return -ENOMEM;
		return ddp_post_rbuf(s, qn, b,
				     ddp_mem_pages(&b->mem, pages, npages,
						   first, len, NULL, gfp),
				     cookie);
	}
	if (qn >= s->nqueues)
		return -EINVAL;
again:
	if (!READ_ONCE(s->nrbuf_spare)) {
		fresh = kmalloc(struct_size(b, page_tab, DDP_RBUF_PAGE_TAB),
				gfp);
		if (!fresh)
			return -ENOMEM;
		fresh->small = true;
		fresh->mem.pages = fresh->page_tab;
	}
	spin_lock_bh(&s->lock);
	b = fresh;
	if (!b) {
		b = list_first_entry_or_null(&s->rbuf_spare, struct ddp_rbuf,
					     list);
		if (!b) {
			/* another post took the last one */
			spin_unlock_bh(&s->lock);
			goto again;
		}
		list_del(&b->list);
		WRITE_ONCE(s->nrbuf_spare, s->nrbuf_spare - 1);
	}
	/* the table is in the object: ddp_mem_pages() does not allocate */
	ret = ddp_mem_pages(&b->mem, pages, npages, first, len, b->page_tab,
			    gfp);
	if (!ret) {
		/* not zeroed: each field a receive reads is set here */
		b->cookie = cookie;
		ddp_rbuf_arm(b);
		ret = ddp_queue_rbuf(s, qn, b);
	}
	/* refused (a refill asks until -ENOBUFS): it serves the next post */
	if (ret && ddp_rbuf_keep(s, b))
		b = NULL;
	spin_unlock_bh(&s->lock);
	if (ret)
		kfree(b);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_post_recv_pages);

/**
 * ddp_queue_keep() - keep the buffers a queue delivers, to post them again
 * @s: the stream
 * @qn: queue number
 *
 * From now on a buffer of queue @qn whose message was delivered
 * (DDP_EV_RECV) stays with the stream, its pages, length and cookie
 * unchanged, until ddp_repost() posts it again: a ULP whose buffers are
 * fixed slots (RDMAP's Read Requests, RFC 5040 section 5.3) returns a
 * slot with one call and no allocation. A kept buffer is not posted: it
 * gets no DDP_EV_FLUSH, and ddp_stream_release() frees what is kept. Any
 * context.
 *
 * Return: 0, or -EINVAL for a bad queue.
 */
int ddp_queue_keep(struct ddp_stream *s, u32 qn)
{
	if (qn >= s->nqueues)
		return -EINVAL;
	spin_lock_bh(&s->lock);
	s->q[qn].keep = true;
	spin_unlock_bh(&s->lock);
	return 0;
}
EXPORT_SYMBOL_GPL(ddp_queue_keep);

/**
 * ddp_repost() - post again the buffer a kept queue delivered longest ago
 * @s: the stream
 * @qn: queue number, one that ddp_queue_keep() marked
 *
 * The buffer goes to the tail of the queue as ddp_post_recv_pages()
 * would post it, with the pages, length and cookie it was posted with.
 * It counts among the stream's posted buffers again, but the limit of
 * DDP_MAX_POSTED does not refuse it: it was posted once, its memory is
 * there. Does not sleep; any context, without the socket lock.
 *
 * Return: 0, -EINVAL for a bad queue, -ENOENT when the queue keeps no
 * buffer.
 */
int ddp_repost(struct ddp_stream *s, u32 qn)
{
	struct ddp_rbuf *b;
	int ret = -ENOENT;

	if (qn >= s->nqueues)
		return -EINVAL;
	spin_lock_bh(&s->lock);
	b = list_first_entry_or_null(&s->q[qn].kept, struct ddp_rbuf, list);
	if (b) {
		list_del(&b->list);
		ddp_rbuf_arm(b);
		ddp_queue_rbuf_nolimit(s, qn, b);
		ret = 0;
	}
	spin_unlock_bh(&s->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_repost);

/**
 * ddp_post_recv_sg() - post runs of kernel pages as one untagged buffer
 * @s: the stream
 * @qn: queue number
 * @sg: the runs, in the order the message fills them (a receive of
 *	several SGEs); runs of no octets are skipped
 * @nsg: their number, at most DDP_MAX_SGE
 * @cookie: returned in the DDP_EV_RECV or DDP_EV_FLUSH event
 * @gfp: as for ddp_post_recv_pages()
 *
 * Return: 0, -EINVAL for a bad queue, no octets or too many runs,
 * -ENOBUFS when too many buffers are posted, -ENOMEM.
 */
int ddp_post_recv_sg(struct ddp_stream *s, u32 qn, const struct ddp_sge *sg,
		     u32 nsg, u64 cookie, gfp_t gfp)
{
	struct ddp_rbuf *b;

	if (!nsg || nsg > DDP_MAX_SGE)
		return -EINVAL;
	b = kzalloc(sizeof(*b), gfp);
	if (!b)
		return -ENOMEM;
	return ddp_post_rbuf(s, qn, b, ddp_mem_runs(&b->mem, sg, nsg, gfp),
			     cookie);
}
EXPORT_SYMBOL_GPL(ddp_post_recv_sg);

/* a message being sent: MPA asks for the header of each segment in turn */
struct ddp_tx {
	const struct ddp_msg	*msg;
	struct ddp_segmenter	it;
	u32			msn;
	u8			dv;
};

/* the next segment of at most @max_data octets: its header at @hdr */
static int ddp_tx_next(void *ctx, void *hdr, u32 max_data, bool *last)
{
	struct ddp_tx *t = ctx;
	const struct ddp_msg *msg = t->msg;
	u32 off, len;

	if (!max_data)
		return -EMSGSIZE;
	/* the whole message in this first segment, or nothing sent */
	if (msg->nowait && !t->it.done && t->it.msg_len > max_data)
		return -EAGAIN;
	ddp_seg_resize(&t->it, max_data);
	if (!ddp_seg_next(&t->it, &off, &len, last))
		return -EINVAL;
	if (msg->tagged)
		ddp_tagged_hdr_build(hdr, t->dv, *last, msg->rsvdulp[0],
				     msg->stag, msg->to + off);
	else
		ddp_untagged_hdr_build(hdr, t->dv, *last, msg->rsvdulp, msg->qn,
				       t->msn, off);
	return len;
}

/*
 * A message that fits one segment: its header and one FPDU, without the
 * segmenter's round (mpa_send_msg_locked()). MPA takes the connection as
 * for a message of many. Return: 0, -EMSGSIZE (nothing sent) should the
 * MSS have shrunk since the segmenter read the MULPDU, or an error of
 * mpa_sendv_locked().
 */
static int ddp_send_one(struct ddp_stream *s, const struct ddp_msg *msg,
			u32 msn, struct iov_iter *data, u32 len, int flags)
{
	union {
		struct ddp_tagged_hdr t;
		struct ddp_untagged_hdr u;
	} h;
	u32 hlen;
	int ret;

	if (msg->tagged) {
		ddp_tagged_hdr_build(&h.t, s->dv, true, msg->rsvdulp[0],
				     msg->stag, msg->to);
		hlen = sizeof(h.t);
	} else {
		ddp_untagged_hdr_build(&h.u, s->dv, true, msg->rsvdulp, msg->qn,
				       msn, 0);
		hlen = sizeof(h.u);
	}
	ret = mpa_sendv_locked(s->conn, &h, hlen, data, len, flags);
	return ret < 0 ? ret : 0;
}

/*
 * A tagged message of one segment from the event callback, which holds
 * the socket: only while no sender has @tx_lock (one that takes it now
 * waits for the socket until this one is done), else -EAGAIN. Tagged
 * only: an untagged sender reads its MSN before it has the socket.
 */
static int ddp_send_rx(struct ddp_stream *s, const struct ddp_msg *msg,
		       struct iov_iter *data, u64 total)
{
	struct ddp_tagged_hdr h;
	int ret;

	if (!msg->tagged || msg->more)
		return -EINVAL;
	if (mutex_is_locked(&s->tx_lock) || READ_ONCE(s->shut) ||
	    total > ddp_seg_payload_max(mpa_conn_mulpdu(s->conn), true))
		return -EAGAIN;
	ddp_tagged_hdr_build(&h, s->dv, true, msg->rsvdulp[0], msg->stag,
			     msg->to);
	ret = mpa_sendv_rx(s->conn, &h, sizeof(h), data, total);
	if (ret)
		return ret;
	ddp_stat_add(&s->stats.tx[DDP_ST_TAGGED_MSGS], 1);
	ddp_stat_add(&s->stats.tx[DDP_ST_TAGGED_OCTETS], total);
	return 0;
}

/**
 * ddp_send_msg() - send one DDP message, cut into segments of at most MULPDU
 * @s: the stream
 * @msg: tagged (STag, TO) or untagged (QN), and the RsvdULP bits
 * @data: the message: all of it, iov_iter_count(@data) octets
 *
 * Untagged messages get the queue's next MSN. A tagged header has one
 * RsvdULP octet: the other four RsvdULP octets of @msg must be 0. Each
 * segment is as large as MPA's MULPDU allows when it is built: it follows
 * the path MTU within the message.
 * Context: process context, sleeps unless @msg->nowait; with @msg->rx
 * the stream's event callback, does not sleep.
 * Return: 0, or a negative errno (-EINVAL for a bad QN or RsvdULP, or an
 * untagged @msg->rx message, -EMSGSIZE for 2^32 octets or more, -EPIPE
 * after a shutdown, -ENOTCONN before full operation, -EAGAIN for a
 * @msg->nowait or @msg->rx message that cannot go whole now).
 */
int ddp_send_msg(struct ddp_stream *s, const struct ddp_msg *msg,
		 struct iov_iter *data)
{
	bool tagged = msg->tagged;
	u64 total = iov_iter_count(data);
	struct ddp_tx t = { .msg = msg, .dv = s->dv };
	struct mpa_msg m = {
		.hdr_len = tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN,
		.next = ddp_tx_next,
		.ctx = &t,
	};
	struct ddp_queue *q = NULL;
	int flags, ret;

	if (!tagged && msg->qn >= s->nqueues)
		return -EINVAL;
	/* a tagged header has one RsvdULP octet (RFC 5041 section 4.3) */
	BUILD_BUG_ON(sizeof(msg->rsvdulp) != 5);
	if (tagged && (msg->rsvdulp[1] | msg->rsvdulp[2] | msg->rsvdulp[3] |
		       msg->rsvdulp[4]))
		return -EINVAL;

	if (msg->rx)
		return ddp_send_rx(s, msg, data, total);
	if (!msg->nowait)
		mutex_lock(&s->tx_lock);
	else if (!mutex_trylock(&s->tx_lock))
		return -EAGAIN;
	ret = -EPIPE;
	if (s->shut)
		goto out;
	ret = ddp_seg_init(&t.it, total,
			   ddp_seg_payload_max(mpa_conn_mulpdu(s->conn), tagged));
	if (ret) {
		ret = ret == -EINVAL ? -ENOTCONN : ret;
		goto out;
	}
	if (!tagged) {
		q = &s->q[msg->qn];
		t.msn = q->tx_msn;
	}
	flags = (msg->more ? MSG_MORE : 0) | (msg->nowait ? MSG_DONTWAIT : 0);
	/* one lock and one call for the message: its segments make trains */
	mpa_send_begin(s->conn);
	ret = -EMSGSIZE;
	if (total <= t.it.max_payload)
		ret = ddp_send_one(s, msg, t.msn, data, total, flags);
	if (ret == -EMSGSIZE)
		ret = mpa_send_msg_locked(s->conn, &m, data, flags);
	mpa_send_end(s->conn);
	if (ret < 0)
		goto out;
	if (q)
		q->tx_msn = ddp_msn_next(t.msn);
	ddp_stat_add(&s->stats.tx[tagged ? DDP_ST_TAGGED_MSGS :
				     DDP_ST_UNTAGGED_MSGS], 1);
	ddp_stat_add(&s->stats.tx[tagged ? DDP_ST_TAGGED_OCTETS :
				     DDP_ST_UNTAGGED_OCTETS], total);
	ret = 0;
out:
	mutex_unlock(&s->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_send_msg);

/*
 * Close the sending half (RFC 5041 section 6.2.1): later sends fail with
 * -EPIPE, what was sent goes out, then a FIN. Receiving goes on.
 */
int ddp_stream_shutdown(struct ddp_stream *s)
{
	mutex_lock(&s->tx_lock);
	s->shut = true;
	mutex_unlock(&s->tx_lock);
	return kernel_sock_shutdown(s->sock, SHUT_WR);
}
