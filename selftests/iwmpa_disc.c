// SPDX-License-Identifier: GPL-2.0
/*
 * A graceful disconnect while the send queue is stuck, through librdmacm
 * and libibverbs (TAP), on any iWARP device: a helper of iwmpa_apps.sh.
 *
 * The server listens on ADDR:PORT, accepts one connection with NSEND
 * receives of MSG_LEN octets posted, and checks:
 *   1  the connection established
 *   2  the client's disconnect reaches it: RDMA_CM_EVENT_DISCONNECTED
 * The client connects, runs CMD (iwmpa_apps.sh passes one that drops
 * every packet arriving at the client: no ACK comes back any more), posts
 * NSEND Sends of MSG_LEN octets, more than TCP's send buffer holds, and
 * after STUCK_MS calls rdma_disconnect(), which modifies the QP to SQD
 * while a send waits for TCP's memory. It checks:
 *   1  the connection established
 *   2  the Sends are stuck: fewer than NSEND completed after STUCK_MS
 *   3  rdma_disconnect() returns within DISC_MAX_MS (the device lets the
 *      stuck send go on for a while, then resets the connection; it
 *      used to wait for TCP to give up, a quarter of an hour)
 *   4  RDMA_CM_EVENT_DISCONNECTED, and every Send completed, successfully
 *      or flushed
 * With "connect", no server: the client runs CMD (one that drops the TCP
 * packets arriving at it, so TCP's connect never completes) and checks:
 *   1  the address and the route resolved
 *   2  the connect fails within CONNECT_MAX_MS: rdma_connect() with
 *      ETIMEDOUT (TCP's connect waits for mpa_timeout_ms, 10 s, not the
 *      two minutes of its SYN retries), or an error event
 *
 * Usage: iwmpa_disc server ADDR PORT | client ADDR PORT CMD |
 *        connect ADDR PORT CMD
 * Exit status 0 when every test passed, 1 otherwise.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>
#include "kselftest.h"

#define NSEND		64
#define MSG_LEN		(256 * 1024)	/* NSEND of them: 16 MiB */
#define STUCK_MS	2000
#define DISC_MAX_MS	10000
#define CONNECT_MAX_MS	20000
#define TIMEOUT_MS	30000

struct ctx {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* the next CM event, which must be @want; its id in *@id */
static int cm_wait(struct ctx *c, enum rdma_cm_event_type want,
		   struct rdma_cm_id **id)
{
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ok;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1 || rdma_get_cm_event(c->ch, &ev)) {
		ksft_print_msg("no CM event, want %s\n", rdma_event_str(want));
		return -1;
	}
	ok = ev->event == want;
	if (!ok)
		ksft_print_msg("CM event %s (%d), want %s\n",
			       rdma_event_str(ev->event), ev->status,
			       rdma_event_str(want));
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

/* PD, CQ, the buffer registered, a QP on @id */
static int resources(struct ctx *c, struct rdma_cm_id *id, size_t len)
{
	struct ibv_qp_init_attr qia = {
		.cap = { .max_send_wr = NSEND, .max_recv_wr = NSEND,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	c->len = len;
	c->buf = calloc(1, len);
	c->pd = c->buf ? ibv_alloc_pd(id->verbs) : NULL;
	c->cq = c->pd ? ibv_create_cq(id->verbs, 2 * NSEND, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, len, IBV_ACCESS_LOCAL_WRITE) :
			NULL;
	if (!c->mr)
		return -1;
	qia.send_cq = c->cq;
	qia.recv_cq = c->cq;
	return rdma_create_qp(id, c->pd, &qia);
}

static void release(struct ctx *c, struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	free(c->buf);
	rdma_destroy_id(id);
}

static void server(struct ctx *c, struct addrinfo *ai)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int i, ok;

	if (rdma_create_id(c->ch, &c->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen, ai->ai_addr) || rdma_listen(c->listen, 1))
		ksft_exit_fail_msg("listen: %s\n", strerror(errno));
	ok = !cm_wait(c, RDMA_CM_EVENT_CONNECT_REQUEST, &c->id) &&
	     !resources(c, c->id, (size_t)NSEND * MSG_LEN);
	for (i = 0; ok && i < NSEND; i++) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)c->buf +
						(size_t)i * MSG_LEN,
					.length = MSG_LEN, .lkey = c->mr->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge,
					   .num_sge = 1 };
		ok = !ibv_post_recv(c->id->qp, &wr, &bad);
	}
	ok = ok && !rdma_accept(c->id, &cp) &&
	     !cm_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	ksft_test_result(ok, "connection established\n");
	if (!ok)
		ksft_exit_fail_msg("no connection\n");
	ksft_test_result(!cm_wait(c, RDMA_CM_EVENT_DISCONNECTED, NULL),
			 "the client's disconnect arrived\n");
	release(c, c->id);
	rdma_destroy_id(c->listen);
}

