// SPDX-License-Identifier: GPL-2.0
/*
 * A DDP kernel ULP for the selftests: every export of include/net/ddp.h
 * called from a module, driven by selftests/ddp_kconsumer through
 * debugfs (ddp_kconsumer/ in the debugfs root):
 *
 *   ctl	write one command; the write fails with the call's errno
 *	bind FD NQ	ddp_pd_alloc() and ddp_stream_bind() on the writer's
 *			socket FD with NQ untagged queues
 *	reg OWNED ACCESS	ddp_reg_pages() of the tagged buffer, bound to
 *			the stream (OWNED 1) or the PD (0)
 *	post QN COOKIE	ddp_post_recv_pages() of the untagged buffer
 *	keep QN		ddp_queue_keep()
 *	repost QN	ddp_repost()
 *	send QN LEN SEED	ddp_send_msg(), untagged, LEN octets of kc_fill()
 *	sendt STAG TO LEN SEED	ddp_send_msg(), tagged
 *	inval STAG	ddp_invalidate()
 *	rsv		ddp_stag_reserve(): the STag in state
 *	regat STAG ACCESS	ddp_reg_pages_at() of the tagged buffer
 *	unrsv STAG	ddp_stag_release()
 *	release ABORT	ddp_stream_release(), then ddp_pd_put()
 *	hold MS		own the bound socket (lock_sock()) for MS ms: what
 *			arrives meanwhile waits in its backlog
 *   state	"stag=S lost=N": the last STag registered, events not logged
 *   held	Y while a hold command owns the socket
 *   events	one line per event the stream reported, in order
 *   tagged	the tagged buffer: KC_TAG_LEN octets from KC_TAG_FIRST
 *   untagged	the posted buffer: KC_RBUF_LEN octets from KC_RBUF_FIRST
 *
 * Both buffers are two pages, the payload starting inside the first
 * one, so that placement crosses a page boundary.
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
#include <linux/vmalloc.h>
#include <net/ddp.h>
#include <net/sock.h>

#define KC_TAG_FIRST	100
#define KC_TAG_LEN	6000
#define KC_BASE_TO	0x10000
#define KC_RBUF_FIRST	300
#define KC_RBUF_LEN	5000
#define KC_LOG_LEN	16384
#define KC_MAX_MSG	65536

/**
 * struct kc - the one consumer
 * @lock: serializes the commands
 * @pd: the PD, while bound
 * @s: the stream, while bound
 * @sock: its socket (a reference on the writer's file)
 * @tag: the tagged buffer, two pages
 * @rbuf: the posted buffer, two pages
 * @stag: the last STag registered
 * @ev_lock: protects the log against the event callback
 * @log: the events, one line each
 * @log_len: octets in @log
 * @lost: events that did not fit
 * @tag_blob: debugfs view of @tag
 * @rbuf_blob: debugfs view of @rbuf
 * @dir: the debugfs directory
 * @held: a hold command owns the socket
 */
struct kc {
	struct mutex	lock;	/* the commands */
	struct ddp_pd	*pd;
	struct ddp_stream *s;
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

static struct kc kc;

static __printf(2, 3) void kc_log(struct kc *k, const char *fmt, ...)
{
	va_list args;
	int n;

	spin_lock_bh(&k->ev_lock);
	va_start(args, fmt);
	n = vsnprintf(k->log + k->log_len, KC_LOG_LEN - k->log_len, fmt, args);
	va_end(args);
	if (k->log_len + n < KC_LOG_LEN) {
		k->log_len += n;
	} else {
		k->log[k->log_len] = '\0';
		k->lost++;
	}
	spin_unlock_bh(&k->ev_lock);
}

static void kc_event(struct ddp_stream *s, const struct ddp_stream_event *ev)
{
	struct kc *k = ddp_stream_priv(s);

	switch (ev->type) {
	case DDP_EV_RECV:
		kc_log(k, "recv qn=%u msn=%u len=%u cookie=%llu rsvdulp=%5phN\n",
		       ev->qn, ev->msn, ev->len, ev->cookie, ev->rsvdulp);
		break;
	case DDP_EV_TAGGED:
		kc_log(k, "tagged stag=%u to=%llu len=%u rsvdulp=%02x\n",
		       ev->stag, ev->to, ev->len, ev->rsvdulp[0]);
		break;
	case DDP_EV_ERROR:
		kc_log(k, "error type=%u code=%u len=%u hdr=%*phN\n",
		       ev->err_type, ev->err_code, ev->len, ev->hdr_len, ev->hdr);
		break;
	case DDP_EV_FLUSH:
		kc_log(k, "flush qn=%u cookie=%llu\n", ev->qn, ev->cookie);
		break;
	case DDP_EV_PEER_CLOSED:
		kc_log(k, "closed\n");
		break;
	default:
		kc_log(k, "unknown %u\n", ev->type);
	}
}

static const struct ddp_stream_ops kc_ops = {
	.event = kc_event,
};

/* The message of a send command; the test computes the same octets. */
static void kc_fill(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 7 + seed);
}

