// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap-peer - a small RDMAP (RFC 5040) peer over /dev/ddp and MPA
 * revision 2 (RFC 5044, RFC 6581), for interoperability tests with
 * iWARP devices such as siw (soft-iWARP).
 *
 * RDMAP lives in the DDP RsvdULP field: octet 0 is the RDMAP control
 * (RV = 01 in the two top bits, the opcode in the low four); an untagged
 * message carries the Invalidate STag in RsvdULP octets 1..4. Queues:
 * QN 0 Send, QN 1 RDMA Read Request, QN 2 Terminate. RDMA Writes and
 * Read Responses are tagged messages.
 *
 * Two applications of rdma-core's librdmacm examples are spoken:
 *
 *   --send-exchange   rdma_client / rdma_server: the client sends one
 *                     16-octet Send, the server answers with one.
 *   --rping           rping -V: the client advertises its start buffer
 *                     (addr, rkey, len: 16 octets, big endian) in a Send,
 *                     the server RDMA-Reads it, sends a go-ahead, the
 *                     client advertises its rdma buffer, the server
 *                     RDMA-Writes the data back and sends a go-ahead.
 *
 * Incoming Read Requests are answered from registered memory, RDMA
 * Writes land in the advertised buffers, errors send a Terminate (QN 2),
 * and received Terminates are reported. See rdmap-peer(1).
 *
 * With --kernel, rping is spoken by the kernel's RDMAP (rdmap.ko) through
 * the test module rdmap_rping (selftests/kmod/rdmap_rping.c): the TCP
 * connection and the MPA startup stay here, the socket is handed to the
 * module's debugfs ctl file instead of /dev/ddp.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/ddp.h>
#include <linux/iwarp_wire.h>
#include <linux/mpa.h>

#include "libiwarp.h"

/*
 * exit statuses: IW_EXIT_DDP, IW_EXIT_LLP, IW_EXIT_MISMATCH, IW_EXIT_PROTO,
 * IW_EXIT_TERM, IW_EXIT_SYS, IW_EXIT_USAGE
 */

/* RDMAP (RFC 5040): include/uapi/linux/iwarp_wire.h */

/* posted receive buffers per queue and their size */
#define NRECV_SEND	8
#define NRECV_RREQ	8
#define NRECV_TERM	2
#define RECV_LEN	1024
#define NRECV		(NRECV_SEND + NRECV_RREQ + NRECV_TERM)

#define MAX_MR		4
#define MAX_SENDS	16	/* Sends received, not consumed yet */
#define EXCHANGE_LEN	16	/* rdma_client / rdma_server message */
#define RPING_DEFAULT	64	/* rping's default -S */
#define RPING_MIN	(sizeof("rdma-ping-%d: ") + 1)
#define KERNEL_MAX	65536	/* rdmap_rping's buffers */
#define KERNEL_IRD_ORD	4	/* rdmap_rping's queue pair */
#define KERNEL_DEBUGFS	"/sys/kernel/debug"
#define KERNEL_CTL	KERNEL_DEBUGFS "/rdmap_rping/ctl"
#define KERNEL_RESULT	"/sys/kernel/debug/rdmap_rping/result"

/* rping's struct rping_rdma_info, on the wire */
struct rping_info {
	__be64	buf;
	__be32	rkey;
	__be32	size;
};

/*
 * RDMA Read Request payload (RFC 5040 4.4), 28 octets, big endian: sink
 * STag (4), sink TO (8), RDMA Read message size (4), source STag (4),
 * source TO (8). Not naturally aligned: built octet by octet.
 */
#define RREQ_LEN	((__u32)sizeof(struct rdmap_wire_read_req))

static void put_be(__u8 *p, __u64 v, unsigned int n)
{
	while (n--) {
		p[n] = v;
		v >>= 8;
	}
}

static __u64 get_be(const __u8 *p, unsigned int n)
{
	__u64 v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

enum mode {
	MODE_NONE,
	MODE_EXCHANGE,
	MODE_RPING,
};

struct opts {
	int listen;
	enum mode mode;
	unsigned int count;
	unsigned int size;
	int verbose;
	int timeout_ms;
	unsigned int ird, ord;
	unsigned int rev;
	int p2p;
	int kernel;
	const char *host;
	const char *port;
};

static struct opts o = {
	.count = 100, .size = RPING_DEFAULT, .timeout_ms = 60000,
	.ird = 8, .ord = 8, .rev = 2,
};

struct mr {
	void	*addr;
	__u64	len;
	__u32	stag;
	__u32	access;
};

struct recv_buf {
	__u8	data[RECV_LEN];
	__u32	qn;
};

struct send_msg {
	__u8	data[RECV_LEN];
	__u32	len;
	__u32	msn;
	__u8	opcode;
};

struct peer {
	int sock, pd, sfd;
	int kctl;	/* --kernel: rdmap_rping's ctl file */
	struct mr mr[MAX_MR];
	int nmr;
	struct recv_buf rb[NRECV];
	struct send_msg sends[MAX_SENDS];
	unsigned int s_head, s_tail;
	/* the last tagged message placed into our memory */
	unsigned int tagged_cnt;
	__u8 tagged_op;
	__u32 tagged_stag, tagged_len;
	__u64 tagged_to;
	unsigned int writes, read_resps, reads_served;
	int peer_closed;
	/* RFC 6581 peer-to-peer: the agreed RTR type (MPA_F_RTR_*), 0 if none */
	__u32 rtr;
	int rtr_wait;	/* Responder: RTR not received yet */
	int rtr_resp;	/* Initiator, Read RTR: Read Response not received yet */
};

/* ---- messages and errors ---- */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rdmap-peer [-l] (--send-exchange | --rping) [-c COUNT] [-s SIZE]\n"
		"                  [-r REV] [-t SEC] [-v] [--p2p] HOST PORT\n"
		"       rdmap-peer [-l] --kernel --rping [-c COUNT] [-s SIZE] [-r REV]\n"
		"                  [-t SEC] [-v] [--p2p] HOST PORT\n"
		"  -l               listen on HOST PORT, accept one connection (MPA Responder)\n"
		"                   (default: connect, MPA Initiator)\n"
		"  --send-exchange  rdma_client/rdma_server: one 16-octet Send each way\n"
		"  --rping          rping -V: RDMA Read, RDMA Write back, verify\n"
		"  -c COUNT         rping iterations (client; server: expected, 0 = any),\n"
		"                   default 100\n"
		"  -s SIZE          rping buffer size, default 64 (as rping -S)\n"
		"  -r REV           MPA revision, 1 or 2 (default 2)\n"
		"  -t SEC           give up after SEC seconds without progress (default 60)\n"
		"  -v               verbose: MPA parameters, every message, ping data\n"
		"  --p2p            RFC 6581 peer-to-peer model (revision 2): offer\n"
		"                   Write, Read and Send RTR; the Initiator sends the\n"
		"                   agreed RTR first, the Responder waits for it\n"
		"  --kernel         rping spoken by the kernel's RDMAP (rdmap.ko) through\n"
		"                   the test module rdmap_rping (debugfs rdmap_rping/):\n"
		"                   TCP and the MPA startup here, the rest in the kernel;\n"
		"                   SIZE up to 65536, 10 s per step; with --p2p the\n"
		"                   kernel sends or consumes the RTR\n"
		"  --help           this text\n"
		"  --version        print the version\n"
		"CRC requested, no markers, IRD = ORD = 8 (revision 2; 4 with --kernel).\n"
		"Exit status: 0 success, 1 DDP error, 2 usage, 3 data mismatch,\n"
		"4 protocol error, 5 Terminate received, 6 MPA error, 10 system error.\n");
}

