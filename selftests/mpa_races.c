// SPDX-License-Identifier: GPL-2.0
/*
 * Races: threads hammer one MPA connection pair, its DDP streams and
 * their protection domain at the same time, over many short rounds.
 *
 * Each round the main thread makes a loopback TCP pair, attaches "mpa" to
 * both ends and opens a PD; then one thread per role works on the same
 * file descriptors at once: the MPA startup, close and shutdown, bind
 * (DDP_IOC_BIND) and unbind (close of a stream fd), register and
 * invalidate, post, send (send() and DDP_IOC_SEND), receive (recv() and
 * read() of events) and the startup options (MPA_START, MPA_ACCEPT,
 * MPA_TIMEOUT). The "unload" variant adds a thread that tries to unload
 * and load ddp.ko and mpa.ko during the rounds, and unloads ddp.ko
 * between rounds, when nothing may hold it any more.
 *
 * What is checked:
 * - the kernel survives (the VM panics on a WARN, lockup or oops);
 * - every call returns success or one of the errnos listed for it in
 *   ops[] below; anything else fails the test;
 * - no round hangs (a watchdog fails the test after ROUND_HANG_S);
 * - no file descriptor, pinned page (VmLck) or module reference leaks:
 *   after the last round ddp.ko's refcount is 0 and mpa.ko's returns to
 *   0 once the closed sockets are gone;
 * - the rounds did real work: full operation reached, DDP events read.
 *
 * The file descriptors live at fixed high numbers (SLOT_BASE + slot).
 * New descriptors take the lowest free number, so a closed slot is never
 * reused by accident and an operation on a closed slot is exactly EBADF;
 * only the binder installs a new stream in a stream slot, with dup2().
 *
 * Environment: RACE_SECONDS per variant (default 10), MPA_KO and DDP_KO
 * for the unload variant (set by run_tests.sh; skipped without them).
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"

#define SLOT_BASE	900
#define ROUND_HANG_S	60
#define STARTUP_WAIT_MS	20
#define DATA_MS		60
#define MEM_LEN		(1024 * 1024)
#define SRC_LEN		(64 << 10)
#define MAX_ERRNO	134
#define MAX_REPORTS	20

enum slot { S0, S1, PD, ST0, ST1, NSLOT };

enum op {
	OP_CLOSE, OP_SHUTDOWN, OP_BIND, OP_UNBIND, OP_INVALIDATE, OP_REG,
	OP_POST, OP_SEND, OP_DDP_SEND, OP_RECV, OP_READ, OP_START,
	OP_ACCEPT, OP_TIMEOUT, OP_INFO, OP_RMMOD, OP_INSMOD, OP_RMMOD_IDLE,
	OP_OPEN_PD, NOPS
};

/*
 * CONN: the errnos of a connection that failed: a reset or the peer's
 * close (TCP), RFC 5044 error 1 (ECONNRESET) and error 4 (ECONNABORTED,
 * or ETIMEDOUT for the startup timeout). Errors 2 and 3 (EBADMSG, EPROTO)
 * are not allowed: nothing here corrupts a stream.
 */
