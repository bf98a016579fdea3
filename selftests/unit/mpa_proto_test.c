// SPDX-License-Identifier: GPL-2.0
/*
 * User-space unit tests of the pure MPA protocol logic (mpa/mpa_proto.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <linux/crc32c.h>
#include <asm/unaligned.h>
#include "mpa_proto.h"

#include "kselftest_harness.h"

/* ---- helpers ---- */

struct src_ctx {
	const u8 *src;
	u32 off;
	u32 calls;
	int fail;	/* return this from the copy call number 'fail_at' */
	u32 fail_at;
};

static int src_copy(void *ctx, void *dst, u32 len)
{
	struct src_ctx *s = ctx;

	s->calls++;
	if (s->fail && s->calls == s->fail_at)
		return s->fail;
	memcpy(dst, s->src + s->off, len);
	s->off += len;
	return 0;
}

static int enc(u8 *out, u32 size, u32 pos, bool markers, bool crc,
	       const u8 *src, u32 len)
{
	struct src_ctx s = { .src = src };

	return mpa_fpdu_encode(out, size, pos, markers, crc, len, src_copy, &s);
}

/* brute force: markers in the wire image of an FPDU of 'wire' octets */
static u32 count_markers(u32 pos, u32 wire, bool markers)
{
	u32 i, n = 0;

	if (!markers)
		return 0;
	for (i = 0; i < wire; i++)
		if (((pos + i) % 512) == 0)
			n++;
	return n;
}

struct dec_out {
	u8 *data;	/* concatenated ULPDUs */
	u32 len;
	u32 lens[4096];
	u32 n;
	u32 first_consumed;	/* octets consumed up to the first ULPDU */
	int ret;		/* last return value */
};

/*
 * Feed 'len' octets in chunks of 'split' (0: whole), collect every ULPDU.
 * Returns the number of octets consumed before an error or the end.
 */
static u32 decode(struct mpa_dec *rx, const u8 *wire, u32 len, u32 split,
		  struct dec_out *d)
{
	u32 off = 0, total = 0;

	d->len = 0;
	d->n = 0;
	d->first_consumed = 0;
	d->ret = MPA_DEC_MORE;
	while (off < len) {
		u32 chunk = split ? split : len;
		u32 coff = 0;

		if (chunk > len - off)
			chunk = len - off;
		while (coff < chunk) {
			u32 used = 0;
			int ret = mpa_dec_feed(rx, wire + off + coff,
					      chunk - coff, &used);

			d->ret = ret;
			if (used > chunk - coff)
				abort();
			coff += used;
			total += used;
			if (ret == MPA_DEC_ERROR)
				return total;
			if (ret == MPA_DEC_ULPDU) {
				if (!d->n)
					d->first_consumed = total;
				memcpy(d->data + d->len, rx->buf,
				       rx->ulpdu_len);
				d->len += rx->ulpdu_len;
				d->lens[d->n++] = rx->ulpdu_len;
			} else if (coff != chunk) {
				abort();
			}
		}
		off += chunk;
	}
	return total;
}

static u8 rxbuf[MPA_DEC_BUF_LEN];
static u8 outdata[1 << 22];
static u8 wirebuf[1 << 22];
static u8 srcbuf[1 << 22];

static struct dec_out dout = { .data = outdata };

static void fill_pattern(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = seed >> 16;
	}
}

/* RFC 5044 Figure 5 */
static const u8 fig5[52] = {
	0x00, 0x00, 0x00, 0x00,			/* marker */
	0x00, 0x2a,				/* ULPDU_Length 42 */
	0x41, 0x43,				/* DDP control */
	0x00, 0x00, 0x00, 0x00,			/* rsvd */
	0x00, 0x00, 0x00, 0x00,			/* queue 0 */
	0x00, 0x00, 0x00, 0x01,			/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,			/* MO 0 */
	[0x30] = 0x52, 0x23, 0x99, 0x83,	/* CRC */
};

/* RFC 5044 Figure 6, from stream octet 0x1ec */
static const u8 fig6[52] = {
	0x00, 0x2a,				/* 0x1ec ULPDU_Length */
	0x41, 0x43,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,			/* MSN 2 */
	0x00, 0x00, 0x00, 0x00,			/* 0x1fc MO */
	0x00, 0x00, 0x00, 0x14,			/* 0x200 marker */
	[0x30] = 0x84, 0x92, 0x58, 0x98,	/* 0x21c CRC */
};

static void fig_ulpdu(u8 *u, u8 msn)
{
	static const u8 hdr[18] = { 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
				    0, 0, 0, 0, 0, 0, 0, 0 };

	memset(u, 0, 42);
	memcpy(u, hdr, sizeof(hdr));
	u[13] = msn;
}

/* ---- RFC figures ---- */

TEST(fig5_encode)
{
	u8 u[42], out[64];

	fig_ulpdu(u, 1);
	ASSERT_EQ(52, mpa_fpdu_wire_len(0, 42, true));
	ASSERT_EQ(52, enc(out, sizeof(out), 0, true, true, u, 42));
	ASSERT_EQ(0, memcmp(out, fig5, 52));
	/* same FPDU without markers: the CRC no longer covers a marker */
	ASSERT_EQ(48, enc(out, sizeof(out), 0, false, true, u, 42));
	ASSERT_EQ(0, memcmp(out, fig5 + 4, 44));
	ASSERT_EQ(~crc32c(~0U, fig5 + 4, 44), get_unaligned_le32(out + 44));
	/* no CRC: the field is zero */
	ASSERT_EQ(52, enc(out, sizeof(out), 0, true, false, u, 42));
	ASSERT_EQ(0, memcmp(out, fig5, 48));
	ASSERT_EQ(0, get_unaligned_be32(out + 48));
}

TEST(fig6_encode)
{
	u8 u[42], out[64];

	fig_ulpdu(u, 2);
	ASSERT_EQ(52, mpa_fpdu_wire_len(0x1ec, 42, true));
	ASSERT_EQ(52, enc(out, sizeof(out), 0x1ec, true, true, u, 42));
	ASSERT_EQ(0, memcmp(out, fig6, 52));
	ASSERT_EQ(0x0014, get_unaligned_be16(out + 0x200 - 0x1ec + 2));
	ASSERT_EQ(0x84, out[0x21c - 0x1ec]);
	ASSERT_EQ(0x92, out[0x21d - 0x1ec]);
	ASSERT_EQ(0x58, out[0x21e - 0x1ec]);
	ASSERT_EQ(0x98, out[0x21f - 0x1ec]);
	/* the same stream position plus 2^32 - 512 * k gives the same image */
	ASSERT_EQ(52, enc(out, sizeof(out), 0x1ec - 0x200, true, true, u, 42));
	ASSERT_EQ(0, memcmp(out, fig6, 52));
}

