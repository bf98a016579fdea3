// SPDX-License-Identifier: GPL-2.0
/*
 * ddp-xfer - copy a file with one DDP (RFC 5041) tagged write over MPA.
 *
 * A complete, small Upper Layer Protocol on top of /dev/ddp:
 *
 *   source (MPA Initiator)                 sink (MPA Responder, -l)
 *   MPA Request, private data = HELLO  ->  learns the file size, accepts
 *   zero-length tagged message ("RTR") ->  first FPDU: the sink may send
 *                                          registers a buffer of that size
 *                                      <-  ADV (STag, TO, length), QN 0
 *   tagged writes, <= 16 MiB each      ->  placed straight into the buffer
 *   DONE (size, SHA-256), QN 0         ->  checks the data
 *                                      <-  RESULT (status, SHA-256), QN 0
 *   graceful close                    <->  graceful close
 *
 * The untagged messages carry their type in RsvdULP[0]. See ddp-xfer(1)
 * and Documentation/ddp.rst.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/ddp.h>
#include <linux/iwarp_wire.h>
#include <linux/mpa.h>

#include "libiwarp.h"

/*
 * exit statuses: IW_EXIT_DDP, IW_EXIT_LLP, IW_EXIT_MISMATCH (the SHA-256 of
 * the received data differs), IW_EXIT_PROTO, IW_EXIT_SYS, IW_EXIT_USAGE
 */

#define XFER_MAGIC	0x44445846U	/* "DDXF" */
#define XFER_VERSION	1U
#define XFER_MAX_SIZE	0x100000000ULL	/* DDP_IOC_REG_MR limit: 4 GiB */
#define XFER_CHUNK	(16U << 20)	/* octets per tagged message */
#define XFER_BASE_TO	0x10000ULL	/* the sink's choice: any TO will do */
#define SHA256_LEN	32

/* RsvdULP[0] of the untagged messages */
enum xfer_type {
	XFER_ADV = 1,
	XFER_DONE,
	XFER_RESULT,
};

/* all fields big-endian */
struct xfer_hello {		/* MPA Request private data */
	__be32	magic;
	__be32	version;
	__be64	size;
};

struct xfer_adv {		/* sink -> source: where to write */
	__be32	stag;
	__be32	pad;
	__be64	to;
	__be64	len;
};

struct xfer_done {		/* source -> sink: all written */
	__be64	size;
	__u8	sha[SHA256_LEN];
};

struct xfer_result {		/* sink -> source: what it got */
	__be32	ok;
	__be32	pad;
	__u8	sha[SHA256_LEN];
};

struct opts {
	int listen;
	int family;
	unsigned int flags;
	int timeout_ms;
	int hold_ms;
	int verbose;
	const char *host;
	const char *port;
};

static struct opts o = { .family = AF_INET, .timeout_ms = 60000 };

/* ---- SHA-256 (FIPS 180-4) ---- */

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	unsigned int n;
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static void sha256_block(struct sha256 *c, const uint8_t *p)
{
	uint32_t w[64], v[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ w[i - 15] >> 3) +
		       (ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ w[i - 2] >> 10);
	memcpy(v, c->h, sizeof(v));
	for (i = 0; i < 64; i++) {
		t1 = v[7] + (ror32(v[4], 6) ^ ror32(v[4], 11) ^ ror32(v[4], 25)) +
		     ((v[4] & v[5]) ^ (~v[4] & v[6])) + sha256_k[i] + w[i];
		t2 = (ror32(v[0], 2) ^ ror32(v[0], 13) ^ ror32(v[0], 22)) +
		     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		c->h[i] += v[i];
}

static void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->n = 0;
}

static void sha256_update(struct sha256 *c, const uint8_t *p, size_t len)
{
	size_t k;

	c->len += len;
	while (len) {
		if (!c->n && len >= 64) {
			sha256_block(c, p);
			p += 64;
			len -= 64;
			continue;
		}
		k = 64 - c->n < len ? 64 - c->n : len;
		memcpy(c->buf + c->n, p, k);
		c->n += k;
		p += k;
		len -= k;
		if (c->n == 64) {
			sha256_block(c, c->buf);
			c->n = 0;
		}
	}
}

