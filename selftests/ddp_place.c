// SPDX-License-Identifier: GPL-2.0
/*
 * DDP placement between two DDP streams over loopback MPA, with and
 * without markers: tagged writes of many sizes at random offsets of a
 * registered buffer between guard areas, segment boundaries at every
 * alignment, placement without any action of the receiving process,
 * untagged messages on three queues, zero-length messages and STag reuse.
 * The Initiator's stream (sa) is the Data Source unless a test says
 * otherwise, the Responder's (sb) the Data Sink.
 *
 * "./ddp_place --capture-run PORT" runs a small fixed exchange over
 * 127.0.0.1:PORT for ddp_tshark.sh and prints what it sent.
 * Needs mpa.ko and ddp.ko loaded.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"

#define BIG_LEN		(2U << 20)	/* the registered sink of most tests */
#define BASE_TO		0x123456789000ULL

FIXTURE(pair)
{
	int fds[2];	/* [0] Initiator, [1] Responder */
	int pda, pdb;
	int sa, sb;
	__u32 mulpdu;
};

FIXTURE_VARIANT(pair)
{
	__u32 flags;
};

FIXTURE_VARIANT_ADD(pair, plain)
{
	.flags = 0,
};

FIXTURE_VARIANT_ADD(pair, markers)
{
	.flags = MPA_F_MARKERS,
};

FIXTURE_SETUP(pair)
{
	struct mpa_info info;
	socklen_t len = sizeof(info);

	self->pda = -1;
	self->pdb = -1;
	self->sa = -1;
	self->sb = -1;
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, variant->flags, variant->flags, DDP_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_INFO, &info, &len));
	if (variant->flags & MPA_F_MARKERS)
		ASSERT_EQ(MPA_I_MARKERS_RX | MPA_I_MARKERS_TX,
			  info.flags & (MPA_I_MARKERS_RX | MPA_I_MARKERS_TX));
	self->mulpdu = iw_mpa_mulpdu(self->fds[0]);
	ASSERT_LE((__u32)MPA_MIN_MULPDU, self->mulpdu);
	self->pda = iw_ddp_open();
	self->pdb = iw_ddp_open();
	ASSERT_LE(0, self->pda);
	ASSERT_LE(0, self->pdb);
	self->sa = iw_ddp_bind(self->pda, self->fds[0], 3);
	self->sb = iw_ddp_bind(self->pdb, self->fds[1], 3);
	ASSERT_LE(0, self->sa);
	ASSERT_LE(0, self->sb);
}

FIXTURE_TEARDOWN(pair)
{
	int fds[] = { self->sa, self->sb, self->pda, self->pdb,
		      self->fds[0], self->fds[1] };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static __u64 rx_fpdus(int sock)
{
	struct mpa_stats st = {};

	iw_mpa_stats(sock, &st);
	return st.rx_fpdus;
}

/*
 * Write @len octets of @src tagged at @to; expect the sink's DDP_EV_TAGGED
 * with exactly these values and, if @count, exactly as many more FPDUs at
 * the sink as segments of the MULPDU in force (it follows the TCP MSS, so
 * it is read again for every message).
 */
static void tagged_write(struct __test_metadata *_metadata, struct _test_data_pair *self,
			 const void *src, __u32 len, __u32 stag, __u64 to,
			 __u8 rsvdulp, int count)
{
	__u64 before = rx_fpdus(self->fds[1]), nseg;
	__u32 m = iw_mpa_mulpdu(self->fds[0]) - sizeof(struct ddp_tagged_hdr);
	struct ddp_event ev;

	ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, len, stag, to, rsvdulp));
	ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
	ASSERT_EQ(DDP_EV_TAGGED, ev.type) {
		TH_LOG("error event %u/%u", ev.err_type, ev.err_code);
	}
	EXPECT_EQ(stag, ev.stag);
	EXPECT_EQ(to, ev.to);
	EXPECT_EQ(len, ev.len);
	EXPECT_EQ(rsvdulp, ev.rsvdulp[0]);
	if (!count || m + sizeof(struct ddp_tagged_hdr) != iw_mpa_mulpdu(self->fds[0]))
		return;
	nseg = len ? (len + m - 1) / m : 1;
	dt_wait_rx_fpdus(self->fds[1], before + nseg);
	EXPECT_EQ(nseg, rx_fpdus(self->fds[1]) - before) {
		TH_LOG("len %u, %u octets per segment", len, m);
	}
}

