// SPDX-License-Identifier: GPL-2.0
/*
 * DDP teardown: the stream, PD and socket file descriptors of both ends
 * closed in many orders while a thread keeps a tagged transfer running,
 * a process killed in the middle of a transfer, STags invalidated under
 * traffic, pinned memory given back (VmLck), no growth of unreclaimable
 * slab over many cycles, and the modules can be unloaded afterwards.
 *
 * Posted buffers come back as DDP_EV_FLUSH in ddp_stream_release(), but
 * for a /dev/ddp stream that happens when its file is released: the event
 * ring goes with it, so user space cannot read them. What it can see is
 * that the pinned pages are given back: VmLck in /proc/self/status.
 *
 * The kernel log is checked for BUG/WARNING by the VM runner.
 * Environment: MPA_KO and DDP_KO, the modules to load again after the
 * unload test (set by run_tests.sh); without them that test is skipped.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"

#define XFER_LEN	(1024 * 1024)

enum { SA, SB, PDA, PDB, SOCKA, SOCKB, NFD };

struct xfer {
	int sa;
	__u32 stag;
	const __u8 *src;
	int sends;	/* __atomic_* */
	int err;	/* __atomic_* */
};

static int sends(struct xfer *x)
{
	return __atomic_load_n(&x->sends, __ATOMIC_RELAXED);
}

static int failed(struct xfer *x)
{
	return __atomic_load_n(&x->err, __ATOMIC_RELAXED);
}

static void *sender(void *arg)
{
	struct xfer *x = arg;

	/* until a close makes it fail: EBADF, EPIPE, ECONNRESET, ... */
	for (;;) {
		if (iw_ddp_send_tagged(x->sa, x->src, XFER_LEN, x->stag, 0, 0x40)) {
			__atomic_store_n(&x->err, errno, __ATOMIC_RELAXED);
			return NULL;
		}
		__atomic_add_fetch(&x->sends, 1, __ATOMIC_RELAXED);
	}
}

FIXTURE(xfer)
{
	int fd[NFD];
	struct dt_gbuf sink;
	struct dt_gbuf rb[4];
	__u8 *src;
	struct xfer x;
	pthread_t th;
	int running;
};

FIXTURE_VARIANT(xfer)
{
	int order[NFD];
};

FIXTURE_VARIANT_ADD(xfer, sink_first)
{
	.order = { SB, PDB, SOCKB, SA, PDA, SOCKA },
};

FIXTURE_VARIANT_ADD(xfer, source_first)
{
	.order = { SA, PDA, SOCKA, SB, PDB, SOCKB },
};

FIXTURE_VARIANT_ADD(xfer, sockets_first)
{
	.order = { SOCKA, SOCKB, SA, SB, PDA, PDB },
};

FIXTURE_VARIANT_ADD(xfer, pds_first)
{
	.order = { PDA, PDB, SA, SB, SOCKA, SOCKB },
};

FIXTURE_VARIANT_ADD(xfer, streams_first)
{
	.order = { SA, SB, SOCKA, SOCKB, PDA, PDB },
};

FIXTURE_VARIANT_ADD(xfer, reverse_of_setup)
{
	.order = { SOCKB, SOCKA, PDB, PDA, SB, SA },
};

FIXTURE_VARIANT_ADD(xfer, sink_pd_before_its_stream)
{
	.order = { PDB, SB, SOCKB, PDA, SA, SOCKA },
};

FIXTURE_VARIANT_ADD(xfer, sink_socket_first)
{
	.order = { SOCKB, SB, PDB, SOCKA, SA, PDA },
};

FIXTURE_VARIANT_ADD(xfer, source_socket_then_sink_stream)
{
	.order = { SOCKA, SB, SA, PDB, SOCKB, PDA },
};

