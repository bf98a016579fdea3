// SPDX-License-Identifier: GPL-2.0
/*
 * MPA startup (RFC 5044 section 7.1) through the socket API: negotiation of
 * markers, CRC and private data, reject, errors, timeouts, rule 4, and the
 * exact Request/Reply octets against raw TCP peers. Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

MT_PAIR_FIXTURE(startup);
MT_FAMILY_VARIANTS(startup);

/* one ULPDU each way, byte-exact, as a sanity check of the negotiation */
static int ping_pong(int fds[2])
{
	char out[300], in[400];
	int fl = 0;

	mt_fill(out, sizeof(out), 7);
	if (send(fds[0], out, sizeof(out), 0) != sizeof(out) ||
	    mt_recv(fds[1], in, sizeof(in), 0, &fl) != sizeof(out) ||
	    memcmp(in, out, sizeof(out)) || !(fl & MSG_EOR) ||
	    send(fds[1], out, 100, 0) != 100 ||
	    mt_recv(fds[0], in, sizeof(in), 0, &fl) != 100 || memcmp(in, out, 100))
		return -1;
	return 0;
}

/*
 * Every combination of what the two ends ask for: markers (M), CRC (C),
 * revision 1 or 2 (RFC 6581), over IPv4 and IPv6. Each end receives
 * markers iff it asked for them; CRCs are off only if both ends asked.
 */
FIXTURE(negotiate)
{
	int fds[2];
	int old_no_crc;
};

FIXTURE_VARIANT(negotiate)
{
	int family;
	__u16 rev;
	__u32 iflags;
	__u32 rflags;
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_r_icrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = 0, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_r_icrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = 0, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_r_inocrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_r_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_rm_icrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = 0, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_rm_icrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = 0, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_rm_inocrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_i_rm_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_r_icrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_r_icrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_r_inocrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_r_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_rm_icrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_rm_icrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_rm_inocrc_rcrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev1_im_rm_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_r_icrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = 0, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_r_icrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = 0, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_r_inocrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_r_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_rm_icrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = 0, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_rm_icrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = 0, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_rm_inocrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_i_rm_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_r_icrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_r_icrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_r_inocrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_r_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_rm_icrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_rm_icrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_rm_inocrc_rcrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv4_rev2_im_rm_inocrc_rnocrc)
{
	.family = AF_INET, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_r_icrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = 0, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_r_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = 0, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_r_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_r_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_rm_icrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = 0, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_rm_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = 0, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_rm_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_i_rm_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_r_icrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_r_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_r_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_r_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_rm_icrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_rm_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_rm_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev1_im_rm_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 1,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_r_icrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = 0, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_r_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = 0, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_r_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_r_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_rm_icrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = 0, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_rm_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = 0, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_rm_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_i_rm_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_r_icrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_r_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_r_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = 0,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_r_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_rm_icrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_rm_icrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_rm_inocrc_rcrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(negotiate, ipv6_rev2_im_rm_inocrc_rnocrc)
{
	.family = AF_INET6, .rev = 2,
	.iflags = MPA_F_MARKERS | MPA_F_NO_CRC, .rflags = MPA_F_MARKERS | MPA_F_NO_CRC,
};

FIXTURE_SETUP(negotiate)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
	self->old_no_crc = -1;
	if ((variant->iflags | variant->rflags) & MPA_F_NO_CRC) {
		self->old_no_crc = mt_allow_no_crc(1);
		if (self->old_no_crc < 0)
			SKIP(return, "no /sys/module/mpa/parameters/allow_no_crc");
	}
}

FIXTURE_TEARDOWN(negotiate)
{
	iw_close_pair(self->fds);
	if (self->old_no_crc >= 0)
		mt_allow_no_crc(self->old_no_crc);
}

