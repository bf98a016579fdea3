// SPDX-License-Identifier: GPL-2.0
/*
 * The connection manager of iwmpa.ko: the iWARP connection management
 * verbs (struct iw_cm_verbs: connect, accept, reject, listen) over kernel
 * TCP sockets. The MPA startup (RFC 5044 7.1, RFC 6581) is mpa.ko's: a
 * connection endpoint (struct iwmpa_cep) binds its socket to mpa.ko as
 * the in-kernel consumer "iwmpa_cm", starts MPA as Initiator or
 * Responder, and once MPA is in full operation unbinds and hands the
 * socket to the queue pair (iwmpa_qp_start()), which binds DDP and RDMAP
 * on it. The queue pair tells the end of the connection back with
 * iwmpa_cm_qp_ended(). The upcalls to the iWARP CM (id->event_handler())
 * are made from this file's workqueue, never from MPA's callbacks, which
 * run in softirq or with the socket lock held and only record what
 * happened. See Documentation/iwmpa.rst.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sockptr.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/mpa.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <rdma/iw_cm.h>

#include "iwmpa.h"

#define IWMPA_CM_CONSUMER	"iwmpa_cm"

/* connections one run of a listener's accept work takes before yielding */
#define IWMPA_ACCEPT_BATCH	16

static unsigned int iwmpa_mpa_rev = 2;

static int iwmpa_set_mpa_rev(const char *val, const struct kernel_param *kp)
{
	unsigned int rev;
	int ret;

	ret = kstrtouint(val, 0, &rev);
	if (ret)
		return ret;
	if (rev != 1 && rev != 2)
		return -EINVAL;
	return param_set_uint(val, kp);
}

static const struct kernel_param_ops iwmpa_mpa_rev_ops = {
	.set = iwmpa_set_mpa_rev,
	.get = param_get_uint,
};

module_param_cb(mpa_rev, &iwmpa_mpa_rev_ops, &iwmpa_mpa_rev, 0644);
MODULE_PARM_DESC(mpa_rev,
		 "MPA revision of new connections: 1, or 2 (RFC 6581, IRD/ORD negotiated); default 2");

static bool iwmpa_crc = true;
module_param_named(crc, iwmpa_crc, bool, 0644);
MODULE_PARM_DESC(crc,
		 "Ask for MPA CRCs; false prefers none (needs mpa.ko's allow_no_crc); default true");

static bool iwmpa_p2p = true;
module_param_named(p2p, iwmpa_p2p, bool, 0644);
MODULE_PARM_DESC(p2p,
		 "Initiator, revision 2: ask for RFC 6581's peer-to-peer model (an RTR message first); default true");

static unsigned int iwmpa_mpa_timeout_ms = 10000;
module_param_named(mpa_timeout_ms, iwmpa_mpa_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_timeout_ms,
		 "Time for TCP's connect and for the peer's MPA Request or Reply in milliseconds, 0 for none; default 10000");

/*
 * Connection setup and teardown; with a rescuer, like every queue of the
 * data path: the ULPs' reclaim workers (iw_cm_wq, rdma_cm, nvme-rdma's
 * reset) end connections and listeners, which cancels work queued here,
 * and the kernel warns when a reclaim worker waits for a queue without
 * one (check_flush_dependency()).
 */
static struct workqueue_struct *iwmpa_cm_wq;

/*
 * Endpoints closed while a CONNECT_REQUEST holds them (iwmpa_cep.id_ref):
 * accept or reject frees them, unless the iWARP CM dropped the request
 * (no memory for the new cm_id, or the listener being destroyed); once
 * every cm_id is gone, at module exit, what is left here is freed.
 */
static LIST_HEAD(iwmpa_orphans);
static DEFINE_MUTEX(iwmpa_orphans_lock);

/**
 * enum iwmpa_cep_state - where a connection endpoint is
 * @IWMPA_CEP_CONNECTING: active side: the MPA Request is sent (or about
 *	to be), the Reply is awaited
 * @IWMPA_CEP_AWAIT_REQ: passive side: accepted by TCP, the MPA Request is
 *	awaited
 * @IWMPA_CEP_REQ_UP: passive side: IW_CM_EVENT_CONNECT_REQUEST went up,
 *	iwmpa_accept() or iwmpa_reject() is awaited
 * @IWMPA_CEP_RDMA: the queue pair runs on the socket, until
 *	iwmpa_cm_qp_ended()
 * @IWMPA_CEP_CLOSED: the socket is released, nothing more happens
 */
enum iwmpa_cep_state {
	IWMPA_CEP_CONNECTING,
	IWMPA_CEP_AWAIT_REQ,
	IWMPA_CEP_REQ_UP,
	IWMPA_CEP_RDMA,
	IWMPA_CEP_CLOSED,
};

/* what MPA's callbacks report, in iwmpa_cep.events */
#define IWMPA_EV_REQUEST	BIT(0)	/* Responder: the Request came */
#define IWMPA_EV_REPLY		BIT(1)	/* Initiator: the Reply came */
#define IWMPA_EV_ERROR		BIT(2)	/* MPA failed, iwmpa_cep.err says why */
#define IWMPA_EV_CLOSED		BIT(3)	/* the peer half-closed */
#define IWMPA_EV_ULPDU		BIT(4)	/* a ULPDU before the QP took over */

struct iwmpa_listener;