#define verbose(...)	iw_msg_if(o.verbose, __VA_ARGS__)

static const char *op_name(unsigned int op)
{
	static const char * const names[] = {
		"RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send",
		"Send with Invalidate", "Send with SE",
		"Send with SE and Invalidate", "Terminate",
	};

	return op < 8 ? names[op] : "reserved opcode";
}

static const char *term_name(unsigned int layer, unsigned int etype,
			     unsigned int ecode)
{
	if (layer == RDMAP_WIRE_LAYER_RDMAP) {
		if (etype == RDMAP_WIRE_ETYPE_CATASTROPHIC)
			return "RDMAP: local catastrophic";
		if (etype == RDMAP_WIRE_ETYPE_PROTECTION) {
			switch (ecode) {
			case RDMAP_WIRE_ECODE_INVALID_STAG:
				return "RDMAP protection: invalid STag";
			case RDMAP_WIRE_ECODE_BASE_BOUNDS:
				return "RDMAP protection: base or bounds violation";
			case RDMAP_WIRE_ECODE_ACCESS:
				return "RDMAP protection: access rights violation";
			case RDMAP_WIRE_ECODE_STAG_NOT_ASSOC:
				return "RDMAP protection: STag not associated with the stream";
			case RDMAP_WIRE_ECODE_TO_WRAP:
				return "RDMAP protection: TO wrap";
			case RDMAP_WIRE_ECODE_NO_INVALIDATE:
				return "RDMAP protection: STag cannot be invalidated";
			default:
				return "RDMAP protection error";
			}
		}
		if (etype == RDMAP_WIRE_ETYPE_OPERATION) {
			switch (ecode) {
			case RDMAP_WIRE_ECODE_VERSION:
				return "RDMAP operation: invalid RDMAP version";
			case RDMAP_WIRE_ECODE_OPCODE:
				return "RDMAP operation: unexpected opcode";
			case RDMAP_WIRE_ECODE_CATA_STREAM:
				return "RDMAP operation: catastrophic, local to the stream";
			case RDMAP_WIRE_ECODE_CATA_GLOBAL:
				return "RDMAP operation: catastrophic, global";
			default:
				return "RDMAP operation error";
			}
		}
		return "RDMAP error";
	}
	if (layer == RDMAP_WIRE_LAYER_DDP) {
		if (etype == DDP_WIRE_ETYPE_TAGGED)
			return "DDP tagged buffer error";
		if (etype == DDP_WIRE_ETYPE_UNTAGGED)
			return "DDP untagged buffer error";
		return "DDP catastrophic error";
	}
	if (layer == RDMAP_WIRE_LAYER_LLP)
		return ecode ? iw_mpa_err_name(ecode) : "LLP (MPA) error";
	return "unknown layer";
}

/* ---- DDP helpers ---- */

static void post_recv(struct peer *p, unsigned int i)
{
	if (iw_ddp_post_recv(p->sfd, p->rb[i].data, RECV_LEN, p->rb[i].qn, i))
		iw_die_sys("DDP_IOC_POST_RECV");
}

static void post_all(struct peer *p)
{
	unsigned int i;

	for (i = 0; i < NRECV; i++) {
		p->rb[i].qn = i < NRECV_SEND ? RDMAP_WIRE_QN_SEND :
			      i < NRECV_SEND + NRECV_RREQ ? RDMAP_WIRE_QN_READ_REQ :
			      RDMAP_WIRE_QN_TERMINATE;
		post_recv(p, i);
	}
}

static int send_msg(struct peer *p, const void *buf, size_t len, int tagged,
		    __u32 qn, __u32 stag, __u64 to, unsigned int op)
{
	const __u8 rsvdulp[5] = { RDMAP_WIRE_RV | op };
	int ret;

	if (tagged)
		ret = iw_ddp_send_tagged(p->sfd, buf, len, stag, to, rsvdulp[0]);
	else
		ret = iw_ddp_send_untagged(p->sfd, buf, len, qn, rsvdulp);
	if (ret)
		return -errno;
	if (tagged)
		verbose("-> %s, %zu octets, STag 0x%08x TO 0x%llx", op_name(op),
			len, stag, (unsigned long long)to);
	else
		verbose("-> %s, %zu octets, QN %u", op_name(op), len, qn);
	return 0;
}

static void send_or_die(struct peer *p, const void *buf, size_t len, int tagged,
			__u32 qn, __u32 stag, __u64 to, unsigned int op)
{
	int ret = send_msg(p, buf, len, tagged, qn, stag, to, op);

	if (ret) {
		iw_msg("DDP_IOC_SEND (%s): %s", op_name(op), strerror(-ret));
		exit(ret == -ENOTCONN || ret == -EPIPE ? IW_EXIT_PROTO : IW_EXIT_SYS);
	}
}

