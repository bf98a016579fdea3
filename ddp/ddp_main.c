// SPDX-License-Identifier: GPL-2.0
/*
 * DDP (RFC 5041) over MPA.
 *
 * This module is the DDP layer; it binds to MPA connections through
 * the MPA consumer API. Placement is not implemented yet: the module
 * only loads and unloads.
 */
#include <linux/module.h>

static int __init ddp_init(void)
{
	return 0;
}

static void __exit ddp_exit(void)
{
}

module_init(ddp_init);
module_exit(ddp_exit);

MODULE_DESCRIPTION("DDP (RFC 5041) over MPA");
MODULE_LICENSE("GPL");