/**
 * struct iwmpa_cep - a connection endpoint: one TCP connection from its
 * creation until the queue pair on it is gone
 * @ref: the endpoint's life (1, dropped when it becomes
 *	%IWMPA_CEP_CLOSED), each queued @work, each caller in a locked
 *	section, and the passive cm_id of a CONNECT_REQUEST (@id_ref)
 * @lock: serialises everything below but @ev_lock's fields: the verbs,
 *	@work and iwmpa_cm_qp_ended()
 * @state: enum iwmpa_cep_state
 * @dev: the device
 * @sock: the TCP socket, NULL once released
 * @sk: its sock, for MPA's callbacks
 * @conn: the MPA connection while @sock is MPA's
 * @cm_id: the connection's cm_id (active: from connect, passive: from
 *	accept), referenced with add_ref()
 * @qp: the queue pair (a reference of iwmpa_get_qp()), from connect or
 *	accept on
 * @listener: passive side: the listener, referenced, until accepted,
 *	rejected or closed
 * @entry: in @listener's pending list meanwhile; once closed with
 *	@id_ref, in iwmpa_orphans
 * @id_ref: passive side: CONNECT_REQUEST went up with this endpoint as
 *	provider_data, a reference that accept or reject drops
 * @ird: active side: the IRD asked for
 * @ord: active side: the ORD asked for
 * @err: the errno of MPA's error, or 0
 * @ev_lock: @events and what MPA's callbacks store
 * @events: IWMPA_EV_* not handled by @work yet
 * @rejected: the Reply had R=1
 * @peer_pd: the peer's private data from its Request or Reply
 * @peer_pd_len: its length
 * @peer_ird: revision 2: the IRD of the peer's Request
 * @peer_ord: revision 2: the ORD of the peer's Request
 * @rev: the MPA revision in use once the peer's frame came
 * @work: handles @events in process context
 */
struct iwmpa_cep {
	struct kref		ref;
	struct mutex		lock;	/* see above */
	enum iwmpa_cep_state	state;
	struct iwmpa_dev	*dev;
	struct socket		*sock;
	struct sock		*sk;
	struct mpa_conn		*conn;
	struct iw_cm_id		*cm_id;
	struct iwmpa_qp		*qp;
	struct iwmpa_listener	*listener;
	struct list_head	entry;
	bool			id_ref;
	u32			ird;
	u32			ord;
	int			err;

	spinlock_t		ev_lock;	/* see above */
	unsigned int		events;
	bool			rejected;
	u8			*peer_pd;
	u16			peer_pd_len;
	u16			peer_ird;
	u16			peer_ord;
	u32			rev;
	struct work_struct	work;
};

/**
 * struct iwmpa_listener - a listening cm_id's socket
 * @ref: the cm_id (until iwmpa_destroy_listen()) and each endpoint on
 *	@pending; the last put drops the reference on @cm_id
 * @lock: @pending and @closing
 * @cm_id: the listening cm_id, referenced with add_ref()
 * @dev: the device
 * @sock: the listening socket
 * @saved_data_ready: its sk_data_ready before the listener's
 * @accept_work: accepts the connections TCP queued
 * @pending: endpoints not accepted nor rejected yet
 * @npending: their number
 * @backlog: at most that many: more connections are reset at once
 * @closing: iwmpa_destroy_listen() began: no new endpoint, no upcall
 */
struct iwmpa_listener {
	struct kref		ref;
	struct mutex		lock;	/* see above */
	struct iw_cm_id		*cm_id;
	struct iwmpa_dev	*dev;
	struct socket		*sock;
	void			(*saved_data_ready)(struct sock *sk);
	struct work_struct	accept_work;
	struct list_head	pending;
	u32			npending;
	u32			backlog;
	bool			closing;
};

static void iwmpa_listener_release(struct kref *ref)
{
	struct iwmpa_listener *l = container_of(ref, struct iwmpa_listener, ref);

	l->cm_id->rem_ref(l->cm_id);
	kfree(l);
}

static void iwmpa_listener_put(struct iwmpa_listener *l)
{
	kref_put(&l->ref, iwmpa_listener_release);
}

static void iwmpa_cep_release(struct kref *ref)
{
	struct iwmpa_cep *cep = container_of(ref, struct iwmpa_cep, ref);

	WARN_ON(cep->sock || cep->qp || cep->cm_id || cep->listener);
	kfree(cep->peer_pd);
	kfree(cep);
}

/* Never the last reference in softirq: the endpoint's own outlives MPA's. */
static void iwmpa_cep_put(struct iwmpa_cep *cep)
{
	kref_put(&cep->ref, iwmpa_cep_release);
}

/* ---- MPA's callbacks: softirq or the socket lock held, no sleeping ---- */

static void iwmpa_cep_event(struct iwmpa_cep *cep, unsigned int ev)
{
	spin_lock_bh(&cep->ev_lock);
	cep->events |= ev;
	spin_unlock_bh(&cep->ev_lock);
	kref_get(&cep->ref);
	if (!queue_work(iwmpa_cm_wq, &cep->work))
		iwmpa_cep_put(cep);
}

