// SPDX-License-Identifier: GPL-2.0
/*
 * MPA (RFC 5044) as the TCP upper layer protocol "mpa": module
 * parameters, the proto and proto_ops MPA puts on a socket, ULP attach
 * and detach, close, the SOL_MPA socket options, and module init/exit.
 *
 * setsockopt(fd, SOL_TCP, TCP_ULP, "mpa") on an established TCP socket
 * attaches an MPA context. Until MPA is started the socket is a plain
 * TCP stream. MPA_START runs the Request/Reply exchange (mpa_cm.c); in
 * full operation every send is one FPDU (mpa_tx.c) and every receive
 * one ULPDU (mpa_rx.c). In-kernel consumers use mpa_consumer.c.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <net/inet_connection_sock.h>
#include <net/iwarp_compat.h>
#include <net/tcp.h>

#include "mpa.h"

#define CREATE_TRACE_POINTS
#include <trace/events/mpa.h>

/*
 * The connections' work items (receive and transmit backlog, abort,
 * startup timeout, trimming the transmit cache). With a rescuer: a
 * kernel ULP that writes pages back over a connection needs them to run
 * under memory pressure, and its own reclaim workers (nvme-rdma's reset,
 * nvmet's queue release) close connections, which cancels them.
 */
struct workqueue_struct *mpa_wq;

bool mpa_allow_no_crc;
module_param_named(allow_no_crc, mpa_allow_no_crc, bool, 0644);
MODULE_PARM_DESC(allow_no_crc,
		 "Administrator allows sockets to ask for no CRC (MPA_F_NO_CRC); default no");

unsigned int mpa_default_rev = 1;
module_param_named(default_rev, mpa_default_rev, uint, 0644);
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
unsigned int mpa_tx_split_test;
module_param_named(tx_split_test, mpa_tx_split_test, uint, 0644);
MODULE_PARM_DESC(tx_split_test,
		 "Test only: put each FPDU in two skbs, split after this many octets; default 0 (off)");

/*
 * A consumer reads the MULPDU, then sends: should the path MTU drop in
 * between, MPA refuses a ULPDU that no longer fits (-EMSGSIZE) and the
 * consumer cuts it again (ddp_send_msg()). This knob lets the selftests
 * produce that at will: MPA's sends take the MSS as at most this many
 * octets, while the MULPDU the consumer reads stays TCP's.
 */
unsigned int mpa_tx_mss_test;
module_param_named(tx_mss_test, mpa_tx_mss_test, uint, 0644);
MODULE_PARM_DESC(tx_mss_test,
		 "Test only: sends take the MSS as at most this many octets, the MULPDU reported stays TCP's; default 0 (off)");

/*
 * FPDUs are built in page fragments that TCP then takes by reference. TCP's
 * own are the task's: a new 32 KiB page each time the last one is full and
 * still queued, allocated and, with init_on_alloc, zeroed. With this many
 * pages per connection MPA keeps its own and builds FPDUs in those that
 * TCP let go of again; they are freed a second after the last one was
 * taken, and when the connection closes.
 */
unsigned int mpa_tx_page_cache = 256;
module_param_named(tx_page_cache, mpa_tx_page_cache, uint, 0644);
MODULE_PARM_DESC(tx_page_cache,
		 "Transmit pages (32 KiB) MPA keeps per connection to use again, 0 for the task's page fragment; default 256");

enum { MPA_IPV4, MPA_IPV6, MPA_NFAMILIES };

static DEFINE_MUTEX(mpa_prot_lock);
static const struct proto *mpa_base_prot[MPA_NFAMILIES];
static const struct proto_ops *mpa_base_ops[MPA_NFAMILIES];
static struct proto mpa_prot[MPA_NFAMILIES];
static struct proto_ops mpa_ops[MPA_NFAMILIES];

/*
 * mpa_fail() - report an MPA error; nothing more is delivered. Codes 2
 * and 3 leave TCP open so the consumer can send a last message; the
 * startup error 4 closes it.
 */
void mpa_fail(struct mpa_conn *c, u32 code, int err)
{
	struct sock *sk = c->sk;

	if (c->err)
		return;
	err = -err;
	c->err = code;
	trace_mpa_error(sk, code, err);
	if (code >= MPA_ERR_TCP_CLOSED && code <= MPA_ERR_STARTUP)
		mpa_mib_inc(c, MPA_MIB_ERR_TCP_CLOSED + code - MPA_ERR_TCP_CLOSED);
	c->err_errno = err;
	c->rx_stop = true;
	c->rx_ready = false;
	if (mpa_in_startup(c) || code == MPA_ERR_STARTUP)
		mpa_set_state(c, MPA_S_ERROR);
	if (code == MPA_ERR_STARTUP && !c->closing) {
		sock_hold(sk);
		if (!queue_work(mpa_wq, &c->abort_work))
			sock_put(sk);
	}
	WRITE_ONCE(sk->sk_err, err);
	sk_error_report(sk);
	/* a failed startup: mpa_poll() reports EPOLLPRI from now on */
	if (c->state == MPA_S_ERROR)
		mpa_wake_poll(c, EPOLLPRI);
	if (c->consumer)
		c->consumer->error(c, code);
}