TEST(fig5_fig6_decode)
{
	struct mpa_dec rx;
	u8 u[42];
	u32 used;

	mpa_dec_init(&rx, rxbuf, true, true);
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, fig5, 52, &used));
	ASSERT_EQ(52, used);
	ASSERT_EQ(42, rx.ulpdu_len);
	fig_ulpdu(u, 1);
	ASSERT_EQ(0, memcmp(rxbuf, u, 42));
	ASSERT_EQ(1, rx.nmarkers);
	ASSERT_EQ(1, rx.ulpdus);
	ASSERT_EQ(52, rx.pos);

	mpa_dec_init(&rx, rxbuf, true, true);
	rx.pos = 0x1ec;
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, fig6, 52, &used));
	ASSERT_EQ(52, used);
	ASSERT_EQ(42, rx.ulpdu_len);
	fig_ulpdu(u, 2);
	ASSERT_EQ(0, memcmp(rxbuf, u, 42));
	ASSERT_EQ(1, rx.nmarkers);
	ASSERT_EQ(0x220, rx.pos);
	ASSERT_EQ(0, rx.err);
}

TEST(fig_decode_bytewise)
{
	struct mpa_dec rx;
	u32 used, i;

	mpa_dec_init(&rx, rxbuf, true, true);
	rx.pos = 0x1ec;
	for (i = 0; i < 51; i++) {
		ASSERT_EQ(MPA_DEC_MORE, mpa_dec_feed(&rx, fig6 + i, 1, &used));
		ASSERT_EQ(1, used);
	}
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, fig6 + 51, 1, &used));
	ASSERT_EQ(42, rx.ulpdu_len);
}

/* ---- sizes, pads, positions ---- */

TEST(pad_lengths)
{
	static const u32 pads[4] = { 2, 1, 0, 3 };
	u8 u[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[32];
	struct mpa_dec rx;
	u32 len, used, i;

	for (len = 0; len < 8; len++) {
		u32 pad = pads[len % 4];
		u32 wire = 2 + len + pad + 4;

		ASSERT_EQ(pad, mpa_pad_len(len));
		ASSERT_EQ(0, wire % 4);
		ASSERT_EQ(wire, mpa_fpdu_wire_len(4, len, true));
		ASSERT_EQ(wire, mpa_fpdu_wire_len(4, len, false));
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(wire, enc(out, sizeof(out), 4, true, true, u, len));
		ASSERT_EQ(len, get_unaligned_be16(out));
		ASSERT_EQ(0, memcmp(out + 2, u, len));
		for (i = 0; i < pad; i++)
			ASSERT_EQ(0, out[2 + len + i]);
		ASSERT_EQ(~crc32c(~0U, out, 2 + len + pad),
			  get_unaligned_le32(out + 2 + len + pad));
		ASSERT_EQ(0xee, out[wire]);

		mpa_dec_init(&rx, rxbuf, true, true);
		rx.pos = 4;
		ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out, wire, &used));
		ASSERT_EQ(wire, used);
		ASSERT_EQ(len, rx.ulpdu_len);
		ASSERT_EQ(0, memcmp(rxbuf, u, len));
	}
}

TEST(zero_length_ulpdu)
{
	u8 out[16];
	struct mpa_dec rx;
	u32 used;

	ASSERT_EQ(12, enc(out, sizeof(out), 0, true, true, NULL, 0));
	ASSERT_EQ(0, get_unaligned_be32(out));
	ASSERT_EQ(0, get_unaligned_be32(out + 4));
	mpa_dec_init(&rx, rxbuf, true, true);
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out, 12, &used));
	ASSERT_EQ(12, used);
	ASSERT_EQ(0, rx.ulpdu_len);
}

/*
 * Every ULPDU size 0..2000 at every 4-aligned position mod 512, markers on
 * and off, decoded with the given chunk size.
 */
static int roundtrip_all(struct __test_metadata *_metadata, u32 split)
{
	struct mpa_dec rx;
	u32 len, pos, m;

	fill_pattern(srcbuf, 2000, 42);
	for (m = 0; m < 2; m++) {
		for (pos = 0; pos < 512; pos += 4) {
			for (len = 0; len <= 2000; len++) {
				u32 wire = mpa_fpdu_wire_len(pos, len, m);
				u32 plain = 2 + len + mpa_pad_len(len) + 4;
				u32 nm;

				if (len % 97 == 0 || pos % 64 == 0) {
					nm = count_markers(pos, wire, m);
					ASSERT_EQ(plain + 4 * nm, wire);
				}
				ASSERT_EQ(wire, enc(wirebuf, wire, pos, m, true,
						    srcbuf, len));
				mpa_dec_init(&rx, rxbuf, m, true);
				rx.pos = pos;
				ASSERT_EQ(wire, decode(&rx, wirebuf, wire, split,
						       &dout));
				ASSERT_EQ(MPA_DEC_ULPDU, dout.ret);
				ASSERT_EQ(1, dout.n);
				ASSERT_EQ(len, dout.lens[0]);
				ASSERT_EQ(0, memcmp(outdata, srcbuf, len));
				ASSERT_EQ((wire - plain) / 4, rx.nmarkers);
				ASSERT_EQ(pos + wire, rx.pos);
			}
		}
	}
	return 0;
}

FIXTURE(rt) {
	int unused;
};

FIXTURE_SETUP(rt)
{
}

FIXTURE_TEARDOWN(rt)
{
}

FIXTURE_VARIANT(rt) {
	u32 split;	/* 0: the whole FPDU at once */
};

FIXTURE_VARIANT_ADD(rt, split_1) {
	.split = 1,
};

FIXTURE_VARIANT_ADD(rt, split_3) {
	.split = 3,
};

FIXTURE_VARIANT_ADD(rt, split_7) {
	.split = 7,
};

FIXTURE_VARIANT_ADD(rt, split_512) {
	.split = 512,
};

FIXTURE_VARIANT_ADD(rt, whole) {
	.split = 0,
};

