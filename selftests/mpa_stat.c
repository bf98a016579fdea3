// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/mpa_stat and the mpa tracepoints. Each test runs in a network
 * namespace of its own, where the counters start at zero, so every
 * counter is checked for its exact value after a known sequence of
 * connections; the tracepoints are read back through tracefs.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mpa_proto.h"
#include <linux/mpa.h>
#include "kselftest_harness.h"
#include "tracefs_util.h"
#include "mpa_test_util.h"
#include "mpa_sock_util.h"

static const char stat_names[][32] = {
	"MpaAttached", "MpaStarted", "MpaFullOperation", "MpaRejected",
	"MpaStartupFailed", "MpaStartupTimeouts", "MpaRev0", "MpaRev1",
	"MpaRev2", "MpaErrTcpClosed", "MpaErrCrc", "MpaErrMarker",
	"MpaErrStartup", "MpaTxFpdus", "MpaTxOctets", "MpaRxFpdus",
	"MpaRxOctets", "MpaRxDirect", "MpaTxTrains", "MpaTxPages",
	"MpaTxPagesReused", "MpaTxPagesReleased", "MpaRxToTask",
	"MpaRxWindowUpdates", "MpaTxFromRx",
};

#define NSTATS ARRAY_SIZE(stat_names)

enum {
	ATTACHED, STARTED, FULL, REJECTED, FAILED, TIMEOUTS, REV0, REV1, REV2,
	ERR1, ERR2, ERR3, ERR4, TX_FPDUS, TX_OCTETS, RX_FPDUS, RX_OCTETS,
	RX_DIRECT, TX_TRAINS, TX_PAGES, TX_REUSED, TX_RELEASED, RX_TO_TASK,
	RX_WINDOW, TX_FROM_RX,
};

/* Reads /proc/net/mpa_stat; every name must be there, in this order. */
static int read_stats(unsigned long *v)
{
	return mt_read_proc_stats("/proc/net/mpa_stat", stat_names, NSTATS, v);
}

FIXTURE(stat) {
	unsigned long v[NSTATS];
};

FIXTURE_SETUP(stat)
{
	ASSERT_EQ(0, mt_new_netns());
	ASSERT_EQ(0, read_stats(self->v));
}

FIXTURE_TEARDOWN(stat)
{
}

TEST_F(stat, fresh_namespace_is_zero)
{
	unsigned int i;

	for (i = 0; i < NSTATS; i++)
		EXPECT_EQ(0, self->v[i]);
}

TEST_F(stat, full_operation_and_messages)
{
	static const size_t sizes[] = { 100, 1000, 1 };
	char buf[1000], got[1000];
	unsigned int i;
	int fds[2];

	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, RAW_TMO_MS));
	mt_fill(buf, sizeof(buf), 1);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(sizes[i], send(fds[0], buf, sizes[i], 0));
		ASSERT_EQ(sizes[i], iw_readn(fds[1], got, sizes[i], RAW_TMO_MS));
	}
	ASSERT_EQ(2, send(fds[1], "ok", 2, 0));
	ASSERT_EQ(2, iw_readn(fds[0], got, 2, RAW_TMO_MS));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(2, self->v[ATTACHED]);
	EXPECT_EQ(2, self->v[STARTED]);
	EXPECT_EQ(2, self->v[FULL]);
	EXPECT_EQ(iw_mpa_info_of(fds[0]).rev == 2 ? 2 : 0, self->v[REV2]);
	EXPECT_EQ(iw_mpa_info_of(fds[0]).rev == 1 ? 2 : 0, self->v[REV1]);
	EXPECT_EQ(0, self->v[REV0]);
	EXPECT_EQ(0, self->v[REJECTED] + self->v[FAILED] + self->v[TIMEOUTS]);
	EXPECT_EQ(0, self->v[ERR1] + self->v[ERR2] + self->v[ERR3] + self->v[ERR4]);
	EXPECT_EQ(4, self->v[TX_FPDUS]);
	EXPECT_EQ(1103, self->v[TX_OCTETS]);
	EXPECT_EQ(4, self->v[RX_FPDUS]);
	EXPECT_EQ(1103, self->v[RX_OCTETS]);
	/*
	 * Each ULPDU was parsed into the socket's buffer as it arrived,
	 * except the second and third at fds[1]: the recv() before each
	 * left TCP's queue empty, so they waited in TCP and went straight
	 * to the caller.
	 */
	EXPECT_EQ(2, self->v[RX_DIRECT]);
	close(fds[0]);
	close(fds[1]);
}