/* keep the peer's private data and revision 2 values for the upcall */
static void iwmpa_cep_frame(struct mpa_conn *conn, struct iwmpa_cep *cep,
			    const void *pd, u16 pd_len, unsigned int ev)
{
	struct mpa_conn_attrs a;
	u8 *copy = NULL;

	mpa_conn_info(conn, &a);
	if (pd_len) {
		copy = kmemdup(pd, pd_len, GFP_ATOMIC);
		if (!copy) {
			spin_lock_bh(&cep->ev_lock);
			cep->err = -ENOMEM;
			spin_unlock_bh(&cep->ev_lock);
			ev |= IWMPA_EV_ERROR;
		}
	}
	spin_lock_bh(&cep->ev_lock);
	kfree(cep->peer_pd);
	cep->peer_pd = copy;
	cep->peer_pd_len = copy ? pd_len : 0;
	cep->peer_ird = a.peer_ird;
	cep->peer_ord = a.peer_ord;
	cep->rev = a.rev;
	spin_unlock_bh(&cep->ev_lock);
	iwmpa_cep_event(cep, ev);
}

static void iwmpa_mpa_request(struct mpa_conn *conn, const void *pd, u16 pd_len)
{
	iwmpa_cep_frame(conn, mpa_conn_priv(conn), pd, pd_len, IWMPA_EV_REQUEST);
}

static void iwmpa_mpa_reply(struct mpa_conn *conn, bool rejected,
			    const void *pd, u16 pd_len)
{
	struct iwmpa_cep *cep = mpa_conn_priv(conn);

	spin_lock_bh(&cep->ev_lock);
	cep->rejected = rejected;
	spin_unlock_bh(&cep->ev_lock);
	iwmpa_cep_frame(conn, cep, pd, pd_len, IWMPA_EV_REPLY);
}

/*
 * A ULPDU before the work unbound: only an Initiator can meet one, from a
 * Responder that sent before the Initiator's first FPDU (RFC 5044 7.1.2,
 * rule 4). It cannot be handed on: the connection fails.
 */
static void iwmpa_mpa_ulpdu(struct mpa_conn *conn, const void *data, u32 len)
{
	iwmpa_cep_event(mpa_conn_priv(conn), IWMPA_EV_ULPDU);
}

static void iwmpa_mpa_error(struct mpa_conn *conn, u32 code)
{
	struct iwmpa_cep *cep = mpa_conn_priv(conn);
	int err = READ_ONCE(cep->sk->sk_err);

	/* mpa_fail() set the socket's error: ETIMEDOUT, ECONNRESET, ... */
	if (!err)
		err = code == MPA_ERR_TCP_CLOSED ? ECONNRESET : ECONNABORTED;
	spin_lock_bh(&cep->ev_lock);
	if (!cep->err)
		cep->err = -err;
	spin_unlock_bh(&cep->ev_lock);
	iwmpa_cep_event(cep, IWMPA_EV_ERROR);
}

static void iwmpa_mpa_peer_closed(struct mpa_conn *conn)
{
	iwmpa_cep_event(mpa_conn_priv(conn), IWMPA_EV_CLOSED);
}

static struct mpa_consumer iwmpa_mpa_consumer = {
	.name		= IWMPA_CM_CONSUMER,
	.owner		= THIS_MODULE,
	.request	= iwmpa_mpa_request,
	.reply		= iwmpa_mpa_reply,
	.ulpdu		= iwmpa_mpa_ulpdu,
	.error		= iwmpa_mpa_error,
	.peer_closed	= iwmpa_mpa_peer_closed,
};

/* ---- process context ---- */

static unsigned int iwmpa_cep_take_events(struct iwmpa_cep *cep)
{
	unsigned int ev;

	spin_lock_bh(&cep->ev_lock);
	ev = cep->events;
	cep->events = 0;
	spin_unlock_bh(&cep->ev_lock);
	return ev;
}

static int iwmpa_cep_err(struct iwmpa_cep *cep, int dflt)
{
	int err;

	spin_lock_bh(&cep->ev_lock);
	err = cep->err;
	spin_unlock_bh(&cep->ev_lock);
	return err ? err : dflt;
}

/* Off the listener's pending list; drops the listener reference. */
static void iwmpa_cep_unlist(struct iwmpa_cep *cep)
{
	struct iwmpa_listener *l = cep->listener;

	if (!l)
		return;
	mutex_lock(&l->lock);
	if (!list_empty(&cep->entry)) {
		list_del_init(&cep->entry);
		l->npending--;
	}
	mutex_unlock(&l->lock);
	cep->listener = NULL;
	iwmpa_listener_put(l);
}

/*
 * The endpoint ends: the socket is released (reset if @abort), the
 * references on the QP, the cm_id and the listener dropped, and the
 * endpoint's own reference; the caller holds another one.
 */
