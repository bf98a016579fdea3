// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs of iwmpa.ko other than CQs and QPs: device and port queries,
 * user contexts, protection domains and memory regions. A PD is a DDP PD
 * (ddp_pd_alloc()); a memory region of user memory pins the user's pages
 * (ib_umem_get()) and registers them with DDP as a tagged buffer
 * (ddp_reg_pages()), whose STag is the region's lkey and rkey. A kernel
 * consumer's fast registration reserves an STag index in DDP at
 * alloc_mr and registers the pages map_mr_sg gave under the consumer's
 * key when its IB_WR_REG_MR executes (ddp_reg_pages_at()). The answers
 * to user space are those of siw's ABI (<rdma/siw-abi.h>).
 */
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "iwmpa.h"

/**
 * iwmpa_query_device() - the device's attributes and limits
 * @ibdev: the device
 * @attr: out: the attributes
 * @udata: from user space; siw's ABI passes nothing
 *
 * Return: 0, or -EINVAL if user space passed driver data.
 */
int iwmpa_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibdev);
	const struct iwmpa_limits *l = &dev->limits;

	if (udata->inlen || udata->outlen)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = IWMPA_VENDOR_ID;
	attr->vendor_part_id = dev->dev_id;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = l->max_mr_size;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = l->max_qp;
	attr->max_qp_wr = l->max_qp_wr;
	attr->max_send_sge = l->max_sge;
	attr->max_recv_sge = l->max_recv_sge;
	attr->max_sge_rd = l->max_sge_rd;
	attr->max_cq = l->max_cq;
	attr->max_cqe = l->max_cqe;
	attr->max_mr = l->max_mr;
	attr->max_pd = l->max_pd;
	/* the responder's resources (IRD) and the requester's (ORD) */
	attr->max_qp_rd_atom = l->ird;
	attr->max_qp_init_rd_atom = l->ord;
	attr->max_res_rd_atom = l->max_qp * l->ird;
	attr->atomic_cap = IB_ATOMIC_NONE;
	/* fast registration, local and remote invalidation */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	attr->max_fast_reg_page_list_len = l->max_fr_pages;
	attr->max_srq = l->max_srq;
	attr->max_srq_wr = l->max_srq_wr;
	attr->max_srq_sge = l->max_recv_sge;
	/* "rdma link delete" may remove it; kernel PDs get IWMPA_DMA_LKEY */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_LOCAL_DMA_LKEY;
	return 0;
}

/**
 * iwmpa_query_port() - the state of port 1, from its netdev
 * @ibdev: the device
 * @port: the port, 1
 * @attr: out: its attributes
 *
 * Return: 0 or a negative errno.
 */
int iwmpa_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct net_device *netdev = to_iwmpa_dev(ibdev)->netdev;
	bool up;
	int ret;

	memset(attr, 0, sizeof(*attr));
	ret = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (ret)
		return ret;
	up = netif_running(netdev) && netif_carrier_ok(netdev);
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->gid_tbl_len = 1;
	attr->max_msg_sz = -1;
	attr->max_mtu = ib_mtu_int_to_enum(READ_ONCE(netdev->max_mtu));
	attr->active_mtu = ib_mtu_int_to_enum(READ_ONCE(netdev->mtu));
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	return 0;
}

/**
 * iwmpa_get_port_immutable() - what does not change on port 1: iWARP
 * @ibdev: the device
 * @port: the port, 1
 * @immutable: out: the GID table length and RDMA_CORE_PORT_IWARP
 *
 * Return: 0 or a negative errno.
 */
int iwmpa_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int ret;

	ret = iwmpa_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/**
 * iwmpa_query_gid() - the one GID: the netdev's MAC, zero-padded
 * @ibdev: the device
 * @port: the port, 1
 * @idx: the index, 0
 * @gid: out: the GID
 *
 * Return: 0, -EINVAL for an index other than 0.
 */
int iwmpa_query_gid(struct ib_device *ibdev, u32 port, int idx,
		    union ib_gid *gid)
{
	if (idx)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, to_iwmpa_dev(ibdev)->raw_gid, ETH_ALEN);
	return 0;
}

/**
 * iwmpa_alloc_ucontext() - a user context: rdma-core opened the device
 * @uctx: the context, allocated by the RDMA core
 * @udata: out: struct siw_uresp_alloc_ctx
 *
 * Return: 0, -ENOMEM past the device's limit, -EINVAL if user space has
 * no room for the answer.
 */