TEST_F(negotiate, full_operation)
{
	struct mpa_start is = { .role = MPA_ROLE_INITIATOR, .flags = variant->iflags,
				.rev = variant->rev };
	struct mpa_start rs = { .role = MPA_ROLE_RESPONDER, .flags = variant->rflags,
				.rev = variant->rev };
	bool im = variant->iflags & MPA_F_MARKERS, rm = variant->rflags & MPA_F_MARKERS;
	__u32 crc = (variant->iflags & variant->rflags & MPA_F_NO_CRC) ? 0 : MPA_I_CRC;
	struct mpa_info ii, ri;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start_ex(self->fds[1], &rs, NULL, NULL));
	ASSERT_EQ(0, iw_mpa_start_ex(self->fds[0], &is, NULL, NULL));
	ASSERT_EQ(0, iw_mpa_respond(self->fds[1], RAW_TMO_MS));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, RAW_TMO_MS));
	ii = iw_mpa_info_of(self->fds[0]);
	ri = iw_mpa_info_of(self->fds[1]);
	EXPECT_EQ(MPA_S_FULL, ii.state);
	EXPECT_EQ(MPA_S_FULL, ri.state);
	EXPECT_EQ(MPA_ROLE_INITIATOR, ii.role);
	EXPECT_EQ(MPA_ROLE_RESPONDER, ri.role);
	EXPECT_EQ(variant->rev, ii.rev);
	EXPECT_EQ(variant->rev, ri.rev);
	EXPECT_EQ(0, ii.error);
	EXPECT_EQ(0, ri.error);
	/* the Initiator receives markers iff it asked (M in the Request) */
	EXPECT_EQ((im ? MPA_I_MARKERS_RX : 0) | (rm ? MPA_I_MARKERS_TX : 0) | crc, ii.flags);
	EXPECT_EQ((rm ? MPA_I_MARKERS_RX : 0) | (im ? MPA_I_MARKERS_TX : 0) | crc, ri.flags);
	EXPECT_EQ(0, ping_pong(self->fds));
}

TEST_F(startup, no_crc_without_admin_is_eperm)
{
	int old = mt_allow_no_crc(0);

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	EXPECT_EQ(-1, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_NO_CRC, NULL, 0, NULL,
				   0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, MPA_F_NO_CRC, NULL, 0, NULL,
				   0));
	EXPECT_EQ(EPERM, errno);
	/* nothing was sent, the sockets are still idle */
	EXPECT_EQ(MPA_S_IDLE, iw_mpa_info_of(self->fds[0]).state);
	EXPECT_EQ(MPA_S_IDLE, iw_mpa_info_of(self->fds[1]).state);
	if (old > 0)
		mt_allow_no_crc(old);
}

TEST_F(startup, private_data_lengths)
{
	static const int lens[] = { 0, 1, 511, 512 };
	__u8 ipd[512], rpd[512], got[600];
	unsigned int i;
	socklen_t len;

	mt_fill(ipd, sizeof(ipd), 1);
	mt_fill(rpd, sizeof(rpd), 2);
	for (i = 0; i < 4; i++) {
		int n = lens[i];

		ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
		ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
		ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, ipd, n, NULL, 0));
		ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
		EXPECT_EQ(n, iw_mpa_info_of(self->fds[1]).peer_pd_len);
		len = sizeof(got);
		memset(got, 0xee, sizeof(got));
		ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, got, &len));
		EXPECT_EQ(n, len);
		EXPECT_EQ(0, memcmp(got, ipd, n));
		ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, rpd, n));
		ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, RAW_TMO_MS));
		EXPECT_EQ(n, iw_mpa_info_of(self->fds[0]).peer_pd_len);
		len = sizeof(got);
		memset(got, 0xee, sizeof(got));
		ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, got, &len));
		EXPECT_EQ(n, len);
		EXPECT_EQ(0, memcmp(got, rpd, n));
		EXPECT_EQ(0, ping_pong(self->fds));
		iw_close_pair(self->fds);
	}
}

TEST_F(startup, private_data_513_is_einval)
{
	__u8 pd[513] = {};

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	EXPECT_EQ(-1, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, pd, 513, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MPA_S_IDLE, iw_mpa_info_of(self->fds[0]).state);
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, pd, 512, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	EXPECT_EQ(-1, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, pd, 513));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->fds[1], SOL_MPA, MPA_REJECT, pd, 513));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MPA_S_REQ_RCVD, iw_mpa_info_of(self->fds[1]).state);
}

/* a raw Initiator sends a Request with PD_Length 513: error 4, connection reset */
TEST_F(startup, raw_request_pd_513_is_error_4)
{
	__u8 req[20 + 513] = {};
	char c;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	mt_frame(req, 1, MPA_FLAG_C, 1, NULL, 0);
	req[18] = 0x02;
	req[19] = 0x01;
	ASSERT_EQ(0, iw_writen(self->fds[0], req, sizeof(req)));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_info_of(self->fds[1]).error);
	EXPECT_EQ(ECONNABORTED, iw_so_error(self->fds[1]));
	/* the Responder aborted the connection: the raw peer gets a reset */
	EXPECT_EQ(-1, iw_readn(self->fds[0], &c, 1, RAW_TMO_MS));
	EXPECT_EQ(ECONNRESET, errno);
}