static void iwmpa_cep_close(struct iwmpa_cep *cep, bool abort)
{
	lockdep_assert_held(&cep->lock);
	if (cep->state == IWMPA_CEP_CLOSED)
		return;
	cep->state = IWMPA_CEP_CLOSED;
	iwmpa_cep_unlist(cep);
	if (cep->id_ref) {
		mutex_lock(&iwmpa_orphans_lock);
		list_add_tail(&cep->entry, &iwmpa_orphans);
		mutex_unlock(&iwmpa_orphans_lock);
	}
	if (cep->sock) {
		if (abort)
			sock_no_linger(cep->sk);	/* close resets */
		else
			kernel_sock_shutdown(cep->sock, SHUT_RDWR);
		/* MPA's close: no callback of ours runs after it */
		sock_release(cep->sock);
		cep->sock = NULL;
		cep->conn = NULL;
	}
	if (cep->qp) {
		iwmpa_qp_put(&cep->qp->base);
		cep->qp = NULL;
	}
	if (cep->cm_id) {
		cep->cm_id->provider_data = NULL;
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	iwmpa_cep_put(cep);
}

/* accept or reject took the cm_id's reference: the caller drops it */
static void iwmpa_cep_take_id_ref(struct iwmpa_cep *cep)
{
	cep->id_ref = false;
	if (cep->state == IWMPA_CEP_CLOSED) {
		mutex_lock(&iwmpa_orphans_lock);
		list_del_init(&cep->entry);
		mutex_unlock(&iwmpa_orphans_lock);
	}
}

static int iwmpa_cm_upcall(struct iwmpa_cep *cep, struct iw_cm_id *id,
			   enum iw_cm_event_type type, int status)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
	};

	switch (type) {
	case IW_CM_EVENT_CONNECT_REQUEST:
		ev.provider_data = cep;
		/* the peer's IRD limits our ORD, its ORD our IRD */
		if (cep->rev == 2) {
			ev.ird = min_t(u32, cep->peer_ird, RDMAP_MAX_IRD);
			ev.ord = min_t(u32, cep->peer_ord, RDMAP_MAX_ORD);
		} else {
			ev.ird = RDMAP_MAX_IRD;
			ev.ord = RDMAP_MAX_ORD;
		}
		fallthrough;
	case IW_CM_EVENT_CONNECT_REPLY:
		/* the iWARP CM copies it; it carries at most U8_MAX octets */
		ev.private_data = cep->peer_pd;
		ev.private_data_len = min_t(u16, cep->peer_pd_len, U8_MAX);
		break;
	default:
		break;
	}
	if (type == IW_CM_EVENT_CONNECT_REPLY || type == IW_CM_EVENT_ESTABLISHED) {
		ev.ird = cep->ird;
		ev.ord = cep->ord;
	}
	if (cep->sock && type != IW_CM_EVENT_DISCONNECT &&
	    type != IW_CM_EVENT_CLOSE) {
		if (kernel_getsockname(cep->sock,
				       (struct sockaddr *)&ev.local_addr) < 0)
			memset(&ev.local_addr, 0, sizeof(ev.local_addr));
		if (kernel_getpeername(cep->sock,
				       (struct sockaddr *)&ev.remote_addr) < 0)
			memset(&ev.remote_addr, 0, sizeof(ev.remote_addr));
	}
	return id->event_handler(id, &ev);
}

static u32 iwmpa_clamp(u32 val, u32 max)
{
	return clamp_t(u32, val, 1, max);
}

/* Bind the socket to MPA for this endpoint and start MPA in @role. */
static int iwmpa_cep_mpa_start(struct iwmpa_cep *cep, u32 role,
			       const void *pd, u16 pd_len, u32 ird, u32 ord)
{
	u32 timeout = READ_ONCE(iwmpa_mpa_timeout_ms);
	struct mpa_start_params p = {
		.role = role,
		.flags = READ_ONCE(iwmpa_crc) ? 0 : MPA_F_NO_CRC,
		.rev = READ_ONCE(iwmpa_mpa_rev) == 1 ? 1 : 2,
		.pd = pd,
		.pd_len = pd_len,
	};
	struct mpa_conn *conn;
	int ret;

	if (p.rev == 2) {
		p.ird = ird;
		p.ord = ord;
		/*
		 * RFC 5044's Responder sends nothing before the Initiator's
		 * first FPDU: an application whose passive side speaks first
		 * (perftest's latency tests) waits forever unless the
		 * Initiator opens with RFC 6581's RTR. So the Initiator asks
		 * for the peer-to-peer model unless told not to (siw's
		 * Responder agrees to it), and a Responder takes it when asked
		 * for. The RTR is a zero-length RDMA Write or Read: a
		 * zero-length Send would take a receive the application posted.
		 */
		if (role == MPA_ROLE_RESPONDER || READ_ONCE(iwmpa_p2p))
			p.flags |= MPA_F_P2P | MPA_F_RTR_WRITE |
				   MPA_F_RTR_READ;
	}
	conn = mpa_bind(cep->sock, IWMPA_CM_CONSUMER, cep);
	if (IS_ERR(conn))
		return PTR_ERR(conn);
	cep->conn = conn;
	ret = cep->sock->ops->setsockopt(cep->sock, SOL_MPA, MPA_TIMEOUT,
					 KERNEL_SOCKPTR(&timeout),
					 sizeof(timeout));
	if (ret)
		return ret;
	return mpa_start(conn, &p);
}

/*
 * Active side, the Reply or an error came. An accepted Reply: unbind,
 * start the QP, CONNECT_REPLY 0. Otherwise CONNECT_REPLY with the error
 * and the end of the endpoint.
 */
