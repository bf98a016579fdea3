// SPDX-License-Identifier: GPL-2.0
/*
 * Per network namespace DDP counters, shown in /proc/net/ddp_stat in the
 * style of /proc/net/mpa_stat and /proc/net/tls_stat: one "Name value"
 * line per counter. Counters are per CPU and only ever added to; readers
 * sum them. A stream caches the counters of its socket's namespace when
 * it is bound, a PD those of its creator's namespace, so the receive path
 * never looks the namespace up.
 */
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/iwarp_stat.h>
#include <net/netns/generic.h>

#include "ddp.h"

struct ddp_net {
	unsigned long __percpu *mib;	/* DDP_MIB_MAX counters per CPU */
};

static unsigned int ddp_net_id __read_mostly;

static const char *const ddp_mib_names[DDP_MIB_MAX] = {
	[DDP_MIB_TAGGED_MSGS]		= "DdpTaggedMsgs",
	[DDP_MIB_TAGGED_OCTETS]		= "DdpTaggedOctets",
	[DDP_MIB_UNTAGGED_MSGS]		= "DdpUntaggedMsgs",
	[DDP_MIB_UNTAGGED_OCTETS]	= "DdpUntaggedOctets",
	[DDP_MIB_ERR_CATASTROPHIC]	= "DdpErrCatastrophic",
	[DDP_MIB_ERR_T_INVALID_STAG]	= "DdpErrTaggedInvalidStag",
	[DDP_MIB_ERR_T_BASE_BOUNDS]	= "DdpErrTaggedBaseBounds",
	[DDP_MIB_ERR_T_STAG_NOT_ASSOC]	= "DdpErrTaggedStagNotAssoc",
	[DDP_MIB_ERR_T_TO_WRAP]		= "DdpErrTaggedToWrap",
	[DDP_MIB_ERR_T_INVALID_DV]	= "DdpErrTaggedInvalidDv",
	[DDP_MIB_ERR_U_INVALID_QN]	= "DdpErrUntaggedInvalidQn",
	[DDP_MIB_ERR_U_NO_BUFFER]	= "DdpErrUntaggedNoBuffer",
	[DDP_MIB_ERR_U_MSN_RANGE]	= "DdpErrUntaggedMsnRange",
	[DDP_MIB_ERR_U_INVALID_MO]	= "DdpErrUntaggedInvalidMo",
	[DDP_MIB_ERR_U_TOO_LONG]	= "DdpErrUntaggedTooLong",
	[DDP_MIB_ERR_U_INVALID_DV]	= "DdpErrUntaggedInvalidDv",
	[DDP_MIB_ERR_LLP]		= "DdpErrLlp",
	[DDP_MIB_INVALID_STAG]		= "DdpInvalidStagAttempts",
	[DDP_MIB_STAG_REG]		= "DdpStagRegistered",
	[DDP_MIB_STAG_INVAL]		= "DdpStagInvalidated",
};

/**
 * ddp_net_mib() - the counters of a network namespace
 * @net: the namespace; whoever caches the result keeps @net alive
 *
 * Return: the per-CPU array of DDP_MIB_MAX counters.
 */
unsigned long __percpu *ddp_net_mib(const struct net *net)
{
	struct ddp_net *dn = net_generic(net, ddp_net_id);

	return dn->mib;
}

/**
 * ddp_mib_err() - the counter of an RFC 5041 section 7.2 error
 * @type: DDP_WIRE_ETYPE_*
 * @code: DDP_WIRE_ECODE_*, or the MPA error code for DDP_WIRE_ETYPE_LLP
 *
 * Return: DDP_MIB_ERR_*; DDP_MIB_ERR_CATASTROPHIC for a pair that 7.2
 * does not define (DDP reports none).
 */
enum ddp_mib_field ddp_mib_err(u8 type, u8 code)
{
	switch (type) {
	case DDP_WIRE_ETYPE_TAGGED:
		if (code <= DDP_WIRE_ECODE_T_INVALID_DV)
			return DDP_MIB_ERR_T_INVALID_STAG + code;
		break;
	case DDP_WIRE_ETYPE_UNTAGGED:
		if (code >= DDP_WIRE_ECODE_U_INVALID_QN &&
		    code <= DDP_WIRE_ECODE_U_INVALID_DV)
			return DDP_MIB_ERR_U_INVALID_QN + code -
			       DDP_WIRE_ECODE_U_INVALID_QN;
		break;
	case DDP_WIRE_ETYPE_LLP:
		return DDP_MIB_ERR_LLP;
	}
	return DDP_MIB_ERR_CATASTROPHIC;
}

static int ddp_stat_show(struct seq_file *seq, void *v)
{
	iwarp_stat_show(seq, ddp_net_mib(seq_file_single_net(seq)),
			ddp_mib_names, DDP_MIB_MAX);
	return 0;
}

static int __net_init ddp_net_init(struct net *net)
{
	struct ddp_net *dn = net_generic(net, ddp_net_id);

	dn->mib = __alloc_percpu_gfp(sizeof(unsigned long) * DDP_MIB_MAX,
				     sizeof(unsigned long), GFP_KERNEL_ACCOUNT);
	if (!dn->mib)
		return -ENOMEM;
	if (!proc_create_net_single("ddp_stat", 0444, net->proc_net,
				    ddp_stat_show, NULL)) {
		free_percpu(dn->mib);
		return -ENOMEM;
	}
	return 0;
}

static void __net_exit ddp_net_exit(struct net *net)
{
	struct ddp_net *dn = net_generic(net, ddp_net_id);

	remove_proc_entry("ddp_stat", net->proc_net);
	free_percpu(dn->mib);
}

static struct pernet_operations ddp_net_ops = {
	.init	= ddp_net_init,
	.exit	= ddp_net_exit,
	.id	= &ddp_net_id,
	.size	= sizeof(struct ddp_net),
};

int __init ddp_proc_init(void)
{
	return register_pernet_subsys(&ddp_net_ops);
}

void ddp_proc_exit(void)
{
	unregister_pernet_subsys(&ddp_net_ops);
}
