// SPDX-License-Identifier: GPL-2.0
/*
 * MPA startup (RFC 5044 section 7.1) through the socket API: negotiation of
 * markers, CRC and private data, reject, errors, timeouts, rule 4, and the
 * exact Request/Reply octets against raw TCP peers. Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

MT_PAIR_FIXTURE(startup);
MT_FAMILY_VARIANTS(startup);

/* A loopback pair of @family, both with the "mpa" ULP attached: 0 or -1. */
static int attached_pair(int family, int fds[2])
{
	if (iw_loopback_pair(family, fds) || iw_mpa_attach(fds[0]) || iw_mpa_attach(fds[1]))
		return -1;
	return 0;
}

/* one ULPDU each way, byte-exact, as a sanity check of the negotiation */
static int ping_pong(int fds[2])
{
	char out[300], in[400];
	int fl = 0;

	mt_fill(out, sizeof(out), 7);
	if (send(fds[0], out, sizeof(out), 0) != sizeof(out) ||
	    mt_recv(fds[1], in, sizeof(in), 0, &fl) != sizeof(out) ||
	    memcmp(in, out, sizeof(out)) || !(fl & MSG_EOR) ||
	    send(fds[1], out, 100, 0) != 100 ||
	    mt_recv(fds[0], in, sizeof(in), 0, &fl) != 100 || memcmp(in, out, 100))
		return -1;
	return 0;
}

/*
 * Every combination of what the two ends ask for: markers (M), CRC (C),
 * revision 1 or 2 (RFC 6581), over IPv4 and IPv6. Each end receives
 * markers iff it asked for them; CRCs are off only if both ends asked.
 */
FIXTURE(negotiate)
{
	int fds[2];
	int old_no_crc;
};

FIXTURE_VARIANT(negotiate)
{
	int family;
	__u16 rev;
	__u32 iflags;
	__u32 rflags;
};

/*
 * The 64 variants: family, revision, markers asked by the Initiator ("im")
 * or not ("i"), by the Responder ("rm") or not ("r"), CRC kept by the
 * Initiator ("icrc") or not ("inocrc"), by the Responder ("rcrc") or not
 * ("rnocrc"): ipv4_rev1_i_r_icrc_rcrc ... ipv6_rev2_im_rm_inocrc_rnocrc.
 */
#define NEG(name, fam, rv, ifl, rfl)					\
	FIXTURE_VARIANT_ADD(negotiate, name) {				\
		.family = fam, .rev = rv, .iflags = ifl, .rflags = rfl,	\
	}
#define NEG4(v, fam, rv, im, imf, rm, rmf)				\
	NEG(v##_rev##rv##_##im##_##rm##_icrc_rcrc, fam, rv, imf, rmf);	\
	NEG(v##_rev##rv##_##im##_##rm##_icrc_rnocrc, fam, rv, imf,	\
	    (rmf) | MPA_F_NO_CRC);					\
	NEG(v##_rev##rv##_##im##_##rm##_inocrc_rcrc, fam, rv,		\
	    (imf) | MPA_F_NO_CRC, rmf);					\
	NEG(v##_rev##rv##_##im##_##rm##_inocrc_rnocrc, fam, rv,		\
	    (imf) | MPA_F_NO_CRC, (rmf) | MPA_F_NO_CRC)
#define NEG16(v, fam, rv)						\
	NEG4(v, fam, rv, i, 0, r, 0);					\
	NEG4(v, fam, rv, i, 0, rm, MPA_F_MARKERS);			\
	NEG4(v, fam, rv, im, MPA_F_MARKERS, r, 0);			\
	NEG4(v, fam, rv, im, MPA_F_MARKERS, rm, MPA_F_MARKERS)

NEG16(ipv4, AF_INET, 1);
NEG16(ipv4, AF_INET, 2);
NEG16(ipv6, AF_INET6, 1);
NEG16(ipv6, AF_INET6, 2);

FIXTURE_SETUP(negotiate)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	self->old_no_crc = -1;
	if ((variant->iflags | variant->rflags) & MPA_F_NO_CRC) {
		self->old_no_crc = mt_allow_no_crc(1);
		if (self->old_no_crc < 0)
			SKIP(return, "no /sys/module/mpa/parameters/allow_no_crc");
	}
}

