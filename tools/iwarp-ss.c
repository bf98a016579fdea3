// SPDX-License-Identifier: GPL-2.0
/*
 * iwarp-ss: list the MPA connections of this network namespace with their
 * MPA state, negotiated parameters and counters, read from sock_diag
 * (INET_DIAG_ULP_INFO). iproute2's ss only prints the name of a ULP it
 * does not know; this prints what mpa.ko reports (see mpa(7) and
 * Documentation/mpa.rst, "sock_diag"), and for a DDP stream its own
 * attributes (MPA_DIAG_CONSUMER_INFO, Documentation/ddp.rst).
 *
 * The ULP part of a sock_diag reply needs CAP_NET_ADMIN.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/ddp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/mpa.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libiwarp.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { EXIT_USAGE = 2 };

static const struct nlattr *attr_first(const void *start, int len, int *rem)
{
	*rem = len;
	return start;
}

static bool attr_ok(const struct nlattr *a, int rem)
{
	return rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
}

static const struct nlattr *attr_next(const struct nlattr *a, int *rem)
{
	*rem -= NLA_ALIGN(a->nla_len);
	return (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static const char *const state_names[] = {
	[MPA_S_IDLE] = "idle", [MPA_S_REQ_SENT] = "req-sent",
	[MPA_S_REQ_WAIT] = "req-wait", [MPA_S_REQ_RCVD] = "req-rcvd",
	[MPA_S_FULL] = "full", [MPA_S_REJECTED] = "rejected",
	[MPA_S_ERROR] = "error",
};

static const char *const ctr_names[] = {
	[MPA_DIAG_TX_FPDUS] = "tx_fpdus", [MPA_DIAG_TX_OCTETS] = "tx_octets",
	[MPA_DIAG_TX_MARKERS] = "tx_markers", [MPA_DIAG_RX_FPDUS] = "rx_fpdus",
	[MPA_DIAG_RX_OCTETS] = "rx_octets", [MPA_DIAG_RX_MARKERS] = "rx_markers",
	[MPA_DIAG_RX_CRC_ERRORS] = "rx_crc_errors",
	[MPA_DIAG_RX_MARKER_ERRORS] = "rx_marker_errors",
};

static const char *const ddp_ctr_names[] = {
	[DDP_DIAG_RX_TAGGED_MSGS] = "ddp_rx_tagged_msgs",
	[DDP_DIAG_RX_TAGGED_OCTETS] = "ddp_rx_tagged_octets",
	[DDP_DIAG_RX_UNTAGGED_MSGS] = "ddp_rx_untagged_msgs",
	[DDP_DIAG_RX_UNTAGGED_OCTETS] = "ddp_rx_untagged_octets",
	[DDP_DIAG_TX_TAGGED_MSGS] = "ddp_tx_tagged_msgs",
	[DDP_DIAG_TX_TAGGED_OCTETS] = "ddp_tx_tagged_octets",
	[DDP_DIAG_TX_UNTAGGED_MSGS] = "ddp_tx_untagged_msgs",
	[DDP_DIAG_TX_UNTAGGED_OCTETS] = "ddp_tx_untagged_octets",
	[DDP_DIAG_RX_ERRORS] = "ddp_rx_errors",
	[DDP_DIAG_RX_INVALID_STAG] = "ddp_rx_invalid_stag",
};

struct opts {
	bool json;
	bool counters;
	int family;	/* AF_UNSPEC: both */
};

struct mpa_row {
	char local[INET6_ADDRSTRLEN + 8];
	char peer[INET6_ADDRSTRLEN + 8];
	uint32_t u32[MPA_DIAG_MAX + 1];
	bool have[MPA_DIAG_MAX + 1];
	uint64_t u64[MPA_DIAG_MAX + 1];
	char consumer[32];
	/* a DDP stream: the DDP_DIAG_* attributes */
	bool ddp;
	uint32_t ddp_u32[DDP_DIAG_MAX + 1];
	bool ddp_have[DDP_DIAG_MAX + 1];
	uint64_t ddp_u64[DDP_DIAG_MAX + 1];
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"Usage: iwarp-ss [-4|-6] [-c] [--json]\n"
		"List the MPA connections of this network namespace (needs CAP_NET_ADMIN).\n"
		"  -4, -6          IPv4 or IPv6 sockets only (default: both)\n"
		"  -c, --counters  also print the FPDU, octet, marker and error counters,\n"
		"                  and a DDP stream's message, octet and error counters\n"
		"  -j, --json      one JSON array instead of lines\n"
		"  -V, --version   print the version\n"
		"  -h, --help      this text\n"
		"Exit status: 0 (also when there is no MPA connection), 1 on a netlink\n"
		"error, 2 on a usage error.\n");
}

