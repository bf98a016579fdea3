// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_wirefuzz: a live wire fuzzer for the receive path of rdmap.ko.
 *
 * Each round is a fresh loopback MPA connection. The Responder end gets
 * a kernel queue pair (selftests/kmod/rdmap_kconsumer.ko, queue pair b)
 * with a few posted receive buffers and a few STags of b's tagged buffer
 * with varied access, bound to b's PD or to its stream; the fuzzer reads
 * their values from b/state. The Initiator end is a raw RDMAP peer over
 * /dev/ddp: three queues, a buffer on queue 2 for the kernel's
 * Terminate, a sink buffer for the Read Responses. The peer sends 1 to 20
 * messages: the four Sends (Invalidate with valid, invalid and foreign
 * STags), RDMA Writes, Read Requests, unsolicited Read Responses,
 * Terminates, and mutations of them (RsvdULP octet 0, queue, length).
 *
 * Model rounds: a reference model written from Documentation/rdmap.rst
 * (and DDP's RFC 5041 checks) computes the outcome, and the round checks
 * it exactly: the events of b (recv lines, the one "term remote=0" line
 * and the flush of a refused Send, or "term remote=1" for the peer's
 * Terminate; the flushes of the destroy), the Terminate octets the peer
 * gets (or that none comes), the Read Responses (STag, TO, length, in
 * order, and their octets), the octets placed in b's tagged and receive
 * buffers, and nothing after the error. When the stream ends with an
 * error, the Read Responses of earlier requests may be cut short (the
 * work sends none after the Terminate is queued): a prefix of them must
 * arrive, each whole and in order, before the Terminate. A Read Response
 * may carry octets an RDMA Write placed after its request (RFC 5040
 * does not order them).
 *
 * Garbage rounds: random headers and payloads; only liveness is checked:
 * the stream ends with a Terminate or the peer's close within a timeout
 * and the destroy returns. At the end rdmap_kconsumer and rdmap must
 * unload and ddp.ko must have no user left (no leaked STag or hold).
 *
 * A fixed case runs first (round -1): a Terminate of 0 octets, which
 * rdmap.ko reports as 0x0/0x0 instead of the 0x2/0xff that
 * rdmap_rx_term() sets up; model rounds make Terminates of fewer than 4
 * octets 4 long unless RDMAP_FUZZ_SHORT_TERM=1.
 *
 * Environment: FUZZ_SECONDS (default 60) is the budget, a quarter of the
 * rounds are garbage rounds; RDMAP_FUZZ_SEED (hex) replays a run, with
 * RDMAP_FUZZ_ROUND=N only its round N; RDMAP_FUZZ_VERBOSE=1 prints every
 * message. TAP: the fixed case, the model rounds, the garbage rounds, the
 * unload. Needs mpa.ko and ddp.ko loaded and root; loads rdmap.ko and the
 * consumer.
 */
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>

#include <linux/iwarp_wire.h>

#include "kselftest.h"
#include "ddp_test_util.h"
#include "kmod_util.h"

#define RK_DIR		"/sys/kernel/debug/rdmap_kconsumer"
/* as in kmod/rdmap_kconsumer.c */
#define RK_TAG_LEN	6000
#define RK_BASE_TO	0x10000ULL
#define RK_RBUF_LEN	5000

#define WF_IRD		32	/* more than the messages of a round */
#define WF_ORD		4
#define WF_MAX_MSGS	20
#define WF_MAX_LEN	9000	/* longest message */
#define WF_MAX_STAGS	4
#define WF_MAX_POSTED	6
#define WF_SENTINEL	999	/* cookie of the buffer posted for the sentinel */
#define WF_TERM_COOKIE	42
#define WF_TERM_BUF	64
#define WF_SINK_LEN	(WF_MAX_MSGS * RK_TAG_LEN)
#define WF_SINK_TO	0x700000ULL
#define WF_RREQ_LEN	28
#define WF_TERM_MAX	52	/* RDMAP_TERM_MAX_LEN, b's Terminate buffers */
#define WF_LOG		16384
#define WF_ROUND_S	120	/* watchdog of one round */
#define WF_MAX_EV	128

/* ---- generator ---- */

static __u64 splitmix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u64 rng;

static __u32 rnd(__u32 n)
{
	return n ? splitmix(&rng) % n : 0;
}

static bool pct(__u32 p)
{
	return rnd(100) < p;
}

static __u64 round_seed(__u64 master, long round)
{
	__u64 s = master ^ ((__u64)round * 0xd1b54a32d192ed03ULL);

	return splitmix(&s);
}

/* ---- the consumer module (as selftests/rdmap_kconsumer.c) ---- */

static __printf(1, 2) int rk_ctl(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = kmod_vctl(RK_DIR "/ctl", fmt, ap);
	va_end(ap);
	return ret;
}

static ssize_t rk_read(const char *name, void *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), RK_DIR "/b/%s", name);
	return kmod_read(path, buf, len);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; (s = strchr(s, '\n')); s++)
		n++;
	return n;
}

/* b's event log once it has @n lines (or the timeout); its line count */
static int rk_events(char *log, int n, int ms)
{
	long long end = iw_now_ms() + ms;
	ssize_t got;
	int lines;

	do {
		got = rk_read("events", log, WF_LOG - 1);
		log[got < 0 ? 0 : got] = '\0';
		lines = count_lines(log);
		if (lines >= n)
			return lines;
		usleep(1000);
	} while (iw_now_ms() < end);
	return lines;
}

static __u32 rk_stag(void)
{
	char buf[64] = "";
	unsigned int stag = 0;

	if (rk_read("state", buf, sizeof(buf) - 1) > 0)
		sscanf(buf, "stag=%x", &stag);
	return stag;
}

static bool rk_held(void)
{
	char c = 0;

	return rk_read("held", &c, 1) == 1 && c == 'Y';
}

static int hold_ms;

static void *hold_thread(void *arg)
{
	rk_ctl("hold b %d", hold_ms);
	return NULL;
}

/*
 * b's socket owned by a task for @ms ms from now: what the peer sends
 * meanwhile is processed from the backlog, in process context.
 */
static int hold_start(pthread_t *t, int ms)
{
	long long end = iw_now_ms() + DDP_TMO_MS;

	hold_ms = ms;
	if (pthread_create(t, NULL, hold_thread, NULL))
		return -1;
	while (!rk_held() && iw_now_ms() < end)
		usleep(500);
	return rk_held() ? 0 : -1;
}

/* ---- one round ---- */

enum kind { K_SEND, K_SEND_INV, K_WRITE, K_READ_REQ, K_READ_RESP, K_TERM,
	    K_NKINDS };

static const char *const kind_name[] = {
	"send", "send_inv", "write", "read_req", "read_resp", "term",
};

struct wmsg {
	int	kind;
	bool	tagged;
	bool	mutated;
	__u32	qn;
	__u8	r[5];
	__u32	stag;
	__u64	to;
	__u32	len;
	__u8	data[WF_MAX_LEN];
};

struct bstag {
	__u32	stag;
	__u32	access;
	bool	owned;
	bool	valid;
};

/* an accepted Read Request: the Read Response the peer must get */
struct resp {
	__u32	sink_stag;
	__u64	sink_to;
	__u32	size;
	__u32	src_off;
	int	msg;		/* index of the request */
	__u8	snap[RK_TAG_LEN];	/* b's buffer when it was accepted */
};

