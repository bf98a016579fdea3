// SPDX-License-Identifier: GPL-2.0
/*
 * rping over the kernel RDMAP: the protocol of rdma-core's rping -V
 * (the client advertises its start buffer in a Send, the server
 * RDMA-Reads it and sends a go-ahead, the client advertises its rdma
 * buffer, the server RDMA-Writes the data back and sends a go-ahead, the
 * client compares), spoken by rdmap.ko's queue pair on a socket on which
 * user space (tools/rdmap-peer --kernel) did or does the MPA startup.
 * For selftests/siw_interop.sh: rdmap.ko against Linux siw running the
 * stock rping. Driven through debugfs (rdmap_rping/ in the debugfs root):
 *
 *   ctl	write one command; the write fails with its errno.
 *	bind FD ROLE	ddp_pd_alloc() and rdmap_qp_create() on the writer's
 *			socket FD (IRD and ORD 4), ROLE initiator or
 *			responder; registers the start and the rdma buffer
 *			(DDP_ACCESS_REMOTE_WRITE and _READ, bound to the
 *			queue pair) and posts the receive buffers
 *	client COUNT SIZE	COUNT pings as rping's client, buffers of SIZE
 *			octets, then a graceful close of the sending half
 *	server COUNT SIZE	rping's server until the client closes, or
 *			COUNT pings when COUNT is not 0
 *	close		rdmap_qp_destroy() and ddp_pd_put()
 *   result	what the last command did, one line
 *
 * Every step of a loop waits at most RR_STEP_TIMEOUT (-ETIMEDOUT); a
 * Terminate, sent or received, ends it with -ECONNABORTED and its layer,
 * type and code in result. A queue pair the writer did not close is
 * destroyed when its ctl file is released.
 */
#include <linux/bits.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <net/ddp.h>
#include <net/rdmap.h>
#include <net/sock.h>

#define RR_BUF_ORDER	4	/* two buffers of 64 KiB */
#define RR_BUF_PAGES	BIT(RR_BUF_ORDER)
#define RR_BUF_LEN	(RR_BUF_PAGES * (u32)PAGE_SIZE)
#define RR_NBUF		2
#define RR_START	0	/* the start buffer (server: its sink) */
#define RR_RDMA		1	/* the client's rdma buffer */
#define RR_BASE_TO	0x100000ULL	/* buffer i at (i + 1) * RR_BASE_TO */
#define RR_NRECV	8	/* receive buffers, in one page */
#define RR_RECV_LEN	512
#define RR_INFO_LEN	16	/* struct rping_info */
#define RR_MIN_SIZE	16	/* rping's minimum: "rdma-ping-%d: " + 1 */
#define RR_IRD		4
#define RR_ORD		4
#define RR_NEV		32	/* events not consumed yet */
#define RR_STEP_TIMEOUT	(10 * HZ)
#define RR_RESULT_LEN	256

/**
 * struct rping_info - rping's struct rping_rdma_info, on the wire
 * @buf: the buffer's tagged offset
 * @rkey: its STag
 * @size: its length
 */
struct rping_info {
	__be64	buf;
	__be32	rkey;
	__be32	size;
};

/**
 * struct rr_state - the one queue pair and what it uses
 * @lock: serializes the commands
 * @qp: the queue pair, while bound
 * @pd: its PD
 * @sock: its socket (a reference on the writer's file)
 * @owner: the ctl file that bound it
 * @initiator: ROLE was initiator
 * @buf: the start and the rdma buffer, RR_BUF_PAGES pages each
 * @stag: their STags
 * @rpage: the receive buffers
 * @wq: the command waits here for an event
 * @ev_lock: protects the events and @result against the callback
 * @ev: events not consumed yet, a ring
 * @ev_head: oldest entry of @ev
 * @ev_count: entries in @ev
 * @lost: events that did not fit in @ev
 * @terminated: RDMAP_EV_TERMINATE came, in @term
 * @term: that event
 * @peer_closed: RDMAP_EV_PEER_CLOSED came
 * @result: what the last command did
 */
