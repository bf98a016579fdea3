// SPDX-License-Identifier: GPL-2.0
/*
 * mpa_wirefuzz: a live wire fuzzer for mpa.ko and ddp.ko.
 *
 * Each execution is one fresh loopback TCP connection. One end is a
 * module socket (the "mpa" ULP, in either MPA role), the other a raw TCP
 * socket that plays the other role with frames and FPDUs built here
 * (the FPDU encoder follows mpa_fpdu_encode() and is checked against it
 * at start-up). The raw peer sends valid prefixes and then mutations:
 * Request/Reply fields, FPDU lengths, markers, CRCs, DDP headers, random
 * segmentation, FIN or RST anywhere. On the module side a local consumer
 * binds a DDP stream, registers a guarded buffer, posts receive buffers,
 * invalidates, unbinds and recv()s at random moments.
 *
 * Every decision comes from a "tape" of 32-bit values generated from a
 * seed; a mutated execution is its parent's tape with a few values
 * changed by a mutation seed. The chain "ROOT+M1+M2..." (hex) reproduces
 * an execution exactly (same input; the kernel's timing may differ).
 * Executions whose outcome signature (MPA state and error, bucketed
 * counters, DDP events, errnos) was new go into the corpus and are
 * mutated more often.
 *
 * Invariants: guard areas around registered and posted buffers keep
 * their pattern; a buffer does not change after its STag was invalidated
 * or its stream closed; valid input is delivered exactly (recv() and
 * tagged/untagged placement); the module's Request/Reply and the
 * negotiation follow RFC 5044/6581; every connection ends after a FIN or
 * RST; no execution gets stuck (watchdog). Kernel crashes, WARNs and
 * lockups are caught by the VM.
 *
 * Without options it fuzzes for 120 s and replays the saved cases in
 * wirefuzz-cases/ (one TAP test each). See tools/fuzz-soak.1 and
 * mpa_wirefuzz --help. Needs mpa.ko and ddp.ko loaded, root.
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "mpa_proto.h"
#include <linux/crc32c.h>

#include "kselftest.h"
#include "ddp_test_util.h"
#include "mpa_sock_util.h"

/*
 * The meaning of a seed depends on this generator: bump WF_GEN_VERSION
 * whenever the tape is consumed differently. Saved cases of another
 * version are skipped on replay (they would run a different input).
 */
#define WF_GEN_VERSION	1
#define TAPE_LEN	1024
#define MAX_CHAIN	12
#define MAX_ULPDUS	8
#define SINK_LEN	8192
#define REGION		1024
#define REGION_MAX	1000
#define RBUF_LEN	2048
#define MAX_POSTED	4
#define BASE_TO		0x40000ULL
#define WIRE_CAP	1048576
#define EXEC_LIMIT_S	60
#define END_TMO_MS	3000
#define CORPUS_MAX	4096
#define SIGS_MAX	65536

/* ---- decision tape ---- */

struct recipe {
	__u64	seed[MAX_CHAIN];	/* [0] the root, then mutation seeds */
	int	depth;
};

static __u64 splitmix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct tape {
	__u32	v[TAPE_LEN];
	unsigned int pos;
	__u64	root;
};

static void tape_build(struct tape *t, const struct recipe *r)
{
	__u64 s = r->seed[0];
	int i, d;

	t->root = r->seed[0];
	t->pos = 0;
	for (i = 0; i < TAPE_LEN; i++)
		t->v[i] = splitmix(&s);
	for (d = 1; d < r->depth; d++) {
		__u64 m = r->seed[d];
		int k = 1 + splitmix(&m) % 4;

		while (k--) {
			__u32 a = splitmix(&m), b = splitmix(&m);
			unsigned int p = a % (1 + b % TAPE_LEN);
			__u32 x = splitmix(&m);

			switch (x % 5) {
			case 0:
				t->v[p] = splitmix(&m);
				break;
			case 1:
				t->v[p]++;
				break;
			case 2:
				t->v[p]--;
				break;
			case 3:
				t->v[p] ^= 1U << (x >> 8) % 32;
				break;
			default:
				t->v[p] = t->v[(x >> 8) % TAPE_LEN];
				break;
			}
		}
	}
}

static __u32 tget(struct tape *t)
{
	__u64 s;

	if (t->pos < TAPE_LEN)
		return t->v[t->pos++];
	s = t->root ^ ((__u64)t->pos++ << 32);
	return splitmix(&s);
}

static __u32 rnd(struct tape *t, __u32 n)
{
	return n ? tget(t) % n : 0;
}

static bool pct(struct tape *t, __u32 p)
{
	return rnd(t, 100) < p;
}

static void recipe_str(const struct recipe *r, char *buf, size_t len)
{
	size_t o = 0;
	int d;

	buf[0] = 0;
	for (d = 0; d < r->depth && o < len; d++)
		o += snprintf(buf + o, len - o, "%s%llx", d ? "+" : "",
			      (unsigned long long)r->seed[d]);
}

static int recipe_parse(const char *s, struct recipe *r)
{
	char *end;

	r->depth = 0;
	while (*s && r->depth < MAX_CHAIN) {
		r->seed[r->depth++] = strtoull(s, &end, 16);
		if (end == s)
			return -1;
		s = end;
		while (*s == '+' || *s == ' ' || *s == '\n')
			s++;
	}
	return r->depth ? 0 : -1;
}

/* ---- options and global state ---- */

static struct {
	int	seconds;
	const char *seed;
	const char *save;
	const char *replay;
	const char *json;
	const char *state;
	__u64	master;
	int	verbose;
	bool	no_crc_ok;	/* allow_no_crc could be set */
} opt = { .seconds = -1 };

/* how often each invariant was actually checked, over the whole run */
static struct {
	long	valid;		/* executions without any mutation */
	long	full;		/* executions that reached full operation */
	long	recv_ok;	/* ULPDUs recv()d and matched */
	long	tagged_ok;	/* tagged messages placed and matched */
	long	untagged_ok;	/* untagged messages placed and matched */
	long	end_checks;	/* FIN/RST end observed in time */
	long	frozen;		/* buffers checked after invalidate/unbind */
	long	all_recv;	/* valid executions with every ULPDU recv()d */
} cnt;