TEST_F(stat, reject_crc_error_and_timeout)
{
	__u8 data[10], wire[64], got[16];
	struct mpa_start s = { .role = MPA_ROLE_RESPONDER };
	__u32 tmo = 200;
	int fds[2], n;

	/* a rejected startup: counted once at each end */
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_START, &s, sizeof(s)));
	ASSERT_EQ(0, iw_mpa_start(fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_REJECT, "no", 2));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[0], MPA_S_REJECTED, RAW_TMO_MS));
	close(fds[0]);
	close(fds[1]);

	/* error 2 from a raw Responder's bad CRC */
	ASSERT_EQ(0, mt_raw_responder(AF_INET, fds, 0, MPA_FLAG_C, 0));
	mt_fill(data, sizeof(data), 3);
	n = mt_enc(wire, sizeof(wire), 0, false, true, data, sizeof(data));
	ASSERT_LT(0, n);
	wire[n - 1] ^= 0x80;
	ASSERT_EQ(0, iw_writen(fds[1], wire, n));
	EXPECT_EQ(-1, recv(fds[0], got, sizeof(got), 0));
	EXPECT_EQ(EBADMSG, errno);
	close(fds[0]);
	close(fds[1]);

	/* a Responder whose Request never comes: timeout, error 4 */
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_TIMEOUT, &tmo, sizeof(tmo)));
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_START, &s, sizeof(s)));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[1], MPA_S_ERROR, RAW_TMO_MS));
	close(fds[0]);
	close(fds[1]);

	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(4, self->v[ATTACHED]);
	EXPECT_EQ(4, self->v[STARTED]);
	EXPECT_EQ(2, self->v[REJECTED]);	/* sent and received */
	EXPECT_EQ(1, self->v[FULL]);		/* the raw Responder's peer */
	EXPECT_EQ(1, self->v[FAILED]);
	EXPECT_EQ(1, self->v[TIMEOUTS]);
	EXPECT_EQ(0, self->v[ERR1]);
	EXPECT_EQ(1, self->v[ERR2]);
	EXPECT_EQ(0, self->v[ERR3]);
	EXPECT_EQ(1, self->v[ERR4]);
	EXPECT_EQ(0, self->v[RX_FPDUS]);
}

/*
 * A connection over loopback with the MSS clamped to 1448, so that a
 * ULPDU of MULPDU octets makes an FPDU of one segment; nothing unacked.
 */
static int full_pair(struct __test_metadata *_metadata, int fds[2],
		     __u32 *mulpdu)
{
	int mss = 1448, sndbuf = 1 << 20, lfd;
	struct sockaddr_storage addr;
	socklen_t alen;

	lfd = iw_loopback_listen(AF_INET, &addr, &alen);
	ASSERT_LE(0, lfd);
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, fds[0]);
	ASSERT_EQ(0, setsockopt(fds[0], IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)));
	ASSERT_EQ(0, setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)));
	ASSERT_EQ(0, connect(fds[0], (struct sockaddr *)&addr, alen));
	fds[1] = accept(lfd, NULL, NULL);
	ASSERT_LE(0, fds[1]);
	close(lfd);
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, iw_mpa_start(fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_respond(fds[1], RAW_TMO_MS));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[0], MPA_S_FULL, RAW_TMO_MS));

	ASSERT_EQ(0, mt_all_acked(fds[0]));
	ASSERT_EQ(0, mt_all_acked(fds[1]));
	*mulpdu = iw_mpa_info_of(fds[0]).mulpdu;
	ASSERT_GE(1442, *mulpdu);
	ASSERT_LE(1430, *mulpdu);
	return 0;
}

/*
 * @n ULPDUs of @mulpdu octets in one sendmmsg(), or one sendmsg() with
 * MPA_CMSG_LENS (@one_call); checks that all arrive intact and waits
 * until they are acknowledged.
 */
