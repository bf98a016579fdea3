/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure MPA (RFC 5044) protocol logic: startup frames, MULPDU, FPDU
 * encoding with markers and CRC32c, and an incremental FPDU decoder.
 *
 * Nothing here knows about sockets or skbs. The same source is built
 * into mpa.ko, into the user-space unit tests and into the fuzzers
 * (selftests/unit provides the few kernel headers it needs).
 */
#ifndef _MPA_PROTO_H
#define _MPA_PROTO_H

#include <linux/types.h>
#include <uapi/linux/iwarp_wire.h>
#include <uapi/linux/mpa.h>

#define MPA_FRAME_HDR_LEN	((u32)sizeof(struct mpa_frame_hdr))
/* largest ULPDU the 16-bit length can carry, plus pad */
#define MPA_MAX_ULPDU		0xffffU
#define MPA_DEC_BUF_LEN		(MPA_MAX_ULPDU + 3)

/**
 * struct mpa_frame_info - decoded MPA Request/Reply frame header
 * @request: key is "MPA ID Req Frame" (false: "MPA ID Rep Frame")
 * @markers: M bit
 * @crc: C bit
 * @reject: R bit (meaningful in a Reply only)
 * @enhanced: revision 2 (RFC 6581): the private data opens with the
 *	enhanced connection data (struct mpa_wire_v2_data)
 * @rev: revision field
 * @pd_len: private data length
 */
struct mpa_frame_info {
	bool	request;
	bool	markers;
	bool	crc;
	bool	reject;
	bool	enhanced;
	u8	rev;
	u16	pd_len;
};

/* the RTR message types of RFC 6581, in the uapi encoding MPA_F_RTR_* */
#define MPA_F_RTR_ALL	(MPA_F_RTR_SEND | MPA_F_RTR_WRITE | MPA_F_RTR_READ)
#define MPA_V2_DATA_LEN		((u32)sizeof(struct mpa_wire_v2_data))

/**
 * struct mpa_v2_info - decoded RFC 6581 enhanced connection data
 * @ird: inbound RDMA Read queue depth, 0..0x3fff
 * @ord: outbound RDMA Read queue depth, 0..0x3fff
 * @p2p: peer-to-peer model: the Initiator sends an RTR message first
 * @rtr: MPA_F_RTR_* types offered (Request) or the one chosen (Reply);
 *	mpa_v2_decode() and mpa_v2_encode() are the only places that
 *	convert them from and to the wire bits MPA_V2_RTR_*
 */
struct mpa_v2_info {
	u16	ird;
	u16	ord;
	bool	p2p;
	u8	rtr;
};

void mpa_v2_decode(const void *data, struct mpa_v2_info *v);
void mpa_v2_encode(void *data, const struct mpa_v2_info *v);
int mpa_v2_answer(const struct mpa_v2_info *req, const struct mpa_v2_info *local,
		  struct mpa_v2_info *reply);
int mpa_v2_check_reply(const struct mpa_v2_info *req, const struct mpa_v2_info *reply);

int mpa_frame_decode(const void *hdr, u32 rev_mask, struct mpa_frame_info *info);
int mpa_frame_encode(void *buf, u32 size, const struct mpa_frame_info *info,
		     const void *pd);

u32 mpa_mulpdu(u32 emss, bool markers);
int mpa_lens_check(const u32 *lens, u32 n, u64 total);

/**
 * mpa_marker_gap() - octets from stream position @pos to the next marker
 * @pos: stream position, relative to the first marker (mod 2^32)
 *
 * Return: 0 when a marker starts at @pos, otherwise 1..511.
 */
static inline u32 mpa_marker_gap(u32 pos)
{
	return (MPA_MARKER_PERIOD - (pos % MPA_MARKER_PERIOD)) % MPA_MARKER_PERIOD;
}

static inline u32 mpa_pad_len(u32 ulpdu_len)
{
	return (4 - ((MPA_HDR_LEN + ulpdu_len) & 3)) & 3;
}

/* on-wire size of an FPDU without markers: header, ULPDU, pad and CRC */
static inline u32 mpa_fpdu_plain_len(u32 ulpdu_len)
{
	return MPA_HDR_LEN + ulpdu_len + mpa_pad_len(ulpdu_len) + MPA_CRC_LEN;
}

u32 mpa_fpdu_wire_len(u32 pos, u32 ulpdu_len, bool markers);

/**
 * typedef mpa_copy_fn - fetch the next @len octets of a ULPDU
 * @ctx: caller context
 * @dst: where to write them
 * @len: how many
 *
 * Return: 0, or a negative errno that aborts the encoding.
 */
typedef int (*mpa_copy_fn)(void *ctx, void *dst, u32 len);

/**
 * mpa_crc32c() - CRC32c (Castagnoli, reflected) of @len octets at @p
 * @crc: the CRC so far (~0 to start; the FPDU's CRC field is the inverse
 *	of the result, little-endian)
 * @p: the octets
 * @len: their number
 *
 * What lib/libcrc32c.c's crc32c() computes. Not part of this file: the
 * module has it from mpa_crc.c, a user-space build from a table.
 *
 * Return: the CRC after @p.
 */
u32 mpa_crc32c(u32 crc, const void *p, unsigned int len);