static int kc_bind(struct kc *k, int fd, u32 nq)
{
	struct ddp_stream *s;
	struct socket *sock;
	struct ddp_pd *pd;
	int ret;

	if (k->s)
		return -EBUSY;
	sock = sockfd_lookup(fd, &ret);
	if (!sock)
		return ret;
	pd = ddp_pd_alloc();
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto err_sock;
	}
	spin_lock_bh(&k->ev_lock);
	k->log_len = 0;
	k->log[0] = '\0';
	k->lost = 0;
	spin_unlock_bh(&k->ev_lock);
	s = ddp_stream_bind(pd, sock, nq, &kc_ops, k);
	if (IS_ERR(s)) {
		ret = PTR_ERR(s);
		goto err_pd;
	}
	k->pd = pd;
	k->s = s;
	k->sock = sock;
	return 0;

err_pd:
	ddp_pd_put(pd);
err_sock:
	sockfd_put(sock);
	return ret;
}

static void kc_release(struct kc *k, bool abortive)
{
	ddp_stream_release(k->s, abortive);
	ddp_pd_put(k->pd);
	sockfd_put(k->sock);
	k->s = NULL;
	k->pd = NULL;
	k->sock = NULL;
}

/* The socket owned for @ms ms, as a task that holds it to send or read. */
static int kc_hold(struct kc *k, u32 ms)
{
	struct sock *sk;

	if (!k->s)
		return -ENOTCONN;
	if (ms > 5000)
		return -EINVAL;
	sk = k->sock->sk;
	lock_sock(sk);
	WRITE_ONCE(k->held, true);
	msleep(ms);
	WRITE_ONCE(k->held, false);
	release_sock(sk);
	return 0;
}

static int kc_send(struct kc *k, bool tagged, u32 qn, u32 stag, u64 to,
		   u32 len, u32 seed)
{
	struct ddp_msg msg = {
		.tagged = tagged,
		.qn = qn,
		.stag = stag,
		.to = to,
		.rsvdulp = { tagged ? 0x40 : 0x43, 1, 2, 3, 4 },
	};
	struct iov_iter it;
	struct kvec kv;
	u8 *buf;
	int ret;

	if (len > KC_MAX_MSG)
		return -EMSGSIZE;
	if (tagged)
		memset(msg.rsvdulp + 1, 0, sizeof(msg.rsvdulp) - 1);
	buf = kvmalloc(len ? len : 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	kc_fill(buf, len, seed);
	kv.iov_base = buf;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	ret = ddp_send_msg(k->s, &msg, &it);
	kvfree(buf);
	return ret;
}

static int kc_cmd(struct kc *k, const char *cmd)
{
	struct page *pages[2];
	unsigned long long to;
	u32 a, b, c, d;
	int fd;

	if (sscanf(cmd, "bind %d %u", &fd, &a) == 2)
		return kc_bind(k, fd, a);
	if (!k->s)
		return -ENOTCONN;
	if (sscanf(cmd, "reg %u %u", &a, &b) == 2) {
		pages[0] = k->tag;
		pages[1] = k->tag + 1;
		return ddp_reg_pages(k->pd, a ? k->s : NULL, pages, 2,
				     KC_TAG_FIRST, KC_TAG_LEN, KC_BASE_TO, b,
				     &k->stag);
	}
	if (sscanf(cmd, "post %u %u", &a, &b) == 2) {
		pages[0] = k->rbuf;
		pages[1] = k->rbuf + 1;
		return ddp_post_recv_pages(k->s, a, pages, 2, KC_RBUF_FIRST,
					   KC_RBUF_LEN, b, GFP_KERNEL);
	}
	if (sscanf(cmd, "keep %u", &a) == 1)
		return ddp_queue_keep(k->s, a);
	if (sscanf(cmd, "repost %u", &a) == 1)
		return ddp_repost(k->s, a);
	if (sscanf(cmd, "send %u %u %u", &a, &b, &c) == 3)
		return kc_send(k, false, a, 0, 0, b, c);
	if (sscanf(cmd, "sendt %u %llu %u %u", &a, &to, &c, &d) == 4)
		return kc_send(k, true, 0, a, to, c, d);
	if (sscanf(cmd, "hold %u", &a) == 1)
		return kc_hold(k, a);
	if (sscanf(cmd, "inval %u", &a) == 1)
		return ddp_invalidate(k->pd, a);
	if (sysfs_streq(cmd, "rsv"))
		return ddp_stag_reserve(k->pd, &k->stag);
	if (sscanf(cmd, "regat %u %u", &a, &b) == 2) {
		pages[0] = k->tag;
		pages[1] = k->tag + 1;
		return ddp_reg_pages_at(k->pd, pages, 2, KC_TAG_FIRST,
					KC_TAG_LEN, KC_BASE_TO, b, a);
	}
	if (sscanf(cmd, "unrsv %u", &a) == 1) {
		ddp_stag_release(k->pd, a);
		return 0;
	}
	if (sscanf(cmd, "release %u", &a) == 1) {
		kc_release(k, a);
		return 0;
	}
	return -EINVAL;
}

static ssize_t kc_ctl_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char cmd[96];
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	mutex_lock(&kc.lock);
	ret = kc_cmd(&kc, cmd);
	mutex_unlock(&kc.lock);
	return ret ? ret : len;
}