static int full_batch(struct __test_metadata *_metadata, const int fds[2],
		      __u32 mulpdu, int n, bool one_call)
{
	static char buf[91 * 1500], got[1500];
	struct mmsghdr v[91];
	struct iovec iov[91];
	int i;

	ASSERT_GE(91, n);
	mt_fill(buf, sizeof(buf), 7);
	memset(v, 0, sizeof(v));
	for (i = 0; i < n; i++) {
		iov[i].iov_base = buf + i * mulpdu;
		iov[i].iov_len = mulpdu;
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	if (one_call) {
		union {
			char b[CMSG_SPACE(91 * sizeof(__u32))];
			struct cmsghdr align;
		} ctl;
		struct msghdr m = {
			.msg_iov = iov, .msg_iovlen = 1, .msg_control = ctl.b,
			.msg_controllen = CMSG_SPACE(n * sizeof(__u32)),
		};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

		cm->cmsg_level = SOL_MPA;
		cm->cmsg_type = MPA_CMSG_LENS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(__u32));
		for (i = 0; i < n; i++)
			((__u32 *)CMSG_DATA(cm))[i] = mulpdu;
		iov[0].iov_len = n * mulpdu;
		ASSERT_EQ(n * mulpdu, sendmsg(fds[0], &m, 0));
	} else {
		ASSERT_EQ(n, sendmmsg(fds[0], v, n, 0));
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(mulpdu, iw_readn(fds[1], got, mulpdu, RAW_TMO_MS));
		EXPECT_EQ(0, memcmp(got, buf + i * mulpdu, mulpdu));
	}
	ASSERT_EQ(0, mt_all_acked(fds[0]));
	return 0;
}

/* @n full ULPDUs on a new connection (full_pair(), full_batch()) */
static int send_full_fpdus(struct __test_metadata *_metadata, int n, bool one_call)
{
	__u32 mulpdu;
	int fds[2];

	ASSERT_EQ(0, full_pair(_metadata, fds, &mulpdu));
	ASSERT_EQ(0, full_batch(_metadata, fds, mulpdu, n, one_call));
	close(fds[0]);
	close(fds[1]);
	return 0;
}

/*
 * FPDU trains span page fragments and end when they fill one GSO skb.
 * With an MSS of 1448 (a multiple of 4; 1436 with timestamps, also one),
 * sendmmsg() of 91 ULPDUs of MULPDU octets gives 90 FPDUs of one full
 * segment each with MSG_MORE and a last one without. The connection's
 * first train starts at the beginning of a 32 KiB page fragment (MPA's
 * own, or with tx_page_cache=0 the task's, which nothing sent before
 * holds once it is acknowledged): 22 FPDUs fit in a fragment, the
 * train goes on in the next ones until it has the 45 segments of TCP's
 * size goal on loopback (64 KiB less TCP's header
 * room), and TCP takes them in one call. So the 90 make two trains (a
 * train bound to two fragments would make three: 44, 44 and 2). From 6.5
 * on TCP takes the fragments as one skb frag per 4 KiB page: each train
 * spans 17 pages, which still fits in one skb's 17 frags. The last FPDU
 * finds the second train full and goes alone. The send buffer holds all
 * of them: no train is cut by a partial send.
 */
TEST_F(stat, train_fills_one_gso_skb)
{
	ASSERT_EQ(0, send_full_fpdus(_metadata, 91, false));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(91, self->v[TX_FPDUS]);
	EXPECT_EQ(2, self->v[TX_TRAINS]);
}

/* the same 91 ULPDUs in one sendmsg() with MPA_CMSG_LENS: the same trains */
TEST_F(stat, train_of_one_sendmsg)
{
	ASSERT_EQ(0, send_full_fpdus(_metadata, 91, true));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(91, self->v[TX_FPDUS]);
	EXPECT_EQ(2, self->v[TX_TRAINS]);
}

/*
 * Short FPDUs with more to follow are packed in MPA, one segment at a
 * time, and go to TCP in one call per segment. 45 ULPDUs of 64 octets
 * (72 on the wire) with an MSS of 1448 (1436 with timestamps): 20 (19)
 * fit in a segment, so they make three packs, counted as trains, and
 * leave as three segments, each starting with an FPDU.
 */
