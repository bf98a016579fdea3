// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/self/fdinfo of /dev/ddp PD files and stream files: the IDs,
 * tagged buffers and pinned pages of a PD; queues, posted buffers and
 * the MSN expected next, events pending and lost, the stopped flag of a
 * stream. Every value is checked exactly, as it changes. The peer is a
 * user-mode MPA socket whose every send() is one DDP segment.
 * Needs mpa.ko and ddp.ko loaded.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "ddp_test_util.h"

#define NQUEUES		3
#define PAGE		4096

/* The value of "@key:\t" in the fdinfo of @fd as a number, or -1. */
static long long fdinfo_num(int fd, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    line[klen + 1] == '\t') {
			v = strtoll(line + klen + 2, NULL, 0);
			break;
		}
	fclose(f);
	return v;
}

/* The whole line "@key:\t..." (without the newline), or "". */
static const char *fdinfo_line(int fd, const char *key)
{
	static char line[256];
	char path[64];
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	line[0] = 0;
	if (!f)
		return line;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			line[strcspn(line, "\n")] = 0;
			fclose(f);
			return line;
		}
	}
	fclose(f);
	line[0] = 0;
	return line;
}

FIXTURE(fdinfo)
{
	int fds[2];	/* [0] user-mode MPA peer, [1] DDP end */
	int pd;
	int sfd;
	__u8 *mem;	/* 8 pages */
};

FIXTURE_SETUP(fdinfo)
{
	self->sfd = -1;
	self->mem = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, DDP_TMO_MS));
	self->pd = iw_ddp_open();
	ASSERT_LE(0, self->pd);
}

FIXTURE_TEARDOWN(fdinfo)
{
	if (self->sfd >= 0)
		close(self->sfd);
	close(self->pd);
	iw_close_pair(self->fds);
	munmap(self->mem, 8 * PAGE);
}

TEST_F(fdinfo, pd)
{
	__u32 stag[3];

	EXPECT_LT(0, fdinfo_num(self->pd, "ddp-pd"));
	EXPECT_EQ(0, fdinfo_num(self->pd, "mrs"));
	EXPECT_EQ(0, fdinfo_num(self->pd, "pinned-pages"));

	/* 3 pages; 2 octets across a page boundary: 2 pages; 1 page */
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->mem, 3 * PAGE, 0,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag[0]));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->mem + 4 * PAGE - 1, 2, 0,
				   DDP_ACCESS_REMOTE_READ, -1, &stag[1]));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->mem + 7 * PAGE, PAGE, 0,
				   DDP_ACCESS_REMOTE_WRITE, -1, &stag[2]));
	EXPECT_EQ(3, fdinfo_num(self->pd, "mrs"));
	EXPECT_EQ(6, fdinfo_num(self->pd, "pinned-pages"));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, stag[0]));
	EXPECT_EQ(2, fdinfo_num(self->pd, "mrs"));
	EXPECT_EQ(3, fdinfo_num(self->pd, "pinned-pages"));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, stag[1]));
	ASSERT_EQ(0, iw_ddp_invalidate(self->pd, stag[2]));
	EXPECT_EQ(0, fdinfo_num(self->pd, "mrs"));
	EXPECT_EQ(0, fdinfo_num(self->pd, "pinned-pages"));
}