TEST_F(startup, reject_with_private_data_then_plain_tcp)
{
	static const char ipd[] = "may I?", rpd[] = "no, go away";
	char got[600], buf[100];
	socklen_t len = sizeof(got);
	struct mpa_info ii;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_MARKERS, ipd,
				  sizeof(ipd), NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_REJECT, rpd, sizeof(rpd)));
	EXPECT_EQ(MPA_S_REJECTED, iw_mpa_info_of(self->fds[1]).state);
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_REJECTED, RAW_TMO_MS));
	ii = iw_mpa_info_of(self->fds[0]);
	EXPECT_EQ(MPA_I_REJECTED, ii.flags);
	EXPECT_EQ(0, ii.error);
	EXPECT_EQ(sizeof(rpd), ii.peer_pd_len);
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(sizeof(rpd), len);
	EXPECT_EQ(0, memcmp(got, rpd, sizeof(rpd)));
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(sizeof(ipd), len);
	EXPECT_EQ(0, memcmp(got, ipd, sizeof(ipd)));

	/* plain TCP both ways, no framing */
	ASSERT_EQ(11, write(self->fds[0], "hello world", 11));
	ASSERT_EQ(11, iw_readn(self->fds[1], buf, 11, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "hello world", 11));
	ASSERT_EQ(3, write(self->fds[1], "bye", 3));
	ASSERT_EQ(2, write(self->fds[1], "!!", 2));
	ASSERT_EQ(5, iw_readn(self->fds[0], buf, 5, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "bye!!", 5));
}

TEST_F(startup, initiator_initiator_is_error_4)
{
	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_INITIATOR, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_ERROR, RAW_TMO_MS));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[0]));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
}

static void timeout_check(struct __test_metadata *_metadata, int fd)
{
	struct timespec t0, t1;
	long ms;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* recv blocks until the startup fails */
	EXPECT_EQ(-1, recv(fd, &c, 1, 0));
	EXPECT_EQ(ETIMEDOUT, errno);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(ms, 5000);
	EXPECT_EQ(MPA_S_ERROR, iw_mpa_info_of(fd).state);
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(fd));
}

TEST_F(startup, responder_responder_times_out)
{
	__u32 t0 = 300, t1 = 20000;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &t0, sizeof(t0)));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_TIMEOUT, &t1, sizeof(t1)));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	timeout_check(_metadata, self->fds[0]);
	/* the other Responder sees the connection go away during its startup */
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_ERROR, RAW_TMO_MS));
	EXPECT_EQ(MPA_ERR_STARTUP, iw_mpa_error(self->fds[1]));
}

TEST_F(startup, silent_peer_times_out)
{
	__u32 t = 300, got = 0;
	socklen_t len = sizeof(got);
	__u8 req[20];
	int role;

	for (role = MPA_ROLE_INITIATOR; role <= MPA_ROLE_RESPONDER; role++) {
		ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
		ASSERT_EQ(0, setsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &t, sizeof(t)));
		ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_TIMEOUT, &got, &len));
		EXPECT_EQ(300, got);
		ASSERT_EQ(0, iw_mpa_start(self->fds[0], role, 0, NULL, 0, NULL, 0));
		if (role == MPA_ROLE_INITIATOR)
			ASSERT_EQ(20, iw_readn(self->fds[1], req, 20, RAW_TMO_MS));
		timeout_check(_metadata, self->fds[0]);
		/* the connection is aborted */
		EXPECT_EQ(-1, iw_readn(self->fds[1], req, 1, RAW_TMO_MS));
		EXPECT_EQ(ECONNRESET, errno);
		iw_close_pair(self->fds);
	}
}