FIXTURE_TEARDOWN(negotiate)
{
	iw_close_pair(self->fds);
	if (self->old_no_crc >= 0)
		mt_allow_no_crc(self->old_no_crc);
}

TEST_F(negotiate, full_operation)
{
	struct mpa_start is = { .role = MPA_ROLE_INITIATOR, .flags = variant->iflags,
				.rev = variant->rev };
	struct mpa_start rs = { .role = MPA_ROLE_RESPONDER, .flags = variant->rflags,
				.rev = variant->rev };
	bool im = variant->iflags & MPA_F_MARKERS, rm = variant->rflags & MPA_F_MARKERS;
	__u32 crc = (variant->iflags & variant->rflags & MPA_F_NO_CRC) ? 0 : MPA_I_CRC;
	struct mpa_info ii, ri;

	ASSERT_EQ(0, attached_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_start_ex(self->fds[1], &rs, NULL, NULL));
	ASSERT_EQ(0, iw_mpa_start_ex(self->fds[0], &is, NULL, NULL));
	ASSERT_EQ(0, iw_mpa_respond(self->fds[1], RAW_TMO_MS));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, RAW_TMO_MS));
	ii = iw_mpa_info_of(self->fds[0]);
	ri = iw_mpa_info_of(self->fds[1]);
	EXPECT_EQ(MPA_S_FULL, ii.state);
	EXPECT_EQ(MPA_S_FULL, ri.state);
	EXPECT_EQ(MPA_ROLE_INITIATOR, ii.role);
	EXPECT_EQ(MPA_ROLE_RESPONDER, ri.role);
	EXPECT_EQ(variant->rev, ii.rev);
	EXPECT_EQ(variant->rev, ri.rev);
	EXPECT_EQ(0, ii.error);
	EXPECT_EQ(0, ri.error);
	/* the Initiator receives markers iff it asked (M in the Request) */
	EXPECT_EQ((im ? MPA_I_MARKERS_RX : 0) | (rm ? MPA_I_MARKERS_TX : 0) | crc, ii.flags);
	EXPECT_EQ((rm ? MPA_I_MARKERS_RX : 0) | (im ? MPA_I_MARKERS_TX : 0) | crc, ri.flags);
	EXPECT_EQ(0, ping_pong(self->fds));
}

TEST_F(startup, no_crc_without_admin_is_eperm)
{
	int old = mt_allow_no_crc(0);

	ASSERT_EQ(0, attached_pair(variant->family, self->fds));
	EXPECT_EQ(-1, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_NO_CRC, NULL, 0, NULL,
				   0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, MPA_F_NO_CRC, NULL, 0, NULL,
				   0));
	EXPECT_EQ(EPERM, errno);
	/* nothing was sent, the sockets are still idle */
	EXPECT_EQ(MPA_S_IDLE, iw_mpa_info_of(self->fds[0]).state);
	EXPECT_EQ(MPA_S_IDLE, iw_mpa_info_of(self->fds[1]).state);
	if (old > 0)
		mt_allow_no_crc(old);
}

/* The peer's private data, as MPA_INFO and MPA_PEER_PD give it, is @n octets of @want. */
static void expect_peer_pd(struct __test_metadata *_metadata, int fd, const void *want, int n)
{
	__u8 got[600];
	socklen_t len = sizeof(got);

	EXPECT_EQ(n, iw_mpa_info_of(fd).peer_pd_len);
	memset(got, 0xee, sizeof(got));
	ASSERT_EQ(0, getsockopt(fd, SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(n, len);
	EXPECT_EQ(0, memcmp(got, want, n));
}

TEST_F(startup, private_data_lengths)
{
	static const int lens[] = { 0, 1, 511, 512 };
	__u8 ipd[512], rpd[512];
	unsigned int i;

	mt_fill(ipd, sizeof(ipd), 1);
	mt_fill(rpd, sizeof(rpd), 2);
	for (i = 0; i < 4; i++) {
		int n = lens[i];

		ASSERT_EQ(0, attached_pair(variant->family, self->fds));
		ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
		ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, ipd, n, NULL, 0));
		ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
		expect_peer_pd(_metadata, self->fds[1], ipd, n);
		ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, rpd, n));
		ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, RAW_TMO_MS));
		expect_peer_pd(_metadata, self->fds[0], rpd, n);
		EXPECT_EQ(0, ping_pong(self->fds));
		iw_close_pair(self->fds);
	}
}

