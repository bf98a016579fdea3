// SPDX-License-Identifier: GPL-2.0
/*
 * mpa_echo: an in-kernel MPA consumer for the selftests. It exercises the
 * exported API of include/net/mpa.h the way a ULP such as DDP would:
 * mpa_register_consumer(), mpa_bind() and mpa_start() on a socket user
 * space hands over through /dev/mpa_echo (selftests/kmod/mpa_echo.h),
 * mpa_accept() or mpa_reject() on a Request, mpa_send() or mpa_sendv() to
 * send every ULPDU back, mpa_abort(), mpa_conn_info(), mpa_conn_mulpdu(),
 * mpa_conn_priv() and mpa_unbind(). Callbacks must not sleep, so answers
 * and echoes go out from a work item with MSG_DONTWAIT; write_space()
 * resumes them.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/mpa.h>

#include "mpa_echo.h"

#define MPA_ECHO_NAME	"mpa_echo"

struct mpa_echo_msg {
	struct list_head	list;
	u32			len;
	u8			data[];
};

/**
 * struct mpa_echo - one bound socket
 * @mutex: serialises the ioctls
 * @sock: the socket, with a reference on its file
 * @conn: its MPA connection, NULL before the bind
 * @mode: MPA_ECHO_*
 * @lock: protects @queue, @answer and @st against the callbacks
 * @queue: ULPDUs to echo, struct mpa_echo_msg
 * @answer: a Request waits for mpa_accept() or mpa_reject()
 * @st: counters for MPA_ECHO_IOC_STATUS
 * @work: answers and echoes
 */
struct mpa_echo {
	struct mutex		mutex;	/* see above */
	struct socket		*sock;
	struct mpa_conn		*conn;
	u32			mode;
	spinlock_t		lock;	/* see above */
	struct list_head	queue;
	bool			answer;
	struct mpa_echo_status	st;
	struct work_struct	work;
};

static struct mpa_echo *mpa_echo_get(struct mpa_conn *conn)
{
	return mpa_conn_priv(conn);
}

static void mpa_echo_keep_pd(struct mpa_echo *e, const void *pd, u16 pd_len)
{
	e->st.peer_pd_len = pd_len;
	memcpy(e->st.peer_pd, pd, min_t(u16, pd_len, MPA_ECHO_PD_MAX));
}

/* Queue @len octets to send; softirq or process context. */
static void mpa_echo_queue(struct mpa_echo *e, const void *data, u32 len)
{
	struct mpa_echo_msg *m = kmalloc(struct_size(m, data, len), GFP_ATOMIC);

	spin_lock_bh(&e->lock);
	if (m) {
		m->len = len;
		memcpy(m->data, data, len);
		list_add_tail(&m->list, &e->queue);
	} else {
		e->st.dropped++;
	}
	spin_unlock_bh(&e->lock);
	schedule_work(&e->work);
}

static void mpa_echo_request(struct mpa_conn *conn, const void *pd, u16 pd_len)
{
	struct mpa_echo *e = mpa_echo_get(conn);

	spin_lock_bh(&e->lock);
	e->st.requests++;
	mpa_echo_keep_pd(e, pd, pd_len);
	e->answer = true;
	spin_unlock_bh(&e->lock);
	schedule_work(&e->work);
}

static void mpa_echo_reply(struct mpa_conn *conn, bool rejected, const void *pd,
			   u16 pd_len)
{
	struct mpa_echo *e = mpa_echo_get(conn);

	spin_lock_bh(&e->lock);
	e->st.replies++;
	if (rejected)
		e->st.rejected++;
	mpa_echo_keep_pd(e, pd, pd_len);
	spin_unlock_bh(&e->lock);
	if (!rejected)
		mpa_echo_queue(e, MPA_ECHO_HELLO, sizeof(MPA_ECHO_HELLO) - 1);
}

static void mpa_echo_ulpdu(struct mpa_conn *conn, const void *data, u32 len)
{
	struct mpa_echo *e = mpa_echo_get(conn);

	spin_lock_bh(&e->lock);
	e->st.ulpdus++;
	spin_unlock_bh(&e->lock);
	mpa_echo_queue(e, data, len);
}

static void mpa_echo_error(struct mpa_conn *conn, u32 code)
{
	struct mpa_echo *e = mpa_echo_get(conn);

	spin_lock_bh(&e->lock);
	e->st.errors++;
	e->st.last_error = code;
	spin_unlock_bh(&e->lock);
}

static void mpa_echo_peer_closed(struct mpa_conn *conn)
{
	struct mpa_echo *e = mpa_echo_get(conn);

	spin_lock_bh(&e->lock);
	e->st.peer_closed++;
	spin_unlock_bh(&e->lock);
}

static void mpa_echo_write_space(struct mpa_conn *conn)
{
	struct mpa_echo *e = mpa_echo_get(conn);

	schedule_work(&e->work);
}

