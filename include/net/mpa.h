/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel consumer API of MPA (RFC 5044), for the protocol above it
 * (DDP). See Documentation/mpa.rst.
 *
 * A consumer registers a struct mpa_consumer under a name. It binds a
 * connected TCP socket with mpa_bind(), which attaches the "mpa" ULP
 * unless user space already did, then starts MPA as Initiator or
 * Responder unless user space already did. Callbacks run in softirq
 * or in process context with the socket lock held; they must not sleep
 * and must not call back into MPA except mpa_conn_priv(),
 * mpa_conn_mulpdu(), mpa_conn_info() and mpa_sendv_rx(). mpa_send(),
 * mpa_sendv(), mpa_send_begin(), mpa_sendv_locked(),
 * mpa_send_msg_locked(), mpa_accept(), mpa_reject(), mpa_start(),
 * mpa_abort() and mpa_unbind() sleep.
 */
#ifndef _NET_MPA_H
#define _NET_MPA_H

#include <linux/list.h>
#include <linux/net.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <uapi/linux/mpa.h>

struct mpa_conn;
struct sk_buff;

/* longest consumer name, with its NUL */
#define MPA_CONSUMER_NAME_MAX	16
/* most octets a consumer's get_info() may put (struct mpa_consumer) */
#define MPA_CONSUMER_INFO_MAX	512

/**
 * struct mpa_start_params - how mpa_start() starts MPA on a connection
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER
 * @flags: MPA_F_*
 * @rev: MPA revision: 1, 2 (RFC 6581), MPA_REV_RDMAC for revision 0, or 0
 *	for the module's default_rev
 * @ird: revision 2: inbound RDMA Read queue depth offered, 0..0x3fff
 * @ord: revision 2: outbound RDMA Read queue depth wanted, 0..0x3fff
 * @pd: Initiator: private data for the Request
 * @pd_len: its length, 0..512, or 0..508 in revision 2
 * @lsm: Responder: "last streaming message" sent as plain TCP data before
 *	MPA waits for the Request (RFC 5044 7.1.5)
 * @lsm_len: its length, at most 65536
 *
 * The same rules as for the MPA_START socket option (struct mpa_start of
 * <uapi/linux/mpa.h>) apply.
 */
struct mpa_start_params {
	u32		role;
	u32		flags;
	u16		rev;
	u16		ird;
	u16		ord;
	u16		pd_len;
	const void	*pd;
	const void	*lsm;
	u32		lsm_len;
};

/**
 * struct mpa_conn_attrs - state and negotiated parameters, mpa_conn_info()
 * @state: enum mpa_state
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER, 0 before MPA started
 * @rev: MPA revision (0: an RDMA Consortium peer, RFC 5044 Appendix C)
 * @error: RFC 5044 error code MPA_ERR_*, 0 if none
 * @mulpdu: MULPDU in full operation, else 0
 * @peer_pd_len: length of the peer's private data (without the
 *	revision 2 enhanced data)
 * @ird: revision 2, full operation: negotiated inbound RDMA Read depth
 * @ord: revision 2, full operation: negotiated outbound RDMA Read depth
 * @peer_ird: revision 2: the IRD in the peer's frame
 * @peer_ord: revision 2: the ORD in the peer's frame
 * @rtr: revision 2 peer-to-peer, full operation: the RTR type agreed,
 *	one of MPA_F_RTR_*, or 0
 * @p2p: revision 2 peer-to-peer model agreed
 * @markers_rx: full operation: the peer inserts markers
 * @markers_tx: full operation: we insert markers
 * @crc: full operation: CRCs are generated and checked
 * @peer_fin: the peer half-closed on an FPDU boundary
 * @rejected: Initiator: the Reply had R=1
 *
 * The kernel's view of what the MPA_INFO socket option reports.
 */
struct mpa_conn_attrs {
	enum mpa_state	state;
	u32		role;
	u32		rev;
	u32		error;
	u32		mulpdu;
	u32		peer_pd_len;
	u16		ird;
	u16		ord;
	u16		peer_ird;
	u16		peer_ord;
	u32		rtr;
	bool		p2p;
	bool		markers_rx;
	bool		markers_tx;
	bool		crc;
	bool		peer_fin;
	bool		rejected;
};

