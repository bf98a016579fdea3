// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ddp: user space's DDP. Opening it gives a protection domain; a
 * bound stream is a file of its own whose read() returns the stream's
 * events. See include/uapi/linux/ddp.h.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/iwarp_compat.h>

#include "ddp.h"

#define DDP_EVQ_LEN		1024	/* events a stream keeps for its reader */

/**
 * struct ddp_upost - user memory posted as an untagged buffer
 * @list: on &ddp_ustream.done once the buffer came back
 * @mem: the pinned pages, handed to ddp_post_recv_pages()
 * @cookie: the user's cookie
 *
 * The stream sees the pages and, as the buffer's cookie, the address of
 * this record: when the buffer comes back (DDP_EV_RECV, DDP_EV_FLUSH),
 * the event callback puts the user's cookie in the event and the record
 * on the done list, whose pages are unpinned in process context.
 */
struct ddp_upost {
	struct list_head list;
	struct ddp_mem	mem;
	u64		cookie;
};

/**
 * struct ddp_ustream - a stream file: a DDP stream with a user-space reader
 * @s: the stream
 * @sock: the MPA socket (a reference on its file)
 * @lock: protects the ring and @done against the event callback
 * @done: buffers that came back, to unpin in process context
 * @ev: event ring
 * @ev_head: next event to read
 * @ev_tail: next free slot
 * @ev_lost: events that did not fit
 * @wq: readers and pollers of the ring
 */
struct ddp_ustream {
	struct ddp_stream	*s;
	struct socket		*sock;
	spinlock_t		lock;		/* ring, done */
	struct list_head	done;
	struct ddp_event	*ev;
	u32			ev_head;
	u32			ev_tail;
	u64			ev_lost;
	wait_queue_head_t	wq;
};

static void ddp_upost_free(struct ddp_upost *p)
{
	ddp_mem_release(&p->mem, true);
	kfree(p);
}

/* Unpin the buffers that came back. */
static void ddp_ustream_reclaim(struct ddp_ustream *us)
{
	struct ddp_upost *p, *tmp;
	LIST_HEAD(list);

	spin_lock_bh(&us->lock);
	list_splice_init(&us->done, &list);
	spin_unlock_bh(&us->lock);
	list_for_each_entry_safe(p, tmp, &list, list)
		ddp_upost_free(p);
}

/*
 * The last slot of the ring is kept for the error that stops a stream
 * whose reader does not keep up: a local catastrophic error (0x0/0x00).
 */
static void ddp_user_event(struct ddp_stream *s,
			   const struct ddp_stream_event *kev)
{
	struct ddp_ustream *us = ddp_stream_priv(s);
	struct ddp_event full = {
		.type = DDP_EV_ERROR,
		.err_type = DDP_WIRE_ETYPE_CATASTROPHIC,
		.err_code = DDP_WIRE_ECODE_CATASTROPHIC,
	};
	struct ddp_event ev = {
		.type = kev->type,
		.err_type = kev->err_type,
		.err_code = kev->err_code,
		.hdr_len = min_t(u32, kev->hdr_len, sizeof(ev.hdr)),
		.qn = kev->qn,
		.msn = kev->msn,
		.len = kev->len,
		.stag = kev->stag,
		.cookie = kev->cookie,
		.to = kev->to,
	};
	struct ddp_upost *p = NULL;

	memcpy(ev.rsvdulp, kev->rsvdulp, sizeof(ev.rsvdulp));
	if (ev.hdr_len)
		memcpy(ev.hdr, kev->hdr, ev.hdr_len);
	if (ev.type == DDP_EV_RECV || ev.type == DDP_EV_FLUSH) {
		p = (struct ddp_upost *)(uintptr_t)ev.cookie;
		ev.cookie = p->cookie;
	}
	spin_lock_bh(&us->lock);
	if (p)
		list_add_tail(&p->list, &us->done);
	if (us->ev_tail - us->ev_head < DDP_EVQ_LEN - 1) {
		us->ev[us->ev_tail++ % DDP_EVQ_LEN] = ev;
	} else if (!us->ev_lost++) {
		us->ev[us->ev_tail++ % DDP_EVQ_LEN] = full;
		ddp_stream_stop(s);
	}
	spin_unlock_bh(&us->lock);
	/* a busy reader drains the ring without sleeping: no wakeup to pay */
	if (wq_has_sleeper(&us->wq))
		wake_up_interruptible(&us->wq);
}

/* received segments wait in TCP for the reader: ddp_stream_wait() */
static void ddp_user_rx_kick(struct ddp_stream *s)
{
	struct ddp_ustream *us = ddp_stream_priv(s);

	wake_up_interruptible(&us->wq);
}

static const struct ddp_stream_ops ddp_user_ops = {
	.event = ddp_user_event,
	.rx_kick = ddp_user_rx_kick,
};