TEST_F(startup, private_data_513_is_einval)
{
	__u8 pd[513] = {};

	ASSERT_EQ(0, attached_pair(variant->family, self->fds));
	EXPECT_EQ(-1, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, pd, 513, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MPA_S_IDLE, iw_mpa_info_of(self->fds[0]).state);
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, pd, 512, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	EXPECT_EQ(-1, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, pd, 513));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->fds[1], SOL_MPA, MPA_REJECT, pd, 513));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MPA_S_REQ_RCVD, iw_mpa_info_of(self->fds[1]).state);
}

/* a raw Initiator sends a Request with PD_Length 513: error 4, connection reset */
TEST_F(startup, raw_request_pd_513_is_error_4)
{
	__u8 req[20 + 513] = {};
	char c;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	mt_frame(req, 1, MPA_FLAG_C, 1, NULL, 0);
	req[18] = 0x02;
	req[19] = 0x01;
	ASSERT_EQ(0, iw_writen(self->fds[0], req, sizeof(req)));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_info_of(self->fds[1]).error);
	EXPECT_EQ(ECONNABORTED, iw_so_error(self->fds[1]));
	/* the Responder aborted the connection: the raw peer gets a reset */
	EXPECT_EQ(-1, iw_readn(self->fds[0], &c, 1, RAW_TMO_MS));
	EXPECT_EQ(ECONNRESET, errno);
}

TEST_F(startup, reject_with_private_data_then_plain_tcp)
{
	static const char ipd[] = "may I?", rpd[] = "no, go away";
	char got[600], buf[100];
	socklen_t len = sizeof(got);
	struct mpa_info ii;

	ASSERT_EQ(0, attached_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_MARKERS, ipd,
				  sizeof(ipd), NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_REJECT, rpd, sizeof(rpd)));
	EXPECT_EQ(MPA_S_REJECTED, iw_mpa_info_of(self->fds[1]).state);
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_REJECTED, RAW_TMO_MS));
	ii = iw_mpa_info_of(self->fds[0]);
	EXPECT_EQ(MPA_I_REJECTED, ii.flags);
	EXPECT_EQ(0, ii.error);
	EXPECT_EQ(sizeof(rpd), ii.peer_pd_len);
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(sizeof(rpd), len);
	EXPECT_EQ(0, memcmp(got, rpd, sizeof(rpd)));
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(sizeof(ipd), len);
	EXPECT_EQ(0, memcmp(got, ipd, sizeof(ipd)));

	/* plain TCP both ways, no framing */
	ASSERT_EQ(11, write(self->fds[0], "hello world", 11));
	ASSERT_EQ(11, iw_readn(self->fds[1], buf, 11, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "hello world", 11));
	ASSERT_EQ(3, write(self->fds[1], "bye", 3));
	ASSERT_EQ(2, write(self->fds[1], "!!", 2));
	ASSERT_EQ(5, iw_readn(self->fds[0], buf, 5, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "bye!!", 5));
}

TEST_F(startup, initiator_initiator_is_error_4)
{
	ASSERT_EQ(0, attached_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_ERROR, RAW_TMO_MS));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
}

static void timeout_check(struct __test_metadata *_metadata, int fd)
{
	struct timespec t0, t1;
	long ms;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* recv blocks until the startup fails */
	EXPECT_EQ(-1, recv(fd, &c, 1, 0));
	EXPECT_EQ(ETIMEDOUT, errno);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(ms, 5000);
	EXPECT_EQ(MPA_S_ERROR, iw_mpa_info_of(fd).state);
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(fd));
}