static void iwmpa_active_event(struct iwmpa_cep *cep, unsigned int ev)
{
	struct iw_cm_id *id = cep->cm_id;
	struct mpa_conn_attrs a;
	bool rejected;
	int status;

	spin_lock_bh(&cep->ev_lock);
	rejected = cep->rejected;
	spin_unlock_bh(&cep->ev_lock);

	if ((ev & IWMPA_EV_REPLY) && rejected) {
		status = -ECONNREFUSED;
		goto fail;
	}
	if (ev & (IWMPA_EV_ERROR | IWMPA_EV_ULPDU | IWMPA_EV_CLOSED)) {
		status = iwmpa_cep_err(cep, -ECONNRESET);
		goto fail;
	}
	if (!(ev & IWMPA_EV_REPLY))
		return;

	mpa_unbind(cep->conn);
	/* no callback after the unbind: what came meanwhile is all */
	ev = iwmpa_cep_take_events(cep);
	mpa_conn_info(cep->conn, &a);
	if ((ev & (IWMPA_EV_ERROR | IWMPA_EV_ULPDU | IWMPA_EV_CLOSED)) ||
	    a.state != MPA_S_FULL) {
		status = iwmpa_cep_err(cep, -ECONNRESET);
		goto fail;
	}
	if (a.rev == 2) {
		cep->ird = iwmpa_clamp(a.ird, RDMAP_MAX_IRD);
		cep->ord = iwmpa_clamp(a.ord, RDMAP_MAX_ORD);
	}
	status = iwmpa_qp_start(cep->qp, cep, cep->sock, cep->ird, cep->ord);
	if (status)
		goto fail;
	cep->state = IWMPA_CEP_RDMA;
	iwmpa_cm_upcall(cep, id, IW_CM_EVENT_CONNECT_REPLY, 0);
	return;

fail:
	iwmpa_cm_upcall(cep, id, IW_CM_EVENT_CONNECT_REPLY, status);
	iwmpa_cep_close(cep, status != -ECONNREFUSED);
}

/* Passive side, waiting for the Request: CONNECT_REQUEST or the end. */
static void iwmpa_passive_event(struct iwmpa_cep *cep, unsigned int ev)
{
	struct iwmpa_listener *l = cep->listener;
	int ret = -ECONNABORTED;

	if ((ev & (IWMPA_EV_ERROR | IWMPA_EV_ULPDU | IWMPA_EV_CLOSED)) || !l) {
		iwmpa_cep_close(cep, true);
		return;
	}
	if (!(ev & IWMPA_EV_REQUEST))
		return;
	mutex_lock(&l->lock);
	if (!l->closing) {
		kref_get(&cep->ref);
		cep->id_ref = true;
		cep->state = IWMPA_CEP_REQ_UP;
		ret = iwmpa_cm_upcall(cep, l->cm_id,
				      IW_CM_EVENT_CONNECT_REQUEST, 0);
		if (ret) {
			/* not queued: no cm_id will come for it */
			cep->id_ref = false;
			cep->state = IWMPA_CEP_AWAIT_REQ;
			iwmpa_cep_put(cep);
		}
	}
	mutex_unlock(&l->lock);
	if (ret)
		iwmpa_cep_close(cep, true);
}

static void iwmpa_cep_work(struct work_struct *work)
{
	struct iwmpa_cep *cep = container_of(work, struct iwmpa_cep, work);
	unsigned int ev;

	mutex_lock(&cep->lock);
	ev = iwmpa_cep_take_events(cep);
	switch (cep->state) {
	case IWMPA_CEP_CONNECTING:
		iwmpa_active_event(cep, ev);
		break;
	case IWMPA_CEP_AWAIT_REQ:
		iwmpa_passive_event(cep, ev);
		break;
	case IWMPA_CEP_REQ_UP:
		/* the peer left before the decision: accept will fail */
		if (ev & (IWMPA_EV_ERROR | IWMPA_EV_ULPDU | IWMPA_EV_CLOSED))
			iwmpa_cep_close(cep, true);
		break;
	default:
		break;
	}
	mutex_unlock(&cep->lock);
	iwmpa_cep_put(cep);
}

static struct iwmpa_cep *iwmpa_cep_alloc(struct iwmpa_dev *dev,
					 struct socket *sock,
					 enum iwmpa_cep_state state)
{
	struct iwmpa_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);

	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	mutex_init(&cep->lock);
	spin_lock_init(&cep->ev_lock);
	INIT_WORK(&cep->work, iwmpa_cep_work);
	INIT_LIST_HEAD(&cep->entry);
	cep->state = state;
	cep->dev = dev;
	cep->sock = sock;
	cep->sk = sock->sk;
	return cep;
}

