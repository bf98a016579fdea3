// SPDX-License-Identifier: GPL-2.0
/*
 * MPA transmit path (RFC 5044 sections 4 to 6): one ULPDU becomes one
 * FPDU, with markers and CRC as negotiated, handed to TCP by page
 * reference; the rest of an FPDU that TCP could not take goes out when
 * send space comes back, and a FIN never cuts an FPDU.
 */
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/tcp.h>
#include <net/iwarp_compat.h>

#include "mpa.h"

int mpa_send_raw(struct mpa_conn *c, const void *buf, u32 len, int flags)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = flags };

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 1, len);
	return tcp_sendmsg_locked(c->sk, &msg, len);
}

/* The FPDU is in TCP: drop our reference to its memory. */
void mpa_tx_release(struct mpa_conn *c)
{
	if (c->tx_page)
		put_page(c->tx_page);
	while (c->tx_nfrag)
		put_page(c->tx_frag[--c->tx_nfrag].bv_page);
	if (unlikely(c->tx_buf)) {
		kvfree(c->tx_buf);
		c->tx_buf = NULL;
	}
	c->tx_page = NULL;
	c->tx_frag_len = 0;
	c->tx_train_frags = 0;
	c->tx_train_left = 0;
	c->tx_pend_len = 0;
	c->tx_split = 0;
	c->tx_train = false;
	c->tx_begun = false;
}

/*
 * A shutdown(SHUT_WR) that came while part of an FPDU was still with
 * MPA: now that the FPDU is complete in TCP the FIN follows it, as
 * inet_shutdown() would have sent it.
 */
static void mpa_tx_fin(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	c->tx_fin = false;
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
	c->sk_proto->shutdown(sk, SEND_SHUTDOWN);
	sk->sk_state_change(sk);
}

/*
 * skb frags TCP needs for the train with @more octets added in its
 * current fragment: a train must fit in the frags of one skb, or TCP cuts
 * it where they run out, inside an FPDU (iwarp_tcp_frags()).
 */
static u32 mpa_train_frags(const struct mpa_conn *c, u32 more)
{
	return c->tx_train_frags +
	       iwarp_tcp_frags(c->tx_pend_off, c->tx_pend_len - c->tx_frag_len + more);
}

/*
 * Hand @len octets of what MPA holds to TCP by page reference: what is
 * left in a train's earlier page fragments and what follows in @tx_page
 * go in one call, so that TCP fills its skbs to the size goal (64 KiB
 * with GSO) before it pushes.
 */
static int mpa_tx_send_pages(struct mpa_conn *c, u32 len, int flags)
{
	/* the first n are filled below: not zeroed for each call */
	struct bio_vec bv[MPA_TRAIN_FRAGS] __uninitialized;
	unsigned int i, n = 0;
	u32 left = len;

	for (i = 0; i < c->tx_nfrag && left; i++) {
		if (!c->tx_frag[i].bv_len)
			continue;
		bv[n] = c->tx_frag[i];
		bv[n].bv_len = min(left, bv[n].bv_len);
		left -= bv[n++].bv_len;
	}
	if (left) {
		bv[n].bv_page = c->tx_page;
		bv[n].bv_offset = c->tx_pend_off;
		bv[n++].bv_len = left;
	}
	return iwarp_tcp_send_pages(c->sk, bv, n, len, flags);
}

/* @len octets of what MPA holds are in TCP */
static void mpa_tx_sent(struct mpa_conn *c, u32 len)
{
	unsigned int i;

	c->tx_pend_len -= len;
	c->tx_begun = true;
	for (i = 0; i < c->tx_nfrag && len; i++) {
		struct bio_vec *bv = &c->tx_frag[i];
		u32 n = min(len, bv->bv_len);

		bv->bv_offset += n;
		bv->bv_len -= n;
		c->tx_frag_len -= n;
		len -= n;
	}
	c->tx_pend_off += len;
}

/*
 * The MSS TCP cuts segments with. TCP brings it up to date itself: when
 * an ICMP "fragmentation needed" lowers the path MTU (tcp_v4_mtu_reduced(),
 * deferred to release_sock() while MPA holds the socket) and before
 * every send. SACK blocks in the header, present only while data arrives
 * out of order, shrink TCP's segments below it, and then GSO can cut an
 * FPDU (tcp_current_mss(), which counts them, is not exported).
 * tx_mss_test lowers it for the selftests.
 */
static u32 mpa_tx_mss(struct mpa_conn *c)
{
	u32 mss = tcp_sk(c->sk)->mss_cache;
	u32 test = READ_ONCE(mpa_tx_mss_test);

	return unlikely(test) ? min(mss, test) : mss;
}

/*
 * Send what is left of the current FPDU. tcp_sendmsg_locked() may sleep
 * and release the socket lock: @tx_busy keeps every other path (the
 * write-space worker, shutdown, close) from sending the same octets.
 * Senders are serialised by @tx_lock. Once the FPDU is complete in TCP,
 * a FIN that waited for it goes out.
 */
