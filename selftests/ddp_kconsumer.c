// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel DDP API, driven through selftests/kmod/ddp_kconsumer.ko
 * (make test-modules): a kernel ULP binds the Responder end (fds[1]) of
 * an MPA connection, registers and posts kernel pages, sends, invalidates
 * and releases; the Initiator (fds[0]) is a raw MPA peer in user space:
 * each send() on it is one DDP segment, each recv() one segment from the
 * kernel ULP. Every test checks the exact events, the exact octets
 * placed (and nothing else: the buffers start zeroed) and the errnos of
 * the calls, which the module's ctl file returns from write().
 * Needs mpa.ko and ddp.ko loaded; loads and unloads the consumer.
 */
#include <sys/mount.h>
#include <sys/syscall.h>
#include <libgen.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "ddp_test_util.h"
#include "kmod_util.h"

#define KC_DIR		"/sys/kernel/debug/ddp_kconsumer"
/* as in ddp_kconsumer.c */
#define KC_TAG_LEN	6000
#define KC_BASE_TO	0x10000ULL
#define KC_RBUF_LEN	5000
#define NQUEUES		2

static int kc_load(void)
{
	bool loaded = false;

	if (kmod_load("ddp_kconsumer", "kmod/ddp_kconsumer.ko", &loaded))
		return -1;
	if (access(KC_DIR, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return access(KC_DIR "/ctl", F_OK);
}

/* 0, or the errno of the command */
static __printf(1, 2) int kc_ctl(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = kmod_vctl(KC_DIR "/ctl", fmt, ap);
	va_end(ap);
	return ret;
}

static ssize_t kc_read(const char *name, void *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), KC_DIR "/%s", name);
	return kmod_read(path, buf, len);
}

/* Wait until the event log has @n lines; its text in @log. */
static int kc_events(char *log, size_t len, int n)
{
	long long end = iw_now_ms() + DDP_TMO_MS;
	int lines;
	ssize_t got;
	char *p;

	do {
		got = kc_read("events", log, len - 1);
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

static __u32 kc_stag(void)
{
	char buf[64] = "";
	unsigned int stag = 0;

	if (kc_read("state", buf, sizeof(buf) - 1) > 0)
		sscanf(buf, "stag=%u", &stag);
	return stag;
}

FIXTURE(kc)
{
	int fds[2];	/* [0] raw MPA peer, [1] the kernel ULP's stream */
	char log[16384];
	__u8 tag[KC_TAG_LEN];
	__u8 rbuf[KC_RBUF_LEN];
};

FIXTURE_SETUP(kc)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	if (kc_load())
		SKIP(return, "no ddp_kconsumer.ko (make test-modules) or debugfs");
	/* a stream left behind by a test that timed out */
	kc_ctl("release 0");
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, DDP_TMO_MS));
	ASSERT_EQ(0, kc_ctl("bind %d %d", self->fds[1], NQUEUES));
}

FIXTURE_TEARDOWN(kc)
{
	kc_ctl("release 0");
	if (self->fds[0] >= 0) {
		close(self->fds[0]);
		close(self->fds[1]);
	}
	syscall(__NR_delete_module, "ddp_kconsumer", O_NONBLOCK);
}

static void peer_send(struct __test_metadata *_metadata, int fd,
		      const void *hdr, size_t hlen, const __u8 *pl, size_t plen)
{
	__u8 b[4096];

	ASSERT_GE(sizeof(b), hlen + plen);
	memcpy(b, hdr, hlen);
	if (plen)
		memcpy(b + hlen, pl, plen);
	ASSERT_EQ((ssize_t)(hlen + plen), send(fd, b, hlen + plen, 0));
}

/* One segment from the kernel ULP: its length. */
static ssize_t peer_recv(int fd, __u8 *b, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, DDP_TMO_MS) != 1)
		return -1;
	return recv(fd, b, len, MSG_DONTWAIT);
}

static int all_zero(const __u8 *p, size_t len)
{
	return dt_find_not(p, len, 0) == -1;
}