static const struct op_desc {
	const char *name;
	int ok[16];	/* allowed errnos, 0-terminated; success is always fine */
} ops[NOPS] = {
	[OP_CLOSE]	= { "close",		{ EBADF } },
	[OP_SHUTDOWN]	= { "shutdown",		{ EBADF, ENOTCONN } },
	/* EBUSY: bound already or being closed */
	[OP_BIND]	= { "DDP_IOC_BIND",	{ EBADF, EBUSY } },
	[OP_UNBIND]	= { "close(stream)",	{ EBADF } },
	[OP_INVALIDATE]	= { "DDP_IOC_INVALIDATE", { EBADF, ENOENT } },
	[OP_REG]	= { "DDP_IOC_REG_MR",	{ EBADF } },
	[OP_POST]	= { "DDP_IOC_POST_RECV", { EBADF, ENOBUFS } },
	/* EAGAIN: MSG_DONTWAIT, or SO_SNDTIMEO (startup, rule 4) */
	[OP_SEND]	= { "send",
			    { EBADF, EAGAIN, ECONNRESET, ECONNABORTED, ETIMEDOUT, EPIPE } },
	/* ENOTCONN: not in full operation */
	[OP_DDP_SEND]	= { "DDP_IOC_SEND", { EBADF, EAGAIN, ENOTCONN, ECONNRESET,
					      ECONNABORTED, ETIMEDOUT, EPIPE } },
	[OP_RECV]	= { "recv",
			    { EBADF, EAGAIN, ECONNRESET, ECONNABORTED, ETIMEDOUT, EPIPE } },
	[OP_READ]	= { "read(stream)",	{ EBADF, EAGAIN } },
	/* ENOTCONN: TCP no longer established; EPIPE: Request not sent */
	[OP_START]	= { "MPA_START",	{ EBADF, EISCONN, ENOTCONN, EPIPE } },
	/* EINVAL: not in REQ_RCVD */
	[OP_ACCEPT]	= { "MPA_ACCEPT",
			    { EBADF, EINVAL, ECONNRESET, ECONNABORTED, ETIMEDOUT, EPIPE } },
	[OP_TIMEOUT]	= { "MPA_TIMEOUT",	{ EBADF, EISCONN } },
	[OP_INFO]	= { "MPA_INFO",		{ EBADF } },
	/* EAGAIN (EWOULDBLOCK): in use; EBUSY: being loaded or unloaded */
	[OP_RMMOD]	= { "delete_module",	{ EAGAIN, ENOENT, EBUSY } },
	[OP_INSMOD]	= { "finit_module",	{ EEXIST, ENOENT, EBUSY } },
	/* between rounds nothing holds ddp.ko: the unload must succeed */
	[OP_RMMOD_IDLE]	= { "delete_module(idle ddp)", { } },
	[OP_OPEN_PD]	= { "open(/dev/ddp)",	{ ENOENT } },
};

struct race {
	/* per test */
	int ddp;
	int unload;
	__u8 *mem;
	__u8 *src;
	atomic_uint stats[NOPS][MAX_ERRNO + 1];
	atomic_uint reports;
	atomic_uint bad;
	atomic_uint full;	/* rounds where the Initiator reached FULL */
	atomic_uint events;	/* DDP events read */
	atomic_uint tagged;	/* DDP_EV_TAGGED events */
	atomic_uint recvd;	/* ULPDUs or TCP octets received by recv() */
	/* per round */
	atomic_uint stag;	/* the last STag registered */
	atomic_int round_done;
	unsigned int round;
};

struct worker {
	struct race *r;
	pthread_t th;
	void *(*fn)(void *arg);
	const char *name;
	__u32 rnd;
	atomic_int done;
};

/* SIGPIPE is process-directed: which call raised it is not known */
static atomic_uint sigpipes;

static void on_pipe(int sig)
{
	atomic_fetch_add(&sigpipes, 1);
}

static int fd_of(enum slot s)
{
	return SLOT_BASE + s;
}

static __u32 rnd(struct worker *w)
{
	__u32 x = w->rnd;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	w->rnd = x;
	return x;
}

/* a short, random pause: nothing, a spin or a sleep of up to @us */
static void pause_rnd(struct worker *w, __u32 us)
{
	__u32 v = rnd(w);
	__u32 i;

	switch (v & 3) {
	case 0:
		break;
	case 1:
		for (i = 0; i < v >> 28; i++)
			sched_yield();
		break;
	default:
		usleep((v >> 8) % (us + 1));
	}
}

/* count one outcome of @op; 0 for success. Returns @ret. */
static long note(struct race *r, enum op o, long ret, int err)
{
	const int *ok = ops[o].ok;
	int e = ret < 0 ? err : 0;

	if (e > MAX_ERRNO)
		e = MAX_ERRNO;
	atomic_fetch_add(&r->stats[o][e], 1);
	if (!e)
		return ret;
	for (; *ok; ok++)
		if (*ok == err)
			return ret;
	atomic_fetch_add(&r->bad, 1);
	if (atomic_fetch_add(&r->reports, 1) < MAX_REPORTS)
		fprintf(stderr, "# round %u: %s failed with errno %d (%s), not allowed\n",
			r->round, ops[o].name, err, strerror(err));
	return ret;
}