struct rr_state {
	struct mutex		lock;	/* the commands */
	struct rdmap_qp		*qp;
	struct ddp_pd		*pd;
	struct socket		*sock;
	struct file		*owner;
	bool			initiator;
	struct page		*buf[RR_NBUF];
	u32			stag[RR_NBUF];
	struct page		*rpage;
	wait_queue_head_t	wq;
	spinlock_t		ev_lock;	/* events, result */
	struct rdmap_event	ev[RR_NEV];
	u32			ev_head;
	u32			ev_count;
	u32			lost;
	bool			terminated;
	struct rdmap_event	term;
	bool			peer_closed;
	char			result[RR_RESULT_LEN];
};

static struct rr_state rr;
static struct dentry *rr_dir;

static __printf(1, 2) void rr_result(const char *fmt, ...)
{
	va_list args;

	spin_lock_bh(&rr.ev_lock);
	va_start(args, fmt);
	vscnprintf(rr.result, sizeof(rr.result), fmt, args);
	va_end(args);
	spin_unlock_bh(&rr.ev_lock);
}

static void rr_event(struct rdmap_qp *qp, const struct rdmap_event *ev)
{
	struct rr_state *st = rdmap_qp_priv(qp);

	spin_lock_bh(&st->ev_lock);
	switch (ev->type) {
	case RDMAP_EV_TERMINATE:
		if (!st->terminated) {
			st->terminated = true;
			st->term = *ev;
		}
		break;
	case RDMAP_EV_PEER_CLOSED:
		st->peer_closed = true;
		break;
	default:
		if (st->ev_count == RR_NEV) {
			st->lost++;
			break;
		}
		st->ev[(st->ev_head + st->ev_count++) % RR_NEV] = *ev;
	}
	spin_unlock_bh(&st->ev_lock);
	wake_up(&st->wq);
}

static const struct rdmap_qp_ops rr_ops = {
	.event = rr_event,
};

/* The peer closed its sending half: RDMAP said so, or TCP has the FIN. */
static bool rr_closed(struct rr_state *st)
{
	return READ_ONCE(st->peer_closed) ||
	       (READ_ONCE(st->sock->sk->sk_shutdown) & RCV_SHUTDOWN);
}

static bool rr_pending(struct rr_state *st)
{
	return READ_ONCE(st->ev_count) || READ_ONCE(st->terminated) ||
	       rr_closed(st);
}

/* The Terminate's numbers, in result. */
static int rr_terminated(struct rr_state *st, unsigned int ping)
{
	struct rdmap_event t;

	spin_lock_bh(&st->ev_lock);
	t = st->term;
	spin_unlock_bh(&st->ev_lock);
	rr_result("ping %u: Terminate %s: layer %u etype 0x%x ecode 0x%02x\n",
		  ping, t.remote ? "received" : "sent", t.layer, t.etype,
		  t.ecode);
	return -ECONNABORTED;
}

/**
 * rr_next() - the next event of the queue pair
 * @st: the state
 * @ev: the event, when 0 is returned
 * @ping: the iteration, for result
 * @what: what is awaited, for result
 *
 * Events received before the peer's close come first. The end of the
 * stream is not seen at once when TCP has the FIN but RDMAP did not say
 * so: the wait looks again every 100 ms.
 * Return: 0, 1 when the peer closed, -ECONNABORTED after a Terminate,
 * -ETIMEDOUT after RR_STEP_TIMEOUT, -EINTR on a signal.
 */