/* Two untagged segments of one message land in the posted kernel pages. */
TEST_F(kc, untagged_placed)
{
	struct ddp_untagged_hdr h = {
		.rsvdulp = { 0x43, 1, 2, 3, 4 },
		.qn = htonl(1),
		.msn = htonl(1),
	};
	__u8 msg[4200];

	ASSERT_EQ(0, kc_ctl("post 1 77"));
	kmod_fill(msg, sizeof(msg), 3);
	/* MO 0..3999 and 4000..4199: crosses the page boundary */
	h.ctrl = DDP_WIRE_VERSION;
	h.mo = htonl(0);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg, 2000);
	h.mo = htonl(2000);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg + 2000, 2000);
	h.ctrl = DDP_FLAG_L | DDP_WIRE_VERSION;
	h.mo = htonl(4000);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg + 4000, 200);
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	EXPECT_STREQ("recv qn=1 msn=1 len=4200 cookie=77 rsvdulp=4301020304\n",
		     self->log);
	ASSERT_EQ(KC_RBUF_LEN, kc_read("untagged", self->rbuf, KC_RBUF_LEN));
	EXPECT_EQ(0, memcmp(self->rbuf, msg, sizeof(msg)));
	EXPECT_TRUE(all_zero(self->rbuf + sizeof(msg), KC_RBUF_LEN - sizeof(msg)));
}

/*
 * A kept queue (ddp_queue_keep()): its delivered buffers stay with the
 * stream, and ddp_repost() posts them again, oldest first, same pages and
 * cookie, one per call; with none posted again the next message finds no
 * buffer (0x2/0x02). At release the buffers posted again come back as
 * flushes, in order, as any posted buffer.
 */
TEST_F(kc, untagged_kept_repost)
{
	struct ddp_untagged_hdr h = {
		.ctrl = DDP_FLAG_L | DDP_WIRE_VERSION,
		.qn = htonl(0),
	};
	__u8 m1[300], m2[200], m3[100];

	EXPECT_EQ(EINVAL, kc_ctl("keep %d", NQUEUES));
	EXPECT_EQ(EINVAL, kc_ctl("repost %d", NQUEUES));
	ASSERT_EQ(0, kc_ctl("keep 0"));
	ASSERT_EQ(0, kc_ctl("post 0 41"));
	ASSERT_EQ(0, kc_ctl("post 0 43"));
	ASSERT_EQ(0, kc_ctl("post 1 42"));
	/* posted, not delivered: nothing is kept */
	EXPECT_EQ(ENOENT, kc_ctl("repost 0"));
	kmod_fill(m1, sizeof(m1), 1);
	kmod_fill(m2, sizeof(m2), 2);
	kmod_fill(m3, sizeof(m3), 3);
	h.msn = htonl(1);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), m1, sizeof(m1));
	h.msn = htonl(2);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), m2, sizeof(m2));
	ASSERT_EQ(2, kc_events(self->log, sizeof(self->log), 2));
	/* the buffer of MSN 1 (cookie 41) goes back */
	ASSERT_EQ(0, kc_ctl("repost 0"));
	h.msn = htonl(3);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), m3, sizeof(m3));
	ASSERT_EQ(3, kc_events(self->log, sizeof(self->log), 3));
	/* both buffers are the same pages: the third message at offset 0 */
	ASSERT_EQ(KC_RBUF_LEN, kc_read("untagged", self->rbuf, KC_RBUF_LEN));
	EXPECT_EQ(0, memcmp(self->rbuf, m3, sizeof(m3)));
	EXPECT_EQ(0, memcmp(self->rbuf + 100, m2 + 100, 100));
	EXPECT_EQ(0, memcmp(self->rbuf + 200, m1 + 200, 100));
	/* both kept, none posted */
	h.msn = htonl(4);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), m3, 10);
	ASSERT_EQ(4, kc_events(self->log, sizeof(self->log), 4));
	EXPECT_EQ(0, kc_ctl("repost 0"));
	EXPECT_EQ(0, kc_ctl("repost 0"));
	EXPECT_EQ(ENOENT, kc_ctl("repost 0"));
	ASSERT_EQ(0, kc_ctl("release 0"));
	ASSERT_EQ(7, kc_events(self->log, sizeof(self->log), 7));
	EXPECT_STREQ("recv qn=0 msn=1 len=300 cookie=41 rsvdulp=0000000000\n"
		     "recv qn=0 msn=2 len=200 cookie=43 rsvdulp=0000000000\n"
		     "recv qn=0 msn=3 len=100 cookie=41 rsvdulp=0000000000\n"
		     "error type=2 code=2 len=28 hdr=410000000000000000000000000400000000\n"
		     "flush qn=0 cookie=43\n"
		     "flush qn=0 cookie=41\n"
		     "flush qn=1 cookie=42\n", self->log);
}

