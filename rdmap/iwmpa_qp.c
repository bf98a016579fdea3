// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues and queue pairs of iwmpa.ko, in siw's user ABI
 * (<rdma/siw-abi.h>): the rings live in vmalloc_user() memory that user
 * space maps.
 *
 * - A CQ ring is written here (struct siw_cqe, VALID last) and read by
 *   the provider, which clears each entry's flags; the control word after
 *   the ring carries the provider's arming.
 * - The SQ ring is written by the provider; post_send without a work
 *   request is its doorbell. A work item consumes the SQEs in order,
 *   clearing each one's flags once taken, and hands them to rdmap.ko
 *   (Send, Send with Invalidate and Solicited Event, RDMA Write, RDMA
 *   Read). Sends and Writes complete once with TCP, a Read on its Read
 *   Response (a Read's sink gets a DDP STag of its own, bound to the
 *   stream, for the time of the Read).
 * - The RQ ring has no doorbell: a Send that finds no posted buffer asks
 *   for one (RDMAP's refill callback, softirq), and the posted RQEs are
 *   taken then, as siw takes them.
 *
 * Local SGEs name memory regions by lkey (iwmpa_mr_lookup()); a region
 * stays pinned while a posted receive or a Read uses it.
 *
 * A kernel consumer's CQs and QPs have the same rings in kernel memory:
 * post_send and post_recv turn work requests into SQEs and RQEs (plus
 * fast registration and local invalidation, and an RDMA Read that
 * invalidates its sink), poll_cq turns CQEs into work completions. Their
 * SGEs may name kernel memory with the local DMA lkey.
 */
#include <linux/bvec.h>
#include <linux/delay.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/tcp.h>
#include <rdma/uverbs_ioctl.h>

#include "iwmpa.h"

/* iwmpa_qp.flags: what the work item must do beyond the SQ */
enum {
	IWMPA_QP_END,		/* the connection ended: finish it */
	IWMPA_QP_END_ABORT,	/* ... with an error, or a Terminate */
};

/* not a SIW_WC_* status: the SQE was not sent, and waits for the work item */
#define IWMPA_WC_AGAIN	0xffff

/*
 * A graceful end waits this long for a send of the work item to finish,
 * looking every IWMPA_END_POLL_MS, then resets the connection.
 */
#define IWMPA_END_WAIT_MS	2000
#define IWMPA_END_POLL_MS	10

/**
 * struct iwmpa_mmap - a ring user space maps
 * @base: the RDMA core's entry; its offset is the mmap key
 * @addr: the ring, vmalloc_user(); freed with the last mapping
 */
struct iwmpa_mmap {
	struct rdma_user_mmap_entry	base;
	void				*addr;
};

static atomic_t iwmpa_cq_ids = ATOMIC_INIT(0);

/* ---- rings ---- */

static void *iwmpa_ring_alloc(struct ib_udata *udata, size_t size,
			      struct rdma_user_mmap_entry **entry, u64 *key)
{
	struct iwmpa_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct iwmpa_ucontext, base);
	struct iwmpa_mmap *m;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return NULL;
	m->addr = vmalloc_user(size);
	if (!m->addr)
		goto err_free;
	if (rdma_user_mmap_entry_insert(&uctx->base, &m->base,
					PAGE_ALIGN(size)))
		goto err_vfree;
	*entry = &m->base;
	*key = rdma_user_mmap_get_offset(&m->base);
	return m->addr;

err_vfree:
	vfree(m->addr);
err_free:
	kfree(m);
	return NULL;
}

/* the ring goes with its last mapping, see iwmpa_mmap_free() */
static void iwmpa_ring_free(struct rdma_user_mmap_entry *entry)
{
	if (entry)
		rdma_user_mmap_entry_remove(entry);
}

/**
 * iwmpa_mmap_free() - the last mapping of a ring is gone
 * @entry: its entry
 */
void iwmpa_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct iwmpa_mmap *m = container_of(entry, struct iwmpa_mmap, base);

	vfree(m->addr);
	kfree(m);
}

/**
 * iwmpa_mmap() - map a CQ, SQ or RQ ring into user space
 * @uctx: the user context
 * @vma: the mapping; its offset is the key create_cq or create_qp gave
 *
 * Return: 0, -EINVAL for an unknown key or a mapping larger than the ring.
 */
int iwmpa_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	int ret;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	ret = remap_vmalloc_range(vma,
				  container_of(entry, struct iwmpa_mmap,
					       base)->addr, 0);
	rdma_user_mmap_entry_put(entry);
	return ret;
}

/* a ring of user space (mapped) or of a kernel consumer */
void *iwmpa_ring_new(struct ib_udata *udata, size_t size,
		     struct rdma_user_mmap_entry **entry, u64 *key)
{
	if (!udata)
		return vzalloc(size);
	return iwmpa_ring_alloc(udata, size, entry, key);
}

void iwmpa_ring_del(void *ring, struct rdma_user_mmap_entry *entry)
{
	if (entry)
		iwmpa_ring_free(entry);
	else
		vfree(ring);
}

/* ---- completion queues ---- */

/**
 * iwmpa_create_cq() - a completion queue, of user space or of the kernel
 * @ibcq: the CQ, allocated by the RDMA core
 * @attr: its size (entries) and flags (none supported)
 * @udata: out: struct siw_uresp_create_cq; NULL for a kernel CQ
 *
 * The ring has the next power of 2 entries.
 *
 * Return: 0 or a negative errno.
 */
int iwmpa_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibcq->device);
	struct iwmpa_cq *cq = to_iwmpa_cq(ibcq);
	struct siw_uresp_create_cq uresp = {};
	int ret;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > dev->limits.max_cqe)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (!iwmpa_count_get(&dev->num_cq, dev->limits.max_cq))
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	cq->num_cqe = roundup_pow_of_two(attr->cqe);
	cq->kernel = !udata;
	cq->queue = iwmpa_ring_new(udata, cq->num_cqe * sizeof(*cq->queue) +
				   sizeof(*cq->ctrl), &cq->mmap_entry,
				   &uresp.cq_key);
	if (!cq->queue) {
		ret = -ENOMEM;
		goto err_count;
	}
	cq->ctrl = (struct siw_cq_ctrl *)&cq->queue[cq->num_cqe];
	cq->id = atomic_inc_return(&iwmpa_cq_ids);
	ibcq->cqe = cq->num_cqe;
	if (!udata)
		return 0;
	uresp.cq_id = cq->id;
	uresp.num_cqe = cq->num_cqe;
	ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (ret)
		goto err_ring;
	return 0;

err_ring:
	iwmpa_ring_del(cq->queue, cq->mmap_entry);
err_count:
	atomic_dec(&dev->num_cq);
	return ret;
}

/**
 * iwmpa_destroy_cq() - free a completion queue
 * @ibcq: the CQ; the RDMA core destroyed its QPs before
 * @udata: unused
 *
 * Return: 0.
 */
int iwmpa_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct iwmpa_cq *cq = to_iwmpa_cq(ibcq);

	iwmpa_ring_del(cq->queue, cq->mmap_entry);
	atomic_dec(&to_iwmpa_dev(ibcq->device)->num_cq);
	return 0;
}

static const u8 iwmpa_wc_opcode[] = {
	[SIW_OP_WRITE] = IB_WC_RDMA_WRITE,
	[SIW_OP_READ] = IB_WC_RDMA_READ,
	[SIW_OP_READ_LOCAL_INV] = IB_WC_RDMA_READ,
	[SIW_OP_SEND] = IB_WC_SEND,
	[SIW_OP_SEND_REMOTE_INV] = IB_WC_SEND,
	[SIW_OP_REG_MR] = IB_WC_REG_MR,
	[SIW_OP_INVAL_STAG] = IB_WC_LOCAL_INV,
	[SIW_OP_RECEIVE] = IB_WC_RECV,
};

static const u8 iwmpa_wc_status[] = {
	[SIW_WC_SUCCESS] = IB_WC_SUCCESS,
	[SIW_WC_LOC_LEN_ERR] = IB_WC_LOC_LEN_ERR,
	[SIW_WC_LOC_PROT_ERR] = IB_WC_LOC_PROT_ERR,
	[SIW_WC_LOC_QP_OP_ERR] = IB_WC_LOC_QP_OP_ERR,
	[SIW_WC_WR_FLUSH_ERR] = IB_WC_WR_FLUSH_ERR,
	[SIW_WC_BAD_RESP_ERR] = IB_WC_BAD_RESP_ERR,
	[SIW_WC_LOC_ACCESS_ERR] = IB_WC_LOC_ACCESS_ERR,
	[SIW_WC_REM_ACCESS_ERR] = IB_WC_REM_ACCESS_ERR,
	[SIW_WC_REM_INV_REQ_ERR] = IB_WC_REM_INV_REQ_ERR,
	[SIW_WC_GENERAL_ERR] = IB_WC_GENERAL_ERR,
};

/**
 * iwmpa_poll_cq() - take completions from a kernel CQ
 * @ibcq: the CQ
 * @num: entries wanted
 * @wc: out: the completions
 *
 * User CQs are polled in user space, from the ring: none here.
 * Any context. Return: the number of completions taken.
 */