/**
 * struct mpa_consumer - an MPA consumer (ULP), e.g. DDP
 * @name: unique name, e.g. "ddp"
 * @owner: module that implements the callbacks
 * @request: Responder: a valid Request arrived with the peer's private
 *	data; answer later with mpa_accept() or mpa_reject()
 * @reply: Initiator: a valid Reply arrived; @rejected is its R bit.
 *	Unless rejected, the connection is in full operation.
 * @place: optional. When set, MPA hands over every run of ULPDU octets
 *	as it arrives, straight from the socket buffers (@off is the run's
 *	offset in the ULPDU of @ulpdu_len octets), and the consumer places it; @ulpdu then only
 *	tells that the ULPDU is complete and its CRC good (@data is NULL).
 *	If the CRC is bad, @error comes instead and the octets handed over
 *	for that ULPDU must not be delivered.
 * @ulpdu: a complete ULPDU whose CRC was verified. @data is linear and
 *	valid only during the call, or NULL with @place.
 * @error: an MPA error with its RFC 5044 code; nothing more is
 *	delivered after it
 * @peer_closed: the peer half-closed on an FPDU boundary
 * @write_space: send space became available after mpa_send() returned
 *	-EAGAIN
 * @rx_kick: optional, for consumers that receive in a task's context:
 *	while one of their tasks waits between mpa_rx_wait_begin() and
 *	mpa_rx_wait_end(), data-ready leaves new octets in TCP and calls
 *	this instead of parsing them in softirq; wake that task, which
 *	parses and places them on its own CPU with mpa_rx_run(). Softirq,
 *	with the socket's sk_callback_lock read-held; must not sleep.
 * @get_info: optional. sock_diag (tools/iwarp-ss) asks for the
 *	consumer's view of the connection: put its own attributes into
 *	@skb, inside the MPA_DIAG_CONSUMER_INFO nest that MPA opened. Called
 *	in process context under rcu_read_lock() and with the socket's
 *	sk_callback_lock read-held, which mpa_bind() and mpa_unbind() take
 *	for writing: @conn is bound to this consumer and its cookie valid
 *	throughout, but the socket lock is not held, so values are
 *	snapshots. Must not sleep. Return 0, or -EMSGSIZE when @skb has no
 *	room (a dump then carries the socket over to its next message).
 * @info_size: with @get_info: an upper bound of the octets that
 *	@get_info puts, headers and padding included (nla_total_size()), at
 *	most %MPA_CONSUMER_INFO_MAX. MPA reserves that maximum for every
 *	socket, whichever consumer is bound when the reply is filled.
 * @list: private to MPA
 */
struct mpa_consumer {
	const char	*name;
	struct module	*owner;
	void (*request)(struct mpa_conn *conn, const void *pd, u16 pd_len);
	void (*reply)(struct mpa_conn *conn, bool rejected, const void *pd,
		      u16 pd_len);
	void (*place)(struct mpa_conn *conn, u32 ulpdu_len, u32 off,
		      const void *data, u32 len);
	void (*ulpdu)(struct mpa_conn *conn, const void *data, u32 len);
	void (*error)(struct mpa_conn *conn, u32 code);
	void (*peer_closed)(struct mpa_conn *conn);
	void (*write_space)(struct mpa_conn *conn);
	void (*rx_kick)(struct mpa_conn *conn);
	int (*get_info)(struct mpa_conn *conn, struct sk_buff *skb);
	u32		info_size;
	struct list_head list;
};

/* octets of ULP header in front of each ULPDU of an mpa_msg, at most */
#define MPA_MSG_HDR_MAX		32

/**
 * struct mpa_msg - a ULP message that MPA cuts into ULPDUs
 * @hdr_len: octets of ULP header at the start of every ULPDU, at most
 *	MPA_MSG_HDR_MAX
 * @next: called once per ULPDU, in order: write its @hdr_len octets of
 *	header at @hdr, return how many octets of the message follow the
 *	header in it (at most @max_data, which follows the path MTU), and set
 *	*@last for the message's last ULPDU; or return a negative errno to
 *	stop. The octets themselves come from the iterator.
 * @ctx: the ULP's cookie for @next
 *
 * See mpa_send_msg_locked().
 */
struct mpa_msg {
	u32	hdr_len;
	int	(*next)(void *ctx, void *hdr, u32 max_data, bool *last);
	void	*ctx;
};

int mpa_register_consumer(struct mpa_consumer *consumer);
void mpa_unregister_consumer(struct mpa_consumer *consumer);

struct mpa_conn *mpa_bind(struct socket *sock, const char *consumer, void *priv);
void mpa_unbind(struct mpa_conn *conn);
void *mpa_conn_priv(struct mpa_conn *conn);

int mpa_start(struct mpa_conn *conn, const struct mpa_start_params *start);
int mpa_accept(struct mpa_conn *conn, const void *pd, u16 pd_len);
int mpa_reject(struct mpa_conn *conn, const void *pd, u16 pd_len);
void mpa_abort(struct mpa_conn *conn, int err);

int mpa_send(struct mpa_conn *conn, struct kvec *vec, size_t nr, size_t len,
	     int flags);
int mpa_sendv(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
	      struct iov_iter *data, u32 data_len, int flags);
void mpa_send_begin(struct mpa_conn *conn);
int mpa_sendv_locked(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
		     struct iov_iter *data, u32 data_len, int flags);
int mpa_send_msg_locked(struct mpa_conn *conn, const struct mpa_msg *msg,
			struct iov_iter *data, int flags);
void mpa_send_end(struct mpa_conn *conn);
int mpa_sendv_rx(struct mpa_conn *conn, const void *hdr, u32 hdr_len,
		 struct iov_iter *data, u32 data_len);
u32 mpa_conn_mulpdu(struct mpa_conn *conn);
void mpa_rx_wait_begin(struct mpa_conn *conn);
void mpa_rx_wait_end(struct mpa_conn *conn);
bool mpa_rx_kicked(struct mpa_conn *conn);
void mpa_rx_run(struct mpa_conn *conn);
void mpa_conn_info(struct mpa_conn *conn, struct mpa_conn_attrs *attrs);

#endif /* _NET_MPA_H */