TEST_F_TIMEOUT(rt, all_sizes_all_positions, 600)
{
	roundtrip_all(_metadata, variant->split);
}

/* a stream of many FPDUs of pseudo-random sizes */
static u32 build_stream(u32 start, bool markers, bool crc, u32 seed,
			u32 nfpdu, u32 maxlen, u32 *lens, u32 *total_src)
{
	u32 off = 0, soff = 0, i;

	for (i = 0; i < nfpdu; i++) {
		u32 len;
		int w;

		seed = seed * 1103515245 + 12345;
		len = (seed >> 8) % (maxlen + 1);
		if (soff + len > sizeof(srcbuf) ||
		    off + len + 4096 > sizeof(wirebuf))
			abort();
		fill_pattern(srcbuf + soff, len, seed);
		w = enc(wirebuf + off, sizeof(wirebuf) - off, start + off,
			markers, crc, srcbuf + soff, len);
		if (w < 0)
			abort();
		lens[i] = len;
		off += w;
		soff += len;
	}
	*total_src = soff;
	return off;
}

static u32 lens[4096];

static void stream_check(struct __test_metadata *_metadata, u32 start,
			 bool markers, u32 seed, u32 nfpdu, u32 maxlen)
{
	static const u32 splits[] = { 1, 3, 7, 512, 1460, 0 };
	u32 wire, src, i, j;
	struct mpa_dec rx;

	wire = build_stream(start, markers, true, seed, nfpdu, maxlen, lens,
			    &src);
	for (i = 0; i < ARRAY_SIZE(splits); i++) {
		mpa_dec_init(&rx, rxbuf, markers, true);
		rx.pos = start;
		ASSERT_EQ(wire, decode(&rx, wirebuf, wire, splits[i], &dout));
		ASSERT_EQ(nfpdu, dout.n);
		ASSERT_EQ(src, dout.len);
		for (j = 0; j < nfpdu; j++)
			ASSERT_EQ(lens[j], dout.lens[j]);
		ASSERT_EQ(0, memcmp(outdata, srcbuf, src));
		ASSERT_EQ(start + wire, rx.pos);
		ASSERT_EQ(nfpdu, rx.ulpdus);
		ASSERT_EQ(MPA_DEC_ULPDU, dout.ret);
	}
}

TEST(stream_markers)
{
	stream_check(_metadata, 0, true, 1, 500, 1500);
	stream_check(_metadata, 0, true, 2, 2000, 40);
	stream_check(_metadata, 0, true, 3, 20, 65535);
}

TEST(stream_no_markers)
{
	stream_check(_metadata, 0, false, 4, 500, 1500);
	stream_check(_metadata, 0, false, 5, 2000, 40);
	stream_check(_metadata, 3, false, 6, 500, 700);
}

TEST(sequence_wrap)
{
	static const u32 starts[] = {
		0xfffffe00, 0xfffffe04, 0xffffff00, 0xfffffff0, 0xfffffffc,
	};
	u8 out[1200];
	struct mpa_dec rx;
	u32 i, len, used;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		stream_check(_metadata, starts[i], true, 7 + i, 300, 1000);
		stream_check(_metadata, starts[i], false, 7 + i, 300, 1000);
	}
	/* an FPDU straddling the wrap has a marker at 0 pointing back */
	fill_pattern(srcbuf, 100, 9);
	len = enc(out, sizeof(out), 0xffffffe0, true, true, srcbuf, 100);
	ASSERT_EQ(2 + 100 + 2 + 4 + 4, len);
	ASSERT_EQ(0x20, get_unaligned_be16(out + 0x20 + 2));
	mpa_dec_init(&rx, rxbuf, true, true);
	rx.pos = 0xffffffe0;
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out, len, &used));
	ASSERT_EQ(len, used);
	ASSERT_EQ(len - 0x20, rx.pos);
	ASSERT_EQ(0, memcmp(rxbuf, srcbuf, 100));
}

TEST(max_ulpdu)
{
	static u8 out[70000];
	u32 wire, m;
	struct mpa_dec rx;

	fill_pattern(srcbuf, 65535, 77);
	for (m = 0; m < 2; m++) {
		wire = mpa_fpdu_wire_len(0, 65535, m);
		ASSERT_EQ(2 + 65535 + 3 + 4 + (m ? 4 * 130 : 0), wire);
		ASSERT_EQ(wire, enc(out, sizeof(out), 0, m, true, srcbuf,
				    65535));
		mpa_dec_init(&rx, rxbuf, m, true);
		ASSERT_EQ(wire, decode(&rx, out, wire, 1000, &dout));
		ASSERT_EQ(1, dout.n);
		ASSERT_EQ(65535, dout.lens[0]);
		ASSERT_EQ(0, memcmp(outdata, srcbuf, 65535));
	}
	ASSERT_EQ(-EINVAL, enc(out, sizeof(out), 0, true, true, srcbuf, 65536));
}

/* ---- marker placement ---- */

TEST(marker_between_fpdus)
{
	u8 out[1100];
	struct mpa_dec rx;
	u32 used, w1, w2;

	/* first FPDU: marker + 2 + 502 + 0 pad + 4 = 512, ends at the marker */
	fill_pattern(srcbuf, 600, 11);
	ASSERT_EQ(512, mpa_fpdu_wire_len(0, 502, true));
	w1 = enc(out, sizeof(out), 0, true, true, srcbuf, 502);
	ASSERT_EQ(512, w1);
	/* second FPDU starts with the marker, FPDUPTR 0, covered by its CRC */
	w2 = enc(out + w1, sizeof(out) - w1, 512, true, true, srcbuf + 502, 10);
	ASSERT_EQ(4 + 2 + 10 + 0 + 4, w2);
	ASSERT_EQ(0, get_unaligned_be32(out + 512));
	ASSERT_EQ(10, get_unaligned_be16(out + 516));
	ASSERT_EQ(~crc32c(~0U, out + 512, 16), get_unaligned_le32(out + 528));
	ASSERT_EQ(~crc32c(~0U, out, 508), get_unaligned_le32(out + 508));

	mpa_dec_init(&rx, rxbuf, true, true);
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out, w1 + w2, &used));
	ASSERT_EQ(512, used);		/* stops before the next marker */
	ASSERT_EQ(502, rx.ulpdu_len);
	ASSERT_EQ(1, rx.nmarkers);
	ASSERT_FALSE(rx.in_fpdu);
	ASSERT_TRUE(mpa_dec_idle(&rx));
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out + 512, w2, &used));
	ASSERT_EQ(w2, used);
	ASSERT_EQ(10, rx.ulpdu_len);
	ASSERT_EQ(0, memcmp(rxbuf, srcbuf + 502, 10));
	ASSERT_EQ(2, rx.nmarkers);

	/* the marker alone, then the rest */
	mpa_dec_init(&rx, rxbuf, true, true);
	rx.pos = 512;
	ASSERT_EQ(MPA_DEC_MORE, mpa_dec_feed(&rx, out + 512, 4, &used));
	ASSERT_EQ(4, used);
	ASSERT_TRUE(rx.in_fpdu);
	/* a FIN here would cut the FPDU the marker belongs to */
	ASSERT_FALSE(mpa_dec_idle(&rx));
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out + 516, w2 - 4, &used));

	/* a non-zero FPDUPTR between FPDUs is an error */
	out[515] = 0x04;
	mpa_dec_init(&rx, rxbuf, true, false);
	rx.pos = 512;
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, out + 512, w2, &used));
	ASSERT_EQ(MPA_ERR_MARKER, rx.err);
}

