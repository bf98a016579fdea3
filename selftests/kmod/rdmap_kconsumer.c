// SPDX-License-Identifier: GPL-2.0
/*
 * An RDMAP kernel consumer for the selftests: every export of
 * include/net/rdmap.h called from a module, driven by
 * selftests/rdmap_kconsumer through debugfs (rdmap_kconsumer/ in the
 * debugfs root). It manages three queue pairs, a, b and c, each on its
 * own socket and with its own PD: a and b the two ends of one MPA
 * connection, so that the kernel RDMAP talks to itself; c one end of
 * another, whose peer is the test's.
 *
 *   ctl	write one command; the write fails with the call's errno.
 *		Q is a, b or c.
 *	create Q FD IRD ORD	ddp_pd_alloc() and rdmap_qp_create() on the
 *			writer's socket FD
 *	reg Q ACCESS OWNED	ddp_reg_pages() of Q's tagged buffer with the
 *			DDP_ACCESS_* bits ACCESS, bound to rdmap_qp_stream()
 *			(OWNED 1) or to the PD (0)
 *	fill Q SEED	write rk_fill(SEED) into Q's whole tagged buffer
 *	post Q COOKIE	rdmap_post_recv() of Q's receive buffer
 *	send Q OP INVSTAG LEN SEED [NW]	rdmap_send() of LEN octets of
 *			rk_fill(), with MSG_DONTWAIT if NW is 1
 *	write Q STAG TO LEN SEED [NW]	rdmap_write() of LEN octets of rk_fill()
 *	read Q SINKSTAG SINKTO SRCSTAG SRCTO LEN COOKIE [NW]	rdmap_read()
 *	term Q LAYER ETYPE ECODE	rdmap_terminate()
 *	inval Q STAG	ddp_invalidate() on Q's PD
 *	destroy Q ABORT	rdmap_qp_destroy(), then ddp_pd_put()
 *	reclaim_destroy Q ABORT	the same in a worker of a WQ_MEM_RECLAIM
 *			workqueue (a kernel ULP's reset or release work);
 *			the write returns when it is done
 *	hold Q MS	own Q's socket (lock_sock()) for MS ms: what arrives
 *			meanwhile waits in its backlog
 *   Q/events	one line per event of Q's queue pair, in order
 *   Q/state	"stag=S lost=N": the last STag registered, events not logged
 *   Q/held	Y while a hold command owns Q's socket
 *   Q/tagged	Q's tagged buffer: RK_TAG_LEN octets from RK_TAG_FIRST
 *   Q/rbuf	Q's receive buffer: RK_RBUF_LEN octets from RK_RBUF_FIRST
 *
 * Both buffers are two pages, the payload starting inside the first
 * one, so that placement crosses a page boundary. The commands of one
 * queue pair are serialized; those of different ones are not, so that a
 * hold on one does not stop the other.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/ddp.h>
#include <net/rdmap.h>
#include <net/sock.h>

#define RK_TAG_FIRST	100
#define RK_TAG_LEN	6000
#define RK_BASE_TO	0x10000
#define RK_RBUF_FIRST	300
#define RK_RBUF_LEN	5000
#define RK_LOG_LEN	16384
#define RK_MAX_MSG	65536
#define RK_NQP		3

/**
 * struct rk_qp - one queue pair and what it uses
 * @name: "a", "b" or "c"
 * @lock: serializes the commands on this queue pair
 * @qp: the queue pair, while created
 * @pd: its PD
 * @sock: its socket (a reference on the writer's file)
 * @tag: the tagged buffer, two pages
 * @rbuf: the receive buffer, two pages
 * @stag: the last STag registered
 * @ev_lock: protects the log against the event callback
 * @log: the events, one line each
 * @log_len: octets in @log
 * @lost: events that did not fit
 * @tag_blob: debugfs view of @tag
 * @rbuf_blob: debugfs view of @rbuf
 * @dir: the debugfs directory of this queue pair
 * @held: a hold command owns the socket
 */
struct rk_qp {
	const char	*name;
	struct mutex	lock;	/* the commands */
	struct rdmap_qp	*qp;
	struct ddp_pd	*pd;
	struct socket	*sock;
	struct page	*tag;
	struct page	*rbuf;
	u32		stag;
	spinlock_t	ev_lock;	/* the log */
	char		*log;
	size_t		log_len;
	u32		lost;
	struct debugfs_blob_wrapper tag_blob;
	struct debugfs_blob_wrapper rbuf_blob;
	struct dentry	*dir;
	bool		held;
};

static struct rk_qp rk_qps[RK_NQP] = {
	{ .name = "a" },
	{ .name = "b" },
	{ .name = "c" },
};

static struct dentry *rk_dir;
/* a queue with a rescuer, as kernel ULPs' reset and release work has */
static struct workqueue_struct *rk_reclaim_wq;