static struct ddp_ustream *ddp_ustream_alloc(struct socket *sock)
{
	struct ddp_ustream *us = kzalloc(sizeof(*us), GFP_KERNEL_ACCOUNT);

	if (!us)
		return NULL;
	/* 72 KiB: kmalloc would take an order-5 (128 KiB) block */
	us->ev = __vmalloc(array_size(DDP_EVQ_LEN, sizeof(*us->ev)),
			   GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!us->ev) {
		kfree(us);
		return NULL;
	}
	us->sock = sock;
	spin_lock_init(&us->lock);
	INIT_LIST_HEAD(&us->done);
	init_waitqueue_head(&us->wq);
	return us;
}

static void ddp_ustream_free(struct ddp_ustream *us)
{
	kvfree(us->ev);
	kfree(us);
}

static int ddp_stream_file_release(struct inode *inode, struct file *file)
{
	struct ddp_ustream *us = file->private_data;
	struct socket *sock = us->sock;

	/* posted buffers come back as DDP_EV_FLUSH: to the done list */
	ddp_stream_release(us->s, false);
	ddp_ustream_reclaim(us);
	ddp_ustream_free(us);
	sockfd_put(sock);
	return 0;
}

static bool ddp_ev_ready(struct ddp_ustream *us)
{
	return READ_ONCE(us->ev_tail) != READ_ONCE(us->ev_head);
}

/*
 * Sleep until an event is in the ring. Meanwhile MPA leaves received
 * segments in TCP and wakes the reader, who places them here, on its
 * own CPU: as a TCP reader copies what softirq queued. Without a
 * sleeping reader (a busy one, poll()) they are placed in softirq.
 */
static int ddp_stream_wait(struct ddp_ustream *us)
{
	struct mpa_conn *conn = us->s->conn;
	int ret;

	mpa_rx_wait_begin(conn);
	for (;;) {
		ret = wait_event_interruptible(us->wq, ddp_ev_ready(us) ||
					       mpa_rx_kicked(conn));
		if (ret || ddp_ev_ready(us))
			break;
		mpa_rx_run(conn);
	}
	mpa_rx_wait_end(conn);
	return ret;
}

