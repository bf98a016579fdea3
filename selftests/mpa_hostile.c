// SPDX-License-Identifier: GPL-2.0
/*
 * MPA against hostile raw TCP peers: bad CRCs and markers (RFC 5044 section
 * 8), malformed Request/Reply frames, FINs inside and between FPDUs, the
 * largest ULPDU into a small receive buffer, data after a reject, and
 * closing at awkward moments. Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

MT_PAIR_FIXTURE(hostile);

FIXTURE_VARIANT(hostile)
{
	int family;
	bool markers;	/* the module asks for markers on what it receives */
};

FIXTURE_VARIANT_ADD(hostile, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(hostile, ipv4_markers)
{
	.family = AF_INET,
	.markers = true,
};

FIXTURE_VARIANT_ADD(hostile, ipv6_markers)
{
	.family = AF_INET6,
	.markers = true,
};

/*
 * The tests that try several kinds of one thing (malformed frames, where a
 * FIN cuts, ...) have a fixture each whose variants are the kind times the
 * three variants of "hostile": one TAP case each.
 */
#define HOSTILE_CASES(f)						\
	MT_PAIR_FIXTURE(f);						\
	FIXTURE_VARIANT(f) {						\
		int family;						\
		bool markers;						\
		int kind;						\
	}

#define HOSTILE_CASE(f, name, k)					\
	FIXTURE_VARIANT_ADD(f, ipv4_##name) {				\
		.family = AF_INET, .kind = (k),				\
	};								\
	FIXTURE_VARIANT_ADD(f, ipv4_markers_##name) {			\
		.family = AF_INET, .markers = true, .kind = (k),	\
	};								\
	FIXTURE_VARIANT_ADD(f, ipv6_markers_##name) {			\
		.family = AF_INET6, .markers = true, .kind = (k),	\
	}

static __u8 wbuf[70000], ubuf[65536], rbuf[65536 + 16];

/* module Initiator fds[0] receiving (markers per variant), raw Responder fds[1] */
#define RAW_SETUP()							\
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds,		\
				      variant->markers ? MPA_F_MARKERS : 0,	\
				      MPA_FLAG_C, 0))

/* after error 2 or 3 TCP is still open: the module sends a last ULPDU */
static int last_message(int mod, int raw)
{
	static const char bye[] = "last words";
	__u8 want[64], got[64];
	int n;

	if (send(mod, bye, sizeof(bye), 0) != sizeof(bye))
		return -1;
	n = mt_enc(want, sizeof(want), 0, false, true, bye, sizeof(bye));
	if (iw_readn(raw, got, n, RAW_TMO_MS) != n || memcmp(got, want, n))
		return -2;
	return 0;
}

TEST_F(hostile, bad_crc)
{
	__u32 pos = 0;
	struct mpa_stats st;
	int n, fl = 0;

	RAW_SETUP();
	mt_fill(ubuf, 2000, 1);
	n = mt_enc(wbuf, sizeof(wbuf), pos, variant->markers, true, ubuf, 100);
	pos += n;
	n += mt_enc(wbuf + n, sizeof(wbuf) - n, pos, variant->markers, true, ubuf, 1500);
	wbuf[n - 700] ^= 0x01;	/* a payload octet of the second FPDU */
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	ASSERT_EQ(100, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 100));
	memset(rbuf, 0, sizeof(rbuf));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(0, rbuf[0] | rbuf[1] | rbuf[2]);
	EXPECT_EQ(MPA_ERR_CRC, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(MPA_ERR_CRC, iw_mpa_info_of(self->fds[0]).error);
	st = iw_mpa_stats_of(self->fds[0]);
	EXPECT_EQ(1, st.rx_crc_errors);
	EXPECT_EQ(1, st.rx_fpdus);
	EXPECT_EQ(100, st.rx_octets);
	/* nothing more is delivered */
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(0, last_message(self->fds[0], self->fds[1]));
}

