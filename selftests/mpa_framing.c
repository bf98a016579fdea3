// SPDX-License-Identifier: GPL-2.0
/*
 * MPA full operation (RFC 5044 section 4): FPDUs on the wire against a
 * reference encoder written here from the RFC text (not mpa_proto.c's
 * mpa_fpdu_encode(), which the module itself uses) and RFC Figures 5 and
 * 6, with markers x CRC x address family as fixture variants, every
 * ULPDU size and marker position, poll, stats, a bulk transfer and many
 * connections. Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <time.h>

#include "mpa_proto.h"
#include <linux/mpa.h>
#include <linux/sockios.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

/* RFC 5044 Figure 5: the first FPDU of a stream, with a marker */
static const __u8 fig5_ulpdu[42] = {
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
};

static const __u8 fig5_wire[52] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x2a,
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
	[48] = 0x52, 0x23, 0x99, 0x83,
};

/* RFC 5044 Figure 6: the second FPDU, at stream offset 0x1ec, a marker inside */
static const __u8 fig6_ulpdu[42] = {
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0,
};

static const __u8 fig6_wire[52] = {
	0x00, 0x2a,
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0,
	0x00, 0x00, 0x00, 0x14,
	[48] = 0x84, 0x92, 0x58, 0x98,
};

/* the first FPDU of Figure 6's stream: 492 octets with its marker */
#define FIG6_FIRST_ULPDU	(0x1ec - 4 - 2 - 4)

MT_PAIR_FIXTURE(framing);
MT_FAMILY_VARIANTS(framing);

static __u8 wbuf[2 * 65536 + 4096], gbuf[2 * 65536 + 4096], ubuf[65536], rbuf[65536 + 16];

/*
 * The reference encoder: RFC 5044 read directly, sharing no code with
 * mpa_proto.c. CRC-32c bit by bit (reflected polynomial 0x82f63b78,
 * section 4.4); markers every 512 octets of the stream (section 4.3), a
 * marker between two FPDUs belongs to the one after it, FPDUPTR is the
 * distance back to that FPDU's header (0 when the header follows).
 */
static __u32 ref_crc32c(const __u8 *p, size_t n)
{
	__u32 c = ~0U;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78U & -(c & 1));
	}
	return ~c;
}

/* One FPDU starting at stream position @pos (a multiple of 4); its wire length. */
static int ref_fpdu(__u8 *out, size_t size, __u32 pos, bool markers, bool crc,
		    const __u8 *ulpdu, __u32 len)
{
	__u32 pad = (4 - (2 + len) % 4) % 4, plain = 2 + len + pad, hdr = pos, i;
	size_t o = 0;
	__u32 c;
	__u8 b;

	if (len > 65535 || size < plain + 4 + 4 * (plain / 508 + 2))
		return -1;
	for (i = 0; i <= plain; i++) {
		if (markers && (pos + o) % 512 == 0) {
			__u32 ptr = i ? pos + o - hdr : 0;

			out[o++] = 0;
			out[o++] = 0;
			out[o++] = ptr >> 8;
			out[o++] = ptr;
		}
		if (i == plain)
			break;		/* a marker right after the pad is still ours */
		if (!i)
			hdr = pos + o;
		b = i == 0 ? len >> 8 : i == 1 ? len & 0xff : i < 2 + len ? ulpdu[i - 2] : 0;
		out[o++] = b;
	}
	c = crc ? ref_crc32c(out, o) : 0;
	out[o++] = c;
	out[o++] = c >> 8;
	out[o++] = c >> 16;
	out[o++] = c >> 24;
	return o;
}

/*
 * @count reference FPDUs (no markers, CRC) of @len ULPDU octets each, the
 * ULPDUs one after the other from ubuf, into wbuf: their total length, or
 * -1 when they do not fit.
 */
static int ref_fpdus(int count, __u32 len)
{
	int i, n, off = 0;

	for (i = 0; i < count; i++) {
		n = ref_fpdu(wbuf + off, sizeof(wbuf) - off, 0, false, true,
			     ubuf + len * i, len);
		if (n < 0)
			return -1;
		off += n;
	}
	return off;
}

/* module sends @len octets of @data; the raw peer must read exactly the reference FPDU */
static int tx_check(int mod, int raw, __u32 *pos, bool markers, bool crc,
		    const __u8 *data, __u32 len)
{
	int n;

	if (send(mod, data, len, 0) != (ssize_t)len)
		return -1;
	n = ref_fpdu(wbuf, sizeof(wbuf), *pos, markers, crc, data, len);
	if (n <= 0 || iw_readn(raw, gbuf, n, RAW_TMO_MS) != n || memcmp(gbuf, wbuf, n))
		return -2;
	*pos += n;
	return 0;
}

/* the raw peer writes the reference FPDU; the module must deliver exactly @data */
static int rx_check(int mod, int raw, __u32 *pos, bool markers, bool crc,
		    const __u8 *data, __u32 len)
{
	int n, fl = 0;

	n = ref_fpdu(wbuf, sizeof(wbuf), *pos, markers, crc, data, len);
	if (n <= 0 || iw_writen(raw, wbuf, n))
		return -1;
	if (mt_recv(mod, rbuf, sizeof(rbuf), 0, &fl) != (ssize_t)len ||
	    memcmp(rbuf, data, len) || (fl & (MSG_EOR | MSG_TRUNC)) != MSG_EOR)
		return -2;
	*pos += n;
	return 0;
}

/* the reference encoder itself: the RFC's own wire images */
TEST(reference_encoder_matches_rfc_figures)
{
	__u8 out[128];

	ASSERT_EQ(52, ref_fpdu(out, sizeof(out), 0, true, true, fig5_ulpdu, 42));
	EXPECT_EQ(0, memcmp(out, fig5_wire, 52));
	ASSERT_EQ(52, ref_fpdu(out, sizeof(out), 0x1ec, true, true, fig6_ulpdu, 42));
	EXPECT_EQ(0, memcmp(out, fig6_wire, 52));
	/* CRC-32c check value of "123456789" (RFC 3720 B.4) */
	EXPECT_EQ(0xe3069283, ref_crc32c((const __u8 *)"123456789", 9));
}

/* two encoders written apart agree at every marker position */
TEST(reference_encoder_matches_mpa_proto)
{
	__u32 pos, len;
	int a, b;

	mt_fill(ubuf, sizeof(ubuf), 10);
	for (pos = 0; pos < 1024; pos += 4) {
		for (len = 0; len < 1100; len += len < 16 ? 1 : 37) {
			a = ref_fpdu(wbuf, sizeof(wbuf), pos, pos & 4, !(pos & 8), ubuf, len);
			b = mt_enc(gbuf, sizeof(gbuf), pos, pos & 4, !(pos & 8), ubuf, len);
			ASSERT_EQ(a, b) TH_LOG("pos %u len %u", pos, len);
			ASSERT_EQ(0, memcmp(wbuf, gbuf, a)) TH_LOG("pos %u len %u", pos, len);
		}
	}
}

