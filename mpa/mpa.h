/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA module internals shared between its source files: mpa_main.c
 * (ULP glue, socket options), mpa_cm.c (startup), mpa_tx.c and
 * mpa_rx.c (data path), mpa_consumer.c (in-kernel consumer API),
 * mpa_diag.c (sock_diag), mpa_proc.c (/proc/net/mpa_stat).
 */
#ifndef _MPA_H
#define _MPA_H

#include <linux/bvec.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/mpa.h>
#include <net/sock.h>

#include <trace/events/mpa.h>

#include "mpa_proto.h"

/* largest "last streaming message" MPA_START accepts */
#define MPA_MAX_LSM_LEN	65536

/*
 * Page fragments one FPDU train may span: a GSO skb of 64 KiB takes 45
 * full segments of an Ethernet MTU, and a train starts wherever the
 * task's 32 KiB fragment has room left.
 */
#define MPA_TRAIN_FRAGS	3

/* ULPDUs one recvmsg() returns at most with MPA_RECV_LENS */
#define MPA_RECV_LENS_MAX	64

/**
 * struct mpa_conn - per-socket MPA context
 * @sk: the TCP socket
 * @sk_proto: the socket's proto before MPA was attached
 * @sk_ops: the socket's proto_ops before MPA was attached
 * @saved_data_ready: sk_data_ready before MPA
 * @saved_write_space: sk_write_space before MPA
 * @saved_state_change: sk_state_change before MPA
 * @state: enum mpa_state
 * @role: MPA_ROLE_*, 0 before MPA_START
 * @rev: MPA revision: the highest offered until the peer's frame, then the
 *	one in use
 * @v2_local: revision 2 values of MPA_START
 * @v2_peer: revision 2 values of the peer's frame
 * @v2: negotiated revision 2 values
 * @peer_pd_off: octets of enhanced data before the peer's private data
 * @lflags: local MPA_F_* flags given to MPA_START
 * @closing: close has begun, deferred work must do nothing
 * @rx_stop: leave received data in TCP (ULPDU waiting, startup decision,
 *	error, or streaming mode)
 * @rx_ready: a ULPDU is waiting in @rxbuf for recvmsg
 * @rx_torn: the consumer unbound while a ULPDU was being placed; the rest
 *	of that ULPDU is dropped
 * @rx_defer: recvmsg() left the next FPDUs in TCP for the next recvmsg()
 *	to copy straight into its caller's buffer (mpa_rx_direct())
 * @rx_taken: octets of FPDUs at the head of TCP's receive queue that
 *	recvmsg() copied out but TCP was not told of yet (mpa_rx_next());
 *	only with @rx_defer
 * @rx_kick: data-ready left octets in TCP for a waiting task of the
 *	consumer (mpa_rx_wait_begin()), not parsed yet
 * @rx_waiters: tasks of the consumer between mpa_rx_wait_begin() and
 *	mpa_rx_wait_end()
 * @rx_wnd_owed: octets were consumed in the socket owner's backlog, where
 *	TCP's ACKs count the backlog as queued: mpa_release_cb() may owe the
 *	peer a window update (mpa_rx_window_update())
 * @rx_lens: MPA_RECV_LENS: recvmsg() returns the ULPDUs that are ready and
 *	fit, with an MPA_CMSG_LENS control message
 * @tx_allowed: rule 4 of RFC 5044 7.1.2 permits sending FPDUs
 * @peer_fin: the peer half-closed on an FPDU boundary
 * @markers_tx: we insert markers
 * @crc: CRCs are generated and checked
 * @err: RFC 5044 error code, 0 if none
 * @err_errno: the errno that goes with @err
 * @timeout_ms: startup timeout
 * @tx_base: TCP write_seq of our first octet of full operation
 * @tx_page: the page of the FPDU being sent (a reference of ours), NULL
 *	when it is in @tx_buf
 * @tx_buf: the FPDU being sent when no page could hold it, NULL otherwise
 * @tx_pend_off: offset of the unsent rest of that FPDU in @tx_page or @tx_buf
 * @tx_pend_len: length of what MPA holds unsent: that rest, after the
 *	@tx_frag_len octets of a train's earlier fragments
 * @tx_frag: a train's earlier page fragments, full, when the train goes on
 *	in @tx_page: each a reference of ours, and the range of its unsent
 *	octets (empty once sent)
 * @tx_nfrag: number of entries in @tx_frag
 * @tx_frag_len: unsent octets in @tx_frag, counted in @tx_pend_len
 * @tx_train_frags: skb frags TCP needs for the octets in @tx_frag
 * @tx_train_left: octets the train may still take (one GSO skb), 0 once
 *	it is closed
 * @tx_split: octets to send before the rest of the FPDU starts a new skb
 *	(tx_split_test), 0 normally
 * @tx_train: the FPDUs at @tx_page are a train that waits for more, each
 *	within one segment (mpa_send_locked())
 * @tx_more: the sender has more FPDUs to follow (MSG_MORE): TCP may
 *	hold a short skb for them
 * @tx_busy: a flush is sending (and may sleep without the socket lock)
 * @tx_begun: some of what MPA holds is in TCP already: the rest continues
 *	TCP's last skb
 * @tx_shut: shutdown(SHUT_WR) was called: no new FPDU is accepted
 * @tx_fin: the FIN waits until the rest of the FPDU is in TCP
 * @tx_lock: serialises senders and the write-space worker
 * @tx_pfrag: the page fragment FPDUs are built in when MPA keeps its own
 *	pages (@tx_cache_max), instead of the task's or socket's
 * @tx_cache: earlier pages of @tx_pfrag, oldest first from @tx_cache_head,
 *	@tx_cache_n of them: a reference of ours each, reused once TCP let
 *	go of them (mpa_tx_frag_refill())
 * @tx_cache_max: room in @tx_cache (module parameter tx_page_cache when
 *	the connection was made), 0 when MPA uses the task's page fragment
 * @tx_own: FPDUs are built in @tx_pfrag: set by the first train (bulk
 *	sending); before it, and without @tx_cache_max, in the task's page
 *	fragment, which connections that send small messages share
 * @tx_rx: a send from the receive path (mpa_sendv_rx()) runs: atomic
 *	allocations, the socket's page fragment, no buffer TCP copies from
 * @tx_trim_work: frees the pages of @tx_cache that TCP let go of, a
 *	second after the last page was taken
 * @frame_have: octets of the peer's Request/Reply received
 * @peer: decoded header of the peer's Request/Reply
 * @frame: the peer's Request/Reply frame: room for the largest from
 *	MPA_START on, only the @frame_have octets received once it is complete
 * @rx: FPDU decoder; @rx.buf is allocated when a ULPDU has to be buffered
 *	(user space or a consumer without @place) and freed when idle
 * @rx_buf_wait: @rx_work is to allocate @rx.buf
 * @stats: transmit counters (receive counters live in @rx)
 * @consumer: bound in-kernel consumer, NULL for user space
 * @consumer_priv: the consumer's cookie
 * @abort_work: closes TCP after error 4
 * @mib: the counters of the socket's network namespace (per CPU)
 * @tx_work: sends the rest of an FPDU when space comes back
 * @rx_work: allocates the receive buffer when softirq could not
 * @timeout_work: startup timeout
 * @rcu: for freeing after readers of icsk_ulp_data are gone
 */