/* Send a Terminate (QN 2) without headers (Hdrct 0) and exit. */
static void terminate(struct peer *p, unsigned int layer, unsigned int etype,
		      unsigned int ecode, int status)
{
	__be32 ctrl = htobe32(layer << RDMAP_WIRE_TERM_LAYER_SHIFT |
			       etype << RDMAP_WIRE_TERM_ETYPE_SHIFT |
			       ecode << RDMAP_WIRE_TERM_ECODE_SHIFT);
	int ret;

	iw_msg("sending Terminate: layer %u, type 0x%x, code 0x%02x (%s)", layer,
	       etype, ecode, term_name(layer, etype, ecode));
	ret = send_msg(p, &ctrl, sizeof(ctrl), 0, RDMAP_WIRE_QN_TERMINATE, 0, 0,
		       RDMAP_WIRE_OP_TERMINATE);
	if (ret)
		iw_msg("the Terminate could not be sent: %s", strerror(-ret));
	exit(status);
}

static struct mr *reg_mr(struct peer *p, void *addr, __u64 len, __u32 access)
{
	struct mr *m;
	__u32 stag;

	if (p->nmr == MAX_MR) {
		errno = ENOSPC;
		iw_die_sys("too many regions");
	}
	/* TO = virtual address, as verbs */
	if (iw_ddp_reg_mr(p->pd, addr, len, (uintptr_t)addr, access, p->sfd, &stag))
		iw_die_sys("DDP_IOC_REG_MR");
	m = &p->mr[p->nmr++];
	m->addr = addr;
	m->len = len;
	m->stag = stag;
	m->access = access;
	verbose("registered %llu octets at TO 0x%llx: STag 0x%08x",
		(unsigned long long)len, (unsigned long long)(uintptr_t)addr, stag);
	return m;
}

/* An RDMA Read Request: answer it with a Read Response from our memory. */
static void serve_read(struct peer *p, const __u8 *data, __u32 len)
{
	__u32 size, src_stag, sink_stag;
	__u64 src_to, sink_to;
	struct mr *m = NULL;
	int i, ret;

	if (len != RREQ_LEN) {
		iw_msg("RDMA Read Request of %u octets, not %u", len, RREQ_LEN);
		terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
			  RDMAP_WIRE_ECODE_UNSPECIFIED, IW_EXIT_PROTO);
		return;
	}
	sink_stag = get_be(data, 4);
	sink_to = get_be(data + 4, 8);
	size = get_be(data + 12, 4);
	src_stag = get_be(data + 16, 4);
	src_to = get_be(data + 20, 8);
	verbose("<- RDMA Read Request: %u octets from STag 0x%08x TO 0x%llx",
		size, src_stag, (unsigned long long)src_to);
	verbose("   into STag 0x%08x TO 0x%llx", sink_stag,
		(unsigned long long)sink_to);
	for (i = 0; i < p->nmr; i++)
		if (p->mr[i].stag == src_stag)
			m = &p->mr[i];
	if (!m) {
		iw_msg("RDMA Read Request for unknown STag 0x%08x", src_stag);
		terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_PROTECTION,
			  RDMAP_WIRE_ECODE_INVALID_STAG, IW_EXIT_PROTO);
		return;
	}
	if (!(m->access & DDP_ACCESS_REMOTE_READ)) {
		iw_msg("RDMA Read Request for STag 0x%08x without remote read access",
		       src_stag);
		terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_PROTECTION,
			  RDMAP_WIRE_ECODE_ACCESS, IW_EXIT_PROTO);
		return;
	}
	if (src_to < (uintptr_t)m->addr ||
	    src_to - (uintptr_t)m->addr > m->len ||
	    size > m->len - (src_to - (uintptr_t)m->addr)) {
		iw_msg("RDMA Read Request outside STag 0x%08x", src_stag);
		terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_PROTECTION,
			  RDMAP_WIRE_ECODE_BASE_BOUNDS, IW_EXIT_PROTO);
		return;
	}
	ret = send_msg(p, (__u8 *)m->addr + (src_to - (uintptr_t)m->addr), size,
		       1, 0, sink_stag, sink_to, RDMAP_WIRE_OP_READ_RESP);
	if (ret) {
		iw_msg("sending the Read Response: %s", strerror(-ret));
		exit(IW_EXIT_SYS);
	}
	p->reads_served++;
}

static void got_terminate(const __u8 *data, __u32 len)
{
	__u32 ctrl;
	unsigned int layer, etype, ecode;

	if (len < 4) {
		iw_msg("received a Terminate of %u octets", len);
		exit(IW_EXIT_TERM);
	}
	ctrl = (__u32)data[0] << 24 | (__u32)data[1] << 16 |
	       (__u32)data[2] << 8 | data[3];
	layer = ctrl >> RDMAP_WIRE_TERM_LAYER_SHIFT;
	etype = ctrl >> RDMAP_WIRE_TERM_ETYPE_SHIFT & 0xf;
	ecode = ctrl >> RDMAP_WIRE_TERM_ECODE_SHIFT & 0xff;
	iw_msg("received Terminate: layer %u, type 0x%x, code 0x%02x (%s), hdrct%s%s%s, %u octets",
	       layer, etype, ecode, term_name(layer, etype, ecode),
	       ctrl & RDMAP_WIRE_TERM_M ? " M" : "", ctrl & RDMAP_WIRE_TERM_D ? " D" : "",
	       ctrl & RDMAP_WIRE_TERM_R ? " R" : "", len);
	/* siw 6.1 on little endian swaps the Layer and EType nibbles */
	iw_msg("read with Layer and EType swapped, as siw 6.1 sends them: layer %u, type 0x%x: %s",
	       etype, layer, term_name(etype, layer, ecode));
	exit(IW_EXIT_TERM);
}

static const char *rtr_name(__u32 rtr)
{
	switch (rtr) {
	case MPA_F_RTR_WRITE:
		return "write";
	case MPA_F_RTR_READ:
		return "read";
	case MPA_F_RTR_SEND:
		return "send";
	}
	return "none";
}

/*
 * Responder, peer-to-peer: the first message must be the RTR (RFC 6581
 * 7.1): a zero-length RDMA Write, a zero-length RDMA Read Request (answered
 * with a zero-length Read Response) or a zero-length Send. One of another
 * type than the agreed one is accepted with a warning.
 */