int iwmpa_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct iwmpa_cq *cq = to_iwmpa_cq(ibcq);
	unsigned long flags;
	int n = 0;

	if (!cq->kernel)
		return 0;
	spin_lock_irqsave(&cq->lock, flags);
	for (; n < num; n++, wc++) {
		struct siw_cqe *cqe = &cq->queue[cq->get & (cq->num_cqe - 1)];
		u8 f = READ_ONCE(cqe->flags);

		if (!(f & SIW_WQE_VALID))
			break;
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = cqe->id;
		wc->status = cqe->status < ARRAY_SIZE(iwmpa_wc_status) ?
			     iwmpa_wc_status[cqe->status] : IB_WC_GENERAL_ERR;
		if (cqe->opcode < ARRAY_SIZE(iwmpa_wc_opcode))
			wc->opcode = iwmpa_wc_opcode[cqe->opcode];
		wc->byte_len = cqe->bytes;
		wc->qp = cqe->base_qp;
		if (f & SIW_WQE_REM_INVAL) {
			wc->wc_flags = IB_WC_WITH_INVALIDATE;
			wc->ex.invalidate_rkey = cqe->inval_stag;
		}
		WRITE_ONCE(cqe->flags, 0);
		cq->get++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * iwmpa_req_notify_cq() - arm a kernel CQ
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, and
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * User space arms through the ring's control word.
 * Any context. Return: 1 when asked to report missed events and the CQ
 * holds a completion, else 0.
 */
int iwmpa_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct iwmpa_cq *cq = to_iwmpa_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	if (!cq->kernel)
		return 0;
	/* the producers read the arming under the lock */
	spin_lock_irqsave(&cq->lock, irqflags);
	WRITE_ONCE(cq->ctrl->flags,
		   (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		   SIW_NOTIFY_SOLICITED : SIW_NOTIFY_NEXT_COMPLETION);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (READ_ONCE(cq->queue[cq->get & (cq->num_cqe - 1)].flags) &
	     SIW_WQE_VALID))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * Add @c to @cq: softirq or process context. Tells the CQ's owner when
 * the provider armed it for this completion; an overflow is a CQ error.
 */
static void iwmpa_cq_add(struct iwmpa_cq *cq, const struct siw_cqe *c,
			 bool solicited)
{
	struct siw_cqe *cqe;
	unsigned long flags;
	bool notify = false;
	u32 arm;

	spin_lock_irqsave(&cq->lock, flags);
	cqe = &cq->queue[cq->put & (cq->num_cqe - 1)];
	if (READ_ONCE(cqe->flags) & SIW_WQE_VALID) {
		spin_unlock_irqrestore(&cq->lock, flags);
		iwmpa_stat_add(to_iwmpa_dev(cq->base.device),
			       IWMPA_STAT_CQ_OVERFLOW, 1);
		if (cq->base.event_handler) {
			struct ib_event ev = {
				.device = cq->base.device,
				.element.cq = &cq->base,
				.event = IB_EVENT_CQ_ERR,
			};

			cq->base.event_handler(&ev, cq->base.cq_context);
		}
		return;
	}
	cqe->id = c->id;
	cqe->opcode = c->opcode;
	cqe->status = c->status;
	cqe->bytes = c->bytes;
	cqe->inval_stag = c->inval_stag;
	/* or base_qp, for a kernel CQ */
	cqe->qp_id = c->qp_id;
	/* the provider reads the entry once it sees VALID */
	smp_store_release(&cqe->flags, c->flags | SIW_WQE_VALID);
	cq->put++;
	arm = READ_ONCE(cq->ctrl->flags);
	if ((arm & SIW_NOTIFY_NEXT_COMPLETION) ||
	    (solicited && (arm & SIW_NOTIFY_SOLICITED)))
		/* disarm, unless the provider re-armed meanwhile */
		notify = cmpxchg(&cq->ctrl->flags, arm, SIW_NOTIFY_NOT) == arm;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (notify && cq->base.comp_handler)
		cq->base.comp_handler(&cq->base, cq->base.cq_context);
}

static void iwmpa_complete(struct iwmpa_qp *qp, struct iwmpa_cq *cq, u64 id,
			   u8 opcode, u16 status, u32 bytes, u32 inval,
			   bool solicited)
{
	struct siw_cqe c = {
		.id = id,
		.flags = inval ? SIW_WQE_REM_INVAL : 0,
		.opcode = opcode,
		.status = status,
		.bytes = bytes,
		.inval_stag = inval,
	};

	if (cq->kernel)
		c.base_qp = &qp->base;
	else
		c.qp_id = qp->base.qp_num;

	iwmpa_cq_add(cq, &c, solicited);
}

/* ---- queue pairs: references and lookup ---- */

static void iwmpa_qp_release(struct kref *ref)
{
	complete(&container_of(ref, struct iwmpa_qp, ref)->freed);
}

/**
 * iwmpa_qp_get() - take a reference on a queue pair (iw_add_ref)
 * @ibqp: the QP
 */
void iwmpa_qp_get(struct ib_qp *ibqp)
{
	kref_get(&to_iwmpa_qp(ibqp)->ref);
}

/**
 * iwmpa_qp_put() - drop a reference (iw_rem_ref); destroy_qp waits for
 * the last one
 * @ibqp: the QP
 */
void iwmpa_qp_put(struct ib_qp *ibqp)
{
	kref_put(&to_iwmpa_qp(ibqp)->ref, iwmpa_qp_release);
}

/**
 * iwmpa_get_qp() - the queue pair of a number, with a reference
 * @ibdev: the device
 * @qpn: the QP number
 *
 * Return: the QP (drop the reference with iwmpa_qp_put()), or NULL.
 */
struct ib_qp *iwmpa_get_qp(struct ib_device *ibdev, int qpn)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibdev);
	struct iwmpa_qp *qp;

	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	if (qp && !kref_get_unless_zero(&qp->ref))
		qp = NULL;
	xa_unlock(&dev->qps);
	return qp ? &qp->base : NULL;
}

/**
 * iwmpa_iw_get_qp() - the queue pair of a number, for the iWARP CM
 * @ibdev: the device
 * @qpn: the QP number
 *
 * The iWARP CM takes its own reference with iw_add_ref.
 * Return: the QP or NULL.
 */
struct ib_qp *iwmpa_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct ib_qp *ibqp = iwmpa_get_qp(ibdev, qpn);

	if (ibqp)
		iwmpa_qp_put(ibqp);
	return ibqp;
}

/* ---- receive: the RQ ring, taken as Sends arrive ---- */

/* a receive taken from the RQ ring comes back (in the order taken) */
static void iwmpa_rx_done(struct iwmpa_qp *qp, u64 cookie, u16 status,
			  u32 len, u32 inval, bool solicited)
{
	struct iwmpa_rxb *rb = &qp->rxb[cookie & (qp->num_rqe - 1)];
	u32 i;

	if (status == SIW_WC_SUCCESS) {
		iwmpa_stat_add(qp->dev, IWMPA_STAT_RECV_RX, 1);
		iwmpa_stat_add(qp->dev, IWMPA_STAT_RX_BYTES, len);
	}
	iwmpa_complete(qp, qp->rcq, rb->id, SIW_OP_RECEIVE, status, len, inval,
		       solicited);
	if (rb->mr)
		iwmpa_mr_put(rb->mr);
	for (i = 0; rb->mrs && i < rb->nmrs; i++)
		if (rb->mrs[i])
			iwmpa_mr_put(rb->mrs[i]);
	kfree(rb->mrs);
	rb->mr = NULL;
	rb->mrs = NULL;
	qp->rx_done++;
}

/* the RQE at rq_get completes without a buffer posted: an error, a flush */
static void iwmpa_rqe_fail(struct iwmpa_qp *qp, u64 id, u16 status)
{
	struct iwmpa_rxb *rb = &qp->rxb[qp->rq_get & (qp->num_rqe - 1)];

	rb->id = id;
	rb->mr = NULL;
	rb->mrs = NULL;
	iwmpa_rx_done(qp, qp->rq_get++, status, 0, 0, false);
}

/* a kernel QP's SGE names kernel memory with the local DMA lkey */
static bool iwmpa_dma_lkey(const struct iwmpa_qp *qp, u32 lkey)
{
	return qp->kernel && lkey == IWMPA_DMA_LKEY;
}

/*
 * The pages of kernel memory [@addr, @addr + @len) into @pages. Return:
 * false if some of it is not kernel memory.
 */
static bool iwmpa_kva_pages(u64 addr, u32 len, struct page **pages)
{
	u64 a = addr & PAGE_MASK, end = addr + len;
	u32 i = 0;

	if (end < addr)
		return false;
	for (; a < end; a += PAGE_SIZE) {
		pages[i] = iwmpa_kva_page(a);
		if (!pages[i++])
			return false;
	}
	return true;
}

#define IWMPA_RX_STACK_PAGES	4

/* a receive into kernel memory (local DMA lkey); softirq */
static int iwmpa_rqe_post_kva(struct rdmap_qp *rqp, const struct siw_sge *sge,
			      u32 idx)
{
	struct page *stack[IWMPA_RX_STACK_PAGES], **pages = stack;
	u32 first = sge->laddr & ~PAGE_MASK;
	u32 n = DIV_ROUND_UP(first + (u64)sge->length, PAGE_SIZE);
	int ret;

	if (n > ARRAY_SIZE(stack)) {
		pages = kmalloc_array(n, sizeof(*pages), GFP_ATOMIC);
		if (!pages)
			return SIW_WC_GENERAL_ERR;
	}
	if (!iwmpa_kva_pages(sge->laddr, sge->length, pages))
		ret = SIW_WC_LOC_PROT_ERR;
	else
		/* DDP copies the page list */
		ret = rdmap_post_recv(rqp, pages, n, first, sge->length, idx,
				      GFP_ATOMIC);
	if (pages != stack)
		kfree(pages);
	return ret;
}

