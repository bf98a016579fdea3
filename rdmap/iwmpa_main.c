// SPDX-License-Identifier: GPL-2.0
/*
 * iwmpa.ko: an iWARP RDMA device over rdmap.ko (RFC 5040), ddp.ko
 * (RFC 5041) and mpa.ko (RFC 5044). "rdma link add NAME type iwmpa
 * netdev DEV" creates one device per netdev; it speaks siw's user ABI
 * (<rdma/siw-abi.h>) with siw's driver id, so that rdma-core's siw
 * provider drives it. This file: the devices' life cycle (link
 * operations, netdev events, module load and unload). The verbs are in
 * iwmpa_verbs.c. See Documentation/iwmpa.rst.
 *
 * Both siw and iwmpa carry RDMA_DRIVER_SIW: ib_unregister_driver() and
 * ib_device_get_by_netdev() cannot tell them apart, so this module keeps
 * its own list of devices (iwmpa_devs) and never calls the former.
 */
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_netlink.h>
#include <rdma/siw-abi.h>

#include "iwmpa.h"
#include "iwmpa_compat.h"

/* every iwmpa_dev from its creation to its dealloc_driver */
static LIST_HEAD(iwmpa_devs);
static DEFINE_MUTEX(iwmpa_devs_lock);
static atomic_t iwmpa_dev_ids = ATOMIC_INIT(0);

/* the queue pairs' work and the regions' frees */
struct workqueue_struct *iwmpa_wq;

static const struct iwmpa_limits iwmpa_default_limits = {
	.max_ctx	= IWMPA_MAX_CTX,
	.max_pd		= IWMPA_MAX_PD,
	.max_mr		= IWMPA_MAX_MR,
	.max_mr_size	= IWMPA_MAX_MR_SIZE,
	.max_qp		= IWMPA_MAX_QP,
	.max_qp_wr	= IWMPA_MAX_QP_WR,
	.max_sge	= IWMPA_MAX_SGE,
	.max_recv_sge	= IWMPA_MAX_RECV_SGE,
	.max_sge_rd	= IWMPA_MAX_SGE_RD,
	.max_cq		= IWMPA_MAX_CQ,
	.max_cqe	= IWMPA_MAX_CQE,
	.max_fr_pages	= IWMPA_MAX_FR_PAGES,
	.max_srq	= IWMPA_MAX_SRQ,
	.max_srq_wr	= IWMPA_MAX_SRQ_WR,
	.ird		= RDMAP_MAX_IRD,
	.ord		= RDMAP_MAX_ORD,
};

static const struct rdma_stat_desc iwmpa_stat_descs[IWMPA_STAT_NUM] = {
	[IWMPA_STAT_SEND_TX].name = "send_tx",
	[IWMPA_STAT_WRITE_TX].name = "write_tx",
	[IWMPA_STAT_READ_TX].name = "read_tx",
	[IWMPA_STAT_TX_BYTES].name = "tx_bytes",
	[IWMPA_STAT_RECV_RX].name = "recv_rx",
	[IWMPA_STAT_READ_DONE].name = "read_done",
	[IWMPA_STAT_RX_BYTES].name = "rx_bytes",
	[IWMPA_STAT_REG_MR].name = "reg_mr",
	[IWMPA_STAT_LOCAL_INV].name = "local_inv",
	[IWMPA_STAT_REMOTE_INV].name = "remote_inv",
	[IWMPA_STAT_CONN].name = "connections",
	[IWMPA_STAT_QP_FATAL].name = "qp_fatal",
	[IWMPA_STAT_CQ_OVERFLOW].name = "cq_overflow",
};

/* the counters of port 1 ("rdma statistic show link DEV/1") */
static struct rdma_hw_stats *
iwmpa_alloc_hw_port_stats(struct ib_device *ibdev, u32 port)
{
	return rdma_alloc_hw_stats_struct(iwmpa_stat_descs, IWMPA_STAT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int iwmpa_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibdev);
	int cpu, i;

	for (i = 0; i < IWMPA_STAT_NUM; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct iwmpa_stats *st = per_cpu_ptr(dev->stats, cpu);

		for (i = 0; i < IWMPA_STAT_NUM; i++)
			stats->value[i] += READ_ONCE(st->v[i]);
	}
	return IWMPA_STAT_NUM;
}

/* the RDMA core's last call for a registered device, before its free */
static void iwmpa_dealloc_driver(struct ib_device *ibdev)
{
	struct iwmpa_dev *dev = to_iwmpa_dev(ibdev);

	mutex_lock(&iwmpa_devs_lock);
	list_del_init(&dev->list);
	mutex_unlock(&iwmpa_devs_lock);
	/* the RDMA core destroyed every QP and MR before */
	xa_destroy(&dev->qps);
	free_percpu(dev->stats);
}

/*
 * Only what is implemented is here: the RDMA core answers EOPNOTSUPP
 * for every other verb. Kernel PDs use the local DMA lkey; get_dma_mr
 * (a region of all memory the peer may reach) refuses.
 */