static int iwmpa_addr_len(const struct sockaddr_storage *addr)
{
	switch (addr->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

/**
 * iwmpa_connect() - iw_cm_verbs' connect: open an active connection
 * @id: the cm_id; m_local_addr and m_remote_addr are the addresses
 * @param: private data for the MPA Request, IRD, ORD and the QP number
 *
 * Connects TCP (blocking, for at most mpa_timeout_ms), then starts MPA as
 * Initiator with the module parameters mpa_rev and crc. The Reply, a
 * reject, an error or the startup timeout (mpa_timeout_ms) is told with
 * IW_CM_EVENT_CONNECT_REPLY.
 *
 * Context: process context; sleeps.
 * Return: 0, or a negative errno (then no event follows): -ETIMEDOUT when
 * TCP did not connect in time, TCP's errno when it failed.
 */
int iwmpa_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct sockaddr_storage *laddr = &id->m_local_addr;
	struct sockaddr_storage *raddr = &id->m_remote_addr;
	u32 timeout = READ_ONCE(iwmpa_mpa_timeout_ms);
	int len = iwmpa_addr_len(laddr);
	struct iwmpa_cep *cep;
	struct socket *sock;
	struct ib_qp *ibqp;
	struct iwmpa_qp *qp;
	int ret;

	if (!len || raddr->ss_family != laddr->ss_family)
		return -EAFNOSUPPORT;
	ibqp = iwmpa_get_qp(id->device, param->qpn);
	if (!ibqp)
		return -EINVAL;
	qp = to_iwmpa_qp(ibqp);
	ret = sock_create_kern(dev_net(qp->dev->netdev), laddr->ss_family,
			       SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		goto err_qp;
	sock_set_reuseaddr(sock->sk);
	if (laddr->ss_family == AF_INET6 && id->afonly) {
		ret = ip6_sock_set_v6only(sock->sk);
		if (ret)
			goto err_sock;
	}
	ret = kernel_bind(sock, (struct sockaddr *)laddr, len);
	if (ret)
		goto err_sock;
	/*
	 * TCP's connect waits at most mpa_timeout_ms too, not the two
	 * minutes of its SYN retries: the caller (rdma_connect(), or
	 * rdma_cm's handler for a kernel ULP) sleeps in it.
	 */
	if (timeout)
		sock->sk->sk_sndtimeo = msecs_to_jiffies(timeout);
	ret = kernel_connect(sock, (struct sockaddr *)raddr, len, 0);
	sock->sk->sk_sndtimeo = MAX_SCHEDULE_TIMEOUT;
	if (ret == -EINPROGRESS)
		ret = -ETIMEDOUT;
	if (ret)
		goto err_sock;

	cep = iwmpa_cep_alloc(qp->dev, sock, IWMPA_CEP_CONNECTING);
	if (!cep) {
		ret = -ENOMEM;
		goto err_sock;
	}
	cep->qp = qp;
	cep->cm_id = id;
	id->add_ref(id);
	cep->ird = iwmpa_clamp(param->ird, RDMAP_MAX_IRD);
	cep->ord = iwmpa_clamp(param->ord, RDMAP_MAX_ORD);

	kref_get(&cep->ref);
	mutex_lock(&cep->lock);
	ret = iwmpa_cep_mpa_start(cep, MPA_ROLE_INITIATOR, param->private_data,
				  param->private_data_len, cep->ird, cep->ord);
	if (ret) {
		/* drops the references on the QP and the cm_id */
		iwmpa_cep_close(cep, true);
	} else {
		id->provider_data = cep;
	}
	mutex_unlock(&cep->lock);
	iwmpa_cep_put(cep);
	return ret;

err_sock:
	sock_release(sock);
err_qp:
	iwmpa_qp_put(ibqp);
	return ret;
}

/**
 * iwmpa_accept() - iw_cm_verbs' accept: accept a CONNECT_REQUEST
 * @id: the new cm_id of the request; provider_data is its endpoint
 * @param: private data for the MPA Reply, IRD, ORD and the QP number
 *
 * Sends the MPA Reply, hands the connection to the queue pair and sends
 * IW_CM_EVENT_ESTABLISHED. In revision 2 the IRD is the one the Reply
 * offered and the ORD at most the peer's IRD.
 *
 * Context: process context; sleeps.
 * Return: 0, or a negative errno (then the connection is gone and no
 * event follows).
 */
int iwmpa_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct iwmpa_cep *cep = id->provider_data;
	struct mpa_conn_attrs a;
	struct ib_qp *ibqp;
	u32 ird, ord;
	int ret;

	if (!cep)
		return -EINVAL;
	mutex_lock(&cep->lock);
	if (!cep->id_ref) {
		mutex_unlock(&cep->lock);
		return -EINVAL;
	}
	/* the cm_id's reference: dropped below, the endpoint's stays */
	iwmpa_cep_take_id_ref(cep);
	if (cep->state != IWMPA_CEP_REQ_UP) {
		ret = iwmpa_cep_err(cep, -ECONNRESET);
		id->provider_data = NULL;
		goto out;
	}
	iwmpa_cep_unlist(cep);
	cep->cm_id = id;
	id->add_ref(id);
	ibqp = iwmpa_get_qp(id->device, param->qpn);
	if (!ibqp) {
		ret = -EINVAL;
		goto err;
	}
	cep->qp = to_iwmpa_qp(ibqp);

	/*
	 * Unbound before the Reply goes: the Initiator's first FPDUs may
	 * follow it at once, and MPA keeps them for the QP's DDP stream.
	 */
	mpa_unbind(cep->conn);
	if (iwmpa_cep_take_events(cep) & (IWMPA_EV_ERROR | IWMPA_EV_CLOSED)) {
		ret = iwmpa_cep_err(cep, -ECONNRESET);
		goto err;
	}
	ret = mpa_accept(cep->conn, param->private_data,
			 param->private_data_len);
	if (ret)
		goto err;
	mpa_conn_info(cep->conn, &a);
	if (a.rev == 2) {
		ird = iwmpa_clamp(a.ird, RDMAP_MAX_IRD);
		ord = iwmpa_clamp(min(a.ord, param->ord), RDMAP_MAX_ORD);
	} else {
		ird = iwmpa_clamp(param->ird, RDMAP_MAX_IRD);
		ord = iwmpa_clamp(param->ord, RDMAP_MAX_ORD);
	}
	ret = iwmpa_qp_start(cep->qp, cep, cep->sock, ird, ord);
	if (ret)
		goto err;
	cep->ird = ird;
	cep->ord = ord;
	cep->state = IWMPA_CEP_RDMA;
	iwmpa_cm_upcall(cep, id, IW_CM_EVENT_ESTABLISHED, 0);
	goto out;

err:
	iwmpa_cep_close(cep, true);
out:
	mutex_unlock(&cep->lock);
	iwmpa_cep_put(cep);
	return ret;
}

/**
 * iwmpa_reject() - iw_cm_verbs' reject: refuse a CONNECT_REQUEST
 * @id: the new cm_id of the request; provider_data is its endpoint
 * @pd: private data for the MPA Reply (with R=1)
 * @pd_len: its length
 *
 * Sends the rejecting Reply and closes the connection.
 *
 * Context: process context; sleeps.
 * Return: 0, or what mpa_reject() returned.
 */
int iwmpa_reject(struct iw_cm_id *id, const void *pd, u8 pd_len)
{
	struct iwmpa_cep *cep = id->provider_data;
	int ret = 0;

	if (!cep)
		return -EINVAL;
	mutex_lock(&cep->lock);
	if (!cep->id_ref) {
		mutex_unlock(&cep->lock);
		return -EINVAL;
	}
	iwmpa_cep_take_id_ref(cep);
	id->provider_data = NULL;
	if (cep->state == IWMPA_CEP_REQ_UP) {
		ret = mpa_reject(cep->conn, pd, pd_len);
		/* a FIN after the Reply, unless it could not be sent */
		iwmpa_cep_close(cep, ret != 0);
	}
	mutex_unlock(&cep->lock);
	iwmpa_cep_put(cep);
	return ret;
}

/**
 * iwmpa_cm_qp_ended() - the queue pair on an endpoint is gone
 * @cep: the endpoint given to iwmpa_qp_start()
 * @graceful: the connection closed without an error
 *
 * Sends IW_CM_EVENT_DISCONNECT and IW_CM_EVENT_CLOSE (status 0, or
 * -ECONNRESET unless @graceful), closes the socket and drops the
 * references on the QP and the cm_id. Only the first call for an
 * endpoint does something.
 *
 * Context: process context, without the QP's state_lock; sleeps.
 */
void iwmpa_cm_qp_ended(struct iwmpa_cep *cep, bool graceful)
{
	int status = graceful ? 0 : -ECONNRESET;

	kref_get(&cep->ref);
	mutex_lock(&cep->lock);
	if (cep->state == IWMPA_CEP_RDMA) {
		iwmpa_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_DISCONNECT, status);
		iwmpa_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_CLOSE, status);
		/* RDMAP reset the connection already if it was abortive */
		iwmpa_cep_close(cep, false);
	}
	mutex_unlock(&cep->lock);
	iwmpa_cep_put(cep);
}