FIXTURE_SETUP(xfer)
{
	int i, fds[2];

	for (i = 0; i < NFD; i++)
		self->fd[i] = -1;
	self->running = 0;
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, DDP_TMO_MS));
	self->fd[SOCKA] = fds[0];
	self->fd[SOCKB] = fds[1];
	self->fd[PDA] = iw_ddp_open();
	self->fd[PDB] = iw_ddp_open();
	ASSERT_LE(0, self->fd[PDA]);
	ASSERT_LE(0, self->fd[PDB]);
	self->fd[SA] = iw_ddp_bind(self->fd[PDA], fds[0], 2);
	self->fd[SB] = iw_ddp_bind(self->fd[PDB], fds[1], 2);
	ASSERT_LE(0, self->fd[SA]);
	ASSERT_LE(0, self->fd[SB]);
	ASSERT_EQ(0, dt_gbuf_alloc(&self->sink, XFER_LEN, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->fd[PDB], self->sink.buf, XFER_LEN, 0,
				   DDP_ACCESS_REMOTE_WRITE, -1, &self->x.stag));
	/* posted buffers on both ends, to be flushed */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, dt_gbuf_alloc(&self->rb[i], 8192, 0));
		ASSERT_EQ(0, iw_ddp_post_recv(self->fd[i & 1 ? SB : SA], self->rb[i].buf,
					      8192, i & 1, i));
	}
	self->src = malloc(XFER_LEN);
	ASSERT_NE(NULL, self->src);
	dt_fill(self->src, XFER_LEN, 1);
	self->x.sa = self->fd[SA];
	self->x.src = self->src;
	self->x.sends = 0;
	self->x.err = 0;
}

FIXTURE_TEARDOWN(xfer)
{
	int i;

	for (i = 0; i < NFD; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	if (self->running)
		pthread_join(self->th, NULL);
	for (i = 0; i < 4; i++)
		dt_gbuf_free(&self->rb[i]);
	dt_gbuf_free(&self->sink);
	free(self->src);
}

static void start_and_wait(struct __test_metadata *_metadata, struct _test_data_xfer *self)
{
	long long end = iw_now_ms() + DDP_TMO_MS;

	ASSERT_EQ(0, pthread_create(&self->th, NULL, sender, &self->x));
	self->running = 1;
	while (sends(&self->x) < 2 && !failed(&self->x) && iw_now_ms() < end)
		usleep(1000);
	ASSERT_LE(2, sends(&self->x)) {
		TH_LOG("sender: %d sends, error %d", self->x.sends, self->x.err);
	}
}

static void join_sender(struct __test_metadata *_metadata, struct _test_data_xfer *self)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	ASSERT_EQ(0, pthread_timedjoin_np(self->th, NULL, &ts)) {
		TH_LOG("the sender is stuck after every fd was closed");
	}
	self->running = 0;
	TH_LOG("%d MiB sent, then errno %d", self->x.sends, self->x.err);
	EXPECT_NE(0, self->x.err);
	EXPECT_EQ(-1, dt_gbuf_guards(&self->sink));
}

TEST_F(xfer, close_all_during_transfer)
{
	int i;

	start_and_wait(_metadata, self);
	for (i = 0; i < NFD; i++) {
		int k = variant->order[i];

		ASSERT_EQ(0, close(self->fd[k]));
		self->fd[k] = -1;
		usleep(20000);
	}
	join_sender(_metadata, self);
}

/* Invalidate the sink's STag under traffic: an error, never a crash. */
TEST_F(xfer, invalidate_during_transfer)
{
	struct ddp_event ev;
	long long end;
	int i;

	start_and_wait(_metadata, self);
	ASSERT_EQ(0, iw_ddp_invalidate(self->fd[PDB], self->x.stag));
	end = iw_now_ms() + DDP_TMO_MS;
	do {
		ASSERT_EQ(1, iw_ddp_event(self->fd[SB], &ev, DDP_TMO_MS));
	} while (ev.type == DDP_EV_TAGGED && iw_now_ms() < end);
	EXPECT_EQ(DDP_EV_ERROR, ev.type);
	EXPECT_EQ(DDP_WIRE_ETYPE_TAGGED, ev.err_type);
	EXPECT_EQ(DDP_WIRE_ECODE_T_INVALID_STAG, ev.err_code);
	EXPECT_EQ(self->x.stag, ev.stag);
	for (i = 0; i < NFD; i++) {
		int k = variant->order[i];

		close(self->fd[k]);
		self->fd[k] = -1;
	}
	join_sender(_metadata, self);
}

