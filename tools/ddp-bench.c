// SPDX-License-Identifier: GPL-2.0
/*
 * ddp-bench - throughput of DDP (RFC 5041) over MPA against raw TCP.
 *
 * Source and sink run on loopback in one process pair: the parent is the
 * Data Source (MPA Initiator), a forked child the Data Sink (MPA
 * Responder). Tagged mode writes messages into a registered sink buffer
 * of WINDOW slots at increasing TO; untagged mode sends them into WINDOW
 * posted buffers that the sink reposts as they complete. The sink counts
 * the octets of its DDP_EV_TAGGED / DDP_EV_RECV events after a warm-up
 * and hands back one credit per event (shared memory), so the source
 * never overruns the posted buffers or the event ring. Raw TCP is the
 * same message size with write()/read(). --table runs every mode with
 * markers off and on (CRC on, or off with --no-crc) in several rounds and
 * prints the medians. --listen-addr/--connect-addr and
 * --sink-netns/--source-netns move the two ends off loopback, e.g. onto a
 * veth pair between two namespaces; --sink-cpu/--source-cpu pin each end's
 * process to a CPU of its own. Every run also measures the CPU time
 * per GB moved: the busy time of the whole machine (CPUs x elapsed - idle,
 * /proc/stat; both ends and the softirq work run on it) and each side's
 * getrusage().
 * --json prints one JSON object per run or table row. See ddp-bench(1).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ddp.h>
#include <linux/iwarp_wire.h>
#include <linux/mpa.h>

#include "libiwarp.h"

#define WINDOW		64		/* sink slots: messages in flight */
#define DEF_SIZE	65536U
#define MAX_SIZE	(16U << 20)
#define MAX_ROUNDS	15
#define EVBATCH		64
#define MAX_BATCH	(WINDOW / 2)	/* --batch: messages per DDP_IOC_SEND_BATCH */
#define RUN_SLACK_S	30		/* a run that takes this much longer failed */

enum mode { M_TCP, M_TAGGED, M_UNTAGGED };

struct cfg {
	const char *name;
	enum mode mode;
	unsigned int flags;	/* MPA_F_* */
};