static int send_small_fpdus(struct __test_metadata *_metadata, bool one_call,
			    unsigned long *v)
{
	long long segs;
	__u32 mulpdu;
	int fds[2];

	ASSERT_EQ(0, full_pair(_metadata, fds, &mulpdu));
	segs = iw_tcp_data_segs_out(fds[0]);
	ASSERT_LT(0, segs);
	ASSERT_EQ(0, full_batch(_metadata, fds, 64, 45, one_call));
	EXPECT_EQ(segs + 3, iw_tcp_data_segs_out(fds[0]));
	EXPECT_EQ(45, iw_mpa_stats_of(fds[1]).rx_fpdus);
	ASSERT_EQ(0, read_stats(v));
	close(fds[0]);
	close(fds[1]);
	return 0;
}

TEST_F(stat, small_fpdus_packed_per_segment)
{
	ASSERT_EQ(0, send_small_fpdus(_metadata, false, self->v));
	EXPECT_EQ(45, self->v[TX_FPDUS]);
	EXPECT_EQ(3, self->v[TX_TRAINS]);
}

/* the same 45 in one sendmsg() with MPA_CMSG_LENS: the same packs */
TEST_F(stat, small_fpdus_packed_in_one_sendmsg)
{
	ASSERT_EQ(0, send_small_fpdus(_metadata, true, self->v));
	EXPECT_EQ(45, self->v[TX_FPDUS]);
	EXPECT_EQ(3, self->v[TX_TRAINS]);
}