#define CALL(r, op, expr) ({ long __ret = (expr); note(r, op, __ret, errno); })

static int mpa_start_role(int fd, __u32 role)
{
	struct mpa_start st = { .role = role };

	return setsockopt(fd, SOL_MPA, MPA_START, &st, sizeof(st));
}

static int info_state(struct race *r, int fd)
{
	struct mpa_info i;
	socklen_t len = sizeof(i);

	if (CALL(r, OP_INFO, getsockopt(fd, SOL_MPA, MPA_INFO, &i, &len)))
		return -1;
	return i.state;
}

/* the MPA startup, as an application would run it */
static void *starter(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	__u32 ms = rnd(w) % 8 ? 0 : 1 + rnd(w) % 20;
	long long end;
	int st;

	if (ms)
		CALL(r, OP_TIMEOUT, setsockopt(fd_of(S0 + (rnd(w) & 1)), SOL_MPA,
					       MPA_TIMEOUT, &ms, sizeof(ms)));
	if (CALL(r, OP_START, mpa_start_role(fd_of(S1), MPA_ROLE_RESPONDER)))
		return NULL;
	pause_rnd(w, 100);
	if (CALL(r, OP_START, mpa_start_role(fd_of(S0), MPA_ROLE_INITIATOR)))
		return NULL;
	end = iw_now_ms() + STARTUP_WAIT_MS;
	do {
		st = info_state(r, fd_of(S1));
		if (st != MPA_S_REQ_WAIT)
			break;
		usleep(100);
	} while (iw_now_ms() < end);
	if (st != MPA_S_REQ_RCVD)
		return NULL;
	pause_rnd(w, 100);
	if (CALL(r, OP_ACCEPT, setsockopt(fd_of(S1), SOL_MPA, MPA_ACCEPT, "", 0)))
		return NULL;
	end = iw_now_ms() + STARTUP_WAIT_MS;
	do {
		st = info_state(r, fd_of(S0));
		if (st == MPA_S_FULL) {
			atomic_fetch_add(&r->full, 1);
			break;
		}
		if (st != MPA_S_REQ_SENT)
			break;
		usleep(100);
	} while (iw_now_ms() < end);
	return NULL;
}

/* close or shut down something, late enough that some rounds get going */
static void *closer(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	int n = 1 + rnd(w) % 3;

	/* one round in four gives the traffic some time */
	if (rnd(w) % 4 == 0)
		usleep(10000 + rnd(w) % 10000);
	while (n--) {
		__u32 v = rnd(w);

		usleep(rnd(w) % 4000);
		switch (v % 8) {
		case 0:
		case 1:
			CALL(r, OP_CLOSE, close(fd_of(S0 + (v >> 8) % 2)));
			break;
		case 2:
		case 3:
			CALL(r, OP_SHUTDOWN, shutdown(fd_of(S0 + (v >> 8) % 2),
						      (v >> 9) % 3));
			break;
		case 4:
		case 5:
			CALL(r, OP_UNBIND, close(fd_of(ST0 + (v >> 8) % 2)));
			break;
		case 6:
			CALL(r, OP_CLOSE, close(fd_of(PD)));
			break;
		default:
			break;
		}
	}
	atomic_store(&r->round_done, 1);
	return NULL;
}

/*
 * The data roles go on until the closer is done and a little longer,
 * at most DATA_MS: @n more operations after that.
 */
static bool data_more(struct worker *w, long long start, int *n)
{
	if (iw_now_ms() - start > DATA_MS)
		return false;
	if (!atomic_load(&w->r->round_done))
		return true;
	return (*n)-- > 0;
}

