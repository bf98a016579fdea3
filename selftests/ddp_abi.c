// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/ddp user ABI beyond placement: ioctl numbers, structure
 * layouts (the same for 32-bit processes), argument checks, which user
 * memory may be pinned and how it is charged (RLIMIT_MEMLOCK, memory
 * cgroup). See Documentation/ddp.rst.
 * Needs mpa.ko and ddp.ko loaded, and root.
 */
#include <stddef.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"

/* ---- memory cgroup ---- */

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DIR		CG_ROOT "/ddp_abi"
#define CG_STREAMS	16

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A cgroup v2 group with the memory controller: 0, or -1 to skip. */
static int cg_setup(void)
{
	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL))
		return -1;
	if (write_str(CG_ROOT "/cgroup.subtree_control", "+memory"))
		return -1;
	if (mkdir(CG_DIR, 0755) && errno != EEXIST)
		return -1;
	return access(CG_DIR "/memory.current", F_OK);
}

/*
 * What a process makes the kernel allocate for it is charged to its
 * memory cgroup: the event ring of a stream alone is 72 KiB.
 */
TEST(memcg_charges_streams)
{
	int fds[CG_STREAMS][2], sfd[CG_STREAMS], pd, i;
	long long before, after;
	char pid[32];

	if (cg_setup())
		SKIP(return, "no cgroup v2 memory controller");
	/* the sockets' own memory stays outside the group */
	for (i = 0; i < CG_STREAMS; i++)
		ASSERT_EQ(0, ddp_mpa_connect(fds[i], AF_INET, 0));
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, write_str(CG_DIR "/cgroup.procs", pid));
	before = read_ll(CG_DIR "/memory.current");
	ASSERT_LE(0, before);
	pd = ddp_open_pd();
	ASSERT_LE(0, pd);
	for (i = 0; i < CG_STREAMS; i++) {
		sfd[i] = ddp_bind(pd, fds[i][1], 1);
		ASSERT_LE(0, sfd[i]);
	}
	after = read_ll(CG_DIR "/memory.current");
	TH_LOG("%d streams: memory.current %lld -> %lld", CG_STREAMS, before, after);
	/*
	 * At least 64 KiB per stream; per-CPU charge batching moves
	 * memory.current by at most 256 KiB per CPU either way.
	 */
	EXPECT_LE(before + CG_STREAMS * 64 * 1024LL, after);
	for (i = 0; i < CG_STREAMS; i++) {
		close(sfd[i]);
		close(fds[i][0]);
		close(fds[i][1]);
	}
	close(pd);
	EXPECT_EQ(0, write_str(CG_ROOT "/cgroup.procs", pid));
	rmdir(CG_DIR);
}

TEST_HARNESS_MAIN