/* the PD of a QP's receives: an SRQ's RQEs name memory of the SRQ's PD */
static struct iwmpa_pd *iwmpa_rq_pd(const struct iwmpa_qp *qp)
{
	return qp->srq ? to_iwmpa_pd(qp->srq->base.pd) : qp->pd;
}

/*
 * The buffer of an RQE of several SGEs: one run of pages per SGE, each a
 * region's (held until the buffer comes back) or kernel memory's (local
 * DMA lkey); an SGE of no octets adds nothing. Softirq. Return: 0,
 * -ENOBUFS, or a SIW_WC_* error status (positive).
 */
static int iwmpa_rqe_post_sg(struct iwmpa_qp *qp, struct rdmap_qp *rqp,
			     const struct siw_rqe *rqe, u32 idx)
{
	struct iwmpa_rxb *rb = &qp->rxb[idx & (qp->num_rqe - 1)];
	struct page **kva[IWMPA_MAX_RECV_SGE] = {};
	struct ddp_sge sg[IWMPA_MAX_RECV_SGE];
	struct iwmpa_pd *pd = iwmpa_rq_pd(qp);
	u32 i, n = rqe->num_sge;
	struct iwmpa_mr **mrs;
	u64 total = 0;
	int ret = 0;

	if (n > qp->dev->limits.max_recv_sge)
		return SIW_WC_LOC_LEN_ERR;
	mrs = kcalloc(n, sizeof(*mrs), GFP_ATOMIC);
	if (!mrs)
		return SIW_WC_GENERAL_ERR;
	for (i = 0; i < n && !ret; i++) {
		const struct siw_sge *sge = &rqe->sge[i];
		u32 pg, first = sge->laddr & ~PAGE_MASK;

		sg[i] = (struct ddp_sge){ .len = sge->length };
		total += sge->length;
		if (!sge->length)
			continue;
		if (iwmpa_dma_lkey(qp, sge->lkey)) {
			kva[i] = kmalloc_array(DIV_ROUND_UP(first + (u64)sge->length,
							    PAGE_SIZE),
					       sizeof(**kva), GFP_ATOMIC);
			if (!kva[i])
				ret = SIW_WC_GENERAL_ERR;
			else if (!iwmpa_kva_pages(sge->laddr, sge->length, kva[i]))
				ret = SIW_WC_LOC_PROT_ERR;
			sg[i].pages = kva[i];
			sg[i].first = first;
			continue;
		}
		mrs[i] = iwmpa_mr_lookup(pd, &qp->rx_mr, sge->lkey, sge->laddr,
					 sge->length, true, &pg, &first);
		if (!mrs[i]) {
			ret = SIW_WC_LOC_PROT_ERR;
			continue;
		}
		sg[i].pages = &mrs[i]->pages[pg];
		sg[i].first = first;
	}
	if (!ret && !total)
		ret = SIW_WC_LOC_LEN_ERR;
	if (!ret) {
		/* DDP copies the page lists */
		ret = rdmap_post_recv_sg(rqp, sg, n, idx, GFP_ATOMIC);
		if (ret && ret != -ENOBUFS)
			ret = SIW_WC_GENERAL_ERR;
	}
	for (i = 0; i < n; i++)
		kfree(kva[i]);
	if (ret) {
		for (i = 0; i < n; i++)
			if (mrs[i])
				iwmpa_mr_put(mrs[i]);
		kfree(mrs);
		return ret;
	}
	rb->id = rqe->id;
	rb->mr = NULL;
	rb->mrs = mrs;
	rb->nmrs = n;
	return 0;
}

/*
 * Post the buffer of one RQE with RDMAP. Return: 0, -ENOBUFS when DDP
 * holds as many buffers as it takes (the RQE stays in the ring for a
 * later refill), or a SIW_WC_* error status (positive) for an RQE that
 * names no valid local memory.
 */
static int iwmpa_rqe_post(struct iwmpa_qp *qp, struct rdmap_qp *rqp,
			  const struct siw_rqe *rqe, u32 idx)
{
	const struct siw_sge *sge = &rqe->sge[0];
	struct iwmpa_rxb *rb = &qp->rxb[idx & (qp->num_rqe - 1)];
	struct iwmpa_pd *pd = iwmpa_rq_pd(qp);
	struct iwmpa_mr *mr = NULL;
	u32 pg, first;
	int ret;

	if (rqe->num_sge > 1)
		return iwmpa_rqe_post_sg(qp, rqp, rqe, idx);
	/* one SGE: the buffer is one run of pages */
	if (rqe->num_sge != 1 || !sge->length)
		return SIW_WC_LOC_LEN_ERR;
	if (iwmpa_dma_lkey(qp, sge->lkey)) {
		ret = iwmpa_rqe_post_kva(rqp, sge, idx);
	} else {
		mr = iwmpa_mr_lookup(pd, &qp->rx_mr, sge->lkey, sge->laddr,
				     sge->length, true, &pg, &first);
		if (!mr)
			return SIW_WC_LOC_PROT_ERR;
		ret = rdmap_post_recv(rqp, &mr->pages[pg],
				      DIV_ROUND_UP(first + sge->length,
						   PAGE_SIZE),
				      first, sge->length, idx, GFP_ATOMIC);
	}
	if (ret) {
		if (mr)
			iwmpa_mr_put(mr);
		return ret == -ENOBUFS || ret > 0 ? ret : SIW_WC_GENERAL_ERR;
	}
	rb->id = rqe->id;
	rb->mr = mr;
	rb->mrs = NULL;
	return 0;
}

/*
 * The refill of a queue pair bound to an SRQ: one RQE, the buffer of the
 * Send that found none, so that the QP holds no more of the SRQ than the
 * messages it receives. An RQE that names no valid local memory, or one
 * beyond the receives the QP may hold, completes with an error (the Send
 * is refused: a Terminate).
 */
static void iwmpa_srq_refill(struct iwmpa_qp *qp, struct rdmap_qp *rqp)
{
	struct siw_rqe rqe;
	int ret;

	if (!iwmpa_srq_take(qp->srq, &rqe))
		return;
	if (qp->rq_get - qp->rx_done >= qp->num_rqe) {
		/* every slot of @rxb is taken: none to complete it in order */
		iwmpa_complete(qp, qp->rcq, rqe.id, SIW_OP_RECEIVE,
			       SIW_WC_GENERAL_ERR, 0, 0, false);
		return;
	}
	ret = iwmpa_rqe_post(qp, rqp, &rqe, qp->rq_get);
	if (ret)
		iwmpa_rqe_fail(qp, rqe.id, ret < 0 ? SIW_WC_GENERAL_ERR : ret);
	else
		qp->rq_get++;
}

/*
 * An RQE of the ring, read once: the SGEs it says it has, as many as an
 * RQE holds (more fail in iwmpa_rqe_post()). After the acquire of VALID.
 */
void iwmpa_rqe_copy(struct siw_rqe *rqe, const struct siw_rqe *slot)
{
	u32 i;

	rqe->id = READ_ONCE(slot->id);
	rqe->num_sge = READ_ONCE(slot->num_sge);
	for (i = 0; i < min_t(u32, rqe->num_sge, SIW_MAX_SGE); i++) {
		rqe->sge[i].laddr = READ_ONCE(slot->sge[i].laddr);
		rqe->sge[i].length = READ_ONCE(slot->sge[i].length);
		rqe->sge[i].lkey = READ_ONCE(slot->sge[i].lkey);
	}
}

/*
 * RDMAP's refill: a Send found no buffer; take what the RQ ring holds, as
 * much as DDP takes. An RQE that names no valid local memory completes
 * with an error and stops the taking (the Send that needed it is refused
 * by DDP: a Terminate).
 */
static void iwmpa_qp_refill(struct rdmap_qp *rqp)
{
	struct iwmpa_qp *qp = rdmap_qp_priv(rqp);

	if (qp->srq) {
		iwmpa_srq_refill(qp, rqp);
		return;
	}
	while (qp->rq_get - qp->rx_done < qp->num_rqe) {
		struct siw_rqe *slot = &qp->recvq[qp->rq_get &
						  (qp->num_rqe - 1)];
		/* iwmpa_rqe_copy() sets what is read: not zeroed each time */
		struct siw_rqe rqe __uninitialized;
		int ret;

		/* pairs with the provider's store of VALID */
		rqe.flags = smp_load_acquire(&slot->flags);
		if (!(rqe.flags & SIW_WQE_VALID))
			break;
		iwmpa_rqe_copy(&rqe, slot);
		ret = iwmpa_rqe_post(qp, rqp, &rqe, qp->rq_get);
		if (ret == -ENOBUFS)
			break;
		/* taken: the provider may fill the slot again */
		smp_store_release(&slot->flags, 0);
		if (ret) {
			iwmpa_rqe_fail(qp, rqe.id, ret);
			break;
		}
		qp->rq_get++;
	}
}

/* RQEs never taken come back flushed (the QP is in error, or gone) */
static void iwmpa_rq_flush(struct iwmpa_qp *qp)
{
	/* those of an SRQ stay there, for the other queue pairs */
	if (qp->srq)
		return;
	for (;;) {
		struct siw_rqe *slot = &qp->recvq[qp->rq_get &
						  (qp->num_rqe - 1)];

		/* pairs with the provider's store of VALID */
		if (!(smp_load_acquire(&slot->flags) & SIW_WQE_VALID))
			break;
		iwmpa_rqe_fail(qp, READ_ONCE(slot->id), SIW_WC_WR_FLUSH_ERR);
		/* the slot's reads before the provider may fill it again */
		smp_store_release(&slot->flags, 0);
	}
}

