// SPDX-License-Identifier: GPL-2.0
/*
 * Compile test: the project's wire header and siw's iwarp.h
 * (drivers/infiniband/sw/siw, extracted into build/ksrc by tools/deps)
 * can be included in one translation unit, so a kernel file may use
 * both. It stops compiling if iwarp_wire.h defines a name siw's header
 * also defines. The checks at run time compare the two views of the
 * same wire formats.
 */
#include <linux/types.h>
#include <asm/byteorder.h>
#include <string.h>

/* the kernel byte order helpers siw's header uses */
#define cpu_to_be16(x)	__cpu_to_be16(x)
#define cpu_to_be32(x)	__cpu_to_be32(x)
#define be16_to_cpu(x)	__be16_to_cpu(x)
#define be32_to_cpu(x)	__be32_to_cpu(x)

#include <uapi/linux/iwarp_wire.h>
#include "iwarp.h"

#include "kselftest_harness.h"

TEST(same_wire_formats)
{
	EXPECT_EQ(sizeof(struct mpa_v2_data), sizeof(struct mpa_wire_v2_data));
	EXPECT_EQ(sizeof(struct mpa_marker), sizeof(struct mpa_wire_marker));
	EXPECT_EQ(sizeof(struct mpa_rr), sizeof(struct mpa_frame_hdr));
	EXPECT_EQ(0, memcmp(MPA_KEY_REQ, MPA_WIRE_KEY_REQ, MPA_WIRE_KEY_LEN));
	EXPECT_EQ(0, memcmp(MPA_KEY_REP, MPA_WIRE_KEY_REP, MPA_WIRE_KEY_LEN));
	EXPECT_EQ(DDP_VERSION, DDP_WIRE_VERSION);
	EXPECT_EQ(MPA_HDR_SIZE, MPA_HDR_LEN);
	EXPECT_EQ(MPA_CRC_SIZE, MPA_CRC_LEN);
	EXPECT_EQ(DDP_ECODE_T_INVALID_STAG, DDP_WIRE_ECODE_T_INVALID_STAG);
	EXPECT_EQ(DDP_ECODE_T_BASE_BOUNDS, DDP_WIRE_ECODE_T_BASE_BOUNDS);
	EXPECT_EQ(DDP_ECODE_T_STAG_NOT_ASSOC, DDP_WIRE_ECODE_T_STAG_NOT_ASSOC);
	EXPECT_EQ(DDP_ECODE_T_TO_WRAP, DDP_WIRE_ECODE_T_TO_WRAP);
	EXPECT_EQ(DDP_ETYPE_CATASTROPHIC, DDP_WIRE_ETYPE_CATASTROPHIC);
}

TEST_HARNESS_MAIN
