// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag shows MPA connections: INET_DIAG_ULP_INFO carries the name
 * "mpa" and a MPA_DIAG_ULP_INFO nest whose attributes equal what MPA_INFO
 * and MPA_STATS report on the socket itself; callers without
 * CAP_NET_ADMIN get no ULP part, plain TCP sockets never have one.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mpa_proto.h"
#include <linux/mpa.h>
#include "kselftest_harness.h"
#include "mpa_test_util.h"
#include "mpa_sock_util.h"

struct diag_row {
	bool found;		/* the socket was in the dump */
	bool ulp;		/* INET_DIAG_ULP_INFO present */
	char name[16];		/* INET_ULP_INFO_NAME */
	bool mpa;		/* MPA_DIAG_ULP_INFO present */
	bool have[MPA_DIAG_MAX + 1];
	__u32 u32[MPA_DIAG_MAX + 1];
	__u64 u64[MPA_DIAG_MAX + 1];
	char consumer[32];
};

static struct nlattr *attr_first(const struct nlattr *nest, int *rem)
{
	*rem = nest->nla_len - NLA_HDRLEN;
	return (struct nlattr *)((char *)nest + NLA_HDRLEN);
}

static bool attr_ok(const struct nlattr *a, int rem)
{
	return rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
}

static struct nlattr *attr_next(const struct nlattr *a, int *rem)
{
	*rem -= NLA_ALIGN(a->nla_len);
	return (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
}

static void *attr_data(const struct nlattr *a)
{
	return (char *)a + NLA_HDRLEN;
}

static void diag_parse_mpa(struct diag_row *r, struct nlattr *nest)
{
	struct nlattr *a;
	int rem;

	r->mpa = true;
	for (a = attr_first(nest, &rem); attr_ok(a, rem); a = attr_next(a, &rem)) {
		int t = a->nla_type & NLA_TYPE_MASK;
		int len = a->nla_len - NLA_HDRLEN;

		if (t <= 0 || t > MPA_DIAG_MAX)
			continue;
		r->have[t] = true;
		if (t == MPA_DIAG_CONSUMER)
			snprintf(r->consumer, sizeof(r->consumer), "%.*s", len,
				 (char *)attr_data(a));
		else if (len == 8)
			memcpy(&r->u64[t], attr_data(a), 8);
		else if (len == 4)
			memcpy(&r->u32[t], attr_data(a), 4);
	}
}

/* The ULP part of one sock_diag row @m of @len octets into @r. */
static void diag_parse_row(struct diag_row *r, struct inet_diag_msg *m, int len)
{
	int rem = len - (int)sizeof(*m);
	struct nlattr *a = (struct nlattr *)(m + 1);

	r->found = true;
	for (; attr_ok(a, rem); a = attr_next(a, &rem)) {
		struct nlattr *u;
		int urem;

		if ((a->nla_type & NLA_TYPE_MASK) != INET_DIAG_ULP_INFO)
			continue;
		r->ulp = true;
		for (u = attr_first(a, &urem); attr_ok(u, urem);
		     u = attr_next(u, &urem)) {
			int t = u->nla_type & NLA_TYPE_MASK;

			if (t == INET_ULP_INFO_NAME)
				snprintf(r->name, sizeof(r->name), "%s",
					 (char *)attr_data(u));
			else if (t == MPA_DIAG_ULP_INFO)
				diag_parse_mpa(r, u);
		}
	}
}

/*
 * Dump the established TCP sockets of @family, reading the reply with
 * recv() buffers of @bufsz octets (which sizes the kernel's messages):
 * the row of the socket whose local port is @sports[i] goes into
 * @rows[i]. Returns the number of recv() calls that brought rows, or -1.
 */
static int diag_dump(int family, size_t bufsz, const __be16 *sports,
		     struct diag_row *rows, int n)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q = {
		.nlh = {
			.nlmsg_len = sizeof(q),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
			.idiag_states = 1 << TCP_ESTABLISHED,
		},
	};
	static __u64 buf64[8192];
	char *buf = (char *)buf64;
	int nl, i, batches = 0, done = 0;

