// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/ddp user ABI beyond placement: ioctl numbers, structure
 * layouts (the same for 32-bit processes), argument checks, which user
 * memory may be pinned and how it is charged (RLIMIT_MEMLOCK, memory
 * cgroup). See Documentation/ddp.rst.
 * Needs mpa.ko and ddp.ko loaded, and root.
 */
#include <assert.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"

/*
 * The layouts user space relies on. Every field is naturally aligned and
 * every structure a multiple of 8 octets, so i386 (where __u64 is only
 * 4-aligned) lays them out the same: compat_ptr_ioctl is all a 32-bit
 * process needs. These assertions also hold with gcc -m32.
 */
#define ABI_OFF(t, f, o)	static_assert(offsetof(struct t, f) == (o), #t "." #f)
#define ABI_SIZE(t, n)		static_assert(sizeof(struct t) == (n), #t)

ABI_SIZE(ddp_bind, 16);
ABI_OFF(ddp_bind, stream_fd, 12);
ABI_SIZE(ddp_reg_mr, 40);
ABI_OFF(ddp_reg_mr, base_to, 16);
ABI_OFF(ddp_reg_mr, access, 24);
ABI_OFF(ddp_reg_mr, stream_fd, 28);
ABI_OFF(ddp_reg_mr, stag, 32);
ABI_OFF(ddp_reg_mr, pad, 36);
ABI_SIZE(ddp_post_recv, 32);
ABI_OFF(ddp_post_recv, qn, 16);
ABI_OFF(ddp_post_recv, cookie, 24);
ABI_SIZE(ddp_send, 48);
ABI_OFF(ddp_send, flags, 16);
ABI_OFF(ddp_send, stag, 24);
ABI_OFF(ddp_send, to, 32);
ABI_OFF(ddp_send, rsvdulp, 40);
ABI_OFF(ddp_send, pad, 45);
ABI_SIZE(ddp_event, 72);
ABI_OFF(ddp_event, hdr_len, 4);
ABI_OFF(ddp_event, stag, 20);
ABI_OFF(ddp_event, cookie, 24);
ABI_OFF(ddp_event, to, 32);
ABI_OFF(ddp_event, rsvdulp, 40);
ABI_OFF(ddp_event, hdr, 48);

#define PAGE		4096

/* ioctl numbers: 'J', not 'D' (s390 dasd, pmcraid). */
TEST(ioctl_numbers)
{
	struct ddp_reg_mr r = { .stream_fd = -1 };
	__u8 *buf;
	int pd;

	EXPECT_EQ('J', _IOC_TYPE(DDP_IOC_BIND));
	EXPECT_EQ(_IOWR('J', 1, struct ddp_bind), DDP_IOC_BIND);
	EXPECT_EQ(_IOWR('J', 2, struct ddp_reg_mr), DDP_IOC_REG_MR);
	EXPECT_EQ(_IOW('J', 3, __u32), DDP_IOC_INVALIDATE);
	EXPECT_EQ(_IOW('J', 4, struct ddp_post_recv), DDP_IOC_POST_RECV);
	EXPECT_EQ(_IOW('J', 5, struct ddp_send), DDP_IOC_SEND);
	EXPECT_EQ(_IO('J', 6), DDP_IOC_SHUTDOWN);
	EXPECT_EQ(_IOWR('J', 7, struct ddp_send_batch), DDP_IOC_SEND_BATCH);
	EXPECT_EQ(16, sizeof(struct ddp_send_batch));

	pd = iw_ddp_open();
	ASSERT_LE(0, pd);
	buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	r.addr = (uintptr_t)buf;
	r.len = PAGE;
	r.access = DDP_ACCESS_REMOTE_WRITE;
	/* the old 'D' number means nothing any more */
	EXPECT_EQ(-1, ioctl(pd, _IOWR('D', 2, struct ddp_reg_mr), &r));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(0, ioctl(pd, DDP_IOC_REG_MR, &r));
	EXPECT_EQ(0, iw_ddp_invalidate(pd, r.stag));
	close(pd);
	munmap(buf, PAGE);
}

FIXTURE(stream)
{
	int fds[2];
	int pd;
	int sfd;	/* stream of fds[0] */
	int peer_pd;
	int peer;	/* stream of fds[1] */
};

FIXTURE_SETUP(stream)
{
	self->pd = -1;
	self->peer_pd = -1;
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, DDP_TMO_MS));
	self->pd = iw_ddp_open();
	ASSERT_LE(0, self->pd);
	self->sfd = iw_ddp_bind(self->pd, self->fds[0], 1);
	ASSERT_LE(0, self->sfd);
	self->peer_pd = iw_ddp_open();
	ASSERT_LE(0, self->peer_pd);
	self->peer = iw_ddp_bind(self->peer_pd, self->fds[1], 1);
	ASSERT_LE(0, self->peer);
}

