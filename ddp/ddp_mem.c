// SPDX-License-Identifier: GPL-2.0
/*
 * DDP memory: user memory pinned for placement, kernel pages, protection
 * domains and the tagged buffers (STags) they hold. Placement writes into
 * the pages from softirq (RFC 5041 sections 3, 8: STags and their
 * protection domains).
 */
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <net/iwarp_compat.h>
#include <net/net_namespace.h>

#include "ddp.h"

DEFINE_IDA(ddp_ids);
/*
 * frees the buffers the peer invalidated (ddp_invalidate_remote()); with a
 * rescuer, as ddp_stream_release() flushes it from reclaim workers too
 */
struct workqueue_struct *ddp_wq;

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
	kfree(m->runs);
	m->runs = NULL;
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
	m->runs = NULL;
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

/*
 * Kernel pages: the caller keeps them alive until it invalidates. Their
 * pointers are copied into @tab (room for @npages) if given, else into an
 * array allocated here.
 */
int ddp_mem_pages(struct ddp_mem *m, struct page **pages, u32 npages,
		  u32 first, u64 len, struct page **tab, gfp_t gfp)
{
	if (!len || first >= PAGE_SIZE ||
	    DIV_ROUND_UP(first + len, PAGE_SIZE) > npages)
		return -EINVAL;
	m->pages = tab ?: kvmalloc_array(npages, sizeof(*pages), gfp);
	if (!m->pages)
		return -ENOMEM;
	memcpy(m->pages, pages, npages * sizeof(*pages));
	m->npages = npages;
	m->first = first;
	m->len = len;
	m->mm = NULL;
	m->writable = true;
	m->runs = NULL;
	return 0;
}

/*
 * Kernel pages in runs (the SGEs of one posted buffer): the page pointers
 * of all runs one after the other in @m->pages, and where each run is.
 * A run of no octets is left out. The caller keeps the pages alive until
 * the buffer comes back.
 */
int ddp_mem_runs(struct ddp_mem *m, const struct ddp_sge *sg, u32 nsg,
		 gfp_t gfp)
{
	u32 i, n = 0, npages = 0;
	u64 len = 0;

	for (i = 0; i < nsg; i++) {
		if (sg[i].first >= PAGE_SIZE)
			return -EINVAL;
		len += sg[i].len;
		npages += DIV_ROUND_UP(sg[i].first + (u64)sg[i].len, PAGE_SIZE);
	}
	if (!len || len > DDP_MAX_REG_LEN)
		return -EINVAL;
	m->pages = kvmalloc_array(npages, sizeof(*m->pages), gfp);
	m->runs = kmalloc_array(nsg, sizeof(*m->runs), gfp);
	if (!m->pages || !m->runs) {
		kvfree(m->pages);
		kfree(m->runs);
		m->pages = NULL;
		m->runs = NULL;
		return -ENOMEM;
	}
	npages = 0;
	for (i = 0; i < nsg; i++) {
		u32 np = DIV_ROUND_UP(sg[i].first + sg[i].len, PAGE_SIZE);

		if (!sg[i].len)
			continue;
		memcpy(m->pages + npages, sg[i].pages, np * sizeof(*m->pages));
		m->runs[n++] = (struct ddp_mem_run){
			.page = npages, .first = sg[i].first, .len = sg[i].len,
		};
		npages += np;
	}
	m->npages = npages;
	m->first = 0;
	m->len = len;
	m->mm = NULL;
	m->writable = true;
	return 0;
}

/* copy @len octets to @off octets into the run of @pages from its start */
static void ddp_pages_write(struct page **pages, u64 off, const u8 *src,
			    u32 len)
{
	while (len) {
		u32 po = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - po);
		u8 *va = kmap_local_page(pages[off >> PAGE_SHIFT]);

		memcpy(va + po, src, n);
		kunmap_local(va);
		off += n;
		src += n;
		len -= n;
	}
}