/* FPDUs of many sizes both ways, per markers x CRC x address family */
FIXTURE(wire)
{
	int fds[2];
	int old_no_crc;
};

FIXTURE_VARIANT(wire)
{
	int family;
	bool markers;
	bool crc;
};

FIXTURE_VARIANT_ADD(wire, ipv4_crc)
{
	.family = AF_INET, .markers = false, .crc = true,
};

FIXTURE_VARIANT_ADD(wire, ipv4_crc_markers)
{
	.family = AF_INET, .markers = true, .crc = true,
};

FIXTURE_VARIANT_ADD(wire, ipv4_nocrc)
{
	.family = AF_INET, .markers = false, .crc = false,
};

FIXTURE_VARIANT_ADD(wire, ipv4_nocrc_markers)
{
	.family = AF_INET, .markers = true, .crc = false,
};

FIXTURE_VARIANT_ADD(wire, ipv6_crc)
{
	.family = AF_INET6, .markers = false, .crc = true,
};

FIXTURE_VARIANT_ADD(wire, ipv6_crc_markers)
{
	.family = AF_INET6, .markers = true, .crc = true,
};

FIXTURE_VARIANT_ADD(wire, ipv6_nocrc)
{
	.family = AF_INET6, .markers = false, .crc = false,
};

FIXTURE_VARIANT_ADD(wire, ipv6_nocrc_markers)
{
	.family = AF_INET6, .markers = true, .crc = false,
};

FIXTURE_SETUP(wire)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	self->old_no_crc = -1;
	if (!variant->crc) {
		self->old_no_crc = mt_allow_no_crc(1);
		if (self->old_no_crc < 0)
			SKIP(return, "no /sys/module/mpa/parameters/allow_no_crc");
	}
}

FIXTURE_TEARDOWN(wire)
{
	iw_close_pair(self->fds);
	if (self->old_no_crc >= 0)
		mt_allow_no_crc(self->old_no_crc);
}

TEST_F(wire, tx_matches_reference_encoder)
{
	static const __u32 sizes[] = { 1, 2, 3, 4, 5, 6, 7, 42, 100, 499, 500, 501, 502,
				       503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 1000,
				       1021, 4000, 9000 };
	__u32 pos = 0, i;

	mt_fill(ubuf, sizeof(ubuf), 11);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds,
				      variant->crc ? 0 : MPA_F_NO_CRC,
				      (variant->crc ? MPA_FLAG_C : 0) |
				      (variant->markers ? MPA_FLAG_M : 0), 0));
	EXPECT_EQ((variant->markers ? MPA_I_MARKERS_TX : 0) | (variant->crc ? MPA_I_CRC : 0),
		  iw_mpa_info_of(self->fds[0]).flags);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		ASSERT_EQ(0, tx_check(self->fds[0], self->fds[1], &pos, variant->markers,
				      variant->crc, ubuf + i, sizes[i]));
	EXPECT_EQ(ARRAY_SIZE(sizes), iw_mpa_stats_of(self->fds[0]).tx_fpdus);
}

TEST_F(wire, rx_of_reference_fpdus)
{
	static const __u32 sizes[] = { 1, 2, 3, 4, 5, 42, 506, 507, 508, 509, 510, 1000, 4000,
				       9000, 65535 };
	__u32 pos = 0, i;

	mt_fill(ubuf, sizeof(ubuf), 12);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds,
				      (variant->markers ? MPA_F_MARKERS : 0) |
				      (variant->crc ? 0 : MPA_F_NO_CRC),
				      variant->crc ? MPA_FLAG_C : 0, 0));
	EXPECT_EQ((variant->markers ? MPA_I_MARKERS_RX : 0) | (variant->crc ? MPA_I_CRC : 0),
		  iw_mpa_info_of(self->fds[0]).flags);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		ASSERT_EQ(0, rx_check(self->fds[0], self->fds[1], &pos, variant->markers,
				      variant->crc, ubuf, sizes[i]));
	EXPECT_EQ(ARRAY_SIZE(sizes), iw_mpa_stats_of(self->fds[0]).rx_fpdus);
}

TEST_F(framing, rfc_figure5_tx)
{
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_M | MPA_FLAG_C, 0));
	ASSERT_EQ(42, send(self->fds[0], fig5_ulpdu, 42, 0));
	ASSERT_EQ(52, iw_readn(self->fds[1], gbuf, 52, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(gbuf, fig5_wire, 52));
	EXPECT_EQ(0, iw_readn(self->fds[1], gbuf, 1, 100));
}

/*
 * sendfile() and splice() into a socket in framing mode fail with
 * EOPNOTSUPP and send nothing: up to 6.4 they reach struct proto's
 * sendpage, from 6.5 on its sendmsg() with MSG_SPLICE_PAGES
 * (Documentation/kernels.rst).
 */
TEST_F(framing, sendfile_and_splice_are_eopnotsupp)
{
	char path[] = "/tmp/mpa_framing.XXXXXX";
	int file, pfd[2];
	off_t off = 0;

	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_M | MPA_FLAG_C, 0));
	file = mkstemp(path);
	ASSERT_LE(0, file);
	unlink(path);
	ASSERT_EQ(42, write(file, fig5_ulpdu, 42));
	EXPECT_EQ(-1, sendfile(self->fds[0], file, &off, 42));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(file);

	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(42, write(pfd[1], fig5_ulpdu, 42));
	EXPECT_EQ(-1, splice(pfd[0], NULL, self->fds[0], NULL, 42, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(pfd[0]);
	close(pfd[1]);

	/* nothing went out: the stream still starts with Figure 5's FPDU */
	ASSERT_EQ(42, send(self->fds[0], fig5_ulpdu, 42, 0));
	ASSERT_EQ(52, iw_readn(self->fds[1], gbuf, 52, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(gbuf, fig5_wire, 52));
	EXPECT_EQ(0, iw_readn(self->fds[1], gbuf, 1, 100));
}

TEST_F(framing, rfc_figure5_rx)
{
	int fl = 0;

	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, MPA_F_MARKERS, MPA_FLAG_C, 0));
	ASSERT_EQ(0, iw_writen(self->fds[1], fig5_wire, 52));
	EXPECT_EQ(42, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, fig5_ulpdu, 42));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(1, iw_mpa_stats_of(self->fds[0]).rx_markers);
}

static void fig6_first(__u8 *u)
{
	memset(u, 0, FIG6_FIRST_ULPDU);
	memcpy(u, fig5_ulpdu, 18);	/* Send, Last, queue 0, MSN 1, MO 0 */
}