/* a tagged placement into b's buffer, for the Read Responses */
struct placed {
	int	msg;
	__u32	off;
	__u32	len;
	const __u8 *data;
};

enum end { END_NONE, END_LOCAL, END_REMOTE };

struct round {
	long	idx;
	__u64	seed;
	bool	garbage;
	char	why[1024];
	bool	failed;
	/* connection */
	int	fds[2];
	int	pd;
	int	sfd;
	__u32	mulpdu;
	int	mss;
	int	ird;
	int	hold;		/* ms b's socket is owned while the peer sends */
	/* b */
	struct bstag stags[WF_MAX_STAGS];
	int	nstags;
	__u64	posted[WF_MAX_POSTED + 2];
	int	nposted;
	int	post_head;
	__u8	tag[RK_TAG_LEN];
	/* octets of a message placed in part: the old value is possible */
	__u8	tag_unsure[RK_TAG_LEN];
	__u8	tag_old[RK_TAG_LEN];
	__u8	rbuf[RK_RBUF_LEN];
	__u8	rbuf_unsure[RK_RBUF_LEN];
	__u8	rbuf_old[RK_RBUF_LEN];
	/* the peer */
	__u32	peer_stag;
	__u8	*sink;
	__u8	term[WF_TERM_BUF];
	__u32	msn[3];
	__u64	sink_cursor;
	/* the sequence and the model */
	struct wmsg msgs[WF_MAX_MSGS + 1];
	int	nmsgs;
	bool	valid_only;
	enum end end;
	int	bad;		/* the message that ended the stream */
	char	want_log[WF_LOG];
	__u8	want_term[WF_TERM_BUF];
	__u32	want_term_len;
	struct resp resps[WF_MAX_MSGS];
	int	nresps;
	struct placed placed[WF_MAX_MSGS * 64];
	int	nplaced;
	/* observed */
	char	log[WF_LOG];
	struct ddp_event ev[WF_MAX_EV];
	int	nev;
};

static struct round R;
static struct {
	__u64	master;
	int	verbose;
	long	model_rounds;
	long	garbage_rounds;
	long	ended_local;
	long	ended_remote;
	long	alive;
	long	resps;
	long	held;
	long	small_mss;
	bool	short_term;
	int	model_fail;
	int	garbage_fail;
} G;

static __printf(1, 2) void fail(const char *fmt, ...)
{
	va_list ap;

	if (R.failed)
		return;
	R.failed = true;
	va_start(ap, fmt);
	vsnprintf(R.why, sizeof(R.why), fmt, ap);
	va_end(ap);
}

static void logf_append(char *buf, const char *fmt, ...) __printf(2, 3);
static void logf_append(char *buf, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, WF_LOG - n, fmt, ap);
	va_end(ap);
}