static ssize_t ddp_stream_read(struct file *file, char __user *buf, size_t len,
			       loff_t *ppos)
{
	struct ddp_ustream *us = file->private_data;
	struct ddp_event ev;
	size_t done = 0;
	int ret;

	if (len < sizeof(ev))
		return -EINVAL;
	ddp_ustream_reclaim(us);
	while (done + sizeof(ev) <= len) {
		spin_lock_bh(&us->lock);
		if (us->ev_tail == us->ev_head) {
			spin_unlock_bh(&us->lock);
			if (done)
				break;
			if (file->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = ddp_stream_wait(us);
			if (ret)
				return ret;
			continue;
		}
		ev = us->ev[us->ev_head++ % DDP_EVQ_LEN];
		spin_unlock_bh(&us->lock);
		if (copy_to_user(buf + done, &ev, sizeof(ev)))
			return done ? done : -EFAULT;
		done += sizeof(ev);
	}
	return done;
}

static __poll_t ddp_stream_poll(struct file *file, poll_table *wait)
{
	struct ddp_ustream *us = file->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(file, &us->wq, wait);
	if (ddp_ev_ready(us))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* Pin the user's buffer and post its pages with ddp_post_recv_pages(). */
static long ddp_ioc_post_recv(struct ddp_ustream *us, void __user *arg)
{
	struct ddp_post_recv pr;
	struct ddp_upost *p;
	int ret;

	if (copy_from_user(&pr, arg, sizeof(pr)))
		return -EFAULT;
	if (pr.pad || pr.qn >= us->s->nqueues)
		return -EINVAL;
	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	ret = ddp_mem_pin(&p->mem, pr.addr, pr.len, true);
	if (ret) {
		kfree(p);
		return ret;
	}
	p->cookie = pr.cookie;
	ret = ddp_post_recv_pages(us->s, pr.qn, p->mem.pages, p->mem.npages,
				  p->mem.first, p->mem.len, (uintptr_t)p,
				  GFP_KERNEL_ACCOUNT);
	if (ret) {
		ddp_mem_release(&p->mem, false);
		kfree(p);
	}
	return ret;
}

/* one struct ddp_send, already copied from user space */
/* what DDP_IOC_SEND refuses before sending anything */
static int ddp_send_check(const struct ddp_ustream *us, const struct ddp_send *sd)
{
	if (sd->pad0 || memchr_inv(sd->pad, 0, sizeof(sd->pad)))
		return -EINVAL;
	if (sd->len > DDP_MAX_MSG_LEN - 1)
		return -EMSGSIZE;
	if (sd->flags & ~DDP_SEND_TAGGED)
		return -EINVAL;
	if (sd->flags & DDP_SEND_TAGGED)
		return memchr_inv(sd->rsvdulp + 1, 0, sizeof(sd->rsvdulp) - 1) ?
		       -EINVAL : 0;
	return sd->qn < us->s->nqueues ? 0 : -EINVAL;
}

static int ddp_send_one(struct ddp_ustream *us, const struct ddp_send *sd,
			bool more)
{
	struct ddp_msg msg;
	struct iov_iter it;
	struct iovec iov;
	int ret;

	ret = ddp_send_check(us, sd);
	if (ret)
		return ret;
	ret = iwarp_import_ubuf(ITER_SOURCE, u64_to_user_ptr(sd->addr), sd->len,
				&iov, &it);
	if (ret)
		return ret;
	if (iov_iter_count(&it) != sd->len)
		return -EMSGSIZE;
	msg = (struct ddp_msg){
		.tagged = sd->flags & DDP_SEND_TAGGED,
		.more = more,
		.qn = sd->qn,
		.stag = sd->stag,
		.to = sd->to,
	};
	memcpy(msg.rsvdulp, sd->rsvdulp, sizeof(msg.rsvdulp));
	return ddp_send_msg(us->s, &msg, &it);
}

static long ddp_ioc_send(struct ddp_ustream *us, void __user *arg)
{
	struct ddp_send sd;

	if (copy_from_user(&sd, arg, sizeof(sd)))
		return -EFAULT;
	return ddp_send_one(us, &sd, false);
}

/*
 * Many messages in one system call: for small messages the call, not
 * the data, is the cost. They go out in order; the first that fails
 * ends the batch, @done says how many went. A message is sent as one
 * that another follows at once (struct ddp_msg @more: trains and packed
 * small FPDUs across messages) only when the next entry was read and
 * passed the checks, so that a batch never ends with FPDUs waiting for a
 * message that will not come (a later failure in MPA pushes them too).
 */
static long ddp_ioc_send_batch(struct ddp_ustream *us, void __user *arg)
{
	struct ddp_send_batch __user *ub = arg;
	struct ddp_send_batch b;
	struct ddp_send __user *us_sd;
	struct ddp_send sd[2];
	int ret = 0, next_ret = 0;
	u32 i;

	if (copy_from_user(&b, ub, sizeof(b)))
		return -EFAULT;
	if (!b.count || b.count > DDP_SEND_BATCH_MAX)
		return -EINVAL;
	us_sd = u64_to_user_ptr(b.sends);
	if (copy_from_user(&sd[0], us_sd, sizeof(sd[0]))) {
		ret = -EFAULT;
		i = 0;
		goto out;
	}
	for (i = 0; i < b.count; i++) {
		struct ddp_send *cur = &sd[i & 1], *next = &sd[(i + 1) & 1];
		bool more = false;

		if (next_ret) {
			ret = next_ret;
			break;
		}
		if (i + 1 < b.count) {
			if (copy_from_user(next, us_sd + i + 1, sizeof(*next)))
				next_ret = -EFAULT;
			else
				next_ret = ddp_send_check(us, next);
			more = !next_ret;
		}
		ret = ddp_send_one(us, cur, more);
		if (ret)
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			i++;
			break;
		}
	}
out:
	if (put_user(i, &ub->done))
		return -EFAULT;
	return i == b.count ? 0 : ret;
}

static long ddp_stream_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ddp_ustream *us = file->private_data;
	void __user *uarg = (void __user *)arg;

	ddp_ustream_reclaim(us);
	switch (cmd) {
	case DDP_IOC_POST_RECV:
		return ddp_ioc_post_recv(us, uarg);
	case DDP_IOC_SEND:
		return ddp_ioc_send(us, uarg);
	case DDP_IOC_SEND_BATCH:
		return ddp_ioc_send_batch(us, uarg);
	case DDP_IOC_SHUTDOWN:
		return ddp_stream_shutdown(us->s);
	default:
		return -ENOTTY;
	}
}

/*
 * /proc/PID/fdinfo of a stream file: the stream and PD IDs (those of the
 * ddp tracepoints), the queues with their posted buffers and the MSN
 * expected next, the events waiting to be read.
 */
