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
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
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

/*
 * Read the counters of the /proc file @path ("name value" lines, as
 * /proc/net/mpa_stat) into @v: the @n names @names must all be there, in
 * this order, and nothing more. 0, or -1.
 */
static inline int mt_read_proc_stats(const char *path, const char names[][32],
				     unsigned int n, unsigned long *v)
{
	char name[64];
	unsigned int i;
	int ret = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	for (i = 0; i < n; i++)
		if (fscanf(f, "%63s %lu", name, &v[i]) != 2 ||
		    strcmp(name, names[i]))
			ret = -1;
	if (fscanf(f, "%63s", name) != EOF)	/* nothing more */
		ret = -1;
	fclose(f);
	return ret;
}

/* the counter @name of /proc/net/mpa_stat, or -1 */
static inline long mt_mpa_stat(const char *name)
{
	char n[64];
	long v, ret = -1;
	FILE *f = fopen("/proc/net/mpa_stat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", n, &v) == 2)
		if (!strcmp(n, name))
			ret = v;
	fclose(f);
	return ret;
}

/*
 * Wait (up to @ms) until MPA let go of every transmit page it allocated
 * (tx_page_cache): a second after their last use, once TCP is done.
 */
static inline int mt_tx_pages_released(int ms)
{
	for (; ms > 0; ms -= 100) {
		if (mt_mpa_stat("MpaTxPages") == mt_mpa_stat("MpaTxPagesReleased"))
			return 0;
		usleep(100000);
	}
	return -1;
}

/*
 * Wait (up to a second) until TCP holds no unacknowledged data on @fd:
 * no ACK for it can then arrive, and push TCP's unsent skbs, while a test
 * counts how its next sends are cut into segments.
 */
static inline int mt_all_acked(int fd)
{
	struct tcp_info ti;
	socklen_t len;
	int i;

	for (i = 0; i < 200; i++) {
		len = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
			return -1;
		if (!ti.tcpi_unacked)
			return 0;
		usleep(5000);
	}
	return -1;
}

/* Enter a new network namespace with lo up: its counters are all zero. */
static inline int mt_new_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, ret;

	if (unshare(CLONE_NEWNET))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	if (!ret)
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
	return ret;
}

#endif /* _MPA_TEST_UTIL_H */
