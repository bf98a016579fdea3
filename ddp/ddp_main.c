// SPDX-License-Identifier: GPL-2.0
/*
 * DDP (RFC 5041) over MPA.
 *
 * ddp.ko is the MPA consumer "ddp". MPA hands it every run of ULPDU
 * octets as they come out of the socket buffers (the consumer's place
 * callback, softirq or the socket owner's backlog, socket lock held);
 * DDP gathers the segment header, validates it (RFC 5041 section 7.1)
 * and copies the payload straight into the registered or posted pages:
 * one copy in all. The segment is delivered when MPA says its CRC was
 * good; an error stops placement on the stream for good.
 *
 * /dev/ddp gives user space the same thing: see include/uapi/linux/ddp.h.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <net/ddp.h>
#include <net/iwarp_compat.h>
#include <net/mpa.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "ddp_proto.h"

#define DDP_SEND_RETRIES	8	/* MULPDU changes in a row one segment survives */
#define DDP_EVQ_LEN		1024	/* events a stream keeps for its reader */
#define DDP_MAX_POSTED		256	/* posted buffers per stream */
#define DDP_MAX_REG_LEN		BIT_ULL(32)
#define DDP_STAG_INDEX_MAX	0xffffff
#define DDP_STAG_ROUNDS		8	/* of the Feistel permutation of indexes */
#define DDP_STAG_TRIES		4096	/* index probes before -EBUSY */
#define DDP_PIN_CHUNK		(PAGE_SIZE / sizeof(struct vm_area_struct *))

/* PD and stream IDs share one space, so an STag's owner is unambiguous */
static DEFINE_IDA(ddp_ids);

/**
 * struct ddp_mem - pages of a registered or posted buffer
 * @pages: the pages
 * @npages: their number
 * @first: offset of the first octet in @pages[0]
 * @len: length in octets
 * @mm: for pinned user memory: whose RLIMIT_MEMLOCK it is charged to
 * @writable: pinned for writing (FOLL_WRITE): dirty the pages on release
 */
struct ddp_mem {
	struct page	**pages;
	u32		npages;
	u32		first;
	u64		len;
	struct mm_struct *mm;
	bool		writable;
};

/**
 * struct ddp_mr - a tagged buffer
 * @mem: its memory
 * @stag: steering tag: index << 8 | key
 * @owner: ID of the PD or of the one stream it is bound to
 * @base_to: tagged offset of its first octet
 * @access: DDP_ACCESS_*
 * @valid: false once invalidated
 * @dead: on a list of buffers to free after an RCU grace period
 *
 * A buffer is found by RCU lookups of &ddp_pd.mrs (placement) and by
 * walks under the xarray lock (invalidation). It is freed only after it
 * was erased from the xarray under that lock and a grace period passed.
 */
struct ddp_mr {
	struct ddp_mem	mem;
	u32		stag;
	u32		owner;
	u64		base_to;
	u32		access;
	bool		valid;
	struct list_head dead;
};

/**
 * struct ddp_pd - protection domain
 * @id: PD ID
 * @mrs: tagged buffers by STag index
 * @stag_ctr: counter whose keyed permutation gives the next STag index
 *	(under the xarray lock)
 * @stag_key: the PD's secret key of that permutation
 * @ref: the PD's own reference plus one per stream
 */
struct ddp_pd {
	u32		id;
	struct xarray	mrs;
	u32		stag_ctr;
	siphash_key_t	stag_key;
	refcount_t	ref;
};

/**
 * struct ddp_rbuf - a posted untagged buffer
 * @list: in its queue, or on the stream's done list
 * @mem: its memory
 * @cookie: the ULP's cookie
 * @placed: payload octets placed so far
 * @msg_len: message length, known from its last segment
 * @last: the last segment was placed
 * @rsvdulp: the RsvdULP bits of the last segment
 */
struct ddp_rbuf {
	struct list_head list;
	struct ddp_mem	mem;
	u64		cookie;
	u64		placed;
	u64		msg_len;
	bool		last;
	u8		rsvdulp[DDP_RSVDULP_U_LEN];
};

/**
 * struct ddp_queue - an untagged queue
 * @bufs: posted buffers; the first one is for MSN @head_msn
 * @nposted: their number
 * @head_msn: MSN of the oldest message not yet delivered
 * @tx_msn: MSN of the next message sent on this queue
 */
struct ddp_queue {
	struct list_head bufs;
	u32		nposted;
	u32		head_msn;
	u32		tx_msn;
};

