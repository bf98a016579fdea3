// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel consumer API of MPA (include/net/mpa.h): the registry of
 * consumers by name and the exported functions a consumer such as DDP
 * calls. See Documentation/mpa.rst.
 */
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <net/inet_connection_sock.h>
#include <net/tcp.h>

#include "mpa.h"

static DEFINE_MUTEX(mpa_consumers_lock);
static LIST_HEAD(mpa_consumers);

/**
 * mpa_register_consumer() - make an MPA consumer available by name
 * @consumer: the consumer, with every callback set
 *
 * Return: 0, -EINVAL if a callback is missing, the name is empty or
 * longer than %MPA_CONSUMER_NAME_MAX - 1 octets, or @get_info comes with an
 * @info_size of 0 or above %MPA_CONSUMER_INFO_MAX; -EEXIST if the name is
 * taken.
 */
int mpa_register_consumer(struct mpa_consumer *consumer)
{
	struct mpa_consumer *p;
	int ret = 0;

	if (!consumer->name || !consumer->name[0] ||
	    strnlen(consumer->name, MPA_CONSUMER_NAME_MAX) == MPA_CONSUMER_NAME_MAX ||
	    !consumer->request || !consumer->reply || !consumer->ulpdu ||
	    !consumer->error || !consumer->peer_closed)
		return -EINVAL;
	if (consumer->get_info && (!consumer->info_size ||
				   consumer->info_size > MPA_CONSUMER_INFO_MAX))
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
 * MPA leaves Nagle as it is on @sock: a consumer whose small FPDUs must
 * not wait for an ACK sets TCP_NODELAY (tcp_sock_set_nodelay()).
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
		if (mpa_dec_placing(&conn->rx))
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
 * @start: role, flags, revision and private data, as for the MPA_START
 *	socket option
 *
 * Context: process context.
 * Return: 0 or a negative errno, as setsockopt(MPA_START).
 */
int mpa_start(struct mpa_conn *conn, const struct mpa_start_params *start)
{
	int ret;

	mpa_lock_tx(conn);
	ret = mpa_start_locked(conn, start);
	mpa_unlock_tx(conn);
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

	mpa_lock_tx(conn);
	ret = mpa_answer_locked(conn, false, pd, pd_len);
	mpa_unlock_tx(conn);
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

	mpa_lock_tx(conn);
	ret = mpa_answer_locked(conn, true, pd, pd_len);
	mpa_unlock_tx(conn);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_reject);

/**
 * mpa_abort() - reset the connection
 * @conn: the connection
 * @err: the positive errno the socket reports, e.g. ECONNABORTED
 *
 * For a consumer that cannot go on with the stream: TCP sends a reset and
 * the socket reports @err, as for tcp_abort(). The socket stays with its
 * owner, who closes it; @conn stays valid until then.
 *
 * Context: process context, without the socket lock.
 */
void mpa_abort(struct mpa_conn *conn, int err)
{
	tcp_abort(conn->sk, err);
}
EXPORT_SYMBOL_GPL(mpa_abort);

/**
 * mpa_send() - send one ULPDU as one FPDU
 * @conn: the connection
 * @vec: the ULPDU, in pieces
 * @nr: number of pieces
 * @len: total length, at most mpa_conn_mulpdu()
 * @flags: MSG_DONTWAIT, MSG_MORE (more FPDUs follow at once: FPDUs of a
 *	full segment may then share an skb, see Documentation/mpa.rst), or 0
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
	mpa_lock_tx(conn);
	ret = mpa_send_locked(conn, NULL, 0, &it, len, flags | MSG_NOSIGNAL);
	mpa_unlock_tx(conn);
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
 * @flags: MSG_DONTWAIT, MSG_MORE, or 0, as for mpa_send()
 *
 * Context: process context; may sleep unless MSG_DONTWAIT.
 * Return: the ULPDU length, or a negative errno as mpa_send() (never
 * SIGPIPE).
 */
int mpa_sendv(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
	      struct iov_iter *data, u32 data_len, int flags)
{
	int ret;

	mpa_send_begin(conn);
	ret = mpa_sendv_locked(conn, hdr, hdr_len, data, data_len, flags);
	mpa_send_end(conn);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_sendv);

/**
 * mpa_sendv_rx() - mpa_sendv() from the connection's receive path
 * @conn: the connection
 * @hdr: the first octets of the ULPDU
 * @hdr_len: their number
 * @data: the rest, in kernel memory (a kvec or bvec iterator)
 * @data_len: its length; @hdr_len + @data_len at most mpa_conn_mulpdu()
 *
 * For a consumer that answers in its receive callback, as a NIC answers
 * in its receive path: the FPDU goes from there, without a wake-up of
 * another task, with atomic allocations. Only when it can go whole at
 * once and no sender is in the middle of a send (one that takes the
 * connection now waits for the socket lock that the receive path holds
 * until this one is done), and never by a copy into the task's page
 * fragment: the task is whichever one softirq interrupted.
 *
 * Context: a receive callback of the consumer (softirq, or a task with
 * the socket lock); does not sleep.
 * Return: 0, or -EAGAIN when it cannot go now (nothing sent), or another
 * negative errno as mpa_sendv() (nothing sent).
 */
int mpa_sendv_rx(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
		 struct iov_iter *data, u32 data_len)
{
	struct sock *sk = conn->sk;
	gfp_t gfp = sk->sk_allocation;
	int ret;

	/* the last: without scatter-gather TCP copies into the task's pages */
	if (mutex_is_locked(&conn->tx_lock) || conn->tx_busy ||
	    conn->tx_pend_len || conn->tx_train || conn->tx_more ||
	    conn->state != MPA_S_FULL || conn->err || !conn->tx_allowed ||
	    conn->tx_shut || !(sk->sk_route_caps & NETIF_F_SG))
		return -EAGAIN;
	sk->sk_allocation = GFP_ATOMIC;
	conn->tx_rx = true;
	ret = mpa_send_locked(conn, hdr, hdr_len, data, hdr_len + data_len,
			      MSG_DONTWAIT | MSG_NOSIGNAL);
	conn->tx_rx = false;
	sk->sk_allocation = gfp;
	if (ret < 0)
		return ret;
	mpa_mib_inc(conn, MPA_MIB_TX_FROM_RX);
	return 0;
}
EXPORT_SYMBOL_GPL(mpa_sendv_rx);

/**
 * mpa_send_begin() - take the connection for a series of sends
 * @conn: the connection
 *
 * The segments of one message go out under one lock, as a TCP write
 * does: call mpa_sendv_locked() for each, then mpa_send_end(). Received
 * data for the socket waits in TCP's backlog meanwhile (or while a send
 * sleeps for send space, when it is processed).
 *
 * Context: process context; sleeps.
 */
void mpa_send_begin(struct mpa_conn *conn)
{
	mpa_lock_tx(conn);
}
EXPORT_SYMBOL_GPL(mpa_send_begin);

/**
 * mpa_sendv_locked() - mpa_sendv() between mpa_send_begin() and mpa_send_end()
 * @conn: the connection
 * @hdr: the first octets of the ULPDU
 * @hdr_len: their number
 * @data: the rest
 * @data_len: its length; @hdr_len + @data_len at most mpa_conn_mulpdu()
 * @flags: MSG_DONTWAIT, MSG_MORE, or 0, as for mpa_send()
 *
 * Context: process context, after mpa_send_begin(); may sleep unless
 * MSG_DONTWAIT.
 * Return: as mpa_sendv().
 */
int mpa_sendv_locked(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
		     struct iov_iter *data, u32 data_len, int flags)
{
	return mpa_send_locked(conn, hdr, hdr_len, data, hdr_len + data_len,
			       flags | MSG_NOSIGNAL);
}
EXPORT_SYMBOL_GPL(mpa_sendv_locked);

/**
 * mpa_send_msg_locked() - send a message cut into ULPDUs of at most MULPDU
 * @conn: the connection, taken by mpa_send_begin()
 * @msg: the ULP's header of each ULPDU and how much of the message it
 *	carries, see struct mpa_msg
 * @data: the message, consumed in order
 * @flags: MSG_DONTWAIT, MSG_MORE (more follows after the message), or 0;
 *	every ULPDU but the last is sent with MSG_MORE
 *
 * The one call for a message of many ULPDUs, e.g. a DDP message: the
 * connection state and the MULPDU are looked at once per FPDU, not through
 * a call chain per ULPDU, and full FPDUs form trains (Documentation/mpa.rst).
 * Each ULPDU is as large as the MULPDU at the time it is built allows:
 * when the path MTU shrinks in the middle of the message, the next ULPDU
 * is cut to the new size.
 *
 * Context: process context, after mpa_send_begin(); may sleep unless
 * MSG_DONTWAIT.
 * Return: 0 once every ULPDU is with MPA or TCP, or a negative errno as
 * mpa_send(), or what @msg->next returned; -EINVAL if @msg->hdr_len is
 * over MPA_MSG_HDR_MAX. ULPDUs sent before an error stay sent.
 */
int mpa_send_msg_locked(struct mpa_conn *conn, const struct mpa_msg *msg,
			struct iov_iter *data, int flags)
{
	size_t done = 0;

	return mpa_send_msg(conn, msg, data, flags | MSG_NOSIGNAL, &done);
}
EXPORT_SYMBOL_GPL(mpa_send_msg_locked);

/**
 * mpa_send_end() - release the connection taken by mpa_send_begin()
 * @conn: the connection
 *
 * TCP then processes what arrived meanwhile (acknowledgements, data).
 */
void mpa_send_end(struct mpa_conn *conn)
{
	mpa_unlock_tx(conn);
}
EXPORT_SYMBOL_GPL(mpa_send_end);

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
 * mpa_rx_wait_begin() - a task of the consumer waits to receive
 * @conn: a connection bound to a consumer with @rx_kick
 *
 * Until the matching mpa_rx_wait_end(), data-ready in softirq leaves
 * received octets in TCP and calls the consumer's @rx_kick; the task
 * sees mpa_rx_kicked() and parses them with mpa_rx_run(). Nestable
 * and shared: every task that waits calls it once.
 */
void mpa_rx_wait_begin(struct mpa_conn *conn)
{
	atomic_inc(&conn->rx_waiters);
}
EXPORT_SYMBOL_GPL(mpa_rx_wait_begin);

/**
 * mpa_rx_wait_end() - the task stops waiting to receive
 * @conn: the connection
 *
 * What data-ready left in TCP for the waiting tasks is parsed here
 * if none waits any more.
 *
 * Context: process context; may take the socket lock.
 */
void mpa_rx_wait_end(struct mpa_conn *conn)
{
	atomic_dec(&conn->rx_waiters);
	smp_mb__after_atomic();	/* pairs with mpa_rx_to_waiter() */
	if (READ_ONCE(conn->rx_kick))
		mpa_rx_run(conn);
}
EXPORT_SYMBOL_GPL(mpa_rx_wait_end);

/**
 * mpa_rx_kicked() - received octets wait in TCP for mpa_rx_run()
 * @conn: the connection
 *
 * Return: true after the consumer's @rx_kick until mpa_rx_run().
 */
bool mpa_rx_kicked(struct mpa_conn *conn)
{
	return READ_ONCE(conn->rx_kick);
}
EXPORT_SYMBOL_GPL(mpa_rx_kicked);

/**
 * mpa_rx_run() - parse what TCP holds in the caller's context
 * @conn: the connection
 *
 * The consumer's callbacks (@place, @ulpdu, @error, ...) run from here,
 * with the socket lock held; segments that arrive meanwhile are parsed
 * when it is released, still here.
 *
 * Context: process context; takes the socket lock.
 */
void mpa_rx_run(struct mpa_conn *conn)
{
	struct sock *sk = conn->sk;

	lock_sock(sk);
	WRITE_ONCE(conn->rx_kick, false);
	mpa_rx_process(conn);
	release_sock(sk);
}
EXPORT_SYMBOL_GPL(mpa_rx_run);

/**
 * mpa_conn_info() - state and negotiated parameters
 * @conn: the connection
 * @attrs: filled in with what the MPA_INFO option reports
 */
void mpa_conn_info(struct mpa_conn *conn, struct mpa_conn_attrs *attrs)
{
	mpa_get_attrs(conn, attrs);
}
EXPORT_SYMBOL_GPL(mpa_conn_info);