/* ---- RDMA Reads: the ORQ ---- */

/**
 * struct iwmpa_mr_rcu - a region's reference dropped after a grace period
 * @rcu: the grace period
 * @mr: the region
 */
struct iwmpa_mr_rcu {
	struct rcu_head		rcu;
	struct iwmpa_mr		*mr;
};

static void iwmpa_mr_put_rcu_cb(struct rcu_head *rcu)
{
	struct iwmpa_mr_rcu *d = container_of(rcu, struct iwmpa_mr_rcu, rcu);

	iwmpa_mr_put(d->mr);
	kfree(d);
}

/*
 * Drop @mr once DDP's placements that may still write into it (under
 * rcu_read_lock()) are over. A reference that is not the last one frees
 * nothing and goes at once: the only writer into the sink, the stream's
 * receive path, is the caller, and its STag is unpublished; the pages
 * stay until the last holder lets go (the registration after the grace
 * period of iwmpa_dereg_mr()'s ddp_invalidate()). Return: false without
 * memory.
 */
static bool iwmpa_mr_put_rcu(struct iwmpa_mr *mr)
{
	struct iwmpa_mr_rcu *d;

	if (refcount_dec_not_one(&mr->ref))
		return true;
	d = kmalloc(sizeof(*d), GFP_ATOMIC);
	if (!d)
		return false;
	d->mr = mr;
	call_rcu(&d->rcu, iwmpa_mr_put_rcu_cb);
	return true;
}

/*
 * A Read completed (its Read Response placed) or was flushed: softirq.
 * A completed Read's own sink STag is unpublished at once (as a Send with
 * Invalidate would, without sleeping) and its region let go after a grace
 * period; a sink named by its region's STag lets the region go at once
 * (the region's registration outlives the placements into it, see
 * iwmpa_dereg_mr()); a flushed Read's sink waits for iwmpa_orq_reap().
 * A Read with local invalidate invalidates its sink region's STag before
 * it completes.
 */
static void iwmpa_read_done(struct iwmpa_qp *qp, struct rdmap_qp *rqp,
			    u64 cookie, u16 status, u32 len)
{
	struct iwmpa_orqe *o = &qp->orq[cookie % qp->ord];
	struct ddp_stream *s = rdmap_qp_stream(rqp);

	if (status == SIW_WC_SUCCESS) {
		iwmpa_stat_add(qp->dev, IWMPA_STAT_READ_DONE, 1);
		iwmpa_stat_add(qp->dev, IWMPA_STAT_RX_BYTES, len);
	}
	if (status == SIW_WC_SUCCESS && o->opcode == SIW_OP_READ_LOCAL_INV &&
	    o->mr) {
		WRITE_ONCE(o->mr->valid, false);
		ddp_invalidate_remote(s, o->mr->stag);
		iwmpa_stat_add(qp->dev, IWMPA_STAT_LOCAL_INV, 1);
	}
	if (o->signalled || status != SIW_WC_SUCCESS)
		iwmpa_complete(qp, qp->scq, o->id, o->opcode, status, len, 0,
			       false);
	if (status == SIW_WC_SUCCESS && !o->stag) {
		/* named by its region's STag: its registration guards it */
		iwmpa_mr_put(o->mr);
		o->mr = NULL;
	} else if (status == SIW_WC_SUCCESS &&
		   !ddp_invalidate_remote(s, o->stag)) {
		o->stag = 0;
		/* a sink in kernel memory (local DMA lkey) has no region */
		if (o->mr && !iwmpa_mr_put_rcu(o->mr))
			o->unpublished = true;
		else
			o->mr = NULL;
	}
	/* pairs with the acquire in iwmpa_orq_reap() and the SQ's */
	smp_store_release(&qp->orq_head, qp->orq_head + 1);
	/* the head before the flag: see iwmpa_sq_process() */
	smp_mb();
	/* the SQ may go on (ORD, fence); else the next doorbell reaps */
	if (READ_ONCE(qp->sq_wait))
		queue_work(iwmpa_wq, &qp->tx_work);
}

/*
 * Free the ORQ slots of the Reads that completed or were flushed. A sink
 * still held: invalidate its STag (while the stream lives: its release
 * invalidates what is left, and a late invalidation could hit a new
 * region of the same STag), or wait a grace period if it is unpublished
 * already; then let its region go. Under state_lock.
 */
static void iwmpa_orq_reap(struct iwmpa_qp *qp, bool stream_gone)
{
	/* pairs with the release in iwmpa_read_done() */
	u32 head = smp_load_acquire(&qp->orq_head);

	if (stream_gone)
		head = qp->orq_tail;
	while (qp->orq_reaped != head) {
		struct iwmpa_orqe *o = &qp->orq[qp->orq_reaped % qp->ord];

		if (o->unpublished)
			synchronize_rcu();
		else if (o->stag && !stream_gone)
			ddp_invalidate(qp->pd->ddp, o->stag);
		if (o->mr)
			iwmpa_mr_put(o->mr);
		o->mr = NULL;
		o->stag = 0;
		o->unpublished = false;
		qp->orq_reaped++;
	}
}

/* ---- send: the SQ ring ---- */

#define IWMPA_TX_STACK_BV	16

/*
 * The SGEs of @sqe as an iterator over their pages: the regions', or
 * kernel memory's for the local DMA lkey. Holds a reference on each
 * region in @mrs. The bio_vecs are in @stack if they fit, else in *@bvp
 * (kvfree() it). Return: a SIW_WC_* status.
 */
static u16 iwmpa_sge_iter(struct iwmpa_qp *qp, const struct siw_sqe *sqe,
			  struct iov_iter *it, struct bio_vec *stack,
			  struct bio_vec **bvp, struct iwmpa_mr **mrs,
			  u32 *bytes)
{
	u32 pg[SIW_MAX_SGE], first[SIW_MAX_SGE];
	u32 i, n = 0, nbv = 0, total = 0;
	struct bio_vec *bv = stack;

	*bvp = NULL;
	if (sqe->num_sge > SIW_MAX_SGE)
		return SIW_WC_LOC_QP_OP_ERR;
	for (i = 0; i < sqe->num_sge; i++) {
		const struct siw_sge *sge = &sqe->sge[i];

		mrs[i] = NULL;
		if (!sge->length)
			continue;
		if (sge->length > U32_MAX - total)
			return SIW_WC_LOC_LEN_ERR;
		if (iwmpa_dma_lkey(qp, sge->lkey)) {
			if (sge->laddr + sge->length < sge->laddr)
				return SIW_WC_LOC_PROT_ERR;
			first[i] = sge->laddr & ~PAGE_MASK;
		} else {
			mrs[i] = iwmpa_mr_lookup(qp->pd, &qp->tx_mr,
						 sge->lkey, sge->laddr,
						 sge->length, false, &pg[i],
						 &first[i]);
			if (!mrs[i])
				return SIW_WC_LOC_PROT_ERR;
		}
		nbv += DIV_ROUND_UP(first[i] + sge->length, PAGE_SIZE);
		total += sge->length;
	}
	if (nbv > IWMPA_TX_STACK_BV) {
		bv = kvmalloc_array(nbv, sizeof(*bv), GFP_KERNEL);
		if (!bv)
			return SIW_WC_GENERAL_ERR;
		*bvp = bv;
	}
	for (i = 0; i < sqe->num_sge; i++) {
		u32 left = sqe->sge[i].length, off = first[i], p = pg[i];
		u64 kva = sqe->sge[i].laddr & PAGE_MASK;

		while (left) {
			u32 len = min_t(u32, left, PAGE_SIZE - off);
			struct page *page;

			if (mrs[i]) {
				page = mrs[i]->pages[p++];
			} else {
				page = iwmpa_kva_page(kva);
				kva += PAGE_SIZE;
				if (!page)
					return SIW_WC_LOC_PROT_ERR;
			}
			bvec_set_page(&bv[n++], page, len, off);
			left -= len;
			off = 0;
		}
	}
	iov_iter_bvec(it, ITER_SOURCE, bv, n, total);
	*bytes = total;
	return SIW_WC_SUCCESS;
}

/*
 * The pages of a Read's sink: a region's (held in *@mrp), or kernel
 * memory's (local DMA lkey), into *@pages (kvfree() it, unless it is
 * the region's). Return: a SIW_WC_* status.
 */
static u16 iwmpa_sink_pages(struct iwmpa_qp *qp, const struct siw_sge *sge,
			    struct iwmpa_mr **mrp, struct page ***pages,
			    u32 *first)
{
	u32 pg;

	*mrp = NULL;
	if (iwmpa_dma_lkey(qp, sge->lkey)) {
		*first = sge->laddr & ~PAGE_MASK;
		*pages = kvmalloc_array(DIV_ROUND_UP(*first + (u64)sge->length,
						     PAGE_SIZE),
					sizeof(**pages), GFP_KERNEL);
		if (!*pages)
			return SIW_WC_GENERAL_ERR;
		if (iwmpa_kva_pages(sge->laddr, sge->length, *pages))
			return SIW_WC_SUCCESS;
		kvfree(*pages);
		return SIW_WC_LOC_PROT_ERR;
	}
	*mrp = iwmpa_mr_lookup(qp->pd, &qp->tx_mr, sge->lkey, sge->laddr,
			       sge->length, true, &pg, first);
	if (!*mrp)
		return SIW_WC_LOC_PROT_ERR;
	*pages = &(*mrp)->pages[pg];
	return SIW_WC_SUCCESS;
}