/*
 * A child sets up both ends and transfers; it is killed mid-transfer, with
 * or without markers, the sink buffer's STag PD-wide or bound to the stream,
 * at once or a while after the transfer began.
 */
FIXTURE(kill)
{
};

FIXTURE_VARIANT(kill)
{
	bool markers;
	bool stream_stag;
	int delay_ms;
};

FIXTURE_VARIANT_ADD(kill, pd_stag)
{
	.markers = false, .stream_stag = false, .delay_ms = 0,
};

FIXTURE_VARIANT_ADD(kill, markers_pd_stag)
{
	.markers = true, .stream_stag = false, .delay_ms = 50,
};

FIXTURE_VARIANT_ADD(kill, stream_stag)
{
	.markers = false, .stream_stag = true, .delay_ms = 100,
};

FIXTURE_VARIANT_ADD(kill, markers_stream_stag)
{
	.markers = true, .stream_stag = true, .delay_ms = 150,
};

FIXTURE_SETUP(kill)
{
}

FIXTURE_TEARDOWN(kill)
{
}

TEST_F(kill, kill_process_during_transfer)
{
	int p[2], st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		FIXTURE_DATA(xfer) d = {};
		__u32 flags = variant->markers ? MPA_F_MARKERS : 0;
		int fds[2], i;

		if (iw_mpa_pair(AF_INET, fds, flags, flags, DDP_TMO_MS))
			_exit(1);
		d.fd[PDA] = iw_ddp_open();
		d.fd[PDB] = iw_ddp_open();
		d.fd[SA] = iw_ddp_bind(d.fd[PDA], fds[0], 2);
		d.fd[SB] = iw_ddp_bind(d.fd[PDB], fds[1], 2);
		if (d.fd[SA] < 0 || d.fd[SB] < 0 ||
		    dt_gbuf_alloc(&d.sink, XFER_LEN, 0) ||
		    iw_ddp_reg_mr(d.fd[PDB], d.sink.buf, XFER_LEN, 0,
				  DDP_ACCESS_REMOTE_WRITE, variant->stream_stag ? d.fd[SB] : -1,
			    &d.x.stag))
			_exit(1);
		for (i = 0; i < 4; i++)
			if (dt_gbuf_alloc(&d.rb[i], 4096, 0) ||
			    iw_ddp_post_recv(d.fd[SB], d.rb[i].buf, 4096, i & 1, i))
				_exit(1);
		d.src = malloc(XFER_LEN);
		if (!d.src)
			_exit(1);
		d.x.sa = d.fd[SA];
		d.x.src = d.src;
		if (pthread_create(&d.th, NULL, sender, &d.x))
			_exit(1);
		while (sends(&d.x) < 1)
			if (failed(&d.x))
				_exit(1);
			else
				usleep(1000);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	close(p[0]);
	usleep(variant->delay_ms * 1000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	EXPECT_EQ(SIGKILL, WTERMSIG(st));
}

/* kB of locked memory charged to this process */
static long vmlck_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Registered and posted buffers are pinned and charged to VmLck; closing
 * the stream gives back its posted buffers and the STags bound to it,
 * closing the PD the PD-wide ones.
 */
TEST(pinned_memory_given_back)
{
	struct dt_gbuf mr, own, rb[8];
	int fds[2], pd, s, i;
	long base, kb;
	__u32 stag, ostag;

	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, DDP_TMO_MS));
	pd = iw_ddp_open();
	ASSERT_LE(0, pd);
	s = iw_ddp_bind(pd, fds[1], 3);
	ASSERT_LE(0, s);
	base = vmlck_kb();
	ASSERT_LE(0, base);
	ASSERT_EQ(0, dt_gbuf_alloc(&mr, 1 << 20, 0));
	ASSERT_EQ(0, dt_gbuf_alloc(&own, 256 << 10, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(pd, mr.buf, 1 << 20, 0, DDP_ACCESS_REMOTE_WRITE, -1, &stag));
	EXPECT_EQ(base + 1024, vmlck_kb());
	ASSERT_EQ(0, iw_ddp_reg_mr(pd, own.buf, 256 << 10, 0, DDP_ACCESS_REMOTE_WRITE, s,
				   &ostag));
	EXPECT_EQ(base + 1024 + 256, vmlck_kb());
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, dt_gbuf_alloc(&rb[i], 64 << 10, 0));
		ASSERT_EQ(0, iw_ddp_post_recv(s, rb[i].buf, 64 << 10, i % 3, i));
	}
	kb = vmlck_kb();
	EXPECT_EQ(base + 1024 + 256 + 512, kb);
	/* the stream: posted buffers and the STag bound to it */
	ASSERT_EQ(0, close(s));
	EXPECT_EQ(base + 1024, vmlck_kb());
	EXPECT_EQ(-1, iw_ddp_invalidate(pd, ostag));
	EXPECT_EQ(ENOENT, errno);
	/* the PD-wide STag lives as long as the PD */
	ASSERT_EQ(0, close(pd));
	EXPECT_EQ(base, vmlck_kb());
	close(fds[0]);
	close(fds[1]);
	for (i = 0; i < 8; i++)
		dt_gbuf_free(&rb[i]);
	dt_gbuf_free(&mr);
	dt_gbuf_free(&own);
}