u32 mpa_fpdu_seal(u8 *out, u32 ulpdu_len, bool crc);
bool mpa_fpdu_crc_good(const u8 *fpdu, u32 ulpdu_len);
int mpa_fpdu_encode(u8 *out, u32 size, u32 pos, bool markers, bool crc,
		    u32 ulpdu_len, mpa_copy_fn copy, void *ctx);

enum mpa_dec_state {
	MPA_DECS_HDR = 0,	/* collecting ULPDU_Length */
	MPA_DECS_DATA,		/* collecting ULPDU and pad */
	MPA_DECS_CRC,		/* collecting the CRC field */
};

/* Result of mpa_dec_feed() */
enum mpa_dec_event {
	MPA_DEC_MORE = 0,	/* consumed everything, FPDU not complete */
	MPA_DEC_ULPDU,		/* a ULPDU is complete in rx->buf */
	MPA_DEC_ERROR,		/* protocol error, see rx->err */
	MPA_DEC_NEED_BUF,	/* the ULPDU needs rx->buf of mpa_dec_need() octets */
};

/**
 * struct mpa_dec - incremental FPDU decoder state
 * @buf: destination of the ULPDU (and pad), or NULL
 * @buf_len: octets at @buf; a ULPDU that does not go to @place and does
 *	not fit makes mpa_dec_feed() return MPA_DEC_NEED_BUF
 * @markers: markers are present in the received stream
 * @crc: CRCs are checked
 * @pos: stream position of the next octet, relative to the first marker
 * @fpdu_start: stream position of the current FPDU's ULPDU_Length field
 * @state: internal parser state
 * @in_fpdu: at least one octet (marker or header) of an FPDU has been seen
 * @partial: octets collected of the current marker
 * @nmark: how many octets of @partial are valid
 * @npartial: octets collected of a split ULPDU_Length or CRC field
 * @acc: value of the ULPDU_Length or CRC field being collected
 * @ulpdu_len: ULPDU_Length of the current FPDU (valid after MPA_DEC_ULPDU)
 * @have: octets of ULPDU + pad received so far
 * @crc_acc: running CRC32c (pre-inversion)
 * @err: MPA error code once MPA_DEC_ERROR was returned
 * @ulpdus: counter of complete ULPDUs
 * @nmarkers: counter of markers removed
 * @crc_errors: counter of CRC mismatches
 * @place: if set, called with each run of ULPDU octets (never the pad)
 *	instead of copying them to @buf; @off is the run's offset in the ULPDU
 * @place_ctx: first argument of @place
 * @placing: the current ULPDU goes to @place; latched from @place when
 *	the ULPDU_Length field completes, so that a ULPDU is never split
 *	between @buf and @place when the caller changes @place
 */
struct mpa_dec {
	u8	*buf;
	u32	buf_len;
	bool	markers;
	bool	crc;
	u32	pos;
	u32	fpdu_start;
	u8	state;
	bool	in_fpdu;
	u8	partial[4];
	u8	nmark;
	u8	npartial;
	u32	acc;
	u16	ulpdu_len;
	u32	have;
	u32	crc_acc;
	u32	err;
	u64	ulpdus;
	u64	nmarkers;
	u64	crc_errors;
	void	(*place)(void *ctx, u32 off, const u8 *data, u32 len);
	void	*place_ctx;
	bool	placing;
};

void mpa_dec_init(struct mpa_dec *rx, u8 *buf, bool markers, bool crc);
int mpa_dec_feed(struct mpa_dec *rx, const u8 *data, u32 len, u32 *consumed);
bool mpa_dec_placing(const struct mpa_dec *rx);

/**
 * mpa_dec_need() - buffer the current ULPDU needs, with its pad
 * @rx: decoder
 *
 * Return: octets, valid once the ULPDU_Length field is complete.
 */
static inline u32 mpa_dec_need(const struct mpa_dec *rx)
{
	return rx->ulpdu_len + mpa_pad_len(rx->ulpdu_len);
}

/* the current FPDU has not started: a marker here precedes the next one */
static inline bool mpa_dec_between(const struct mpa_dec *rx)
{
	return rx->state == MPA_DECS_HDR && !rx->npartial;
}

/**
 * mpa_dec_idle() - the decoder stands between two FPDUs
 * @rx: decoder
 *
 * A FIN may arrive only here; anywhere else the stream ended inside an
 * FPDU or a marker (RFC 5044 error 1).
 *
 * Return: true between FPDUs.
 */
static inline bool mpa_dec_idle(const struct mpa_dec *rx)
{
	/* a marker in front of an FPDU belongs to it (covered by its CRC) */
	return mpa_dec_between(rx) && !rx->nmark && !rx->in_fpdu;
}

/**
 * mpa_dec_skip() - account for a whole FPDU that the caller consumed itself
 * @rx: an idle decoder of a stream without markers
 * @ulpdu_len: the FPDU's ULPDU_Length
 *
 * For a caller that checked the FPDU's CRC and copied its ULPDU on its
 * own: the decoder's position, counters and @rx->ulpdu_len become what
 * mpa_dec_feed() would have left after that FPDU, without its octets.
 */
static inline void mpa_dec_skip(struct mpa_dec *rx, u16 ulpdu_len)
{
	rx->fpdu_start = rx->pos;
	rx->ulpdu_len = ulpdu_len;
	rx->have = mpa_dec_need(rx);
	rx->pos += mpa_fpdu_plain_len(ulpdu_len);
	rx->ulpdus++;
}

#endif /* _MPA_PROTO_H */