struct mpa_conn {
	struct sock		*sk;
	struct proto		*sk_proto;
	const struct proto_ops	*sk_ops;
	void			(*saved_data_ready)(struct sock *sk);
	void			(*saved_write_space)(struct sock *sk);
	void			(*saved_state_change)(struct sock *sk);

	u8			state;
	u8			role;
	u8			rev;
	struct mpa_v2_info	v2_local;
	struct mpa_v2_info	v2_peer;
	struct mpa_v2_info	v2;
	u16			peer_pd_off;
	u32			lflags;
	bool			closing;
	bool			rx_stop;
	bool			rx_ready;
	bool			rx_torn;
	bool			rx_defer;
	bool			rx_kick;
	atomic_t		rx_waiters;
	u32			rx_taken;
	bool			rx_wnd_owed;
	bool			rx_lens;
	bool			tx_allowed;
	bool			peer_fin;
	bool			markers_tx;
	bool			crc;
	u32			err;
	int			err_errno;
	u32			timeout_ms;

	u32			tx_base;
	struct page		*tx_page;
	u8			*tx_buf;
	u32			tx_pend_off;
	u32			tx_pend_len;
	struct bio_vec		tx_frag[MPA_TRAIN_FRAGS - 1];
	u8			tx_nfrag;
	u8			tx_train_frags;
	u32			tx_frag_len;
	u32			tx_train_left;
	u32			tx_split;
	bool			tx_train;
	bool			tx_more;
	bool			tx_busy;
	bool			tx_begun;
	bool			tx_shut;
	bool			tx_fin;
	struct mutex		tx_lock;	/* see above */
	struct page_frag	tx_pfrag;
	struct page		**tx_cache;
	u16			tx_cache_max;
	bool			tx_own;
	bool			tx_rx;
	u16			tx_cache_head;
	u16			tx_cache_n;
	struct delayed_work	tx_trim_work;

	u32			frame_have;
	struct mpa_frame_info	peer;
	u8			*frame;

	struct mpa_dec		rx;
	bool			rx_buf_wait;
	struct mpa_stats	stats;