/* Sizes 1 .. 1 MiB + 7 at random offsets of one registered buffer. */
TEST_F(pair, tagged_sizes)
{
	static const __u32 sizes[] = {
		1, 2, 3, 4095, 4096, 4097, 65535, (1U << 20) + 7,
	};
	struct dt_gbuf g;
	__u8 *model, *src;
	unsigned int i, seed = time(NULL);
	__u32 stag;

	srand(seed);
	TH_LOG("seed %u", seed);
	ASSERT_EQ(0, dt_gbuf_alloc(&g, BIG_LEN, 0));
	model = malloc(BIG_LEN);
	src = malloc(BIG_LEN);
	ASSERT_NE(NULL, model);
	ASSERT_NE(NULL, src);
	memset(model, DDP_PATTERN, BIG_LEN);
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, BIG_LEN, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
	for (i = 0; i < ARRAY_SIZE(sizes) * 2; i++) {
		__u32 len = sizes[i / 2];
		/* odd rounds: flush with the end of the buffer */
		__u32 off = i & 1 ? BIG_LEN - len : rand() % (BIG_LEN - len + 1);

		dt_fill(src, len, i + seed);
		tagged_write(_metadata, self, src, len, stag, BASE_TO + off, i, 1);
		memcpy(model + off, src, len);
		ASSERT_EQ(0, memcmp(g.buf, model, BIG_LEN)) {
			TH_LOG("len %u at offset %u", len, off);
		}
		ASSERT_EQ(-1, dt_gbuf_guards(&g));
	}
	free(model);
	free(src);
	dt_gbuf_free(&g);
}

TEST_F_TIMEOUT(pair, tagged_16mib, 120)
{
	const __u32 len = 16U << 20;
	struct dt_gbuf g;
	long long t0;
	__u8 *src;
	__u32 stag;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, len + 4096, 0));
	src = malloc(len);
	ASSERT_NE(NULL, src);
	dt_fill(src, len, 16);
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, g.len, 0,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
	t0 = iw_now_ms();
	tagged_write(_metadata, self, src, len, stag, 1234, 0x40, 1);
	TH_LOG("16 MiB in %lld ms", iw_now_ms() - t0);
	EXPECT_EQ(-1, dt_find_not(g.buf, 1234, DDP_PATTERN));
	EXPECT_EQ(0, memcmp(g.buf + 1234, src, len));
	EXPECT_EQ(-1, dt_find_not(g.buf + 1234 + len, 4096 - 1234, DDP_PATTERN));
	EXPECT_EQ(-1, dt_gbuf_guards(&g));
	free(src);
	dt_gbuf_free(&g);
}

/* Lengths around one and two segments, at offsets 0..7 of the buffer. */
TEST_F(pair, segment_boundaries)
{
	struct dt_gbuf g;
	unsigned int i, off;
	__u8 *model, *src;
	__u32 stag, m, blen, lens[6];

	/* one message first: the MSS, hence the MULPDU, settles */
	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0, DDP_ACCESS_REMOTE_WRITE,
				   self->sb, &stag));
	tagged_write(_metadata, self, g.buf + 2048, 1000, stag, 0, 0x40, 0);
	ASSERT_EQ(0, iw_ddp_invalidate(self->pdb, stag));
	dt_gbuf_free(&g);
	m = iw_mpa_mulpdu(self->fds[0]) - sizeof(struct ddp_tagged_hdr);
	TH_LOG("MULPDU %u at setup, %u now", self->mulpdu, m + 14);
	blen = 3 * m + 64;
	for (i = 0; i < 6; i++)	/* m - 1, m, m + 1, 2m - 1, 2m, 2m + 1 */
		lens[i] = (i / 3 + 1) * m + i % 3 - 1;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, blen, 0));
	model = malloc(blen);
	src = malloc(blen);
	ASSERT_NE(NULL, model);
	ASSERT_NE(NULL, src);
	memset(model, DDP_PATTERN, blen);
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, blen, 0, DDP_ACCESS_REMOTE_WRITE,
				   self->sb, &stag));
	for (off = 0; off < 8; off++) {
		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			dt_fill(src, lens[i], off * 16 + i);
			tagged_write(_metadata, self, src, lens[i], stag, off, 0x40, 1);
			memcpy(model + off, src, lens[i]);
			ASSERT_EQ(0, memcmp(g.buf, model, blen)) {
				TH_LOG("len %u at offset %u", lens[i], off);
			}
		}
	}
	EXPECT_EQ(-1, dt_gbuf_guards(&g));
	free(model);
	free(src);
	dt_gbuf_free(&g);
}

struct shared_ctl {
	__u32 stag;
	int ready;	/* set last, with __atomic_store_n() */
};

/*
 * The state letter of process or thread @id (/proc/ID/stat) after 100 ms
 * to settle, 0 if it cannot be read.
 */
