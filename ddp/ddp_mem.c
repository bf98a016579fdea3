// SPDX-License-Identifier: GPL-2.0
/*
 * DDP memory: user memory pinned for placement, kernel pages, protection
 * domains and the tagged buffers (STags) they hold. Placement writes into
 * the pages from softirq (RFC 5041 sections 3, 8: STags and their
 * protection domains).
 */
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/iwarp_compat.h>
#include <net/net_namespace.h>

#include "ddp.h"

DEFINE_IDA(ddp_ids);

/* ---- memory ---- */

void ddp_mem_release(struct ddp_mem *m, bool dirty)
{
	if (m->mm) {
		unpin_user_pages_dirty_lock(m->pages, m->npages,
					    dirty && m->writable);
		account_locked_vm(m->mm, m->npages, false);
		mmdrop(m->mm);
	}
	kvfree(m->pages);
	m->pages = NULL;
}

/*
 * DDP writes into the pages from softirq, behind the back of whatever
 * owns them. Page cache pages of a shared file mapping must not be
 * written that way (the filesystem does not know they are dirty: the
 * WARN class that ib_umem users had to learn about), so a writable pin
 * refuses them. Shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS,
 * SysV shm) lives in kernel-internal shmem files: those are fine.
 */
static bool ddp_vma_refused(const struct vm_area_struct *vma)
{
	return vma->vm_file && (vma->vm_flags & VM_SHARED) &&
	       !IS_PRIVATE(file_inode(vma->vm_file));
}

/*
 * A writable pin of [@start, @end) must not reach a shared file mapping:
 * -EOPNOTSUPP for one, -EFAULT for a hole (pin_user_pages() would fail
 * there too). Under mmap_read_lock().
 */
static int ddp_range_refused(struct mm_struct *mm, unsigned long start,
			     unsigned long end)
{
	struct vm_area_struct *vma;

	for (; start < end; start = vma->vm_end) {
		vma = vma_lookup(mm, start);
		if (!vma)
			return -EFAULT;
		if (ddp_vma_refused(vma))
			return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Pin @len octets of user memory at @addr, charged to RLIMIT_MEMLOCK
 * (CAP_IPC_LOCK bypasses the limit). With @write the pages are pinned
 * for writing and must not belong to a shared file mapping
 * (-EOPNOTSUPP); the VMAs are checked and the pages pinned under one
 * mmap_read_lock(), so the check cannot be raced by an mmap().
 */
int ddp_mem_pin(struct ddp_mem *m, u64 addr, u64 len, bool write)
{
	unsigned int flags = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	struct mm_struct *mm = current->mm;
	u32 done = 0;
	u64 npages;
	long n;
	int ret;

	if (!len || len > DDP_MAX_REG_LEN || addr + len < addr)
		return -EINVAL;
	npages = DIV_ROUND_UP((addr & ~PAGE_MASK) + len, PAGE_SIZE);
	m->pages = kvmalloc_array(npages, sizeof(*m->pages), GFP_KERNEL_ACCOUNT);
	if (!m->pages)
		return -ENOMEM;
	ret = account_locked_vm(mm, npages, true);
	if (ret)
		goto err_free;
	mmap_read_lock(mm);
	if (write)
		ret = ddp_range_refused(mm, addr & PAGE_MASK,
					(addr & PAGE_MASK) + npages * PAGE_SIZE);
	while (!ret && done < npages) {
		n = iwarp_pin_user_pages((addr & PAGE_MASK) + (u64)done * PAGE_SIZE,
					 min_t(u64, npages - done, DDP_PIN_CHUNK),
					 flags, m->pages + done);
		if (n <= 0)
			ret = n ? n : -EFAULT;
		else
			done += n;
	}
	mmap_read_unlock(mm);
	if (ret)
		goto err_unpin;
	m->npages = npages;
	m->first = addr & ~PAGE_MASK;
	m->len = len;
	m->mm = mm;
	m->writable = write;
	mmgrab(m->mm);
	return 0;

err_unpin:
	unpin_user_pages(m->pages, done);
	account_locked_vm(mm, npages, false);
err_free:
	kvfree(m->pages);
	m->pages = NULL;
	return ret;
}

/* Kernel pages: the caller keeps them alive until it invalidates. */
int ddp_mem_pages(struct ddp_mem *m, struct page **pages, u32 npages,
		  u32 first, u64 len)
{
	if (!len || first >= PAGE_SIZE ||
	    DIV_ROUND_UP(first + len, PAGE_SIZE) > npages)
		return -EINVAL;
	m->pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!m->pages)
		return -ENOMEM;
	memcpy(m->pages, pages, npages * sizeof(*pages));
	m->npages = npages;
	m->first = first;
	m->len = len;
	m->mm = NULL;
	m->writable = true;
	return 0;
}

/* Copy into @m at @off; the caller checked the bounds. */
void ddp_mem_write(const struct ddp_mem *m, u64 off, const u8 *src, u32 len)
{
	off += m->first;
	while (len) {
		u32 po = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - po);
		u8 *va = kmap_local_page(m->pages[off >> PAGE_SHIFT]);

		memcpy(va + po, src, n);
		kunmap_local(va);
		off += n;
		src += n;
		len -= n;
	}
}