	struct mpa_consumer	*consumer;
	void			*consumer_priv;

	struct work_struct	abort_work;
	struct work_struct	tx_work;
	unsigned long __percpu	*mib;
	struct work_struct	rx_work;
	struct delayed_work	timeout_work;
	struct rcu_head		rcu;
};

static inline struct mpa_conn *mpa_get(const struct sock *sk)
{
	/* icsk_ulp_data is RCU only for sock_diag readers */
	return (__force struct mpa_conn *)inet_csk(sk)->icsk_ulp_data;
}

/* The socket speaks MPA frames (as opposed to a plain TCP stream). */
static inline bool mpa_framing(const struct mpa_conn *c)
{
	return c->state != MPA_S_IDLE && c->state != MPA_S_REJECTED;
}

static inline bool mpa_is_responder(const struct mpa_conn *c)
{
	return c->role == MPA_ROLE_RESPONDER;
}

static inline bool mpa_in_startup(const struct mpa_conn *c)
{
	return c->state == MPA_S_REQ_SENT || c->state == MPA_S_REQ_WAIT ||
	       c->state == MPA_S_REQ_RCVD;
}

/*
 * Senders hold @tx_lock, then the socket lock: @tx_lock keeps a flush
 * that sleeps without the socket lock (mpa_tx_flush()) the only one.
 */
static inline void mpa_lock_tx(struct mpa_conn *c)
{
	mutex_lock(&c->tx_lock);
	lock_sock(c->sk);
}

static inline void mpa_unlock_tx(struct mpa_conn *c)
{
	release_sock(c->sk);
	mutex_unlock(&c->tx_lock);
}

/*
 * Tell user space (a waiting reader or poll) that something happened:
 * the key of sk_data_ready (EPOLLIN). The end of the startup is woken
 * with its own events by mpa_wake_poll().
 */
static inline void mpa_wake(struct mpa_conn *c)
{
	c->saved_data_ready(c->sk);
}

/* mpa_proc.c: the counters of /proc/net/mpa_stat, per network namespace */
enum mpa_mib_field {
	MPA_MIB_ATTACHED,	/* ULP attached to a socket */
	MPA_MIB_STARTED,	/* startup began (Request sent or awaited) */
	MPA_MIB_FULL,		/* full operation reached */
	MPA_MIB_REJECTED,	/* a Reply with R=1, sent or received */
	MPA_MIB_FAILED,		/* startup ended in MPA_S_ERROR */
	MPA_MIB_TIMEOUTS,	/* of these, by the startup timeout */
	MPA_MIB_REV0,		/* full operation at revision 0, 1, 2 */
	MPA_MIB_REV1,
	MPA_MIB_REV2,
	MPA_MIB_ERR_TCP_CLOSED,	/* errors by RFC 5044 code 1 to 4 */
	MPA_MIB_ERR_CRC,
	MPA_MIB_ERR_MARKER,
	MPA_MIB_ERR_STARTUP,
	MPA_MIB_TX_FPDUS,
	MPA_MIB_TX_OCTETS,	/* ULPDU octets */
	MPA_MIB_RX_FPDUS,
	MPA_MIB_RX_OCTETS,
	MPA_MIB_RX_DIRECT,	/* ULPDUs copied from TCP straight to recvmsg() */
	MPA_MIB_TX_TRAINS,	/* FPDU trains handed to TCP */
	MPA_MIB_TX_PAGES,	/* pages allocated for FPDUs (tx_page_cache) */
	MPA_MIB_TX_PAGES_REUSED,	/* of those, used again */
	MPA_MIB_TX_PAGES_RELEASED,	/* of those, let go of */
	MPA_MIB_RX_TO_TASK,	/* data-ready left octets for a waiting task */
	MPA_MIB_RX_WINDOW,	/* window updates after the owner's backlog */
	MPA_MIB_TX_FROM_RX,	/* FPDUs sent from the receive path */
	MPA_MIB_MAX
};

unsigned long __percpu *mpa_net_mib(const struct net *net);
int mpa_proc_init(void);
void mpa_proc_exit(void);

/* in the data path: no lookup, the namespace's counters are cached */
static inline void mpa_mib_add(struct mpa_conn *c, enum mpa_mib_field field,
			       unsigned long n)
{
	this_cpu_add(c->mib[field], n);
}

static inline void mpa_mib_inc(struct mpa_conn *c, enum mpa_mib_field field)
{
	mpa_mib_add(c, field, 1);
}

