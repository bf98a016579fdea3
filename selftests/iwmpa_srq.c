// SPDX-License-Identifier: GPL-2.0
/*
 * A shared receive queue under traffic, through librdmacm and libibverbs
 * (TAP), on any iWARP device (iwmpa or siw): a helper of iwmpa_apps.sh.
 *
 * The server listens on ADDR:PORT, accepts two connections whose QPs are
 * bound to one SRQ of 16 receives with the limit armed at 5, each of two
 * SGEs in two regions (40 + 24 octets: a message is placed across both),
 * and checks:
 *   1  the SRQ: 16 entries, the limit armed
 *   2  both connections established, their QPs bound to the SRQ
 *   3  the client's 7 Sends on each connection: 14 receive completions,
 *      all successful, 64 octets, the first 40 in the first SGE and the
 *      rest in the second, each QP's messages in order, and the receives
 *      taken from the SRQ in the order posted (wr_ids 0..13)
 *   4  exactly one limit event: at the 12th receive taken (4 left), and
 *      none for the 13th and 14th (the event disarmed the limit)
 *   5  the client's disconnect: a last-WQE event for each QP, no receive
 *      flushed (the 2 left stay in the SRQ)
 *   6  the SRQ still holds those 2: it takes 14 more, then -ENOMEM
 * (the siw provider has no query_srq: the limit is seen by its event).
 * The client connects twice, sends "<c><n>" (c = 'a' or 'b', n = 0..6)
 * padded to 64 octets (octets 40..63 a pattern of c and n) on each, waits
 * for the server's "done" Send on the first connection, received into
 * two SGEs of 2 and 62 octets, and disconnects:
 *   1  both connections established
 *   2  14 Sends completed successfully
 *   3  the server's "done" received
 *
 * Usage: iwmpa_srq server|client ADDR PORT
 * Exit status 0 when every test passed, 1 otherwise.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>
#include "kselftest.h"

#define NCONN		2
#define NMSG		7
#define MSG_LEN		64
#define HEAD		40	/* the first SGE of a server's receive */
#define SRQ_WRS		16
#define SRQ_LIMIT	5
#define TIMEOUT_MS	20000

struct ctx {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id[NCONN];
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr, *mr2;
	char buf[(SRQ_WRS + NCONN) * MSG_LEN];
	char tail[SRQ_WRS * MSG_LEN];
};

/* octet @j of a message's tail (octets HEAD..MSG_LEN - 1) */
static char tail_octet(int q, int n, int j)
{
	return (char)(0x40 + q * 16 + n + j);
}

/* the next CM event: its type in *@type, its id in *@id */
static int cm_next(struct ctx *c, enum rdma_cm_event_type *type,
		   struct rdma_cm_id **id, int *status)
{
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1 || rdma_get_cm_event(c->ch, &ev)) {
		ksft_print_msg("no CM event\n");
		return -1;
	}
	*type = ev->event;
	*status = ev->status;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return 0;
}

/* the next CM event, which must be @want */
static int cm_wait(struct ctx *c, enum rdma_cm_event_type want)
{
	enum rdma_cm_event_type t;
	int status;

	if (cm_next(c, &t, NULL, &status))
		return -1;
	if (t == want)
		return 0;
	ksft_print_msg("CM event %s (%d), want %s\n", rdma_event_str(t),
		       status, rdma_event_str(want));
	return -1;
}

/* poll @n completions into @wc within the timeout */
static int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, i, r;

	for (i = 0; got < n && i < TIMEOUT_MS * 10; i++) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n)
			usleep(100);
	}
	return got;
}

/* the async events of the next @ms ms: counts by type */
static void async_events(struct ctx *c, int ms, int *limit, int *last_wqe,
			 struct ibv_qp **qps)
{
	struct pollfd pfd = { .fd = c->verbs->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&pfd, 1, ms) == 1 && !ibv_get_async_event(c->verbs, &ev)) {
		ksft_print_msg("async event: %s\n",
			       ibv_event_type_str(ev.event_type));
		if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		    ev.element.srq == c->srq)
			(*limit)++;
		if (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
		    (ev.element.qp == qps[0] || ev.element.qp == qps[1]))
			(*last_wqe)++;
		ibv_ack_async_event(&ev);
	}
}