TEST(marker_after_pad)
{
	u8 out[600];
	struct mpa_dec rx;
	u32 used, w, crc_in, crc_out;

	/* marker + 2 + 505 + 1 pad = 512: the next marker is before the CRC */
	fill_pattern(srcbuf, 505, 12);
	w = enc(out, sizeof(out), 0, true, true, srcbuf, 505);
	ASSERT_EQ(4 + 2 + 505 + 1 + 4 + 4, w);
	ASSERT_EQ(0, out[511]);				/* pad */
	ASSERT_EQ(0, get_unaligned_be16(out + 512));
	ASSERT_EQ(512 - 4, get_unaligned_be16(out + 514));	/* FPDUPTR */
	crc_in = ~crc32c(~0U, out, 516);
	crc_out = ~crc32c(~0U, out, 512);
	ASSERT_NE(crc_in, crc_out);
	ASSERT_EQ(crc_in, get_unaligned_le32(out + 516));

	mpa_dec_init(&rx, rxbuf, true, true);
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, out, w, &used));
	ASSERT_EQ(w, used);
	ASSERT_EQ(2, rx.nmarkers);
	ASSERT_EQ(0, memcmp(rxbuf, srcbuf, 505));

	/* a receiver that left the marker out of the CRC would fail */
	put_unaligned_le32(crc_out, out + 516);
	mpa_dec_init(&rx, rxbuf, true, true);
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, out, w, &used));
	ASSERT_EQ(MPA_ERR_CRC, rx.err);
}

TEST(marker_after_crc_not_counted)
{
	/* marker + 2 + 502 + 4 = 512: the marker at 512 is the next FPDU's */
	ASSERT_EQ(512, mpa_fpdu_wire_len(0, 502, true));
	ASSERT_EQ(508, mpa_fpdu_wire_len(4, 502, true));
	/* but one octet more moves the pad over the marker */
	ASSERT_EQ(520, mpa_fpdu_wire_len(0, 503, true));
}

TEST(copy_calls)
{
	struct src_ctx s = { .src = srcbuf };
	static u8 out[3000];
	int w;

	fill_pattern(srcbuf, 2000, 13);
	/* pos 0: runs [6,512) [516,1024) [1028,1536) [1540,2008) */
	w = mpa_fpdu_encode(out, sizeof(out), 0, true, true, 2000, src_copy,
			    &s);
	ASSERT_EQ(mpa_fpdu_wire_len(0, 2000, true), w);
	ASSERT_EQ(4, s.calls);
	ASSERT_EQ(2000, s.off);

	memset(&s, 0, sizeof(s));
	s.src = srcbuf;
	w = mpa_fpdu_encode(out, sizeof(out), 0, false, true, 2000, src_copy,
			    &s);
	ASSERT_EQ(2008, w);
	ASSERT_EQ(1, s.calls);

	/* zero length: no call */
	memset(&s, 0, sizeof(s));
	ASSERT_EQ(12, mpa_fpdu_encode(out, sizeof(out), 0, true, true, 0,
				      src_copy, &s));
	ASSERT_EQ(0, s.calls);

	/* copy error aborts */
	memset(&s, 0, sizeof(s));
	s.src = srcbuf;
	s.fail = -EFAULT;
	s.fail_at = 2;
	ASSERT_EQ(-EFAULT, mpa_fpdu_encode(out, sizeof(out), 0, true, true,
					   2000, src_copy, &s));

	/* too small */
	memset(&s, 0, sizeof(s));
	s.src = srcbuf;
	ASSERT_EQ(-ENOSPC, mpa_fpdu_encode(out, w - 1, 0, false, true, 2000,
					   src_copy, &s));
	ASSERT_EQ(0, s.calls);
}

/*
 * Without markers the encoder takes its own path: it must write the same
 * octets as the marker path where no marker falls (stream positions 4 to
 * 512), pad included, whatever the buffer held before.
 */
TEST(plain_path_matches_marker_path)
{
	static u8 a[600], b[600];
	struct src_ctx s;
	u32 len;
	int wa, wb;

	fill_pattern(srcbuf, 600, 7);
	for (len = 0; len <= 494; len++) {
		memset(a, 0xa5, sizeof(a));
		memset(b, 0x5a, sizeof(b));
		memset(&s, 0, sizeof(s));
		s.src = srcbuf;
		wa = mpa_fpdu_encode(a, sizeof(a), 4, false, true, len, src_copy, &s);
		ASSERT_EQ(len ? 1 : 0, s.calls);
		memset(&s, 0, sizeof(s));
		s.src = srcbuf;
		wb = mpa_fpdu_encode(b, sizeof(b), 4, true, true, len, src_copy, &s);
		ASSERT_EQ(wb, wa);
		ASSERT_EQ(0, memcmp(a, b, wa));
		/* nothing written past the FPDU */
		ASSERT_EQ(0xa5, a[wa]);
	}
}

