/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iwmpa.ko: an iWARP RDMA device (struct ib_device) over rdmap.ko and
 * ddp.ko, speaking siw's user ABI (<rdma/siw-abi.h>, RDMA_DRIVER_SIW) so
 * that rdma-core's siw provider drives it unchanged. See
 * Documentation/iwmpa.rst.
 */
#ifndef _IWMPA_H
#define _IWMPA_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/etherdevice.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/siw-abi.h>
#include <net/ddp.h>
#include <net/rdmap.h>

#define IWMPA_PORT		1
#define IWMPA_VENDOR_ID		0x69776d	/* "iwm" */
#define IWMPA_NODE_DESC		"iwmpa iWARP over rdmap.ko"

/* the limits query_device reports; those of CQs and QPs are for later */
#define IWMPA_MAX_CTX		256
#define IWMPA_MAX_PD		1024
#define IWMPA_MAX_MR		16384
#define IWMPA_MAX_MR_SIZE	SZ_4G
#define IWMPA_MAX_QP		1024
#define IWMPA_MAX_QP_WR		1024
#define IWMPA_MAX_SGE		6	/* SIW_MAX_SGE: the provider's SQE */
#define IWMPA_MAX_RECV_SGE	6	/* SIW_MAX_SGE: the provider's RQE */
#define IWMPA_MAX_SGE_RD	1	/* an RDMA Read has one sink */
#define IWMPA_MAX_FR_PAGES	256	/* pages of a fast registration */
#define IWMPA_MAX_CQ		1024
#define IWMPA_MAX_CQE		8192
#define IWMPA_MAX_SRQ		1024
#define IWMPA_MAX_SRQ_WR	4096
/* receives a queue pair bound to an SRQ holds at most (Sends it receives) */
#define IWMPA_SRQ_QP_RXB	8

/*
 * The local DMA lkey of kernel PDs: an SGE of a kernel queue pair with it
 * names kernel memory by the address ib_dma_map_*() gave (the device
 * uses virtual DMA: no dma_device). Its STag index is 0, which DDP never
 * gives a buffer; user queue pairs cannot use it.
 */
#define IWMPA_DMA_LKEY		0x000000ddU

/**
 * struct iwmpa_limits - what one device allows
 * @max_ctx: user contexts (open devices)
 * @max_pd: protection domains
 * @max_mr: memory regions
 * @max_mr_size: octets in one memory region
 * @max_qp: queue pairs
 * @max_qp_wr: work requests per queue
 * @max_sge: scatter/gather elements per send work request
 * @max_recv_sge: scatter/gather elements per receive work request
 * @max_sge_rd: scatter/gather elements per RDMA Read
 * @max_cq: completion queues
 * @max_cqe: entries per completion queue
 * @max_fr_pages: pages of one fast registration (IB_WR_REG_MR)
 * @max_srq: shared receive queues
 * @max_srq_wr: entries per shared receive queue
 * @ird: RDMA Read Requests the peer may have outstanding per QP
 * @ord: RDMA Reads this end may have outstanding per QP
 */
struct iwmpa_limits {
	u32	max_ctx;
	u32	max_pd;
	u32	max_mr;
	u64	max_mr_size;
	u32	max_qp;
	u32	max_qp_wr;
	u32	max_sge;
	u32	max_recv_sge;
	u32	max_sge_rd;
	u32	max_cq;
	u32	max_cqe;
	u32	max_fr_pages;
	u32	max_srq;
	u32	max_srq_wr;
	u32	ird;
	u32	ord;
};

/*
 * The device's counters (rdma statistic, the port's hw_counters): what
 * the queue pairs did, summed over every QP of the device.
 */
