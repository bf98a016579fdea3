// SPDX-License-Identifier: GPL-2.0
/*
 * DDP receive path, the MPA consumer "ddp". MPA hands it every run of
 * ULPDU octets as they come out of the socket buffers (the consumer's
 * place callback, softirq or the socket owner's backlog, socket lock
 * held); DDP gathers the segment header, validates it (RFC 5041 section
 * 7.1) and copies the payload straight into the registered or posted
 * pages: one copy in all. The segment is delivered when MPA says its CRC
 * was good; an error stops placement on the stream for good.
 */
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "ddp.h"

/* ---- events ---- */

void ddp_event(struct ddp_stream *s, const struct ddp_stream_event *ev)
{
	s->ops->event(s, ev);
}

/*
 * From the event callback only: the ULP cannot take more events, stop
 * placement as after an error.
 */
void ddp_stream_stop(struct ddp_stream *s)
{
	if (!s->stopped) {
		ddp_mib_inc(s->mib, DDP_MIB_ERR_CATASTROPHIC);
		ddp_stat_add(&s->stats.rx_errors, 1);
		WRITE_ONCE(s->stats.err, DDP_WIRE_ETYPE_CATASTROPHIC << 8 |
			   DDP_WIRE_ECODE_CATASTROPHIC);
		trace_ddp_refuse(s->id, DDP_WIRE_ETYPE_CATASTROPHIC,
				 DDP_WIRE_ECODE_CATASTROPHIC, 0);
	}
	s->stopped = true;
}

/**
 * ddp_stream_halt() - the ULP ended the stream: place nothing more
 * @s: the stream
 *
 * For an error the ULP found itself (RDMAP's Terminate): later segments
 * are dropped, without an error event of DDP's. From the stream's event
 * callback, or with its socket lock held.
 */
void ddp_stream_halt(struct ddp_stream *s)
{
	s->stopped = true;
}
EXPORT_SYMBOL_GPL(ddp_stream_halt);

static void ddp_error(struct ddp_stream *s, u8 type, u8 code, u32 seg_len)
{
	struct ddp_stream_event ev = {
		.type = DDP_EV_ERROR,
		.err_type = type,
		.err_code = code,
		.len = seg_len,
	};

	if (s->stopped)
		return;
	WRITE_ONCE(s->stats.err, (u32)type << 8 | code);
	s->stopped = true;
	trace_ddp_refuse(s->id, type, code, seg_len);
	ddp_mib_inc(s->mib, ddp_mib_err(type, code));
	ddp_stat_add(&s->stats.rx_errors, 1);
	if (type == DDP_WIRE_ETYPE_TAGGED &&
	    (code == DDP_WIRE_ECODE_T_INVALID_STAG ||
	     code == DDP_WIRE_ECODE_T_STAG_NOT_ASSOC)) {
		ddp_mib_inc(s->mib, DDP_MIB_INVALID_STAG);
		ddp_stat_add(&s->stats.rx_invalid_stag, 1);
	}
	if (type != DDP_WIRE_ETYPE_LLP) {
		ev.hdr_len = min_t(u32, s->hdr_have, sizeof(s->hdr));
		ev.hdr = s->hdr;
		ev.qn = s->seg.qn;
		ev.msn = s->seg.msn;
		ev.stag = s->seg.stag;
		ev.to = s->seg.to;
	}
	ddp_event(s, &ev);
}

/* a buffer whose message is placed whole, under @s->lock */
static bool ddp_rbuf_done(const struct ddp_rbuf *b)
{
	return b && b->last && b->placed >= b->msg_len;
}

/*
 * Deliver, in MSN order, the untagged messages that are complete. Called
 * with @s->lock held, which the placement of the segment took; returns
 * without it. The event reads nothing of the buffer object, which goes
 * back (kept, a spare, or freed) before it; no message completes during the
 * event, which runs in the context that places (the socket lock's), so
 * the look at the next one is final: one locked section per message.
 */