static char task_state(pid_t id)
{
	char path[64], st[512] = "";
	FILE *f;

	usleep(100000);
	snprintf(path, sizeof(path), "/proc/%d/stat", id);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(st, sizeof(st), f) || !strrchr(st, ')'))
		st[0] = 0;
	fclose(f);
	return st[0] ? strrchr(st, ')')[2] : 0;
}

/*
 * The sink buffer is registered by a child that then sleeps: the data
 * appears in the shared memory while no process of the sink side runs.
 */
TEST_F(pair, placement_without_the_receiver)
{
	const __u32 len = 256 << 10;
	struct shared_ctl *ctl;
	struct ddp_event ev;
	struct dt_gbuf g;
	long long end;
	__u8 *src;
	pid_t pid;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, len, 1));
	ctl = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	src = malloc(len);
	ASSERT_NE(NULL, src);
	dt_fill(src, len, 99);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		__u32 stag;

		if (iw_ddp_reg_mr(self->pdb, g.buf, len, 0, DDP_ACCESS_REMOTE_WRITE, -1, &stag))
			_exit(1);
		ctl->stag = stag;
		__atomic_store_n(&ctl->ready, 1, __ATOMIC_RELEASE);
		for (;;)
			sleep(60);
	}
	end = iw_now_ms() + DDP_TMO_MS;
	while (!__atomic_load_n(&ctl->ready, __ATOMIC_ACQUIRE) && iw_now_ms() < end)
		usleep(1000);
	ASSERT_EQ(1, ctl->ready);
	/* the child sleeps in nanosleep: state S */
	EXPECT_EQ('S', task_state(pid));

	ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, len, ctl->stag, 0, 0x40));
	/* nobody reads sb: watch the shared memory */
	while (memcmp(g.buf, src, len) && iw_now_ms() < end)
		usleep(1000);
	EXPECT_EQ(0, memcmp(g.buf, src, len));
	EXPECT_EQ(-1, dt_gbuf_guards(&g));
	ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_TAGGED, ev.type);
	EXPECT_EQ(ctl->stag, ev.stag);
	EXPECT_EQ(len, ev.len);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(src);
	munmap(ctl, 4096);
	dt_gbuf_free(&g);
}

#define UQ_N	4	/* messages per queue */

/* Untagged messages on queues 0, 1 and 2, interleaved. */
TEST_F(pair, untagged_three_queues)
{
	struct dt_gbuf g[3][UQ_N];
	__u32 blen = 2 * self->mulpdu + 100;
	__u32 lens[3][UQ_N];
	__u32 next[3] = { 1, 1, 1 }, got[3] = {};
	struct ddp_event ev;
	__u8 *src;
	int i, q, k;

	src = malloc(blen);
	ASSERT_NE(NULL, src);
	for (q = 0; q < 3; q++)
		for (i = 0; i < UQ_N; i++) {
			__u32 choice[] = { 0, 1, self->mulpdu - 18, 2 * self->mulpdu + 3 };

			lens[q][i] = choice[(q + i) % UQ_N];
			ASSERT_EQ(0, dt_gbuf_alloc(&g[q][i], blen, 0));
			ASSERT_EQ(0, iw_ddp_post_recv(self->sb, g[q][i].buf, blen, q,
						      q * 100 + i));
		}
	/* message i of queue q is sent in round i, queues in a rotating order */
	for (i = 0; i < UQ_N; i++)
		for (k = 0; k < 3; k++) {
			__u8 rsv[5] = { 0x43, q = (i + k) % 3, i, 0xee, 0x5a };

			dt_fill(src, lens[q][i], q * 10 + i);
			ASSERT_EQ(0, iw_ddp_send_untagged(self->sa, src, lens[q][i], q, rsv));
		}
	for (k = 0; k < 3 * UQ_N; k++) {
		ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
		ASSERT_EQ(DDP_EV_RECV, ev.type);
		ASSERT_GT(3U, ev.qn);
		q = ev.qn;
		i = got[q]++;
		ASSERT_GT(UQ_N, i);
		EXPECT_EQ(next[q], ev.msn);
		next[q]++;
		EXPECT_EQ((__u64)(q * 100 + i), ev.cookie);
		EXPECT_EQ(lens[q][i], ev.len);
		EXPECT_EQ(0x43, ev.rsvdulp[0]);
		EXPECT_EQ(q, ev.rsvdulp[1]);
		EXPECT_EQ(i, ev.rsvdulp[2]);
		EXPECT_EQ(0xee, ev.rsvdulp[3]);
		EXPECT_EQ(0x5a, ev.rsvdulp[4]);
		dt_fill(src, lens[q][i], q * 10 + i);
		EXPECT_EQ(0, memcmp(g[q][i].buf, src, lens[q][i]));
		EXPECT_EQ(-1, dt_find_not(g[q][i].buf + lens[q][i],
					  blen - lens[q][i], DDP_PATTERN));
		EXPECT_EQ(-1, dt_gbuf_guards(&g[q][i]));
	}
	EXPECT_EQ(0, iw_ddp_event(self->sb, &ev, 100));
	for (q = 0; q < 3; q++)
		for (i = 0; i < UQ_N; i++)
			dt_gbuf_free(&g[q][i]);
	free(src);
}