TEST_F(startup, responder_responder_times_out)
{
	__u32 t0 = 300, t1 = 20000;

	ASSERT_EQ(0, attached_pair(variant->family, self->fds));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &t0, sizeof(t0)));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_TIMEOUT, &t1, sizeof(t1)));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	timeout_check(_metadata, self->fds[0]);
	/* the other Responder sees the connection go away during its startup */
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
}

TEST_F(startup, silent_peer_times_out)
{
	__u32 t = 300, got = 0;
	socklen_t len = sizeof(got);
	__u8 req[20];
	int role;

	for (role = MPA_ROLE_INITIATOR; role <= MPA_ROLE_RESPONDER; role++) {
		ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
		ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &t, sizeof(t)));
		ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &got, &len));
		EXPECT_EQ(300, got);
		ASSERT_EQ(0, iw_mpa_start(self->fds[0], role, 0, NULL, 0, NULL, 0));
		if (role == MPA_ROLE_INITIATOR)
			ASSERT_EQ(20, iw_readn(self->fds[1], req, 20, RAW_TMO_MS));
		timeout_check(_metadata, self->fds[0]);
		/* the connection is aborted */
		EXPECT_EQ(-1, iw_readn(self->fds[1], req, 1, RAW_TMO_MS));
		EXPECT_EQ(ECONNRESET, errno);
		iw_close_pair(self->fds);
	}
}

/* Request + first FPDU queued in TCP before the Responder attaches the ULP */
TEST_F(startup, bytes_before_start_are_kept)
{
	__u8 buf[2048], ulpdu[777], got[1000];
	size_t n;
	int len, fl = 0;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	mt_fill(ulpdu, sizeof(ulpdu), 3);
	n = mt_frame(buf, 1, MPA_FLAG_M | MPA_FLAG_C, 1, "pd", 2);
	/* the Responder did not ask for markers, the Initiator gets them */
	len = mt_enc(buf + n, sizeof(buf) - n, 0, false, true, ulpdu, sizeof(ulpdu));
	ASSERT_GT(len, 0);
	ASSERT_EQ(0, iw_writen(self->fds[0], buf, n + len));
	usleep(50000);
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	EXPECT_EQ(2, iw_mpa_info_of(self->fds[1]).peer_pd_len);
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, "", 0));
	EXPECT_EQ(MPA_I_CRC | MPA_I_MARKERS_TX, iw_mpa_info_of(self->fds[1]).flags);
	ASSERT_EQ(20, iw_readn(self->fds[0], buf, 20, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "MPA ID Rep Frame", 16));
	EXPECT_EQ(MPA_FLAG_C, buf[16]);
	EXPECT_EQ(sizeof(ulpdu), mt_recv(self->fds[1], got, sizeof(got), 0, &fl));
	EXPECT_EQ(0, memcmp(got, ulpdu, sizeof(ulpdu)));
	EXPECT_TRUE(fl & MSG_EOR);
}

TEST_F(startup, last_streaming_message)
{
	static const char lsm[] = "last streaming message: MPA follows";
	__u8 buf[100], req[20];

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, lsm, sizeof(lsm)));
	ASSERT_EQ(sizeof(lsm), iw_readn(self->fds[0], buf, sizeof(lsm), RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, lsm, sizeof(lsm)));
	/* nothing else before the Request */
	EXPECT_EQ(0, iw_readn(self->fds[0], buf, 1, 100));
	mt_frame(req, 1, MPA_FLAG_C, 1, NULL, 0);
	ASSERT_EQ(0, iw_writen(self->fds[0], req, 20));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, "ok", 2));
	ASSERT_EQ(22, iw_readn(self->fds[0], buf, 22, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "MPA ID Rep Frame\x40\x01\x00\x02ok", 22));
}

TEST_F(startup, lsm_only_for_the_responder)
{
	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	EXPECT_EQ(-1, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, "x", 1));
	EXPECT_EQ(EINVAL, errno);
}

