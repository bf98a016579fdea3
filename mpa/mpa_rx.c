// SPDX-License-Identifier: GPL-2.0
/*
 * MPA receive path (RFC 5044 sections 4 to 6, 8): TCP data is parsed
 * through tcp_read_sock() from the socket's data-ready callback (softirq,
 * or the owner's release_sock() backlog), always serialised by the
 * socket lock. Startup frames go to mpa_cm.c, FPDUs to the decoder of
 * mpa_proto.c. A ULPDU for user space stays in the per-socket buffer
 * until recvmsg() takes it; until then MPA leaves further data in TCP so
 * the peer is throttled by the TCP window.
 */
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/tcp.h>
#include <net/iwarp_compat.h>

#include "mpa.h"

static int mpa_errno(u32 code)
{
	switch (code) {
	case MPA_ERR_TCP_CLOSED:
		return -ECONNRESET;
	case MPA_ERR_CRC:
		return -EBADMSG;
	case MPA_ERR_MARKER:
		return -EPROTO;
	default:
		return -ECONNABORTED;
	}
}

static void mpa_place(void *ctx, u32 off, const u8 *data, u32 len)
{
	struct mpa_conn *c = ctx;

	if (!c->rx_torn)
		c->consumer->place(c, c->rx.ulpdu_len, off, data, len);
}

/* Let a placing consumer take ULPDU octets as they arrive. */
void mpa_rx_set_place(struct mpa_conn *c)
{
	bool place = c->consumer && c->consumer->place;

	c->rx.place = place ? mpa_place : NULL;
	c->rx.place_ctx = c;
}

/*
 * Hand the complete ULPDU to the consumer. One received into rx.buf (it
 * began before a placing consumer bound) is placed from there first, so
 * the consumer sees every ULPDU from offset 0.
 */
void mpa_consumer_deliver(struct mpa_conn *c)
{
	const struct mpa_consumer *p = c->consumer;
	u32 len = c->rx.ulpdu_len;

	if (p->place && !c->rx.placing && len)
		p->place(c, len, 0, c->rx.buf, len);
	p->ulpdu(c, p->place ? NULL : c->rx.buf, len);
}

/* a ULPDU came: count it; the first one lets a Responder send */
static void mpa_rx_count(struct mpa_conn *c)
{
	c->stats.rx_octets += c->rx.ulpdu_len;
	mpa_mib_inc(c, MPA_MIB_RX_FPDUS);
	mpa_mib_add(c, MPA_MIB_RX_OCTETS, c->rx.ulpdu_len);
	trace_mpa_fpdu_rx(c->sk, c->rx.ulpdu_len);

	if (!c->tx_allowed) {
		WRITE_ONCE(c->tx_allowed, true);
		/* wake a sender or poller waiting for rule 4 */
		mpa_wake_poll(c, EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
	}
}

static void mpa_rx_ulpdu(struct mpa_conn *c)
{
	mpa_rx_count(c);
	if (c->rx_torn) {
		/* its first octets went to a consumer that unbound */
		c->rx_torn = false;
		return;
	}
	if (c->consumer) {
		mpa_consumer_deliver(c);
		return;
	}
	c->rx_ready = true;
	c->rx_stop = true;
}

static void mpa_rx_error(struct mpa_conn *c)
{
	if (c->rx.err == MPA_ERR_MARKER)
		c->stats.rx_marker_errors++;
	mpa_fail(c, c->rx.err, mpa_errno(c->rx.err));
}

static void mpa_rx_set_buf(struct mpa_conn *c, u8 *buf, u32 len)
{
	kvfree(c->rx.buf);
	c->rx.buf = buf;
	c->rx.buf_len = len;
}

/*
 * The decoder met a ULPDU that has to be buffered (user space, or a
 * consumer that does not place) and no buffer that holds it. Allocate
 * it right away if that can be done without sleeping; otherwise leave
 * the data in TCP and let @rx_work allocate it.
 */
static bool mpa_rx_need_buf(struct mpa_conn *c)
{
	u32 need = mpa_dec_need(&c->rx);
	u8 *buf;

	buf = mpa_alloc(c, need, GFP_ATOMIC);
	if (buf) {
		mpa_rx_set_buf(c, buf, need);
		c->rx_buf_wait = false;
		return true;
	}
	c->rx_stop = true;
	c->rx_buf_wait = true;
	sock_hold(c->sk);
	if (!queue_work(mpa_wq, &c->rx_work))
		sock_put(c->sk);
	return false;
}

/* Nothing is buffered nor being received: the buffer goes. */
void mpa_rx_trim(struct mpa_conn *c)
{
	if (c->rx.buf && !c->rx_ready && mpa_dec_idle(&c->rx))
		mpa_rx_set_buf(c, NULL, 0);
}

/* The peer's FIN, once every octet before it has been parsed. */
static void mpa_rx_fin(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	int tcp_err = READ_ONCE(sk->sk_err);

	if (c->peer_fin || c->err || !(sk->sk_shutdown & RCV_SHUTDOWN))
		return;
	/* reset or timeout: TCP lost the connection (error 1) */
	if (tcp_err && c->state == MPA_S_FULL) {
		mpa_fail(c, MPA_ERR_TCP_CLOSED, -tcp_err);
		mpa_wake(c);
		return;
	}
	if (c->state == MPA_S_FULL && mpa_dec_idle(&c->rx)) {
		c->peer_fin = true;
		if (c->consumer)
			c->consumer->peer_closed(c);
		mpa_wake(c);
		return;
	}
	/* inside an FPDU (error 1) or inside the startup exchange */
	mpa_fail(c, c->state == MPA_S_FULL ? MPA_ERR_TCP_CLOSED : MPA_ERR_STARTUP,
		 -ECONNRESET);
	mpa_wake(c);
}

enum { MPA_RXQ_EMPTY, MPA_RXQ_WHOLE, MPA_RXQ_PART };

/*
 * The octet at @off in @skb in the piece of @skb that holds it (the
 * linear part or a page fragment), and in *@n the octets of that piece
 * from there on; NULL when @skb ends before it or the page is not mapped.
 * *@frag is the fragment's index (-1: the linear part), for
 * mpa_skb_piece_grow().
 */
static const u8 *mpa_skb_piece(const struct sk_buff *skb, u32 off, u32 *n, int *frag)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	u32 start = skb_headlen(skb), end;
	const u8 *p;
	int i;

	*frag = -1;
	if (off < start) {
		*n = start - off;
		return skb->data + off;
	}
	for (i = 0; i < si->nr_frags; i++, start = end) {
		end = start + skb_frag_size(&si->frags[i]);
		if (off >= end)
			continue;
		p = skb_frag_address_safe(&si->frags[i]);
		*n = end - off;
		*frag = i;
		return p ? p + off - start : NULL;
	}
	return NULL;
}

