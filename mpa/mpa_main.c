// SPDX-License-Identifier: GPL-2.0
/*
 * MPA (RFC 5044) as the TCP upper layer protocol "mpa".
 *
 * setsockopt(fd, SOL_TCP, TCP_ULP, "mpa") on an established TCP socket
 * attaches an MPA context. Until MPA is started the socket is a plain
 * TCP stream. MPA_START runs the Request/Reply exchange; in full
 * operation every send is one FPDU and every receive one ULPDU.
 *
 * Receive parsing runs from the socket's data-ready callback (softirq,
 * or the owner's release_sock() backlog), always serialised by the
 * socket lock, through tcp_read_sock(). A ULPDU for user space stays in
 * the per-socket buffer until recvmsg() takes it; until then MPA leaves
 * further data in TCP so the peer is throttled by the TCP window.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/inet_connection_sock.h>
#include <net/iwarp_compat.h>
#include <net/tcp.h>

#include "mpa.h"

static bool allow_no_crc;
module_param(allow_no_crc, bool, 0644);
MODULE_PARM_DESC(allow_no_crc,
		 "Administrator allows sockets to ask for no CRC (MPA_F_NO_CRC); default no");

static unsigned int default_rev = 1;
module_param(default_rev, uint, 0644);
MODULE_PARM_DESC(default_rev,
		 "MPA revision of sockets that ask for none: 1 (RFC 5044) or 2 (RFC 6581)");

static unsigned int startup_timeout_ms = 10000;
module_param(startup_timeout_ms, uint, 0644);
MODULE_PARM_DESC(startup_timeout_ms,
		 "Default MPA startup timeout in milliseconds, 0 for none");

/*
 * TCP takes an FPDU whole when it fits its size goal, which MULPDU makes
 * sure of, so a rest left with MPA (tx_pend_len) needs TCP to run out of
 * memory in mid-FPDU. This knob lets the selftests produce that: each
 * FPDU then starts a second skb after this many octets, which needs send
 * space of its own.
 */
static unsigned int tx_split_test;
module_param(tx_split_test, uint, 0644);
MODULE_PARM_DESC(tx_split_test,
		 "Test only: put each FPDU in two skbs, split after this many octets; default 0 (off)");

enum { MPA_IPV4, MPA_IPV6, MPA_NFAMILIES };

static DEFINE_MUTEX(mpa_prot_lock);
static const struct proto *mpa_base_prot[MPA_NFAMILIES];
static const struct proto_ops *mpa_base_ops[MPA_NFAMILIES];
static struct proto mpa_prot[MPA_NFAMILIES];
static struct proto_ops mpa_ops[MPA_NFAMILIES];

static DEFINE_MUTEX(mpa_consumers_lock);
static LIST_HEAD(mpa_consumers);

static inline struct mpa_conn *mpa_get(const struct sock *sk)
{
	/* icsk_ulp_data is RCU only for sock_diag readers */
	return (__force struct mpa_conn *)inet_csk(sk)->icsk_ulp_data;
}

/* The socket speaks MPA frames (as opposed to a plain TCP stream). */
static bool mpa_framing(const struct mpa_conn *c)
{
	return c->state != MPA_S_IDLE && c->state != MPA_S_REJECTED;
}

static bool mpa_is_responder(const struct mpa_conn *c)
{
	return c->role == MPA_ROLE_RESPONDER;
}

static bool mpa_in_startup(const struct mpa_conn *c)
{
	return c->state == MPA_S_REQ_SENT || c->state == MPA_S_REQ_WAIT ||
	       c->state == MPA_S_REQ_RCVD;
}

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

/* Tell user space (a waiting reader or poll) that something happened. */
static void mpa_wake(struct mpa_conn *c)
{
	c->saved_data_ready(c->sk);
}

/*
 * mpa_fail() - report an MPA error; nothing more is delivered. Codes 2
 * and 3 leave TCP open so the consumer can send a last message; the
 * startup error 4 closes it.
 */
static void mpa_fail(struct mpa_conn *c, u32 code, int err)
{
	struct sock *sk = c->sk;

	if (c->err)
		return;
	err = -err;
	c->err = code;
	c->err_errno = err;
	c->rx_stop = true;
	c->rx_ready = false;
	if (mpa_in_startup(c) || code == MPA_ERR_STARTUP)
		c->state = MPA_S_ERROR;
	if (code == MPA_ERR_STARTUP && !c->closing) {
		sock_hold(sk);
		if (!schedule_work(&c->abort_work))
			sock_put(sk);
	}
	WRITE_ONCE(sk->sk_err, err);
	sk_error_report(sk);
	if (c->consumer)
		c->consumer->error(c, code);
}

static void mpa_abort_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, abort_work);
	struct sock *sk = c->sk;

	tcp_abort(sk, c->err_errno);
	sock_put(sk);
}

static void mpa_timeout_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(to_delayed_work(work),
					  struct mpa_conn, timeout_work);
	struct sock *sk = c->sk;

	lock_sock(sk);
	if (!c->closing && (c->state == MPA_S_REQ_SENT || c->state == MPA_S_REQ_WAIT))
		mpa_fail(c, MPA_ERR_STARTUP, -ETIMEDOUT);
	release_sock(sk);
	sock_put(sk);
}

static void mpa_stop_timeout(struct mpa_conn *c)
{
	if (cancel_delayed_work(&c->timeout_work))
		sock_put(c->sk);
}

/*
 * Memory MPA keeps for a socket is charged to the socket's memory cgroup,
 * also when allocated in softirq or by a worker (__GFP_ACCOUNT needs a
 * cgroup to charge); without one, to the caller's.
 */
static void *mpa_alloc(struct mpa_conn *c, u32 len, gfp_t gfp)
{
	struct mem_cgroup *memcg = c->sk->sk_memcg, *old = NULL;
	void *p;

	if (memcg)
		old = set_active_memcg(memcg);
	p = kvmalloc(len, gfp | __GFP_ACCOUNT | __GFP_NOWARN);
	if (memcg)
		set_active_memcg(old);
	return p;
}

/* ---- transmit ---- */

static int mpa_send_raw(struct mpa_conn *c, const void *buf, u32 len, int flags)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = flags };

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 1, len);
	return tcp_sendmsg_locked(c->sk, &msg, len);
}

/* The FPDU is in TCP: drop our reference to its memory. */
static void mpa_tx_release(struct mpa_conn *c)
{
	if (c->tx_page)
		put_page(c->tx_page);
	kvfree(c->tx_buf);
	c->tx_page = NULL;
	c->tx_buf = NULL;
	c->tx_pend_len = 0;
	c->tx_split = 0;
}

/*
 * A shutdown(SHUT_WR) that came while part of an FPDU was still with
 * MPA: now that the FPDU is complete in TCP the FIN follows it, as
 * inet_shutdown() would have sent it.
 */
static void mpa_tx_fin(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	c->tx_fin = false;
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
	c->sk_proto->shutdown(sk, SEND_SHUTDOWN);
	sk->sk_state_change(sk);
}

/*
 * Send what is left of the current FPDU. tcp_sendmsg_locked() may sleep
 * and release the socket lock: @tx_busy keeps every other path (the
 * write-space worker, shutdown, close) from sending the same octets.
 * Senders are serialised by @tx_lock. Once the FPDU is complete in TCP,
 * a FIN that waited for it goes out.
 */