static const struct file_operations kc_ctl_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= kc_ctl_write,
	.llseek	= noop_llseek,
};

static ssize_t kc_events_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char *copy = kvmalloc(KC_LOG_LEN, GFP_KERNEL);
	size_t n;
	ssize_t ret;

	if (!copy)
		return -ENOMEM;
	spin_lock_bh(&kc.ev_lock);
	n = kc.log_len;
	memcpy(copy, kc.log, n);
	spin_unlock_bh(&kc.ev_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, copy, n);
	kvfree(copy);
	return ret;
}

static const struct file_operations kc_events_fops = {
	.owner	= THIS_MODULE,
	.read	= kc_events_read,
	.llseek	= default_llseek,
};

static ssize_t kc_state_read(struct file *file, char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	char buf[64];
	int n;

	mutex_lock(&kc.lock);
	n = scnprintf(buf, sizeof(buf), "stag=%u lost=%u\n", kc.stag,
		      READ_ONCE(kc.lost));
	mutex_unlock(&kc.lock);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations kc_state_fops = {
	.owner	= THIS_MODULE,
	.read	= kc_state_read,
	.llseek	= default_llseek,
};

static int __init kc_init(void)
{
	mutex_init(&kc.lock);
	spin_lock_init(&kc.ev_lock);
	kc.log = kvzalloc(KC_LOG_LEN, GFP_KERNEL);
	kc.tag = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
	kc.rbuf = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
	if (!kc.log || !kc.tag || !kc.rbuf)
		goto err;
	kc.tag_blob.data = page_address(kc.tag) + KC_TAG_FIRST;
	kc.tag_blob.size = KC_TAG_LEN;
	kc.rbuf_blob.data = page_address(kc.rbuf) + KC_RBUF_FIRST;
	kc.rbuf_blob.size = KC_RBUF_LEN;
	kc.dir = debugfs_create_dir("ddp_kconsumer", NULL);
	debugfs_create_file("ctl", 0200, kc.dir, NULL, &kc_ctl_fops);
	debugfs_create_file("events", 0400, kc.dir, NULL, &kc_events_fops);
	debugfs_create_file("state", 0400, kc.dir, NULL, &kc_state_fops);
	debugfs_create_bool("held", 0400, kc.dir, &kc.held);
	debugfs_create_blob("tagged", 0400, kc.dir, &kc.tag_blob);
	debugfs_create_blob("untagged", 0400, kc.dir, &kc.rbuf_blob);
	return 0;

err:
	if (kc.rbuf)
		__free_pages(kc.rbuf, 1);
	if (kc.tag)
		__free_pages(kc.tag, 1);
	kvfree(kc.log);
	return -ENOMEM;
}

static void __exit kc_exit(void)
{
	debugfs_remove(kc.dir);
	if (kc.s)
		kc_release(&kc, false);
	__free_pages(kc.rbuf, 1);
	__free_pages(kc.tag, 1);
	kvfree(kc.log);
}

module_init(kc_init);
module_exit(kc_exit);

MODULE_DESCRIPTION("DDP kernel consumer for the selftests");
MODULE_LICENSE("GPL");