int mpa_tx_flush(struct mpa_conn *c, int flags)
{
	struct sock *sk = c->sk;
	struct sk_buff *skb;
	int ret;

	if (c->tx_busy)
		return -EAGAIN;
	if (!c->tx_pend_len)
		return 0;
	flags &= MSG_DONTWAIT | MSG_NOSIGNAL;
	/*
	 * A train joins TCP's last skb only if that has the frags for it,
	 * and, unless the train has begun there, only if that skb ends on a
	 * segment boundary: TCP sends up to the peer's window edge, inside
	 * an FPDU, and keeps the rest of that skb as a new one, which GSO
	 * would cut from there on. The train starts an skb of its own and
	 * its FPDUs start segments again.
	 */
	skb = tcp_write_queue_tail(sk);
	if (c->tx_train && skb &&
	    ((!c->tx_begun && skb->len % mpa_tx_mss(c)) ||
	     skb_shinfo(skb)->nr_frags + mpa_train_frags(c, 0) > MAX_SKB_FRAGS))
		TCP_SKB_CB(skb)->eor = 1;
	/* what is left after a partial send takes no more FPDUs */
	c->tx_train_left = 0;
	while (c->tx_pend_len) {
		u32 len = c->tx_pend_len;

		if (c->tx_split)
			len = min(len, c->tx_split);
		c->tx_busy = true;
		if (c->tx_page)
			ret = mpa_tx_send_pages(c, len, flags | (c->tx_more ? MSG_MORE : 0));
		else
			ret = mpa_send_raw(c, c->tx_buf + c->tx_pend_off, len,
					   MSG_EOR | flags);
		c->tx_busy = false;
		if (ret < 0)
			return ret;
		mpa_tx_sent(c, ret);
		if (c->tx_split) {
			c->tx_split -= min_t(u32, c->tx_split, ret);
			skb = tcp_write_queue_tail(sk);
			if (!c->tx_split && skb)
				TCP_SKB_CB(skb)->eor = 1;
		}
	}
	if (c->tx_train)
		mpa_mib_inc(c, MPA_MIB_TX_TRAINS);
	mpa_tx_release(c);
	if (c->tx_fin)
		mpa_tx_fin(c);
	return 0;
}

/*
 * Flush, waiting for send space at most *@timeo (process context, with
 * @tx_lock held so that no other flush sleeps meanwhile).
 */
int mpa_tx_flush_wait(struct mpa_conn *c, long *timeo)
{
	int ret;

	for (;;) {
		ret = mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (ret != -EAGAIN || c->tx_busy)
			return ret;
		ret = sk_stream_wait_memory(c->sk, timeo);
		if (ret)
			return ret;
	}
}

/*
 * close() without the time to wait: TCP takes the rest of the FPDU
 * beyond its send buffer limit (at most one FPDU, whose memory MPA holds
 * already) and sends it, then the FIN, as an orphan. TCP's memory limits
 * (tcp_mem, the memory cgroup) still apply: when they refuse, the rest
 * stays and the caller resets the connection.
 */
void mpa_tx_flush_force(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	struct tcp_sock *tp = tcp_sk(sk);
	u32 lowat = tp->notsent_lowat;
	int sndbuf = sk->sk_sndbuf;

	WRITE_ONCE(sk->sk_sndbuf, INT_MAX);
	WRITE_ONCE(tp->notsent_lowat, UINT_MAX);
	mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
	WRITE_ONCE(tp->notsent_lowat, lowat);
	WRITE_ONCE(sk->sk_sndbuf, min(sndbuf, READ_ONCE(sk->sk_sndbuf)));
}

void mpa_tx_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, tx_work);
	struct sock *sk = c->sk;

	mpa_lock_tx(c);
	/* the sender may be gone: no short skb waits for more */
	c->tx_more = false;
	if (!c->closing)
		mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
	mpa_unlock_tx(c);
	sock_put(sk);
}

u32 mpa_mulpdu_locked(const struct mpa_conn *c)
{
	return mpa_mulpdu(READ_ONCE(tcp_sk(c->sk)->mss_cache), c->markers_tx);
}

/*
 * Alignment (RFC 5044 section 5.1 and appendix A.1): TCP cuts an skb
 * into segments of @mss octets from its first one, here an FPDU's first
 * octet. An FPDU of @wire octets that follows @len octets of such an skb
 * lies within one segment if this holds.
 */
static inline bool mpa_seg_fits(u32 len, u32 wire, u32 mss)
{
	return len % mss + wire <= mss;
}

/*
 * The next FPDU, of @wire octets at @off in its page, may join the unsent
 * skb at the tail of the write queue only if it then lies within one
 * segment and the skb has the frags for it (or TCP cuts the skb where
 * they run out, inside the FPDU): FPDUs of exactly @mss octets form a
 * train that TSO or GSO cuts at FPDU boundaries, small FPDUs share a
 * segment while the previous one waits (Nagle, autocork, MSG_MORE).
 * Otherwise the tail skb is closed and the FPDU starts a new one.
 */
static void mpa_tx_place(struct sock *sk, u32 off, u32 wire, u32 mss)
{
	struct sk_buff *skb = tcp_write_queue_tail(sk);

	if (skb && !TCP_SKB_CB(skb)->eor &&
	    (!mpa_seg_fits(skb->len, wire, mss) ||
	     skb_shinfo(skb)->nr_frags + iwarp_tcp_frags(off, wire) > MAX_SKB_FRAGS))
		TCP_SKB_CB(skb)->eor = 1;
}

/*
 * A ULPDU made of a linear header and an iterator, copied into a page
 * (a page fragment or a compound page of MPA's) or, @in_page false, into
 * a buffer from kvmalloc().
 */
struct mpa_src {
	const u8	*hdr;
	u32		hdr_len;
	bool		in_page;
	struct iov_iter	*it;
};

