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