static void sha256_final(struct sha256 *c, uint8_t out[SHA256_LEN])
{
	uint64_t bits = c->len * 8;
	uint8_t pad = 0x80;
	int i;

	sha256_update(c, &pad, 1);
	pad = 0;
	while (c->n != 56)
		sha256_update(c, &pad, 1);
	for (i = 7; i >= 0; i--) {
		pad = bits >> (8 * i);
		sha256_update(c, &pad, 1);
	}
	for (i = 0; i < 8; i++) {
		out[4 * i] = c->h[i] >> 24;
		out[4 * i + 1] = c->h[i] >> 16;
		out[4 * i + 2] = c->h[i] >> 8;
		out[4 * i + 3] = c->h[i];
	}
}

static void sha256(const void *p, size_t len, uint8_t out[SHA256_LEN])
{
	struct sha256 c;

	sha256_init(&c);
	sha256_update(&c, p, len);
	sha256_final(&c, out);
}

static const char *hex(const uint8_t *p, size_t len)
{
	static char buf[2 * SHA256_LEN + 1];
	size_t i;

	for (i = 0; i < len && i < SHA256_LEN; i++)
		sprintf(buf + 2 * i, "%02x", p[i]);
	return buf;
}

/* ---- messages and errors ---- */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: ddp-xfer [-m] [-6] [-t SEC] [-H SEC] [-v] HOST PORT < INFILE     (source)\n"
		"       ddp-xfer -l [-m] [-6] [-t SEC] [-H SEC] [-v] HOST PORT > OUTFILE (sink)\n"
		"  -l       listen on HOST PORT, receive one file (MPA Responder)\n"
		"  -m       require MPA markers on what this end receives\n"
		"  -6       use IPv6 (default IPv4)\n"
		"  -t SEC   give up after SEC seconds without progress (default 60, 0: never)\n"
		"  -H SEC   after the transfer, keep the stream open SEC seconds before\n"
		"           closing (to look at it with iwarp-ss)\n"
		"  -v       print the protocol steps and the MPA statistics\n"
		"  --help   this text\n"
		"  --version  print the version\n"
		"Exit status: 0 success, 1 DDP error, 2 usage, 3 SHA-256 mismatch,\n"
		"4 protocol error or rejected, 6 MPA error, 10 system error.\n");
}

#define verbose(...)	iw_msg_if(o.verbose, __VA_ARGS__)

static void die_proto(const char *what)
{
	iw_msg("protocol error: %s", what);
	exit(IW_EXIT_PROTO);
}

/* A DDP_EV_ERROR: the stream stopped for good. */
static void die_ddp(const struct ddp_event *ev)
{
	if (ev->err_type == DDP_WIRE_ETYPE_LLP) {
		iw_msg("MPA error %u (%s): the DDP stream stopped", ev->err_code,
		       iw_mpa_err_name(ev->err_code));
		exit(IW_EXIT_LLP);
	}
	iw_msg("DDP error type 0x%x code 0x%02x (%s), segment length %u",
	       ev->err_type, ev->err_code,
	       iw_ddp_err_name(ev->err_type, ev->err_code), ev->len);
	if (ev->hdr_len)
		iw_msg("offending DDP header: %s",
		       hex(ev->hdr, ev->hdr_len < sizeof(ev->hdr) ? ev->hdr_len :
			   sizeof(ev->hdr)));
	exit(IW_EXIT_DDP);
}

/* A socket call failed: name the MPA error if there is one. */
static void die_mpa(int fd, const char *what)
{
	int err = errno;
	__u32 code = iw_mpa_error(fd);

	if (code && code != IW_MPA_INVALID) {
		iw_msg("%s: MPA error %u (%s): %s", what, code, iw_mpa_err_name(code),
		       strerror(err));
		exit(IW_EXIT_LLP);
	}
	iw_msg("%s: %s", what, strerror(err));
	exit(IW_EXIT_SYS);
}

