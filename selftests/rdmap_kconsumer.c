// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel RDMAP API, driven through
 * selftests/kmod/rdmap_kconsumer.ko (make test-modules): two kernel queue
 * pairs, a on the Initiator end (fds[0]) and b on the Responder end
 * (fds[1]) of one MPA connection over loopback, so that the kernel RDMAP
 * talks to itself: Sends of the four kinds, RDMA Write, RDMA Read with
 * its ORD limit, the errors that terminate the stream, the consumer's
 * Terminate and the teardown. One test puts a raw RDMAP peer in user
 * space (/dev/ddp) on the Initiator end and checks the Terminate octets
 * the kernel RDMAP sends. The transmit threads: rdmap.ko loaded with CPU
 * 1 offline, Reads answered while CPU 1 goes offline and back, and a
 * third queue pair, c, on a connection of its own whose peer (the test's
 * MPA socket) stops reading, which does not hold up b; the same peer
 * sends c rounds of Read Requests as many as its IRD, which find the
 * slots the round before freed posted again. Read Responses sent from
 * the receive path of their request (rdmap's rx_answer) are counted by
 * MPA (MpaTxFromRx) and wake no thread. Every test checks
 * the exact events of both queue pairs, the exact octets placed (and
 * nothing else: the buffers start zeroed) and the errnos of the calls,
 * which the module's ctl file returns from write(). The Initiator sends
 * first (RFC 5044 7.1.2 rule 4). Needs mpa.ko and ddp.ko loaded; loads
 * rdmap.ko if it is not, and loads and unloads the consumer.
 */
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <libgen.h>
#include <pthread.h>
#include <linux/sockios.h>

#include <linux/iwarp_wire.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"
#include "kmod_util.h"

#define RK_DIR		"/sys/kernel/debug/rdmap_kconsumer"
/* as in kmod/rdmap_kconsumer.c */
#define RK_TAG_LEN	6000
#define RK_BASE_TO	0x10000ULL
#define RK_RBUF_LEN	5000
#define RK_LOG_LEN	16384
/* include/net/rdmap.h */
#define RDMAP_MAX_IRD	64
#define RDMAP_MAX_ORD	64

/* rdmap.ko, then the consumer; *@rdmap_loaded if this call loaded rdmap.ko */
static int rk_load(bool *rdmap_loaded)
{
	bool dummy = false;

	*rdmap_loaded = false;
	if (kmod_load("rdmap", "../rdmap/rdmap.ko", rdmap_loaded) ||
	    kmod_load("rdmap_kconsumer", "kmod/rdmap_kconsumer.ko", &dummy))
		return -1;
	if (access(RK_DIR, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return access(RK_DIR "/ctl", F_OK);
}

/* 0, or the errno of the command */
static __printf(1, 2) int rk_ctl(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = kmod_vctl(RK_DIR "/ctl", fmt, ap);
	va_end(ap);
	return ret;
}

/* File @name of queue pair @q ('a' or 'b'): up to @len octets. */
static ssize_t rk_read(char q, const char *name, void *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), RK_DIR "/%c/%s", q, name);
	return kmod_read(path, buf, len);
}

/* Wait until the event log of @q has @n lines; its text in @log. */
static int rk_events(char q, char *log, size_t len, int n)
{
	long long end = iw_now_ms() + DDP_TMO_MS;
	int lines;
	ssize_t got;
	char *p;

	do {
		got = rk_read(q, "events", log, len - 1);
		if (got < 0)
			return -1;
		log[got] = '\0';
		lines = 0;
		for (p = log; (p = strchr(p, '\n')); p++)
			lines++;
		if (lines >= n)
			return lines;
		usleep(2000);
	} while (iw_now_ms() < end);
	return lines;
}

/* The log of @q now, without waiting. */
static const char *rk_log_now(char q, char *log, size_t len)
{
	ssize_t got = rk_read(q, "events", log, len - 1);

	log[got < 0 ? 0 : got] = '\0';
	return log;
}

static __u32 rk_stag(char q)
{
	char buf[64] = "";
	unsigned int stag = 0;

	if (rk_read(q, "state", buf, sizeof(buf) - 1) > 0)
		sscanf(buf, "stag=%x", &stag);
	return stag;
}

static int rk_held(char q)
{
	char c = 0;

	return rk_read(q, "held", &c, 1) == 1 && c == 'Y';
}

static int all_zero(const __u8 *p, size_t len)
{
	return dt_find_not(p, len, 0) == -1;
}

/* A value into the (sysfs) file @path. Return: 0, or not 0. */
static __printf(2, 3) int rk_write(const char *path, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = kmod_vctl(path, fmt, ap);
	va_end(ap);
	return ret;
}

#define RK_CPU1		"/sys/devices/system/cpu/cpu1/online"
/* CPU 1 online (@on) or offline */
#define rk_cpu1(on)	rk_write(RK_CPU1, "%d", (on))
/* MPA's sends take the MSS as at most @mss octets (0: TCP's) */
#define rk_mss_test(mss) \
	rk_write("/sys/module/mpa/parameters/tx_mss_test", "%u", (mss))
/* rdmap's rx_answer: Read Responses from the receive path (1) or not */
#define rk_rx_answer(on) \
	rk_write("/sys/module/rdmap/parameters/rx_answer", "%d", (on))

FIXTURE(rk)
{
	int fds[2];	/* [0] a's socket (Initiator), [1] b's (Responder) */
	bool rdmap_loaded;
	char alog[RK_LOG_LEN];
	char blog[RK_LOG_LEN];
	__u8 tag[RK_TAG_LEN];
	__u8 rbuf[RK_RBUF_LEN];
	__u8 want[RK_TAG_LEN];
	bool cpu1_off;	/* put CPU 1 back online at the end */
	int cfds[2];	/* c's connection: [0] the test's end, [1] c's */
	char want_log[RK_LOG_LEN];
};

FIXTURE_SETUP(rk)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	self->cpu1_off = false;
	self->want_log[0] = '\0';
	self->cfds[0] = -1;
	self->cfds[1] = -1;
	if (rk_load(&self->rdmap_loaded))
		SKIP(return, "no rdmap.ko or rdmap_kconsumer.ko (make test-modules) or debugfs");
	/* queue pairs left behind by a test that timed out */
	rk_ctl("destroy a 1");
	rk_ctl("destroy b 1");
	rk_ctl("destroy c 1");
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, DDP_TMO_MS));
}

FIXTURE_TEARDOWN(rk)
{
	if (self->cpu1_off)
		rk_cpu1(1);
	rk_mss_test(0);
	rk_rx_answer(1);
	/* a reset wakes c's sender if it still waits for the window */
	if (self->cfds[0] >= 0)
		close(self->cfds[0]);
	rk_ctl("destroy c 1");
	if (self->cfds[1] >= 0)
		close(self->cfds[1]);
	rk_ctl("destroy a 0");
	rk_ctl("destroy b 0");
	if (self->fds[0] >= 0)
		close(self->fds[0]);
	if (self->fds[1] >= 0)
		close(self->fds[1]);
	syscall(__NR_delete_module, "rdmap_kconsumer", O_NONBLOCK);
	if (self->rdmap_loaded)
		syscall(__NR_delete_module, "rdmap", O_NONBLOCK);
}

/* Both queue pairs, a with @a_ird and @a_ord, b with IRD = ORD = 8. */
static void pair_up(struct __test_metadata *_metadata, const int fds[2],
		    int a_ird, int a_ord)
{
	ASSERT_EQ(0, rk_ctl("create a %d %d %d", fds[0], a_ird, a_ord));
	ASSERT_EQ(0, rk_ctl("create b %d 8 8", fds[1]));
}

/*
 * a's RDMA Write to @stag, which b's Send with Invalidate (cookie 7, 100
 * octets) invalidated: b's DDP refuses it (0x1/0x00), b terminates the
 * stream (layer DDP), a reports b's Terminate, and nothing is placed.
 */
static void write_invalidated(struct __test_metadata *_metadata,
			      char *alog, char *blog, __u8 *tag, __u32 stag)
{
	char want[128];

	ASSERT_EQ(0, rk_ctl("write a %u %llu 8 1", stag, RK_BASE_TO));
	ASSERT_EQ(2, rk_events('b', blog, RK_LOG_LEN, 2));
	snprintf(want, sizeof(want),
		 "recv op=4 len=100 cookie=7 inv=%#x\n"
		 "term remote=0 layer=1 etype=1 ecode=0\n", stag);
	EXPECT_STREQ(want, blog);
	ASSERT_EQ(1, rk_events('a', alog, RK_LOG_LEN, 1));
	EXPECT_STREQ("term remote=1 layer=1 etype=1 ecode=0\n", alog);
	ASSERT_EQ(RK_TAG_LEN, rk_read('b', "tagged", tag, RK_TAG_LEN));
	EXPECT_TRUE(all_zero(tag, RK_TAG_LEN));
}

/*
 * b registers its tagged buffer with remote write (@owned: bound to its
 * stream, else to its PD) and posts a receive (cookie 7); a Sends 100
 * octets with Invalidate of that STag; b reports the Send. Return: the
 * STag.
 */
static __u32 send_invalidate_b(struct __test_metadata *_metadata,
			       char *blog, int owned)
{
	char want[128];
	__u32 stag;

	ASSERT_EQ(0, rk_ctl("reg b %u %d", DDP_ACCESS_REMOTE_WRITE, owned));
	stag = rk_stag('b');
	ASSERT_NE(0, stag);
	ASSERT_EQ(0, rk_ctl("post b 7"));
	ASSERT_EQ(0, rk_ctl("send a %d %u 100 3", RDMAP_WIRE_OP_SEND_INV, stag));
	ASSERT_EQ(1, rk_events('b', blog, RK_LOG_LEN, 1));
	snprintf(want, sizeof(want), "recv op=4 len=100 cookie=7 inv=%#x\n", stag);
	EXPECT_STREQ(want, blog);
	return stag;
}

/*
 * Kernel threads named @a or @b (NULL: only @a), with their newline;
 * *@pid, if not NULL, the last one found.
 */