static int mpa_tx_flush(struct mpa_conn *c, int flags)
{
	struct sock *sk = c->sk;
	struct sk_buff *skb;
	int ret;

	if (c->tx_busy)
		return -EAGAIN;
	if (!c->tx_pend_len)
		return 0;
	flags &= MSG_DONTWAIT | MSG_NOSIGNAL;
	while (c->tx_pend_len) {
		u32 len = c->tx_pend_len;

		if (c->tx_split)
			len = min(len, c->tx_split);
		c->tx_busy = true;
		if (c->tx_page)
			ret = iwarp_tcp_send_page(sk, c->tx_page, c->tx_pend_off, len,
						  flags);
		else
			ret = mpa_send_raw(c, c->tx_buf + c->tx_pend_off, len,
					   MSG_EOR | flags);
		c->tx_busy = false;
		if (ret < 0)
			return ret;
		c->tx_pend_off += ret;
		c->tx_pend_len -= ret;
		if (c->tx_split) {
			c->tx_split -= min_t(u32, c->tx_split, ret);
			skb = tcp_write_queue_tail(sk);
			if (!c->tx_split && skb)
				TCP_SKB_CB(skb)->eor = 1;
		}
	}
	/* the next FPDU starts a new skb, hence a new segment */
	skb = tcp_write_queue_tail(sk);
	if (c->tx_page && skb)
		TCP_SKB_CB(skb)->eor = 1;
	mpa_tx_release(c);
	if (c->tx_fin)
		mpa_tx_fin(c);
	return 0;
}

/*
 * Flush, waiting for send space at most *@timeo (process context, with
 * @tx_lock held so that no other flush sleeps meanwhile).
 */
static int mpa_tx_flush_wait(struct mpa_conn *c, long *timeo)
{
	int ret;

	for (;;) {
		ret = mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (ret != -EAGAIN || c->tx_busy)
			return ret;
		ret = sk_stream_wait_memory(c->sk, timeo);
		if (ret)
			return ret;
	}
}

/*
 * close() without the time to wait: TCP takes the rest of the FPDU
 * beyond its send buffer limit (at most one FPDU, whose memory MPA holds
 * already) and sends it, then the FIN, as an orphan. TCP's memory limits
 * (tcp_mem, the memory cgroup) still apply: when they refuse, the rest
 * stays and the caller resets the connection.
 */
static void mpa_tx_flush_force(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	struct tcp_sock *tp = tcp_sk(sk);
	u32 lowat = tp->notsent_lowat;
	int sndbuf = sk->sk_sndbuf;

	WRITE_ONCE(sk->sk_sndbuf, INT_MAX);
	WRITE_ONCE(tp->notsent_lowat, UINT_MAX);
	mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
	WRITE_ONCE(tp->notsent_lowat, lowat);
	WRITE_ONCE(sk->sk_sndbuf, min(sndbuf, READ_ONCE(sk->sk_sndbuf)));
}

static void mpa_tx_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, tx_work);
	struct sock *sk = c->sk;

	mutex_lock(&c->tx_lock);
	lock_sock(sk);
	if (!c->closing)
		mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
	release_sock(sk);
	mutex_unlock(&c->tx_lock);
	sock_put(sk);
}

static u32 mpa_mulpdu_locked(const struct mpa_conn *c)
{
	return mpa_mulpdu(READ_ONCE(tcp_sk(c->sk)->mss_cache), c->markers_tx);
}

/* a ULPDU made of a linear header and an iterator */
struct mpa_src {
	const u8	*hdr;
	u32		hdr_len;
	struct iov_iter	*it;
};

static int mpa_copy_src(void *ctx, void *to, u32 len)
{
	struct mpa_src *src = ctx;
	u32 n = min(len, src->hdr_len);
	u8 *dst = to;

	if (n) {
		memcpy(dst, src->hdr, n);
		src->hdr += n;
		src->hdr_len -= n;
		dst += n;
		len -= n;
	}
	if (len && !copy_from_iter_full(dst, len, src->it))
		return -EFAULT;
	return 0;
}

static bool mpa_started(const struct mpa_conn *c)
{
	return !mpa_in_startup(c);
}

static bool mpa_may_send(const struct mpa_conn *c)
{
	return c->tx_allowed;
}

static bool mpa_readable(const struct mpa_conn *c)
{
	return c->rx_ready || c->peer_fin || c->state == MPA_S_REJECTED;
}

/*
 * Wait with the socket lock held until @cond holds, an error is
 * pending, the timeout expires or a signal arrives.
 */