static const struct cfg cfgs[] = {
	{ "tcp", M_TCP, 0 },
	{ "ddp tagged", M_TAGGED, 0 },
	{ "ddp tagged markers", M_TAGGED, MPA_F_MARKERS },
	{ "ddp untagged", M_UNTAGGED, 0 },
	{ "ddp untagged markers", M_UNTAGGED, MPA_F_MARKERS },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NCFGS		((int)ARRAY_SIZE(cfgs))

/* Shared between the source (parent) and the sink (child) of one run. */
struct shared {
	uint32_t ready;		/* futex: the sink is bound and has buffers */
	uint32_t credits;	/* futex: messages the source may have sent */
	uint32_t src_waiting;
	uint32_t stop;		/* the sink measured enough */
	uint32_t stag;
	uint64_t base_to;
	uint64_t win_bytes;
	double win_secs;
	uint64_t rx_msgs;
	uint64_t rx_fpdus;
	uint32_t mulpdu;
	uint32_t crc;		/* the initiator saw MPA_I_CRC */
	uint32_t measuring;	/* the sink's window started */
	uint64_t win_msgs;
	double sys_cpu_s;	/* busy CPU of the machine in the window */
	double tick_cpu_s;	/* the same from the tick-sampled fields */
	double sink_cpu_s;	/* the sink's getrusage() in the window */
	double src_cpu_s;	/* the source's, from its view of the window */
	char err[256];
};

struct result {
	double mbps;
	double msgs_s;
	double fpdus_per_msg;
	double cpu_gb;		/* CPU seconds per GB (10^9 octets): machine */
	double tick_cpu_gb;	/* the same from the tick-sampled fields */
	double sink_cpu_gb;	/* the sink process alone */
	double src_cpu_gb;	/* the source process alone; < 0: unknown */
	uint32_t mulpdu;
	int crc;
};

static struct shared *sh;
static int no_crc;		/* --no-crc: MPA_F_NO_CRC on both ends */
static int json;		/* --json: JSON lines on stdout */
static unsigned int batch = 1;	/* --batch: messages per DDP_IOC_SEND_BATCH */

static void set_err(const char *fmt, ...)
{
	va_list ap;

	if (sh->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(sh->err, sizeof(sh->err), fmt, ap);
	va_end(ap);
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *t)
{
	return syscall(SYS_futex, uaddr, op, val, t, NULL, 0);
}

static uint32_t load(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: ddp-bench [--mode tcp|tagged|untagged] [--markers] [--no-crc]\n"
		"                 [--size N] [--seconds S] [--batch N] [--json] [-6]\n"
		"                 [ENDPOINTS]\n"
		"       ddp-bench --table [--rounds N] [--no-crc] [--size N] [--seconds S]\n"
		"                 [--json] [-6] [ENDPOINTS]\n"
		"ENDPOINTS: [--listen-addr A] [--connect-addr A] [--sink-netns NAME]\n"
		"           [--source-netns NAME] [--sink-cpu N] [--source-cpu N]\n"
		"  --mode M     what to measure (default tagged)\n"
		"  --markers    MPA markers in both directions\n"
		"  --no-crc     MPA without CRC (needs /sys/module/mpa/parameters/allow_no_crc=1)\n"
		"  --json       one JSON object per run or table row on stdout\n"
		"  --size N     message size in octets (default 65536, at most 16 MiB)\n"
		"  --seconds S  measurement time per run after a warm-up (default 2)\n"
		"  --batch N    DDP: N messages per DDP_IOC_SEND_BATCH (default 1, at\n"
		"               most 32); raw TCP is unchanged (one write per message)\n"
		"  --table      raw TCP, tagged and untagged with markers off/on\n"
		"  --rounds N   rounds of the table, medians are printed (default 3)\n"
		"  -6           IPv6 loopback (default IPv4)\n"
		"  --listen-addr A   sink's bind address (default loopback)\n"
		"  --connect-addr A  source's target (default: the listen address)\n"
		"  --sink-netns NAME    sink socket in /run/netns/NAME\n"
		"  --source-netns NAME  source socket in /run/netns/NAME\n"
		"  --sink-cpu N         pin the sink process to CPU N (default: not pinned)\n"
		"  --source-cpu N       pin the source process to CPU N (default: not pinned)\n"
		"  --help       this text\n"
		"  --version    print the version\n"
		"Exit status: 0 when every run succeeded, 1 otherwise, 2 for usage errors.\n");
}

/* ---- connection setup ---- */

static int family = AF_INET;
static const char *listen_addr;		/* NULL: loopback */
static const char *connect_addr;	/* NULL: listen_addr */
static const char *sink_netns, *source_netns;
static int sink_ns_fd = -1, source_ns_fd = -1, orig_ns_fd = -1;
static int sink_cpu = -1, source_cpu = -1;	/* --sink-cpu, --source-cpu */

/*
 * Move the calling thread to the network namespace @fd (-1: stay). A
 * socket belongs to the namespace it was created in, so the listener is
 * made in the sink's, the source's socket in the source's.
 */
static void enter_netns(int fd, const char *name)
{
	if (fd >= 0 && setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "ddp-bench: setns %s: %s\n", name, strerror(errno));
		exit(1);
	}
}

static int make_listener(int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = iw_bench_addr(family, listen_addr, 0, &ss);
	int fd;

	enter_netns(sink_ns_fd, sink_netns);
	fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		perror("ddp-bench: listener");
		exit(1);
	}
	*port = ntohs(family == AF_INET6 ?
		      ((struct sockaddr_in6 *)&ss)->sin6_port :
		      ((struct sockaddr_in *)&ss)->sin_port);
	if (source_ns_fd >= 0)
		enter_netns(source_ns_fd, source_netns);
	else
		enter_netns(orig_ns_fd, "back");
	return fd;
}

