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
#include <unistd.h>

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

#endif /* _MPA_TEST_UTIL_H */