/* RFC 5044 7.1.2 rule 4: the Responder sends after it received an FPDU */
TEST_F(startup, responder_waits_for_first_fpdu)
{
	struct timeval tv = { .tv_usec = 200000 };
	char buf[64];
	int fl;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, 0, 0, RAW_TMO_MS));
	EXPECT_EQ(-1, send(self->fds[1], "early", 5, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	/* a blocking send waits (here until SO_SNDTIMEO) */
	EXPECT_EQ(-1, send(self->fds[1], "early", 5, 0));
	EXPECT_EQ(EAGAIN, errno);
	/* nothing went out */
	EXPECT_EQ(-1, mt_recv(self->fds[0], buf, sizeof(buf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[1]).tx_fpdus);
	ASSERT_EQ(5, send(self->fds[0], "first", 5, 0));
	ASSERT_EQ(5, mt_recv(self->fds[1], buf, sizeof(buf), 0, &fl));
	EXPECT_EQ(5, send(self->fds[1], "later", 5, MSG_DONTWAIT));
	EXPECT_EQ(5, mt_recv(self->fds[0], buf, sizeof(buf), 0, &fl));
	EXPECT_EQ(0, memcmp(buf, "later", 5));
}

/* the Initiator may send as soon as it got the Reply */
TEST_F(startup, blocked_responder_send_completes)
{
	char buf[64];
	int st = -1;
	pid_t pid;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS, 0, RAW_TMO_MS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(300000);
		_exit(send(self->fds[0], "go", 2, 0) == 2 ? 0 : 1);
	}
	/* blocks ~300 ms until the Initiator's first FPDU has arrived */
	EXPECT_EQ(3, send(self->fds[1], "abc", 3, 0));
	EXPECT_EQ(2, mt_recv(self->fds[1], buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(3, mt_recv(self->fds[0], buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(0, memcmp(buf, "abc", 3));
	EXPECT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st);
}

/* a raw Responder reads the exact Request the module sends */
TEST_F(startup, request_bytes_on_the_wire)
{
	static const struct { __u32 flags; __u8 wire; } c[] = {
		{ 0, MPA_FLAG_C },
		{ MPA_F_MARKERS, MPA_FLAG_M | MPA_FLAG_C },
	};
	__u8 want[64], got[64];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
		ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, c[i].flags, "xyz", 3,
					  NULL, 0));
		EXPECT_EQ(MPA_S_REQ_SENT, iw_mpa_info_of(self->fds[0]).state);
		mt_frame(want, 1, c[i].wire, 1, "xyz", 3);
		ASSERT_EQ(23, iw_readn(self->fds[1], got, 23, RAW_TMO_MS));
		EXPECT_EQ(0, memcmp(got, want, 23));
		EXPECT_EQ(0, iw_readn(self->fds[1], got, 1, 100));
		iw_close_pair(self->fds);
	}
}

TEST_F(startup, request_bytes_no_crc)
{
	__u8 want[20], got[20];
	int old = mt_allow_no_crc(1);

	if (old < 0)
		SKIP(return, "no allow_no_crc parameter");
	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_NO_CRC | MPA_F_MARKERS,
				  NULL, 0, NULL, 0));
	mt_allow_no_crc(old);
	mt_frame(want, 1, MPA_FLAG_M, 1, NULL, 0);
	ASSERT_EQ(20, iw_readn(self->fds[1], got, 20, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(got, want, 20));
}