/* A tagged message to a PD-wide STag, placed across the page boundary. */
TEST_F(kc, tagged_placed)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
		.rsvdulp = 0x40,
	};
	char want[160];
	__u8 msg[300];
	__u32 stag;

	ASSERT_EQ(0, kc_ctl("reg 0 %u", DDP_ACCESS_REMOTE_WRITE));
	stag = kc_stag();
	ASSERT_NE(0, stag);
	kmod_fill(msg, sizeof(msg), 11);
	h.stag = htonl(stag);
	h.to = htobe64(KC_BASE_TO + 3900);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg, sizeof(msg));
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	snprintf(want, sizeof(want), "tagged stag=%u to=%llu len=300 rsvdulp=40\n",
		 stag, KC_BASE_TO + 3900);
	EXPECT_STREQ(want, self->log);
	ASSERT_EQ(KC_TAG_LEN, kc_read("tagged", self->tag, KC_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, 3900));
	EXPECT_EQ(0, memcmp(self->tag + 3900, msg, sizeof(msg)));
	EXPECT_TRUE(all_zero(self->tag + 4200, KC_TAG_LEN - 4200));
}

/*
 * Fast registration: a reserved STag index takes a buffer under the
 * caller's key, one at a time; invalidation returns the index to the
 * reservation, release gives it back.
 */
TEST_F(kc, reserved_stag)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
	};
	__u32 idx, s1, s2, s3;
	char want[160];
	__u8 msg[100];

	ASSERT_EQ(0, kc_ctl("rsv"));
	idx = kc_stag() >> 8;
	ASSERT_NE(0, idx);
	s1 = idx << 8 | 0x11;
	s2 = idx << 8 | 0x22;
	s3 = idx << 8 | 0x33;
	/* an index of 0 is no STag; a key alone names nothing registered */
	EXPECT_EQ(EINVAL, kc_ctl("regat %u %u", 0x11, DDP_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(ENOENT, kc_ctl("inval %u", s1));
	ASSERT_EQ(0, kc_ctl("regat %u %u", s1, DDP_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EBUSY, kc_ctl("regat %u %u", s2, DDP_ACCESS_REMOTE_WRITE));
	/* the peer places under the caller's key */
	kmod_fill(msg, sizeof(msg), 5);
	h.stag = htonl(s1);
	h.to = htobe64(KC_BASE_TO + 10);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg, sizeof(msg));
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	snprintf(want, sizeof(want), "tagged stag=%u to=%llu len=100 rsvdulp=00\n",
		 s1, KC_BASE_TO + 10);
	EXPECT_STREQ(want, self->log);
	ASSERT_EQ(KC_TAG_LEN, kc_read("tagged", self->tag, KC_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->tag + 10, msg, sizeof(msg)));
	/* invalidated: the index is reserved again, for another key */
	EXPECT_EQ(0, kc_ctl("inval %u", s1));
	EXPECT_EQ(ENOENT, kc_ctl("inval %u", s1));
	ASSERT_EQ(0, kc_ctl("regat %u %u", s3, DDP_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(ENOENT, kc_ctl("inval %u", s2));
	EXPECT_EQ(0, kc_ctl("inval %u", s3));
	/* released: the index is no longer the caller's */
	EXPECT_EQ(0, kc_ctl("unrsv %u", s1));
	EXPECT_EQ(EBUSY, kc_ctl("regat %u %u", s1, DDP_ACCESS_REMOTE_WRITE));
}

/* Past the end of the buffer: 0x1/0x01, the header reported, nothing placed. */
TEST_F(kc, tagged_out_of_bounds)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
	};
	char want[160];
	__u8 msg[20];
	__u32 stag;

	ASSERT_EQ(0, kc_ctl("reg 1 %u", DDP_ACCESS_REMOTE_WRITE));
	stag = kc_stag();
	kmod_fill(msg, sizeof(msg), 1);
	h.stag = htonl(stag);
	h.to = htobe64(KC_BASE_TO + KC_TAG_LEN - 10);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg, sizeof(msg));
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	snprintf(want, sizeof(want),
		 "error type=1 code=1 len=34 hdr=c100%08x%016llx\n", stag,
		 KC_BASE_TO + KC_TAG_LEN - 10);
	EXPECT_STREQ(want, self->log);
	ASSERT_EQ(KC_TAG_LEN, kc_read("tagged", self->tag, KC_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, KC_TAG_LEN));
}