static int post_srq(struct ctx *c, int first, int n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge[2];
	int i, ret;

	for (i = first; i < first + n; i++) {
		sge[0] = (struct ibv_sge){
			.addr = (uintptr_t)c->buf + (i % SRQ_WRS) * MSG_LEN,
			.length = HEAD, .lkey = c->mr->lkey,
		};
		sge[1] = (struct ibv_sge){
			.addr = (uintptr_t)c->tail + (i % SRQ_WRS) * MSG_LEN,
			.length = MSG_LEN - HEAD, .lkey = c->mr2->lkey,
		};
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = sge,
					   .num_sge = 2 };
		ret = ibv_post_srq_recv(c->srq, &wr, &bad);
		if (ret)
			return ret;
	}
	return 0;
}

static int server(struct ctx *c, struct addrinfo *ai)
{
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = SRQ_WRS, .max_sge = 1,
			  .srq_limit = SRQ_LIMIT },
	};
	struct ibv_qp_init_attr qia = {
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_wc wc[SRQ_WRS];
	struct ibv_qp *qps[NCONN] = {};
	int seen[NCONN] = {}, taken[SRQ_WRS] = {};
	int i, n, nreq, ok, limit = 0, last_wqe = 0;

	if (rdma_create_id(c->ch, &c->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen, ai->ai_addr) ||
	    rdma_listen(c->listen, NCONN))
		ksft_exit_fail_msg("listen: %s\n", strerror(errno));
	/*
	 * The client connects one after the other, but the passive side's
	 * ESTABLISHED comes with the client's first FPDU: the second request
	 * may come before it. The device is known from the first request.
	 */
	ok = 1;
	for (n = 0, nreq = 0; ok && n < NCONN;) {
		struct rdma_conn_param cp = { .responder_resources = 1,
					      .initiator_depth = 1 };
		enum rdma_cm_event_type t;
		struct rdma_cm_id *id;
		int status;

		if (cm_next(c, &t, &id, &status)) {
			ok = 0;
			break;
		}
		if (t == RDMA_CM_EVENT_ESTABLISHED) {
			n++;
			continue;
		}
		if (t != RDMA_CM_EVENT_CONNECT_REQUEST || nreq == NCONN) {
			ksft_print_msg("CM event %s (%d)\n", rdma_event_str(t),
				       status);
			ok = 0;
			break;
		}
		i = nreq++;
		c->id[i] = id;
		if (!i) {
			c->verbs = c->id[0]->verbs;
			c->pd = ibv_alloc_pd(c->verbs);
			c->cq = c->pd ? ibv_create_cq(c->verbs, 64, NULL, NULL, 0) :
					NULL;
			c->mr = c->pd ? ibv_reg_mr(c->pd, c->buf, sizeof(c->buf),
						   IBV_ACCESS_LOCAL_WRITE) : NULL;
			c->mr2 = c->pd ? ibv_reg_mr(c->pd, c->tail, sizeof(c->tail),
						    IBV_ACCESS_LOCAL_WRITE) : NULL;
			c->srq = c->pd ? ibv_create_srq(c->pd, &sia) : NULL;
			ok = c->cq && c->mr && c->mr2 && c->srq &&
			     !post_srq(c, 0, SRQ_WRS);
			ksft_test_result(ok && sia.attr.max_wr == SRQ_WRS,
					 "SRQ of %d receives (%u), limit %d\n",
					 SRQ_WRS, sia.attr.max_wr, SRQ_LIMIT);
			if (!ok)
				break;
			qia.send_cq = c->cq;
			qia.recv_cq = c->cq;
			qia.srq = c->srq;
		}
		ok = !rdma_create_qp(c->id[i], c->pd, &qia) &&
		     !rdma_accept(c->id[i], &cp);
		qps[i] = c->id[i]->qp;
	}
	ksft_test_result(ok && qps[0]->srq == c->srq && qps[1]->srq == c->srq,
			 "two connections, both QPs on the SRQ\n");
	if (!ok)
		ksft_exit_fail_msg("no connections\n");

	/* the receives, in the SRQ's order, each QP's in its own order */
	n = cq_wait(c->cq, wc, NCONN * NMSG);
	ok = n == NCONN * NMSG;
	for (i = 0; i < n; i++) {
		int q = wc[i].qp_num == qps[0]->qp_num ? 0 :
			wc[i].qp_num == qps[1]->qp_num ? 1 : -1;
		char want[3] = { 'a' + q, '0' + (q >= 0 ? seen[q] : 0) };
		const char *got = c->buf + (wc[i].wr_id % SRQ_WRS) * MSG_LEN;
		const char *tail = c->tail + (wc[i].wr_id % SRQ_WRS) * MSG_LEN;
		int j, tail_ok = q >= 0;

		for (j = 0; tail_ok && j < MSG_LEN - HEAD; j++)
			tail_ok = tail[j] == tail_octet(q, seen[q], j);

		if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV ||
		    wc[i].byte_len != MSG_LEN || q < 0 || wc[i].wr_id >= SRQ_WRS ||
		    taken[wc[i].wr_id]++ || strncmp(got, want, 3) || !tail_ok) {
			ksft_print_msg("completion %d: status %d opcode %d len %u qp %u",
				       i, wc[i].status, wc[i].opcode,
				       wc[i].byte_len, wc[i].qp_num);
			printf(" wr_id %llu data \"%.3s\", want \"%s\"\n",
			       (unsigned long long)wc[i].wr_id, got, want);
			ok = 0;
		}
		if (q >= 0)
			seen[q]++;
	}
	for (i = 0; i < NCONN * NMSG; i++)
		ok = ok && taken[i] == 1;
	ksft_test_result(ok, "%d receives into 2 SGEs: all good, in order, wr_ids 0..%d (%d)\n",
			 NCONN * NMSG, NCONN * NMSG - 1, n);

	async_events(c, 500, &limit, &last_wqe, qps);
	ksft_test_result(limit == 1,
			 "one limit event (%d) for %d receives taken of %d, limit %d\n",
			 limit, NCONN * NMSG, SRQ_WRS, SRQ_LIMIT);

	/* done: the client disconnects */
	{
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf +
					       SRQ_WRS * MSG_LEN,
				       .length = 5, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		strcpy(c->buf + SRQ_WRS * MSG_LEN, "done");
		ok = !ibv_post_send(qps[0], &wr, &bad) && cq_wait(c->cq, wc, 1) == 1 &&
		     wc[0].status == IBV_WC_SUCCESS;
	}
	for (i = 0; i < NCONN && ok; i++)
		ok = !cm_wait(c, RDMA_CM_EVENT_DISCONNECTED);
	async_events(c, 1000, &limit, &last_wqe, qps);
	n = ibv_poll_cq(c->cq, SRQ_WRS, wc);
	ksft_test_result(ok && last_wqe == NCONN && !n,
			 "disconnected: %d last-WQE events, %d completions flushed\n",
			 last_wqe, n);

	for (i = 0; i < NCONN; i++) {
		rdma_destroy_qp(c->id[i]);
		rdma_destroy_id(c->id[i]);
	}
	i = post_srq(c, SRQ_WRS, NCONN * NMSG);
	n = post_srq(c, 2 * SRQ_WRS, 1);
	ksft_test_result(!i && n == -ENOMEM,
			 "the SRQ kept its %d receives: %d more taken (%d), then -ENOMEM (%d)\n",
			 SRQ_WRS - NCONN * NMSG, NCONN * NMSG, i, n);
	ibv_destroy_srq(c->srq);
	ibv_dereg_mr(c->mr2);
	ibv_dereg_mr(c->mr);
	ibv_destroy_cq(c->cq);
	ibv_dealloc_pd(c->pd);
	rdma_destroy_id(c->listen);
	return 0;
}