static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (opt.verbose < 2)
		return;
	va_start(ap, fmt);
	fputs("#   ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* ---- one execution ---- */

struct sent_msg {
	__u8	*data;		/* the ULPDU as sent */
	__u32	len;
	int	kind;		/* K_* */
	__u32	qn, msn, mlen;	/* untagged: message */
	int	region;		/* tagged: region index, -1 */
	__u32	plen;		/* tagged: payload octets of the message */
	__u8	*payload;	/* tagged/untagged message payload */
	bool	placed;		/* DDP_EV_TAGGED / DDP_EV_RECV seen */
};

enum { K_RAW, K_TAGGED, K_UNTAGGED, K_ZERO_TAGGED };

struct posted {
	struct dt_gbuf g;
	__u32	qn;
	bool	done;
	__u8	*frozen;	/* snapshot after the stream closed */
};

struct ex {
	struct tape t;
	struct recipe r;
	char	name[MAX_CHAIN * 17 + 1];
	/* configuration of the module end */
	int	mrole;
	__u32	mflags;
	__u16	mrev;		/* MPA_START.rev */
	int	eff_rev;	/* the revision the module speaks */
	__u16	mird, mord;
	bool	ddp;		/* DDP segments and consumer actions */
	int	end;		/* how the raw peer ends: E_* */
	/* sockets and DDP objects */
	int	mfd, rfd, pd, sfd;
	bool	bound_once, stream_closed, raw_closed, raw_fin;
	__u32	nq;
	struct dt_gbuf sink;
	bool	sink_ok;
	__u32	stag;
	bool	reg, inval;
	__u8	*sink_frozen;
	struct posted post[MAX_POSTED];
	int	nposted;
	/* the raw peer's stream */
	bool	rmark, rcrc;	/* what the raw peer sends: markers, CRC */
	__u32	rpos;
	__u8	*pend;		/* queued, not yet written */
	size_t	npend;
	__u8	*wire;		/* everything written */
	size_t	wlen;
	bool	wdead;		/* a write failed */
	/* what the module should deliver */
	bool	valid;		/* no mutation so far */
	bool	trunc;		/* an FPDU was cut short */
	struct sent_msg msg[MAX_ULPDUS * 2];
	int	nmsg;
	int	recv_next;	/* index of the next ULPDU recv() may return */
	bool	lens;		/* MPA_RECV_LENS: several ULPDUs per recvmsg() */
	int	nrecv;
	__u32	msn_next[DDP_MAX_QUEUES];
	bool	rejected_mode;	/* plain TCP after a reject */
	/* what the module sends, decoded by the reference decoder */
	bool	want_mtx;	/* the raw peer's frame asked for markers */
	bool	mdec;		/* decoding the module's FPDUs */
	struct mpa_dec mrx;
	__u8	*mtx[MAX_ULPDUS * 2];	/* ULPDUs the module end sent with send() */
	__u32	mtx_len[MAX_ULPDUS * 2];
	int	mtx_n, mtx_next;
	bool	mtx_other;	/* also DDP messages or unrecorded ones */
	/* outcome */
	int	start_err, accept_err, bind_err, reg_err, post_err, inval_err;
	int	recv_errno, send_errno, ddpsend_errno;
	__u32	ev_mask;
	__u32	first_err;	/* type << 8 | code, + 0x10000 */
	int	nev_tagged, nev_recv;
	bool	peer_closed_ev;
	struct mpa_info info;
	struct mpa_stats st;
	int	ended;		/* how the end was observed */
	char	fail[512];
};

enum { E_FIN, E_RST, E_OPEN, E_FIN_EARLY, E_RST_EARLY };

static struct ex *cur;

static void fail(struct ex *e, const char *fmt, ...)
{
	va_list ap;

	if (e->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(e->fail, sizeof(e->fail), fmt, ap);
	va_end(ap);
	vlog("FAIL %s\n", e->fail);
}

/* an error of the test itself (socket, mmap, ...): reported as a failure */
static void perr(struct ex *e, const char *what)
{
	fail(e, "process error: %s: %s", what, strerror(errno));
}

/* ---- raw peer output ---- */

static void raw_queue(struct ex *e, const void *p, size_t n)
{
	if (e->npend + n > WIRE_CAP)
		return;
	memcpy(e->pend + e->npend, p, n);
	e->npend += n;
}

static void raw_write(struct ex *e, const __u8 *p, size_t n)
{
	ssize_t w;

	if (e->wdead || e->raw_closed)
		return;
	if (e->wlen + n <= WIRE_CAP) {
		memcpy(e->wire + e->wlen, p, n);
		e->wlen += n;
	}
	while (n) {
		struct pollfd pf = { .fd = e->rfd, .events = POLLOUT };

		w = send(e->rfd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == EAGAIN) {
			if (poll(&pf, 1, 1000) != 1) {
				e->wdead = true;	/* the module stopped reading */
				return;
			}
			continue;
		}
		if (w <= 0) {
			e->wdead = true;
			return;
		}
		p += w;
		n -= w;
	}
}

/* Write what is queued, cut into segments as the tape says. */
static void raw_flush(struct ex *e)
{
	size_t n = e->npend, off = 0;
	__u32 mode = rnd(&e->t, 100);

	if (!n)
		return;
	if (mode < 55) {
		raw_write(e, e->pend, n);
	} else if (mode < 85) {
		int k = 1 + rnd(&e->t, 4);

		while (off < n) {
			size_t c = k-- > 0 ? 1 + rnd(&e->t, n - off) : n - off;

			raw_write(e, e->pend + off, c);
			off += c;
			if (pct(&e->t, 30))
				usleep(rnd(&e->t, 3) * 400);
		}
	} else {
		/* one octet per segment for a stretch, then the rest */
		size_t start = rnd(&e->t, n), len = 1 + rnd(&e->t, 48);

		raw_write(e, e->pend, start);
		for (off = start; off < n && off < start + len; off++) {
			raw_write(e, e->pend + off, 1);
			if (pct(&e->t, 20))
				usleep(200);
		}
		raw_write(e, e->pend + off, n - off);
	}
	e->npend = 0;
}

static void raw_maybe_flush(struct ex *e)
{
	if (pct(&e->t, 70))
		raw_flush(e);
}

/* ---- frames ---- */

static size_t build_frame(__u8 *b, bool req, __u8 flags, __u8 rev, __u16 decl,
			  const __u8 *pd, __u16 pd_len)
{
	memcpy(b, req ? MPA_WIRE_KEY_REQ : MPA_WIRE_KEY_REP, 16);
	b[16] = flags;
	b[17] = rev;
	b[18] = decl >> 8;
	b[19] = decl;
	memcpy(b + 20, pd, pd_len);
	return 20 + pd_len;
}

static void put_v2(__u8 *p, __u16 ird, __u16 ord)
{
	p[0] = ird >> 8;
	p[1] = ird;
	p[2] = ord >> 8;
	p[3] = ord;
}

/* Mutate a frame in place; returns its new length. */
static size_t mutate_frame(struct ex *e, __u8 *b, size_t len, __u16 *pd_len)
{
	int n = 1 + rnd(&e->t, 2);

	e->valid = false;
	while (n--) {
		switch (rnd(&e->t, 9)) {
		case 0:	/* key */
			b[rnd(&e->t, 16)] ^= 1 + rnd(&e->t, 255);
			break;
		case 1:	/* flags, reserved bits included */
			b[16] ^= 1 << rnd(&e->t, 8);
			break;
		case 2:
			b[16] = rnd(&e->t, 256);
			break;
		case 3:	/* revision */
		{
			static const __u8 revs[] = { 0, 1, 2, 3, 4, 0x80, 0xff };

			b[17] = revs[rnd(&e->t, sizeof(revs))];
			break;
		}
		case 4:	/* declared PD length: short, long, above 512 */
		{
			__u32 d = (b[18] << 8 | b[19]);

			switch (rnd(&e->t, 4)) {
			case 0:
				d = d ? d - 1 - rnd(&e->t, d) : 0;
				break;
			case 1:
				d += 1 + rnd(&e->t, 8);
				break;
			case 2:
				d = 509 + rnd(&e->t, 8);
				break;
			default:
				d = rnd(&e->t, 65536);
				break;
			}
			b[18] = d >> 8;
			b[19] = d;
			break;
		}
		case 5:	/* enhanced data (or the first PD octets) */
			if (*pd_len >= 4)
				put_v2(b + 20, tget(&e->t), tget(&e->t));
			else
				b[16] ^= MPA_FLAG_E;
			break;
		case 6:	/* truncated frame */
			len = rnd(&e->t, len);
			e->trunc = true;
			break;
		case 7:	/* wrong key type */
			memcpy(b, (b[8] == 'R' && b[9] == 'e' && b[10] == 'q') ?
			       MPA_WIRE_KEY_REP : MPA_WIRE_KEY_REQ, 16);
			break;
		default:	/* a PD octet (never invalid by itself) */
			if (*pd_len)
				b[20 + rnd(&e->t, *pd_len)] ^= 0x5a;
			break;
		}
	}
	return len;
}

/* ---- FPDUs ---- */

struct fmut {
	bool	len_set;
	__u16	len_val;
	__u32	crc_xor;
	int	marker;		/* which marker to damage (1-based), 0 none */
	__u16	mk_xor_ptr, mk_xor_rsvd;
	bool	pad;		/* non-zero pad */
	bool	drop_marker;
};

/*
 * One FPDU at stream position @pos, as mpa_fpdu_encode() builds it,
 * with optional damage. Returns the wire length.
 */
static size_t enc_fpdu(__u8 *out, __u32 pos, bool markers, bool crc, const __u8 *u,
		       __u32 len, const struct fmut *m)
{
	static __u8 plain[MPA_MAX_ULPDU + 8];
	__u32 n = 0, i, off = 0, hdr_pos = 0, crcv;
	__u16 lf = m && m->len_set ? m->len_val : len;
	bool started = false;
	int nmk = 0;

	plain[n++] = lf >> 8;
	plain[n++] = lf;
	memcpy(plain + n, u, len);
	n += len;
	for (i = 0; i < mpa_pad_len(len); i++)
		plain[n++] = m && m->pad ? 0x11 * (i + 1) : 0;
	for (i = 0; i <= n; i++) {
		if (markers && (pos + off) % MPA_MARKER_PERIOD == 0 && (i < n || started)) {
			__u16 ptr = started ? pos + off - hdr_pos : 0, rsvd = 0;

			nmk++;
			if (m && m->marker == nmk) {
				ptr ^= m->mk_xor_ptr;
				rsvd ^= m->mk_xor_rsvd;
			}
			if (!(m && m->drop_marker && m->marker == nmk)) {
				out[off++] = rsvd >> 8;
				out[off++] = rsvd;
				out[off++] = ptr >> 8;
				out[off++] = ptr;
			}
		}
		if (i == n)
			break;
		if (!started) {
			started = true;
			hdr_pos = pos + off;
		}
		out[off++] = plain[i];
	}
	crcv = crc ? ~crc32c(~0U, out, off) : 0;
	if (m)
		crcv ^= m->crc_xor;
	out[off++] = crcv;
	out[off++] = crcv >> 8;
	out[off++] = crcv >> 16;
	out[off++] = crcv >> 24;
	return off;
}

/* The encoder above must agree with mpa_proto.c: checked once at start-up. */
static int enc_selftest(void)
{
	static __u8 a[70000], b[70000], u[3000];
	__u64 s = 1;
	int i;

	for (i = 0; i < (int)sizeof(u); i++)
		u[i] = splitmix(&s);
	for (i = 0; i < 2000; i++) {
		__u32 pos = (splitmix(&s) % 4096) & ~3U, len = splitmix(&s) % 3000;
		bool mk = i & 1, crc = i & 2;
		int n1 = mt_enc(a, sizeof(a), pos, mk, crc, u, len);
		int n2 = enc_fpdu(b, pos, mk, crc, u, len, NULL);

		if (n1 != n2 || memcmp(a, b, n1))
			return -1;
	}
	return 0;
}

/* ---- module side helpers ---- */

static int mstate(struct ex *e)
{
	return iw_mpa_info_of(e->mfd).state;
}

/* Wait while the state is @from, at most @ms; returns the state. */
static int wait_leave(struct ex *e, int from, int ms)
{
	long long end = iw_now_ms() + ms;
	int st;

	for (;;) {
		st = mstate(e);
		if (st != from || iw_now_ms() >= end)
			return st;
		usleep(1000);
	}
}

static void read_events(struct ex *e);

static void sink_freeze(struct ex *e)
{
	if (e->sink_ok && !e->sink_frozen) {
		e->sink_frozen = malloc(SINK_LEN);
		if (e->sink_frozen)
			memcpy(e->sink_frozen, e->sink.buf, SINK_LEN);
	}
}

static void do_bind(struct ex *e)
{
	int fl;

	if (e->sfd >= 0 || e->pd < 0)
		return;
	e->nq = rnd(&e->t, 5);
	e->sfd = iw_ddp_bind(e->pd, e->mfd, e->nq);
	if (!e->nq)
		e->nq = DDP_DEFAULT_QUEUES;
	if (e->sfd < 0) {
		e->bind_err = errno;
		vlog("bind: %s\n", strerror(errno));
		return;
	}
	vlog("bind nq=%u\n", e->nq);
	e->bound_once = true;
	fl = fcntl(e->sfd, F_GETFL);
	fcntl(e->sfd, F_SETFL, fl | O_NONBLOCK);
	/* a new stream may place into a PD-wide buffer again */
	if (!e->inval && e->sink_frozen) {
		free(e->sink_frozen);
		e->sink_frozen = NULL;
	}
}

static void do_reg(struct ex *e)
{
	__u32 acc = pct(&e->t, 92) ? DDP_ACCESS_REMOTE_WRITE : DDP_ACCESS_REMOTE_READ;
	int sfd = e->sfd >= 0 && pct(&e->t, 40) ? e->sfd : -1;

	if (e->reg || !e->sink_ok || e->pd < 0)
		return;
	if (iw_ddp_reg_mr(e->pd, e->sink.buf, SINK_LEN, BASE_TO, acc, sfd, &e->stag)) {
		e->reg_err = errno;
		vlog("reg: %s\n", strerror(errno));
		return;
	}
	vlog("reg stag=%#x stream=%d\n", e->stag, sfd);
	e->reg = true;
}

static void do_inval(struct ex *e)
{
	if (!e->reg || e->inval)
		return;
	if (iw_ddp_invalidate(e->pd, e->stag)) {
		e->inval_err = errno;
		return;
	}
	vlog("invalidate\n");
	e->inval = true;
	/* nothing may be placed into it from now on */
	free(e->sink_frozen);
	e->sink_frozen = NULL;
	sink_freeze(e);
}

static void do_post(struct ex *e)
{
	struct posted *p;

	if (e->sfd < 0 || e->nposted >= MAX_POSTED)
		return;
	p = &e->post[e->nposted];
	if (dt_gbuf_alloc(&p->g, RBUF_LEN, 0)) {
		perr(e, "mmap");
		return;
	}
	p->qn = rnd(&e->t, e->nq + (pct(&e->t, 5) ? 2 : 0));
	if (iw_ddp_post_recv(e->sfd, p->g.buf, RBUF_LEN, p->qn, 100 + e->nposted)) {
		e->post_err = errno;
		dt_gbuf_free(&p->g);
		return;
	}
	vlog("post qn=%u cookie=%d\n", p->qn, 100 + e->nposted);
	e->nposted++;
}

static void do_unbind(struct ex *e)
{
	int i;

	if (e->sfd < 0)
		return;
	read_events(e);
	close(e->sfd);
	e->sfd = -1;
	e->stream_closed = true;
	vlog("unbind\n");
	/* the stream is gone: nothing may be placed any more */
	sink_freeze(e);
	for (i = 0; i < e->nposted; i++) {
		struct posted *p = &e->post[i];

		if (p->frozen)
			continue;
		p->frozen = malloc(RBUF_LEN);
		if (p->frozen)
			memcpy(p->frozen, p->g.buf, RBUF_LEN);
	}
}

static struct sent_msg *find_tagged(struct ex *e, __u64 to)
{
	int i;

	for (i = 0; i < e->nmsg; i++)
		if (e->msg[i].kind == K_TAGGED && e->msg[i].region >= 0 &&
		    BASE_TO + (__u64)e->msg[i].region * REGION == to)
			return &e->msg[i];
	return NULL;
}

static struct sent_msg *find_untagged(struct ex *e, __u32 qn, __u32 msn)
{
	int i;

	for (i = 0; i < e->nmsg; i++)
		if (e->msg[i].kind == K_UNTAGGED && e->msg[i].payload &&
		    e->msg[i].qn == qn && e->msg[i].msn == msn)
			return &e->msg[i];
	return NULL;
}

static void check_event(struct ex *e, const struct ddp_event *ev)
{
	struct sent_msg *m;
	int i;

	if (ev->type < 32)
		e->ev_mask |= 1U << ev->type;
	vlog("event type=%u err=%u/%u len=%u qn=%u msn=%u\n", ev->type, ev->err_type,
	     ev->err_code, ev->len, ev->qn, ev->msn);
	switch (ev->type) {
	case DDP_EV_ERROR:
		if (!e->first_err)
			e->first_err = 0x10000 | ev->err_type << 8 | ev->err_code;
		break;
	case DDP_EV_PEER_CLOSED:
		e->peer_closed_ev = true;
		break;
	case DDP_EV_TAGGED:
		e->nev_tagged++;
		if (!e->valid)
			break;
		m = find_tagged(e, ev->to);
		if (!m) {
			/* a zero-length message or one without a region */
			if (ev->len)
				fail(e, "DDP_EV_TAGGED for TO %#llx len %u never sent",
				     (unsigned long long)ev->to, ev->len);
			break;
		}
		if (ev->stag != e->stag || ev->len != m->plen)
			fail(e, "DDP_EV_TAGGED stag %#x len %u, sent stag %#x len %u",
			     ev->stag, ev->len, e->stag, m->plen);
		else if (memcmp(e->sink.buf + m->region * REGION, m->payload, m->plen))
			fail(e, "tagged message at region %d placed wrongly", m->region);
		else
			cnt.tagged_ok++;
		m->placed = true;
		break;
	case DDP_EV_RECV:
		e->nev_recv++;
		i = ev->cookie - 100;
		if (i < 0 || i >= e->nposted) {
			fail(e, "DDP_EV_RECV with unknown cookie %llu",
			     (unsigned long long)ev->cookie);
			break;
		}
		if (e->post[i].done)
			fail(e, "DDP_EV_RECV twice for cookie %llu",
			     (unsigned long long)ev->cookie);
		e->post[i].done = true;
		if (ev->qn != e->post[i].qn)
			fail(e, "DDP_EV_RECV qn %u for a buffer posted on %u", ev->qn,
			     e->post[i].qn);
		if (!e->valid)
			break;
		m = find_untagged(e, ev->qn, ev->msn);
		if (!m) {
			fail(e, "DDP_EV_RECV qn %u msn %u never sent", ev->qn, ev->msn);
			break;
		}
		if (ev->len != m->mlen || memcmp(e->post[i].g.buf, m->payload, m->mlen))
			fail(e, "untagged message qn %u msn %u: len %u (sent %u) or data differ",
			     ev->qn, ev->msn, ev->len, m->mlen);
		else
			cnt.untagged_ok++;
		break;
	case DDP_EV_FLUSH:
		break;
	default:
		fail(e, "unknown DDP event type %u", ev->type);
	}
}

static void read_events(struct ex *e)
{
	struct ddp_event ev[16];
	ssize_t n;
	int i;

	if (e->sfd < 0)
		return;
	for (;;) {
		n = read(e->sfd, ev, sizeof(ev));
		if (n < 0 && errno != EAGAIN)
			fail(e, "read of the stream fd: %s", strerror(errno));
		if (n <= 0)
			return;
		if (n % sizeof(ev[0]))
			fail(e, "read of the stream fd returned %zd octets", n);
		for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++)
			check_event(e, &ev[i]);
	}
}

/* one ULPDU that recv() returned: of valid input, the next one sent */
static void check_ulpdu(struct ex *e, const __u8 *buf, ssize_t n)
{
	int j;

	for (j = e->recv_next; j < e->nmsg; j++)
		if (e->msg[j].len == n && !memcmp(e->msg[j].data, buf, n))
			break;
	if (j == e->nmsg) {
		fail(e, "recv returned %zd octets that were not sent (next %d of %d)",
		     n, e->recv_next, e->nmsg);
		return;
	}
	if (j != e->recv_next && !e->bound_once)
		fail(e, "recv skipped ULPDUs %d..%d", e->recv_next, j - 1);
	e->recv_next = j + 1;
	cnt.recv_ok++;
}

/*
 * One recvmsg() without blocking; with MPA_RECV_LENS the lengths of the
 * ULPDUs it returned go to @lens (*@nl of them, -1 without the control
 * message), which must add up to what it returned.
 */
static ssize_t fuzz_recv(struct ex *e, __u8 *buf, size_t size, __u32 *lens, int *nl,
			 int *fl)
{
	union {
		char b[CMSG_LEN(MAX_ULPDUS * 2 * sizeof(__u32))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	__u64 sum = 0;
	ssize_t n;
	int i;

	if (e->lens) {
		m.msg_control = ctl.b;
		m.msg_controllen = sizeof(ctl.b);
	}
	n = recvmsg(e->mfd, &m, MSG_DONTWAIT);
	*fl = m.msg_flags;
	*nl = -1;
	cm = e->lens && n >= 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (!cm)
		return n;
	if (cm->cmsg_level != SOL_MPA || cm->cmsg_type != MPA_CMSG_LENS) {
		fail(e, "recvmsg: control message %d/%d", cm->cmsg_level, cm->cmsg_type);
		return n;
	}
	*nl = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(__u32);
	memcpy(lens, CMSG_DATA(cm), *nl * sizeof(__u32));
	for (i = 0; i < *nl; i++)
		sum += lens[i];
	if (!*nl || sum != (__u64)n)
		fail(e, "recvmsg: %zd octets, %d lengths adding up to %llu", n, *nl,
		     (unsigned long long)sum);
	return n;
}

/* recv() what the module holds for user space, without blocking. */
static void do_recv(struct ex *e)
{
	static __u8 buf[70000 * 4];
	__u32 lens[MAX_ULPDUS * 2];
	ssize_t n, off;
	int fl, nl, i;

	/* a mutated Reply may have R set: the socket is plain TCP then */
	if (!e->rejected_mode && mstate(e) == MPA_S_REJECTED)
		e->rejected_mode = true;
	for (;;) {
		n = fuzz_recv(e, buf, sizeof(buf), lens, &nl, &fl);
		if (n < 0 && errno != EAGAIN)
			e->recv_errno = errno;
		if (n < 0 && errno != EAGAIN)
			e->ended |= 2;
		if (n < 0)
			return;
		if (n == 0 && !e->rejected_mode && !(fl & MSG_EOR)) {
			e->ended |= 1;
			return;
		}
		e->nrecv++;
		vlog("recv %zd (%d lengths)\n", n, nl);
		if (e->rejected_mode) {
			if (n == 0) {
				e->ended |= 1;
				return;
			}
			continue;	/* plain TCP: checked only for not hanging */
		}
		if (!(fl & MSG_EOR))
			fail(e, "recv: ULPDU without MSG_EOR");
		if (e->lens && nl < 0)
			fail(e, "recv: MPA_RECV_LENS without lengths");
		if (!e->valid || e->sfd >= 0)
			continue;
		/* valid input: ULPDUs that were sent, in order */
		if (nl < 0) {
			check_ulpdu(e, buf, n);
			continue;
		}
		for (i = 0, off = 0; i < nl && off + lens[i] <= n; off += lens[i++])
			check_ulpdu(e, buf + off, lens[i]);
	}
}

/* the module end sends something back */
static void do_msend(struct ex *e)
{
	__u8 buf[600];
	__u32 len = rnd(&e->t, sizeof(buf));
	int ret;

	dt_fill(buf, len, tget(&e->t));
	if (e->sfd < 0) {
		ret = send(e->mfd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (ret < 0)
			e->send_errno = errno;
		if (ret != (int)len)
			return;
		if (e->mtx_n < MAX_ULPDUS * 2) {
			e->mtx[e->mtx_n] = malloc(len + 1);
			if (e->mtx[e->mtx_n]) {
				memcpy(e->mtx[e->mtx_n], buf, len);
				e->mtx_len[e->mtx_n++] = len;
				return;
			}
		}
		e->mtx_other = true;
		return;
	}
	/* DDP_IOC_SEND blocks: only when the module end may send at all */
	if (mstate(e) != MPA_S_FULL ||
	    (e->mrole == MPA_ROLE_RESPONDER && !iw_mpa_stats_of(e->mfd).rx_fpdus))
		return;
	if (pct(&e->t, 50)) {
		ret = iw_ddp_send_tagged(e->sfd, buf, len, tget(&e->t), 0, 0);
		len += sizeof(struct ddp_tagged_hdr);
	} else {
		ret = iw_ddp_send_untagged(e->sfd, buf, len, rnd(&e->t, 4), (__u8 *)"\0\0\0\0");
		len += sizeof(struct ddp_untagged_hdr);
	}
	if (ret)
		e->ddpsend_errno = errno;
	/* one segment (len < MULPDU): its length is known, not its header */
	if (ret || e->mtx_n >= MAX_ULPDUS * 2) {
		e->mtx_other = true;
		return;
	}
	e->mtx[e->mtx_n] = NULL;
	e->mtx_len[e->mtx_n++] = len;
}

/* A random action of the local consumer. */
static void consumer_step(struct ex *e)
{
	if (!pct(&e->t, 35))
		return;
	if (!e->ddp) {
		switch (rnd(&e->t, 4)) {
		case 0:
		case 1:
			do_recv(e);
			break;
		case 2:
			do_msend(e);
			break;
		default:
			iw_mpa_stats_of(e->mfd);
			break;
		}
		return;
	}
	switch (rnd(&e->t, 16)) {
	case 0:
	case 1:
	case 2:
		do_bind(e);
		break;
	case 3:
	case 4:
		do_reg(e);
		break;
	case 5:
	case 6:
	case 7:
		do_post(e);
		break;
	case 8:
		do_inval(e);
		break;
	case 9:
		do_unbind(e);
		break;
	case 10:
	case 11:
		if (e->sfd < 0 || pct(&e->t, 5))
			do_recv(e);	/* also while bound: must just not break */
		break;
	case 12:
		do_msend(e);
		break;
	default:
		read_events(e);
		break;
	}
}

/* ---- the raw peer's ULPDUs ---- */

static void seg_mutate_ddp(struct ex *e, __u8 *u, __u32 *len, bool tagged)
{
	int n = 1 + rnd(&e->t, 2);
	bool bad = false;

	while (n--) {
		bad = true;
		switch (rnd(&e->t, 10)) {
		case 0:	/* T, L, reserved, DV */
			u[0] ^= 1 << rnd(&e->t, 8);
			break;
		case 1:
			u[0] = rnd(&e->t, 256);
			break;
		case 2:	/* STag or QN */
			if (pct(&e->t, 50))
				u[rnd(&e->t, 4) + (tagged ? 2 : 6)] ^= 1 << rnd(&e->t, 8);
			else
				memset(u + (tagged ? 2 : 6), rnd(&e->t, 256), 4);
			break;
		case 3:	/* TO or MSN */
			if (tagged)
				u[6 + rnd(&e->t, 8)] = rnd(&e->t, 256);
			else
				u[10 + rnd(&e->t, 4)] ^= 1 << rnd(&e->t, 8);
			break;
		case 4:	/* TO near the end / wrapping, or MO */
			if (tagged) {
				__u64 to = pct(&e->t, 50) ? ~0ULL - rnd(&e->t, 64) :
					   BASE_TO + SINK_LEN - rnd(&e->t, 64);

				to = htobe64(to);
				memcpy(u + 6, &to, 8);
			} else {
				__u32 mo = htonl(pct(&e->t, 50) ? RBUF_LEN - rnd(&e->t, 8) :
						 tget(&e->t));

				memcpy(u + 14, &mo, 4);
			}
			break;
		case 5:	/* segment shorter than its header */
			*len = rnd(&e->t, tagged ? 14 : 18);
			break;
		case 6:	/* RsvdULP */
			u[1] ^= 0xff;
			break;
		case 7:	/* tagged <-> untagged */
			u[0] ^= DDP_FLAG_T;
			break;
		case 8:	/* MSN 0 / far ahead */
			if (!tagged) {
				__u32 msn = htonl(pct(&e->t, 50) ? 0 : 1 + rnd(&e->t, 300));

				memcpy(u + 10, &msn, 4);
			}
			break;
		default:	/* the first payload octet only: still valid */
			if (*len > (tagged ? 14U : 18U))
				u[tagged ? 14 : 18] ^= 0xff;
			bad = false;
			break;
		}
		if (bad)
			e->valid = false;
	}
}

/*
 * Build the next ULPDU into @u (length in *len): a DDP segment or random
 * octets. Records the message for the delivery checks.
 */
static void make_ulpdu(struct ex *e, __u8 *u, __u32 *len)
{
	struct sent_msg *m = &e->msg[e->nmsg];
	__u8 dv = e->eff_rev == 0 ? 0 : DDP_WIRE_VERSION;
	__u32 k = rnd(&e->t, 100), plen;

	memset(m, 0, sizeof(*m));
	m->region = -1;
	if (!e->ddp || k < 8) {
		static const __u32 sizes[] = { 0, 1, 16, 64, 600, 1500, 4000 };

		m->kind = K_RAW;
		*len = rnd(&e->t, sizes[rnd(&e->t, 7)] + 1);
		dt_fill(u, *len, tget(&e->t));
	} else if (k < 16) {
		struct ddp_tagged_hdr h = {
			.ctrl = DDP_FLAG_T | DDP_FLAG_L | dv,
			.stag = htonl(pct(&e->t, 50) ? e->stag : tget(&e->t)),
			.to = htobe64(tget(&e->t)),
		};

		m->kind = K_ZERO_TAGGED;
		memcpy(u, &h, sizeof(h));
		*len = sizeof(h);
	} else if (k < 60) {
		int r = e->nmsg % (SINK_LEN / REGION);
		struct ddp_tagged_hdr h = {
			.ctrl = DDP_FLAG_T | DDP_FLAG_L | dv,
			.rsvdulp = tget(&e->t),
			.stag = htonl(e->reg || pct(&e->t, 90) ? e->stag : tget(&e->t)),
			.to = htobe64(BASE_TO + (__u64)r * REGION),
		};

		plen = 1 + rnd(&e->t, REGION_MAX);
		m->kind = K_TAGGED;
		m->region = r;
		m->plen = plen;
		memcpy(u, &h, sizeof(h));
		dt_fill(u + sizeof(h), plen, tget(&e->t));
		m->payload = u + sizeof(h);	/* copied below */
		*len = sizeof(h) + plen;
	} else {
		__u32 qn = rnd(&e->t, e->nq ? e->nq : DDP_DEFAULT_QUEUES);
		struct ddp_untagged_hdr h = {
			.ctrl = DDP_FLAG_L | dv,
			.qn = htonl(qn),
			.msn = htonl(++e->msn_next[qn]),
			.mo = 0,
		};

		plen = rnd(&e->t, RBUF_LEN + 1);
		m->kind = K_UNTAGGED;
		m->qn = qn;
		m->msn = e->msn_next[qn];
		m->mlen = plen;
		h.rsvdulp[0] = tget(&e->t);
		memcpy(u, &h, sizeof(h));
		dt_fill(u + sizeof(h), plen, tget(&e->t));
		m->payload = u + sizeof(h);
		*len = sizeof(h) + plen;
	}
	if (m->kind != K_RAW && pct(&e->t, 15)) {
		bool was = e->valid;

		e->valid = true;
		seg_mutate_ddp(e, u, len, m->kind != K_UNTAGGED);
		if (!e->valid)
			m->region = -1;
		e->valid = e->valid && was;
	}
	m->len = *len;
	m->data = malloc(*len + 1);
	if (m->data)
		memcpy(m->data, u, *len);
	if (m->payload && m->data)
		m->payload = m->data + (m->payload - u);
	else
		m->payload = NULL;
	e->nmsg++;
}

/* One FPDU from the raw peer, possibly damaged, queued. */
static void raw_fpdu(struct ex *e)
{
	static __u8 u[70000], w[80000];
	struct fmut mu = { 0 }, *mp = NULL;
	__u32 len;
	size_t n;

	make_ulpdu(e, u, &len);
	if (pct(&e->t, 12)) {
		bool bad = true;

		mp = &mu;
		switch (rnd(&e->t, 7)) {
		case 0:
			mu.len_set = true;
			mu.len_val = len + 1 + rnd(&e->t, 4);
			break;
		case 1:
			mu.len_set = true;
			mu.len_val = pct(&e->t, 50) ? (len ? len - 1 - rnd(&e->t, len) : 0xffff) :
				     tget(&e->t);
			break;
		case 2:
			mu.crc_xor = 1U << rnd(&e->t, 32);
			break;
		case 3:
			mu.marker = 1;
			mu.mk_xor_ptr = 1 + rnd(&e->t, 0xffff);
			break;
		case 4:
			mu.marker = 1;
			mu.mk_xor_rsvd = 1 + rnd(&e->t, 0xffff);
			bad = !e->rmark;	/* RFC 5044: reserved, ignored */
			break;
		case 5:
			mu.marker = 1;
			mu.drop_marker = true;
			break;
		default:
			mu.pad = true;
			bad = mpa_pad_len(len) != 0;
			break;
		}
		if (bad)
			e->valid = false;
	}
	n = enc_fpdu(w, e->rpos, e->rmark, e->rcrc, u, len, mp);
	if (pct(&e->t, 3)) {
		/* cut the FPDU short: the stream is out of step from here */
		n = rnd(&e->t, n);
		e->valid = false;
		e->trunc = true;
	}
	e->rpos += n;
	raw_queue(e, w, n);
}

/* ---- startup ---- */

static void choose_config(struct ex *e)
{
	__u32 r;

	e->mrole = pct(&e->t, 50) ? MPA_ROLE_INITIATOR : MPA_ROLE_RESPONDER;
	e->mflags = 0;
	if (pct(&e->t, 35))
		e->mflags |= MPA_F_MARKERS;
	if (opt.no_crc_ok && pct(&e->t, 25))
		e->mflags |= MPA_F_NO_CRC;
	r = rnd(&e->t, 100);
	if (r < 35) {
		e->mrev = 0;
		e->eff_rev = 1;
	} else if (r < 60) {
		e->mrev = 1;
		e->eff_rev = 1;
	} else if (r < 95) {
		e->mrev = 2;
		e->eff_rev = 2;
	} else {
		e->mrev = MPA_REV_RDMAC;
		e->eff_rev = 0;
		e->mflags &= ~MPA_F_NO_CRC;
	}
	if (e->mrev != MPA_REV_RDMAC && pct(&e->t, 10))
		e->mflags |= MPA_F_PERMISSIVE;
	if (e->eff_rev == 2) {
		if (pct(&e->t, 30))
			e->mflags |= MPA_F_P2P;
		if (pct(&e->t, 50))
			e->mflags |= MPA_F_RTR_WRITE;
		if (pct(&e->t, 30))
			e->mflags |= MPA_F_RTR_READ;
		if (pct(&e->t, 30))
			e->mflags |= MPA_F_RTR_SEND;
		e->mird = rnd(&e->t, 0x4000);
		e->mord = rnd(&e->t, 0x4000);
	}
	e->ddp = pct(&e->t, 60);
	r = rnd(&e->t, 100);
	e->end = r < 45 ? E_FIN : r < 70 ? E_RST : r < 80 ? E_OPEN : r < 92 ? E_FIN_EARLY :
		 E_RST_EARLY;
}

static int module_start(struct ex *e)
{
	__u8 pd[512 + 64];
	__u16 pd_len = 0;
	__u32 lsm_len = 0;
	size_t sz;
	struct mpa_start *s;
	__u32 tmo = pct(&e->t, 70) ? 300 + rnd(&e->t, 700) : 0;
	int ret;

	if (setsockopt(e->mfd, SOL_MPA, MPA_TIMEOUT, &tmo, sizeof(tmo))) {
		perr(e, "MPA_TIMEOUT");
		return -1;
	}
	/* half the cases, by a bit of the root that takes nothing off the tape */
	e->lens = (e->t.root >> 17) & 1;
	if (e->lens && setsockopt(e->mfd, SOL_MPA, MPA_RECV_LENS, &(__u32){ 1 },
				  sizeof(__u32))) {
		perr(e, "MPA_RECV_LENS");
		return -1;
	}
	if (e->mrole == MPA_ROLE_INITIATOR) {
		if (pct(&e->t, 40))
			pd_len = rnd(&e->t, (e->eff_rev == 2 ? 508 : 512) + 1);
	} else if (pct(&e->t, 15)) {
		lsm_len = 1 + rnd(&e->t, 64);
	}
	dt_fill(pd, pd_len + lsm_len, tget(&e->t));
	sz = sizeof(*s) + pd_len + lsm_len;
	s = calloc(1, sz);
	if (!s) {
		perr(e, "calloc");
		return -1;
	}
	s->role = e->mrole;
	s->flags = e->mflags;
	s->rev = e->mrev;
	s->pd_len = pd_len;
	s->lsm_len = lsm_len;
	s->ird = e->mird;
	s->ord = e->mord;
	memcpy(s->data, pd, pd_len + lsm_len);
	ret = setsockopt(e->mfd, SOL_MPA, MPA_START, s, sz);
	free(s);
	if (ret) {
		e->start_err = errno;
		vlog("MPA_START: %s\n", strerror(errno));
		return -1;
	}
	if (lsm_len) {
		__u8 got[64];

		if (iw_readn(e->rfd, got, lsm_len, 2000) != (ssize_t)lsm_len ||
		    memcmp(got, pd + pd_len, lsm_len))
			fail(e, "the last streaming message did not arrive intact");
	}
	return pd_len;
}

/* Read and check the module's Request or Reply; returns its flags or -1. */
static int read_module_frame(struct ex *e, bool request, int want_rev, bool want_reject,
			     __u8 *v2)
{
	__u8 h[20], pd[600];
	__u16 n;
	bool mk = e->mflags & MPA_F_MARKERS, crc = !(e->mflags & MPA_F_NO_CRC);

	if (iw_readn(e->rfd, h, 20, 2000) != 20)
		return -1;
	n = h[18] << 8 | h[19];
	if (memcmp(h, request ? MPA_WIRE_KEY_REQ : MPA_WIRE_KEY_REP, 16) || n > 512 ||
	    iw_readn(e->rfd, pd, n, 2000) != n) {
		fail(e, "the module's %s is malformed", request ? "Request" : "Reply");
		return -1;
	}
	/* a revision 0 frame has M and C set (RFC 5044 Appendix C) */
	if (want_rev == 0 || (want_rev < 0 && h[17] == 0)) {
		mk = true;
		crc = true;
	}
	if (want_rev >= 0 && h[17] != want_rev)
		fail(e, "the module's %s has revision %u, expected %d",
		     request ? "Request" : "Reply", h[17], want_rev);
	if (!!(h[16] & MPA_FLAG_M) != mk || !!(h[16] & MPA_FLAG_C) != crc ||
	    !!(h[16] & MPA_FLAG_R) != want_reject || (h[16] & MPA_FLAG_RES))
		fail(e, "the module's %s has flags %#x (markers %d crc %d reject %d)",
		     request ? "Request" : "Reply", h[16], mk, crc, want_reject);
	if (h[17] == 2 && !(h[16] & MPA_FLAG_E))
		fail(e, "the module's revision 2 frame has no enhanced data");
	if (h[17] == 2 && n >= 4 && v2)
		memcpy(v2, pd, 4);
	return h[16];
}

/* module Initiator, raw Responder */
static void startup_initiator(struct ex *e)
{
	__u8 f[600], pd[520], v2[4] = { 0 };
	__u8 rflags = MPA_FLAG_C, rrev;
	__u16 pd_len;
	size_t n;
	int mf;
	bool reject = pct(&e->t, 6);

	if (module_start(e) < 0)
		return;
	if (e->ddp && pct(&e->t, 30))
		do_bind(e);
	mf = read_module_frame(e, true, e->eff_rev, false, v2);
	if (mf < 0)
		return;
	if (pct(&e->t, 4)) {
		e->valid = false;	/* no Reply at all: the startup timeout */
		return;
	}
	if (pct(&e->t, 30))
		rflags |= MPA_FLAG_M;
	if (pct(&e->t, 30))
		rflags &= ~MPA_FLAG_C;
	if (reject)
		rflags |= MPA_FLAG_R;
	rrev = e->eff_rev;
	if (rrev == 2 && pct(&e->t, 20))
		rrev = 1;
	if (rrev == 0)
		rflags |= MPA_FLAG_M | MPA_FLAG_C;
	pd_len = pct(&e->t, 50) ? rnd(&e->t, 64) : 0;
	dt_fill(pd, sizeof(pd), tget(&e->t));
	if (rrev == 2) {
		__u16 qi = (v2[0] << 8 | v2[1]), qo = (v2[2] << 8 | v2[3]);
		__u16 ird = rnd(&e->t, (qo & MPA_V2_IRD_ORD_MASK) + 1);
		__u16 ord = rnd(&e->t, (qi & MPA_V2_IRD_ORD_MASK) + 1);

		if (qi & MPA_V2_P2P) {
			ird |= MPA_V2_P2P;
			/* one RTR type that was offered */
			if (qo & MPA_V2_RTR_WRITE)
				ord |= MPA_V2_RTR_WRITE;
			else if (qo & MPA_V2_RTR_READ)
				ord |= MPA_V2_RTR_READ;
			else
				ird |= MPA_V2_RTR_SEND;
		}
		rflags |= MPA_FLAG_E;
		memmove(pd + 4, pd, pd_len);
		put_v2(pd, ird, ord);
		pd_len += 4;
	}
	n = build_frame(f, false, rflags, rrev, pd_len, pd, pd_len);
	if (pct(&e->t, 30))
		n = mutate_frame(e, f, n, &pd_len);
	raw_queue(e, f, n);
	/* predicted: what this end sends and what the module sends */
	e->rmark = (e->mflags & MPA_F_MARKERS) || rrev == 0;
	e->want_mtx = (rflags & MPA_FLAG_M) || rrev == 0;
	e->rcrc = !(e->mflags & MPA_F_NO_CRC) || (rflags & MPA_FLAG_C);
	if (reject) {
		e->rejected_mode = true;
		if (pct(&e->t, 50)) {
			__u8 junk[100];

			dt_fill(junk, sizeof(junk), tget(&e->t));
			raw_queue(e, junk, sizeof(junk));
		}
	}
	raw_maybe_flush(e);
}

/* raw Initiator, module Responder */
static void startup_responder(struct ex *e)
{
	__u8 f[600], pd[520];
	__u8 qflags = MPA_FLAG_C, qrev = 1;
	__u16 pd_len, qird = 0, qord = 0;
	size_t n;
	int st, want_rev;
	bool reject = pct(&e->t, 6), early = pct(&e->t, 10);

	if (module_start(e) < 0)
		return;
	if (pct(&e->t, 30))
		qflags |= MPA_FLAG_M;
	if (pct(&e->t, 25))
		qflags &= ~MPA_FLAG_C;
	if (pct(&e->t, 45))
		qrev = 2;
	else if ((e->mflags & MPA_F_PERMISSIVE) && pct(&e->t, 30))
		qrev = 0;
	if (e->eff_rev == 0)
		qrev = 0;
	if (qrev == 0)
		qflags |= MPA_FLAG_M | MPA_FLAG_C;
	pd_len = pct(&e->t, 50) ? rnd(&e->t, 100) : 0;
	dt_fill(pd, sizeof(pd), tget(&e->t));
	if (qrev == 2 && pct(&e->t, 90)) {
		qird = rnd(&e->t, 0x4000);
		qord = rnd(&e->t, 0x4000);
		if (pct(&e->t, 30)) {
			qird |= MPA_V2_P2P;
			if (pct(&e->t, 60))
				qord |= MPA_V2_RTR_WRITE;
			if (pct(&e->t, 40))
				qord |= MPA_V2_RTR_READ;
			if (pct(&e->t, 40))
				qird |= MPA_V2_RTR_SEND;
		}
		qflags |= MPA_FLAG_E;
		memmove(pd + 4, pd, pd_len);
		put_v2(pd, qird, qord);
		pd_len += 4;
	}
	n = build_frame(f, true, qflags, qrev, pd_len, pd, pd_len);
	if (pct(&e->t, 30))
		n = mutate_frame(e, f, n, &pd_len);
	raw_queue(e, f, n);
	e->rmark = (e->mflags & MPA_F_MARKERS) || qrev == 0 || e->eff_rev == 0;
	e->want_mtx = (qflags & MPA_FLAG_M) || qrev == 0 || e->eff_rev == 0;
	e->rcrc = !(e->mflags & MPA_F_NO_CRC) || (qflags & MPA_FLAG_C) || qrev == 0;
	if (early) {
		/* FPDUs before the Reply: queued until the module accepts */
		raw_fpdu(e);
		if (pct(&e->t, 50))
			raw_fpdu(e);
	}
	raw_flush(e);
	st = wait_leave(e, MPA_S_REQ_WAIT, 1500);
	if (st != MPA_S_REQ_RCVD)
		return;
	if (e->ddp && pct(&e->t, 50)) {
		do_bind(e);
		if (pct(&e->t, 70))
			do_reg(e);
		while (pct(&e->t, 60))
			do_post(e);
	}
	dt_fill(pd, 64, tget(&e->t));
	n = rnd(&e->t, 65);
	if (!reject && setsockopt(e->mfd, SOL_MPA, MPA_ACCEPT, pd, n)) {
		e->accept_err = errno;
		vlog("MPA_ACCEPT: %s\n", strerror(errno));
		reject = true;
	}
	if (reject && setsockopt(e->mfd, SOL_MPA, MPA_REJECT, pd, n)) {
		e->accept_err = 1000 + errno;
		return;
	}
	want_rev = qrev < e->eff_rev ? qrev : e->eff_rev;
	if (qrev == 0)
		want_rev = 0;
	if (read_module_frame(e, false, e->valid ? want_rev : -1, reject, NULL) < 0 &&
	    e->valid)
		fail(e, "no Reply after %s", reject ? "MPA_REJECT" : "MPA_ACCEPT");
	if (reject)
		e->rejected_mode = true;
}

/* In full operation: check the negotiated parameters, adopt the module's view. */
static void full_check(struct ex *e)
{
	struct mpa_info i = iw_mpa_info_of(e->mfd);
	bool mk, crc;

	if (i.state != MPA_S_FULL)
		return;
	mk = i.flags & MPA_I_MARKERS_RX;
	crc = i.flags & MPA_I_CRC;
	if (e->valid && (mk != e->rmark || crc != e->rcrc))
		fail(e, "negotiated markers %d crc %d, RFC 5044 says %d %d", mk, crc,
		     e->rmark, e->rcrc);
	if (e->valid && !!(i.flags & MPA_I_MARKERS_TX) != e->want_mtx)
		fail(e, "the module sends markers: %d, the raw peer's frame asked %d",
		     !!(i.flags & MPA_I_MARKERS_TX), e->want_mtx);
	e->rmark = mk;
	e->rcrc = crc;
	/* from here the raw peer checks every FPDU the module sends */
	if (!e->mdec) {
		static __u8 mbuf[MPA_DEC_BUF_LEN];

		mpa_dec_init(&e->mrx, mbuf, i.flags & MPA_I_MARKERS_TX, crc);
		e->mdec = true;
	}
}

static void check_mtx(struct ex *e)
{
	int k = e->mtx_next++;
	__u32 len = e->mrx.ulpdu_len;

	if (e->mtx_other)
		return;	/* an unrecorded or failed send: the order is unknown */
	if (k < e->mtx_n) {
		if (len != e->mtx_len[k] || (e->mtx[k] && memcmp(e->mrx.buf, e->mtx[k], len)))
			fail(e, "the module's FPDU %d carries %u octets, not the %u sent", k, len,
			     e->mtx_len[k]);
	} else {
		fail(e, "the module sent FPDU %d (%u octets), but only %d were sent", k, len,
		     e->mtx_n);
	}
}

/* ---- end of an execution ---- */

static bool module_ended(struct ex *e)
{
	struct mpa_info i = iw_mpa_info_of(e->mfd);

	if (e->ended)
		return true;
	if (i.state == MPA_S_REJECTED)
		return e->sfd >= 0;
	return i.state == MPA_S_ERROR || i.error || (i.flags & MPA_I_PEER_FIN);
}

static void raw_end(struct ex *e)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	raw_flush(e);
	if (e->end == E_FIN || e->end == E_FIN_EARLY) {
		shutdown(e->rfd, SHUT_WR);
		e->raw_fin = true;
	} else if (e->end == E_RST || e->end == E_RST_EARLY) {
		setsockopt(e->rfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(e->rfd);
		e->rfd = -1;
		e->raw_closed = true;
	}
	vlog("raw end %d\n", e->end);
}

/* After a FIN or RST every connection must end within END_TMO_MS. */
static void wait_end(struct ex *e)
{
	long long end = iw_now_ms() + END_TMO_MS;
	int st = mstate(e);

	if (e->end == E_OPEN)
		return;
	/* a Responder waiting for the decision never ends by itself */
	if (st == MPA_S_REQ_RCVD || st == MPA_S_IDLE || st == 0xdead)
		return;
	for (;;) {
		read_events(e);
		if (e->sfd < 0)
			do_recv(e);	/* also after an unbind: MPA reads for user space */
		if (module_ended(e)) {
			cnt.end_checks++;
			return;
		}
		if (iw_now_ms() >= end)
			break;
		usleep(2000);
	}
	e->info = iw_mpa_info_of(e->mfd);
	fail(e, "connection did not end %d ms after %s: state %u error %u flags %#x",
	     END_TMO_MS, e->raw_closed ? "RST" : "FIN", e->info.state, e->info.error,
	     e->info.flags);
}

static void check_buffers(struct ex *e)
{
	long g;
	int i, j;

	if (e->sink_ok) {
		g = dt_gbuf_guards(&e->sink);
		if (g >= 0)
			fail(e, "write outside the registered buffer at map offset %ld", g);
		if (e->sink_frozen) {
			cnt.frozen++;
			for (j = 0; j < SINK_LEN; j++)
				if (e->sink.buf[j] != e->sink_frozen[j])
					break;
			if (j < SINK_LEN)
				fail(e, "sink octet %d changed after %s", j,
				     e->inval ? "INVALIDATE" : "the stream closed");
		}
		/* valid input: octets outside the regions sent keep the pattern */
		if (e->valid) {
			for (j = 0; j < SINK_LEN; j++) {
				int r = j / REGION, o = j % REGION;
				struct sent_msg *m = NULL;

				for (i = 0; i < e->nmsg; i++)
					if (e->msg[i].kind == K_TAGGED && e->msg[i].region == r)
						m = &e->msg[i];
				if (m && o < (int)m->plen && e->sink.buf[j] == m->payload[o])
					continue;
				if (e->sink.buf[j] != DDP_PATTERN) {
					fail(e, "sink octet %d written by no tagged message", j);
					break;
				}
			}
		}
	}
	for (i = 0; i < e->nposted; i++) {
		struct posted *p = &e->post[i];

		g = dt_gbuf_guards(&p->g);
		if (g >= 0)
			fail(e, "write outside posted buffer %d at map offset %ld", i, g);
		if (p->frozen && memcmp(p->frozen, p->g.buf, RBUF_LEN))
			fail(e, "posted buffer %d changed after the stream closed", i);
	}
}

static __u32 bucket(__u64 v)
{
	return v == 0 ? 0 : v == 1 ? 1 : v < 4 ? 2 : v < 8 ? 3 : 4;
}

static __u64 signature(struct ex *e)
{
	__u32 f[20];
	__u64 h = 1469598103934665603ULL;
	unsigned int i, n = 0;
	const __u8 *p = (const __u8 *)f;

	f[n++] = e->mrole;
	f[n++] = e->info.state;
	f[n++] = e->info.error;
	f[n++] = e->info.flags & (MPA_I_PEER_FIN | MPA_I_REJECTED | MPA_I_CRC | MPA_I_MARKERS_RX);
	f[n++] = bucket(e->st.rx_fpdus) | bucket(e->st.tx_fpdus) << 4 |
		 bucket(e->st.rx_crc_errors) << 8 | bucket(e->st.rx_marker_errors) << 12 |
		 bucket(e->nrecv) << 16 | bucket(e->nev_tagged) << 20 | bucket(e->nev_recv) << 24;
	f[n++] = e->ev_mask;
	f[n++] = e->first_err;
	f[n++] = e->start_err | e->accept_err << 12;
	f[n++] = e->bind_err | e->reg_err << 8 | e->post_err << 16 | e->inval_err << 24;
	f[n++] = e->recv_errno | e->send_errno << 8 | e->ddpsend_errno << 16;
	f[n++] = e->end | e->ended << 4 | e->info.rev << 8;
	for (i = 0; i < n * 4; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void describe(struct ex *e, char *buf, size_t len)
{
	int o;

	o = snprintf(buf, len, "role %s state %u error %u flags %#x rev %u ",
		     e->mrole == MPA_ROLE_INITIATOR ? "I" : "R", e->info.state,
		     e->info.error, e->info.flags, e->info.rev);
	o += snprintf(buf + o, len - o, "rx_fpdus %llu crc_err %llu marker_err %llu ",
		      (unsigned long long)e->st.rx_fpdus,
		      (unsigned long long)e->st.rx_crc_errors,
		      (unsigned long long)e->st.rx_marker_errors);
	o += snprintf(buf + o, len - o, "tx_fpdus %llu recv %d ev %#x ddp_err %#x ",
		      (unsigned long long)e->st.tx_fpdus, e->nrecv, e->ev_mask, e->first_err);
	snprintf(buf + o, len - o, "start_err %d accept_err %d bind_err %d recv_errno %d end %d",
		 e->start_err, e->accept_err, e->bind_err, e->recv_errno, e->end);
}

/* ---- saving cases ---- */

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	int fd;
	ssize_t w;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	w = write(fd, p, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

#define WF_STR(x)	#x
#define WF_XSTR(x)	WF_STR(x)
#define WF_VERSION_STR	WF_XSTR(WF_GEN_VERSION) "\n"

/* DIR/<chain>/{seed,version,reason,wire.bin}; async-signal-safe enough for the watchdog */
static void save_case(struct ex *e, const char *why)
{
	char dir[4096];

	if (!opt.save)
		return;
	mkdir(opt.save, 0755);
	snprintf(dir, sizeof(dir), "%s/%s", opt.save, e->name);
	mkdir(dir, 0755);
	write_file(dir, "seed", e->name, strlen(e->name));
	write_file(dir, "version", WF_VERSION_STR, strlen(WF_VERSION_STR));
	write_file(dir, "reason", why, strlen(why));
	write_file(dir, "wire.bin", e->wire, e->wlen);
}

/*
 * DIR/.running names the execution in progress, so that the seed of an
 * execution that crashed the kernel is known after the VM died.
 */
static void note_running(struct ex *e)
{
	if (!opt.save)
		return;
	mkdir(opt.save, 0755);
	write_file(opt.save, ".running", e->name, strlen(e->name));
}

static void watchdog(int sig)
{
	static char msg[1024];
	int n;

	if (!cur)
		_exit(1);
	n = snprintf(msg, sizeof(msg),
		     "stuck: execution %s did not finish within %d s\n",
		     cur->name, EXEC_LIMIT_S);
	if (write(1, "# ", 2) < 0 || write(1, msg, n) < 0)
		_exit(1);
	save_case(cur, msg);
	if (write(1, "not ok 1 wirefuzz # stuck\n", 26) < 0)
		_exit(1);
	_exit(1);
}

/* ---- running one execution ---- */

static int pair(struct ex *e)
{
	int fds[2], one = 1;
	bool mod_connects = pct(&e->t, 50);
	struct timeval tv = { .tv_sec = 2 };

	if (iw_loopback_pair(pct(&e->t, 80) ? AF_INET : AF_INET6, fds))
		return -1;
	e->mfd = fds[mod_connects ? 0 : 1];
	e->rfd = fds[mod_connects ? 1 : 0];
	setsockopt(e->rfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(e->mfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(e->mfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return 0;
}

/* Read what the module sent; in full operation decode and check it. */
static void drain_raw(struct ex *e)
{
	__u8 buf[4096];
	__u32 off, used;
	ssize_t n;
	int ev;

	if (e->rfd < 0)
		return;
	while ((n = recv(e->rfd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (off = 0; e->mdec && off < n; off += used) {
			ev = mpa_dec_feed(&e->mrx, buf + off, n - off, &used);
			if (ev == MPA_DEC_ULPDU) {
				check_mtx(e);
			} else if (ev == MPA_DEC_ERROR) {
				fail(e, "the module sent an invalid FPDU: MPA error %u at octet %u",
				     e->mrx.err, e->mrx.pos);
				e->mdec = false;
			} else {
				break;
			}
		}
	}
}

/* ---- concurrency: the raw peer writes while the consumer acts ---- */

#define MAX_PIECES	16

struct writer {
	struct ex *e;
	size_t	off[MAX_PIECES + 1];
	__u32	sleep_us[MAX_PIECES];
	int	n;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	int i;

	for (i = 0; i < w->n; i++) {
		raw_write(w->e, w->e->pend + w->off[i], w->off[i + 1] - w->off[i]);
		usleep(w->sleep_us[i]);
	}
	return NULL;
}

/*
 * The FPDUs are built first (from the tape, in this thread), then a
 * second thread writes them in pieces while this one binds, registers,
 * posts, invalidates and unbinds: placement in softirq on one CPU races
 * with the ioctls on the other.
 */
static void concurrent_phase(struct ex *e, int n)
{
	struct writer w = { .e = e };
	pthread_t th;
	int i, steps;

	raw_flush(e);
	for (i = 0; i < n && e->nmsg < MAX_ULPDUS; i++)
		raw_fpdu(e);
	w.n = 1 + rnd(&e->t, MAX_PIECES);
	for (i = 0; i < w.n; i++) {
		w.off[i] = i ? w.off[i - 1] + rnd(&e->t, e->npend - w.off[i - 1] + 1) : 0;
		w.sleep_us[i] = rnd(&e->t, 4) * 500;
	}
	w.off[w.n] = e->npend;
	steps = 2 + rnd(&e->t, 8);
	vlog("concurrent: %d pieces, %d consumer steps\n", w.n, steps);
	if (pthread_create(&th, NULL, writer_main, &w)) {
		perr(e, "pthread_create");
		return;
	}
	while (steps--) {
		switch (rnd(&e->t, 8)) {
		case 0:
			do_bind(e);
			break;
		case 1:
			do_reg(e);
			break;
		case 2:
			do_post(e);
			break;
		case 3:
			do_inval(e);
			break;
		case 4:
			do_unbind(e);
			break;
		case 5:
			do_msend(e);
			break;
		default:
			read_events(e);
			break;
		}
		usleep(rnd(&e->t, 5) * 300);
	}
	pthread_join(th, NULL);
	e->npend = 0;
}

/* the state of the last execution; its name and wire image stay valid */
static struct ex ex_for_save;

/* Run the execution of @r; returns its signature, *failed set on failure. */
static __u64 run_one(const struct recipe *r, bool *failed, char *why, size_t whylen)
{
	static __u8 pend[WIRE_CAP], wire[WIRE_CAP];
	struct ex *e = &ex_for_save;
	int i, n, st;
	__u64 sig;

	memset(e, 0, sizeof(*e));
	e->r = *r;
	recipe_str(r, e->name, sizeof(e->name));
	tape_build(&e->t, r);
	e->pend = pend;
	e->wire = wire;
	e->mfd = -1;
	e->rfd = -1;
	e->pd = -1;
	e->sfd = -1;
	e->valid = true;
	cur = e;
	note_running(e);
	alarm(EXEC_LIMIT_S);

	choose_config(e);
	vlog("exec %s role %d flags %#x rev %#x ddp %d end %d\n", e->name, e->mrole,
	     e->mflags, e->mrev, e->ddp, e->end);
	if (pair(e)) {
		perr(e, "loopback pair");
		goto out;
	}
	if (iw_mpa_attach(e->mfd)) {
		perr(e, "TCP_ULP mpa");
		goto out;
	}
	if (e->ddp) {
		e->pd = iw_ddp_open();
		if (e->pd < 0) {
			perr(e, "open /dev/ddp");
			goto out;
		}
		e->sink_ok = !dt_gbuf_alloc(&e->sink, SINK_LEN, 0);
		if (!e->sink_ok)
			perr(e, "mmap");
		if (pct(&e->t, 70))
			do_reg(e);
	}
	if (e->mrole == MPA_ROLE_INITIATOR)
		startup_initiator(e);
	else
		startup_responder(e);

	n = rnd(&e->t, MAX_ULPDUS + 1);
	st = e->start_err ? -1 : mstate(e);
	if (e->mrole == MPA_ROLE_INITIATOR && st == MPA_S_REQ_SENT) {
		raw_flush(e);
		st = wait_leave(e, MPA_S_REQ_SENT, e->valid ? 1500 : 50);
	}
	if (st == MPA_S_FULL) {
		cnt.full++;
		full_check(e);
		if (pct(&e->t, 3)) {
			e->rmark = !e->rmark;	/* disagree with the negotiation */
			e->valid = false;
		}
	}
	if (e->rejected_mode || st < 0 || st == MPA_S_ERROR)
		n = pct(&e->t, 30) ? 1 : 0;
	if (e->ddp && st == MPA_S_FULL && pct(&e->t, 50)) {
		/* a consumer that sets up before the data comes */
		do_bind(e);
		if (pct(&e->t, 80))
			do_reg(e);
		while (pct(&e->t, 60))
			do_post(e);
	}
	if (e->ddp && n && !e->rejected_mode && pct(&e->t, 30)) {
		concurrent_phase(e, n);
		n = 0;
	}
	for (i = 0; i < n && e->nmsg < MAX_ULPDUS; i++) {
		if ((e->end == E_FIN_EARLY || e->end == E_RST_EARLY) && pct(&e->t, 25))
			break;
		consumer_step(e);
		if (e->rejected_mode) {
			__u8 junk[64];

			dt_fill(junk, sizeof(junk), i);
			raw_queue(e, junk, rnd(&e->t, sizeof(junk)));
		} else {
			raw_fpdu(e);
		}
		raw_maybe_flush(e);
		if (pct(&e->t, 20))
			drain_raw(e);
	}
	if (e->end == E_FIN_EARLY || e->end == E_RST_EARLY) {
		/* the end falls inside an FPDU or a frame */
		if (e->npend && pct(&e->t, 60)) {
			e->npend = rnd(&e->t, e->npend);
			e->valid = false;
			e->trunc = true;
		}
	}
	raw_flush(e);
	consumer_step(e);
	/* let the module catch up, then let user space take what is there */
	usleep(2000);
	drain_raw(e);
	if (!e->ddp || e->sfd < 0)
		do_recv(e);
	read_events(e);
	raw_end(e);
	wait_end(e);
	read_events(e);
	if (e->sfd < 0)
		do_recv(e);
	/* valid, graceful, never bound: every ULPDU reached user space */
	if (e->valid && !e->trunc && !e->ddp && e->end == E_FIN && !e->rejected_mode &&
	    mstate(e) == MPA_S_FULL) {
		if (e->recv_next != e->nmsg)
			fail(e, "%d ULPDUs sent, %d received", e->nmsg, e->recv_next);
		else
			cnt.all_recv++;
	}
out:
	if (e->mfd >= 0) {
		e->info = iw_mpa_info_of(e->mfd);
		e->st = iw_mpa_stats_of(e->mfd);
	}
	if (e->sfd >= 0)
		do_unbind(e);
	check_buffers(e);
	if (e->pd >= 0)
		close(e->pd);
	if (e->mfd >= 0)
		close(e->mfd);
	if (e->rfd >= 0)
		close(e->rfd);
	dt_gbuf_free(&e->sink);
	for (i = 0; i < e->nposted; i++) {
		dt_gbuf_free(&e->post[i].g);
		free(e->post[i].frozen);
	}
	free(e->sink_frozen);
	for (i = 0; i < e->nmsg; i++)
		free(e->msg[i].data);
	for (i = 0; i < e->mtx_n; i++)
		free(e->mtx[i]);
	alarm(0);
	if (e->valid)
		cnt.valid++;
	sig = signature(e);
	*failed = e->fail[0];
	if (*failed) {
		snprintf(why, whylen, "%.500s", e->fail);
		save_case(e, e->fail);
	}
	if (opt.verbose >= 1 || *failed) {
		char d[512];

		describe(e, d, sizeof(d));
		printf("# %s %s: %s%s%s\n", *failed ? "FAIL" : "exec", e->name, d,
		       *failed ? " -- " : "", *failed ? e->fail : "");
	}
	cur = NULL;
	return sig;
}

/* ---- the fuzz loop ---- */

struct centry {
	struct recipe r;
	__u32	picked;
};

static __u64 sigs[SIGS_MAX];
static int nsigs;
static struct centry corpus[CORPUS_MAX];
static int ncorpus;

static bool sig_add(__u64 s)
{
	unsigned int i = s % SIGS_MAX;

	if (!s)
		s = 1;
	while (sigs[i]) {
		if (sigs[i] == s)
			return false;
		i = (i + 1) % SIGS_MAX;
	}
	if (nsigs >= SIGS_MAX / 2)
		return false;
	sigs[i] = s;
	nsigs++;
	return true;
}

struct failure {
	char	name[MAX_CHAIN * 17 + 1];
	char	why[512];
};

#define MAX_FAILURES 32
static struct failure failures[MAX_FAILURES];
static int nfail;

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_json(long execs, double secs, int replayed, int replay_failed)
{
	FILE *f = strcmp(opt.json, "-") ? fopen(opt.json, "w") : stdout;
	int i;

	if (!f) {
		ksft_print_msg("cannot write %s: %s\n", opt.json, strerror(errno));
		return;
	}
	fprintf(f, "{\"executions\": %ld, \"seconds\": %.1f, \"executions_per_s\": %.2f, ",
		execs, secs, secs > 0 ? execs / secs : 0.0);
	fprintf(f, "\"distinct_outcomes\": %d, \"corpus\": %d, \"master_seed\": \"%llx\", ",
		nsigs, ncorpus, (unsigned long long)opt.master);
	fprintf(f, "\"replayed\": %d, \"replay_failures\": %d, \"failures\": [", replayed,
		replay_failed);
	for (i = 0; i < nfail; i++) {
		fprintf(f, "%s{\"seed\": ", i ? ", " : "");
		json_str(f, failures[i].name);
		fprintf(f, ", \"reason\": ");
		json_str(f, failures[i].why);
		fputc('}', f);
	}
	fprintf(f, "], \"checked\": {\"valid_executions\": %ld, \"full_operation\": %ld, ",
		cnt.valid, cnt.full);
	fprintf(f, "\"recv_ulpdus\": %ld, \"tagged_messages\": %ld, ", cnt.recv_ok, cnt.tagged_ok);
	fprintf(f, "\"untagged_messages\": %ld, \"ends_after_fin_rst\": %ld, ", cnt.untagged_ok,
		cnt.end_checks);
	fprintf(f, "\"frozen_buffers\": %ld, \"all_ulpdus_received\": %ld}}\n", cnt.frozen,
		cnt.all_recv);
	if (f != stdout)
		fclose(f);
}

static long fuzz(int seconds, double *elapsed)
{
	long long t0 = iw_now_ms(), end = t0 + seconds * 1000LL, last = t0;
	__u64 ms = opt.master;
	long execs = 0;
	char why[512];

	while (iw_now_ms() < end) {
		struct recipe r;
		bool failed;
		__u64 sig;

		if (!ncorpus || splitmix(&ms) % 100 < 25) {
			r.depth = 1;
			r.seed[0] = splitmix(&ms);
		} else {
			/* favour entries picked less often */
			struct centry *c = &corpus[splitmix(&ms) % ncorpus];
			struct centry *d = &corpus[splitmix(&ms) % ncorpus];

			if (d->picked < c->picked)
				c = d;
			c->picked++;
			r = c->r;
			if (r.depth < MAX_CHAIN)
				r.seed[r.depth++] = splitmix(&ms);
			else
				r.seed[MAX_CHAIN - 1] = splitmix(&ms);
		}
		sig = run_one(&r, &failed, why, sizeof(why));
		execs++;
		if (sig_add(sig) && ncorpus < CORPUS_MAX) {
			corpus[ncorpus].r = r;
			corpus[ncorpus].picked = 0;
			ncorpus++;
		}
		if (failed && nfail < MAX_FAILURES) {
			recipe_str(&r, failures[nfail].name, sizeof(failures[nfail].name));
			snprintf(failures[nfail].why, sizeof(failures[nfail].why), "%s", why);
			nfail++;
		}
		if (iw_now_ms() - last >= 30000) {
			last = iw_now_ms();
			ksft_print_msg("%lld s: %ld executions, %d outcomes, %d failures\n",
				       (last - t0) / 1000, execs, nsigs, nfail);
		}
	}
	*elapsed = (iw_now_ms() - t0) / 1000.0;
	return execs;
}

/*
 * --state FILE: the outcome signatures ("s HEX") and the corpus ("c CHAIN")
 * of earlier runs, loaded at start and written back at the end, so that
 * tools/fuzz-soak continues one campaign over several VM runs.
 */
static void state_load(const char *path)
{
	char line[MAX_CHAIN * 17 + 8];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == 's' && line[1] == ' ') {
			sig_add(strtoull(line + 2, NULL, 16));
		} else if (line[0] == 'c' && line[1] == ' ' && ncorpus < CORPUS_MAX) {
			if (!recipe_parse(line + 2, &corpus[ncorpus].r)) {
				corpus[ncorpus].picked = 0;
				ncorpus++;
			}
		}
	}
	fclose(f);
}

static void state_save(const char *path)
{
	char tmp[4096], name[MAX_CHAIN * 17 + 1];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (i = 0; i < SIGS_MAX; i++)
		if (sigs[i])
			fprintf(f, "s %llx\n", (unsigned long long)sigs[i]);
	for (i = 0; i < ncorpus; i++) {
		recipe_str(&corpus[i].r, name, sizeof(name));
		fprintf(f, "c %s\n", name);
	}
	if (fclose(f) == 0)
		rename(tmp, path);
}

static int replay_dir(const char *dir, bool count_only, int *failed_out)
{
	struct dirent **ents;
	int n, i, cases = 0;

	*failed_out = 0;
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		char path[4096], buf[512] = "", why[512];
		struct recipe r;
		bool failed;
		int fd;
		ssize_t got;

		if (ents[i]->d_name[0] == '.')
			goto next;
		snprintf(path, sizeof(path), "%s/%s/seed", dir, ents[i]->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			goto next;
		got = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (got <= 0 || recipe_parse(buf, &r))
			goto next;
		cases++;
		if (count_only)
			goto next;
		snprintf(path, sizeof(path), "%s/%s/version", dir, ents[i]->d_name);
		fd = open(path, O_RDONLY);
		got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (got > 0 && atoi(buf) != WF_GEN_VERSION) {
			ksft_test_result_skip("replay %s: generator version %d, not %d\n",
					      ents[i]->d_name, atoi(buf), WF_GEN_VERSION);
			goto next;
		}
		run_one(&r, &failed, why, sizeof(why));
		if (failed)
			(*failed_out)++;
		ksft_test_result(!failed, "replay %s%s%s\n", ents[i]->d_name,
				 failed ? ": " : "", failed ? why : "");
next:
		free(ents[i]);
	}
	free(ents);
	return cases;
}

static const char *const usage_text[] = {
	"Usage: mpa_wirefuzz [options]",
	"Live wire fuzzer of mpa.ko and ddp.ko over loopback (needs both loaded, root).",
	"Without options: fuzz for 120 s, then replay the cases in wirefuzz-cases/.",
	"Output is TAP: one test for the fuzz run, one per replayed case.",
	"",
	"  --seconds N     fuzz for N seconds (0: no fuzzing)",
	"  --seed CHAIN    run the one execution CHAIN (hex, ROOT[+MUT...]) verbosely;",
	"                  with --save it is saved as a case whatever its outcome",
	"  --save DIR      save each failing execution as DIR/CHAIN/{seed,reason,wire.bin};",
	"                  DIR/.running names the execution in progress",
	"  --replay DIR    replay the saved cases in DIR (one TAP test each)",
	"  --json FILE     write a JSON summary (executions, executions_per_s,",
	"                  distinct_outcomes, failures, checks); - for stdout",
	"  --master S      seed of the scheduler (hex; default from the clock)",
	"  --state FILE    load and save the outcome set and the corpus (one campaign",
	"                  over several runs)",
	"  -v              print every execution's outcome (-vv: every step)",
	"  -h, --help      this text",
};

static void usage(FILE *f)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(usage_text); i++)
		fprintf(f, "%s\n", usage_text[i]);
}

static int set_no_crc(int v)
{
	return mt_allow_no_crc(v);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "save", required_argument, NULL, 'o' },
		{ "replay", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "master", required_argument, NULL, 'm' },
		{ "state", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *replay;
	int c, old_no_crc, ncases = 0, rfail = 0, probe[2];
	long execs = 0;
	double secs = 0;
	bool deflt = argc == 1;

	opt.master = iw_now_ms() ^ ((__u64)getpid() << 32);
	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.seconds = atoi(optarg);
			break;
		case 'S':
			opt.seed = optarg;
			break;
		case 'o':
			opt.save = optarg;
			break;
		case 'r':
			opt.replay = optarg;
			break;
		case 'j':
			opt.json = optarg;
			break;
		case 'm':
			opt.master = strtoull(optarg, NULL, 16);
			break;
		case 't':
			opt.state = optarg;
			break;
		case 'v':
			opt.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (deflt) {
		opt.seconds = 120;
		opt.replay = "wirefuzz-cases";
	}
	if (opt.seconds < 0)
		opt.seconds = opt.seed || opt.replay ? 0 : 120;
	replay = opt.replay;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, watchdog);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();

	/* skip without the modules */
	if (iw_loopback_pair(AF_INET, probe))
		ksft_exit_fail_msg("no loopback pair: %s\n", strerror(errno));
	if (iw_mpa_attach(probe[0]))
		ksft_exit_skip("mpa.ko not loaded: %s\n", strerror(errno));
	close(probe[0]);
	close(probe[1]);
	if (access("/dev/ddp", R_OK | W_OK))
		ksft_exit_skip("/dev/ddp: %s\n", strerror(errno));
	if (enc_selftest())
		ksft_exit_fail_msg("the FPDU encoder disagrees with mpa_fpdu_encode()\n");
	old_no_crc = set_no_crc(1);
	opt.no_crc_ok = old_no_crc >= 0;

	if (opt.seed) {
		struct recipe r;
		bool failed;
		char why[512];

		if (recipe_parse(opt.seed, &r))
			ksft_exit_fail_msg("bad --seed %s\n", opt.seed);
		ksft_set_plan(1);
		if (!opt.verbose)
			opt.verbose = 2;
		run_one(&r, &failed, why, sizeof(why));
		if (!failed && opt.save) {
			cur = &ex_for_save;
			save_case(cur, "passed (saved with --seed)");
			cur = NULL;
		}
		if (failed && nfail < MAX_FAILURES) {
			recipe_str(&r, failures[nfail].name, sizeof(failures[nfail].name));
			snprintf(failures[nfail].why, sizeof(failures[nfail].why), "%s", why);
			nfail++;
		}
		ksft_test_result(!failed, "execution %s%s%s\n", opt.seed, failed ? ": " : "",
				 failed ? why : "");
		execs = 1;
	} else {
		if (replay)
			ncases = replay_dir(replay, true, &rfail);
		ksft_set_plan((opt.seconds > 0) + ncases);
		if (opt.seconds > 0 && opt.state)
			state_load(opt.state);
		if (opt.seconds > 0) {
			ksft_print_msg("fuzzing %d s, master seed %llx\n", opt.seconds,
				       (unsigned long long)opt.master);
			execs = fuzz(opt.seconds, &secs);
			ksft_print_msg("%ld executions in %.0f s (%.2f/s), %d distinct outcomes, ",
				       execs, secs, secs > 0 ? execs / secs : 0.0, nsigs);
			printf("corpus %d, %d failures\n", ncorpus, nfail);
			ksft_print_msg("checked: %ld valid executions, %ld in full operation\n",
				       cnt.valid, cnt.full);
			ksft_print_msg("checked: %ld ULPDUs recv()d, %ld tagged, %ld untagged\n",
				       cnt.recv_ok, cnt.tagged_ok, cnt.untagged_ok);
			ksft_print_msg("checked: %ld ends, %ld frozen buffers, %ld all received\n",
				       cnt.end_checks, cnt.frozen, cnt.all_recv);
			for (c = 0; c < nfail; c++)
				ksft_print_msg("failure: --seed %s: %s\n", failures[c].name,
					       failures[c].why);
			if (opt.state)
				state_save(opt.state);
			ksft_test_result(!nfail,
					 "wirefuzz %d s: %ld executions, %d outcomes, %d failures\n",
					 opt.seconds, execs, nsigs, nfail);
		}
		if (replay && ncases)
			replay_dir(replay, false, &rfail);
	}
	if (old_no_crc >= 0)
		set_no_crc(old_no_crc);
	if (opt.json)
		write_json(execs, secs, ncases, rfail);
	ksft_finished();
	return 0;
}