static __printf(2, 3) void rk_log(struct rk_qp *q, const char *fmt, ...)
{
	va_list args;
	int n;

	spin_lock_bh(&q->ev_lock);
	va_start(args, fmt);
	n = vsnprintf(q->log + q->log_len, RK_LOG_LEN - q->log_len, fmt, args);
	va_end(args);
	if (q->log_len + n < RK_LOG_LEN) {
		q->log_len += n;
	} else {
		q->log[q->log_len] = '\0';
		q->lost++;
	}
	spin_unlock_bh(&q->ev_lock);
}

static void rk_event(struct rdmap_qp *qp, const struct rdmap_event *ev)
{
	struct rk_qp *q = rdmap_qp_priv(qp);

	switch (ev->type) {
	case RDMAP_EV_RECV:
		/* inv=0 for a plain Send (the kernel's %#x prints 0x0) */
		rk_log(q, "recv op=%u len=%u cookie=%llu inv=%s%x\n", ev->op,
		       ev->len, ev->cookie, ev->inv_stag ? "0x" : "",
		       ev->inv_stag);
		break;
	case RDMAP_EV_READ_DONE:
		rk_log(q, "read_done len=%u cookie=%llu\n", ev->len, ev->cookie);
		break;
	case RDMAP_EV_FLUSH:
		rk_log(q, "flush cookie=%llu\n", ev->cookie);
		break;
	case RDMAP_EV_READ_FLUSH:
		rk_log(q, "read_flush cookie=%llu\n", ev->cookie);
		break;
	case RDMAP_EV_TERMINATE:
		rk_log(q, "term remote=%d layer=%u etype=%u ecode=%u\n",
		       ev->remote, ev->layer, ev->etype, ev->ecode);
		break;
	case RDMAP_EV_PEER_CLOSED:
		rk_log(q, "peer_closed\n");
		break;
	default:
		rk_log(q, "unknown %u\n", ev->type);
	}
}

static const struct rdmap_qp_ops rk_ops = {
	.event = rk_event,
};

/* The octets of a send or write command; the test computes the same. */
static void rk_fill(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 7 + seed);
}

static int rk_create(struct rk_qp *q, int fd, u32 ird, u32 ord)
{
	struct rdmap_qp_attr attr = { .ird = ird, .ord = ord };
	struct rdmap_qp *qp;
	struct socket *sock;
	struct ddp_pd *pd;
	int ret;

	if (q->qp)
		return -EBUSY;
	sock = sockfd_lookup(fd, &ret);
	if (!sock)
		return ret;
	pd = ddp_pd_alloc();
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto err_sock;
	}
	spin_lock_bh(&q->ev_lock);
	q->log_len = 0;
	q->log[0] = '\0';
	q->lost = 0;
	spin_unlock_bh(&q->ev_lock);
	q->stag = 0;
	qp = rdmap_qp_create(pd, sock, &attr, &rk_ops, q);
	if (IS_ERR(qp)) {
		ret = PTR_ERR(qp);
		goto err_pd;
	}
	q->pd = pd;
	q->qp = qp;
	q->sock = sock;
	return 0;

err_pd:
	ddp_pd_put(pd);
err_sock:
	sockfd_put(sock);
	return ret;
}

static void rk_destroy(struct rk_qp *q, bool abortive)
{
	rdmap_qp_destroy(q->qp, abortive);
	ddp_pd_put(q->pd);
	sockfd_put(q->sock);
	q->qp = NULL;
	q->pd = NULL;
	q->sock = NULL;
}

/**
 * struct rk_destroy_work - rk_destroy() in a worker
 * @work: on rk_reclaim_wq
 * @q: the queue pair
 * @abortive: rk_destroy()'s
 */
struct rk_destroy_work {
	struct work_struct	work;
	struct rk_qp		*q;
	bool			abortive;
};

static void rk_destroy_fn(struct work_struct *work)
{
	struct rk_destroy_work *dw = container_of(work, struct rk_destroy_work,
						  work);

	rk_destroy(dw->q, dw->abortive);
}

/* rk_destroy() from rk_reclaim_wq; the caller holds @q->lock meanwhile */
static void rk_destroy_reclaim(struct rk_qp *q, bool abortive)
{
	struct rk_destroy_work dw = { .q = q, .abortive = abortive };

	INIT_WORK_ONSTACK(&dw.work, rk_destroy_fn);
	queue_work(rk_reclaim_wq, &dw.work);
	flush_work(&dw.work);
	destroy_work_on_stack(&dw.work);
}

