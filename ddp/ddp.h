/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DDP (RFC 5041) over MPA: what the files of ddp.ko share.
 *
 * ddp_mem.c	pinned and kernel memory, protection domains, tagged buffers
 * ddp_rx.c	the MPA consumer: segment checks, placement, delivery
 * ddp_stream.c	streams: bind, release, posted buffers, sending
 * ddp_cdev.c	/dev/ddp and the stream files
 * ddp_proto.c	the pure protocol logic (headers, section 7.1 checks)
 * ddp_proc.c	/proc/net/ddp_stat: per network namespace counters
 */
#ifndef _DDP_H
#define _DDP_H

#include <linux/idr.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/ddp.h>
#include <net/mpa.h>
#include <trace/events/ddp.h>

#include "ddp_proto.h"

struct net;

#define DDP_MAX_POSTED		256	/* posted buffers per stream */
#define DDP_MAX_REG_LEN		BIT_ULL(32)
#define DDP_STAG_INDEX_MAX	0xffffff
#define DDP_STAG_ROUNDS		8	/* of the Feistel permutation of indexes */
#define DDP_STAG_TRIES		4096	/* index probes before -EBUSY */
#define DDP_PIN_CHUNK		(PAGE_SIZE / sizeof(struct vm_area_struct *))

/*
 * Counters of /proc/net/ddp_stat (ddp_proc.c). The error counters follow
 * the order of the RFC 5041 section 7.2 codes: see ddp_mib_err().
 */
enum ddp_mib_field {
	DDP_MIB_TAGGED_MSGS,		/* tagged messages placed (last segment) */
	DDP_MIB_TAGGED_OCTETS,		/* tagged payload octets placed */
	DDP_MIB_UNTAGGED_MSGS,
	DDP_MIB_UNTAGGED_OCTETS,
	DDP_MIB_ERR_CATASTROPHIC,	/* 0x0/0x00 */
	DDP_MIB_ERR_T_INVALID_STAG,	/* 0x1/0x00 to 0x1/0x04 */
	DDP_MIB_ERR_T_BASE_BOUNDS,
	DDP_MIB_ERR_T_STAG_NOT_ASSOC,
	DDP_MIB_ERR_T_TO_WRAP,
	DDP_MIB_ERR_T_INVALID_DV,
	DDP_MIB_ERR_U_INVALID_QN,	/* 0x2/0x01 to 0x2/0x06 */
	DDP_MIB_ERR_U_NO_BUFFER,
	DDP_MIB_ERR_U_MSN_RANGE,
	DDP_MIB_ERR_U_INVALID_MO,
	DDP_MIB_ERR_U_TOO_LONG,
	DDP_MIB_ERR_U_INVALID_DV,
	DDP_MIB_ERR_LLP,		/* 0x3: MPA reported an error */
	DDP_MIB_INVALID_STAG,		/* STags used that were not valid */
	DDP_MIB_STAG_REG,		/* STags registered */
	DDP_MIB_STAG_INVAL,		/* STags invalidated (or freed with their PD) */
	DDP_MIB_MAX
};

/**
 * struct ddp_stream_stats - a stream's counters, for sock_diag
 * @rx: placed: tagged messages, tagged octets, untagged messages,
 *	untagged octets (the DDP_DIAG_RX_* order)
 * @tx: sent, in the same order
 * @rx_errors: errors reported (section 7.2 and MPA's)
 * @rx_invalid_stag: of those, an invalid or foreign STag
 * @err: the reported error, type << 8 | code
 *
 * One writer each: the receive side under the socket lock (the MPA
 * callbacks), @tx under &ddp_stream.tx_lock. sock_diag reads them without
 * either, with READ_ONCE().
 */
struct ddp_stream_stats {
	u64	rx[4];
	u64	tx[4];
	u64	rx_errors;
	u64	rx_invalid_stag;
	u32	err;
};