/* an FPDU sealed around a ULPDU in place equals the one encoded */
TEST(seal_matches_encode)
{
	static u8 a[600], b[600];
	u8 u[42];
	u32 len, wb;
	int wa, crc;

	fill_pattern(srcbuf, 600, 11);
	for (crc = 0; crc <= 1; crc++) {
		for (len = 0; len <= 494; len++) {
			memset(a, 0xa5, sizeof(a));
			memset(b, 0x5a, sizeof(b));
			wa = enc(a, sizeof(a), 8, false, crc, srcbuf, len);
			memcpy(b + MPA_HDR_LEN, srcbuf, len);
			wb = mpa_fpdu_seal(b, len, crc);
			ASSERT_EQ(mpa_fpdu_wire_len(8, len, false), wb);
			ASSERT_EQ(wa, (int)wb);
			ASSERT_EQ(0, memcmp(a, b, wb));
			/* nothing written past the FPDU */
			ASSERT_EQ(0x5a, b[wb]);
			if (!crc)
				continue;
			/* the receiving side agrees, and sees a flipped bit */
			ASSERT_TRUE(mpa_fpdu_crc_good(b, len));
			b[len % (wb - MPA_CRC_LEN)] ^= 0x20;
			ASSERT_FALSE(mpa_fpdu_crc_good(b, len));
		}
	}
	/* RFC 5044 figure 5 without its marker */
	fig_ulpdu(u, 1);
	memcpy(b + MPA_HDR_LEN, u, sizeof(u));
	ASSERT_EQ(48, mpa_fpdu_seal(b, sizeof(u), true));
	ASSERT_EQ(0, memcmp(b, fig5 + 4, 44));
	ASSERT_EQ(~crc32c(~0U, fig5 + 4, 44), get_unaligned_le32(b + 44));
}

/* ---- errors ---- */

TEST(crc_error)
{
	u8 out[128], bad[64];
	struct mpa_dec rx;
	u32 used, i;

	for (i = 0; i < 52; i++) {
		if (i == 4 || i == 5)
			continue;	/* the length changes the framing */
		memcpy(bad, fig5, 52);
		bad[i] ^= 0x10;
		mpa_dec_init(&rx, rxbuf, true, true);
		ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, bad, 52, &used));
		if (i == 2 || i == 3) {
			ASSERT_EQ(MPA_ERR_MARKER, rx.err);
			ASSERT_EQ(4, used);
			continue;
		}
		ASSERT_EQ(MPA_ERR_CRC, rx.err);
		ASSERT_EQ(52, used);
		ASSERT_EQ(1, rx.crc_errors);
		ASSERT_EQ(0, rx.ulpdus);
		/* sticky */
		ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, fig5, 52, &used));
		ASSERT_EQ(0, used);
		ASSERT_EQ(1, rx.crc_errors);

		/* CRC not checked: the same octets are accepted */
		mpa_dec_init(&rx, rxbuf, true, false);
		ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, bad, 52, &used));
		ASSERT_EQ(52, used);
		ASSERT_EQ(0, rx.crc_errors);
	}

	/* no markers: corrupt the payload */
	fill_pattern(srcbuf, 100, 14);
	ASSERT_EQ(68, enc(out, sizeof(out), 0, false, true, srcbuf, 60));
	out[30] ^= 0x80;
	mpa_dec_init(&rx, rxbuf, false, true);
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, out, 68, &used));
	ASSERT_EQ(MPA_ERR_CRC, rx.err);
	ASSERT_EQ(68, used);
}

TEST(marker_error)
{
	u8 bad[64];
	struct mpa_dec rx;
	u32 used;

	/* Figure 6 with FPDUPTR 0x18 instead of 0x14 */
	memcpy(bad, fig6, 52);
	bad[0x203 - 0x1ec] = 0x18;
	mpa_dec_init(&rx, rxbuf, true, false);
	rx.pos = 0x1ec;
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, bad, 52, &used));
	ASSERT_EQ(MPA_ERR_MARKER, rx.err);
	ASSERT_EQ(0x204 - 0x1ec, used);
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, bad + used, 1, &used));
	ASSERT_EQ(0, used);

	/* FPDUPTR high byte */
	memcpy(bad, fig6, 52);
	bad[0x202 - 0x1ec] = 0x01;
	mpa_dec_init(&rx, rxbuf, true, false);
	rx.pos = 0x1ec;
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, bad, 52, &used));
	ASSERT_EQ(MPA_ERR_MARKER, rx.err);

	/* the two low bits are treated as zero (and the CRC is off) */
	memcpy(bad, fig6, 52);
	bad[0x203 - 0x1ec] = 0x17;
	mpa_dec_init(&rx, rxbuf, true, false);
	rx.pos = 0x1ec;
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, bad, 52, &used));
	/* ... but still covered by the CRC */
	mpa_dec_init(&rx, rxbuf, true, true);
	rx.pos = 0x1ec;
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, bad, 52, &used));
	ASSERT_EQ(MPA_ERR_CRC, rx.err);

	/* the reserved field is not checked, only covered by the CRC */
	memcpy(bad, fig6, 52);
	bad[0x200 - 0x1ec] = 0x55;
	mpa_dec_init(&rx, rxbuf, true, false);
	rx.pos = 0x1ec;
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&rx, bad, 52, &used));

	/* the first marker of the stream must be 0 */
	memcpy(bad, fig5, 52);
	bad[3] = 0x04;
	mpa_dec_init(&rx, rxbuf, true, false);
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&rx, bad, 52, &used));
	ASSERT_EQ(MPA_ERR_MARKER, rx.err);
	ASSERT_EQ(4, used);
	ASSERT_EQ(0, rx.crc_errors);
}

TEST(feed_empty)
{
	struct mpa_dec rx;
	u32 used = 99;

	mpa_dec_init(&rx, rxbuf, true, true);
	ASSERT_EQ(MPA_DEC_MORE, mpa_dec_feed(&rx, NULL, 0, &used));
	ASSERT_EQ(0, used);
	ASSERT_EQ(0, rx.pos);
}

/* two decoders stand at the same place after the same FPDUs */
static void dec_same(struct __test_metadata *_metadata,
		     const struct mpa_dec *a, const struct mpa_dec *b)
{
	ASSERT_EQ(a->pos, b->pos);
	ASSERT_EQ(a->fpdu_start, b->fpdu_start);
	ASSERT_EQ(a->ulpdu_len, b->ulpdu_len);
	ASSERT_EQ(a->have, b->have);
	ASSERT_EQ(a->ulpdus, b->ulpdus);
}