/*
 * An RDMA Read (SIW_OP_READ, or SIW_OP_READ_LOCAL_INV from a kernel QP).
 * A sink in a region the peer may write is named by the region's own
 * STag, as an iWARP RNIC names it (the kernel's RDMA R/W API registers
 * its Read sinks with remote write access for iWARP); any other sink
 * (a region without remote write access, kernel memory of the local DMA
 * lkey) gets an STag of the stream for the Read's time.
 */
static u16 iwmpa_sq_read(struct iwmpa_qp *qp, const struct siw_sqe *sqe,
			 bool signalled, u32 *bytes, int flags)
{
	const struct siw_sge *sge = &sqe->sge[0];
	struct iwmpa_orqe *o = &qp->orq[qp->orq_tail % qp->ord];
	struct rdmap_read_wr wr = {
		.sink_to = sge->laddr,
		.src_stag = sqe->rkey,
		.src_to = sqe->raddr,
		.len = sge->length,
		.cookie = qp->orq_tail,
	};
	struct page **pages;
	struct iwmpa_mr *mr;
	u32 first;
	u16 status;
	int ret;

	if (sqe->num_sge != 1 || !sge->length)
		return SIW_WC_LOC_LEN_ERR;
	/* the region whose STag it invalidates is its sink's */
	if (sqe->opcode == SIW_OP_READ_LOCAL_INV &&
	    iwmpa_dma_lkey(qp, sge->lkey))
		return SIW_WC_LOC_PROT_ERR;
	status = iwmpa_sink_pages(qp, sge, &mr, &pages, &first);
	if (status != SIW_WC_SUCCESS)
		return status;
	if (mr && (mr->access & IB_ACCESS_REMOTE_WRITE)) {
		/* the key the lookup checked, not a later one of the region */
		wr.sink_stag = sge->lkey;
		o->stag = 0;
	} else {
		ret = ddp_reg_pages(qp->pd->ddp, rdmap_qp_stream(qp->rq),
				    pages, DIV_ROUND_UP(first + sge->length,
							PAGE_SIZE),
				    first, sge->length, sge->laddr,
				    DDP_ACCESS_REMOTE_WRITE, &wr.sink_stag);
		if (!mr)
			kvfree(pages);
		if (ret) {
			if (mr)
				iwmpa_mr_put(mr);
			return SIW_WC_GENERAL_ERR;
		}
		o->stag = wr.sink_stag;
	}
	o->id = sqe->id;
	o->mr = mr;
	o->signalled = signalled;
	o->unpublished = false;
	o->opcode = sqe->opcode;
	/* before the request: its response may come at once */
	qp->orq_tail++;
	ret = rdmap_read(qp->rq, &wr, flags);
	if (ret) {
		/* never sent: nothing completes it (rare for -EAGAIN) */
		qp->orq_tail--;
		if (o->stag)
			ddp_invalidate(qp->pd->ddp, o->stag);
		o->stag = 0;
		o->mr = NULL;
		if (mr)
			iwmpa_mr_put(mr);
		if (ret == -EAGAIN)
			return IWMPA_WC_AGAIN;
		return ret == -ECONNABORTED ? SIW_WC_WR_FLUSH_ERR :
					      SIW_WC_GENERAL_ERR;
	}
	iwmpa_stat_add(qp->dev, IWMPA_STAT_READ_TX, 1);
	*bytes = sge->length;
	return SIW_WC_SUCCESS;
}

/*
 * Execute one SQE (not a Read); @flags: MSG_DONTWAIT or 0. Return: a
 * SIW_WC_* status, or IWMPA_WC_AGAIN.
 */
static u16 iwmpa_sq_exec(struct iwmpa_qp *qp, const struct siw_sqe *sqe,
			 u32 *bytes, int flags)
{
	/* filled before use: not zeroed for each SQE */
	struct bio_vec stack[IWMPA_TX_STACK_BV] __uninitialized;
	struct bio_vec *bv = NULL;
	struct iwmpa_mr *mrs[SIW_MAX_SGE] = {};
	struct iov_iter it;
	struct kvec kv;
	u16 status;
	int ret, i;
	u8 op;

	if (sqe->flags & SIW_WQE_INLINE) {
		if (sqe->sge[0].length > SIW_MAX_INLINE)
			return SIW_WC_LOC_LEN_ERR;
		kv.iov_base = (void *)&sqe->sge[1];
		kv.iov_len = sqe->sge[0].length;
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, kv.iov_len);
		*bytes = kv.iov_len;
	} else {
		status = iwmpa_sge_iter(qp, sqe, &it, stack, &bv, mrs, bytes);
		if (status != SIW_WC_SUCCESS)
			goto out;
	}
	switch (sqe->opcode) {
	case SIW_OP_SEND:
	case SIW_OP_SEND_REMOTE_INV:
		op = sqe->opcode == SIW_OP_SEND ? RDMAP_WIRE_OP_SEND :
						  RDMAP_WIRE_OP_SEND_INV;
		/* Send with SE, Send with SE and Invalidate: one more */
		if (sqe->flags & SIW_WQE_SOLICITED)
			op += RDMAP_WIRE_OP_SEND_SE - RDMAP_WIRE_OP_SEND;
		ret = rdmap_send(qp->rq, op,
				 op == RDMAP_WIRE_OP_SEND_INV ||
				 op == RDMAP_WIRE_OP_SEND_SE_INV ?
				 sqe->rkey : 0, &it, flags);
		break;
	case SIW_OP_WRITE:
		ret = rdmap_write(qp->rq, sqe->rkey, sqe->raddr, &it, flags);
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
	if (ret == -EAGAIN)
		status = IWMPA_WC_AGAIN;
	else if (ret == -EOPNOTSUPP)
		status = SIW_WC_LOC_QP_OP_ERR;
	else if (ret == -ECONNABORTED || ret == -EPIPE)
		status = SIW_WC_WR_FLUSH_ERR;
	else
		status = ret ? SIW_WC_GENERAL_ERR : SIW_WC_SUCCESS;
	if (status == SIW_WC_SUCCESS) {
		iwmpa_stat_add(qp->dev, sqe->opcode == SIW_OP_WRITE ?
			       IWMPA_STAT_WRITE_TX : IWMPA_STAT_SEND_TX, 1);
		iwmpa_stat_add(qp->dev, IWMPA_STAT_TX_BYTES, *bytes);
	}
out:
	/* mrs[] is all NULL for inline data; num_sge is checked when not */
	for (i = 0; i < sqe->num_sge && i < SIW_MAX_SGE; i++)
		if (mrs[i])
			iwmpa_mr_put(mrs[i]);
	kvfree(bv);
	return status;
}

/* IB_WR_REG_MR: the SQE carries the region's pointer (a kernel QP's) */
static u16 iwmpa_sq_reg(struct iwmpa_qp *qp, const struct siw_sqe *sqe)
{
	u16 status = iwmpa_mr_fastreg(qp->pd,
				      (struct iwmpa_mr *)(uintptr_t)sqe->base_mr,
				      sqe->rkey, sqe->access);

	if (status == SIW_WC_SUCCESS)
		iwmpa_stat_add(qp->dev, IWMPA_STAT_REG_MR, 1);
	return status;
}

static u16 iwmpa_sq_inv(struct iwmpa_qp *qp, const struct siw_sqe *sqe)
{
	u16 status = iwmpa_mr_local_inv(qp->pd, sqe->rkey);

	if (status == SIW_WC_SUCCESS)
		iwmpa_stat_add(qp->dev, IWMPA_STAT_LOCAL_INV, 1);
	return status;
}

/* what a QP may post; a registration's SQE carries a kernel pointer */
static bool iwmpa_sq_op_ok(const struct iwmpa_qp *qp, u8 op)
{
	switch (op) {
	case SIW_OP_WRITE:
	case SIW_OP_READ:
	case SIW_OP_SEND:
	case SIW_OP_SEND_REMOTE_INV:
		return true;
	case SIW_OP_READ_LOCAL_INV:
	case SIW_OP_REG_MR:
	case SIW_OP_INVAL_STAG:
		return qp->kernel;
	default:
		return false;
	}
}

static bool iwmpa_op_is_read(u8 op)
{
	return op == SIW_OP_READ || op == SIW_OP_READ_LOCAL_INV;
}

/*
 * @sqe, at the SQ's head, waits for the Reads before it: it is fenced, or
 * a Read beyond the ORD (a slot of the ORQ is free once reaped).
 */
static bool iwmpa_sq_blocked(struct iwmpa_qp *qp, const struct siw_sqe *sqe)
{
	/* pairs with the release in iwmpa_read_done() */
	u32 reads = qp->orq_tail - smp_load_acquire(&qp->orq_head);

	if ((sqe->flags & SIW_WQE_READ_FENCE) && reads)
		return true;
	if (!iwmpa_op_is_read(sqe->opcode) ||
	    (reads < qp->ord_conn && qp->orq_tail - qp->orq_reaped < qp->ord))
		return false;
	iwmpa_orq_reap(qp, false);
	return reads >= qp->ord_conn ||
	       qp->orq_tail - qp->orq_reaped >= qp->ord;
}