enum iwmpa_stat {
	IWMPA_STAT_SEND_TX,	/* Sends (any of the four) sent */
	IWMPA_STAT_WRITE_TX,	/* RDMA Writes sent */
	IWMPA_STAT_READ_TX,	/* RDMA Read Requests sent */
	IWMPA_STAT_TX_BYTES,	/* octets of the Sends and Writes sent */
	IWMPA_STAT_RECV_RX,	/* Sends received into posted receives */
	IWMPA_STAT_READ_DONE,	/* RDMA Reads completed */
	IWMPA_STAT_RX_BYTES,	/* octets received: Sends, Read Responses */
	IWMPA_STAT_REG_MR,	/* fast registrations */
	IWMPA_STAT_LOCAL_INV,	/* local invalidations */
	IWMPA_STAT_REMOTE_INV,	/* STags the peer invalidated */
	IWMPA_STAT_CONN,	/* connections the QPs started on */
	IWMPA_STAT_QP_FATAL,	/* QPs ended by an error or Terminate */
	IWMPA_STAT_CQ_OVERFLOW,	/* completions lost to a full CQ */
	IWMPA_STAT_NUM
};

/**
 * struct iwmpa_stats - the device's counters on one CPU
 * @v: by enum iwmpa_stat
 */
struct iwmpa_stats {
	u64	v[IWMPA_STAT_NUM];
};

/**
 * struct iwmpa_dev - one iwmpa device, bound to one netdev
 * @ibdev: the RDMA core's device
 * @netdev: the netdev of port 1; ib_device_set_netdev() holds it
 * @list: in iwmpa_devs, from creation until dealloc_driver
 * @raw_gid: the netdev's MAC at creation: GID and node GUID
 * @dev_id: a number per device, siw_uresp_alloc_ctx's dev_id
 * @limits: what the device allows
 * @num_ctx: user contexts now
 * @num_pd: protection domains now
 * @num_mr: memory regions now
 * @num_cq: completion queues now
 * @num_qp: queue pairs now
 * @num_srq: shared receive queues now
 * @qps: every queue pair by its number
 * @stats: the counters, per CPU
 */
struct iwmpa_dev {
	struct ib_device	ibdev;
	struct net_device	*netdev;
	struct list_head	list;
	u8			raw_gid[ETH_ALEN];
	u32			dev_id;
	struct iwmpa_limits	limits;
	atomic_t		num_ctx;
	atomic_t		num_pd;
	atomic_t		num_mr;
	atomic_t		num_cq;
	atomic_t		num_qp;
	atomic_t		num_srq;
	struct xarray		qps;
	struct iwmpa_stats __percpu *stats;
};

/**
 * struct iwmpa_ucontext - a user context (an open device)
 * @base: the RDMA core's context
 */
struct iwmpa_ucontext {
	struct ib_ucontext	base;
};

/**
 * struct iwmpa_pd - a protection domain
 * @base: the RDMA core's PD
 * @ddp: DDP's PD, where the memory regions of @base are registered
 * @mrs: its memory regions by STag index (DDP's STags are per PD),
 *	RCU-freed
 * @gen: bumped (under the xarray's lock) after each erase from @mrs:
 *	a &struct iwmpa_mr_cache of an older value is stale
 */
struct iwmpa_pd {
	struct ib_pd		base;
	struct ddp_pd		*ddp;
	struct xarray		mrs;
	unsigned long		gen;
};

/**
 * struct iwmpa_mr_cache - the region a queue pair's SGEs named last
 * @mr: that region, no reference held: read under rcu_read_lock() and
 *	only while the PD's @gen is @gen (then it is still in the xarray)
 * @gen: the PD's &iwmpa_pd.gen read before the lookup that found @mr
 *
 * One cache serves one PD and one context at a time (iwmpa_mr_lookup()).
 */
struct iwmpa_mr_cache {
	struct iwmpa_mr		*mr;
	unsigned long		gen;
};