/*
 * Grow the piece @p of *@n octets that ends with fragment *@frag of @skb
 * by the fragments after it that continue it in the same compound page,
 * until it holds @want octets or the next fragment does not continue it;
 * *@frag becomes the last fragment the piece takes in.
 * From 6.5 on TCP cuts a sender's compound page into PAGE_SIZE fragments
 * (MSG_SPLICE_PAGES), and over loopback or veth those reach the receiver
 * as they are, so an FPDU that crosses them still lies in one run of
 * memory. Not across compound pages, even adjacent ones: one copy to
 * user space stays within one allocation (hardened usercopy checks that).
 */
static void mpa_skb_piece_grow(const struct sk_buff *skb, int *frag, const u8 *p,
			       u32 *n, u32 want)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	struct page *head;
	int i = *frag;

	if (i < 0)
		return;
	head = compound_head(skb_frag_page(&si->frags[i]));
	while (*n < want && i + 1 < si->nr_frags &&
	       compound_head(skb_frag_page(&si->frags[i + 1])) == head &&
	       skb_frag_address(&si->frags[i + 1]) == p + *n)
		*n += skb_frag_size(&si->frags[++i]);
	*frag = i;
}

/*
 * TCP's receive queue is found by sequence number, never by adding up
 * skb lengths: a segment that repeats octets already queued and carries
 * new ones after them (a spurious retransmission) is queued whole, its
 * start before rcv_nxt (tcp_data_queue()), so skbs may overlap. The
 * octets they share are the same.
 */

/*
 * The first skb from @skb on that holds the octet of sequence number
 * @seq, and (*@off) its offset there; NULL if none does.
 */
static inline struct sk_buff *mpa_rxq_seq(struct sock *sk, struct sk_buff *skb,
					  u32 seq, u32 *off)
{
	skb_queue_walk_from(&sk->sk_receive_queue, skb) {
		*off = seq - TCP_SKB_CB(skb)->seq;
		if (*off < skb->len)
			return skb;
	}
	return NULL;
}

/*
 * The skb of TCP's receive queue that holds the octet @at octets after
 * the first one MPA has not read (@rx_taken octets after TCP's first
 * unread one), and (*@off) its offset there; NULL if none does.
 */
static inline struct sk_buff *mpa_rxq_skb(const struct mpa_conn *c, u32 at, u32 *off)
{
	struct sock *sk = c->sk;
	struct sk_buff *skb = skb_peek(&sk->sk_receive_queue);

	if (!skb)
		return NULL;
	return mpa_rxq_seq(sk, skb, tcp_sk(sk)->copied_seq + c->rx_taken + at, off);
}

