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

static void mpa_rx_ulpdu(struct mpa_conn *c)
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
	if (!schedule_work(&c->rx_work))
		sock_put(c->sk);
	return false;
}

/* Nothing is buffered nor being received: the buffer goes. */
void mpa_rx_trim(struct mpa_conn *c)
{
	if (c->rx.buf && !c->rx_ready && mpa_dec_idle(&c->rx))
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
		ev = mpa_dec_feed(&c->rx, data, n, &used);
		done += used;
		if (ev == MPA_DEC_ULPDU)
			mpa_rx_ulpdu(c);
		else if (ev == MPA_DEC_ERROR)
			mpa_rx_error(c);
		else if (ev == MPA_DEC_NEED_BUF)
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

/* Parse what TCP holds. Socket lock (or bh lock, not owned) held. */
void mpa_rx_process(struct mpa_conn *c)
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

void mpa_data_ready(struct sock *sk)
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

int mpa_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
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
