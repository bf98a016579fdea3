// SPDX-License-Identifier: GPL-2.0
/*
 * Segmentation invariance: a raw TCP peer sends the same wire image (its
 * Request or Reply, then two FPDUs) cut once at every octet boundary, so
 * that every frame is split and glued to the next one in turn (Reply plus
 * FPDU octets in one segment, a marker-split header, a split CRC). The
 * module must deliver the same two ULPDUs whatever the cut. Both roles,
 * markers on and off, CRC on and off. Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

#define ULP1_LEN	10
#define ULP2_LEN	600	/* a marker falls inside it */

FIXTURE(seg)
{
	__u8 wire[2048];
	size_t hdr_len;		/* the Request or Reply */
	size_t len;
	__u8 ulp1[ULP1_LEN];
	__u8 ulp2[ULP2_LEN];
	int old_no_crc;
};

FIXTURE_VARIANT(seg)
{
	bool markers;	/* the module asks for markers on what it receives */
	bool no_crc;
};

FIXTURE_VARIANT_ADD(seg, crc)
{
};

FIXTURE_VARIANT_ADD(seg, crc_markers)
{
	.markers = true,
};

FIXTURE_VARIANT_ADD(seg, no_crc)
{
	.no_crc = true,
};

FIXTURE_VARIANT_ADD(seg, no_crc_markers)
{
	.markers = true,
	.no_crc = true,
};

FIXTURE_SETUP(seg)
{
	self->old_no_crc = -1;
	if (variant->no_crc) {
		self->old_no_crc = mt_allow_no_crc(1);
		ASSERT_LE(0, self->old_no_crc);
	}
	mt_fill(self->ulp1, sizeof(self->ulp1), 11);
	mt_fill(self->ulp2, sizeof(self->ulp2), 22);
}

FIXTURE_TEARDOWN(seg)
{
	if (self->old_no_crc >= 0)
		mt_allow_no_crc(self->old_no_crc);
}

/* the frame, then two FPDUs from stream position 0 (the first marker) */
static void build(struct _test_data_seg *self, const struct _fixture_variant_seg *variant,
		  bool request)
{
	bool crc = !variant->no_crc;
	int n;

	self->hdr_len = mt_frame(self->wire, request, crc ? MPA_FLAG_C : 0, 1, NULL, 0);
	self->len = self->hdr_len;
	n = mt_enc(self->wire + self->len, sizeof(self->wire) - self->len, 0,
		   variant->markers, crc, self->ulp1, ULP1_LEN);
	self->len += n;
	n = mt_enc(self->wire + self->len, sizeof(self->wire) - self->len, n,
		   variant->markers, crc, self->ulp2, ULP2_LEN);
	self->len += n;
}

static __u32 mod_flags(const struct _fixture_variant_seg *variant)
{
	return (variant->markers ? MPA_F_MARKERS : 0) | (variant->no_crc ? MPA_F_NO_CRC : 0);
}

/* write the image in two segments, cut at @cut */
static int send_cut(int fd, const __u8 *w, size_t len, size_t cut)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    mt_writen(fd, w, cut))
		return -1;
	usleep(500);
	return mt_writen(fd, w + cut, len - cut);
}

/* the two ULPDUs, exactly, then nothing */
static int expect_ulpdus(struct _test_data_seg *self, int fd)
{
	struct timeval tv = { .tv_sec = 5 };
	__u8 buf[1024];
	int fl = 0;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	if (mt_recv(fd, buf, sizeof(buf), 0, &fl) != ULP1_LEN ||
	    memcmp(buf, self->ulp1, ULP1_LEN) || !(fl & MSG_EOR))
		return -2;
	if (mt_recv(fd, buf, sizeof(buf), 0, &fl) != ULP2_LEN ||
	    memcmp(buf, self->ulp2, ULP2_LEN) || !(fl & MSG_EOR))
		return -3;
	if (mt_recv(fd, buf, sizeof(buf), MSG_DONTWAIT, &fl) != -1 || errno != EAGAIN)
		return -4;
	if (mt_stats(fd).rx_fpdus != 2 || mt_error(fd) != 0)
		return -5;
	return 0;
}