/* an FPDU that waits in TCP's receive queue, found by mpa_rx_queued() */
struct mpa_rxq {
	struct sk_buff	*skb;	/* the skb of its first octet */
	u32		off;	/* that octet's offset in @skb */
	u32		ulen;	/* its ULPDU length */
	u32		wire;	/* its length on the wire */
	const u8	*fpdu;	/* the FPDU if whole in one piece of @skb */
	u32		n;	/* octets of that piece from @fpdu on */
	int		frag;	/* the piece's last fragment (-1: linear part) */
};

/*
 * What waits in TCP's receive queue (markers off) @at octets after the
 * first octet MPA has not read: nothing, a whole FPDU first, or the start of one;
 * *@q says where the FPDU lies. Its skb's pieces are looked through
 * once; the walk stops after that FPDU. Socket lock held, or in its
 * data-ready callback.
 */
static int mpa_rx_queued(const struct mpa_conn *c, u32 at, struct mpa_rxq *q)
{
	struct sock *sk = c->sk;
	struct sk_buff *skb;
	u32 end, n = 0;
	const u8 *p;
	__be16 hdr;

	skb = mpa_rxq_skb(c, at, &q->off);
	if (!skb)
		return MPA_RXQ_EMPTY;
	/* a SYN takes a sequence number: offsets in its skb are one off */
	if (unlikely(TCP_SKB_CB(skb)->tcp_flags & TCPHDR_SYN))
		return MPA_RXQ_PART;
	p = mpa_skb_piece(skb, q->off, &n, &q->frag);
	if (p && n >= sizeof(hdr))
		q->ulen = get_unaligned_be16(p);
	else if (!skb_copy_bits(skb, q->off, &hdr, sizeof(hdr)))
		q->ulen = be16_to_cpu(hdr);
	else
		return MPA_RXQ_PART;	/* a header split between two skbs */
	q->skb = skb;
	q->wire = mpa_fpdu_plain_len(q->ulen);
	if (p && n < q->wire)
		mpa_skb_piece_grow(skb, &q->frag, p, &n, q->wire);
	q->fpdu = p && n >= q->wire ? p : NULL;
	q->n = n;
	/* the common case: whole in the piece found (no walk) */
	if (q->fpdu)
		return MPA_RXQ_WHOLE;
	/* whole once an skb reaches its end (the queue has no gaps) */
	end = TCP_SKB_CB(skb)->seq + q->off + q->wire;
	skb_queue_walk_from(&sk->sk_receive_queue, skb) {
		if (!before(TCP_SKB_CB(skb)->seq + skb->len, end))
			return MPA_RXQ_WHOLE;
	}
	return MPA_RXQ_PART;
}

/*
 * The FPDU that follows @prev, if it lies whole in the same piece, grown
 * by the fragments of @prev's skb that continue it in memory
 * (mpa_skb_piece_grow()): *@q says where, and no skb is looked through.
 * Only with the socket lock held since @prev was found: the piece stays
 * TCP's while it holds unread octets, even after the FPDUs up to @prev
 * were consumed.
 */
static inline bool mpa_rxq_follow(const struct mpa_rxq *prev, struct mpa_rxq *q)
{
	if (!prev || !prev->fpdu)
		return false;
	q->skb = prev->skb;
	q->off = prev->off + prev->wire;
	q->fpdu = prev->fpdu + prev->wire;
	q->n = prev->n - prev->wire;
	q->frag = prev->frag;
	if (q->n < MPA_HDR_LEN) {
		mpa_skb_piece_grow(q->skb, &q->frag, q->fpdu, &q->n, MPA_HDR_LEN);
		if (q->n < MPA_HDR_LEN)
			return false;
	}
	q->ulen = get_unaligned_be16(q->fpdu);
	q->wire = mpa_fpdu_plain_len(q->ulen);
	if (q->n < q->wire)
		mpa_skb_piece_grow(q->skb, &q->frag, q->fpdu, &q->n, q->wire);
	return q->n >= q->wire;
}

/*
 * Tell TCP that the @rx_taken octets of FPDUs that recvmsg() copied
 * straight from its receive queue were read (tcp_read_done(), as kTLS's
 * parser does): that frees the skbs they filled and may open the window.
 * Return 0 or -EIO.
 */