/* Both ways: the Responder may send once it has received an FPDU. */
TEST_F(pair, untagged_both_ways)
{
	static const __u8 rsv[5] = { 0x43, 0, 0, 0, 0 };
	struct ddp_event ev;
	struct dt_gbuf ga, gb;
	const char *ma = "from the Initiator", *mb = "from the Responder!";

	ASSERT_EQ(0, dt_gbuf_alloc(&ga, 64, 0));
	ASSERT_EQ(0, dt_gbuf_alloc(&gb, 64, 0));
	ASSERT_EQ(0, iw_ddp_post_recv(self->sa, ga.buf, 64, 0, 0xa));
	ASSERT_EQ(0, iw_ddp_post_recv(self->sb, gb.buf, 64, 0, 0xb));
	ASSERT_EQ(0, iw_ddp_send_untagged(self->sa, ma, strlen(ma), 0, rsv));
	ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_RECV, ev.type);
	EXPECT_EQ(0xbULL, ev.cookie);
	EXPECT_EQ(strlen(ma), ev.len);
	EXPECT_EQ(0, memcmp(gb.buf, ma, strlen(ma)));
	ASSERT_EQ(0, iw_ddp_send_untagged(self->sb, mb, strlen(mb), 0, rsv));
	ASSERT_EQ(1, iw_ddp_event(self->sa, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_RECV, ev.type);
	EXPECT_EQ(0xaULL, ev.cookie);
	EXPECT_EQ(1U, ev.msn);
	EXPECT_EQ(strlen(mb), ev.len);
	EXPECT_EQ(0, memcmp(ga.buf, mb, strlen(mb)));
	dt_gbuf_free(&ga);
	dt_gbuf_free(&gb);
}

TEST_F(pair, zero_length_messages)
{
	static const __u8 rsv[5] = { 0x43, 9, 8, 7, 6 };
	struct ddp_event ev;
	struct dt_gbuf g, r;
	__u32 stag;
	__u8 x = 0x11;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	ASSERT_EQ(0, dt_gbuf_alloc(&r, 64, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &stag));
	/* STag and TO of a zero-length tagged message are not checked */
	tagged_write(_metadata, self, NULL, 0, 0xdeadbe00, ~0ULL, 0x40, 1);
	tagged_write(_metadata, self, &x, 0, stag, 4096, 0x41, 1);
	ASSERT_EQ(0, iw_ddp_post_recv(self->sb, r.buf, 64, 2, 77));
	ASSERT_EQ(0, iw_ddp_send_untagged(self->sa, &x, 0, 2, rsv));
	ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_RECV, ev.type);
	EXPECT_EQ(2U, ev.qn);
	EXPECT_EQ(1U, ev.msn);
	EXPECT_EQ(0U, ev.len);
	EXPECT_EQ(77ULL, ev.cookie);
	EXPECT_EQ(0, memcmp(ev.rsvdulp, rsv, 5));
	EXPECT_EQ(-1, dt_find_not(r.map, r.maplen, DDP_PATTERN));
	EXPECT_EQ(-1, dt_find_not(g.map, g.maplen, DDP_PATTERN));
	/* the stream still works */
	tagged_write(_metadata, self, &x, 1, stag, 4095, 0x40, 1);
	EXPECT_EQ(0x11, g.buf[4095]);
	EXPECT_EQ(-1, dt_gbuf_guards(&g));
	dt_gbuf_free(&g);
	dt_gbuf_free(&r);
}

TEST_F(pair, stag_reuse_after_invalidation)
{
	struct ddp_event ev;
	struct dt_gbuf g;
	__u32 s1, s2;
	__u8 src[100];

	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &s1));
	dt_fill(src, sizeof(src), 1);
	tagged_write(_metadata, self, src, sizeof(src), s1, 0, 0x40, 1);
	EXPECT_EQ(0, memcmp(g.buf, src, sizeof(src)));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pdb, s1));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &s2));
	EXPECT_NE(s1, s2);
	memset(g.buf, DDP_PATTERN, 4096);
	dt_fill(src, sizeof(src), 2);
	ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, sizeof(src), s1, 0, 0x40));
	ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_ERROR, ev.type);
	EXPECT_EQ(DDP_WIRE_ETYPE_TAGGED, ev.err_type);
	EXPECT_EQ(DDP_WIRE_ECODE_T_INVALID_STAG, ev.err_code);
	EXPECT_EQ(s1, ev.stag);
	EXPECT_EQ(14U + sizeof(src), ev.len);
	EXPECT_EQ(-1, dt_find_not(g.map, g.maplen, DDP_PATTERN));
	dt_gbuf_free(&g);
}