TEST_F(framing, rfc_figure6_tx)
{
	__u32 pos = 0;

	ASSERT_EQ(482, FIG6_FIRST_ULPDU);
	fig6_first(ubuf);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_M | MPA_FLAG_C, 0));
	ASSERT_EQ(0, tx_check(self->fds[0], self->fds[1], &pos, true, true, ubuf,
			      FIG6_FIRST_ULPDU));
	ASSERT_EQ(0x1ec, pos);
	ASSERT_EQ(42, send(self->fds[0], fig6_ulpdu, 42, 0));
	ASSERT_EQ(52, iw_readn(self->fds[1], gbuf, 52, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(gbuf, fig6_wire, 52));
}

TEST_F(framing, rfc_figure6_rx)
{
	__u32 pos = 0;
	int fl = 0;

	fig6_first(ubuf);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, MPA_F_MARKERS, MPA_FLAG_C, 0));
	ASSERT_EQ(0, rx_check(self->fds[0], self->fds[1], &pos, true, true, ubuf,
			      FIG6_FIRST_ULPDU));
	ASSERT_EQ(0x1ec, pos);
	ASSERT_EQ(0, iw_writen(self->fds[1], fig6_wire, 52));
	EXPECT_EQ(42, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, fig6_ulpdu, 42));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(2, iw_mpa_stats_of(self->fds[0]).rx_markers);
}

/* every ULPDU size 1..2048 (every pad length) both ways, module <-> module */
TEST_F(framing, sizes_1_to_2048_and_mulpdu)
{
	__u32 mulpdu = 0, s, big[8];
	socklen_t len = sizeof(mulpdu);
	int fl, i, nb = 0;

	mt_fill(ubuf, sizeof(ubuf), 13);
	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS, MPA_F_MARKERS,
				 RAW_TMO_MS));
	for (s = 1; s <= 2048; s++) {
		ASSERT_EQ(s, send(self->fds[0], ubuf + s, s, 0));
		fl = 0;
		ASSERT_EQ(s, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl));
		ASSERT_EQ(0, memcmp(rbuf, ubuf + s, s));
		ASSERT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
		ASSERT_EQ(s, send(self->fds[1], ubuf + 2 * s, s, 0));
		fl = 0;
		ASSERT_EQ(s, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
		ASSERT_EQ(0, memcmp(rbuf, ubuf + 2 * s, s));
		ASSERT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	}
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_MULPDU, &mulpdu, &len));
	ASSERT_GE(mulpdu, 2048);
	for (s = 4096; s < mulpdu && nb < 4; s *= 2)
		big[nb++] = s;
	big[nb++] = mulpdu - 3;
	big[nb++] = mulpdu - 1;
	big[nb++] = mulpdu;
	for (i = 0; i < nb; i++) {
		ASSERT_EQ(big[i], send(self->fds[0], ubuf, big[i], 0));
		fl = 0;
		ASSERT_EQ(big[i], mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl));
		ASSERT_EQ(0, memcmp(rbuf, ubuf, big[i]));
		ASSERT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	}
}

TEST_F(framing, short_buffer_is_msg_trunc)
{
	char buf[10];
	int fl = 0;

	mt_fill(ubuf, 100, 14);
	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, 0, 0, RAW_TMO_MS));
	ASSERT_EQ(100, send(self->fds[0], ubuf, 100, 0));
	ASSERT_EQ(50, send(self->fds[0], ubuf, 50, 0));
	ASSERT_EQ(10, mt_recv(self->fds[1], buf, sizeof(buf), 0, &fl));
	EXPECT_EQ(MSG_EOR | MSG_TRUNC, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(0, memcmp(buf, ubuf, 10));
	/* the rest of that ULPDU is gone: the next recv is the next ULPDU */
	fl = 0;
	ASSERT_EQ(50, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 50));
	/* MSG_TRUNC as a flag returns the real length */
	ASSERT_EQ(100, send(self->fds[0], ubuf, 100, 0));
	ASSERT_EQ(100, mt_recv(self->fds[1], buf, sizeof(buf), MSG_TRUNC, &fl));
	EXPECT_EQ(MSG_EOR | MSG_TRUNC, fl & (MSG_EOR | MSG_TRUNC));
}

TEST_F(framing, send_above_mulpdu_is_emsgsize)
{
	__u32 mulpdu = 0;
	socklen_t len = sizeof(mulpdu);

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS, 0, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_MULPDU, &mulpdu, &len));
	EXPECT_EQ(mulpdu, iw_mpa_info_of(self->fds[0]).mulpdu);
	ASSERT_GE(mulpdu, 128);
	ASSERT_LE(mulpdu, 65535);
	EXPECT_EQ(-1, send(self->fds[0], ubuf, mulpdu + 1, 0));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(-1, send(self->fds[0], ubuf, 65536, 0));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[0]).tx_fpdus);
	EXPECT_EQ(mulpdu, send(self->fds[0], ubuf, mulpdu, 0));
	EXPECT_EQ(mulpdu, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
}

/*
 * Walk FPDUs of sizes 1..600 over the stream so that markers fall between
 * FPDUs, at every 4-octet offset inside the FPDU, and right after the pad.
 */
struct cover {
	int between, after_pad;
	__u8 inside[128];
};

static void cover_fpdu(struct cover *cv, __u32 pos, __u32 len)
{
	__u32 plain = 2 + len + mpa_pad_len(len), gap = mpa_marker_gap(pos);

	if (gap == 0)
		cv->between++;
	else if (gap == plain)
		cv->after_pad++;
	else if (gap < plain)
		cv->inside[gap / 4] = 1;
}

/*
 * ULPDU sizes that put a marker at every 4-octet offset of an FPDU: for
 * each offset a filler FPDU moves the stream to the right position, then a
 * 600-octet probe follows (offset 0: the marker precedes it). Offset 508
 * cannot happen: an FPDU never starts 4 octets after a marker (that marker
 * would belong to the FPDU before, ahead of its CRC). The last pair makes
 * a marker fall right after the pad of a 98-octet ULPDU.
 */
static int marker_plan(__u32 *plan)
{
	__u32 pos = 0, g, len, want, probe;
	int n = 0;

	for (g = 0; g <= 508; g += 4) {
		want = g == 508 ? 512 - 100 : (512 - g) % 512;
		probe = g == 508 ? 98 : 600;
		for (len = 1; len < 5000; len++)
			if ((pos + mpa_fpdu_wire_len(pos, len, true)) % 512 == want)
				break;
		plan[n++] = len;
		pos += mpa_fpdu_wire_len(pos, len, true);
		plan[n++] = probe;
		pos += mpa_fpdu_wire_len(pos, probe, true);
	}
	return n;
}

static int cover_complete(const struct cover *cv)
{
	int i;

	for (i = 1; i < 127; i++)
		if (!cv->inside[i])
			return 0;
	return cv->between && cv->after_pad;
}