static int mpa_copy_src(void *ctx, void *to, u32 len)
{
	struct mpa_src *src = ctx;
	u32 n = min(len, src->hdr_len);
	size_t copied;
	u8 *dst = to;

	if (n) {
		memcpy(dst, src->hdr, n);
		src->hdr += n;
		src->hdr_len -= n;
		dst += n;
		len -= n;
	}
	if (!len)
		return 0;
	if (!src->in_page)
		return copy_from_iter_full(dst, len, src->it) ? 0 : -EFAULT;
	/* into a page: no hardened-usercopy object lookup per FPDU */
	copied = copy_page_from_iter(virt_to_page(dst), offset_in_page(dst),
				     len, src->it);
	if (likely(copied == len))
		return 0;
	iov_iter_revert(src->it, copied);
	return -EFAULT;
}

/*
 * The FPDU of a ULPDU of @len octets from @src, @wire octets at @buf and
 * stream position @pos: without markers, the ULPDU is copied into place
 * and the FPDU sealed around it; with markers, encoded run by run.
 * Return the wire length or the copy's error.
 */
static int mpa_tx_fill(struct mpa_conn *c, struct mpa_src *src, u8 *buf,
		       u32 len, u32 wire, u32 pos)
{
	int ret;

	if (c->markers_tx)
		return mpa_fpdu_encode(buf, wire, pos, true, c->crc, len,
				       mpa_copy_src, src);
	ret = mpa_copy_src(src, buf + MPA_HDR_LEN, len);
	return ret ? ret : mpa_fpdu_seal(buf, len, c->crc);
}

/* MPA_START was called and the startup exchange is over */
static bool mpa_started(const struct mpa_conn *c)
{
	return c->state != MPA_S_IDLE && !mpa_in_startup(c);
}

/*
 * Rule 4 holds, or never will: the peer shut down its sending side
 * before its first FPDU.
 */
static bool mpa_may_send(const struct mpa_conn *c)
{
	return c->tx_allowed ||
	       (READ_ONCE(c->sk->sk_shutdown) & RCV_SHUTDOWN);
}

/*
 * The page fragment FPDUs are built in: MPA's own (tx_page_cache), or the
 * task's or socket's as TCP's sendmsg() uses; the socket's in the
 * receive path, where the task is whichever one softirq interrupted.
 */
static struct page_frag *mpa_tx_frag(struct mpa_conn *c)
{
	if (c->tx_own)
		return &c->tx_pfrag;
	return c->tx_rx ? &c->sk->sk_frag : sk_page_frag(c->sk);
}

/* the oldest page of the cache if TCP let go of it (ours alone), or NULL */
static struct page *mpa_tx_cache_get(struct mpa_conn *c)
{
	struct page *page;

	if (!c->tx_cache_n)
		return NULL;
	page = c->tx_cache[c->tx_cache_head];
	if (page_ref_count(page) != 1)
		return NULL;
	c->tx_cache_head = (c->tx_cache_head + 1) % c->tx_cache_max;
	c->tx_cache_n--;
	return page;
}

/* MPA lets go of one of its pages: TCP frees it when done with it */
static void mpa_tx_page_release(struct mpa_conn *c, struct page *page)
{
	put_page(page);
	mpa_mib_inc(c, MPA_MIB_TX_PAGES_RELEASED);
}

/*
 * A full page that TCP still holds goes to the back of the cache; when
 * the cache is full, the oldest page is left to TCP.
 */
static void mpa_tx_cache_put(struct mpa_conn *c, struct page *page)
{
	if (c->tx_cache_n == c->tx_cache_max) {
		mpa_tx_page_release(c, c->tx_cache[c->tx_cache_head]);
		c->tx_cache_head = (c->tx_cache_head + 1) % c->tx_cache_max;
		c->tx_cache_n--;
	}
	c->tx_cache[(c->tx_cache_head + c->tx_cache_n++) % c->tx_cache_max] = page;
}

/*
 * Make room for @sz octets in MPA's page fragment. TCP acknowledges and
 * frees its skbs in order, so the oldest page of the cache is the first
 * that TCP lets go of: used again, it needs neither the allocator nor
 * the zeroing of init_on_alloc. Otherwise a new page, as
 * skb_page_frag_refill() allocates one, charged to the socket's memory
 * cgroup as long as MPA keeps it.
 */
static bool mpa_tx_frag_refill(struct mpa_conn *c, u32 sz)
{
	struct page_frag *pf = &c->tx_pfrag;
	struct sock *sk = c->sk;
	struct mem_cgroup *old = NULL;
	struct page *page;
	gfp_t gfp;

	if (!c->tx_own)
		return skb_page_frag_refill(sz, mpa_tx_frag(c), sk->sk_allocation);
	if (pf->page) {
		if (pf->size - pf->offset >= sz)
			return true;
		if (page_ref_count(pf->page) == 1) {
			pf->offset = 0;
			mpa_mib_inc(c, MPA_MIB_TX_PAGES_REUSED);
			return pf->size >= sz;
		}
	}
	if (!c->tx_cache) {
		c->tx_cache = kcalloc(c->tx_cache_max, sizeof(*c->tx_cache),
				      sk->sk_allocation | __GFP_ACCOUNT | __GFP_NOWARN);
		if (!c->tx_cache)
			return false;
	}
	page = mpa_tx_cache_get(c);
	if (page) {
		mpa_mib_inc(c, MPA_MIB_TX_PAGES_REUSED);
	} else {
		gfp = sk->sk_allocation | __GFP_ACCOUNT;
		if (sk->sk_memcg)
			old = set_active_memcg(sk->sk_memcg);
		page = alloc_pages((gfp & ~__GFP_DIRECT_RECLAIM) | __GFP_COMP |
				   __GFP_NOWARN | __GFP_NORETRY,
				   SKB_FRAG_PAGE_ORDER);
		if (!page)
			page = alloc_page(gfp);
		if (sk->sk_memcg)
			set_active_memcg(old);
		if (!page)
			return false;
		mpa_mib_inc(c, MPA_MIB_TX_PAGES);
	}
	if (pf->page)
		mpa_tx_cache_put(c, pf->page);
	pf->page = page;
	pf->offset = 0;
	pf->size = page_size(page);
	/* pages that TCP lets go of are freed once sending pauses */
	if (!mod_delayed_work(mpa_wq, &c->tx_trim_work, HZ))
		sock_hold(sk);
	return pf->size >= sz;
}