static void put_be32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put_be64(__u8 *p, __u64 v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static __u32 get_be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static __u64 get_be64(const __u8 *p)
{
	return (__u64)get_be32(p) << 32 | get_be32(p + 4);
}

static void pattern(__u8 *p, __u32 len, __u32 seed)
{
	__u32 i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(i * 13 + seed + (i >> 8));
}

/* ---- the reference model ---- */

static struct bstag *find_stag(__u32 stag)
{
	int i;

	for (i = 0; i < R.nstags; i++)
		if (R.stags[i].stag == stag && R.stags[i].valid)
			return &R.stags[i];
	return NULL;
}

static int op_qn(__u8 op)
{
	if (op >= RDMAP_WIRE_OP_SEND && op <= RDMAP_WIRE_OP_SEND_SE_INV)
		return RDMAP_WIRE_QN_SEND;
	if (op == RDMAP_WIRE_OP_READ_REQ)
		return RDMAP_WIRE_QN_READ_REQ;
	if (op == RDMAP_WIRE_OP_TERMINATE)
		return RDMAP_WIRE_QN_TERMINATE;
	return -1;
}

/*
 * The Terminate the kernel sends: its control field, and with @hdr the
 * segment length (M) and the DDP header (D), with @rhdr the Read
 * Request (R).
 */
static void end_local(int m, __u8 layer, __u8 etype, __u8 ecode,
		      const __u8 *hdr, __u32 hdr_len, __u32 seg_len,
		      const __u8 *rhdr)
{
	__u32 ctrl = (__u32)layer << 28 | (__u32)etype << 24 |
		     (__u32)ecode << 16;
	__u8 *p = R.want_term;

	R.end = END_LOCAL;
	R.bad = m;
	if (hdr)
		ctrl |= RDMAP_WIRE_TERM_M | RDMAP_WIRE_TERM_D;
	if (rhdr)
		ctrl |= RDMAP_WIRE_TERM_R;
	put_be32(p, ctrl);
	R.want_term_len = 4;
	if (hdr) {
		p[4] = seg_len >> 8;
		p[5] = seg_len;
		memcpy(p + 6, hdr, hdr_len);
		R.want_term_len = 6 + hdr_len;
	}
	if (rhdr) {
		memcpy(p + R.want_term_len, rhdr, WF_RREQ_LEN);
		R.want_term_len += WF_RREQ_LEN;
	}
	logf_append(R.want_log, "term remote=0 layer=%u etype=%u ecode=%u\n",
		    layer, etype, ecode);
}

static void untagged_hdr(__u8 *h, bool last, const __u8 *r, __u32 qn,
			 __u32 msn, __u32 mo)
{
	h[0] = (last ? DDP_FLAG_L : 0) | DDP_WIRE_VERSION;
	memcpy(h + 1, r, 5);
	put_be32(h + 6, qn);
	put_be32(h + 10, msn);
	put_be32(h + 14, mo);
}

static void tagged_hdr(__u8 *h, bool last, __u8 r0, __u32 stag, __u64 to)
{
	h[0] = DDP_FLAG_T | (last ? DDP_FLAG_L : 0) | DDP_WIRE_VERSION;
	h[1] = r0;
	put_be32(h + 2, stag);
	put_be64(h + 6, to);
}

static __u32 seg_max(bool tagged)
{
	__u32 h = tagged ? 14 : 18;

	return R.mulpdu > h ? R.mulpdu - h : 1;
}

/* ends the stream? Untagged message @m on queue @w->qn with MSN @msn */
static void model_untagged(int m, struct wmsg *w, __u32 msn)
{
	__u32 pmax = seg_max(false), mo, plen, buflen, last_mo = 0;
	__u8 h[18], op = w->r[0] & RDMAP_WIRE_OP_MASK;
	__u32 inv, size, src_off;
	__u64 src_to, sink_to;
	struct bstag *st;
	struct resp *rs;
	__u64 cookie = 0;
	const __u8 *q;
	int i;

	if (w->qn == RDMAP_WIRE_QN_SEND) {
		if (R.post_head == R.nposted) {
			untagged_hdr(h, w->len <= pmax, w->r, w->qn, msn, 0);
			end_local(m, RDMAP_WIRE_LAYER_DDP, DDP_WIRE_ETYPE_UNTAGGED,
				  DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF, h, 18,
				  18 + (w->len < pmax ? w->len : pmax), NULL);
			return;
		}
		buflen = RK_RBUF_LEN;
	} else {
		buflen = w->qn == RDMAP_WIRE_QN_READ_REQ ? WF_RREQ_LEN : WF_TERM_MAX;
	}
	/* DDP: every segment */
	mo = 0;
	do {
		plen = w->len - mo < pmax ? w->len - mo : pmax;
		untagged_hdr(h, mo + plen == w->len, w->r, w->qn, msn, mo);
		if (mo > buflen || (plen && mo == buflen) || mo + plen > buflen) {
			end_local(m, RDMAP_WIRE_LAYER_DDP, DDP_WIRE_ETYPE_UNTAGGED,
				  mo > buflen || (plen && mo == buflen) ?
				  DDP_WIRE_ECODE_U_INVALID_MO :
				  DDP_WIRE_ECODE_U_MSG_TOO_LONG,
				  h, 18, 18 + plen, NULL);
			return;
		}
		if (w->qn == RDMAP_WIRE_QN_SEND) {
			/* the old octets stay possible until the message is whole */
			memcpy(R.rbuf_old + mo, R.rbuf + mo, plen);
			memset(R.rbuf_unsure + mo, 1, plen);
			memcpy(R.rbuf + mo, w->data + mo, plen);
		}
		last_mo = mo;
		mo += plen;
	} while (mo < w->len);
	memset(R.rbuf_unsure, 0, sizeof(R.rbuf_unsure));
	/* delivered: RDMAP */
	untagged_hdr(h, true, w->r, w->qn, msn, last_mo);
	if (w->qn == RDMAP_WIRE_QN_SEND)
		cookie = R.posted[R.post_head++];
	if ((w->r[0] & RDMAP_WIRE_RV_MASK) != RDMAP_WIRE_RV ||
	    op > RDMAP_WIRE_OP_TERMINATE || op_qn(op) != (int)w->qn) {
		end_local(m, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
			  (w->r[0] & RDMAP_WIRE_RV_MASK) != RDMAP_WIRE_RV ?
			  RDMAP_WIRE_ECODE_VERSION : RDMAP_WIRE_ECODE_OPCODE,
			  h, 18, 18 + w->len - last_mo, NULL);
		goto flush;
	}
	switch (w->qn) {
	case RDMAP_WIRE_QN_SEND:
		inv = 0;
		if (op == RDMAP_WIRE_OP_SEND_INV || op == RDMAP_WIRE_OP_SEND_SE_INV) {
			inv = get_be32(w->r + 1);
			st = find_stag(inv);
			if (!st) {
				end_local(m, RDMAP_WIRE_LAYER_RDMAP,
					  RDMAP_WIRE_ETYPE_OPERATION,
					  RDMAP_WIRE_ECODE_NO_INVALIDATE,
					  h, 18, 18 + w->len - last_mo, NULL);
				goto flush;
			}
			st->valid = false;
		}
		if (inv)
			logf_append(R.want_log, "recv op=%u len=%u cookie=%llu inv=0x%x\n",
				    op, w->len, (unsigned long long)cookie, inv);
		else
			logf_append(R.want_log, "recv op=%u len=%u cookie=%llu inv=0\n",
				    op, w->len, (unsigned long long)cookie);
		return;
	case RDMAP_WIRE_QN_READ_REQ:
		if (w->len != WF_RREQ_LEN) {
			end_local(m, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
				  RDMAP_WIRE_ECODE_CATA_STREAM, h, 18,
				  18 + w->len - last_mo, NULL);
			return;
		}
		q = w->data;
		sink_to = get_be64(q + 4);
		size = get_be32(q + 12);
		src_to = get_be64(q + 20);
		if (src_to + size < src_to || sink_to + size < sink_to) {
			end_local(m, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_PROTECTION,
				  RDMAP_WIRE_ECODE_TO_WRAP, h, 18, 18 + w->len, q);
			return;
		}
		src_off = 0;
		if (size) {
			st = find_stag(get_be32(q + 16));
			i = !st ? RDMAP_WIRE_ECODE_INVALID_STAG :
			    !(st->access & DDP_ACCESS_REMOTE_READ) ?
			    RDMAP_WIRE_ECODE_ACCESS :
			    src_to < RK_BASE_TO || size > RK_TAG_LEN ||
			    src_to - RK_BASE_TO > RK_TAG_LEN - size ?
			    RDMAP_WIRE_ECODE_BASE_BOUNDS : -1;
			if (i >= 0) {
				end_local(m, RDMAP_WIRE_LAYER_RDMAP,
					  RDMAP_WIRE_ETYPE_PROTECTION, i, h, 18,
					  18 + w->len, q);
				return;
			}
			src_off = src_to - RK_BASE_TO;
		}
		rs = &R.resps[R.nresps++];
		rs->sink_stag = get_be32(q);
		rs->sink_to = sink_to;
		rs->size = size;
		rs->src_off = src_off;
		rs->msg = m;
		memcpy(rs->snap, R.tag, RK_TAG_LEN);
		return;
	default:
		/* the peer's Terminate: reported, nothing sent back */
		R.end = END_REMOTE;
		R.bad = m;
		if (w->len >= 4)
			logf_append(R.want_log, "term remote=1 layer=%u etype=%u ecode=%u\n",
				    w->data[0] >> 4, w->data[0] & 0xf, w->data[1]);
		else
			logf_append(R.want_log, "term remote=1 layer=0 etype=2 ecode=255\n");
		return;
	}
flush:
	if (w->qn == RDMAP_WIRE_QN_SEND)
		logf_append(R.want_log, "flush cookie=%llu\n",
			    (unsigned long long)cookie);
}

static void model_tagged(int m, struct wmsg *w)
{
	__u32 pmax = seg_max(true), off = 0, plen, i;
	__u8 h[14], op = w->r[0] & RDMAP_WIRE_OP_MASK;
	struct bstag *st = find_stag(w->stag);
	__u64 to;
	int code;

	do {
		plen = w->len - off < pmax ? w->len - off : pmax;
		to = w->to + off;
		tagged_hdr(h, off + plen == w->len, w->r[0], w->stag, to);
		code = -1;
		if (plen) {
			if (!st || !(st->access & DDP_ACCESS_REMOTE_WRITE))
				code = DDP_WIRE_ECODE_T_INVALID_STAG;
			else if (to + plen < to)
				code = DDP_WIRE_ECODE_T_TO_WRAP;
			else if (to < RK_BASE_TO || plen > RK_TAG_LEN ||
				 to - RK_BASE_TO > RK_TAG_LEN - plen)
				code = DDP_WIRE_ECODE_T_BASE_BOUNDS;
		}
		if (code >= 0) {
			end_local(m, RDMAP_WIRE_LAYER_DDP, DDP_WIRE_ETYPE_TAGGED,
				  code, h, 14, 14 + plen, NULL);
			return;
		}
		if (plen) {
			i = to - RK_BASE_TO;
			memcpy(R.tag_old + i, R.tag + i, plen);
			memset(R.tag_unsure + i, 1, plen);
			memcpy(R.tag + i, w->data + off, plen);
			R.placed[R.nplaced++] = (struct placed){
				.msg = m, .off = i, .len = plen,
				.data = w->data + off,
			};
		}
		off += plen;
	} while (off < w->len);
	memset(R.tag_unsure, 0, sizeof(R.tag_unsure));
	if ((w->r[0] & RDMAP_WIRE_RV_MASK) != RDMAP_WIRE_RV ||
	    op != RDMAP_WIRE_OP_WRITE)
		/* a Read Response: b has no Read outstanding */
		end_local(m, RDMAP_WIRE_LAYER_RDMAP, RDMAP_WIRE_ETYPE_OPERATION,
			  (w->r[0] & RDMAP_WIRE_RV_MASK) != RDMAP_WIRE_RV ?
			  RDMAP_WIRE_ECODE_VERSION : RDMAP_WIRE_ECODE_OPCODE,
			  h, 14, 14 + plen, NULL);
}

/* the next message into the model; sets R.end when it ends the stream */
static void model_msg(int m)
{
	struct wmsg *w = &R.msgs[m];

	if (w->tagged) {
		model_tagged(m, w);
	} else {
		model_untagged(m, w, R.msn[w->qn]);
		R.msn[w->qn]++;
	}
}

/* ---- the generator ---- */

static __u32 pick_stag(void)
{
	__u32 s = R.stags[rnd(R.nstags)].stag;

	switch (rnd(12)) {
	case 0:
		return s ^ (1 + rnd(255));	/* same index, another key */
	case 1:
		return s + 0x100;		/* another index */
	case 2:
		return R.peer_stag;		/* the peer's, foreign here */
	case 3:
		return splitmix(&rng);
	case 4:
		return 0;
	default:
		return s;
	}
}

/* a valid STag of b with @access, 0 if none */
static __u32 valid_stag(__u32 access)
{
	int i, n = 0;
	__u32 c[WF_MAX_STAGS];

	for (i = 0; i < R.nstags; i++)
		if (R.stags[i].valid && (R.stags[i].access & access) == access)
			c[n++] = R.stags[i].stag;
	return n ? c[rnd(n)] : 0;
}

/* TO and length of a tagged range of b's buffer, in bounds or not */
static void pick_range(bool good, __u64 *to, __u32 *len, __u32 max)
{
	__u32 off;

	if (good || pct(60)) {
		off = rnd(RK_TAG_LEN + 1);
		*len = rnd(RK_TAG_LEN - off + 1);
		if (pct(30))
			*len = rnd(65);
		if (off + *len > RK_TAG_LEN)
			*len = RK_TAG_LEN - off;
		*to = RK_BASE_TO + off;
		if (*len > max)
			*len = max;
		return;
	}
	switch (rnd(5)) {
	case 0:		/* past the end */
		*to = RK_BASE_TO + RK_TAG_LEN - rnd(50);
		*len = 51 + rnd(200);
		break;
	case 1:		/* below the base */
		*to = RK_BASE_TO - 1 - rnd(100);
		*len = 1 + rnd(300);
		break;
	case 2:		/* wrapping */
		*to = ~0ULL - rnd(100);
		*len = 1 + rnd(300);
		break;
	case 3:		/* zero-length anywhere */
		*to = splitmix(&rng);
		*len = 0;
		break;
	default:
		*to = splitmix(&rng);
		*len = rnd(max + 1);
		break;
	}
	if (*len > max)
		*len = max;
}

static void gen_read_req(struct wmsg *w, bool good)
{
	__u32 size, src_stag, sink_stag = R.peer_stag;
	__u64 src_to, sink_to;
	int v = good ? 0 : rnd(8);

	w->qn = RDMAP_WIRE_QN_READ_REQ;
	w->r[0] = RDMAP_WIRE_RV | RDMAP_WIRE_OP_READ_REQ;
	src_stag = good ? valid_stag(DDP_ACCESS_REMOTE_READ) : pick_stag();
	pick_range(good || v < 4, &src_to, &size, RK_TAG_LEN);
	sink_to = WF_SINK_TO + R.sink_cursor;
	switch (v) {
	case 4:		/* zero-length, anything else goes */
		size = 0;
		src_to = splitmix(&rng);
		if (pct(50))
			sink_to = splitmix(&rng);
		break;
	case 5:		/* sink wraps */
		sink_to = ~0ULL - rnd(64);
		size = 65 + rnd(100);
		break;
	case 6:		/* the peer's own STag as source */
		src_stag = R.peer_stag;
		break;
	default:
		break;
	}
	if (!good && pct(30))
		src_stag = valid_stag(0) ? valid_stag(0) : src_stag;
	put_be32(w->data, sink_stag);
	put_be64(w->data + 4, sink_to);
	put_be32(w->data + 12, size);
	put_be32(w->data + 16, src_stag);
	put_be64(w->data + 20, src_to);
	w->len = WF_RREQ_LEN;
	if (sink_to == WF_SINK_TO + R.sink_cursor)
		R.sink_cursor += size;
}

static void gen_term(struct wmsg *w, bool good)
{
	__u32 ctrl = rnd(16) << 28 | rnd(16) << 24 | rnd(256) << 16, n;
	int v = rnd(6);

	w->qn = RDMAP_WIRE_QN_TERMINATE;
	w->r[0] = RDMAP_WIRE_RV | RDMAP_WIRE_OP_TERMINATE;
	pattern(w->data, WF_TERM_BUF + 16, rnd(256));
	switch (v) {
	case 0:		/* no header */
		w->len = 4;
		break;
	case 1:		/* M, D, untagged header */
		ctrl |= RDMAP_WIRE_TERM_M | RDMAP_WIRE_TERM_D;
		w->len = 6 + 18;
		w->data[6] = 0x41;
		break;
	case 2:		/* M, D, R */
		ctrl |= RDMAP_WIRE_TERM_M | RDMAP_WIRE_TERM_D | RDMAP_WIRE_TERM_R;
		w->len = 6 + 18 + 28;
		w->data[6] = 0x41;
		break;
	case 3:		/* truncated */
		w->len = rnd(4);
		break;
	case 4:		/* garbage Hdrct, any length */
		ctrl |= rnd(8) << 13 | rnd(0x2000);
		w->len = 4 + rnd(WF_TERM_MAX - 3);
		break;
	default:	/* too long for b's buffer */
		w->len = WF_TERM_MAX + 1 + rnd(16);
		break;
	}
	n = ctrl;
	put_be32(w->data, n);
}

static void gen_msg(struct wmsg *w, bool good)
{
	int k = rnd(K_NKINDS);
	__u32 stag, max = pct(90) ? 300 : WF_MAX_LEN;

	memset(w, 0, offsetof(struct wmsg, data));
	if (good) {
		/* what the model accepts */
		k = rnd(4);
		if (k == K_SEND && R.post_head == R.nposted)
			k = K_WRITE;
		if (k == K_SEND_INV && (R.post_head == R.nposted || !valid_stag(0)))
			k = K_WRITE;
		if (k == K_WRITE && !valid_stag(DDP_ACCESS_REMOTE_WRITE))
			k = K_READ_REQ;
		if (k == K_READ_REQ && !valid_stag(DDP_ACCESS_REMOTE_READ)) {
			/* a zero-length Read is always good */
			gen_read_req(w, false);
			put_be32(w->data + 12, 0);
			put_be64(w->data + 4, WF_SINK_TO);
			w->kind = K_READ_REQ;
			return;
		}
	}
	w->kind = k;
	switch (k) {
	case K_SEND:
	case K_SEND_INV:
		w->qn = RDMAP_WIRE_QN_SEND;
		if (k == K_SEND) {
			w->r[0] = RDMAP_WIRE_RV | (pct(50) ? RDMAP_WIRE_OP_SEND :
						   RDMAP_WIRE_OP_SEND_SE);
			/* not checked for these */
			put_be32(w->r + 1, pct(70) ? 0 : splitmix(&rng));
		} else {
			w->r[0] = RDMAP_WIRE_RV | (pct(50) ? RDMAP_WIRE_OP_SEND_INV :
						   RDMAP_WIRE_OP_SEND_SE_INV);
			stag = good ? valid_stag(0) : pick_stag();
			put_be32(w->r + 1, stag);
		}
		w->len = rnd(max + 1);
		if (good && w->len > RK_RBUF_LEN)
			w->len = RK_RBUF_LEN;
		if (pct(10))
			w->len = RK_RBUF_LEN + (good ? 0 : rnd(3));
		pattern(w->data, w->len, rnd(256));
		break;
	case K_WRITE:
	case K_READ_RESP:
		w->tagged = true;
		w->r[0] = RDMAP_WIRE_RV | (k == K_WRITE ? RDMAP_WIRE_OP_WRITE :
					   RDMAP_WIRE_OP_READ_RESP);
		w->stag = good ? valid_stag(DDP_ACCESS_REMOTE_WRITE) : pick_stag();
		pick_range(good, &w->to, &w->len, WF_MAX_LEN);
		pattern(w->data, w->len, rnd(256));
		break;
	case K_READ_REQ:
		gen_read_req(w, good);
		break;
	default:
		gen_term(w, good);
		break;
	}
	if (good || !pct(20))
		return;
	/* mutations */
	w->mutated = true;
	switch (rnd(4)) {
	case 0:
		w->r[0] = rnd(256);
		break;
	case 1:
		w->r[0] ^= 1U << rnd(8);
		break;
	case 2:
		if (!w->tagged)
			w->qn = rnd(3);
		else
			w->r[0] = RDMAP_WIRE_RV | rnd(16);
		break;
	default:
		w->len = rnd(pct(50) ? 64 : WF_MAX_LEN);
		pattern(w->data + WF_RREQ_LEN, WF_MAX_LEN - WF_RREQ_LEN, 7);
		break;
	}
}

static void describe(int m, char *buf, size_t len)
{
	const struct wmsg *w = &R.msgs[m];

	size_t n;
	__u32 i;

	if (w->tagged) {
		snprintf(buf, len, "#%d %s%s tagged r0=%02x stag=%#x to=%#llx len=%u",
			 m, kind_name[w->kind], w->mutated ? "*" : "", w->r[0],
			 w->stag, (unsigned long long)w->to, w->len);
		return;
	}
	n = snprintf(buf, len, "#%d %s%s qn=%u r=%02x%02x%02x%02x%02x len=%u%s",
		     m, kind_name[w->kind], w->mutated ? "*" : "", w->qn,
		     w->r[0], w->r[1], w->r[2], w->r[3], w->r[4], w->len,
		     w->len ? " data=" : "");
	/* the octets of a Read Request or a Terminate, the start of a Send */
	for (i = 0; i < w->len && i < 52 && n + 3 < len; i++)
		n += snprintf(buf + n, len - n, "%02x", w->data[i]);
}

/* ---- running it ---- */

static int peer_send(const struct wmsg *w)
{
	if (w->tagged)
		return iw_ddp_send_tagged(R.sfd, w->data, w->len, w->stag, w->to,
					  w->r[0]);
	return iw_ddp_send_untagged(R.sfd, w->data, w->len, w->qn, w->r);
}

/* the next event of the peer into R.ev, 0 on timeout */
static int peer_event(int ms)
{
	int ret;

	if (R.nev >= WF_MAX_EV)
		return 0;
	ret = iw_ddp_event(R.sfd, &R.ev[R.nev], ms);
	if (ret == 1)
		R.nev++;
	return ret;
}

/* until the peer's TCP has no unacknowledged octets */
static void peer_flushed(void)
{
	long long end = iw_now_ms() + DDP_TMO_MS;
	int outq = 1;

	while (iw_now_ms() < end) {
		if (ioctl(R.fds[0], SIOCOUTQ, &outq) || !outq)
			break;
		usleep(1000);
	}
	usleep(20000);
}

static int setup(void)
{
	int i, ret;

	R.fds[0] = -1;
	R.fds[1] = -1;
	R.pd = -1;
	R.sfd = -1;
	/* a small MSS in some rounds: messages of several segments */
	R.mss = pct(30) ? 536 + rnd(1000) : 0;
	if ((R.mss ? iw_loopback_pair_mss(AF_INET, R.fds, R.mss) :
		     iw_loopback_pair(AF_INET, R.fds)) ||
	    iw_mpa_startup_pair(R.fds, 0, 0, DDP_TMO_MS)) {
		fail("MPA pair (MSS %d): %s", R.mss, strerror(errno));
		return -1;
	}
	R.mulpdu = iw_mpa_mulpdu(R.fds[0]);
	ret = rk_ctl("fill b %u", (unsigned int)(R.seed & 0xff));
	/* garbage rounds: Read Requests beyond the IRD too */
	R.ird = R.garbage && pct(50) ? 1 + rnd(4) : WF_IRD;
	ret = ret ?: rk_ctl("create b %d %d %d", R.fds[1], R.ird, WF_ORD);
	if (ret) {
		fail("create b: %s", strerror(ret));
		return -1;
	}
	for (i = 0; i < RK_TAG_LEN; i++)
		R.tag[i] = (__u8)(i * 7 + (R.seed & 0xff));
	if (rk_read("rbuf", R.rbuf, RK_RBUF_LEN) != RK_RBUF_LEN) {
		fail("read rbuf");
		return -1;
	}
	R.nposted = rnd(WF_MAX_POSTED + 1);
	for (i = 0; i < R.nposted; i++) {
		R.posted[i] = i + 1;
		if (rk_ctl("post b %d", i + 1)) {
			fail("post b");
			return -1;
		}
	}
	R.nstags = 1 + rnd(WF_MAX_STAGS);
	for (i = 0; i < R.nstags; i++) {
		R.stags[i].access = rnd(4);
		R.stags[i].owned = pct(50);
		R.stags[i].valid = true;
		ret = rk_ctl("reg b %u %d", R.stags[i].access, R.stags[i].owned);
		if (ret) {
			fail("reg b: %s", strerror(ret));
			return -1;
		}
		R.stags[i].stag = rk_stag();
	}
	R.pd = iw_ddp_open();
	R.sfd = R.pd < 0 ? -1 : iw_ddp_bind(R.pd, R.fds[0], RDMAP_WIRE_NQUEUES);
	if (R.sfd < 0) {
		fail("peer bind: %s", strerror(errno));
		return -1;
	}
	memset(R.term, 0xee, sizeof(R.term));
	memset(R.sink, 0, WF_SINK_LEN);
	if (iw_ddp_post_recv(R.sfd, R.term, sizeof(R.term), RDMAP_WIRE_QN_TERMINATE,
			     WF_TERM_COOKIE) ||
	    iw_ddp_reg_mr(R.pd, R.sink, WF_SINK_LEN, WF_SINK_TO,
			  DDP_ACCESS_REMOTE_WRITE, pct(50) ? R.sfd : -1,
			  &R.peer_stag)) {
		fail("peer post/reg: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < 3; i++)
		R.msn[i] = 1;
	return 0;
}

static void teardown(void)
{
	rk_ctl("destroy b 1");
	if (R.sfd >= 0)
		close(R.sfd);
	if (R.pd >= 0)
		close(R.pd);
	iw_close_pair(R.fds);
}

/* the value an octet of a Read Response may have */
static bool resp_octet_ok(const struct resp *rs, __u32 j, __u8 v)
{
	__u32 off = rs->src_off + j;
	int i;

	if (rs->snap[off] == v)
		return true;
	for (i = 0; i < R.nplaced; i++) {
		const struct placed *p = &R.placed[i];

		if (p->msg > rs->msg && off >= p->off && off < p->off + p->len &&
		    p->data[off - p->off] == v)
			return true;
	}
	return false;
}

static bool buf_ok(const __u8 *got, const __u8 *want, const __u8 *unsure,
		   const __u8 *alt, __u32 len, const char *what)
{
	__u32 i;

	for (i = 0; i < len; i++)
		if (got[i] != want[i] && !(unsure[i] && got[i] == alt[i])) {
			fail("%s[%u] = %#x, want %#x", what, i, got[i], want[i]);
			return false;
		}
	return true;
}

/* the peer's events: a prefix of the Read Responses, then the Terminate */
static void check_peer_events(int *nresp, bool *got_term, bool *closed)
{
	const struct ddp_event *ev;
	const struct resp *rs;
	int i;

	*nresp = 0;
	*got_term = false;
	*closed = false;
	for (i = 0; i < R.nev && !R.failed; i++) {
		ev = &R.ev[i];
		if (*closed) {
			fail("peer event %u after its close", ev->type);
		} else if (ev->type == DDP_EV_TAGGED && !*got_term) {
			if (*nresp >= R.nresps) {
				fail("Read Response %d: none expected (stag %#x to %#llx len %u)",
				     *nresp, ev->stag, (unsigned long long)ev->to, ev->len);
				break;
			}
			rs = &R.resps[*nresp];
			if (ev->stag != rs->sink_stag || ev->to != rs->sink_to ||
			    ev->len != rs->size ||
			    ev->rsvdulp[0] != (RDMAP_WIRE_RV | RDMAP_WIRE_OP_READ_RESP))
				fail("Read Response %d: %#x %#llx %u r0 %#x, want %#x %#llx %u",
				     *nresp, ev->stag, (unsigned long long)ev->to,
				     ev->len, ev->rsvdulp[0], rs->sink_stag,
				     (unsigned long long)rs->sink_to, rs->size);
			(*nresp)++;
		} else if (ev->type == DDP_EV_RECV && R.end == END_LOCAL && !*got_term) {
			*got_term = true;
			if (ev->qn != RDMAP_WIRE_QN_TERMINATE || ev->msn != 1 ||
			    ev->cookie != WF_TERM_COOKIE ||
			    ev->rsvdulp[0] != (RDMAP_WIRE_RV | RDMAP_WIRE_OP_TERMINATE) ||
			    ev->rsvdulp[1] || ev->rsvdulp[2] || ev->rsvdulp[3] ||
			    ev->rsvdulp[4])
				fail("Terminate: qn %u msn %u r %02x%02x%02x%02x%02x",
				     ev->qn, ev->msn, ev->rsvdulp[0], ev->rsvdulp[1],
				     ev->rsvdulp[2], ev->rsvdulp[3], ev->rsvdulp[4]);
			else if (ev->len != R.want_term_len ||
				 memcmp(R.term, R.want_term, R.want_term_len) ||
				 R.term[R.want_term_len] != 0xee) {
				char got[3 * WF_TERM_BUF + 1] = "", want[3 * WF_TERM_BUF + 1] = "";
				__u32 k;

				for (k = 0; k < ev->len && k < WF_TERM_BUF; k++)
					sprintf(got + 2 * k, "%02x", R.term[k]);
				for (k = 0; k < R.want_term_len; k++)
					sprintf(want + 2 * k, "%02x", R.want_term[k]);
				fail("Terminate octets %s, want %s", got, want);
			}
		} else if (ev->type == DDP_EV_PEER_CLOSED) {
			*closed = true;
		} else {
			fail("peer event type %u qn %u len %u err %#x/%#x", ev->type,
			     ev->qn, ev->len, ev->err_type, ev->err_code);
		}
	}
}

static void run_model(void);

static void model_round(void)
{
	struct wmsg *w;
	int m, n;

	G.model_rounds++;
	if (setup())
		return;
	R.valid_only = pct(30);
	n = 1 + rnd(WF_MAX_MSGS);
	R.hold = pct(15) ? 20 + rnd(200) : 0;
	/* the sequence, through the model as it is made */
	for (m = 0; m < n; m++) {
		w = &R.msgs[m];
		gen_msg(w, R.valid_only || (R.end == END_NONE && pct(70)));
		/* the bug case_short_term() shows, unless asked for */
		if (!G.short_term && !w->tagged && w->qn == RDMAP_WIRE_QN_TERMINATE &&
		    (w->r[0] & 0xcf) == (RDMAP_WIRE_RV | RDMAP_WIRE_OP_TERMINATE) &&
		    w->len < 4)
			w->len = 4;
		R.nmsgs++;
		if (R.end == END_NONE)
			model_msg(m);
	}
	run_model();
}

/* send R.msgs, check the outcome the model computed */
static void run_model(void)
{
	pthread_t hold;
	int i, m, want_lines, nresp = 0;
	bool got_term, closed;
	struct wmsg *w;
	char d[256];
	__u8 *buf;

	if (R.hold && hold_start(&hold, R.hold)) {
		fail("hold b");
		return;
	}
	for (m = 0; m < R.nmsgs && !R.failed; m++) {
		if (G.verbose) {
			describe(m, d, sizeof(d));
			ksft_print_msg("round %ld: %s\n", R.idx, d);
		}
		if (peer_send(&R.msgs[m]))
			fail("peer send #%d: %s", m, strerror(errno));
	}
	if (R.hold) {
		pthread_join(hold, NULL);
		G.held++;
	}
	if (R.failed)
		return;
	if (R.end == END_NONE) {
		/* a sentinel Send: everything before it was taken */
		if (rk_ctl("post b %d", WF_SENTINEL)) {
			fail("post b %d after the sequence: refused", WF_SENTINEL);
			return;
		}
		R.posted[R.nposted++] = WF_SENTINEL;
		w = &R.msgs[R.nmsgs];
		memset(w, 0, offsetof(struct wmsg, data));
		w->qn = RDMAP_WIRE_QN_SEND;
		w->r[0] = RDMAP_WIRE_RV | RDMAP_WIRE_OP_SEND;
		w->len = 7;
		pattern(w->data, w->len, 0x5e);
		model_msg(R.nmsgs);
		if (peer_send(w)) {
			fail("peer send sentinel: %s", strerror(errno));
			return;
		}
	}
	want_lines = count_lines(R.want_log);
	rk_events(R.log, want_lines, DDP_TMO_MS);
	if (strcmp(R.log, R.want_log)) {
		fail("b's events:\n%s\nwant:\n%s", R.log, R.want_log);
		return;
	}
	/* the peer: the Read Responses, the Terminate */
	while (!R.failed) {
		check_peer_events(&nresp, &got_term, &closed);
		if (R.failed || (R.end == END_NONE && nresp == R.nresps) ||
		    (R.end == END_LOCAL && got_term) || R.end == END_REMOTE)
			break;
		if (peer_event(DDP_TMO_MS) != 1) {
			fail("peer: no event after %d Read Responses%s", nresp,
			     R.end == END_LOCAL ? ", want the Terminate" : "");
			return;
		}
	}
	if (R.failed)
		return;
	/* nothing after the error, nothing else at all */
	peer_flushed();
	rk_events(R.log, want_lines, 0);
	if (strcmp(R.log, R.want_log)) {
		fail("b's events later:\n%s\nwant:\n%s", R.log, R.want_log);
		return;
	}
	/* the destroy gives the buffers left back */
	if (rk_ctl("destroy b 0")) {
		fail("destroy b failed");
		return;
	}
	for (i = R.post_head; i < R.nposted; i++)
		logf_append(R.want_log, "flush cookie=%llu\n",
			    (unsigned long long)R.posted[i]);
	want_lines = count_lines(R.want_log);
	rk_events(R.log, want_lines, DDP_TMO_MS);
	if (strcmp(R.log, R.want_log)) {
		fail("b's events after destroy:\n%s\nwant:\n%s", R.log, R.want_log);
		return;
	}
	/* the owner closes the socket after the destroy: the peer sees it */
	close(R.fds[1]);
	R.fds[1] = -1;
	for (;;) {
		check_peer_events(&nresp, &got_term, &closed);
		if (R.failed || closed)
			break;
		if (peer_event(DDP_TMO_MS) != 1) {
			fail("peer: no close after the destroy");
			return;
		}
	}
	if (R.failed)
		return;
	if (R.end == END_LOCAL && !got_term) {
		fail("no Terminate at the peer");
		return;
	}
	if (R.end == END_NONE && nresp != R.nresps) {
		fail("%d Read Responses, want %d", nresp, R.nresps);
		return;
	}
	G.resps += nresp;
	/* the octets */
	buf = malloc(RK_TAG_LEN);
	if (!buf || rk_read("tagged", buf, RK_TAG_LEN) != RK_TAG_LEN ||
	    !buf_ok(buf, R.tag, R.tag_unsure, R.tag_old, RK_TAG_LEN, "b tagged") ||
	    rk_read("rbuf", buf, RK_RBUF_LEN) != RK_RBUF_LEN ||
	    !buf_ok(buf, R.rbuf, R.rbuf_unsure, R.rbuf_old, RK_RBUF_LEN, "b rbuf")) {
		fail("b's buffers: %s", R.why[0] ? R.why : "cannot read");
		free(buf);
		return;
	}
	free(buf);
	for (i = 0; i < nresp; i++) {
		const struct resp *rs = &R.resps[i];
		__u32 j, o = rs->sink_to - WF_SINK_TO;

		for (j = 0; j < rs->size; j++)
			if (!resp_octet_ok(rs, j, R.sink[o + j])) {
				fail("Read Response %d octet %u: %#x, want %#x", i, j,
				     R.sink[o + j], rs->snap[rs->src_off + j]);
				return;
			}
		if (rs->size)
			memset(R.sink + o, 0, rs->size);
	}
	if (dt_find_not(R.sink, WF_SINK_LEN, 0) != -1)
		fail("peer sink octet %ld placed by nothing",
		     dt_find_not(R.sink, WF_SINK_LEN, 0));
	if (R.mss)
		G.small_mss++;
	if (R.end == END_NONE)
		G.alive++;
	else if (R.end == END_LOCAL)
		G.ended_local++;
	else
		G.ended_remote++;
}

/* random headers and payloads: the stream must end and be destroyed */
static void garbage_round(void)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	pthread_t hold;
	int m, n, how, ret;
	struct wmsg *w = &R.msgs[0];

	G.garbage_rounds++;
	if (setup())
		return;
	R.hold = pct(20) ? 20 + rnd(200) : 0;
	if (R.hold && hold_start(&hold, R.hold)) {
		fail("hold b");
		return;
	}
	n = 1 + rnd(WF_MAX_MSGS);
	for (m = 0; m < n; m++) {
		if (pct(50)) {
			gen_msg(w, false);
		} else {
			memset(w, 0, offsetof(struct wmsg, data));
			w->tagged = pct(40);
			w->qn = rnd(3);
			put_be32(w->r, splitmix(&rng));
			w->r[4] = rnd(256);
			w->stag = pct(50) ? pick_stag() : splitmix(&rng);
			w->to = pct(50) ? RK_BASE_TO + rnd(RK_TAG_LEN) : splitmix(&rng);
			w->len = rnd(pct(80) ? 100 : WF_MAX_LEN);
			pattern(w->data, w->len, splitmix(&rng));
			if (pct(30))
				w->r[0] = RDMAP_WIRE_RV | rnd(16);
		}
		if (w->tagged)
			memset(w->r + 1, 0, 4);
		if (peer_send(w))
			break;	/* the kernel may have reset */
		if (pct(5))
			usleep(rnd(2000));
	}
	if (R.hold)
		pthread_join(hold, NULL);
	how = rnd(3);
	if (how == 0) {
		iw_ddp_shutdown(R.sfd);
	} else if (how == 1) {
		setsockopt(R.fds[0], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(R.sfd);
		R.sfd = -1;
		close(R.fds[0]);
		R.fds[0] = -1;
	}
	/* a Terminate of b or the peer's, or the close: within the timeout */
	ret = 0;
	if (how != 1) {
		long long end = iw_now_ms() + (how == 2 ? 1000 : DDP_TMO_MS);

		do {
			rk_events(R.log, 1, 0);
			ret = strstr(R.log, "term ") || strstr(R.log, "peer_closed");
			if (!ret)
				usleep(2000);
		} while (!ret && iw_now_ms() < end);
		if (!ret && how == 2) {
			iw_ddp_shutdown(R.sfd);
			end = iw_now_ms() + DDP_TMO_MS;
			do {
				rk_events(R.log, 1, 0);
				ret = strstr(R.log, "term ") ||
				      strstr(R.log, "peer_closed");
				if (!ret)
					usleep(2000);
			} while (!ret && iw_now_ms() < end);
		}
		if (!ret)
			fail("no Terminate and no close: b's events:\n%s", R.log);
	}
	ret = rk_ctl("destroy b %d", (int)rnd(2));
	if (ret)
		fail("destroy b: %s", strerror(ret));
}

/*
 * A Terminate too short for its control field (here 0 octets): the
 * peer's Terminate ends the stream; rdmap_rx_term() means to report it as
 * Remote Operation Error, unspecified (0x2/0xff), the error number it
 * sets up before decoding.
 */
static void case_short_term(void)
{
	struct wmsg *w = &R.msgs[0];

	if (setup())
		return;
	memset(w, 0, offsetof(struct wmsg, data));
	w->kind = K_TERM;
	w->qn = RDMAP_WIRE_QN_TERMINATE;
	w->r[0] = RDMAP_WIRE_RV | RDMAP_WIRE_OP_TERMINATE;
	w->len = 0;
	R.nmsgs = 1;
	model_msg(0);
	run_model();
}

static void watchdog(int sig)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "# stuck: round %ld (%s) over %d s\n%s",
		     R.idx, R.garbage ? "garbage" : "model", WF_ROUND_S,
		     "not ok 1 rdmap wirefuzz # stuck\n");
	if (write(1, msg, n) < 0)
		_exit(1);
	n = snprintf(msg, sizeof(msg), "# replay: RDMAP_FUZZ_SEED=%llx RDMAP_FUZZ_ROUND=%ld\n",
		     (unsigned long long)G.master, R.idx);
	if (write(1, msg, n) < 0)
		_exit(1);
	_exit(1);
}

static bool run_round(long idx)
{
	char d[256];
	int m;

	__u8 *sink = R.sink;

	memset(&R, 0, sizeof(R));
	R.sink = sink;
	R.idx = idx;
	R.seed = round_seed(G.master, idx);
	rng = R.seed;
	R.garbage = idx % 4 == 3;
	alarm(WF_ROUND_S);
	if (idx < 0)
		case_short_term();
	else if (R.garbage)
		garbage_round();
	else
		model_round();
	teardown();
	alarm(0);
	if (!R.failed)
		return true;
	if (idx >= 0 && R.garbage)
		G.garbage_fail++;
	else if (idx >= 0)
		G.model_fail++;
	ksft_print_msg("FAIL round %ld (%s, seed %llx, MSS %d, MULPDU %u): %s\n", idx,
		       R.garbage ? "garbage" : "model",
		       (unsigned long long)R.seed, R.mss, R.mulpdu, R.why);
	ksft_print_msg("replay: RDMAP_FUZZ_SEED=%llx RDMAP_FUZZ_ROUND=%ld\n",
		       (unsigned long long)G.master, idx);
	if (!R.garbage) {
		for (m = 0; m < R.nmsgs; m++) {
			describe(m, d, sizeof(d));
			ksft_print_msg("  %s%s\n", d, R.end != END_NONE && m == R.bad ?
				       "   <- ends the stream (model)" : "");
		}
		for (m = 0; m < R.nstags; m++)
			ksft_print_msg("  b stag %#x access %u %s\n", R.stags[m].stag,
				       R.stags[m].access, R.stags[m].owned ? "stream" : "pd");
		ksft_print_msg("  b posted %d buffers, peer sink stag %#x\n",
			       R.nposted, R.peer_stag);
	}
	return false;
}

/* rmmod @name, retrying while a user goes away */
static int unload(const char *name)
{
	long long end = iw_now_ms() + DDP_TMO_MS;

	while (syscall(__NR_delete_module, name, O_NONBLOCK)) {
		if (errno == ENOENT)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EBUSY)
			return -1;
		if (iw_now_ms() > end)
			return -1;
		usleep(10000);
	}
	return 0;
}