static void client(struct ctx *c, struct addrinfo *ai, const char *cmd)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	int i, n, good = 0, flushed = 0, other = 0, ok;
	struct ibv_wc wc[NSEND];
	long long t0, t1;

	ok = !rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP) &&
	     !rdma_resolve_addr(c->id, NULL, ai->ai_addr, 2000) &&
	     !cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) &&
	     !rdma_resolve_route(c->id, 2000) &&
	     !cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) &&
	     !resources(c, c->id, MSG_LEN) && !rdma_connect(c->id, &cp) &&
	     !cm_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	ksft_test_result(ok, "connection established\n");
	if (!ok)
		ksft_exit_fail_msg("no connection: %s\n", strerror(errno));

	/* from now on nothing the server sends arrives */
	if (system(cmd))
		ksft_exit_fail_msg("%s failed\n", cmd);
	for (i = 0; i < NSEND; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf,
				       .length = MSG_LEN, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		if (ibv_post_send(c->id->qp, &wr, &bad))
			ksft_exit_fail_msg("post_send %d: %s\n", i, strerror(errno));
	}
	usleep(STUCK_MS * 1000);
	n = ibv_poll_cq(c->cq, NSEND, wc);
	ksft_test_result(n >= 0 && n < NSEND,
			 "the Sends are stuck: %d of %d completed after %d ms\n",
			 n, NSEND, STUCK_MS);
	for (i = 0; i < n; i++) {
		good += wc[i].status == IBV_WC_SUCCESS;
		other += wc[i].status != IBV_WC_SUCCESS;
	}

	t0 = now_ms();
	rdma_disconnect(c->id);
	t1 = now_ms();
	ksft_test_result(t1 - t0 < DISC_MAX_MS,
			 "rdma_disconnect() returned in %lld ms (at most %d)\n",
			 t1 - t0, DISC_MAX_MS);

	ok = !cm_wait(c, RDMA_CM_EVENT_DISCONNECTED, NULL);
	for (i = 0; i < TIMEOUT_MS / 10 && good + flushed + other < NSEND; i++) {
		int k, r = ibv_poll_cq(c->cq, NSEND, wc);

		for (k = 0; k < r; k++) {
			if (wc[k].status == IBV_WC_SUCCESS)
				good++;
			else if (wc[k].status == IBV_WC_WR_FLUSH_ERR)
				flushed++;
			else
				other++;
		}
		if (good + flushed + other < NSEND)
			usleep(10000);
	}
	ksft_test_result(ok && !other && good + flushed == NSEND,
			 "disconnected; %d Sends completed: %d successful, %d flushed, %d other\n",
			 good + flushed + other, good, flushed, other);
	release(c, c->id);
}

/* a connect that TCP never completes */
static void unreachable(struct ctx *c, struct addrinfo *ai, const char *cmd)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	const char *what;
	long long t0, t1;
	int ok, err = 0;

	ok = !rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP) &&
	     !rdma_resolve_addr(c->id, NULL, ai->ai_addr, 2000) &&
	     !cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) &&
	     !rdma_resolve_route(c->id, 2000) &&
	     !cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) &&
	     !resources(c, c->id, 4096);
	ksft_test_result(ok, "address and route resolved\n");
	if (!ok)
		ksft_exit_fail_msg("no route: %s\n", strerror(errno));
	if (system(cmd))
		ksft_exit_fail_msg("%s failed\n", cmd);

	t0 = now_ms();
	if (rdma_connect(c->id, &cp)) {
		err = errno;
		ok = err == ETIMEDOUT;
		what = strerror(err);
	} else if (poll(&pfd, 1, CONNECT_MAX_MS) == 1 &&
		   !rdma_get_cm_event(c->ch, &ev)) {
		ok = ev->event != RDMA_CM_EVENT_ESTABLISHED;
		what = rdma_event_str(ev->event);
		rdma_ack_cm_event(ev);
	} else {
		ok = 0;
		what = "nothing";
	}
	t1 = now_ms();
	ksft_test_result(ok && t1 - t0 < CONNECT_MAX_MS,
			 "the connect failed in %lld ms (at most %d): %s\n",
			 t1 - t0, CONNECT_MAX_MS, what);
	release(c, c->id);
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	static struct ctx c;
	int srv;

	ksft_print_header();
	srv = argc == 4 && !strcmp(argv[1], "server");
	if (!srv && (argc != 5 || (strcmp(argv[1], "client") &&
				   strcmp(argv[1], "connect"))))
		ksft_exit_fail_msg("usage: %s server ADDR PORT | client|connect ADDR PORT CMD\n",
				   argv[0]);
	ksft_set_plan(srv || !strcmp(argv[1], "connect") ? 2 : 4);
	if (getaddrinfo(argv[2], argv[3], &hints, &ai))
		ksft_exit_fail_msg("bad address %s:%s\n", argv[2], argv[3]);
	c.ch = rdma_create_event_channel();
	if (!c.ch)
		ksft_exit_fail_msg("no rdma_cm: %s\n", strerror(errno));
	if (srv)
		server(&c, ai);
	else if (!strcmp(argv[1], "client"))
		client(&c, ai, argv[4]);
	else
		unreachable(&c, ai, argv[4]);
	rdma_destroy_event_channel(c.ch);
	freeaddrinfo(ai);
	ksft_finished();
}
