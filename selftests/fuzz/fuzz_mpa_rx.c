// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: MPA FPDU decoder (and encoder).
 *
 * Input octet 0 selects the mode:
 *  even: octets 1..9 give markers/crc/placing, start position and a
 *	  split seed; the rest is fed as a received stream in pseudo-random
 *	  chunks. Invariants: consumed <= len, pos advances by consumed,
 *	  ULPDUs fit the buffer (ASan), errors are sticky, and every event
 *	  (ULPDU contents, error code, stream position) is the one the same
 *	  stream gives fed one octet at a time.
 *  odd:  round trip: ULPDUs taken from the input are encoded at a given
 *	  start position with mpa_fpdu_encode(), fed in pseudo-random
 *	  chunks and must come back identical.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <asm/unaligned.h>
#include "mpa_proto.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: %s\n", \
	__FILE__, __LINE__, #x); abort(); } } while (0)

#define MAX_FPDUS	64

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

static u32 rnd(u64 *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* chunk sizes: mostly small, sometimes large */
static u32 chunk_len(u64 *s, u32 left)
{
	u32 r = rnd(s), n;

	switch (r % 4) {
	case 0:
		n = 1 + (r >> 8) % 4;
		break;
	case 1:
		n = 1 + (r >> 8) % 32;
		break;
	case 2:
		n = 1 + (r >> 8) % 1500;
		break;
	default:
		n = left;
		break;
	}
	return n < left ? n : left;
}

static void check_feed(struct mpa_dec *rx, const u8 *p, u32 n, u32 *used,
		       int *ret)
{
	u32 pos = rx->pos;
	u64 ulpdus = rx->ulpdus;

	*ret = mpa_dec_feed(rx, p, n, used);
	CHECK(*used <= n);
	CHECK(rx->pos == pos + *used);
	CHECK(rx->ulpdu_len <= MPA_MAX_ULPDU);
	if (*ret == MPA_DEC_MORE)
		CHECK(*used == n);
	else if (*ret == MPA_DEC_ULPDU)
		CHECK(rx->ulpdus == ulpdus + 1 && *used > 0);
	else
		CHECK(*ret == MPA_DEC_ERROR &&
		      (rx->err == MPA_ERR_CRC || rx->err == MPA_ERR_MARKER));
}

/* what a decoder reported: its events in order, for the reference run */
struct dec_log {
	u32	*pos;		/* stream position after each event */
	u32	*hash;		/* FNV-1a of the ULPDU, or the error code */
	u32	n;
	u32	max;
};

/* a placing consumer: ULPDU octets land at their offset */
struct placed {
	u8	*buf;
	u32	calls;
};

static void place_rec(void *ctx, u32 off, const u8 *data, u32 len)
{
	struct placed *pl = ctx;

	CHECK(len > 0 && off + len <= MPA_MAX_ULPDU);
	memcpy(pl->buf + off, data, len);
	pl->calls++;
}

static u32 fnv(const u8 *p, u32 len)
{
	u32 h = 2166136261U;

	while (len--)
		h = (h ^ *p++) * 16777619U;
	return h;
}

/* the event just returned, as the log keeps it */
static u32 event_hash(const struct mpa_dec *rx, const struct placed *pl,
		      int ret)
{
	const u8 *u = pl ? pl->buf : rx->buf;

	if (ret == MPA_DEC_ERROR)
		return rx->err;
	return fnv(u, rx->ulpdu_len) ^ rx->ulpdu_len;
}

static void dec_setup(struct mpa_dec *rx, u8 *buf, struct placed *pl,
		      const u8 *data)
{
	mpa_dec_init(rx, buf, data[0] & 1, data[0] & 2);
	if (data[0] & 4)
		rx->pos = get_unaligned_be32(data + 1) & ~3U;
	if (pl) {
		rx->place = place_rec;
		rx->place_ctx = pl;
	}
}

/*
 * The reference: the same stream fed one octet at a time, which takes
 * every FPDU octet run by octet run. Stops at the first error.
 */
static void fuzz_reference(const u8 *data, u32 size, struct dec_log *log,
			   bool placing)
{
	struct placed pl = {};
	struct mpa_dec rx;
	u32 off, used;
	u8 *buf;
	int ret;

	buf = malloc(MPA_DEC_BUF_LEN);
	pl.buf = calloc(1, MPA_MAX_ULPDU + 1);
	dec_setup(&rx, buf, placing ? &pl : NULL, data);
	for (off = 9; off < size && log->n < log->max; ) {
		ret = mpa_dec_feed(&rx, data + off, 1, &used);
		CHECK(used <= 1);
		off += used;
		if (ret == MPA_DEC_MORE)
			continue;
		CHECK(ret == MPA_DEC_ULPDU || ret == MPA_DEC_ERROR);
		log->pos[log->n] = rx.pos;
		log->hash[log->n++] = event_hash(&rx, placing ? &pl : NULL, ret);
		if (ret == MPA_DEC_ERROR)
			break;
	}
	free(pl.buf);
	free(buf);
}

/*
 * A received stream in pseudo-random chunks: the invariants of
 * check_feed(), errors sticky, and the same events at the same stream
 * positions (ULPDU contents, error codes) as when it is fed one octet at
 * a time, with or without a placing consumer (data[0] bit 3).
 */
static void fuzz_raw(const u8 *data, u32 size)
{
	struct dec_log log = { .max = 4096 };
	struct placed pl = {};
	bool placing;
	struct mpa_dec rx;
	u32 off = 9, used, ev = 0;
	u64 seed;
	u8 *buf;
	int ret;

	if (size < 9)
		return;
	placing = data[0] & 8;
	log.pos = malloc(log.max * sizeof(*log.pos));
	log.hash = malloc(log.max * sizeof(*log.hash));
	fuzz_reference(data, size, &log, placing);
	buf = malloc(MPA_DEC_BUF_LEN);
	pl.buf = calloc(1, MPA_MAX_ULPDU + 1);
	dec_setup(&rx, buf, placing ? &pl : NULL, data);
	seed = get_unaligned_be32(data + 5);
	while (off < size && ev < log.max) {
		u32 n = chunk_len(&seed, size - off);
		u32 coff = 0;

		while (coff < n && ev < log.max) {
			check_feed(&rx, data + off + coff, n - coff, &used,
				   &ret);
			coff += used;
			if (ret == MPA_DEC_MORE)
				continue;
			CHECK(ev < log.n);
			CHECK(rx.pos == log.pos[ev]);
			CHECK(event_hash(&rx, placing ? &pl : NULL, ret) == log.hash[ev]);
			ev++;
			if (ret == MPA_DEC_ERROR) {
				check_feed(&rx, data, size, &used, &ret);
				CHECK(ret == MPA_DEC_ERROR && used == 0);
				goto out;
			}
		}
		off += n;
	}
	CHECK(ev == log.n);
out:
	free(pl.buf);
	free(buf);
	free(log.hash);
	free(log.pos);
}

struct src {
	const u8 *p;
	u32 off;
	u32 calls;
};

static int src_copy(void *ctx, void *dst, u32 len)
{
	struct src *s = ctx;

	CHECK(len > 0);
	s->calls++;
	memcpy(dst, s->p + s->off, len);
	s->off += len;
	return 0;
}

static void fuzz_roundtrip(const u8 *data, u32 size)
{
	u32 lens[MAX_FPDUS], offs[MAX_FPDUS], n = 0, i, total = 0, woff = 0;
	u32 pos, soff = 0, off, used, got = 0;
	bool markers, crc;
	struct mpa_dec rx;
	u8 *wire, *buf;
	u64 seed;
	int ret;

	if (size < 9)
		return;
	markers = data[0] & 2;
	crc = data[0] & 4;
	pos = get_unaligned_be32(data + 1);
	if (!(data[0] & 8))
		pos &= ~3U;	/* as in a real stream */
	seed = get_unaligned_be32(data + 5);
	data += 9;
	size -= 9;

	/* split the rest into ULPDUs; long ones reuse the data cyclically */
	while (n < MAX_FPDUS && (soff < size || (rnd(&seed) % 4) == 0)) {
		u32 r = rnd(&seed);
		u32 len;

		if (r % 16 == 0)
			len = (r >> 4) % (MPA_MAX_ULPDU + 1);
		else
			len = (r >> 4) % 700;
		if (!size && len)
			len = 0;
		lens[n] = len;
		offs[n] = soff;
		total += mpa_fpdu_wire_len(pos + total, len, markers);
		soff += len;
		n++;
	}
	wire = malloc(total + 1);
	buf = malloc(MPA_DEC_BUF_LEN);
	{
		u8 *src = malloc(soff + 1);

		for (i = 0; i < soff; i++)
			src[i] = data[i % size];
		for (i = 0; i < n; i++) {
			struct src s = { .p = src, .off = offs[i] };
			u32 wl = mpa_fpdu_wire_len(pos + woff, lens[i],
						   markers);
			u32 nm = markers ? (wl - 6 - lens[i] -
					    mpa_pad_len(lens[i])) / 4 : 0;

			ret = mpa_fpdu_encode(wire + woff, total - woff,
					      pos + woff, markers, crc, lens[i],
					      src_copy, &s);
			CHECK(ret == (int)wl);
			CHECK(s.off == offs[i] + lens[i]);
			CHECK(s.calls <= nm + 1);
			CHECK(ret % 4 == 0 || (pos & 3));
			woff += ret;
		}
		CHECK(woff == total);
		mpa_dec_init(&rx, buf, markers, crc);
		rx.pos = pos;
		off = 0;
		while (off < total) {
			u32 c = chunk_len(&seed, total - off);
			u32 coff = 0;

			while (coff < c) {
				check_feed(&rx, wire + off + coff, c - coff,
					   &used, &ret);
				CHECK(ret != MPA_DEC_ERROR);
				coff += used;
				if (ret == MPA_DEC_ULPDU) {
					CHECK(got < n);
					CHECK(rx.ulpdu_len == lens[got]);
					CHECK(!memcmp(buf, src + offs[got],
						      lens[got]));
					got++;
				}
			}
			off += c;
		}
		CHECK(got == n);
		CHECK(rx.pos == pos + total);
		CHECK(!rx.in_fpdu);
		free(src);
	}
	free(buf);
	free(wire);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	if (size < 1 || size > (1 << 20))
		return 0;
	if (data[0] & 1)
		fuzz_roundtrip(data + 1, size - 1);
	else
		fuzz_raw(data + 1, size - 1);
	return 0;
}