	if (bufsz > sizeof(buf64))
		return -1;
	memset(rows, 0, n * sizeof(*rows));
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	if (send(nl, &q, sizeof(q), 0) != sizeof(q)) {
		close(nl);
		return -1;
	}
	while (!done) {
		ssize_t len = recv(nl, buf, bufsz, 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		bool rowful = false;

		if (len <= 0) {
			batches = -1;
			break;
		}
		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE ||
			    h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			rowful = true;
			for (i = 0; i < n; i++)
				if (m->id.idiag_sport == sports[i])
					diag_parse_row(&rows[i], m,
						       h->nlmsg_len - NLMSG_LENGTH(0));
		}
		batches += rowful;
	}
	close(nl);
	return batches;
}

/* The sock_diag view of the TCP socket @fd (IPv4 or IPv6, by its address). */
static int diag_query(int fd, struct diag_row *r)
{
	struct sockaddr_storage ss;
	socklen_t alen = sizeof(ss);
	__be16 sport;

	memset(r, 0, sizeof(*r));
	if (getsockname(fd, (struct sockaddr *)&ss, &alen))
		return -1;
	sport = ss.ss_family == AF_INET ?
		((struct sockaddr_in *)&ss)->sin_port :
		((struct sockaddr_in6 *)&ss)->sin6_port;
	if (diag_dump(ss.ss_family, 65536, &sport, r, 1) < 0)
		return -1;
	return r->found ? 0 : -1;
}

/* Every attribute equals what the socket's own MPA_INFO/MPA_STATS say. */
static void expect_matches_sockopts(struct __test_metadata *_metadata, int fd,
				    const struct diag_row *r)
{
	struct mpa_info info = iw_mpa_info_of(fd);
	struct mpa_stats st = iw_mpa_stats_of(fd);

	ASSERT_TRUE(r->mpa);
	EXPECT_EQ(info.state, r->u32[MPA_DIAG_STATE]);
	EXPECT_EQ(info.role, r->u32[MPA_DIAG_ROLE]);
	EXPECT_EQ(info.rev, r->u32[MPA_DIAG_REV]);
	EXPECT_EQ(info.flags, r->u32[MPA_DIAG_FLAGS]);
	EXPECT_EQ(info.error, r->u32[MPA_DIAG_ERROR]);
	EXPECT_EQ(info.mulpdu, r->u32[MPA_DIAG_MULPDU]);
	EXPECT_EQ(info.ird, r->u32[MPA_DIAG_IRD]);
	EXPECT_EQ(info.ord, r->u32[MPA_DIAG_ORD]);
	EXPECT_EQ(info.rtr, r->u32[MPA_DIAG_RTR]);
	EXPECT_EQ(st.tx_fpdus, r->u64[MPA_DIAG_TX_FPDUS]);
	EXPECT_EQ(st.tx_octets, r->u64[MPA_DIAG_TX_OCTETS]);
	EXPECT_EQ(st.tx_markers, r->u64[MPA_DIAG_TX_MARKERS]);
	EXPECT_EQ(st.rx_fpdus, r->u64[MPA_DIAG_RX_FPDUS]);
	EXPECT_EQ(st.rx_octets, r->u64[MPA_DIAG_RX_OCTETS]);
	EXPECT_EQ(st.rx_markers, r->u64[MPA_DIAG_RX_MARKERS]);
	EXPECT_EQ(st.rx_crc_errors, r->u64[MPA_DIAG_RX_CRC_ERRORS]);
	EXPECT_EQ(st.rx_marker_errors, r->u64[MPA_DIAG_RX_MARKER_ERRORS]);
}

FIXTURE(diag) {
	int fds[2];
};

FIXTURE_VARIANT(diag) {
	int family;
	__u32 flags;	/* MPA_START flags of both ends */
};

FIXTURE_VARIANT_ADD(diag, ipv4_markers) {
	.family = AF_INET,
	.flags = MPA_F_MARKERS,
};

FIXTURE_VARIANT_ADD(diag, ipv6_plain) {
	.family = AF_INET6,
	.flags = 0,
};

FIXTURE_SETUP(diag)
{
	self->fds[0] = -1;
	self->fds[1] = -1;
}

