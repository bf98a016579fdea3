// SPDX-License-Identifier: GPL-2.0
/*
 * The CRC32c of FPDUs (RFC 5044 section 6) through one crc32c transform
 * of the crypto API for all connections, bound when mpa.ko loads (as
 * libcrc32c binds its own: the best driver present then). libcrc32c's
 * crc32c() puts a descriptor of HASH_MAX_DESCSIZE octets on the stack for
 * every call, which the kernel zeroes (INIT_STACK_ALL_ZERO) and which an
 * FPDU of a few dozen octets pays for as much as for its CRC; this one
 * holds the four octets of crc32c's state.
 */
#include <crypto/hash.h>
#include <linux/module.h>

#include "mpa.h"

/* the state of a crc32c shash is the running CRC, as lib/libcrc32c.c has it */
#define MPA_CRC_DESC_LEN	(sizeof(struct shash_desc) + sizeof(u32))

static struct crypto_shash *mpa_crc_tfm;

u32 mpa_crc32c(u32 crc, const void *p, unsigned int len)
{
	u8 buf[MPA_CRC_DESC_LEN] __aligned(__alignof__(struct shash_desc));
	struct shash_desc *desc = (struct shash_desc *)buf;
	u32 *state = shash_desc_ctx(desc);

	desc->tfm = mpa_crc_tfm;
	*state = crc;
	/* crc32c's update does not fail */
	crypto_shash_update(desc, p, len);
	return *state;
}

/* "123456789" has the CRC32c 0xe3069283 (the check value of the algorithm) */
static bool mpa_crc_check(void)
{
	static const u8 check[] = "123456789";

	return ~mpa_crc32c(~0U, check, sizeof(check) - 1) == 0xe3069283;
}

int mpa_crc_init(void)
{
	mpa_crc_tfm = crypto_alloc_shash("crc32c", 0, 0);
	if (IS_ERR(mpa_crc_tfm)) {
		pr_err("mpa: no crc32c transform (%ld)\n", PTR_ERR(mpa_crc_tfm));
		return PTR_ERR(mpa_crc_tfm);
	}
	if (crypto_shash_descsize(mpa_crc_tfm) > sizeof(u32) || !mpa_crc_check()) {
		pr_err("mpa: crc32c driver %s does not keep its state as a u32\n",
		       crypto_shash_driver_name(mpa_crc_tfm));
		crypto_free_shash(mpa_crc_tfm);
		return -EINVAL;
	}
	return 0;
}

void mpa_crc_exit(void)
{
	crypto_free_shash(mpa_crc_tfm);
}