int iwmpa_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(uctx->device);
	struct siw_uresp_alloc_ctx uresp = { .dev_id = dev->dev_id };
	int ret;

	if (udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (!iwmpa_count_get(&dev->num_ctx, dev->limits.max_ctx))
		return -ENOMEM;
	ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (ret)
		atomic_dec(&dev->num_ctx);
	return ret;
}

/**
 * iwmpa_dealloc_ucontext() - the user context is gone
 * @uctx: the context
 */
void iwmpa_dealloc_ucontext(struct ib_ucontext *uctx)
{
	atomic_dec(&to_iwmpa_dev(uctx->device)->num_ctx);
}

/**
 * iwmpa_alloc_pd() - a protection domain, over a DDP PD
 * @pd: the PD, allocated by the RDMA core
 * @udata: unused, siw's ABI passes nothing
 *
 * The DDP PD counts its STags in /proc/net/ddp_stat of the caller's
 * network namespace.
 *
 * Return: 0, -ENOMEM past the device's limit or without memory.
 */
int iwmpa_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(pd->device);
	struct iwmpa_pd *ipd = to_iwmpa_pd(pd);

	if (!iwmpa_count_get(&dev->num_pd, dev->limits.max_pd))
		return -ENOMEM;
	ipd->ddp = ddp_pd_alloc();
	if (IS_ERR(ipd->ddp)) {
		atomic_dec(&dev->num_pd);
		return PTR_ERR(ipd->ddp);
	}
	xa_init(&ipd->mrs);
	return 0;
}

/**
 * iwmpa_dealloc_pd() - free a protection domain
 * @pd: the PD; the RDMA core freed its memory regions before
 * @udata: unused
 *
 * Return: 0.
 */
int iwmpa_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct iwmpa_pd *ipd = to_iwmpa_pd(pd);

	xa_destroy(&ipd->mrs);
	ddp_pd_put(ipd->ddp);
	atomic_dec(&to_iwmpa_dev(pd->device)->num_pd);
	return 0;
}

static u32 iwmpa_ddp_access(int access)
{
	u32 a = 0;

	if (access & IB_ACCESS_REMOTE_WRITE)
		a |= DDP_ACCESS_REMOTE_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		a |= DDP_ACCESS_REMOTE_READ;
	return a;
}

/*
 * Register the pages of @mr->umem with DDP; the umem keeps them pinned,
 * @mr->pages lists them for the queue pairs' local accesses.
 */
static int iwmpa_mr_reg_ddp(struct iwmpa_pd *pd, struct iwmpa_mr *mr,
			    u64 len, u64 virt, int access)
{
	struct ib_umem *umem = mr->umem;
	size_t npages = ib_umem_num_pages(umem);
	struct sg_page_iter piter;
	size_t i = 0;

	if (npages > U32_MAX)
		return -EINVAL;
	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &piter, 0) {
		if (i == npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (i != npages)
		return -EFAULT;
	mr->npages = npages;
	mr->first = ib_umem_offset(umem);
	mr->va = virt;
	mr->len = len;
	mr->access = access;
	return ddp_reg_pages(pd->ddp, NULL, mr->pages, npages, mr->first, len,
			     virt, iwmpa_ddp_access(access), &mr->stag);
}

static void iwmpa_mr_free_work(struct work_struct *work)
{
	struct iwmpa_mr *mr = container_of(work, struct iwmpa_mr, free_work);

	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->pend);
	/* a lookup in softirq may still read @ref */
	kfree_rcu(mr, rcu);
}

/**
 * iwmpa_mr_put() - drop a reference on a memory region
 * @mr: the region
 *
 * The last one unpins its pages in a work item. Any context.
 */
void iwmpa_mr_put(struct iwmpa_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		queue_work(iwmpa_wq, &mr->free_work);
}

/*
 * The region of @stag in @pd, with a reference, or NULL; any context.
 * With @cache (see struct iwmpa_mr_cache), the region found last, if no
 * region of @pd has left the xarray since and its STag is @stag, saves
 * the xarray's walk. A region is freed an RCU grace period after its
 * last put, which comes after the erase and the bump of @pd->gen: a
 * reader that sees the @gen of its cache holds the region off. The
 * acquire keeps the lookup from seeing an xarray older than @gen.
 */
static struct iwmpa_mr *iwmpa_mr_get(struct iwmpa_pd *pd,
				     struct iwmpa_mr_cache *cache, u32 stag)
{
	struct iwmpa_mr *mr = NULL;
	unsigned long gen;