/**
 * struct ddp_stream - one DDP stream over one MPA connection
 * @pd: its protection domain
 * @id: stream ID
 * @sock: the MPA socket (a reference on its file)
 * @conn: the MPA connection
 * @ops: the ULP's callbacks
 * @priv: the ULP's cookie
 * @nqueues: untagged queues
 * @q: the queues
 * @lock: protects @q lists, @done and the event ring against the
 *	receive path
 * @tx_lock: one message at a time
 * @done: completed or flushed buffers to free in process context
 * @nposted: buffers posted on all queues
 * @hdr: header octets of the segment being received
 * @hdr_have: how many
 * @seg: the segment being received, once its header is complete
 * @seg_err: its error, if @seg_bad
 * @seg_bad: the segment failed a check: place nothing of it
 * @seg_buf: untagged: the buffer it goes to
 * @t_first_to: tagged: TO of the first segment of the current message
 * @t_len: tagged: octets of the current message so far
 * @rx_next: offset in the current segment where the next run from MPA
 *	must start
 * @stopped: an error was reported; later segments are dropped
 * @dv: DDP version of the stream: 1, or 0 after an MPA revision 0
 *	(RDMAC) startup (RFC 5044 Appendix C)
 * @shut: the ULP closed its sending half (RFC 5041 6.2.1): sends fail,
 *	receiving goes on
 * @ev: event ring (user-space streams)
 * @ev_head: next event to read
 * @ev_tail: next free slot
 * @ev_lost: events that did not fit
 * @wq: readers and pollers of the ring
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
	spinlock_t		lock;		/* queues, done, events */
	struct mutex		tx_lock;	/* one message at a time */
	struct list_head	done;
	u32			nposted;

	u8			hdr[DDP_UNTAGGED_HDR_LEN];
	u32			hdr_have;
	struct ddp_seg		seg;
	struct ddp_err		seg_err;
	bool			seg_bad;
	struct ddp_rbuf		*seg_buf;
	u64			t_first_to;
	u64			t_len;
	u32			rx_next;
	bool			stopped;
	u8			dv;
	bool			shut;

	struct ddp_event	*ev;
	u32			ev_head;
	u32			ev_tail;
	u64			ev_lost;
	wait_queue_head_t	wq;
};

/* ---- memory ---- */

static void ddp_mem_release(struct ddp_mem *m, bool dirty)
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
static int ddp_mem_pin(struct ddp_mem *m, u64 addr, u64 len, bool write)
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
static int ddp_mem_pages(struct ddp_mem *m, struct page **pages, u32 npages,
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
static void ddp_mem_write(const struct ddp_mem *m, u64 off, const u8 *src, u32 len)
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

/* A user's PD (/dev/ddp) is charged to the user's memory cgroup. */
static struct ddp_pd *__ddp_pd_alloc(gfp_t gfp)
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
	xa_init(&pd->mrs);
	get_random_bytes(&pd->stag_key, sizeof(pd->stag_key));
	pd->stag_ctr = get_random_u32() & DDP_STAG_INDEX_MAX;
	refcount_set(&pd->ref, 1);
	return pd;
}

/**
 * ddp_pd_alloc() - a new protection domain
 *
 * Return: the PD, or an ERR_PTR.
 */
struct ddp_pd *ddp_pd_alloc(void)
{
	return __ddp_pd_alloc(GFP_KERNEL);
}
EXPORT_SYMBOL_GPL(ddp_pd_alloc);

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
	xa_for_each(&pd->mrs, idx, mr)
		ddp_mr_free(mr);
	xa_destroy(&pd->mrs);
	ida_free(&ddp_ids, pd->id);
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

/**
 * ddp_reg_pages() - register kernel pages as a tagged buffer
 * @pd: the PD
 * @owner: the only stream that may use it, or NULL for every stream of @pd
 * @pages: the pages; they must stay until ddp_invalidate() returns
 * @npages: their number
 * @first: offset of the first octet in @pages[0]
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
	struct ddp_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!mr)
		return -ENOMEM;
	ret = ddp_mem_pages(&mr->mem, pages, npages, first, len);
	if (ret)
		goto err;
	mr->owner = owner ? owner->id : pd->id;
	mr->base_to = base_to;
	mr->access = access;
	ret = ddp_mr_insert(pd, mr, stag);
	if (!ret)
		return 0;
	ddp_mem_release(&mr->mem, false);
err:
	kfree(mr);
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
		return -ENOENT;
	}
	WRITE_ONCE(mr->valid, false);
	__xa_erase(&pd->mrs, stag >> 8);
	xa_unlock(&pd->mrs);
	/* placement looks buffers up under rcu_read_lock() */
	synchronize_rcu();
	ddp_mr_free(mr);
	return 0;
}
EXPORT_SYMBOL_GPL(ddp_invalidate);

/* Under rcu_read_lock(). */
static struct ddp_mr *ddp_mr_lookup(struct ddp_pd *pd, u32 stag)
{
	struct ddp_mr *mr = xa_load(&pd->mrs, stag >> 8);

	if (!mr || mr->stag != stag || !READ_ONCE(mr->valid))
		return NULL;
	return mr;
}

/* ---- events ---- */

static void ddp_event(struct ddp_stream *s, const struct ddp_event *ev)
{
	s->ops->event(s, ev);
}

static void ddp_error(struct ddp_stream *s, u8 type, u8 code, u32 seg_len)
{
	struct ddp_event ev = {
		.type = DDP_EV_ERROR,
		.err_type = type,
		.err_code = code,
		.len = seg_len,
	};

	if (s->stopped)
		return;
	s->stopped = true;
	if (type != DDP_ETYPE_LLP) {
		ev.hdr_len = min_t(u32, s->hdr_have, sizeof(s->hdr));
		memcpy(ev.hdr, s->hdr, ev.hdr_len);
		ev.qn = s->seg.qn;
		ev.msn = s->seg.msn;
		ev.stag = s->seg.stag;
		ev.to = s->seg.to;
	}
	ddp_event(s, &ev);
}

