/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Common includes of the MPA selftests; the helpers themselves (loopback
 * TCP pairs, MPA startup, state, counters) are libiwarp's (tools/lib).
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

#include "libiwarp.h"

#endif /* _MPA_TEST_UTIL_H */