static void fmt_addr(char *buf, size_t len, int family, const __be32 *addr,
		     __be16 port)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, a, sizeof(a));
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
		 ntohs(port));
}

static void parse_ddp(struct mpa_row *row, const struct nlattr *nest)
{
	const struct nlattr *a;
	int rem;

	row->ddp = true;
	for (a = attr_first(attr_data(nest), nest->nla_len - NLA_HDRLEN, &rem);
	     attr_ok(a, rem); a = attr_next(a, &rem)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		int plen = a->nla_len - NLA_HDRLEN;

		if (type <= DDP_DIAG_PAD || type > DDP_DIAG_MAX)
			continue;
		if (type >= DDP_DIAG_RX_TAGGED_MSGS && plen == 8)
			memcpy(&row->ddp_u64[type], attr_data(a), 8);
		else if (type < DDP_DIAG_RX_TAGGED_MSGS && plen == 4)
			memcpy(&row->ddp_u32[type], attr_data(a), 4);
		else
			continue;
		row->ddp_have[type] = true;
	}
}

static void parse_mpa(struct mpa_row *row, const struct nlattr *nest)
{
	const struct nlattr *info = NULL;
	const struct nlattr *a;
	int rem;

	for (a = attr_first(attr_data(nest), nest->nla_len - NLA_HDRLEN, &rem);
	     attr_ok(a, rem); a = attr_next(a, &rem)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		int plen = a->nla_len - NLA_HDRLEN;

		if (type <= 0 || type > MPA_DIAG_MAX)
			continue;
		if (type == MPA_DIAG_CONSUMER) {
			snprintf(row->consumer, sizeof(row->consumer), "%.*s",
				 plen, (const char *)attr_data(a));
		} else if (type == MPA_DIAG_CONSUMER_INFO) {
			info = a;
		} else if (type >= MPA_DIAG_TX_FPDUS &&
			   type <= MPA_DIAG_RX_MARKER_ERRORS && plen == 8) {
			memcpy(&row->u64[type], attr_data(a), 8);
		} else if (plen == 4) {
			memcpy(&row->u32[type], attr_data(a), 4);
		} else {
			continue;
		}
		row->have[type] = true;
	}
	/* the consumer's own attributes: only DDP's are known here */
	if (info && !strcmp(row->consumer, "ddp"))
		parse_ddp(row, info);
}

/* Returns true if the socket is an MPA connection and fills @row. */
static bool parse_sock(struct mpa_row *row, const struct nlmsghdr *nlh)
{
	const struct inet_diag_msg *m = NLMSG_DATA(nlh);
	const struct nlattr *a, *u;
	bool mpa = false;
	int rem, urem;

	memset(row, 0, sizeof(*row));
	for (a = attr_first(m + 1, nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*m)), &rem);
	     attr_ok(a, rem); a = attr_next(a, &rem)) {
		if ((a->nla_type & NLA_TYPE_MASK) != INET_DIAG_ULP_INFO)
			continue;
		for (u = attr_first(attr_data(a), a->nla_len - NLA_HDRLEN, &urem);
		     attr_ok(u, urem); u = attr_next(u, &urem)) {
			int type = u->nla_type & NLA_TYPE_MASK;

			if (type == INET_ULP_INFO_NAME)
				mpa = !strcmp(attr_data(u), "mpa");
			else if (type == MPA_DIAG_ULP_INFO)
				parse_mpa(row, u);
		}
	}
	if (!mpa)
		return false;
	fmt_addr(row->local, sizeof(row->local), m->idiag_family,
		 m->id.idiag_src, m->id.idiag_sport);
	fmt_addr(row->peer, sizeof(row->peer), m->idiag_family,
		 m->id.idiag_dst, m->id.idiag_dport);
	return true;
}