TEST_F(hostile, bad_crc_field)
{
	int n;

	RAW_SETUP();
	mt_fill(ubuf, 10, 2);
	n = mt_enc(wbuf, sizeof(wbuf), 0, variant->markers, true, ubuf, 10);
	wbuf[n - 1] ^= 0x80;
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(MPA_ERR_CRC, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(1, iw_mpa_stats_of(self->fds[0]).rx_crc_errors);
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	EXPECT_EQ(0, last_message(self->fds[0], self->fds[1]));
}

/*
 * a marker whose FPDUPTR does not point at the FPDU's header: the leading
 * one (FPDUPTR 0) or the one at offset 512 (FPDUPTR 508); only where the
 * module receives markers
 */
HOSTILE_CASES(bad_marker);

FIXTURE_VARIANT_ADD(bad_marker, ipv4_markers_leading)
{
	.family = AF_INET, .markers = true, .kind = 0,
};

FIXTURE_VARIANT_ADD(bad_marker, ipv4_markers_at_512)
{
	.family = AF_INET, .markers = true, .kind = 1,
};

FIXTURE_VARIANT_ADD(bad_marker, ipv6_markers_leading)
{
	.family = AF_INET6, .markers = true, .kind = 0,
};

FIXTURE_VARIANT_ADD(bad_marker, ipv6_markers_at_512)
{
	.family = AF_INET6, .markers = true, .kind = 1,
};

TEST_F(bad_marker, bad_marker)
{
	int at = variant->kind;
	struct mpa_stats st;
	int n;

	RAW_SETUP();
	mt_fill(ubuf, 1000, 3);
	n = mt_enc(wbuf, sizeof(wbuf), 0, true, true, ubuf, 1000);
	ASSERT_EQ(at ? 0x01 : 0, wbuf[at * 512 + 2]);
	ASSERT_EQ(at ? 0xfc : 0, wbuf[at * 512 + 3]);
	wbuf[at * 512 + 3] += 4;
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_EQ(MPA_ERR_MARKER, iw_mpa_error(self->fds[0]));
	st = iw_mpa_stats_of(self->fds[0]);
	EXPECT_EQ(1, st.rx_marker_errors);
	EXPECT_EQ(0, st.rx_fpdus);
	EXPECT_EQ(0, last_message(self->fds[0], self->fds[1]));
}

/* malformed Replies to a module Initiator: error 4 and a reset */
HOSTILE_CASES(malformed_reply);
HOSTILE_CASE(malformed_reply, bad_key, 0);
HOSTILE_CASE(malformed_reply, rev2_above_request, 1);
HOSTILE_CASE(malformed_reply, rev0, 2);
HOSTILE_CASE(malformed_reply, pd_length_513, 3);
HOSTILE_CASE(malformed_reply, request_to_initiator, 4);

TEST_F(malformed_reply, malformed_reply)
{
	__u8 rep[20 + 513] = {};
	size_t n = mt_frame(rep, 0, MPA_FLAG_C, 1, NULL, 0);
	char c;

	ASSERT_EQ(0, iw_loopback_pair_rcvbuf(variant->family, self->fds, 0));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR,
				  variant->markers ? MPA_F_MARKERS : 0, NULL, 0, NULL, 0));
	ASSERT_EQ(20, iw_readn(self->fds[1], wbuf, 20, RAW_TMO_MS));
	switch (variant->kind) {
	case 0:		/* bad key */
		rep[15] = 'E';
		break;
	case 1:		/* Rev 2, above the Request's */
		rep[17] = 2;
		break;
	case 2:		/* Rev 0 */
		rep[17] = 0;
		break;
	case 3:		/* PD_Length 513 */
		rep[18] = 2;
		rep[19] = 1;
		n += 513;
		break;
	case 4:		/* a Request to the Initiator */
		mt_frame(rep, 1, MPA_FLAG_C, 1, NULL, 0);
		break;
	}
	ASSERT_EQ(0, iw_writen(self->fds[1], rep, n));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(ECONNABORTED, iw_so_error(self->fds[0]));
	EXPECT_EQ(-1, iw_readn(self->fds[1], &c, 1, RAW_TMO_MS));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(-1, send(self->fds[0], "x", 1, 0));
}

/* malformed Requests to a module Responder */
HOSTILE_CASES(malformed_request);
HOSTILE_CASE(malformed_request, bad_key, 0);
HOSTILE_CASE(malformed_request, rev3, 1);
HOSTILE_CASE(malformed_request, reply_to_responder, 2);