/*
 * mpa_dec_skip() leaves the decoder as feeding the FPDU would: same
 * position, counters and ULPDU length, and the next FPDU decodes alike.
 */
TEST(skip_equals_feed)
{
	static u8 w[3 * 1500], ua[1500], ub[1500];
	struct mpa_dec a, b;
	u32 len, used, w1, w2;

	fill_pattern(srcbuf, 3000, 3);
	for (len = 0; len <= 1400; len += len < 8 ? 1 : 97) {
		w1 = enc(w, sizeof(w), 0, false, true, srcbuf, len);
		w2 = enc(w + w1, sizeof(w) - w1, 0, false, true, srcbuf + len, 77);
		mpa_dec_init(&a, ua, false, true);
		mpa_dec_init(&b, ub, false, true);
		a.pos = 4 * len;
		b.pos = a.pos;
		ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&a, w, w1, &used));
		ASSERT_EQ(w1, used);
		mpa_dec_skip(&b, len);
		dec_same(_metadata, &a, &b);
		ASSERT_TRUE(mpa_dec_idle(&b));
		ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&a, w + w1, w2, &used));
		ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&b, w + w1, w2, &used));
		ASSERT_EQ(w2, used);
		ASSERT_EQ(77, b.ulpdu_len);
		ASSERT_EQ(0, memcmp(ub, srcbuf + len, 77));
		ASSERT_EQ(a.pos, b.pos);
		ASSERT_EQ(a.ulpdus, b.ulpdus);
		ASSERT_EQ(2, b.ulpdus);
	}
}

/* what a placing consumer got: every run at its offset, and the calls */
struct placed {
	u8	data[2000];
	u32	calls;
	u32	octets;
};

static void place_rec(void *ctx, u32 off, const u8 *data, u32 len)
{
	struct placed *pl = ctx;

	memcpy(pl->data + off, data, len);
	pl->calls++;
	pl->octets += len;
}

/*
 * A whole FPDU in one chunk (markers off) is checked, then placed in one
 * call; the decoder ends as if fed octet by octet. With a bad CRC nothing
 * of it is placed (fed octet by octet, its octets were placed before the
 * CRC came).
 */
TEST(whole_fpdu_one_pass)
{
	static const u32 lens[] = { 0, 60, 1400 };
	static u8 w[4000], ua[1500], ub[1500];
	struct placed pa = {}, pb = {};
	u32 off[4] = { 0 }, used, i, n;
	struct mpa_dec a, b;
	int ret;

	fill_pattern(srcbuf, 1460, 21);
	for (i = 0; i < 3; i++)
		off[i + 1] = off[i] + enc(w + off[i], sizeof(w) - off[i], 0, false,
					  true, srcbuf, lens[i]);
	mpa_dec_init(&a, ua, false, true);
	mpa_dec_init(&b, ub, false, true);
	a.place = place_rec;
	a.place_ctx = &pa;
	b.place = place_rec;
	b.place_ctx = &pb;
	for (i = 0; i < 3; i++) {
		pa.calls = 0;
		pa.octets = 0;
		ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&a, w + off[i], off[3] - off[i], &used));
		ASSERT_EQ(off[i + 1] - off[i], used);
		ASSERT_EQ(lens[i] ? 1 : 0, pa.calls);
		ASSERT_EQ(lens[i], pa.octets);
		ASSERT_EQ(0, memcmp(pa.data, srcbuf, lens[i]));
		for (n = off[i]; n < off[i + 1]; n++) {
			ret = mpa_dec_feed(&b, w + n, 1, &used);
			ASSERT_EQ(1, used);
			ASSERT_EQ(n + 1 < off[i + 1] ? MPA_DEC_MORE : MPA_DEC_ULPDU, ret);
		}
		dec_same(_metadata, &b, &a);
		ASSERT_TRUE(mpa_dec_idle(&a));
	}

	/* not placing: the ULPDU and its pad go to the buffer */
	mpa_dec_init(&a, ua, false, true);
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&a, w + off[1], off[3] - off[1], &used));
	ASSERT_EQ(off[2] - off[1], used);
	ASSERT_EQ(0, memcmp(ua, srcbuf, 60));

	/* a bad CRC: the error, the FPDU consumed, nothing placed */
	w[off[2] + 100] ^= 0x01;
	mpa_dec_init(&a, ua, false, true);
	a.place = place_rec;
	a.place_ctx = &pa;
	pa.calls = 0;
	ASSERT_EQ(MPA_DEC_ULPDU, mpa_dec_feed(&a, w + off[1], off[3] - off[1], &used));
	ASSERT_EQ(1, pa.calls);
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&a, w + off[2], off[3] - off[2], &used));
	ASSERT_EQ(off[3] - off[2], used);
	ASSERT_EQ(MPA_ERR_CRC, a.err);
	ASSERT_EQ(1, a.crc_errors);
	ASSERT_EQ(1, a.ulpdus);
	ASSERT_EQ(1, pa.calls);
	ASSERT_FALSE(mpa_dec_idle(&a));
	ASSERT_TRUE(mpa_dec_placing(&a));
	ASSERT_EQ(MPA_DEC_ERROR, mpa_dec_feed(&a, w, off[1], &used));
	ASSERT_EQ(0, used);
	/* the octet-run decoder ends the same way */
	mpa_dec_init(&b, ub, false, true);
	b.place = place_rec;
	b.place_ctx = &pb;
	for (n = off[1], ret = MPA_DEC_MORE; n < off[3] && ret != MPA_DEC_ERROR; n++)
		ret = mpa_dec_feed(&b, w + n, 1, &used);
	ASSERT_EQ(MPA_DEC_ERROR, ret);
	ASSERT_EQ(off[3], n);
	ASSERT_EQ(a.pos, b.pos);
	ASSERT_EQ(a.err, b.err);
	ASSERT_EQ(a.ulpdus, b.ulpdus);
	ASSERT_EQ(a.crc_errors, b.crc_errors);
	ASSERT_EQ(mpa_dec_idle(&a), mpa_dec_idle(&b));
	ASSERT_EQ(mpa_dec_placing(&a), mpa_dec_placing(&b));
	w[off[2] + 100] ^= 0x01;
}

/* ---- startup frames ---- */

static void mk_frame(u8 *f, const char *key, u8 flags, u8 rev, u16 pd_len)
{
	memcpy(f, key, 16);
	f[16] = flags;
	f[17] = rev;
	put_unaligned_be16(pd_len, f + 18);
}