/* ---- protection domains and tagged buffers ---- */

/*
 * A user's PD (/dev/ddp) is charged to the user's memory cgroup. Its
 * STags are counted in the network namespace of the task creating it.
 */
struct ddp_pd *__ddp_pd_alloc(gfp_t gfp)
{
	struct ddp_pd *pd = kzalloc(sizeof(*pd), gfp);
	int id;

	if (!pd)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc_min(&ddp_ids, 1, GFP_KERNEL);
	if (id < 0) {
		kfree(pd);
		return ERR_PTR(id);
	}
	pd->id = id;
	/* no namespaces left in an exiting task's last task_work */
	pd->net = get_net(current->nsproxy ? current->nsproxy->net_ns : &init_net);
	pd->mib = ddp_net_mib(pd->net);
	xa_init(&pd->mrs);
	get_random_bytes(&pd->stag_key, sizeof(pd->stag_key));
	pd->stag_ctr = get_random_u32() & DDP_STAG_INDEX_MAX;
	refcount_set(&pd->ref, 1);
	return pd;
}

/**
 * ddp_pd_alloc() - a new protection domain
 *
 * Its STags are counted in /proc/net/ddp_stat of the caller's network
 * namespace, on which the PD holds a reference.
 *
 * Return: the PD, or an ERR_PTR.
 */
struct ddp_pd *ddp_pd_alloc(void)
{
	return __ddp_pd_alloc(GFP_KERNEL);
}
EXPORT_SYMBOL_GPL(ddp_pd_alloc);

/* An STag is invalidated or freed with its PD. */
static void ddp_stag_gone(struct ddp_pd *pd, const struct ddp_mr *mr)
{
	ddp_mib_inc(pd->mib, DDP_MIB_STAG_INVAL);
	trace_ddp_stag_inval(pd->id, mr->stag, mr->base_to, mr->mem.len);
}

static void ddp_mr_free(struct ddp_mr *mr)
{
	ddp_mem_release(&mr->mem, true);
	kfree(mr);
}

/**
 * ddp_pd_put() - drop a reference; the last one frees every tagged buffer
 * @pd: the PD
 */
void ddp_pd_put(struct ddp_pd *pd)
{
	struct ddp_mr *mr;
	unsigned long idx;

	if (!refcount_dec_and_test(&pd->ref))
		return;
	/* no stream is left: nothing places into these buffers */
	xa_for_each(&pd->mrs, idx, mr) {
		ddp_stag_gone(pd, mr);
		ddp_mr_free(mr);
	}
	xa_destroy(&pd->mrs);
	ida_free(&ddp_ids, pd->id);
	put_net(pd->net);
	kfree(pd);
}
EXPORT_SYMBOL_GPL(ddp_pd_put);

/*
 * A keyed pseudo-random permutation of the 24-bit index space: a
 * balanced Feistel network of DDP_STAG_ROUNDS rounds on two 12-bit
 * halves, with SipHash under the PD's secret key as round function.
 */
static u32 ddp_stag_index(const struct ddp_pd *pd, u32 ctr)
{
	u32 l = ctr >> 12 & 0xfff, r = ctr & 0xfff, t, i;

	for (i = 0; i < DDP_STAG_ROUNDS; i++) {
		t = l ^ (siphash_2u32(r, i, &pd->stag_key) & 0xfff);
		l = r;
		r = t;
	}
	return l << 12 | r;
}

/*
 * STag = index << 8 | key (RFC 5040 section 4.2). The index is the
 * keyed permutation of a counter, so indexes are spread over the whole
 * space in an order the peer cannot derive (RFC 5042 section 5.1: STags
 * hard to guess), and one does not come back before the counter went
 * round, i.e. before 2^24 registrations on the PD: an invalidated STag
 * is not reused soon. The 8-bit key is random. -EBUSY when
 * DDP_STAG_TRIES indexes in a row are in use.
 */
static int ddp_mr_insert(struct ddp_pd *pd, struct ddp_mr *mr, u32 *stag)
{
	int ret = -EBUSY, tries;
	u32 idx;

	mr->valid = true;
	xa_lock(&pd->mrs);
	for (tries = 0; tries < DDP_STAG_TRIES; tries++) {
		idx = ddp_stag_index(pd, pd->stag_ctr);
		pd->stag_ctr = (pd->stag_ctr + 1) & DDP_STAG_INDEX_MAX;
		if (!idx)
			continue;
		/* set before the buffer is visible to lookups */
		mr->stag = idx << 8 | get_random_u8();
		/* -EBUSY: the index is in use, try the next one */
		ret = __xa_insert(&pd->mrs, idx, mr, GFP_KERNEL_ACCOUNT);
		if (ret != -EBUSY)
			break;
	}
	xa_unlock(&pd->mrs);
	if (!ret)
		*stag = mr->stag;
	return ret;
}

