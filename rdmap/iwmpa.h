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
#include <linux/etherdevice.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/sizes.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
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
#define IWMPA_MAX_SGE_RD	1	/* an RDMA Read has one sink */
#define IWMPA_MAX_CQ		1024
#define IWMPA_MAX_CQE		8192

/**
 * struct iwmpa_limits - what one device allows
 * @max_ctx: user contexts (open devices)
 * @max_pd: protection domains
 * @max_mr: memory regions
 * @max_mr_size: octets in one memory region
 * @max_qp: queue pairs
 * @max_qp_wr: work requests per queue
 * @max_sge: scatter/gather elements per send or receive work request
 * @max_sge_rd: scatter/gather elements per RDMA Read
 * @max_cq: completion queues
 * @max_cqe: entries per completion queue
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
	u32	max_sge_rd;
	u32	max_cq;
	u32	max_cqe;
	u32	ird;
	u32	ord;
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
 */
struct iwmpa_pd {
	struct ib_pd		base;
	struct ddp_pd		*ddp;
};

/**
 * struct iwmpa_mr - a memory region of user memory
 * @base: the RDMA core's MR; lkey == rkey == @stag
 * @umem: the pinned pages
 * @stag: DDP's STag of the tagged buffer over @umem
 */
struct iwmpa_mr {
	struct ib_mr		base;
	struct ib_umem		*umem;
	u32			stag;
};

static inline struct iwmpa_dev *to_iwmpa_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct iwmpa_dev, ibdev);
}

static inline struct iwmpa_pd *to_iwmpa_pd(struct ib_pd *pd)
{
	return container_of(pd, struct iwmpa_pd, base);
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

#endif /* _IWMPA_H */