static int threads_named(const char *a, const char *b, pid_t *pid)
{
	char path[300], comm[32];
	struct dirent *d;
	int found = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    (!strcmp(comm, a) || (b && !strcmp(comm, b)))) {
			found++;
			if (pid)
				*pid = atoi(d->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return found;
}

/* kernel threads named like the rescuer of workqueue @wq */
static int rescuers(const char *wq)
{
	char old[32], now[32];

	/* the thread's name: up to Linux 6.8 the queue's, since kworker/R-... */
	snprintf(old, sizeof(old), "%s\n", wq);
	snprintf(now, sizeof(now), "kworker/R-%s\n", wq);
	return threads_named(old, now, NULL);
}

/*
 * The workqueues of the data path have a rescuer (WQ_MEM_RECLAIM), one
 * kernel thread each: mpa's connection work, ddp's frees, rdmap's queue
 * pairs. A kernel ULP that writes pages back needs them to progress under
 * memory pressure, and its reclaim workers end connections, which waits
 * for them (a reclaim worker waiting for a queue without a rescuer is a
 * kernel warning).
 */
TEST_F(rk, workqueue_rescuer)
{
	EXPECT_EQ(1, rescuers("mpa"));
	EXPECT_EQ(1, rescuers("ddp"));
	EXPECT_EQ(1, rescuers("rdmap"));
}

/* the state letter of task @pid (P: parked), 0 if unknown */
static char rk_task_state(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* the voluntary context switches of task @pid, -1 if unknown */
static long rk_task_vcsw(pid_t pid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Wait up to a second for task @pid to be in state @st; the state then.
 * A transmit thread unparked is in S once its unpark callback ran.
 */
static char rk_task_wait(pid_t pid, char st)
{
	char now = rk_task_state(pid);
	int i;

	for (i = 0; i < 100 && now != st; i++) {
		usleep(10000);
		now = rk_task_state(pid);
	}
	return now;
}

/*
 * rdmap.ko loaded while CPU 1 is offline has a transmit thread for CPU 0
 * only; CPU 1's comes with the CPU; the module unloads with it parked.
 * (Before the tests of the fixture: rdmap.ko must not be loaded yet.)
 */
TEST(tx_threads_follow_cpus)
{
	bool loaded = false;
	pid_t tx1 = 0;

	if (access(RK_CPU1, W_OK))
		SKIP(return, "no CPU 1 that can go offline (VM --smp 1?)");
	if (!access("/sys/module/rdmap", F_OK))
		SKIP(return, "rdmap.ko is loaded already: it must load here");
	ASSERT_EQ(0, rk_cpu1(0));
	EXPECT_EQ(0, kmod_load("rdmap", "../rdmap/rdmap.ko", &loaded));
	EXPECT_TRUE(loaded);
	EXPECT_EQ(1, threads_named("rdmap_tx/0\n", NULL, NULL));
	EXPECT_EQ(0, threads_named("rdmap_tx/1\n", NULL, NULL));
	EXPECT_EQ(0, rk_cpu1(1));
	EXPECT_EQ(1, threads_named("rdmap_tx/1\n", NULL, &tx1));
	EXPECT_EQ('S', rk_task_wait(tx1, 'S'));
	EXPECT_EQ(0, rk_cpu1(0));
	EXPECT_EQ('P', rk_task_state(tx1));
	EXPECT_EQ(0, syscall(__NR_delete_module, "rdmap", O_NONBLOCK));
	EXPECT_EQ(0, threads_named("rdmap_tx/0\n", "rdmap_tx/1\n", NULL));
	ASSERT_EQ(0, rk_cpu1(1));
}

/* A Send each way lands in the posted buffer; nothing else happens. */
TEST_F(rk, send)
{
	__u8 msg[3000];

	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("post b 7"));
	ASSERT_EQ(0, rk_ctl("send a %d 0 3000 5", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("recv op=3 len=3000 cookie=7 inv=0\n", self->blog);
	kmod_fill(msg, sizeof(msg), 5);
	ASSERT_EQ(RK_RBUF_LEN, rk_read('b', "rbuf", self->rbuf, RK_RBUF_LEN));
	EXPECT_EQ(0, memcmp(self->rbuf, msg, sizeof(msg)));
	EXPECT_TRUE(all_zero(self->rbuf + sizeof(msg), RK_RBUF_LEN - sizeof(msg)));

	/* b may send now that a did (rule 4) */
	ASSERT_EQ(0, rk_ctl("post a 8"));
	ASSERT_EQ(0, rk_ctl("send b %d 0 4200 9", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("recv op=3 len=4200 cookie=8 inv=0\n", self->alog);
	kmod_fill(self->want, 4200, 9);
	ASSERT_EQ(RK_RBUF_LEN, rk_read('a', "rbuf", self->rbuf, RK_RBUF_LEN));
	EXPECT_EQ(0, memcmp(self->rbuf, self->want, 4200));
	EXPECT_TRUE(all_zero(self->rbuf + 4200, RK_RBUF_LEN - 4200));
	EXPECT_STREQ("recv op=3 len=3000 cookie=7 inv=0\n",
		     rk_log_now('b', self->blog, sizeof(self->blog)));
}

/* Send with Solicited Event, and an empty Send: their opcodes reported. */
TEST_F(rk, send_se_and_empty)
{
	__u8 msg[100];

	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("post b 1"));
	ASSERT_EQ(0, rk_ctl("post b 2"));
	ASSERT_EQ(0, rk_ctl("send a %d 0 100 2", RDMAP_WIRE_OP_SEND_SE));
	ASSERT_EQ(0, rk_ctl("send a %d 0 0 0", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_STREQ("recv op=5 len=100 cookie=1 inv=0\n"
		     "recv op=3 len=0 cookie=2 inv=0\n", self->blog);
	kmod_fill(msg, sizeof(msg), 2);
	ASSERT_EQ(RK_RBUF_LEN, rk_read('b', "rbuf", self->rbuf, RK_RBUF_LEN));
	EXPECT_EQ(0, memcmp(self->rbuf, msg, sizeof(msg)));
	EXPECT_TRUE(all_zero(self->rbuf + sizeof(msg), RK_RBUF_LEN - sizeof(msg)));
	EXPECT_STREQ("", rk_log_now('a', self->alog, sizeof(self->alog)));
}

/*
 * Send with Invalidate of an STag bound to b's stream: invalidated
 * before the completion, so b's ddp_invalidate() finds nothing and an
 * RDMA Write to it is refused by b's DDP (0x1/0x00): b terminates the
 * stream (layer DDP) and a reports b's Terminate; then every call fails.
 */
TEST_F(rk, send_invalidate)
{
	__u32 stag;

	pair_up(_metadata, self->fds, 8, 8);
	stag = send_invalidate_b(_metadata, self->blog, 1);
	EXPECT_EQ(ENOENT, rk_ctl("inval b %u", stag));

	write_invalidated(_metadata, self->alog, self->blog, self->tag, stag);

	EXPECT_EQ(ECONNABORTED, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(ECONNABORTED, rk_ctl("write a %u %llu 8 1", stag, RK_BASE_TO));
	EXPECT_EQ(ECONNABORTED, rk_ctl("send b %d 0 10 0", RDMAP_WIRE_OP_SEND));
}

/*
 * Send with Invalidate of an STag of kernel pages bound to b's stream: b's
 * DDP keeps the buffer as a spare, and b's next registration bound to its
 * stream takes it: the same index, the next key; the old STag names
 * nothing. One bound to the PD does not take it (its index is still
 * reserved: another one), nor does one after a local invalidation.
 */
TEST_F(rk, send_invalidate_reuse)
{
	__u32 s1, s2, s3, s4, s5;
	size_t first;
	__u8 msg[300];

	pair_up(_metadata, self->fds, 8, 8);
	s1 = send_invalidate_b(_metadata, self->blog, 1);
	/* the log's first line, b's Send with Invalidate */
	first = strlen(self->blog);

	ASSERT_EQ(0, rk_ctl("reg b %u 1", DDP_ACCESS_REMOTE_WRITE));
	s2 = rk_stag('b');
	EXPECT_EQ(s1 >> 8, s2 >> 8);
	EXPECT_EQ((s1 + 1) & 0xff, s2 & 0xff);
	EXPECT_EQ(ENOENT, rk_ctl("inval b %u", s1));
	/* the reused buffer places */
	ASSERT_EQ(0, rk_ctl("post b 8"));
	ASSERT_EQ(0, rk_ctl("write a %u %llu 300 11", s2, RK_BASE_TO + 3900));
	ASSERT_EQ(0, rk_ctl("send a %d 0 4 1", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_EQ(0, strcmp(self->blog + first, "recv op=3 len=4 cookie=8 inv=0\n"));
	kmod_fill(msg, sizeof(msg), 11);
	ASSERT_EQ(RK_TAG_LEN, rk_read('b', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->tag + 3900, msg, sizeof(msg)));

	/* a spare again; a buffer bound to the PD leaves it */
	ASSERT_EQ(0, rk_ctl("post b 9"));
	ASSERT_EQ(0, rk_ctl("send a %d %u 10 3", RDMAP_WIRE_OP_SEND_INV, s2));
	ASSERT_EQ(3, rk_events('b', self->blog, sizeof(self->blog), 3));
	ASSERT_EQ(0, rk_ctl("reg b %u 0", DDP_ACCESS_REMOTE_WRITE));
	s3 = rk_stag('b');
	EXPECT_NE(s2 >> 8, s3 >> 8);
	ASSERT_EQ(0, rk_ctl("reg b %u 1", DDP_ACCESS_REMOTE_WRITE));
	s4 = rk_stag('b');
	EXPECT_EQ(s2 >> 8, s4 >> 8);
	EXPECT_EQ((s2 + 1) & 0xff, s4 & 0xff);
	/* a local invalidation frees the buffer and its index */
	EXPECT_EQ(0, rk_ctl("inval b %u", s4));
	ASSERT_EQ(0, rk_ctl("reg b %u 1", DDP_ACCESS_REMOTE_WRITE));
	s5 = rk_stag('b');
	EXPECT_NE(s4 >> 8, s5 >> 8);
	EXPECT_EQ(0, rk_ctl("inval b %u", s3));
	EXPECT_STREQ("", rk_log_now('a', self->alog, sizeof(self->alog)));
}

/* lines of the kernel log that contain @what; -1 if it cannot be read */
static int klog_count(const char *what)
{
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *p;
	int n = 0;

	if (len <= 0)
		return -1;
	buf = calloc(1, len + 1);
	if (!buf)
		return -1;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (len < 0) {
		free(buf);
		return -1;
	}
	for (p = buf; (p = strstr(p, what)); p++)
		n++;
	free(buf);
	return n;
}

/*
 * A queue pair destroyed in a worker of a WQ_MEM_RECLAIM workqueue, as a
 * kernel ULP destroys its queue pairs from its reset or release work
 * (nvme-rdma, nvmet-rdma), after the peer invalidated a buffer of b's PD
 * with a Send with Invalidate: the release waits for DDP's frees of such
 * buffers (flush_workqueue() of DDP's queue), and the kernel warns when a
 * reclaim worker waits for a queue without a rescuer
 * (check_flush_dependency(): "workqueue: WQ_MEM_RECLAIM rk_reclaim:...
 * is flushing !WQ_MEM_RECLAIM ddp:..."). Nothing in the log, b gone.
 * The kernel checks only when the flush finds the free still queued (it
 * runs a grace period after the invalidation): b is destroyed right
 * after its completion, which catches it sometimes, not always;
 * workqueue_rescuer checks the flags themselves.
 */
TEST_F(rk, destroy_in_reclaim_worker)
{
	/* -1: the log cannot be read */
	ASSERT_EQ(0, klog_count("!WQ_MEM_RECLAIM"));
	pair_up(_metadata, self->fds, 8, 8);
	send_invalidate_b(_metadata, self->blog, 0);
	ASSERT_EQ(0, rk_ctl("reclaim_destroy b 0"));
	EXPECT_EQ(ENOTCONN, rk_ctl("destroy b 0"));
	EXPECT_EQ(0, klog_count("!WQ_MEM_RECLAIM"));
}

/*
 * The spare reused under the next key stays in place under its index:
 * a Write to the old key is refused (DDP 0x1/0x00) and places nothing,
 * while the buffer is valid again under the new one.
 */
TEST_F(rk, send_invalidate_reuse_old_key)
{
	__u32 s1, s2;

	pair_up(_metadata, self->fds, 8, 8);
	s1 = send_invalidate_b(_metadata, self->blog, 1);
	ASSERT_EQ(0, rk_ctl("reg b %u 1", DDP_ACCESS_REMOTE_WRITE));
	s2 = rk_stag('b');
	ASSERT_EQ(s1 >> 8, s2 >> 8);
	ASSERT_NE(s1, s2);

	write_invalidated(_metadata, self->alog, self->blog, self->tag, s1);
	/* the old key names nothing, the new one the buffer */
	EXPECT_EQ(ENOENT, rk_ctl("inval b %u", s1));
	EXPECT_EQ(0, rk_ctl("inval b %u", s2));
}

/* Send with Solicited Event and Invalidate of an STag bound to b's PD. */
TEST_F(rk, send_se_invalidate_pd)
{
	char want[128];
	__u32 stag;

	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("reg b %u 0", DDP_ACCESS_REMOTE_WRITE));
	stag = rk_stag('b');
	ASSERT_NE(0, stag);
	ASSERT_EQ(0, rk_ctl("post b 3"));
	ASSERT_EQ(0, rk_ctl("send a %d %u 20 4", RDMAP_WIRE_OP_SEND_SE_INV, stag));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	snprintf(want, sizeof(want), "recv op=6 len=20 cookie=3 inv=%#x\n", stag);
	EXPECT_STREQ(want, self->blog);
	EXPECT_EQ(ENOENT, rk_ctl("inval b %u", stag));
	/* the stream goes on */
	ASSERT_EQ(0, rk_ctl("post b 4"));
	ASSERT_EQ(0, rk_ctl("send a %d 0 5 4", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_EQ(0, strcmp(self->blog + strlen(want), "recv op=3 len=5 cookie=4 inv=0\n"));
	EXPECT_STREQ("", rk_log_now('a', self->alog, sizeof(self->alog)));
}

/* Send with Invalidate of an STag b does not know: 0x2/0x09, RDMAP layer. */
TEST_F(rk, send_invalidate_unknown)
{
	__u32 stag;

	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("reg b %u 1", DDP_ACCESS_REMOTE_WRITE));
	stag = rk_stag('b');
	ASSERT_NE(0, stag);
	ASSERT_EQ(0, rk_ctl("post b 7"));
	/* same index, another key */
	ASSERT_EQ(0, rk_ctl("send a %d %u 100 3", RDMAP_WIRE_OP_SEND_INV, stag ^ 1));
	/* the Send's buffer comes back */
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_STREQ("term remote=0 layer=0 etype=2 ecode=9\nflush cookie=7\n",
		     self->blog);
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("term remote=1 layer=0 etype=2 ecode=9\n", self->alog);
	/* b's own STag is still valid */
	EXPECT_EQ(0, rk_ctl("inval b %u", stag));
	EXPECT_EQ(ECONNABORTED, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
}

/*
 * RDMA Write into a PD-wide STag, across b's page boundary: placed, no
 * event on either end; a Send after it completes after the placement.
 */
TEST_F(rk, rdma_write)
{
	__u8 msg[300];
	__u32 stag;

	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("reg b %u 0", DDP_ACCESS_REMOTE_WRITE));
	stag = rk_stag('b');
	ASSERT_NE(0, stag);
	ASSERT_EQ(0, rk_ctl("post b 1"));
	ASSERT_EQ(0, rk_ctl("write a %u %llu 300 11", stag, RK_BASE_TO + 3900));
	ASSERT_EQ(0, rk_ctl("send a %d 0 4 1", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("recv op=3 len=4 cookie=1 inv=0\n", self->blog);
	kmod_fill(msg, sizeof(msg), 11);
	ASSERT_EQ(RK_TAG_LEN, rk_read('b', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, 3900));
	EXPECT_EQ(0, memcmp(self->tag + 3900, msg, sizeof(msg)));
	EXPECT_TRUE(all_zero(self->tag + 4200, RK_TAG_LEN - 4200));
	EXPECT_STREQ("", rk_log_now('a', self->alog, sizeof(self->alog)));

	/* a larger one, several FPDUs, to the end of the buffer */
	ASSERT_EQ(0, rk_ctl("post b 2"));
	ASSERT_EQ(0, rk_ctl("write a %u %llu 5000 12", stag, RK_BASE_TO + 1000));
	ASSERT_EQ(0, rk_ctl("send a %d 0 4 1", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_STREQ("recv op=3 len=4 cookie=1 inv=0\n"
		     "recv op=3 len=4 cookie=2 inv=0\n", self->blog);
	kmod_fill(self->want, 5000, 12);
	ASSERT_EQ(RK_TAG_LEN, rk_read('b', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, 1000));
	EXPECT_EQ(0, memcmp(self->tag + 1000, self->want, 5000));
}

/*
 * The Read setup: b's buffer kmod_fill(21) with @b_access, bound to b's
 * stream (@b_owned) or PD; a's writable, bound to a's stream.
 */
static void read_setup(struct __test_metadata *_metadata, __u32 b_access,
		       bool b_owned, __u32 *sink, __u32 *src)
{
	ASSERT_EQ(0, rk_ctl("fill b 21"));
	ASSERT_EQ(0, rk_ctl("reg b %u %d", b_access, b_owned));
	*src = rk_stag('b');
	ASSERT_NE(0, *src);
	ASSERT_EQ(0, rk_ctl("reg a %u 1", DDP_ACCESS_REMOTE_WRITE));
	*sink = rk_stag('a');
	ASSERT_NE(0, *sink);
}

/* RDMA Read: b's RDMAP answers from b's pages into a's, read_done on a. */
TEST_F(rk, rdma_read)
{
	__u8 src[RK_TAG_LEN];
	__u32 sink, srcs;

	pair_up(_metadata, self->fds, 8, 8);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &srcs);
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 4000 33", sink, RK_BASE_TO + 50,
			    srcs, RK_BASE_TO + 1000));
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("read_done len=4000 cookie=33\n", self->alog);
	kmod_fill(src, sizeof(src), 21);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, 50));
	EXPECT_EQ(0, memcmp(self->tag + 50, src + 1000, 4000));
	EXPECT_TRUE(all_zero(self->tag + 4050, RK_TAG_LEN - 4050));
	/* the whole buffer, and Reads complete in order */
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 6000 34", sink, RK_BASE_TO,
			    srcs, RK_BASE_TO));
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 1 35", sink, RK_BASE_TO,
			    srcs, RK_BASE_TO + 5999));
	ASSERT_EQ(3, rk_events('a', self->alog, sizeof(self->alog), 3));
	EXPECT_STREQ("read_done len=4000 cookie=33\n"
		     "read_done len=6000 cookie=34\n"
		     "read_done len=1 cookie=35\n", self->alog);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	src[0] = src[5999];
	EXPECT_EQ(0, memcmp(self->tag, src, RK_TAG_LEN));
	EXPECT_STREQ("", rk_log_now('b', self->blog, sizeof(self->blog)));
}

/*
 * b answers a's Read in the receive path of the request (rdmap's
 * rx_answer, the default): MPA counts the FPDU in MpaTxFromRx and b's
 * transmit thread does not run; with rx_answer=0 the thread, which
 * wakes, sends it and MPA counts none. The same octets land either way.
 */
TEST_F(rk, rdma_read_rx_answer)
{
	__u8 src[RK_TAG_LEN];
	__u32 sink, srcs;
	char want[128];
	long vcsw, n0;
	pid_t tx0 = 0;
	int on;

	ASSERT_EQ(1, threads_named("rdmap_tx/0\n", NULL, &tx0));
	/* b's thread is that of the CPU that creates it */
	iw_bench_pin(0, "rdmap_kconsumer");
	pair_up(_metadata, self->fds, 8, 8);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &srcs);
	kmod_fill(src, sizeof(src), 21);
	for (on = 1; on >= 0; on--) {
		ASSERT_EQ(0, rk_rx_answer(on));
		EXPECT_EQ('S', rk_task_wait(tx0, 'S'));
		vcsw = rk_task_vcsw(tx0);
		n0 = mt_mpa_stat("MpaTxFromRx");
		ASSERT_LE(0, vcsw);
		ASSERT_LE(0, n0);
		ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 3000 %d", sink,
				    RK_BASE_TO + 3000 * on, srcs,
				    RK_BASE_TO + 100 * on, 50 + on));
		ASSERT_EQ(2 - on, rk_events('a', self->alog,
					    sizeof(self->alog), 2 - on));
		EXPECT_EQ(on, mt_mpa_stat("MpaTxFromRx") - n0);
		EXPECT_EQ('S', rk_task_wait(tx0, 'S'));
		EXPECT_EQ(!on, rk_task_vcsw(tx0) > vcsw);
	}
	snprintf(want, sizeof(want),
		 "read_done len=3000 cookie=51\nread_done len=3000 cookie=50\n");
	EXPECT_STREQ(want, self->alog);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->tag, src, 3000));
	EXPECT_EQ(0, memcmp(self->tag + 3000, src + 100, 3000));
	EXPECT_STREQ("", rk_log_now('b', self->blog, sizeof(self->blog)));
}