/**
 * struct iwmpa_mr - a memory region: user memory, or a kernel consumer's
 * fast registration (alloc_mr, map_mr_sg, then IB_WR_REG_MR)
 * @base: the RDMA core's MR; lkey == rkey == @stag (a fast registration
 *	changes the key, the last 8 bits)
 * @umem: the pinned pages (user memory)
 * @pages: the pages of the region, for the queue pairs' local access
 * @npages: their number
 * @first: offset of the region's first octet in @pages[0]
 * @va: the region's first address (its tagged offset)
 * @len: its length
 * @access: IB_ACCESS_*
 * @stag: DDP's STag of the tagged buffer over @pages
 * @valid: @stag may be used (false once invalidated, locally or by the
 *	peer, and for a fast registration until IB_WR_REG_MR)
 * @fast: a fast registration: its STag index is reserved in DDP
 *	(ddp_stag_reserve()) for the region's life
 * @pend: fast registration: the pages map_mr_sg gave, registered by the
 *	next IB_WR_REG_MR
 * @pend_n: their number
 * @pend_first: offset of the first octet in @pend[0]
 * @max_pages: room in @pages and @pend
 * @ref: the region (1) and each posted receive or send using it; the
 *	last put frees it in a work item (unpinning sleeps)
 * @free_work: that work item
 * @rcu: the lookup in softirq (iwmpa_dev.mrs) is under RCU
 */
struct iwmpa_mr {
	struct ib_mr		base;
	struct ib_umem		*umem;
	struct page		**pages;
	u32			npages;
	u32			first;
	u64			va;
	u64			len;
	int			access;
	u32			stag;
	bool			valid;
	bool			fast;
	struct page		**pend;
	u32			pend_n;
	u32			pend_first;
	u32			max_pages;
	refcount_t		ref;
	struct work_struct	free_work;
	struct rcu_head		rcu;
};

/**
 * struct iwmpa_cq - a completion queue: a ring shared with user space, or
 * a kernel consumer's (poll_cq, req_notify_cq)
 * @base: the RDMA core's CQ
 * @lock: serialises the producers (softirq and the queue pairs' work),
 *	and for a kernel CQ its consumer and arming
 * @queue: @num_cqe entries then the struct siw_cq_ctrl, vmalloc_user()
 *	(vzalloc() for a kernel CQ)
 * @ctrl: the control word after the entries (the arming flags)
 * @num_cqe: entries in the ring
 * @put: next entry to write
 * @get: kernel CQ: next entry to poll
 * @kernel: a kernel consumer's CQ: entries carry the QP's pointer
 * @id: the CQ's number, siw_uresp_create_cq's cq_id
 * @mmap_entry: the ring's mmap entry for user space
 */
struct iwmpa_cq {
	struct ib_cq			base;
	spinlock_t			lock; /* @put, the ring's producers */
	struct siw_cqe			*queue;
	struct siw_cq_ctrl		*ctrl;
	u32				num_cqe;
	u32				put;
	u32				get;
	bool				kernel;
	u32				id;
	struct rdma_user_mmap_entry	*mmap_entry;
};

/**
 * struct iwmpa_srq - a shared receive queue: a ring of RQEs shared with
 * user space, or a kernel consumer's (post_srq_recv)
 * @base: the RDMA core's SRQ
 * @lock: @rq_get, @rq_put, @limit, @armed: the takers (softirq, any
 *	queue pair bound to the SRQ) and a kernel SRQ's producers
 * @recvq: the ring, vmalloc_user() (vzalloc() for a kernel SRQ)
 * @num_rqe: entries in the ring
 * @rq_get: next RQE to take
 * @rq_put: kernel SRQ: next RQE to fill
 * @limit: the limit event's threshold
 * @armed: the limit event is armed
 * @kernel: a kernel consumer's SRQ: SGEs may use the local DMA lkey
 * @mmap: the ring's mmap entry for user space
 */
struct iwmpa_srq {
	struct ib_srq			base;
	spinlock_t			lock; /* rq_get, rq_put, limit, armed */
	struct siw_rqe			*recvq;
	u32				num_rqe;
	u32				rq_get;
	u32				rq_put;
	u32				limit;
	bool				armed;
	bool				kernel;
	struct rdma_user_mmap_entry	*mmap;
};

struct iwmpa_cep;

/**
 * struct iwmpa_rxb - a receive taken from the RQ ring and posted
 * @id: its work request id
 * @mr: the region of its buffer (one SGE), held until the buffer comes
 *	back
 * @mrs: the regions of its SGEs (several; NULL for kernel memory), held
 *	until then, kmalloc()ed
 * @nmrs: the number of @mrs
 */