/* ---- listeners ---- */

/* A connection TCP accepted: an endpoint that waits for the Request. */
static void iwmpa_listen_new(struct iwmpa_listener *l, struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct iwmpa_cep *cep;
	int ret;

	/* the child inherited the listener's data-ready */
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = l->saved_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);

	cep = iwmpa_cep_alloc(l->dev, sock, IWMPA_CEP_AWAIT_REQ);
	if (!cep) {
		sock_no_linger(sk);
		sock_release(sock);
		return;
	}
	kref_get(&cep->ref);
	mutex_lock(&cep->lock);
	mutex_lock(&l->lock);
	/* a peer that opens connections and sends nothing is bounded */
	ret = l->closing || l->npending >= l->backlog ? -ECONNREFUSED : 0;
	if (!ret) {
		kref_get(&l->ref);
		cep->listener = l;
		list_add_tail(&cep->entry, &l->pending);
		l->npending++;
	}
	mutex_unlock(&l->lock);
	if (!ret)
		ret = iwmpa_cep_mpa_start(cep, MPA_ROLE_RESPONDER, NULL, 0,
					  RDMAP_MAX_IRD, RDMAP_MAX_ORD);
	if (ret)
		iwmpa_cep_close(cep, true);
	mutex_unlock(&cep->lock);
	iwmpa_cep_put(cep);
}

static void iwmpa_listen_work(struct work_struct *work)
{
	struct iwmpa_listener *l = container_of(work, struct iwmpa_listener,
						accept_work);
	struct socket *sock;
	int n;

	for (n = 0; n < IWMPA_ACCEPT_BATCH; n++) {
		if (READ_ONCE(l->closing))
			return;
		if (kernel_accept(l->sock, &sock, O_NONBLOCK))
			return;
		iwmpa_listen_new(l, sock);
	}
	/* more may wait: the others on the workqueue go first */
	queue_work(iwmpa_cm_wq, &l->accept_work);
}

/* softirq: TCP queued a connection on the listening socket */
static void iwmpa_listen_data_ready(struct sock *sk)
{
	struct iwmpa_listener *l;

	read_lock_bh(&sk->sk_callback_lock);
	rcu_read_lock();
	l = __rcu_dereference_sk_user_data_with_flags(sk, SK_USER_DATA_NOCOPY);
	/* accepted children inherit this callback, but not the listener */
	if (l && sk->sk_state == TCP_LISTEN)
		queue_work(iwmpa_cm_wq, &l->accept_work);
	rcu_read_unlock();
	read_unlock_bh(&sk->sk_callback_lock);
}

/**
 * iwmpa_create_listen() - iw_cm_verbs' create_listen: listen for requests
 * @id: the listening cm_id; m_local_addr is the address, perhaps the
 *	wildcard (then only connections through the device's netdev)
 * @backlog: TCP's backlog, and the most connections that may wait for
 *	their Request or for accept or reject
 *
 * Each connection that arrives starts MPA as Responder; its Request is
 * told with IW_CM_EVENT_CONNECT_REQUEST.
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno.
 */