/*
 * Consume the SQ ring in order until it is empty, the ORD is full or a
 * fenced SQE waits for the Reads before it. Under state_lock, connected.
 * @flags: 0 in the work item; MSG_DONTWAIT in the doorbell's system call,
 * where each SQE goes whole at once or stays for the work item (a
 * message of more than one DDP segment, no send space, ...).
 * Return: 0, -EAGAIN when an SQE stays for the work item, -EIO when one
 * failed (the QP goes to error).
 */
static int iwmpa_sq_process(struct iwmpa_qp *qp, int flags)
{
	for (;;) {
		struct siw_sqe *slot = &qp->sendq[qp->sq_get &
						  (qp->num_sqe - 1)];
		/* copied whole below: no zeroing of 128 octets per SQE */
		struct siw_sqe sqe __uninitialized;
		u32 bytes = 0;
		bool signalled;
		u16 status;

		/* pairs with the provider's store of VALID */
		sqe.flags = smp_load_acquire(&slot->flags);
		if (!(sqe.flags & SIW_WQE_VALID))
			return 0;
		memcpy(&sqe, slot, sizeof(sqe));
		sqe.flags = READ_ONCE(slot->flags);
		if (iwmpa_sq_blocked(qp, &sqe)) {
			/* a Read's completion queues the work item */
			WRITE_ONCE(qp->sq_wait, true);
			/* the flag before the ORQ's head: iwmpa_read_done() */
			smp_mb();
			if (iwmpa_sq_blocked(qp, &sqe))
				return 0;
		}
		WRITE_ONCE(qp->sq_wait, false);
		signalled = qp->sq_sig_all || (sqe.flags & SIW_WQE_SIGNALLED);
		if (!iwmpa_sq_op_ok(qp, sqe.opcode))
			status = SIW_WC_LOC_QP_OP_ERR;
		else if (iwmpa_op_is_read(sqe.opcode))
			status = iwmpa_sq_read(qp, &sqe, signalled, &bytes,
					       flags);
		else if (sqe.opcode == SIW_OP_REG_MR)
			status = iwmpa_sq_reg(qp, &sqe);
		else if (sqe.opcode == SIW_OP_INVAL_STAG)
			status = iwmpa_sq_inv(qp, &sqe);
		else
			status = iwmpa_sq_exec(qp, &sqe, &bytes, flags);
		/* not sent: the slot stays as it is */
		if (status == IWMPA_WC_AGAIN)
			return -EAGAIN;
		/* taken: the provider may fill the slot again */
		smp_store_release(&slot->flags, 0);
		qp->sq_get++;
		/*
		 * The clear before the next slot's load: the provider rings
		 * the doorbell only if it sees the slot before its new one
		 * cleared.
		 */
		smp_mb();
		if (status != SIW_WC_SUCCESS) {
			iwmpa_complete(qp, qp->scq, sqe.id, sqe.opcode, status,
				       0, 0, false);
			return -EIO;
		}
		if (!iwmpa_op_is_read(sqe.opcode) && signalled)
			iwmpa_complete(qp, qp->scq, sqe.id, sqe.opcode,
				       SIW_WC_SUCCESS, bytes, 0, false);
	}
}

/* SQEs not executed come back flushed (the QP is in error, or gone) */
static void iwmpa_sq_flush(struct iwmpa_qp *qp)
{
	for (;;) {
		struct siw_sqe *slot = &qp->sendq[qp->sq_get &
						  (qp->num_sqe - 1)];

		/* pairs with the provider's store of VALID */
		if (!(smp_load_acquire(&slot->flags) & SIW_WQE_VALID))
			break;
		iwmpa_complete(qp, qp->scq, READ_ONCE(slot->id),
			       READ_ONCE(slot->opcode), SIW_WC_WR_FLUSH_ERR, 0,
			       0, false);
		/* the slot's reads before the provider may fill it again */
		smp_store_release(&slot->flags, 0);
		qp->sq_get++;
		/* the clear before the next slot's load, see iwmpa_sq_process() */
		smp_mb();
	}
}

/* ---- connection ---- */

/* swap the connection's socket (a reference) in or out */
static struct sock *iwmpa_qp_set_sk(struct iwmpa_qp *qp, struct sock *sk)
{
	struct sock *old;

	spin_lock(&qp->sk_lock);
	old = qp->sk;
	qp->sk = sk;
	spin_unlock(&qp->sk_lock);
	return old;
}

/*
 * The work item holds state_lock while it sends, and a send may sleep
 * without end: in TCP's wait for memory when the peer reads nothing, in
 * MPA's rule 4 when it sends nothing. Only a socket error wakes it: reset
 * the connection (as "ss -K" would), so that the send fails and the
 * lock comes free.
 */
static void iwmpa_qp_reset_sk(struct iwmpa_qp *qp)
{
	struct sock *sk;

	spin_lock(&qp->sk_lock);
	sk = qp->sk;
	if (sk)
		sock_hold(sk);
	spin_unlock(&qp->sk_lock);
	if (!sk)
		return;
	tcp_abort(sk, ECONNABORTED);
	sock_put(sk);
}

static void iwmpa_qp_ib_event(struct iwmpa_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->base.device,
		.element.qp = &qp->base,
		.event = type,
	};

	if (qp->base.event_handler)
		qp->base.event_handler(&ev, qp->base.qp_context);
}

/*
 * Take state_lock to end the QP. The work item may hold it in a send that
 * blocks as long as the peer takes nothing: an abortive end resets the
 * connection at once, a graceful one lets the send go on for up to
 * IWMPA_END_WAIT_MS first (what a disconnect, a process context that
 * must return, may wait). Return: whether the connection was reset.
 */
static bool iwmpa_qp_end_lock(struct iwmpa_qp *qp, bool abortive)
{
	unsigned long end = jiffies + msecs_to_jiffies(IWMPA_END_WAIT_MS);

	if (mutex_trylock(&qp->state_lock))
		return false;
	while (!abortive && time_before(jiffies, end)) {
		msleep(IWMPA_END_POLL_MS);
		if (mutex_trylock(&qp->state_lock))
			return false;
	}
	iwmpa_qp_reset_sk(qp);
	mutex_lock(&qp->state_lock);
	return true;
}

/*
 * End the connection: RDMAP's queue pair goes (its posted receives and
 * outstanding Reads come back flushed), then what the rings still hold.
 * The QP is in error afterwards. Idempotent. A graceful end that had to
 * reset the connection (iwmpa_qp_end_lock()) goes on as an abortive one.
 */
static void iwmpa_qp_end(struct iwmpa_qp *qp, bool abortive)
{
	struct iwmpa_cep *cep;
	struct rdmap_qp *rq;
	bool last_wqe;
	struct sock *sk;

	if (iwmpa_qp_end_lock(qp, abortive))
		abortive = true;
	rq = qp->rq;
	cep = qp->cep;
	qp->rq = NULL;
	qp->cep = NULL;
	/* the first end of a QP bound to an SRQ: it takes no more of it */
	last_wqe = qp->srq && qp->state != IB_QPS_RESET &&
		   qp->state != IB_QPS_ERR;
	if (qp->state != IB_QPS_RESET)
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	/*
	 * The state's store before the rings' loads below: a kernel
	 * post_recv fills its RQE, then reads the state (and queues the
	 * work that flushes if it is not RTS).
	 */
	smp_mb();
	if (rq) {
		rdmap_qp_destroy(rq, abortive);
		iwmpa_orq_reap(qp, true);
	}
	iwmpa_sq_flush(qp);
	iwmpa_rq_flush(qp);
	sk = iwmpa_qp_set_sk(qp, NULL);
	mutex_unlock(&qp->state_lock);
	if (sk)
		sock_put(sk);
	if (last_wqe)
		iwmpa_qp_ib_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	if (cep)
		iwmpa_cm_qp_ended(cep, !abortive);
}

static void iwmpa_qp_fatal(struct iwmpa_qp *qp)
{
	iwmpa_stat_add(qp->dev, IWMPA_STAT_QP_FATAL, 1);
	iwmpa_qp_ib_event(qp, IB_EVENT_QP_FATAL);
}

static void iwmpa_tx_work(struct work_struct *work)
{
	struct iwmpa_qp *qp = container_of(work, struct iwmpa_qp, tx_work);
	int ret = 0;

	if (test_and_clear_bit(IWMPA_QP_END, &qp->flags)) {
		bool abort = test_and_clear_bit(IWMPA_QP_END_ABORT, &qp->flags);

		if (abort)
			iwmpa_qp_fatal(qp);
		iwmpa_qp_end(qp, abort);
		return;
	}
	mutex_lock(&qp->state_lock);
	if (qp->rq) {
		iwmpa_orq_reap(qp, false);
		ret = iwmpa_sq_process(qp, 0);
	} else if (qp->state == IB_QPS_ERR) {
		/* posted after the end: ib_drain_qp() waits for these */
		iwmpa_sq_flush(qp);
		iwmpa_rq_flush(qp);
	}
	mutex_unlock(&qp->state_lock);
	if (ret) {
		iwmpa_qp_fatal(qp);
		iwmpa_qp_end(qp, true);
	}
}

/*
 * The doorbell of a user QP: send what the SQ holds from the system call,
 * as far as it goes without waiting, and leave the rest to the work item.
 * It saves the work item's wake-up and switch per message, which is most
 * of a small message's latency. Nothing here sleeps on the peer (a signal
 * must not cut a send in TCP's wait for memory): the work item waits.
 */