/* bind either socket, sometimes unbind and bind again */
static void *binder(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	int n = 2 + rnd(w) % 4;
	int k;

	/* both ends at once first, then unbind and bind again */
	for (k = 0; k < n; k++) {
		__u32 v = rnd(w);
		int i = k < 2 ? k ^ (v & 1) : (v >> 8) % 2;
		struct ddp_bind b = { .sock_fd = fd_of(S0 + i), .stream_fd = -1 };

		if (k >= 2)
			pause_rnd(w, 3000);
		if (v % 4 == 0 && k >= 2) {
			CALL(r, OP_UNBIND, close(fd_of(ST0 + i)));
			continue;
		}
		b.nqueues = (v >> 12) % 4;
		if (CALL(r, OP_BIND, ioctl(fd_of(PD), DDP_IOC_BIND, &b)))
			continue;
		/* non-blocking reads; then into the slot, closing an older stream */
		if (fcntl(b.stream_fd, F_SETFL, O_NONBLOCK) ||
		    dup2(b.stream_fd, fd_of(ST0 + i)) != fd_of(ST0 + i)) {
			fprintf(stderr, "# round %u: fcntl/dup2 of a stream fd: %s\n",
				r->round, strerror(errno));
			atomic_fetch_add(&r->bad, 1);
		}
		close(b.stream_fd);
	}
	return NULL;
}

/* register and invalidate tagged buffers of the PD */
static void *mr(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	int n = 4 + rnd(w) % 8;

	while (n--) {
		__u32 v = rnd(w);
		__u32 stag;

		pause_rnd(w, 1000);
		if (v % 3 == 0) {
			stag = atomic_load(&r->stag);
			if (v & 0x100)
				stag ^= 1;	/* a wrong key */
			CALL(r, OP_INVALIDATE, ioctl(fd_of(PD), DDP_IOC_INVALIDATE, &stag));
			continue;
		}
		{
			__u32 pg = (v >> 8) % (MEM_LEN / 4096 - 16);
			struct ddp_reg_mr m = {
				.addr = (uintptr_t)(r->mem + pg * 4096),
				.len = 4096 * (1 + (v >> 20) % 16),
				.access = DDP_ACCESS_REMOTE_WRITE,
				.stream_fd = v & 0x80 ? fd_of(ST0 + ((v >> 6) & 1)) : -1,
			};

			if (!CALL(r, OP_REG, ioctl(fd_of(PD), DDP_IOC_REG_MR, &m)))
				atomic_store(&r->stag, m.stag);
		}
	}
	return NULL;
}

static void *poster(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	long long start = iw_now_ms();
	int n = 2 + rnd(w) % 8;

	while (data_more(w, start, &n)) {
		__u32 v = rnd(w);
		__u32 pg = (v >> 8) % (MEM_LEN / 4096 - 2);

		pause_rnd(w, 1000);
		CALL(r, OP_POST, iw_ddp_post_recv(fd_of(ST0 + (v & 1)), r->mem + pg * 4096,
						  4096 + (v >> 24) % 4096, 0, v));
	}
	return NULL;
}

static void *sender(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	long long start = iw_now_ms();
	int n = 4 + rnd(w) % 12;
	static const __u8 rsv[5];

	while (data_more(w, start, &n)) {
		__u32 v = rnd(w);
		int i = (v >> 4) & 1;
		__u32 len = (v >> 8) % 3 ? (v >> 12) % 1000 : (v >> 12) % SRC_LEN;

		pause_rnd(w, 1000);
		switch (r->ddp ? v % 4 : 0) {
		case 0:
			CALL(r, OP_SEND, send(fd_of(S0 + i), r->src, 1 + len % 200,
					      MSG_DONTWAIT | MSG_NOSIGNAL));
			break;
		case 1:
			/* zero-length tagged: needs no buffer, opens rule 4 */
			CALL(r, OP_DDP_SEND, iw_ddp_send_tagged(fd_of(ST0 + i), r->src, 0,
								0, 0, 0));
			break;
		case 2:
			CALL(r, OP_DDP_SEND, iw_ddp_send_tagged(fd_of(ST0 + i), r->src,
								len % 4096,
							     atomic_load(&r->stag),
							     0, 0));
			break;
		default:
			CALL(r, OP_DDP_SEND, iw_ddp_send_untagged(fd_of(ST0 + i), r->src,
								  len, 0, rsv));
			break;
		}
	}
	return NULL;
}