TEST_F(framing, markers_everywhere_tx)
{
	__u32 pos = 0, plain = 0, plan[300], s;
	__u64 octets = 0;
	struct cover cv = {};
	struct mpa_stats st;
	int i, n = marker_plan(plan);

	mt_fill(ubuf, sizeof(ubuf), 15);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_M | MPA_FLAG_C, 0));
	for (i = 0; i < n; i++) {
		s = plan[i];
		cover_fpdu(&cv, pos, s);
		plain += 2 + s + mpa_pad_len(s) + 4;
		octets += s;
		ASSERT_EQ(0, tx_check(self->fds[0], self->fds[1], &pos, true, true, ubuf + i, s));
	}
	EXPECT_TRUE(cover_complete(&cv));
	st = iw_mpa_stats_of(self->fds[0]);
	EXPECT_EQ(n, st.tx_fpdus);
	EXPECT_EQ(octets, st.tx_octets);
	EXPECT_EQ((pos - plain) / 4, st.tx_markers);
}

TEST_F(framing, markers_everywhere_rx)
{
	__u32 pos = 0, plan[300];
	struct cover cv = {};
	int i, n = marker_plan(plan);

	mt_fill(ubuf, sizeof(ubuf), 16);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, MPA_F_MARKERS, MPA_FLAG_C, 0));
	for (i = 0; i < n; i++) {
		cover_fpdu(&cv, pos, plan[i]);
		ASSERT_EQ(0, rx_check(self->fds[0], self->fds[1], &pos, true, true, ubuf + i,
				      plan[i]));
	}
	EXPECT_TRUE(cover_complete(&cv));
}

TEST_F(framing, markers_everywhere_module_to_module)
{
	__u32 pos = 0, plan[300], s;
	struct cover cv = {};
	int i, fl, n = marker_plan(plan);

	mt_fill(ubuf, sizeof(ubuf), 17);
	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, 0, MPA_F_MARKERS, RAW_TMO_MS));
	for (i = 0; i < n; i++) {
		s = plan[i];
		cover_fpdu(&cv, pos, s);
		pos += mpa_fpdu_wire_len(pos, s, true);
		ASSERT_EQ(s, send(self->fds[0], ubuf + i, s, 0));
		fl = 0;
		ASSERT_EQ(s, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl));
		ASSERT_EQ(0, memcmp(rbuf, ubuf + i, s));
		ASSERT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	}
	EXPECT_TRUE(cover_complete(&cv));
	EXPECT_EQ(iw_mpa_stats_of(self->fds[0]).tx_markers,
		  iw_mpa_stats_of(self->fds[1]).rx_markers);
}

TEST_F(framing, poll_only_for_a_whole_ulpdu)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pollfd p;
	__u32 pos = 0;
	int n, ep, fl = 0;

	mt_fill(ubuf, 3000, 18);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, MPA_F_MARKERS, MPA_FLAG_C, 0));
	ep = epoll_create1(0);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fds[0], &ev));
	n = mt_enc(wbuf, sizeof(wbuf), pos, true, true, ubuf, 3000);
	ASSERT_GT(n, 3000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n / 2));
	p.fd = self->fds[0];
	p.events = POLLIN;
	EXPECT_EQ(0, poll(&p, 1, 300));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 100));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf + n / 2, n - n / 2));
	EXPECT_EQ(1, poll(&p, 1, RAW_TMO_MS));
	EXPECT_EQ(POLLIN, p.revents & (POLLIN | POLLERR | POLLHUP));
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, RAW_TMO_MS));
	EXPECT_EQ(3000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 3000));
	EXPECT_EQ(0, poll(&p, 1, 100));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	close(ep);
}

/*
 * Markers off, a recv() leaves whole FPDUs in TCP for the next recv() to
 * copy straight to its caller (MpaRxDirect), but parses the start of an
 * FPDU into the socket's buffer at once: poll() still reports POLLIN only
 * for a whole ULPDU, after a recv() too, also when a whole FPDU and the
 * start of the next came together.
 */
TEST_F(framing, poll_only_for_a_whole_ulpdu_after_recv)
{
	struct pollfd p;
	int n1, n2, fl = 0;

	mt_fill(ubuf, 3000, 19);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	p.fd = self->fds[0];
	p.events = POLLIN;
	n1 = ref_fpdu(wbuf, sizeof(wbuf), 0, false, true, ubuf, 1000);
	n2 = ref_fpdu(wbuf + n1, sizeof(wbuf) - n1, 0, false, true, ubuf + 1000, 2000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n1));
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 1000));
	/* half an FPDU after the recv(): not readable */
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf + n1, n2 / 2));
	EXPECT_EQ(0, poll(&p, 1, 300));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf + n1 + n2 / 2, n2 - n2 / 2));
	EXPECT_EQ(1, poll(&p, 1, RAW_TMO_MS));
	EXPECT_EQ(2000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 1000, 2000));
	/* a whole FPDU and half the next in one write */
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n1 + n2 / 2));
	EXPECT_EQ(1, poll(&p, 1, RAW_TMO_MS));
	EXPECT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 1000));
	EXPECT_EQ(0, poll(&p, 1, 300));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf + n1 + n2 / 2, n2 - n2 / 2));
	EXPECT_EQ(2000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 1000, 2000));
	EXPECT_EQ(4, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
}

/*
 * The ULPDUs after a recv() wait in TCP: a recv() into a bad address
 * fails with EFAULT and consumes nothing, a short buffer gets MSG_TRUNC
 * and loses the rest of that ULPDU only, MSG_PEEK leaves it, and a bad
 * CRC is MPA error 2 (EBADMSG) as on the buffered path.
 */
TEST_F(framing, ulpdus_left_in_tcp)
{
	char small[10];
	int off, fl = 0;

	mt_fill(ubuf, 5000, 20);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	off = ref_fpdus(5, 1000);
	ASSERT_LT(0, off);
	/* the last FPDU's CRC is wrong */
	wbuf[off - 1] ^= 0x01;
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, off));
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 1000));
	EXPECT_EQ(-1, recv(self->fds[0], (void *)8, 1000, MSG_DONTWAIT));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_PEEK, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 1000, 1000));
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 1000, 1000));
	fl = 0;
	ASSERT_EQ(10, mt_recv(self->fds[0], small, sizeof(small), 0, &fl));
	EXPECT_EQ(MSG_EOR | MSG_TRUNC, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(0, memcmp(small, ubuf + 2000, 10));
	fl = 0;
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 3000, 1000));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(MPA_ERR_CRC, iw_mpa_info_of(self->fds[0]).error);
	EXPECT_EQ(4, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	EXPECT_EQ(1, iw_mpa_stats_of(self->fds[0]).rx_crc_errors);
}

/*
 * A small FPDU left in TCP is checked and copied from one copy of it: a
 * recv() into a bad address fails with EFAULT and consumes nothing, the
 * next gets the ULPDU, and a small FPDU with a bad CRC is error 2.
 */