/* Deliver, in MSN order, the untagged messages that are complete. */
static void ddp_deliver(struct ddp_stream *s, u32 qn)
{
	struct ddp_queue *q = &s->q[qn];
	struct ddp_event ev = { .type = DDP_EV_RECV, .qn = qn };
	struct ddp_rbuf *b;

	for (;;) {
		spin_lock_bh(&s->lock);
		b = list_first_entry_or_null(&q->bufs, struct ddp_rbuf, list);
		if (!b || !b->last || b->placed < b->msg_len) {
			spin_unlock_bh(&s->lock);
			return;
		}
		/*
		 * Read the buffer before it goes to the done list: once the
		 * lock is dropped, a reader may free it (ddp_free_done()).
		 */
		ev.len = b->msg_len;
		ev.cookie = b->cookie;
		memcpy(ev.rsvdulp, b->rsvdulp, sizeof(b->rsvdulp));
		list_move_tail(&b->list, &s->done);
		q->nposted--;
		s->nposted--;
		ev.msn = q->head_msn;
		q->head_msn = ddp_msn_next(q->head_msn);
		spin_unlock_bh(&s->lock);
		ddp_event(s, &ev);
	}
}

/* ---- receive: MPA consumer callbacks ---- */

static struct ddp_rbuf *ddp_rbuf_for(struct ddp_queue *q, u32 msn)
{
	u32 i = msn - q->head_msn;
	struct ddp_rbuf *b;

	list_for_each_entry(b, &q->bufs, list)
		if (!i--)
			return b;
	return NULL;
}

/* The segment header is complete: parse and check it before placing. */
static void ddp_seg_start(struct ddp_stream *s, u32 seg_len)
{
	struct ddp_seg *seg = &s->seg;
	struct ddp_region_view view;
	struct ddp_uq_view qv = {};
	struct ddp_mr *mr;
	u32 owner = 0;
	int ret;

	/* hdr holds the header; the payload length comes from MPA */
	ret = ddp_hdr_parse_dv(s->hdr, seg_len, s->dv, seg, &s->seg_err);
	if (ret)
		goto bad;
	if (seg->tagged) {
		rcu_read_lock();
		mr = ddp_mr_lookup(s->pd, seg->stag);
		if (mr) {
			view = (struct ddp_region_view){
				.valid = true,
				.stream_or_pd = mr->owner,
				.base_to = mr->base_to,
				.len = mr->mem.len,
				.access = mr->access & DDP_ACCESS_REMOTE_WRITE ?
					  DDP_VIEW_WRITE : 0,
			};
			owner = mr->owner == s->pd->id ? s->pd->id : s->id;
		}
		rcu_read_unlock();
		ret = ddp_check_tagged(seg, mr ? &view : NULL, owner, &s->seg_err);
		if (ret)
			goto bad;
		return;
	}
	if (seg->qn < s->nqueues) {
		struct ddp_queue *q = &s->q[seg->qn];

		spin_lock_bh(&s->lock);
		qv.exists = true;
		qv.expected_msn = q->head_msn;
		qv.nbuf_posted = q->nposted;
		s->seg_buf = ddp_msn_in_window(seg->msn, q->head_msn, q->nposted) ?
			     ddp_rbuf_for(q, seg->msn) : NULL;
		qv.buf_len = s->seg_buf ? min_t(u64, s->seg_buf->mem.len, U32_MAX) : 0;
		spin_unlock_bh(&s->lock);
	}
	ret = ddp_check_untagged(seg, qv.exists ? &qv : NULL, &s->seg_err);
	if (ret)
		goto bad;
	return;
bad:
	s->seg_bad = true;
	s->seg_buf = NULL;
}

static void ddp_place_payload(struct ddp_stream *s, u32 poff, const u8 *data, u32 len)
{
	struct ddp_seg *seg = &s->seg;
	struct ddp_mr *mr;

	if (!seg->tagged) {
		ddp_mem_write(&s->seg_buf->mem, (u64)seg->mo + poff, data, len);
		return;
	}
	rcu_read_lock();
	mr = ddp_mr_lookup(s->pd, seg->stag);
	if (mr)
		ddp_mem_write(&mr->mem, seg->to - mr->base_to + poff, data, len);
	rcu_read_unlock();
	if (!mr) {
		/* invalidated while the segment was arriving */
		s->seg_bad = true;
		s->seg_err.type = DDP_ETYPE_TAGGED;
		s->seg_err.code = DDP_ECODE_T_INVALID_STAG;
	}
}

