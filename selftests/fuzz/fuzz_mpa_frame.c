// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: MPA Request/Reply frame parser and encoder.
 *
 * Input: 4 octets of accepted-revision mask, then the frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <asm/unaligned.h>
#include "mpa_proto.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: %s\n", \
	__FILE__, __LINE__, #x); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct mpa_frame_info info, back;
	u8 out[MPA_FRAME_HDR_LEN + MPA_MAX_PD_LEN];
	u8 *hdr;
	u32 mask, avail;
	int ret;

	if (size < 4 + MPA_FRAME_HDR_LEN)
		return 0;
	mask = get_unaligned_be32(data);
	avail = size - 4 - MPA_FRAME_HDR_LEN;
	/* exact-size copy so that ASan sees any over-read */
	hdr = malloc(MPA_FRAME_HDR_LEN);
	memcpy(hdr, data + 4, MPA_FRAME_HDR_LEN);

	memset(&info, 0, sizeof(info));
	ret = mpa_frame_decode(hdr, mask, &info);
	CHECK(ret == 0 || ret == -EBADMSG || ret == -EPROTONOSUPPORT ||
	      ret == -EMSGSIZE);
	if (ret == -EBADMSG) {
		CHECK(memcmp(hdr, MPA_WIRE_KEY_REQ, MPA_WIRE_KEY_LEN) &&
		      memcmp(hdr, MPA_WIRE_KEY_REP, MPA_WIRE_KEY_LEN));
		goto out;
	}
	CHECK(info.request == !memcmp(hdr, MPA_WIRE_KEY_REQ, MPA_WIRE_KEY_LEN));
	CHECK(info.markers == !!(hdr[16] & MPA_FLAG_M));
	CHECK(info.crc == !!(hdr[16] & MPA_FLAG_C));
	CHECK(info.reject == !!(hdr[16] & MPA_FLAG_R));
	/* the enhanced-data flag exists from revision 2 on (RFC 6581) */
	CHECK(info.enhanced == (hdr[17] >= 2 && (hdr[16] & MPA_FLAG_E)));
	CHECK(info.rev == hdr[17]);
	CHECK(info.pd_len == get_unaligned_be16(hdr + 18));
	if (ret == -EPROTONOSUPPORT) {
		CHECK(info.rev >= 32 || !(mask & (1U << info.rev)));
		goto out;
	}
	CHECK(info.rev < 32 && (mask & (1U << info.rev)));
	if (ret == -EMSGSIZE) {
		CHECK(info.pd_len > MPA_MAX_PD_LEN);
		goto out;
	}
	CHECK(info.pd_len <= MPA_MAX_PD_LEN);

	/* round trip: same header but for the reserved bits (E before rev 2) */
	if (info.pd_len <= avail) {
		ret = mpa_frame_encode(out, sizeof(out), &info,
				       data + 4 + MPA_FRAME_HDR_LEN);
		CHECK(ret == (int)(MPA_FRAME_HDR_LEN + info.pd_len));
		CHECK(!memcmp(out, hdr, 16));
		CHECK(out[16] == (hdr[16] & ~(MPA_FLAG_RES |
					      (info.rev < 2 ? MPA_FLAG_E : 0))));
		CHECK(!memcmp(out + 17, hdr + 17, 3));
		CHECK(!memcmp(out + MPA_FRAME_HDR_LEN,
			      data + 4 + MPA_FRAME_HDR_LEN, info.pd_len));
		CHECK(mpa_frame_decode(out, mask, &back) == 0);
		CHECK(back.request == info.request &&
		      back.markers == info.markers && back.crc == info.crc &&
		      back.reject == info.reject && back.rev == info.rev &&
		      back.enhanced == info.enhanced &&
		      back.pd_len == info.pd_len);
		CHECK(mpa_frame_encode(out, ret - 1, &info,
				       data + 4 + MPA_FRAME_HDR_LEN) == -ENOSPC);
	}
out:
	free(hdr);
	return 0;
}