/*
 * RFC 5041 section 8.3 / RFC 5040: an STag that was invalidated must not
 * name the next registration. Every re-registration of the same memory
 * (same index) must get a new key.
 */
TEST_F(pair, stag_key_changes_with_every_registration)
{
	struct dt_gbuf g;
	__u32 prev, stag;
	int i, same = 0;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &prev));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, iw_ddp_invalidate(self->pdb, prev));
		ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0,
					   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
		if (stag == prev) {
			TH_LOG("round %d: STag 0x%08x handed out again", i, stag);
			same++;
		}
		prev = stag;
	}
	EXPECT_EQ(0, same);
	dt_gbuf_free(&g);
}

/*
 * RFC 5042 section 5.1: STags must be hard to guess, the whole 24-bit
 * index included, not just the 8-bit key. 64 registrations on one PD:
 * indexes that follow each other (difference 1) would come from a
 * counter; random ones are spread over the index space. A uniform
 * permutation gives a difference of 1 with probability 2^-23 per pair
 * and leaves fewer than 8 of 16 top-nibble buckets empty with
 * probability below 10^-7: neither assertion flakes.
 */
#define NREG	64

TEST_F(pair, stag_indexes_unpredictable)
{
	int i, j, steps = 0, buckets = 0;
	__u32 stag[NREG], idx[NREG];
	int seen[16] = { 0 };
	struct dt_gbuf g;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	for (i = 0; i < NREG; i++) {
		ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0,
					   DDP_ACCESS_REMOTE_WRITE, -1, &stag[i]));
		idx[i] = stag[i] >> 8;
		EXPECT_NE(0U, idx[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(idx[j], idx[i]);
		if (i && (idx[i] - idx[i - 1] == 1 || idx[i - 1] - idx[i] == 1))
			steps++;
		if (!seen[idx[i] >> 20]++)
			buckets++;
	}
	TH_LOG("indexes 0x%06x 0x%06x 0x%06x 0x%06x ...: %d steps of 1, %d of 16 buckets",
	       idx[0], idx[1], idx[2], idx[3], steps, buckets);
	EXPECT_GE(2, steps);
	EXPECT_LE(8, buckets);
	for (i = 0; i < NREG; i++)
		EXPECT_EQ(0, iw_ddp_invalidate(self->pdb, stag[i]));
	dt_gbuf_free(&g);
}

/*
 * An invalidated STag does not come back soon: 512 registrations, each
 * invalidated before the next (an RCU grace period each), never repeat
 * an index (a fortiori an STag), and the first STag still names nothing
 * afterwards.
 */
#define NCYCLE	512

/* ---- a reader asleep in read() places on its own CPU ---- */

/* a thread that reads @want events from @sfd with blocking read()s */
struct sleeper {
	int sfd;
	unsigned int want;
	unsigned int got;	/* events read so far */
	pid_t tid;
	ssize_t ret;		/* the last read() */
	int err;		/* its errno */
	struct ddp_event ev[48];
};

static void *sleeper_run(void *arg)
{
	struct sleeper *r = arg;
	ssize_t n;

	__atomic_store_n(&r->tid, gettid(), __ATOMIC_RELEASE);
	while (__atomic_load_n(&r->got, __ATOMIC_ACQUIRE) < r->want) {
		n = read(r->sfd, &r->ev[r->got],
			 (r->want - r->got) * sizeof(r->ev[0]));
		r->ret = n;
		r->err = errno;
		if (n <= 0)
			break;
		__atomic_add_fetch(&r->got, n / sizeof(r->ev[0]), __ATOMIC_RELEASE);
	}
	return NULL;
}

static int sleeper_start(struct sleeper *r, pthread_t *t, int sfd,
			 unsigned int want)
{
	long long end = iw_now_ms() + DDP_TMO_MS;

	memset(r, 0, sizeof(*r));
	r->sfd = sfd;
	r->want = want;
	if (pthread_create(t, NULL, sleeper_run, r))
		return -1;
	while (!__atomic_load_n(&r->tid, __ATOMIC_ACQUIRE) && iw_now_ms() < end)
		usleep(1000);
	/* asleep in the stream's read() */
	return task_state(r->tid) == 'S' ? 0 : -1;
}