static u32 ddp_hdr_len(u8 ctrl)
{
	return ctrl & DDP_FLAG_T ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

static void ddp_place(struct mpa_conn *conn, u32 seg_len, u32 off,
		      const void *data, u32 len)
{
	struct ddp_stream *s = mpa_conn_priv(conn);
	const u8 *p = data;
	u32 hlen, n;

	if (s->stopped)
		return;
	if (!off) {
		s->hdr_have = 0;
		s->seg_bad = false;
		s->seg_buf = NULL;
		s->rx_next = 0;
	}
	/*
	 * MPA hands over each segment in order from offset 0. Should a run
	 * ever start elsewhere or reach past the segment, nothing of it is
	 * placed: the header or the buffer it would go to is not known.
	 */
	if (!ddp_run_in_order(s->rx_next, seg_len, off, len)) {
		s->seg_bad = true;
		s->seg_buf = NULL;
		ddp_error(s, DDP_ETYPE_CATASTROPHIC, DDP_ECODE_CATASTROPHIC, seg_len);
		return;
	}
	s->rx_next = off + len;
	if (s->seg_bad || !len)
		return;
	hlen = ddp_hdr_len(s->hdr_have ? s->hdr[0] : p[0]);
	if (off < hlen) {
		n = min(len, hlen - off);
		memcpy(s->hdr + off, p, n);
		s->hdr_have = off + n;
		p += n;
		len -= n;
		off += n;
		if (s->hdr_have < hlen)
			return;
		ddp_seg_start(s, seg_len);
		if (s->seg_bad || !len)
			return;
	}
	ddp_place_payload(s, off - hlen, p, len);
}

static void ddp_ulpdu(struct mpa_conn *conn, const void *data, u32 len)
{
	struct ddp_stream *s = mpa_conn_priv(conn);
	struct ddp_seg *seg = &s->seg;
	struct ddp_event ev = {};
	u32 hlen;

	if (s->stopped)
		return;
	/* an empty ULPDU got no place() call */
	if (!len)
		s->hdr_have = 0;
	hlen = s->hdr_have ? ddp_hdr_len(s->hdr[0]) : DDP_UNTAGGED_HDR_LEN;
	if (!len || (!s->seg_bad && s->hdr_have < hlen)) {
		/* shorter than its header: ddp_hdr_parse() names the error */
		ddp_hdr_parse_dv(s->hdr, s->hdr_have, s->dv, seg, &s->seg_err);
		s->seg_bad = true;
	}
	if (s->seg_bad) {
		ddp_error(s, s->seg_err.type, s->seg_err.code, len);
		return;
	}
	if (seg->tagged) {
		if (!s->t_len)
			s->t_first_to = seg->to;
		s->t_len += seg->payload_len;
		if (!seg->last)
			return;
		ev.type = DDP_EV_TAGGED;
		ev.stag = seg->stag;
		ev.to = s->t_first_to;
		ev.len = s->t_len;
		ev.rsvdulp[0] = seg->rsvdulp_t;
		s->t_len = 0;
		ddp_event(s, &ev);
		return;
	}
	spin_lock_bh(&s->lock);
	s->seg_buf->placed += seg->payload_len;
	if (seg->last) {
		s->seg_buf->last = true;
		s->seg_buf->msg_len = (u64)seg->mo + seg->payload_len;
		memcpy(s->seg_buf->rsvdulp, seg->rsvdulp_u, sizeof(seg->rsvdulp_u));
	}
	spin_unlock_bh(&s->lock);
	ddp_deliver(s, seg->qn);
}

static void ddp_mpa_error(struct mpa_conn *conn, u32 code)
{
	struct ddp_stream *s = mpa_conn_priv(conn);

	/* LLP fatal error, with the MPA error code */
	ddp_error(s, DDP_ETYPE_LLP, code, 0);
}

static void ddp_peer_closed(struct mpa_conn *conn)
{
	struct ddp_stream *s = mpa_conn_priv(conn);
	struct ddp_event ev = { .type = DDP_EV_PEER_CLOSED };

	if (!s->stopped)
		ddp_event(s, &ev);
}

/* DDP version 0 goes with MPA revision 0 (RFC 5044 Appendix C). */
static void ddp_set_version(struct ddp_stream *s, struct mpa_conn *conn)
{
	struct mpa_info info;

	mpa_conn_info(conn, &info);
	s->dv = info.state != MPA_S_IDLE && info.rev == 0 ? 0 : DDP_VERSION;
}

/* Startup stays with whoever started MPA on the socket. */
static void ddp_request(struct mpa_conn *conn, const void *pd, u16 pd_len)
{
	ddp_set_version(mpa_conn_priv(conn), conn);
}

static void ddp_reply(struct mpa_conn *conn, bool rejected, const void *pd,
		      u16 pd_len)
{
	ddp_set_version(mpa_conn_priv(conn), conn);
}

static struct mpa_consumer ddp_consumer = {
	.name		= "ddp",
	.owner		= THIS_MODULE,
	.request	= ddp_request,
	.reply		= ddp_reply,
	.place		= ddp_place,
	.ulpdu		= ddp_ulpdu,
	.error		= ddp_mpa_error,
	.peer_closed	= ddp_peer_closed,
};

/* ---- streams ---- */

static void ddp_free_done(struct ddp_stream *s)
{
	struct ddp_rbuf *b, *tmp;
	LIST_HEAD(list);

	spin_lock_bh(&s->lock);
	list_splice_init(&s->done, &list);
	spin_unlock_bh(&s->lock);
	list_for_each_entry_safe(b, tmp, &list, list) {
		ddp_mem_release(&b->mem, true);
		kfree(b);
	}
}

/*
 * With @ev, the event ring of a user-space stream: it must be in place
 * before mpa_bind(), which may deliver at once.
 */
static struct ddp_stream *__ddp_stream_bind(struct ddp_pd *pd, struct socket *sock,
					    u32 nqueues,
					    const struct ddp_stream_ops *ops,
					    void *priv, struct ddp_event *ev)
{
	struct ddp_stream *s;
	struct mpa_conn *conn;
	int i, id;

	if (!nqueues || nqueues > DDP_MAX_QUEUES)
		return ERR_PTR(-EINVAL);
	if (sock->type != SOCK_STREAM || sock->sk->sk_protocol != IPPROTO_TCP)
		return ERR_PTR(-EPROTOTYPE);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc_min(&ddp_ids, 1, GFP_KERNEL);
	if (id < 0) {
		kfree(s);
		return ERR_PTR(id);
	}
	s->id = id;
	s->pd = pd;
	s->sock = sock;
	s->ops = ops;
	s->priv = priv;
	s->ev = ev;
	s->dv = DDP_VERSION;
	s->nqueues = nqueues;
	for (i = 0; i < nqueues; i++) {
		INIT_LIST_HEAD(&s->q[i].bufs);
		/* the first message of each queue has MSN 1 */
		s->q[i].head_msn = 1;
		s->q[i].tx_msn = 1;
	}
	spin_lock_init(&s->lock);
	mutex_init(&s->tx_lock);
	INIT_LIST_HEAD(&s->done);
	init_waitqueue_head(&s->wq);
	refcount_inc(&pd->ref);

	conn = mpa_bind(sock, "ddp", s);
	if (IS_ERR(conn)) {
		ddp_pd_put(pd);
		ida_free(&ddp_ids, s->id);
		kfree(s);
		return ERR_CAST(conn);
	}
	s->conn = conn;
	ddp_set_version(s, conn);
	return s;
}

/**
 * ddp_stream_bind() - make an MPA connection a DDP stream
 * @pd: the stream's protection domain
 * @sock: a TCP socket; MPA may be started already (by user space or a
 *	kernel ULP) or later, and ULPDUs received before the bind go to DDP
 * @nqueues: untagged queues, 1..DDP_MAX_QUEUES
 * @ops: the ULP's callbacks
 * @priv: the ULP's cookie, see ddp_stream_priv()
 *
 * The stream holds a reference on @pd.
 * Return: the stream, or an ERR_PTR.
 */
struct ddp_stream *ddp_stream_bind(struct ddp_pd *pd, struct socket *sock,
				   u32 nqueues, const struct ddp_stream_ops *ops,
				   void *priv)
{
	return __ddp_stream_bind(pd, sock, nqueues, ops, priv, NULL);
}
EXPORT_SYMBOL_GPL(ddp_stream_bind);

/**
 * ddp_stream_priv() - the cookie given to ddp_stream_bind()
 * @s: the stream
 *
 * Return: the cookie.
 */
void *ddp_stream_priv(struct ddp_stream *s)
{
	return s->priv;
}
EXPORT_SYMBOL_GPL(ddp_stream_priv);

/* Return every posted buffer with DDP_EV_FLUSH. */
static void ddp_flush(struct ddp_stream *s)
{
	struct ddp_event ev = { .type = DDP_EV_FLUSH };
	struct ddp_rbuf *b;
	u32 qn;

	for (qn = 0; qn < s->nqueues; qn++) {
		for (;;) {
			spin_lock_bh(&s->lock);
			b = list_first_entry_or_null(&s->q[qn].bufs,
						     struct ddp_rbuf, list);
			if (b) {
				ev.cookie = b->cookie;
				list_move_tail(&b->list, &s->done);
				s->q[qn].nposted--;
				s->nposted--;
			}
			spin_unlock_bh(&s->lock);
			if (!b)
				break;
			ev.qn = qn;
			ddp_event(s, &ev);
		}
	}
}

/*
 * Invalidate the tagged buffers bound to this stream only. The walk runs
 * under the xarray lock, which ddp_invalidate() takes too: every buffer
 * it sees is still in the xarray, hence not freed, while its owner is
 * read. The buffers are freed after one grace period for all of them.
 */
static void ddp_invalidate_owned(struct ddp_stream *s)
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
	xa_unlock(mrs);
	if (list_empty(&dead))
		return;
	/* placement looks buffers up under rcu_read_lock() */
	synchronize_rcu();
	list_for_each_entry_safe(mr, tmp, &dead, dead)
		ddp_mr_free(mr);
}