FIXTURE_TEARDOWN(diag)
{
	close(self->fds[0]);
	close(self->fds[1]);
}

TEST_F(diag, full_operation)
{
	static const size_t sizes[] = { 100, 1000, 1 };
	char buf[1000], got[1000];
	struct diag_row ri, rr;
	unsigned int i;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, variant->flags,
				 variant->flags, RAW_TMO_MS));
	mt_fill(buf, sizeof(buf), 7);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(sizes[i], send(self->fds[0], buf, sizes[i], 0));
		ASSERT_EQ(sizes[i], iw_readn(self->fds[1], got, sizes[i], RAW_TMO_MS));
	}
	ASSERT_EQ(0, diag_query(self->fds[0], &ri));
	ASSERT_EQ(0, diag_query(self->fds[1], &rr));
	ASSERT_TRUE(ri.ulp);
	EXPECT_STREQ("mpa", ri.name);
	expect_matches_sockopts(_metadata, self->fds[0], &ri);
	expect_matches_sockopts(_metadata, self->fds[1], &rr);
	/* the exact values, not only agreement with the sockopts */
	EXPECT_EQ(MPA_S_FULL, ri.u32[MPA_DIAG_STATE]);
	EXPECT_EQ(MPA_ROLE_INITIATOR, ri.u32[MPA_DIAG_ROLE]);
	EXPECT_EQ(MPA_ROLE_RESPONDER, rr.u32[MPA_DIAG_ROLE]);
	EXPECT_EQ(0, ri.u32[MPA_DIAG_ERROR]);
	EXPECT_EQ(3, ri.u64[MPA_DIAG_TX_FPDUS]);
	EXPECT_EQ(1101, ri.u64[MPA_DIAG_TX_OCTETS]);
	EXPECT_EQ(3, rr.u64[MPA_DIAG_RX_FPDUS]);
	EXPECT_EQ(1101, rr.u64[MPA_DIAG_RX_OCTETS]);
	EXPECT_EQ(0, rr.u64[MPA_DIAG_RX_CRC_ERRORS]);
	EXPECT_EQ(MPA_I_CRC, ri.u32[MPA_DIAG_FLAGS] & MPA_I_CRC);
	EXPECT_EQ(variant->flags & MPA_F_MARKERS ? MPA_I_MARKERS_TX : 0,
		  ri.u32[MPA_DIAG_FLAGS] & MPA_I_MARKERS_TX);
	EXPECT_NE(0, ri.u32[MPA_DIAG_MULPDU]);
	/* user space reads the connection: no consumer */
	EXPECT_FALSE(ri.have[MPA_DIAG_CONSUMER]);
}

TEST_F(diag, idle_then_started)
{
	struct diag_row r;

	ASSERT_EQ(0, iw_loopback_pair(variant->family, self->fds));
	ASSERT_EQ(0, diag_query(self->fds[0], &r));
	EXPECT_FALSE(r.ulp);		/* plain TCP */
	ASSERT_EQ(0, iw_mpa_attach(self->fds[0]));
	ASSERT_EQ(0, diag_query(self->fds[0], &r));
	EXPECT_STREQ("mpa", r.name);
	ASSERT_TRUE(r.mpa);
	EXPECT_EQ(MPA_S_IDLE, r.u32[MPA_DIAG_STATE]);
	EXPECT_EQ(0, r.u32[MPA_DIAG_MULPDU]);
	EXPECT_EQ(0, r.u64[MPA_DIAG_TX_FPDUS]);
	ASSERT_EQ(0, iw_mpa_start(self->fds[0], MPA_ROLE_INITIATOR, variant->flags,
				  NULL, 0, NULL, 0));
	ASSERT_EQ(0, diag_query(self->fds[0], &r));
	EXPECT_EQ(MPA_S_REQ_SENT, r.u32[MPA_DIAG_STATE]);
	EXPECT_EQ(MPA_ROLE_INITIATOR, r.u32[MPA_DIAG_ROLE]);
	expect_matches_sockopts(_metadata, self->fds[0], &r);
}