TEST_F(framing, small_ulpdu_left_in_tcp)
{
	int off, fl = 0;

	mt_fill(ubuf, 30, 25);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	/* 16 octets each */
	off = ref_fpdus(3, 10);
	ASSERT_EQ(48, off);
	wbuf[off - 1] ^= 0x80;
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, 16));
	ASSERT_EQ(10, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf + 16, 32));
	ASSERT_EQ(0, mt_all_acked(self->fds[1]));
	EXPECT_EQ(-1, recv(self->fds[0], (void *)8, 100, 0));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(10, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 10, 10));
	EXPECT_EQ(-1, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(2, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	EXPECT_EQ(1, iw_mpa_stats_of(self->fds[0]).rx_crc_errors);
}

/*
 * FPDUs copied straight from TCP are told to TCP as read once the skb
 * that holds them is all read, not one by one: while the next FPDU lies
 * in the same skb, TCP's unread count (SIOCINQ) still counts the ones
 * taken; once the last is taken it is 0, poll() reports nothing and a
 * close() sends a FIN, not the reset of a close with unread data. A
 * MSG_PEEK in between sees the next ULPDU, and the count drops to what
 * is left. One write of five FPDUs is one skb on loopback.
 */
TEST_F(framing, taken_fpdus_told_to_tcp_per_skb)
{
	struct pollfd p = { .events = POLLIN };
	int off, i, inq, fl = 0;

	mt_fill(ubuf, 5000, 26);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	off = ref_fpdus(5, 1000);
	ASSERT_EQ(5 * 1008, off);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, off));
	p.fd = self->fds[0];
	ASSERT_EQ(1, poll(&p, 1, RAW_TMO_MS));
	/* the first is parsed into the socket's buffer on arrival */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
		EXPECT_EQ(0, memcmp(rbuf, ubuf + i * 1000, 1000));
		ASSERT_EQ(0, ioctl(self->fds[0], SIOCINQ, &inq));
		EXPECT_EQ(4 * 1008, inq);
	}
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), MSG_PEEK, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 3000, 1000));
	ASSERT_EQ(0, ioctl(self->fds[0], SIOCINQ, &inq));
	EXPECT_EQ(1008, inq);
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 3000, 1000));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 4000, 1000));
	ASSERT_EQ(0, ioctl(self->fds[0], SIOCINQ, &inq));
	EXPECT_EQ(0, inq);
	EXPECT_EQ(0, poll(&p, 1, 100));
	EXPECT_EQ(5, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	/* nothing unread: the close is a FIN */
	ASSERT_EQ(0, close(self->fds[0]));
	self->fds[0] = -1;
	EXPECT_EQ(0, recv(self->fds[1], rbuf, sizeof(rbuf), 0));
}

struct reader {
	int fd;
	ssize_t n;
	__u8 buf[2000];
};

static void *reader_thread(void *arg)
{
	struct reader *r = arg;

	r->n = recv(r->fd, r->buf, sizeof(r->buf), 0);
	return NULL;
}

/*
 * A reader blocked in recv() after a recv() (nothing left in TCP): a whole
 * FPDU wakes it and goes straight to it; an FPDU that comes in two pieces
 * is parsed into the socket's buffer as its first piece arrives, and the
 * reader wakes only when it is whole.
 */
TEST_F(framing, blocked_reader_whole_and_split_fpdu)
{
	struct timeval tv = { .tv_sec = 5 };
	struct reader r;
	pthread_t t;
	int n1, n2, fl = 0;

	mt_fill(ubuf, 3000, 23);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	n1 = ref_fpdu(wbuf, sizeof(wbuf), 0, false, true, ubuf, 1000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n1));
	ASSERT_EQ(1000, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, &fl));
	/* a whole FPDU */
	r = (struct reader){ .fd = self->fds[0], .n = -2 };
	ASSERT_EQ(0, pthread_create(&t, NULL, reader_thread, &r));
	usleep(200000);
	n1 = ref_fpdu(wbuf, sizeof(wbuf), 0, false, true, ubuf + 1000, 1000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n1));
	pthread_join(t, NULL);
	ASSERT_EQ(1000, r.n);
	EXPECT_EQ(0, memcmp(r.buf, ubuf + 1000, 1000));
	/* the next in two pieces, 200 ms apart */
	r = (struct reader){ .fd = self->fds[0], .n = -2 };
	ASSERT_EQ(0, pthread_create(&t, NULL, reader_thread, &r));
	usleep(200000);
	n2 = ref_fpdu(wbuf, sizeof(wbuf), 0, false, true, ubuf + 2000, 1000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, 7));
	usleep(200000);
	EXPECT_EQ(-2, r.n);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf + 7, n2 - 7));
	pthread_join(t, NULL);
	ASSERT_EQ(1000, r.n);
	EXPECT_EQ(0, memcmp(r.buf, ubuf + 2000, 1000));
	EXPECT_EQ(3, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
}

/*
 * Two readers blocked in recv() on one socket, two ULPDUs in one write:
 * each reader gets one, whichever reader's recv() left the other's in TCP.
 */
TEST_F(framing, two_readers_blocked)
{
	struct timeval tv = { .tv_sec = 5 };
	struct reader r[2];
	pthread_t t[2];
	int n1, n2, i;

	mt_fill(ubuf, 2000, 21);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	for (i = 0; i < 2; i++) {
		r[i].fd = self->fds[0];
		r[i].n = -2;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, reader_thread, &r[i]));
	}
	usleep(200000);
	n1 = ref_fpdu(wbuf, sizeof(wbuf), 0, false, true, ubuf, 1000);
	n2 = ref_fpdu(wbuf + n1, sizeof(wbuf) - n1, 0, false, true, ubuf + 1000, 1000);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, n1 + n2));
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(1000, r[0].n);
	ASSERT_EQ(1000, r[1].n);
	i = memcmp(r[0].buf, ubuf, 1000) ? 1 : 0;
	EXPECT_EQ(0, memcmp(r[i].buf, ubuf, 1000));
	EXPECT_EQ(0, memcmp(r[!i].buf, ubuf + 1000, 1000));
}

/*
 * sendmmsg(): the kernel marks all messages of a call but the last
 * MSG_BATCH, which MPA takes as MSG_MORE. 32 ULPDUs of 64 octets (72 on
 * the wire each) then leave in one TCP segment, the last one pushes it;
 * one send() each gives a segment each on loopback. Message boundaries,
 * order and contents stay those of 32 sends.
 */
TEST_F(framing, sendmmsg_packs_small_ulpdus)
{
	struct mmsghdr v[32];
	struct iovec iov[32];
	long long segs;
	int i, fl;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, 0, 0, RAW_TMO_MS));
	mt_fill(ubuf, 32 * 64, 20);
	ASSERT_EQ(64, send(self->fds[0], ubuf, 64, 0));
	ASSERT_EQ(64, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
	memset(v, 0, sizeof(v));
	for (i = 0; i < 32; i++) {
		iov[i].iov_base = ubuf + i * 64;
		iov[i].iov_len = 64;
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	/* an ACK that comes during the batch pushes what TCP holds */
	ASSERT_EQ(0, mt_all_acked(self->fds[0]));
	segs = iw_tcp_data_segs_out(self->fds[0]);
	ASSERT_LT(0, segs);
	ASSERT_EQ(32, sendmmsg(self->fds[0], v, 32, 0));
	for (i = 0; i < 32; i++) {
		EXPECT_EQ(64, v[i].msg_len);
		fl = 0;
		ASSERT_EQ(64, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl));
		EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
		EXPECT_EQ(0, memcmp(rbuf, ubuf + i * 64, 64));
	}
	EXPECT_EQ(segs + 1, iw_tcp_data_segs_out(self->fds[0]));
	EXPECT_EQ(33, iw_mpa_stats_of(self->fds[0]).tx_fpdus);
	/* one send() each: one segment each */
	segs = iw_tcp_data_segs_out(self->fds[0]);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(64, send(self->fds[0], ubuf, 64, 0));
		ASSERT_EQ(64, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
	}
	EXPECT_EQ(segs + 4, iw_tcp_data_segs_out(self->fds[0]));
}

