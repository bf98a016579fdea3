/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the two supported kernel series, 6.1
 * and 6.12 (Debian 12's kernel and its 6.12 LTS backport), in one place.
 * mpa.ko and ddp.ko call these helpers instead of the kernel interfaces
 * that changed in between, so that their code carries no version tests.
 * The minimum kernel is 6.1: see Documentation/install.rst.
 *
 * What moved after 6.1:
 *  - 6.5 removed do_tcp_sendpages(), struct proto's sendpage and
 *    struct proto_ops' sendpage: pages go to TCP through
 *    tcp_sendmsg_locked() with MSG_SPLICE_PAGES and a bio_vec iterator,
 *    and sendfile()/splice() to a socket reach its sendmsg() with
 *    MSG_SPLICE_PAGES set.
 *  - 6.5 dropped the vmas argument of pin_user_pages().
 *  - 6.9 removed import_single_range(); import_ubuf() replaces it.
 *  - 6.12 moved <asm/unaligned.h> to <linux/unaligned.h> and made
 *    struct fd opaque (fd_file()).
 *  - 6.14 gave __tcp_send_ack() a flags argument, and stable kernels
 *    took it over (Debian's 6.12): detected from <net/tcp.h>, not by
 *    version (Kbuild).
 *
 * The pure protocol code (mpa_proto.c, ddp_proto.c) includes this header
 * for the unaligned helpers only; it is also built in user space (the
 * unit tests and fuzzers, with stand-ins for <asm/unaligned.h> and the
 * like), where the rest of the header is hidden.
 */
#ifndef _NET_IWARP_COMPAT_H
#define _NET_IWARP_COMPAT_H

#include <linux/version.h>

/* the one version test: is this kernel @a.@b or later? */
#define IWARP_KERNEL_SINCE(a, b) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))

#if !defined(__KERNEL__) || !IWARP_KERNEL_SINCE(6, 12)
#include <asm/unaligned.h>
#else
#include <linux/unaligned.h>
#endif

#ifdef __KERNEL__

#include <linux/bvec.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp.h>

#if !IWARP_KERNEL_SINCE(6, 1)
#error "mpa.ko and ddp.ko need Linux 6.1 or later"
#endif

#if IWARP_KERNEL_SINCE(6, 5)
#define IWARP_HAVE_SENDPAGE 0
#else
#define IWARP_HAVE_SENDPAGE 1
#endif

/**
 * iwarp_tcp_send_pages() - queue parts of pages on a TCP socket, pushed once
 * @sk: the TCP socket, locked by the caller
 * @bv: the pieces, in stream order
 * @n: number of pieces
 * @len: their total length
 * @flags: MSG_* flags (MSG_DONTWAIT, MSG_NOSIGNAL, MSG_MORE)
 *
 * TCP takes references to the pages instead of copying them (6.5 and
 * later: MSG_SPLICE_PAGES with a bio_vec iterator; before,
 * do_tcp_sendpages() per piece) and may put the pieces into one skb: the
 * socket is pushed (tcp_push()) only after the last one. Up to 6.4 every
 * piece but the last goes with MSG_SENDPAGE_NOTLAST.
 *
 * Return: the number of octets queued, or a negative error if none was.
 */
static inline int iwarp_tcp_send_pages(struct sock *sk, struct bio_vec *bv,
				       unsigned int n, size_t len, int flags)
{
#if IWARP_HAVE_SENDPAGE
	unsigned int i;
	int copied = 0;
	int ret;

	for (i = 0; i < n; i++) {
		int f = flags;

		if (i + 1 < n)
			f |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
		ret = do_tcp_sendpages(sk, bv[i].bv_page, bv[i].bv_offset,
				       bv[i].bv_len, f);
		if (ret < 0)
			return copied ? copied : ret;
		copied += ret;
		if (ret < bv[i].bv_len)
			break;
	}
	return copied;
#else
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, n, len);
	return tcp_sendmsg_locked(sk, &msg, len);
#endif
}

/**
 * iwarp_tcp_frags() - skb frags TCP needs for a piece of iwarp_tcp_send_pages()
 * @off: offset of the piece in its (compound) page
 * @len: its length
 *
 * Up to 6.4 do_tcp_sendpages() takes a piece of a compound page as one
 * frag; from 6.5 on iov_iter_extract_pages() hands TCP one page of
 * PAGE_SIZE at a time, one frag each. An skb that runs out of frags
 * (MAX_SKB_FRAGS) is cut there, wherever that falls in the data.
 *
 * Return: the number of frags.
 */
static inline unsigned int iwarp_tcp_frags(unsigned int off, unsigned int len)
{
	if (!len)
		return 0;
	if (IWARP_HAVE_SENDPAGE)
		return 1;
	return (off + len - 1) / PAGE_SIZE - off / PAGE_SIZE + 1;
}

/**
 * iwarp_msg_splices_pages() - is this sendmsg() a sendfile() or splice()?
 * @msg: the message given to struct proto's sendmsg
 *
 * From 6.5 on, sendfile() and splice() to a socket call its sendmsg()
 * with MSG_SPLICE_PAGES instead of its sendpage(), which is gone.
 *
 * Return: true if @msg carries pages spliced in (never before 6.5).
 */
static inline bool iwarp_msg_splices_pages(const struct msghdr *msg)
{
#if IWARP_HAVE_SENDPAGE
	return false;
#else
	return msg->msg_flags & MSG_SPLICE_PAGES;
#endif
}

/* struct proto's sendpage, up to 6.4 */
typedef int (*iwarp_sendpage_t)(struct sock *sk, struct page *page,
				int offset, size_t size, int flags);

/**
 * iwarp_proto_set_sendpage() - set struct proto's sendpage where it exists
 * @prot: the protocol
 * @fn: the function; unused from 6.5 on (see iwarp_msg_splices_pages())
 */
static inline void iwarp_proto_set_sendpage(struct proto *prot,
					    iwarp_sendpage_t fn)
{
#if IWARP_HAVE_SENDPAGE
	prot->sendpage = fn;
#endif
}

/**
 * iwarp_proto_sendpage() - call struct proto's sendpage
 * @prot: the protocol
 * @sk: the socket
 * @page: the page
 * @offset: offset of the data in @page
 * @size: number of octets
 * @flags: MSG_* flags
 *
 * Only reachable through iwarp_proto_set_sendpage(), so never from 6.5 on.
 *
 * Return: what @prot's sendpage returns; -EOPNOTSUPP from 6.5 on.
 */
static inline int iwarp_proto_sendpage(struct proto *prot, struct sock *sk,
				       struct page *page, int offset,
				       size_t size, int flags)
{
#if IWARP_HAVE_SENDPAGE
	return prot->sendpage(sk, page, offset, size, flags);
#else
	return -EOPNOTSUPP;
#endif
}

/**
 * iwarp_pin_user_pages() - pin_user_pages() without the VMA array
 * @start: user address, page aligned
 * @nr_pages: number of pages
 * @gup_flags: FOLL_* flags
 * @pages: the pinned pages
 *
 * The caller holds mmap_read_lock(current->mm) and checks the VMAs
 * itself (vma_lookup()) under the same lock.
 *
 * Return: the number of pages pinned, or a negative error.
 */
static inline long iwarp_pin_user_pages(unsigned long start,
					unsigned long nr_pages,
					unsigned int gup_flags,
					struct page **pages)
{
#if IWARP_KERNEL_SINCE(6, 5)
	return pin_user_pages(start, nr_pages, gup_flags, pages);
#else
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
#endif
}

/**
 * iwarp_import_ubuf() - an iov_iter over one user buffer
 * @dir: ITER_SOURCE (the kernel reads the buffer) or ITER_DEST
 * @buf: the user buffer
 * @len: its length; more than MAX_RW_COUNT is cut to MAX_RW_COUNT
 * @iov: storage that @it may point to; keep it as long as @it
 * @it: the iterator to set up
 *
 * Return: 0, or -EFAULT if the buffer is not in user space.
 */
static inline int iwarp_import_ubuf(int dir, void __user *buf, size_t len,
				    struct iovec *iov, struct iov_iter *it)
{
#if IWARP_KERNEL_SINCE(6, 9)
	return import_ubuf(dir, buf, min_t(size_t, len, MAX_RW_COUNT), it);
#else
	return import_single_range(dir, buf, len, iov, it);
#endif
}

/**
 * iwarp_fd_file() - the file of a struct fd from fdget()
 * @f: the struct fd
 *
 * Return: the file, NULL if fdget() found none.
 */
#if IWARP_KERNEL_SINCE(6, 12)
#define iwarp_fd_file(f) fd_file(f)
#else
#define iwarp_fd_file(f) ((f).file)
#endif

/**
 * iwarp_tcp_send_ack() - send an ACK now, with the window TCP computes
 * @sk: a TCP socket, owned or locked in softirq
 *
 * __tcp_send_ack() took a flags argument in 6.14, and in the stable
 * kernels that took that change (Debian's 6.12 did): the kernel's
 * <net/tcp.h> says which, as IWARP_TCP_SEND_ACK_FLAGS from the top Kbuild,
 * as no version number can.
 */
static inline void iwarp_tcp_send_ack(struct sock *sk)
{
#ifdef IWARP_TCP_SEND_ACK_FLAGS
	__tcp_send_ack(sk, tcp_sk(sk)->rcv_nxt, 0);
#else
	__tcp_send_ack(sk, tcp_sk(sk)->rcv_nxt);
#endif
}

#endif /* __KERNEL__ */

#endif /* _NET_IWARP_COMPAT_H */
