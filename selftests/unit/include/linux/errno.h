/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for the kernel header: the system uapi one has
 * the E* values (glibc's errno header itself includes this one, so
 * this must not include the libc one).
 */
#ifndef _UNIT_COMPAT_LINUX_ERRNO_H
#define _UNIT_COMPAT_LINUX_ERRNO_H

#include_next <linux/errno.h>

#endif /* _UNIT_COMPAT_LINUX_ERRNO_H */