/**
 * ddp_stream_release() - tear a stream down
 * @s: the stream
 * @abortive: reset the connection instead of a graceful close
 *
 * No callback runs after this starts to return buffers: posted buffers
 * come back as DDP_EV_FLUSH events, buffers bound to the stream are
 * invalidated. The socket itself stays with its owner, who closes it;
 * an abortive release resets it first.
 */
void ddp_stream_release(struct ddp_stream *s, bool abortive)
{
	mutex_lock(&s->tx_lock);
	mpa_unbind(s->conn);
	if (abortive)
		tcp_abort(s->sock->sk, ECONNABORTED);
	mutex_unlock(&s->tx_lock);
	ddp_flush(s);
	ddp_invalidate_owned(s);
	ddp_free_done(s);
	ddp_pd_put(s->pd);
	ida_free(&ddp_ids, s->id);
	kvfree(s->ev);
	kfree(s);
}
EXPORT_SYMBOL_GPL(ddp_stream_release);

static int ddp_post(struct ddp_stream *s, u32 qn, struct ddp_rbuf *b)
{
	int ret = 0;

	if (qn >= s->nqueues)
		return -EINVAL;
	spin_lock_bh(&s->lock);
	if (s->nposted >= DDP_MAX_POSTED) {
		ret = -ENOBUFS;
	} else {
		list_add_tail(&b->list, &s->q[qn].bufs);
		s->q[qn].nposted++;
		s->nposted++;
	}
	spin_unlock_bh(&s->lock);
	return ret;
}