static const struct ib_device_ops iwmpa_dev_ops = {
	.owner = THIS_MODULE,
	.uverbs_abi_ver = SIW_ABI_VERSION,
	.driver_id = RDMA_DRIVER_SIW,

	.alloc_hw_port_stats = iwmpa_alloc_hw_port_stats,
	.alloc_mr = iwmpa_alloc_mr,
	.alloc_pd = iwmpa_alloc_pd,
	.alloc_ucontext = iwmpa_alloc_ucontext,
	.create_cq = iwmpa_create_cq_op,
	.create_qp = iwmpa_create_qp,
	.create_srq = iwmpa_create_srq,
	.dealloc_driver = iwmpa_dealloc_driver,
	.dealloc_pd = iwmpa_dealloc_pd,
	.dealloc_ucontext = iwmpa_dealloc_ucontext,
	.dereg_mr = iwmpa_dereg_mr,
	.destroy_cq = iwmpa_destroy_cq,
	.destroy_qp = iwmpa_destroy_qp,
	.destroy_srq = iwmpa_destroy_srq,
	.get_dma_mr = iwmpa_get_dma_mr,
	.get_hw_stats = iwmpa_get_hw_stats,
	.get_port_immutable = iwmpa_get_port_immutable,
	.iw_accept = iwmpa_accept,
	.iw_add_ref = iwmpa_qp_get,
	.iw_connect = iwmpa_connect,
	.iw_create_listen = iwmpa_create_listen,
	.iw_destroy_listen = iwmpa_destroy_listen,
	.iw_get_qp = iwmpa_iw_get_qp,
	.iw_reject = iwmpa_reject,
	.iw_rem_ref = iwmpa_qp_put,
	.map_mr_sg = iwmpa_map_mr_sg,
	.mmap = iwmpa_mmap,
	.mmap_free = iwmpa_mmap_free,
	.modify_qp = iwmpa_modify_qp,
	.modify_srq = iwmpa_modify_srq,
	.poll_cq = iwmpa_poll_cq,
	.post_recv = iwmpa_post_recv,
	.post_send = iwmpa_post_send,
	.post_srq_recv = iwmpa_post_srq_recv,
	.query_device = iwmpa_query_device,
	.query_gid = iwmpa_query_gid,
	.query_port = iwmpa_query_port,
	.query_qp = iwmpa_query_qp,
	.query_srq = iwmpa_query_srq,
	.reg_user_mr = iwmpa_reg_user_mr,
	.req_notify_cq = iwmpa_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, iwmpa_cq, base),
	INIT_RDMA_OBJ_SIZE(ib_pd, iwmpa_pd, base),
	INIT_RDMA_OBJ_SIZE(ib_qp, iwmpa_qp, base),
	INIT_RDMA_OBJ_SIZE(ib_srq, iwmpa_srq, base),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, iwmpa_ucontext, base),
};

static bool iwmpa_netdev_ok(const struct net_device *netdev)
{
	return netdev->type == ARPHRD_ETHER ||
	       netdev->type == ARPHRD_IEEE802 ||
	       netdev->type == ARPHRD_NONE ||
	       netdev->type == ARPHRD_LOOPBACK;
}

static struct iwmpa_dev *iwmpa_dev_alloc(struct net_device *netdev)
{
	struct iwmpa_dev *dev;
	struct ib_device *ibdev;

	dev = ib_alloc_device(iwmpa_dev, ibdev);
	if (!dev)
		return NULL;
	ibdev = &dev->ibdev;
	INIT_LIST_HEAD(&dev->list);
	dev->netdev = netdev;
	dev->dev_id = atomic_inc_return(&iwmpa_dev_ids);
	dev->limits = iwmpa_default_limits;
	atomic_set(&dev->num_ctx, 0);
	atomic_set(&dev->num_pd, 0);
	atomic_set(&dev->num_mr, 0);
	atomic_set(&dev->num_cq, 0);
	atomic_set(&dev->num_qp, 0);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC1);

	/* iWARP connections are told apart by address; the GID must differ */
	if (netdev->addr_len)
		memcpy(dev->raw_gid, netdev->dev_addr,
		       min_t(unsigned int, netdev->addr_len, ETH_ALEN));
	else
		eth_random_addr(dev->raw_gid);
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, dev->raw_gid);

	ibdev->node_type = RDMA_NODE_RNIC;
	strscpy(ibdev->node_desc, IWMPA_NODE_DESC, sizeof(ibdev->node_desc));
	ibdev->phys_port_cnt = 1;
	/* no interrupts: a CQ's vector is a hint consumers spread queues by */
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = IWMPA_DMA_LKEY;
	strscpy(ibdev->iw_ifname, netdev->name, sizeof(ibdev->iw_ifname));
	/* no iwpmd: the TCP ports are the stack's own */
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	/* siw's provider rings the SQ's doorbell with an empty post_send */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	ib_set_device_ops(ibdev, &iwmpa_dev_ops);
	/* from here on, ib_dealloc_device() calls dealloc_driver */
	dev->stats = alloc_percpu(struct iwmpa_stats);
	if (!dev->stats || ib_device_set_netdev(ibdev, netdev, IWMPA_PORT)) {
		ib_dealloc_device(ibdev);
		return NULL;
	}
	return dev;
}