FIXTURE_TEARDOWN(stream)
{
	close(self->sfd);
	close(self->peer);
	close(self->pd);
	close(self->peer_pd);
	close(self->fds[0]);
	close(self->fds[1]);
}

/*
 * A tagged header has one RsvdULP octet (RFC 5041 section 4.3):
 * rsvdulp[1..4] mean nothing there and must be 0.
 */
TEST_F(stream, tagged_send_rsvdulp)
{
	struct ddp_event ev;
	struct dt_gbuf g;
	__u8 src[64];
	__u32 stag;
	int i;

	ASSERT_EQ(0, dt_gbuf_alloc(&g, PAGE, 0));
	ASSERT_EQ(0, iw_ddp_reg_mr(self->peer_pd, g.buf, PAGE, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &stag));
	dt_fill(src, sizeof(src), 3);
	for (i = 1; i < 5; i++) {
		struct ddp_send sd = {
			.addr = (uintptr_t)src,
			.len = sizeof(src),
			.flags = DDP_SEND_TAGGED,
			.stag = stag,
		};

		sd.rsvdulp[i] = 1;
		EXPECT_EQ(-1, ioctl(self->sfd, DDP_IOC_SEND, &sd)) {
			TH_LOG("rsvdulp[%d] = 1 accepted", i);
		}
		EXPECT_EQ(EINVAL, errno);
	}
	/* nothing went out: the next message is the first one placed */
	ASSERT_EQ(0, iw_ddp_send_tagged(self->sfd, src, sizeof(src), stag, 0, 0x42));
	ASSERT_EQ(1, iw_ddp_event(self->peer, &ev, DDP_TMO_MS));
	EXPECT_EQ(DDP_EV_TAGGED, ev.type);
	EXPECT_EQ(0x42, ev.rsvdulp[0]);
	EXPECT_EQ(0, ev.rsvdulp[1]);
	EXPECT_EQ(sizeof(src), ev.len);
	EXPECT_EQ(0, memcmp(g.buf, src, sizeof(src)));
	EXPECT_EQ(0, iw_ddp_event(self->peer, &ev, 100));
	dt_gbuf_free(&g);
}

/*
 * DDP_IOC_SEND_BATCH: messages in order, one untagged message per entry
 * with consecutive MSNs; the first bad entry ends the batch with its
 * error and @done tells how many went; a bad array pointer is EFAULT; a
 * count of 0 or above DDP_SEND_BATCH_MAX is EINVAL.
 */