static void ddp_deliver(struct ddp_stream *s, u32 qn)
	__releases(&s->lock)
{
	struct ddp_queue *q = &s->q[qn];
	struct ddp_stream_event ev = { .type = DDP_EV_RECV, .qn = qn };
	struct ddp_untagged_hdr h;
	struct ddp_rbuf *b;
	bool more;

	for (;;) {
		b = list_first_entry_or_null(&q->bufs, struct ddp_rbuf, list);
		if (!ddp_rbuf_done(b)) {
			spin_unlock_bh(&s->lock);
			return;
		}
		ev.len = b->msg_len;
		ev.cookie = b->cookie;
		memcpy(ev.rsvdulp, b->rsvdulp, sizeof(b->rsvdulp));
		ev.msn = q->head_msn;
		/* the header of its last segment, for the ULP's Terminate */
		ddp_untagged_hdr_build(&h, s->dv, true, b->rsvdulp, qn, ev.msn,
				       b->last_mo);
		list_del(&b->list);
		q->nposted--;
		s->nposted--;
		q->head_msn = ddp_msn_next(q->head_msn);
		more = ddp_rbuf_done(list_first_entry_or_null(&q->bufs,
							      struct ddp_rbuf,
							      list));
		if (q->keep) {
			/* for ddp_repost() */
			list_add_tail(&b->list, &q->kept);
			b = NULL;
		} else if (ddp_rbuf_keep(s, b)) {
			b = NULL;
		}
		spin_unlock_bh(&s->lock);
		if (b)
			ddp_rbuf_free(b);
		ev.hdr = (const u8 *)&h;
		ev.hdr_len = sizeof(h);
		ddp_event(s, &ev);
		if (!more)
			return;
		spin_lock_bh(&s->lock);
	}
}

/* ---- receive: MPA consumer callbacks ---- */

static struct ddp_rbuf *ddp_rbuf_for(struct ddp_queue *q, u32 msn)
{
	u32 i = msn - q->head_msn;
	struct ddp_rbuf *b;

	list_for_each_entry(b, &q->bufs, list)
		if (!i--)
			return b;
	return NULL;
}

/*
 * The buffer of @stag, under rcu_read_lock(): the one found last while
 * no STag of the PD has been invalidated since (@gen unchanged), else
 * from the xarray. An invalidation erases, then bumps @gen, then waits a
 * grace period before it frees: a reader that starts after the free
 * sees the new @gen and never touches the old pointer; one that started
 * before still holds off the free, and the buffer's valid flag tells.
 * The acquire keeps the lookup from seeing an xarray older than @gen. A
 * spare (ddp_invalidate_remote()) is not freed and bumps nothing: the
 * one found last may be it, not valid, or valid again under a new key.
 */
static struct ddp_mr *ddp_rx_mr(struct ddp_stream *s, u32 stag)
{
	/* pairs with the release in ddp_invalidate*() */
	unsigned long gen = smp_load_acquire(&s->pd->gen);
	struct ddp_mr *mr = s->rx_mr;
	bool valid;

	if (mr && s->rx_mr_gen == gen) {
		/* the flag before the key: see ddp_mr_lookup() */
		valid = smp_load_acquire(&mr->valid);
		if (READ_ONCE(mr->stag) == stag)
			return valid ? mr : NULL;
	}
	mr = ddp_mr_lookup(s->pd, stag);
	s->rx_mr = mr;
	s->rx_mr_gen = gen;
	return mr;
}

/* The segment header is complete: parse and check it before placing. */
static void ddp_seg_start(struct ddp_stream *s, u32 seg_len)
{
	struct ddp_seg *seg = &s->seg;
	struct ddp_region_view view;
	struct ddp_uq_view qv = {};
	struct ddp_mr *mr;
	u32 owner = 0;
	int ret;

	/* hdr holds the header; the payload length comes from MPA */
	ret = ddp_hdr_parse_dv(s->hdr, seg_len, s->dv, seg, &s->seg_err);
	if (ret)
		goto bad;
	if (seg->tagged) {
		rcu_read_lock();
		mr = ddp_rx_mr(s, seg->stag);
		if (mr) {
			view = (struct ddp_region_view){
				.valid = true,
				.stream_or_pd = mr->owner,
				.base_to = mr->base_to,
				.len = mr->mem.len,
				.access = mr->access & DDP_ACCESS_REMOTE_WRITE ?
					  DDP_VIEW_WRITE : 0,
			};
			owner = mr->owner == s->pd->id ? s->pd->id : s->id;
		}
		rcu_read_unlock();
		ret = ddp_check_tagged(seg, mr ? &view : NULL, owner, &s->seg_err);
		if (ret)
			goto bad;
		return;
	}
	if (seg->qn < s->nqueues) {
		struct ddp_queue *q = &s->q[seg->qn];

		spin_lock_bh(&s->lock);
		if (!ddp_msn_in_window(seg->msn, q->head_msn, q->nposted) &&
		    s->ops->refill) {
			spin_unlock_bh(&s->lock);
			s->ops->refill(s, seg->qn);
			spin_lock_bh(&s->lock);
		}
		qv.exists = true;
		qv.expected_msn = q->head_msn;
		qv.nbuf_posted = q->nposted;
		s->seg_buf = ddp_msn_in_window(seg->msn, q->head_msn, q->nposted) ?
			     ddp_rbuf_for(q, seg->msn) : NULL;
		qv.buf_len = s->seg_buf ? min_t(u64, s->seg_buf->mem.len, U32_MAX) : 0;
		spin_unlock_bh(&s->lock);
	}
	ret = ddp_check_untagged(seg, qv.exists ? &qv : NULL, &s->seg_err);
	if (ret)
		goto bad;
	return;
bad:
	s->seg_bad = true;
	s->seg_buf = NULL;
}

