// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs of iwmpa.ko through libibverbs and rdma-core's siw provider
 * (TAP): open the device, query it, allocate a PD, register 1 MiB of
 * memory and a piece of it at an odd address, refuse remote atomics;
 * create a CQ and a QP (ring sizes rounded up to powers of 2, limits
 * refused with EINVAL), post a Send and a receive on the unconnected QP,
 * and find both flushed into the CQ when the QP is destroyed; a shared
 * receive queue (sizes, limit, receives posted into its ring, a QP bound
 * to it that keeps none of them when it ends, the last-WQE event, no
 * destroy while in use); then free everything. A helper of
 * iwmpa_device.sh, which creates the device first.
 *
 * Usage: iwmpa_verbs DEV [HOLD]
 *   With HOLD, once the PD and the MRs exist, print "# ready" and wait
 *   (60 s at most) until the file HOLD exists, so that the caller can
 *   look at them ("rdma resource show").
 * Exit status 0 when every test passed, 1 otherwise, 4 without DEV.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "kselftest.h"

#define MR_LEN		(1024 * 1024)
#define PIECE_OFF	100
#define PIECE_LEN	5000

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#define SRQ_WRS		100	/* rounded up to 128 */

/* the next async event of @ctx, within 2 s; -1 if none came */
static int async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, 2000) != 1 || ibv_get_async_event(ctx, ev))
		return -1;
	return 0;
}

/* 9 results */
static void test_srq(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_cq *cq, struct ibv_mr *mr)
{
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = 4097, .max_sge = 1 },
	};
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_recv_wr rwr[SRQ_WRS + 29], *bad_rwr;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT };
	struct ibv_srq_attr a = {};
	struct ibv_async_event ev;
	struct ibv_srq *srq, *bad;
	struct ibv_wc wc[4];
	struct ibv_qp *qp;
	int i, ret, e1, e2;

	errno = 0;
	bad = ibv_create_srq(pd, &sia);
	e1 = errno;
	if (bad)
		ibv_destroy_srq(bad);
	sia.attr.max_wr = SRQ_WRS;
	sia.attr.max_sge = 7;
	errno = 0;
	bad = ibv_create_srq(pd, &sia);
	e2 = errno;
	if (bad)
		ibv_destroy_srq(bad);
	ksft_test_result(e1 == EINVAL && e2 == EINVAL,
			 "SRQ of 4097 WRs (max_srq_wr 4096), of 7 SGEs (6): EINVAL (%s, %s)\n",
			 strerror(e1), strerror(e2));

	/* the siw provider has no query_srq: the sizes come back here */
	sia.attr.max_sge = 1;
	srq = ibv_create_srq(pd, &sia);
	ksft_test_result(srq && sia.attr.max_wr == 128 && sia.attr.max_sge == 6,
			 "SRQ of %d WRs, 1 SGE: 128, 6 SGEs (%u %u)\n", SRQ_WRS,
			 sia.attr.max_wr, sia.attr.max_sge);
	if (!srq) {
		ksft_test_result_skip("no SRQ\n");
		return;
	}

	a.srq_limit = 10;
	ret = ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT);
	ksft_test_result(!ret, "arm the limit at 10 (%d)\n", ret);
	a.srq_limit = 129;
	e1 = ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT);
	a.max_wr = 256;
	e2 = ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
	ksft_test_result(e1 == EINVAL && e2 == EOPNOTSUPP,
			 "limit 129: EINVAL (%d); resize: EOPNOTSUPP (%d)\n",
			 e1, e2);

	/* the ring takes 128 receives, the 129th finds it full */
	for (i = 0; i < SRQ_WRS + 29; i++) {
		rwr[i] = (struct ibv_recv_wr){
			.wr_id = 0x5000 + i, .sg_list = &sge, .num_sge = 1,
			.next = i + 1 < SRQ_WRS + 29 ? &rwr[i + 1] : NULL,
		};
	}
	ret = ibv_post_srq_recv(srq, rwr, &bad_rwr);
	ksft_test_result(ret == -ENOMEM && bad_rwr == &rwr[128],
			 "post 129 receives: 128 taken, then -ENOMEM (%d, at %ld)\n",
			 ret, (long)(bad_rwr - rwr));

	qia.srq = srq;
	qp = ibv_create_qp(pd, &qia);
	ksft_test_result(qp && !qia.cap.max_recv_wr && !qia.cap.max_recv_sge,
			 "QP bound to the SRQ: no RQ of its own (%u %u)\n",
			 qia.cap.max_recv_wr, qia.cap.max_recv_sge);
	if (!qp)
		goto out;
	errno = 0;
	ret = ibv_destroy_srq(srq);
	ksft_test_result(ret == EBUSY, "destroy the SRQ in use: EBUSY (%d)\n",
			 ret);

	/* the QP's end leaves the SRQ's receives to the other QPs */
	ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
	qa.qp_state = IBV_QPS_ERR;
	ret = ret ?: ibv_modify_qp(qp, &qa, IBV_QP_STATE);
	ev.event_type = IBV_EVENT_COMM_EST;
	if (!ret && !async_event(ctx, &ev))
		ibv_ack_async_event(&ev);
	ksft_test_result(!ret && ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
			 ev.element.qp == qp && ibv_poll_cq(cq, 4, wc) == 0,
			 "QP to ERR: last-WQE event (%s), no receive flushed\n",
			 ibv_event_type_str(ev.event_type));
	ibv_destroy_qp(qp);