static int rr_next(struct rr_state *st, struct rdmap_event *ev,
		   unsigned int ping, const char *what)
{
	unsigned long end = jiffies + RR_STEP_TIMEOUT;
	long left, ret;
	bool got;

	for (;;) {
		spin_lock_bh(&st->ev_lock);
		if (st->terminated) {
			spin_unlock_bh(&st->ev_lock);
			return rr_terminated(st, ping);
		}
		got = st->ev_count;
		if (got) {
			*ev = st->ev[st->ev_head];
			st->ev_head = (st->ev_head + 1) % RR_NEV;
			st->ev_count--;
		}
		spin_unlock_bh(&st->ev_lock);
		if (got)
			return 0;
		if (rr_closed(st))
			return 1;
		left = (long)(end - jiffies);
		if (left <= 0) {
			rr_result("ping %u: timeout waiting for %s\n", ping, what);
			return -ETIMEDOUT;
		}
		ret = wait_event_interruptible_timeout(st->wq, rr_pending(st),
						       min_t(long, left, HZ / 10));
		if (ret < 0) {
			rr_result("ping %u: interrupted waiting for %s\n", ping,
				  what);
			return -EINTR;
		}
	}
}

static int rr_post(struct rr_state *st, u32 slot)
{
	return rdmap_post_recv(st->qp, &st->rpage, 1, slot * RR_RECV_LEN,
			       RR_RECV_LEN, slot, GFP_KERNEL);
}

/* An error of a send or post: the Terminate's numbers if there is one. */
static int rr_failed(struct rr_state *st, unsigned int ping, const char *what,
		     int ret)
{
	if (READ_ONCE(st->terminated))
		return rr_terminated(st, ping);
	rr_result("ping %u: %s: error %d\n", ping, what, ret);
	return ret;
}

/*
 * Wait for a Send of 16 octets, copy it to @info (may be NULL) and post
 * its buffer again. Return: 0, 1 when the peer closed first, or an errno.
 */
static int rr_wait_send(struct rr_state *st, struct rping_info *info,
			unsigned int ping, const char *what)
{
	struct rdmap_event ev;
	int ret;

	ret = rr_next(st, &ev, ping, what);
	if (ret)
		return ret;
	if (ev.type != RDMAP_EV_RECV || ev.cookie >= RR_NRECV) {
		rr_result("ping %u: event %u (cookie %llu) waiting for %s\n",
			  ping, ev.type, ev.cookie, what);
		return -EPROTO;
	}
	if (ev.len != RR_INFO_LEN) {
		rr_result("ping %u: %s: a Send of %u octets, not %u\n", ping,
			  what, ev.len, RR_INFO_LEN);
		return -EPROTO;
	}
	if (info)
		memcpy(info, page_address(st->rpage) + ev.cookie * RR_RECV_LEN,
		       sizeof(*info));
	ret = rr_post(st, ev.cookie);
	if (ret)
		return rr_failed(st, ping, "posting a receive buffer", ret);
	return 0;
}

static int rr_send(struct rr_state *st, const void *data, u32 len,
		   unsigned int ping)
{
	struct kvec kv = { .iov_base = (void *)data, .iov_len = len };
	struct iov_iter it;
	int ret;

	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	ret = rdmap_send(st->qp, RDMAP_WIRE_OP_SEND, 0, &it, 0);
	if (ret)
		return rr_failed(st, ping, "rdmap_send", ret);
	return 0;
}

static u64 rr_to(unsigned int i)
{
	return (i + 1) * RR_BASE_TO;
}

static void *rr_addr(struct rr_state *st, unsigned int i)
{
	return page_address(st->buf[i]);
}

/* The Send of rping_info for buffer @i. */
static int rr_adv(struct rr_state *st, unsigned int i, u32 size,
		  unsigned int ping)
{
	struct rping_info info = {
		.buf = cpu_to_be64(rr_to(i)),
		.rkey = cpu_to_be32(st->stag[i]),
		.size = cpu_to_be32(size),
	};

	return rr_send(st, &info, sizeof(info), ping);
}

/* rping's start buffer contents for iteration @ping */
static void rr_fill(char *buf, u32 size, unsigned int ping, u8 *start)
{
	u32 i;
	u8 c;
	int cc;

	cc = snprintf(buf, size, "rdma-ping-%u: ", ping);
	for (i = cc, c = *start; i < size; i++) {
		buf[i] = c;
		if (++c > 122)
			c = 65;
	}
	if (++*start > 122)
		*start = 65;
	buf[size - 1] = 0;
}