/* free the cached pages that TCP let go of; all of them with @all */
static bool mpa_tx_cache_trim(struct mpa_conn *c, bool all)
{
	struct page_frag *pf = &c->tx_pfrag;
	u16 n = c->tx_cache_n, i;
	struct page *page;

	c->tx_cache_n = 0;
	for (i = 0; i < n; i++) {
		page = c->tx_cache[(c->tx_cache_head + i) % c->tx_cache_max];
		if (all || page_ref_count(page) == 1)
			mpa_tx_page_release(c, page);
		else
			mpa_tx_cache_put(c, page);
	}
	if (pf->page && (all || page_ref_count(pf->page) == 1)) {
		mpa_tx_page_release(c, pf->page);
		pf->page = NULL;
	}
	return c->tx_cache_n || pf->page;
}

void mpa_tx_trim_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(to_delayed_work(work),
					  struct mpa_conn, tx_trim_work);
	struct sock *sk = c->sk;

	mpa_lock_tx(c);
	if (!c->closing && c->tx_cache) {
		/* pages still in TCP: look again later */
		if (mpa_tx_cache_trim(c, false)) {
			if (!mod_delayed_work(mpa_wq, &c->tx_trim_work, HZ))
				sock_hold(sk);
		} else {
			/* an idle connection keeps nothing */
			kfree(c->tx_cache);
			c->tx_cache = NULL;
		}
	}
	mpa_unlock_tx(c);
	sock_put(sk);
}

/* the connection is gone: drop every cached page (TCP frees its own) */
void mpa_tx_cache_free(struct mpa_conn *c)
{
	/* a page of tx_pfrag implies the cache (mpa_tx_frag_refill()) */
	if (c->tx_cache)
		mpa_tx_cache_trim(c, true);
	kfree(c->tx_cache);
}

/*
 * Memory for an FPDU of @wire octets, which TCP then takes by reference
 * (one copy in all): a piece of the task's page fragment as TCP's own
 * sendmsg uses, or for an FPDU larger than that a compound page of its
 * own, freed by TCP once the data is acknowledged. Only when no such page
 * is available the FPDU goes into a buffer that TCP copies from and that
 * is freed as soon as it is sent. Nothing stays allocated between FPDUs.
 * Pages handed to TCP are charged to the socket's memory cgroup by TCP
 * (sk_wmem_schedule), the buffer with __GFP_ACCOUNT.
 */
static u8 *mpa_tx_buf(struct mpa_conn *c, u32 wire, struct page **page, u32 *off)
{
	struct sock *sk = c->sk;
	struct page_frag *pfrag = mpa_tx_frag(c);

	*off = 0;
	*page = NULL;
	if (wire <= PAGE_SIZE << SKB_FRAG_PAGE_ORDER &&
	    mpa_tx_frag_refill(c, wire) &&
	    pfrag->size - pfrag->offset >= wire) {
		*page = pfrag->page;
		*off = pfrag->offset;
		pfrag->offset += wire;
		get_page(*page);
	} else {
		*page = alloc_pages(sk->sk_allocation | __GFP_COMP | __GFP_NOWARN |
				    __GFP_NORETRY, get_order(wire));
	}
	c->tx_page = *page;
	if (*page)
		return (u8 *)page_address(*page) + *off;
	/* TCP would copy it into the task's page fragment */
	if (c->tx_rx)
		return NULL;
	c->tx_buf = kvmalloc(wire, sk->sk_allocation | __GFP_ACCOUNT);
	return c->tx_buf;
}

/*
 * A train: FPDUs of at most one segment each, sent with MSG_MORE, wait
 * in MPA while they are contiguous in at most MPA_TRAIN_FRAGS page
 * fragments, until they fill one GSO skb, and go to TCP in one call.
 * The train starts an skb on a segment boundary (mpa_tx_flush()), and
 * an FPDU joins it only if it then lies within one segment: FPDUs of a
 * full segment each, which TSO and GSO cut at FPDU boundaries, and short
 * ones (64-octet messages of a sendmmsg(), the last FPDU of a DDP
 * message) packed into a segment, which TCP then takes in one call
 * instead of one per FPDU. An FPDU of @wire octets can join the pending
 * train if it directly follows it in the same fragment, or starts the
 * next one.
 */
/* an FPDU of @wire octets fits right after the train in its fragment */
static bool mpa_train_follows(const struct mpa_conn *c,
			      const struct page_frag *pfrag, u32 wire)
{
	return pfrag->page == c->tx_page &&
	       pfrag->offset == c->tx_pend_off + c->tx_pend_len - c->tx_frag_len &&
	       pfrag->size - pfrag->offset >= wire;
}

/*
 * Segments TCP puts into one skb at most (its size goal is a multiple of
 * the MSS below sk_gso_max_size); without GSO, no limit but the fragments.
 */
static u32 mpa_train_max(const struct sock *sk, u32 mss)
{
	u32 segs = min_t(u32, READ_ONCE(sk->sk_gso_max_size) / mss,
			 READ_ONCE(sk->sk_gso_max_segs));

	return segs > 1 ? segs * mss : U32_MAX;
}