/*
 * b is created on CPU 1: its Read Responses go from CPU 1's transmit
 * thread (rx_answer=0: none from the receive path), which wakes for
 * them; while CPU 1 is offline the thread is
 * parked and rdmap's workqueue answers (the thread does not run); once
 * the CPU is back, its thread again. Every Read completes with the
 * octets of b's buffer.
 */
TEST_F(rk, rdma_read_cpu_offline)
{
	__u8 src[RK_TAG_LEN];
	__u32 sink, srcs;
	pid_t tx1 = 0;
	long vcsw;
	int i;

	if (access(RK_CPU1, W_OK))
		SKIP(return, "no CPU 1 that can go offline (VM --smp 1?)");
	ASSERT_EQ(1, threads_named("rdmap_tx/1\n", NULL, &tx1));
	ASSERT_EQ(0, rk_rx_answer(0));
	iw_bench_pin(0, "rdmap_kconsumer");
	ASSERT_EQ(0, rk_ctl("create a %d 8 8", self->fds[0]));
	iw_bench_pin(1, "rdmap_kconsumer");
	ASSERT_EQ(0, rk_ctl("create b %d 8 8", self->fds[1]));
	iw_bench_pin(0, "rdmap_kconsumer");
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &srcs);
	kmod_fill(src, sizeof(src), 21);
	for (i = 0; i < 3; i++) {
		char want[64];
		size_t at = strlen(self->want_log);

		if (i == 1) {
			self->cpu1_off = true;
			ASSERT_EQ(0, rk_cpu1(0));
			EXPECT_EQ('P', rk_task_state(tx1));
		} else if (i == 2) {
			ASSERT_EQ(0, rk_cpu1(1));
			self->cpu1_off = false;
			EXPECT_EQ('S', rk_task_wait(tx1, 'S'));
		}
		vcsw = rk_task_vcsw(tx1);
		ASSERT_LE(0, vcsw);
		ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 3000 %d", sink,
				    RK_BASE_TO + i, srcs, RK_BASE_TO + 100 * i,
				    40 + i));
		ASSERT_EQ(i + 1, rk_events('a', self->alog, sizeof(self->alog), i + 1));
		snprintf(want, sizeof(want), "read_done len=3000 cookie=%d\n", 40 + i);
		EXPECT_STREQ(want, self->alog + at);
		strcat(self->want_log, want);
		ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
		EXPECT_EQ(0, memcmp(self->tag + i, src + 100 * i, 3000));
		/* the thread woke for the response unless it was parked */
		EXPECT_EQ(i != 1, rk_task_vcsw(tx1) > vcsw);
	}
	EXPECT_STREQ(self->want_log, self->alog);
	EXPECT_STREQ("", rk_log_now('b', self->blog, sizeof(self->blog)));
}

