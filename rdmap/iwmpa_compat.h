/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDMA core interfaces of iwmpa.ko that differ between the supported
 * kernels (6.1 and 6.12), in the manner of <net/iwarp_compat.h>.
 *
 *  - ib_mark_name_assigned_by_user() (6.12 has it, 6.1 not): a device
 *    named by "rdma link add" keeps its name. Detected from the
 *    kernel's <rdma/ib_verbs.h> by rdmap/Kbuild
 *    (IWMPA_HAVE_NAME_ASSIGN_TYPE).
 *  - create_cq takes the uverbs attribute bundle on 6.12, the udata on
 *    6.1 (IWMPA_HAVE_CREATE_CQ_ATTRS): iwmpa_create_cq_op() is the verb.
 */
#ifndef _IWMPA_COMPAT_H
#define _IWMPA_COMPAT_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "iwmpa.h"

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

#ifdef IWMPA_HAVE_CREATE_CQ_ATTRS
/* the verb: the driver's udata is in the bundle, none for a kernel CQ */
static inline int iwmpa_create_cq_op(struct ib_cq *cq,
				     const struct ib_cq_init_attr *attr,
				     struct uverbs_attr_bundle *attrs)
{
	return iwmpa_create_cq(cq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define iwmpa_create_cq_op iwmpa_create_cq
#endif

#endif /* _IWMPA_COMPAT_H */