/**
 * ddp_post_recv_pages() - post kernel pages as an untagged buffer
 * @s: the stream
 * @qn: queue number
 * @pages: the pages; they must stay until the buffer comes back
 * @npages: their number
 * @first: offset of the first octet in @pages[0]
 * @len: length in octets
 * @cookie: returned in the DDP_EV_RECV or DDP_EV_FLUSH event
 *
 * Return: 0, -EINVAL for a bad queue or length, -ENOBUFS when too many
 * buffers are posted.
 */
int ddp_post_recv_pages(struct ddp_stream *s, u32 qn, struct page **pages,
			u32 npages, u32 first, u64 len, u64 cookie)
{
	struct ddp_rbuf *b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!b)
		return -ENOMEM;
	ret = ddp_mem_pages(&b->mem, pages, npages, first, len);
	if (!ret) {
		b->cookie = cookie;
		ret = ddp_post(s, qn, b);
		if (!ret)
			return 0;
		ddp_mem_release(&b->mem, false);
	}
	kfree(b);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_post_recv_pages);

/**
 * ddp_send_msg() - send one DDP message, cut into segments of at most MULPDU
 * @s: the stream
 * @desc: tagged (STag, TO) or untagged (QN), and the RsvdULP bits;
 *	@desc->addr is ignored
 * @data: the message, @desc->len octets
 *
 * Untagged messages get the queue's next MSN. A tagged header has one
 * RsvdULP octet: @desc->rsvdulp[1..4] must be 0.
 * Return: 0, or a negative errno (-EINVAL for bad flags, QN or RsvdULP,
 * -ENOTCONN before full operation).
 */
int ddp_send_msg(struct ddp_stream *s, const struct ddp_send *desc,
		 struct iov_iter *data)
{
	bool tagged = desc->flags & DDP_SEND_TAGGED;
	union {
		struct ddp_tagged_hdr t;
		struct ddp_untagged_hdr u;
	} h;
	struct ddp_segmenter it;
	u32 off, len, hlen, msn = 0;
	struct ddp_queue *q = NULL;
	int ret, retries = 0;
	bool last;

	if (desc->flags & ~DDP_SEND_TAGGED)
		return -EINVAL;
	if (!tagged && desc->qn >= s->nqueues)
		return -EINVAL;
	/* a tagged header has one RsvdULP octet (RFC 5041 section 4.3) */
	if (tagged && memchr_inv(desc->rsvdulp + 1, 0, sizeof(desc->rsvdulp) - 1))
		return -EINVAL;
	hlen = tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;