/* a raw Responder feeds the Reply and the first FPDU one octet per segment */
TEST_F(startup, reply_dribbled)
{
	__u8 req[20], rep[40], wire[600], ulpdu[500], got[600];
	socklen_t len = sizeof(got);
	int n, fl = 0;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_MARKERS, NULL, 0, NULL,
				  0));
	ASSERT_EQ(20, iw_readn(self->fds[1], req, 20, RAW_TMO_MS));
	n = mt_frame(rep, 0, MPA_FLAG_C, 1, "dribble", 7);
	ASSERT_EQ(0, mt_dribble(self->fds[1], rep, n - 1));
	usleep(20000);
	EXPECT_EQ(MPA_S_REQ_SENT, iw_mpa_info_of(self->fds[0]).state);
	ASSERT_EQ(0, mt_dribble(self->fds[1], rep + n - 1, 1));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(7, len);
	EXPECT_EQ(0, memcmp(got, "dribble", 7));
	EXPECT_EQ(MPA_I_MARKERS_RX | MPA_I_CRC, iw_mpa_info_of(self->fds[0]).flags);
	mt_fill(ulpdu, sizeof(ulpdu), 9);
	n = mt_enc(wire, sizeof(wire), 0, true, true, ulpdu, sizeof(ulpdu));
	ASSERT_EQ(4 + 2 + 500 + 2 + 4, n);
	ASSERT_EQ(0, mt_dribble(self->fds[1], wire, n));
	EXPECT_EQ(500, mt_recv(self->fds[0], got, sizeof(got), 0, &fl));
	EXPECT_EQ(0, memcmp(got, ulpdu, 500));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
}

/* a raw Initiator feeds the Request one octet per segment */
TEST_F(startup, request_dribbled)
{
	__u8 req[40], got[40];
	socklen_t len = sizeof(got);
	int n;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	n = mt_frame(req, 1, MPA_FLAG_C, 1, "slowly", 6);
	ASSERT_EQ(0, mt_dribble(self->fds[0], req, n));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(6, len);
	EXPECT_EQ(0, memcmp(got, "slowly", 6));
}

/*
 * poll contract of the startup (Documentation/mpa.rst, "poll"): the end
 * of the startup wakes a poller with POLLOUT (full operation) or POLLPRI
 * (rejected or failed). The Initiator sleeps in poll() or epoll_wait()
 * (edge-triggered) right after MPA_START with no MPA_INFO before it
 * returns; the peer acts after SP_DELAY_MS.
 */
#define SP_DELAY_MS	300
#define SP_LONG_MS	10000

enum sp_peer {
	SP_ACCEPT,	/* module Responder accepts */
	SP_REJECT,	/* module Responder rejects */
	SP_SILENT,	/* raw peer says nothing: startup timeout */
	SP_BAD_REPLY,	/* raw peer sends a malformed Reply */
	SP_RESET,	/* raw peer resets the connection */
};

FIXTURE(startup_poll)
{
	int fds[2];
	int ep;
	pthread_t peer;
	bool peer_running;
};

FIXTURE_VARIANT(startup_poll)
{
	enum sp_peer peer;
	bool responder;		/* fds[0], the socket that polls; else the Initiator */
	bool epoll;
};

#define SP(name, p, resp, ep)						\
	FIXTURE_VARIANT_ADD(startup_poll, name) {			\
		.peer = p, .responder = resp, .epoll = ep,		\
	}

SP(accept_poll, SP_ACCEPT, false, false);
SP(accept_epollet, SP_ACCEPT, false, true);
SP(reject_poll, SP_REJECT, false, false);
SP(reject_epollet, SP_REJECT, false, true);
SP(timeout_poll, SP_SILENT, false, false);
SP(timeout_epollet, SP_SILENT, false, true);
SP(responder_timeout_poll, SP_SILENT, true, false);
SP(bad_reply_poll, SP_BAD_REPLY, false, false);
SP(bad_reply_epollet, SP_BAD_REPLY, false, true);
SP(reset_poll, SP_RESET, false, false);

/* how the startup ends for the poller, by what the peer does */
static const struct sp_outcome {
	short revents;		/* POLLOUT: full operation, POLLPRI: failed */
	__u32 state;
	__u32 error;
} sp_outcome[] = {
	[SP_ACCEPT]	= { POLLOUT, MPA_S_FULL, 0 },
	[SP_REJECT]	= { POLLPRI, MPA_S_REJECTED, 0 },
	[SP_SILENT]	= { POLLPRI, MPA_S_ERROR, MPA_ERR_STARTUP },
	[SP_BAD_REPLY]	= { POLLPRI, MPA_S_ERROR, MPA_ERR_STARTUP },
	[SP_RESET]	= { POLLPRI, MPA_S_ERROR, MPA_ERR_STARTUP },
};

