// SPDX-License-Identifier: GPL-2.0
/*
 * Permissive revision 0 (RFC 5044 Appendix C, Figures 14 to 17): an RDMA
 * Consortium peer (emulated with MPA_REV_RDMAC) against permissive and
 * non-permissive ends, both roles. Needs mpa.ko loaded.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

static int r0_start(int fd, __u32 role, __u32 flags, __u16 rev)
{
	struct mpa_start s = { .role = role, .flags = flags, .rev = rev };

	return iw_mpa_start_ex(fd, &s, NULL, NULL);
}

MT_ATTACHED_PAIR_FIXTURE(pair);

/* RFC 5044 Figures 15 and 16: which end is the RDMAC one, and is the other permissive */
FIXTURE_VARIANT(pair)
{
	bool rdmac_initiator;	/* else the Responder speaks revision 0 */
	bool permissive;	/* the other end, revision 1, has MPA_F_PERMISSIVE */
};

/* Figure 16, RDMAC Initiator and permissive Responder with M=0: V=0, M=1/1 */
FIXTURE_VARIANT_ADD(pair, rdmac_initiator_permissive_responder)
{
	.rdmac_initiator = true, .permissive = true,
};

/* Figure 16, permissive Initiator (Rev 1, M=0) and RDMAC Responder */
FIXTURE_VARIANT_ADD(pair, permissive_initiator_rdmac_responder)
{
	.rdmac_initiator = false, .permissive = true,
};

/* Figure 15: a non-permissive Responder closes on a revision 0 Request */
FIXTURE_VARIANT_ADD(pair, rdmac_initiator_non_permissive_responder_closes)
{
	.rdmac_initiator = true, .permissive = false,
};

/* Figure 15: a non-permissive Initiator closes on a revision 0 Reply */
FIXTURE_VARIANT_ADD(pair, non_permissive_initiator_rdmac_responder_closes)
{
	.rdmac_initiator = false, .permissive = false,
};

/* Revision 0 both ways: markers in both directions, CRC, FPDUs flow. */
static void r0_expect_rdmac(struct __test_metadata *_metadata, int fds[2])
{
	__u32 want = MPA_I_MARKERS_RX | MPA_I_MARKERS_TX | MPA_I_CRC;
	char buf[8];
	int i;

	for (i = 0; i < 2; i++) {
		struct mpa_info in = iw_mpa_info_of(fds[i]);

		EXPECT_EQ(MPA_S_FULL, in.state);
		EXPECT_EQ(0, in.rev);
		EXPECT_EQ(want, in.flags & want);
	}
	ASSERT_EQ(5, send(fds[0], "hello", 5, 0));
	ASSERT_EQ(5, recv(fds[1], buf, sizeof(buf), 0));
	ASSERT_EQ(2, send(fds[1], "ok", 2, 0));
	ASSERT_EQ(2, recv(fds[0], buf, sizeof(buf), 0));
}

TEST_F(pair, rdmac_peer)
{
	struct pollfd p = { .fd = self->fds[1], .events = POLLIN };
	__u32 other = variant->permissive ? MPA_F_PERMISSIVE : 0;

	if (variant->rdmac_initiator) {
		ASSERT_EQ(0, r0_start(self->fds[1], MPA_ROLE_RESPONDER, other, 1));
		ASSERT_EQ(0, r0_start(self->fds[0], MPA_ROLE_INITIATOR, 0, MPA_REV_RDMAC));
	} else {
		ASSERT_EQ(0, r0_start(self->fds[1], MPA_ROLE_RESPONDER, 0, MPA_REV_RDMAC));
		ASSERT_EQ(0, r0_start(self->fds[0], MPA_ROLE_INITIATOR, other, 1));
	}
	if (variant->rdmac_initiator && !variant->permissive) {
		EXPECT_EQ(MPA_S_ERROR, iw_mpa_wait_change(self->fds[1], MPA_S_REQ_WAIT, 5000));
		EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_info_of(self->fds[1]).error);
		return;
	}
	ASSERT_EQ(1, poll(&p, 1, 5000));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, NULL, 0));
	if (!variant->permissive) {
		EXPECT_EQ(MPA_S_ERROR, iw_mpa_wait_change(self->fds[0], MPA_S_REQ_SENT, 5000));
		EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_info_of(self->fds[0]).error);
		return;
	}
	ASSERT_EQ(MPA_S_FULL, iw_mpa_wait_change(self->fds[0], MPA_S_REQ_SENT, 5000));
	r0_expect_rdmac(_metadata, self->fds);
}

/* An RDMAC end sends Rev 0 with M and C set (C.2.4), even if asked for less */
TEST(rdmac_request_bytes)
{
	static const __u8 want[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0xc0, 0x00, 0x00, 0x00,
	};
	__u8 got[sizeof(want)];
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, r0_start(fds[0], MPA_ROLE_INITIATOR, 0, MPA_REV_RDMAC));
	ASSERT_EQ(sizeof(got), iw_readn(fds[1], got, sizeof(got), 5000));
	EXPECT_EQ(0, memcmp(want, got, sizeof(want)));
	close(fds[0]);
	close(fds[1]);
}

/* A revision 0 peer frame without M or C is not an RDMAC one: error 4 */
TEST(rdmac_request_without_markers_is_error_4)
{
	static const __u8 req[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0x40, 0x00, 0x00, 0x00,
	};
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, r0_start(fds[1], MPA_ROLE_RESPONDER, MPA_F_PERMISSIVE, 1));
	ASSERT_EQ(sizeof(req), write(fds[0], req, sizeof(req)));
	EXPECT_EQ(MPA_S_ERROR, iw_mpa_wait_change(fds[1], MPA_S_REQ_WAIT, 5000));
	close(fds[0]);
	close(fds[1]);
}

TEST(rdmac_refuses_no_crc)
{
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	EXPECT_EQ(-1, r0_start(fds[0], MPA_ROLE_INITIATOR, MPA_F_NO_CRC, MPA_REV_RDMAC));
	EXPECT_EQ(EINVAL, errno);
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