static int client(struct ctx *c, struct addrinfo *ai)
{
	struct ibv_qp_init_attr qia = {
		.cap = { .max_send_wr = NMSG, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct ibv_wc wc[NCONN * NMSG];
	int i, j, k, n, ok = 1;

	for (i = 0; i < NCONN && ok; i++) {
		ok = !rdma_create_id(c->ch, &c->id[i], NULL, RDMA_PS_TCP) &&
		     !rdma_resolve_addr(c->id[i], NULL, ai->ai_addr, 2000) &&
		     !cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED) &&
		     !rdma_resolve_route(c->id[i], 2000) &&
		     !cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
		if (!ok)
			break;
		if (!i) {
			c->verbs = c->id[0]->verbs;
			c->pd = ibv_alloc_pd(c->verbs);
			c->cq = c->pd ? ibv_create_cq(c->verbs, 64, NULL, NULL, 0) :
					NULL;
			c->mr = c->pd ? ibv_reg_mr(c->pd, c,
						   sizeof(*c),
						   IBV_ACCESS_LOCAL_WRITE) : NULL;
			qia.send_cq = c->cq;
			qia.recv_cq = c->cq;
			ok = c->cq && c->mr;
		}
		if (ok) {
			/* "done" arrives as "do" and "ne\0" */
			struct ibv_sge sge[2] = {
				{ .addr = (uintptr_t)c->buf + i * MSG_LEN,
				  .length = 2, .lkey = c->mr->lkey },
				{ .addr = (uintptr_t)c->tail + i * MSG_LEN,
				  .length = MSG_LEN - 2, .lkey = c->mr->lkey },
			};
			struct ibv_recv_wr rwr = { .wr_id = 100 + i,
						   .sg_list = sge,
						   .num_sge = 2 }, *bad;

			ok = !rdma_create_qp(c->id[i], c->pd, &qia) &&
			     !ibv_post_recv(c->id[i]->qp, &rwr, &bad) &&
			     !rdma_connect(c->id[i], &cp) &&
			     !cm_wait(c, RDMA_CM_EVENT_ESTABLISHED);
		}
	}
	ksft_test_result(ok, "two connections established\n");
	if (!ok)
		ksft_exit_fail_msg("no connections: %s\n", strerror(errno));

	/* a0 b0 a1 b1 ...: the server's SRQ serves both in turn */
	for (k = 0; k < NMSG && ok; k++) {
		for (i = 0; i < NCONN && ok; i++) {
			char *m = c->buf + (NCONN + 0) * MSG_LEN;
			struct ibv_sge sge = { .addr = (uintptr_t)m,
					       .length = MSG_LEN,
					       .lkey = c->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = k * NCONN + i,
						  .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED },
					   *bad;

			memset(m, 0, MSG_LEN);
			m[0] = 'a' + i;
			m[1] = '0' + k;
			for (j = 0; j < MSG_LEN - HEAD; j++)
				m[HEAD + j] = tail_octet(i, k, j);
			/* one at a time: the buffer is used again */
			ok = !ibv_post_send(c->id[i]->qp, &wr, &bad) &&
			     cq_wait(c->cq, wc, 1) == 1 &&
			     wc[0].status == IBV_WC_SUCCESS &&
			     wc[0].wr_id == (uint64_t)(k * NCONN + i);
		}
	}
	ksft_test_result(ok, "%d Sends completed\n", NCONN * NMSG);

	n = cq_wait(c->cq, wc, 1);
	ksft_test_result(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].wr_id == 100 && wc[0].byte_len == 5 &&
			 !strncmp(c->buf, "do", 2) && !strcmp(c->tail, "ne"),
			 "the server's \"done\" received into 2 SGEs\n");
	for (i = 0; i < NCONN; i++)
		rdma_disconnect(c->id[i]);
	for (i = 0; i < NCONN; i++)
		cm_wait(c, RDMA_CM_EVENT_DISCONNECTED);
	for (i = 0; i < NCONN; i++) {
		rdma_destroy_qp(c->id[i]);
		rdma_destroy_id(c->id[i]);
	}
	ibv_dereg_mr(c->mr);
	ibv_destroy_cq(c->cq);
	ibv_dealloc_pd(c->pd);
	return 0;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	static struct ctx c;
	int srv;

	ksft_print_header();
	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		ksft_exit_fail_msg("usage: %s server|client ADDR PORT\n", argv[0]);
	srv = !strcmp(argv[1], "server");
	ksft_set_plan(srv ? 6 : 3);
	if (getaddrinfo(argv[2], argv[3], &hints, &ai))
		ksft_exit_fail_msg("bad address %s:%s\n", argv[2], argv[3]);
	c.ch = rdma_create_event_channel();
	if (!c.ch)
		ksft_exit_fail_msg("no rdma_cm: %s\n", strerror(errno));
	if (srv)
		server(&c, ai);
	else
		client(&c, ai);
	rdma_destroy_event_channel(c.ch);
	freeaddrinfo(ai);
	ksft_finished();
}