TEST_F(fdinfo, stream)
{
	struct ddp_untagged_hdr h = {
		.ctrl = DDP_FLAG_L | DDP_WIRE_VERSION,
		.qn = htonl(2),
		.msn = htonl(1),
	};
	__u8 seg[sizeof(h) + 10] = { 0 };
	struct ddp_event ev;
	__u32 stag;
	int s2, fds2[2];

	self->sfd = iw_ddp_bind(self->pd, self->fds[1], NQUEUES);
	ASSERT_LE(0, self->sfd);
	EXPECT_LT(0, fdinfo_num(self->sfd, "ddp-stream"));
	EXPECT_NE(fdinfo_num(self->pd, "ddp-pd"), fdinfo_num(self->sfd, "ddp-stream"));
	EXPECT_EQ(fdinfo_num(self->pd, "ddp-pd"), fdinfo_num(self->sfd, "ddp-pd"));
	EXPECT_EQ(1, fdinfo_num(self->sfd, "ddp-version"));
	EXPECT_EQ(0, fdinfo_num(self->sfd, "stopped"));
	EXPECT_EQ(NQUEUES, fdinfo_num(self->sfd, "queues"));
	EXPECT_STREQ("queue0:\tposted 0 msn 1", fdinfo_line(self->sfd, "queue0"));
	EXPECT_STREQ("queue2:\tposted 0 msn 1", fdinfo_line(self->sfd, "queue2"));
	EXPECT_STREQ("", fdinfo_line(self->sfd, "queue3"));
	EXPECT_EQ(0, fdinfo_num(self->sfd, "events-pending"));
	EXPECT_EQ(0, fdinfo_num(self->sfd, "events-lost"));

	/* a stream-bound buffer counts in its PD */
	ASSERT_EQ(0, iw_ddp_reg_mr(self->pd, self->mem, 2 * PAGE, 0,
				   DDP_ACCESS_REMOTE_WRITE, self->sfd, &stag));
	EXPECT_EQ(1, fdinfo_num(self->pd, "mrs"));
	EXPECT_EQ(2, fdinfo_num(self->pd, "pinned-pages"));

	ASSERT_EQ(0, iw_ddp_post_recv(self->sfd, self->mem + 4 * PAGE, 100, 0, 1));
	ASSERT_EQ(0, iw_ddp_post_recv(self->sfd, self->mem + 5 * PAGE, 100, 2, 2));
	ASSERT_EQ(0, iw_ddp_post_recv(self->sfd, self->mem + 6 * PAGE, 100, 2, 3));
	EXPECT_STREQ("queue0:\tposted 1 msn 1", fdinfo_line(self->sfd, "queue0"));
	EXPECT_STREQ("queue1:\tposted 0 msn 1", fdinfo_line(self->sfd, "queue1"));
	EXPECT_STREQ("queue2:\tposted 2 msn 1", fdinfo_line(self->sfd, "queue2"));

	/* MSN 1 on queue 2 arrives: one buffer fewer, one event pending */
	memcpy(seg, &h, sizeof(h));
	ASSERT_EQ(sizeof(seg), send(self->fds[0], seg, sizeof(seg), 0));
	ASSERT_EQ(0, dt_wait_rx_fpdus(self->fds[1], 1));
	EXPECT_STREQ("queue2:\tposted 1 msn 2", fdinfo_line(self->sfd, "queue2"));
	EXPECT_EQ(1, fdinfo_num(self->sfd, "events-pending"));
	ASSERT_EQ(1, iw_ddp_event(self->sfd, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_RECV, ev.type);
	EXPECT_EQ(0, fdinfo_num(self->sfd, "events-pending"));

	/* MSN 2 on queue 1, which has no buffer: the stream stops */
	h.qn = htonl(1);
	h.msn = htonl(2);
	memcpy(seg, &h, sizeof(h));
	ASSERT_EQ(sizeof(seg), send(self->fds[0], seg, sizeof(seg), 0));
	ASSERT_EQ(0, dt_wait_rx_fpdus(self->fds[1], 2));
	EXPECT_EQ(1, fdinfo_num(self->sfd, "stopped"));
	EXPECT_EQ(1, fdinfo_num(self->sfd, "events-pending"));

	/* a second stream of the PD: its own ID, the same PD */
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds2, 0, 0, DDP_TMO_MS));
	s2 = iw_ddp_bind(self->pd, fds2[1], 1);
	ASSERT_LE(0, s2);
	EXPECT_NE(fdinfo_num(self->sfd, "ddp-stream"), fdinfo_num(s2, "ddp-stream"));
	EXPECT_EQ(fdinfo_num(self->pd, "ddp-pd"), fdinfo_num(s2, "ddp-pd"));
	EXPECT_EQ(1, fdinfo_num(s2, "queues"));
	EXPECT_STREQ("", fdinfo_line(s2, "queue1"));
	close(s2);
	iw_close_pair(fds2);

	/* closing the stream flushes its buffers and frees its STag */
	close(self->sfd);
	self->sfd = -1;
	EXPECT_EQ(0, fdinfo_num(self->pd, "mrs"));
	EXPECT_EQ(0, fdinfo_num(self->pd, "pinned-pages"));
}

TEST_HARNESS_MAIN
