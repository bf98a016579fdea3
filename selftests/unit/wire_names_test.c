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
#include <stddef.h>
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

/* RDMAP (RFC 5040): siw's opcodes, queues, error numbers and layouts */
TEST(same_rdmap_numbers)
{
	EXPECT_EQ(RDMAP_RDMA_WRITE, RDMAP_WIRE_OP_WRITE);
	EXPECT_EQ(RDMAP_RDMA_READ_REQ, RDMAP_WIRE_OP_READ_REQ);
	EXPECT_EQ(RDMAP_RDMA_READ_RESP, RDMAP_WIRE_OP_READ_RESP);
	EXPECT_EQ(RDMAP_SEND, RDMAP_WIRE_OP_SEND);
	EXPECT_EQ(RDMAP_SEND_INVAL, RDMAP_WIRE_OP_SEND_INV);
	EXPECT_EQ(RDMAP_SEND_SE, RDMAP_WIRE_OP_SEND_SE);
	EXPECT_EQ(RDMAP_SEND_SE_INVAL, RDMAP_WIRE_OP_SEND_SE_INV);
	EXPECT_EQ(RDMAP_TERMINATE, RDMAP_WIRE_OP_TERMINATE);
	EXPECT_EQ(RDMAP_UNTAGGED_QN_SEND, RDMAP_WIRE_QN_SEND);
	EXPECT_EQ(RDMAP_UNTAGGED_QN_RDMA_READ, RDMAP_WIRE_QN_READ_REQ);
	EXPECT_EQ(RDMAP_UNTAGGED_QN_TERMINATE, RDMAP_WIRE_QN_TERMINATE);
	EXPECT_EQ(RDMAP_UNTAGGED_QN_COUNT, RDMAP_WIRE_NQUEUES);
	EXPECT_EQ(TERM_ERROR_LAYER_RDMAP, RDMAP_WIRE_LAYER_RDMAP);
	EXPECT_EQ(TERM_ERROR_LAYER_DDP, RDMAP_WIRE_LAYER_DDP);
	EXPECT_EQ(TERM_ERROR_LAYER_LLP, RDMAP_WIRE_LAYER_LLP);
	EXPECT_EQ(RDMAP_ETYPE_CATASTROPHIC, RDMAP_WIRE_ETYPE_CATASTROPHIC);
	EXPECT_EQ(RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_WIRE_ETYPE_PROTECTION);
	EXPECT_EQ(RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_WIRE_ETYPE_OPERATION);
	EXPECT_EQ(RDMAP_ECODE_INVALID_STAG, RDMAP_WIRE_ECODE_INVALID_STAG);
	EXPECT_EQ(RDMAP_ECODE_BASE_BOUNDS, RDMAP_WIRE_ECODE_BASE_BOUNDS);
	EXPECT_EQ(RDMAP_ECODE_ACCESS_RIGHTS, RDMAP_WIRE_ECODE_ACCESS);
	EXPECT_EQ(RDMAP_ECODE_STAG_NOT_ASSOC, RDMAP_WIRE_ECODE_STAG_NOT_ASSOC);
	EXPECT_EQ(RDMAP_ECODE_TO_WRAP, RDMAP_WIRE_ECODE_TO_WRAP);
	EXPECT_EQ(RDMAP_ECODE_VERSION, RDMAP_WIRE_ECODE_VERSION);
	EXPECT_EQ(RDMAP_ECODE_OPCODE, RDMAP_WIRE_ECODE_OPCODE);
	EXPECT_EQ(RDMAP_ECODE_CATASTROPHIC_STREAM, RDMAP_WIRE_ECODE_CATA_STREAM);
	EXPECT_EQ(RDMAP_ECODE_CATASTROPHIC_GLOBAL, RDMAP_WIRE_ECODE_CATA_GLOBAL);
	EXPECT_EQ(RDMAP_ECODE_CANNOT_INVALIDATE, RDMAP_WIRE_ECODE_NO_INVALIDATE);
	EXPECT_EQ(RDMAP_ECODE_UNSPECIFIED, RDMAP_WIRE_ECODE_UNSPECIFIED);
	EXPECT_EQ(be32_to_cpu(TERM_FLAG_M), RDMAP_WIRE_TERM_M);
	EXPECT_EQ(be32_to_cpu(TERM_FLAG_D), RDMAP_WIRE_TERM_D);
	EXPECT_EQ(be32_to_cpu(TERM_FLAG_R), RDMAP_WIRE_TERM_R);
	EXPECT_EQ(be32_to_cpu(TERM_MASK_RESVD), RDMAP_WIRE_TERM_RSVD);
	EXPECT_EQ(be32_to_cpu(TERM_MASK_LAYER), 0xfU << RDMAP_WIRE_TERM_LAYER_SHIFT);
	EXPECT_EQ(be32_to_cpu(TERM_MASK_ETYPE), 0xfU << RDMAP_WIRE_TERM_ETYPE_SHIFT);
	EXPECT_EQ(be32_to_cpu(TERM_MASK_ECODE), 0xffU << RDMAP_WIRE_TERM_ECODE_SHIFT);
	/* siw's Read Request: MPA length, untagged DDP header, then ours */
	EXPECT_EQ(sizeof(struct iwarp_rdma_rreq),
		  MPA_HDR_LEN + sizeof(struct ddp_untagged_hdr) +
		  sizeof(struct rdmap_wire_read_req));
	EXPECT_EQ(offsetof(struct iwarp_rdma_rreq, source_to) -
		  offsetof(struct iwarp_rdma_rreq, sink_stag),
		  offsetof(struct rdmap_wire_read_req, src_to));
	EXPECT_EQ(offsetof(struct iwarp_rdma_rreq, read_size) -
		  offsetof(struct iwarp_rdma_rreq, sink_stag),
		  offsetof(struct rdmap_wire_read_req, size));
	EXPECT_EQ(offsetof(struct iwarp_rdma_rreq, source_stag) -
		  offsetof(struct iwarp_rdma_rreq, sink_stag),
		  offsetof(struct rdmap_wire_read_req, src_stag));
}

TEST_HARNESS_MAIN