/*
 * While the sink's reader sleeps in read(), data-ready leaves what
 * arrives in TCP and wakes it; the reader places it (MpaRxToTask). One
 * FPDU: exactly one hand-over. Then a 1 MiB tagged message and three
 * untagged ones, placed by the woken reader and completed in order.
 */
TEST_F(pair, sleeping_reader_places)
{
	const __u32 len = 1 << 20, ulen = 3 * self->mulpdu + 5;
	long before = mt_mpa_stat("MpaRxToTask");
	struct dt_gbuf g, u[3];
	struct sleeper r;
	__u8 *src, rsv[5] = {};
	pthread_t t;
	__u32 stag;
	int i;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, dt_gbuf_alloc(&g, len, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, len, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, self->sb, &stag));
	src = malloc(len);
	ASSERT_NE(NULL, src);
	dt_fill(src, len, 7);

	ASSERT_EQ(0, sleeper_start(&r, &t, self->sb, 1));
	ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, 100, stag, BASE_TO + 8, 0));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(1, r.got);
	EXPECT_EQ(DDP_EV_TAGGED, r.ev[0].type);
	EXPECT_EQ(100, r.ev[0].len);
	EXPECT_EQ(BASE_TO + 8, r.ev[0].to);
	EXPECT_EQ(0, memcmp(g.buf + 8, src, 100));
	EXPECT_EQ(before + 1, mt_mpa_stat("MpaRxToTask"));

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, dt_gbuf_alloc(&u[i], ulen, 0));
		ASSERT_EQ(0, iw_ddp_post_recv(self->sb, u[i].buf, ulen, 0, 10 + i));
	}
	before = mt_mpa_stat("MpaRxToTask");
	ASSERT_EQ(0, sleeper_start(&r, &t, self->sb, 4));
	ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, len, stag, BASE_TO, 0x21));
	for (i = 0; i < 3; i++) {
		rsv[0] = i;
		ASSERT_EQ(0, iw_ddp_send_untagged(self->sa, src + i, ulen, 0, rsv));
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(4, r.got);
	EXPECT_EQ(DDP_EV_TAGGED, r.ev[0].type);
	EXPECT_EQ(len, r.ev[0].len);
	EXPECT_EQ(stag, r.ev[0].stag);
	EXPECT_EQ(0x21, r.ev[0].rsvdulp[0]);
	EXPECT_EQ(0, memcmp(g.buf, src, len));
	EXPECT_EQ(-1, dt_gbuf_guards(&g));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(DDP_EV_RECV, r.ev[1 + i].type);
		EXPECT_EQ(10 + i, r.ev[1 + i].cookie);
		EXPECT_EQ(i + 1, r.ev[1 + i].msn);
		EXPECT_EQ(ulen, r.ev[1 + i].len);
		EXPECT_EQ(i, r.ev[1 + i].rsvdulp[0]);
		EXPECT_EQ(0, memcmp(u[i].buf, src + i, ulen));
		EXPECT_EQ(-1, dt_gbuf_guards(&u[i]));
		dt_gbuf_free(&u[i]);
	}
	/* the reader slept at least once, and took no more than it got */
	EXPECT_LT(before, mt_mpa_stat("MpaRxToTask"));
	free(src);
	dt_gbuf_free(&g);
}

/*
 * 32 tagged messages of 128 KiB and 8 untagged ones, sent back to back
 * while the reader sleeps between its read()s: segments arrive while
 * it places (TCP's backlog), while it sleeps (hand-overs) and between
 * the two; every octet lands where it belongs and the events come in
 * order.
 */