/* octets c's socket has not sent yet (SIOCOUTQ) */
static int rk_outq(int fd)
{
	int n = -1;

	return ioctl(fd, SIOCOUTQ, &n) ? -1 : n;
}

/*
 * Receive on MPA socket @fd the Read Response to STag @stag at @to of the
 * @len octets @want: its segments, each one ULPDU with the tagged DDP
 * header (L in the last), TOs following each other.
 */
/*
 * An RDMA Read Request as an MPA socket sends it: the untagged DDP header
 * (L, DV 1; queue 1, @msn, MO 0) and the request, into @seg.
 */
#define RK_RREQ_SEG	(18 + sizeof(struct rdmap_wire_read_req))
static void rreq_seg(__u8 *seg, __u32 msn, __u32 sink_stag, __u64 sink_to,
		     __u32 size, __u32 src_stag, __u64 src_to)
{
	struct rdmap_wire_read_req req = {
		.sink_stag = htonl(sink_stag),
		.sink_to = htobe64(sink_to),
		.size = htonl(size),
		.src_stag = htonl(src_stag),
		.src_to = htobe64(src_to),
	};
	__be32 m = htonl(msn);

	memset(seg, 0, 18);
	seg[0] = 0x41;
	seg[1] = RDMAP_WIRE_RV | RDMAP_WIRE_OP_READ_REQ;
	seg[9] = RDMAP_WIRE_QN_READ_REQ;
	memcpy(seg + 10, &m, 4);
	memcpy(seg + 18, &req, sizeof(req));
}

/*
 * Reads one Read Response of @len octets from @fd, segment by segment: each
 * a tagged DDP segment to @stag at @to plus its offset, L set on the last
 * only, its payload @want's. @bound 0 takes any split; else every segment
 * carries exactly min(@bound, what is left).
 */
static void read_resp(struct __test_metadata *_metadata, int fd, __u32 stag,
		      __u64 to, const __u8 *want, __u32 len, __u32 bound)
{
	static __u8 seg[14 + 65536];
	__u32 off = 0, n;
	ssize_t got;

	while (off < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		__be32 st;
		__be64 t;

		ASSERT_EQ(1, poll(&pfd, 1, DDP_TMO_MS));
		got = recv(fd, seg, sizeof(seg), 0);
		ASSERT_LT(14, got);
		n = got - 14;
		ASSERT_GE(len - off, n);
		if (bound)
			ASSERT_EQ(len - off < bound ? len - off : bound, n);
		EXPECT_EQ(off + n == len ? 0xc1 : 0x81, seg[0]);
		EXPECT_EQ(RDMAP_WIRE_RV | RDMAP_WIRE_OP_READ_RESP, seg[1]);
		memcpy(&st, seg + 2, 4);
		memcpy(&t, seg + 6, 8);
		EXPECT_EQ(stag, ntohl(st));
		EXPECT_EQ(to + off, be64toh(t));
		EXPECT_EQ(0, memcmp(seg + 14, want + off, n));
		off += n;
	}
}

/*
 * A peer that stops reading does not hold up the Read Responses of the
 * other queue pairs of its CPU. c, created on CPU 1, answers 8 Read
 * Requests of 6000 octets that the test's MPA socket sends and never
 * reads (its receive buffer small, c's send buffer too): its responses
 * wait for TCP's window (on rdmap's workqueue, which the transmit thread
 * hands them to when they cannot go at once). Meanwhile b, on CPU 1 too,
 * answers a's Reads. Then the test reads c's 8 Read Responses, in order,
 * each the 6000 octets of c's buffer to the STag and TO of its request.
 */
TEST_F(rk, rdma_read_stalled_peer)
{
	int small = 4096, i, outq = 0;
	__u8 src[RK_TAG_LEN];
	__u32 sink, srcs, cst;

	if (access(RK_CPU1, F_OK))
		SKIP(return, "no CPU 1");
	ASSERT_EQ(0, iw_loopback_pair_rcvbuf(AF_INET, self->cfds, small));
	ASSERT_EQ(0, setsockopt(self->cfds[1], SOL_SOCKET, SO_SNDBUF, &small,
				sizeof(small)));
	ASSERT_EQ(0, iw_mpa_startup_pair(self->cfds, 0, 0, DDP_TMO_MS));
	iw_bench_pin(1, "rdmap_kconsumer");
	ASSERT_EQ(0, rk_ctl("create c %d 8 8", self->cfds[1]));
	ASSERT_EQ(0, rk_ctl("create b %d 8 8", self->fds[1]));
	iw_bench_pin(0, "rdmap_kconsumer");
	ASSERT_EQ(0, rk_ctl("create a %d 8 8", self->fds[0]));
	ASSERT_EQ(0, rk_ctl("fill c 21"));
	ASSERT_EQ(0, rk_ctl("reg c %u 1", DDP_ACCESS_REMOTE_READ));
	cst = rk_stag('c');
	ASSERT_NE(0, cst);
	kmod_fill(src, sizeof(src), 21);

	/* the 8 requests, each an untagged DDP segment on queue 1 */
	for (i = 0; i < 8; i++) {
		__u8 seg[RK_RREQ_SEG];

		rreq_seg(seg, i + 1, 0x1000 + i, 0x100ULL * i, RK_TAG_LEN, cst,
			 RK_BASE_TO);
		ASSERT_EQ(sizeof(seg), send(self->cfds[0], seg, sizeof(seg), 0));
	}
	/* c's responses stop at the window */
	for (i = 0; i < 500 && outq <= 0; i++) {
		usleep(10000);
		outq = rk_outq(self->cfds[1]);
	}
	ASSERT_LT(0, outq);

	/* b answers a meanwhile */
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &srcs);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 2000 %d", sink,
				    RK_BASE_TO + 2000 * i, srcs,
				    RK_BASE_TO + 2000 * i, 50 + i));
	ASSERT_EQ(3, rk_events('a', self->alog, sizeof(self->alog), 3));
	EXPECT_STREQ("read_done len=2000 cookie=50\n"
		     "read_done len=2000 cookie=51\n"
		     "read_done len=2000 cookie=52\n", self->alog);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->tag, src, RK_TAG_LEN));
	/* c still waits */
	EXPECT_LT(0, rk_outq(self->cfds[1]));

	/* the test reads: all 8 responses come, whole and in order */
	for (i = 0; i < 8; i++)
		read_resp(_metadata, self->cfds[0], 0x1000 + i, 0x100ULL * i,
			  src, RK_TAG_LEN, 0);
	EXPECT_EQ(0, rk_outq(self->cfds[1]));
	EXPECT_EQ(0, rk_ctl("destroy c 0"));
	EXPECT_STREQ("", rk_log_now('c', self->blog, sizeof(self->blog)));
}

