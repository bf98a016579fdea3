/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDMA core interfaces of iwmpa.ko that differ between the supported
 * kernels (6.1 and 6.12), in the manner of <net/iwarp_compat.h>.
 *
 *  - ib_mark_name_assigned_by_user() (6.12 has it, 6.1 not): a device
 *    named by "rdma link add" keeps its name. Detected from the
 *    kernel's <rdma/ib_verbs.h> by rdmap/Kbuild
 *    (IWMPA_HAVE_NAME_ASSIGN_TYPE).
 */
#ifndef _IWMPA_COMPAT_H
#define _IWMPA_COMPAT_H

#include <rdma/ib_verbs.h>

/**
 * iwmpa_mark_name_by_user() - the device's name came from the user
 * @ibdev: the device, not registered yet
 *
 * Nothing to record on kernels before the name assign type existed.
 */
static inline void iwmpa_mark_name_by_user(struct ib_device *ibdev)
{
#ifdef IWMPA_HAVE_NAME_ASSIGN_TYPE
	ib_mark_name_assigned_by_user(ibdev);
#endif
}

#endif /* _IWMPA_COMPAT_H */