TEST_F(malformed_request, malformed_request)
{
	int k = variant->kind;
	__u8 req[20];
	char c;

	ASSERT_EQ(0, iw_loopback_pair_rcvbuf(variant->family, self->fds, 0));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER,
				  variant->markers ? MPA_F_MARKERS : 0, NULL, 0, NULL, 0));
	/* k 1: Rev 3, a revision nobody speaks; k 2: a Reply frame */
	mt_frame(req, k != 2, MPA_FLAG_C, k == 1 ? 3 : 1, NULL, 0);
	if (k == 0)
		req[0] = 'm';
	ASSERT_EQ(0, iw_writen(self->fds[0], req, 20));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
	EXPECT_EQ(-1, mt_recv(self->fds[1], &c, 1, 0, NULL));
	EXPECT_EQ(ECONNABORTED, errno);
	EXPECT_EQ(-1, iw_readn(self->fds[0], &c, 1, RAW_TMO_MS));
	EXPECT_EQ(ECONNRESET, errno);
}

/* a FIN inside the second FPDU, 1, 3 or 50 octets past its half, or before its last octet */
HOSTILE_CASES(fin_inside);
HOSTILE_CASE(fin_inside, cut_1, 1);
HOSTILE_CASE(fin_inside, cut_3, 3);
HOSTILE_CASE(fin_inside, cut_50, 50);
HOSTILE_CASE(fin_inside, last_octet_missing, -1);

TEST_F(fin_inside, fin_inside_an_fpdu)
{
	int n;

	RAW_SETUP();
	mt_fill(ubuf, 300, 4);
	n = mt_enc(wbuf, sizeof(wbuf), 0, variant->markers, true, ubuf, 300);
	n += mt_enc(wbuf + n, sizeof(wbuf) - n, n, variant->markers, true, ubuf, 300);
	/* the first FPDU whole, the second cut */
	n = variant->kind < 0 ? n - 1 : n / 2 + variant->kind;
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	ASSERT_EQ(0, shutdown(self->fds[1], SHUT_WR));
	EXPECT_EQ(300, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(MPA_ERR_TCP_CLOSED, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(0, iw_mpa_info_of(self->fds[0]).flags & MPA_I_PEER_FIN);
}

TEST_F(hostile, fin_on_an_fpdu_boundary)
{
	__u32 pos = 0;
	int i, n = 0;
	char c;

	RAW_SETUP();
	mt_fill(ubuf, 3000, 5);
	for (i = 1; i <= 3; i++) {
		int w = mt_enc(wbuf + n, sizeof(wbuf) - n, pos, variant->markers, true,
			       ubuf + i, 1000 * i - 3);

		ASSERT_GT(w, 0);
		n += w;
		pos += w;
	}
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	ASSERT_EQ(0, shutdown(self->fds[1], SHUT_WR));
	usleep(50000);
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(1000 * i - 3, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
		EXPECT_EQ(0, memcmp(rbuf, ubuf + i, 1000 * i - 3));
	}
	EXPECT_EQ(0, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(0, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(MPA_I_PEER_FIN, iw_mpa_info_of(self->fds[0]).flags & MPA_I_PEER_FIN);
	EXPECT_EQ(0, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(3, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	/* half-closed only: the module still sends */
	EXPECT_EQ(0, last_message(self->fds[0], self->fds[1]));
	ASSERT_EQ(0, shutdown(self->fds[0], SHUT_WR));
	EXPECT_EQ(0, iw_readn(self->fds[1], &c, 1, RAW_TMO_MS));
}

/* the largest ULPDU into a socket with a 4 KiB receive buffer */
TEST_F(hostile, ulpdu_65535_small_rcvbuf)
{
	struct timeval tv = { .tv_sec = 10 };
	int n, fl = 0;

	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds,
				      variant->markers ? MPA_F_MARKERS : 0, MPA_FLAG_C, 4096));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	mt_fill(ubuf, 65535, 6);
	n = mt_enc(wbuf, sizeof(wbuf), 0, variant->markers, true, ubuf, 65535);
	ASSERT_GE(n, 65535 + 6);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	ASSERT_EQ(65535, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 65535));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	/* and another one right after it */
	n = mt_enc(wbuf, sizeof(wbuf), n, variant->markers, true, ubuf + 1, 65535);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n));
	ASSERT_EQ(65535, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 1, 65535));
}