/*
 * Nagle is the socket owner's choice (RFC 5044 appendix A.2): MPA leaves
 * TCP_NODELAY as it was. In a namespace whose loopback delays every
 * packet by 100 ms and with autocorking off, eight 64-octet send()s
 * leave with Nagle on as two segments (the first at once, the other
 * seven packed behind it when its ACK comes), and with TCP_NODELAY as
 * eight (within the initial congestion window of ten, so that none
 * waits for it). Each arrives as a message of its own either way.
 */
TEST(nagle_is_the_owners_choice)
{
	int fds[2] = { -1, -1 }, one = 1, v, i, k, fl;
	socklen_t len = sizeof(v);
	long long segs;
	FILE *f;

	ASSERT_EQ(0, mt_new_netns());
	ASSERT_EQ(0, system("tc qdisc add dev lo root netem delay 100ms"));
	f = fopen("/proc/sys/net/ipv4/tcp_autocorking", "w");
	ASSERT_NE(NULL, f);
	ASSERT_LT(0, fputs("0", f));
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, fds, 0, 0, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &v, &len));
	EXPECT_EQ(0, v);
	mt_fill(ubuf, 8 * 64, 21);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, mt_all_acked(fds[0]));
		segs = iw_tcp_data_segs_out(fds[0]);
		ASSERT_LT(0, segs);
		for (i = 0; i < 8; i++)
			ASSERT_EQ(64, send(fds[0], ubuf + i * 64, 64, 0));
		for (i = 0; i < 8; i++) {
			fl = 0;
			ASSERT_EQ(64, mt_recv(fds[1], rbuf, sizeof(rbuf), 0, &fl));
			EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
			EXPECT_EQ(0, memcmp(rbuf, ubuf + i * 64, 64));
		}
		EXPECT_EQ(segs + (k ? 8 : 2), iw_tcp_data_segs_out(fds[0]));
		ASSERT_EQ(0, setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	}
	iw_close_pair(fds);
}

/*
 * MPA_CMSG_LENS: one sendmsg() sends several ULPDUs, of the lengths its
 * control message lists; the peer receives each as a message of its own.
 * Lengths that do not add up, a bad control message or a first ULPDU
 * over the MULPDU send nothing; a later one over the MULPDU ends the call
 * with a short count on a ULPDU boundary. Control messages of other
 * levels are ignored. Markers on, so that FPDUs have every length.
 */