struct iwmpa_rxb {
	u64			id;
	struct iwmpa_mr		*mr;
	struct iwmpa_mr		**mrs;
	u32			nmrs;
};

/**
 * struct iwmpa_orqe - an RDMA Read sent
 * @id: its work request id
 * @stag: the sink's DDP STag, bound to the stream for the Read's time; 0
 *	when the sink is named by its region's own STag
 * @mr: the sink's region, held until @stag is invalidated and DDP's
 *	placements into it are over (until the Read completes or is
 *	reaped when @stag is 0)
 * @signalled: complete it into the CQ when it succeeds
 * @unpublished: @stag is invalidated; @mr waits for a grace period
 * @opcode: SIW_OP_READ, or SIW_OP_READ_LOCAL_INV: invalidate the sink
 *	region's own STag when the Read completes
 */
struct iwmpa_orqe {
	u64			id;
	u32			stag;
	struct iwmpa_mr		*mr;
	bool			signalled;
	bool			unpublished;
	u8			opcode;
};

/**
 * struct iwmpa_qp - a queue pair: rings shared with user space, and an
 * RDMAP queue pair once connected
 * @base: the RDMA core's QP
 * @dev: the device
 * @pd: its PD
 * @scq: the send CQ
 * @rcq: the receive CQ
 * @ref: iw_add_ref()/iw_rem_ref() and the connection's; the last put
 *	frees the memory (destroy_qp tore the rest down)
 * @state_lock: @state, @rq and @cep against each other; held by the work
 *	item while it sends
 * @sk_lock: @sk
 * @sk: the connection's TCP socket (a reference) while @rq is there: an
 *	abortive end resets it to wake a send blocked in TCP or MPA
 * @state: IB_QPS_*
 * @rq: RDMAP's queue pair from iwmpa_qp_start() until the connection ends
 * @cep: the connection endpoint of iwmpa_cm.c, while connected
 * @srq: the shared receive queue its receives come from, or NULL: then
 *	from its own RQ ring
 * @kernel: a kernel consumer's QP: post_send and post_recv fill the
 *	rings (vzalloc()), SGEs may use the local DMA lkey
 * @sq_lock: kernel QP: the SQ ring's producers
 * @rq_lock: kernel QP: the RQ ring's producers
 * @sq_put: kernel QP: next SQE to fill
 * @rq_put: kernel QP: next RQE to fill
 * @sendq: SQ ring (user space or post_send writes SQEs, the work item
 *	clears their flags once consumed)
 * @recvq: RQ ring, consumed in softirq as Sends arrive (none with @srq)
 * @num_sqe: SQ entries
 * @num_rqe: RQ entries (with @srq: IWMPA_SRQ_QP_RXB, the size of @rxb)
 * @sq_get: next SQE to consume
 * @rq_get: next RQE to consume (with @srq: receives taken from it)
 * @sq_mmap: the SQ ring's mmap entry
 * @rq_mmap: the RQ ring's mmap entry
 * @tx_work: consumes the SQ (what the doorbell left, a Read's completion
 *	that @sq_wait waits for) and finishes a connection's end
 * @sq_wait: the SQ's head waits for Reads to complete (fence, ORD)
 * @sq_sig_all: every SQE completes into the CQ
 * @ird: RDMA Reads the peer may have outstanding
 * @ord: RDMA Reads this end may have outstanding at most (@orq's size)
 * @ord_conn: those the connection agreed on, at most @ord
 * @freed: the last reference is gone (destroy_qp waits for it)
 * @flags: IWMPA_QP_END*: the connection ended, for @tx_work
 * @rxb: the receives taken, by index in the RQ ring (@num_rqe)
 * @rx_done: receives that came back (they come back in order)
 * @orq: the Reads sent, by their number modulo @ord
 * @orq_tail: Reads sent
 * @orq_head: Reads completed or flushed (softirq)
 * @orq_reaped: Reads whose sink STag is invalidated
 * @tx_mr: the region of the SQ's last local access (under @state_lock)
 * @rx_mr: the region of the last receive posted (the receive path's
 *	context, as @rq_get)
 */