TEST(frame_decode)
{
	struct mpa_frame_info info;
	u8 f[20];

	mk_frame(f, MPA_WIRE_KEY_REQ, MPA_FLAG_M | MPA_FLAG_C | 0x1f, 1, 10);
	ASSERT_EQ(0, mpa_frame_decode(f, 1U << 1, &info));
	ASSERT_TRUE(info.request);
	ASSERT_TRUE(info.markers);
	ASSERT_TRUE(info.crc);
	ASSERT_FALSE(info.reject);
	ASSERT_EQ(1, info.rev);
	ASSERT_EQ(10, info.pd_len);

	mk_frame(f, MPA_WIRE_KEY_REP, MPA_FLAG_R, 1, 0);
	ASSERT_EQ(0, mpa_frame_decode(f, 1U << 1, &info));
	ASSERT_FALSE(info.request);
	ASSERT_FALSE(info.markers);
	ASSERT_FALSE(info.crc);
	ASSERT_TRUE(info.reject);

	mk_frame(f, "MPA ID Req Framf", 0, 1, 0);
	ASSERT_EQ(-EBADMSG, mpa_frame_decode(f, 1U << 1, &info));
	mk_frame(f, "mpa id req frame", 0, 1, 0);
	ASSERT_EQ(-EBADMSG, mpa_frame_decode(f, 1U << 1, &info));

	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 0, 0);
	ASSERT_EQ(-EPROTONOSUPPORT, mpa_frame_decode(f, 1U << 1, &info));
	ASSERT_EQ(0, info.rev);
	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 2, 0);
	ASSERT_EQ(-EPROTONOSUPPORT, mpa_frame_decode(f, 1U << 1, &info));
	ASSERT_EQ(2, info.rev);
	ASSERT_TRUE(info.request);
	ASSERT_EQ(0, mpa_frame_decode(f, (1U << 1) | (1U << 2), &info));
	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 32, 0);
	ASSERT_EQ(-EPROTONOSUPPORT, mpa_frame_decode(f, ~0U, &info));
	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 255, 0);
	ASSERT_EQ(-EPROTONOSUPPORT, mpa_frame_decode(f, ~0U, &info));
	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 31, 0);
	ASSERT_EQ(0, mpa_frame_decode(f, 1U << 31, &info));

	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 1, 512);
	ASSERT_EQ(0, mpa_frame_decode(f, 1U << 1, &info));
	ASSERT_EQ(512, info.pd_len);
	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 1, 513);
	ASSERT_EQ(-EMSGSIZE, mpa_frame_decode(f, 1U << 1, &info));
	ASSERT_EQ(513, info.pd_len);
	mk_frame(f, MPA_WIRE_KEY_REQ, 0, 1, 0xffff);
	ASSERT_EQ(-EMSGSIZE, mpa_frame_decode(f, 1U << 1, &info));
}

static bool info_eq(const struct mpa_frame_info *a,
		    const struct mpa_frame_info *b)
{
	return a->request == b->request && a->markers == b->markers &&
	       a->crc == b->crc && a->reject == b->reject &&
	       a->rev == b->rev && a->pd_len == b->pd_len;
}

TEST(frame_encode)
{
	struct mpa_frame_info info = {
		.request = true, .markers = true, .crc = true, .rev = 1,
		.pd_len = 5,
	}, back;
	u8 f[600], ref[20];
	u8 pd[512];

	memset(pd, 0xa5, sizeof(pd));
	ASSERT_EQ(25, mpa_frame_encode(f, sizeof(f), &info, "hello"));
	mk_frame(ref, MPA_WIRE_KEY_REQ, MPA_FLAG_M | MPA_FLAG_C, 1, 5);
	ASSERT_EQ(0, memcmp(f, ref, 20));
	ASSERT_EQ(0, memcmp(f + 20, "hello", 5));
	ASSERT_EQ(0, mpa_frame_decode(f, 1U << 1, &back));
	ASSERT_TRUE(info_eq(&info, &back));

	info.request = false;
	info.markers = false;
	info.reject = true;
	info.rev = 2;
	info.pd_len = 0;
	ASSERT_EQ(20, mpa_frame_encode(f, 20, &info, NULL));
	mk_frame(ref, MPA_WIRE_KEY_REP, MPA_FLAG_C | MPA_FLAG_R, 2, 0);
	ASSERT_EQ(0, memcmp(f, ref, 20));
	ASSERT_EQ(0, mpa_frame_decode(f, 1U << 2, &back));
	ASSERT_TRUE(info_eq(&info, &back));

	info.pd_len = 512;
	ASSERT_EQ(532, mpa_frame_encode(f, 532, &info, pd));
	ASSERT_EQ(0, memcmp(f + 20, pd, 512));
	ASSERT_EQ(-ENOSPC, mpa_frame_encode(f, 531, &info, pd));
	info.pd_len = 513;
	ASSERT_EQ(-EINVAL, mpa_frame_encode(f, sizeof(f), &info, pd));
	info.pd_len = 0;
	ASSERT_EQ(-ENOSPC, mpa_frame_encode(f, 19, &info, NULL));
}

/* ---- MULPDU ---- */

TEST(mulpdu)
{
	ASSERT_EQ(1442, mpa_mulpdu(1460, true));
	ASSERT_EQ(1454, mpa_mulpdu(1460, false));
	ASSERT_EQ(536 - (6 + 8 + 0), mpa_mulpdu(536, true));
	ASSERT_EQ(530, mpa_mulpdu(536, false));
	ASSERT_EQ(128, mpa_mulpdu(100, true));
	ASSERT_EQ(128, mpa_mulpdu(100, false));
	ASSERT_EQ(128, mpa_mulpdu(0, true));
	ASSERT_EQ(128, mpa_mulpdu(0, false));
	ASSERT_EQ(128, mpa_mulpdu(134, false));
	ASSERT_EQ(128, mpa_mulpdu(135, false));		/* 135 - 9 */
	ASSERT_EQ(134, mpa_mulpdu(140, false));
	ASSERT_EQ(65483 - (6 + 4 * 128 + 3), mpa_mulpdu(65483, true));
	ASSERT_EQ(65483 - (6 + 3), mpa_mulpdu(65483, false));
	ASSERT_EQ(8960 - (6 + 4 * 18), mpa_mulpdu(8960, true));
	ASSERT_EQ(1461 - (6 + 4 * 3 + 1), mpa_mulpdu(1461, true));
	ASSERT_EQ(65535, mpa_mulpdu(100000, false));
	ASSERT_EQ(65535, mpa_mulpdu(~0U, true));
	ASSERT_EQ(65535, mpa_mulpdu(~0U, false));
}