/*
 * @n ULPDUs of @len octets each, one after the other at @buf, in one
 * sendmsg() (MPA_CMSG_LENS): MPA packs short FPDUs into one TCP segment.
 */
static ssize_t send_ulpdus(int fd, void *buf, __u32 len, int n)
{
	union {
		char b[CMSG_SPACE(4 * sizeof(__u32))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = (size_t)len * n };
	struct msghdr m = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.b,
		.msg_controllen = CMSG_SPACE(n * sizeof(__u32)),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	int i;

	if (n > 4)
		return -1;
	cm->cmsg_level = SOL_MPA;
	cm->cmsg_type = MPA_CMSG_LENS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(__u32));
	for (i = 0; i < n; i++)
		((__u32 *)CMSG_DATA(cm))[i] = len;
	return sendmsg(fd, &m, 0);
}

/*
 * Every slot of queue 1 comes back. c, with IRD 4, answers six rounds
 * of 4 Read Requests of 16 octets that the test's MPA socket sends in one
 * sendmsg() each (MSN 1 to 24), reading a round's 4 responses before it
 * sends the next. The first three with rx_answer=0: the test and c are
 * on CPU 0, loopback receives the round in the sender's softirq, which
 * c's transmit thread on CPU 0 cannot interrupt, so no request of the
 * round is taken off the ring before the last one came. Each round then
 * needs the 4 slots the round before used, each posted again
 * (ddp_repost()) when its request was taken; a slot not posted again
 * would make a later request a DDP error (no buffer) and a Terminate.
 * The last three with rx_answer=1: each request is answered in its
 * receive path, before the next is parsed, its slot posted again at
 * once; MPA counts those 12 responses in MpaTxFromRx, none of the first
 * 12.
 */
TEST_F(rk, rdma_read_ird_rounds)
{
	__u8 src[RK_TAG_LEN], segs[4][RK_RREQ_SEG];
	long rx[3] = { 0 };
	int round, i, n;
	__u32 cst;

	ASSERT_EQ(0, rk_rx_answer(0));
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->cfds));
	ASSERT_EQ(0, iw_mpa_startup_pair(self->cfds, 0, 0, DDP_TMO_MS));
	iw_bench_pin(0, "rdmap_kconsumer");
	ASSERT_EQ(0, rk_ctl("create c %d 4 4", self->cfds[1]));
	ASSERT_EQ(0, rk_ctl("fill c 22"));
	ASSERT_EQ(0, rk_ctl("reg c %u 1", DDP_ACCESS_REMOTE_READ));
	cst = rk_stag('c');
	ASSERT_NE(0, cst);
	kmod_fill(src, sizeof(src), 22);

	rx[0] = mt_mpa_stat("MpaTxFromRx");
	ASSERT_LE(0, rx[0]);
	for (round = 0; round < 6; round++) {
		if (round == 3) {
			rx[1] = mt_mpa_stat("MpaTxFromRx");
			ASSERT_EQ(0, rk_rx_answer(1));
		}
		/* 4 untagged DDP segments on queue 1, one FPDU each */
		for (i = 0, n = round * 4; i < 4; i++, n++)
			rreq_seg(segs[i], n + 1, 0x2000 + n, 0x100ULL * n, 16,
				 cst, RK_BASE_TO + 16 * n);
		ASSERT_EQ(sizeof(segs), send_ulpdus(self->cfds[0], segs,
						    sizeof(segs[0]), 4));
		for (i = 0, n = round * 4; i < 4; i++, n++)
			read_resp(_metadata, self->cfds[0], 0x2000 + n,
				  0x100ULL * n, src + 16 * n, 16, 0);
	}
	rx[2] = mt_mpa_stat("MpaTxFromRx");
	EXPECT_EQ(0, rx[1] - rx[0]);
	EXPECT_EQ(12, rx[2] - rx[1]);
	EXPECT_EQ(0, rk_ctl("destroy c 0"));
	EXPECT_STREQ("", rk_log_now('c', self->blog, sizeof(self->blog)));
}

/*
 * The IRD bounds the peer's outstanding Read Requests: c, with IRD 2,
 * gets 3 in one sendmsg(), the test and c on CPU 0 as above, so that all
 * three are in before c's thread takes the first (rx_answer=0: a request
 * answered in its receive path leaves its slot free for the next). The
 * third finds no buffer on queue 1: DDP's error (untagged buffer, no
 * buffer available, 0x2/0x02), and c's only message is a Terminate with
 * the DDP Segment Length and the DDP header of that segment (Hdrct M
 * and D).
 */
TEST_F(rk, rdma_read_beyond_ird)
{
	const __u8 want[] = {
		/* untagged DDP header: L, DV 1; Terminate; QN 2, MSN 1, MO 0 */
		0x41, RDMAP_WIRE_RV | RDMAP_WIRE_OP_TERMINATE, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
		/* Layer 1 (DDP), EType 2, code 2, Hdrct M and D */
		0x12, 0x02, 0xc0, 0x00,
		/* DDP Segment Length: header 18 + Read Request 28 */
		0x00, 0x2e,
		/* the third request's DDP header: QN 1, MSN 3, MO 0 */
		0x41, RDMAP_WIRE_RV | RDMAP_WIRE_OP_READ_REQ, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03,
		0x00, 0x00, 0x00, 0x00,
	};
	__u8 segs[3][RK_RREQ_SEG], got[128];
	struct pollfd pfd = { .events = POLLIN };
	ssize_t n;
	int i;
	__u32 cst;

	ASSERT_EQ(0, rk_rx_answer(0));
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->cfds));
	ASSERT_EQ(0, iw_mpa_startup_pair(self->cfds, 0, 0, DDP_TMO_MS));
	pfd.fd = self->cfds[0];
	iw_bench_pin(0, "rdmap_kconsumer");
	ASSERT_EQ(0, rk_ctl("create c %d 2 4", self->cfds[1]));
	ASSERT_EQ(0, rk_ctl("fill c 23"));
	ASSERT_EQ(0, rk_ctl("reg c %u 1", DDP_ACCESS_REMOTE_READ));
	cst = rk_stag('c');
	ASSERT_NE(0, cst);
	for (i = 0; i < 3; i++)
		rreq_seg(segs[i], i + 1, 0x3000 + i, 0x100ULL * i, 16, cst,
			 RK_BASE_TO + 16 * i);
	ASSERT_EQ(sizeof(segs), send_ulpdus(self->cfds[0], segs,
					    sizeof(segs[0]), 3));
	ASSERT_EQ(1, poll(&pfd, 1, DDP_TMO_MS));
	n = recv(self->cfds[0], got, sizeof(got), 0);
	ASSERT_EQ(sizeof(want), n);
	EXPECT_EQ(0, memcmp(got, want, sizeof(want)));
	for (i = 0; i < n && memcmp(got, want, sizeof(want)); i++)
		TH_LOG("got[%d] = 0x%02x, want 0x%02x", i, got[i], want[i]);
	/* nothing after it: the stream ended */
	EXPECT_EQ(0, recv(self->cfds[0], got, sizeof(got), 0));
	ASSERT_EQ(1, rk_events('c', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("term remote=0 layer=1 etype=2 ecode=2\n", self->blog);
	EXPECT_EQ(0, rk_ctl("destroy c 0"));
}

/*
 * The MSS shrinks after RDMAP read the MULPDU: MPA's tx_mss_test knob
 * makes its sends take 536 octets (MULPDU 530) while the MULPDU c reads
 * stays loopback's. A message that fits one segment by that MULPDU is
 * refused by MPA before anything is sent (-EMSGSIZE), and DDP cuts it
 * again at the MULPDU of the send (ddp_send_msg()). c's Read Response of
 * 1000 octets goes as two tagged segments of 516 and 484; a Send of 1000
 * with MSG_DONTWAIT cannot go whole in one segment now: EAGAIN, nothing
 * sent, no MSN taken; without it two untagged segments of 512 and 488,
 * MSN 1 on queue 0.
 */
TEST_F(rk, mss_shrunk_after_mulpdu)
{
	static const __u32 ulen[] = { 512, 488 };
	struct pollfd pfd = { .events = POLLIN };
	__u8 src[1000], seg[RK_RREQ_SEG], got[1100];
	__u32 cst, off, be;
	int i;

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->cfds));
	ASSERT_EQ(0, iw_mpa_startup_pair(self->cfds, 0, 0, DDP_TMO_MS));
	pfd.fd = self->cfds[0];
	ASSERT_EQ(0, rk_ctl("create c %d 4 4", self->cfds[1]));
	ASSERT_EQ(0, rk_ctl("fill c 24"));
	ASSERT_EQ(0, rk_ctl("reg c %u 1", DDP_ACCESS_REMOTE_READ));
	cst = rk_stag('c');
	ASSERT_NE(0, cst);
	ASSERT_EQ(0, rk_mss_test(536));

	rreq_seg(seg, 1, 0x4000, 0x500, sizeof(src), cst, RK_BASE_TO);
	ASSERT_EQ(sizeof(seg), send(self->cfds[0], seg, sizeof(seg), 0));
	kmod_fill(src, sizeof(src), 24);
	/* two tagged segments: 516 and 484 */
	read_resp(_metadata, self->cfds[0], 0x4000, 0x500, src, sizeof(src),
		  516);

	EXPECT_EQ(EAGAIN, rk_ctl("send c %d 0 1000 25 1", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(0, poll(&pfd, 1, 100));
	ASSERT_EQ(0, rk_ctl("send c %d 0 1000 25", RDMAP_WIRE_OP_SEND));
	kmod_fill(src, sizeof(src), 25);
	for (i = 0, off = 0; i < 2; off += ulen[i++]) {
		ASSERT_EQ(1, poll(&pfd, 1, DDP_TMO_MS));
		ASSERT_EQ(18 + ulen[i], recv(self->cfds[0], got, sizeof(got), 0));
		EXPECT_EQ(i ? 0x41 : 0x01, got[0]);
		EXPECT_EQ(RDMAP_WIRE_RV | RDMAP_WIRE_OP_SEND, got[1]);
		memcpy(&be, got + 6, 4);
		EXPECT_EQ(RDMAP_WIRE_QN_SEND, ntohl(be));
		memcpy(&be, got + 10, 4);
		EXPECT_EQ(1, ntohl(be));
		memcpy(&be, got + 14, 4);
		EXPECT_EQ(off, ntohl(be));
		EXPECT_EQ(0, memcmp(got + 18, src + off, ulen[i]));
	}
	EXPECT_EQ(0, rk_mss_test(0));
	EXPECT_EQ(0, rk_ctl("destroy c 0"));
	EXPECT_STREQ("", rk_log_now('c', self->blog, sizeof(self->blog)));
}

/*
 * MSG_DONTWAIT: a message goes whole at once or not at all. b, the
 * Responder, may not send before a's first FPDU (rule 4): -EAGAIN, not a
 * wait. A Write longer than one DDP segment (the loopback MULPDU is under
 * 64 KiB): -EAGAIN, nothing on the wire. Then a Send, a Write and a Read
 * of one segment each go, exactly as without the flag.
 */
TEST_F(rk, nowait)
{
	__u32 sink, src;
	__u64 fpdus;

	pair_up(_metadata, self->fds, 8, 8);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE,
		   false, &sink, &src);
	ASSERT_EQ(0, rk_ctl("post a 1"));
	ASSERT_EQ(0, rk_ctl("post b 2"));
	EXPECT_EQ(EAGAIN, rk_ctl("send b %d 0 10 1 1", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[1]).tx_fpdus);
	EXPECT_EQ(EAGAIN, rk_ctl("write a %u %llu 65536 2 1", src, RK_BASE_TO));
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[0]).tx_fpdus);

	ASSERT_EQ(0, rk_ctl("send a %d 0 10 3 1", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("recv op=3 len=10 cookie=2 inv=0\n", self->blog);
	/* a's FPDU came: b may send */
	ASSERT_EQ(0, rk_ctl("send b %d 0 20 4 1", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("recv op=3 len=20 cookie=1 inv=0\n", self->alog);
	kmod_fill(self->want, 20, 4);
	ASSERT_EQ(RK_RBUF_LEN, rk_read('a', "rbuf", self->rbuf, RK_RBUF_LEN));
	EXPECT_EQ(0, memcmp(self->rbuf, self->want, 20));

	ASSERT_EQ(0, rk_ctl("write a %u %llu 3000 5 1", src, RK_BASE_TO + 7));
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 3000 9 1", sink, RK_BASE_TO,
			    src, RK_BASE_TO + 7));
	ASSERT_EQ(2, rk_events('a', self->alog, sizeof(self->alog), 2));
	EXPECT_STREQ("recv op=3 len=20 cookie=1 inv=0\nread_done len=3000 cookie=9\n",
		     self->alog);
	/* the Write landed before the Read fetched it */
	kmod_fill(self->want, 3000, 5);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->tag, self->want, 3000));
	EXPECT_TRUE(all_zero(self->tag + 3000, RK_TAG_LEN - 3000));
	/* a sent three FPDUs: the Send, the Write, the Read Request */
	fpdus = iw_mpa_stats_of(self->fds[0]).tx_fpdus;
	EXPECT_EQ(3, fpdus);
	EXPECT_STREQ("recv op=3 len=10 cookie=2 inv=0\n",
		     rk_log_now('b', self->blog, sizeof(self->blog)));
}

