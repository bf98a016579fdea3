// SPDX-License-Identifier: GPL-2.0
/*
 * MPA revision 2 (RFC 6581): enhanced connection data (IRD, ORD, the
 * peer-to-peer flag and the RTR types) in both roles, fallback to
 * revision 1, and malformed revision 2 frames. Needs mpa.ko loaded.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

struct v2_start {
	__u32 role, flags;
	__u16 rev, ird, ord;
	const char *pd;
};

static int v2_start(int fd, const struct v2_start *a)
{
	struct mpa_start s = {
		.role = a->role,
		.flags = a->flags,
		.rev = a->rev,
		.ird = a->ird,
		.ord = a->ord,
		.pd_len = a->pd ? strlen(a->pd) : 0,
	};

	return iw_mpa_start_ex(fd, &s, a->pd, NULL);
}

MT_ATTACHED_PAIR_FIXTURE(pair);

/* start both ends, the Responder accepts; returns the Responder's accept result */
static int v2_connect(int fds[2], const struct v2_start *ini, const struct v2_start *rsp,
		      const char *reply_pd)
{
	struct pollfd p = { .fd = fds[1], .events = POLLIN };
	int ret;

	if (v2_start(fds[1], rsp) || v2_start(fds[0], ini))
		return -100;
	if (poll(&p, 1, 5000) != 1 || iw_mpa_info_of(fds[1]).state != MPA_S_REQ_RCVD)
		return -101;
	ret = setsockopt(fds[1], SOL_MPA, MPA_ACCEPT, reply_pd,
			 reply_pd ? strlen(reply_pd) : 0);
	if (ret)
		return ret;
	return iw_mpa_wait_change(fds[0], MPA_S_REQ_SENT, 5000) == MPA_S_FULL ? 0 : -102;
}

TEST_F(pair, ird_ord_swap_and_lower)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR, 0, 2, 4, 8, "hello" };
	struct v2_start rsp = { MPA_ROLE_RESPONDER, 0, 2, 16, 2, NULL };
	char pd[16] = {};
	socklen_t len = sizeof(pd);
	struct mpa_info i, r;

	ASSERT_EQ(0, v2_connect(self->fds, &ini, &rsp, "world"));
	i = iw_mpa_info_of(self->fds[0]);
	r = iw_mpa_info_of(self->fds[1]);
	EXPECT_EQ(2, i.rev);
	EXPECT_EQ(2, r.rev);
	/* Reply IRD = min(16, Request ORD 8), Reply ORD = min(2, Request IRD 4) */
	EXPECT_EQ(8, r.ird);
	EXPECT_EQ(2, r.ord);
	EXPECT_EQ(4, r.peer_ird);
	EXPECT_EQ(8, r.peer_ord);
	/* Initiator ORD = min(8, Reply IRD 8) */
	EXPECT_EQ(4, i.ird);
	EXPECT_EQ(8, i.ord);
	EXPECT_EQ(0, i.flags & MPA_I_P2P);
	EXPECT_EQ(0, i.rtr);
	/* the private data does not show the enhanced data */
	EXPECT_EQ(5, r.peer_pd_len);
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, pd, &len));
	EXPECT_EQ(5, len);
	EXPECT_EQ(0, memcmp(pd, "hello", 5));
	len = sizeof(pd);
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, pd, &len));
	EXPECT_EQ(5, len);
	EXPECT_EQ(0, memcmp(pd, "world", 5));
	/* and FPDUs flow: the Initiator first (the RTR role), then back */
	ASSERT_EQ(3, send(self->fds[0], "rtr", 3, 0));
	ASSERT_EQ(3, recv(self->fds[1], pd, sizeof(pd), 0));
	ASSERT_EQ(2, send(self->fds[1], "ok", 2, 0));
	ASSERT_EQ(2, recv(self->fds[0], pd, sizeof(pd), 0));
}

TEST_F(pair, p2p_agrees_on_one_rtr_type)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR,
				MPA_F_P2P | MPA_F_RTR_WRITE | MPA_F_RTR_READ, 2, 1, 1, NULL };
	struct v2_start rsp = { MPA_ROLE_RESPONDER,
				MPA_F_P2P | MPA_F_RTR_READ | MPA_F_RTR_SEND, 2, 1, 1, NULL };
	struct mpa_info i, r;

	ASSERT_EQ(0, v2_connect(self->fds, &ini, &rsp, NULL));
	i = iw_mpa_info_of(self->fds[0]);
	r = iw_mpa_info_of(self->fds[1]);
	EXPECT_EQ(MPA_I_P2P, i.flags & MPA_I_P2P);
	EXPECT_EQ(MPA_I_P2P, r.flags & MPA_I_P2P);
	EXPECT_EQ(MPA_F_RTR_READ, i.rtr);
	EXPECT_EQ(MPA_F_RTR_READ, r.rtr);
}