int iwmpa_create_listen(struct iw_cm_id *id, int backlog)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(id->device);
	struct sockaddr_storage *laddr = &id->m_local_addr;
	int len = iwmpa_addr_len(laddr);
	struct iwmpa_listener *l;
	struct socket *sock;
	struct sock *sk;
	bool any;
	int ret;

	if (!len)
		return -EAFNOSUPPORT;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	ret = sock_create_kern(dev_net(dev->netdev), laddr->ss_family,
			       SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		goto err_free;
	sk = sock->sk;
	sock_set_reuseaddr(sk);
	if (laddr->ss_family == AF_INET6) {
		any = ipv6_addr_any(&((struct sockaddr_in6 *)laddr)->sin6_addr);
		if (id->afonly) {
			ret = ip6_sock_set_v6only(sk);
			if (ret)
				goto err_sock;
		}
	} else {
		any = ipv4_is_zeronet(((struct sockaddr_in *)laddr)->sin_addr.s_addr);
	}
	/*
	 * A wildcard listen is one per device, as siw's: the listeners of
	 * two devices on the same port do not collide.
	 */
	if (any) {
		ret = sock_bindtoindex(sk, dev->netdev->ifindex, true);
		if (ret)
			goto err_sock;
	}
	ret = kernel_bind(sock, (struct sockaddr *)laddr, len);
	if (ret)
		goto err_sock;

	kref_init(&l->ref);
	mutex_init(&l->lock);
	INIT_WORK(&l->accept_work, iwmpa_listen_work);
	INIT_LIST_HEAD(&l->pending);
	l->cm_id = id;
	l->dev = dev;
	l->sock = sock;
	l->backlog = max(backlog, 1);
	write_lock_bh(&sk->sk_callback_lock);
	l->saved_data_ready = sk->sk_data_ready;
	__rcu_assign_sk_user_data_with_flags(sk, l, SK_USER_DATA_NOCOPY);
	sk->sk_data_ready = iwmpa_listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);

	ret = kernel_listen(sock, backlog);
	if (ret) {
		write_lock_bh(&sk->sk_callback_lock);
		sk->sk_data_ready = l->saved_data_ready;
		rcu_assign_sk_user_data(sk, NULL);
		write_unlock_bh(&sk->sk_callback_lock);
		goto err_sock;
	}
	id->add_ref(id);
	id->provider_data = l;
	return 0;

err_sock:
	sock_release(sock);
err_free:
	kfree(l);
	return ret;
}

/**
 * iwmpa_destroy_listen() - iw_cm_verbs' destroy_listen: stop listening
 * @id: the listening cm_id
 *
 * Closes the listening socket and every connection whose Request was not
 * told yet or whose CONNECT_REQUEST was neither accepted nor rejected
 * (their accept then fails). No event goes to @id after this returns;
 * the reference on it goes with the last of those connections.
 *
 * Context: process context; sleeps.
 * Return: 0.
 */
int iwmpa_destroy_listen(struct iw_cm_id *id)
{
	struct iwmpa_listener *l = id->provider_data;
	struct iwmpa_cep *cep;
	struct sock *sk;

	if (!l)
		return 0;
	id->provider_data = NULL;
	sk = l->sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = l->saved_data_ready;
	rcu_assign_sk_user_data(sk, NULL);
	write_unlock_bh(&sk->sk_callback_lock);

	mutex_lock(&l->lock);
	WRITE_ONCE(l->closing, true);
	mutex_unlock(&l->lock);
	cancel_work_sync(&l->accept_work);
	sock_release(l->sock);
	l->sock = NULL;

	mutex_lock(&l->lock);
	while (!list_empty(&l->pending)) {
		cep = list_first_entry(&l->pending, struct iwmpa_cep, entry);
		list_del_init(&cep->entry);
		l->npending--;
		kref_get(&cep->ref);
		mutex_unlock(&l->lock);

		mutex_lock(&cep->lock);
		if (cep->listener == l)
			iwmpa_cep_close(cep, true);
		mutex_unlock(&cep->lock);
		iwmpa_cep_put(cep);

		mutex_lock(&l->lock);
	}
	mutex_unlock(&l->lock);
	iwmpa_listener_put(l);
	return 0;
}

/**
 * iwmpa_cm_init() - module init of the connection manager
 *
 * Return: 0 or a negative errno.
 */
int iwmpa_cm_init(void)
{
	int ret;

	iwmpa_cm_wq = alloc_workqueue("iwmpa_cm", WQ_MEM_RECLAIM, 0);
	if (!iwmpa_cm_wq)
		return -ENOMEM;
	ret = mpa_register_consumer(&iwmpa_mpa_consumer);
	if (ret) {
		destroy_workqueue(iwmpa_cm_wq);
		iwmpa_cm_wq = NULL;
	}
	return ret;
}

/**
 * iwmpa_cm_exit() - module exit of the connection manager
 *
 * Every listener and connection is gone (the RDMA core destroyed the
 * cm_ids before the devices); what is queued still runs, and the
 * endpoints of requests the iWARP CM dropped are freed.
 */
void iwmpa_cm_exit(void)
{
	struct iwmpa_cep *cep, *tmp;

	destroy_workqueue(iwmpa_cm_wq);
	iwmpa_cm_wq = NULL;
	mpa_unregister_consumer(&iwmpa_mpa_consumer);
	/* no cm_id is left to accept or reject them */
	list_for_each_entry_safe(cep, tmp, &iwmpa_orphans, entry) {
		list_del_init(&cep->entry);
		cep->id_ref = false;
		iwmpa_cep_put(cep);
	}
}