	mutex_lock(&s->tx_lock);
	ret = -EPIPE;
	if (s->shut)
		goto out;
	ret = ddp_seg_init(&it, desc->len,
			   ddp_seg_payload_max(mpa_conn_mulpdu(s->conn), tagged));
	if (ret) {
		ret = ret == -EINVAL ? -ENOTCONN : ret;
		goto out;
	}
	if (!tagged) {
		q = &s->q[desc->qn];
		msn = q->tx_msn;
	}
	for (;;) {
		/* the MULPDU follows the path MTU: take it for each segment */
		ddp_seg_resize(&it, ddp_seg_payload_max(mpa_conn_mulpdu(s->conn), tagged));
		if (!ddp_seg_next(&it, &off, &len, &last))
			break;
		if (tagged)
			ddp_tagged_hdr_build(&h.t, last, desc->rsvdulp[0], desc->stag,
					     desc->to + off);
		else
			ddp_untagged_hdr_build(&h.u, last, desc->rsvdulp, desc->qn,
					       msn, off);
		/* both headers start with the control octet */
		h.t.ctrl = (h.t.ctrl & ~DDP_DV_MASK) | s->dv;
		ret = mpa_sendv(s->conn, &h, hlen, data, len, 0);
		/* the MTU shrank since the MULPDU was read: cut it again */
		if (ret == -EMSGSIZE && ++retries < DDP_SEND_RETRIES) {
			ddp_seg_unget(&it, len);
			continue;
		}
		if (ret < 0)
			goto out;
		retries = 0;
	}
	if (q)
		q->tx_msn = ddp_msn_next(msn);
	ret = 0;
out:
	mutex_unlock(&s->tx_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(ddp_send_msg);

/* ---- user space: /dev/ddp and stream files ---- */

/*
 * The last slot of the ring is kept for the error that stops a stream
 * whose reader does not keep up: a local catastrophic error (0x0/0x00).
 */
static void ddp_user_event(struct ddp_stream *s, const struct ddp_event *ev)
{
	struct ddp_event full = {
		.type = DDP_EV_ERROR,
		.err_type = DDP_ETYPE_CATASTROPHIC,
		.err_code = DDP_ECODE_CATASTROPHIC,
	};

	spin_lock_bh(&s->lock);
	if (s->ev_tail - s->ev_head < DDP_EVQ_LEN - 1) {
		s->ev[s->ev_tail++ % DDP_EVQ_LEN] = *ev;
	} else if (!s->ev_lost++) {
		s->ev[s->ev_tail++ % DDP_EVQ_LEN] = full;
		s->stopped = true;
	}
	spin_unlock_bh(&s->lock);
	wake_up_interruptible(&s->wq);
}

static const struct ddp_stream_ops ddp_user_ops = {
	.event = ddp_user_event,
};

static int ddp_stream_file_release(struct inode *inode, struct file *file)
{
	struct ddp_stream *s = file->private_data;
	struct socket *sock = s->sock;

	ddp_stream_release(s, false);
	sockfd_put(sock);
	return 0;
}

static bool ddp_ev_ready(struct ddp_stream *s)
{
	return READ_ONCE(s->ev_tail) != READ_ONCE(s->ev_head);
}

static ssize_t ddp_stream_read(struct file *file, char __user *buf, size_t len,
			       loff_t *ppos)
{
	struct ddp_stream *s = file->private_data;
	struct ddp_event ev;
	size_t done = 0;
	int ret;

	if (len < sizeof(ev))
		return -EINVAL;
	ddp_free_done(s);
	while (done + sizeof(ev) <= len) {
		spin_lock_bh(&s->lock);
		if (s->ev_tail == s->ev_head) {
			spin_unlock_bh(&s->lock);
			if (done)
				break;
			if (file->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = wait_event_interruptible(s->wq, ddp_ev_ready(s));
			if (ret)
				return ret;
			continue;
		}
		ev = s->ev[s->ev_head++ % DDP_EVQ_LEN];
		spin_unlock_bh(&s->lock);
		if (copy_to_user(buf + done, &ev, sizeof(ev)))
			return done ? done : -EFAULT;
		done += sizeof(ev);
	}
	return done;
}

static __poll_t ddp_stream_poll(struct file *file, poll_table *wait)
{
	struct ddp_stream *s = file->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(file, &s->wq, wait);
	if (ddp_ev_ready(s))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

static long ddp_ioc_post_recv(struct ddp_stream *s, void __user *arg)
{
	struct ddp_post_recv pr;
	struct ddp_rbuf *b;
	int ret;

	if (copy_from_user(&pr, arg, sizeof(pr)))
		return -EFAULT;
	if (pr.pad || pr.qn >= s->nqueues)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	ret = ddp_mem_pin(&b->mem, pr.addr, pr.len, true);
	if (!ret) {
		b->cookie = pr.cookie;
		ret = ddp_post(s, pr.qn, b);
		if (!ret)
			return 0;
		ddp_mem_release(&b->mem, false);
	}
	kfree(b);
	return ret;
}

static long ddp_ioc_send(struct ddp_stream *s, void __user *arg)
{
	struct ddp_send sd;
	struct iov_iter it;
	struct iovec iov;
	int ret;

	if (copy_from_user(&sd, arg, sizeof(sd)))
		return -EFAULT;
	if (sd.pad0 || memchr_inv(sd.pad, 0, sizeof(sd.pad)))
		return -EINVAL;
	if (sd.len > DDP_MAX_MSG_LEN - 1)
		return -EMSGSIZE;
	ret = iwarp_import_ubuf(ITER_SOURCE, u64_to_user_ptr(sd.addr), sd.len,
				&iov, &it);
	if (ret)
		return ret;
	if (iov_iter_count(&it) != sd.len)
		return -EMSGSIZE;
	return ddp_send_msg(s, &sd, &it);
}

static long ddp_stream_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ddp_stream *s = file->private_data;
	void __user *uarg = (void __user *)arg;

	ddp_free_done(s);
	switch (cmd) {
	case DDP_IOC_POST_RECV:
		return ddp_ioc_post_recv(s, uarg);
	case DDP_IOC_SEND:
		return ddp_ioc_send(s, uarg);
	case DDP_IOC_SHUTDOWN:
		mutex_lock(&s->tx_lock);
		s->shut = true;
		mutex_unlock(&s->tx_lock);
		return kernel_sock_shutdown(s->sock, SHUT_WR);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations ddp_stream_fops = {
	.owner		= THIS_MODULE,
	.release	= ddp_stream_file_release,
	.read		= ddp_stream_read,
	.poll		= ddp_stream_poll,
	.unlocked_ioctl	= ddp_stream_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static long ddp_ioc_bind(struct ddp_pd *pd, void __user *arg)
{
	struct ddp_stream *s;
	struct socket *sock;
	struct ddp_bind b;
	struct ddp_event *ev;
	struct file *f;
	int fd, ret;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.flags)
		return -EINVAL;
	sock = sockfd_lookup(b.sock_fd, &ret);
	if (!sock)
		return ret;
	/* 72 KiB: kmalloc would take an order-5 (128 KiB) block */
	ev = __vmalloc(array_size(DDP_EVQ_LEN, sizeof(*ev)),
		       GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	ret = -ENOMEM;
	if (!ev)
		goto err_sock;
	fd = get_unused_fd_flags(O_CLOEXEC);
	ret = fd;
	if (fd < 0)
		goto err_ev;
	s = __ddp_stream_bind(pd, sock, b.nqueues ? b.nqueues : DDP_DEFAULT_QUEUES,
			      &ddp_user_ops, NULL, ev);
	ret = PTR_ERR_OR_ZERO(s);
	if (ret)
		goto err_fd;
	f = anon_inode_getfile("[ddp-stream]", &ddp_stream_fops, s, O_RDWR);
	if (IS_ERR(f)) {
		ret = PTR_ERR(f);
		ddp_stream_release(s, false);
		goto err_sock_fd;
	}
	b.stream_fd = fd;
	if (copy_to_user(arg, &b, sizeof(b))) {
		/* releasing the file releases the stream and the socket */
		fput(f);
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, f);
	return 0;

err_fd:
	put_unused_fd(fd);
err_ev:
	kvfree(ev);
err_sock:
	sockfd_put(sock);
	return ret;
err_sock_fd:
	put_unused_fd(fd);
	sockfd_put(sock);
	return ret;
}

static long ddp_ioc_reg_mr(struct ddp_pd *pd, void __user *arg)
{
	struct ddp_stream *owner = NULL;
	struct ddp_reg_mr r;
	struct ddp_mr *mr;
	struct fd f = {};
	int ret;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (r.pad || (r.access & ~(DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ)))
		return -EINVAL;
	if (r.stream_fd >= 0) {
		f = fdget(r.stream_fd);
		if (!iwarp_fd_file(f) || iwarp_fd_file(f)->f_op != &ddp_stream_fops) {
			fdput(f);
			return -EBADF;
		}
		owner = iwarp_fd_file(f)->private_data;
		if (owner->pd != pd) {
			fdput(f);
			return -EINVAL;
		}
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!mr)
		goto out;
	/* only remote write needs the pages writable */
	ret = ddp_mem_pin(&mr->mem, r.addr, r.len,
			  r.access & DDP_ACCESS_REMOTE_WRITE);
	if (ret) {
		kfree(mr);
		goto out;
	}
	mr->owner = owner ? owner->id : pd->id;
	mr->base_to = r.base_to;
	mr->access = r.access;
	ret = ddp_mr_insert(pd, mr, &r.stag);
	if (ret) {
		ddp_mr_free(mr);
		goto out;
	}
	if (copy_to_user(arg, &r, sizeof(r))) {
		ddp_invalidate(pd, r.stag);
		ret = -EFAULT;
	}
out:
	fdput(f);
	return ret;
}

static long ddp_pd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ddp_pd *pd = file->private_data;
	void __user *uarg = (void __user *)arg;
	u32 stag;

	switch (cmd) {
	case DDP_IOC_BIND:
		return ddp_ioc_bind(pd, uarg);
	case DDP_IOC_REG_MR:
		return ddp_ioc_reg_mr(pd, uarg);
	case DDP_IOC_INVALIDATE:
		if (get_user(stag, (u32 __user *)uarg))
			return -EFAULT;
		return ddp_invalidate(pd, stag);
	default:
		return -ENOTTY;
	}
}

static int ddp_pd_open(struct inode *inode, struct file *file)
{
	struct ddp_pd *pd = __ddp_pd_alloc(GFP_KERNEL_ACCOUNT);

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	file->private_data = pd;
	return 0;
}

static int ddp_pd_release(struct inode *inode, struct file *file)
{
	ddp_pd_put(file->private_data);
	return 0;
}

static const struct file_operations ddp_pd_fops = {
	.owner		= THIS_MODULE,
	.open		= ddp_pd_open,
	.release	= ddp_pd_release,
	.unlocked_ioctl	= ddp_pd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice ddp_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "ddp",
	.fops	= &ddp_pd_fops,
	.mode	= 0666,
};

static int __init ddp_init(void)
{
	int ret = mpa_register_consumer(&ddp_consumer);

	if (ret)
		return ret;
	ret = misc_register(&ddp_misc);
	if (ret)
		mpa_unregister_consumer(&ddp_consumer);
	return ret;
}

static void __exit ddp_exit(void)
{
	misc_deregister(&ddp_misc);
	mpa_unregister_consumer(&ddp_consumer);
}

module_init(ddp_init);
module_exit(ddp_exit);

MODULE_DESCRIPTION("DDP (RFC 5041) over MPA");
MODULE_LICENSE("GPL");