/* Close the sending half, then wait a while for the peer's close. */
static void rr_shutdown(struct rr_state *st)
{
	struct rdmap_event ev;
	int ret;

	kernel_sock_shutdown(st->sock, SHUT_WR);
	do {
		ret = rr_next(st, &ev, 0, "the peer's close");
	} while (!ret);
}

static int rr_client(struct rr_state *st, u32 count, u32 size)
{
	char *start = rr_addr(st, RR_START), *rdma = rr_addr(st, RR_RDMA);
	unsigned int ping;
	u8 c = 65;
	int ret;

	if (!count || size < RR_MIN_SIZE || size > RR_BUF_LEN)
		return -EINVAL;
	for (ping = 0; ping < count; ping++) {
		rr_fill(start, size, ping, &c);
		memset(rdma, 0, size);
		ret = rr_adv(st, RR_START, size, ping);
		if (ret)
			return ret;
		ret = rr_wait_send(st, NULL, ping, "the go-ahead after the RDMA Read");
		if (ret == 1)
			rr_result("ping %u: the server closed the stream\n", ping);
		if (ret)
			return ret == 1 ? -EPIPE : ret;
		ret = rr_adv(st, RR_RDMA, size, ping);
		if (ret)
			return ret;
		ret = rr_wait_send(st, NULL, ping, "the go-ahead after the RDMA Write");
		if (ret == 1)
			rr_result("ping %u: the server closed the stream\n", ping);
		if (ret)
			return ret == 1 ? -EPIPE : ret;
		if (memcmp(start, rdma, size)) {
			rr_result("ping %u: data mismatch\n", ping);
			return -EBADMSG;
		}
	}
	rr_shutdown(st);
	rr_result("rping client: %u pings verified, %u octets each\n", count,
		  size);
	return 0;
}

/* One ping of the server: Read the client's start buffer, Write it back. */
static int rr_serve(struct rr_state *st, const struct rping_info *adv,
		    u32 size, unsigned int ping)
{
	static const u8 goahead[RR_INFO_LEN];
	char *buf = rr_addr(st, RR_START);
	struct rdmap_read_wr wr = {
		.sink_stag = st->stag[RR_START],
		.sink_to = rr_to(RR_START),
		.src_stag = be32_to_cpu(adv->rkey),
		.src_to = be64_to_cpu(adv->buf),
		.len = be32_to_cpu(adv->size),
		.cookie = ping,
	};
	struct rping_info info;
	struct rdmap_event ev;
	struct iov_iter it;
	struct kvec kv;
	int ret;

	if (!wr.len || wr.len > size) {
		rr_result("ping %u: the client's buffer has %u octets, ours %u\n",
			  ping, wr.len, size);
		rdmap_terminate(st->qp, RDMAP_WIRE_LAYER_RDMAP,
				RDMAP_WIRE_ETYPE_OPERATION,
				RDMAP_WIRE_ECODE_UNSPECIFIED);
		return -EPROTO;
	}
	memset(buf, 0, size);
	ret = rdmap_read(st->qp, &wr, 0);
	if (ret)
		return rr_failed(st, ping, "rdmap_read", ret);
	ret = rr_next(st, &ev, ping, "the RDMA Read Response");
	if (ret == 1)
		rr_result("ping %u: the client closed before the Read Response\n",
			  ping);
	if (ret)
		return ret == 1 ? -EPIPE : ret;
	if (ev.type != RDMAP_EV_READ_DONE || ev.cookie != ping ||
	    ev.len != wr.len) {
		rr_result("ping %u: event %u (cookie %llu, %u octets) instead of READ_DONE\n",
			  ping, ev.type, ev.cookie, ev.len);
		return -EPROTO;
	}
	buf[size - 1] = 0;
	ret = rr_send(st, goahead, sizeof(goahead), ping);
	if (ret)
		return ret;

	ret = rr_wait_send(st, &info, ping, "the rdma buffer advertisement");
	if (ret == 1)
		rr_result("ping %u: the client closed the stream\n", ping);
	if (ret)
		return ret == 1 ? -EPIPE : ret;
	/* rping writes strlen + 1 octets back */
	kv.iov_base = buf;
	kv.iov_len = strlen(buf) + 1;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, kv.iov_len);
	ret = rdmap_write(st->qp, be32_to_cpu(info.rkey),
			  be64_to_cpu(info.buf), &it, 0);
	if (ret)
		return rr_failed(st, ping, "rdmap_write", ret);
	return rr_send(st, goahead, sizeof(goahead), ping);
}