/* A zero-length Read completes with len 0 and places nothing. */
TEST_F(rk, rdma_read_zero_length)
{
	__u32 sink, src;

	pair_up(_metadata, self->fds, 8, 8);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &src);
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 0 4", sink, RK_BASE_TO, src,
			    RK_BASE_TO));
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("read_done len=0 cookie=4\n", self->alog);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, RK_TAG_LEN));
	EXPECT_STREQ("", rk_log_now('b', self->blog, sizeof(self->blog)));
}

/*
 * A Read the Data Source refuses: b terminates with the Remote
 * Protection Error (RDMAP layer, 0x1/@ecode); a reports b's Terminate,
 * then flushes the Read; nothing is placed.
 */
static void read_refused(struct __test_metadata *_metadata, char *alog,
			 char *blog, size_t loglen, __u8 *tag, __u32 b_access,
			 bool bad_stag, __u64 src_off, __u32 len, int ecode)
{
	char want_a[96], want_b[64];
	__u32 sink, src;

	read_setup(_metadata, b_access, true, &sink, &src);
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu %u 5", sink, RK_BASE_TO,
			    bad_stag ? src ^ 1 : src, RK_BASE_TO + src_off, len));
	snprintf(want_b, sizeof(want_b), "term remote=0 layer=0 etype=1 ecode=%d\n",
		 ecode);
	snprintf(want_a, sizeof(want_a), "term remote=1 layer=0 etype=1 ecode=%d\n",
		 ecode);
	ASSERT_EQ(1, rk_events('b', blog, loglen, 1));
	EXPECT_STREQ(want_b, blog);
	ASSERT_EQ(2, rk_events('a', alog, loglen, 2));
	strcat(want_a, "read_flush cookie=5\n");
	EXPECT_STREQ(want_a, alog);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", tag, RK_TAG_LEN));
	EXPECT_TRUE(all_zero(tag, RK_TAG_LEN));
	EXPECT_EQ(ECONNABORTED, rk_ctl("read a %u %llu %u %llu 1 6", sink, RK_BASE_TO,
				       src, RK_BASE_TO));
	EXPECT_EQ(ECONNABORTED, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
}

/* No remote read access on b's buffer: 0x1/0x02 */
TEST_F(rk, rdma_read_no_access)
{
	pair_up(_metadata, self->fds, 8, 8);
	read_refused(_metadata, self->alog, self->blog, sizeof(self->alog), self->tag,
		     DDP_ACCESS_REMOTE_WRITE, false, 0, 100,
		     RDMAP_WIRE_ECODE_ACCESS);
}

/* An STag b does not know: 0x1/0x00 */
TEST_F(rk, rdma_read_unknown_stag)
{
	pair_up(_metadata, self->fds, 8, 8);
	read_refused(_metadata, self->alog, self->blog, sizeof(self->alog), self->tag,
		     DDP_ACCESS_REMOTE_READ, true, 0, 100,
		     RDMAP_WIRE_ECODE_INVALID_STAG);
}

/* Past the end of b's buffer: 0x1/0x01 */
TEST_F(rk, rdma_read_out_of_bounds)
{
	pair_up(_metadata, self->fds, 8, 8);
	read_refused(_metadata, self->alog, self->blog, sizeof(self->alog), self->tag,
		     DDP_ACCESS_REMOTE_READ, false, RK_TAG_LEN - 10, 11,
		     RDMAP_WIRE_ECODE_BASE_BOUNDS);
}

struct hold_arg {
	char	q;
	int	ms;
	int	ret;
};

static void *hold_thread(void *arg)
{
	struct hold_arg *h = arg;

	h->ret = rk_ctl("hold %c %d", h->q, h->ms);
	return NULL;
}

/* Start a hold of @h->q's socket in @t; 0 once it owns the socket. */
static int hold_start(pthread_t *t, struct hold_arg *h)
{
	long long end = iw_now_ms() + DDP_TMO_MS;

	h->ret = -1;
	if (pthread_create(t, NULL, hold_thread, h))
		return -1;
	while (!rk_held(h->q) && iw_now_ms() < end)
		usleep(1000);
	return rk_held(h->q) ? 0 : -1;
}

/*
 * ORD 1: while b holds its socket the first Read stays outstanding, and
 * a second one is refused with ENOBUFS; once the first completed, the
 * next one goes.
 */
TEST_F(rk, ord_limit)
{
	struct hold_arg h = { .q = 'b', .ms = 500 };
	__u32 sink, src;
	pthread_t t;

	pair_up(_metadata, self->fds, 8, 1);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &src);
	ASSERT_EQ(0, hold_start(&t, &h));
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 100 1", sink, RK_BASE_TO, src,
			    RK_BASE_TO));
	EXPECT_EQ(ENOBUFS, rk_ctl("read a %u %llu %u %llu 100 2", sink, RK_BASE_TO,
				  src, RK_BASE_TO));
	EXPECT_TRUE(rk_held('b'));
	EXPECT_STREQ("", rk_log_now('a', self->alog, sizeof(self->alog)));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, h.ret);
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("read_done len=100 cookie=1\n", self->alog);
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 100 3", sink, RK_BASE_TO + 100,
			    src, RK_BASE_TO + 100));
	ASSERT_EQ(2, rk_events('a', self->alog, sizeof(self->alog), 2));
	EXPECT_STREQ("read_done len=100 cookie=1\nread_done len=100 cookie=3\n",
		     self->alog);
	kmod_fill(self->want, RK_TAG_LEN, 21);
	ASSERT_EQ(RK_TAG_LEN, rk_read('a', "tagged", self->tag, RK_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->tag, self->want, 200));
	EXPECT_TRUE(all_zero(self->tag + 200, RK_TAG_LEN - 200));
}