static void ddp_stream_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct ddp_ustream *us = file->private_data;
	struct ddp_stream *s = us->s;
	u32 posted[DDP_MAX_QUEUES], msn[DDP_MAX_QUEUES], pending, qn;
	u64 lost;

	spin_lock_bh(&s->lock);
	for (qn = 0; qn < s->nqueues; qn++) {
		posted[qn] = s->q[qn].nposted;
		msn[qn] = s->q[qn].head_msn;
	}
	spin_unlock_bh(&s->lock);
	spin_lock_bh(&us->lock);
	pending = us->ev_tail - us->ev_head;
	lost = us->ev_lost;
	spin_unlock_bh(&us->lock);

	seq_printf(m, "ddp-stream:\t%u\n", s->id);
	seq_printf(m, "ddp-pd:\t%u\n", s->pd->id);
	seq_printf(m, "ddp-version:\t%u\n", READ_ONCE(s->dv));
	seq_printf(m, "stopped:\t%u\n", READ_ONCE(s->stopped));
	seq_printf(m, "queues:\t%u\n", s->nqueues);
	for (qn = 0; qn < s->nqueues; qn++)
		seq_printf(m, "queue%u:\tposted %u msn %u\n", qn, posted[qn], msn[qn]);
	seq_printf(m, "events-pending:\t%u\n", pending);
	seq_printf(m, "events-lost:\t%llu\n", lost);
}

static const struct file_operations ddp_stream_fops = {
	.owner		= THIS_MODULE,
	.show_fdinfo	= ddp_stream_show_fdinfo,
	.release	= ddp_stream_file_release,
	.read		= ddp_stream_read,
	.poll		= ddp_stream_poll,
	.unlocked_ioctl	= ddp_stream_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static long ddp_ioc_bind(struct ddp_pd *pd, void __user *arg)
{
	struct ddp_ustream *us;
	struct socket *sock;
	struct ddp_bind b;
	struct file *f;
	int fd, ret;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.flags)
		return -EINVAL;
	sock = sockfd_lookup(b.sock_fd, &ret);
	if (!sock)
		return ret;
	us = ddp_ustream_alloc(sock);
	ret = -ENOMEM;
	if (!us)
		goto err_sock;
	fd = get_unused_fd_flags(O_CLOEXEC);
	ret = fd;
	if (fd < 0)
		goto err_us;
	/* the ring is in place: mpa_bind() may deliver at once */
	us->s = ddp_stream_bind(pd, sock, b.nqueues ? b.nqueues : DDP_DEFAULT_QUEUES,
				&ddp_user_ops, us);
	ret = PTR_ERR_OR_ZERO(us->s);
	if (ret)
		goto err_fd;
	f = anon_inode_getfile("[ddp-stream]", &ddp_stream_fops, us, O_RDWR);
	if (IS_ERR(f)) {
		ret = PTR_ERR(f);
		goto err_stream;
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

err_stream:
	ddp_stream_release(us->s, false);
err_fd:
	put_unused_fd(fd);
err_us:
	ddp_ustream_free(us);
err_sock:
	sockfd_put(sock);
	return ret;
}

/* Pin the user's buffer and register it as ddp_reg_pages() does. */
static long ddp_ioc_reg_mr(struct ddp_pd *pd, void __user *arg)
{
	struct ddp_stream *owner = NULL;
	struct ddp_reg_mr r;
	struct ddp_mem mem;
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
		owner = ((struct ddp_ustream *)iwarp_fd_file(f)->private_data)->s;
		if (owner->pd != pd) {
			fdput(f);
			return -EINVAL;
		}
	}
	/* only remote write needs the pages writable */
	ret = ddp_mem_pin(&mem, r.addr, r.len, r.access & DDP_ACCESS_REMOTE_WRITE);
	if (ret)
		goto out;
	ret = ddp_reg_mem(pd, owner, &mem, r.base_to, r.access, &r.stag);
	if (ret) {
		ddp_mem_release(&mem, false);
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

/*
 * /proc/PID/fdinfo of a PD file: its ID, its tagged buffers (those bound
 * to one of its streams too) and the user pages they keep pinned.
 */
static void ddp_pd_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct ddp_pd *pd = file->private_data;
	unsigned long idx, pinned = 0;
	struct ddp_mr *mr;
	u32 nmr = 0;

	xa_lock_bh(&pd->mrs);
	xa_for_each(&pd->mrs, idx, mr) {
		/* a spare of a stream, kept for its next Read */
		if (!READ_ONCE(mr->valid))
			continue;
		nmr++;
		if (mr->mem.mm)
			pinned += mr->mem.npages;
	}
	xa_unlock_bh(&pd->mrs);

	seq_printf(m, "ddp-pd:\t%u\n", pd->id);
	seq_printf(m, "mrs:\t%u\n", nmr);
	seq_printf(m, "pinned-pages:\t%lu\n", pinned);
}

static const struct file_operations ddp_pd_fops = {
	.owner		= THIS_MODULE,
	.show_fdinfo	= ddp_pd_show_fdinfo,
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

int ddp_cdev_init(void)
{
	return misc_register(&ddp_misc);
}

void ddp_cdev_exit(void)
{
	misc_deregister(&ddp_misc);
}