static int rr_server(struct rr_state *st, u32 count, u32 size)
{
	struct rping_info adv;
	unsigned int ping;
	int ret;

	if (size < RR_MIN_SIZE || size > RR_BUF_LEN)
		return -EINVAL;
	for (ping = 0; !count || ping < count; ping++) {
		ret = rr_wait_send(st, &adv, ping,
				   "the start buffer advertisement");
		if (ret == 1)
			break;
		if (ret)
			return ret;
		ret = rr_serve(st, &adv, size, ping);
		if (ret)
			return ret;
	}
	if (count && ping == count) {
		/* the client closes after its last ping */
		ret = rr_wait_send(st, &adv, ping, "the client's close");
		if (!ret) {
			rr_result("rping server: more than %u pings\n", count);
			return -EPROTO;
		}
		if (ret < 0)
			return ret;
	}
	rr_result("rping server: %u pings (RDMA Read, RDMA Write), client closed\n",
		  ping);
	return 0;
}

static void rr_close(struct rr_state *st, bool abortive)
{
	rdmap_qp_destroy(st->qp, abortive);
	ddp_pd_put(st->pd);
	sockfd_put(st->sock);
	st->qp = NULL;
	st->pd = NULL;
	st->sock = NULL;
	st->owner = NULL;
}

static int rr_bind(struct rr_state *st, struct file *file, int fd,
		   const char *role)
{
	struct rdmap_qp_attr attr = { .ird = RR_IRD, .ord = RR_ORD };
	struct page *pages[RR_BUF_PAGES];
	struct socket *sock;
	struct ddp_pd *pd;
	unsigned int i, j;
	int ret;

	if (st->qp)
		return -EBUSY;
	if (strcmp(role, "initiator") && strcmp(role, "responder"))
		return -EINVAL;
	sock = sockfd_lookup(fd, &ret);
	if (!sock)
		return ret;
	pd = ddp_pd_alloc();
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto err_sock;
	}
	spin_lock_bh(&st->ev_lock);
	st->ev_head = 0;
	st->ev_count = 0;
	st->lost = 0;
	st->terminated = false;
	st->peer_closed = false;
	spin_unlock_bh(&st->ev_lock);
	st->sock = sock;
	st->qp = rdmap_qp_create(pd, sock, &attr, &rr_ops, st);
	if (IS_ERR(st->qp)) {
		ret = PTR_ERR(st->qp);
		st->qp = NULL;
		st->sock = NULL;
		ddp_pd_put(pd);
		goto err_sock;
	}
	st->pd = pd;
	st->owner = file;
	st->initiator = !strcmp(role, "initiator");
	for (i = 0; i < RR_NBUF; i++) {
		for (j = 0; j < RR_BUF_PAGES; j++)
			pages[j] = st->buf[i] + j;
		ret = ddp_reg_pages(pd, rdmap_qp_stream(st->qp), pages,
				    RR_BUF_PAGES, 0, RR_BUF_LEN, rr_to(i),
				    DDP_ACCESS_REMOTE_WRITE |
				    DDP_ACCESS_REMOTE_READ, &st->stag[i]);
		if (ret)
			goto err_qp;
	}
	for (i = 0; i < RR_NRECV; i++) {
		ret = rr_post(st, i);
		if (ret)
			goto err_qp;
	}
	rr_result("bound as %s: start STag 0x%08x TO 0x%llx, rdma STag 0x%08x TO 0x%llx\n",
		  role, st->stag[RR_START], rr_to(RR_START), st->stag[RR_RDMA],
		  rr_to(RR_RDMA));
	return 0;