TEST_F_TIMEOUT(pair, sleeping_reader_bulk, 120)
{
	const __u32 tlen = 128 << 10, nt = 32, nu = 8, ulen = 5000;
	long before = mt_mpa_stat("MpaRxToTask");
	struct dt_gbuf g, u[8];
	struct sleeper r;
	__u8 *src, rsv[5] = {};
	pthread_t t;
	__u32 stag, i, k = 0;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, nt * tlen, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, nt * tlen, BASE_TO,
				   DDP_ACCESS_REMOTE_WRITE, self->sb, &stag));
	for (i = 0; i < nu; i++) {
		ASSERT_EQ(0, dt_gbuf_alloc(&u[i], ulen, 0));
		ASSERT_EQ(0, iw_ddp_post_recv(self->sb, u[i].buf, ulen, 1, i));
	}
	src = malloc(nt * tlen);
	ASSERT_NE(NULL, src);
	dt_fill(src, nt * tlen, 21);

	ASSERT_EQ(0, sleeper_start(&r, &t, self->sb, nt + nu));
	for (i = 0; i < nt; i++) {
		ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src + i * tlen, tlen, stag,
						BASE_TO + i * tlen, i));
		if (i % 4 == 3) {
			rsv[0] = k;
			ASSERT_EQ(0, iw_ddp_send_untagged(self->sa, src + k, ulen, 1, rsv));
			k++;
		}
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(nt + nu, r.got);
	EXPECT_EQ(0, memcmp(g.buf, src, nt * tlen));
	EXPECT_EQ(-1, dt_gbuf_guards(&g));
	for (i = 0, k = 0; i < nt + nu; i++) {
		if (r.ev[i].type == DDP_EV_TAGGED) {
			EXPECT_EQ(tlen, r.ev[i].len);
			EXPECT_EQ(BASE_TO + (i - k) * tlen, r.ev[i].to);
			EXPECT_EQ(i - k, r.ev[i].rsvdulp[0]);
			continue;
		}
		ASSERT_EQ(DDP_EV_RECV, r.ev[i].type);
		EXPECT_EQ(k, r.ev[i].cookie);
		EXPECT_EQ(k + 1, r.ev[i].msn);
		EXPECT_EQ(ulen, r.ev[i].len);
		EXPECT_EQ(0, memcmp(u[k].buf, src + k, ulen));
		EXPECT_EQ(-1, dt_gbuf_guards(&u[k]));
		/* after the 4th, 8th, ... tagged message */
		EXPECT_EQ(4 * (k + 1), i - k);
		k++;
	}
	EXPECT_EQ(nu, k);
	/* asleep when the first segment came: handed over at least once */
	EXPECT_LT(before, mt_mpa_stat("MpaRxToTask"));
	TH_LOG("%ld hand-overs", mt_mpa_stat("MpaRxToTask") - before);
	for (i = 0; i < nu; i++)
		dt_gbuf_free(&u[i]);
	free(src);
	dt_gbuf_free(&g);
}

/* A reader that polls, or reads only what is there, leaves it to softirq. */
TEST_F(pair, polling_reader_leaves_placement_to_softirq)
{
	long before = mt_mpa_stat("MpaRxToTask");
	struct ddp_event ev;
	struct dt_gbuf g;
	__u8 src[300];
	__u32 stag;
	int i;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0,
				   DDP_ACCESS_REMOTE_WRITE, self->sb, &stag));
	dt_fill(src, sizeof(src), 3);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, sizeof(src), stag,
						i * 1000, 0));
		ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
		EXPECT_EQ(DDP_EV_TAGGED, ev.type);
		EXPECT_EQ(0, memcmp(g.buf + i * 1000, src, sizeof(src)));
	}
	EXPECT_EQ(before, mt_mpa_stat("MpaRxToTask"));
	dt_gbuf_free(&g);
}

static void on_usr1(int sig)
{
}

/*
 * A reader woken by a signal stops waiting: what arrives after it is
 * placed in softirq with nobody reading (a leaked waiter would leave it
 * in TCP for good).
 */
TEST_F(pair, interrupted_reader_leaves_no_waiter)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	const __u32 len = 200 << 10;
	long before = mt_mpa_stat("MpaRxToTask");
	struct ddp_event ev;
	struct sleeper r;
	struct dt_gbuf g;
	long long end;
	pthread_t t;
	__u32 stag;
	__u8 *src;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, dt_gbuf_alloc(&g, len, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, len, 0,
				   DDP_ACCESS_REMOTE_WRITE, self->sb, &stag));
	src = malloc(len);
	ASSERT_NE(NULL, src);
	dt_fill(src, len, 11);

	ASSERT_EQ(0, sleeper_start(&r, &t, self->sb, 1));
	ASSERT_EQ(0, pthread_kill(t, SIGUSR1));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(-1, r.ret);
	EXPECT_EQ(EINTR, r.err);
	EXPECT_EQ(0, r.got);

	ASSERT_EQ(0, iw_ddp_send_tagged(self->sa, src, len, stag, 0, 0));
	end = iw_now_ms() + DDP_TMO_MS;
	while (memcmp(g.buf, src, len) && iw_now_ms() < end)
		usleep(1000);
	EXPECT_EQ(0, memcmp(g.buf, src, len));
	EXPECT_EQ(before, mt_mpa_stat("MpaRxToTask"));
	ASSERT_EQ(1, iw_ddp_event(self->sb, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_TAGGED, ev.type);
	EXPECT_EQ(len, ev.len);
	free(src);
	dt_gbuf_free(&g);
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

TEST_F_TIMEOUT(pair, invalidated_stag_not_reused, 120)
{
	__u32 *idx, first = 0, stag;
	struct dt_gbuf g;
	int i, dup = 0;

	idx = calloc(NCYCLE, sizeof(*idx));
	ASSERT_NE(NULL, idx);
	ASSERT_EQ(0, dt_gbuf_alloc(&g, 4096, 0));
	for (i = 0; i < NCYCLE; i++) {
		ASSERT_EQ(0, iw_ddp_reg_mr(self->pdb, g.buf, 4096, 0,
					   DDP_ACCESS_REMOTE_WRITE, -1, &stag));
		if (!i)
			first = stag;
		idx[i] = stag >> 8;
		ASSERT_EQ(0, iw_ddp_invalidate(self->pdb, stag));
	}
	qsort(idx, NCYCLE, sizeof(*idx), cmp_u32);
	for (i = 1; i < NCYCLE; i++)
		if (idx[i] == idx[i - 1])
			dup++;
	EXPECT_EQ(0, dup);
	EXPECT_EQ(-1, iw_ddp_invalidate(self->pdb, first));
	EXPECT_EQ(ENOENT, errno);
	free(idx);
	dt_gbuf_free(&g);
}

/* ---- --capture-run PORT: a fixed exchange for ddp_tshark.sh ---- */

static int capture_pair(int port, int fds[2])
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, l;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		return -1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		goto err;
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, sizeof(a)))
		goto err;
	fds[1] = accept(l, NULL, NULL);
	if (fds[1] < 0)
		goto err;
	close(l);
	if (iw_mpa_attach(fds[0]) || iw_mpa_attach(fds[1]) ||
	    iw_mpa_start(fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0) ||
	    iw_mpa_start(fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0) ||
	    iw_mpa_respond(fds[1], DDP_TMO_MS) || iw_mpa_wait_state(fds[0], MPA_S_FULL, DDP_TMO_MS))
		return -1;
	return 0;