/* @rx and @tx of struct ddp_stream_stats */
enum ddp_st_field {
	DDP_ST_TAGGED_MSGS,
	DDP_ST_TAGGED_OCTETS,
	DDP_ST_UNTAGGED_MSGS,
	DDP_ST_UNTAGGED_OCTETS,
};

/* PD and stream IDs share one space, so an STag's owner is unambiguous */
extern struct ida ddp_ids;

/**
 * struct ddp_mem_run - a run of pages of a buffer of several
 * @page: index of its first page in &ddp_mem.pages
 * @first: offset of its first octet in that page
 * @len: its length in octets
 */
struct ddp_mem_run {
	u32		page;
	u32		first;
	u32		len;
};

/**
 * struct ddp_mem - pages of a registered or posted buffer
 * @pages: the pages
 * @npages: their number
 * @first: offset of the first octet in @pages[0]
 * @len: length in octets
 * @mm: for pinned user memory: whose RLIMIT_MEMLOCK it is charged to
 * @writable: pinned for writing (FOLL_WRITE): dirty the pages on release
 * @runs: NULL for one run of @len octets from @first; else the buffer
 *	is these runs one after the other (@first unused), a posted buffer
 *	of several SGEs (ddp_post_recv_sg()), ending at @len
 */
struct ddp_mem {
	struct page	**pages;
	u32		npages;
	u32		first;
	u64		len;
	struct mm_struct *mm;
	bool		writable;
	struct ddp_mem_run *runs;
};

/**
 * struct ddp_mr - a tagged buffer
 * @mem: its memory
 * @stag: steering tag: index << 8 | key
 * @owner: ID of the PD or of the one stream it is bound to
 * @base_to: tagged offset of its first octet
 * @access: DDP_ACCESS_*
 * @valid: false once invalidated
 * @reserved: its index is reserved (ddp_stag_reserve()): invalidation
 *	returns the index to the reservation instead of freeing it
 * @spare: kept for reuse when unpublished (ddp_invalidate_remote()):
 *	it stays in the xarray with @valid false, with its page table
 * @tab_len: the page pointers @mem.pages has room for
 * @users: senders of its pages (ddp_mr_get()): the free waits for them
 * @dead: on a list of buffers to free after an RCU grace period, or on
 *	&ddp_stream.spare
 * @pd: its PD, for the free after the peer's invalidation
 * @free_work: that free, after a grace period (ddp_invalidate_remote())
 *
 * A buffer is found by RCU lookups of &ddp_pd.mrs (placement) and by
 * walks under the xarray lock (invalidation). It is freed only after it
 * was erased from the xarray under that lock, a grace period passed and
 * no sender holds it. A spare of a stream is not freed before the stream
 * is released; a lookup that still holds it sees another key or @valid
 * false, and @owner, which reuse does not change, refuses it to every
 * other stream.
 */
struct ddp_mr {
	struct ddp_mem	mem;
	u32		stag;
	u32		owner;
	u64		base_to;
	u32		access;
	bool		valid;
	bool		reserved;
	bool		spare;
	u32		tab_len;
	atomic_t	users;
	struct list_head dead;
	struct ddp_pd	*pd;
	struct rcu_work	free_work;
};

/**
 * struct ddp_pd - protection domain
 * @id: PD ID
 * @mrs: tagged buffers by STag index
 * @stag_ctr: counter whose keyed permutation gives the next STag index
 *	(under the xarray lock)
 * @gen: bumped after every invalidation (ddp_rx_mr() caches a lookup)
 * @stag_key: the PD's secret key of that permutation
 * @ref: the PD's own reference plus one per stream
 * @net: the namespace of the task that created it (a reference)
 * @mib: the counters of @net, for its STags
 */
struct ddp_pd {
	u32		id;
	struct xarray	mrs;
	u32		stag_ctr;
	unsigned long	gen;
	siphash_key_t	stag_key;
	refcount_t	ref;
	struct net	*net;
	unsigned long __percpu *mib;
};

/*
 * A stream's buffers that the peer invalidated and that wait for reuse
 * (an RDMA Read's sink, one per Read in flight): their number is bounded
 * by the ULP's own limit (ORD), this only bounds what a stream keeps
 */