err_qp:
	rr_close(st, true);
	return ret;

err_sock:
	sockfd_put(sock);
	return ret;
}

static int rr_cmd(struct rr_state *st, struct file *file, const char *cmd)
{
	char role[16];
	u32 a, b;
	int fd, ret;

	if (sscanf(cmd, "bind %d %15s", &fd, role) == 2)
		return rr_bind(st, file, fd, role);
	if (!st->qp)
		return -ENOTCONN;
	if (!strcmp(cmd, "close")) {
		rr_close(st, false);
		return 0;
	}
	if (sscanf(cmd, "client %u %u", &a, &b) == 2)
		ret = rr_client(st, a, b);
	else if (sscanf(cmd, "server %u %u", &a, &b) == 2)
		ret = rr_server(st, a, b);
	else
		return -EINVAL;
	if (READ_ONCE(st->lost)) {
		rr_result("%u events lost\n", READ_ONCE(st->lost));
		if (!ret)
			ret = -EOVERFLOW;
	}
	return ret;
}

static ssize_t rr_ctl_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char cmd[64];
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	strim(cmd);
	mutex_lock(&rr.lock);
	ret = rr_cmd(&rr, file, cmd);
	mutex_unlock(&rr.lock);
	return ret ? ret : len;
}

/* A queue pair its writer did not close (killed, say) goes with its file. */
static int rr_ctl_release(struct inode *inode, struct file *file)
{
	mutex_lock(&rr.lock);
	if (rr.qp && rr.owner == file)
		rr_close(&rr, true);
	mutex_unlock(&rr.lock);
	return 0;
}

static const struct file_operations rr_ctl_fops = {
	.owner		= THIS_MODULE,
	.open		= simple_open,
	.write		= rr_ctl_write,
	.release	= rr_ctl_release,
	.llseek		= noop_llseek,
};

static ssize_t rr_result_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[RR_RESULT_LEN];
	size_t n;

	spin_lock_bh(&rr.ev_lock);
	memcpy(buf, rr.result, sizeof(buf));
	spin_unlock_bh(&rr.ev_lock);
	n = strnlen(buf, sizeof(buf));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations rr_result_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= rr_result_read,
	.llseek	= default_llseek,
};

static void rr_free(void)
{
	unsigned int i;

	for (i = 0; i < RR_NBUF; i++)
		if (rr.buf[i])
			__free_pages(rr.buf[i], RR_BUF_ORDER);
	if (rr.rpage)
		__free_page(rr.rpage);
}

static int __init rr_init(void)
{
	unsigned int i;

	mutex_init(&rr.lock);
	spin_lock_init(&rr.ev_lock);
	init_waitqueue_head(&rr.wq);
	for (i = 0; i < RR_NBUF; i++)
		rr.buf[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, RR_BUF_ORDER);
	rr.rpage = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!rr.buf[RR_START] || !rr.buf[RR_RDMA] || !rr.rpage) {
		rr_free();
		return -ENOMEM;
	}
	rr_dir = debugfs_create_dir("rdmap_rping", NULL);
	debugfs_create_file("ctl", 0200, rr_dir, NULL, &rr_ctl_fops);
	debugfs_create_file("result", 0400, rr_dir, NULL, &rr_result_fops);
	return 0;
}

static void __exit rr_exit(void)
{
	debugfs_remove(rr_dir);
	if (rr.qp)
		rr_close(&rr, true);
	rr_free();
}

module_init(rr_init);
module_exit(rr_exit);

MODULE_DESCRIPTION("rping over the kernel RDMAP, for the siw interop selftest");
MODULE_LICENSE("GPL");