err:
	close(l);
	return -1;
}

static int capture_expect(int sfd, __u16 type)
{
	struct ddp_event ev;

	if (iw_ddp_event(sfd, &ev, DDP_TMO_MS) != 1 || ev.type != type) {
		fprintf(stderr, "capture-run: no event %u\n", type);
		return -1;
	}
	return 0;
}

/*
 * Initiator -> Responder: an RDMA Write (tagged, RsvdULP 0x40) of 70000
 * octets, cut into several segments, then two Sends (untagged, QN 0,
 * RsvdULP 0x43 00000000) of 50 and 60 octets; Responder -> Initiator: one
 * Send of 70 octets. Prints the values for the script to compare.
 */
static int capture_run(int port)
{
	static const __u8 send_rsv[5] = { 0x43, 0, 0, 0, 0 };
	static __u8 data[70000], rb[3][256], sink[80000];
	int fds[2], pda, pdb, sa, sb;
	__u32 stag, maxp;
	__u64 to = 0x1000 + 5;

	dt_fill(data, sizeof(data), 3);
	if (capture_pair(port, fds))
		return 1;
	pda = iw_ddp_open();
	pdb = iw_ddp_open();
	sa = iw_ddp_bind(pda, fds[0], 0);
	sb = iw_ddp_bind(pdb, fds[1], 0);
	if (sa < 0 || sb < 0 ||
	    iw_ddp_reg_mr(pdb, sink, sizeof(sink), 0x1000, DDP_ACCESS_REMOTE_WRITE, -1, &stag) ||
	    iw_ddp_post_recv(sb, rb[0], 256, 0, 1) || iw_ddp_post_recv(sb, rb[1], 256, 0, 2) ||
	    iw_ddp_post_recv(sa, rb[2], 256, 0, 3))
		return 1;
	maxp = iw_mpa_mulpdu(fds[0]) - 14;
	printf("stag 0x%08x\nto 0x%llx\nmaxp %u\nwrite %zu\n", stag,
	       (unsigned long long)to, maxp, sizeof(data));
	if (iw_ddp_send_tagged(sa, data, sizeof(data), stag, to, 0x40) ||
	    capture_expect(sb, DDP_EV_TAGGED) ||
	    memcmp(sink + 5, data, sizeof(data)) ||
	    iw_ddp_send_untagged(sa, data, 50, 0, send_rsv) ||
	    iw_ddp_send_untagged(sa, data, 60, 0, send_rsv) ||
	    capture_expect(sb, DDP_EV_RECV) || capture_expect(sb, DDP_EV_RECV) ||
	    iw_ddp_send_untagged(sb, data, 70, 0, send_rsv) ||
	    capture_expect(sa, DDP_EV_RECV))
		return 1;
	close(sa);
	close(sb);
	close(pda);
	close(pdb);
	close(fds[0]);
	close(fds[1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--capture-run"))
		return capture_run(atoi(argv[2]));
	return test_harness_run(argc, argv);
}