#define DDP_MR_SPARES		16

/* the largest page table that a posted buffer carries in itself */
#define DDP_RBUF_PAGE_TAB	16

/**
 * struct ddp_rbuf - a posted untagged buffer
 * @list: in its queue
 * @mem: its memory
 * @cookie: the ULP's cookie
 * @placed: payload octets placed so far
 * @msg_len: message length, known from its last segment
 * @last: the last segment was placed
 * @last_mo: the message offset of the last segment
 * @rsvdulp: the RsvdULP bits of the last segment
 * @small: the object has room for DDP_RBUF_PAGE_TAB entries in @page_tab,
 *	and @mem.pages points there: it is kept as a spare when it comes back
 * @page_tab: the page pointers of @mem in the same allocation, for a
 *	buffer of at most DDP_RBUF_PAGE_TAB kernel pages in one run
 *	(ddp_post_recv_pages()); none in a buffer that is not @small
 *
 * ddp_post_recv_pages() sets each field itself (no zeroing of the whole
 * on a receive path; @small once, when it allocates the object): a new
 * field is set there too.
 */
struct ddp_rbuf {
	struct list_head list;
	struct ddp_mem	mem;
	u64		cookie;
	u64		placed;
	u64		msg_len;
	bool		last;
	bool		small;
	u32		last_mo;
	u8		rsvdulp[DDP_RSVDULP_U_LEN];
	struct page	*page_tab[];
};

/**
 * struct ddp_queue - an untagged queue
 * @bufs: posted buffers; the first one is for MSN @head_msn
 * @kept: with @keep, the buffers delivered and not posted again yet,
 *	oldest first (ddp_repost())
 * @nposted: the number of @bufs
 * @keep: the queue keeps its delivered buffers (ddp_queue_keep())
 * @head_msn: MSN of the oldest message not yet delivered
 * @tx_msn: MSN of the next message sent on this queue
 */
struct ddp_queue {
	struct list_head bufs;
	struct list_head kept;
	u32		nposted;
	bool		keep;
	u32		head_msn;
	u32		tx_msn;
};

/**
 * struct ddp_stream - one DDP stream over one MPA connection
 * @pd: its protection domain
 * @id: stream ID
 * @sock: the MPA socket, kept by its owner until the stream is released
 * @conn: the MPA connection
 * @ops: the ULP's callbacks
 * @priv: the ULP's cookie
 * @nqueues: untagged queues
 * @q: the queues
 * @lock: protects the @q lists against the receive path
 * @tx_lock: one message at a time
 * @nposted: buffers posted on all queues
 * @hdr: header octets of the segment being received
 * @hdr_have: how many
 * @seg: the segment being received, once its header is complete
 * @seg_err: its error, if @seg_bad
 * @seg_bad: the segment failed a check: place nothing of it
 * @seg_buf: untagged: the buffer it goes to
 * @rx_mr: tagged: the buffer of the last lookup (see ddp_rx_mr())
 * @rx_mr_gen: the PD's @gen at that lookup
 * @t_first_to: tagged: TO of the first segment of the current message
 * @t_len: tagged: octets of the current message so far
 * @rx_next: offset in the current segment where the next run from MPA
 *	must start
 * @stopped: an error was reported; later segments are dropped
 * @dv: DDP version of the stream: 1, or 0 after an MPA revision 0
 *	(RDMAC) startup (RFC 5044 Appendix C)
 * @shut: the ULP closed its sending half (RFC 5041 6.2.1): sends fail,
 *	receiving goes on
 * @remote_inval: the peer invalidated an STag: its free may be pending
 * @spare: buffers of kernel pages bound to the stream that the peer
 *	invalidated, unpublished, for ddp_reg_pages() to reuse (under @lock)
 * @nspare: how many, at most DDP_MR_SPARES
 * @rbuf_spare: posted buffers of the small kind (their page table in
 *	themselves) that came back, for ddp_post_recv_pages() to reuse: a
 *	Send's buffer costs no allocation (under @lock)
 * @nrbuf_spare: how many, at most DDP_MAX_POSTED
 * @mib: the counters of the socket's network namespace, cached at bind
 * @stats: the stream's own counters
 */