static void *receiver(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	long long start = iw_now_ms();
	int n = 8 + rnd(w) % 16;
	struct ddp_event ev[4];
	char buf[2048];
	long ret;
	int k;

	while (data_more(w, start, &n)) {
		__u32 v = rnd(w);
		int i = (v >> 4) & 1;

		pause_rnd(w, 1000);
		if ((v & 1) || !r->ddp) {
			ret = CALL(r, OP_RECV, recv(fd_of(S0 + i), buf, sizeof(buf),
						    MSG_DONTWAIT));
			if (ret > 0)
				atomic_fetch_add(&r->recvd, 1);
			continue;
		}
		ret = CALL(r, OP_READ, read(fd_of(ST0 + i), ev, sizeof(ev)));
		if (ret < 0)
			continue;
		if (ret % sizeof(ev[0])) {
			fprintf(stderr, "# round %u: read of events returned %ld\n",
				r->round, ret);
			atomic_fetch_add(&r->bad, 1);
			continue;
		}
		for (k = 0; k < ret / (long)sizeof(ev[0]); k++) {
			atomic_fetch_add(&r->events, 1);
			if (ev[k].type == DDP_EV_TAGGED)
				atomic_fetch_add(&r->tagged, 1);
			if (ev[k].type < DDP_EV_RECV || ev[k].type > DDP_EV_PEER_CLOSED) {
				fprintf(stderr, "# round %u: event type %u\n",
					r->round, ev[k].type);
				atomic_fetch_add(&r->bad, 1);
			}
		}
	}
	return NULL;
}

/* MPA_START, MPA_ACCEPT and MPA_TIMEOUT in any role, on either end */
static void *opts(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	int n = 2 + rnd(w) % 4;

	while (n--) {
		__u32 v = rnd(w);
		int fd = fd_of(S0 + ((v >> 4) & 1));
		__u32 ms = (v >> 8) % 50;

		pause_rnd(w, 1500);
		switch (v % 3) {
		case 0:
			CALL(r, OP_START, mpa_start_role(fd, v & 0x100 ? MPA_ROLE_INITIATOR
								   : MPA_ROLE_RESPONDER));
			break;
		case 1:
			CALL(r, OP_ACCEPT, setsockopt(fd, SOL_MPA, MPA_ACCEPT, "pd", 2));
			break;
		default:
			CALL(r, OP_TIMEOUT, setsockopt(fd, SOL_MPA, MPA_TIMEOUT, &ms,
						       sizeof(ms)));
			break;
		}
	}
	return NULL;
}

static int insmod(struct race *r, const char *env)
{
	const char *ko = getenv(env);
	int fd, ret;

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "# %s: %s\n", ko, strerror(errno));
		atomic_fetch_add(&r->bad, 1);
		return -1;
	}
	ret = CALL(r, OP_INSMOD, syscall(__NR_finit_module, fd, "", 0));
	close(fd);
	return ret;
}

/* unload and load the modules while the round runs */
static void *unloader(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	int n = 1 + rnd(w) % 3;

	while (n--) {
		__u32 v = rnd(w);

		pause_rnd(w, 1500);
		if (!CALL(r, OP_RMMOD, syscall(__NR_delete_module, v & 1 ? "mpa" : "ddp",
					       O_NONBLOCK))) {
			insmod(r, "MPA_KO");
			insmod(r, "DDP_KO");
		}
	}
	return NULL;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* a number from a line "KEY value" of a /proc or /sys file, -1 if absent */
static long proc_value(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n)) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long module_refcnt(const char *mod)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", mod);
	return proc_value(path, "");
}