struct iwmpa_qp {
	struct ib_qp			base;
	struct iwmpa_dev		*dev;
	struct iwmpa_pd			*pd;
	struct iwmpa_cq			*scq;
	struct iwmpa_cq			*rcq;
	struct kref			ref;
	struct mutex			state_lock; /* state, rq, cep */
	spinlock_t			sk_lock; /* sk */
	struct sock			*sk;
	enum ib_qp_state		state;
	struct rdmap_qp			*rq;
	struct iwmpa_cep		*cep;
	struct iwmpa_srq		*srq;
	bool				kernel;
	spinlock_t			sq_lock; /* sq_put */
	spinlock_t			rq_lock; /* rq_put */
	u32				sq_put;
	u32				rq_put;
	struct siw_sqe			*sendq;
	struct siw_rqe			*recvq;
	u32				num_sqe;
	u32				num_rqe;
	u32				sq_get;
	u32				rq_get;
	struct rdma_user_mmap_entry	*sq_mmap;
	struct rdma_user_mmap_entry	*rq_mmap;
	struct work_struct		tx_work;
	bool				sq_wait;
	bool				sq_sig_all;
	u32				ird;
	u32				ord;
	u32				ord_conn;
	struct completion		freed;
	unsigned long			flags;
	struct iwmpa_rxb		*rxb;
	u32				rx_done;
	struct iwmpa_orqe		*orq;
	u32				orq_tail;
	u32				orq_head;
	u32				orq_reaped;
	struct iwmpa_mr_cache		tx_mr;
	struct iwmpa_mr_cache		rx_mr;
};

/*
 * Take one from @cnt unless that makes more than @max. Return: true if
 * taken.
 */
static inline bool iwmpa_count_get(atomic_t *cnt, u32 max)
{
	return atomic_add_unless(cnt, 1, max);
}

static inline struct iwmpa_dev *to_iwmpa_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct iwmpa_dev, ibdev);
}

/* count @n for @stat on @dev; any context */
static inline void iwmpa_stat_add(struct iwmpa_dev *dev, enum iwmpa_stat stat,
				  u64 n)
{
	this_cpu_add(dev->stats->v[stat], n);
}

static inline struct iwmpa_pd *to_iwmpa_pd(struct ib_pd *pd)
{
	return container_of(pd, struct iwmpa_pd, base);
}

static inline struct iwmpa_cq *to_iwmpa_cq(struct ib_cq *cq)
{
	return container_of(cq, struct iwmpa_cq, base);
}

static inline struct iwmpa_qp *to_iwmpa_qp(struct ib_qp *qp)
{
	return container_of(qp, struct iwmpa_qp, base);
}

static inline struct iwmpa_srq *to_iwmpa_srq(struct ib_srq *srq)
{
	return container_of(srq, struct iwmpa_srq, base);
}

static inline struct iwmpa_mr *to_iwmpa_mr(struct ib_mr *mr)
{
	return container_of(mr, struct iwmpa_mr, base);
}

/* iwmpa_verbs.c */
int iwmpa_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int iwmpa_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int iwmpa_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
int iwmpa_query_gid(struct ib_device *ibdev, u32 port, int idx,
		    union ib_gid *gid);
int iwmpa_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void iwmpa_dealloc_ucontext(struct ib_ucontext *uctx);
int iwmpa_alloc_pd(struct ib_pd *pd, struct ib_udata *udata);
int iwmpa_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *iwmpa_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				u64 virt, int access, struct ib_udata *udata);
int iwmpa_dereg_mr(struct ib_mr *mr, struct ib_udata *udata);
struct ib_mr *iwmpa_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *iwmpa_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int iwmpa_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);

/*
 * iwmpa_main.c: the send queues' work and work items that outlive a verb
 * (freeing a region); WQ_MEM_RECLAIM
 */
extern struct workqueue_struct *iwmpa_wq;

/* iwmpa_verbs.c */
struct iwmpa_mr *iwmpa_mr_lookup(struct iwmpa_pd *pd,
				 struct iwmpa_mr_cache *cache, u32 lkey,
				 u64 addr, u32 len, bool write, u32 *idx,
				 u32 *first);