/*
 * The consumer's Terminate: the peer reports it with its numbers, and
 * every call fails with ECONNABORTED on both ends.
 */
TEST_F(rk, consumer_terminate)
{
	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("reg a %u 1", DDP_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, rk_ctl("term a %d %d 255", RDMAP_WIRE_LAYER_RDMAP,
			    RDMAP_WIRE_ETYPE_OPERATION));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("term remote=1 layer=0 etype=2 ecode=255\n", self->blog);
	/* a reports its own Terminate as an error it found */
	EXPECT_STREQ("term remote=0 layer=0 etype=2 ecode=255\n",
		     rk_log_now('a', self->alog, sizeof(self->alog)));
	EXPECT_EQ(ECONNABORTED, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(ECONNABORTED, rk_ctl("send a %d 0 0 0", RDMAP_WIRE_OP_SEND_SE));
	EXPECT_EQ(ECONNABORTED, rk_ctl("write a %u %llu 8 1", rk_stag('a'), RK_BASE_TO));
	EXPECT_EQ(ECONNABORTED, rk_ctl("read a %u %llu %u %llu 0 1", rk_stag('a'),
				       RK_BASE_TO, rk_stag('a'), RK_BASE_TO));
	EXPECT_EQ(ECONNABORTED, rk_ctl("term a 0 2 255"));
	EXPECT_EQ(ECONNABORTED, rk_ctl("send b %d 0 10 0", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(ECONNABORTED, rk_ctl("term b 0 2 255"));
	/* nothing reached b after the Terminate */
	EXPECT_STREQ("term remote=1 layer=0 etype=2 ecode=255\n",
		     rk_log_now('b', self->blog, sizeof(self->blog)));
}

/*
 * Destroy returns the posted buffers as flushes, in order; the calls on
 * it then fail (the module's ENOTCONN); the peer sees the close.
 */
TEST_F(rk, destroy_flushes)
{
	pair_up(_metadata, self->fds, 8, 8);
	ASSERT_EQ(0, rk_ctl("post b 5"));
	ASSERT_EQ(0, rk_ctl("post b 6"));
	ASSERT_EQ(0, rk_ctl("post b 7"));
	ASSERT_EQ(0, rk_ctl("post b 8"));
	ASSERT_EQ(0, rk_ctl("send a %d 0 10 1", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	ASSERT_EQ(0, rk_ctl("destroy b 0"));
	ASSERT_EQ(4, rk_events('b', self->blog, sizeof(self->blog), 4));
	EXPECT_STREQ("recv op=3 len=10 cookie=5 inv=0\n"
		     "flush cookie=6\nflush cookie=7\nflush cookie=8\n", self->blog);
	EXPECT_EQ(ENOTCONN, rk_ctl("send b %d 0 10 0", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(ENOTCONN, rk_ctl("destroy b 0"));
	close(self->fds[1]);
	self->fds[1] = -1;
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("peer_closed\n", self->alog);
}

/*
 * An abortive destroy of a with a Read outstanding (b holds its socket,
 * the Read Request waits there): a's posted buffer comes back, then the
 * Read is flushed. b's Data Source is bound to b's PD: see
 * destroy_pending_read_request for one bound to b's stream.
 */
TEST_F(rk, destroy_read_flush)
{
	struct hold_arg h = { .q = 'b', .ms = 300 };
	__u32 sink, src;
	pthread_t t;

	pair_up(_metadata, self->fds, 8, 8);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, false, &sink, &src);
	ASSERT_EQ(0, rk_ctl("post a 1"));
	ASSERT_EQ(0, hold_start(&t, &h));
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 100 9", sink, RK_BASE_TO, src,
			    RK_BASE_TO));
	ASSERT_EQ(0, rk_ctl("destroy a 1"));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, h.ret);
	ASSERT_EQ(2, rk_events('a', self->alog, sizeof(self->alog), 2));
	EXPECT_STREQ("flush cookie=1\nread_flush cookie=9\n", self->alog);
	/* b got the Read Request, then the reset */
	TH_LOG("b: %s", rk_log_now('b', self->blog, sizeof(self->blog)));
	ASSERT_EQ(0, rk_ctl("destroy b 0"));
}

/* Bad calls get their errno and change nothing. */
TEST_F(rk, bad_calls)
{
	int udp;

	/* no queue pair yet: the module's ENOTCONN */
	EXPECT_EQ(ENOTCONN, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(ENOTCONN, rk_ctl("post b 1"));
	EXPECT_EQ(EINVAL, rk_ctl("send z 3 0 10 0"));
	/* IRD and ORD 1..64 */
	EXPECT_EQ(EINVAL, rk_ctl("create a %d 0 8", self->fds[0]));
	EXPECT_EQ(EINVAL, rk_ctl("create a %d 8 0", self->fds[0]));
	EXPECT_EQ(EINVAL, rk_ctl("create a %d %d 8", self->fds[0], RDMAP_MAX_IRD + 1));
	EXPECT_EQ(EINVAL, rk_ctl("create a %d 8 %d", self->fds[0], RDMAP_MAX_ORD + 1));
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, udp);
	EXPECT_EQ(EPROTOTYPE, rk_ctl("create a %d 8 8", udp));
	close(udp);
	/* the failed creates left the socket free */
	ASSERT_EQ(0, rk_ctl("create a %d %d %d", self->fds[0], RDMAP_MAX_IRD,
			    RDMAP_MAX_ORD));
	EXPECT_EQ(EBUSY, rk_ctl("create a %d 8 8", self->fds[0]));
	/* a's socket has its queue pair */
	EXPECT_EQ(EBUSY, rk_ctl("create b %d 8 8", self->fds[0]));
	ASSERT_EQ(0, rk_ctl("create b %d 1 1", self->fds[1]));
	/* only the four Sends go through rdmap_send() */
	EXPECT_EQ(EINVAL, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_WRITE));
	EXPECT_EQ(EINVAL, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_READ_REQ));
	EXPECT_EQ(EINVAL, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_READ_RESP));
	EXPECT_EQ(EINVAL, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_TERMINATE));
	EXPECT_EQ(EINVAL, rk_ctl("send a 8 0 10 0"));
	EXPECT_EQ(EINVAL, rk_ctl("send a 255 0 10 0"));
	/* nothing went out: the first Send is the first message b gets */
	ASSERT_EQ(0, rk_ctl("post b 1"));
	ASSERT_EQ(0, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("recv op=3 len=10 cookie=1 inv=0\n", self->blog);
	EXPECT_STREQ("", rk_log_now('a', self->alog, sizeof(self->alog)));
	/* destroyed: the module's ENOTCONN again */
	ASSERT_EQ(0, rk_ctl("destroy a 0"));
	EXPECT_EQ(ENOTCONN, rk_ctl("send a %d 0 10 0", RDMAP_WIRE_OP_SEND));
	EXPECT_EQ(ENOTCONN, rk_ctl("read a 1 0 1 0 0 1"));
}

/*
 * A raw RDMAP peer in user space on the Initiator end (/dev/ddp, as
 * tools/rdmap-peer) against b: its stream with RDMAP's three queues and
 * a buffer for the Terminate on queue 2. b posts one Send buffer.
 */
static void raw_peer(struct __test_metadata *_metadata, const int fds[2],
		     int *pd, int *sfd, __u8 *term, size_t term_len)
{
	ASSERT_EQ(0, rk_ctl("create b %d 8 8", fds[1]));
	ASSERT_EQ(0, rk_ctl("post b 1"));
	*pd = iw_ddp_open();
	ASSERT_LE(0, *pd);
	*sfd = iw_ddp_bind(*pd, fds[0], RDMAP_WIRE_NQUEUES);
	ASSERT_LE(0, *sfd);
	memset(term, 0xee, term_len);
	ASSERT_EQ(0, iw_ddp_post_recv(*sfd, term, term_len, RDMAP_WIRE_QN_TERMINATE, 42));
}

