/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for the kernel header of the same name. */
#ifndef _UNIT_COMPAT_LINUX_BUILD_BUG_H
#define _UNIT_COMPAT_LINUX_BUILD_BUG_H

/* a negative array size when @cond is true breaks the build */
#define BUILD_BUG_ON(cond)	((void)sizeof(char[1 - 2 * !!(cond)]))

#endif /* _UNIT_COMPAT_LINUX_BUILD_BUG_H */