/*
 * Closing a stream invalidates the STags bound to it while the PD may
 * invalidate the same STags: the two must not trip over each other (the
 * stream's walk once read buffers that the PD had just freed). Nothing
 * is left pinned and every STag is gone.
 */
#define RACE_MRS	128
#define RACE_ROUNDS	20

struct race {
	int pd;
	__u32 stag[RACE_MRS];
	int bad;	/* invalidations that failed otherwise than ENOENT */
};

static void *race_invalidate(void *arg)
{
	struct race *r = arg;
	int i;

	for (i = 0; i < RACE_MRS; i++)
		if (iw_ddp_invalidate(r->pd, r->stag[i]) && errno != ENOENT)
			r->bad++;
	return NULL;
}

TEST(invalidate_while_stream_closes)
{
	int fds[2], s, i, round;
	struct dt_gbuf g;
	struct race r;
	pthread_t t;
	long base;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, RACE_MRS * 4096, 0));
	base = vmlck_kb();
	ASSERT_LE(0, base);
	for (round = 0; round < RACE_ROUNDS; round++) {
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, DDP_TMO_MS));
		r.pd = iw_ddp_open();
		ASSERT_LE(0, r.pd);
		r.bad = 0;
		s = iw_ddp_bind(r.pd, fds[1], 1);
		ASSERT_LE(0, s);
		for (i = 0; i < RACE_MRS; i++)
			ASSERT_EQ(0, iw_ddp_reg_mr(r.pd, g.buf + i * 4096, 4096, 0,
						   DDP_ACCESS_REMOTE_WRITE, s, &r.stag[i]));
		ASSERT_EQ(0, pthread_create(&t, NULL, race_invalidate, &r));
		/* let the thread start on some of them */
		if (round & 1)
			usleep(500);
		ASSERT_EQ(0, close(s));
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ(0, r.bad);
		for (i = 0; i < RACE_MRS; i++) {
			EXPECT_EQ(-1, iw_ddp_invalidate(r.pd, r.stag[i]));
			EXPECT_EQ(ENOENT, errno);
		}
		EXPECT_EQ(base, vmlck_kb());
		close(r.pd);
		close(fds[0]);
		close(fds[1]);
	}
	dt_gbuf_free(&g);
}

