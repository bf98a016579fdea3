// SPDX-License-Identifier: GPL-2.0
/*
 * Segmentation invariance: a raw TCP peer sends the same wire image (its
 * Request or Reply, then two FPDUs) cut once at every octet boundary, so
 * that every frame is split and glued to the next one in turn (Reply plus
 * FPDU octets in one segment, a marker-split header, a split CRC). The
 * module must deliver the same two ULPDUs whatever the cut. A FIN after
 * any prefix of the FPDUs must give a clean end of stream on an FPDU
 * boundary and error 1 anywhere else. Both roles, markers on and off,
 * CRC on and off, revisions 0 (RFC 5044 Appendix C), 1 and 2 (RFC 6581).
 * Needs mpa.ko loaded.
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
	size_t fpdu1_end;	/* end of the first FPDU in @wire */
	size_t len;
	__u8 ulp1[ULP1_LEN];
	__u8 ulp2[ULP2_LEN];
	int old_no_crc;
};

FIXTURE_VARIANT(seg)
{
	bool markers;	/* the module asks for markers on what it receives */
	bool no_crc;
	int rev;	/* 0 (RDMAC: markers and CRC both ways), 1 or 2 */
};

FIXTURE_VARIANT_ADD(seg, crc)
{
	.rev = 1,
};

FIXTURE_VARIANT_ADD(seg, crc_markers)
{
	.markers = true,
	.rev = 1,
};

FIXTURE_VARIANT_ADD(seg, no_crc)
{
	.no_crc = true,
	.rev = 1,
};

FIXTURE_VARIANT_ADD(seg, no_crc_markers)
{
	.markers = true,
	.no_crc = true,
	.rev = 1,
};

FIXTURE_VARIANT_ADD(seg, rev2_crc)
{
	.rev = 2,
};

FIXTURE_VARIANT_ADD(seg, rev2_no_crc_markers)
{
	.markers = true,
	.no_crc = true,
	.rev = 2,
};

FIXTURE_VARIANT_ADD(seg, rev0)
{
	.markers = true,
	.rev = 0,
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
	/* revision 2: enhanced data with IRD = ORD = 0, no peer-to-peer */
	static const __u8 v2_data[4];
	bool crc = !variant->no_crc;
	__u8 flags = crc ? MPA_FLAG_C : 0;
	int n;

	if (variant->rev == 0)
		flags |= MPA_FLAG_M;	/* an RDMAC peer sets M and C */
	if (variant->rev == 2)
		flags |= MPA_FLAG_E;
	self->hdr_len = mt_frame(self->wire, request, flags, variant->rev, v2_data,
				 variant->rev == 2 ? sizeof(v2_data) : 0);
	self->len = self->hdr_len;
	n = mt_enc(self->wire + self->len, sizeof(self->wire) - self->len, 0,
		   variant->markers, crc, self->ulp1, ULP1_LEN);
	self->len += n;
	self->fpdu1_end = self->len;
	n = mt_enc(self->wire + self->len, sizeof(self->wire) - self->len, n,
		   variant->markers, crc, self->ulp2, ULP2_LEN);
	self->len += n;
}

static int mod_start(int fd, __u32 role, const struct _fixture_variant_seg *variant)
{
	struct mpa_start s = {
		.role = role,
		.flags = (variant->markers ? MPA_F_MARKERS : 0) |
			 (variant->no_crc ? MPA_F_NO_CRC : 0),
		.rev = variant->rev ? variant->rev : MPA_REV_RDMAC,
	};

	return setsockopt(fd, SOL_MPA, MPA_START, &s, sizeof(s));
}

/* write the image in two segments, cut at @cut */
static int send_cut(int fd, const __u8 *w, size_t len, size_t cut)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    iw_writen(fd, w, cut))
		return -1;
	usleep(500);
	return iw_writen(fd, w + cut, len - cut);
}

enum seg_end {
	END_OPEN,	/* nothing more, the connection stays up */
	END_FIN,	/* end of stream on an FPDU boundary */
	END_ERR1,	/* FIN inside an FPDU: RFC 5044 error 1 */
};

/* @n of the two ULPDUs, exactly, then @end */
static int expect_ulpdus(struct _test_data_seg *self, int fd, int n, enum seg_end end)
{
	struct timeval tv = { .tv_sec = 5 };
	__u8 buf[1024];
	int fl = 0;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	if (n > 0 && (mt_recv(fd, buf, sizeof(buf), 0, &fl) != ULP1_LEN ||
		      memcmp(buf, self->ulp1, ULP1_LEN) || !(fl & MSG_EOR)))
		return -2;
	if (n > 1 && (mt_recv(fd, buf, sizeof(buf), 0, &fl) != ULP2_LEN ||
		      memcmp(buf, self->ulp2, ULP2_LEN) || !(fl & MSG_EOR)))
		return -3;
	switch (end) {
	case END_OPEN:
		if (mt_recv(fd, buf, sizeof(buf), MSG_DONTWAIT, &fl) != -1 || errno != EAGAIN)
			return -4;
		break;
	case END_FIN:
		if (mt_recv(fd, buf, sizeof(buf), 0, &fl) != 0 ||
		    !(iw_mpa_info_of(fd).flags & MPA_I_PEER_FIN))
			return -5;
		break;
	case END_ERR1:
		if (mt_recv(fd, buf, sizeof(buf), 0, &fl) != -1 || errno != ECONNRESET ||
		    iw_mpa_error(fd) != MPA_ERR_TCP_CLOSED)
			return -6;
		return iw_mpa_stats_of(fd).rx_fpdus == n ? 0 : -7;
	}
	if (iw_mpa_stats_of(fd).rx_fpdus != n || iw_mpa_error(fd) != 0)
		return -8;
	return 0;
}