TEST_F(stream, send_batch)
{
	struct ddp_send sd[4];
	struct ddp_send_batch b = { .sends = (uintptr_t)sd };
	struct ddp_event ev;
	__u8 src[4][64], dst[4][64];
	int i;

	memset(sd, 0, sizeof(sd));
	for (i = 0; i < 4; i++) {
		dt_fill(src[i], sizeof(src[i]), 10 + i);
		sd[i].addr = (uintptr_t)src[i];
		sd[i].len = sizeof(src[i]) - i;
		ASSERT_EQ(0, iw_ddp_post_recv(self->peer, dst[i], sizeof(dst[i]), 0, i));
	}
	/* entry 2 is bad (pad0): entries 0 and 1 go, done = 2, EINVAL */
	sd[2].pad0 = 1;
	b.count = 4;
	b.done = 77;
	EXPECT_EQ(-1, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(2, b.done);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, iw_ddp_event(self->peer, &ev, DDP_TMO_MS));
		EXPECT_EQ(DDP_EV_RECV, ev.type);
		EXPECT_EQ(i, ev.cookie);
		EXPECT_EQ(i + 1, ev.msn);
		EXPECT_EQ(sizeof(src[i]) - i, ev.len);
		EXPECT_EQ(0, memcmp(dst[i], src[i], ev.len));
	}
	EXPECT_EQ(0, iw_ddp_event(self->peer, &ev, 100));
	/* the rest, fixed: all go, MSNs 3 and 4 */
	sd[2].pad0 = 0;
	b.sends = (uintptr_t)&sd[2];
	b.count = 2;
	EXPECT_EQ(0, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(2, b.done);
	for (i = 2; i < 4; i++) {
		ASSERT_EQ(1, iw_ddp_event(self->peer, &ev, DDP_TMO_MS));
		EXPECT_EQ(i, ev.cookie);
		EXPECT_EQ(i + 1, ev.msn);
		EXPECT_EQ(0, memcmp(dst[i], src[i], ev.len));
	}
	/* nothing goes for a bad array, a count of 0 or too many */
	b.sends = 8;
	b.count = 1;
	EXPECT_EQ(-1, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, b.done);
	b.sends = (uintptr_t)sd;
	b.count = 0;
	EXPECT_EQ(-1, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(EINVAL, errno);
	b.count = DDP_SEND_BATCH_MAX + 1;
	EXPECT_EQ(-1, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, iw_ddp_event(self->peer, &ev, 100));
}

/*
 * A batch sends every message but its last as one that another follows
 * at once (MSG_MORE down to TCP): 16 untagged messages of 64 octets go
 * in one TCP segment on loopback. A bad entry ends the batch and what
 * went before it still leaves (no FPDU waits for a message that will not
 * come).
 */
TEST_F(stream, send_batch_packs_segments)
{
	struct ddp_send sd[16];
	struct ddp_send_batch b = { .sends = (uintptr_t)sd, .count = 16 };
	__u8 src[16][64], dst[16][64];
	struct ddp_event ev;
	long long segs;
	int i;

	memset(sd, 0, sizeof(sd));
	for (i = 0; i < 16; i++) {
		dt_fill(src[i], sizeof(src[i]), 30 + i);
		sd[i].addr = (uintptr_t)src[i];
		sd[i].len = sizeof(src[i]);
		ASSERT_EQ(0, iw_ddp_post_recv(self->peer, dst[i], sizeof(dst[i]), 0, i));
	}
	segs = iw_tcp_data_segs_out(self->fds[0]);
	ASSERT_LT(0, segs);
	EXPECT_EQ(0, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(16, b.done);
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(1, iw_ddp_event(self->peer, &ev, DDP_TMO_MS));
		EXPECT_EQ(DDP_EV_RECV, ev.type);
		EXPECT_EQ(i, ev.cookie);
		EXPECT_EQ(64, ev.len);
		EXPECT_EQ(0, memcmp(dst[i], src[i], 64));
	}
	EXPECT_EQ(segs + 1, iw_tcp_data_segs_out(self->fds[0]));

	/* entry 3 has a queue the stream does not have: 0..2 go, at once */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, iw_ddp_post_recv(self->peer, dst[i], sizeof(dst[i]), 0, i));
	sd[3].qn = 7;
	b.count = 4;
	EXPECT_EQ(-1, ioctl(self->sfd, DDP_IOC_SEND_BATCH, &b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(3, b.done);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, iw_ddp_event(self->peer, &ev, DDP_TMO_MS));
		EXPECT_EQ(i, ev.cookie);
	}
	EXPECT_EQ(0, iw_ddp_event(self->peer, &ev, 100));
}

/*
 * Only remote write pins the pages for writing: a read-only mapping can
 * be registered as an RDMA Read source, not as a sink.
 */
TEST(read_only_mapping)
{
	__u32 stag[1] = { 0 };	/* in memory: the harness longjmp()s */
	__u8 *ro;
	int pd;

	pd = iw_ddp_open();
	ASSERT_LE(0, pd);
	ro = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(0, iw_ddp_reg_mr(pd, ro, 4 * PAGE, 0, DDP_ACCESS_REMOTE_READ, -1, stag));
	EXPECT_EQ(0, iw_ddp_invalidate(pd, stag[0]));
	EXPECT_EQ(0, iw_ddp_reg_mr(pd, ro + 100, 2 * PAGE, 0, 0, -1, stag));
	EXPECT_EQ(0, iw_ddp_invalidate(pd, stag[0]));
	EXPECT_EQ(-1, iw_ddp_reg_mr(pd, ro, 4 * PAGE, 0,
				    DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ, -1,
			      stag));
	EXPECT_EQ(EFAULT, errno);
	close(pd);
	munmap(ro, 4 * PAGE);
}