TEST(v2_encode_decode)
{
	struct mpa_v2_info v = { .ird = 16, .ord = 0x3fff, .p2p = true,
				 .rtr = MPA_F_RTR_WRITE | MPA_F_RTR_READ }, d;
	u8 b[4];

	mpa_v2_encode(b, &v);
	/* ird 0x8010 (P2P), ord 0xffff (Write and Read RTR, ORD 0x3fff) */
	ASSERT_EQ(0x80, b[0]);
	ASSERT_EQ(0x10, b[1]);
	ASSERT_EQ(0xff, b[2]);
	ASSERT_EQ(0xff, b[3]);
	mpa_v2_decode(b, &d);
	ASSERT_EQ(16, d.ird);
	ASSERT_EQ(0x3fff, d.ord);
	ASSERT_TRUE(d.p2p);
	ASSERT_EQ(MPA_F_RTR_WRITE | MPA_F_RTR_READ, d.rtr);

	v = (struct mpa_v2_info){ .ird = 0xffff, .ord = 1, .rtr = MPA_F_RTR_SEND };
	mpa_v2_encode(b, &v);
	/* IRD clamped to 14 bits, Send RTR in the ird word */
	ASSERT_EQ(0x7f, b[0]);
	ASSERT_EQ(0xff, b[1]);
	ASSERT_EQ(0x00, b[2]);
	ASSERT_EQ(0x01, b[3]);
}

TEST(v2_answer_swaps_and_lowers_ird_ord)
{
	struct mpa_v2_info req = { .ird = 4, .ord = 8 };
	struct mpa_v2_info local = { .ird = 16, .ord = 16 };
	struct mpa_v2_info rep;

	ASSERT_EQ(0, mpa_v2_answer(&req, &local, &rep));
	/* the Reply's IRD is limited by the Request's ORD and the reverse */
	ASSERT_EQ(8, rep.ird);
	ASSERT_EQ(4, rep.ord);
	ASSERT_FALSE(rep.p2p);
	ASSERT_EQ(0, rep.rtr);
	ASSERT_EQ(0, mpa_v2_check_reply(&req, &rep));
}

TEST(v2_answer_picks_exactly_one_rtr)
{
	struct mpa_v2_info req = { .ird = 1, .ord = 1, .p2p = true,
				   .rtr = MPA_F_RTR_SEND | MPA_F_RTR_READ };
	struct mpa_v2_info local = { .ird = 1, .ord = 1, .p2p = true,
				     .rtr = MPA_F_RTR_WRITE | MPA_F_RTR_READ | MPA_F_RTR_SEND };
	struct mpa_v2_info rep;

	ASSERT_EQ(0, mpa_v2_answer(&req, &local, &rep));
	ASSERT_TRUE(rep.p2p);
	ASSERT_EQ(MPA_F_RTR_READ, rep.rtr);
	ASSERT_EQ(0, mpa_v2_check_reply(&req, &rep));

	local.rtr = MPA_F_RTR_SEND;
	ASSERT_EQ(0, mpa_v2_answer(&req, &local, &rep));
	ASSERT_EQ(MPA_F_RTR_SEND, rep.rtr);

	/* nothing in common, or no peer-to-peer here */
	local.rtr = MPA_F_RTR_WRITE;
	ASSERT_EQ(-EOPNOTSUPP, mpa_v2_answer(&req, &local, &rep));
	local.rtr = MPA_F_RTR_READ;
	local.p2p = false;
	ASSERT_EQ(-EOPNOTSUPP, mpa_v2_answer(&req, &local, &rep));
}

TEST(v2_check_reply_refuses_bad_replies)
{
	struct mpa_v2_info req = { .ird = 4, .ord = 4, .p2p = true,
				   .rtr = MPA_F_RTR_WRITE | MPA_F_RTR_READ };
	struct mpa_v2_info rep = { .ird = 4, .ord = 4, .p2p = true,
				   .rtr = MPA_F_RTR_WRITE };

	ASSERT_EQ(0, mpa_v2_check_reply(&req, &rep));
	rep.rtr = MPA_F_RTR_WRITE | MPA_F_RTR_READ;		/* two types */
	ASSERT_EQ(-EPROTO, mpa_v2_check_reply(&req, &rep));
	rep.rtr = MPA_F_RTR_SEND;				/* not offered */
	ASSERT_EQ(-EPROTO, mpa_v2_check_reply(&req, &rep));
	rep.rtr = MPA_F_RTR_WRITE;
	rep.p2p = false;				/* not echoed */
	ASSERT_EQ(-EPROTO, mpa_v2_check_reply(&req, &rep));
	rep.p2p = true;
	rep.ord = 5;					/* above our IRD */
	ASSERT_EQ(-EPROTO, mpa_v2_check_reply(&req, &rep));
	req.p2p = false;
	req.rtr = 0;
	rep.ord = 4;
	ASSERT_EQ(-EPROTO, mpa_v2_check_reply(&req, &rep));	/* unasked P2P */
}

/* MPA_CMSG_LENS: at least one length, adding up to the data exactly */
TEST(lens_check)
{
	const u32 l[4] = { 10, 0, 65535, 1 };
	const u32 big[2] = { 0xffffffff, 0xffffffff };

	ASSERT_EQ(0, mpa_lens_check(l, 4, 65546));
	ASSERT_EQ(-EINVAL, mpa_lens_check(l, 4, 65545));
	ASSERT_EQ(-EINVAL, mpa_lens_check(l, 4, 65547));
	ASSERT_EQ(0, mpa_lens_check(l + 1, 1, 0));
	ASSERT_EQ(-EINVAL, mpa_lens_check(l, 0, 0));
	/* no 32-bit wrap: 2^33 - 2 octets are not 2^32 - 2 */
	ASSERT_EQ(-EINVAL, mpa_lens_check(big, 2, 0xfffffffeULL));
	ASSERT_EQ(0, mpa_lens_check(big, 2, 0x1fffffffeULL));
}

TEST_HARNESS_MAIN