static void print_stats(int fd)
{
	struct mpa_stats st;

	if (!o.verbose || iw_mpa_stats(fd, &st))
		return;
	iw_msg("MPA tx %llu FPDUs %llu octets %llu markers, rx %llu FPDUs %llu octets %llu markers",
	       (unsigned long long)st.tx_fpdus, (unsigned long long)st.tx_octets,
	       (unsigned long long)st.tx_markers, (unsigned long long)st.rx_fpdus,
	       (unsigned long long)st.rx_octets, (unsigned long long)st.rx_markers);
}

/* ---- connection and MPA startup ---- */

static int open_socket(void)
{
	char err[256];
	int fd;

	fd = iw_tcp_open(o.host, o.port, o.family, o.listen, err, sizeof(err));
	if (fd < 0) {
		iw_msg("%s", err);
		exit(IW_EXIT_SYS);
	}
	return fd;
}

/* Attach MPA and send the Request (source) or wait for it (sink). */
static void mpa_startup(int fd, const void *pd, __u16 pd_len)
{
	struct mpa_start s = {
		.role = o.listen ? MPA_ROLE_RESPONDER : MPA_ROLE_INITIATOR,
		.flags = o.flags,
		.pd_len = pd_len,
	};
	struct mpa_info info;

	if (iw_mpa_attach(fd))
		iw_die_sys("TCP_ULP mpa (is mpa.ko loaded?)");
	if (iw_mpa_start_ex(fd, &s, pd, NULL))
		die_mpa(fd, "MPA_START");

	if (iw_mpa_wait_startup(fd, s.role, o.timeout_ms, &info)) {
		if (errno == ETIMEDOUT)
			die_proto("timeout during the MPA startup");
		iw_die_sys("MPA_INFO");
	}
	if (info.state == MPA_S_ERROR) {
		errno = info.error == MPA_ERR_STARTUP ? ECONNABORTED : EPROTO;
		die_mpa(fd, "MPA startup");
	}
	if (info.state == MPA_S_REJECTED) {
		char reason[MPA_MAX_PD_LEN + 1] = "";
		socklen_t len = MPA_MAX_PD_LEN;

		if (!iw_mpa_peer_pd(fd, reason, &len))
			reason[len] = '\0';
		iw_msg("the sink rejected the connection: %s", reason);
		exit(IW_EXIT_PROTO);
	}
}

/* ---- DDP helpers ---- */

static int xfer_bind(int pd, int sock)
{
	int sfd = iw_ddp_bind(pd, sock, 1);

	if (sfd < 0)
		iw_die_sys("DDP_IOC_BIND");
	return sfd;
}

static void xfer_post(int sfd, void *buf, size_t len, __u64 cookie)
{
	if (iw_ddp_post_recv(sfd, buf, len, 0, cookie))
		iw_die_sys("DDP_IOC_POST_RECV");
}

static void xfer_send_untagged(int sfd, int sock, enum xfer_type type,
			       const void *buf, size_t len)
{
	const __u8 rsvdulp[5] = { type };

	if (iw_ddp_send_untagged(sfd, buf, len, 0, rsvdulp))
		die_mpa(sock, "DDP_IOC_SEND");
}

static void xfer_send_tagged(int sfd, int sock, const void *buf, size_t len,
			     __u32 stag, __u64 to)
{
	if (iw_ddp_send_tagged(sfd, buf, len, stag, to, 0))
		die_mpa(sock, "DDP_IOC_SEND tagged");
}

/* Next event of the stream; errors end the program. */
static void ddp_next_event(int sfd, struct ddp_event *ev)
{
	int ret = iw_ddp_event(sfd, ev, o.timeout_ms ? o.timeout_ms : -1);

	if (ret < 0 && errno == EMSGSIZE)
		die_proto("short event record");
	if (ret < 0)
		iw_die_sys("read stream");
	if (!ret)
		die_proto("timeout waiting for the peer");
	if (ev->type == DDP_EV_ERROR)
		die_ddp(ev);
}

