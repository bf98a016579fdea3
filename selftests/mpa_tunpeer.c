// SPDX-License-Identifier: GPL-2.0
/*
 * What only a TCP peer of the test's own can make: the peer is this
 * program behind a TUN device in a network namespace of its own, speaking
 * TCP by hand (the handshake, the module's Request, a Reply), so that it
 * cuts, repeats and opens its window exactly where it wants. IPv4 only:
 * what is tested is TCP's queues, the same for both families. Needs
 * mpa.ko loaded and CONFIG_TUN.
 *
 * overlap: a segment that repeats octets the receiver has queued already
 * and carries new ones after them is queued whole, its sequence number
 * before rcv_nxt (tcp_data_queue(), "partial packet"): TCP's receive queue
 * may hold skbs that overlap, and whoever reads it in place must find
 * octets by sequence number, never by adding up skb lengths (a spurious
 * retransmission makes such a queue; loopback and veth never do it on
 * demand). The peer sends a first segment that ends inside an FPDU and a
 * second one that repeats octets before that point (one octet, a header,
 * a payload piece, a whole FPDU) and carries the rest. Each ULPDU must come
 * once and exact, CRC on and off, one per recvmsg() or several
 * (MPA_RECV_LENS).
 *
 * window: the peer's window edge inside an FPDU, and a train behind it
 * (see there).
 */
#include <linux/if_tun.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

#define TQ_LOCAL	"10.99.0.1"	/* the module's end, on the TUN device */
#define TQ_PEER		"10.99.0.2"	/* this program's TCP */
#define TQ_PORT		5044
#define TQ_ISS		1000000u	/* the peer's initial sequence number */
#define TQ_TMO_MS	3000

/* the three ULPDUs the peer sends, and where its two segments cut them */
static const __u32 tq_len[] = { 100, 700, 300 };
#define TQ_N		ARRAY_SIZE(tq_len)

struct tq_peer {
	int tun;
	__u16 window;		/* the window the peer advertises, 0: 65535 */
	__u16 rport;		/* the module's port */
	__u32 irs;		/* the module's initial sequence number */
	__u32 rcv_nxt;		/* next octet expected from the module */
};

struct tq_pkt {
	struct iphdr ip;
	struct tcphdr tcp;
	__u8 data[4096];
};