TEST_F(pair, p2p_without_common_rtr_cannot_be_accepted)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR, MPA_F_P2P | MPA_F_RTR_WRITE, 2, 1, 1, NULL };
	struct v2_start rsp = { MPA_ROLE_RESPONDER, MPA_F_P2P | MPA_F_RTR_SEND, 2, 1, 1, NULL };

	EXPECT_EQ(-1, v2_connect(self->fds, &ini, &rsp, NULL));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(MPA_S_REQ_RCVD, iw_mpa_info_of(self->fds[1]).state);
	/* the consumer can still reject */
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_REJECT, "no", 2));
	EXPECT_EQ(MPA_S_REJECTED, iw_mpa_wait_change(self->fds[0], MPA_S_REQ_SENT, 5000));
}

TEST_F(pair, revision_2_initiator_falls_back_to_1)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR, 0, 2, 3, 3, "pd" };
	struct v2_start rsp = { MPA_ROLE_RESPONDER, 0, 1, 0, 0, NULL };
	char pd[8];
	socklen_t len = sizeof(pd);

	ASSERT_EQ(0, v2_connect(self->fds, &ini, &rsp, NULL));
	EXPECT_EQ(1, iw_mpa_info_of(self->fds[0]).rev);
	EXPECT_EQ(1, iw_mpa_info_of(self->fds[1]).rev);
	EXPECT_EQ(0, iw_mpa_info_of(self->fds[0]).ird);
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, pd, &len));
	EXPECT_EQ(2, len);
	EXPECT_EQ(0, memcmp(pd, "pd", 2));
}

TEST_F(pair, revision_1_initiator_with_revision_2_responder)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR, 0, 1, 0, 0, NULL };
	struct v2_start rsp = { MPA_ROLE_RESPONDER, 0, 2, 5, 5, NULL };

	ASSERT_EQ(0, v2_connect(self->fds, &ini, &rsp, NULL));
	EXPECT_EQ(1, iw_mpa_info_of(self->fds[0]).rev);
	EXPECT_EQ(1, iw_mpa_info_of(self->fds[1]).rev);
}

TEST_F(pair, revision_1_refuses_revision_2_options)
{
	struct v2_start a = { MPA_ROLE_INITIATOR, MPA_F_P2P, 1, 0, 0, NULL };

	EXPECT_EQ(-1, v2_start(self->fds[0], &a));
	EXPECT_EQ(EINVAL, errno);
	a = (struct v2_start){ MPA_ROLE_INITIATOR, 0, 2, 0x4000, 0, NULL };
	EXPECT_EQ(-1, v2_start(self->fds[0], &a));
	EXPECT_EQ(EINVAL, errno);
	a = (struct v2_start){ MPA_ROLE_INITIATOR, 0, 3, 0, 0, NULL };
	EXPECT_EQ(-1, v2_start(self->fds[0], &a));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
}

/* The exact Request octets, read by a raw TCP peer. */
TEST(request_bytes_on_the_wire)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR, MPA_F_P2P | MPA_F_RTR_WRITE, 2, 0x12,
				0x3456, "x" };
	static const __u8 want[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0x50, 0x02, 0x00, 0x05,		/* C, E, Rev 2, PD_Length 4 + 1 */
		0x80, 0x12,			/* P2P | IRD 0x12 */
		0xb4, 0x56,			/* Write RTR | ORD 0x3456 */
		'x',
	};
	__u8 got[sizeof(want)];
	int fds[2];
	size_t i;

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, v2_start(fds[0], &ini));
	ASSERT_EQ(sizeof(got), iw_readn(fds[1], got, sizeof(got), 5000));
	for (i = 0; i < sizeof(want); i++)
		if (want[i] != got[i])
			TH_LOG("octet %zu: want %02x, got %02x", i, want[i], got[i]);
	EXPECT_EQ(0, memcmp(want, got, sizeof(want)));
	close(fds[0]);
	close(fds[1]);
}