	rcu_read_lock();
	if (cache) {
		/* pairs with the release in iwmpa_dereg_mr() */
		gen = smp_load_acquire(&pd->gen);
		if (cache->gen == gen)
			mr = cache->mr;
		if (!mr || READ_ONCE(mr->stag) != stag) {
			mr = xa_load(&pd->mrs, stag >> 8);
			cache->mr = mr;
			cache->gen = gen;
		}
	} else {
		mr = xa_load(&pd->mrs, stag >> 8);
	}
	if (mr && (READ_ONCE(mr->stag) != stag ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * iwmpa_mr_lookup() - the memory region of an lkey, for a local access
 * @pd: the queue pair's PD: the region must be in it, and valid
 * @cache: the caller's cache of @pd (NULL: none), serialised by the
 *	caller
 * @lkey: the SGE's lkey
 * @addr: the SGE's address
 * @len: its length
 * @write: the access writes (a receive or a Read's sink)
 * @idx: out: index in mr->pages of the page of @addr
 * @first: out: offset of @addr in that page
 *
 * Any context. Return: the region with a reference (iwmpa_mr_put()), or
 * NULL if @lkey is unknown, of another PD, invalidated, lacks local
 * write access, or does not hold [@addr, @addr + @len).
 */
struct iwmpa_mr *iwmpa_mr_lookup(struct iwmpa_pd *pd,
				 struct iwmpa_mr_cache *cache, u32 lkey,
				 u64 addr, u32 len, bool write, u32 *idx,
				 u32 *first)
{
	struct iwmpa_mr *mr = iwmpa_mr_get(pd, cache, lkey);
	u64 off;

	if (!mr)
		return NULL;
	if (!READ_ONCE(mr->valid) ||
	    (write && !(mr->access & IB_ACCESS_LOCAL_WRITE)) ||
	    addr < mr->va || addr - mr->va > mr->len ||
	    len > mr->len - (addr - mr->va)) {
		iwmpa_mr_put(mr);
		return NULL;
	}
	off = addr - mr->va + mr->first;
	*idx = off >> PAGE_SHIFT;
	*first = off & ~PAGE_MASK;
	return mr;
}

/**
 * iwmpa_reg_user_mr() - register user memory
 * @pd: the PD
 * @start: user address of the first octet
 * @len: length in octets
 * @virt: the region's address for the peer: the tagged offset of @start
 * @access: IB_ACCESS_*; atomics, memory windows and on-demand paging
 *	are not supported
 * @udata: in: struct siw_ureq_reg_mr (its stag_key is ignored: DDP picks
 *	the STag's key at random); out: struct siw_uresp_reg_mr
 *
 * Return: the region, whose lkey and rkey are the STag, or an ERR_PTR.
 */
struct ib_mr *iwmpa_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				u64 virt, int access, struct ib_udata *udata)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(pd->device);
	struct siw_uresp_reg_mr uresp = {};
	struct iwmpa_mr *mr;
	int ret;

	if (!len || len > dev->limits.max_mr_size)
		return ERR_PTR(-EINVAL);
	if (access & (IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_MW_BIND |
		      IB_ACCESS_ON_DEMAND))
		return ERR_PTR(-EOPNOTSUPP);
	if (udata && udata->outlen && udata->outlen < sizeof(uresp))
		return ERR_PTR(-EINVAL);
	if (!iwmpa_count_get(&dev->num_mr, dev->limits.max_mr))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		ret = -ENOMEM;
		goto err_count;
	}
	mr->umem = ib_umem_get(pd->device, start, len, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_free;
	}
	ret = iwmpa_mr_reg_ddp(to_iwmpa_pd(pd), mr, len, virt, access);
	if (ret)
		goto err_umem;
	mr->base.lkey = mr->stag;
	mr->base.rkey = mr->stag;
	if (udata && udata->outlen) {
		uresp.stag = mr->stag;
		ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (ret)
			goto err_ddp;
	}
	refcount_set(&mr->ref, 1);
	INIT_WORK(&mr->free_work, iwmpa_mr_free_work);
	mr->valid = true;
	/* the core sets base.device and base.pd after this returns */
	mr->base.device = pd->device;
	mr->base.pd = pd;
	ret = xa_insert(&to_iwmpa_pd(pd)->mrs, mr->stag >> 8, mr, GFP_KERNEL);
	if (ret)
		goto err_ddp;
	return &mr->base;

err_ddp:
	ddp_invalidate(to_iwmpa_pd(pd)->ddp, mr->stag);
err_umem:
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
err_count:
	atomic_dec(&dev->num_mr);
	return ERR_PTR(ret);
}

/**
 * iwmpa_get_dma_mr() - a kernel consumer's region of all its memory
 * @pd: the PD
 * @access: IB_ACCESS_*
 *
 * Kernel PDs use the local DMA lkey instead (IBK_LOCAL_DMA_LKEY); this
 * is asked for only with IB_PD_UNSAFE_GLOBAL_RKEY, an rkey that lets the
 * peer reach all kernel memory, which DDP does not offer: it places only
 * into registered pages. Being there makes the device a kernel verbs
 * provider, which the RDMA CM wants before it binds to it.
 *
 * Return: ERR_PTR(-EOPNOTSUPP).
 */
struct ib_mr *iwmpa_get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

/**
 * iwmpa_dereg_mr() - deregister a memory region
 * @ibmr: the region
 * @udata: unused
 *
 * Invalidates the STag (when this returns the peer places nothing into
 * the pages and reads nothing from them); the pages are unpinned once no
 * posted receive or work request uses them any more.
 *
 * Return: 0.
 */
int iwmpa_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct iwmpa_mr *mr = to_iwmpa_mr(ibmr);
	struct iwmpa_pd *pd = to_iwmpa_pd(ibmr->pd);