static int mpa_setup(int fd, __u32 role, unsigned int flags)
{
	struct mpa_info info;

	if (no_crc)
		flags |= MPA_F_NO_CRC;
	if (iw_mpa_attach(fd)) {
		set_err("TCP_ULP mpa: %s", strerror(errno));
		return -1;
	}
	if (iw_mpa_start(fd, role, flags, NULL, 0, NULL, 0)) {
		set_err("MPA_START: %s%s", strerror(errno), errno == EPERM && no_crc ?
			" (--no-crc needs /sys/module/mpa/parameters/allow_no_crc=1)" : "");
		return -1;
	}
	if (iw_mpa_wait_startup(fd, role, 10000, &info)) {
		set_err(errno == ETIMEDOUT ? "MPA startup timeout" : "MPA_INFO: %s",
			strerror(errno));
		return -1;
	}
	if (info.state == MPA_S_ERROR) {
		set_err("MPA startup error %u", info.error);
		return -1;
	}
	if (role == MPA_ROLE_RESPONDER && info.state == MPA_S_REQ_RCVD) {
		if (iw_mpa_accept(fd, NULL, 0)) {
			set_err("MPA_ACCEPT: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (role == MPA_ROLE_INITIATOR && info.state == MPA_S_FULL) {
		sh->mulpdu = info.mulpdu;
		sh->crc = !!(info.flags & MPA_I_CRC);
		if (sh->crc == !!no_crc) {
			set_err("MPA negotiated CRC %s, wanted %s", sh->crc ? "on" : "off",
				no_crc ? "off" : "on");
			return -1;
		}
		return 0;
	}
	set_err("MPA startup ended in state %u", info.state);
	return -1;
}

static int ddp_bench_bind(int pd, int sock)
{
	int sfd = iw_ddp_bind(pd, sock, 1);

	if (sfd < 0)
		set_err("DDP_IOC_BIND: %s", strerror(errno));
	return sfd;
}

/* ---- sink (child) ---- */

static void give_credit(uint32_t n)
{
	__atomic_add_fetch(&sh->credits, n, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&sh->src_waiting, 0, __ATOMIC_ACQ_REL))
		futex(&sh->credits, FUTEX_WAKE, 1, NULL);
}

static void post(int sfd, void *buf, size_t len, __u64 cookie)
{
	if (iw_ddp_post_recv(sfd, buf, len, 0, cookie))
		set_err("DDP_IOC_POST_RECV: %s", strerror(errno));
}

/* Count the octets of completed messages after @warm s for @secs s. */
struct meter {
	double t0, start, end;
	uint64_t bytes, msgs;
	struct iw_cpu_mark c0;
	int state;		/* 0 warm-up, 1 measuring, 2 done */
};

static void meter_add(struct meter *m, uint64_t n, double warm, double secs)
{
	struct iw_cpu_mark c1;
	double t = iw_now_s();

	if (!m->t0)
		m->t0 = t;
	if (m->state == 0 && t - m->t0 >= warm) {
		m->state = 1;
		m->start = t;
		iw_cpu_mark(&m->c0);
		__atomic_store_n(&sh->measuring, 1, __ATOMIC_RELEASE);
	} else if (m->state == 1) {
		m->bytes += n;
		m->msgs++;
		if (t - m->start >= secs) {
			m->state = 2;
			m->end = t;
			iw_cpu_mark(&c1);
			sh->sys_cpu_s = iw_cpu_busy(&m->c0, &c1);
			sh->tick_cpu_s = iw_cpu_ticks(&m->c0, &c1);
			sh->sink_cpu_s = c1.self_s - m->c0.self_s;
			sh->win_bytes = m->bytes;
			sh->win_msgs = m->msgs;
			sh->win_secs = m->end - m->start;
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
			futex(&sh->credits, FUTEX_WAKE, 1, NULL);
		}
	}
}

static int sink_tcp(int fd, size_t size, double warm, double secs)
{
	struct meter m = { 0 };
	char *buf = malloc(size);
	ssize_t n;

	if (!buf)
		return -1;
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	futex(&sh->ready, FUTEX_WAKE, 1, NULL);
	for (;;) {
		n = read(fd, buf, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_err("read: %s", strerror(errno));
			return -1;
		}
		if (!n)
			break;
		sh->rx_msgs++;
		meter_add(&m, n, warm, secs);
	}
	free(buf);
	if (m.state != 2) {
		set_err("tcp: the source stopped before the end of the measurement");
		return -1;
	}
	return 0;
}

static int sink_ddp(int sock, const struct cfg *c, size_t size, double warm,
		    double secs)
{
	struct ddp_event ev[EVBATCH];
	struct meter m = { 0 };
	struct mpa_stats st;
	uint8_t *buf, hdr[64];
	int pd, sfd, i, closed = 0;
	ssize_t n;

	if (mpa_setup(sock, MPA_ROLE_RESPONDER, c->flags))
		return -1;
	/*
	 * The source's first FPDU, a zero-length tagged message, is read
	 * before the bind: the stream starts with nothing in flight.
	 */
	n = recv(sock, hdr, sizeof(hdr), 0);
	if (n != sizeof(struct ddp_tagged_hdr)) {
		set_err("sink: first FPDU: %zd %s", n, n < 0 ? strerror(errno) : "");
		return -1;
	}
	pd = iw_ddp_open();
	if (pd < 0) {
		set_err("/dev/ddp: %s", strerror(errno));
		return -1;
	}
	sfd = ddp_bench_bind(pd, sock);
	if (sfd < 0)
		return -1;
	buf = mmap(NULL, WINDOW * size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		set_err("mmap: %s", strerror(errno));
		return -1;
	}
	if (c->mode == M_TAGGED) {
		sh->base_to = 0x100000000ULL;
		if (iw_ddp_reg_mr(pd, buf, WINDOW * size, sh->base_to,
				  DDP_ACCESS_REMOTE_WRITE, sfd, &sh->stag)) {
			set_err("DDP_IOC_REG_MR: %s", strerror(errno));
			return -1;
		}
	} else {
		for (i = 0; i < WINDOW; i++)
			post(sfd, buf + i * size, size, i);
		if (sh->err[0])
			return -1;
	}
	__atomic_store_n(&sh->credits, WINDOW, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	futex(&sh->ready, FUTEX_WAKE, 1, NULL);

	while (!closed) {
		n = read(sfd, ev, sizeof(ev));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			set_err("read stream: %s", n ? strerror(errno) : "EOF");
			return -1;
		}
		for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++) {
			if (ev[i].type == DDP_EV_ERROR) {
				set_err("DDP error type 0x%x code 0x%02x",
					ev[i].err_type, ev[i].err_code);
				return -1;
			}
			if (ev[i].type == DDP_EV_PEER_CLOSED)
				closed = 1;
			if (ev[i].type != DDP_EV_RECV && ev[i].type != DDP_EV_TAGGED)
				continue;
			/* a completed untagged buffer goes back at once */
			if (ev[i].type == DDP_EV_RECV)
				post(sfd, buf + ev[i].cookie * size, size,
				     ev[i].cookie);
			sh->rx_msgs++;
			give_credit(1);
			meter_add(&m, ev[i].len, warm, secs);
		}
		if (sh->err[0])
			return -1;
	}
	if (!iw_mpa_stats(sock, &st))
		sh->rx_fpdus = st.rx_fpdus;
	close(sfd);
	close(pd);
	munmap(buf, WINDOW * size);
	if (m.state != 2) {
		set_err("ddp: the source stopped before the end of the measurement");
		return -1;
	}
	return 0;
}