static const char *state_name(uint32_t s)
{
	return s < ARRAY_SIZE(state_names) && state_names[s] ?
	       state_names[s] : "?";
}

static void print_ddp_json(const struct mpa_row *r)
{
	int t;

	if (!r->ddp) {
		printf(", \"ddp\": null");
		return;
	}
	printf(", \"ddp\": {\"stream\": %u, \"pd\": %u, \"version\": %u",
	       r->ddp_u32[DDP_DIAG_STREAM_ID], r->ddp_u32[DDP_DIAG_PD_ID],
	       r->ddp_u32[DDP_DIAG_VERSION]);
	printf(", \"queues\": %u, \"posted\": %u, \"stopped\": %s, \"shut\": %s",
	       r->ddp_u32[DDP_DIAG_QUEUES], r->ddp_u32[DDP_DIAG_POSTED],
	       r->ddp_u32[DDP_DIAG_FLAGS] & DDP_DIAG_F_STOPPED ? "true" : "false",
	       r->ddp_u32[DDP_DIAG_FLAGS] & DDP_DIAG_F_SHUT ? "true" : "false");
	if (r->ddp_have[DDP_DIAG_ERROR])
		printf(", \"error_type\": %u, \"error_code\": %u",
		       r->ddp_u32[DDP_DIAG_ERROR] >> 8,
		       r->ddp_u32[DDP_DIAG_ERROR] & 0xff);
	for (t = DDP_DIAG_RX_TAGGED_MSGS; t <= DDP_DIAG_MAX; t++)
		printf(", \"%s\": %llu", ddp_ctr_names[t] + 4,
		       (unsigned long long)r->ddp_u64[t]);
	printf("}");
}

/* after "consumer ddp": the stream, its state */
static void print_ddp(const struct mpa_row *r)
{
	uint32_t fl = r->ddp_u32[DDP_DIAG_FLAGS];

	printf(" stream %u pd %u dv %u queues %u posted %u",
	       r->ddp_u32[DDP_DIAG_STREAM_ID], r->ddp_u32[DDP_DIAG_PD_ID],
	       r->ddp_u32[DDP_DIAG_VERSION], r->ddp_u32[DDP_DIAG_QUEUES],
	       r->ddp_u32[DDP_DIAG_POSTED]);
	if (fl & DDP_DIAG_F_SHUT)
		printf(" shut");
	if (fl & DDP_DIAG_F_STOPPED) {
		printf(" stopped");
		if (r->ddp_have[DDP_DIAG_ERROR])
			printf(" ddp_error %u/0x%02x",
			       r->ddp_u32[DDP_DIAG_ERROR] >> 8,
			       r->ddp_u32[DDP_DIAG_ERROR] & 0xff);
	}
}