/* Copy into @m at @off; the caller checked the bounds. */
void ddp_mem_write(const struct ddp_mem *m, u64 off, const u8 *src, u32 len)
{
	const struct ddp_mem_run *r = m->runs;

	if (likely(!r)) {
		ddp_pages_write(m->pages, m->first + off, src, len);
		return;
	}
	for (; len; r++) {
		u32 n;

		if (off >= r->len) {
			off -= r->len;
			continue;
		}
		n = min_t(u64, len, r->len - off);
		ddp_pages_write(m->pages + r->page, r->first + off, src, n);
		src += n;
		len -= n;
		off = 0;
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
	/* the peer's Send with Invalidate erases from softirq */
	xa_init_flags(&pd->mrs, XA_FLAGS_LOCK_BH);
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
 * is not reused soon. The 8-bit key is random. Store @mr (NULL: reserve
 * the index) at the next free index, under the xarray lock. -EBUSY when
 * DDP_STAG_TRIES indexes in a row are in use or reserved.
 */
static int ddp_stag_insert(struct ddp_pd *pd, struct ddp_mr *mr, u32 *stag)
{
	int ret = -EBUSY, tries;
	u32 idx, s;

	for (tries = 0; tries < DDP_STAG_TRIES; tries++) {
		idx = ddp_stag_index(pd, pd->stag_ctr);
		pd->stag_ctr = (pd->stag_ctr + 1) & DDP_STAG_INDEX_MAX;
		if (!idx)
			continue;
		s = idx << 8 | get_random_u8();
		/* set before the buffer is visible to lookups */
		if (mr)
			mr->stag = s;
		/* -EBUSY: the index is in use, try the next one */
		ret = __xa_insert(&pd->mrs, idx, mr, GFP_KERNEL_ACCOUNT);
		if (ret != -EBUSY)
			break;
	}
	if (!ret)
		*stag = s;
	return ret;
}

/*
 * Publish @mr under a new STag (out: *@stag), or for a reserved index
 * (@mr->reserved) under *@stag: the reservation is replaced without
 * allocating, -EBUSY if a buffer is there or the index is not reserved.
 */
static int ddp_mr_insert(struct ddp_pd *pd, struct ddp_mr *mr, u32 *stag)
{
	int ret = 0;

	mr->valid = true;
	xa_lock_bh(&pd->mrs);
	if (mr->reserved) {
		mr->stag = *stag;
		__xa_cmpxchg(&pd->mrs, *stag >> 8, XA_ZERO_ENTRY, mr,
			     GFP_ATOMIC);
		if (xa_load(&pd->mrs, *stag >> 8) != mr)
			ret = -EBUSY;
	} else {
		ret = ddp_stag_insert(pd, mr, stag);
	}
	xa_unlock_bh(&pd->mrs);
	return ret;
}

/* ddp_reg_mem(), or (@reserved) at the reserved index of *@stag */
static int __ddp_reg_mem(struct ddp_pd *pd, struct ddp_stream *owner,
			 struct ddp_mem *mem, u64 base_to, u32 access,
			 bool reserved, u32 *stag)
{
	struct ddp_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!mr)
		return -ENOMEM;
	mr->mem = *mem;
	mr->tab_len = mem->npages;
	mr->reserved = reserved;
	mr->owner = owner ? owner->id : pd->id;
	mr->base_to = base_to;
	mr->access = access;
	mr->pd = pd;
	ret = ddp_mr_insert(pd, mr, stag);
	if (ret) {
		kfree(mr);
		return ret;
	}
	ddp_mib_inc(pd->mib, DDP_MIB_STAG_REG);
	trace_ddp_stag_reg(pd->id, *stag, base_to, mem->len);
	return 0;
}

/*
 * Register @mem, pinned user memory or kernel pages, as a tagged buffer:
 * the buffer takes @mem over on success; on failure @mem stays the
 * caller's.
 */
int ddp_reg_mem(struct ddp_pd *pd, struct ddp_stream *owner,
		struct ddp_mem *mem, u64 base_to, u32 access, u32 *stag)
{
	return __ddp_reg_mem(pd, owner, mem, base_to, access, false, stag);
}

/* Wait until no sender holds @mr (ddp_mr_get()). */
static void ddp_mr_wait_users(struct ddp_mr *mr)
{
	wait_var_event(&mr->users, !atomic_read(&mr->users));
}

static void ddp_mr_free_work(struct work_struct *work)
{
	struct ddp_mr *mr = container_of(to_rcu_work(work), struct ddp_mr,
					 free_work);
	struct ddp_pd *pd = mr->pd;

	ddp_mr_wait_users(mr);
	ddp_stag_gone(pd, mr);
	ddp_mr_free(mr);
	ddp_pd_put(pd);
}

/* Free @mr, unpublished, after a grace period and its senders. */
static void ddp_mr_free_later(struct ddp_pd *pd, struct ddp_mr *mr)
{
	/* a stream's reference keeps the PD; this one is for the work */
	refcount_inc(&pd->ref);
	INIT_RCU_WORK(&mr->free_work, ddp_mr_free_work);
	queue_rcu_work(ddp_wq, &mr->free_work);
}

/*
 * ddp_reg_pages() for @s with one of its spares: the same object, index
 * and (if large enough) page table, another key. The spare stayed in the
 * xarray, not valid: publishing is a store of its flag, no xarray walk.
 * Not concurrent with ddp_stream_release() of @s (the owner's ULP
 * registers on a stream it holds). -EAGAIN: no spare; register anew.
 */
static int ddp_reg_spare(struct ddp_stream *s, struct page **pages,
			 u32 npages, u32 first, u64 len, u64 base_to,
			 u32 access, u32 *stag)
{
	struct ddp_pd *pd = s->pd;
	struct ddp_mr *mr;
	struct ddp_mem mem;
	int ret;

	spin_lock_bh(&s->lock);
	mr = list_first_entry_or_null(&s->spare, struct ddp_mr, dead);
	if (mr) {
		list_del(&mr->dead);
		s->nspare--;
		mr->spare = false;
	}
	spin_unlock_bh(&s->lock);
	if (!mr)
		return -EAGAIN;
	/* its page table is its own: no lookup uses it (see struct ddp_mr) */
	ret = ddp_mem_pages(&mem, pages, npages, first, len,
			    npages <= mr->tab_len ? mr->mem.pages : NULL,
			    GFP_KERNEL_ACCOUNT);
	if (ret) {
		spin_lock_bh(&s->lock);
		mr->spare = true;
		list_add(&mr->dead, &s->spare);
		s->nspare++;
		spin_unlock_bh(&s->lock);
		return ret;
	}
	if (mem.pages != mr->mem.pages) {
		kvfree(mr->mem.pages);
		mr->tab_len = npages;
	}
	mr->mem = mem;
	mr->base_to = base_to;
	mr->access = access;
	/* another key: an STag of its last use names nothing */
	WRITE_ONCE(mr->stag, (mr->stag & ~0xffU) | ((mr->stag + 1) & 0xff));
	/* the buffer and its key before the flag: see ddp_mr_lookup() */
	smp_store_release(&mr->valid, true);
	*stag = mr->stag;
	ddp_mib_inc(pd->mib, DDP_MIB_STAG_REG);
	trace_ddp_stag_reg(pd->id, *stag, base_to, len);
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
 * A buffer bound to @owner reuses a spare of @owner if there is one (see
 * ddp_invalidate_remote()): its STag index again, with another key.
 *
 * Return: 0 or a negative errno.
 */
int ddp_reg_pages(struct ddp_pd *pd, struct ddp_stream *owner,
		  struct page **pages, u32 npages, u32 first, u64 len,
		  u64 base_to, u32 access, u32 *stag)
{
	struct ddp_mem mem;
	int ret;

	if (owner && owner->pd == pd && READ_ONCE(owner->nspare)) {
		ret = ddp_reg_spare(owner, pages, npages, first, len, base_to,
				    access, stag);
		if (ret != -EAGAIN)
			return ret;
	}
	ret = ddp_mem_pages(&mem, pages, npages, first, len, NULL,
			    GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ret = ddp_reg_mem(pd, owner, &mem, base_to, access, stag);
	if (ret)
		ddp_mem_release(&mem, false);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_reg_pages);

/**
 * ddp_stag_reserve() - reserve an STag index for fast registration
 * @pd: the PD
 * @stag: out: an STag with the reserved index and a random key
 *
 * For a verbs provider's fast-registration memory regions: the index
 * stays the caller's, unused by other registrations, until
 * ddp_stag_release(); ddp_reg_pages_at() registers a buffer under it
 * with a key of the caller's choice, and invalidating that buffer
 * returns the index to the reservation.
 *
 * Return: 0 or a negative errno.
 */
int ddp_stag_reserve(struct ddp_pd *pd, u32 *stag)
{
	int ret;

	xa_lock_bh(&pd->mrs);
	ret = ddp_stag_insert(pd, NULL, stag);
	xa_unlock_bh(&pd->mrs);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_stag_reserve);

/**
 * ddp_stag_release() - give a reserved STag index back
 * @pd: the PD
 * @stag: an STag of ddp_stag_reserve(), with any key
 *
 * A buffer still registered under the index is not touched: invalidate
 * it first.
 */
void ddp_stag_release(struct ddp_pd *pd, u32 stag)
{
	xa_lock_bh(&pd->mrs);
	__xa_cmpxchg(&pd->mrs, stag >> 8, XA_ZERO_ENTRY, NULL, 0);
	xa_unlock_bh(&pd->mrs);
}
EXPORT_SYMBOL_GPL(ddp_stag_release);

/**
 * ddp_reg_pages_at() - register kernel pages under a reserved STag index
 * @pd: the PD; the buffer is usable by every stream of it
 * @pages: the pages; they must stay until the buffer is invalidated
 * @npages: their number
 * @first: offset of the first octet in the first page
 * @len: length in octets
 * @base_to: tagged offset of the first octet
 * @access: DDP_ACCESS_*
 * @stag: the STag: an index of ddp_stag_reserve() and the caller's key
 *
 * Return: 0, -EBUSY if a buffer is registered under the index already
 * (or the index is not reserved), another negative errno.
 */
int ddp_reg_pages_at(struct ddp_pd *pd, struct page **pages, u32 npages,
		     u32 first, u64 len, u64 base_to, u32 access, u32 stag)
{
	struct ddp_mem mem;
	int ret;

	if (!(stag >> 8))
		return -EINVAL;
	ret = ddp_mem_pages(&mem, pages, npages, first, len, NULL,
			    GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ret = __ddp_reg_mem(pd, NULL, &mem, base_to, access, true, &stag);
	if (ret)
		ddp_mem_release(&mem, false);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_reg_pages_at);

/* the owner to compare with &ddp_mr.owner for a use by @s */
static u32 ddp_mr_owner_for(const struct ddp_mr *mr, const struct ddp_stream *s)
{
	return mr->owner == s->pd->id ? s->pd->id : s->id;
}

/*
 * Take the buffer of @stag out of @pd if @s (NULL: any) may use it, under
 * the xarray lock: unusable at once, no new lookup finds it. Return: the
 * buffer, or an ERR_PTR: -ENOENT for an STag that is not registered,
 * -EACCES for one bound to another stream than @s.
 */
static struct ddp_mr *ddp_mr_unpublish(struct ddp_pd *pd,
				       const struct ddp_stream *s, u32 stag,
				       bool keep)
{
	struct ddp_mr *mr;

	xa_lock_bh(&pd->mrs);
	mr = xa_load(&pd->mrs, stag >> 8);
	/* a spare stays in the xarray, not valid; its key after the flag */
	if (!mr || !smp_load_acquire(&mr->valid) ||
	    READ_ONCE(mr->stag) != stag)
		mr = ERR_PTR(-ENOENT);
	else if (s && mr->owner != ddp_mr_owner_for(mr, s))
		mr = ERR_PTR(-EACCES);
	if (IS_ERR(mr)) {
		xa_unlock_bh(&pd->mrs);
		ddp_mib_inc(pd->mib, DDP_MIB_INVALID_STAG);
		return mr;
	}
	WRITE_ONCE(mr->valid, false);
	/* kernel pages bound to @s, no sender: a spare of @s */
	mr->spare = keep && mr->owner == s->id && !mr->reserved &&
		    !mr->mem.mm && !mr->mem.runs && !atomic_read(&mr->users);
	/*
	 * A spare stays where it is, not freed: a lookup that finds it, or
	 * holds it from before, sees it not valid, or (reused) another key.
	 */
	if (mr->spare) {
		xa_unlock_bh(&pd->mrs);
		return mr;
	}
	/* a fixed index goes back to its reservation (no allocation) */
	if (mr->reserved)
		__xa_cmpxchg(&pd->mrs, stag >> 8, mr, XA_ZERO_ENTRY, GFP_ATOMIC);
	else
		__xa_erase(&pd->mrs, stag >> 8);
	/* after the erase: see ddp_rx_mr() */
	smp_store_release(&pd->gen, pd->gen + 1);
	xa_unlock_bh(&pd->mrs);
	return mr;
}

/**
 * ddp_invalidate() - make an STag unusable at once and free its buffer
 * @pd: the PD
 * @stag: the STag
 *
 * When this returns, no placement into the buffer and no send from it
 * (ddp_send_mr()) is running or will run.
 * Return: 0, or -ENOENT for an STag that is not registered.
 */
int ddp_invalidate(struct ddp_pd *pd, u32 stag)
{
	struct ddp_mr *mr = ddp_mr_unpublish(pd, NULL, stag, false);

	if (IS_ERR(mr))
		return PTR_ERR(mr);
	/* placement and ddp_mr_get() look buffers up under rcu_read_lock() */
	synchronize_rcu();
	ddp_mr_wait_users(mr);
	ddp_stag_gone(pd, mr);
	ddp_mr_free(mr);
	return 0;
}
EXPORT_SYMBOL_GPL(ddp_invalidate);

/**
 * ddp_invalidate_remote() - the peer invalidates an STag of this stream
 * @s: the stream the request came on
 * @stag: the STag
 *
 * For the ULP's remote invalidation (RDMAP's Send with Invalidate, RFC
 * 5040 section 5.1): the STag must be registered on the stream's PD and
 * bound to the PD or to @s. It is unusable when this returns; its buffer
 * is freed later, after any send from it. Kernel pages of such a buffer
 * must stay until ddp_stream_release() of @s returns. A buffer of kernel
 * pages bound to @s and not being sent from becomes a spare of @s: the
 * next ddp_reg_pages() for @s takes it (an RDMA Read's sink, registered
 * and invalidated per Read, costs no allocation, no index search and no
 * grace period then).
 *
 * Does not sleep: may be called from the stream's event callback.
 * Return: 0, -ENOENT for an STag that is not registered, -EACCES for
 * one bound to another stream.
 */
int ddp_invalidate_remote(struct ddp_stream *s, u32 stag)
{
	struct ddp_pd *pd = s->pd;
	struct ddp_mr *mr;
	bool spare;

	spin_lock_bh(&s->lock);
	mr = ddp_mr_unpublish(pd, s, stag, s->nspare < DDP_MR_SPARES);
	spare = !IS_ERR(mr) && mr->spare;
	if (spare) {
		/* before ddp_reg_spare() can take it */
		ddp_stag_gone(pd, mr);
		list_add(&mr->dead, &s->spare);
		s->nspare++;
	}
	spin_unlock_bh(&s->lock);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	if (spare)
		return 0;
	s->remote_inval = true;
	ddp_mr_free_later(pd, mr);
	return 0;
}
EXPORT_SYMBOL_GPL(ddp_invalidate_remote);

/**
 * ddp_mr_get() - hold a tagged buffer to send from it
 * @s: the stream that will send (RDMAP's Read Response)
 * @stag: the buffer's STag
 * @view: out: what the buffer is, for the ULP's checks; @view->valid is
 *	false when the STag names no valid buffer. DDP_VIEW_READ stands for
 *	DDP_ACCESS_REMOTE_READ, DDP_VIEW_WRITE for DDP_ACCESS_REMOTE_WRITE.
 * @bound: out: the ID @view->stream_or_pd must be for @s to use it
 *
 * Does not sleep: may be called from the stream's event callback.
 * Invalidation waits until the buffer is put back with ddp_mr_put().
 * Return: the buffer, or NULL.
 */
struct ddp_mr *ddp_mr_get(struct ddp_stream *s, u32 stag,
			  struct ddp_region_view *view, u32 *bound)
{
	struct ddp_mr *mr;

	memset(view, 0, sizeof(*view));
	*bound = s->id;
	rcu_read_lock();
	mr = ddp_mr_lookup(s->pd, stag);
	if (mr) {
		/* within the read-side section: see ddp_invalidate() */
		atomic_inc(&mr->users);
		view->valid = true;
		view->stream_or_pd = mr->owner;
		view->base_to = mr->base_to;
		view->len = mr->mem.len;
		if (mr->access & DDP_ACCESS_REMOTE_WRITE)
			view->access |= DDP_VIEW_WRITE;
		if (mr->access & DDP_ACCESS_REMOTE_READ)
			view->access |= DDP_VIEW_READ;
		*bound = ddp_mr_owner_for(mr, s);
	}
	rcu_read_unlock();
	return mr;
}
EXPORT_SYMBOL_GPL(ddp_mr_get);

/**
 * ddp_mr_put() - give back a buffer held by ddp_mr_get()
 * @mr: the buffer
 *
 * Does not sleep.
 */
void ddp_mr_put(struct ddp_mr *mr)
{
	if (atomic_dec_and_test(&mr->users))
		wake_up_var(&mr->users);
}
EXPORT_SYMBOL_GPL(ddp_mr_put);

/* the bvecs of a Read Response on the stack: 32 KiB of 4 KiB pages */
#define DDP_MR_STACK_BV	8

/*
 * @len octets of @mr from tagged offset @to as a bvec array: @stack if
 * DDP_MR_STACK_BV entries do, else allocated (*@out != @stack: the caller
 * frees it); the caller checked the range. Return: the number of
 * entries, or -ENOMEM.
 */
static int ddp_mr_bvec(const struct ddp_mr *mr, u64 to, u32 len,
		       struct bio_vec *stack, struct bio_vec **out, gfp_t gfp)
{
	u64 off = to - mr->base_to + mr->mem.first;
	u32 n = 0, nmax = DIV_ROUND_UP((off & ~PAGE_MASK) + len, PAGE_SIZE);
	struct bio_vec *bv = stack;

	if (nmax > DDP_MR_STACK_BV) {
		bv = kvmalloc_array(nmax, sizeof(*bv), gfp);
		if (!bv)
			return -ENOMEM;
	}
	while (len) {
		u32 po = off & ~PAGE_MASK;
		u32 c = min_t(u32, len, PAGE_SIZE - po);

		bvec_set_page(&bv[n++], mr->mem.pages[off >> PAGE_SHIFT], c, po);
		off += c;
		len -= c;
	}
	*out = bv;
	return n;
}

/**
 * ddp_send_mr() - send a message whose data is in a held tagged buffer
 * @s: the stream
 * @msg: as for ddp_send_msg()
 * @mr: the buffer, held with ddp_mr_get() on @s
 * @to: tagged offset of the first octet to send
 * @len: octets to send, 0 allowed
 *
 * RDMAP's Read Response: the Data Source's buffer, after the ULP checked
 * the request against the view ddp_mr_get() gave.
 * Return: 0, -EINVAL for a range outside the buffer, or what
 * ddp_send_msg() returns.
 */
int ddp_send_mr(struct ddp_stream *s, const struct ddp_msg *msg,
		struct ddp_mr *mr, u64 to, u32 len)
{
	/* filled before use: not zeroed for each Read */
	struct bio_vec stack[DDP_MR_STACK_BV] __uninitialized;
	struct iov_iter it;
	struct bio_vec *bv;
	int n, ret;

	if (to < mr->base_to || to - mr->base_to > mr->mem.len ||
	    len > mr->mem.len - (to - mr->base_to))
		return -EINVAL;
	n = ddp_mr_bvec(mr, to, len, stack, &bv,
			msg->rx ? GFP_ATOMIC : GFP_KERNEL);
	if (n < 0)
		return n;
	iov_iter_bvec(&it, ITER_SOURCE, bv, n, len);
	ret = ddp_send_msg(s, msg, &it);
	if (bv != stack)
		kvfree(bv);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_send_mr);

/*
 * Under rcu_read_lock(). The flag before the key and the buffer: a spare
 * made valid again (ddp_reg_spare()) is seen whole, under its new key.
 */
struct ddp_mr *ddp_mr_lookup(struct ddp_pd *pd, u32 stag)
{
	struct ddp_mr *mr = xa_load(&pd->mrs, stag >> 8);

	if (!mr)
		return NULL;
	/* pairs with the release in ddp_reg_spare() */
	if (!smp_load_acquire(&mr->valid) || READ_ONCE(mr->stag) != stag)
		return NULL;
	return mr;
}

/*
 * Invalidate the tagged buffers bound to this stream only. The walk runs
 * under the xarray lock, which ddp_invalidate() takes too: every buffer
 * it sees is still in the xarray, hence not freed, while its owner is
 * read. The buffers are freed after one grace period for all of them,
 * and with them the stream's spares (ddp_invalidate_remote()).
 */
void ddp_invalidate_owned(struct ddp_stream *s)
{
	struct xarray *mrs = &s->pd->mrs;
	struct ddp_mr *mr, *tmp;
	unsigned long idx;
	LIST_HEAD(spare);
	LIST_HEAD(dead);

	/* the receive path that makes spares is gone (mpa_unbind()) */
	spin_lock_bh(&s->lock);
	list_splice_init(&s->spare, &spare);
	s->nspare = 0;
	spin_unlock_bh(&s->lock);
	xa_lock_bh(mrs);
	xa_for_each(mrs, idx, mr) {
		if (mr->owner != s->id)
			continue;
		__xa_erase(mrs, idx);
		/* a spare, not valid, is on the list taken above */
		if (mr->spare)
			continue;
		WRITE_ONCE(mr->valid, false);
		list_add_tail(&mr->dead, &dead);
	}
	if (!list_empty(&dead) || !list_empty(&spare)) {
		/* after the erases: see ddp_rx_mr() */
		smp_store_release(&s->pd->gen, s->pd->gen + 1);
	}
	xa_unlock_bh(mrs);
	if (list_empty(&dead) && list_empty(&spare))
		return;
	/* placement looks buffers up under rcu_read_lock() */
	synchronize_rcu();
	list_for_each_entry_safe(mr, tmp, &dead, dead) {
		ddp_mr_wait_users(mr);
		ddp_stag_gone(s->pd, mr);
		ddp_mr_free(mr);
	}
	/* counted as invalidated when they became spares */
	list_for_each_entry_safe(mr, tmp, &spare, dead) {
		ddp_mr_wait_users(mr);
		ddp_mr_free(mr);
	}
}