struct sp_peer_arg {
	int fd;
	enum sp_peer what;
	int ret;
};

static struct sp_peer_arg sp_arg;

/* the peer's part, in a thread: the main thread sleeps in poll */
static void *sp_peer_run(void *p)
{
	struct sp_peer_arg *a = p;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	__u8 bad[20];

	a->ret = -1;
	switch (a->what) {
	case SP_ACCEPT:
	case SP_REJECT:
		if (iw_mpa_wait_state(a->fd, MPA_S_REQ_RCVD, RAW_TMO_MS))
			return NULL;
		usleep(SP_DELAY_MS * 1000);
		if (setsockopt(a->fd, SOL_MPA, a->what == SP_ACCEPT ? MPA_ACCEPT : MPA_REJECT,
			       "", 0))
			return NULL;
		break;
	case SP_SILENT:
		break;
	case SP_BAD_REPLY:
		usleep(SP_DELAY_MS * 1000);
		mt_frame(bad, 0, MPA_FLAG_C, 1, NULL, 0);
		memcpy(bad, "MPA ID Bad Frame", 16);
		if (iw_writen(a->fd, bad, sizeof(bad)))
			return NULL;
		break;
	case SP_RESET:
		usleep(SP_DELAY_MS * 1000);
		if (setsockopt(a->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
			return NULL;
		close(a->fd);
		break;
	}
	a->ret = 0;
	return NULL;
}

FIXTURE_SETUP(startup_poll)
{
	self->ep = -1;
	self->peer_running = false;
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->fds));
}

/* the teardown of both poll fixtures */
static void sp_release(int fds[2], int ep, pthread_t peer, bool peer_running)
{
	if (peer_running)
		pthread_join(peer, NULL);
	if (ep >= 0)
		close(ep);
	iw_close_pair(fds);
}

FIXTURE_TEARDOWN(startup_poll)
{
	sp_release(self->fds, self->ep, self->peer, self->peer_running);
}

/* An epoll instance watching @fd for EPOLLOUT and EPOLLPRI, edge-triggered, or -1. */
static int sp_epollet(int fd)
{
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLPRI | EPOLLET };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(ep);
		ep = -1;
	}
	return ep;
}

/*
 * Sleep in epoll_wait() on @ep, or in poll() on @p when @ep is -1, for up
 * to SP_LONG_MS: the number of events, p->revents set, *@ms the time since
 * @t0.
 */
static int sp_wait(struct pollfd *p, int ep, const struct timespec *t0, long *ms)
{
	struct epoll_event ev;
	struct timespec t1;
	int n;

	if (ep >= 0) {
		n = epoll_wait(ep, &ev, 1, SP_LONG_MS);
		p->revents = ev.events;
	} else {
		n = poll(p, 1, SP_LONG_MS);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
	return n;
}

TEST_F(startup_poll, end_of_startup_wakes_poll)
{
	const struct sp_outcome *o = &sp_outcome[variant->peer];
	__u32 tmo = variant->peer == SP_SILENT ? SP_DELAY_MS : SP_LONG_MS * 2;
	struct pollfd p = { .fd = self->fds[0], .events = POLLOUT | POLLPRI };
	bool module_peer = variant->peer == SP_ACCEPT || variant->peer == SP_REJECT;
	struct timespec t0;
	struct mpa_info info;
	long ms;
	int n;

	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &tmo, sizeof(tmo)));
	if (module_peer) {
		ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
		ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	}
	if (variant->epoll) {
		self->ep = sp_epollet(self->fds[0]);
		ASSERT_LE(0, self->ep);
	}
	sp_arg = (struct sp_peer_arg){ .fd = self->fds[1], .what = variant->peer };
	ASSERT_EQ(0, iw_mpa_start(self->fds[0],
				  variant->responder ? MPA_ROLE_RESPONDER : MPA_ROLE_INITIATOR,
				  0, NULL, 0, NULL, 0));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&self->peer, NULL, sp_peer_run, &sp_arg));
	self->peer_running = true;

	/* no MPA_INFO before this returns */
	n = sp_wait(&p, self->ep, &t0, &ms);
	ASSERT_EQ(1, n);
	/*
	 * POLLPRI: the startup failed, whatever else is set (a rejected
	 * socket is plain TCP, writable; a failed one returns the error);
	 * POLLOUT without POLLPRI: full operation
	 */
	EXPECT_EQ(o->revents, p.revents & (o->revents | POLLPRI));
	/* woken by the end of the startup, long before the poll timeout */
	EXPECT_GE(ms, SP_DELAY_MS - 50);
	EXPECT_LT(ms, SP_LONG_MS / 4);
	ASSERT_EQ(0, iw_mpa_info(self->fds[0], &info));
	EXPECT_EQ(o->state, info.state);
	EXPECT_EQ(o->error, info.error);
	EXPECT_EQ(variant->peer == SP_REJECT ? MPA_I_REJECTED : 0,
		  info.flags & MPA_I_REJECTED);
	pthread_join(self->peer, NULL);
	self->peer_running = false;
	EXPECT_EQ(0, sp_arg.ret);
	if (variant->peer == SP_RESET)
		self->fds[1] = -1;	/* the peer closed it */
	/* full operation keeps POLLPRI clear; a failed startup keeps it set */
	p.events = POLLPRI;
	p.revents = 0;
	EXPECT_EQ(o->revents == POLLPRI, poll(&p, 1, 0));
}