static void iwmpa_sq_doorbell(struct iwmpa_qp *qp)
{
	int ret = -EAGAIN;

	/* the work item, or an end, has the QP: it takes the SQ too */
	if (!mutex_trylock(&qp->state_lock))
		goto work;
	if (qp->rq && !READ_ONCE(qp->flags)) {
		iwmpa_orq_reap(qp, false);
		ret = iwmpa_sq_process(qp, MSG_DONTWAIT);
	}
	mutex_unlock(&qp->state_lock);
	if (!ret)
		return;
	/* an SQE failed: the QP goes to error, from the work item */
	if (ret == -EIO) {
		set_bit(IWMPA_QP_END_ABORT, &qp->flags);
		set_bit(IWMPA_QP_END, &qp->flags);
	}
work:
	queue_work(iwmpa_wq, &qp->tx_work);
}

/* RDMAP's completions and errors: softirq or the socket lock held */
static void iwmpa_qp_event(struct rdmap_qp *rqp, const struct rdmap_event *ev)
{
	struct iwmpa_qp *qp = rdmap_qp_priv(rqp);

	switch (ev->type) {
	case RDMAP_EV_RECV:
		/* DDP invalidated it: local accesses fail from now on too */
		if (ev->inv_stag) {
			iwmpa_mr_inv_remote(qp->pd, ev->inv_stag);
			iwmpa_stat_add(qp->dev, IWMPA_STAT_REMOTE_INV, 1);
		}
		iwmpa_rx_done(qp, ev->cookie, SIW_WC_SUCCESS, ev->len,
			      ev->inv_stag,
			      ev->op == RDMAP_WIRE_OP_SEND_SE ||
			      ev->op == RDMAP_WIRE_OP_SEND_SE_INV);
		break;
	case RDMAP_EV_FLUSH:
		iwmpa_rx_done(qp, ev->cookie, SIW_WC_WR_FLUSH_ERR, 0, 0, false);
		break;
	case RDMAP_EV_READ_DONE:
		iwmpa_read_done(qp, rqp, ev->cookie, SIW_WC_SUCCESS, ev->len);
		break;
	case RDMAP_EV_READ_FLUSH:
		iwmpa_read_done(qp, rqp, ev->cookie, SIW_WC_WR_FLUSH_ERR, 0);
		break;
	case RDMAP_EV_TERMINATE:
		set_bit(IWMPA_QP_END_ABORT, &qp->flags);
		fallthrough;
	case RDMAP_EV_PEER_CLOSED:
		set_bit(IWMPA_QP_END, &qp->flags);
		queue_work(iwmpa_wq, &qp->tx_work);
		break;
	}
}

static const struct rdmap_qp_ops iwmpa_rdmap_ops = {
	.event = iwmpa_qp_event,
	.refill = iwmpa_qp_refill,
};

/* see iwmpa.h */
int iwmpa_qp_start(struct iwmpa_qp *qp, struct iwmpa_cep *cep,
		   struct socket *sock, u32 ird, u32 ord)
{
	struct rdmap_qp_attr attr = {
		.ird = clamp_t(u32, ird, 1, RDMAP_MAX_IRD),
		.ord = clamp_t(u32, ord, 1, qp->ord),
	};
	enum ib_qp_state old;
	struct rdmap_qp *rq;

	mutex_lock(&qp->state_lock);
	old = qp->state;
	if (qp->rq || (old != IB_QPS_RESET && old != IB_QPS_INIT &&
		       old != IB_QPS_RTR)) {
		mutex_unlock(&qp->state_lock);
		return -EINVAL;
	}
	qp->ird = attr.ird;
	qp->ord_conn = attr.ord;
	/* the callbacks may run inside rdmap_qp_create() */
	WRITE_ONCE(qp->state, IB_QPS_RTS);
	rq = rdmap_qp_create(qp->pd->ddp, sock, &attr, &iwmpa_rdmap_ops, qp);
	if (IS_ERR(rq)) {
		WRITE_ONCE(qp->state, old);
		mutex_unlock(&qp->state_lock);
		return PTR_ERR(rq);
	}
	qp->rq = rq;
	qp->cep = cep;
	sock_hold(sock->sk);
	iwmpa_qp_set_sk(qp, sock->sk);
	mutex_unlock(&qp->state_lock);
	iwmpa_stat_add(qp->dev, IWMPA_STAT_CONN, 1);
	/* SQEs posted before the connection */
	queue_work(iwmpa_wq, &qp->tx_work);
	return 0;
}

/* ---- queue pairs: verbs ---- */

/**
 * iwmpa_create_qp() - a queue pair with SQ and RQ rings
 * @ibqp: the QP, allocated by the RDMA core
 * @attr: RC only; the ring sizes are rounded up to powers of 2 and
 *	written back to @attr->cap; with an SRQ, no RQ ring (its receive
 *	capacities are ignored and come back 0)
 * @udata: out: struct siw_uresp_create_qp (user space maps the rings);
 *	NULL for a kernel QP
 *
 * Return: 0 or a negative errno.
 */