/* Request + first FPDU queued in TCP before the Responder attaches the ULP */
TEST_F(startup, bytes_before_start_are_kept)
{
	__u8 buf[2048], ulpdu[777], got[1000];
	size_t n;
	int len, fl = 0;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	mt_fill(ulpdu, sizeof(ulpdu), 3);
	n = mt_frame(buf, 1, MPA_FLAG_M | MPA_FLAG_C, 1, "pd", 2);
	/* the Responder did not ask for markers, the Initiator gets them */
	len = mt_enc(buf + n, sizeof(buf) - n, 0, false, true, ulpdu, sizeof(ulpdu));
	ASSERT_GT(len, 0);
	ASSERT_EQ(0, iw_writen(self->fds[0], buf, n + len));
	usleep(50000);
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	EXPECT_EQ(2, iw_mpa_info_of(self->fds[1]).peer_pd_len);
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, "", 0));
	EXPECT_EQ(MPA_I_CRC | MPA_I_MARKERS_TX, iw_mpa_info_of(self->fds[1]).flags);
	ASSERT_EQ(20, iw_readn(self->fds[0], buf, 20, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "MPA ID Rep Frame", 16));
	EXPECT_EQ(MPA_FLAG_C, buf[16]);
	EXPECT_EQ(sizeof(ulpdu), mt_recv(self->fds[1], got, sizeof(got), 0, &fl));
	EXPECT_EQ(0, memcmp(got, ulpdu, sizeof(ulpdu)));
	EXPECT_TRUE(fl & MSG_EOR);
}

TEST_F(startup, last_streaming_message)
{
	static const char lsm[] = "last streaming message: MPA follows";
	__u8 buf[100], req[20];

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, lsm, sizeof(lsm)));
	ASSERT_EQ(sizeof(lsm), iw_readn(self->fds[0], buf, sizeof(lsm), RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, lsm, sizeof(lsm)));
	/* nothing else before the Request */
	EXPECT_EQ(0, iw_readn(self->fds[0], buf, 1, 100));
	mt_frame(req, 1, MPA_FLAG_C, 1, NULL, 0);
	ASSERT_EQ(0, iw_writen(self->fds[0], req, 20));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_MPA, MPA_ACCEPT, "ok", 2));
	ASSERT_EQ(22, iw_readn(self->fds[0], buf, 22, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(buf, "MPA ID Rep Frame\x40\x01\x00\x02ok", 22));
}

TEST_F(startup, lsm_only_for_the_responder)
{
	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	EXPECT_EQ(-1, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, 0, NULL, 0, "x", 1));
	EXPECT_EQ(EINVAL, errno);
}

/* RFC 5044 7.1.2 rule 4: the Responder sends after it received an FPDU */
TEST_F(startup, responder_waits_for_first_fpdu)
{
	struct timeval tv = { .tv_usec = 200000 };
	char buf[64];
	int fl;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, 0, 0, RAW_TMO_MS));
	EXPECT_EQ(-1, send(self->fds[1], "early", 5, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	/* a blocking send waits (here until SO_SNDTIMEO) */
	EXPECT_EQ(-1, send(self->fds[1], "early", 5, 0));
	EXPECT_EQ(EAGAIN, errno);
	/* nothing went out */
	EXPECT_EQ(-1, mt_recv(self->fds[0], buf, sizeof(buf), MSG_DONTWAIT, &fl));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, iw_mpa_stats_of(self->fds[1]).tx_fpdus);
	ASSERT_EQ(5, send(self->fds[0], "first", 5, 0));
	ASSERT_EQ(5, mt_recv(self->fds[1], buf, sizeof(buf), 0, &fl));
	EXPECT_EQ(5, send(self->fds[1], "later", 5, MSG_DONTWAIT));
	EXPECT_EQ(5, mt_recv(self->fds[0], buf, sizeof(buf), 0, &fl));
	EXPECT_EQ(0, memcmp(buf, "later", 5));
}

/* the Initiator may send as soon as it got the Reply */
TEST_F(startup, blocked_responder_send_completes)
{
	char buf[64];
	int st = -1;
	pid_t pid;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, MPA_F_MARKERS, 0, RAW_TMO_MS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(300000);
		_exit(send(self->fds[0], "go", 2, 0) == 2 ? 0 : 1);
	}
	/* blocks ~300 ms until the Initiator's first FPDU has arrived */
	EXPECT_EQ(3, send(self->fds[1], "abc", 3, 0));
	EXPECT_EQ(2, mt_recv(self->fds[1], buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(3, mt_recv(self->fds[0], buf, sizeof(buf), 0, NULL));
	EXPECT_EQ(0, memcmp(buf, "abc", 3));
	EXPECT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st);
}

