// SPDX-License-Identifier: GPL-2.0
/*
 * Scale: DDP_SCALE_STREAMS (default 1000) DDP streams at once in one
 * process, half of them Data Sources and half Data Sinks over loopback
 * MPA connections, every Sink with its own STag. Each Source writes a
 * tagged message and sends an untagged one; every Sink must report both
 * with exact contents. Prints the memory the streams take (the drop of
 * MemAvailable and the growth of Slab once the connections exist) per
 * stream. Needs mpa.ko and ddp.ko.
 */
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"

#define MSG_LEN		512
#define BASE_TO		0x40000ULL

struct conn {
	int fds[2];	/* [0] Initiator / Source, [1] Responder / Sink */
	int src, sink;	/* stream fds */
	__u32 stag;
	__u8 *buf;	/* the Sink's registered buffer */
	__u8 *rbuf;	/* its posted receive buffer */
};

/* a /proc/meminfo field in KiB, or -1 */
static long mem_kib(const char *name)
{
	char line[256];
	size_t n = strlen(name);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

TEST(streams)
{
	const char *env = getenv("DDP_SCALE_STREAMS");
	int nconn = (env ? atoi(env) : 1000) / 2;
	struct rlimit rl = { .rlim_cur = 4 * nconn + 64, .rlim_max = 4 * nconn + 64 };
	long slab0, avail0, slab1, avail1;
	struct conn *c;
	__u8 msg[MSG_LEN], want[MSG_LEN];
	static const __u8 rsv[5] = { 0x42 };
	struct ddp_event ev;
	int pd, i, got;

	ASSERT_LT(0, nconn);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		SKIP(return, "cannot raise RLIMIT_NOFILE to %lu", (unsigned long)rl.rlim_cur);
	c = calloc(nconn, sizeof(*c));
	ASSERT_NE(NULL, c);
	pd = iw_ddp_open();
	ASSERT_LE(0, pd);

	/* plain MPA connections first: the baseline of the memory figure */
	for (i = 0; i < nconn; i++)
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, c[i].fds, 0, 0,
					 DDP_TMO_MS)) TH_LOG("connection %d", i);
	slab0 = mem_kib("Slab");
	avail0 = mem_kib("MemAvailable");
	for (i = 0; i < nconn; i++) {
		c[i].src = iw_ddp_bind(pd, c[i].fds[0], 1);
		c[i].sink = iw_ddp_bind(pd, c[i].fds[1], 1);
		ASSERT_LE(0, c[i].src) TH_LOG("stream %d: %s", 2 * i, strerror(errno));
		ASSERT_LE(0, c[i].sink) TH_LOG("stream %d: %s", 2 * i + 1, strerror(errno));
		c[i].buf = calloc(1, MSG_LEN);
		c[i].rbuf = calloc(1, MSG_LEN);
		ASSERT_NE(NULL, c[i].buf);
		ASSERT_NE(NULL, c[i].rbuf);
		ASSERT_EQ(0, iw_ddp_reg_mr(pd, c[i].buf, MSG_LEN, BASE_TO, DDP_ACCESS_REMOTE_WRITE,
					   c[i].sink, &c[i].stag));
		ASSERT_EQ(0, iw_ddp_post_recv(c[i].sink, c[i].rbuf, MSG_LEN, 0, i));
	}
	slab1 = mem_kib("Slab");
	avail1 = mem_kib("MemAvailable");
	/* each stream bound, with one MR and one posted buffer */
	fprintf(stderr,
		"# %d DDP streams: Slab +%ld KiB, MemAvailable -%ld KiB, %.1f KiB per stream\n",
		2 * nconn, slab1 - slab0, avail0 - avail1,
		(double)(avail0 - avail1) / (2 * nconn));

	/* every Source writes, then sends (the Initiator sends first) */
	for (i = 0; i < nconn; i++) {
		dt_fill(msg, MSG_LEN, i);
		ASSERT_EQ(0, iw_ddp_send_tagged(c[i].src, msg, MSG_LEN, c[i].stag, BASE_TO, 0x41));
		ASSERT_EQ(0, iw_ddp_send_untagged(c[i].src, msg, MSG_LEN / 2, 0, rsv));
	}
	for (i = 0; i < nconn; i++) {
		dt_fill(want, MSG_LEN, i);
		for (got = 0; got < 2; got++) {
			ASSERT_EQ(1, iw_ddp_event(c[i].sink, &ev, DDP_TMO_MS)) TH_LOG("stream %d",
										      i);
			if (ev.type == DDP_EV_TAGGED) {
				EXPECT_EQ(c[i].stag, ev.stag);
				EXPECT_EQ(MSG_LEN, ev.len);
				EXPECT_EQ(0, memcmp(c[i].buf, want, MSG_LEN));
			} else {
				ASSERT_EQ(DDP_EV_RECV, ev.type) TH_LOG("stream %d", i);
				EXPECT_EQ(i, ev.cookie);
				EXPECT_EQ(MSG_LEN / 2, ev.len);
				EXPECT_EQ(0, memcmp(c[i].rbuf, want, MSG_LEN / 2));
			}
		}
	}
	for (i = 0; i < nconn; i++) {
		close(c[i].src);
		close(c[i].sink);
		close(c[i].fds[0]);
		close(c[i].fds[1]);
		free(c[i].buf);
		free(c[i].rbuf);
	}
	close(pd);
	free(c);
}

TEST_HARNESS_MAIN
