// SPDX-License-Identifier: GPL-2.0
/*
 * mpa_crc32c() for the user-space builds of mpa/mpa_proto.c (unit tests,
 * fuzzers, selftests): the table of include/linux/crc32c.h here, where
 * the module has mpa/mpa_crc.c.
 */
#include <linux/crc32c.h>

#include "mpa_proto.h"

u32 mpa_crc32c(u32 crc, const void *p, unsigned int len)
{
	return crc32c(crc, p, len);
}