/* ---- source (parent) ---- */

/* The source's CPU time over the sink's window, as far as it sees it. */
static struct iw_cpu_mark src_c0;
static int src_phase;		/* 0 before the window, 1 in it, 2 after */

static void src_cpu_track(void)
{
	struct iw_cpu_mark m;

	if (src_phase == 0 && load(&sh->measuring)) {
		iw_cpu_mark(&src_c0);
		src_phase = 1;
	}
	if (src_phase == 1 && load(&sh->stop)) {
		iw_cpu_mark(&m);
		sh->src_cpu_s = m.self_s - src_c0.self_s;
		src_phase = 2;
	}
}

/* Wait until message @i may be sent; false once the sink stopped. */
static int wait_credit(uint32_t i)
{
	struct timespec t = { 0, 100 * 1000 * 1000 };
	uint32_t c;

	for (;;) {
		if (load(&sh->stop))
			return 0;
		c = load(&sh->credits);
		if ((int32_t)(c - i) > 0)
			return 1;
		__atomic_store_n(&sh->src_waiting, 1, __ATOMIC_RELEASE);
		if (load(&sh->credits) == c && !load(&sh->stop))
			futex(&sh->credits, FUTEX_WAIT, c, &t);
	}
}

static int wait_ready(pid_t child)
{
	struct timespec t = { 0, 100 * 1000 * 1000 };
	int i;

	for (i = 0; i < 300 && !load(&sh->ready); i++) {
		if (sh->err[0] || waitpid(child, NULL, WNOHANG) == child)
			return -1;
		futex(&sh->ready, FUTEX_WAIT, 0, &t);
	}
	return load(&sh->ready) ? 0 : -1;
}