static void got_rtr(struct peer *p, const struct ddp_event *ev, unsigned int op)
{
	const __u8 *data = NULL;
	__u32 rtr = 0;
	int ret;

	if (ev->type == DDP_EV_TAGGED) {
		if (op == RDMAP_WIRE_OP_WRITE && !ev->len)
			rtr = MPA_F_RTR_WRITE;
	} else if (ev->cookie < NRECV) {
		data = p->rb[ev->cookie].data;
		if (ev->qn == RDMAP_WIRE_QN_SEND && op == RDMAP_WIRE_OP_SEND && !ev->len)
			rtr = MPA_F_RTR_SEND;
		else if (ev->qn == RDMAP_WIRE_QN_READ_REQ && op == RDMAP_WIRE_OP_READ_REQ &&
			 ev->len == RREQ_LEN && !get_be(data + 12, 4))
			rtr = MPA_F_RTR_READ;
	}
	if (!rtr) {
		iw_msg("peer-to-peer: %s of %u octets before the RTR (%s)",
		       op_name(op), ev->len, rtr_name(p->rtr));
		terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
			  RDMAP_WIRE_ECODE_OPCODE, IW_EXIT_PROTO);
		return;
	}
	if (ev->type == DDP_EV_TAGGED)
		verbose("<- %s, 0 octets, STag 0x%08x TO 0x%llx", op_name(op),
			ev->stag, (unsigned long long)ev->to);
	else
		verbose("<- %s, 0 octets, QN %u MSN %u", op_name(op), ev->qn,
			ev->msn);
	if (rtr == MPA_F_RTR_READ) {
		ret = send_msg(p, "", 0, 1, 0, get_be(data, 4),
			       get_be(data + 4, 8), RDMAP_WIRE_OP_READ_RESP);
		if (ret) {
			iw_msg("sending the RTR Read Response: %s", strerror(-ret));
			exit(IW_EXIT_SYS);
		}
	}
	if (data)
		post_recv(p, ev->cookie);
	if (rtr != p->rtr)
		iw_msg("RTR received: %s (agreed: %s)", rtr_name(rtr),
		       rtr_name(p->rtr));
	else
		verbose("RTR received: %s", rtr_name(rtr));
	p->rtr_wait = 0;
}

/* One event of the stream: dispatch it. Returns 0 on timeout. */
static int next_event(struct peer *p, int timeout_ms)
{
	struct ddp_event ev;
	struct send_msg *s;
	unsigned int op;
	int ret;

	ret = iw_ddp_event(p->sfd, &ev, timeout_ms);
	if (ret < 0 && errno == EMSGSIZE) {
		iw_msg("short event record");
		exit(IW_EXIT_PROTO);
	}
	if (ret < 0)
		iw_die_sys("read stream");
	if (!ret)
		return 0;
	switch (ev.type) {
	case DDP_EV_ERROR:
		if (ev.err_type == DDP_WIRE_ETYPE_LLP) {
			iw_msg("MPA error %u (%s): the stream stopped", ev.err_code,
			       iw_mpa_err_name(ev.err_code));
			terminate(p, RDMAP_WIRE_LAYER_LLP, 0, ev.err_code, IW_EXIT_LLP);
			return 0;
		}
		iw_msg("DDP error type 0x%x code 0x%02x, segment length %u, QN %u MSN %u",
		       ev.err_type, ev.err_code, ev.len, ev.qn, ev.msn);
		iw_msg("   STag 0x%08x TO 0x%llx", ev.stag, (unsigned long long)ev.to);
		terminate(p, RDMAP_WIRE_LAYER_DDP, ev.err_type, ev.err_code, IW_EXIT_DDP);
		return 0;
	case DDP_EV_PEER_CLOSED:
		verbose("<- the peer closed the stream");
		p->peer_closed = 1;
		return 1;
	case DDP_EV_FLUSH:
		return 1;
	case DDP_EV_TAGGED:
	case DDP_EV_RECV:
		break;
	default:
		iw_msg("unknown event type %u", ev.type);
		return 1;
	}

	op = ev.rsvdulp[0] & RDMAP_WIRE_OP_MASK;
	if ((ev.rsvdulp[0] & RDMAP_WIRE_RV_MASK) != RDMAP_WIRE_RV) {
		iw_msg("RDMAP control 0x%02x: version %u, not 1", ev.rsvdulp[0],
		       ev.rsvdulp[0] >> 6);
		terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
			  RDMAP_WIRE_ECODE_VERSION, IW_EXIT_PROTO);
	}
	if (p->rtr_wait) {
		got_rtr(p, &ev, op);
		return 1;
	}
	if (p->rtr_resp && ev.type == DDP_EV_TAGGED &&
	    op == RDMAP_WIRE_OP_READ_RESP && !ev.len) {
		verbose("<- %s, 0 octets, STag 0x%08x TO 0x%llx: the RTR's",
			op_name(op), ev.stag, (unsigned long long)ev.to);
		p->rtr_resp = 0;
		return 1;
	}
	if (ev.type == DDP_EV_TAGGED) {
		verbose("<- %s, %u octets, STag 0x%08x TO 0x%llx", op_name(op),
			ev.len, ev.stag, (unsigned long long)ev.to);
		if (op != RDMAP_WIRE_OP_WRITE && op != RDMAP_WIRE_OP_READ_RESP) {
			iw_msg("tagged message with opcode %u (%s)", op, op_name(op));
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_OPCODE, IW_EXIT_PROTO);
		}
		p->tagged_cnt++;
		p->tagged_op = op;
		p->tagged_stag = ev.stag;
		p->tagged_to = ev.to;
		p->tagged_len = ev.len;
		if (op == RDMAP_WIRE_OP_WRITE)
			p->writes++;
		else
			p->read_resps++;
		return 1;
	}

	/* untagged: a buffer of ours came back */
	if (ev.cookie >= NRECV) {
		iw_msg("completion with unknown cookie %llu",
		       (unsigned long long)ev.cookie);
		exit(IW_EXIT_PROTO);
	}
	switch (ev.qn) {
	case RDMAP_WIRE_QN_SEND:
		if (op != RDMAP_WIRE_OP_SEND && op != RDMAP_WIRE_OP_SEND_SE &&
		    op != RDMAP_WIRE_OP_SEND_INV && op != RDMAP_WIRE_OP_SEND_SE_INV)
			break;
		verbose("<- %s, %u octets, MSN %u", op_name(op), ev.len, ev.msn);
		if (op == RDMAP_WIRE_OP_SEND_INV || op == RDMAP_WIRE_OP_SEND_SE_INV)
			verbose("   Invalidate STag 0x%02x%02x%02x%02x (ignored)",
				ev.rsvdulp[1], ev.rsvdulp[2], ev.rsvdulp[3],
				ev.rsvdulp[4]);
		if (p->s_head - p->s_tail == MAX_SENDS) {
			iw_msg("too many unconsumed Sends");
			exit(IW_EXIT_PROTO);
		}
		s = &p->sends[p->s_head++ % MAX_SENDS];
		memcpy(s->data, p->rb[ev.cookie].data, ev.len);
		s->len = ev.len;
		s->msn = ev.msn;
		s->opcode = op;
		post_recv(p, ev.cookie);
		return 1;
	case RDMAP_WIRE_QN_READ_REQ:
		if (op != RDMAP_WIRE_OP_READ_REQ)
			break;
		serve_read(p, p->rb[ev.cookie].data, ev.len);
		post_recv(p, ev.cookie);
		return 1;
	case RDMAP_WIRE_QN_TERMINATE:
		if (op != RDMAP_WIRE_OP_TERMINATE)
			break;
		got_terminate(p->rb[ev.cookie].data, ev.len);
		return 0;
	}
	iw_msg("%s on QN %u", op_name(op), ev.qn);
	terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION, RDMAP_WIRE_ECODE_OPCODE,
		  IW_EXIT_PROTO);
	return 0;
}