out:
	ksft_test_result(!ibv_destroy_srq(srq) && ibv_poll_cq(cq, 4, wc) == 0,
			 "destroy the QP, then the SRQ: nothing in the CQ\n");
}

static void wait_file(const char *path)
{
	int i;

	printf("# ready\n");
	fflush(stdout);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

int main(int argc, char **argv)
{
	struct ibv_mr *mr = NULL, *piece = NULL, *bad;
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_qp_init_attr qia = {
		.cap = { .max_send_wr = 5, .max_recv_wr = 3,
			 .max_send_sge = 2, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT };
	struct ibv_recv_wr rwr = { .wr_id = 0x5678, .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr swr = {
		.wr_id = 0x1234, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad_swr;
	struct ibv_sge sge = { .length = 64 };
	struct ibv_cq *cq = NULL, *bad_cq;
	struct ibv_wc wc[4];
	struct ibv_qp *qp;
	int n;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	char *buf;

	ksft_print_header();
	ksft_set_plan(23);
	if (argc < 2)
		ksft_exit_skip("usage: %s DEV [HOLD]\n", argv[0]);
	buf = aligned_alloc(4096, MR_LEN);
	if (!buf)
		ksft_exit_fail_msg("no memory\n");
	memset(buf, 0xa5, MR_LEN);

	ctx = open_dev(argv[1]);
	if (!ctx)
		ksft_exit_fail_msg("cannot open %s: %s\n", argv[1],
				   strerror(errno));
	ksft_test_result_pass("open %s (siw provider)\n", argv[1]);

	if (!ibv_query_device(ctx, &attr)) {
		ksft_print_msg("max_qp %d max_mr %d max_sge %d max_qp_rd_atom %d\n",
			       attr.max_qp, attr.max_mr, attr.max_sge,
			       attr.max_qp_rd_atom);
		ksft_test_result(attr.max_qp_rd_atom == 64 &&
				 attr.phys_port_cnt == 1,
				 "query device\n");
	} else {
		ksft_test_result_fail("query device: %s\n", strerror(errno));
	}

	pd = ibv_alloc_pd(ctx);
	ksft_test_result(!!pd, "alloc PD\n");
	if (!pd)
		goto out;

	mr = ibv_reg_mr(pd, buf, MR_LEN, access);
	if (mr)
		ksft_print_msg("1 MiB MR: lkey %#x rkey %#x\n", mr->lkey,
			       mr->rkey);
	ksft_test_result(mr && mr->lkey == mr->rkey && mr->lkey,
			 "register 1 MiB, lkey == rkey (the STag)\n");

	piece = ibv_reg_mr(pd, buf + PIECE_OFF, PIECE_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	ksft_test_result(piece && piece->lkey != (mr ? mr->lkey : 0),
			 "register %d octets at offset %d, another STag\n",
			 PIECE_LEN, PIECE_OFF);

	errno = 0;
	bad = ibv_reg_mr(pd, buf, 4096, access | IBV_ACCESS_REMOTE_ATOMIC);
	ksft_test_result(!bad && errno == EOPNOTSUPP,
			 "register for remote atomics: EOPNOTSUPP (%s)\n",
			 strerror(errno));
	if (bad)
		ibv_dereg_mr(bad);

	errno = 0;
	bad_cq = ibv_create_cq(ctx, 8193, NULL, NULL, 0);
	ksft_test_result(!bad_cq && errno == EINVAL,
			 "CQ of 8193 entries (max_cqe 8192): EINVAL (%s)\n",
			 strerror(errno));
	if (bad_cq)
		ibv_destroy_cq(bad_cq);
	cq = ibv_create_cq(ctx, 10, NULL, NULL, 0);
	ksft_test_result(cq && cq->cqe == 16, "CQ of 10 entries: 16 (%d)\n",
			 cq ? cq->cqe : -1);
	if (!cq || !mr)
		goto out;

	qia.send_cq = cq;
	qia.recv_cq = cq;
	qia.cap.max_send_wr = 1025;
	errno = 0;
	qp = ibv_create_qp(pd, &qia);
	ksft_test_result(!qp && errno == EINVAL,
			 "QP of 1025 send WRs (max_qp_wr 1024): EINVAL (%s)\n",
			 strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	qia.cap.max_send_wr = 5;
	qp = ibv_create_qp(pd, &qia);
	ksft_test_result(qp && qp->qp_num && qia.cap.max_send_wr == 8 &&
			 qia.cap.max_recv_wr == 4,
			 "QP %u: SQ 8, RQ 4 (%u, %u)\n", qp ? qp->qp_num : 0,
			 qia.cap.max_send_wr, qia.cap.max_recv_wr);
	if (!qp)
		goto out;
	ksft_test_result(!ibv_modify_qp(qp, &qa, IBV_QP_STATE) &&
			 (qa.qp_state = IBV_QPS_RTS,
			  ibv_modify_qp(qp, &qa, IBV_QP_STATE) == EINVAL),
			 "QP to INIT; to RTS without a connection: EINVAL\n");

	/* nothing sends or receives on a QP without a connection */
	sge.addr = (uintptr_t)buf;
	sge.lkey = mr->lkey;
	swr.sg_list = &sge;
	rwr.sg_list = &sge;
	errno = 0;
	n = ibv_post_send(qp, &swr, &bad_swr);
	if (n)
		ksft_print_msg("post_send: %d (%s)\n", n, strerror(errno));
	ksft_test_result(!n && !ibv_post_recv(qp, &rwr, &bad_rwr) &&
			 ibv_poll_cq(cq, 4, wc) == 0,
			 "post a Send and a receive: no completion\n");
	ibv_destroy_qp(qp);
	n = ibv_poll_cq(cq, 4, wc);
	ksft_test_result(n == 2 && wc[0].wr_id == 0x1234 &&
			 wc[0].status == IBV_WC_WR_FLUSH_ERR &&
			 wc[0].opcode == IBV_WC_SEND &&
			 wc[1].wr_id == 0x5678 &&
			 wc[1].status == IBV_WC_WR_FLUSH_ERR &&
			 wc[1].opcode == IBV_WC_RECV,
			 "destroy QP: both flushed into the CQ (%d)\n", n);
	test_srq(ctx, pd, cq, mr);

	if (argc > 2)
		wait_file(argv[2]);
out:
	ksft_test_result((!cq || !ibv_destroy_cq(cq)) &&
			 (!piece || !ibv_dereg_mr(piece)) &&
			 (!mr || !ibv_dereg_mr(mr)) &&
			 (!pd || !ibv_dealloc_pd(pd)) &&
			 !ibv_close_device(ctx),
			 "destroy the CQ, deregister, free the PD, close\n");
	free(buf);
	ksft_finished();
}