/*
 * The stream of an MPA callback. ULPDUs that MPA held are delivered within
 * mpa_bind(), before ddp_stream_bind() could set @s->conn: it is set here
 * then, for the ULP's calls from its event callback
 * (ddp_stream_mpa_info()).
 */
static struct ddp_stream *ddp_stream_of(struct mpa_conn *conn)
{
	struct ddp_stream *s = mpa_conn_priv(conn);

	if (unlikely(!s->conn))
		s->conn = conn;
	return s;
}

static void ddp_place_payload(struct ddp_stream *s, u32 poff, const u8 *data, u32 len)
{
	struct ddp_seg *seg = &s->seg;
	struct ddp_mr *mr;

	if (!seg->tagged) {
		ddp_mem_write(&s->seg_buf->mem, (u64)seg->mo + poff, data, len);
		return;
	}
	rcu_read_lock();
	mr = ddp_rx_mr(s, seg->stag);
	if (mr)
		ddp_mem_write(&mr->mem, seg->to - mr->base_to + poff, data, len);
	rcu_read_unlock();
	if (!mr) {
		/* invalidated while the segment was arriving */
		s->seg_bad = true;
		s->seg_err.type = DDP_WIRE_ETYPE_TAGGED;
		s->seg_err.code = DDP_WIRE_ECODE_T_INVALID_STAG;
	}
}