/* Wait for a Send from the peer; NULL if the peer closed first. */
static struct send_msg *wait_send(struct peer *p, const char *what)
{
	while (p->s_head == p->s_tail) {
		if (p->peer_closed)
			return NULL;
		if (!next_event(p, o.timeout_ms)) {
			iw_msg("timeout waiting for %s", what);
			exit(IW_EXIT_PROTO);
		}
	}
	return &p->sends[p->s_tail++ % MAX_SENDS];
}

/* Wait until @n tagged messages have been placed in total. */
static void wait_tagged(struct peer *p, unsigned int n, const char *what)
{
	while (p->tagged_cnt < n) {
		if (p->peer_closed) {
			iw_msg("the peer closed the stream before %s", what);
			exit(IW_EXIT_PROTO);
		}
		if (!next_event(p, o.timeout_ms)) {
			iw_msg("timeout waiting for %s", what);
			exit(IW_EXIT_PROTO);
		}
	}
}

/* -v: the connection's MPA counters */
static void print_stats(struct peer *p)
{
	struct mpa_stats st;

	if (o.verbose && !iw_mpa_stats(p->sock, &st))
		iw_msg("MPA: tx %llu FPDUs %llu octets, rx %llu FPDUs %llu octets, %llu CRC errors",
		       (unsigned long long)st.tx_fpdus, (unsigned long long)st.tx_octets,
		       (unsigned long long)st.rx_fpdus, (unsigned long long)st.rx_octets,
		       (unsigned long long)st.rx_crc_errors);
}

/* Graceful close: our FIN, then the peer's (a short wait: it may be gone). */
static void peer_close(struct peer *p)
{
	int i;

	if (iw_ddp_shutdown(p->sfd))
		verbose("DDP_IOC_SHUTDOWN: %s", strerror(errno));
	for (i = 0; i < 100 && !p->peer_closed; i++)
		if (!next_event(p, 100))
			continue;
	if (!p->peer_closed)
		verbose("the peer did not close within 10 s");
	print_stats(p);
	close(p->sfd);
	close(p->sock);
	close(p->pd);
}

/* ---- connection, MPA startup, bind ---- */

static int open_socket(void)
{
	char err[256];
	int fd;

	fd = iw_tcp_open(o.host, o.port, AF_UNSPEC, o.listen, err, sizeof(err));
	if (fd < 0) {
		iw_msg("%s", err);
		exit(IW_EXIT_SYS);
	}
	return fd;
}

static void print_info(struct peer *p)
{
	__u8 pd[MPA_MAX_PD_LEN];
	socklen_t len = sizeof(pd);
	struct mpa_info info;
	char hex[3 * 16 + 1] = "";
	unsigned int i;

	if (!o.verbose)
		return;
	if (iw_mpa_info(p->sock, &info))
		iw_die_sys("MPA_INFO");
	iw_msg("MPA rev %u, CRC %s, markers rx %d tx %d, MULPDU %u%s", info.rev,
	       info.flags & MPA_I_CRC ? "on" : "off",
	       !!(info.flags & MPA_I_MARKERS_RX), !!(info.flags & MPA_I_MARKERS_TX),
	       info.mulpdu, info.flags & MPA_I_P2P ? ", P2P" : "");
	iw_msg("IRD %u ORD %u, peer's IRD %u ORD %u", info.ird, info.ord,
	       info.peer_ird, info.peer_ord);
	if (iw_mpa_peer_pd(p->sock, pd, &len))
		return;
	for (i = 0; i < len && i < 16; i++)
		sprintf(hex + 3 * i, " %02x", pd[i]);
	iw_msg("peer private data: %u octets%s%s", len, hex, len > 16 ? " ..." : "");
}

static void peer_bind(struct peer *p)
{
	p->pd = iw_ddp_open();
	if (p->pd < 0)
		iw_die_sys("/dev/ddp (is ddp.ko loaded?)");
	p->sfd = iw_ddp_bind(p->pd, p->sock, RDMAP_WIRE_NQUEUES);
	if (p->sfd < 0)
		iw_die_sys("DDP_IOC_BIND");
	post_all(p);
}

/* ---- --kernel: rdmap.ko through rdmap_rping's debugfs files ---- */

