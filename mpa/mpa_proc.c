// SPDX-License-Identifier: GPL-2.0
/*
 * Per network namespace MPA counters, shown in /proc/net/mpa_stat in the
 * style of /proc/net/tls_stat: one "Name value" line per counter.
 * Counters are per CPU and only ever added to; readers sum them.
 */

#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/iwarp_stat.h>
#include <net/netns/generic.h>

#include "mpa.h"

struct mpa_net {
	unsigned long __percpu *mib;	/* MPA_MIB_MAX counters per CPU */
};

static unsigned int mpa_net_id __read_mostly;

static const char *const mpa_mib_names[MPA_MIB_MAX] = {
	[MPA_MIB_ATTACHED]	= "MpaAttached",
	[MPA_MIB_STARTED]	= "MpaStarted",
	[MPA_MIB_FULL]		= "MpaFullOperation",
	[MPA_MIB_REJECTED]	= "MpaRejected",
	[MPA_MIB_FAILED]	= "MpaStartupFailed",
	[MPA_MIB_TIMEOUTS]	= "MpaStartupTimeouts",
	[MPA_MIB_REV0]		= "MpaRev0",
	[MPA_MIB_REV1]		= "MpaRev1",
	[MPA_MIB_REV2]		= "MpaRev2",
	[MPA_MIB_ERR_TCP_CLOSED] = "MpaErrTcpClosed",
	[MPA_MIB_ERR_CRC]	= "MpaErrCrc",
	[MPA_MIB_ERR_MARKER]	= "MpaErrMarker",
	[MPA_MIB_ERR_STARTUP]	= "MpaErrStartup",
	[MPA_MIB_TX_FPDUS]	= "MpaTxFpdus",
	[MPA_MIB_TX_OCTETS]	= "MpaTxOctets",
	[MPA_MIB_RX_FPDUS]	= "MpaRxFpdus",
	[MPA_MIB_RX_OCTETS]	= "MpaRxOctets",
	[MPA_MIB_RX_DIRECT]	= "MpaRxDirect",
	[MPA_MIB_TX_TRAINS]	= "MpaTxTrains",
	[MPA_MIB_TX_PAGES]	= "MpaTxPages",
	[MPA_MIB_TX_PAGES_REUSED] = "MpaTxPagesReused",
	[MPA_MIB_TX_PAGES_RELEASED] = "MpaTxPagesReleased",
	[MPA_MIB_RX_TO_TASK]	= "MpaRxToTask",
	[MPA_MIB_RX_WINDOW]	= "MpaRxWindowUpdates",
	[MPA_MIB_TX_FROM_RX]	= "MpaTxFromRx",
};

/*
 * The counters of @net, which a connection caches when it attaches: a
 * socket's namespace outlives it (a user socket holds a reference, the
 * owner of a kernel socket closes it before the namespace goes).
 */
unsigned long __percpu *mpa_net_mib(const struct net *net)
{
	struct mpa_net *mn = net_generic(net, mpa_net_id);

	return mn->mib;
}

static int mpa_stat_show(struct seq_file *seq, void *v)
{
	struct mpa_net *mn = net_generic(seq_file_single_net(seq), mpa_net_id);

	iwarp_stat_show(seq, mn->mib, mpa_mib_names, MPA_MIB_MAX);
	return 0;
}

static int __net_init mpa_net_init(struct net *net)
{
	struct mpa_net *mn = net_generic(net, mpa_net_id);

	mn->mib = __alloc_percpu_gfp(sizeof(unsigned long) * MPA_MIB_MAX,
				     sizeof(unsigned long), GFP_KERNEL_ACCOUNT);
	if (!mn->mib)
		return -ENOMEM;
	if (!proc_create_net_single("mpa_stat", 0444, net->proc_net,
				    mpa_stat_show, NULL)) {
		free_percpu(mn->mib);
		return -ENOMEM;
	}
	return 0;
}

static void __net_exit mpa_net_exit(struct net *net)
{
	struct mpa_net *mn = net_generic(net, mpa_net_id);

	remove_proc_entry("mpa_stat", net->proc_net);
	free_percpu(mn->mib);
}

static struct pernet_operations mpa_net_ops = {
	.init	= mpa_net_init,
	.exit	= mpa_net_exit,
	.id	= &mpa_net_id,
	.size	= sizeof(struct mpa_net),
};

int __init mpa_proc_init(void)
{
	return register_pernet_subsys(&mpa_net_ops);
}

void mpa_proc_exit(void)
{
	unregister_pernet_subsys(&mpa_net_ops);
}