static int source_tcp(int fd, size_t size, pid_t child)
{
	char *buf = calloc(1, size);
	size_t off;
	ssize_t n;

	if (!buf || wait_ready(child))
		return -1;
	while (!load(&sh->stop)) {
		src_cpu_track();
		for (off = 0; off < size; off += n) {
			n = write(fd, buf + off, size - off);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n < 0) {
				set_err("write: %s", strerror(errno));
				return -1;
			}
		}
	}
	src_cpu_track();
	shutdown(fd, SHUT_WR);
	free(buf);
	return 0;
}

/*
 * --batch: @batch messages per DDP_IOC_SEND_BATCH, once the sink has
 * room for all of them. The kernel sends each but the last of a call as
 * one that another follows at once (trains, packed small FPDUs).
 */
static int source_batch(int sfd, const struct cfg *c, const char *buf,
			size_t size)
{
	struct ddp_send sd[MAX_BATCH];
	struct ddp_send_batch b = {
		.sends = (uintptr_t)sd,
		.count = batch,
	};
	uint32_t i, k;

	memset(sd, 0, sizeof(sd));
	for (k = 0; k < batch; k++) {
		sd[k].addr = (uintptr_t)buf;
		sd[k].len = size;
		sd[k].flags = c->mode == M_TAGGED ? DDP_SEND_TAGGED : 0;
		sd[k].stag = sh->stag;
	}
	for (i = 0; wait_credit(i + batch - 1); i += batch) {
		src_cpu_track();
		for (k = 0; k < batch; k++)
			sd[k].to = sh->base_to + (uint64_t)((i + k) % WINDOW) * size;
		b.done = 0;
		if (ioctl(sfd, DDP_IOC_SEND_BATCH, &b)) {
			set_err("DDP_IOC_SEND_BATCH: %s (done %u)", strerror(errno),
				b.done);
			return -1;
		}
	}
	return 0;
}

static int source_ddp(int sock, const struct cfg *c, size_t size, pid_t child)
{
	struct ddp_event ev;
	__u64 to;
	char *buf = calloc(1, size);
	uint32_t i;
	int pd, sfd;

	if (!buf || mpa_setup(sock, MPA_ROLE_INITIATOR, c->flags))
		return -1;
	pd = iw_ddp_open();
	if (pd < 0) {
		set_err("/dev/ddp: %s", strerror(errno));
		return -1;
	}
	sfd = ddp_bench_bind(pd, sock);
	if (sfd < 0)
		return -1;
	/* the first FPDU: a zero-length tagged message, needs no buffer */
	if (iw_ddp_send_tagged(sfd, buf, 0, 0, 0, 0)) {
		set_err("DDP_IOC_SEND: %s", strerror(errno));
		return -1;
	}
	if (wait_ready(child))
		return -1;
	for (i = 0; batch == 1 && wait_credit(i); i++) {
		src_cpu_track();
		to = sh->base_to + (uint64_t)(i % WINDOW) * size;
		if (c->mode == M_TAGGED ?
		    iw_ddp_send_tagged(sfd, buf, size, sh->stag, to, 0) :
		    iw_ddp_send_untagged(sfd, buf, size, 0, NULL)) {
			set_err("DDP_IOC_SEND: %s", strerror(errno));
			return -1;
		}
	}
	if (batch > 1 && source_batch(sfd, c, buf, size))
		return -1;
	src_cpu_track();
	if (iw_ddp_shutdown(sfd))
		set_err("DDP_IOC_SHUTDOWN: %s", strerror(errno));
	/* the sink closes when it got our FIN; no event is expected before */
	fcntl(sfd, F_SETFL, O_NONBLOCK);
	while (read(sfd, &ev, sizeof(ev)) == sizeof(ev))
		;
	close(sfd);
	close(pd);
	free(buf);
	return 0;
}

/* ---- runs ---- */

static int run_one(const struct cfg *c, size_t size, double secs,
		   struct result *r)
{
	double warm = secs < 2 ? secs / 4 : 0.5;
	struct sockaddr_storage ss;
	int lfd, fd, port, status, ret;
	socklen_t len;
	pid_t pid;