/*
 * RFC 5044 7.1.2 rule 4 through poll: the Responder in full operation is
 * not writable until the first FPDU arrived, and the FPDU wakes it.
 */
FIXTURE(rule4_poll)
{
	int fds[2];
	int ep;
	pthread_t peer;
	bool peer_running;
};

FIXTURE_VARIANT(rule4_poll)
{
	bool epoll;
};

FIXTURE_VARIANT_ADD(rule4_poll, poll)
{
	.epoll = false,
};

FIXTURE_VARIANT_ADD(rule4_poll, epollet)
{
	.epoll = true,
};

FIXTURE_SETUP(rule4_poll)
{
	self->ep = -1;
	self->peer_running = false;
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, self->fds, 0, 0, RAW_TMO_MS));
}

FIXTURE_TEARDOWN(rule4_poll)
{
	sp_release(self->fds, self->ep, self->peer, self->peer_running);
}

static void *rule4_first_fpdu(void *p)
{
	int *fd = p;

	usleep(SP_DELAY_MS * 1000);
	if (send(*fd, "first", 5, 0) != 5)
		return (void *)1;
	return NULL;
}

TEST_F(rule4_poll, first_fpdu_wakes_responder)
{
	struct pollfd p = { .fd = self->fds[1], .events = POLLOUT | POLLPRI };
	struct epoll_event ev;
	struct timespec t0;
	void *ret = (void *)1;
	char buf[16];
	long ms;
	int n;

	/* the Responder waits for the Initiator's first FPDU */
	EXPECT_EQ(0, poll(&p, 1, 100));
	if (variant->epoll) {
		self->ep = sp_epollet(self->fds[1]);
		ASSERT_LE(0, self->ep);
		EXPECT_EQ(0, epoll_wait(self->ep, &ev, 1, 0));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&self->peer, NULL, rule4_first_fpdu, &self->fds[0]));
	self->peer_running = true;
	n = sp_wait(&p, self->ep, &t0, &ms);
	ASSERT_EQ(1, n);
	EXPECT_EQ(POLLOUT, p.revents & (POLLOUT | POLLPRI));
	EXPECT_GE(ms, SP_DELAY_MS - 50);
	EXPECT_LT(ms, SP_LONG_MS / 4);
	pthread_join(self->peer, &ret);
	self->peer_running = false;
	EXPECT_EQ(NULL, ret);
	EXPECT_EQ(5, mt_recv(self->fds[1], buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(5, send(self->fds[1], "later", 5, MSG_DONTWAIT));
}

TEST_HARNESS_MAIN