static bool mpa_train_room(struct mpa_conn *c, u32 wire, u32 mss)
{
	struct page_frag *pfrag = mpa_tx_frag(c);
	u32 off;

	/* the FPDU must lie within one segment of the train's skb */
	if (!c->tx_train || c->tx_busy || wire > c->tx_train_left ||
	    !mpa_seg_fits(c->tx_pend_len, wire, mss))
		return false;
	if (mpa_train_follows(c, pfrag, wire))
		return mpa_train_frags(c, wire) <= MAX_SKB_FRAGS;
	if (c->tx_nfrag == ARRAY_SIZE(c->tx_frag))
		return false;
	/* the next fragment: the rest of this one, or a new page */
	off = pfrag->size - pfrag->offset >= wire ? pfrag->offset : 0;
	return mpa_train_frags(c, 0) + iwarp_tcp_frags(off, wire) <= MAX_SKB_FRAGS;
}

/*
 * Where the next FPDU of the train goes (mpa_train_room() said yes), or
 * NULL if it needs a new fragment and there is no memory for one.
 */
static u8 *mpa_train_next(struct mpa_conn *c, u32 wire)
{
	struct page_frag *pfrag = mpa_tx_frag(c);
	struct bio_vec *bv;
	u8 *buf;

	if (!mpa_train_follows(c, pfrag, wire)) {
		if (!mpa_tx_frag_refill(c, wire) ||
		    pfrag->size - pfrag->offset < wire)
			return NULL;
		bv = &c->tx_frag[c->tx_nfrag++];
		bv->bv_page = c->tx_page;
		bv->bv_offset = c->tx_pend_off;
		bv->bv_len = c->tx_pend_len - c->tx_frag_len;
		c->tx_train_frags += iwarp_tcp_frags(bv->bv_offset, bv->bv_len);
		c->tx_frag_len = c->tx_pend_len;
		c->tx_page = pfrag->page;
		c->tx_pend_off = pfrag->offset;
		get_page(c->tx_page);
	}
	buf = (u8 *)page_address(pfrag->page) + pfrag->offset;
	pfrag->offset += wire;
	return buf;
}

/*
 * The connection does not take a new FPDU at once (mpa_tx_ready()): wait
 * for the startup or rule 4 of RFC 5044 7.1.2, or say why not.
 */
static int mpa_tx_wait_ready(struct mpa_conn *c, int flags)
{
	struct sock *sk = c->sk;
	long timeo;
	int ret;

	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	if (mpa_in_startup(c)) {
		ret = mpa_wait(c, &timeo, mpa_started);
		if (ret)
			return ret;
	}
	if (c->state == MPA_S_REJECTED)
		return -ECONNREFUSED;
	if (c->state != MPA_S_FULL)
		return c->err ? -c->err_errno : -ENOTCONN;
	/* after error 2 or 3 the consumer may still send a last message */
	if (c->err && READ_ONCE(sk->sk_err) == c->err_errno)
		WRITE_ONCE(sk->sk_err, 0);

	/* RFC 5044 7.1.2 rule 4: a Responder sends after it got one FPDU */
	ret = mpa_wait(c, &timeo, mpa_may_send);
	if (ret)
		return ret;
	if (!c->tx_allowed)
		return sk_stream_error(sk, flags, -EPIPE);
	/* after shutdown(SHUT_WR): the rest of the last FPDU is not ours */
	if (c->tx_shut)
		return sk_stream_error(sk, flags, -EPIPE);
	return 0;
}

/*
 * The connection takes a new FPDU: startup over, full operation, rule 4
 * of RFC 5044 7.1.2 satisfied, no shutdown(SHUT_WR). The common case is
 * four tests.
 */
static inline int mpa_tx_ready(struct mpa_conn *c, int flags)
{
	if (likely(c->state == MPA_S_FULL && !c->err && c->tx_allowed &&
		   !c->tx_shut))
		return 0;
	return mpa_tx_wait_ready(c, flags);
}

/* an FPDU of @wire octets carrying a ULPDU of @len is with MPA or TCP */
static void mpa_tx_count(struct mpa_conn *c, u32 len, u32 wire)
{
	c->stats.tx_fpdus++;
	c->stats.tx_octets += len;
	mpa_mib_inc(c, MPA_MIB_TX_FPDUS);
	mpa_mib_add(c, MPA_MIB_TX_OCTETS, len);
	trace_mpa_fpdu_tx(c->sk, len);
	c->stats.tx_markers += (wire - len - MPA_HDR_LEN - mpa_pad_len(len) -
				MPA_CRC_LEN) / MPA_MARKER_LEN;
}

/*
 * Octets the pending train can still take in its current page fragment,
 * right after its last FPDU: 0 without a train, while a flush sends, or
 * when the task's fragment moved on. Up to 6.4 a fragment is one skb frag
 * however long; from 6.5 on each page is one (iwarp_tcp_frags()), so the
 * span ends where the skb would run out of frags.
 */
static u32 mpa_train_span(struct mpa_conn *c)
{
	const struct page_frag *pfrag = mpa_tx_frag(c);
	u32 span, frags, end;

	if (!c->tx_train || c->tx_busy || !mpa_train_follows(c, pfrag, 0))
		return 0;
	span = min(pfrag->size - pfrag->offset, c->tx_train_left);
	if (IWARP_HAVE_SENDPAGE)
		return span;
	frags = MAX_SKB_FRAGS - min_t(u32, MAX_SKB_FRAGS, c->tx_train_frags);
	end = (c->tx_pend_off / PAGE_SIZE + frags) * PAGE_SIZE;
	return min(span, end - min(end, pfrag->offset));
}

