/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for the kernel header: a slicing-by-8 CRC32c that
 * behaves exactly like the kernel's crc32c(): reflected Castagnoli
 * polynomial 0x82F63B78, the seed is the raw register, no inversion on
 * either side (callers pass ~0 and invert the result, as iSCSI does).
 */
#ifndef _UNIT_COMPAT_LINUX_CRC32C_H
#define _UNIT_COMPAT_LINUX_CRC32C_H

#include <linux/types.h>

static inline const u32 (*__crc32c_table(void))[256]
{
	static u32 t[8][256];
	static bool ready;
	u32 i, j, c;

	if (ready)
		return (const u32 (*)[256])t;
	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? 0x82F63B78U : 0);
		t[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			t[j][i] = (t[j - 1][i] >> 8) ^ t[0][t[j - 1][i] & 0xff];
	ready = true;
	return (const u32 (*)[256])t;
}

static inline u32 crc32c(u32 crc, const void *address, unsigned int length)
{
	const u32 (*t)[256] = __crc32c_table();
	const u8 *p = address;

	while (length >= 8) {
		u32 lo = crc ^ ((u32)p[0] | (u32)p[1] << 8 |
				(u32)p[2] << 16 | (u32)p[3] << 24);

		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
		p += 8;
		length -= 8;
	}
	while (length--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

#endif /* _UNIT_COMPAT_LINUX_CRC32C_H */
