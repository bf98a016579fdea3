// SPDX-License-Identifier: GPL-2.0
/*
 * DDP (RFC 5041) over MPA.
 *
 * ddp.ko is the MPA consumer "ddp". MPA hands it every run of ULPDU
 * octets as they come out of the socket buffers (the consumer's place
 * callback, softirq or the socket owner's backlog, socket lock held);
 * DDP gathers the segment header, validates it (RFC 5041 section 7.1)
 * and copies the payload straight into the registered or posted pages:
 * one copy in all. The segment is delivered when MPA says its CRC was
 * good; an error stops placement on the stream for good.
 *
 * /dev/ddp gives user space the same thing: see include/uapi/linux/ddp.h.
 * The files are listed in ddp.h.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>

#include "ddp.h"

#define CREATE_TRACE_POINTS
#include <trace/events/ddp.h>

static int __init ddp_init(void)
{
	/* the counters first: a stream caches them when it is bound */
	int ret = ddp_proc_init();

	if (ret)
		return ret;
	ret = -ENOMEM;
	ddp_wq = alloc_workqueue("ddp", WQ_MEM_RECLAIM, 0);
	if (!ddp_wq)
		goto err_proc;
	ret = mpa_register_consumer(&ddp_consumer);
	if (ret)
		goto err_wq;
	ret = ddp_cdev_init();
	if (ret)
		goto err_consumer;
	return 0;

err_consumer:
	mpa_unregister_consumer(&ddp_consumer);
err_wq:
	destroy_workqueue(ddp_wq);
err_proc:
	ddp_proc_exit();
	return ret;
}

static void __exit ddp_exit(void)
{
	ddp_cdev_exit();
	mpa_unregister_consumer(&ddp_consumer);
	/* the frees that ddp_invalidate_remote() queued */
	rcu_barrier();
	destroy_workqueue(ddp_wq);
	ddp_proc_exit();
}

module_init(ddp_init);
module_exit(ddp_exit);

MODULE_DESCRIPTION("DDP (RFC 5041) over MPA");
MODULE_LICENSE("GPL");