static int set_page_cache(unsigned int pages, unsigned int *old)
{
	const char *p = "/sys/module/mpa/parameters/tx_page_cache";
	char b[32];
	FILE *f = fopen(p, "r");
	int ok;

	if (!f)
		return -1;
	ok = old ? fscanf(f, "%u", old) == 1 : 1;
	fclose(f);
	f = fopen(p, "w");
	if (!f || !ok)
		return -1;
	snprintf(b, sizeof(b), "%u", pages);
	ok = fputs(b, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* the sender and the receiver on one CPU: skbs are freed at once */
static int one_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * MPA builds FPDUs in pages of its own and uses them again once TCP let
 * go of them. 91 full FPDUs, 22 to a 32 KiB page, take 5 new pages, the
 * last with 3 FPDUs. Once all are acknowledged and read (and freed: the
 * reader runs on the sender's CPU, so no skb waits on another CPU's
 * deferred-free list), the next 91 fill the rest of the fifth page and
 * then the first four again, oldest first: no page is allocated. A
 * second after the last page was taken, with nothing in TCP, MPA lets go
 * of all five; the next batch allocates anew. Closing lets go of the
 * rest: every page allocated is released.
 */
TEST_F(stat, tx_pages_used_again)
{
	__u32 mulpdu;
	int fds[2];

	ASSERT_EQ(0, one_cpu());
	ASSERT_EQ(0, full_pair(_metadata, fds, &mulpdu));
	ASSERT_EQ(0, full_batch(_metadata, fds, mulpdu, 91, false));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(5, self->v[TX_PAGES]);
	EXPECT_EQ(0, self->v[TX_REUSED]);
	EXPECT_EQ(0, self->v[TX_RELEASED]);

	ASSERT_EQ(0, full_batch(_metadata, fds, mulpdu, 91, true));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(5, self->v[TX_PAGES]);
	EXPECT_EQ(4, self->v[TX_REUSED]);
	EXPECT_EQ(0, self->v[TX_RELEASED]);

	usleep(1500000);
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(5, self->v[TX_RELEASED]);
	ASSERT_EQ(0, full_batch(_metadata, fds, mulpdu, 30, false));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(7, self->v[TX_PAGES]);
	EXPECT_EQ(4, self->v[TX_REUSED]);
	close(fds[0]);
	close(fds[1]);
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(7, self->v[TX_RELEASED]);
	EXPECT_EQ(182 + 30, self->v[TX_FPDUS]);
}

/* tx_page_cache=0: the task's page fragment, the same trains, no page of MPA's */
TEST_F(stat, tx_page_cache_off)
{
	unsigned int old;

	ASSERT_EQ(0, set_page_cache(0, &old));
	EXPECT_EQ(0, send_full_fpdus(_metadata, 91, false));
	ASSERT_EQ(0, set_page_cache(old, NULL));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(91, self->v[TX_FPDUS]);
	EXPECT_EQ(2, self->v[TX_TRAINS]);
	EXPECT_EQ(0, self->v[TX_PAGES]);
	EXPECT_EQ(0, self->v[TX_REUSED]);
	EXPECT_EQ(0, self->v[TX_RELEASED]);
}

/*
 * The last FPDU of a sendmmsg() batch (no MSG_MORE) that is a full
 * segment joins the pending train and goes out with it at once: it does
 * not wait for a next FPDU that never comes.
 */
TEST_F(stat, train_ends_with_last_fpdu)
{
	ASSERT_EQ(0, send_full_fpdus(_metadata, 3, false));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(3, self->v[TX_FPDUS]);
	EXPECT_EQ(1, self->v[TX_TRAINS]);
}

struct late_send {
	int fd;
	const char *buf;
	size_t len;
};

static void *late_send(void *arg)
{
	struct late_send *l = arg;

	usleep(200000);
	return (void *)(long)send(l->fd, l->buf, l->len, 0);
}

/*
 * A reader that waits in recv() with nothing in TCP gets the next ULPDU
 * straight from TCP's queue (MpaRxDirect) once its FPDU is whole there:
 * data-ready only wakes it, the ULPDU is not parsed into the socket's
 * buffer first.
 */
TEST_F(stat, waiting_reader_copies_straight)
{
	char buf[1000], got[1000];
	struct late_send l;
	pthread_t th;
	void *sent;
	int fds[2];

	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, RAW_TMO_MS));
	mt_fill(buf, sizeof(buf), 7);
	ASSERT_EQ(100, send(fds[0], buf, 100, 0));
	ASSERT_EQ(100, iw_readn(fds[1], got, 100, RAW_TMO_MS));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(0, self->v[RX_DIRECT]);
	l = (struct late_send){ .fd = fds[0], .buf = buf, .len = 1000 };
	ASSERT_EQ(0, pthread_create(&th, NULL, late_send, &l));
	EXPECT_EQ(1000, recv(fds[1], got, sizeof(got), 0));
	pthread_join(th, &sent);
	EXPECT_EQ(1000, (long)sent);
	EXPECT_EQ(0, memcmp(got, buf, 1000));
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(1, self->v[RX_DIRECT]);
	EXPECT_EQ(2, self->v[RX_FPDUS]);
	close(fds[0]);
	close(fds[1]);
}

/*
 * Sixteen ULPDUs of MULPDU octets in one sendmsg(), taken by one
 * recvmsg() with MPA_RECV_LENS once all are in TCP: the first was parsed
 * into the socket's buffer as it arrived, the fifteen after it come
 * straight from TCP's queue, each found right after the one before in
 * its piece of the skb (mpa_rxq_follow()), across the page fragments
 * the sender's pages were cut into (6.5 on), each CRC checked and every
 * octet in place.
 */
TEST_F(stat, direct_receive_of_a_train)
{
	static __u8 buf[16 * 1442], got[16 * 1442 + 16];
	__u32 lens[16], rl[16], mulpdu;
	int fds[2], i, n, fl;

	ASSERT_EQ(0, full_pair(_metadata, fds, &mulpdu));
	for (i = 0; i < 16; i++)
		lens[i] = mulpdu;
	mt_fill(buf, sizeof(buf), 11);
	ASSERT_EQ(16 * mulpdu, mt_send_lens(fds[0], buf, 16 * mulpdu, SOL_MPA,
					    MPA_CMSG_LENS, lens, 16, 0));
	ASSERT_EQ(0, mt_all_acked(fds[0]));
	i = 1;
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_RECV_LENS, &i, sizeof(i)));
	memset(got, 0, sizeof(got));
	ASSERT_EQ(16 * mulpdu, mt_recv_lens(fds[1], got, sizeof(got), 16, 0, rl, &n, &fl));
	ASSERT_EQ(16, n);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(mulpdu, rl[i]);
	EXPECT_EQ(0, memcmp(got, buf, 16 * mulpdu));
	EXPECT_EQ(0, got[16 * mulpdu]);
	ASSERT_EQ(0, read_stats(self->v));
	EXPECT_EQ(16, self->v[RX_FPDUS]);
	EXPECT_EQ(15, self->v[RX_DIRECT]);
	EXPECT_EQ(0, self->v[ERR2]);
	EXPECT_EQ(-1, recv(fds[1], got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	close(fds[0]);
	close(fds[1]);
}

/* ---- tracepoints ---- */

static unsigned short local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	getsockname(fd, (struct sockaddr *)&a, &len);
	return ntohs(a.sin_port);
}