static int mpa_rx_done(struct mpa_conn *c)
{
	const struct tcp_sock *tp = tcp_sk(c->sk);
	u32 seq = tp->copied_seq, n = c->rx_taken;

	c->rx_taken = 0;
	tcp_read_done(c->sk, n);
	/* mpa_rx_take() found them whole there, under the socket lock */
	if (WARN_ON_ONCE(tp->copied_seq - seq < n)) {
		mpa_fail(c, MPA_ERR_TCP_CLOSED, -EIO);
		return -EIO;
	}
	return 0;
}

/* Parse @n octets at @data; return how many were taken. */
static u32 mpa_rx_feed(struct mpa_conn *c, const u8 *data, u32 n)
{
	u32 used;
	int ev;

	if (c->state != MPA_S_FULL)
		return mpa_rx_frame(c, data, n);
	ev = mpa_dec_feed(&c->rx, data, n, &used);
	if (ev == MPA_DEC_ULPDU)
		mpa_rx_ulpdu(c);
	else if (ev == MPA_DEC_ERROR)
		mpa_rx_error(c);
	else if (ev == MPA_DEC_NEED_BUF)
		mpa_rx_need_buf(c);
	return used;
}

/*
 * The linear part and the page fragments of @skb are parsed where they
 * are, one piece after the other; what lies beyond them (a frag_list),
 * or in a page without a kernel mapping, through skb_seq_read().
 */
static int mpa_recv_actor(read_descriptor_t *desc, struct sk_buff *skb,
			  unsigned int offset, size_t len)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	struct mpa_conn *c = desc->arg.data;
	/* skb_prepare_seq_read() sets every field */
	struct skb_seq_state st __uninitialized;
	/* the piece [start, lim) of @skb, its octet @start at @base */
	u32 pos = offset, end = offset + len, start = 0;
	u32 lim = skb_headlen(skb), seq = 0, n;
	const u8 *base = skb->data, *data;
	int i = -1;

	while (!c->rx_stop && pos < end) {
		while (pos >= lim) {
			if (++i >= si->nr_frags)
				goto rest;
			start = lim;
			lim += skb_frag_size(&si->frags[i]);
			base = skb_frag_address_safe(&si->frags[i]);
			if (!base)
				goto rest;
		}
		pos += mpa_rx_feed(c, base + (pos - start), min(lim, end) - pos);
	}
rest:
	if (!c->rx_stop && pos < end) {
		skb_prepare_seq_read(skb, pos, end, &st);
		while (!c->rx_stop && (n = skb_seq_read(seq, &data, &st)) != 0)
			seq += mpa_rx_feed(c, data, n);
		skb_abort_seq_read(&st);
		pos += seq;
	}
	if (c->rx_stop)
		desc->count = 0;
	return pos - offset;
}

/* Parse what TCP holds. Socket lock (or bh lock, not owned) held. */
void mpa_rx_process(struct mpa_conn *c)
{
	read_descriptor_t desc = { .arg.data = c, .count = 1 };
	bool was_ready = c->rx_ready;

	if (c->rx_taken && mpa_rx_done(c))
		return;
	c->rx_defer = false;
	if (!mpa_framing(c) || c->rx_stop || c->closing)
		return;
	/* see mpa_rx_window_update() */
	if (tcp_read_sock(c->sk, &desc, mpa_recv_actor) > 0 &&
	    sock_owned_by_user_nocheck(c->sk) && READ_ONCE(c->sk->sk_backlog.len))
		c->rx_wnd_owed = true;
	if (!c->rx_stop)
		mpa_rx_fin(c);
	if (c->rx_ready && !was_ready)
		mpa_wake(c);
}

/*
 * Called by mpa_release_cb() once the socket owner's backlog is done, if
 * MPA consumed octets meanwhile (@rx_wnd_owed). TCP computes the window
 * of every ACK it sends with the backlog counted as queued (tcp_space()
 * subtracts sk_backlog.len until release_sock() has processed all of it).
 * A reader that copies in recvmsg() announces the window it freed after
 * the backlog, when it reads again (tcp_cleanup_rbuf()). MPA consumes
 * the backlog's octets as they are processed, so nothing reads after it:
 * the last ACKs can announce a window all but closed over an empty
 * receive queue, and the peer then waits for its probe timer (200 ms or
 * more) before it sends again. Announce the window now, by the rule of
 * tcp_cleanup_rbuf(): when it is at least twice what the peer was told.
 * Socket owned, backlog done.
 */
void mpa_rx_window_update(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 now, win;

	c->rx_wnd_owed = false;
	if ((1 << sk->sk_state) & (TCPF_CLOSE | TCPF_LISTEN) ||
	    (sk->sk_shutdown & RCV_SHUTDOWN))
		return;
	now = tcp_receive_window(tp);
	if (2 * now > tp->window_clamp)
		return;
	/* what __tcp_select_window() would offer: free space, rcv_ssthresh */
	win = min_t(u32, max(tcp_space(sk), 0), tp->rcv_ssthresh);
	if (win < 2 * now || win < inet_csk(sk)->icsk_ack.rcv_mss)
		return;
	iwarp_tcp_send_ack(sk);
	mpa_mib_inc(c, MPA_MIB_RX_WINDOW);
}