/*
 * Send what MPA holds after it took a ULPDU of @len octets. The FPDU is
 * committed: a rest that did not fit goes out later (write space), so
 * only a real error fails the send. Return @len or a negative errno.
 */
static int mpa_tx_push(struct mpa_conn *c, u32 len, int flags)
{
	int ret = mpa_tx_flush(c, flags);

	if (ret && ret != -EAGAIN && ret != -ERESTARTSYS && ret != -EINTR)
		return ret;
	return len;
}

/*
 * A ULPDU of @len octets, with more to follow (MSG_MORE), whose FPDU is
 * of exactly @mss octets and fits in the @span octets mpa_train_span()
 * found: it goes straight into the train's fragment, without the checks
 * mpa_tx_fpdu() makes for an FPDU that starts a train, a fragment or an
 * skb. As there, the train then waits for the next FPDU if that can
 * join it, or goes to TCP. Return @len or a negative errno.
 */
static int mpa_train_add(struct mpa_conn *c, struct mpa_src *src, u32 len,
			 u32 mss, u32 span, int flags)
{
	struct page_frag *pfrag = mpa_tx_frag(c);
	u8 *buf = (u8 *)page_address(pfrag->page) + pfrag->offset;
	int ret;

	src->in_page = true;
	ret = mpa_tx_fill(c, src, buf, len, mss, 0);
	if (ret < 0) {
		/* the octets stay unused in the fragment */
		mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
		return ret;
	}
	pfrag->offset += mss;
	c->tx_pend_len += mss;
	c->tx_train_left -= mss;
	c->tx_more = true;
	mpa_tx_count(c, len, mss);

	if (span - mss >= mss || mpa_train_room(c, mss, mss))
		return len;
	return mpa_tx_push(c, len, flags);
}

/* the span mpa_train_add() takes a ULPDU of @len octets in, or 0 */
static u32 mpa_train_takes(struct mpa_conn *c, u32 len, u32 mss)
{
	u32 span;

	if (mpa_fpdu_plain_len(len) != mss || c->tx_pend_len % mss)
		return 0;
	span = mpa_train_span(c);
	return span >= mss ? span : 0;
}

/*
 * One ULPDU of @len octets from @src as one FPDU, on a connection that
 * takes it (mpa_tx_ready()) and where it fits a segment of @mss octets.
 */
static int mpa_tx_fpdu(struct mpa_conn *c, struct mpa_src *src, u32 len,
		       u32 mss, int flags)
{
	struct sock *sk = c->sk;
	u32 pos, wire, off;
	struct page *page;
	bool train;
	u8 *buf;
	int ret;

	wire = mpa_fpdu_plain_len(len);
	/* with more to follow, an FPDU of one segment or less waits in MPA */
	train = (flags & MSG_MORE) && wire <= mss;
	/* any FPDU of at most one segment may join a pending train */
	buf = c->tx_train && wire <= mss && mpa_train_room(c, wire, mss) ?
	      mpa_train_next(c, wire) : NULL;
	if (buf) {
		src->in_page = true;
		ret = mpa_tx_fill(c, src, buf, len, wire, 0);
		if (ret < 0) {
			/* the octets stay unused in the fragment */
			mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
			return ret;
		}
		c->tx_pend_len += ret;
		c->tx_train_left -= ret;
		goto sent;
	}
	if (c->tx_pend_len) {
		ret = mpa_tx_flush(c, flags);
		if (ret)
			return ret;
		/* shutdown(SHUT_WR) came while this sender slept in the flush */
		if (c->tx_shut)
			return sk_stream_error(sk, flags, -EPIPE);
	}

	pos = tcp_sk(sk)->write_seq - c->tx_base;
	if ((flags & MSG_DONTWAIT) && !sk_stream_memory_free(sk)) {
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		return -EAGAIN;
	}
	if (c->markers_tx)
		wire = mpa_fpdu_wire_len(pos, len, true);
	/* from its first train on, a connection builds FPDUs in its own pages */
	if (train && wire == mss && c->tx_cache_max && !c->markers_tx)
		c->tx_own = true;
	buf = mpa_tx_buf(c, wire, &page, &off);
	if (!buf)
		return -ENOMEM;
	src->in_page = page;
	ret = mpa_tx_fill(c, src, buf, len, wire, pos);
	if (ret < 0) {
		mpa_tx_release(c);
		return ret;
	}
	mpa_tx_place(sk, off, ret, mss);
	c->tx_pend_off = off;
	c->tx_pend_len = ret;
	c->tx_split = min_t(u32, READ_ONCE(mpa_tx_split_test), ret);
	c->tx_train = train && page && !c->markers_tx && !mpa_tx_split_test;
	if (c->tx_train)
		c->tx_train_left = mpa_train_max(sk, mss) - ret;
sent:
	c->tx_more = flags & MSG_MORE;
	mpa_tx_count(c, len, ret);

	/* the train waits for the next FPDU, if one follows and one as long fits */
	if ((flags & MSG_MORE) && c->tx_train && mpa_train_room(c, ret, mss))
		return len;
	return mpa_tx_push(c, len, flags);
}

/*
 * mpa_tx_one() takes a ULPDU of @len octets: nothing with MPA before it,
 * none to follow it (MSG_MORE), no markers, an FPDU of one segment.
 */
static bool mpa_tx_one_ok(const struct mpa_conn *c, u32 len, u32 mss,
			  int flags)
{
	return !(flags & MSG_MORE) && !c->tx_pend_len && !c->tx_busy &&
	       !c->markers_tx && mpa_fpdu_plain_len(len) <= mss;
}