/* struct rdma_link_ops' newlink: "rdma link add NAME type iwmpa netdev DEV" */
static int iwmpa_newlink(const char *name, struct net_device *netdev)
{
	struct ib_device *other;
	struct iwmpa_dev *dev;
	int ret;

	if (!iwmpa_netdev_ok(netdev))
		return -EINVAL;
	/* one device of siw's driver id per netdev, siw's or ours */
	other = ib_device_get_by_netdev(netdev, RDMA_DRIVER_SIW);
	if (other) {
		ib_device_put(other);
		return -EEXIST;
	}
	dev = iwmpa_dev_alloc(netdev);
	if (!dev)
		return -ENOMEM;
	iwmpa_mark_name_by_user(&dev->ibdev);
	/*
	 * Listed before it is registered: once registered, "rdma link
	 * delete" may free it at any time, and dealloc_driver unlists it.
	 */
	mutex_lock(&iwmpa_devs_lock);
	list_add_tail(&dev->list, &iwmpa_devs);
	mutex_unlock(&iwmpa_devs_lock);
	ret = ib_register_device(&dev->ibdev, name, NULL);
	if (ret) {
		/* the RDMA core left the device to us: dealloc_driver unlists */
		ib_dealloc_device(&dev->ibdev);
		return ret;
	}
	return 0;
}

static struct rdma_link_ops iwmpa_link_ops = {
	.type = "iwmpa",
	.newlink = iwmpa_newlink,
};

static void iwmpa_port_event(struct iwmpa_dev *dev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = IWMPA_PORT,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* under RTNL */
static int iwmpa_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *arg)
{
	struct net_device *netdev = netdev_notifier_info_to_dev(arg);
	struct iwmpa_dev *dev;

	mutex_lock(&iwmpa_devs_lock);
	list_for_each_entry(dev, &iwmpa_devs, list) {
		/* registered and not going away: refcount not 0 */
		if (dev->netdev != netdev || !ib_device_try_get(&dev->ibdev))
			continue;
		switch (event) {
		case NETDEV_UP:
		case NETDEV_DOWN:
		case NETDEV_CHANGE:
			iwmpa_port_event(dev, netif_running(netdev) &&
					 netif_carrier_ok(netdev) ?
					 IB_EVENT_PORT_ACTIVE :
					 IB_EVENT_PORT_ERR);
			break;
		case NETDEV_UNREGISTER:
			/* the netdev waits for ib_device_set_netdev()'s hold */
			ib_unregister_device_queued(&dev->ibdev);
			break;
		default:
			break;
		}
		ib_device_put(&dev->ibdev);
	}
	mutex_unlock(&iwmpa_devs_lock);
	return NOTIFY_DONE;
}

static struct notifier_block iwmpa_netdev_nb = {
	.notifier_call = iwmpa_netdev_event,
};

static int __init iwmpa_init(void)
{
	int ret;

	iwmpa_wq = alloc_workqueue("iwmpa", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!iwmpa_wq)
		return -ENOMEM;
	ret = iwmpa_cm_init();
	if (ret)
		goto err_wq;
	ret = register_netdevice_notifier(&iwmpa_netdev_nb);
	if (ret)
		goto err_cm;
	rdma_link_register(&iwmpa_link_ops);
	return 0;

err_cm:
	iwmpa_cm_exit();
err_wq:
	destroy_workqueue(iwmpa_wq);
	return ret;
}

static void __exit iwmpa_exit(void)
{
	struct iwmpa_dev *dev;

	/* waits for a newlink in progress; no device is created after it */
	rdma_link_unregister(&iwmpa_link_ops);
	unregister_netdevice_notifier(&iwmpa_netdev_nb);
	/*
	 * dealloc_driver unlists each device, in this thread or in one
	 * that unregisters it at the same time (ib_unregister_device()
	 * waits for that one); the reference keeps the memory until then.
	 */
	for (;;) {
		mutex_lock(&iwmpa_devs_lock);
		dev = list_first_entry_or_null(&iwmpa_devs, struct iwmpa_dev,
					       list);
		if (dev)
			get_device(&dev->ibdev.dev);
		mutex_unlock(&iwmpa_devs_lock);
		if (!dev)
			break;
		ib_unregister_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
	}
	iwmpa_cm_exit();
	/* the regions' puts after a grace period, then their frees */
	rcu_barrier();
	destroy_workqueue(iwmpa_wq);
}

module_init(iwmpa_init);
module_exit(iwmpa_exit);

MODULE_DESCRIPTION("iWARP RDMA device over RDMAP/DDP/MPA (siw user ABI)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("iwmpa");