	memset(sh, 0, sizeof(*sh));
	sh->src_cpu_s = -1;
	src_phase = 0;
	lfd = make_listener(&port);
	fflush(NULL);		/* the sink may exit() in iw_bench_pin() */
	pid = fork();
	if (pid < 0) {
		perror("ddp-bench: fork");
		exit(1);
	}
	if (!pid) {
		iw_bench_pin(sink_cpu, "sink");
		alarm((unsigned int)(secs + warm) + RUN_SLACK_S);
		fd = accept(lfd, NULL, NULL);
		close(lfd);
		if (fd < 0) {
			set_err("accept: %s", strerror(errno));
			_exit(1);
		}
		ret = c->mode == M_TCP ? sink_tcp(fd, size, warm, secs) :
		      sink_ddp(fd, c, size, warm, secs);
		close(fd);
		_exit(ret ? 1 : 0);
	}
	close(lfd);
	iw_bench_pin(source_cpu, "source");
	alarm((unsigned int)(secs + warm) + RUN_SLACK_S);
	len = iw_bench_addr(family, connect_addr ? connect_addr : listen_addr, port, &ss);
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len)) {
		set_err("connect: %s", strerror(errno));
		ret = -1;
	} else {
		ret = c->mode == M_TCP ? source_tcp(fd, size, pid) :
		      source_ddp(fd, c, size, pid);
	}
	if (ret)
		kill(pid, SIGKILL);
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		ret = -1;
	alarm(0);
	/* the source (this process) was pinned from the fork on */
	iw_bench_unpin();
	if (ret) {
		fprintf(stderr, "ddp-bench: %s: %s\n", c->name,
			sh->err[0] ? sh->err : "failed");
		return -1;
	}
	r->mbps = sh->win_secs > 0 ? sh->win_bytes / sh->win_secs / 1e6 : 0;
	/* raw TCP: read() calls do not match messages; count SIZE writes */
	r->msgs_s = c->mode == M_TCP ? r->mbps * 1e6 / size :
		    sh->win_secs > 0 ? sh->win_msgs / sh->win_secs : 0;
	r->fpdus_per_msg = sh->rx_msgs ? (double)sh->rx_fpdus / sh->rx_msgs : 0;
	r->mulpdu = sh->mulpdu;
	r->crc = c->mode == M_TCP ? 0 : sh->crc;
	r->cpu_gb = iw_cpu_per_gb(sh->sys_cpu_s, sh->win_bytes);
	r->tick_cpu_gb = iw_cpu_per_gb(sh->tick_cpu_s, sh->win_bytes);
	r->sink_cpu_gb = iw_cpu_per_gb(sh->sink_cpu_s, sh->win_bytes);
	r->src_cpu_gb = iw_cpu_per_gb(sh->src_cpu_s, sh->win_bytes);
	return 0;
}

/* The median of the double at offset @off of @n results */
static double med_of(const struct result *rs, int n, size_t off)
{
	double v[MAX_ROUNDS];
	int k;

	for (k = 0; k < n; k++)
		memcpy(&v[k], (const char *)&rs[k] + off, sizeof(double));
	return iw_median(v, n);
}

/*
 * One JSON line: a single run (@rounds 1) or the medians of a table row.
 * Keys are stable; see ddp-bench(1).
 */
static void print_json(const struct cfg *c, size_t size, const struct result *r,
		       int rounds, double min, double max)
{
	printf("{");
	iw_json_str("tool", "ddp-bench");
	iw_json_str("name", c->name);
	printf("\"size\": %zu, ", size);
	iw_json_num("mb_s", r->mbps, 3);
	iw_json_num("mb_s_min", min, 3);
	iw_json_num("mb_s_max", max, 3);
	iw_json_num("msgs_s", r->msgs_s, 1);
	printf("\"rtt_us\": null, ");
	iw_json_num("cpu_s_per_gb", r->cpu_gb, 3);
	iw_json_num("cpu_tx_s_per_gb", r->src_cpu_gb, 3);
	iw_json_num("cpu_rx_s_per_gb", r->sink_cpu_gb, 3);
	iw_json_num("cpu_ticks_s_per_gb", r->tick_cpu_gb, 3);
	printf("\"crc\": %s, ", r->crc ? "true" : "false");
	printf("\"markers\": %s, ", c->flags & MPA_F_MARKERS ? "true" : "false");
	printf("\"batch\": %u, ", c->mode == M_TCP ? 1 : batch);
	iw_json_num("sink_cpu", sink_cpu, 0);
	iw_json_num("source_cpu", source_cpu, 0);
	iw_json_str("path",
		    iw_bench_path(family, listen_addr, connect_addr, sink_netns, source_netns));
	iw_json_str("addr", connect_addr ? connect_addr :
			 listen_addr ? listen_addr : "loopback");
	iw_json_num("fpdus_per_msg", c->mode == M_TCP ? -1 : r->fpdus_per_msg, 2);
	iw_json_num("mulpdu", c->mode == M_TCP ? -1.0 : (double)r->mulpdu, 0);
	printf("\"rounds\": %d}\n", rounds);
	fflush(stdout);
}