void iwmpa_mr_put(struct iwmpa_mr *mr);
struct page *iwmpa_kva_page(u64 addr);
u16 iwmpa_mr_fastreg(struct iwmpa_pd *pd, struct iwmpa_mr *mr, u32 stag,
		     int access);
u16 iwmpa_mr_local_inv(struct iwmpa_pd *pd, u32 stag);
void iwmpa_mr_inv_remote(struct iwmpa_pd *pd, u32 stag);

/* iwmpa_qp.c: queue pairs and completion queues */
int iwmpa_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int iwmpa_destroy_cq(struct ib_cq *cq, struct ib_udata *udata);
int iwmpa_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags);
int iwmpa_poll_cq(struct ib_cq *cq, int num, struct ib_wc *wc);
int iwmpa_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *attr,
		    struct ib_udata *udata);
int iwmpa_destroy_qp(struct ib_qp *qp, struct ib_udata *udata);
int iwmpa_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int iwmpa_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int iwmpa_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad);
int iwmpa_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad);
int iwmpa_ring_post_recv(struct siw_rqe *ring, u32 num, u32 *put, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad);
int iwmpa_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void *iwmpa_ring_new(struct ib_udata *udata, size_t size,
		     struct rdma_user_mmap_entry **entry, u64 *key);
void iwmpa_ring_del(void *ring, struct rdma_user_mmap_entry *entry);
void iwmpa_mmap_free(struct rdma_user_mmap_entry *entry);
void iwmpa_qp_get(struct ib_qp *qp);
void iwmpa_qp_put(struct ib_qp *qp);
struct ib_qp *iwmpa_get_qp(struct ib_device *ibdev, int qpn);
struct ib_qp *iwmpa_iw_get_qp(struct ib_device *ibdev, int qpn);

/* iwmpa_srq.c: shared receive queues */
int iwmpa_create_srq(struct ib_srq *srq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int iwmpa_destroy_srq(struct ib_srq *srq, struct ib_udata *udata);
int iwmpa_modify_srq(struct ib_srq *srq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int iwmpa_query_srq(struct ib_srq *srq, struct ib_srq_attr *attr);
int iwmpa_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad);
bool iwmpa_srq_take(struct iwmpa_srq *srq, struct siw_rqe *rqe);
void iwmpa_rqe_copy(struct siw_rqe *rqe, const struct siw_rqe *slot);

/*
 * Between the connection manager (iwmpa_cm.c) and the queue pairs.
 *
 * iwmpa_qp_start(): MPA is in full operation on @sock and no MPA consumer
 * is bound; make @qp an RDMAP queue pair on it (IRD @ird, ORD @ord) and
 * move it to RTS. @cep is kept in qp->cep until the connection ends.
 * Process context. Return: 0 or a negative errno (then nothing changed).
 *
 * iwmpa_cm_qp_ended(): from the queue pair to the connection manager:
 * the RDMAP queue pair is gone (the peer closed or terminated, the QP
 * moved to ERROR/SQD, or destroy_qp); @graceful: the peer closed, or this
 * end closed, without an error. The connection manager sends
 * IW_CM_EVENT_DISCONNECT (if not sent) and IW_CM_EVENT_CLOSE, releases
 * the socket and drops its reference on the QP and the cm_id. Process
 * context, without qp->state_lock.
 */
int iwmpa_qp_start(struct iwmpa_qp *qp, struct iwmpa_cep *cep,
		   struct socket *sock, u32 ird, u32 ord);
void iwmpa_cm_qp_ended(struct iwmpa_cep *cep, bool graceful);

/* iwmpa_cm.c: the connection manager (struct iw_cm_verbs) */
int iwmpa_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int iwmpa_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int iwmpa_reject(struct iw_cm_id *id, const void *pd, u8 pd_len);
int iwmpa_create_listen(struct iw_cm_id *id, int backlog);
int iwmpa_destroy_listen(struct iw_cm_id *id);
int iwmpa_cm_init(void);
void iwmpa_cm_exit(void);

#endif /* _IWMPA_H */