/* Every state change goes through here: traced and counted. */
static inline void mpa_set_state(struct mpa_conn *c, u32 state)
{
	trace_mpa_state(c->sk, c->state, state);
	switch (state) {
	case MPA_S_REQ_SENT:
	case MPA_S_REQ_WAIT:
		mpa_mib_inc(c, MPA_MIB_STARTED);
		break;
	case MPA_S_FULL:
		mpa_mib_inc(c, MPA_MIB_FULL);
		mpa_mib_inc(c, MPA_MIB_REV0 + min_t(u32, c->rev, 2));
		break;
	case MPA_S_REJECTED:
		mpa_mib_inc(c, MPA_MIB_REJECTED);
		break;
	case MPA_S_ERROR:
		mpa_mib_inc(c, MPA_MIB_FAILED);
		break;
	}
	c->state = state;
}

/* mpa_main.c */
extern bool mpa_allow_no_crc;
extern unsigned int mpa_default_rev;
extern unsigned int mpa_tx_split_test;
extern unsigned int mpa_tx_mss_test;
extern unsigned int mpa_tx_page_cache;
extern struct tcp_ulp_ops mpa_ulp_ops;
extern struct workqueue_struct *mpa_wq;

int mpa_crc_init(void);
void mpa_crc_exit(void);
void mpa_fail(struct mpa_conn *c, u32 code, int err);
void mpa_wake_poll(struct mpa_conn *c, __poll_t events);
void *mpa_alloc(struct mpa_conn *c, u32 len, gfp_t gfp);
void mpa_get_attrs(const struct mpa_conn *c, struct mpa_conn_attrs *a);
void mpa_fill_info(const struct mpa_conn *c, struct mpa_info *info);
void mpa_fill_stats(const struct mpa_conn *c, struct mpa_stats *stats);

/* mpa_diag.c: the ULP part of sock_diag (ss -tie, tools/iwarp-ss) */
int mpa_diag_get_info(struct sock *sk, struct sk_buff *skb);
size_t mpa_diag_get_info_size(const struct sock *sk);

/* mpa_cm.c */
void mpa_timeout_work(struct work_struct *work);
u32 mpa_rx_frame(struct mpa_conn *c, const u8 *data, u32 len);
int mpa_start_locked(struct mpa_conn *c, const struct mpa_start_params *s);
int mpa_answer_locked(struct mpa_conn *c, bool reject, const void *pd,
		      u16 pd_len);

/* mpa_tx.c */
int mpa_send_raw(struct mpa_conn *c, const void *buf, u32 len, int flags);
void mpa_tx_release(struct mpa_conn *c);
int mpa_tx_flush(struct mpa_conn *c, int flags);
int mpa_tx_flush_wait(struct mpa_conn *c, long *timeo);
void mpa_tx_flush_force(struct mpa_conn *c);
void mpa_tx_work(struct work_struct *work);
void mpa_tx_trim_work(struct work_struct *work);
void mpa_tx_cache_free(struct mpa_conn *c);
u32 mpa_mulpdu_locked(const struct mpa_conn *c);
int mpa_send_msg(struct mpa_conn *c, const struct mpa_msg *msg,
		 struct iov_iter *from, int flags, size_t *done);
int mpa_send_locked(struct mpa_conn *c, const void *hdr, u32 hdr_len,
		    struct iov_iter *from, size_t len, int flags);
int mpa_sendmsg(struct sock *sk, struct msghdr *msg, size_t size);
int mpa_sock_shutdown(struct socket *sock, int how);
int mpa_sendpage(struct sock *sk, struct page *page, int offset,
		 size_t size, int flags);
void mpa_write_space(struct sock *sk);

/* mpa_rx.c */
void mpa_rx_set_place(struct mpa_conn *c);
void mpa_consumer_deliver(struct mpa_conn *c);
void mpa_rx_trim(struct mpa_conn *c);
void mpa_rx_process(struct mpa_conn *c);
void mpa_rx_window_update(struct mpa_conn *c);
void mpa_rx_work(struct work_struct *work);
void mpa_data_ready(struct sock *sk);
void mpa_state_change(struct sock *sk);
int mpa_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
		int flags, int *addr_len);
bool mpa_sock_is_readable(struct sock *sk);
ssize_t mpa_splice_read(struct socket *sock, loff_t *ppos,
			struct pipe_inode_info *pipe, size_t len,
			unsigned int flags);

/*
 * Wait with the socket lock held until @cond holds, an error is
 * pending, the timeout expires or a signal arrives. A sender asks for
 * every FPDU: when @cond holds already, the wait queue (a lock with
 * interrupts off, twice) is not touched. Inline, so that @cond is a
 * direct call, not one through a retpoline, each time it is tested.
 */
static __always_inline int mpa_wait(struct mpa_conn *c, long *timeo,
				    bool (*cond)(const struct mpa_conn *c))
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = c->sk;
	int ret = 0;

	if (cond(c))
		return 0;
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

#endif /* _MPA_H */