struct ddp_stream {
	struct ddp_pd		*pd;
	u32			id;
	struct socket		*sock;
	struct mpa_conn		*conn;
	const struct ddp_stream_ops *ops;
	void			*priv;
	u32			nqueues;
	struct ddp_queue	q[DDP_MAX_QUEUES];
	spinlock_t		lock;		/* the queues */
	struct mutex		tx_lock;	/* one message at a time */
	u32			nposted;

	u8			hdr[DDP_UNTAGGED_HDR_LEN];
	u32			hdr_have;
	struct ddp_seg		seg;
	struct ddp_err		seg_err;
	bool			seg_bad;
	struct ddp_rbuf		*seg_buf;
	struct ddp_mr		*rx_mr;
	unsigned long		rx_mr_gen;
	u64			t_first_to;
	u64			t_len;
	u32			rx_next;
	bool			stopped;
	u8			dv;
	bool			shut;
	bool			remote_inval;
	struct list_head	spare;
	u32			nspare;
	struct list_head	rbuf_spare;
	u32			nrbuf_spare;
	unsigned long __percpu	*mib;
	struct ddp_stream_stats	stats;
};

/* a counter of struct ddp_stream_stats, by its one writer */
static inline void ddp_stat_add(u64 *ctr, u64 n)
{
	WRITE_ONCE(*ctr, *ctr + n);
}

static inline void ddp_mib_add(unsigned long __percpu *mib,
			       enum ddp_mib_field field, unsigned long n)
{
	this_cpu_add(mib[field], n);
}

static inline void ddp_mib_inc(unsigned long __percpu *mib,
			       enum ddp_mib_field field)
{
	this_cpu_inc(mib[field]);
}

/* ddp_mem.c */
extern struct workqueue_struct *ddp_wq;
void ddp_mem_release(struct ddp_mem *m, bool dirty);
int ddp_mem_pin(struct ddp_mem *m, u64 addr, u64 len, bool write);
int ddp_mem_pages(struct ddp_mem *m, struct page **pages, u32 npages,
		  u32 first, u64 len, struct page **tab, gfp_t gfp);
int ddp_mem_runs(struct ddp_mem *m, const struct ddp_sge *sg, u32 nsg,
		 gfp_t gfp);
void ddp_mem_write(const struct ddp_mem *m, u64 off, const u8 *src, u32 len);
struct ddp_pd *__ddp_pd_alloc(gfp_t gfp);
int ddp_reg_mem(struct ddp_pd *pd, struct ddp_stream *owner,
		struct ddp_mem *mem, u64 base_to, u32 access, u32 *stag);
struct ddp_mr *ddp_mr_lookup(struct ddp_pd *pd, u32 stag);
void ddp_invalidate_owned(struct ddp_stream *s);

/* ddp_rx.c */
extern struct mpa_consumer ddp_consumer;
void ddp_event(struct ddp_stream *s, const struct ddp_stream_event *ev);
void ddp_set_version(struct ddp_stream *s, struct mpa_conn *conn);
void ddp_stream_stop(struct ddp_stream *s);

/* ddp_stream.c */
void ddp_rbuf_free(struct ddp_rbuf *b);
bool ddp_rbuf_keep(struct ddp_stream *s, struct ddp_rbuf *b);
int ddp_stream_shutdown(struct ddp_stream *s);

/* ddp_proc.c */
unsigned long __percpu *ddp_net_mib(const struct net *net);
enum ddp_mib_field ddp_mib_err(u8 type, u8 code);
int ddp_proc_init(void);
void ddp_proc_exit(void);

/* ddp_cdev.c */
int ddp_cdev_init(void);
void ddp_cdev_exit(void);

#endif /* _DDP_H */