/* Wait for the untagged message in the buffer posted with @cookie. */
static __u32 ddp_wait_recv(int sfd, __u64 cookie, enum xfer_type type)
{
	struct ddp_event ev;

	for (;;) {
		ddp_next_event(sfd, &ev);
		if (ev.type == DDP_EV_PEER_CLOSED)
			die_proto("the peer closed the stream early");
		if (ev.type == DDP_EV_RECV && ev.cookie == cookie)
			break;
		verbose("ignoring event %u", ev.type);
	}
	if (ev.rsvdulp[0] != type)
		die_proto("unexpected message type");
	verbose("received message type %u, MSN %u, %u octets", type, ev.msn,
		ev.len);
	return ev.len;
}

/* Graceful close: FIN after everything sent, then wait for the peer's. */
static void ddp_close(int sfd, int sock)
{
	struct ddp_event ev;
	int tmo = o.timeout_ms;

	if (o.hold_ms) {
		verbose("holding the stream open for %d ms", o.hold_ms);
		poll(NULL, 0, o.hold_ms);
	}
	if (iw_ddp_shutdown(sfd))
		verbose("DDP_IOC_SHUTDOWN: %s", strerror(errno));
	o.timeout_ms = 5000;
	do
		ddp_next_event(sfd, &ev);
	while (ev.type != DDP_EV_PEER_CLOSED);
	o.timeout_ms = tmo;
	print_stats(sock);
	close(sfd);
	close(sock);
}

/* ---- source ---- */