/* Map @len octets of a new file in @dir with @flags: the mapping, or NULL. */
static void *map_file(const char *dir, size_t len, int flags, int prot)
{
	char path[256];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/ddp_abi.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	if (ftruncate(fd, len)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, prot, flags, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * DDP writes into the pages from softirq: page cache pages of a shared
 * file mapping are refused as sinks and receive buffers (EOPNOTSUPP).
 * A private file mapping (its own anonymous copies), shared anonymous
 * memory, and a shared file mapping registered without remote write
 * are fine.
 */
TEST_F(stream, shared_file_mapping)
{
	const int rw = PROT_READ | PROT_WRITE;
	__u8 *shared, *priv, *anon;
	const char *dir;
	__u32 stag[1] = { 0 };	/* in memory: the harness longjmp()s */

	shared = map_file("/tmp", 4 * PAGE, MAP_SHARED, rw);
	ASSERT_NE(NULL, shared);
	memset(shared, 1, 4 * PAGE);
	EXPECT_EQ(-1, iw_ddp_reg_mr(self->pd, shared, 4 * PAGE, 0, DDP_ACCESS_REMOTE_WRITE,
				    -1, stag));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* one page of the range is enough */
	EXPECT_EQ(-1, iw_ddp_post_recv(self->sfd, shared + 3 * PAGE, PAGE, 0, 1));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, iw_ddp_reg_mr(self->pd, shared, 4 * PAGE, 0, DDP_ACCESS_REMOTE_READ,
				   -1, stag));
	EXPECT_EQ(0, iw_ddp_invalidate(self->pd, stag[0]));

	priv = map_file("/tmp", 4 * PAGE, MAP_PRIVATE, rw);
	ASSERT_NE(NULL, priv);
	EXPECT_EQ(0, iw_ddp_reg_mr(self->pd, priv, 4 * PAGE, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, stag));
	EXPECT_EQ(0, iw_ddp_invalidate(self->pd, stag[0]));

	anon = mmap(NULL, 4 * PAGE, rw, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, anon);
	EXPECT_EQ(0, iw_ddp_reg_mr(self->pd, anon, 4 * PAGE, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, stag));
	EXPECT_EQ(0, iw_ddp_invalidate(self->pd, stag[0]));
	EXPECT_EQ(0, iw_ddp_post_recv(self->sfd, anon, PAGE, 0, 2));

	/* the project share, when it takes writable shared mappings */
	dir = getenv("VM_SHARE");
	munmap(shared, 4 * PAGE);
	shared = dir ? map_file(dir, 4 * PAGE, MAP_SHARED, rw) : NULL;
	if (shared) {
		EXPECT_EQ(-1, iw_ddp_reg_mr(self->pd, shared, 4 * PAGE, 0,
					    DDP_ACCESS_REMOTE_WRITE, -1, stag));
		EXPECT_EQ(EOPNOTSUPP, errno);
		munmap(shared, 4 * PAGE);
	} else {
		TH_LOG("no writable shared file mapping on $VM_SHARE: not tried");
	}
	munmap(priv, 4 * PAGE);
	munmap(anon, 4 * PAGE);
}

static int set_ipc_lock(int on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[0].effective |= 1U << CAP_IPC_LOCK;
	else
		d[0].effective &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d);
}

/*
 * Pinned pages are charged to RLIMIT_MEMLOCK, registered and posted
 * alike; CAP_IPC_LOCK goes past the limit.
 */
TEST_F(stream, memlock_limit)
{
	struct rlimit rl = { .rlim_cur = 64 * PAGE, .rlim_max = 64 * PAGE };
	__u32 st[2] = { 0 };	/* in memory: the harness longjmp()s */
	__u8 *buf;

	buf = mmap(NULL, 256 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, set_ipc_lock(0));
	EXPECT_EQ(0, iw_ddp_reg_mr(self->pd, buf, 48 * PAGE, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &st[0]));
	/* 48 + 17 > 64 pages */
	EXPECT_EQ(-1, iw_ddp_reg_mr(self->pd, buf + 64 * PAGE, 17 * PAGE, 0,
				    DDP_ACCESS_REMOTE_WRITE, -1, &st[1]));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(-1, iw_ddp_post_recv(self->sfd, buf + 64 * PAGE, 17 * PAGE, 0, 1));
	EXPECT_EQ(ENOMEM, errno);
	/* an unaligned octet range is charged by the pages it touches */
	EXPECT_EQ(-1, iw_ddp_post_recv(self->sfd, buf + 64 * PAGE + 1, 16 * PAGE, 0, 1));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(0, iw_ddp_post_recv(self->sfd, buf + 64 * PAGE, 16 * PAGE, 0, 1));
	/* what is given back can be pinned again */
	EXPECT_EQ(0, iw_ddp_invalidate(self->pd, st[0]));
	EXPECT_EQ(0, iw_ddp_reg_mr(self->pd, buf + 128 * PAGE, 48 * PAGE, 0,
				   DDP_ACCESS_REMOTE_WRITE, -1, &st[0]));
	/* with CAP_IPC_LOCK the limit does not apply */
	ASSERT_EQ(0, set_ipc_lock(1));
	EXPECT_EQ(0, iw_ddp_reg_mr(self->pd, buf, 128 * PAGE, 0, DDP_ACCESS_REMOTE_WRITE,
				   -1, &st[1]));
	munmap(buf, 256 * PAGE);
}

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
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds[i], 0, 0, DDP_TMO_MS));
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, write_str(CG_DIR "/cgroup.procs", pid));
	before = read_ll(CG_DIR "/memory.current");
	ASSERT_LE(0, before);
	pd = iw_ddp_open();
	ASSERT_LE(0, pd);
	for (i = 0; i < CG_STREAMS; i++) {
		sfd[i] = iw_ddp_bind(pd, fds[i][1], 1);
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