static struct mpa_consumer mpa_echo_consumer = {
	.name		= MPA_ECHO_NAME,
	.owner		= THIS_MODULE,
	.request	= mpa_echo_request,
	.reply		= mpa_echo_reply,
	.ulpdu		= mpa_echo_ulpdu,
	.error		= mpa_echo_error,
	.peer_closed	= mpa_echo_peer_closed,
	.write_space	= mpa_echo_write_space,
};

/* MPA_ECHO_MSG: a message being sent, cut by MPA */
struct mpa_echo_tx {
	u32	off;
	u32	left;
	bool	fail;
};

static int mpa_echo_next(void *ctx, void *hdr, u32 max_data, bool *last)
{
	struct mpa_echo_tx *t = ctx;
	struct mpa_echo_msg_hdr *h = hdr;
	u32 len = min(t->left, max_data);

	if (t->fail && t->off)
		return -ENOBUFS;
	*last = len == t->left;
	h->off = cpu_to_be32(t->off);
	h->len = cpu_to_be32(len | (*last ? MPA_ECHO_MSG_LAST : 0));
	t->off += len;
	t->left -= len;
	return len;
}

static bool mpa_echo_starts(const struct mpa_echo_msg *m, const char *s)
{
	return m->len >= strlen(s) && !memcmp(m->data, s, strlen(s));
}

/* the ULPDU back as a message of ULPDUs that MPA cuts */
static int mpa_echo_send_msg(struct mpa_echo *e, struct mpa_echo_msg *m)
{
	struct mpa_echo_tx t = {
		.left = m->len, .fail = mpa_echo_starts(m, MPA_ECHO_MSG_FAIL),
	};
	struct mpa_msg msg = {
		.hdr_len = sizeof(struct mpa_echo_msg_hdr),
		.next = mpa_echo_next,
		.ctx = &t,
	};
	struct kvec vec = { .iov_base = m->data, .iov_len = m->len };
	struct iov_iter it;
	int ret;

	if (mpa_echo_starts(m, MPA_ECHO_MSG_BIGHDR))
		msg.hdr_len = MPA_MSG_HDR_MAX + 1;
	iov_iter_kvec(&it, ITER_SOURCE, &vec, 1, m->len);
	mpa_send_begin(e->conn);
	ret = mpa_send_msg_locked(e->conn, &msg, &it, 0);
	mpa_send_end(e->conn);
	return ret ? ret : m->len;
}

/* One ULPDU back: as two kvecs, or as a header and an iterator. */
static int mpa_echo_send(struct mpa_echo *e, struct mpa_echo_msg *m)
{
	u32 half = m->len / 2, hdr_len = min_t(u32, m->len, 4);
	struct kvec vec[2] = {
		{ .iov_base = m->data, .iov_len = half },
		{ .iov_base = m->data + half, .iov_len = m->len - half },
	};
	struct iov_iter it;

	if (e->mode & MPA_ECHO_MSG)
		return mpa_echo_send_msg(e, m);
	if (!(e->mode & MPA_ECHO_SENDV))
		return mpa_send(e->conn, vec, 2, m->len, MSG_DONTWAIT);
	vec[0].iov_base = m->data + hdr_len;
	vec[0].iov_len = m->len - hdr_len;
	iov_iter_kvec(&it, ITER_SOURCE, vec, 1, m->len - hdr_len);
	return mpa_sendv(e->conn, m->data, hdr_len, &it, m->len - hdr_len,
			 MSG_DONTWAIT);
}

static void mpa_echo_work(struct work_struct *work)
{
	struct mpa_echo *e = container_of(work, struct mpa_echo, work);
	struct mpa_echo_msg *m;
	bool answer;
	int ret;

	spin_lock_bh(&e->lock);
	answer = e->answer;
	e->answer = false;
	spin_unlock_bh(&e->lock);
	if (answer) {
		if (e->mode & MPA_ECHO_REJECT)
			ret = mpa_reject(e->conn, MPA_ECHO_REJECT_PD,
					 sizeof(MPA_ECHO_REJECT_PD) - 1);
		else
			ret = mpa_accept(e->conn, MPA_ECHO_ACCEPT_PD,
					 sizeof(MPA_ECHO_ACCEPT_PD) - 1);
		spin_lock_bh(&e->lock);
		e->st.answer_err = ret;
		spin_unlock_bh(&e->lock);
	}
	for (;;) {
		spin_lock_bh(&e->lock);
		m = list_first_entry_or_null(&e->queue, struct mpa_echo_msg, list);
		spin_unlock_bh(&e->lock);
		if (!m)
			return;
		ret = mpa_echo_send(e, m);
		/* write_space() schedules the work again */
		if (ret == -EAGAIN)
			return;
		spin_lock_bh(&e->lock);
		list_del(&m->list);
		if (ret == m->len)
			e->st.echoed++;
		else
			e->st.send_err = ret;
		spin_unlock_bh(&e->lock);
		kfree(m);
	}
}