static void print_header(FILE *f, size_t size, double secs, int rounds)
{
	struct utsname u;

	uname(&u);
	if (listen_addr || connect_addr || sink_netns || source_netns) {
		fprintf(f, "ddp-bench: kernel %s, sink on %s (netns %s),", u.release,
			listen_addr ? listen_addr : "loopback", sink_netns ? sink_netns : "-");
		fprintf(f, " source (netns %s) to %s,\n", source_netns ? source_netns : "-",
			connect_addr ? connect_addr :
			listen_addr ? listen_addr : "loopback");
		fprintf(f, "ddp-bench: %zu-octet messages, window %d,\n", size, WINDOW);
	} else {
		fprintf(f, "ddp-bench: kernel %s, %s loopback, %zu-octet messages, window %d,\n",
			u.release, family == AF_INET6 ? "IPv6" : "IPv4", size, WINDOW);
	}
	fprintf(f, "ddp-bench: %.1f s per run after a warm-up, %d round(s), MPA CRC %s\n",
		secs, rounds, no_crc ? "off" : "on");
	if (source_cpu >= 0)
		fprintf(f, "ddp-bench: source pinned to CPU %d\n", source_cpu);
	if (sink_cpu >= 0)
		fprintf(f, "ddp-bench: sink pinned to CPU %d\n", sink_cpu);
}

