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
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "ddp.h"

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
	ret = import_single_range(ITER_SOURCE, u64_to_user_ptr(sd.addr), sd.len,
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
		if (!f.file || f.file->f_op != &ddp_stream_fops) {
			fdput(f);
			return -EBADF;
		}
		owner = f.file->private_data;
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

int ddp_cdev_init(void)
{
	return misc_register(&ddp_misc);
}

void ddp_cdev_exit(void)
{
	misc_deregister(&ddp_misc);
}