static int mpa_wait(struct mpa_conn *c, long *timeo,
		    bool (*cond)(const struct mpa_conn *c))
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = c->sk;
	int ret = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (!cond(c)) {
		if (c->err || sk->sk_err) {
			ret = c->err ? -c->err_errno : -sk->sk_err;
			break;
		}
		if (!*timeo) {
			ret = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			ret = sock_intr_errno(*timeo);
			break;
		}
		sk_wait_event(sk, timeo, cond(c) || c->err || sk->sk_err, &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return ret;
}

/*
 * Memory for an FPDU of @wire octets, which TCP then takes by reference
 * (one copy in all): a piece of the task's page fragment as TCP's own
 * sendmsg uses, or for an FPDU larger than that a compound page of its
 * own, freed by TCP once the data is acknowledged. Only when no such page
 * is available the FPDU goes into a buffer that TCP copies from and that
 * is freed as soon as it is sent. Nothing stays allocated between FPDUs.
 * Pages handed to TCP are charged to the socket's memory cgroup by TCP
 * (sk_wmem_schedule), the buffer with __GFP_ACCOUNT.
 */
static u8 *mpa_tx_buf(struct mpa_conn *c, u32 wire, struct page **page, u32 *off)
{
	struct sock *sk = c->sk;
	struct page_frag *pfrag = sk_page_frag(sk);

	*off = 0;
	*page = NULL;
	if (wire <= PAGE_SIZE << SKB_FRAG_PAGE_ORDER &&
	    skb_page_frag_refill(wire, pfrag, sk->sk_allocation) &&
	    pfrag->size - pfrag->offset >= wire) {
		*page = pfrag->page;
		*off = pfrag->offset;
		pfrag->offset += wire;
		get_page(*page);
	} else {
		*page = alloc_pages(sk->sk_allocation | __GFP_COMP | __GFP_NOWARN |
				    __GFP_NORETRY, get_order(wire));
	}
	c->tx_page = *page;
	if (*page)
		return (u8 *)page_address(*page) + *off;
	c->tx_buf = kvmalloc(wire, sk->sk_allocation | __GFP_ACCOUNT);
	return c->tx_buf;
}

/* One ULPDU, @hdr_len octets of @hdr then the rest from @from, as one FPDU. */
static int mpa_send_locked(struct mpa_conn *c, const void *hdr, u32 hdr_len,
			   struct iov_iter *from, size_t len, int flags)
{
	struct mpa_src src = { .hdr = hdr, .hdr_len = hdr_len, .it = from };
	struct sock *sk = c->sk;
	long timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	u32 pos, wire, off;
	struct page *page;
	u8 *buf;
	int ret;

	if (mpa_in_startup(c)) {
		ret = mpa_wait(c, &timeo, mpa_started);
		if (ret)
			return ret;
	}
	if (c->state == MPA_S_REJECTED)
		return -ECONNREFUSED;
	if (c->state != MPA_S_FULL)
		return c->err ? -c->err_errno : -ENOTCONN;
	if (len > mpa_mulpdu_locked(c))
		return -EMSGSIZE;
	/* after error 2 or 3 the consumer may still send a last message */
	if (c->err && READ_ONCE(sk->sk_err) == c->err_errno)
		WRITE_ONCE(sk->sk_err, 0);

	/* RFC 5044 7.1.2 rule 4: a Responder sends after it got one FPDU */
	ret = mpa_wait(c, &timeo, mpa_may_send);
	if (ret)
		return ret;
	/* after shutdown(SHUT_WR): the rest of the last FPDU is not ours */
	if (c->tx_shut)
		return sk_stream_error(sk, flags, -EPIPE);
	ret = mpa_tx_flush(c, flags);
	if (ret)
		return ret;
	/* shutdown(SHUT_WR) came while this sender slept in the flush */
	if (c->tx_shut)
		return sk_stream_error(sk, flags, -EPIPE);

	pos = tcp_sk(sk)->write_seq - c->tx_base;
	if ((flags & MSG_DONTWAIT) && !sk_stream_memory_free(sk)) {
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		return -EAGAIN;
	}
	wire = mpa_fpdu_wire_len(pos, len, c->markers_tx);
	buf = mpa_tx_buf(c, wire, &page, &off);
	if (!buf)
		return -ENOMEM;
	ret = mpa_fpdu_encode(buf, wire, pos, c->markers_tx, c->crc, len,
			      mpa_copy_src, &src);
	if (ret < 0) {
		mpa_tx_release(c);
		return ret;
	}
	c->tx_pend_off = off;
	c->tx_pend_len = ret;
	c->tx_split = min_t(u32, READ_ONCE(tx_split_test), ret);
	c->stats.tx_fpdus++;
	c->stats.tx_octets += len;
	c->stats.tx_markers += (ret - len - MPA_HDR_LEN - mpa_pad_len(len) -
				MPA_CRC_LEN) / MPA_MARKER_LEN;

	/* The FPDU is committed: a rest that did not fit goes out later. */
	ret = mpa_tx_flush(c, flags);
	if (ret && ret != -EAGAIN && ret != -ERESTARTSYS && ret != -EINTR)
		return ret;
	return len;
}

/* ---- receive ---- */

static void mpa_place(void *ctx, u32 off, const u8 *data, u32 len)
{
	struct mpa_conn *c = ctx;

	if (!c->rx_torn)
		c->consumer->place(c, c->rx.ulpdu_len, off, data, len);
}

/* Let a placing consumer take ULPDU octets as they arrive. */
static void mpa_rx_set_place(struct mpa_conn *c)
{
	bool place = c->consumer && c->consumer->place;

	c->rx.place = place ? mpa_place : NULL;
	c->rx.place_ctx = c;
}

static void mpa_enter_full(struct mpa_conn *c, bool peer_markers)
{
	struct tcp_sock *tp = tcp_sk(c->sk);

	/*
	 * Revision 0 (RDMAC): markers in both directions and CRC, whatever
	 * this end asked for (RFC 5044 Appendix C.2.4 and C.2.5).
	 */
	if (c->rev == 0) {
		c->lflags |= MPA_F_MARKERS;
		c->lflags &= ~MPA_F_NO_CRC;
		peer_markers = true;
	}

	c->markers_tx = peer_markers;
	c->crc = c->peer.crc || !(c->lflags & MPA_F_NO_CRC);
	mpa_rx_init(&c->rx, NULL, c->lflags & MPA_F_MARKERS, c->crc);
	mpa_rx_set_place(c);
	c->tx_base = tp->write_seq;
	/* FPDUs must not wait for Nagle */
	tp->nonagle |= TCP_NAGLE_OFF | TCP_NAGLE_PUSH;
	c->state = MPA_S_FULL;
}

/* Sending FPDUs became possible: wake senders and pollers. */
static void mpa_tx_open(struct mpa_conn *c)
{
	c->tx_allowed = true;
	if (c->consumer && c->consumer->write_space)
		c->consumer->write_space(c);
	c->saved_write_space(c->sk);
}

/*
 * Revisions a peer frame may carry. A Responder answers revision 2 with
 * its own revision; an Initiator takes a Reply of its revision or
 * below. Revision 0 (RFC 5044 Appendix C) only when permissive.
 */
static u32 mpa_rev_mask(const struct mpa_conn *c)
{
	u32 mask = BIT(1);

	/* an RDMAC Initiator understands only a revision 0 Reply */
	if (c->rev == 0 && !mpa_is_responder(c))
		return BIT(0);
	if (mpa_is_responder(c) || c->rev == 2)
		mask |= BIT(2);
	if (c->lflags & MPA_F_PERMISSIVE)
		mask |= BIT(0);
	return mask;
}

/* An RDMAC (revision 0) peer always sets M and C (RFC 5044 Figure 14). */
static bool mpa_rdmac_bad(const struct mpa_conn *c)
{
	return !c->peer.markers || !c->peer.crc;
}

/*
 * Initiator: check a revision 2 Reply and take the values it sets; a
 * revision 1 Reply to a revision 2 Request falls back to revision 1.
 */
static int mpa_v2_reply(struct mpa_conn *c)
{
	memset(&c->v2, 0, sizeof(c->v2));
	if (c->peer.rev != 2)
		return 0;
	/* RFC 6581: a revision 2 Reply carries the enhanced data */
	if (!c->peer.enhanced)
		return -EPROTO;
	if (mpa_v2_check_reply(&c->v2_local, &c->v2_peer))
		return -EPROTO;
	c->v2.ird = c->v2_local.ird;
	c->v2.ord = min(c->v2_local.ord, c->v2_peer.ird);
	c->v2.p2p = c->v2_peer.p2p;
	c->v2.rtr = c->v2_peer.rtr;
	return 0;
}

/*
 * The peer's frame stays for MPA_PEER_PD: keep only what it needs. If
 * that cannot be allocated now, the large buffer simply stays.
 */
static void mpa_frame_shrink(struct mpa_conn *c)
{
	u8 *p = mpa_alloc(c, c->frame_have, GFP_ATOMIC);

	if (p) {
		memcpy(p, c->frame, c->frame_have);
		kvfree(c->frame);
		c->frame = p;
	}
}

/* The peer's Request or Reply is complete in c->frame. */
static void mpa_frame_done(struct mpa_conn *c)
{
	const u8 *pd;
	u16 pd_len = c->peer.pd_len;

	mpa_frame_shrink(c);
	pd = c->frame + MPA_FRAME_HDR_LEN;

	mpa_stop_timeout(c);
	c->rx_stop = true;
	memset(&c->v2_peer, 0, sizeof(c->v2_peer));
	if (c->peer.enhanced) {
		/* RFC 6581: the enhanced data opens the private data */
		if (pd_len < MPA_V2_DATA_LEN) {
			mpa_fail(c, MPA_ERR_STARTUP, -ECONNABORTED);
			return;
		}
		mpa_v2_decode(pd, &c->v2_peer);
		c->peer_pd_off = MPA_V2_DATA_LEN;
		pd += MPA_V2_DATA_LEN;
		pd_len -= MPA_V2_DATA_LEN;
	}
	if (c->role == MPA_ROLE_INITIATOR && !c->peer.reject &&
	    mpa_v2_reply(c)) {
		mpa_fail(c, MPA_ERR_STARTUP, -ECONNABORTED);
		return;
	}
	c->rev = min(c->rev, c->peer.rev);
	/* revision 0: markers both ways and CRC (RFC 5044 Appendix C) */
	if (c->rev == 0) {
		c->lflags |= MPA_F_MARKERS;
		c->lflags &= ~MPA_F_NO_CRC;
	}
	if (c->role == MPA_ROLE_RESPONDER) {
		c->state = MPA_S_REQ_RCVD;
		if (c->consumer)
			c->consumer->request(c, pd, pd_len);
		mpa_wake(c);
		return;
	}
	if (c->peer.reject) {
		c->state = MPA_S_REJECTED;
	} else {
		mpa_enter_full(c, c->peer.markers);
		c->rx_stop = false;
	}
	if (c->consumer)
		c->consumer->reply(c, c->peer.reject, pd, pd_len);
	if (c->state == MPA_S_FULL)
		mpa_tx_open(c);
	mpa_wake(c);
}

static u32 mpa_rx_frame(struct mpa_conn *c, const u8 *data, u32 len)
{
	u32 need, n, used = 0;
	int err;

	while (used < len && !c->rx_stop) {
		need = MPA_FRAME_HDR_LEN;
		if (c->frame_have >= MPA_FRAME_HDR_LEN)
			need += c->peer.pd_len;
		n = min(len - used, need - c->frame_have);
		memcpy(c->frame + c->frame_have, data + used, n);
		c->frame_have += n;
		used += n;
		if (c->frame_have == MPA_FRAME_HDR_LEN) {
			/*
			 * A Responder answers revision 2 with its own revision;
			 * an Initiator takes a Reply of its revision or below.
			 */
			err = mpa_frame_decode(c->frame, mpa_rev_mask(c), &c->peer);
			if (!err && c->peer.rev == 0 && mpa_rdmac_bad(c))
				err = -EPROTO;
			/* a Request to an Initiator: Initiator/Initiator */
			if (!err && c->peer.request != mpa_is_responder(c))
				err = -EPROTO;
			if (err) {
				mpa_fail(c, MPA_ERR_STARTUP, -ECONNABORTED);
				break;
			}
		}
		if (c->frame_have == MPA_FRAME_HDR_LEN + c->peer.pd_len) {
			/*
			 * The frame ends here. What follows in the same chunk
			 * belongs to full operation (an Initiator) or waits in
			 * TCP for the Responder's decision.
			 */
			mpa_frame_done(c);
			break;
		}
	}
	return used;
}

/*
 * Hand the complete ULPDU to the consumer. One received into rx.buf (it
 * began before a placing consumer bound) is placed from there first, so
 * the consumer sees every ULPDU from offset 0.
 */
static void mpa_consumer_deliver(struct mpa_conn *c)
{
	const struct mpa_consumer *p = c->consumer;
	u32 len = c->rx.ulpdu_len;

	if (p->place && !c->rx.placing && len)
		p->place(c, len, 0, c->rx.buf, len);
	p->ulpdu(c, p->place ? NULL : c->rx.buf, len);
}

static void mpa_rx_ulpdu(struct mpa_conn *c)
{
	c->stats.rx_octets += c->rx.ulpdu_len;
	struct socket_wq *wq;

	if (!c->tx_allowed) {
		c->tx_allowed = true;
		/* wake a sender waiting for rule 4 */
		rcu_read_lock();
		wq = rcu_dereference(c->sk->sk_wq);
		if (skwq_has_sleeper(wq))
			wake_up_interruptible_all(&wq->wait);
		rcu_read_unlock();
	}
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
	u32 need = mpa_rx_need(&c->rx);
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
	if (!schedule_work(&c->rx_work))
		sock_put(c->sk);
	return false;
}

/* Nothing is buffered nor being received: the buffer goes. */
static void mpa_rx_trim(struct mpa_conn *c)
{
	if (c->rx.buf && !c->rx_ready && mpa_rx_idle(&c->rx))
		mpa_rx_set_buf(c, NULL, 0);
}

static int mpa_recv_actor(read_descriptor_t *desc, struct sk_buff *skb,
			  unsigned int offset, size_t len)
{
	struct mpa_conn *c = desc->arg.data;
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *data;
	u32 used;
	int ev;

	skb_prepare_seq_read(skb, offset, offset + len, &st);
	while (!c->rx_stop && (n = skb_seq_read(done, &data, &st)) != 0) {
		if (c->state != MPA_S_FULL) {
			done += mpa_rx_frame(c, data, n);
			continue;
		}
		ev = mpa_rx_feed(&c->rx, data, n, &used);
		done += used;
		if (ev == MPA_RX_ULPDU)
			mpa_rx_ulpdu(c);
		else if (ev == MPA_RX_ERROR)
			mpa_rx_error(c);
		else if (ev == MPA_RX_NEED_BUF)
			mpa_rx_need_buf(c);
	}
	skb_abort_seq_read(&st);
	if (c->rx_stop)
		desc->count = 0;
	return done;
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
	if (c->state == MPA_S_FULL && mpa_rx_idle(&c->rx)) {
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

/* Parse what TCP holds. Socket lock (or bh lock, not owned) held. */
static void mpa_rx_process(struct mpa_conn *c)
{
	read_descriptor_t desc = { .arg.data = c, .count = 1 };
	bool was_ready = c->rx_ready;

	if (!mpa_framing(c) || c->rx_stop || c->closing)
		return;
	tcp_read_sock(c->sk, &desc, mpa_recv_actor);
	if (!c->rx_stop)
		mpa_rx_fin(c);
	if (c->rx_ready && !was_ready)
		mpa_wake(c);
}

static void mpa_rx_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, rx_work);
	struct sock *sk = c->sk;
	u8 *buf;

	lock_sock(sk);
	if (c->rx_buf_wait && !c->closing && !c->err) {
		buf = mpa_alloc(c, mpa_rx_need(&c->rx), GFP_KERNEL);
		if (buf) {
			mpa_rx_set_buf(c, buf, mpa_rx_need(&c->rx));
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

static void mpa_data_ready(struct sock *sk)
{
	struct mpa_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = mpa_get(sk);
	if (c) {
		if (mpa_framing(c))
			mpa_rx_process(c);
		else
			c->saved_data_ready(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void mpa_state_change(struct sock *sk)
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

static void mpa_write_space(struct sock *sk)
{
	struct mpa_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = mpa_get(sk);
	if (c) {
		if (c->tx_pend_len && !c->tx_busy && !c->closing) {
			sock_hold(sk);
			if (!schedule_work(&c->tx_work))
				sock_put(sk);
		} else if (c->consumer && c->consumer->write_space) {
			c->consumer->write_space(c);
		}
		c->saved_write_space(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* ---- startup ---- */

static int mpa_local_crc(u32 lflags)
{
	return !(lflags & MPA_F_NO_CRC);
}

/* A Request or Reply; @v2, for revision 2, goes before the private data. */
static int mpa_send_frame(struct mpa_conn *c, bool request, bool reject,
			  const struct mpa_v2_info *v2, const void *pd, u16 pd_len)
{
	u16 off = c->rev == 2 ? MPA_V2_DATA_LEN : 0;
	struct mpa_frame_info fi = {
		.request = request,
		.markers = c->lflags & MPA_F_MARKERS,
		.crc = mpa_local_crc(c->lflags),
		.reject = reject,
		.enhanced = off,
		.rev = c->rev,
		.pd_len = off + pd_len,
	};
	u8 *buf;
	int len, ret;

	if (off + pd_len > MPA_MAX_PD_LEN)
		return -EINVAL;
	buf = kmalloc(MPA_FRAME_HDR_LEN + MPA_MAX_PD_LEN, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	if (off)
		mpa_v2_encode(buf + MPA_FRAME_HDR_LEN, v2);
	memcpy(buf + MPA_FRAME_HDR_LEN + off, pd, pd_len);
	len = mpa_frame_encode(buf, MPA_FRAME_HDR_LEN + MPA_MAX_PD_LEN, &fi,
			       buf + MPA_FRAME_HDR_LEN);
	ret = len < 0 ? len : mpa_send_raw(c, buf, len, MSG_EOR | MSG_NOSIGNAL);
	kfree(buf);
	if (ret >= 0 && ret != len)
		ret = -EPIPE;
	return ret < 0 ? ret : 0;
}

#define MPA_F_V2 (MPA_F_P2P | MPA_F_RTR_SEND | MPA_F_RTR_WRITE | MPA_F_RTR_READ)

static int mpa_start_locked(struct mpa_conn *c, const struct mpa_start *s)
{
	struct sock *sk = c->sk;
	u32 rev;
	int ret;

	if (c->state != MPA_S_IDLE)
		return -EISCONN;
	rev = s->rev ? s->rev : READ_ONCE(default_rev);
	if (rev == MPA_REV_RDMAC)
		rev = 0;
	else if (rev != 1 && rev != 2)
		return -EPROTONOSUPPORT;
	if ((s->role != MPA_ROLE_INITIATOR && s->role != MPA_ROLE_RESPONDER) ||
	    (s->flags & ~(MPA_F_MARKERS | MPA_F_NO_CRC | MPA_F_V2 | MPA_F_PERMISSIVE)) ||
	    (rev < 2 && ((s->flags & MPA_F_V2) || s->ird || s->ord)) ||
	    (rev == 0 && (s->flags & MPA_F_NO_CRC)) ||
	    s->ird > MPA_V2_IRD_ORD_MASK || s->ord > MPA_V2_IRD_ORD_MASK ||
	    s->pd_len > MPA_MAX_PD_LEN - (rev == 2 ? MPA_V2_DATA_LEN : 0) ||
	    s->lsm_len > MPA_MAX_LSM_LEN ||
	    (s->lsm_len && s->role != MPA_ROLE_RESPONDER) ||
	    (s->pd_len && s->role != MPA_ROLE_INITIATOR))
		return -EINVAL;
	if ((s->flags & MPA_F_NO_CRC) && !READ_ONCE(allow_no_crc))
		return -EPERM;
	if (sk->sk_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	if (!c->frame)
		c->frame = mpa_alloc(c, MPA_FRAME_HDR_LEN + MPA_MAX_PD_LEN, GFP_KERNEL);
	if (!c->frame)
		return -ENOMEM;

	c->role = s->role;
	c->rev = rev;
	c->lflags = s->flags;
	/* an RDMAC end requires markers and CRC (RFC 5044 Figure 14) */
	if (rev == 0)
		c->lflags |= MPA_F_MARKERS | MPA_F_PERMISSIVE;
	c->v2_local = (struct mpa_v2_info){
		.ird = s->ird,
		.ord = s->ord,
		.p2p = s->flags & MPA_F_P2P,
		.rtr = (s->flags & MPA_F_RTR_SEND ? MPA_RTR_SEND : 0) |
		       (s->flags & MPA_F_RTR_WRITE ? MPA_RTR_WRITE : 0) |
		       (s->flags & MPA_F_RTR_READ ? MPA_RTR_READ : 0),
	};
	if (s->role == MPA_ROLE_INITIATOR) {
		ret = mpa_send_frame(c, true, false, &c->v2_local, s->data,
				     s->pd_len);
		if (ret)
			return ret;
		c->state = MPA_S_REQ_SENT;
	} else {
		if (s->lsm_len) {
			ret = mpa_send_raw(c, s->data, s->lsm_len, MSG_EOR | MSG_NOSIGNAL);
			if (ret < 0)
				return ret;
			if (ret != s->lsm_len)
				return -EPIPE;
		}
		c->state = MPA_S_REQ_WAIT;
	}
	if (c->timeout_ms) {
		sock_hold(sk);
		if (!schedule_delayed_work(&c->timeout_work,
					   msecs_to_jiffies(c->timeout_ms)))
			sock_put(sk);
	}
	/* octets that arrived before MPA_START are the start of the stream */
	c->rx_stop = false;
	mpa_rx_process(c);
	return 0;
}

static int mpa_answer_locked(struct mpa_conn *c, bool reject, const void *pd,
			     u16 pd_len)
{
	int ret;

	if (c->state != MPA_S_REQ_RCVD)
		return c->err ? -c->err_errno : -EINVAL;
	if (pd_len > MPA_MAX_PD_LEN)
		return -EINVAL;
	/* revision 2: the Reply's IRD/ORD and RTR type (RFC 6581) */
	memset(&c->v2, 0, sizeof(c->v2));
	if (c->rev == 2 && mpa_v2_answer(&c->v2_peer, &c->v2_local, &c->v2)) {
		if (!reject)
			return -EOPNOTSUPP;
		c->v2.p2p = false;
		c->v2.rtr = 0;
	}
	ret = mpa_send_frame(c, false, reject, &c->v2, pd, pd_len);
	if (ret)
		return ret;
	if (reject) {
		c->state = MPA_S_REJECTED;
		return 0;
	}
	/* M in the Request: the Responder adds markers */
	mpa_enter_full(c, c->peer.markers);
	c->rx_stop = false;
	mpa_rx_process(c);
	return 0;
}

/* ---- socket operations ---- */

static int mpa_sendmsg(struct sock *sk, struct msghdr *msg, size_t size)
{
	struct mpa_conn *c = mpa_get(sk);
	int ret;

	mutex_lock(&c->tx_lock);
	lock_sock(sk);
	if (!mpa_framing(c))
		ret = tcp_sendmsg_locked(sk, msg, size);
	else if ((msg->msg_flags & MSG_OOB) || iwarp_msg_splices_pages(msg))
		ret = -EOPNOTSUPP;
	else
		ret = mpa_send_locked(c, NULL, 0, &msg->msg_iter, size,
				      msg->msg_flags);
	release_sock(sk);
	mutex_unlock(&c->tx_lock);
	return ret;
}

/*
 * shutdown(SHUT_WR) in framing mode: no FPDU starts after it, and its FIN
 * must not cut the FPDU being sent (the peer would see RFC 5044 error 1).
 * If part of that FPDU is still with MPA (send space ran out, or another
 * thread's send sleeps in its flush), the FIN is queued behind it: the
 * flush that completes the FPDU (that sender, or the write-space worker)
 * sends it. Like TCP, which queues its FIN behind unsent data, shutdown
 * does not wait.
 */
static int mpa_sock_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	struct mpa_conn *c = mpa_get(sk);
	bool defer = false;

	if (how != SHUT_WR && how != SHUT_RDWR)
		return c->sk_ops->shutdown(sock, how);
	lock_sock(sk);
	if (mpa_framing(c) && !(sk->sk_shutdown & SEND_SHUTDOWN) &&
	    ((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))) {
		c->tx_shut = true;
		mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (c->tx_pend_len) {
			c->tx_fin = true;
			defer = true;
		}
	}
	release_sock(sk);
	if (!defer)
		return c->sk_ops->shutdown(sock, how);
	return how == SHUT_RDWR ? c->sk_ops->shutdown(sock, SHUT_RD) : 0;
}

static int mpa_sendpage(struct sock *sk, struct page *page, int offset,
			size_t size, int flags)
{
	struct mpa_conn *c = mpa_get(sk);

	if (mpa_framing(c))
		return -EOPNOTSUPP;
	return iwarp_proto_sendpage(c->sk_proto, sk, page, offset, size, flags);
}

static int mpa_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
		       int flags, int *addr_len)
{
	struct mpa_conn *c = mpa_get(sk);
	long timeo;
	u32 n, ulen;
	int ret;

	if (!mpa_framing(c) || (flags & MSG_ERRQUEUE))
		return c->sk_proto->recvmsg(sk, msg, len, flags, addr_len);
	if (flags & MSG_OOB)
		return -EOPNOTSUPP;

	lock_sock(sk);
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	ret = mpa_wait(c, &timeo, mpa_readable);
	if (ret) {
		/* the error is reported; SO_ERROR need not report it again */
		if (c->err && READ_ONCE(sk->sk_err) == c->err_errno)
			WRITE_ONCE(sk->sk_err, 0);
		goto out;
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
		c->rx_ready = false;
		c->rx_stop = false;
		mpa_rx_process(c);
		mpa_rx_trim(c);
	}
out:
	release_sock(sk);
	return ret;
}

static bool mpa_sock_is_readable(struct sock *sk)
{
	struct mpa_conn *c = mpa_get(sk);

	return c && (READ_ONCE(c->rx_ready) || READ_ONCE(c->err) ||
		     READ_ONCE(c->peer_fin) || READ_ONCE(c->state) == MPA_S_REQ_RCVD ||
		     READ_ONCE(c->state) == MPA_S_REJECTED);
}

static __poll_t mpa_poll(struct file *file, struct socket *sock,
			 struct poll_table_struct *wait)
{
	struct mpa_conn *c = mpa_get(sock->sk);
	__poll_t mask = c->sk_ops->poll(file, sock, wait);

	/* no FPDU may be sent before the startup ends or, for a Responder,
	 * before the first FPDU arrived (RFC 5044 7.1.2 rule 4)
	 */
	if (mpa_framing(c) && c->state != MPA_S_ERROR &&
	    (mpa_in_startup(c) || !READ_ONCE(c->tx_allowed)))
		mask &= ~(EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
	return mask;
}

static ssize_t mpa_splice_read(struct socket *sock, loff_t *ppos,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned int flags)
{
	struct mpa_conn *c = mpa_get(sock->sk);

	if (mpa_framing(c))
		return -EOPNOTSUPP;
	return c->sk_ops->splice_read(sock, ppos, pipe, len, flags);
}

static int mpa_setsockopt_start(struct mpa_conn *c, sockptr_t optval,
				unsigned int optlen)
{
	struct mpa_start *s;
	int ret;

	if (optlen < sizeof(*s) || optlen > sizeof(*s) + MPA_MAX_PD_LEN + MPA_MAX_LSM_LEN)
		return -EINVAL;
	s = kvmalloc(optlen, GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_sockptr(s, optval, optlen))
		goto out;
	ret = -EINVAL;
	if (optlen != sizeof(*s) + s->pd_len + s->lsm_len)
		goto out;
	mutex_lock(&c->tx_lock);
	lock_sock(c->sk);
	ret = mpa_start_locked(c, s);
	release_sock(c->sk);
	mutex_unlock(&c->tx_lock);
out:
	kvfree(s);
	return ret;
}

static int mpa_setsockopt(struct sock *sk, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	struct mpa_conn *c = mpa_get(sk);
	u8 pd[MPA_MAX_PD_LEN];
	u32 val;
	int ret;

	if (level != SOL_MPA)
		return c->sk_proto->setsockopt(sk, level, optname, optval, optlen);
	switch (optname) {
	case MPA_START:
		return mpa_setsockopt_start(c, optval, optlen);
	case MPA_ACCEPT:
	case MPA_REJECT:
		if (optlen > MPA_MAX_PD_LEN)
			return -EINVAL;
		if (copy_from_sockptr(pd, optval, optlen))
			return -EFAULT;
		mutex_lock(&c->tx_lock);
		lock_sock(sk);
		ret = mpa_answer_locked(c, optname == MPA_REJECT, pd, optlen);
		release_sock(sk);
		mutex_unlock(&c->tx_lock);
		return ret;
	case MPA_TIMEOUT:
		if (optlen != sizeof(val))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		lock_sock(sk);
		ret = c->state == MPA_S_IDLE ? 0 : -EISCONN;
		if (!ret)
			c->timeout_ms = val;
		release_sock(sk);
		return ret;
	default:
		return -ENOPROTOOPT;
	}
}

/* the peer's private data, after the revision 2 enhanced data */
static u32 mpa_peer_pd_len(const struct mpa_conn *c)
{
	u32 hdr = MPA_FRAME_HDR_LEN + c->peer_pd_off;

	return c->frame_have > hdr ? c->frame_have - hdr : 0;
}

static void mpa_fill_info(const struct mpa_conn *c, struct mpa_info *info)
{
	memset(info, 0, sizeof(*info));
	info->state = c->state;
	info->role = c->role;
	info->rev = c->rev;
	info->error = c->err;
	info->peer_pd_len = mpa_peer_pd_len(c);
	if (c->rev == 2 && c->frame_have) {
		info->peer_ird = c->v2_peer.ird;
		info->peer_ord = c->v2_peer.ord;
	}
	if (c->state == MPA_S_FULL) {
		info->mulpdu = mpa_mulpdu_locked(c);
		info->ird = c->v2.ird;
		info->ord = c->v2.ord;
		if (c->v2.p2p)
			info->flags |= MPA_I_P2P;
		info->rtr = (c->v2.rtr & MPA_RTR_SEND ? MPA_F_RTR_SEND : 0) |
			    (c->v2.rtr & MPA_RTR_WRITE ? MPA_F_RTR_WRITE : 0) |
			    (c->v2.rtr & MPA_RTR_READ ? MPA_F_RTR_READ : 0);
		if (c->rx.markers)
			info->flags |= MPA_I_MARKERS_RX;
		if (c->markers_tx)
			info->flags |= MPA_I_MARKERS_TX;
		if (c->crc)
			info->flags |= MPA_I_CRC;
	}
	if (c->peer_fin)
		info->flags |= MPA_I_PEER_FIN;
	if (c->role == MPA_ROLE_INITIATOR && c->state == MPA_S_REJECTED)
		info->flags |= MPA_I_REJECTED;
}

static int mpa_getsockopt(struct sock *sk, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	struct mpa_conn *c = mpa_get(sk);
	union {
		struct mpa_info info;
		struct mpa_stats stats;
		u32 val;
	} u;
	const void *src = &u;
	int len, size;

	if (level != SOL_MPA)
		return c->sk_proto->getsockopt(sk, level, optname, optval, optlen);
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	lock_sock(sk);
	switch (optname) {
	case MPA_INFO:
		mpa_fill_info(c, &u.info);
		size = sizeof(u.info);
		break;
	case MPA_STATS:
		u.stats = c->stats;
		u.stats.rx_fpdus = c->rx.ulpdus;
		u.stats.rx_markers = c->rx.nmarkers;
		u.stats.rx_crc_errors = c->rx.crc_errors;
		size = sizeof(u.stats);
		break;
	case MPA_ERROR:
		u.val = c->err;
		size = sizeof(u.val);
		break;
	case MPA_MULPDU:
		u.val = c->state == MPA_S_FULL ? mpa_mulpdu_locked(c) : 0;
		size = sizeof(u.val);
		break;
	case MPA_PEER_PD:
		size = mpa_peer_pd_len(c);
		if (size)
			src = c->frame + MPA_FRAME_HDR_LEN + c->peer_pd_off;
		if (len < size) {
			release_sock(sk);
			return -ENOSPC;
		}
		break;
	case MPA_TIMEOUT:
		u.val = c->timeout_ms;
		size = sizeof(u.val);
		break;
	default:
		release_sock(sk);
		return -ENOPROTOOPT;
	}
	len = min(len, size);
	if (copy_to_user(optval, src, len) || put_user(len, optlen))
		len = -EFAULT;
	release_sock(sk);
	return len < 0 ? len : 0;
}

/* ---- attach and detach ---- */

static void mpa_conn_free(struct mpa_conn *c)
{
	mpa_tx_release(c);
	kvfree(c->rx.buf);
	kvfree(c->frame);
	if (c->consumer)
		module_put(c->consumer->owner);
	kfree_rcu(c, rcu);
}

/*
 * close() with FPDU octets still with MPA. A FIN must not cut that FPDU:
 * the rest goes to TCP first, within the SO_LINGER time if lingering,
 * else beyond TCP's send buffer limit. If TCP's memory limits refuse
 * even that, the connection is reset instead. SO_LINGER with a zero time
 * resets anyway (tcp_close()), the rest is dropped.
 */
static void mpa_close_flush(struct mpa_conn *c, long *timeout)
{
	struct sock *sk = c->sk;

	if (!c->tx_pend_len || (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime))
		return;
	if (*timeout)
		mpa_tx_flush_wait(c, timeout);
	if (c->tx_pend_len)
		mpa_tx_flush_force(c);
	if (c->tx_pend_len && !c->tx_busy)
		c->sk_proto->disconnect(sk, 0);
}

static void mpa_close(struct sock *sk, long timeout)
{
	struct mpa_conn *c = mpa_get(sk);
	struct proto *prot = c->sk_proto;

	/* no sender sleeps in a flush while close sends the rest */
	mutex_lock(&c->tx_lock);
	lock_sock(sk);
	c->closing = true;
	mpa_close_flush(c, &timeout);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = c->saved_data_ready;
	sk->sk_write_space = c->saved_write_space;
	sk->sk_state_change = c->saved_state_change;
	rcu_assign_pointer(inet_csk(sk)->icsk_ulp_data, NULL);
	WRITE_ONCE(sk->sk_prot, prot);
	if (sk->sk_socket)
		WRITE_ONCE(sk->sk_socket->ops, c->sk_ops);
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
	mutex_unlock(&c->tx_lock);

	/* the workers take the socket lock: cancel without it */
	if (cancel_work_sync(&c->abort_work))
		sock_put(sk);
	if (cancel_work_sync(&c->tx_work))
		sock_put(sk);
	if (cancel_work_sync(&c->rx_work))
		sock_put(sk);
	if (cancel_delayed_work_sync(&c->timeout_work))
		sock_put(sk);
	mpa_conn_free(c);
	prot->close(sk, timeout);
}

/*
 * connect(AF_UNSPEC) would make the socket reusable for another
 * connection with this one's MPA state: refused, as kTLS does.
 */
static int mpa_disconnect(struct sock *sk, int flags)
{
	return -EOPNOTSUPP;
}

static void mpa_build_protos(int fam, const struct proto *base,
			     const struct proto_ops *ops)
{
	struct proto *p = &mpa_prot[fam];
	struct proto_ops *o = &mpa_ops[fam];

	*p = *base;
	p->close = mpa_close;
	p->sendmsg = mpa_sendmsg;
	iwarp_proto_set_sendpage(p, mpa_sendpage);
	p->disconnect = mpa_disconnect;
	p->recvmsg = mpa_recvmsg;
	p->setsockopt = mpa_setsockopt;
	p->getsockopt = mpa_getsockopt;
	p->sock_is_readable = mpa_sock_is_readable;

	*o = *ops;
	o->poll = mpa_poll;
	o->shutdown = mpa_sock_shutdown;
	o->splice_read = mpa_splice_read;
	o->mmap = sock_no_mmap;
	o->read_sock = NULL;
	o->read_skb = NULL;
	mpa_base_prot[fam] = base;
	mpa_base_ops[fam] = ops;
}

static int mpa_ulp_init(struct sock *sk)
{
	int fam = sk->sk_family == AF_INET6 ? MPA_IPV6 : MPA_IPV4;
	struct mpa_conn *c;

	if (sk->sk_protocol != IPPROTO_TCP ||
	    (sk->sk_family != AF_INET && sk->sk_family != AF_INET6))
		return -EAFNOSUPPORT;
	/* Only an established connection has a byte stream to frame. */
	if (sk->sk_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	if (!sk->sk_socket)
		return -EINVAL;

	mutex_lock(&mpa_prot_lock);
	if (!mpa_base_prot[fam])
		mpa_build_protos(fam, sk->sk_prot, sk->sk_socket->ops);
	mutex_unlock(&mpa_prot_lock);
	/* another layer (sockmap, ...) already replaced the proto */
	if (sk->sk_prot != mpa_base_prot[fam] ||
	    sk->sk_socket->ops != mpa_base_ops[fam])
		return -EBUSY;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return -ENOMEM;
	c->sk = sk;
	c->sk_proto = sk->sk_prot;
	c->sk_ops = sk->sk_socket->ops;
	c->rev = 1;
	c->rx_stop = true;
	c->timeout_ms = READ_ONCE(startup_timeout_ms);
	mutex_init(&c->tx_lock);
	INIT_WORK(&c->abort_work, mpa_abort_work);
	INIT_WORK(&c->tx_work, mpa_tx_work);
	INIT_WORK(&c->rx_work, mpa_rx_work);
	INIT_DELAYED_WORK(&c->timeout_work, mpa_timeout_work);

	write_lock_bh(&sk->sk_callback_lock);
	c->saved_data_ready = sk->sk_data_ready;
	c->saved_write_space = sk->sk_write_space;
	c->saved_state_change = sk->sk_state_change;
	rcu_assign_pointer(inet_csk(sk)->icsk_ulp_data, c);
	sk->sk_data_ready = mpa_data_ready;
	sk->sk_write_space = mpa_write_space;
	sk->sk_state_change = mpa_state_change;
	WRITE_ONCE(sk->sk_prot, &mpa_prot[fam]);
	WRITE_ONCE(sk->sk_socket->ops, &mpa_ops[fam]);
	write_unlock_bh(&sk->sk_callback_lock);
	return 0;
}

static void mpa_ulp_release(struct sock *sk)
{
	/* mpa_close() detached and freed the context; this only runs for
	 * a socket destroyed without close, which TCP does not do.
	 */
	struct mpa_conn *c = mpa_get(sk);

	if (c) {
		rcu_assign_pointer(inet_csk(sk)->icsk_ulp_data, NULL);
		mpa_conn_free(c);
	}
}

static struct tcp_ulp_ops mpa_ulp_ops __read_mostly = {
	.name		= "mpa",
	.owner		= THIS_MODULE,
	.init		= mpa_ulp_init,
	.release	= mpa_ulp_release,
};

/* ---- in-kernel consumer API ---- */

/**
 * mpa_register_consumer() - make an MPA consumer available by name
 * @consumer: the consumer, with every callback set
 *
 * Return: 0, -EINVAL if a callback is missing, -EEXIST if the name is taken.
 */
int mpa_register_consumer(struct mpa_consumer *consumer)
{
	struct mpa_consumer *p;
	int ret = 0;

	if (!consumer->name || !consumer->request || !consumer->reply ||
	    !consumer->ulpdu || !consumer->error || !consumer->peer_closed)
		return -EINVAL;
	mutex_lock(&mpa_consumers_lock);
	list_for_each_entry(p, &mpa_consumers, list)
		if (!strcmp(p->name, consumer->name))
			ret = -EEXIST;
	if (!ret)
		list_add_tail(&consumer->list, &mpa_consumers);
	mutex_unlock(&mpa_consumers_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_register_consumer);

/**
 * mpa_unregister_consumer() - remove a consumer registered earlier
 * @consumer: the consumer
 *
 * Sockets bound to it hold a reference on its module, so none is left
 * when its module exit calls this.
 */
void mpa_unregister_consumer(struct mpa_consumer *consumer)
{
	mutex_lock(&mpa_consumers_lock);
	list_del(&consumer->list);
	mutex_unlock(&mpa_consumers_lock);
}
EXPORT_SYMBOL_GPL(mpa_unregister_consumer);

/* A ULPDU received for user space before the bind goes to the consumer. */
static void mpa_bind_takeover(struct mpa_conn *c)
{
	if (c->state != MPA_S_FULL)
		return;
	mpa_rx_set_place(c);
	if (c->rx_ready) {
		c->rx_ready = false;
		mpa_consumer_deliver(c);
	}
	/* resume after a ULPDU held for recvmsg() or an earlier unbind */
	if (!c->err)
		c->rx_stop = false;
	mpa_rx_process(c);
	if (c->consumer->place)
		mpa_rx_trim(c);
}

/**
 * mpa_bind() - attach MPA to a connected TCP socket for a consumer
 * @sock: an established TCP socket
 * @name: name of a registered consumer
 * @priv: the consumer's cookie, see mpa_conn_priv()
 *
 * Context: process context; takes the socket lock.
 * Return: the connection, or an ERR_PTR: -ENOENT for an unknown
 * consumer, or what setsockopt(TCP_ULP, "mpa") returns.
 */
struct mpa_conn *mpa_bind(struct socket *sock, const char *name, void *priv)
{
	struct mpa_consumer *p, *found = NULL;
	struct mpa_conn *c;
	int ret;

	mutex_lock(&mpa_consumers_lock);
	list_for_each_entry(p, &mpa_consumers, list)
		if (!strcmp(p->name, name) && try_module_get(p->owner))
			found = p;
	mutex_unlock(&mpa_consumers_lock);
	if (!found)
		return ERR_PTR(-ENOENT);

	ret = sock->ops->setsockopt(sock, SOL_TCP, TCP_ULP,
				    KERNEL_SOCKPTR("mpa"), sizeof("mpa"));
	/* EEXIST: attached already, by user space if not by "mpa" */
	if (ret && ret != -EEXIST)
		goto err;
	lock_sock(sock->sk);
	c = mpa_get(sock->sk);
	ret = -EBUSY;
	if (!c || inet_csk(sock->sk)->icsk_ulp_ops != &mpa_ulp_ops || c->consumer ||
	    c->closing) {
		release_sock(sock->sk);
		goto err;
	}
	write_lock_bh(&sock->sk->sk_callback_lock);
	c->consumer = found;
	c->consumer_priv = priv;
	write_unlock_bh(&sock->sk->sk_callback_lock);
	mpa_bind_takeover(c);
	release_sock(sock->sk);
	return c;
err:
	module_put(found->owner);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(mpa_bind);

/**
 * mpa_unbind() - stop calling the consumer for this connection
 * @conn: the connection
 *
 * The socket stays open; its owner closes it.
 */
void mpa_unbind(struct mpa_conn *conn)
{
	struct sock *sk = conn->sk;
	struct mpa_consumer *p;

	lock_sock(sk);
	write_lock_bh(&sk->sk_callback_lock);
	p = conn->consumer;
	conn->consumer = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
	if (conn->state == MPA_S_FULL) {
		/*
		 * The rest of a ULPDU whose first octets were placed cannot
		 * be delivered to anyone: it is consumed and dropped, and the
		 * socket's next owner starts at the next FPDU.
		 */
		if (mpa_rx_placing(&conn->rx))
			conn->rx_torn = true;
		mpa_rx_set_place(conn);
		/* from now on ULPDUs wait for recvmsg() */
		if (!conn->err && !conn->rx_ready) {
			conn->rx_stop = false;
			mpa_rx_process(conn);
		}
	}
	release_sock(sk);
	if (p)
		module_put(p->owner);
}
EXPORT_SYMBOL_GPL(mpa_unbind);

/**
 * mpa_conn_priv() - the cookie given to mpa_bind()
 * @conn: the connection
 *
 * Return: the cookie.
 */
void *mpa_conn_priv(struct mpa_conn *conn)
{
	return conn->consumer_priv;
}
EXPORT_SYMBOL_GPL(mpa_conn_priv);

/**
 * mpa_start() - start MPA as Initiator or Responder
 * @conn: the connection
 * @start: role, flags and private data, as for the MPA_START option
 *
 * Context: process context.
 * Return: 0 or a negative errno, as setsockopt(MPA_START).
 */
int mpa_start(struct mpa_conn *conn, const struct mpa_start *start)
{
	int ret;

	mutex_lock(&conn->tx_lock);
	lock_sock(conn->sk);
	ret = mpa_start_locked(conn, start);
	release_sock(conn->sk);
	mutex_unlock(&conn->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_start);

/**
 * mpa_accept() - Responder: accept the Request and enter full operation
 * @conn: the connection
 * @pd: private data for the Reply
 * @pd_len: its length, at most 512
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int mpa_accept(struct mpa_conn *conn, const void *pd, u16 pd_len)
{
	int ret;

	mutex_lock(&conn->tx_lock);
	lock_sock(conn->sk);
	ret = mpa_answer_locked(conn, false, pd, pd_len);
	release_sock(conn->sk);
	mutex_unlock(&conn->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_accept);

/**
 * mpa_reject() - Responder: reject the Request; MPA exits, TCP stays open
 * @conn: the connection
 * @pd: private data for the Reply
 * @pd_len: its length, at most 512
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int mpa_reject(struct mpa_conn *conn, const void *pd, u16 pd_len)
{
	int ret;

	mutex_lock(&conn->tx_lock);
	lock_sock(conn->sk);
	ret = mpa_answer_locked(conn, true, pd, pd_len);
	release_sock(conn->sk);
	mutex_unlock(&conn->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_reject);

/**
 * mpa_send() - send one ULPDU as one FPDU
 * @conn: the connection
 * @vec: the ULPDU, in pieces
 * @nr: number of pieces
 * @len: total length, at most mpa_conn_mulpdu()
 * @flags: MSG_DONTWAIT or 0
 *
 * An in-kernel send never raises SIGPIPE: a closed connection is -EPIPE.
 *
 * Context: process context; may sleep unless MSG_DONTWAIT.
 * Return: @len, -EMSGSIZE, -EAGAIN, or another negative errno.
 */
int mpa_send(struct mpa_conn *conn, struct kvec *vec, size_t nr, size_t len,
	     int flags)
{
	struct iov_iter it;
	int ret;

	iov_iter_kvec(&it, ITER_SOURCE, vec, nr, len);
	mutex_lock(&conn->tx_lock);
	lock_sock(conn->sk);
	ret = mpa_send_locked(conn, NULL, 0, &it, len, flags | MSG_NOSIGNAL);
	release_sock(conn->sk);
	mutex_unlock(&conn->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_send);

/**
 * mpa_sendv() - send one ULPDU made of a header and an iterator
 * @conn: the connection
 * @hdr: the first octets of the ULPDU (e.g. a DDP header)
 * @hdr_len: their number
 * @data: the rest, e.g. user memory
 * @data_len: its length; @hdr_len + @data_len at most mpa_conn_mulpdu()
 * @flags: MSG_DONTWAIT or 0
 *
 * Context: process context; may sleep unless MSG_DONTWAIT.
 * Return: the ULPDU length, or a negative errno as mpa_send() (never
 * SIGPIPE).
 */
int mpa_sendv(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
	      struct iov_iter *data, u32 data_len, int flags)
{
	int ret;

	mutex_lock(&conn->tx_lock);
	lock_sock(conn->sk);
	ret = mpa_send_locked(conn, hdr, hdr_len, data, hdr_len + data_len,
			      flags | MSG_NOSIGNAL);
	release_sock(conn->sk);
	mutex_unlock(&conn->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_sendv);

/**
 * mpa_conn_mulpdu() - largest ULPDU mpa_send() accepts now
 * @conn: the connection
 *
 * It follows the TCP MSS; 0 before full operation.
 * Return: MULPDU in octets.
 */
u32 mpa_conn_mulpdu(struct mpa_conn *conn)
{
	return READ_ONCE(conn->state) == MPA_S_FULL ? mpa_mulpdu_locked(conn) : 0;
}
EXPORT_SYMBOL_GPL(mpa_conn_mulpdu);

/**
 * mpa_conn_info() - state and negotiated parameters
 * @conn: the connection
 * @info: filled in as for the MPA_INFO option
 */
void mpa_conn_info(struct mpa_conn *conn, struct mpa_info *info)
{
	mpa_fill_info(conn, info);
}
EXPORT_SYMBOL_GPL(mpa_conn_info);

static int __init mpa_module_init(void)
{
	return tcp_register_ulp(&mpa_ulp_ops);
}

static void __exit mpa_module_exit(void)
{
	tcp_unregister_ulp(&mpa_ulp_ops);
	/* contexts are freed with kfree_rcu() */
	rcu_barrier();
}

module_init(mpa_module_init);
module_exit(mpa_module_exit);

MODULE_DESCRIPTION("MPA (RFC 5044) framing as a TCP upper layer protocol");
MODULE_LICENSE("GPL");
MODULE_ALIAS_TCP_ULP("mpa");