static uint8_t *read_input(uint64_t *size)
{
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = NULL, *nb;
	struct stat st;
	ssize_t n;

	if (!fstat(0, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (uint64_t)st.st_size < XFER_MAX_SIZE ? (uint64_t)st.st_size + 1 :
		      XFER_MAX_SIZE + 1;
	for (;;) {
		if (len == cap || !buf) {
			if (buf)
				cap *= 2;
			if (cap > XFER_MAX_SIZE + 1)
				cap = XFER_MAX_SIZE + 1;
			nb = realloc(buf, cap);
			if (!nb)
				iw_die_sys("input buffer");
			buf = nb;
		}
		n = read(0, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			iw_die_sys("read stdin");
		}
		if (!n)
			break;
		len += n;
		if (len > XFER_MAX_SIZE) {
			iw_msg("input larger than %llu octets",
			       (unsigned long long)XFER_MAX_SIZE);
			exit(IW_EXIT_USAGE);
		}
	}
	*size = len;
	return buf;
}

static int source(void)
{
	struct xfer_adv adv;
	struct xfer_done done;
	struct xfer_result res;
	struct xfer_hello hello;
	uint64_t size, off, to, len;
	int sock, pd, sfd;
	uint8_t *data;
	__u32 n, stag;

	data = read_input(&size);
	sha256(data, size, done.sha);
	done.size = htobe64(size);
	verbose("%llu octets to send, sha256 %s", (unsigned long long)size,
		hex(done.sha, SHA256_LEN));

	/* HELLO in the Request: the sink learns the size before it accepts */
	hello.magic = htobe32(XFER_MAGIC);
	hello.version = htobe32(XFER_VERSION);
	hello.size = htobe64(size);
	sock = open_socket();
	mpa_startup(sock, &hello, sizeof(hello));
	verbose("MPA full operation");

	pd = iw_ddp_open();
	if (pd < 0)
		iw_die_sys("/dev/ddp (is ddp.ko loaded?)");
	sfd = xfer_bind(pd, sock);

	/* buffers for the sink's two messages, before it can send them */
	xfer_post(sfd, &adv, sizeof(adv), XFER_ADV);
	xfer_post(sfd, &res, sizeof(res), XFER_RESULT);

	/*
	 * Ready to receive: a zero-length tagged message. Its STag and TO
	 * are never checked (RFC 5041 section 5.2), so it needs no buffer
	 * at the sink, and it is the first FPDU the Responder must get
	 * before it may send (RFC 5044 section 7.1.2 rule 4). MPA revision
	 * 2 (RFC 6581) uses zero-length RDMA messages the same way.
	 */
	xfer_send_tagged(sfd, sock, data, 0, 0, 0);

	n = ddp_wait_recv(sfd, XFER_ADV, XFER_ADV);
	if (n != sizeof(adv))
		die_proto("bad ADV length");
	stag = be32toh(adv.stag);
	to = be64toh(adv.to);
	len = be64toh(adv.len);
	verbose("sink buffer: STag 0x%08x, TO 0x%llx, %llu octets", stag,
		(unsigned long long)to, (unsigned long long)len);
	if (len < size)
		die_proto("the sink's buffer is too small");

	/* the data: tagged messages at increasing TO, written in place */
	for (off = 0; off < size; off += n) {
		n = size - off < XFER_CHUNK ? size - off : XFER_CHUNK;
		xfer_send_tagged(sfd, sock, data + off, n, stag, to + off);
	}
	verbose("%llu octets written", (unsigned long long)size);

	xfer_send_untagged(sfd, sock, XFER_DONE, &done, sizeof(done));
	n = ddp_wait_recv(sfd, XFER_RESULT, XFER_RESULT);
	if (n != sizeof(res))
		die_proto("bad RESULT length");
	ddp_close(sfd, sock);
	close(pd);
	free(data);
	if (!be32toh(res.ok)) {
		iw_msg("the sink got sha256 %s, sent %s: MISMATCH",
		       hex(res.sha, SHA256_LEN), hex(done.sha, SHA256_LEN));
		return IW_EXIT_MISMATCH;
	}
	iw_msg("sent %llu octets, sha256 %s, verified by the sink",
	       (unsigned long long)size, hex(done.sha, SHA256_LEN));
	return 0;
}

/* ---- sink ---- */

/* Read the source's zero-length tagged message (see source()). */
static void sink_wait_rtr(int sock)
{
	__u8 buf[64];
	ssize_t n;

	n = recv(sock, buf, sizeof(buf), 0);
	if (n < 0)
		die_mpa(sock, "waiting for the first FPDU");
	if (n != sizeof(struct ddp_tagged_hdr) ||
	    buf[0] != (DDP_FLAG_T | DDP_FLAG_L | DDP_WIRE_VERSION))
		die_proto("the first FPDU is not a zero-length tagged message");
}

static int sink(void)
{
	__u32 stag = 0;
	struct xfer_hello hello;
	struct xfer_result res = { 0 };
	struct xfer_done done;
	struct xfer_adv adv;
	struct ddp_event ev;
	struct mpa_info info;
	socklen_t len = sizeof(hello);
	uint64_t size, placed = 0;
	uint8_t *buf = NULL, sha[SHA256_LEN];
	int sock, pd, sfd, ok;

	sock = open_socket();
	mpa_startup(sock, NULL, 0);
	/* the Request's private data is the HELLO */
	if (iw_mpa_peer_pd(sock, &hello, &len) ||
	    len != sizeof(hello) || be32toh(hello.magic) != XFER_MAGIC ||
	    be32toh(hello.version) != XFER_VERSION ||
	    be64toh(hello.size) > XFER_MAX_SIZE) {
		setsockopt(sock, SOL_MPA, MPA_REJECT, "not a ddp-xfer HELLO", 20);
		die_proto("bad HELLO in the MPA Request; rejected");
	}
	size = be64toh(hello.size);
	verbose("HELLO: %llu octets", (unsigned long long)size);
	if (iw_mpa_accept(sock, NULL, 0))
		die_mpa(sock, "MPA_ACCEPT");
	if (iw_mpa_info(sock, &info))
		iw_die_sys("MPA_INFO");
	verbose("MPA full operation, MULPDU %u, markers rx %d tx %d, CRC %d",
		info.mulpdu, !!(info.flags & MPA_I_MARKERS_RX),
		!!(info.flags & MPA_I_MARKERS_TX), !!(info.flags & MPA_I_CRC));

	/*
	 * The source sends nothing after the RTR until it has our ADV, so
	 * the stream is bound with nothing in flight, and the ADV may be
	 * sent: the Responder has received its first FPDU (rule 4).
	 */
	sink_wait_rtr(sock);
	pd = iw_ddp_open();
	if (pd < 0)
		iw_die_sys("/dev/ddp (is ddp.ko loaded?)");
	sfd = xfer_bind(pd, sock);

	/* the tagged buffer, usable by this stream only (RFC 5041 8.2) */
	if (size) {
		buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			iw_die_sys("mmap");
		iw_raise_memlock(size);
		if (iw_ddp_reg_mr(pd, buf, size, XFER_BASE_TO, DDP_ACCESS_REMOTE_WRITE,
				  sfd, &stag)) {
			if (errno == ENOMEM || errno == EPERM || errno == EAGAIN)
				iw_msg("registering %llu octets: check ulimit -l (RLIMIT_MEMLOCK)",
				       (unsigned long long)size);
			iw_die_sys("DDP_IOC_REG_MR");
		}
		verbose("registered STag 0x%08x at TO 0x%llx", stag,
			(unsigned long long)XFER_BASE_TO);
	}
	/* the DONE buffer is posted before the source can learn the STag */
	xfer_post(sfd, &done, sizeof(done), XFER_DONE);
	adv.stag = htobe32(stag);
	adv.pad = 0;
	adv.to = htobe64(XFER_BASE_TO);
	adv.len = htobe64(size);
	xfer_send_untagged(sfd, sock, XFER_ADV, &adv, sizeof(adv));

	/* tagged messages are reported in order, all before DONE */
	for (;;) {
		ddp_next_event(sfd, &ev);
		if (ev.type == DDP_EV_TAGGED) {
			if (ev.stag != stag || ev.to != XFER_BASE_TO + placed)
				die_proto("tagged message out of sequence");
			placed += ev.len;
			verbose("tagged message: TO 0x%llx, %u octets",
				(unsigned long long)ev.to, ev.len);
			continue;
		}
		if (ev.type == DDP_EV_RECV && ev.cookie == XFER_DONE)
			break;
		if (ev.type == DDP_EV_PEER_CLOSED)
			die_proto("the source closed before DONE");
	}
	if (ev.rsvdulp[0] != XFER_DONE || ev.len != sizeof(done))
		die_proto("bad DONE message");
	if (placed != size || be64toh(done.size) != size)
		die_proto("DONE does not match the data written");

	/* no placement can happen after this: the buffer is ours again */
	if (size && iw_ddp_invalidate(pd, stag))
		iw_die_sys("DDP_IOC_INVALIDATE");
	if (iw_writen(STDOUT_FILENO, buf, size))
		iw_die_sys("write stdout");
	sha256(buf, size, sha);
	ok = !memcmp(sha, done.sha, SHA256_LEN);
	iw_msg("received %llu octets, sha256 %s: %s", (unsigned long long)size,
	       hex(sha, SHA256_LEN), ok ? "matches" : "MISMATCH");
	if (!ok)
		iw_msg("the source sent sha256 %s", hex(done.sha, SHA256_LEN));

	res.ok = htobe32(ok);
	memcpy(res.sha, sha, SHA256_LEN);
	xfer_send_untagged(sfd, sock, XFER_RESULT, &res, sizeof(res));
	ddp_close(sfd, sock);
	close(pd);
	if (size)
		munmap(buf, size);
	return ok ? 0 : IW_EXIT_MISMATCH;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "lm6t:H:vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = 1;
			break;
		case 'm':
			o.flags |= MPA_F_MARKERS;
			break;
		case '6':
			o.family = AF_INET6;
			break;
		case 't':
			if (iw_secs_arg(optarg, 0, &o.timeout_ms))
				return iw_usage(print_usage, false);
			break;
		case 'H':
			if (iw_secs_arg(optarg, 0, &o.hold_ms))
				return iw_usage(print_usage, false);
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
	if (iw_host_port(argc, argv, &o.host, &o.port))
		return iw_usage(print_usage, false);
	return o.listen ? sink() : source();
}
