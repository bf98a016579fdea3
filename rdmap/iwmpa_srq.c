// SPDX-License-Identifier: GPL-2.0
/*
 * iwmpa.ko: shared receive queues. An SRQ is a ring of RQEs (struct
 * siw_rqe) like a QP's RQ: user space maps it and fills it without a
 * system call (rdma-core's siw provider), a kernel consumer fills it with
 * post_srq_recv. A queue pair bound to an SRQ has no RQ of its own: when
 * a Send finds no buffer, RDMAP's refill (softirq) takes one RQE from
 * the SRQ for that message, so no queue pair holds more of the SRQ than
 * the messages it is receiving. See Documentation/iwmpa.rst.
 */
#include <linux/overflow.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "iwmpa.h"

/**
 * iwmpa_create_srq() - a shared receive queue, of user space or of the
 * kernel
 * @ibsrq: the SRQ, allocated by the RDMA core
 * @init: IB_SRQT_BASIC; @init->attr.max_wr entries (rounded up to a
 *	power of 2 and written back), at most the device's max_recv_sge
 *	SGEs each; @init->attr.srq_limit arms the limit event when not 0
 * @udata: out: struct siw_uresp_create_srq (user space maps the ring);
 *	NULL for a kernel SRQ
 *
 * Return: 0, -EOPNOTSUPP for another SRQ type, -EINVAL for sizes beyond
 * the device's limits, -ENOMEM.
 */
int iwmpa_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibsrq->device);
	const struct iwmpa_limits *l = &dev->limits;
	struct iwmpa_srq *srq = to_iwmpa_srq(ibsrq);
	struct siw_uresp_create_srq uresp = {};
	struct ib_srq_attr *attr = &init->attr;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > l->max_srq_wr ||
	    attr->max_sge > l->max_recv_sge || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (!iwmpa_count_get(&dev->num_srq, l->max_srq))
		return -ENOMEM;
	spin_lock_init(&srq->lock);
	srq->kernel = !udata;
	srq->num_rqe = roundup_pow_of_two(attr->max_wr);
	srq->limit = attr->srq_limit;
	srq->armed = !!srq->limit;
	srq->recvq = iwmpa_ring_new(udata, array_size(srq->num_rqe,
						      sizeof(*srq->recvq)),
				    &srq->mmap, &uresp.srq_key);
	if (!srq->recvq) {
		ret = -ENOMEM;
		goto err;
	}
	attr->max_wr = srq->num_rqe;
	attr->max_sge = l->max_recv_sge;
	if (!udata)
		return 0;
	uresp.num_rqe = srq->num_rqe;
	ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (!ret)
		return 0;
	iwmpa_ring_del(srq->recvq, srq->mmap);
err:
	atomic_dec(&dev->num_srq);
	return ret;
}

/**
 * iwmpa_destroy_srq() - free a shared receive queue
 * @ibsrq: the SRQ; the RDMA core keeps it while a queue pair uses it
 * @udata: unused
 *
 * Return: 0.
 */
int iwmpa_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct iwmpa_srq *srq = to_iwmpa_srq(ibsrq);

	iwmpa_ring_del(srq->recvq, srq->mmap);
	atomic_dec(&to_iwmpa_dev(ibsrq->device)->num_srq);
	return 0;
}

/**
 * iwmpa_modify_srq() - arm the limit event
 * @ibsrq: the SRQ
 * @attr: @attr->srq_limit: the event comes once fewer RQEs than that are
 *	left (0 disarms)
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resizing) is not supported
 * @udata: unused
 *
 * Return: 0, -EOPNOTSUPP for a resize, -EINVAL for a limit beyond the
 * ring.
 */
int iwmpa_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct iwmpa_srq *srq = to_iwmpa_srq(ibsrq);
	unsigned long flags;

	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->num_rqe)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	srq->armed = !!srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * iwmpa_query_srq() - a shared receive queue's size and limit
 * @ibsrq: the SRQ
 * @attr: out: entries, SGEs per entry, the armed limit (0: not armed)
 *
 * Return: 0.
 */
int iwmpa_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct iwmpa_srq *srq = to_iwmpa_srq(ibsrq);
	unsigned long flags;

	attr->max_wr = srq->num_rqe;
	attr->max_sge = to_iwmpa_dev(ibsrq->device)->limits.max_recv_sge;
	spin_lock_irqsave(&srq->lock, flags);
	attr->srq_limit = srq->armed ? srq->limit : 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * iwmpa_post_srq_recv() - post a kernel SRQ's receives
 * @ibsrq: the SRQ
 * @wr: the work requests: at most max_recv_sge SGEs each, the local DMA
 *	lkey or a region's of the SRQ's PD
 * @bad: out: the first work request not posted
 *
 * The RQEs are taken as Sends arrive on the queue pairs bound to the
 * SRQ. Any context.
 *
 * Return: 0, -ENOMEM when the SRQ is full, -EINVAL for too many SGEs or
 * a user SRQ.
 */
int iwmpa_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad)
{
	struct iwmpa_srq *srq = to_iwmpa_srq(ibsrq);
	u32 max_sge = to_iwmpa_dev(ibsrq->device)->limits.max_recv_sge;
	unsigned long flags;
	int ret;

	if (!srq->kernel) {
		*bad = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	ret = iwmpa_ring_post_recv(srq->recvq, srq->num_rqe, &srq->rq_put, max_sge,
				   wr, bad);
	spin_unlock_irqrestore(&srq->lock, flags);
	return ret;
}

/**
 * iwmpa_srq_take() - take the RQE at the head of a shared receive queue
 * @srq: the SRQ
 * @rqe: out: the RQE
 *
 * With the limit armed, the first take that leaves fewer RQEs than the
 * limit raises IB_EVENT_SRQ_LIMIT_REACHED and disarms it: the RQEs are
 * filled in ring order, so fewer are left exactly when the slot @limit - 1
 * after the new head is not valid. Any context (softirq: RDMAP's refill).
 *
 * Return: true if an RQE was taken, false if the SRQ is empty.
 */
bool iwmpa_srq_take(struct iwmpa_srq *srq, struct siw_rqe *rqe)
{
	u32 mask = srq->num_rqe - 1;
	struct siw_rqe *slot;
	unsigned long flags;
	bool low = false;

	spin_lock_irqsave(&srq->lock, flags);
	slot = &srq->recvq[srq->rq_get & mask];
	/* pairs with the producer's store of VALID */
	rqe->flags = smp_load_acquire(&slot->flags);
	if (!(rqe->flags & SIW_WQE_VALID)) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return false;
	}
	iwmpa_rqe_copy(rqe, slot);
	/* the reads before the producer may fill the slot again */
	smp_store_release(&slot->flags, 0);
	srq->rq_get++;
	if (srq->armed) {
		slot = &srq->recvq[(srq->rq_get + srq->limit - 1) & mask];
		/* pairs with the producer's store of VALID */
		low = !(smp_load_acquire(&slot->flags) & SIW_WQE_VALID);
		if (low)
			srq->armed = false;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (low && srq->base.event_handler) {
		struct ib_event ev = {
			.device = srq->base.device,
			.element.srq = &srq->base,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->base.event_handler(&ev, srq->base.srq_context);
	}
	return true;
}
