/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Common includes of the MPA selftests; the helpers themselves (loopback
 * TCP pairs, MPA startup, state, counters) are libiwarp's (tools/lib).
 */
#ifndef _MPA_TEST_UTIL_H
#define _MPA_TEST_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <linux/mpa.h>

#include "libiwarp.h"

/*
 * MT_PAIR_FIXTURE() - a kselftest fixture @name holding a socket pair
 * fds[2]: both -1 until the test opens them, closed by the teardown.
 */
#define MT_PAIR_FIXTURE(name)						\
	FIXTURE(name) {							\
		int fds[2];						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		self->fds[0] = -1;					\
		self->fds[1] = -1;					\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		iw_close_pair(self->fds);				\
	}

/*
 * MT_ATTACHED_PAIR_FIXTURE() - a fixture @name holding an IPv4 loopback
 * pair fds[2], [0] to be the Initiator and [1] the Responder, both with
 * the "mpa" ULP attached and not started.
 */
#define MT_ATTACHED_PAIR_FIXTURE(name)					\
	FIXTURE(name) {							\
		int fds[2];						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		ASSERT_EQ(0, iw_loopback_pair(AF_INET, self->fds));	\
		ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));		\
		ASSERT_EQ(0, iw_mpa_attach(self->fds[1]));		\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		close(self->fds[0]);					\
		close(self->fds[1]);					\
	}

/* MT_FAMILY_VARIANTS() - the variants ipv4 and ipv6 of @name: int family */
#define MT_FAMILY_VARIANTS(name)					\
	FIXTURE_VARIANT(name) {						\
		int family;						\
	};								\
	FIXTURE_VARIANT_ADD(name, ipv4) {				\
		.family = AF_INET,					\
	};								\
	FIXTURE_VARIANT_ADD(name, ipv6) {				\
		.family = AF_INET6,					\
	}

/* Load the module file named by the environment variable @env: finit_module(2). */
static inline int mt_load_module(const char *env)
{
	const char *ko = getenv(env);
	int fd, ret;

	if (!ko)
		return -1;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

#endif /* _MPA_TEST_UTIL_H */
