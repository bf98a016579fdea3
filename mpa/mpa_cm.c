// SPDX-License-Identifier: GPL-2.0
/*
 * MPA connection setup (RFC 5044 section 7.1, RFC 6581): the startup
 * state machine. MPA_START sends the Request (Initiator) or the last
 * streaming message (Responder), the peer's Request or Reply is received
 * and checked, the Responder accepts or rejects, revision 2 IRD/ORD and
 * RTR are negotiated, and the startup timeout ends a silent peer.
 */
#include <linux/slab.h>
#include <net/tcp.h>

#include "mpa.h"

void mpa_timeout_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(to_delayed_work(work),
					  struct mpa_conn, timeout_work);
	struct sock *sk = c->sk;

	lock_sock(sk);
	if (!c->closing && (c->state == MPA_S_REQ_SENT || c->state == MPA_S_REQ_WAIT)) {
		trace_mpa_timeout(sk);
		mpa_mib_inc(c, MPA_MIB_TIMEOUTS);
		mpa_fail(c, MPA_ERR_STARTUP, -ETIMEDOUT);
	}
	release_sock(sk);
	sock_put(sk);
}

static void mpa_stop_timeout(struct mpa_conn *c)
{
	if (cancel_delayed_work(&c->timeout_work))
		sock_put(c->sk);
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
	mpa_dec_init(&c->rx, NULL, c->lflags & MPA_F_MARKERS, c->crc);
	mpa_rx_set_place(c);
	c->tx_base = tp->write_seq;
	/*
	 * Nagle stays as the socket's owner set it (TCP_NODELAY): whether
	 * small FPDUs may wait to share a segment is the ULP's choice (RFC
	 * 5044 appendix A.2); DDP turns it off when it binds.
	 */
	mpa_set_state(c, MPA_S_FULL);
}

/*
 * Sending FPDUs became possible: wake senders and pollers. The keyed
 * wakeup does not depend on TCP's idea of write space having changed
 * (sk_stream_write_space() wakes only when it sees room and a sleeper);
 * the saved callback still runs for SIGIO users.
 */
static void mpa_tx_open(struct mpa_conn *c)
{
	WRITE_ONCE(c->tx_allowed, true);
	if (c->consumer && c->consumer->write_space)
		c->consumer->write_space(c);
	mpa_wake_poll(c, EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
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
	trace_mpa_frame(c->sk, false, c->frame);
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
		mpa_set_state(c, MPA_S_REQ_RCVD);
		if (c->consumer)
			c->consumer->request(c, pd, pd_len);
		mpa_wake(c);
		return;
	}
	if (c->peer.reject) {
		mpa_set_state(c, MPA_S_REJECTED);
		mpa_wake_poll(c, EPOLLPRI);
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

u32 mpa_rx_frame(struct mpa_conn *c, const u8 *data, u32 len)
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
	if (len >= 0)
		trace_mpa_frame(c->sk, true, buf);
	ret = len < 0 ? len : mpa_send_raw(c, buf, len, MSG_EOR | MSG_NOSIGNAL);
	kfree(buf);
	if (ret >= 0 && ret != len)
		ret = -EPIPE;
	return ret < 0 ? ret : 0;
}

#define MPA_F_V2 (MPA_F_P2P | MPA_F_RTR_ALL)

int mpa_start_locked(struct mpa_conn *c, const struct mpa_start_params *s)
{
	struct sock *sk = c->sk;
	u32 rev;
	int ret;

	if (c->state != MPA_S_IDLE)
		return -EISCONN;
	rev = s->rev ? s->rev : READ_ONCE(mpa_default_rev);
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
	if ((s->flags & MPA_F_NO_CRC) && !READ_ONCE(mpa_allow_no_crc))
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
		.rtr = s->flags & MPA_F_RTR_ALL,
	};
	if (s->role == MPA_ROLE_INITIATOR) {
		ret = mpa_send_frame(c, true, false, &c->v2_local, s->pd,
				     s->pd_len);
		if (ret)
			return ret;
		mpa_set_state(c, MPA_S_REQ_SENT);
	} else {
		if (s->lsm_len) {
			ret = mpa_send_raw(c, s->lsm, s->lsm_len, MSG_EOR | MSG_NOSIGNAL);
			if (ret < 0)
				return ret;
			if (ret != s->lsm_len)
				return -EPIPE;
		}
		mpa_set_state(c, MPA_S_REQ_WAIT);
	}
	if (c->timeout_ms) {
		sock_hold(sk);
		if (!queue_delayed_work(mpa_wq, &c->timeout_work,
					msecs_to_jiffies(c->timeout_ms)))
			sock_put(sk);
	}
	/* octets that arrived before MPA_START are the start of the stream */
	c->rx_stop = false;
	mpa_rx_process(c);
	return 0;
}

int mpa_answer_locked(struct mpa_conn *c, bool reject, const void *pd,
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
		mpa_set_state(c, MPA_S_REJECTED);
		mpa_wake_poll(c, EPOLLPRI);
		return 0;
	}
	/* M in the Request: the Responder adds markers */
	mpa_enter_full(c, c->peer.markers);
	c->rx_stop = false;
	mpa_rx_process(c);
	return 0;
}