/**
 * mpa_wake_poll() - wake poll, epoll and blocked callers of the socket
 * @c: the connection
 * @events: the EPOLL* events that mpa_poll() reports from now on
 *
 * The wakeup key is @events, so that poll() and epoll (edge-triggered
 * too) wake exactly the sleepers that wait for one of them. Callable in
 * any context (softirq, timers, workers, process); it does not sleep.
 */
void mpa_wake_poll(struct mpa_conn *c, __poll_t events)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(c->sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_poll(&wq->wait, events);
	rcu_read_unlock();
}

static void mpa_abort_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, abort_work);
	struct sock *sk = c->sk;

	tcp_abort(sk, c->err_errno);
	sock_put(sk);
}

/*
 * Memory MPA keeps for a socket is charged to the socket's memory cgroup,
 * also when allocated in softirq or by a worker (__GFP_ACCOUNT needs a
 * cgroup to charge); without one, to the caller's.
 */
void *mpa_alloc(struct mpa_conn *c, u32 len, gfp_t gfp)
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

static int mpa_setsockopt_start(struct mpa_conn *c, sockptr_t optval,
				unsigned int optlen)
{
	struct mpa_start_params p;
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
	p = (struct mpa_start_params){
		.role = s->role,
		.flags = s->flags,
		.rev = s->rev,
		.ird = s->ird,
		.ord = s->ord,
		.pd = s->data,
		.pd_len = s->pd_len,
		.lsm = s->data + s->pd_len,
		.lsm_len = s->lsm_len,
	};
	mpa_lock_tx(c);
	ret = mpa_start_locked(c, &p);
	mpa_unlock_tx(c);
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
		mpa_lock_tx(c);
		ret = mpa_answer_locked(c, optname == MPA_REJECT, pd, optlen);
		mpa_unlock_tx(c);
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
	case MPA_RECV_LENS:
		if (optlen != sizeof(val))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		lock_sock(sk);
		c->rx_lens = !!val;
		release_sock(sk);
		return 0;
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

void mpa_fill_stats(const struct mpa_conn *c, struct mpa_stats *stats)
{
	*stats = c->stats;
	stats->rx_fpdus = READ_ONCE(c->rx.ulpdus);
	stats->rx_markers = READ_ONCE(c->rx.nmarkers);
	stats->rx_crc_errors = READ_ONCE(c->rx.crc_errors);
}

void mpa_get_attrs(const struct mpa_conn *c, struct mpa_conn_attrs *a)
{
	memset(a, 0, sizeof(*a));
	a->state = c->state;
	a->role = c->role;
	a->rev = c->rev;
	a->error = c->err;
	a->peer_pd_len = mpa_peer_pd_len(c);
	if (c->rev == 2 && c->frame_have) {
		a->peer_ird = c->v2_peer.ird;
		a->peer_ord = c->v2_peer.ord;
	}
	if (c->state == MPA_S_FULL) {
		a->mulpdu = mpa_mulpdu_locked(c);
		a->ird = c->v2.ird;
		a->ord = c->v2.ord;
		a->p2p = c->v2.p2p;
		a->rtr = c->v2.rtr;
		a->markers_rx = c->rx.markers;
		a->markers_tx = c->markers_tx;
		a->crc = c->crc;
	}
	a->peer_fin = c->peer_fin;
	a->rejected = c->role == MPA_ROLE_INITIATOR && c->state == MPA_S_REJECTED;
}

/* the user-space form (MPA_INFO, sock_diag) of mpa_get_attrs() */
void mpa_fill_info(const struct mpa_conn *c, struct mpa_info *info)
{
	struct mpa_conn_attrs a;

	mpa_get_attrs(c, &a);
	memset(info, 0, sizeof(*info));
	info->state = a.state;
	info->role = a.role;
	info->flags = (a.markers_rx ? MPA_I_MARKERS_RX : 0) |
		      (a.markers_tx ? MPA_I_MARKERS_TX : 0) |
		      (a.crc ? MPA_I_CRC : 0) |
		      (a.peer_fin ? MPA_I_PEER_FIN : 0) |
		      (a.rejected ? MPA_I_REJECTED : 0) |
		      (a.p2p ? MPA_I_P2P : 0);
	info->rev = a.rev;
	info->error = a.error;
	info->mulpdu = a.mulpdu;
	info->peer_pd_len = a.peer_pd_len;
	info->ird = a.ird;
	info->ord = a.ord;
	info->rtr = a.rtr;
	info->peer_ird = a.peer_ird;
	info->peer_ord = a.peer_ord;
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
		mpa_fill_stats(c, &u.stats);
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
	case MPA_RECV_LENS:
		u.val = c->rx_lens;
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

/*
 * poll during and after the startup (Documentation/mpa.rst, "poll"):
 *
 * - EPOLLOUT: FPDUs may be sent (full operation, and for a Responder
 *   rule 4 of RFC 5044 7.1.2 satisfied: the first FPDU arrived) and TCP
 *   has send space. Never during the startup.
 * - EPOLLPRI: the startup ended without full operation: MPA_S_ERROR
 *   (timeout, protocol error, TCP lost) or MPA_S_REJECTED. It stays set.
 *   Entering full operation does not raise it (EPOLLOUT says that), and
 *   TCP urgent data, which MPA does not use, does not raise it while
 *   MPA frames the stream.
 * - EPOLLIN, EPOLLERR, EPOLLHUP: as TCP and mpa_sock_is_readable() give.
 *
 * Each change is woken with its event as the key (mpa_wake_poll()).
 */
static __poll_t mpa_poll(struct file *file, struct socket *sock,
			 struct poll_table_struct *wait)
{
	struct mpa_conn *c = mpa_get(sock->sk);
	__poll_t mask = c->sk_ops->poll(file, sock, wait);
	u8 state = READ_ONCE(c->state);

	if (state == MPA_S_ERROR || state == MPA_S_REJECTED)
		return mask | EPOLLPRI;
	if (state == MPA_S_IDLE)
		return mask;
	mask &= ~EPOLLPRI;
	/* no FPDU may be sent before the startup ends or, for a Responder,
	 * before the first FPDU arrived (RFC 5044 7.1.2 rule 4)
	 */
	if (state != MPA_S_FULL || !READ_ONCE(c->tx_allowed))
		mask &= ~(EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
	return mask;
}

static void mpa_conn_free(struct mpa_conn *c)
{
	mpa_tx_release(c);
	mpa_tx_cache_free(c);
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
	mpa_lock_tx(c);
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
	mpa_unlock_tx(c);

	/* the workers take the socket lock: cancel without it */
	if (cancel_work_sync(&c->abort_work))
		sock_put(sk);
	if (cancel_work_sync(&c->tx_work))
		sock_put(sk);
	if (cancel_work_sync(&c->rx_work))
		sock_put(sk);
	if (cancel_delayed_work_sync(&c->timeout_work))
		sock_put(sk);
	if (cancel_delayed_work_sync(&c->tx_trim_work))
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

/*
 * The end of release_sock(), the backlog done, the socket still owned:
 * TCP's deferred work, then the window update MPA may owe the peer.
 */
static void mpa_release_cb(struct sock *sk)
{
	struct mpa_conn *c = mpa_get(sk);

	c->sk_proto->release_cb(sk);
	if (unlikely(c->rx_wnd_owed))
		mpa_rx_window_update(c);
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
	p->release_cb = mpa_release_cb;

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
	c->mib = mpa_net_mib(sock_net(sk));
	mutex_init(&c->tx_lock);
	INIT_WORK(&c->abort_work, mpa_abort_work);
	INIT_WORK(&c->tx_work, mpa_tx_work);
	INIT_WORK(&c->rx_work, mpa_rx_work);
	INIT_DELAYED_WORK(&c->timeout_work, mpa_timeout_work);
	INIT_DELAYED_WORK(&c->tx_trim_work, mpa_tx_trim_work);
	c->tx_cache_max = min_t(u32, READ_ONCE(mpa_tx_page_cache), U16_MAX);

	write_lock_bh(&sk->sk_callback_lock);
	c->saved_data_ready = sk->sk_data_ready;
	c->saved_write_space = sk->sk_write_space;
	c->saved_state_change = sk->sk_state_change;
	rcu_assign_pointer(inet_csk(sk)->icsk_ulp_data, c);
	mpa_mib_inc(c, MPA_MIB_ATTACHED);
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

struct tcp_ulp_ops mpa_ulp_ops __read_mostly = {
	.name		= "mpa",
	.owner		= THIS_MODULE,
	.init		= mpa_ulp_init,
	.release	= mpa_ulp_release,
	.get_info	= mpa_diag_get_info,
	.get_info_size	= mpa_diag_get_info_size,
};

static int __init mpa_module_init(void)
{
	int ret;

	mpa_wq = alloc_workqueue("mpa", WQ_MEM_RECLAIM, 0);
	if (!mpa_wq)
		return -ENOMEM;
	ret = mpa_crc_init();
	if (ret)
		goto wq;
	ret = mpa_proc_init();
	if (ret)
		goto crc;
	ret = tcp_register_ulp(&mpa_ulp_ops);
	if (ret)
		goto proc;
	return 0;
proc:
	mpa_proc_exit();
crc:
	mpa_crc_exit();
wq:
	destroy_workqueue(mpa_wq);
	return ret;
}

static void __exit mpa_module_exit(void)
{
	tcp_unregister_ulp(&mpa_ulp_ops);
	/* contexts are freed with kfree_rcu() */
	rcu_barrier();
	mpa_proc_exit();
	mpa_crc_exit();
	destroy_workqueue(mpa_wq);
}

module_init(mpa_module_init);
module_exit(mpa_module_exit);

MODULE_DESCRIPTION("MPA (RFC 5044) framing as a TCP upper layer protocol");
MODULE_LICENSE("GPL");
MODULE_ALIAS_TCP_ULP("mpa");