/* a raw Responder reads the exact Request the module sends */
TEST_F(startup, request_bytes_on_the_wire)
{
	static const struct { __u32 flags; __u8 wire; } c[] = {
		{ 0, MPA_FLAG_C },
		{ MPA_F_MARKERS, MPA_FLAG_M | MPA_FLAG_C },
	};
	__u8 want[64], got[64];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
		ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, c[i].flags, "xyz", 3,
					  NULL, 0));
		EXPECT_EQ(MPA_S_REQ_SENT, iw_mpa_info_of(self->fds[0]).state);
		mt_frame(want, 1, c[i].wire, 1, "xyz", 3);
		ASSERT_EQ(23, iw_readn(self->fds[1], got, 23, RAW_TMO_MS));
		EXPECT_EQ(0, memcmp(got, want, 23));
		EXPECT_EQ(0, iw_readn(self->fds[1], got, 1, 100));
		iw_close_pair(self->fds);
	}
}

TEST_F(startup, request_bytes_no_crc)
{
	__u8 want[20], got[20];
	int old = mt_allow_no_crc(1);

	if (old < 0)
		SKIP(return, "no allow_no_crc parameter");
	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_NO_CRC | MPA_F_MARKERS,
				  NULL, 0, NULL, 0));
	mt_allow_no_crc(old);
	mt_frame(want, 1, MPA_FLAG_M, 1, NULL, 0);
	ASSERT_EQ(20, iw_readn(self->fds[1], got, 20, RAW_TMO_MS));
	EXPECT_EQ(0, memcmp(got, want, 20));
}

/* a raw Responder feeds the Reply and the first FPDU one octet per segment */
TEST_F(startup, reply_dribbled)
{
	__u8 req[20], rep[40], wire[600], ulpdu[500], got[600];
	socklen_t len = sizeof(got);
	int n, fl = 0;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, MPA_F_MARKERS, NULL, 0, NULL,
				  0));
	ASSERT_EQ(20, iw_readn(self->fds[1], req, 20, RAW_TMO_MS));
	n = mt_frame(rep, 0, MPA_FLAG_C, 1, "dribble", 7);
	ASSERT_EQ(0, mt_dribble(self->fds[1], rep, n - 1));
	usleep(20000);
	EXPECT_EQ(MPA_S_REQ_SENT, iw_mpa_info_of(self->fds[0]).state);
	ASSERT_EQ(0, mt_dribble(self->fds[1], rep + n - 1, 1));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[0], MPA_S_FULL, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[0], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(7, len);
	EXPECT_EQ(0, memcmp(got, "dribble", 7));
	EXPECT_EQ(MPA_I_MARKERS_RX | MPA_I_CRC, iw_mpa_info_of(self->fds[0]).flags);
	mt_fill(ulpdu, sizeof(ulpdu), 9);
	n = mt_enc(wire, sizeof(wire), 0, true, true, ulpdu, sizeof(ulpdu));
	ASSERT_EQ(4 + 2 + 500 + 2 + 4, n);
	ASSERT_EQ(0, mt_dribble(self->fds[1], wire, n));
	EXPECT_EQ(500, mt_recv(self->fds[0], got, sizeof(got), 0, &fl));
	EXPECT_EQ(0, memcmp(got, ulpdu, 500));
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
}

/* a raw Initiator feeds the Request one octet per segment */
TEST_F(startup, request_dribbled)
{
	__u8 req[40], got[40];
	socklen_t len = sizeof(got);
	int n;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, iw_mpa_start(self->fds[1], MPA_ROLE_RESPONDER, 0, NULL, 0, NULL, 0));
	n = mt_frame(req, 1, MPA_FLAG_C, 1, "slowly", 6);
	ASSERT_EQ(0, mt_dribble(self->fds[0], req, n));
	ASSERT_EQ(0, iw_mpa_wait_state(self->fds[1], MPA_S_REQ_RCVD, RAW_TMO_MS));
	ASSERT_EQ(0, getsockopt(self->fds[1], SOL_MPA, MPA_PEER_PD, got, &len));
	EXPECT_EQ(6, len);
	EXPECT_EQ(0, memcmp(got, "slowly", 6));
}

TEST_HARNESS_MAIN