/* A Reply that names two RTR types breaks RFC 6581: startup error 4. */
TEST(reply_with_two_rtr_types_is_error_4)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR,
				MPA_F_P2P | MPA_F_RTR_WRITE | MPA_F_RTR_READ, 2, 1, 1, NULL };
	static const __u8 reply[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
		0x50, 0x02, 0x00, 0x04,
		0x80, 0x01, 0xc0, 0x01,		/* P2P, Write and Read RTR */
	};
	__u8 req[24];
	__u32 code = 0;
	socklen_t len = sizeof(code);
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, v2_start(fds[0], &ini));
	ASSERT_EQ(sizeof(req), iw_readn(fds[1], req, sizeof(req), 5000));
	ASSERT_EQ(sizeof(reply), write(fds[1], reply, sizeof(reply)));
	EXPECT_EQ(MPA_S_ERROR, iw_mpa_wait_change(fds[0], MPA_S_REQ_SENT, 5000));
	ASSERT_EQ(0, getsockopt(fds[0], SOL_MPA, MPA_ERROR, &code, &len));
	EXPECT_EQ(MPA_ERR_STARTUP, code);
	close(fds[0]);
	close(fds[1]);
}

/* A revision 2 Reply must carry the enhanced data (E flag): error 4. */
TEST(reply_without_enhanced_flag_is_error_4)
{
	struct v2_start ini = { MPA_ROLE_INITIATOR, 0, 2, 1, 1, NULL };
	static const __u8 reply[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
		0x40, 0x02, 0x00, 0x04,		/* no E */
		0x00, 0x01, 0x00, 0x01,
	};
	__u8 req[24];
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, v2_start(fds[0], &ini));
	ASSERT_EQ(sizeof(req), iw_readn(fds[1], req, sizeof(req), 5000));
	ASSERT_EQ(sizeof(reply), write(fds[1], reply, sizeof(reply)));
	EXPECT_EQ(MPA_S_ERROR, iw_mpa_wait_change(fds[0], MPA_S_REQ_SENT, 5000));
	close(fds[0]);
	close(fds[1]);
}

/* A siw-style revision 2 Request (E, IRD 1, ORD 1, no CRC) is accepted. */
TEST(siw_style_request_is_accepted)
{
	struct v2_start rsp = { MPA_ROLE_RESPONDER, 0, 2, 8, 8, NULL };
	static const __u8 req[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0x10, 0x02, 0x00, 0x04, 0x00, 0x01, 0x00, 0x01,
	};
	static const __u8 want[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
		0x50, 0x02, 0x00, 0x04, 0x00, 0x01, 0x00, 0x01,	/* C (ours), E, IRD/ORD 1 */
	};
	struct pollfd p;
	__u8 got[sizeof(want)];
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, v2_start(fds[1], &rsp));
	ASSERT_EQ(sizeof(req), write(fds[0], req, sizeof(req)));
	p = (struct pollfd){ .fd = fds[1], .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, 5000));
	EXPECT_EQ(1, iw_mpa_info_of(fds[1]).peer_ird);
	EXPECT_EQ(0, iw_mpa_info_of(fds[1]).peer_pd_len);
	ASSERT_EQ(0, setsockopt(fds[1], SOL_MPA, MPA_ACCEPT, NULL, 0));
	ASSERT_EQ(sizeof(got), iw_readn(fds[0], got, sizeof(got), 5000));
	EXPECT_EQ(0, memcmp(want, got, sizeof(want)));
	EXPECT_EQ(2, iw_mpa_info_of(fds[1]).rev);
	close(fds[0]);
	close(fds[1]);
}

/* A revision 2 Request too short for the enhanced data: error 4. */
TEST(request_without_enhanced_data_is_error_4)
{
	struct v2_start rsp = { MPA_ROLE_RESPONDER, 0, 2, 1, 1, NULL };
	static const __u8 req[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0x50, 0x02, 0x00, 0x02, 0x00, 0x01,	/* E set, 2 octets */
	};
	__u32 code = 0;
	socklen_t len = sizeof(code);
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, v2_start(fds[1], &rsp));
	ASSERT_EQ(sizeof(req), write(fds[0], req, sizeof(req)));
	EXPECT_EQ(MPA_S_ERROR, iw_mpa_wait_change(fds[1], MPA_S_REQ_WAIT, 5000));
	ASSERT_EQ(0, getsockopt(fds[1], SOL_MPA, MPA_ERROR, &code, &len));
	EXPECT_EQ(MPA_ERR_STARTUP, code);
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