TEST_F(framing, cmsg_lens_sends_many_ulpdus)
{
	__u32 lens[5] = { 10, 0, 1000, 0, 1 }, bad[3], mulpdu;
	size_t total = 0, off = 0, i;
	__u64 fpdus;
	int fl;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS,
				 MPA_F_MARKERS, RAW_TMO_MS));
	mulpdu = iw_mpa_mulpdu(self->fds[0]);
	ASSERT_LE(1011, mulpdu);
	lens[3] = mulpdu;
	for (i = 0; i < 5; i++)
		total += lens[i];
	mt_fill(wbuf, total, 21);
	fpdus = iw_mpa_stats_of(self->fds[0]).tx_fpdus;
	ASSERT_EQ(total, mt_send_lens(self->fds[0], wbuf, total, SOL_MPA, MPA_CMSG_LENS,
				      lens, 5, 0));
	for (i = 0; i < 5; i++) {
		fl = 0;
		memset(rbuf, 0, lens[i]);
		ASSERT_EQ(lens[i], mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl))
			TH_LOG("ULPDU %zu", i);
		EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
		EXPECT_EQ(0, memcmp(rbuf, wbuf + off, lens[i])) TH_LOG("ULPDU %zu", i);
		off += lens[i];
	}
	EXPECT_EQ(fpdus + 5, iw_mpa_stats_of(self->fds[0]).tx_fpdus);

	/* nothing goes */
	bad[0] = 10;
	bad[1] = 10;
	EXPECT_EQ(-1, mt_send_lens(self->fds[0], wbuf, 25, SOL_MPA, MPA_CMSG_LENS, bad, 2, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mt_send_lens(self->fds[0], wbuf, 0, SOL_MPA, MPA_CMSG_LENS, bad, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mt_send_lens(self->fds[0], wbuf, 20, SOL_MPA, 99, bad, 2, 0));
	EXPECT_EQ(EINVAL, errno);
	/* over any MULPDU, even one that grew since (lo on 6.12) */
	bad[0] = 65536;
	EXPECT_EQ(-1, mt_send_lens(self->fds[0], wbuf, 65536, SOL_MPA, MPA_CMSG_LENS,
				   bad, 1, 0));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(fpdus + 5, iw_mpa_stats_of(self->fds[0]).tx_fpdus);

	/* the second ULPDU is too large: the first went */
	bad[0] = 100;
	bad[1] = 65536;
	bad[2] = 5;
	EXPECT_EQ(100, mt_send_lens(self->fds[0], wbuf, 65641, SOL_MPA,
				    MPA_CMSG_LENS, bad, 3, 0));
	/* another level's control message: one ULPDU as without it */
	EXPECT_EQ(300, mt_send_lens(self->fds[0], wbuf + 100, 300, SOL_IP, 1, bad, 1, 0));
	EXPECT_EQ(100, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(0, memcmp(rbuf, wbuf, 100));
	EXPECT_EQ(300, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
	EXPECT_EQ(0, memcmp(rbuf, wbuf + 100, 300));
	EXPECT_EQ(fpdus + 7, iw_mpa_stats_of(self->fds[0]).tx_fpdus);
	EXPECT_EQ(-1, recv(self->fds[1], rbuf, sizeof(rbuf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
}

/*
 * MPA_RECV_LENS: one recvmsg() returns the ULPDUs that wait whole, one
 * after the other, as many as fit in the buffer and the control buffer,
 * and their lengths in an MPA_CMSG_LENS control message; MSG_PEEK returns
 * the first only; without a control buffer one ULPDU and MSG_CTRUNC.
 * Without markers the ULPDUs after the first come straight from TCP
 * (mpa_rx_direct()), with markers each is decoded into rx.buf first.
 */
static void recv_lens_many(struct __test_metadata *_metadata, int fds[2], int family,
			   __u32 mpa_flags)
{
	__u32 lens[5] = { 10, 0, 1000, 300, 1 }, more[3] = { 5, 6, 7 }, got[16], on = 1, v;
	socklen_t vl = sizeof(v);
	int n, fl;

	ASSERT_EQ(0, iw_mpa_pair(family, fds, mpa_flags, mpa_flags, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(fds[1], SOL_MPA, MPA_RECV_LENS, &v, &vl));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_RECV_LENS, &on, sizeof(on)));
	ASSERT_EQ(0, getsockopt(fds[1], SOL_MPA, MPA_RECV_LENS, &v, &vl));
	EXPECT_EQ(1, v);
	EXPECT_EQ(-1, setsockopt(fds[1], SOL_MPA, MPA_RECV_LENS, &on, 2));
	EXPECT_EQ(EINVAL, errno);
	mt_fill(wbuf, 2000, 22);
	ASSERT_EQ(1311, mt_send_lens(fds[0], wbuf, 1311, SOL_MPA, MPA_CMSG_LENS, lens, 5, 0));
	ASSERT_EQ(0, mt_all_acked(fds[0]));

	/* 10, 0 and 1000 fit in 1100 octets, 300 does not */
	memset(rbuf, 0, 2000);
	ASSERT_EQ(1010, mt_recv_lens(fds[1], rbuf, 1100, 16, 0, got, &n, &fl));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC | MSG_CTRUNC));
	ASSERT_EQ(3, n);
	EXPECT_EQ(10, got[0]);
	EXPECT_EQ(0, got[1]);
	EXPECT_EQ(1000, got[2]);
	EXPECT_EQ(0, memcmp(rbuf, wbuf, 1010));
	/* room for one length: one ULPDU */
	ASSERT_EQ(300, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 1, 0, got, &n, &fl));
	ASSERT_EQ(1, n);
	EXPECT_EQ(300, got[0]);
	EXPECT_EQ(0, memcmp(rbuf, wbuf + 1010, 300));
	/* no control buffer: one ULPDU, MSG_CTRUNC */
	ASSERT_EQ(1, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 0, 0, got, &n, &fl));
	EXPECT_EQ(MSG_EOR | MSG_CTRUNC, fl & (MSG_EOR | MSG_TRUNC | MSG_CTRUNC));
	EXPECT_EQ(wbuf[1310], rbuf[0]);

	/* MSG_PEEK: the first only, left in place */
	ASSERT_EQ(18, mt_send_lens(fds[0], wbuf, 18, SOL_MPA, MPA_CMSG_LENS, more, 3, 0));
	ASSERT_EQ(0, mt_all_acked(fds[0]));
	ASSERT_EQ(5, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 16, MSG_PEEK, got, &n, &fl));
	ASSERT_EQ(1, n);
	EXPECT_EQ(5, got[0]);
	ASSERT_EQ(18, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
	ASSERT_EQ(3, n);
	EXPECT_EQ(5, got[0]);
	EXPECT_EQ(6, got[1]);
	EXPECT_EQ(7, got[2]);
	EXPECT_EQ(0, memcmp(rbuf, wbuf, 18));

	/* off again: one ULPDU per recvmsg(), no control message */
	on = 0;
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_RECV_LENS, &on, sizeof(on)));
	ASSERT_EQ(18, mt_send_lens(fds[0], wbuf, 18, SOL_MPA, MPA_CMSG_LENS, more, 3, 0));
	ASSERT_EQ(0, mt_all_acked(fds[0]));
	ASSERT_EQ(5, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
	EXPECT_EQ(-1, n);
	EXPECT_EQ(6, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
	EXPECT_EQ(7, mt_recv_lens(fds[1], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
}

TEST_F(framing, recv_lens_returns_many_ulpdus)
{
	recv_lens_many(_metadata, self->fds, variant->family, 0);
	iw_close_pair(self->fds);
	recv_lens_many(_metadata, self->fds, variant->family, MPA_F_MARKERS);
}

/*
 * MPA_RECV_LENS stops before a bad FPDU: the ULPDUs before it come in one
 * recvmsg(), the next one reports the CRC error (EBADMSG), and nothing of
 * the bad FPDU or of what follows it is delivered.
 */
TEST_F(framing, recv_lens_stops_at_crc_error)
{
	__u32 got[16], on = 1;
	int n, fl, off;

	mt_fill(ubuf, 500, 23);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_RECV_LENS, &on, sizeof(on)));
	off = ref_fpdus(5, 100);
	ASSERT_LT(0, off);
	/* the fourth FPDU's CRC is wrong */
	wbuf[off / 5 * 4 - 1] ^= 0x01;
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, off));
	ASSERT_EQ(0, mt_all_acked(self->fds[1]));
	ASSERT_EQ(300, mt_recv_lens(self->fds[0], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
	ASSERT_EQ(3, n);
	EXPECT_EQ(100, got[2]);
	EXPECT_EQ(0, memcmp(rbuf, ubuf, 300));
	EXPECT_EQ(-1, mt_recv_lens(self->fds[0], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(3, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	EXPECT_EQ(1, iw_mpa_stats_of(self->fds[0]).rx_crc_errors);
}

/*
 * MPA_RECV_LENS with a buffer that faults inside the third ULPDU: the call
 * returns the two before it; the third and the fourth stay in TCP for the
 * next call, and each FPDU is counted once. The ULPDUs after the first
 * are read from TCP at growing offsets and consumed together at the end.
 */
TEST_F(framing, recv_lens_fault_keeps_the_rest)
{
	long pg = sysconf(_SC_PAGESIZE);
	__u32 got[16], on = 1;
	int n, fl, off;
	char *map;

	mt_fill(ubuf, 4000, 24);
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_RECV_LENS, &on, sizeof(on)));
	off = ref_fpdus(4, 1000);
	ASSERT_LT(0, off);
	ASSERT_EQ(0, iw_writen(self->fds[1], wbuf, off));
	ASSERT_EQ(0, mt_all_acked(self->fds[1]));
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + pg, pg, PROT_NONE));
	/* 2500 octets before the hole */
	ASSERT_EQ(2000, mt_recv_lens(self->fds[0], map + pg - 2500, 4000, 16, 0, got, &n, &fl));
	ASSERT_EQ(2, n);
	EXPECT_EQ(1000, got[1]);
	EXPECT_EQ(0, memcmp(map + pg - 2500, ubuf, 2000));
	ASSERT_EQ(2000, mt_recv_lens(self->fds[0], rbuf, sizeof(rbuf), 16, 0, got, &n, &fl));
	ASSERT_EQ(2, n);
	EXPECT_EQ(0, memcmp(rbuf, ubuf + 2000, 2000));
	EXPECT_EQ(4, iw_mpa_stats_of(self->fds[0]).rx_fpdus);
	EXPECT_EQ(-1, recv(self->fds[0], rbuf, sizeof(rbuf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	munmap(map, 2 * pg);
}

TEST_F(framing, stats_are_exact)
{
	__u64 markers = 0;
	struct mpa_stats is, rs;
	__u32 pos = 0;
	int i;

	mt_fill(ubuf, 1000, 19);
	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS, MPA_F_MARKERS,
				 RAW_TMO_MS));
	for (i = 0; i < 10; i++) {
		__u32 w = mpa_fpdu_wire_len(pos, 1000, true);

		markers += (w - 2 - 1000 - mpa_pad_len(1000) - 4) / 4;
		pos += w;
		ASSERT_EQ(1000, send(self->fds[0], ubuf, 1000, 0));
		ASSERT_EQ(1000, mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, NULL));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(100, send(self->fds[1], ubuf, 100, 0));
		ASSERT_EQ(100, mt_recv(self->fds[0], rbuf, sizeof(rbuf), 0, NULL));
	}
	is = iw_mpa_stats_of(self->fds[0]);
	rs = iw_mpa_stats_of(self->fds[1]);
	EXPECT_EQ(10, is.tx_fpdus);
	EXPECT_EQ(10000, is.tx_octets);
	EXPECT_EQ(markers, is.tx_markers);
	EXPECT_EQ(3, is.rx_fpdus);
	EXPECT_EQ(300, is.rx_octets);
	EXPECT_EQ(1, is.rx_markers);	/* the one at the start of the Responder's stream */
	EXPECT_EQ(10, rs.rx_fpdus);
	EXPECT_EQ(10000, rs.rx_octets);
	EXPECT_EQ(markers, rs.rx_markers);
	EXPECT_EQ(3, rs.tx_fpdus);
	EXPECT_EQ(300, rs.tx_octets);
	EXPECT_EQ(1, rs.tx_markers);
	EXPECT_EQ(0, is.rx_crc_errors + rs.rx_crc_errors);
	EXPECT_EQ(0, is.rx_marker_errors + rs.rx_marker_errors);
}