	xa_lock(&pd->mrs);
	__xa_erase(&pd->mrs, mr->stag >> 8);
	/* after the erase, serialised by the lock: see iwmpa_mr_get() */
	smp_store_release(&pd->gen, pd->gen + 1);
	xa_unlock(&pd->mrs);
	/* -ENOENT: the peer invalidated it already (Send with Invalidate) */
	if (!mr->fast || READ_ONCE(mr->valid))
		ddp_invalidate(pd->ddp, mr->stag);
	if (mr->fast)
		ddp_stag_release(pd->ddp, mr->stag);
	atomic_dec(&to_iwmpa_dev(ibmr->device)->num_mr);
	iwmpa_mr_put(mr);
	return 0;
}

/**
 * iwmpa_kva_page() - the page of a kernel address an SGE names
 * @addr: what ib_dma_map_*() gave: the device uses virtual DMA
 *
 * Return: the page, or NULL if @addr is neither in the direct map nor
 * in vmalloc space.
 */
struct page *iwmpa_kva_page(u64 addr)
{
	const void *va = (const void *)(uintptr_t)addr;

	if (is_vmalloc_addr(va))
		return vmalloc_to_page(va);
	if (virt_addr_valid(va))
		return virt_to_page(va);
	return NULL;
}

/**
 * iwmpa_alloc_mr() - a kernel consumer's fast-registration region
 * @pd: the PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: pages it may map, 1..max_fast_reg_page_list_len
 *
 * Its STag index is reserved in DDP until deregistration; it is invalid
 * until an IB_WR_REG_MR registers the pages map_mr_sg gave.
 *
 * Return: the region, or an ERR_PTR.
 */
struct ib_mr *iwmpa_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(pd->device);
	struct iwmpa_pd *ipd = to_iwmpa_pd(pd);
	struct iwmpa_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > dev->limits.max_fr_pages)
		return ERR_PTR(-EINVAL);
	if (!iwmpa_count_get(&dev->num_mr, dev->limits.max_mr))
		return ERR_PTR(-ENOMEM);
	ret = -ENOMEM;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		goto err_count;
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	mr->pend = kvcalloc(max_num_sg, sizeof(*mr->pend), GFP_KERNEL);
	if (!mr->pages || !mr->pend)
		goto err_free;
	mr->max_pages = max_num_sg;
	mr->fast = true;
	ret = ddp_stag_reserve(ipd->ddp, &mr->stag);
	if (ret)
		goto err_free;
	mr->base.lkey = mr->stag;
	mr->base.rkey = mr->stag;
	refcount_set(&mr->ref, 1);
	INIT_WORK(&mr->free_work, iwmpa_mr_free_work);
	mr->base.device = pd->device;
	mr->base.pd = pd;
	ret = xa_insert(&ipd->mrs, mr->stag >> 8, mr, GFP_KERNEL);
	if (ret)
		goto err_stag;
	return &mr->base;

err_stag:
	ddp_stag_release(ipd->ddp, mr->stag);
err_free:
	kvfree(mr->pend);
	kvfree(mr->pages);
	kfree(mr);
err_count:
	atomic_dec(&dev->num_mr);
	return ERR_PTR(ret);
}

