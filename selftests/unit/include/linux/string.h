/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for the kernel header of the same name. */
#ifndef _UNIT_COMPAT_LINUX_STRING_H
#define _UNIT_COMPAT_LINUX_STRING_H

#include <string.h>

#endif /* _UNIT_COMPAT_LINUX_STRING_H */