static u32 ddp_hdr_len(u8 ctrl)
{
	return ctrl & DDP_FLAG_T ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

static void ddp_place(struct mpa_conn *conn, u32 seg_len, u32 off,
		      const void *data, u32 len)
{
	struct ddp_stream *s = ddp_stream_of(conn);
	const u8 *p = data;
	u32 hlen, n;

	if (s->stopped)
		return;
	if (!off) {
		s->hdr_have = 0;
		s->seg_bad = false;
		s->seg_buf = NULL;
		s->rx_next = 0;
	}
	/*
	 * MPA hands over each segment in order from offset 0. Should a run
	 * ever start elsewhere or reach past the segment, nothing of it is
	 * placed: the header or the buffer it would go to is not known.
	 */
	if (!ddp_run_in_order(s->rx_next, seg_len, off, len)) {
		s->seg_bad = true;
		s->seg_buf = NULL;
		ddp_error(s, DDP_WIRE_ETYPE_CATASTROPHIC, DDP_WIRE_ECODE_CATASTROPHIC, seg_len);
		return;
	}
	s->rx_next = off + len;
	if (s->seg_bad || !len)
		return;
	hlen = ddp_hdr_len(s->hdr_have ? s->hdr[0] : p[0]);
	if (off < hlen) {
		n = min(len, hlen - off);
		memcpy(s->hdr + off, p, n);
		s->hdr_have = off + n;
		p += n;
		len -= n;
		off += n;
		if (s->hdr_have < hlen)
			return;
		ddp_seg_start(s, seg_len);
		if (s->seg_bad || !len)
			return;
	}
	ddp_place_payload(s, off - hlen, p, len);
}

static void ddp_ulpdu(struct mpa_conn *conn, const void *data, u32 len)
{
	struct ddp_stream *s = ddp_stream_of(conn);
	struct ddp_seg *seg = &s->seg;
	struct ddp_stream_event ev = {};
	u32 hlen;

	if (s->stopped)
		return;
	/* an empty ULPDU got no place() call */
	if (!len)
		s->hdr_have = 0;
	hlen = s->hdr_have ? ddp_hdr_len(s->hdr[0]) : DDP_UNTAGGED_HDR_LEN;
	if (!len || (!s->seg_bad && s->hdr_have < hlen)) {
		/* shorter than its header: ddp_hdr_parse() names the error */
		ddp_hdr_parse_dv(s->hdr, s->hdr_have, s->dv, seg, &s->seg_err);
		s->seg_bad = true;
	}
	if (s->seg_bad) {
		ddp_error(s, s->seg_err.type, s->seg_err.code, len);
		return;
	}
	trace_ddp_place(s->id, seg->tagged, seg->tagged ? seg->stag : seg->qn,
			seg->tagged ? 0 : seg->msn, seg->tagged ? seg->to : seg->mo,
			seg->payload_len, seg->last);
	if (seg->tagged) {
		ddp_mib_add(s->mib, DDP_MIB_TAGGED_OCTETS, seg->payload_len);
		ddp_stat_add(&s->stats.rx[DDP_ST_TAGGED_OCTETS], seg->payload_len);
		if (seg->last) {
			ddp_mib_inc(s->mib, DDP_MIB_TAGGED_MSGS);
			ddp_stat_add(&s->stats.rx[DDP_ST_TAGGED_MSGS], 1);
		}
		if (!s->t_len)
			s->t_first_to = seg->to;
		s->t_len += seg->payload_len;
		if (!seg->last)
			return;
		ev.type = DDP_EV_TAGGED;
		ev.stag = seg->stag;
		ev.to = s->t_first_to;
		ev.len = s->t_len;
		ev.rsvdulp[0] = seg->rsvdulp_t;
		ev.hdr = s->hdr;
		ev.hdr_len = DDP_TAGGED_HDR_LEN;
		s->t_len = 0;
		ddp_event(s, &ev);
		return;
	}
	ddp_mib_add(s->mib, DDP_MIB_UNTAGGED_OCTETS, seg->payload_len);
	ddp_stat_add(&s->stats.rx[DDP_ST_UNTAGGED_OCTETS], seg->payload_len);
	if (seg->last) {
		ddp_mib_inc(s->mib, DDP_MIB_UNTAGGED_MSGS);
		ddp_stat_add(&s->stats.rx[DDP_ST_UNTAGGED_MSGS], 1);
	}
	spin_lock_bh(&s->lock);
	s->seg_buf->placed += seg->payload_len;
	if (seg->last) {
		s->seg_buf->last = true;
		s->seg_buf->msg_len = (u64)seg->mo + seg->payload_len;
		s->seg_buf->last_mo = seg->mo;
		memcpy(s->seg_buf->rsvdulp, seg->rsvdulp_u, sizeof(seg->rsvdulp_u));
	}
	/* releases the lock */
	ddp_deliver(s, seg->qn);
}

static void ddp_mpa_error(struct mpa_conn *conn, u32 code)
{
	struct ddp_stream *s = ddp_stream_of(conn);

	/* LLP fatal error, with the MPA error code */
	ddp_error(s, DDP_WIRE_ETYPE_LLP, code, 0);
}

static void ddp_peer_closed(struct mpa_conn *conn)
{
	struct ddp_stream *s = ddp_stream_of(conn);
	struct ddp_stream_event ev = { .type = DDP_EV_PEER_CLOSED };

	if (!s->stopped)
		ddp_event(s, &ev);
}

/* DDP version 0 goes with MPA revision 0 (RFC 5044 Appendix C). */
void ddp_set_version(struct ddp_stream *s, struct mpa_conn *conn)
{
	struct mpa_conn_attrs a;

	mpa_conn_info(conn, &a);
	s->dv = a.state != MPA_S_IDLE && a.rev == 0 ? 0 : DDP_WIRE_VERSION;
}

/* Startup stays with whoever started MPA on the socket. */
static void ddp_request(struct mpa_conn *conn, const void *pd, u16 pd_len)
{
	ddp_set_version(mpa_conn_priv(conn), conn);
}

static void ddp_reply(struct mpa_conn *conn, bool rejected, const void *pd,
		      u16 pd_len)
{
	ddp_set_version(mpa_conn_priv(conn), conn);
}

/* sock_diag: the attributes of one stream, see enum ddp_diag_attr */
static const u8 ddp_diag_u64[] = {
	DDP_DIAG_RX_TAGGED_MSGS, DDP_DIAG_RX_TAGGED_OCTETS,
	DDP_DIAG_RX_UNTAGGED_MSGS, DDP_DIAG_RX_UNTAGGED_OCTETS,
	DDP_DIAG_TX_TAGGED_MSGS, DDP_DIAG_TX_TAGGED_OCTETS,
	DDP_DIAG_TX_UNTAGGED_MSGS, DDP_DIAG_TX_UNTAGGED_OCTETS,
	DDP_DIAG_RX_ERRORS, DDP_DIAG_RX_INVALID_STAG,
};

/* the most ddp_get_info() puts: 7 u32, the u64 with their pad attributes */
#define DDP_DIAG_INFO_SIZE						\
	(7 * NLA_ALIGN(NLA_HDRLEN + sizeof(u32)) +			\
	 ARRAY_SIZE(ddp_diag_u64) *					\
	 (NLA_ALIGN(NLA_HDRLEN + sizeof(u64)) + NLA_HDRLEN))

/*
 * MPA calls this with the stream bound (sk_callback_lock read-held) but
 * without the socket lock: every value is a snapshot.
 */
static int ddp_get_info(struct mpa_conn *conn, struct sk_buff *skb)
{
	const struct ddp_stream *s = mpa_conn_priv(conn);
	const struct ddp_stream_stats *st = &s->stats;
	const u64 *ctr[] = {
		&st->rx[0], &st->rx[1], &st->rx[2], &st->rx[3],
		&st->tx[0], &st->tx[1], &st->tx[2], &st->tx[3],
		&st->rx_errors, &st->rx_invalid_stag,
	};
	bool stopped = READ_ONCE(s->stopped);
	u32 flags = 0;
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(ctr) != ARRAY_SIZE(ddp_diag_u64));
	BUILD_BUG_ON(DDP_DIAG_INFO_SIZE > MPA_CONSUMER_INFO_MAX);
	if (stopped)
		flags |= DDP_DIAG_F_STOPPED;
	if (READ_ONCE(s->shut))
		flags |= DDP_DIAG_F_SHUT;
	if (nla_put_u32(skb, DDP_DIAG_STREAM_ID, s->id) ||
	    nla_put_u32(skb, DDP_DIAG_PD_ID, s->pd->id) ||
	    nla_put_u32(skb, DDP_DIAG_VERSION, READ_ONCE(s->dv)) ||
	    nla_put_u32(skb, DDP_DIAG_QUEUES, s->nqueues) ||
	    nla_put_u32(skb, DDP_DIAG_POSTED, READ_ONCE(s->nposted)) ||
	    nla_put_u32(skb, DDP_DIAG_FLAGS, flags))
		return -EMSGSIZE;
	if (stopped && nla_put_u32(skb, DDP_DIAG_ERROR, READ_ONCE(st->err)))
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(ddp_diag_u64); i++)
		if (nla_put_u64_64bit(skb, ddp_diag_u64[i], READ_ONCE(*ctr[i]),
				      DDP_DIAG_PAD))
			return -EMSGSIZE;
	return 0;
}

/* a task of the ULP waits to place what TCP holds: see mpa_rx_wait_begin() */
static void ddp_rx_kick(struct mpa_conn *conn)
{
	struct ddp_stream *s = mpa_conn_priv(conn);

	if (s->ops->rx_kick)
		s->ops->rx_kick(s);
}

struct mpa_consumer ddp_consumer = {
	.name		= "ddp",
	.owner		= THIS_MODULE,
	.request	= ddp_request,
	.reply		= ddp_reply,
	.place		= ddp_place,
	.ulpdu		= ddp_ulpdu,
	.error		= ddp_mpa_error,
	.peer_closed	= ddp_peer_closed,
	.rx_kick	= ddp_rx_kick,
	.get_info	= ddp_get_info,
	.info_size	= DDP_DIAG_INFO_SIZE,
};