static int iwmpa_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct iwmpa_mr *mr = to_iwmpa_mr(ibmr);
	struct page *page;

	if (mr->pend_n == mr->max_pages)
		return -ENOMEM;
	page = iwmpa_kva_page(addr);
	if (!page)
		return -EINVAL;
	mr->pend[mr->pend_n++] = page;
	return 0;
}

/**
 * iwmpa_map_mr_sg() - the pages of the next fast registration
 * @ibmr: a region of iwmpa_alloc_mr(); its page_size must be PAGE_SIZE
 * @sg: DMA-mapped scatterlist (kernel addresses: virtual DMA)
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry, or NULL
 *
 * The pages are registered when the IB_WR_REG_MR executes; until then
 * the region's current registration, if any, is not touched.
 *
 * Return: the number of entries mapped (fewer: no room, or an address
 * that is not kernel memory), -EINVAL for another page size.
 */
int iwmpa_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct iwmpa_mr *mr = to_iwmpa_mr(ibmr);
	int n;

	mr->pend_n = 0;
	if (!mr->fast || ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, iwmpa_set_page);
	mr->pend_first = ibmr->iova & ~PAGE_MASK;
	return n;
}

/**
 * iwmpa_mr_fastreg() - execute an IB_WR_REG_MR
 * @pd: the queue pair's PD
 * @mr: the region; it must be invalid, of @pd, a fast registration
 * @stag: the STag to register: the region's index, the consumer's key
 * @access: IB_ACCESS_*
 *
 * Registers the pages of the last map_mr_sg as the region's tagged
 * buffer, whose tagged offsets are the region's iova. Process context.
 *
 * Return: a SIW_WC_* status.
 */
u16 iwmpa_mr_fastreg(struct iwmpa_pd *pd, struct iwmpa_mr *mr, u32 stag,
		     int access)
{
	u64 len = mr->base.length;
	u32 first = mr->pend_first;
	int ret;

	if (!mr->fast || mr->base.pd != &pd->base || (stag >> 8) !=
	    (mr->stag >> 8) || READ_ONCE(mr->valid) ||
	    (access & (IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_MW_BIND)))
		return SIW_WC_LOC_PROT_ERR;
	if (!len || DIV_ROUND_UP(first + len, PAGE_SIZE) > mr->pend_n)
		return SIW_WC_LOC_LEN_ERR;
	memcpy(mr->pages, mr->pend, mr->pend_n * sizeof(*mr->pages));
	mr->npages = mr->pend_n;
	mr->first = first;
	mr->va = mr->base.iova;
	mr->len = len;
	mr->access = access;
	ret = ddp_reg_pages_at(pd->ddp, mr->pages, mr->npages, first, len,
			       mr->va, iwmpa_ddp_access(access), stag);
	if (ret)
		return SIW_WC_GENERAL_ERR;
	WRITE_ONCE(mr->stag, stag);
	/* the fields above before a lookup sees the region valid */
	smp_store_release(&mr->valid, true);
	return SIW_WC_SUCCESS;
}

/**
 * iwmpa_mr_local_inv() - execute an IB_WR_LOCAL_INV
 * @pd: the queue pair's PD
 * @stag: the STag of a region of @pd
 *
 * When it completes, the peer places nothing more into the region and
 * reads nothing from it. Invalidating an STag the peer invalidated
 * already succeeds. Process context.
 *
 * Return: a SIW_WC_* status.
 */
u16 iwmpa_mr_local_inv(struct iwmpa_pd *pd, u32 stag)
{
	struct iwmpa_mr *mr = iwmpa_mr_get(pd, NULL, stag);

	if (!mr)
		return SIW_WC_LOC_PROT_ERR;
	if (READ_ONCE(mr->valid)) {
		WRITE_ONCE(mr->valid, false);
		/* -ENOENT: the peer's Send with Invalidate came first */
		ddp_invalidate(pd->ddp, stag);
	}
	iwmpa_mr_put(mr);
	return SIW_WC_SUCCESS;
}

/**
 * iwmpa_mr_inv_remote() - DDP invalidated an STag: the region's too
 * @pd: the queue pair's PD
 * @stag: the STag (a Send with Invalidate, a Read with local invalidate)
 *
 * Local accesses with it fail from now on. Any context.
 */
void iwmpa_mr_inv_remote(struct iwmpa_pd *pd, u32 stag)
{
	struct iwmpa_mr *mr;

	rcu_read_lock();
	mr = xa_load(&pd->mrs, stag >> 8);
	if (mr && READ_ONCE(mr->stag) == stag)
		WRITE_ONCE(mr->valid, false);
	rcu_read_unlock();
}