/*
 * One connection: the raw peer sends its frame and FPDUs cut at @cut
 * (or, with @fin, only the first @cut octets and then a FIN); the module
 * is the Initiator (raw Responder) or the Responder (raw Initiator).
 */
static int run_cut(struct _test_data_seg *self, const struct _fixture_variant_seg *variant,
		   bool mod_initiator, size_t cut, bool fin)
{
	int raw, mod, fds[2], ret = -10, n;
	enum seg_end end = END_OPEN;
	__u8 frame[64];

	if (iw_loopback_pair(AF_INET, fds))
		return -11;
	mod = fds[mod_initiator ? 0 : 1];
	raw = fds[mod_initiator ? 1 : 0];
	if (iw_mpa_attach(mod) ||
	    mod_start(mod, mod_initiator ? MPA_ROLE_INITIATOR : MPA_ROLE_RESPONDER, variant))
		goto out;
	/* the module Initiator's Request comes first */
	if (mod_initiator && iw_readn(raw, frame, self->hdr_len, RAW_TMO_MS) != self->hdr_len)
		goto out;
	if (fin) {
		if (iw_writen(raw, self->wire, cut) || shutdown(raw, SHUT_WR))
			goto out;
	} else if (send_cut(raw, self->wire, self->len, cut)) {
		goto out;
	}
	if (!mod_initiator &&
	    (iw_mpa_wait_state(mod, MPA_S_REQ_RCVD, RAW_TMO_MS) ||
	     setsockopt(mod, SOL_MPA, MPA_ACCEPT, "", 0) ||
	     iw_readn(raw, frame, self->hdr_len, RAW_TMO_MS) != self->hdr_len ||
	     memcmp(frame, "MPA ID Rep Frame", 16)))
		goto out;
	n = 2;
	if (fin) {
		n = cut >= self->len ? 2 : cut >= self->fpdu1_end ? 1 : 0;
		end = cut == self->hdr_len || cut == self->fpdu1_end || cut == self->len ?
		      END_FIN : END_ERR1;
	}
	ret = expect_ulpdus(self, mod, n, end);
out:
	close(fds[0]);
	close(fds[1]);
	return ret;
}

/* RFC 5044 7.1.2: the Reply and one more octet in one segment (a hang once) */
TEST_F(seg, reply_plus_one_octet)
{
	__u8 frame[64];
	int fds[2], fl;

	build(self, variant, false);
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, mod_start(fds[0], MPA_ROLE_INITIATOR, variant));
	ASSERT_EQ(self->hdr_len, iw_readn(fds[1], frame, self->hdr_len, RAW_TMO_MS));
	ASSERT_EQ(0, iw_writen(fds[1], self->wire, self->hdr_len + 1));
	ASSERT_EQ(0, iw_mpa_wait_state(fds[0], MPA_S_FULL, RAW_TMO_MS));
	EXPECT_EQ(-1, mt_recv(fds[0], frame, sizeof(frame), MSG_DONTWAIT, &fl));
	EXPECT_EQ(EAGAIN, errno);
	/* the rest completes both FPDUs */
	ASSERT_EQ(0, iw_writen(fds[1], self->wire + self->hdr_len + 1,
			       self->len - self->hdr_len - 1));
	EXPECT_EQ(0, expect_ulpdus(self, fds[0], 2, END_OPEN));
	close(fds[0]);
	close(fds[1]);
}

static void every_cut(struct __test_metadata *_metadata, struct _test_data_seg *self,
		      const struct _fixture_variant_seg *variant, bool mod_initiator, bool fin)
{
	size_t cut;
	int ret;

	build(self, variant, !mod_initiator);
	/* with a FIN: every prefix that holds the whole frame */
	for (cut = fin ? self->hdr_len : 1; cut < self->len + fin; cut++) {
		ret = run_cut(self, variant, mod_initiator, cut, fin);
		if (ret)
			TH_LOG("%s, %s at octet %zu of %zu: %d",
			       mod_initiator ? "Initiator" : "Responder",
			       fin ? "FIN" : "cut", cut, self->len, ret);
		ASSERT_EQ(0, ret);
	}
}

TEST_F_TIMEOUT(seg, initiator_every_cut, 300)
{
	every_cut(_metadata, self, variant, true, false);
}

TEST_F_TIMEOUT(seg, responder_every_cut, 300)
{
	every_cut(_metadata, self, variant, false, false);
}

TEST_F_TIMEOUT(seg, initiator_fin_after_every_prefix, 300)
{
	every_cut(_metadata, self, variant, true, true);
}

TEST_F_TIMEOUT(seg, responder_fin_after_every_prefix, 300)
{
	every_cut(_metadata, self, variant, false, true);
}

TEST_HARNESS_MAIN