/* The socket owned for @ms ms, as a task that holds it to send or read. */
static int rk_hold(struct rk_qp *q, u32 ms)
{
	struct sock *sk;

	if (ms > 5000)
		return -EINVAL;
	sk = q->sock->sk;
	lock_sock(sk);
	WRITE_ONCE(q->held, true);
	msleep(ms);
	WRITE_ONCE(q->held, false);
	release_sock(sk);
	return 0;
}

/* @len octets of rk_fill(@seed): a Send of opcode @op, or an RDMA Write. */
static int rk_xmit(struct rk_qp *q, bool write, u8 op, u32 stag, u64 to,
		   u32 len, u32 seed, int flags)
{
	struct iov_iter it;
	struct kvec kv;
	u8 *buf;
	int ret;

	if (len > RK_MAX_MSG)
		return -EMSGSIZE;
	buf = kvmalloc(len ? len : 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rk_fill(buf, len, seed);
	kv.iov_base = buf;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	if (write)
		ret = rdmap_write(q->qp, stag, to, &it, flags);
	else
		ret = rdmap_send(q->qp, op, stag, &it, flags);
	kvfree(buf);
	return ret;
}

/* The commands after the name of the queue pair, on a created one. */
static int rk_qp_cmd(struct rk_qp *q, const char *cmd)
{
	unsigned long long to, to2, cookie;
	struct rdmap_read_wr wr;
	struct page *pages[2];
	u32 a, b, c, d, nw = 0;

	if (sscanf(cmd, "reg %u %u", &a, &b) == 2) {
		pages[0] = q->tag;
		pages[1] = q->tag + 1;
		return ddp_reg_pages(q->pd, b ? rdmap_qp_stream(q->qp) : NULL,
				     pages, 2, RK_TAG_FIRST, RK_TAG_LEN,
				     RK_BASE_TO, a, &q->stag);
	}
	if (sscanf(cmd, "post %llu", &cookie) == 1) {
		pages[0] = q->rbuf;
		pages[1] = q->rbuf + 1;
		return rdmap_post_recv(q->qp, pages, 2, RK_RBUF_FIRST,
				       RK_RBUF_LEN, cookie, GFP_KERNEL);
	}
	if (sscanf(cmd, "send %u %u %u %u %u", &a, &b, &c, &d, &nw) >= 4) {
		if (a > U8_MAX || nw > 1)
			return -EINVAL;
		return rk_xmit(q, false, a, b, 0, c, d, nw ? MSG_DONTWAIT : 0);
	}
	if (sscanf(cmd, "write %u %llu %u %u %u", &a, &to, &c, &d, &nw) >= 4) {
		if (nw > 1)
			return -EINVAL;
		return rk_xmit(q, true, 0, a, to, c, d, nw ? MSG_DONTWAIT : 0);
	}
	if (sscanf(cmd, "read %u %llu %u %llu %u %llu %u", &a, &to, &b, &to2,
		   &c, &cookie, &nw) >= 6) {
		if (nw > 1)
			return -EINVAL;
		wr = (struct rdmap_read_wr) {
			.sink_stag = a,
			.sink_to = to,
			.src_stag = b,
			.src_to = to2,
			.len = c,
			.cookie = cookie,
		};
		return rdmap_read(q->qp, &wr, nw ? MSG_DONTWAIT : 0);
	}
	if (sscanf(cmd, "term %u %u %u", &a, &b, &c) == 3) {
		if (a > U8_MAX || b > U8_MAX || c > U8_MAX)
			return -EINVAL;
		return rdmap_terminate(q->qp, a, b, c);
	}
	if (sscanf(cmd, "inval %u", &a) == 1)
		return ddp_invalidate(q->pd, a);
	if (sscanf(cmd, "hold %u", &a) == 1)
		return rk_hold(q, a);
	if (sscanf(cmd, "destroy %u", &a) == 1) {
		rk_destroy(q, a);
		return 0;
	}
	if (sscanf(cmd, "reclaim_destroy %u", &a) == 1) {
		rk_destroy_reclaim(q, a);
		return 0;
	}
	return -EINVAL;
}

static int rk_cmd(struct rk_qp *q, const char *cmd)
{
	u32 a, b;
	int fd;

	if (sscanf(cmd, "create %d %u %u", &fd, &a, &b) == 3)
		return rk_create(q, fd, a, b);
	/* the buffer is not the queue pair's: filled also without one */
	if (sscanf(cmd, "fill %u", &a) == 1) {
		rk_fill(page_address(q->tag) + RK_TAG_FIRST, RK_TAG_LEN, a);
		return 0;
	}
	if (!q->qp)
		return -ENOTCONN;
	return rk_qp_cmd(q, cmd);
}

/* "VERB Q REST": the queue pair Q, and the command "VERB REST" in @out. */
static struct rk_qp *rk_parse(const char *cmd, char *out, size_t room)
{
	const char *sp = strchr(cmd, ' ');
	size_t vlen;
	int i;

	if (!sp || sp[1] == '\0' || (sp[2] != ' ' && sp[2] != '\0' &&
				     sp[2] != '\n'))
		return NULL;
	vlen = sp - cmd;
	if (vlen + strlen(sp + 2) + 1 > room)
		return NULL;
	for (i = 0; i < RK_NQP; i++) {
		if (sp[1] != rk_qps[i].name[0])
			continue;
		memcpy(out, cmd, vlen);
		strscpy(out + vlen, sp + 2, room - vlen);
		return &rk_qps[i];
	}
	return NULL;
}

static ssize_t rk_ctl_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char cmd[128], verb[128];
	struct rk_qp *q;
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	q = rk_parse(cmd, verb, sizeof(verb));
	if (!q)
		return -EINVAL;
	mutex_lock(&q->lock);
	ret = rk_cmd(q, verb);
	mutex_unlock(&q->lock);
	return ret ? ret : len;
}