/*
 * A ULPDU that mpa_tx_one_ok() found fit, as one FPDU built in the page
 * fragment and given to TCP in one call that does not wait: a message's
 * only segment, a Read Response, a Terminate. Without the train's and
 * the held FPDU's bookkeeping, and without a page reference of MPA's when
 * TCP takes the whole FPDU, as it does when it has send space. When it
 * takes less, MPA holds the rest as mpa_tx_fpdu() would (@tx_page with a
 * reference) and sends it as that does: now, waiting unless
 * MSG_DONTWAIT, or with the write space. tx_split_test cuts the FPDU
 * as mpa_tx_flush() does. Return @len or a negative errno.
 */
static int mpa_tx_one(struct mpa_conn *c, struct mpa_src *src, u32 len,
		      u32 mss, int flags)
{
	struct page_frag *pfrag = mpa_tx_frag(c);
	u32 split = READ_ONCE(mpa_tx_split_test);
	u32 wire = mpa_fpdu_plain_len(len);
	struct sock *sk = c->sk;
	struct sk_buff *skb;
	struct bio_vec bv;
	int ret;

	if ((flags & MSG_DONTWAIT) && !sk_stream_memory_free(sk)) {
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		return -EAGAIN;
	}
	if (!mpa_tx_frag_refill(c, wire) || pfrag->size - pfrag->offset < wire)
		return mpa_tx_fpdu(c, src, len, mss, flags);
	bv.bv_page = pfrag->page;
	bv.bv_offset = pfrag->offset;
	bv.bv_len = split ? min(split, wire) : wire;
	src->in_page = true;
	ret = mpa_tx_fill(c, src, (u8 *)page_address(bv.bv_page) + bv.bv_offset,
			  len, wire, 0);
	if (ret < 0)
		return ret;
	pfrag->offset += wire;
	mpa_tx_place(sk, bv.bv_offset, wire, mss);
	c->tx_more = false;
	mpa_tx_count(c, len, wire);
	/*
	 * The socket stays locked: TCP does not wait with MSG_DONTWAIT. No
	 * SIGPIPE here: on an error the push of the held FPDU below calls TCP
	 * again with @flags, and that raises the one signal.
	 */
	ret = iwarp_tcp_send_pages(sk, &bv, 1, bv.bv_len,
				   MSG_NOSIGNAL | MSG_DONTWAIT);
	if (ret == (int)wire)
		return len;
	/* the rest is MPA's: the page fragment may move on */
	get_page(bv.bv_page);
	c->tx_page = bv.bv_page;
	c->tx_pend_off = bv.bv_offset;
	c->tx_pend_len = wire;
	if (ret > 0)
		mpa_tx_sent(c, ret);
	if (split) {
		c->tx_split = bv.bv_len - max(ret, 0);
		skb = tcp_write_queue_tail(sk);
		if (!c->tx_split && skb)
			TCP_SKB_CB(skb)->eor = 1;
	}
	return mpa_tx_push(c, len, flags);
}

/*
 * The FPDUs of earlier MSG_MORE sends waited for more: a send that fails
 * does not leave them waiting for yet another.
 */
static int mpa_tx_failed(struct mpa_conn *c, int err)
{
	if (c->tx_more) {
		c->tx_more = false;
		mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	return err;
}

/* One ULPDU, @hdr_len octets of @hdr then the rest from @from, as one FPDU. */
int mpa_send_locked(struct mpa_conn *c, const void *hdr, u32 hdr_len,
		    struct iov_iter *from, size_t len, int flags)
{
	struct mpa_src src = { .hdr = hdr, .hdr_len = hdr_len, .it = from };
	u32 mss, span;
	int ret;

	ret = mpa_tx_ready(c, flags);
	if (ret)
		return mpa_tx_failed(c, ret);
	mss = mpa_tx_mss(c);
	/* no MULPDU is below MPA_MIN_MULPDU */
	if (len > MPA_MIN_MULPDU && len > mpa_mulpdu(mss, c->markers_tx))
		return mpa_tx_failed(c, -EMSGSIZE);
	span = flags & MSG_MORE ? mpa_train_takes(c, len, mss) : 0;
	if (span)
		ret = mpa_train_add(c, &src, len, mss, span, flags);
	else if (mpa_tx_one_ok(c, len, mss, flags))
		ret = mpa_tx_one(c, &src, len, mss, flags);
	else
		ret = mpa_tx_fpdu(c, &src, len, mss, flags);
	return ret < 0 ? mpa_tx_failed(c, ret) : ret;
}

/*
 * A message cut into ULPDUs by @msg (mpa_send_msg_locked()): one check of
 * the connection and of the MULPDU per FPDU, a few tests each. *@done
 * counts the octets of @from in the ULPDUs sent.
 */
int mpa_send_msg(struct mpa_conn *c, const struct mpa_msg *msg,
		 struct iov_iter *from, int flags, size_t *done)
{
	struct mpa_src src = { .it = from };
	u32 len, span, mss, max = 0, last_mss = 0;
	u8 hdr[MPA_MSG_HDR_MAX] __aligned(8);
	bool last = false;
	int ret;

	if (msg->hdr_len > sizeof(hdr))
		return -EINVAL;
	while (!last) {
		ret = mpa_tx_ready(c, flags);
		if (ret)
			return mpa_tx_failed(c, ret);
		/* the MSS follows the path MTU: MPA cuts by the current one */
		mss = mpa_tx_mss(c);
		if (mss != last_mss) {
			last_mss = mss;
			max = mpa_mulpdu(mss, c->markers_tx);
			if (max < msg->hdr_len)
				return mpa_tx_failed(c, -EMSGSIZE);
		}
		ret = msg->next(msg->ctx, hdr, max - msg->hdr_len, &last);
		if (ret < 0)
			return mpa_tx_failed(c, ret);
		src.hdr = hdr;
		src.hdr_len = msg->hdr_len;
		len = msg->hdr_len + ret;
		span = last ? 0 : mpa_train_takes(c, len, mss);
		if (span)
			ret = mpa_train_add(c, &src, len, mss, span, flags);
		else
			ret = mpa_tx_fpdu(c, &src, len, mss,
					  last ? flags : flags | MSG_MORE);
		if (ret < 0)
			return mpa_tx_failed(c, ret);
		*done += ret - msg->hdr_len;
	}
	return 0;
}

/* MPA_CMSG_LENS: the ULPDUs of one sendmsg() */
struct mpa_lens {
	const u32	*len;
	u32		n;
	u32		i;
};

static int mpa_lens_next(void *ctx, void *hdr, u32 max_data, bool *last)
{
	struct mpa_lens *l = ctx;
	u32 len = l->len[l->i];

	if (len > max_data)
		return -EMSGSIZE;
	*last = ++l->i == l->n;
	return len;
}

/*
 * sendmsg() with control messages: with an MPA_CMSG_LENS one, its data
 * is that many ULPDUs, sent in one go; other levels are ignored, as TCP
 * does. Return the octets of the ULPDUs that went, or an errno when none
 * did (-EINVAL for lengths that do not add up, -EMSGSIZE for one over the
 * MULPDU).
 */
static int mpa_sendmsg_ctl(struct mpa_conn *c, struct msghdr *msg, size_t size,
			   int flags)
{
	struct mpa_lens l = {};
	struct mpa_msg m = { .next = mpa_lens_next, .ctx = &l };
	struct cmsghdr *cmsg;
	size_t done = 0;
	int ret;

	if (msg->msg_control_is_user)
		return -EINVAL;
	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_MPA)
			continue;
		if (cmsg->cmsg_type != MPA_CMSG_LENS || l.len)
			return -EINVAL;
		if ((cmsg->cmsg_len - CMSG_LEN(0)) % sizeof(*l.len))
			return -EINVAL;
		l.len = CMSG_DATA(cmsg);
		l.n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(*l.len);
		if (mpa_lens_check(l.len, l.n, size))
			return -EINVAL;
	}
	if (!l.len)
		return mpa_send_locked(c, NULL, 0, &msg->msg_iter, size, flags);
	ret = mpa_send_msg(c, &m, &msg->msg_iter, flags, &done);
	return done ? (int)done : ret;
}

