/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure DDP (RFC 5041) protocol logic: header encoding and decoding, the
 * receive checks of section 7.1, segmentation at the Data Source and MSN
 * arithmetic.
 *
 * Nothing here knows about sockets, skbs or memory registration, and
 * nothing allocates. The same source is built into ddp.ko, into the
 * user-space unit tests and into the fuzzers (selftests/unit provides the
 * few kernel headers it needs).
 */
#ifndef _DDP_PROTO_H
#define _DDP_PROTO_H

#include <linux/types.h>
#include <uapi/linux/iwarp_wire.h>

#define DDP_TAGGED_HDR_LEN	((u32)sizeof(struct ddp_tagged_hdr))	/* 14 */
#define DDP_UNTAGGED_HDR_LEN	((u32)sizeof(struct ddp_untagged_hdr))	/* 18 */
#define DDP_RSVDULP_U_LEN	5
/* a ULP message MUST be shorter than 2^32 octets (RFC 5041 section 5.2) */
#define DDP_MAX_MSG_LEN		0xffffffffULL

/* bits of ddp_region_view.access */
#define DDP_VIEW_WRITE		0x1	/* the peer may place data */
#define DDP_VIEW_READ		0x2	/* the peer may read it (RDMAP's RDMA Read) */

/**
 * struct ddp_err - DDP error number (RFC 5041 section 7.2)
 * @type: DDP_WIRE_ETYPE_*
 * @code: DDP_WIRE_ECODE_*
 */
struct ddp_err {
	u8	type;
	u8	code;
};

/**
 * struct ddp_seg - decoded DDP segment, host byte order
 * @tagged: T bit
 * @last: L bit
 * @dv: DDP version field
 * @rsvdulp_t: RsvdULP of a tagged segment
 * @rsvdulp_u: RsvdULP of an untagged segment, in wire order
 * @stag: steering tag (tagged)
 * @to: tagged offset of the first payload octet (tagged)
 * @qn: queue number (untagged)
 * @msn: message sequence number (untagged)
 * @mo: message offset of the first payload octet (untagged)
 * @payload: first octet after the header, inside the parsed buffer
 * @payload_len: octets of ULP payload
 */
struct ddp_seg {
	bool		tagged;
	bool		last;
	u8		dv;
	u8		rsvdulp_t;
	u8		rsvdulp_u[DDP_RSVDULP_U_LEN];
	u32		stag;
	u64		to;
	u32		qn;
	u32		msn;
	u32		mo;
	const u8	*payload;
	u32		payload_len;
};

/**
 * struct ddp_region_view - what the Data Sink knows about an STag
 * @valid: the STag names a buffer (false once invalidated)
 * @stream_or_pd: Stream ID or PD ID the STag is bound to (section 8.2)
 * @base_to: lowest tagged offset of the buffer
 * @len: length of the buffer in octets
 * @access: DDP_ACCESS_* bits
 */
struct ddp_region_view {
	bool	valid;
	u32	stream_or_pd;
	u64	base_to;
	u64	len;
	u32	access;
};

/**
 * struct ddp_uq_view - what the Data Sink knows about an untagged queue
 * @exists: the QN is valid on this stream
 * @expected_msn: MSN of the first available buffer (oldest message that
 *	is not complete yet)
 * @nbuf_posted: buffers available, for MSNs @expected_msn onwards
 * @buf_len: length of the buffer of the segment's MSN (when there is one)
 */
struct ddp_uq_view {
	bool	exists;
	u32	expected_msn;
	u32	nbuf_posted;
	u32	buf_len;
};

/**
 * struct ddp_segmenter - cuts a ULP message into DDP segments
 * @msg_len: message length
 * @done: octets already handed out
 * @max_payload: payload octets per segment, see ddp_seg_payload_max()
 * @finished: the L=1 segment has been handed out
 */
struct ddp_segmenter {
	u64	msg_len;
	u64	done;
	u32	max_payload;
	bool	finished;
};

int ddp_hdr_parse(const void *seg, u32 len, struct ddp_seg *out,
		  struct ddp_err *err);
int ddp_hdr_parse_dv(const void *seg, u32 len, u8 dv, struct ddp_seg *out,
		     struct ddp_err *err);
int ddp_check_tagged(const struct ddp_seg *s, const struct ddp_region_view *r,
		     u32 stream_id, struct ddp_err *err);
int ddp_check_untagged(const struct ddp_seg *s, const struct ddp_uq_view *q,
		       struct ddp_err *err);

void ddp_tagged_hdr_build(struct ddp_tagged_hdr *h, u8 dv, bool last,
			  u8 rsvdulp, u32 stag, u64 to);
void ddp_untagged_hdr_build(struct ddp_untagged_hdr *h, u8 dv, bool last,
			    const u8 rsvdulp[DDP_RSVDULP_U_LEN], u32 qn,
			    u32 msn, u32 mo);

bool ddp_run_in_order(u32 next, u32 seg_len, u32 off, u32 len);

u32 ddp_seg_payload_max(u32 mulpdu, bool tagged);
int ddp_seg_init(struct ddp_segmenter *it, u64 msg_len, u32 max_payload);
void ddp_seg_resize(struct ddp_segmenter *it, u32 max_payload);
bool ddp_seg_next(struct ddp_segmenter *it, u32 *off, u32 *len, bool *last);

/**
 * ddp_msn_next() - MSN of the message after @msn on the same queue
 * @msn: current MSN
 *
 * Return: @msn + 1, where 0xffffffff is followed by 0 (section 4.3).
 */
static inline u32 ddp_msn_next(u32 msn)
{
	return msn + 1;
}

/**
 * ddp_msn_before() - serial number comparison (RFC 1982) of two MSNs
 * @a: first MSN
 * @b: second MSN
 *
 * Return: true when @a comes strictly before @b, i.e. @b - @a mod 2^32 is
 * in 1..2^31-1.
 */
static inline bool ddp_msn_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/**
 * ddp_msn_after() - true when @a comes strictly after @b
 * @a: first MSN
 * @b: second MSN
 *
 * Return: ddp_msn_before(@b, @a).
 */
static inline bool ddp_msn_after(u32 a, u32 b)
{
	return ddp_msn_before(b, a);
}

/**
 * ddp_msn_in_window() - @msn is one of @n MSNs starting at @first
 * @msn: MSN to test
 * @first: first MSN of the window
 * @n: size of the window
 *
 * Return: true when @msn is in [@first, @first + @n) modulo 2^32.
 */
static inline bool ddp_msn_in_window(u32 msn, u32 first, u32 n)
{
	return msn - first < n;
}

#endif /* _DDP_PROTO_H */