/* No remote write access: the STag is invalid for placement (0x1/0x00). */
TEST_F(kc, tagged_read_only)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
		.to = htobe64(KC_BASE_TO),
	};
	__u8 msg[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	ASSERT_EQ(0, kc_ctl("reg 0 %u", DDP_ACCESS_REMOTE_READ));
	h.stag = htonl(kc_stag());
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg, sizeof(msg));
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	EXPECT_EQ(0, strncmp(self->log, "error type=1 code=0 len=22 ", 27));
	ASSERT_EQ(KC_TAG_LEN, kc_read("tagged", self->tag, KC_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, KC_TAG_LEN));
}

/* ddp_invalidate(): 0, then -ENOENT; a write to the STag is refused. */
TEST_F(kc, invalidate)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
		.to = htobe64(KC_BASE_TO),
	};
	__u8 msg[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	__u32 stag;

	ASSERT_EQ(0, kc_ctl("reg 0 %u", DDP_ACCESS_REMOTE_WRITE));
	stag = kc_stag();
	ASSERT_EQ(0, kc_ctl("inval %u", stag));
	EXPECT_EQ(ENOENT, kc_ctl("inval %u", stag));
	EXPECT_EQ(ENOENT, kc_ctl("inval %u", stag ^ 0x100));
	h.stag = htonl(stag);
	peer_send(_metadata, self->fds[0], &h, sizeof(h), msg, sizeof(msg));
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	EXPECT_EQ(0, strncmp(self->log, "error type=1 code=0 len=22 ", 27));
	ASSERT_EQ(KC_TAG_LEN, kc_read("tagged", self->tag, KC_TAG_LEN));
	EXPECT_TRUE(all_zero(self->tag, KC_TAG_LEN));
}

/*
 * Receive one message of @len octets from the kernel ULP: its segments
 * in order, each header exact, the payload that of kmod_fill(@seed).
 */
static void expect_msg(struct __test_metadata *_metadata, int fd, bool tagged,
		       __u32 qn, __u32 msn, __u32 stag, __u64 to, size_t len,
		       __u32 seed)
{
	size_t hlen = tagged ? sizeof(struct ddp_tagged_hdr) :
			       sizeof(struct ddp_untagged_hdr);
	static __u8 msg[65536], seg[65536];
	size_t off = 0;
	bool last = false;
	ssize_t n;

	kmod_fill(msg, len, seed);
	while (!last) {
		n = peer_recv(fd, seg, sizeof(seg));
		ASSERT_LT((ssize_t)hlen, n);
		last = seg[0] & DDP_FLAG_L;
		if (tagged) {
			struct ddp_tagged_hdr h = {
				.ctrl = DDP_FLAG_T | DDP_WIRE_VERSION |
					(last ? DDP_FLAG_L : 0),
				.rsvdulp = 0x40,
				.stag = htonl(stag),
				.to = htobe64(to + off),
			};

			ASSERT_EQ(0, memcmp(seg, &h, hlen));
		} else {
			struct ddp_untagged_hdr h = {
				.ctrl = DDP_WIRE_VERSION | (last ? DDP_FLAG_L : 0),
				.rsvdulp = { 0x43, 1, 2, 3, 4 },
				.qn = htonl(qn),
				.msn = htonl(msn),
				.mo = htonl(off),
			};

			ASSERT_EQ(0, memcmp(seg, &h, hlen));
		}
		ASSERT_GE(len - off, n - hlen);
		ASSERT_EQ(0, memcmp(seg + hlen, msg + off, n - hlen));
		off += n - hlen;
	}
	ASSERT_EQ(len, off);
}