/*
 * sendmmsg() marks every message but its last with MSG_BATCH: for MPA
 * that is MSG_MORE, more ULPDUs follow at once, so FPDUs of a batch form
 * trains or share segments like those of one DDP message.
 */
int mpa_sendmsg(struct sock *sk, struct msghdr *msg, size_t size)
{
	struct mpa_conn *c = mpa_get(sk);
	int flags = msg->msg_flags;
	int ret;

	if (flags & MSG_BATCH)
		flags |= MSG_MORE;

	mpa_lock_tx(c);
	if (!mpa_framing(c))
		ret = tcp_sendmsg_locked(sk, msg, size);
	else if ((msg->msg_flags & MSG_OOB) || iwarp_msg_splices_pages(msg))
		ret = -EOPNOTSUPP;
	else if (msg->msg_controllen)
		ret = mpa_sendmsg_ctl(c, msg, size, flags);
	else
		ret = mpa_send_locked(c, NULL, 0, &msg->msg_iter, size, flags);
	mpa_unlock_tx(c);
	return ret;
}

/*
 * shutdown(SHUT_WR) in framing mode: no FPDU starts after it, and its FIN
 * must not cut the FPDU being sent (the peer would see RFC 5044 error 1).
 * If part of that FPDU is still with MPA (send space ran out, or another
 * thread's send sleeps in its flush), the FIN is queued behind it: the
 * flush that completes the FPDU (that sender, or the write-space worker)
 * sends it. Like TCP, which queues its FIN behind unsent data, shutdown
 * does not wait.
 */
int mpa_sock_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	struct mpa_conn *c = mpa_get(sk);
	bool defer = false;

	if (how != SHUT_WR && how != SHUT_RDWR)
		return c->sk_ops->shutdown(sock, how);
	lock_sock(sk);
	if (mpa_framing(c) && !(sk->sk_shutdown & SEND_SHUTDOWN) &&
	    ((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))) {
		c->tx_shut = true;
		mpa_tx_flush(c, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (c->tx_pend_len) {
			c->tx_fin = true;
			defer = true;
		}
	}
	release_sock(sk);
	if (!defer)
		return c->sk_ops->shutdown(sock, how);
	return how == SHUT_RDWR ? c->sk_ops->shutdown(sock, SHUT_RD) : 0;
}

int mpa_sendpage(struct sock *sk, struct page *page, int offset,
		 size_t size, int flags)
{
	struct mpa_conn *c = mpa_get(sk);

	if (mpa_framing(c))
		return -EOPNOTSUPP;
	return iwarp_proto_sendpage(c->sk_proto, sk, page, offset, size, flags);
}

void mpa_write_space(struct sock *sk)
{
	struct mpa_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = mpa_get(sk);
	if (c) {
		if (c->tx_pend_len && !c->tx_busy && !c->closing) {
			sock_hold(sk);
			if (!queue_work(mpa_wq, &c->tx_work))
				sock_put(sk);
		} else if (c->consumer && c->consumer->write_space) {
			c->consumer->write_space(c);
		}
		c->saved_write_space(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}