/* One command to rdmap_rping; 0 or -errno (the write's). */
static __printf(2, 3) int kernel_cmd(struct peer *p, const char *fmt, ...)
{
	char cmd[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -EINVAL;
	verbose("kernel: %s", cmd);
	if (write(p->kctl, cmd, n) != n)
		return errno ? -errno : -EIO;
	return 0;
}

/* What rdmap_rping's last command did, without the newline. */
static void kernel_result(char *buf, size_t size)
{
	ssize_t n = -1;
	int fd;

	fd = open(KERNEL_RESULT, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	if (n < 0)
		n = snprintf(buf, size, "(no result: %s)", strerror(errno));
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

/*
 * rdmap_rping's ctl file. ip netns exec mounts a sysfs of the namespace
 * on /sys, without debugfs on /sys/kernel/debug: then debugfs is mounted
 * there in a mount namespace of this process's own.
 */
static int kernel_open_ctl(void)
{
	int fd;

	fd = open(KERNEL_CTL, O_WRONLY | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) ||
	    mount("debugfs", KERNEL_DEBUGFS, "debugfs", 0, NULL)) {
		verbose("mounting debugfs on " KERNEL_DEBUGFS ": %s", strerror(errno));
		errno = ENOENT;
		return -1;
	}
	verbose("debugfs mounted on " KERNEL_DEBUGFS " (own mount namespace)");
	return open(KERNEL_CTL, O_WRONLY | O_CLOEXEC);
}

/*
 * The queue pair in the kernel, at the moment peer_bind() would bind
 * /dev/ddp. Closing the ctl file destroys it if "close" was not written.
 */
static void kernel_bind(struct peer *p)
{
	char res[256];
	int ret;

	p->kctl = kernel_open_ctl();
	if (p->kctl < 0)
		iw_die_sys(KERNEL_CTL " (is rdmap_rping loaded, debugfs mounted?)");
	ret = kernel_cmd(p, "bind %d %s", p->sock,
			 o.listen ? "responder" : "initiator");
	if (ret) {
		iw_msg("rdmap_rping bind: %s", strerror(-ret));
		exit(IW_EXIT_SYS);
	}
	kernel_result(res, sizeof(res));
	verbose("kernel: %s", res);
}

/* rping client or server in the kernel, then close: the exit status. */
static int kernel_rping(struct peer *p)
{
	char res[256];
	int ret, status = 0;

	ret = kernel_cmd(p, "%s %u %u", o.listen ? "server" : "client",
			 o.count, o.size);
	kernel_result(res, sizeof(res));
	if (ret) {
		iw_msg("kernel rping %s failed: %s: %s",
		       o.listen ? "server" : "client", strerror(-ret), res);
		switch (-ret) {
		case ECONNABORTED:
			status = IW_EXIT_TERM;
			break;
		case EBADMSG:
			status = IW_EXIT_MISMATCH;
			break;
		case ETIMEDOUT:
		case EPROTO:
		case EPIPE:
			status = IW_EXIT_PROTO;
			break;
		default:
			status = IW_EXIT_SYS;
		}
	} else {
		iw_msg("kernel RDMAP (rdmap.ko): %s", res);
	}
	print_stats(p);
	ret = kernel_cmd(p, "close");
	if (ret) {
		iw_msg("rdmap_rping close: %s", strerror(-ret));
		if (!status)
			status = IW_EXIT_SYS;
	}
	close(p->kctl);
	close(p->sock);
	return status;
}

/*
 * RFC 6581 peer-to-peer: the Initiator's first FPDU is the RTR of the
 * agreed type; the Responder consumes it before it sends anything. A
 * zero-length RDMA Write goes to STag 1, TO 0 (as siw's); a zero-length
 * RDMA Read Request names sink STag 1, source STag 1, size 0, and the
 * Initiator waits for its zero-length Read Response.
 */
static void p2p_start(struct peer *p)
{
	__u8 rq[RREQ_LEN] = { 0 };
	struct mpa_info info;

	if (iw_mpa_info(p->sock, &info))
		iw_die_sys("MPA_INFO");
	if (!(info.flags & MPA_I_P2P)) {
		verbose("peer-to-peer not agreed: no RTR");
		return;
	}
	p->rtr = info.rtr;
	if (p->rtr != MPA_F_RTR_WRITE && p->rtr != MPA_F_RTR_READ &&
	    p->rtr != MPA_F_RTR_SEND) {
		iw_msg("peer-to-peer agreed with RTR type 0x%x", p->rtr);
		exit(IW_EXIT_PROTO);
	}
	verbose("peer-to-peer: RTR %s", rtr_name(p->rtr));
	if (o.listen) {
		p->rtr_wait = 1;
		while (p->rtr_wait) {
			if (p->peer_closed) {
				iw_msg("the peer closed the stream before the RTR");
				exit(IW_EXIT_PROTO);
			}
			if (!next_event(p, o.timeout_ms)) {
				iw_msg("timeout waiting for the RTR");
				exit(IW_EXIT_PROTO);
			}
		}
		return;
	}
	switch (p->rtr) {
	case MPA_F_RTR_WRITE:
		send_or_die(p, "", 0, 1, 0, 1, 0, RDMAP_WIRE_OP_WRITE);
		break;
	case MPA_F_RTR_SEND:
		send_or_die(p, "", 0, 0, RDMAP_WIRE_QN_SEND, 0, 0, RDMAP_WIRE_OP_SEND);
		break;
	case MPA_F_RTR_READ:
		put_be(rq, 1, 4);
		put_be(rq + 16, 1, 4);
		p->rtr_resp = 1;
		send_or_die(p, rq, sizeof(rq), 0, RDMAP_WIRE_QN_READ_REQ, 0, 0,
			    RDMAP_WIRE_OP_READ_REQ);
		while (p->rtr_resp) {
			if (p->peer_closed) {
				iw_msg("the peer closed the stream before the RTR's Read Response");
				exit(IW_EXIT_PROTO);
			}
			if (!next_event(p, o.timeout_ms)) {
				iw_msg("timeout waiting for the RTR's Read Response");
				exit(IW_EXIT_PROTO);
			}
		}
		break;
	}
	verbose("RTR sent: %s", rtr_name(p->rtr));
}

/*
 * MPA startup (revision 2 unless -r 1) with CRC requested, markers off. The stream is
 * bound and every receive buffer posted before a message can arrive: the
 * Initiator right after MPA_START, the Responder before MPA_ACCEPT (siw,
 * as Initiator, sends its first Send right after our Reply).
 */
static void peer_connect(struct peer *p)
{
	struct mpa_start s = {
		.role = o.listen ? MPA_ROLE_RESPONDER : MPA_ROLE_INITIATOR,
		.rev = o.rev,
	};
	struct mpa_info info;

	p->sock = open_socket();
	if (iw_mpa_attach(p->sock))
		iw_die_sys("TCP_ULP mpa (is mpa.ko loaded?)");
	if (o.rev == 2) {
		s.ird = o.kernel ? KERNEL_IRD_ORD : o.ird;
		s.ord = o.kernel ? KERNEL_IRD_ORD : o.ord;
	}
	if (o.p2p)
		s.flags |= MPA_F_P2P | MPA_F_RTR_WRITE | MPA_F_RTR_READ |
			   MPA_F_RTR_SEND;
	if (iw_mpa_start_ex(p->sock, &s, NULL, NULL))
		iw_die_sys("MPA_START");
	if (!o.listen) {
		if (o.kernel)
			kernel_bind(p);
		else
			peer_bind(p);
	}

	if (iw_mpa_wait_startup(p->sock, s.role, o.timeout_ms, &info)) {
		if (errno != ETIMEDOUT)
			iw_die_sys("MPA_INFO");
		iw_msg("timeout during the MPA startup");
		exit(IW_EXIT_PROTO);
	}
	if (info.state == MPA_S_ERROR) {
		iw_msg("MPA startup failed: MPA error %u (%s)", info.error,
		       iw_mpa_err_name(info.error));
		exit(IW_EXIT_LLP);
	}
	if (info.state == MPA_S_REJECTED) {
		iw_msg("the peer rejected the connection (MPA Reply R=1)");
		exit(IW_EXIT_PROTO);
	}
	if (o.listen) {
		if (o.kernel)
			kernel_bind(p);
		else
			peer_bind(p);
		if (iw_mpa_accept(p->sock, NULL, 0))
			iw_die_sys("MPA_ACCEPT");
	}
	print_info(p);
	/* with --kernel, rdmap.ko sends or consumes the RTR itself */
	if (o.p2p && !o.kernel)
		p2p_start(p);
}

/* ---- applications ---- */

/*
 * rdma_client / rdma_server (librdmacm examples): both post a 16-octet
 * receive before connecting / accepting; the client sends 16 octets, the
 * server answers with 16 octets once it has them, and both disconnect.
 */
static int send_exchange(struct peer *p)
{
	static __u8 out[EXCHANGE_LEN];
	struct send_msg *s;

	if (!o.listen)
		send_or_die(p, out, sizeof(out), 0, RDMAP_WIRE_QN_SEND, 0, 0, RDMAP_WIRE_OP_SEND);
	s = wait_send(p, "the peer's Send");
	if (!s) {
		iw_msg("the peer closed the stream before its Send");
		return IW_EXIT_PROTO;
	}
	if (s->len != EXCHANGE_LEN) {
		iw_msg("the peer's Send has %u octets, not %u", s->len, EXCHANGE_LEN);
		return IW_EXIT_PROTO;
	}
	if (o.listen)
		send_or_die(p, out, sizeof(out), 0, RDMAP_WIRE_QN_SEND, 0, 0, RDMAP_WIRE_OP_SEND);
	peer_close(p);
	iw_msg("send exchange done: %u octets each way (%s)", EXCHANGE_LEN,
	       o.listen ? "responder" : "initiator");
	return 0;
}

/* rping's start buffer contents for iteration @ping */
static void rping_fill(char *buf, unsigned int size, unsigned int ping,
		       unsigned char *start)
{
	unsigned int i;
	unsigned char c;
	int cc;

	cc = snprintf(buf, size, "rdma-ping-%u: ", ping);
	for (i = cc, c = *start; i < size; i++) {
		buf[i] = c;
		if (++c > 122)
			c = 65;
	}
	if (++*start > 122)
		*start = 65;
	buf[size - 1] = 0;
}

static void rping_adv(struct peer *p, void *buf, struct mr *m)
{
	struct rping_info info = {
		.buf = htobe64((uintptr_t)buf),
		.rkey = htobe32(m->stag),
		.size = htobe32(o.size),
	};

	send_or_die(p, &info, sizeof(info), 0, RDMAP_WIRE_QN_SEND, 0, 0, RDMAP_WIRE_OP_SEND);
}

static void rping_wait_goahead(struct peer *p)
{
	struct send_msg *s = wait_send(p, "the server's go-ahead");

	if (!s) {
		iw_msg("the server closed the stream");
		exit(IW_EXIT_PROTO);
	}
	if (s->len != sizeof(struct rping_info)) {
		iw_msg("go-ahead Send of %u octets, not %zu", s->len,
		       sizeof(struct rping_info));
		exit(IW_EXIT_PROTO);
	}
}

/* rping client: the server reads start_buf and writes it to rdma_buf */
static int rping_client(struct peer *p)
{
	char *start_buf, *rdma_buf;
	struct mr *start_mr, *rdma_mr;
	unsigned char start = 65;
	unsigned int ping, reads;

	start_buf = calloc(1, o.size);
	rdma_buf = calloc(1, o.size);
	if (!start_buf || !rdma_buf)
		iw_die_sys("buffers");
	rdma_mr = reg_mr(p, rdma_buf, o.size,
			 DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ);
	start_mr = reg_mr(p, start_buf, o.size,
			  DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ);

	for (ping = 0; ping < o.count; ping++) {
		rping_fill(start_buf, o.size, ping, &start);
		memset(rdma_buf, 0, o.size);
		reads = p->reads_served;
		rping_adv(p, start_buf, start_mr);
		rping_wait_goahead(p);
		if (p->reads_served != reads + 1) {
			iw_msg("ping %u: %u RDMA Reads served before the go-ahead, not 1",
			       ping, p->reads_served - reads);
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_UNSPECIFIED, IW_EXIT_PROTO);
		}
		rping_adv(p, rdma_buf, rdma_mr);
		rping_wait_goahead(p);
		if (p->writes != ping + 1 || p->tagged_stag != rdma_mr->stag) {
			iw_msg("ping %u: no RDMA Write into the rdma buffer before the go-ahead",
			       ping);
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_UNSPECIFIED, IW_EXIT_PROTO);
		}
		if (memcmp(start_buf, rdma_buf, o.size)) {
			iw_msg("ping %u: data mismatch", ping);
			return IW_EXIT_MISMATCH;
		}
		if (o.verbose)
			printf("ping data: %s\n", rdma_buf);
	}
	fflush(stdout);
	peer_close(p);
	iw_msg("rping client: %u pings verified (%u RDMA Reads served, %u RDMA Writes received)",
	       o.count, p->reads_served, p->writes);
	free(start_buf);
	free(rdma_buf);
	return 0;
}