/* ddp_send_msg(): untagged messages get MSN 1, 2; tagged ones the TO. */
TEST_F(kc, kernel_sends)
{
	struct ddp_untagged_hdr h = {
		.ctrl = DDP_FLAG_L | DDP_WIRE_VERSION,
		.msn = htonl(1),
	};

	/* the Initiator sends first (RFC 5044): an empty message */
	ASSERT_EQ(0, kc_ctl("post 0 1"));
	peer_send(_metadata, self->fds[0], &h, sizeof(h), NULL, 0);
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	EXPECT_STREQ("recv qn=0 msn=1 len=0 cookie=1 rsvdulp=0000000000\n",
		     self->log);

	ASSERT_EQ(0, kc_ctl("send 1 3000 5"));
	expect_msg(_metadata, self->fds[0], false, 1, 1, 0, 0, 3000, 5);
	ASSERT_EQ(0, kc_ctl("send 1 20000 6"));
	expect_msg(_metadata, self->fds[0], false, 1, 2, 0, 0, 20000, 6);
	ASSERT_EQ(0, kc_ctl("send 0 10 7"));
	expect_msg(_metadata, self->fds[0], false, 0, 1, 0, 0, 10, 7);
	ASSERT_EQ(0, kc_ctl("sendt 4660 1280 9000 8"));
	expect_msg(_metadata, self->fds[0], true, 0, 0, 4660, 1280, 9000, 8);
}

/* Bad arguments get their errno and change nothing. */
TEST_F(kc, bad_calls)
{
	int udp, i;

	EXPECT_EQ(EINVAL, kc_ctl("send %d 10 0", NQUEUES));
	EXPECT_EQ(EINVAL, kc_ctl("post %d 1", NQUEUES));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, kc_ctl("post 0 %d", i));
	EXPECT_EQ(ENOBUFS, kc_ctl("post 0 256"));
	ASSERT_EQ(0, kc_ctl("release 0"));
	/* every posted buffer came back, in order */
	ASSERT_EQ(256, kc_events(self->log, sizeof(self->log), 256));
	EXPECT_EQ(0, strncmp(self->log, "flush qn=0 cookie=0\nflush qn=0 cookie=1\n",
			     40));

	udp = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, udp);
	EXPECT_EQ(EPROTOTYPE, kc_ctl("bind %d 1", udp));
	close(udp);
	EXPECT_EQ(EINVAL, kc_ctl("bind %d 0", self->fds[1]));
	EXPECT_EQ(EINVAL, kc_ctl("bind %d %d", self->fds[1], DDP_MAX_QUEUES + 1));
	EXPECT_EQ(ENOTCONN, kc_ctl("send 0 10 0"));
	EXPECT_EQ(ENOTCONN, kc_ctl("hold 1"));
}

static void *kc_hold_thread(void *arg)
{
	*(int *)arg = kc_ctl("hold %d", 400);
	return NULL;
}

static int kc_held(void)
{
	char c = 0;

	return kc_read("held", &c, 1) == 1 && c == 'Y';
}

/*
 * FPDUs that arrive while a task owns the socket wait in its backlog and
 * are placed as release_sock() processes it. TCP's ACKs meanwhile count
 * the whole backlog as queued (tcp_space()), and the backlog keeps
 * growing while the peer sends into what they announce, so the last of
 * them close the window over an empty receive queue. MPA announces the
 * window it freed at the end of release_sock() (MpaRxWindowUpdates): the
 * peer goes on at once, not after its probe timer (200 ms or more).
 * Segments of an Ethernet MSS into a 32 KiB receive buffer, as over a
 * link: on lo's 64 KiB MSS the buffer grows and the window never closes.
 */