TEST(tracepoints)
{
	char want[160], buf[100] = { 0 }, *trace;
	const char *dir = tracefs();
	unsigned short ip, rp;
	unsigned int rev, e;
	int fds[2];

	ASSERT_NE(NULL, dir);
	ASSERT_EQ(0, write_file(dir, "events/mpa/enable", "1"));
	ASSERT_EQ(0, write_file(dir, "trace", ""));
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, MPA_F_MARKERS, 0, RAW_TMO_MS));
	ASSERT_EQ(100, send(fds[0], buf, 100, 0));
	ASSERT_EQ(100, iw_readn(fds[1], buf, 100, RAW_TMO_MS));
	ASSERT_EQ(0, write_file(dir, "events/mpa/enable", "0"));
	trace = read_trace(dir);
	ASSERT_NE(NULL, trace);
	ip = local_port(fds[0]);
	rp = local_port(fds[1]);

	snprintf(want, sizeof(want), "mpa_state: sport=%u dport=%u IDLE -> REQ_SENT", ip, rp);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "mpa_state: sport=%u dport=%u REQ_SENT -> FULL", ip, rp);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "mpa_state: sport=%u dport=%u REQ_RCVD -> FULL", rp, ip);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	/* M and C from the Initiator, which wants markers; C from the Responder */
	rev = iw_mpa_info_of(fds[0]).rev;
	e = rev == 2 ? MPA_FLAG_E : 0;
	snprintf(want, sizeof(want),
		 "mpa_frame: sport=%u dport=%u sent Request flags=0x%02x rev=%u pd_len=%u",
		 ip, rp, MPA_FLAG_M | MPA_FLAG_C | e, rev, e ? 8 : 0);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want),
		 "mpa_frame: sport=%u dport=%u received Reply flags=0x%02x rev=%u pd_len=%u",
		 ip, rp, MPA_FLAG_C | e, rev, e ? 8 : 0);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "mpa_fpdu_tx: sport=%u dport=%u ulpdu_len=100", ip, rp);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "mpa_fpdu_rx: sport=%u dport=%u ulpdu_len=100", rp, ip);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	free(trace);
	close(fds[0]);
	close(fds[1]);
}

TEST(tracepoint_error_and_timeout)
{
	struct mpa_start s = { .role = MPA_ROLE_RESPONDER };
	const char *dir = tracefs();
	char want[128], *trace;
	__u32 tmo = 100;
	int fds[2];

	ASSERT_NE(NULL, dir);
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_TIMEOUT, &tmo, sizeof(tmo)));
	ASSERT_EQ(0, write_file(dir, "events/mpa/enable", "1"));
	ASSERT_EQ(0, write_file(dir, "trace", ""));
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_START, &s, sizeof(s)));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[1], MPA_S_ERROR, RAW_TMO_MS));
	ASSERT_EQ(0, write_file(dir, "events/mpa/enable", "0"));
	trace = read_trace(dir);
	ASSERT_NE(NULL, trace);
	snprintf(want, sizeof(want), "mpa_timeout: sport=%u", local_port(fds[1]));
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "mpa_error: sport=%u dport=%u code=4 errno=%d",
		 local_port(fds[1]), local_port(fds[0]), ETIMEDOUT);
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "mpa_state: sport=%u dport=%u REQ_WAIT -> ERROR",
		 local_port(fds[1]), local_port(fds[0]));
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no '%s'", want);
	free(trace);
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