TEST_F(diag, no_ulp_info_without_cap_net_admin)
{
	struct diag_row r;
	int status;
	pid_t pid;

	ASSERT_EQ(0, iw_mpa_pair(variant->family, self->fds, variant->flags,
				 variant->flags, RAW_TMO_MS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* nobody: no CAP_NET_ADMIN; the socket is still listed */
		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (diag_query(self->fds[0], &r))
			_exit(11);
		_exit(r.ulp ? 12 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, diag_query(self->fds[0], &r));
	EXPECT_TRUE(r.mpa);
}

TEST_F(diag, error_code_shown)
{
	__u8 data[10], wire[64], got[16];
	struct diag_row r;
	int n;

	/* module Initiator, raw Responder whose first FPDU has a bad CRC */
	ASSERT_EQ(0, mt_raw_responder(variant->family, self->fds, 0, MPA_FLAG_C, 0));
	mt_fill(data, sizeof(data), 3);
	n = mt_enc(wire, sizeof(wire), 0, false, true, data, sizeof(data));
	ASSERT_LT(0, n);
	wire[n - 1] ^= 0x80;
	ASSERT_EQ(0, iw_writen(self->fds[1], wire, n));
	EXPECT_EQ(-1, recv(self->fds[0], got, sizeof(got), 0));
	EXPECT_EQ(EBADMSG, errno);
	ASSERT_EQ(0, diag_query(self->fds[0], &r));
	/* after error 2 the connection may still send a last message */
	EXPECT_EQ(MPA_S_FULL, r.u32[MPA_DIAG_STATE]);
	EXPECT_EQ(MPA_ERR_CRC, r.u32[MPA_DIAG_ERROR]);
	EXPECT_EQ(1, r.u64[MPA_DIAG_RX_CRC_ERRORS]);
	EXPECT_EQ(0, r.u64[MPA_DIAG_RX_FPDUS]);
	expect_matches_sockopts(_metadata, self->fds[0], &r);
}

/*
 * A dump that takes several messages: every socket bound to DDP is listed
 * once with the consumer's name and its attributes, none cut short at the
 * end of a message (a socket that does not fit goes whole into the next).
 */
#define DIAG_NPAIRS	24

TEST(dump_of_many_ddp_streams)
{
	struct diag_row rows[2 * DIAG_NPAIRS];
	int fds[2 * DIAG_NPAIRS], sfd[2 * DIAG_NPAIRS];
	__be16 sports[2 * DIAG_NPAIRS];
	int i, pd, batches;
	size_t size;

	memset(fds, -1, sizeof(fds));
	memset(sfd, -1, sizeof(sfd));
	pd = iw_ddp_open();
	ASSERT_LE(0, pd);
	for (i = 0; i < DIAG_NPAIRS; i++)
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, &fds[2 * i], 0, 0, RAW_TMO_MS));
	for (i = 0; i < 2 * DIAG_NPAIRS; i++) {
		struct sockaddr_in sin;
		socklen_t alen = sizeof(sin);

		sfd[i] = iw_ddp_bind(pd, fds[i], 1);
		ASSERT_LE(0, sfd[i]);
		ASSERT_EQ(0, getsockname(fds[i], (struct sockaddr *)&sin, &alen));
		sports[i] = sin.sin_port;
	}
	/*
	 * The kernel fills messages of the receive size: 16 sizes put the
	 * ends of the messages at 16 different places of the rows.
	 */
	for (size = 6000; size < 6000 + 16 * 137; size += 137) {
		batches = diag_dump(AF_INET, size, sports, rows, 2 * DIAG_NPAIRS);
		ASSERT_LE(3, batches);
		for (i = 0; i < 2 * DIAG_NPAIRS; i++) {
			EXPECT_TRUE(rows[i].mpa);
			EXPECT_STREQ("ddp", rows[i].consumer);
			EXPECT_TRUE(rows[i].have[MPA_DIAG_CONSUMER_INFO]) {
				TH_LOG("receives of %zu octets: socket %d of %d",
				       size, i, 2 * DIAG_NPAIRS);
			}
		}
	}
	for (i = 0; i < 2 * DIAG_NPAIRS; i++) {
		close(sfd[i]);
		close(fds[i]);
	}
	close(pd);
}

TEST_HARNESS_MAIN