/* module Initiator, raw Responder: Reply + FPDU + FPDU cut at @cut */
static int initiator_cut(struct _test_data_seg *self, const struct _fixture_variant_seg *variant,
			 size_t cut)
{
	int fds[2], ret = -10;
	__u8 req[20];

	if (mpa_test_pair(AF_INET, fds))
		return -11;
	if (mpa_test_set_ulp(fds[0]) ||
	    mt_start(fds[0], MPA_ROLE_INITIATOR, mod_flags(variant), NULL, 0, NULL, 0) ||
	    mt_readn(fds[1], req, 20, RAW_TMO_MS) != 20 ||
	    send_cut(fds[1], self->wire, self->len, cut))
		goto out;
	ret = expect_ulpdus(self, fds[0]);
out:
	close(fds[0]);
	close(fds[1]);
	return ret;
}

/* raw Initiator, module Responder: Request + FPDU + FPDU cut at @cut */
static int responder_cut(struct _test_data_seg *self, const struct _fixture_variant_seg *variant,
			 size_t cut)
{
	int fds[2], ret = -10;
	__u8 rep[20];

	if (mpa_test_pair(AF_INET, fds))
		return -11;
	if (mpa_test_set_ulp(fds[1]) ||
	    mt_start(fds[1], MPA_ROLE_RESPONDER, mod_flags(variant), NULL, 0, NULL, 0) ||
	    send_cut(fds[0], self->wire, self->len, cut) ||
	    mt_wait_state(fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS) ||
	    setsockopt(fds[1], SOL_MPA, MPA_ACCEPT, "", 0) ||
	    mt_readn(fds[0], rep, 20, RAW_TMO_MS) != 20 ||
	    memcmp(rep, "MPA ID Rep Frame", 16))
		goto out;
	ret = expect_ulpdus(self, fds[1]);
out:
	close(fds[0]);
	close(fds[1]);
	return ret;
}

/* RFC 5044 7.1.2: the Reply and one more octet in one segment (a hang once) */
TEST_F(seg, reply_plus_one_octet)
{
	int fds[2], fl;
	__u8 req[20];

	build(self, variant, false);
	ASSERT_EQ(0, mpa_test_pair(AF_INET, fds));
	ASSERT_EQ(0, mpa_test_set_ulp(fds[0]));
	ASSERT_EQ(0, mt_start(fds[0], MPA_ROLE_INITIATOR, mod_flags(variant), NULL, 0,
			      NULL, 0));
	ASSERT_EQ(20, mt_readn(fds[1], req, 20, RAW_TMO_MS));
	ASSERT_EQ(0, mt_writen(fds[1], self->wire, self->hdr_len + 1));
	ASSERT_EQ(0, mt_wait_state(fds[0], MPA_S_FULL, RAW_TMO_MS));
	EXPECT_EQ(-1, mt_recv(fds[0], req, sizeof(req), MSG_DONTWAIT, &fl));
	EXPECT_EQ(EAGAIN, errno);
	/* the rest completes both FPDUs */
	ASSERT_EQ(0, mt_writen(fds[1], self->wire + self->hdr_len + 1,
			       self->len - self->hdr_len - 1));
	EXPECT_EQ(0, expect_ulpdus(self, fds[0]));
	close(fds[0]);
	close(fds[1]);
}

TEST_F_TIMEOUT(seg, initiator_every_cut, 300)
{
	size_t cut;
	int ret;

	build(self, variant, false);
	for (cut = 1; cut < self->len; cut++) {
		ret = initiator_cut(self, variant, cut);
		if (ret)
			TH_LOG("cut at octet %zu of %zu: %d", cut, self->len, ret);
		ASSERT_EQ(0, ret);
	}
}

TEST_F_TIMEOUT(seg, responder_every_cut, 300)
{
	size_t cut;
	int ret;

	build(self, variant, true);
	for (cut = 1; cut < self->len; cut++) {
		ret = responder_cut(self, variant, cut);
		if (ret)
			TH_LOG("cut at octet %zu of %zu: %d", cut, self->len, ret);
		ASSERT_EQ(0, ret);
	}
}

TEST_HARNESS_MAIN