static int run_table(size_t size, double secs, int rounds)
{
	static struct result rs[NCFGS][MAX_ROUNDS];
	double v[MAX_ROUNDS], med[NCFGS];
	int ok[NCFGS] = { 0 }, i, k, fail = 0;
	struct result m;

	print_header(json ? stderr : stdout, size, secs, rounds);
	for (k = 0; k < rounds; k++) {
		for (i = 0; i < NCFGS; i++) {
			if (run_one(&cfgs[i], size, secs, &rs[i][ok[i]])) {
				fail = 1;
				continue;
			}
			ok[i]++;
		}
	}
	if (!json)
		printf("%-22s %10s %10s %10s %8s %9s %7s %9s\n", "config", "MB/s", "min",
		       "max", "vs tcp", "FPDU/msg", "MULPDU", "CPU s/GB");
	for (i = 0; i < NCFGS; i++) {
		if (!ok[i]) {
			if (!json)
				printf("%-22s %10s\n", cfgs[i].name, "FAILED");
			continue;
		}
		m = rs[i][ok[i] - 1];
		m.msgs_s = med_of(rs[i], ok[i], offsetof(struct result, msgs_s));
		m.fpdus_per_msg = med_of(rs[i], ok[i],
					 offsetof(struct result, fpdus_per_msg));
		m.cpu_gb = med_of(rs[i], ok[i], offsetof(struct result, cpu_gb));
		m.tick_cpu_gb = med_of(rs[i], ok[i], offsetof(struct result, tick_cpu_gb));
		m.sink_cpu_gb = med_of(rs[i], ok[i], offsetof(struct result, sink_cpu_gb));
		m.src_cpu_gb = med_of(rs[i], ok[i], offsetof(struct result, src_cpu_gb));
		m.mbps = med_of(rs[i], ok[i], offsetof(struct result, mbps));
		med[i] = m.mbps;
		for (k = 0; k < ok[i]; k++)
			v[k] = rs[i][k].mbps;
		qsort(v, ok[i], sizeof(double), iw_cmp_double);
		if (json) {
			print_json(&cfgs[i], size, &m, ok[i], v[0], v[ok[i] - 1]);
			continue;
		}
		printf("%-22s %10.1f %10.1f %10.1f", cfgs[i].name, med[i], v[0],
		       v[ok[i] - 1]);
		if (ok[0] && med[0] > 0)
			printf(" %8.2f", med[i] / med[0]);
		else
			printf(" %8s", "-");
		if (cfgs[i].mode == M_TCP)
			printf(" %9s %7s", "-", "-");
		else
			printf(" %9.2f %7u", m.fpdus_per_msg, m.mulpdu);
		if (m.cpu_gb >= 0)
			printf(" %9.2f\n", m.cpu_gb);
		else
			printf(" %9s\n", "-");
	}
	return fail;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, 'M' },
		{ "markers", no_argument, NULL, 'k' },
		{ "no-crc", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "size", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "table", no_argument, NULL, 'T' },
		{ "batch", required_argument, NULL, 'B' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "listen-addr", required_argument, NULL, 'L' },
		{ "connect-addr", required_argument, NULL, 'C' },
		{ "sink-netns", required_argument, NULL, 'N' },
		{ "source-netns", required_argument, NULL, 'n' },
		{ "sink-cpu", required_argument, NULL, 'P' },
		{ "source-cpu", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cfg one = { "ddp tagged", M_TAGGED, 0 };
	struct sockaddr_storage ss;
	int table = 0, rounds = 3, c;
	double secs = 2;
	size_t size = DEF_SIZE;
	struct result r;
	char *end;

	while ((c = getopt_long(argc, argv, "6h", lopts, NULL)) != -1) {
		switch (c) {
		case 'M':
			if (!strcmp(optarg, "tcp"))
				one.mode = M_TCP;
			else if (!strcmp(optarg, "tagged"))
				one.mode = M_TAGGED;
			else if (!strcmp(optarg, "untagged"))
				one.mode = M_UNTAGGED;
			else
				goto usage;
			break;
		case 'k':
			one.flags |= MPA_F_MARKERS;
			break;
		case 'c':
			no_crc = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 's':
			size = strtoul(optarg, &end, 0);
			if (*end || !size || size > MAX_SIZE)
				goto usage;
			break;
		case 'S':
			secs = strtod(optarg, &end);
			if (*end || secs < 0.1 || secs > 600)
				goto usage;
			break;
		case 'T':
			table = 1;
			break;
		case 'B':
			batch = strtoul(optarg, &end, 0);
			if (*end || !batch || batch > MAX_BATCH)
				goto usage;
			break;
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > MAX_ROUNDS)
				goto usage;
			break;
		case '6':
			family = AF_INET6;
			break;
		case 'L':
			listen_addr = optarg;
			break;
		case 'C':
			connect_addr = optarg;
			break;
		case 'N':
			sink_netns = optarg;
			break;
		case 'n':
			source_netns = optarg;
			break;
		case 'P':
			if (iw_bench_cpu_arg(optarg, &sink_cpu))
				goto usage;
			break;
		case 'p':
			if (iw_bench_cpu_arg(optarg, &source_cpu))
				goto usage;
			break;
		case 'V':
			iw_print_version();
			return 0;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	/* a bad address is a usage error, found before any output */
	iw_bench_addr(family, listen_addr, 0, &ss);
	iw_bench_addr(family, connect_addr, 0, &ss);
	if (no_crc && !iw_bench_no_crc_allowed("--no-crc"))
		return 1;
	iw_bench_netns(sink_netns, source_netns, &sink_ns_fd, &source_ns_fd, &orig_ns_fd);
	/* a CPU that cannot be had fails here, not in every run */
	iw_bench_pin(sink_cpu, "sink");
	iw_bench_pin(source_cpu, "source");
	iw_bench_unpin();
	signal(SIGPIPE, SIG_IGN);
	iw_raise_memlock(0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("ddp-bench: mmap");
		return 1;
	}
	if (table)
		return run_table(size, secs, rounds) ? 1 : 0;

	one.name = one.mode == M_TCP ? "tcp" :
		   one.mode == M_TAGGED ? (one.flags ? "ddp tagged markers" : "ddp tagged") :
		   (one.flags ? "ddp untagged markers" : "ddp untagged");
	print_header(json ? stderr : stdout, size, secs, 1);
	if (run_one(&one, size, secs, &r))
		return 1;
	if (json) {
		print_json(&one, size, &r, 1, r.mbps, r.mbps);
		return 0;
	}
	printf("%s: %.1f MB/s", one.name, r.mbps);
	if (one.mode != M_TCP)
		printf(", %.2f FPDUs per message, MULPDU %u", r.fpdus_per_msg,
		       r.mulpdu);
	if (r.cpu_gb >= 0)
		printf(", CPU %.2f s/GB (source %.2f, sink %.2f)", r.cpu_gb,
		       r.src_cpu_gb, r.sink_cpu_gb);
	printf("\n");
	return 0;
usage:
	print_usage(stderr);
	return 2;
}