/* the use count of @name in /proc/modules, -1 if not loaded */
static int mod_users(const char *name)
{
	char line[512], n[64];
	int users = -1, u;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %*u %d", n, &u) == 2 && !strcmp(n, name))
			users = u;
	fclose(f);
	return users;
}

int main(int argc, char **argv)
{
	const char *env;
	bool dummy = false, rdmap_loaded = false;
	long long start, budget, end;
	long round = 0, only = LONG_MIN;
	int probe[2], users;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	env = getenv("FUZZ_SECONDS");
	budget = (env ? atoll(env) : 60) * 1000;
	env = getenv("RDMAP_FUZZ_SEED");
	G.master = env ? strtoull(env, NULL, 16) :
		   (__u64)iw_now_ms() ^ ((__u64)getpid() << 32);
	env = getenv("RDMAP_FUZZ_ROUND");
	if (env)
		only = atol(env);
	env = getenv("RDMAP_FUZZ_SHORT_TERM");
	G.short_term = env && atoi(env);
	env = getenv("RDMAP_FUZZ_VERBOSE");
	G.verbose = env && atoi(env);

	if (iw_loopback_pair(AF_INET, probe))
		ksft_exit_fail_msg("no loopback pair: %s\n", strerror(errno));
	if (iw_mpa_attach(probe[0]))
		ksft_exit_skip("mpa.ko not loaded: %s\n", strerror(errno));
	close(probe[0]);
	close(probe[1]);
	if (access("/dev/ddp", R_OK | W_OK))
		ksft_exit_skip("/dev/ddp: %s\n", strerror(errno));
	if (kmod_load("rdmap", "../rdmap/rdmap.ko", &rdmap_loaded) ||
	    kmod_load("rdmap_kconsumer", "kmod/rdmap_kconsumer.ko", &dummy))
		ksft_exit_skip("no rdmap.ko or rdmap_kconsumer.ko (make test-modules)\n");
	if (access(RK_DIR, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(RK_DIR "/ctl", F_OK))
		ksft_exit_skip("no %s\n", RK_DIR);
	R.sink = mmap(NULL, WF_SINK_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (R.sink == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	iw_raise_memlock(4 * WF_SINK_LEN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, watchdog);
	rk_ctl("destroy b 1");

	ksft_set_plan(4);
	ksft_print_msg("master seed %llx, %lld s%s; replay: RDMAP_FUZZ_SEED=%llx\n",
		       (unsigned long long)G.master, budget / 1000,
		       only != LONG_MIN ? ", one round" : "",
		       (unsigned long long)G.master);
	ksft_test_result(run_round(-1),
			 "case short_term: a 0-octet Terminate reported as 0x2/0xff\n");
	start = iw_now_ms();
	end = start + budget;
	if (only != LONG_MIN) {
		G.verbose = G.verbose ?: 1;
		run_round(only);
		round = 1;
	} else {
		do
			run_round(round++);
		while (iw_now_ms() < end);
	}
	ksft_print_msg("%ld rounds in %.1f s: %ld model, %ld garbage\n", round,
		       (iw_now_ms() - start) / 1000.0, G.model_rounds, G.garbage_rounds);
	ksft_print_msg("model: %ld all accepted, %ld ended by b's Terminate, %ld by the peer's\n",
		       G.alive, G.ended_local, G.ended_remote);
	ksft_print_msg("model: %ld Read Responses checked\n", G.resps);
	ksft_print_msg("model: %ld passed with a small MSS, %ld rounds with b's socket owned\n",
		       G.small_mss, G.held);
	ksft_test_result(!G.model_fail, "model rounds: %ld, %d failed, seed %llx\n",
			 G.model_rounds, G.model_fail, (unsigned long long)G.master);
	ksft_test_result(!G.garbage_fail, "garbage rounds: %ld, %d failed, seed %llx\n",
			 G.garbage_rounds, G.garbage_fail, (unsigned long long)G.master);

	/* no queue pair, STag or hold left behind */
	if (unload("rdmap_kconsumer") || unload("rdmap")) {
		ksft_test_result_fail("unload rdmap_kconsumer and rdmap: %s\n",
				      strerror(errno));
	} else {
		long long t = iw_now_ms() + DDP_TMO_MS;

		while ((users = mod_users("ddp")) > 0 && iw_now_ms() < t)
			usleep(10000);
		ksft_test_result(users <= 0, "modules unload, ddp has %d users\n",
				 users);
	}
	(void)rdmap_loaded;
	(void)argc;
	(void)argv;
	ksft_finished();
	return 0;
}