static const struct file_operations rk_ctl_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= rk_ctl_write,
	.llseek	= noop_llseek,
};

static ssize_t rk_events_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct rk_qp *q = file->private_data;
	char *copy = kvmalloc(RK_LOG_LEN, GFP_KERNEL);
	size_t n;
	ssize_t ret;

	if (!copy)
		return -ENOMEM;
	spin_lock_bh(&q->ev_lock);
	n = q->log_len;
	memcpy(copy, q->log, n);
	spin_unlock_bh(&q->ev_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, copy, n);
	kvfree(copy);
	return ret;
}

static const struct file_operations rk_events_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= rk_events_read,
	.llseek	= default_llseek,
};

static ssize_t rk_state_read(struct file *file, char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct rk_qp *q = file->private_data;
	char buf[64];
	int n;

	n = scnprintf(buf, sizeof(buf), "stag=0x%08x lost=%u\n",
		      READ_ONCE(q->stag), READ_ONCE(q->lost));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations rk_state_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= rk_state_read,
	.llseek	= default_llseek,
};

static void rk_free(struct rk_qp *q)
{
	if (q->rbuf)
		__free_pages(q->rbuf, 1);
	if (q->tag)
		__free_pages(q->tag, 1);
	kvfree(q->log);
}

static int rk_init_qp(struct rk_qp *q)
{
	mutex_init(&q->lock);
	spin_lock_init(&q->ev_lock);
	q->log = kvzalloc(RK_LOG_LEN, GFP_KERNEL);
	q->tag = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
	q->rbuf = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
	if (!q->log || !q->tag || !q->rbuf) {
		rk_free(q);
		return -ENOMEM;
	}
	q->tag_blob.data = page_address(q->tag) + RK_TAG_FIRST;
	q->tag_blob.size = RK_TAG_LEN;
	q->rbuf_blob.data = page_address(q->rbuf) + RK_RBUF_FIRST;
	q->rbuf_blob.size = RK_RBUF_LEN;
	return 0;
}

static int __init rk_init(void)
{
	struct rk_qp *q;
	int i, ret;

	rk_reclaim_wq = alloc_workqueue("rk_reclaim", WQ_MEM_RECLAIM, 0);
	if (!rk_reclaim_wq)
		return -ENOMEM;
	for (i = 0; i < RK_NQP; i++) {
		ret = rk_init_qp(&rk_qps[i]);
		if (ret) {
			while (i--)
				rk_free(&rk_qps[i]);
			destroy_workqueue(rk_reclaim_wq);
			return ret;
		}
	}
	rk_dir = debugfs_create_dir("rdmap_kconsumer", NULL);
	debugfs_create_file("ctl", 0200, rk_dir, NULL, &rk_ctl_fops);
	for (i = 0; i < RK_NQP; i++) {
		q = &rk_qps[i];
		q->dir = debugfs_create_dir(q->name, rk_dir);
		debugfs_create_file("events", 0400, q->dir, q, &rk_events_fops);
		debugfs_create_file("state", 0400, q->dir, q, &rk_state_fops);
		debugfs_create_bool("held", 0400, q->dir, &q->held);
		debugfs_create_blob("tagged", 0400, q->dir, &q->tag_blob);
		debugfs_create_blob("rbuf", 0400, q->dir, &q->rbuf_blob);
	}
	return 0;
}

static void __exit rk_exit(void)
{
	struct rk_qp *q;
	int i;

	debugfs_remove(rk_dir);
	for (i = 0; i < RK_NQP; i++) {
		q = &rk_qps[i];
		if (q->qp)
			rk_destroy(q, false);
		rk_free(q);
	}
	destroy_workqueue(rk_reclaim_wq);
}

module_init(rk_init);
module_exit(rk_exit);

MODULE_DESCRIPTION("RDMAP kernel consumer for the selftests");
MODULE_LICENSE("GPL");