int iwmpa_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		    struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibqp->device);
	const struct iwmpa_limits *l = &dev->limits;
	struct iwmpa_qp *qp = to_iwmpa_qp(ibqp);
	struct siw_uresp_create_qp uresp = {};
	struct ib_qp_cap *cap = &attr->cap;
	u32 id;
	int ret;

	if (attr->qp_type != IB_QPT_RC || attr->create_flags)
		return -EOPNOTSUPP;
	if (attr->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (cap->max_send_wr > l->max_qp_wr || cap->max_recv_wr > l->max_qp_wr ||
	    cap->max_send_sge > l->max_sge ||
	    cap->max_recv_sge > l->max_recv_sge ||
	    cap->max_inline_data > SIW_MAX_INLINE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (!iwmpa_count_get(&dev->num_qp, l->max_qp))
		return -ENOMEM;
	qp->dev = dev;
	qp->pd = to_iwmpa_pd(ibqp->pd);
	qp->scq = to_iwmpa_cq(attr->send_cq);
	qp->rcq = to_iwmpa_cq(attr->recv_cq);
	kref_init(&qp->ref);
	init_completion(&qp->freed);
	mutex_init(&qp->state_lock);
	spin_lock_init(&qp->sk_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->kernel = !udata;
	INIT_WORK(&qp->tx_work, iwmpa_tx_work);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->ord = l->ord;
	qp->ird = l->ird;
	qp->num_sqe = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	qp->srq = attr->srq ? to_iwmpa_srq(attr->srq) : NULL;
	qp->num_rqe = qp->srq ? IWMPA_SRQ_QP_RXB :
		      roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	ret = -ENOMEM;
	qp->rxb = kcalloc(qp->num_rqe, sizeof(*qp->rxb), GFP_KERNEL);
	qp->orq = kcalloc(qp->ord, sizeof(*qp->orq), GFP_KERNEL);
	if (!qp->rxb || !qp->orq)
		goto err_free;
	qp->sendq = iwmpa_ring_new(udata, qp->num_sqe * sizeof(*qp->sendq),
				   &qp->sq_mmap, &uresp.sq_key);
	if (!qp->sendq)
		goto err_free;
	/* the provider maps no RQ with an SRQ (and takes rq_key 0) */
	if (!qp->srq) {
		qp->recvq = iwmpa_ring_new(udata,
					   qp->num_rqe * sizeof(*qp->recvq),
					   &qp->rq_mmap, &uresp.rq_key);
		if (!qp->recvq)
			goto err_sq;
	}
	ret = xa_alloc(&dev->qps, &id, qp, XA_LIMIT(1, l->max_qp), GFP_KERNEL);
	if (ret)
		goto err_rq;
	ibqp->qp_num = id;
	cap->max_send_wr = qp->num_sqe;
	cap->max_recv_wr = qp->srq ? 0 : qp->num_rqe;
	cap->max_send_sge = l->max_sge;
	cap->max_recv_sge = qp->srq ? 0 : l->max_recv_sge;
	cap->max_inline_data = SIW_MAX_INLINE;
	if (!udata)
		return 0;
	uresp.qp_id = id;
	uresp.num_sqe = qp->num_sqe;
	uresp.num_rqe = cap->max_recv_wr;
	ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (ret)
		goto err_xa;
	return 0;

err_xa:
	xa_erase(&dev->qps, id);
err_rq:
	iwmpa_ring_del(qp->recvq, qp->rq_mmap);
err_sq:
	iwmpa_ring_del(qp->sendq, qp->sq_mmap);
err_free:
	kfree(qp->orq);
	kfree(qp->rxb);
	atomic_dec(&dev->num_qp);
	return ret;
}

/**
 * iwmpa_destroy_qp() - end the connection and free a queue pair
 * @ibqp: the QP
 * @udata: unused
 *
 * Waits until the connection manager and the iWARP CM dropped their
 * references.
 *
 * Return: 0.
 */
int iwmpa_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct iwmpa_qp *qp = to_iwmpa_qp(ibqp);

	iwmpa_qp_end(qp, true);
	cancel_work_sync(&qp->tx_work);
	xa_erase(&qp->dev->qps, ibqp->qp_num);
	iwmpa_qp_put(ibqp);
	wait_for_completion(&qp->freed);
	iwmpa_ring_del(qp->recvq, qp->rq_mmap);
	iwmpa_ring_del(qp->sendq, qp->sq_mmap);
	kfree(qp->orq);
	kfree(qp->rxb);
	atomic_dec(&qp->dev->num_qp);
	return 0;
}

/**
 * iwmpa_modify_qp() - change a queue pair's state
 * @ibqp: the QP
 * @attr: the new state (other attributes are accepted and ignored)
 * @mask: IB_QP_*
 * @udata: unused
 *
 * RESET, INIT and RTR before the connection; RTS is entered by the
 * connection manager; SQD (the iWARP CM's graceful disconnect) closes
 * the connection, ERROR aborts it. Either flushes what is posted.
 *
 * Return: 0, -EINVAL for a transition that is not allowed.
 */
int iwmpa_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct iwmpa_qp *qp = to_iwmpa_qp(ibqp);
	int ret = 0;

	if (!(mask & IB_QP_STATE))
		return 0;
	switch (attr->qp_state) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
	case IB_QPS_RTS:
		mutex_lock(&qp->state_lock);
		if (attr->qp_state == IB_QPS_RTS)
			ret = qp->state == IB_QPS_RTS ? 0 : -EINVAL;
		else if (qp->rq)
			ret = -EINVAL;
		else
			qp->state = attr->qp_state;
		mutex_unlock(&qp->state_lock);
		return ret;
	case IB_QPS_SQD:
		iwmpa_qp_end(qp, false);
		return 0;
	case IB_QPS_ERR:
		iwmpa_qp_end(qp, true);
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * iwmpa_query_qp() - a queue pair's state and capabilities
 * @ibqp: the QP
 * @attr: out: state, capabilities, RDMA Read depths
 * @mask: ignored, everything is filled in
 * @init: out: the capabilities and types
 *
 * Return: 0.
 */
int iwmpa_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct iwmpa_qp *qp = to_iwmpa_qp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->state_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	mutex_unlock(&qp->state_lock);
	attr->cap.max_send_wr = qp->num_sqe;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->num_rqe;
	attr->cap.max_send_sge = qp->dev->limits.max_sge;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->dev->limits.max_recv_sge;
	attr->cap.max_inline_data = SIW_MAX_INLINE;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	attr->path_mtu = IB_MTU_4096;
	init->cap = attr->cap;
	init->send_cq = &qp->scq->base;
	init->recv_cq = &qp->rcq->base;
	init->srq = qp->base.srq;
	init->qp_type = IB_QPT_RC;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

/* a kernel work request as an SQE; Return: 0 or -EINVAL */
static int iwmpa_wr_to_sqe(const struct ib_send_wr *wr, struct siw_sqe *sqe)
{
	u32 i, total = 0;

	sqe->id = wr->wr_id;
	if (wr->send_flags & IB_SEND_SIGNALED)
		sqe->flags |= SIW_WQE_SIGNALLED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe->flags |= SIW_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		sqe->flags |= SIW_WQE_READ_FENCE;
	switch (wr->opcode) {
	case IB_WR_SEND:
		sqe->opcode = SIW_OP_SEND;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe->opcode = SIW_OP_SEND_REMOTE_INV;
		sqe->rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		sqe->opcode = wr->opcode == IB_WR_RDMA_WRITE ? SIW_OP_WRITE :
			      wr->opcode == IB_WR_RDMA_READ ? SIW_OP_READ :
			      SIW_OP_READ_LOCAL_INV;
		sqe->rkey = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		/*
		 * The STag it invalidates is its sink's lkey (rdma_rw sets
		 * ex.invalidate_rkey before it updates the key, as iWARP
		 * hardware ignores it too).
		 */
		if (wr->opcode == IB_WR_RDMA_READ_WITH_INV && wr->num_sge != 1)
			return -EINVAL;
		break;
	case IB_WR_LOCAL_INV:
		sqe->opcode = SIW_OP_INVAL_STAG;
		sqe->rkey = wr->ex.invalidate_rkey;
		return 0;
	case IB_WR_REG_MR:
		sqe->opcode = SIW_OP_REG_MR;
		sqe->base_mr = (uintptr_t)reg_wr(wr)->mr;
		sqe->rkey = reg_wr(wr)->key;
		sqe->access = reg_wr(wr)->access;
		return 0;
	default:
		return -EINVAL;
	}
	if (wr->num_sge > SIW_MAX_SGE)
		return -EINVAL;
	if ((wr->send_flags & IB_SEND_INLINE) && sqe->opcode != SIW_OP_READ &&
	    sqe->opcode != SIW_OP_READ_LOCAL_INV) {
		/* the data follows sge[0] in the SQE; lkeys are ignored */
		for (i = 0; i < wr->num_sge; i++) {
			u32 len = wr->sg_list[i].length;

			if (len > SIW_MAX_INLINE - total)
				return -EINVAL;
			memcpy((u8 *)&sqe->sge[1] + total,
			       (void *)(uintptr_t)wr->sg_list[i].addr, len);
			total += len;
		}
		sqe->sge[0].length = total;
		sqe->num_sge = 1;
		sqe->flags |= SIW_WQE_INLINE;
		return 0;
	}
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].laddr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	sqe->num_sge = wr->num_sge;
	return 0;
}

/**
 * iwmpa_post_send() - post work requests, or ring the SQ's doorbell
 * @ibqp: the QP
 * @wr: a kernel QP's work requests: Send (with Invalidate, Solicited
 *	Event), RDMA Write, RDMA Read (with local invalidate), fast
 *	registration, local invalidation; NULL from user space (siw's
 *	provider writes the SQEs into the ring)
 * @bad: out: the first work request not posted
 *
 * Work requests are executed in order by the QP's work item; those
 * posted before the connection when it is up, those posted in error
 * flushed. Any context for a kernel QP.
 *
 * Return: 0, -ENOMEM when the SQ is full, -EINVAL for a work request
 * that is malformed or of a user QP.
 */
int iwmpa_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad)
{
	struct iwmpa_qp *qp = to_iwmpa_qp(ibqp);
	unsigned long flags;
	int ret = 0;

	if (!qp->kernel) {
		if (wr) {
			*bad = wr;
			return -EINVAL;
		}
		iwmpa_sq_doorbell(qp);
		return 0;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		struct siw_sqe *slot = &qp->sendq[qp->sq_put &
						  (qp->num_sqe - 1)];
		struct siw_sqe sqe = {};
		u16 f;

		/* pairs with the work item's release once it took the slot */
		if (smp_load_acquire(&slot->flags) & SIW_WQE_VALID) {
			ret = -ENOMEM;
			break;
		}
		ret = iwmpa_wr_to_sqe(wr, &sqe);
		if (ret)
			break;
		f = sqe.flags | SIW_WQE_VALID;
		sqe.flags = 0;
		*slot = sqe;
		/* the work item reads the SQE once it sees VALID */
		smp_store_release(&slot->flags, f);
		qp->sq_put++;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (ret)
		*bad = wr;
	queue_work(iwmpa_wq, &qp->tx_work);
	return ret;
}

/**
 * iwmpa_ring_post_recv() - write receive work requests into an RQ ring
 * @ring: the ring of a kernel QP or SRQ
 * @num: its number of slots, a power of two
 * @put: the producer's index, advanced for each RQE written
 * @max_sge: the most SGEs an RQE takes
 * @wr: the work requests
 * @bad: out: the first work request not posted
 *
 * The caller holds the lock that serialises the ring's producers. A slot
 * is free once its taker cleared VALID (with release).
 *
 * Return: 0, -ENOMEM when the ring is full, -EINVAL for too many SGEs.
 */
int iwmpa_ring_post_recv(struct siw_rqe *ring, u32 num, u32 *put, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad)
{
	int i;

	for (; wr; wr = wr->next) {
		struct siw_rqe *slot = &ring[*put & (num - 1)];

		if (wr->num_sge > max_sge) {
			*bad = wr;
			return -EINVAL;
		}
		/* pairs with the taker's release once it took the slot */
		if (smp_load_acquire(&slot->flags) & SIW_WQE_VALID) {
			*bad = wr;
			return -ENOMEM;
		}
		slot->id = wr->wr_id;
		slot->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			slot->sge[i].laddr = wr->sg_list[i].addr;
			slot->sge[i].length = wr->sg_list[i].length;
			slot->sge[i].lkey = wr->sg_list[i].lkey;
		}
		/* the taker reads the RQE once it sees VALID */
		smp_store_release(&slot->flags, SIW_WQE_VALID);
		(*put)++;
	}
	return 0;
}

/**
 * iwmpa_post_recv() - post a kernel QP's receives
 * @ibqp: the QP
 * @wr: the work requests: at most max_recv_sge SGEs each, the local
 *	DMA lkey or a region's
 * @bad: out: the first work request not posted
 *
 * The RQEs are taken as Sends arrive (the refill, softirq); those posted
 * in error are flushed. User space posts into the RQ ring without a
 * system call. Any context.
 *
 * Return: 0, -ENOMEM when the RQ is full, -EINVAL for too many SGEs, a
 * user QP or a QP bound to an SRQ.
 */
int iwmpa_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad)
{
	struct iwmpa_qp *qp = to_iwmpa_qp(ibqp);
	unsigned long flags;
	int ret;

	if (!qp->kernel || qp->srq) {
		*bad = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	ret = iwmpa_ring_post_recv(qp->recvq, qp->num_rqe, &qp->rq_put,
				   qp->dev->limits.max_recv_sge, wr, bad);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	/* the RQEs' stores before the state's load, see iwmpa_qp_end() */
	smp_mb();
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		queue_work(iwmpa_wq, &qp->tx_work);
	return ret;
}