/* after R=1 the stream is plain TCP: whatever follows is data */
TEST_F(hostile, garbage_after_reject)
{
	__u8 got[600];
	socklen_t len = sizeof(got);
	size_t n;

	ASSERT_EQ(0, iw_loopback_pair_rcvbuf(variant->family, self->fds, 0));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR,
				  variant->markers ? MPA_F_MARKERS : 0, NULL, 0, NULL, 0));
	ASSERT_EQ(20, iw_readn(self->fds[1], wbuf, 20, RAW_TMO_MS));
	n = mt_frame(wbuf, 0, MPA_FLAG_C | MPA_FLAG_R, 1, "nope", 4);
	mt_fill(wbuf + n, 3000, 7);
	memcpy(wbuf + n + 100, "MPA ID Rep Frame", 16);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n + 3000));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_REJECTED, RAW_TMO_MS));
	EXPECT_EQ(MPA_I_REJECTED, iw_mpa_info_of(self->fds[0]).flags);
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(4, len);
	EXPECT_EQ(0, memcmp(got, "nope", 4));
	ASSERT_EQ(3000, iw_readn(self->fds[0], rbuf, 3000, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(rbuf, wbuf + n, 3000));
	/* and plain TCP out */
	ASSERT_EQ(5, send(self->fds[0], "plain", 5, 0));
	ASSERT_EQ(5, iw_readn(self->fds[1], got, 5, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(got, "plain", 5));
}

/* closing at awkward moments must not crash (the bench checks the kernel log) */
TEST_F(hostile, close_mid_startup)
{
	__u8 rep[20];
	ssize_t r;
	char c;

	ASSERT_EQ(0, iw_loopback_pair_rcvbuf(variant->family, self->fds, 0));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_writen(self->fds[1], rep, mt_frame(rep, 0, MPA_FLAG_C, 1, NULL, 0) - 7));
	usleep(20000);
	close(self->fds[0]);
	self->fds[0] = -1;
	ASSERT_EQ(20, iw_readn(self->fds[1], rep, 20, RAW_TMO_MS));
	/* FIN, or a reset because of the unread Reply octets */
	r = iw_readn(self->fds[1], &c, 1, RAW_TMO_MS);
	EXPECT_TRUE(r == 0 || (r == -1 && errno == ECONNRESET));
}

TEST_F(hostile, close_responder_waiting)
{
	ASSERT_EQ(0, iw_loopback_pair_rcvbuf(variant->family, self->fds, 0));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, "lsm", 3));
	close(self->fds[1]);
	self->fds[1] = -1;
	ASSERT_EQ(3, iw_readn(self->fds[0], wbuf, 3, RAW_TMO_MS));
	EXPECT_EQ(0, iw_readn(self->fds[0], wbuf, 1, RAW_TMO_MS));
}

/* k 0: half an FPDU; 1: a ULPDU ready and more in TCP; 2: + unsent FPDUs */
HOSTILE_CASES(close_mid);
HOSTILE_CASE(close_mid, half_fpdu, 0);
HOSTILE_CASE(close_mid, ulpdu_ready, 1);
HOSTILE_CASE(close_mid, unsent_fpdus, 2);

TEST_F(close_mid, close_mid_fpdu_and_with_data_queued)
{
	int k = variant->kind;
	int n, i;

	RAW_SETUP();
	mt_fill(ubuf, 5000, 8);
	n = 0;
	for (i = 0; i < 4; i++)
		n += mt_enc(wbuf + n, sizeof(wbuf) - n, n, variant->markers, true,
			    ubuf, 5000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, k ? n - 10 : n / 8));
	if (k == 2) {
		for (i = 0; i < 200; i++)
			if (send(self->fds[0], ubuf, 5000, MSG_DONTWAIT) != 5000)
				break;
		EXPECT_GT(i, 0);
	}
	usleep(20000);
	close(self->fds[0]);
	self->fds[0] = -1;
	close(self->fds[1]);
	self->fds[1] = -1;
	/* the module still works */
	RAW_SETUP();
	EXPECT_EQ(0, last_message(self->fds[0], self->fds[1]));
}

TEST_HARNESS_MAIN