static __u16 tq_csum(const void *buf, size_t len, __u32 sum)
{
	const __u8 *p = buf;

	for (; len > 1; len -= 2, p += 2)
		sum += (p[0] << 8) | p[1];
	if (len)
		sum += p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* one segment from the peer: @flags TH_*, @opt_len octets of options in @data */
static int tq_send(struct tq_peer *t, __u8 flags, __u32 seq, const void *data,
		   size_t len, size_t opt_len)
{
	struct tq_pkt p = {};
	size_t tcp_len = sizeof(p.tcp) + len;
	__u32 sum;

	if (len > sizeof(p.data))
		return -1;
	p.ip.version = 4;
	p.ip.ihl = 5;
	p.ip.ttl = 64;
	p.ip.protocol = IPPROTO_TCP;
	p.ip.tot_len = htons(sizeof(p.ip) + tcp_len);
	inet_pton(AF_INET, TQ_PEER, &p.ip.saddr);
	inet_pton(AF_INET, TQ_LOCAL, &p.ip.daddr);
	p.ip.check = htons(tq_csum(&p.ip, sizeof(p.ip), 0));
	p.tcp.source = htons(TQ_PORT);
	p.tcp.dest = htons(t->rport);
	p.tcp.seq = htonl(seq);
	p.tcp.ack_seq = htonl(t->rcv_nxt);
	p.tcp.doff = (sizeof(p.tcp) + opt_len) / 4;
	p.tcp.th_flags = flags;
	p.tcp.window = htons(t->window ? t->window : 65535);
	memcpy(p.data, data, len);
	/* pseudo header: addresses, protocol, TCP length */
	sum = (ntohl(p.ip.saddr) >> 16) + (ntohl(p.ip.saddr) & 0xffff) +
	      (ntohl(p.ip.daddr) >> 16) + (ntohl(p.ip.daddr) & 0xffff) +
	      IPPROTO_TCP + tcp_len;
	p.tcp.check = htons(tq_csum(&p.tcp, tcp_len, sum));
	return write(t->tun, &p, sizeof(p.ip) + tcp_len) == (ssize_t)(sizeof(p.ip) + tcp_len) ?
	       0 : -1;
}

/*
 * The next segment of the module's connection to the peer (other packets,
 * IPv6 router solicitations and the like, are skipped): its header in
 * *@th, its payload in @data (at most @max octets, the count returned);
 * -1 on timeout. Its data advances rcv_nxt when it is the next in order.
 */
static int tq_recv(struct tq_peer *t, struct tcphdr *th, void *data, size_t max)
{
	struct pollfd pfd = { .fd = t->tun, .events = POLLIN };
	struct tq_pkt p;
	size_t hl, n;
	ssize_t r;

	for (;;) {
		if (poll(&pfd, 1, TQ_TMO_MS) != 1)
			return -1;
		r = read(t->tun, &p, sizeof(p));
		if (r < (ssize_t)(sizeof(p.ip) + sizeof(p.tcp)) || p.ip.version != 4 ||
		    p.ip.protocol != IPPROTO_TCP || p.ip.ihl != 5 ||
		    p.tcp.dest != htons(TQ_PORT))
			continue;
		*th = p.tcp;
		hl = sizeof(p.ip) + p.tcp.doff * 4;
		n = r > (ssize_t)hl ? r - hl : 0;
		if (n > max)
			n = max;
		memcpy(data, (__u8 *)&p + hl, n);
		if (!th->syn && ntohl(th->seq) == t->rcv_nxt)
			t->rcv_nxt += n;
		return n;
	}
}

/* a TUN device with TQ_LOCAL/24, up, in the test's own network namespace */
static int tq_tun(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_TUN | IFF_NO_PI };
	struct sockaddr_in *a = (struct sockaddr_in *)&ifr.ifr_addr;
	int fd, s, ret;

	if (mt_new_netns())
		return -1;
	fd = open("/dev/net/tun", O_RDWR);
	/* the device node appears when tun.ko loads */
	if (fd < 0 && errno == ENOENT && !system("modprobe -q tun"))
		fd = open("/dev/net/tun", O_RDWR);
	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "mpaq0");
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ret = s < 0 || ioctl(fd, TUNSETIFF, &ifr);
	a->sin_family = AF_INET;
	inet_pton(AF_INET, TQ_LOCAL, &a->sin_addr);
	ret = ret || ioctl(s, SIOCSIFADDR, &ifr);
	inet_pton(AF_INET, "255.255.255.0", &a->sin_addr);
	ret = ret || ioctl(s, SIOCSIFNETMASK, &ifr);
	ret = ret || ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ret = ret || ioctl(s, SIOCSIFFLAGS, &ifr);
	if (s >= 0)
		close(s);
	if (ret) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * *@fd: the module's socket, connected to the peer, MPA Initiator in full
 * operation with CRC as @crc says.
 */
static int tq_connect(struct tq_peer *t, int *fd, bool crc)
{
	static const __u8 mss[4] = { 2, 4, 1460 >> 8, 1460 & 0xff };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(TQ_PORT) };
	struct pollfd pfd = { .events = POLLOUT };
	__u8 buf[64], rep[20];
	struct tcphdr th;
	int n, got = 0;

	inet_pton(AF_INET, TQ_PEER, &sa.sin_addr);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (*fd < 0 || (connect(*fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS))
		return -1;
	do {
		if (tq_recv(t, &th, buf, sizeof(buf)) < 0)
			return -2;
	} while (!th.syn);
	t->rport = ntohs(th.source);
	t->irs = ntohl(th.seq);
	t->rcv_nxt = t->irs + 1;
	if (tq_send(t, TH_SYN | TH_ACK, TQ_ISS, mss, sizeof(mss), sizeof(mss)))
		return -3;
	pfd.fd = *fd;
	if (poll(&pfd, 1, TQ_TMO_MS) != 1 || iw_so_error(*fd) ||
	    fcntl(*fd, F_SETFL, 0) || iw_mpa_attach(*fd) ||
	    iw_mpa_start(*fd, MPA_ROLE_INITIATOR, crc ? 0 : MPA_F_NO_CRC, NULL, 0, NULL, 0))
		return -4;
	/* the Request, in however many segments */
	while (got < 20) {
		n = tq_recv(t, &th, buf + got, sizeof(buf) - got);
		if (n < 0)
			return -5;
		got += n;
	}
	if (got != 20 || memcmp(buf, "MPA ID Req Frame", 16) ||
	    !!(buf[16] & MPA_FLAG_C) != crc)
		return -6;
	mt_frame(rep, 0, crc ? MPA_FLAG_C : 0, 1, NULL, 0);
	if (tq_send(t, TH_ACK | TH_PUSH, TQ_ISS + 1, rep, sizeof(rep), 0) ||
	    iw_mpa_wait_state(*fd, MPA_S_FULL, TQ_TMO_MS))
		return -7;
	return 0;
}