TEST_F(kc, window_after_backlog)
{
	struct ddp_tagged_hdr h = {
		.ctrl = DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION,
		.rsvdulp = 0x40,
	};
	long before = mt_mpa_stat("MpaRxWindowUpdates");
	int one = 1, rcvbuf = 32768, sndbuf = 1 << 20, hold = -1, sent, i;
	__u8 msg[400], b[sizeof(h) + sizeof(msg)];
	long long end, wnd0, wnd, updates;
	pthread_t t;

	/* the fixture's pair, again with an MSS of 1448 */
	ASSERT_EQ(0, kc_ctl("release 0"));
	iw_close_pair(self->fds);
	ASSERT_EQ(0, iw_loopback_pair_mss(AF_INET, self->fds, 1448));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	ASSERT_EQ(0, setsockopt(self->fds[0], IPPROTO_TCP, TCP_NODELAY, &one,
				sizeof(one)));
	ASSERT_EQ(0, iw_mpa_startup_pair(self->fds, 0, 0, DDP_TMO_MS));
	ASSERT_EQ(0, kc_ctl("bind %d %d", self->fds[1], NQUEUES));
	ASSERT_EQ(0, kc_ctl("reg 0 %u", DDP_ACCESS_REMOTE_WRITE));
	h.stag = htonl(kc_stag());
	ASSERT_NE(0, h.stag);
	kmod_fill(msg, sizeof(msg), 5);
	wnd0 = iw_tcp_snd_wnd(self->fds[0]);
	ASSERT_LT(8192, wnd0);

	ASSERT_EQ(0, pthread_create(&t, NULL, kc_hold_thread, &hold));
	end = iw_now_ms() + DDP_TMO_MS;
	while (!kc_held() && iw_now_ms() < end)
		usleep(1000);
	ASSERT_TRUE(kc_held());
	/* 60 KB in small FPDUs, more than the window: the rest waits */
	for (sent = 0; sent < 150; sent++) {
		h.to = htobe64(KC_BASE_TO + (sent % 15) * sizeof(msg));
		memcpy(b, &h, sizeof(h));
		memcpy(b + sizeof(h), msg, sizeof(msg));
		if (send(self->fds[0], b, sizeof(b), MSG_DONTWAIT) != sizeof(b))
			break;
	}
	EXPECT_TRUE(kc_held());
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, hold);
	/* the update went out in release_sock(), before the hold returned */
	wnd = iw_tcp_snd_wnd(self->fds[0]);
	TH_LOG("%d FPDUs sent; the window: %lld octets before the hold, %lld after",
	       sent, wnd0, wnd);
	EXPECT_LE(16384, wnd);
	/* one release_sock(), one update at most (none if it never closed) */
	updates = mt_mpa_stat("MpaRxWindowUpdates") - before;
	TH_LOG("window updates: %lld", updates);
	EXPECT_GE(1, updates);
	EXPECT_LE(0, updates);
	EXPECT_EQ(150, sent);
	ASSERT_EQ(sent, kc_events(self->log, sizeof(self->log), sent));
	ASSERT_EQ(KC_TAG_LEN, kc_read("tagged", self->tag, KC_TAG_LEN));
	for (i = 0; i < 15; i++)
		EXPECT_EQ(0, memcmp(self->tag + i * sizeof(msg), msg, sizeof(msg)));
}

/* Release returns posted buffers as flushes; the peer's close is reported. */
TEST_F(kc, release_and_close)
{
	ASSERT_EQ(0, kc_ctl("post 0 5"));
	ASSERT_EQ(0, kc_ctl("post 1 6"));
	close(self->fds[0]);
	self->fds[0] = -1;
	ASSERT_EQ(1, kc_events(self->log, sizeof(self->log), 1));
	EXPECT_STREQ("closed\n", self->log);
	ASSERT_EQ(0, kc_ctl("release 0"));
	ASSERT_EQ(3, kc_events(self->log, sizeof(self->log), 3));
	EXPECT_STREQ("closed\nflush qn=0 cookie=5\nflush qn=1 cookie=6\n", self->log);
	close(self->fds[1]);
}

TEST_HARNESS_MAIN