void mpa_rx_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, rx_work);
	struct sock *sk = c->sk;
	u8 *buf;

	lock_sock(sk);
	if (c->rx_buf_wait && !c->closing && !c->err) {
		buf = mpa_alloc(c, mpa_dec_need(&c->rx), GFP_KERNEL);
		if (buf) {
			mpa_rx_set_buf(c, buf, mpa_dec_need(&c->rx));
			c->rx_buf_wait = false;
			c->rx_stop = false;
			mpa_rx_process(c);
		} else {
			WRITE_ONCE(sk->sk_err, ENOMEM);
			sk_error_report(sk);
		}
	}
	release_sock(sk);
	sock_put(sk);
}

/*
 * Data-ready in softirq while a task of the consumer waits to receive
 * (mpa_rx_wait_begin()): leave the octets in TCP and wake the task, so
 * that they are parsed and placed on its CPU, as TCP's reader copies on
 * its own. In the socket owner's context (its backlog) they are parsed
 * at once: that is the task's CPU, or one that holds the lock anyway.
 */
static bool mpa_rx_to_waiter(struct mpa_conn *c)
{
	/*
	 * A task that begins to wait after this read finds the octets
	 * parsed here; one that ends meanwhile is caught below.
	 */
	if (!atomic_read(&c->rx_waiters) || !c->consumer ||
	    !c->consumer->rx_kick || sock_owned_by_user_nocheck(c->sk))
		return false;
	WRITE_ONCE(c->rx_kick, true);
	smp_mb();	/* pairs with mpa_rx_wait_end() */
	if (!atomic_read(&c->rx_waiters)) {
		/* no task: what is in TCP is parsed here, all of it */
		WRITE_ONCE(c->rx_kick, false);
		return false;
	}
	mpa_mib_inc(c, MPA_MIB_RX_TO_TASK);
	c->consumer->rx_kick(c);
	return true;
}