/*
 * Close the module's socket with a reset: the peer behind the TUN device
 * never answers a FIN, and a socket left to retransmit it would hold
 * mpa.ko (its ULP) for minutes after the test.
 */
static void tq_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

FIXTURE(overlap)
{
	struct tq_peer t;
	int fd;
	int no_crc;	/* allow_no_crc before the test */
};

FIXTURE_VARIANT(overlap)
{
	__u32 cut;	/* the first segment: the stream's first @cut octets */
	__u32 repeat;	/* the second one starts @repeat octets before @cut */
	bool crc;
	bool lens;	/* MPA_RECV_LENS: several ULPDUs per recvmsg() */
};

/*
 * FPDUs of 108, 708 and 308 octets (ULPDUs of 100, 700, 300): F0 at 0,
 * F1 at 108, F2 at 816, the stream 1124 octets. Each case in the four
 * combinations of CRC on or off and one or several ULPDUs per call.
 */
#define OVERLAP_CASE(name, c, r)					\
	FIXTURE_VARIANT_ADD(overlap, name##_crc) {			\
		.cut = (c), .repeat = (r), .crc = true,			\
	};								\
	FIXTURE_VARIANT_ADD(overlap, name##_nocrc) {			\
		.cut = (c), .repeat = (r),				\
	};								\
	FIXTURE_VARIANT_ADD(overlap, name##_crc_lens) {			\
		.cut = (c), .repeat = (r), .crc = true, .lens = true,	\
	};								\
	FIXTURE_VARIANT_ADD(overlap, name##_nocrc_lens) {		\
		.cut = (c), .repeat = (r), .lens = true,		\
	}

/* F1 cut in its payload, its last 200 octets before the cut repeated */
OVERLAP_CASE(payload, 508, 200);
/* F1 cut in its payload, the repeat from inside F0's CRC */
OVERLAP_CASE(from_previous, 408, 301);
/* F1 cut inside its header, one octet repeated */
OVERLAP_CASE(header_octet, 109, 1);
/* F1's length field and 3 octets in the first segment, all repeated */
OVERLAP_CASE(header_whole, 113, 5);
/* F0 and F1 whole and 100 octets of F2 first, then F1 whole again */
OVERLAP_CASE(whole_fpdu, 916, 808);