/* The raw peer receives the kernel's Terminate: exactly the octets @want. */
static void raw_expect_term(struct __test_metadata *_metadata, int sfd,
			    const __u8 *term, const __u8 *want, size_t len)
{
	struct ddp_event ev;
	__u32 i;

	ASSERT_EQ(1, iw_ddp_event(sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_RECV, ev.type);
	EXPECT_EQ(RDMAP_WIRE_QN_TERMINATE, ev.qn);
	EXPECT_EQ(1, ev.msn);
	EXPECT_EQ(42, ev.cookie);
	EXPECT_EQ(RDMAP_WIRE_RV | RDMAP_WIRE_OP_TERMINATE, ev.rsvdulp[0]);
	EXPECT_TRUE(all_zero(ev.rsvdulp + 1, 4));
	EXPECT_EQ(len, ev.len);
	if (ev.len != len || memcmp(term, want, len))
		for (i = 0; i < ev.len && i < 64; i++)
			TH_LOG("term[%u] = 0x%02x, want 0x%02x", i, term[i],
			       i < len ? want[i] : 0xee);
	EXPECT_EQ(0, memcmp(term, want, len));
	/* nothing after it */
	EXPECT_EQ(0xee, term[len]);
}

/*
 * A Send with RV 10b (RsvdULP[0] 0x83) is an invalid RDMAP version
 * (Remote Operation Error, 0x2/0x05). The kernel RDMAP sends a Terminate
 * on queue 2 (RDMAP control 0x47) carrying the DDP Segment Length (M)
 * and the untagged DDP header of the refused segment (D), reports its
 * own error and gives the Send's buffer back.
 */
TEST_F(rk, raw_peer_bad_version)
{
	const __u8 bad[5] = { 0x83, 0, 0, 0, 0 };
	const __u8 want[] = {
		/* Layer 0, EType 2, code 5, Hdrct M and D */
		0x02, 0x05, 0xc0, 0x00,
		/* DDP Segment Length: header 18 + payload 16 */
		0x00, 0x22,
		/* the DDP header: L, DV 1; RsvdULP; QN 0; MSN 1; MO 0 */
		0x41, 0x83, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
	};
	__u8 msg[16], term[64];
	int pd, sfd, i;

	raw_peer(_metadata, self->fds, &pd, &sfd, term, sizeof(term));
	for (i = 0; i < (int)sizeof(msg); i++)
		msg[i] = i;
	ASSERT_EQ(0, iw_ddp_send_untagged(sfd, msg, sizeof(msg), RDMAP_WIRE_QN_SEND, bad));
	raw_expect_term(_metadata, sfd, term, want, sizeof(want));
	/* the refused Send's buffer comes back */
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_STREQ("term remote=0 layer=0 etype=2 ecode=5\nflush cookie=1\n",
		     self->blog);
	EXPECT_EQ(ECONNABORTED, rk_ctl("send b %d 0 10 0", RDMAP_WIRE_OP_SEND));
	close(sfd);
	close(pd);
}

/*
 * A Read Request for an STag b does not know (Remote Protection Error,
 * 0x1/0x00): the Terminate carries the segment length, the DDP header
 * and the Read Request header (Hdrct M, D and R).
 */
TEST_F(rk, raw_peer_read_unknown_stag)
{
	const __u8 rreq[5] = { RDMAP_WIRE_RV | RDMAP_WIRE_OP_READ_REQ };
	struct rdmap_wire_read_req req = {
		.sink_stag = htonl(0x1234),
		.sink_to = htobe64(0x5000),
		.size = htonl(16),
		.src_stag = htonl(0xabcdef01),
		.src_to = htobe64(RK_BASE_TO),
	};
	const __u8 head[] = {
		/* Layer 0, EType 1, code 0, Hdrct M, D and R */
		0x01, 0x00, 0xe0, 0x00,
		/* DDP Segment Length: header 18 + Read Request 28 */
		0x00, 0x2e,
		/* the DDP header: L, DV 1; RsvdULP; QN 1; MSN 1; MO 0 */
		0x41, 0x41, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
	};
	__u8 want[sizeof(head) + sizeof(req)], term[64];
	int pd, sfd;

	raw_peer(_metadata, self->fds, &pd, &sfd, term, sizeof(term));
	memcpy(want, head, sizeof(head));
	memcpy(want + sizeof(head), &req, sizeof(req));
	ASSERT_EQ(0, iw_ddp_send_untagged(sfd, &req, sizeof(req),
					  RDMAP_WIRE_QN_READ_REQ, rreq));
	raw_expect_term(_metadata, sfd, term, want, sizeof(want));
	ASSERT_EQ(1, rk_events('b', self->blog, sizeof(self->blog), 1));
	EXPECT_STREQ("term remote=0 layer=0 etype=1 ecode=0\n", self->blog);
	close(sfd);
	close(pd);
}

/*
 * A fresh pair in place of the fixture's that agreed on RFC 6581's
 * peer-to-peer model with the RTR type @rtr (MPA revision 2).
 */
static void p2p_pair(struct __test_metadata *_metadata, int fds[2], __u32 rtr)
{
	struct mpa_start ini = {
		.role = MPA_ROLE_INITIATOR, .rev = 2, .ird = 8, .ord = 8,
		.flags = MPA_F_P2P | rtr,
	};
	struct mpa_start rsp = ini;

	rsp.role = MPA_ROLE_RESPONDER;
	iw_close_pair(fds);
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, iw_mpa_start_ex(fds[1], &rsp, NULL, NULL));
	ASSERT_EQ(0, iw_mpa_start_ex(fds[0], &ini, NULL, NULL));
	ASSERT_EQ(0, iw_mpa_respond(fds[1], DDP_TMO_MS));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[0], MPA_S_FULL, DDP_TMO_MS));
	ASSERT_TRUE(iw_mpa_info_of(fds[0]).flags & MPA_I_P2P);
	ASSERT_EQ(rtr, iw_mpa_info_of(fds[0]).rtr);
	ASSERT_EQ(rtr, iw_mpa_info_of(fds[1]).rtr);
}

/*
 * The Responder b, created first, waits for a's RTR; a, created in full
 * operation, sends it at once: one FPDU, reported to nobody. b may then
 * send (MPA's rule 4 holds its sends until an FPDU came).
 */
static void rtr_check(struct __test_metadata *_metadata, int fds[2],
		      __u32 rtr, char *alog, char *blog, size_t len)
{
	__u64 want = rtr == MPA_F_RTR_READ ? 2 : 1;
	int i;

	ASSERT_EQ(0, rk_ctl("create b %d 8 8", fds[1]));
	ASSERT_EQ(0, rk_ctl("post b 1"));
	ASSERT_EQ(0, rk_ctl("post b 2"));
	ASSERT_EQ(0, iw_mpa_stats_of(fds[0]).tx_fpdus);
	ASSERT_EQ(0, rk_ctl("create a %d 8 8", fds[0]));
	ASSERT_EQ(0, rk_ctl("post a 3"));
	ASSERT_EQ(0, rk_ctl("send b %d 0 100 4", RDMAP_WIRE_OP_SEND));
	ASSERT_EQ(1, rk_events('a', alog, len, 1));
	EXPECT_STREQ("recv op=3 len=100 cookie=3 inv=0\n", alog);
	/* the RTR, and for a Read its response (b's work sends it) */
	EXPECT_EQ(1, iw_mpa_stats_of(fds[0]).tx_fpdus);
	for (i = 0; i < 200 && iw_mpa_stats_of(fds[0]).rx_fpdus < want; i++)
		usleep(10000);
	EXPECT_EQ(want, iw_mpa_stats_of(fds[0]).rx_fpdus);
	ASSERT_EQ(0, rk_ctl("send a %d 0 200 5", RDMAP_WIRE_OP_SEND));
	if (rtr == MPA_F_RTR_SEND) {
		/* the RTR took b's first buffer */
		ASSERT_EQ(2, rk_events('b', blog, len, 2));
		EXPECT_STREQ("flush cookie=1\nrecv op=3 len=200 cookie=2 inv=0\n", blog);
	} else {
		ASSERT_EQ(1, rk_events('b', blog, len, 1));
		EXPECT_STREQ("recv op=3 len=200 cookie=1 inv=0\n", blog);
	}
	EXPECT_STREQ("recv op=3 len=100 cookie=3 inv=0\n",
		     rk_log_now('a', alog, len));
}

TEST_F(rk, rtr_write)
{
	p2p_pair(_metadata, self->fds, MPA_F_RTR_WRITE);
	rtr_check(_metadata, self->fds, MPA_F_RTR_WRITE, self->alog, self->blog,
		  sizeof(self->alog));
}

TEST_F(rk, rtr_send)
{
	p2p_pair(_metadata, self->fds, MPA_F_RTR_SEND);
	rtr_check(_metadata, self->fds, MPA_F_RTR_SEND, self->alog, self->blog,
		  sizeof(self->alog));
}

/* The RTR Read takes one of a's ORD slots until its response came. */
TEST_F(rk, rtr_read)
{
	p2p_pair(_metadata, self->fds, MPA_F_RTR_READ);
	rtr_check(_metadata, self->fds, MPA_F_RTR_READ, self->alog, self->blog,
		  sizeof(self->alog));
}

/*
 * A raw Initiator whose first message is a Send where a zero-length RDMA
 * Write was agreed: Remote Operation Error, Unexpected OpCode (0x2/0x06),
 * with the Send's DDP header.
 */
TEST_F(rk, rtr_missing)
{
	const __u8 want[] = {
		/* Layer 0, EType 2, code 6, Hdrct M and D */
		0x02, 0x06, 0xc0, 0x00,
		/* DDP Segment Length: header 18 + 10 */
		0x00, 0x1c,
		/* L, DV 1; RsvdULP: Send; QN 0; MSN 1; MO 0 */
		0x41, 0x43, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
	};
	const __u8 send[5] = { RDMAP_WIRE_RV | RDMAP_WIRE_OP_SEND };
	__u8 term[64];
	int pd, sfd;

	p2p_pair(_metadata, self->fds, MPA_F_RTR_WRITE);
	raw_peer(_metadata, self->fds, &pd, &sfd, term, sizeof(term));
	ASSERT_EQ(0, iw_ddp_send_untagged(sfd, "0123456789", 10,
					  RDMAP_WIRE_QN_SEND, send));
	raw_expect_term(_metadata, sfd, term, want, sizeof(want));
	ASSERT_EQ(2, rk_events('b', self->blog, sizeof(self->blog), 2));
	EXPECT_STREQ("term remote=0 layer=0 etype=2 ecode=6\nflush cookie=1\n",
		     self->blog);
	close(sfd);
	close(pd);
}

/*
 * As destroy_read_flush, with b's Data Source bound to b's stream: b
 * holds the buffer (ddp_mr_get()) for a Read Request it will not answer
 * any more (the stream was reset). Destroying b must give it back, not
 * wait for it: ddp_stream_release() invalidates the buffers bound to the
 * stream and waits for their users. Last in the file: it hangs the
 * kernel task when the destroy waits for itself.
 */
TEST_F(rk, destroy_pending_read_request)
{
	struct hold_arg h = { .q = 'b', .ms = 300 };
	__u32 sink, src;
	pthread_t t;

	pair_up(_metadata, self->fds, 8, 8);
	read_setup(_metadata, DDP_ACCESS_REMOTE_READ, true, &sink, &src);
	ASSERT_EQ(0, hold_start(&t, &h));
	ASSERT_EQ(0, rk_ctl("read a %u %llu %u %llu 100 9", sink, RK_BASE_TO, src,
			    RK_BASE_TO));
	ASSERT_EQ(0, rk_ctl("destroy a 1"));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, h.ret);
	ASSERT_EQ(1, rk_events('a', self->alog, sizeof(self->alog), 1));
	EXPECT_STREQ("read_flush cookie=9\n", self->alog);
	TH_LOG("b: %s", rk_log_now('b', self->blog, sizeof(self->blog)));
	ASSERT_EQ(0, rk_ctl("destroy b 0"));
}

TEST_HARNESS_MAIN