/* a loopback pair with "mpa" on both ends, in slots S0 and S1, and the PD */
static int round_setup(struct race *r, int lfd, struct sockaddr_storage *a, socklen_t alen)
{
	struct timeval tv = { .tv_usec = 100000 };
	int s[2], pd, i;

	s[0] = socket(a->ss_family, SOCK_STREAM, 0);
	if (s[0] < 0 || connect(s[0], (struct sockaddr *)a, alen))
		return -1;
	s[1] = accept(lfd, NULL, NULL);
	if (s[1] < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		setsockopt(s[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(s[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (iw_mpa_attach(s[i]) && !(r->unload && errno == ENOENT))
			return -1;
		if (dup2(s[i], fd_of(S0 + i)) < 0)
			return -1;
		close(s[i]);
	}
	pd = CALL(r, OP_OPEN_PD, open("/dev/ddp", O_RDWR | O_CLOEXEC));
	if (pd >= 0) {
		if (dup2(pd, fd_of(PD)) < 0)
			return -1;
		close(pd);
	}
	atomic_store(&r->stag, 0);
	atomic_store(&r->round_done, 0);
	return 0;
}

static void round_cleanup(struct race *r, __u32 v)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int s;

	for (s = 0; s < NSLOT; s++) {
		/* half of the rounds end with a reset */
		if ((s == S0 || s == S1) && (v & 1))
			setsockopt(fd_of(s), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd_of(s));
	}
}

FIXTURE(race)
{
	struct race *r;
};

FIXTURE_VARIANT(race)
{
	int ddp;	/* the DDP roles */
	int unload;	/* the module roles */
};

FIXTURE_VARIANT_ADD(race, mpa)
{
	.ddp = 0,
};

FIXTURE_VARIANT_ADD(race, ddp)
{
	.ddp = 1,
};

FIXTURE_VARIANT_ADD(race, ddp_unload)
{
	.ddp = 1,
	.unload = 1,
};

FIXTURE_SETUP(race)
{
	signal(SIGPIPE, on_pipe);
	self->r = calloc(1, sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
	self->r->mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->r->mem);
	self->r->src = malloc(SRC_LEN);
	ASSERT_NE(NULL, self->r->src);
	dt_fill(self->r->src, SRC_LEN, 7);
	self->r->ddp = variant->ddp;
	self->r->unload = variant->unload;
}

FIXTURE_TEARDOWN(race)
{
	munmap(self->r->mem, MEM_LEN);
	free(self->r->src);
	free(self->r);
}

static void print_stats(struct race *r)
{
	char line[1024];
	int op, e, n;

	for (op = 0; op < NOPS; op++) {
		n = snprintf(line, sizeof(line), "%s:", ops[op].name);
		for (e = 0; e <= MAX_ERRNO; e++) {
			unsigned int c = atomic_load(&r->stats[op][e]);

			if (c && n < (int)sizeof(line) - 32)
				n += snprintf(line + n, sizeof(line) - n, " %s %u",
					      e ? strerrorname_np(e) : "ok", c);
		}
		if (strchr(line, ' '))
			printf("# %s\n", line);
	}
}

static const struct role {
	void *(*fn)(void *arg);
	const char *name;
} roles[] = {
	/* the first NROLES_MPA for the mpa variant */
	{ starter, "starter" }, { closer, "closer" }, { receiver, "receiver" },
	{ opts, "opts" }, { sender, "sender" },
	{ binder, "binder" }, { mr, "mr" }, { poster, "poster" },
	/* the unload variant */
	{ unloader, "unloader" },
};

#define NROLES_MPA	5
#define NROLES_DDP	8

TEST_F_TIMEOUT(race, run, 7200)
{
	const char *env = getenv("RACE_SECONDS");
	long long secs = env ? atoll(env) : 10;
	struct race *r = self->r;
	struct sockaddr_storage a;
	struct worker w[9] = {};
	long long t0, end, ms;
	socklen_t alen;
	unsigned long long nops = 0;
	int fds0, lfd, nw, i, k;
	long lck0, lck, ref, mpa_ref0;
	__u32 seed = 12345;

	if (variant->unload && (!getenv("MPA_KO") || !getenv("DDP_KO")))
		SKIP(return, "MPA_KO and DDP_KO are needed to load the modules again");
	nw = variant->ddp ? NROLES_DDP + variant->unload : NROLES_MPA;
	fds0 = count_fds();
	/* ddp.ko holds a reference on mpa.ko */
	mpa_ref0 = module_refcnt("mpa");
	lfd = iw_loopback_listen(AF_INET, &a, &alen);
	ASSERT_LE(0, lfd);
	lck0 = proc_value("/proc/self/status", "VmLck:");
	t0 = iw_now_ms();
	end = t0 + secs * 1000;
	for (r->round = 0; iw_now_ms() < end && !atomic_load(&r->bad); r->round++) {
		ASSERT_EQ(0, round_setup(r, lfd, &a, alen)) TH_LOG("round %u", r->round);
		for (i = 0; i < nw; i++) {
			w[i].r = r;
			w[i].fn = roles[i].fn;
			w[i].name = roles[i].name;
			seed = seed * 1103515245 + 12345;
			w[i].rnd = seed | 1;
			ASSERT_EQ(0, pthread_create(&w[i].th, NULL, w[i].fn, &w[i]));
		}
		for (i = 0; i < nw; i++) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += ROUND_HANG_S;
			ASSERT_EQ(0, pthread_timedjoin_np(w[i].th, NULL, &ts))
				TH_LOG("round %u: the %s thread hangs", r->round, w[i].name);
		}
		seed = seed * 1103515245 + 12345;
		round_cleanup(r, seed >> 16);
		if (variant->unload && (seed >> 20) % 4 == 0) {
			/* nothing holds ddp.ko now: it must go, and come back */
			if (!CALL(r, OP_RMMOD_IDLE, syscall(__NR_delete_module, "ddp",
							    O_NONBLOCK))) {
				if (!CALL(r, OP_RMMOD, syscall(__NR_delete_module, "mpa",
							       O_NONBLOCK)))
					insmod(r, "MPA_KO");
				insmod(r, "DDP_KO");
			} else {
				fprintf(stderr, "# ddp refcnt %ld\n", module_refcnt("ddp"));
			}
		}
	}
	close(lfd);
	for (i = 0; i < NOPS; i++)
		for (k = 0; k <= MAX_ERRNO; k++)
			nops += atomic_load(&r->stats[i][k]);
	ms = iw_now_ms() - t0 + 1;
	printf("# %llu calls in %u rounds in %.1f s: %.0f calls/s, %.1f rounds/s\n",
	       nops, r->round, ms / 1000.0, nops * 1000.0 / ms, r->round * 1000.0 / ms);
	printf("# Initiator in full operation in %u rounds, %u DDP events (%u tagged), %u recv\n",
	       atomic_load(&r->full), atomic_load(&r->events), atomic_load(&r->tagged),
	       atomic_load(&r->recvd));
	printf("# %u SIGPIPE\n", atomic_load(&sigpipes));
	print_stats(r);
	fflush(stdout);
	EXPECT_EQ(0, atomic_load(&r->bad));
	EXPECT_EQ(fds0, count_fds());
	lck = proc_value("/proc/self/status", "VmLck:");
	EXPECT_EQ(lck0, lck);
	EXPECT_LT(0, atomic_load(&r->full));
	if (variant->ddp) {
		EXPECT_LT(0, atomic_load(&r->events));
		EXPECT_LT(0, atomic_load(&r->stats[OP_BIND][0]));
		EXPECT_LT(0, atomic_load(&r->stats[OP_DDP_SEND][0]));
	}
	/* every stream and PD is closed: nothing holds ddp.ko */
	ref = module_refcnt("ddp");
	EXPECT_EQ(0, ref);
	/* closed sockets may linger in FIN_WAIT or LAST_ACK for a moment */
	for (i = 0; i < 100 && (ref = module_refcnt("mpa")) != mpa_ref0; i++)
		usleep(100000);
	EXPECT_EQ(mpa_ref0, ref) {
		fflush(stdout);
		system("cat /proc/net/sockstat; grep -i tcp /proc/slabinfo;"
		       "ss -tanoei state all | grep -v TIME-WAIT | sed 's/^/# /'");
	}
}

/*
 * Found by the races: send() with MSG_NOSIGNAL on an MPA socket in full
 * operation raised SIGPIPE when TCP refused the FPDU with EPIPE.
 */
TEST(send_nosignal_after_shutdown)
{
	int fds[2];

	atomic_store(&sigpipes, 0);
	signal(SIGPIPE, on_pipe);
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, DDP_TMO_MS));
	ASSERT_EQ(0, shutdown(fds[0], SHUT_WR));
	EXPECT_EQ(-1, send(fds[0], "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(0, atomic_load(&sigpipes));
	/* without MSG_NOSIGNAL it is raised, as for TCP */
	EXPECT_EQ(-1, send(fds[0], "x", 1, 0));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, atomic_load(&sigpipes));
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