static void print_row(const struct mpa_row *r, const struct opts *o,
		      bool first)
{
	uint32_t fl = r->u32[MPA_DIAG_FLAGS];
	const char *role = r->u32[MPA_DIAG_ROLE] == MPA_ROLE_INITIATOR ?
			   "initiator" : r->u32[MPA_DIAG_ROLE] ==
			   MPA_ROLE_RESPONDER ? "responder" : "none";
	int t;

	if (o->json) {
		printf("%s\n  {\"local\": \"%s\", \"peer\": \"%s\"",
		       first ? "" : ",", r->local, r->peer);
		printf(", \"state\": \"%s\", \"role\": \"%s\", \"rev\": %u",
		       state_name(r->u32[MPA_DIAG_STATE]), role,
		       r->u32[MPA_DIAG_REV]);
		printf(", \"crc\": %s, \"markers_rx\": %s, \"markers_tx\": %s",
		       fl & MPA_I_CRC ? "true" : "false",
		       fl & MPA_I_MARKERS_RX ? "true" : "false",
		       fl & MPA_I_MARKERS_TX ? "true" : "false");
		printf(", \"mulpdu\": %u, \"ird\": %u, \"ord\": %u, \"rtr\": %u",
		       r->u32[MPA_DIAG_MULPDU], r->u32[MPA_DIAG_IRD],
		       r->u32[MPA_DIAG_ORD], r->u32[MPA_DIAG_RTR]);
		printf(", \"error\": %u, \"consumer\": \"%s\"",
		       r->u32[MPA_DIAG_ERROR], r->consumer);
		for (t = MPA_DIAG_TX_FPDUS; t <= MPA_DIAG_RX_MARKER_ERRORS; t++)
			printf(", \"%s\": %llu", ctr_names[t],
			       (unsigned long long)r->u64[t]);
		print_ddp_json(r);
		printf("}");
		return;
	}
	printf("%-22s %-22s %-9s %-9s rev %u %s markers %s/%s mulpdu %u",
	       r->local, r->peer, state_name(r->u32[MPA_DIAG_STATE]), role,
	       r->u32[MPA_DIAG_REV], fl & MPA_I_CRC ? "crc" : "no-crc",
	       fl & MPA_I_MARKERS_RX ? "rx" : "-",
	       fl & MPA_I_MARKERS_TX ? "tx" : "-", r->u32[MPA_DIAG_MULPDU]);
	if (r->u32[MPA_DIAG_REV] == 2)
		printf(" ird %u ord %u", r->u32[MPA_DIAG_IRD],
		       r->u32[MPA_DIAG_ORD]);
	if (r->u32[MPA_DIAG_ERROR])
		printf(" error %u", r->u32[MPA_DIAG_ERROR]);
	printf(" consumer %s", r->consumer[0] ? r->consumer : "user");
	if (r->ddp)
		print_ddp(r);
	if (o->counters) {
		for (t = MPA_DIAG_TX_FPDUS; t <= MPA_DIAG_RX_MARKER_ERRORS; t++)
			printf(" %s %llu", ctr_names[t],
			       (unsigned long long)r->u64[t]);
		for (t = DDP_DIAG_RX_TAGGED_MSGS; r->ddp && t <= DDP_DIAG_MAX; t++)
			printf(" %s %llu", ddp_ctr_names[t],
			       (unsigned long long)r->ddp_u64[t]);
	}
	printf("\n");
}

/* Dumps one address family; returns the number of MPA rows or -1. */
static int dump_family(int fd, int family, const struct opts *o, int *rows)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q = {
		.nlh = {
			.nlmsg_len = sizeof(q),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = (unsigned int)family,
		},
		.req = {
			.sdiag_family = (unsigned char)family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
			.idiag_states = ~0U,
		},
	};
	static uint64_t buf64[8192];
	char *buf = (char *)buf64;
	struct sockaddr_nl nladdr = { .nl_family = AF_NETLINK };
	struct mpa_row row;

	if (sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&nladdr,
		   sizeof(nladdr)) < 0) {
		perror("iwarp-ss: sendto");
		return -1;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf64), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0) {
			perror("iwarp-ss: recv");
			return -1;
		}
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				fprintf(stderr, "iwarp-ss: sock_diag: %s\n",
					strerror(-e->error));
				return -1;
			}
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
			    parse_sock(&row, h)) {
				print_row(&row, o, *rows == 0);
				(*rows)++;
			}
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "counters", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .family = AF_UNSPEC };
	int c, fd, rows = 0, ret = 0;

	while ((c = getopt_long(argc, argv, "46cjVh", lopts, NULL)) != -1) {
		switch (c) {
		case '4':
			o.family = AF_INET;
			break;
		case '6':
			o.family = AF_INET6;
			break;
		case 'c':
			o.counters = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'V':
			iw_print_version();
			return 0;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		perror("iwarp-ss: socket(NETLINK_SOCK_DIAG)");
		return 1;
	}
	if (o.json)
		printf("[");
	if (o.family != AF_INET6 && dump_family(fd, AF_INET, &o, &rows) < 0)
		ret = 1;
	if (!ret && o.family != AF_INET &&
	    dump_family(fd, AF_INET6, &o, &rows) < 0)
		ret = 1;
	if (o.json)
		printf("%s]\n", rows ? "\n" : "");
	close(fd);
	if (!ret && !rows && !o.json && access("/sys/module/mpa", F_OK))
		fprintf(stderr, "iwarp-ss: no MPA connection (is mpa.ko loaded?)\n");
	return ret;
}