void mpa_data_ready(struct sock *sk)
{
	struct mpa_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = mpa_get(sk);
	if (c) {
		struct mpa_rxq q;

		/* FPDUs left for recvmsg(): see mpa_rx_next() */
		if (!mpa_framing(c) ||
		    (c->rx_defer && mpa_rx_queued(c, 0, &q) != MPA_RXQ_PART))
			c->saved_data_ready(sk);
		else if (!mpa_rx_to_waiter(c))
			mpa_rx_process(c);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

void mpa_state_change(struct sock *sk)
{
	struct mpa_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = mpa_get(sk);
	if (c) {
		if (mpa_framing(c))
			mpa_rx_process(c);
		c->saved_state_change(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static bool mpa_readable(const struct mpa_conn *c)
{
	return c->rx_ready || c->peer_fin || c->state == MPA_S_REJECTED;
}

/*
 * With @rx_defer, what waits in TCP is whole FPDUs for mpa_rx_direct() or
 * nothing: data-ready, which runs for every octet TCP queues before the
 * socket lock is free again, parses the start of an FPDU (clearing
 * @rx_defer) and only wakes the reader for a whole one. So with the
 * socket lock held, any unread octet means a whole FPDU.
 */
static bool mpa_rx_deferred(const struct mpa_conn *c)
{
	const struct tcp_sock *tp = tcp_sk(c->sk);

	return c->rx_defer && READ_ONCE(tp->rcv_nxt) != tp->copied_seq + c->rx_taken;
}

static bool mpa_readable_or_deferred(const struct mpa_conn *c)
{
	return mpa_readable(c) || mpa_rx_deferred(c);
}

/*
 * TCP held back an ACK of more than a segment for the reader to send
 * (tcp_cleanup_rbuf()): it does so when the receive buffer fills, and
 * the peer's sending waits for that ACK.
 */
static inline bool mpa_rx_ack_owed(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return inet_csk_ack_scheduled(sk) &&
	       tp->rcv_nxt - tp->rcv_wup > inet_csk(sk)->icsk_ack.rcv_mss;
}

/*
 * A ULPDU went to the reader. Parse on, or, when what waits in TCP is
 * whole FPDUs or nothing, leave it there: the next recvmsg() copies the
 * next ULPDU straight into its caller's buffer (mpa_rx_direct()) and
 * data-ready only wakes readers. The start of an FPDU is always parsed
 * into rx.buf at once, so that TCP holding data still means a whole
 * ULPDU to poll(). @last, if not NULL, is the FPDU mpa_rx_take() took
 * last in this hold of the socket lock (see mpa_rxq_follow()).
 *
 * FPDUs taken straight from TCP (@rx_taken octets) are handed back to
 * TCP (mpa_rx_done()) once the next FPDU does not start in TCP's first
 * skb, so once that skb is all read, when no whole FPDU follows, and
 * when TCP waits for the reader to send an ACK; TCP frees an skb only
 * when it is all read, so the receive window opens as before, but TCP's
 * bookkeeping of a read (receive buffer tuning, with a clock read, and
 * the ACK decision) runs once per skb, not once per ULPDU, while the
 * reader keeps up. Taken octets are never all that TCP holds: poll()
 * and data-ready see a whole FPDU after them.
 */
static void mpa_rx_next(struct mpa_conn *c, const struct mpa_rxq *last)
{
	struct mpa_rxq fpdu;
	int q;

	c->rx_ready = false;
	c->rx_stop = false;
	if (!c->rx.markers && !c->consumer && c->state == MPA_S_FULL) {
		q = mpa_rxq_follow(last, &fpdu) ? MPA_RXQ_WHOLE :
		    mpa_rx_queued(c, 0, &fpdu);
		if (c->rx_taken &&
		    (q != MPA_RXQ_WHOLE || fpdu.skb != skb_peek(&c->sk->sk_receive_queue) ||
		     mpa_rx_ack_owed(c->sk)) &&
		    mpa_rx_done(c))
			return;
		/* a FIN after the last FPDU is noted at once, as before */
		if (q == MPA_RXQ_WHOLE ||
		    (q == MPA_RXQ_EMPTY && !(c->sk->sk_shutdown & RCV_SHUTDOWN))) {
			c->rx_defer = true;
			/* for a reader in another thread */
			if (q == MPA_RXQ_WHOLE)
				mpa_wake(c);
			return;
		}
	}
	mpa_rx_process(c);
}

/*
 * Hand @len octets of TCP's receive queue, from the one at @off in @skb
 * on, to @fn, one piece per skb that holds the next of them; stop at
 * @fn's first error.
 */
static int mpa_rx_walk(struct sock *sk, struct sk_buff *skb, u32 off, u32 len,
		       int (*fn)(struct sk_buff *skb, u32 off, u32 n, void *arg),
		       void *arg)
{
	u32 seq = TCP_SKB_CB(skb)->seq + off, n;
	int ret;

	while (len) {
		skb = mpa_rxq_seq(sk, skb, seq, &off);
		/* mpa_rx_queued() found them all queued */
		if (WARN_ON_ONCE(!skb))
			return -EFAULT;
		n = min(skb->len - off, len);
		ret = fn(skb, off, n, arg);
		if (ret)
			return ret;
		seq += n;
		len -= n;
	}
	return 0;
}

static int mpa_rx_walk_crc(struct sk_buff *skb, u32 off, u32 n, void *arg)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 done, k;

	skb_prepare_seq_read(skb, off, off + n, &st);
	for (done = 0; done < n && (k = skb_seq_read(done, &data, &st)) != 0; done += k) {
		/* the first block may reach past off + n */
		k = min(k, n - done);
		*(u32 *)arg = mpa_crc32c(*(u32 *)arg, data, k);
	}
	skb_abort_seq_read(&st);
	return 0;
}

static int mpa_rx_walk_bits(struct sk_buff *skb, u32 off, u32 n, void *arg)
{
	u8 **to = arg;

	*to += n;
	return skb_copy_bits(skb, off, *to - n, n);
}

static int mpa_rx_walk_msg(struct sk_buff *skb, u32 off, u32 n, void *arg)
{
	return skb_copy_datagram_msg(skb, off, arg, n);
}

/*
 * With FPDUs left in TCP (@rx_defer): when the one @at octets after the
 * first unread octet is whole, its CRC good and @len holds its ULPDU,
 * copy the ULPDU from the socket buffers straight into @msg and account
 * for it in the decoder (mpa_dec_skip()); mpa_rx_consume() then takes
 * the FPDUs so read from TCP. One copy less per octet than through
 * rx.buf; the decoder's state and counters stay as they are. @prev, if
 * not NULL, is the FPDU taken just before in this hold of the socket
 * lock, so the one after it may be found without a look through the skb
 * (mpa_rxq_follow()). An FPDU in one piece of one skb has its CRC checked
 * and its ULPDU copied where it lies; one that spans pieces is walked. A
 * bad FPDU takes the buffered path, which reports it, so that a caller
 * never gets the octets of a ULPDU that failed (RFC 5044 section 8).
 * Return the ULPDU length (*@q says where its FPDU was); -EAGAIN when it
 * cannot go this way (@msg untouched); -EFAULT.
 */
static int mpa_rx_take(struct mpa_conn *c, struct msghdr *msg, size_t len,
		       u32 at, const struct mpa_rxq *prev, struct mpa_rxq *q)
{
	struct sock *sk = c->sk;
	u32 crc = ~0U, plain;
	__le32 field;
	u8 *to = (u8 *)&field;
	size_t room;
	int ret;

	if (c->rx_ready || c->rx_stop || c->err || !mpa_dec_idle(&c->rx))
		return -EAGAIN;
	if (!mpa_rxq_follow(prev, q) && mpa_rx_queued(c, at, q) != MPA_RXQ_WHOLE)
		return -EAGAIN;
	if (q->ulen > len)
		return -EAGAIN;
	room = msg_data_left(msg);
	if (q->fpdu) {
		if (c->rx.crc && !mpa_fpdu_crc_good(q->fpdu, q->ulen))
			return -EAGAIN;
		ret = copy_to_iter(q->fpdu + MPA_HDR_LEN, q->ulen,
				   &msg->msg_iter) == q->ulen ? 0 : -EFAULT;
	} else {
		if (c->rx.crc) {
			plain = q->wire - MPA_CRC_LEN;
			mpa_rx_walk(sk, q->skb, q->off, plain, mpa_rx_walk_crc, &crc);
			mpa_rx_walk(sk, q->skb, q->off + plain, MPA_CRC_LEN,
				    mpa_rx_walk_bits, &to);
			if (le32_to_cpu(field) != ~crc)
				return -EAGAIN;
		}
		ret = mpa_rx_walk(sk, q->skb, q->off + MPA_HDR_LEN, q->ulen,
				  mpa_rx_walk_msg, msg);
	}
	if (ret) {
		iov_iter_revert(&msg->msg_iter, room - msg_data_left(msg));
		return -EFAULT;
	}
	mpa_dec_skip(&c->rx, q->ulen);
	mpa_rx_count(c);
	mpa_mib_inc(c, MPA_MIB_RX_DIRECT);
	return q->ulen;
}

/*
 * the @n octets of FPDUs that mpa_rx_take() read, the last one @last,
 * are taken; go on (mpa_rx_next() tells TCP when)
 */
static void mpa_rx_consume(struct mpa_conn *c, u32 n, const struct mpa_rxq *last)
{
	c->rx_taken += n;
	mpa_rx_next(c, last);
}

/* the next ULPDU straight from TCP (mpa_rx_take()), taken at once */
static int mpa_rx_direct(struct mpa_conn *c, struct msghdr *msg, size_t len)
{
	struct mpa_rxq q;
	int ret;

	ret = mpa_rx_take(c, msg, len, 0, NULL, &q);
	if (ret < 0)
		return ret;
	mpa_rx_consume(c, q.wire, &q);
	msg->msg_flags |= MSG_EOR;
	return ret;
}

/*
 * MPA_RECV_LENS: the next ULPDU, if it is ready without waiting and fits
 * whole in @room octets: copied to @msg. From TCP (@rx_defer), it is
 * taken *@taken octets after the first unread one, right after *@last
 * if *@taken is not 0, and *@taken grows by its FPDU, which becomes
 * *@last and which the caller consumes with the others; from rx.buf, it
 * is consumed here (nothing is taken from TCP then). Return its length,
 * or -EAGAIN (nothing copied), or -EFAULT.
 */
static int mpa_recv_more(struct mpa_conn *c, struct msghdr *msg, size_t room,
			 u32 *taken, struct mpa_rxq *last)
{
	struct mpa_rxq q;
	u32 ulen;
	int ret;

	if (c->err || c->peer_fin)
		return -EAGAIN;
	if (c->rx_defer) {
		ret = mpa_rx_take(c, msg, room, *taken, *taken ? last : NULL, &q);
		if (ret >= 0) {
			*taken += q.wire;
			*last = q;
		}
		return ret;
	}
	if (!c->rx_ready || c->rx.ulpdu_len > room)
		return -EAGAIN;
	ulen = c->rx.ulpdu_len;
	if (memcpy_to_msg(msg, c->rx.buf, ulen))
		return -EFAULT;
	mpa_rx_next(c, NULL);
	mpa_rx_trim(c);
	return ulen;
}

/*
 * MPA_RECV_LENS: after the first ULPDU (@ret as recvmsg() returns it,
 * @ulen its length), the ULPDUs that are ready at once and fit whole in
 * the rest of @len, as many as the control buffer has lengths for; then
 * their lengths in an MPA_CMSG_LENS control message (MSG_CTRUNC if it has
 * no room for even one). With MSG_PEEK, MSG_TRUNC or a truncated first
 * ULPDU, the first one only. Return the octets copied in all.
 */
static int mpa_recv_lens(struct mpa_conn *c, struct msghdr *msg, size_t len,
			 int flags, int ret, u32 ulen)
{
	u32 lens[MPA_RECV_LENS_MAX], n = 1, max = 0, taken = 0;
	struct mpa_rxq last;
	size_t total = ret;
	int more;

	if (msg->msg_controllen >= CMSG_LEN(sizeof(u32)))
		max = min_t(size_t, ARRAY_SIZE(lens),
			    (msg->msg_controllen - CMSG_LEN(0)) / sizeof(u32));
	lens[0] = ulen;
	if (!(flags & (MSG_PEEK | MSG_TRUNC)) && !(msg->msg_flags & MSG_TRUNC)) {
		while (n < max) {
			more = mpa_recv_more(c, msg, len - total, &taken, &last);
			if (more < 0)
				break;
			lens[n++] = more;
			total += more;
		}
		/* the FPDUs read from TCP go in one call */
		if (taken)
			mpa_rx_consume(c, taken, &last);
	}
	put_cmsg(msg, SOL_MPA, MPA_CMSG_LENS, n * sizeof(u32), lens);
	return total;
}

int mpa_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
		int flags, int *addr_len)
{
	struct mpa_conn *c = mpa_get(sk);
	bool delivered = false;
	long timeo;
	u32 n, ulen;
	int ret;

	if (!mpa_framing(c) || (flags & MSG_ERRQUEUE))
		return c->sk_proto->recvmsg(sk, msg, len, flags, addr_len);
	if (flags & MSG_OOB)
		return -EOPNOTSUPP;

	lock_sock(sk);
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	for (;;) {
		if (!(flags & MSG_PEEK) && mpa_rx_deferred(c)) {
			/* after -EFAULT the FPDU still waits in TCP */
			ret = mpa_rx_direct(c, msg, len);
			ulen = ret;
			delivered = ret >= 0;
			if (ret != -EAGAIN)
				goto out;
		}
		/*
		 * FPDUs that wait in TCP and cannot go straight to the caller
		 * are parsed as usual; with none, the reader waits for the
		 * next whole one to copy it straight.
		 */
		if (c->rx_defer && ((flags & MSG_PEEK) || mpa_rx_deferred(c)))
			mpa_rx_process(c);
		ret = mpa_wait(c, &timeo, mpa_readable_or_deferred);
		if (ret) {
			/* the error is reported; SO_ERROR need not report it again */
			if (c->err && READ_ONCE(sk->sk_err) == c->err_errno)
				WRITE_ONCE(sk->sk_err, 0);
			goto out;
		}
		/* another reader left FPDUs in TCP meanwhile */
		if (!c->rx_defer)
			break;
	}
	if (!c->rx_ready) {
		if (c->state == MPA_S_REJECTED) {
			release_sock(sk);
			return c->sk_proto->recvmsg(sk, msg, len, flags, addr_len);
		}
		goto out;	/* peer_fin: end of stream */
	}
	ulen = c->rx.ulpdu_len;
	n = min_t(size_t, len, ulen);
	if (memcpy_to_msg(msg, c->rx.buf, n)) {
		ret = -EFAULT;
		goto out;
	}
	msg->msg_flags |= MSG_EOR;
	if (n < ulen)
		msg->msg_flags |= MSG_TRUNC;
	ret = (flags & MSG_TRUNC) ? ulen : n;
	if (!(flags & MSG_PEEK)) {
		mpa_rx_next(c, NULL);
		mpa_rx_trim(c);
	}
	delivered = true;
out:
	if (delivered && c->rx_lens)
		ret = mpa_recv_lens(c, msg, len, flags, ret, ulen);
	release_sock(sk);
	return ret;
}

bool mpa_sock_is_readable(struct sock *sk)
{
	struct mpa_conn *c = mpa_get(sk);

	return c && (READ_ONCE(c->rx_ready) || READ_ONCE(c->err) ||
		     READ_ONCE(c->peer_fin) || READ_ONCE(c->state) == MPA_S_REQ_RCVD ||
		     READ_ONCE(c->state) == MPA_S_REJECTED);
}

ssize_t mpa_splice_read(struct socket *sock, loff_t *ppos,
			struct pipe_inode_info *pipe, size_t len,
			unsigned int flags)
{
	struct mpa_conn *c = mpa_get(sock->sk);

	if (mpa_framing(c))
		return -EOPNOTSUPP;
	return c->sk_ops->splice_read(sock, ppos, pipe, len, flags);
}