/*
 * Register @mem, pinned user memory or kernel pages, as a tagged buffer:
 * the buffer takes @mem over on success; on failure @mem stays the
 * caller's.
 */
int ddp_reg_mem(struct ddp_pd *pd, struct ddp_stream *owner,
		struct ddp_mem *mem, u64 base_to, u32 access, u32 *stag)
{
	struct ddp_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!mr)
		return -ENOMEM;
	mr->mem = *mem;
	mr->owner = owner ? owner->id : pd->id;
	mr->base_to = base_to;
	mr->access = access;
	ret = ddp_mr_insert(pd, mr, stag);
	if (ret) {
		kfree(mr);
		return ret;
	}
	ddp_mib_inc(pd->mib, DDP_MIB_STAG_REG);
	trace_ddp_stag_reg(pd->id, *stag, base_to, mem->len);
	return 0;
}

/**
 * ddp_reg_pages() - register kernel pages as a tagged buffer
 * @pd: the PD
 * @owner: the only stream that may use it, or NULL for every stream of @pd
 * @pages: the pages; they must stay until ddp_invalidate() returns
 * @npages: their number
 * @first: offset of the first octet in the first page
 * @len: length in octets
 * @base_to: tagged offset of the first octet
 * @access: DDP_ACCESS_*
 * @stag: out: the STag
 *
 * Return: 0 or a negative errno.
 */
int ddp_reg_pages(struct ddp_pd *pd, struct ddp_stream *owner,
		  struct page **pages, u32 npages, u32 first, u64 len,
		  u64 base_to, u32 access, u32 *stag)
{
	struct ddp_mem mem;
	int ret;

	ret = ddp_mem_pages(&mem, pages, npages, first, len);
	if (ret)
		return ret;
	ret = ddp_reg_mem(pd, owner, &mem, base_to, access, stag);
	if (ret)
		ddp_mem_release(&mem, false);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_reg_pages);

/**
 * ddp_invalidate() - make an STag unusable at once and free its buffer
 * @pd: the PD
 * @stag: the STag
 *
 * When this returns, no placement into the buffer is running or will run.
 * Return: 0, or -ENOENT for an STag that is not registered.
 */
int ddp_invalidate(struct ddp_pd *pd, u32 stag)
{
	struct ddp_mr *mr;

	xa_lock(&pd->mrs);
	mr = xa_load(&pd->mrs, stag >> 8);
	if (!mr || mr->stag != stag) {
		xa_unlock(&pd->mrs);
		ddp_mib_inc(pd->mib, DDP_MIB_INVALID_STAG);
		return -ENOENT;
	}
	WRITE_ONCE(mr->valid, false);
	__xa_erase(&pd->mrs, stag >> 8);
	/* after the erase: see ddp_rx_mr() */
	smp_store_release(&pd->gen, pd->gen + 1);
	xa_unlock(&pd->mrs);
	/* placement looks buffers up under rcu_read_lock() */
	synchronize_rcu();
	ddp_stag_gone(pd, mr);
	ddp_mr_free(mr);
	return 0;
}
EXPORT_SYMBOL_GPL(ddp_invalidate);

/* Under rcu_read_lock(). */
struct ddp_mr *ddp_mr_lookup(struct ddp_pd *pd, u32 stag)
{
	struct ddp_mr *mr = xa_load(&pd->mrs, stag >> 8);

	if (!mr || mr->stag != stag || !READ_ONCE(mr->valid))
		return NULL;
	return mr;
}

/*
 * Invalidate the tagged buffers bound to this stream only. The walk runs
 * under the xarray lock, which ddp_invalidate() takes too: every buffer
 * it sees is still in the xarray, hence not freed, while its owner is
 * read. The buffers are freed after one grace period for all of them.
 */
void ddp_invalidate_owned(struct ddp_stream *s)
{
	struct xarray *mrs = &s->pd->mrs;
	struct ddp_mr *mr, *tmp;
	unsigned long idx;
	LIST_HEAD(dead);

	xa_lock(mrs);
	xa_for_each(mrs, idx, mr) {
		if (mr->owner != s->id)
			continue;
		WRITE_ONCE(mr->valid, false);
		__xa_erase(mrs, idx);
		list_add_tail(&mr->dead, &dead);
	}
	if (!list_empty(&dead))	/* after the erases: see ddp_rx_mr() */
		smp_store_release(&s->pd->gen, s->pd->gen + 1);
	xa_unlock(mrs);
	if (list_empty(&dead))
		return;
	/* placement looks buffers up under rcu_read_lock() */
	synchronize_rcu();
	list_for_each_entry_safe(mr, tmp, &dead, dead) {
		ddp_stag_gone(s->pd, mr);
		ddp_mr_free(mr);
	}
}
