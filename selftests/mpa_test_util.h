/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the MPA selftests: loopback TCP pairs.
 */
#ifndef _MPA_TEST_UTIL_H
#define _MPA_TEST_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <linux/mpa.h>

#ifndef TCP_ULP
#define TCP_ULP 31
#endif

/* Listening socket on the loopback address of @family, port chosen by the kernel. */
static inline int mpa_test_listener(int family, struct sockaddr_storage *addr,
				    socklen_t *alen)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
	struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
	int one = 1;
	int fd;

	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		a4->sin_family = AF_INET;
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*alen = sizeof(*a4);
	} else {
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_loopback;
		*alen = sizeof(*a6);
	}
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)addr, *alen) ||
	    listen(fd, 512) ||
	    getsockname(fd, (struct sockaddr *)addr, alen)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Connected pair: fds[0] connected, fds[1] accepted. Returns 0 or -1. */
static inline int mpa_test_pair(int family, int fds[2])
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int lfd;

	lfd = mpa_test_listener(family, &addr, &alen);
	if (lfd < 0)
		return -1;
	fds[0] = socket(family, SOCK_STREAM, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&addr, alen)) {
		close(lfd);
		return -1;
	}
	fds[1] = accept(lfd, NULL, NULL);
	close(lfd);
	return fds[1] < 0 ? -1 : 0;
}

static inline int mpa_test_set_ulp(int fd)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_ULP, "mpa", sizeof("mpa"));
}

/* MPA_INFO of @fd; state 0xdead if the option fails */
static inline struct mpa_info mpa_test_info(int fd)
{
	struct mpa_info i;
	socklen_t len = sizeof(i);

	memset(&i, 0xff, sizeof(i));
	if (getsockopt(fd, SOL_MPA, MPA_INFO, &i, &len))
		i.state = 0xdead;
	return i;
}

/* wait until @fd leaves state @from, at most 5 s; returns the new state */
static inline __u32 mpa_test_wait_state(int fd, __u32 from)
{
	int i;

	for (i = 0; i < 500; i++) {
		__u32 st = mpa_test_info(fd).state;

		if (st != from)
			return st;
		usleep(10000);
	}
	return from;
}

/* read exactly @len octets, each within 5 s; 0 or -1 */
static inline int mpa_test_read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 5000) != 1)
			return -1;
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

#endif /* _MPA_TEST_UTIL_H */
