// SPDX-License-Identifier: GPL-2.0
/*
 * MPA in sock_diag: the tcp_ulp_ops get_info hooks that let ss and
 * tools/iwarp-ss show an MPA connection's state, negotiated parameters
 * and counters (attributes in include/uapi/linux/mpa.h).
 *
 * sock_diag calls these without the socket lock, so the context is
 * looked up under RCU (contexts are freed with kfree_rcu()) and every
 * field is a snapshot that may be stale by the time it is read. The bound
 * consumer and its cookie change only under sk_callback_lock held for
 * writing (mpa_bind(), mpa_unbind()): read-holding it keeps both, and the
 * consumer's module, for the consumer's get_info() callback.
 */

#include <linux/rcupdate.h>
#include <net/inet_connection_sock.h>
#include <net/netlink.h>

#include "mpa.h"

static const u8 mpa_diag_u64[] = {
	MPA_DIAG_TX_FPDUS, MPA_DIAG_TX_OCTETS, MPA_DIAG_TX_MARKERS,
	MPA_DIAG_RX_FPDUS, MPA_DIAG_RX_OCTETS, MPA_DIAG_RX_MARKERS,
	MPA_DIAG_RX_CRC_ERRORS, MPA_DIAG_RX_MARKER_ERRORS,
};

/*
 * The consumer's name, and its own attributes in MPA_DIAG_CONSUMER_INFO.
 * mpa_diag_get_info_size() reserved room for the largest any consumer
 * may put, so a single socket's reply always has it; in a dump, no room
 * means the socket goes into the next message, whole.
 */
static int mpa_diag_put_consumer(struct sk_buff *skb, struct mpa_conn *c,
				 const struct mpa_consumer *consumer)
{
	struct nlattr *nest;

	if (nla_put_string(skb, MPA_DIAG_CONSUMER, consumer->name))
		return -EMSGSIZE;
	if (!consumer->get_info)
		return 0;
	nest = nla_nest_start(skb, MPA_DIAG_CONSUMER_INFO);
	if (!nest)
		return -EMSGSIZE;
	if (consumer->get_info(c, skb)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int mpa_diag_put(struct sk_buff *skb, struct mpa_conn *c)
{
	static const u8 types[] = {
		MPA_DIAG_STATE, MPA_DIAG_ROLE, MPA_DIAG_REV, MPA_DIAG_FLAGS,
		MPA_DIAG_ERROR, MPA_DIAG_MULPDU, MPA_DIAG_IRD, MPA_DIAG_ORD,
		MPA_DIAG_RTR,
	};
	const struct mpa_consumer *consumer;
	struct mpa_stats stats;
	struct mpa_info info;
	const u64 *ctr = (const u64 *)&stats;
	unsigned int i;
	int err = 0;
	u32 v[9];

	BUILD_BUG_ON(ARRAY_SIZE(types) != ARRAY_SIZE(v));
	BUILD_BUG_ON(sizeof(stats) != sizeof(u64) * ARRAY_SIZE(mpa_diag_u64));
	mpa_fill_info(c, &info);
	mpa_fill_stats(c, &stats);
	v[0] = info.state;
	v[1] = info.role;
	v[2] = info.rev;
	v[3] = info.flags;
	v[4] = info.error;
	v[5] = info.mulpdu;
	v[6] = info.ird;
	v[7] = info.ord;
	v[8] = info.rtr;
	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (nla_put_u32(skb, types[i], v[i]))
			return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(mpa_diag_u64); i++)
		if (nla_put_u64_64bit(skb, mpa_diag_u64[i], ctr[i], MPA_DIAG_PAD))
			return -EMSGSIZE;
	read_lock_bh(&c->sk->sk_callback_lock);
	consumer = c->consumer;
	if (consumer)
		err = mpa_diag_put_consumer(skb, c, consumer);
	read_unlock_bh(&c->sk->sk_callback_lock);
	return err;
}

/**
 * mpa_diag_get_info() - the MPA part of INET_DIAG_ULP_INFO
 * @sk: the TCP socket, not locked
 * @skb: the sock_diag reply being built
 *
 * Return: 0, or -EMSGSIZE if @skb has no room.
 */
int mpa_diag_get_info(struct sock *sk, struct sk_buff *skb)
{
	struct mpa_conn *c;
	struct nlattr *nest;
	int err = 0;

	nest = nla_nest_start(skb, MPA_DIAG_ULP_INFO);
	if (!nest)
		return -EMSGSIZE;
	rcu_read_lock();
	c = rcu_dereference(inet_csk(sk)->icsk_ulp_data);
	if (c)
		err = mpa_diag_put(skb, c);
	rcu_read_unlock();
	if (err) {
		nla_nest_cancel(skb, nest);
		return err;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/**
 * mpa_diag_get_info_size() - room mpa_diag_get_info() may need
 * @sk: the TCP socket
 *
 * The same for every socket: a consumer may be bound between the sizing
 * and the filling of a reply, so the largest consumer part is counted.
 *
 * Return: the upper bound in octets.
 */
size_t mpa_diag_get_info_size(const struct sock *sk)
{
	return nla_total_size(0) +			/* MPA_DIAG_ULP_INFO */
	       9 * nla_total_size(sizeof(u32)) +
	       ARRAY_SIZE(mpa_diag_u64) * nla_total_size_64bit(sizeof(u64)) +
	       nla_total_size(MPA_CONSUMER_NAME_MAX) +
	       nla_total_size(0) + MPA_CONSUMER_INFO_MAX;
}