FIXTURE_SETUP(overlap)
{
	int ret;

	self->fd = -1;
	self->no_crc = -1;
	self->t.tun = tq_tun();
	if (self->t.tun < 0)
		SKIP(return, "no TUN device (CONFIG_TUN, CAP_NET_ADMIN): %s",
		     strerror(errno));
	if (!variant->crc) {
		self->no_crc = mt_allow_no_crc(1);
		ASSERT_LE(0, self->no_crc);
	}
	ret = tq_connect(&self->t, &self->fd, variant->crc);
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(overlap)
{
	tq_close(self->fd);
	if (self->t.tun >= 0)
		close(self->t.tun);
	if (self->no_crc >= 0)
		mt_allow_no_crc(self->no_crc);
}

static __u8 ulpdu[TQ_N][1024], stream[4096], got[4096];

/*
 * Receive the ULPDUs into got[], one after the other: one per recvmsg(),
 * or with MPA_RECV_LENS as many as each call returns, their lengths in
 * lens[]. Return how many came, -1 with errno.
 */
static int tq_receive(int fd, bool several, __u32 *lens)
{
	unsigned int n = 0;
	size_t off = 0;
	int k, fl;
	ssize_t r;

	while (n < TQ_N) {
		r = mt_recv_lens(fd, got + off, sizeof(got) - off, several ? TQ_N - n : 0,
				 MSG_DONTWAIT, lens + n, &k, &fl);
		if (r < 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (errno != EAGAIN || poll(&pfd, 1, TQ_TMO_MS) != 1)
				return -1;
			continue;
		}
		if (!r || !(fl & MSG_EOR) || (fl & (MSG_TRUNC | MSG_CTRUNC)))
			return -1;
		if (!several)
			lens[n++] = r;
		else if (k > 0)
			n += k;
		else
			return -1;
		off += r;
	}
	return n;
}

TEST_F(overlap, each_ulpdu_once)
{
	__u32 pos = 0, lens[TQ_N], base = TQ_ISS + 1 + 20;
	unsigned int i;
	struct mpa_info info;
	struct tcphdr th;
	size_t off = 0;
	int n;

	if (self->t.tun < 0)
		SKIP(return, "no TUN device");

	for (i = 0; i < TQ_N; i++) {
		mt_fill(ulpdu[i], tq_len[i], 77 + i);
		n = mt_enc(stream + pos, sizeof(stream) - pos, pos, false, variant->crc,
			   ulpdu[i], tq_len[i]);
		ASSERT_LT(0, n);
		pos += n;
	}
	ASSERT_EQ(1124, pos);
	ASSERT_LT(variant->repeat, variant->cut);
	if (variant->lens)
		ASSERT_EQ(0, setsockopt(self->fd, SOL_MPA, MPA_RECV_LENS, &(__u32){ 1 },
					sizeof(__u32)));

	/* both segments queued before the module's reader runs */
	ASSERT_EQ(0, tq_send(&self->t, TH_ACK | TH_PUSH, base, stream, variant->cut, 0));
	ASSERT_EQ(0, tq_send(&self->t, TH_ACK | TH_PUSH, base + variant->cut - variant->repeat,
			     stream + variant->cut - variant->repeat,
			     pos - variant->cut + variant->repeat, 0));
	/* TCP took all of it: its ACK covers the stream */
	do {
		ASSERT_LE(0, tq_recv(&self->t, &th, got, sizeof(got)));
	} while (!th.ack || ntohl(th.ack_seq) != base + pos);

	ASSERT_EQ(TQ_N, tq_receive(self->fd, variant->lens, lens));
	for (i = 0; i < TQ_N; i++) {
		ASSERT_EQ(tq_len[i], lens[i]);
		ASSERT_EQ(0, memcmp(got + off, ulpdu[i], tq_len[i])) {
			TH_LOG("ULPDU %u differs", i);
		}
		off += tq_len[i];
	}
	/* nothing more, the connection still in full operation */
	EXPECT_EQ(-1, recv(self->fd, got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, iw_mpa_info(self->fd, &info));
	EXPECT_EQ(MPA_S_FULL, info.state);
	EXPECT_EQ(0, info.error);
}

/*
 * The window edge inside an FPDU: TCP sends up to it (a segment that ends
 * inside an FPDU) and keeps the rest of that skb as an skb of its own.
 * A train that began while that skb was whole (its first FPDU waiting in
 * MPA for more, MSG_MORE) must not join the rest when it goes to TCP, or
 * GSO cuts every FPDU of the train off its segment start: it starts an
 * skb of its own, and its FPDUs start segments again (RFC 5044 section 5,
 * Appendix A.1).
 */
FIXTURE(window)
{
	struct tq_peer t;
	int fd;
};

FIXTURE_SETUP(window)
{
	self->fd = -1;
	self->t.tun = tq_tun();
	if (self->t.tun < 0)
		SKIP(return, "no TUN device (CONFIG_TUN, CAP_NET_ADMIN): %s",
		     strerror(errno));
	ASSERT_EQ(0, tq_connect(&self->t, &self->fd, true));
}

FIXTURE_TEARDOWN(window)
{
	tq_close(self->fd);
	if (self->t.tun >= 0)
		close(self->t.tun);
}

#define TW_TRAIN	3	/* FPDUs of one segment each per sendmsg() */
#define TW_EDGE		2000	/* the window the peer opens first */

/* a train of TW_TRAIN ULPDUs of @len octets in one sendmsg() */
static int tw_send(int fd, const __u8 *buf, __u32 len)
{
	__u32 lens[TW_TRAIN];
	unsigned int i;

	for (i = 0; i < TW_TRAIN; i++)
		lens[i] = len;
	/* never waits: the peer is this thread */
	return mt_send_lens(fd, buf, TW_TRAIN * len, SOL_MPA, MPA_CMSG_LENS, lens,
			    TW_TRAIN, MSG_DONTWAIT) == (ssize_t)(TW_TRAIN * len) ? 0 : -1;
}

/* the peer's segments from the module until rcv_nxt reaches @base + @upto */
static int tw_read(struct tq_peer *t, __u32 base, __u32 upto, __u32 *start,
		   __u32 *lens, __u32 *n, __u32 max)
{
	static __u8 seg[4096];
	struct tcphdr th;
	int k;

	while (t->rcv_nxt - base < upto) {
		k = tq_recv(t, &th, seg, sizeof(seg));
		if (k < 0)
			return -1;
		if (k && *n < max) {
			start[*n] = ntohl(th.seq) - base;
			lens[(*n)++] = k;
		}
	}
	return t->rcv_nxt - base == upto ? 0 : -1;
}

TEST_F(window, train_after_edge_starts_segments)
{
	__u32 base, fpdu, total, start[64], lens[64], i, n = 0, at_train = 0;
	static __u8 buf[TW_TRAIN * 2048];
	struct mpa_info info;

	if (self->t.tun < 0)
		SKIP(return, "no TUN device");
	ASSERT_EQ(0, iw_mpa_info(self->fd, &info));
	/* MSS 1460 (the peer's SYN-ACK, no timestamps): FPDUs of 1460 */
	fpdu = mpa_fpdu_plain_len(info.mulpdu);
	ASSERT_EQ(1460, fpdu);
	base = self->t.rcv_nxt;
	total = 2 * TW_TRAIN * fpdu;
	mt_fill(buf, sizeof(buf), 5);

	/* window closed: the first train waits in TCP, one skb */
	self->t.window = 1;
	ASSERT_EQ(0, tq_send(&self->t, TH_ACK, TQ_ISS + 21, NULL, 0, 0));
	ASSERT_EQ(0, tw_send(self->fd, buf, info.mulpdu));
	/* the second train begins in MPA, behind that skb */
	ASSERT_EQ(info.mulpdu, send(self->fd, buf, info.mulpdu, MSG_MORE | MSG_DONTWAIT));
	/* TW_EDGE octets open: TCP cuts its skb there */
	self->t.window = TW_EDGE;
	ASSERT_EQ(0, tq_send(&self->t, TH_ACK, TQ_ISS + 21, NULL, 0, 0));
	ASSERT_EQ(0, tw_read(&self->t, base, TW_EDGE, start, lens, &n, ARRAY_SIZE(start)));
	/* the rest of the second train: it goes to TCP */
	for (i = 1; i < TW_TRAIN; i++)
		ASSERT_EQ(info.mulpdu, send(self->fd, buf, info.mulpdu,
					    (i + 1 < TW_TRAIN ? MSG_MORE : 0) | MSG_DONTWAIT));
	self->t.window = 0;	/* 65535 */
	ASSERT_EQ(0, tq_send(&self->t, TH_ACK, TQ_ISS + 21, NULL, 0, 0));
	ASSERT_EQ(0, tw_read(&self->t, base, total, start, lens, &n, ARRAY_SIZE(start)));

	/* every segment of the second train starts an FPDU */
	for (i = 0; i < n; i++) {
		if (start[i] < TW_TRAIN * fpdu)
			continue;
		EXPECT_EQ(0, start[i] % fpdu) {
			TH_LOG("segment at %u (%u octets) inside an FPDU", start[i], lens[i]);
		}
		if (start[i] == TW_TRAIN * fpdu)
			at_train++;
	}
	EXPECT_LE(1, at_train);
}

TEST_HARNESS_MAIN