/* One full life: connect, bind, register, post, write, close. */
static int one_cycle(__u8 *buf, int order)
{
	int fds[2], pda, pdb, sa, sb, ret = -1;
	struct ddp_event ev;
	__u32 stag;

	if (iw_mpa_pair(AF_INET, fds, 0, 0, DDP_TMO_MS))
		return -1;
	pda = iw_ddp_open();
	pdb = iw_ddp_open();
	sa = iw_ddp_bind(pda, fds[0], 3);
	sb = iw_ddp_bind(pdb, fds[1], 3);
	if (sa >= 0 && sb >= 0 &&
	    !iw_ddp_reg_mr(pdb, buf, 8192, 0, DDP_ACCESS_REMOTE_WRITE, order & 1 ? sb : -1,
		     &stag) &&
	    !iw_ddp_post_recv(sb, buf + 8192, 4096, 0, 1) &&
	    !iw_ddp_post_recv(sa, buf + 12288, 4096, 2, 2) &&
	    !iw_ddp_send_tagged(sa, buf + 16384, 4096, stag, 100, 0x40) &&
	    iw_ddp_event(sb, &ev, DDP_TMO_MS) == 1 && ev.type == DDP_EV_TAGGED)
		ret = 0;
	if (order & 2) {
		close(fds[0]);
		close(fds[1]);
		close(pda);
		close(pdb);
		close(sa);
		close(sb);
	} else {
		close(sb);
		close(sa);
		close(pdb);
		close(pda);
		close(fds[1]);
		close(fds[0]);
	}
	return ret;
}

static long meminfo_kb(const char *name)
{
	char line[256], fmt[64];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	snprintf(fmt, sizeof(fmt), "%s: %%ld kB", name);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	fclose(f);
	return kb;
}

#define CYCLES	200

/*
 * A leak of a stream's event ring alone (72 KiB) would be 14 MiB over the
 * cycles; allow 4 MiB of noise (sockets in TIME_WAIT, RCU, caches).
 */
FIXTURE(cycles)
{
	struct dt_gbuf g;
};

FIXTURE_SETUP(cycles)
{
	ASSERT_EQ(0, dt_gbuf_alloc(&self->g, 20480, 0));
}

FIXTURE_TEARDOWN(cycles)
{
	dt_gbuf_free(&self->g);
}

TEST_F_TIMEOUT(cycles, no_slab_growth, 180)
{
	long su0, su1, free0, free1, t0;
	int i;

	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, one_cycle(self->g.buf, i));
	usleep(500000);
	su0 = meminfo_kb("SUnreclaim");
	free0 = meminfo_kb("MemFree");
	t0 = iw_now_ms();
	for (i = 0; i < CYCLES; i++)
		ASSERT_EQ(0, one_cycle(self->g.buf, i)) {
			TH_LOG("cycle %d", i);
		}
	usleep(1000000);
	su1 = meminfo_kb("SUnreclaim");
	free1 = meminfo_kb("MemFree");
	TH_LOG("%d cycles in %lld ms: SUnreclaim %+ld kB, MemFree %+ld kB",
	       CYCLES, iw_now_ms() - t0, su1 - su0, free1 - free0);
	EXPECT_GT(4096, su1 - su0);
}

static int module_loaded(const char *name)
{
	char line[256];
	size_t n = strlen(name);
	int found = 0;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			found = 1;
	fclose(f);
	return found;
}

/* Unload, retrying while closed sockets finish their destruction. */
static int unload_wait(const char *name)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (!syscall(__NR_delete_module, name, O_NONBLOCK))
			return 0;
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			return -errno;
		usleep(10000);
	}
	return -errno;
}

/*
 * Last: after all of the above, nothing holds a reference on the
 * modules. They are loaded again for the tests that follow.
 */
FIXTURE(modules)
{
};

FIXTURE_SETUP(modules)
{
}

FIXTURE_TEARDOWN(modules)
{
}

/* a fixture of its own, defined last, so that it runs after all others */
TEST_F(modules, unload_after_teardown)
{
	int rd, rm;

	if (!getenv("MPA_KO") || !getenv("DDP_KO"))
		SKIP(return, "MPA_KO and DDP_KO not set");
	if (!module_loaded("ddp") || !module_loaded("mpa"))
		SKIP(return, "the modules are not loaded");
	rd = unload_wait("ddp");
	rm = rd ? -1 : unload_wait("mpa");
	if (!module_loaded("mpa"))
		EXPECT_EQ(0, mt_load_module("MPA_KO"));
	if (!module_loaded("ddp"))
		EXPECT_EQ(0, mt_load_module("DDP_KO"));
	EXPECT_EQ(0, rd);
	EXPECT_EQ(0, rm);
	EXPECT_EQ(1, module_loaded("mpa"));
	EXPECT_EQ(1, module_loaded("ddp"));
}

TEST_HARNESS_MAIN
