// SPDX-License-Identifier: GPL-2.0
/*
 * The "mpa" TCP ULP: registration and which sockets may use it.
 * Needs mpa.ko loaded.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

TEST(ulp_is_available)
{
	char buf[256] = {};
	int fd, n;

	fd = open("/proc/sys/net/ipv4/tcp_available_ulp", O_RDONLY);
	ASSERT_GE(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	EXPECT_NE(NULL, strstr(buf, "mpa"));
}

FIXTURE(established)
{
	int fds[2];
};

MT_FAMILY_VARIANTS(established);

FIXTURE_SETUP(established)
{
	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
}

FIXTURE_TEARDOWN(established)
{
	close(self->fds[0]);
	close(self->fds[1]);
}

TEST_F(established, attach_both_ends)
{
	char name[16] = {};
	socklen_t len = sizeof(name);

	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));
	ASSERT_EQ(0, getsockopt(self->fds[0], IPPROTO_TCP, TCP_ULP, name, &len));
	EXPECT_STREQ("mpa", name);
}

TEST_F(established, attach_twice_is_eexist)
{
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	EXPECT_EQ(-1, iw_mpa_attach(self->fds[0]));
	EXPECT_EQ(EEXIST, errno);
}

TEST_F(established, attach_after_peer_closed_is_enotconn)
{
	char c;

	/* abortive close of the peer: our socket leaves ESTABLISHED */
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	ASSERT_EQ(0, setsockopt(self->fds[1], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	close(self->fds[1]);
	self->fds[1] = -1;
	EXPECT_EQ(-1, read(self->fds[0], &c, 1));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(-1, iw_mpa_attach(self->fds[0]));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST(refused_on_unconnected_socket)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, iw_mpa_attach(fd));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
}

TEST(refused_on_unconnected_ipv6_socket)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, iw_mpa_attach(fd));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
}

TEST(refused_on_listening_socket)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int fd = iw_loopback_listen(AF_INET, &addr, &alen);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, iw_mpa_attach(fd));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
}

TEST(unknown_ulp_name_is_enoent)
{
	int fds[2];

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	EXPECT_EQ(-1, setsockopt(fds[0], IPPROTO_TCP, TCP_ULP, "mpa-nonexistent", 15));
	EXPECT_EQ(ENOENT, errno);
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
