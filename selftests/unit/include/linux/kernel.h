/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in for the parts of the kernel header MPA uses. */
#ifndef _UNIT_COMPAT_LINUX_KERNEL_H
#define _UNIT_COMPAT_LINUX_KERNEL_H

#include <linux/types.h>
#include <limits.h>

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)

#define min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
		     _a < _b ? _a : _b; })
#define max(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
		     _a > _b ? _a : _b; })
#define min_t(t, a, b) ({ t _a = (a), _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b) ({ t _a = (a), _b = (b); _a > _b ? _a : _b; })

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define hweight8(w)	((unsigned int)__builtin_popcount((u8)(w)))

#endif /* _UNIT_COMPAT_LINUX_KERNEL_H */