/* rping server: RDMA Read the client's start buffer, RDMA Write it back */
static int rping_server(struct peer *p)
{
	static const __u8 goahead[sizeof(struct rping_info)];
	struct rping_info info;
	__u8 rq[RREQ_LEN];
	struct send_msg *s;
	struct mr *m;
	unsigned int ping, resps;
	__u32 rkey, len;
	__u64 addr;
	char *buf;

	buf = calloc(1, o.size);
	if (!buf)
		iw_die_sys("buffer");
	m = reg_mr(p, buf, o.size, DDP_ACCESS_REMOTE_WRITE);

	for (ping = 0;; ping++) {
		s = wait_send(p, "the client's start buffer advertisement");
		if (!s)
			break;
		if (s->len != sizeof(info)) {
			iw_msg("advertisement of %u octets, not %zu", s->len, sizeof(info));
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_UNSPECIFIED, IW_EXIT_PROTO);
		}
		memcpy(&info, s->data, sizeof(info));
		len = be32toh(info.size);
		if (len > o.size || !len) {
			iw_msg("the client's buffer has %u octets, ours %u", len, o.size);
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_UNSPECIFIED, IW_EXIT_PROTO);
		}
		memset(buf, 0, o.size);
		put_be(rq, m->stag, 4);
		put_be(rq + 4, (uintptr_t)buf, 8);
		put_be(rq + 12, len, 4);
		put_be(rq + 16, be32toh(info.rkey), 4);
		put_be(rq + 20, be64toh(info.buf), 8);
		resps = p->read_resps;
		send_or_die(p, rq, sizeof(rq), 0, RDMAP_WIRE_QN_READ_REQ, 0, 0,
			    RDMAP_WIRE_OP_READ_REQ);
		wait_tagged(p, p->tagged_cnt + 1, "the RDMA Read Response");
		if (p->read_resps != resps + 1 || p->tagged_stag != m->stag ||
		    p->tagged_to != (uintptr_t)buf || p->tagged_len != len) {
			iw_msg("ping %u: unexpected tagged message (%s, STag 0x%08x, %u octets)",
			       ping, op_name(p->tagged_op), p->tagged_stag, p->tagged_len);
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_OPCODE, IW_EXIT_PROTO);
		}
		buf[o.size - 1] = 0;
		if (o.verbose)
			printf("server ping data: %s\n", buf);
		send_or_die(p, goahead, sizeof(goahead), 0, RDMAP_WIRE_QN_SEND, 0, 0,
			    RDMAP_WIRE_OP_SEND);

		s = wait_send(p, "the client's rdma buffer advertisement");
		if (!s) {
			iw_msg("the client closed the stream in ping %u", ping);
			return IW_EXIT_PROTO;
		}
		if (s->len != sizeof(info)) {
			iw_msg("advertisement of %u octets, not %zu", s->len, sizeof(info));
			terminate(p, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_UNSPECIFIED, IW_EXIT_PROTO);
		}
		memcpy(&info, s->data, sizeof(info));
		rkey = be32toh(info.rkey);
		addr = be64toh(info.buf);
		/* rping writes strlen + 1 octets back */
		send_or_die(p, buf, strlen(buf) + 1, 1, 0, rkey, addr, RDMAP_WIRE_OP_WRITE);
		send_or_die(p, goahead, sizeof(goahead), 0, RDMAP_WIRE_QN_SEND, 0, 0,
			    RDMAP_WIRE_OP_SEND);
	}
	fflush(stdout);
	peer_close(p);
	free(buf);
	if (o.count && ping != o.count) {
		iw_msg("rping server: %u pings, expected %u", ping, o.count);
		return IW_EXIT_PROTO;
	}
	iw_msg("rping server: %u pings (RDMA Read + RDMA Write each), client closed",
	       ping);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "send-exchange", no_argument, NULL, 'X' },
		{ "rping", no_argument, NULL, 'R' },
		{ "p2p", no_argument, NULL, 'P' },
		{ "kernel", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	struct peer *p;
	char *end;
	long v;
	int c, count_set = 0;

	while ((c = getopt_long(argc, argv, "lc:s:r:t:vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = 1;
			break;
		case 'X':
			o.mode = MODE_EXCHANGE;
			break;
		case 'R':
			o.mode = MODE_RPING;
			break;
		case 'P':
			o.p2p = 1;
			break;
		case 'K':
			o.kernel = 1;
			break;
		case 'c':
			v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 100000000)
				goto usage;
			o.count = v;
			count_set = 1;
			break;
		case 's':
			v = strtol(optarg, &end, 10);
			if (*end || v < (long)RPING_MIN || v > RECV_LEN * 1024)
				goto usage;
			o.size = v;
			break;
		case 'r':
			v = strtol(optarg, &end, 10);
			if (*end || (v != 1 && v != 2))
				goto usage;
			o.rev = v;
			break;
		case 't':
			if (iw_secs_arg(optarg, 1, &o.timeout_ms))
				goto usage;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'V':
			iw_print_version();
			return 0;
		default:
			return iw_usage(print_usage, c == 'h');
		}
	}
	if (iw_host_port(argc, argv, &o.host, &o.port) || o.mode == MODE_NONE)
		goto usage;
	if (o.p2p && o.rev != 2)
		goto usage;
	if (o.kernel && (o.mode != MODE_RPING || o.size > KERNEL_MAX))
		goto usage;
	if (o.listen && !count_set)
		o.count = 0;
	if (!o.listen && !o.count)
		goto usage;

	p = calloc(1, sizeof(*p));
	if (!p)
		iw_die_sys("calloc");
	peer_connect(p);
	if (o.kernel)
		return kernel_rping(p);
	if (o.mode == MODE_EXCHANGE)
		return send_exchange(p);
	return o.listen ? rping_server(p) : rping_client(p);
usage:
	return iw_usage(print_usage, false);
}