/* ---- bulk transfer ---- */

#define PAT_LEN		1048573	/* prime: the pattern does not line up with ULPDUs */

static __u8 *pattern;

struct bulk {
	int fd;
	__u64 total;
	__u32 chunk;
	int err;
};

static void *bulk_send(void *arg)
{
	struct bulk *b = arg;
	__u64 off = 0;

	while (off < b->total) {
		__u32 n = b->total - off < b->chunk ? b->total - off : b->chunk;

		if (send(b->fd, pattern + off % PAT_LEN, n, 0) != (ssize_t)n) {
			b->err = errno;
			break;
		}
		off += n;
	}
	shutdown(b->fd, SHUT_WR);
	return NULL;
}

static __u64 bulk_bytes(void)
{
	const char *e = getenv("MPA_BULK_MIB");

	return (e ? strtoull(e, NULL, 0) : 256) << 20;
}

TEST_F_TIMEOUT(framing, bulk_256mib_markers_crc, 300)
{
	struct bulk b = { .total = bulk_bytes() };
	__u64 got = 0, fpdus = 0;
	socklen_t len = sizeof(b.chunk);
	struct timespec t0, t1;
	pthread_t th;
	ssize_t n;
	int fl;

	pattern = malloc(PAT_LEN + 65536);
	ASSERT_NE(NULL, pattern);
	mt_fill(pattern, PAT_LEN + 65536, 20);
	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS, MPA_F_MARKERS,
				 RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_MULPDU, &b.chunk, &len));
	b.fd = self->fds[0];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&th, NULL, bulk_send, &b));
	for (;;) {
		fl = 0;
		n = mt_recv(self->fds[1], rbuf, sizeof(rbuf), 0, &fl);
		if (n <= 0)
			break;
		if (got + n > b.total || memcmp(rbuf, pattern + got % PAT_LEN, n) ||
		    !(fl & MSG_EOR))
			break;
		got += n;
		fpdus++;
	}
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_EQ(0, n);
	EXPECT_EQ(0, b.err);
	EXPECT_EQ(b.total, got);
	EXPECT_EQ(fpdus, iw_mpa_stats_of(self->fds[1]).rx_fpdus);
	EXPECT_EQ(b.total, iw_mpa_stats_of(self->fds[1]).rx_octets);
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[1]).rx_crc_errors);
	EXPECT_TRUE(iw_mpa_info_of(self->fds[1]).flags & MPA_I_PEER_FIN);
	TH_LOG("%llu MiB in %ld ms, %llu FPDUs of up to %u octets",
	       (unsigned long long)(b.total >> 20),
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000),
	       (unsigned long long)fpdus, b.chunk);
	free(pattern);
}

/* 256 connections started together, each exchanging a few ULPDUs */
TEST(many_connections)
{
	enum { N = 256 };
	struct rlimit rl = { .rlim_cur = 4 * N + 64, .rlim_max = 4 * N + 64 };
	static int fds[N][2];
	char buf[64], want[64];
	int i, k;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, iw_loopback_pair(i & 1 ? AF_INET6 : AF_INET, fds[i]));
		ASSERT_EQ(0, iw_mpa_attach(fds[i][0]));
		ASSERT_EQ(0, iw_mpa_attach(fds[i][1]));
		ASSERT_EQ(0, iw_mpa_start(fds[i][1], MPA_ROLE_RESPONDER, i & 2 ? MPA_F_MARKERS : 0,
					  NULL, 0, NULL, 0));
		ASSERT_EQ(0, iw_mpa_start(fds[i][0], MPA_ROLE_INITIATOR, i & 4 ? MPA_F_MARKERS : 0,
					  &i, sizeof(i), NULL, 0));
	}
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, iw_mpa_wait_state(fds[i][1], MPA_S_REQ_RCVD, RAW_TMO_MS));
		ASSERT_EQ(0, setsockopt(fds[i][1], SOL_MPA, MPA_ACCEPT, &i, sizeof(i)));
	}
	for (k = 0; k < 3; k++) {
		for (i = 0; i < N; i++) {
			int len = snprintf(want, sizeof(want), "conn %d ulpdu %d", i, k);

			ASSERT_EQ(len, send(fds[i][0], want, len, 0));
		}
		for (i = 0; i < N; i++) {
			int len = snprintf(want, sizeof(want), "conn %d ulpdu %d", i, k);

			ASSERT_EQ(len, mt_recv(fds[i][1], buf, sizeof(buf), 0, NULL));
			ASSERT_EQ(0, memcmp(buf, want, len));
			ASSERT_EQ(len, send(fds[i][1], want, len, 0));
		}
		for (i = 0; i < N; i++) {
			int len = snprintf(want, sizeof(want), "conn %d ulpdu %d", i, k);

			ASSERT_EQ(len, mt_recv(fds[i][0], buf, sizeof(buf), 0, NULL));
			ASSERT_EQ(0, memcmp(buf, want, len));
		}
	}
	for (i = 0; i < N; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
}

TEST_HARNESS_MAIN