static int mpa_echo_bind(struct mpa_echo *e, void __user *arg)
{
	struct mpa_start_params p = {};
	struct mpa_echo_bind b;
	struct mpa_conn *conn;
	struct socket *sock;
	int ret;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.pd_len > MPA_ECHO_PD_MAX)
		return -EINVAL;
	if (e->conn)
		return -EBUSY;
	sock = sockfd_lookup(b.fd, &ret);
	if (!sock)
		return ret;
	conn = mpa_bind(sock, MPA_ECHO_NAME, e);
	if (IS_ERR(conn)) {
		sockfd_put(sock);
		return PTR_ERR(conn);
	}
	e->sock = sock;
	e->conn = conn;
	e->mode = b.mode;
	p.role = b.role;
	p.flags = b.flags;
	p.rev = b.rev;
	p.pd = b.pd;
	p.pd_len = b.pd_len;
	return mpa_start(conn, &p);
}

static int mpa_echo_status(struct mpa_echo *e, void __user *arg)
{
	struct mpa_conn_attrs attrs;
	struct mpa_echo_status st;

	if (!e->conn)
		return -ENOTCONN;
	mpa_conn_info(e->conn, &attrs);
	spin_lock_bh(&e->lock);
	st = e->st;
	spin_unlock_bh(&e->lock);
	st.state = attrs.state;
	st.rev = attrs.rev;
	st.mulpdu = mpa_conn_mulpdu(e->conn);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static int mpa_echo_get_info(struct mpa_conn *conn, struct sk_buff *skb)
{
	return 0;
}

/* MPA_ECHO_IOC_REGISTER: what mpa_register_consumer() accepts */
static int mpa_echo_try_register(void __user *arg)
{
	struct mpa_echo_register r;
	struct mpa_consumer *c;
	int ret;

	BUILD_BUG_ON(MPA_ECHO_INFO_MAX != MPA_CONSUMER_INFO_MAX);
	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (r.pad[0] || r.pad[1] || !memchr(r.name, 0, sizeof(r.name)))
		return -EINVAL;
	c = kmemdup(&mpa_echo_consumer, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->name = r.name;
	c->info_size = r.info_size;
	c->get_info = r.get_info ? mpa_echo_get_info : NULL;
	ret = mpa_register_consumer(c);
	if (!ret)
		mpa_unregister_consumer(c);
	kfree(c);
	return ret;
}

static long mpa_echo_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct mpa_echo *e = file->private_data;
	int ret, err;

	mutex_lock(&e->mutex);
	switch (cmd) {
	case MPA_ECHO_IOC_BIND:
		ret = mpa_echo_bind(e, (void __user *)arg);
		break;
	case MPA_ECHO_IOC_STATUS:
		ret = mpa_echo_status(e, (void __user *)arg);
		break;
	case MPA_ECHO_IOC_ABORT:
		ret = get_user(err, (int __user *)arg);
		if (!ret && (err <= 0 || err >= MAX_ERRNO))
			ret = -EINVAL;
		else if (!ret && !e->conn)
			ret = -ENOTCONN;
		if (!ret)
			mpa_abort(e->conn, err);
		break;
	case MPA_ECHO_IOC_REGISTER:
		ret = mpa_echo_try_register((void __user *)arg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&e->mutex);
	return ret;
}

static int mpa_echo_open(struct inode *inode, struct file *file)
{
	struct mpa_echo *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (!e)
		return -ENOMEM;
	mutex_init(&e->mutex);
	spin_lock_init(&e->lock);
	INIT_LIST_HEAD(&e->queue);
	INIT_WORK(&e->work, mpa_echo_work);
	file->private_data = e;
	return 0;
}

static int mpa_echo_release(struct inode *inode, struct file *file)
{
	struct mpa_echo *e = file->private_data;
	struct mpa_echo_msg *m, *tmp;

	/* no callback after the unbind, so nothing schedules the work */
	if (e->conn)
		mpa_unbind(e->conn);
	cancel_work_sync(&e->work);
	list_for_each_entry_safe(m, tmp, &e->queue, list)
		kfree(m);
	if (e->sock)
		sockfd_put(e->sock);
	kfree(e);
	return 0;
}

static const struct file_operations mpa_echo_fops = {
	.owner		= THIS_MODULE,
	.open		= mpa_echo_open,
	.release	= mpa_echo_release,
	.unlocked_ioctl	= mpa_echo_ioctl,
};

static struct miscdevice mpa_echo_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= MPA_ECHO_NAME,
	.fops	= &mpa_echo_fops,
	.mode	= 0600,
};

static int __init mpa_echo_init(void)
{
	int ret = mpa_register_consumer(&mpa_echo_consumer);

	if (ret)
		return ret;
	ret = misc_register(&mpa_echo_dev);
	if (ret)
		mpa_unregister_consumer(&mpa_echo_consumer);
	return ret;
}

static void __exit mpa_echo_exit(void)
{
	misc_deregister(&mpa_echo_dev);
	mpa_unregister_consumer(&mpa_echo_consumer);
}

module_init(mpa_echo_init);
module_exit(mpa_echo_exit);

MODULE_DESCRIPTION("Selftest consumer of the MPA in-kernel API: an echo ULP");
MODULE_LICENSE("GPL");
