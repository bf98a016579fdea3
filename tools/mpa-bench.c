// SPDX-License-Identifier: GPL-2.0
/*
 * mpa-bench - throughput and latency of the "mpa" TCP ULP against raw TCP.
 *
 * Sender and receiver run on loopback in one process pair: the parent is
 * the sender (MPA Initiator), a forked child the receiver (MPA Responder).
 * --listen-addr/--connect-addr and --sink-netns/--source-netns move the two
 * ends off loopback, e.g. onto a veth pair between two namespaces (as
 * ddp-bench); --sink-cpu/--source-cpu pin each end's process to a CPU of
 * its own. Throughput is counted by the receiver after a warm-up, with
 * the CPU time per GB moved: the machine's busy time (CPUs x elapsed -
 * idle, /proc/stat) and each side's getrusage(). The ping-pong mode measures round trips of
 * 64-octet messages. --table runs the whole matrix (raw TCP and MPA with
 * CRC on/off and markers on/off) in several rounds and prints the medians.
 * --json prints one JSON object per run or table cell. See mpa-bench(1).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <linux/mpa.h>

#include "libiwarp.h"

#define SIZE_MULPDU	0U		/* --size mulpdu */
#define MAX_SIZE	1048576U	/* raw TCP; MPA stops at 65535 */
#define PP_SIZE		64U		/* ping-pong message size */
#define MAX_RTTS	2000000U
#define IO_TIMEOUT_S	10		/* SO_SNDTIMEO / SO_RCVTIMEO: a hang is a failure */
#define STARTUP_MS	10000
#define NCFGS		6
#define NSIZES		3
#define MAX_ROUNDS	15
#define MAX_BATCH	1024U		/* messages per sendmmsg() */
#define MAX_BATCH_BYTES	(16U << 20)	/* --batch N times --size */

struct cfg {
	const char *name;
	int mpa;
	unsigned int flags;	/* MPA_F_* */
	int eor;		/* raw TCP: TCP_NODELAY and MSG_EOR on every send */
};

static const struct cfg cfgs[NCFGS] = {
	{ "tcp", 0, 0, 0 },
	{ "mpa crc nomarkers", 1, 0, 0 },
	{ "mpa crc markers", 1, MPA_F_MARKERS, 0 },
	{ "mpa nocrc nomarkers", 1, MPA_F_NO_CRC, 0 },
	{ "mpa nocrc markers", 1, MPA_F_NO_CRC | MPA_F_MARKERS, 0 },
	/* not a baseline: one skb per message, pushed at once, as MPA sends FPDUs */
	{ "tcp nodelay+eor", 0, 0, 1 },
};

/* Shared between the parent and the child of one run (MAP_SHARED). */
struct shared {
	int stop;			/* receiver to sender: measurement over */
	__u64 tx_bytes;
	__u64 tx_msgs;
	__u64 rx_bytes;
	__u64 rx_msgs;
	__u64 win_bytes;		/* counted in the measurement window */
	double win_secs;
	__u32 mulpdu;			/* the child's MPA_MULPDU after MPA_ACCEPT */
	int measuring;			/* the receiver's window started */
	__u64 win_msgs;
	double sys_cpu_s;		/* busy CPU of the machine in the window */
	double tick_cpu_s;		/* the same from the tick-sampled fields */
	double rx_cpu_s;		/* the receiver's getrusage() in the window */
	double tx_cpu_s;		/* the sender's, from its view of the window */
	struct mpa_stats rx_stats;
	char err[256];
};

struct result {
	double mbps;			/* 10^6 payload octets per second */
	double msgs_s;			/* messages (ping-pong: round trips) per s */
	double rtt_med_us;
	double rtt_mean_us;
	double cpu_gb;			/* CPU s per GB (10^9 octets): machine */
	double tick_cpu_gb;		/* the same from the tick-sampled fields */
	double rx_cpu_gb;		/* the receiver process alone */
	double tx_cpu_gb;		/* the sender process alone; < 0: unknown */
	unsigned long nrtt;
	double rtt_ratio;		/* --rtt-mix: median of turn / raw TCP's turn */
	unsigned long turns;		/* --rtt-mix: turns measured */
	__u32 size;
};

static struct shared *sh;
static int family = AF_INET;
static char errbuf[256];
static int sig_phase;
static int json;			/* --json: JSON lines on stdout */
static unsigned int batch = 1;		/* --batch: messages per sendmmsg() */
static int one_call;			/* --one-call: a batch per sendmsg() */
static int recv_lens;			/* --recv-lens: a batch per recvmsg() */
static const char *listen_addr;		/* NULL: loopback */
static const char *connect_addr;	/* NULL: listen_addr */
static const char *sink_netns, *source_netns;
static int sink_ns_fd = -1, source_ns_fd = -1, orig_ns_fd = -1;
static int sink_cpu = -1, source_cpu = -1;	/* --sink-cpu, --source-cpu */

static void set_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
}

static void on_alarm(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sig_phase, 1, __ATOMIC_RELAXED);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: mpa-bench [--size N|mulpdu] [--seconds S] [--mode tcp|mpa] [--markers]\n"
		"                 [--no-crc] [--eor] [--batch N [--one-call] [--recv-lens]]\n"
		"                 [--pingpong | --rtt-mix]\n"
		"                 [--json] [-6]\n"
		"                 [ENDPOINTS]\n"
		"       mpa-bench --table [--seconds S] [--rounds R] [--json] [-6] [ENDPOINTS]\n"
		"ENDPOINTS: [--listen-addr A] [--connect-addr A] [--sink-netns NAME]\n"
		"           [--source-netns NAME] [--sink-cpu N] [--source-cpu N]\n"
		"  --size N     message (ULPDU) size in octets, or mulpdu (default 1024)\n"
		"  --seconds S  measured time of one throughput run (default 2; ping-pong S/2)\n"
		"  --mode M     tcp (plain sockets) or mpa (the \"mpa\" ULP; default mpa)\n"
		"  --markers    require markers on receive (both ends)\n"
		"  --no-crc     prefer no CRC (both ends; needs mpa.allow_no_crc=1)\n"
		"  --eor        raw TCP: TCP_NODELAY and MSG_EOR on every send, so every\n"
		"               message is pushed in an skb of its own, as MPA does\n"
		"  --batch N    N messages per sendmmsg() call (default 1; up to 1024 and\n"
		"               16 MiB): MPA takes all but a call's last as MSG_MORE;\n"
		"               the MPA receiver takes up to N per recvmmsg() call\n"
		"  --one-call   MPA: the N messages of a batch in one sendmsg() call, with\n"
		"               their lengths in an MPA_CMSG_LENS control message\n"
		"  --recv-lens  MPA: the receiver takes up to N ULPDUs per recvmsg() call\n"
		"               (MPA_RECV_LENS), their lengths in a control message\n"
		"  --pingpong   64-octet round-trip time instead of throughput\n"
		"  --rtt-mix    64-octet round trips of raw TCP, MPA without and with CRC\n"
		"               on three connections, in alternating turns of 100; each\n"
		"               turn's median against raw TCP's turn before it (S/2 s;\n"
		"               needs mpa.allow_no_crc=1)\n"
		"  --table      run the whole matrix and print a table (ignores mode/size)\n"
		"  --rounds R   rounds of the matrix, medians reported (default 3)\n"
		"  --json       one JSON object per run or table cell on stdout\n"
		"  -6           use IPv6 loopback (default IPv4)\n"
		"  --listen-addr A   receiver's bind address (default loopback)\n"
		"  --connect-addr A  sender's target (default: the listen address)\n"
		"  --sink-netns NAME    receiver socket in /run/netns/NAME\n"
		"  --source-netns NAME  sender socket in /run/netns/NAME\n"
		"  --sink-cpu N         pin the receiver process to CPU N (default: not\n"
		"                       pinned; ping-pong: CPU 0)\n"
		"  --source-cpu N       pin the sender process to CPU N (likewise)\n"
		"  --help       this text\n"
		"  --version    print the version\n"
		"Exit status: 0 when every run succeeded, 1 otherwise, 2 for usage errors.\n");
}

/* ---- connection setup ---- */

/* Move the calling thread to the network namespace @fd (-1: stay). */
static int enter_netns(int fd, const char *name)
{
	if (fd >= 0 && setns(fd, CLONE_NEWNET)) {
		set_err("setns %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The listener is made in the sink's namespace (a socket belongs to the
 * namespace it was created in), then the caller moves on to the source's.
 */
static int make_listener(int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = iw_bench_addr(family, listen_addr, 0, &ss);
	int fd;

	if (enter_netns(sink_ns_fd, sink_netns))
		return -1;
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		set_err("listener: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	if (source_ns_fd >= 0 ? enter_netns(source_ns_fd, source_netns) :
	    enter_netns(orig_ns_fd, "back")) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd >= 0)
		*port = iw_sockaddr_port(&ss);
	return fd;
}

static int connect_to(int port)
{
	struct sockaddr_storage ss;
	socklen_t len = iw_bench_addr(family, connect_addr ? connect_addr : listen_addr,
				      port, &ss);
	int fd;

	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0) {
		set_err("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		set_err("connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int set_common_opts(int fd, int nodelay)
{
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))) {
		set_err("setsockopt: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Attach the ULP and run the startup exchange for @role. */
static int mpa_setup(int fd, __u32 role, unsigned int flags)
{
	struct mpa_info info;
	__u32 tmo = STARTUP_MS;

	if (iw_mpa_attach(fd)) {
		set_err("TCP_ULP mpa: %s (is mpa.ko loaded?)", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_MPA, MPA_TIMEOUT, &tmo, sizeof(tmo))) {
		set_err("MPA_TIMEOUT: %s", strerror(errno));
		return -1;
	}
	if (iw_mpa_start(fd, role, flags, NULL, 0, NULL, 0)) {
		set_err("MPA_START: %s%s", strerror(errno), errno == EPERM ?
			" (no CRC needs /sys/module/mpa/parameters/allow_no_crc=1)" : "");
		return -1;
	}
	if (role == MPA_ROLE_INITIATOR)
		return 0;	/* the first send waits for the Reply */
	if (iw_mpa_wait_startup(fd, role, STARTUP_MS, &info)) {
		set_err("responder: no MPA Request (%s)", strerror(errno));
		return -1;
	}
	if (info.state != MPA_S_REQ_RCVD) {
		set_err("responder: state %u error %u after the Request", info.state,
			info.error);
		return -1;
	}
	if (iw_mpa_accept(fd, NULL, 0)) {
		set_err("MPA_ACCEPT: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* After the first FPDU went out: full operation with what we asked for. */
static int mpa_check_info(int fd, unsigned int flags)
{
	struct mpa_info info;
	unsigned int want = 0;

	if (!(flags & MPA_F_NO_CRC))
		want |= MPA_I_CRC;
	if (flags & MPA_F_MARKERS)
		want |= MPA_I_MARKERS_RX | MPA_I_MARKERS_TX;
	if (iw_mpa_info(fd, &info)) {
		set_err("MPA_INFO: %s", strerror(errno));
		return -1;
	}
	if (info.state != MPA_S_FULL ||
	    (info.flags & (MPA_I_CRC | MPA_I_MARKERS_RX | MPA_I_MARKERS_TX)) != want) {
		set_err("negotiated state %u flags %#x, wanted flags %#x", info.state,
			info.flags, want);
		return -1;
	}
	return 0;
}

static int get_stats(int fd, struct mpa_stats *st)
{
	if (iw_mpa_stats(fd, st)) {
		set_err("MPA_STATS: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- data transfer ---- */

static int send_msg(int fd, const char *buf, size_t size, int mpa, int eor)
{
	size_t off = 0;
	ssize_t n;

	while (off < size) {
		n = send(fd, buf + off, size - off, MSG_NOSIGNAL | (eor ? MSG_EOR : 0));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			set_err("send: %s", n ? strerror(errno) : "returned 0");
			return -1;
		}
		if (mpa && (size_t)n != size) {
			set_err("MPA send returned %zd for %zu", n, size);
			return -1;
		}
		off += n;
	}
	return 0;
}

/* the message headers of sendmmsg() or recvmmsg(), set up once per run */
struct mmsg_batch {
	struct mmsghdr	v[MAX_BATCH];
	struct iovec	iov[MAX_BATCH];
};

/* headers for @n messages of @size octets in @buf, one after the other */
static struct mmsg_batch *mmsg_batch_new(char *buf, size_t size, unsigned int n)
{
	struct mmsg_batch *b = calloc(1, sizeof(*b));
	unsigned int i;

	if (!b) {
		set_err("out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		b->iov[i].iov_base = buf + i * size;
		b->iov[i].iov_len = size;
		b->v[i].msg_hdr.msg_iov = &b->iov[i];
		b->v[i].msg_hdr.msg_iovlen = 1;
	}
	return b;
}

/*
 * @n messages of @size octets each from @buf (one after the other, @b
 * their headers) in sendmmsg() calls. On an MPA socket every message
 * but a batch's last carries MSG_BATCH, which MPA takes as MSG_MORE:
 * FPDU trains and packed small FPDUs, as one DDP message gets. A TCP
 * message sent in part (a signal, the send timeout) is completed with
 * send().
 */
static int send_batch(int fd, struct mmsg_batch *b, const char *buf, size_t size,
		      unsigned int n, int mpa)
{
	struct mmsghdr *v = b->v;
	unsigned int i, done = 0;
	int r;

	while (done < n) {
		r = sendmmsg(fd, v + done, n - done, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			set_err("sendmmsg: %s", r ? strerror(errno) : "returned 0");
			return -1;
		}
		for (i = done; i < done + r; i++) {
			if (v[i].msg_len == size)
				continue;
			if (mpa) {
				set_err("MPA sendmmsg sent %u of %zu", v[i].msg_len, size);
				return -1;
			}
			if (send_msg(fd, buf + i * size + v[i].msg_len,
				     size - v[i].msg_len, 0, 0))
				return -1;
		}
		done += r;
	}
	return 0;
}

/*
 * MPA, --one-call: @n ULPDUs of @size octets from @buf in one sendmsg()
 * with an MPA_CMSG_LENS control message; a short count (a signal) ends on
 * a ULPDU boundary, and the rest goes in the next call.
 */
static int send_lens(int fd, const char *buf, size_t size, unsigned int n)
{
	static union {
		char buf[CMSG_SPACE(MAX_BATCH * sizeof(__u32))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	unsigned int i, done = 0;
	ssize_t r;

	while (done < n) {
		iov.iov_base = (char *)buf + done * size;
		iov.iov_len = (n - done) * size;
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE((n - done) * sizeof(__u32));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_MPA;
		cm->cmsg_type = MPA_CMSG_LENS;
		cm->cmsg_len = CMSG_LEN((n - done) * sizeof(__u32));
		for (i = 0; i < n - done; i++)
			((__u32 *)CMSG_DATA(cm))[i] = size;
		r = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || r % size) {
			set_err("sendmsg: %s", r < 0 ? strerror(errno) : "short count");
			return -1;
		}
		done += r / size;
	}
	return 0;
}

/*
 * Receive one message. MPA: exactly one ULPDU of @size octets; recv()
 * with MSG_TRUNC returns a longer ULPDU's full length. The same system
 * call as for TCP: recvmsg() would cost MPA a msghdr to copy in and out
 * that raw TCP does not pay. TCP: one recv of at most @size octets
 * (@exact: until @size octets). Return the octets, 0 at EOF, -1 on error.
 */
static ssize_t recv_msg(int fd, char *buf, size_t size, int mpa, int exact)
{
	size_t off = 0;
	ssize_t n;

	if (mpa) {
		do {
			n = recv(fd, buf, size, MSG_TRUNC);
		} while (n < 0 && errno == EINTR);
		if (n < 0) {
			set_err("recv: %s", strerror(errno));
			return -1;
		}
		if (n && (size_t)n != size) {
			set_err("MPA recv got a ULPDU of %zd octets, expected %zu", n, size);
			return -1;
		}
		return n;
	}
	for (;;) {
		n = recv(fd, buf + off, size - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_err("recv: %s", strerror(errno));
			return -1;
		}
		if (n == 0) {
			if (off) {
				set_err("EOF inside a message");
				return -1;
			}
			return 0;
		}
		off += n;
		if (!exact || off == size)
			return off;
	}
}

/*
 * MPA, --batch N: up to @n ULPDUs of @size octets per recvmmsg() call
 * (MSG_WAITFORONE: it waits for the first only), each one checked as
 * recv_msg() checks it, into the buffers of @b one after the other.
 * Return the messages received (*@eof set when the stream ended after
 * them), -1 on error.
 */
static int recv_batch(int fd, struct mmsg_batch *b, size_t size, unsigned int n,
		      int *eof)
{
	struct mmsghdr *v = b->v;
	unsigned int i;
	int r;

	do {
		r = recvmmsg(fd, v, n, MSG_WAITFORONE, NULL);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		set_err("recvmmsg: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < (unsigned int)r; i++) {
		if (!v[i].msg_len) {
			*eof = 1;	/* after @i ULPDUs */
			return i;
		}
		if (v[i].msg_len != size || (v[i].msg_hdr.msg_flags & MSG_TRUNC) ||
		    !(v[i].msg_hdr.msg_flags & MSG_EOR)) {
			set_err("MPA recvmmsg got %u octets flags %#x, expected %zu",
				v[i].msg_len, v[i].msg_hdr.msg_flags, size);
			return -1;
		}
	}
	return r;
}

/*
 * MPA, --recv-lens: up to @n ULPDUs of @size octets in one recvmsg() with
 * MPA_RECV_LENS on, their lengths in an MPA_CMSG_LENS control message,
 * each checked. Return the ULPDUs received (*@eof at the end of the
 * stream), -1 on error.
 */
static int recv_lens_batch(int fd, char *buf, size_t size, unsigned int n, int *eof)
{
	static union {
		char buf[CMSG_SPACE(MAX_BATCH * sizeof(__u32))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size * n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	unsigned int i, k;
	ssize_t r;

	m.msg_control = ctl.buf;
	m.msg_controllen = CMSG_SPACE(n * sizeof(__u32));
	do {
		r = recvmsg(fd, &m, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		set_err("recvmsg: %s", strerror(errno));
		return -1;
	}
	cm = CMSG_FIRSTHDR(&m);
	if (!r && !cm) {
		*eof = 1;
		return 0;
	}
	if (!cm || cm->cmsg_level != SOL_MPA || cm->cmsg_type != MPA_CMSG_LENS ||
	    (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || !(m.msg_flags & MSG_EOR)) {
		set_err("MPA recvmsg: %zd octets, flags %#x, no lengths", r, m.msg_flags);
		return -1;
	}
	k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(__u32);
	for (i = 0; i < k; i++) {
		if (((__u32 *)CMSG_DATA(cm))[i] != size) {
			set_err("MPA recvmsg: ULPDU %u of %u has %u octets, expected %zu",
				i, k, ((__u32 *)CMSG_DATA(cm))[i], size);
			return -1;
		}
	}
	if (!k || (size_t)r != k * size) {
		set_err("MPA recvmsg: %zd octets for %u ULPDUs", r, k);
		return -1;
	}
	return k;
}

static int receiver(int fd, size_t size, int mpa, double warm, double secs)
{
	struct itimerval it = {
		.it_value = { (time_t)warm, (long)((warm - (time_t)warm) * 1e6) },
		.it_interval = { (time_t)secs, (long)((secs - (time_t)secs) * 1e6) },
	};
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	unsigned int nb = mpa ? batch : 1, i, got;
	int eof = 0;
	__u64 total = 0, msgs = 0, seq, b0 = 0, m0 = 0;
	struct iw_cpu_mark c0, c1;
	double t0 = 0;
	int seen = 0, phase;
	struct mmsg_batch *b = NULL;
	char *buf;
	ssize_t n;

	buf = malloc(size * nb);
	if (!buf) {
		set_err("out of memory");
		return -1;
	}
	if (mpa && recv_lens && nb > 1 &&
	    setsockopt(fd, SOL_MPA, MPA_RECV_LENS, &(__u32){ 1 }, sizeof(__u32))) {
		set_err("MPA_RECV_LENS: %s", strerror(errno));
		goto fail;
	}
	if (nb > 1 && !recv_lens) {
		b = mmsg_batch_new(buf, size, nb);
		if (!b)
			goto fail;
	}
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		phase = __atomic_load_n(&sig_phase, __ATOMIC_RELAXED);
		if (phase != seen) {
			seen = phase;
			if (seen == 1) {
				t0 = iw_now_s();
				b0 = total;
				m0 = msgs;
				iw_cpu_mark(&c0);
				__atomic_store_n(&sh->measuring, 1, __ATOMIC_RELEASE);
			} else if (seen == 2) {
				memset(&it, 0, sizeof(it));
				setitimer(ITIMER_REAL, &it, NULL);
				sh->win_secs = iw_now_s() - t0;
				sh->win_bytes = total - b0;
				sh->win_msgs = msgs - m0;
				iw_cpu_mark(&c1);
				sh->sys_cpu_s = iw_cpu_busy(&c0, &c1);
				sh->tick_cpu_s = iw_cpu_ticks(&c0, &c1);
				sh->rx_cpu_s = c1.self_s - c0.self_s;
				__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
			}
		}
		if (nb > 1 && recv_lens) {
			n = recv_lens_batch(fd, buf, size, nb, &eof);
			got = n > 0 ? n : 0;
		} else if (nb > 1) {
			n = recv_batch(fd, b, size, nb, &eof);
			got = n > 0 ? n : 0;
		} else {
			n = recv_msg(fd, buf, size, mpa, 0);
			got = n > 0;
		}
		if (n < 0)
			goto fail;
		for (i = 0; i < got; i++) {
			if (mpa && size >= sizeof(seq)) {
				memcpy(&seq, buf + i * size, sizeof(seq));
				if (seq != msgs) {
					set_err("ULPDU %llu carries sequence number %llu",
						(unsigned long long)msgs,
						(unsigned long long)seq);
					goto fail;
				}
			}
			total += nb > 1 ? size : (size_t)n;
			msgs++;
		}
		if (eof || (nb == 1 && n == 0))
			break;
	}
	if (seen < 2) {
		set_err("the sender stopped early");
		goto fail;
	}
	sh->rx_bytes = total;
	sh->rx_msgs = msgs;
	free(b);
	free(buf);
	if (mpa && get_stats(fd, &sh->rx_stats))
		return -1;
	return 0;
fail:
	free(b);
	free(buf);
	return -1;
}

/* The sender's CPU time over the receiver's window, as far as it sees it. */
static struct iw_cpu_mark tx_c0;
static int tx_phase;		/* 0 before the window, 1 in it, 2 after */

static void tx_cpu_track(void)
{
	struct iw_cpu_mark m;

	if (tx_phase == 0 && __atomic_load_n(&sh->measuring, __ATOMIC_ACQUIRE)) {
		iw_cpu_mark(&tx_c0);
		tx_phase = 1;
	}
	if (tx_phase == 1 && __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		iw_cpu_mark(&m);
		sh->tx_cpu_s = m.self_s - tx_c0.self_s;
		tx_phase = 2;
	}
}

static int sender(int fd, size_t size, const struct cfg *c)
{
	unsigned int i, n = c->eor ? 1 : batch;
	struct mmsg_batch *b = NULL;
	int mpa = c->mpa;
	__u64 seq = 0;
	char *buf;

	if (n > 1 && size * n > MAX_BATCH_BYTES)
		n = MAX_BATCH_BYTES / size ? MAX_BATCH_BYTES / size : 1;

	buf = malloc(size * n);
	if (!buf) {
		set_err("out of memory");
		return -1;
	}
	memset(buf, 0x5a, size * n);
	if (n > 1 && !(mpa && one_call)) {
		b = mmsg_batch_new(buf, size, n);
		if (!b)
			goto fail;
	}
	/* the first message alone: its send waits for the startup */
	if (mpa) {
		if (size >= sizeof(seq))
			memcpy(buf, &seq, sizeof(seq));
		if (send_msg(fd, buf, size, mpa, 0) || mpa_check_info(fd, c->flags))
			goto fail;
		seq++;
	}
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		tx_cpu_track();
		for (i = 0; size >= sizeof(seq) && i < n; i++)
			memcpy(buf + i * size, &(__u64){ seq + i }, sizeof(seq));
		if (n > 1 && mpa && one_call ? send_lens(fd, buf, size, n) :
		    n > 1 ? send_batch(fd, b, buf, size, n, mpa) :
			    send_msg(fd, buf, size, mpa, c->eor))
			goto fail;
		seq += n;
	}
	tx_cpu_track();
	sh->tx_bytes = seq * size;
	sh->tx_msgs = seq;
	free(b);
	free(buf);
	return 0;
fail:
	free(b);
	free(buf);
	return -1;
}

/* One 64-octet round trip on @fd: the ping, then its echo. */
static int round_trip(int fd, char *buf, int mpa, int eor)
{
	ssize_t got;

	if (send_msg(fd, buf, PP_SIZE, mpa, eor))
		return -1;
	got = recv_msg(fd, buf, PP_SIZE, mpa, 1);
	if (got <= 0) {
		if (!got)
			set_err("EOF from the ponger");
		return -1;
	}
	return 0;
}

static double median(double *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), iw_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int pinger(int fd, const struct cfg *c, double secs, struct result *r)
{
	int mpa = c->mpa;
	char buf[PP_SIZE];
	double *rtt, t, start, sum = 0;
	unsigned long n = 0, i;

	rtt = malloc(MAX_RTTS * sizeof(*rtt));
	if (!rtt) {
		set_err("out of memory");
		return -1;
	}
	memset(buf, 0x5a, sizeof(buf));
	start = iw_now_s();
	for (i = 0; n < MAX_RTTS; i++) {
		t = iw_now_s();
		if (t - start > secs + 0.2)
			break;
		if (round_trip(fd, buf, mpa, c->eor))
			goto fail;
		if (mpa && !i && mpa_check_info(fd, c->flags))
			goto fail;
		if (t - start >= 0.2)	/* warm-up */
			rtt[n++] = iw_now_s() - t;
	}
	if (!n) {
		set_err("no round trip measured");
		goto fail;
	}
	sh->tx_msgs = i;
	for (i = 0; i < n; i++)
		sum += rtt[i];
	r->rtt_med_us = median(rtt, n) * 1e6;
	r->rtt_mean_us = sum / n * 1e6;
	r->nrtt = n;
	free(rtt);
	return 0;
fail:
	free(rtt);
	return -1;
}

static int ponger(int fd, const struct cfg *c)
{
	int mpa = c->mpa;
	char buf[PP_SIZE];
	__u64 msgs = 0;
	ssize_t n;

	for (;;) {
		n = recv_msg(fd, buf, PP_SIZE, mpa, 1);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		msgs++;
		if (send_msg(fd, buf, PP_SIZE, mpa, c->eor))
			return -1;
	}
	sh->rx_msgs = msgs;
	return 0;
}

/* The child: accept, MPA Responder, then receive or echo. */
static void child_main(int lfd, const struct cfg *c, size_t size, int pingpong,
		       double warm, double secs)
{
	int fd, ret = -1;

	iw_bench_pin(sink_cpu, "sink");
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0) {
		set_err("accept: %s", strerror(errno));
		goto out;
	}
	if (set_common_opts(fd, pingpong || c->eor))
		goto out;
	if (c->mpa) {
		if (mpa_setup(fd, MPA_ROLE_RESPONDER, c->flags))
			goto out;
		sh->mulpdu = iw_mpa_mulpdu(fd);
		if (!sh->mulpdu) {
			set_err("MPA_MULPDU: %s", strerror(errno));
			goto out;
		}
	}
	if (!size)
		ret = 0;	/* probe: MULPDU only */
	else if (pingpong)
		ret = ponger(fd, c);
	else
		ret = receiver(fd, size, c->mpa, warm, secs);
out:
	if (ret)
		snprintf(sh->err, sizeof(sh->err), "receiver: %.240s", errbuf);
	if (fd >= 0)
		close(fd);
	_exit(ret ? 1 : 0);
}

/*
 * The CPU an end runs on in a run: its --sink-cpu or --source-cpu, else
 * CPU 0 in ping-pong, else none (-1).
 */
static int run_cpu(int cpu, int pingpong)
{
	return cpu >= 0 ? cpu : pingpong ? 0 : -1;
}

/*
 * One run: throughput of @size-octet messages (@pingpong: 64-octet round
 * trips) for @c. @size 0 only sets up the connection and reports the
 * MULPDU in @r->size.
 */
static int run_one(const struct cfg *c, size_t size, int pingpong, double secs,
		   struct result *r)
{
	double warm = secs / 4 < 0.5 ? secs / 4 : 0.5;
	int lfd, fd = -1, port, status, ret = -1;
	/*
	 * Ping-pong runs an end without a CPU of its own on CPU 0: under
	 * emulation a wakeup across vCPUs can take milliseconds and would be
	 * all that is measured.
	 */
	int cpu0 = pingpong && (sink_cpu < 0 || source_cpu < 0);
	pid_t pid;

	memset(sh, 0, sizeof(*sh));
	memset(r, 0, sizeof(*r));
	sh->tx_cpu_s = -1;
	tx_phase = 0;
	errbuf[0] = 0;
	fflush(NULL);
	if (cpu0)
		iw_bench_pin(0, "ping-pong");
	lfd = make_listener(&port);
	if (lfd < 0) {
		iw_bench_unpin();
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		set_err("fork: %s", strerror(errno));
		close(lfd);
		iw_bench_unpin();
		return -1;
	}
	if (!pid)
		child_main(lfd, c, size, pingpong, warm, secs);
	iw_bench_pin(source_cpu, "source");
	fd = connect_to(port);
	close(lfd);
	if (fd < 0)
		goto reap;
	if (set_common_opts(fd, pingpong || c->eor))
		goto reap;
	if (c->mpa && mpa_setup(fd, MPA_ROLE_INITIATOR, c->flags))
		goto reap;
	if (!size)
		ret = 0;
	else if (pingpong)
		ret = pinger(fd, c, secs, r);
	else
		ret = sender(fd, size, c);
	/* a probe closes only after the child is done with the startup */
	if (!ret && size && shutdown(fd, SHUT_WR)) {
		set_err("shutdown: %s", strerror(errno));
		ret = -1;
	}
reap:
	if (ret)
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	if (fd >= 0 && ret)
		close(fd);	/* unblock the child */
	/*
	 * A run that pinned this process (ping-pong before the fork,
	 * --source-cpu after it) gives it back its CPUs: the next run's
	 * receiver, forked from it, must not inherit the pin.
	 */
	iw_bench_unpin();
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		char own[sizeof(errbuf)];

		snprintf(own, sizeof(own), "%s", errbuf);
		set_err("%s%s%s", own, own[0] ? "; " : "",
			sh->err[0] ? sh->err : "receiver died");
		ret = -1;
	}
	if (!ret && c->mpa && size && !pingpong) {
		struct mpa_stats st;

		if (get_stats(fd, &st)) {
			ret = -1;
		} else if (st.tx_octets != sh->tx_bytes || st.tx_fpdus != sh->tx_msgs ||
			   sh->rx_stats.rx_octets != sh->rx_bytes ||
			   sh->rx_stats.rx_fpdus != sh->rx_msgs) {
			set_err("MPA_STATS tx %llu/%llu rx %llu/%llu octets/FPDUs, counted %llu/%llu %llu/%llu",
				(unsigned long long)st.tx_octets, (unsigned long long)st.tx_fpdus,
				(unsigned long long)sh->rx_stats.rx_octets,
				(unsigned long long)sh->rx_stats.rx_fpdus,
				(unsigned long long)sh->tx_bytes, (unsigned long long)sh->tx_msgs,
				(unsigned long long)sh->rx_bytes, (unsigned long long)sh->rx_msgs);
			ret = -1;
		}
	}
	if (fd >= 0 && !ret)
		close(fd);
	if (ret)
		return -1;
	if (!size) {
		r->size = sh->mulpdu;
		return 0;
	}
	r->size = size;
	if (pingpong) {
		if (sh->rx_msgs != sh->tx_msgs) {
			set_err("%llu pings, %llu echoed", (unsigned long long)sh->tx_msgs,
				(unsigned long long)sh->rx_msgs);
			return -1;
		}
		r->mbps = -1;
		r->msgs_s = r->rtt_mean_us > 0 ? 1e6 / r->rtt_mean_us : -1;
		r->cpu_gb = -1;
		r->tick_cpu_gb = -1;
		r->rx_cpu_gb = -1;
		r->tx_cpu_gb = -1;
		return 0;
	}
	if (sh->rx_bytes != sh->tx_bytes) {
		set_err("sent %llu octets, received %llu", (unsigned long long)sh->tx_bytes,
			(unsigned long long)sh->rx_bytes);
		return -1;
	}
	if (sh->win_secs <= 0) {
		set_err("no measurement window");
		return -1;
	}
	r->mbps = sh->win_bytes / sh->win_secs / 1e6;
	r->msgs_s = sh->win_msgs / sh->win_secs;
	if (!c->mpa)	/* recv() calls are not messages: count SIZE sends */
		r->msgs_s = r->mbps * 1e6 / size;
	r->cpu_gb = iw_cpu_per_gb(sh->sys_cpu_s, sh->win_bytes);
	r->tick_cpu_gb = iw_cpu_per_gb(sh->tick_cpu_s, sh->win_bytes);
	r->rx_cpu_gb = iw_cpu_per_gb(sh->rx_cpu_s, sh->win_bytes);
	r->tx_cpu_gb = iw_cpu_per_gb(sh->tx_cpu_s, sh->win_bytes);
	return 0;
}

static int probe_mulpdu(unsigned int markers, __u32 *mulpdu)
{
	struct cfg c = { "probe", 1, markers, 0 };
	struct result r;

	if (run_one(&c, 0, 0, 1, &r))
		return -1;
	if (!r.size || r.size > 65535) {
		set_err("MPA_MULPDU returned %u", r.size);
		return -1;
	}
	*mulpdu = r.size;
	return 0;
}

/*
 * --rtt-mix: the round trips of raw TCP (TCP_NODELAY), MPA without CRC
 * and MPA with CRC (no markers) on three connections open at once, taken
 * in turns of MIX_BLOCK round trips each. Under emulation the machine's
 * speed drifts, raw TCP's included, by up to 2x for seconds at a time
 * (Documentation/bench.rst); turns some 20 ms apart see the same machine.
 * So each MPA turn is compared with the raw TCP turn just before it: the
 * median of those ratios is the result, with each connection's median RTT
 * (of its turns' medians) beside it.
 */
#define MIX_N		3
#define MIX_BLOCK	100U		/* round trips per turn */
#define MIX_MAX_TURNS	8192U
#define MIX_SETS	5		/* connections made anew */

static const struct cfg mix_cfgs[MIX_N] = {
	{ "tcp", 0, 0, 0 },
	{ "mpa nocrc nomarkers", 1, MPA_F_NO_CRC, 0 },
	{ "mpa crc nomarkers", 1, 0, 0 },
};

/* connection @k of the mix: its responder child, then its startup */
static int mix_connect(int k, int *fd, pid_t *pid, char *buf)
{
	const struct cfg *c = &mix_cfgs[k];
	int lfd, port, j;

	lfd = make_listener(&port);
	if (lfd < 0)
		return -1;
	pid[k] = fork();
	if (pid[k] < 0) {
		set_err("fork: %s", strerror(errno));
		close(lfd);
		return -1;
	}
	if (!pid[k]) {
		for (j = 0; j < k; j++)
			close(fd[j]);
		child_main(lfd, c, PP_SIZE, 1, 0, 0);
	}
	iw_bench_pin(source_cpu, "source");
	fd[k] = connect_to(port);
	close(lfd);
	if (fd[k] < 0 || set_common_opts(fd[k], 1) ||
	    (c->mpa && mpa_setup(fd[k], MPA_ROLE_INITIATOR, c->flags)))
		return -1;
	/* the first round trip ends the startup */
	if (round_trip(fd[k], buf, c->mpa, 0) || (c->mpa && mpa_check_info(fd[k], c->flags)))
		return -1;
	return 0;
}

/*
 * Turns for @secs seconds after 0.1 s of warm-up, appended to @turn
 * (each connection's turn medians) from *@nt on; @sum adds up the round
 * trips measured.
 */
static int mix_turns(const int *fd, double secs, double **turn, unsigned long *nt,
		     double *sum, char *buf)
{
	double rtt[MIX_BLOCK], t, start = iw_now_s();
	unsigned long i;
	int k, warm;

	while (*nt < MIX_MAX_TURNS && (t = iw_now_s()) - start < secs + 0.1) {
		warm = t - start < 0.1;
		for (k = 0; k < MIX_N; k++) {
			for (i = 0; i < MIX_BLOCK; i++) {
				t = iw_now_s();
				if (round_trip(fd[k], buf, mix_cfgs[k].mpa, 0))
					return -1;
				rtt[i] = iw_now_s() - t;
				sum[k] += warm ? 0 : rtt[i];
			}
			turn[k][*nt] = median(rtt, MIX_BLOCK);
		}
		*nt += !warm;
	}
	return 0;
}

/* one set of the three connections: made, measured for @secs, closed */
static int mix_set(double secs, double **turn, unsigned long *nt, double *sum, char *buf)
{
	struct shared *base = sh;
	int fd[MIX_N], k, status, ret = -1;
	pid_t pid[MIX_N];

	for (k = 0; k < MIX_N; k++) {
		fd[k] = -1;
		pid[k] = -1;
	}
	for (k = 0; k < MIX_N; k++) {
		sh = base + k;
		memset(sh, 0, sizeof(*sh));
		if (mix_connect(k, fd, pid, buf))
			goto out;
	}
	ret = mix_turns(fd, secs, turn, nt, sum, buf);
out:
	sh = base;
	/* the responders end at EOF, or after a failure at the close */
	for (k = 0; k < MIX_N; k++) {
		if (fd[k] >= 0 && ret) {
			close(fd[k]);
			fd[k] = -1;
		} else if (fd[k] >= 0) {
			shutdown(fd[k], SHUT_WR);
		}
	}
	for (k = 0; k < MIX_N; k++) {
		if (pid[k] > 0 && (waitpid(pid[k], &status, 0) < 0 || !WIFEXITED(status) ||
				   WEXITSTATUS(status))) {
			if (!ret)
				set_err("%s responder: %s", mix_cfgs[k].name,
					base[k].err[0] ? base[k].err : "died");
			ret = -1;
		}
		if (fd[k] >= 0)
			close(fd[k]);
	}
	return ret;
}

/*
 * MIX_SETS sets of connections one after the other, @secs in all: where
 * the connections' memory lands shifts a run's round trips by a few per
 * cent under emulation (the emulated TLB is direct-mapped), so a result
 * spans several placements.
 */
static int run_rtt_mix(double secs, struct result *res)
{
	double *turn[MIX_N] = { NULL }, *v = NULL, sum[MIX_N] = { 0 };
	unsigned long nt = 0, i;
	char buf[PP_SIZE];
	int k, set, ret = -1;

	memset(res, 0, MIX_N * sizeof(*res));
	memset(buf, 0x5a, sizeof(buf));
	errbuf[0] = 0;
	for (k = 0; k < MIX_N; k++) {
		turn[k] = calloc(MIX_MAX_TURNS, sizeof(double));
		if (!turn[k])
			goto out;
	}
	v = calloc(MIX_MAX_TURNS, sizeof(double));
	if (!v)
		goto out;
	fflush(NULL);
	/* as in run_one(): an end without a CPU of its own runs on CPU 0 */
	if (sink_cpu < 0 || source_cpu < 0)
		iw_bench_pin(0, "ping-pong");
	for (set = 0; set < MIX_SETS; set++)
		if (mix_set(secs / MIX_SETS, turn, &nt, sum, buf))
			goto out;
	if (!nt) {
		set_err("no turn measured");
		goto out;
	}
	for (k = 0; k < MIX_N; k++) {
		for (i = 0; i < nt; i++)
			v[i] = turn[k][i] / turn[0][i];
		res[k].rtt_ratio = median(v, nt);
		res[k].rtt_med_us = median(turn[k], nt) * 1e6;
		res[k].nrtt = nt * MIX_BLOCK;
		res[k].rtt_mean_us = sum[k] / res[k].nrtt * 1e6;
		res[k].msgs_s = 1e6 / res[k].rtt_mean_us;
		res[k].turns = nt;
		res[k].size = PP_SIZE;
		res[k].mbps = -1;
		res[k].cpu_gb = -1;
		res[k].tick_cpu_gb = -1;
		res[k].rx_cpu_gb = -1;
		res[k].tx_cpu_gb = -1;
	}
	ret = 0;
out:
	iw_bench_unpin();
	for (k = 0; k < MIX_N; k++)
		free(turn[k]);
	free(v);
	return ret;
}

/* ---- report ---- */

/*
 * One JSON line: a single run (@rounds 1) or the medians of a table cell.
 * Keys are stable; see mpa-bench(1).
 */
static void print_json(const struct cfg *c, int pingpong, const struct result *r,
		       int rounds, double min, double max)
{
	printf("{");
	iw_json_str("tool", "mpa-bench");
	iw_json_str("name", c->name);
	iw_json_str("kind", pingpong ? "rtt" : "throughput");
	printf("\"size\": %u, ", r->size);
	iw_json_num("mb_s", r->mbps, 3);
	iw_json_num("mb_s_min", pingpong ? -1 : min, 3);
	iw_json_num("mb_s_max", pingpong ? -1 : max, 3);
	iw_json_num("msgs_s", r->msgs_s, 1);
	iw_json_num("rtt_us", pingpong ? r->rtt_med_us : -1, 2);
	iw_json_num("rtt_mean_us", pingpong ? r->rtt_mean_us : -1, 2);
	if (r->turns) {
		iw_json_num("rtt_ratio_tcp", r->rtt_ratio, 4);
		iw_json_num("turns", r->turns, 0);
	}
	iw_json_num("cpu_s_per_gb", r->cpu_gb, 3);
	iw_json_num("cpu_tx_s_per_gb", r->tx_cpu_gb, 3);
	iw_json_num("cpu_rx_s_per_gb", r->rx_cpu_gb, 3);
	iw_json_num("cpu_ticks_s_per_gb", r->tick_cpu_gb, 3);
	printf("\"crc\": %s, ", c->mpa && !(c->flags & MPA_F_NO_CRC) ? "true" : "false");
	printf("\"markers\": %s, ", c->flags & MPA_F_MARKERS ? "true" : "false");
	printf("\"eor\": %s, ", c->eor ? "true" : "false");
	printf("\"batch\": %u, ", c->eor ? 1 : batch);
	printf("\"one_call\": %s, ", one_call && c->mpa && batch > 1 ? "true" : "false");
	printf("\"recv_lens\": %s, ", recv_lens && c->mpa && batch > 1 ? "true" : "false");
	iw_json_num("sink_cpu", run_cpu(sink_cpu, pingpong), 0);
	iw_json_num("source_cpu", run_cpu(source_cpu, pingpong), 0);
	iw_json_str("path",
		    iw_bench_path(family, listen_addr, connect_addr, sink_netns, source_netns));
	iw_json_str("addr", connect_addr ? connect_addr :
			 listen_addr ? listen_addr : "loopback");
	printf("\"rounds\": %d}\n", rounds);
	fflush(stdout);
}

static void print_header(FILE *o)
{
	char line[256], name[128] = "", drivers[256] = "";
	struct utsname u;
	time_t t = time(NULL);
	FILE *f;

	uname(&u);
	fprintf(o, "mpa-bench: %s %s %s\n", u.sysname, u.release, u.version);
	strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S %z", localtime(&t));
	fprintf(o, "date: %s, CPUs online: %ld, ", line, sysconf(_SC_NPROCESSORS_ONLN));
	if (!listen_addr && !connect_addr && !sink_netns && !source_netns)
		fprintf(o, "loopback %s\n", family == AF_INET6 ? "IPv6" : "IPv4");
	else
		fprintf(o, "receiver on %s (netns %s), sender (netns %s) to %s\n",
			listen_addr ? listen_addr : "loopback",
			sink_netns ? sink_netns : "-", source_netns ? source_netns : "-",
			connect_addr ? connect_addr :
			listen_addr ? listen_addr : "loopback");
	if (source_cpu >= 0)
		fprintf(o, "sender pinned to CPU %d (--source-cpu)\n", source_cpu);
	if (sink_cpu >= 0)
		fprintf(o, "receiver pinned to CPU %d (--sink-cpu)\n", sink_cpu);
	f = fopen("/proc/crypto", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char val[128];

		if (sscanf(line, "name : %127s", val) == 1) {
			strcpy(name, val);
		} else if (sscanf(line, "driver : %127s", val) == 1 && !strcmp(name, "crc32c") &&
			   strlen(drivers) + strlen(val) + 2 < sizeof(drivers)) {
			if (drivers[0])
				strcat(drivers, " ");
			strcat(drivers, val);
		}
	}
	if (f)
		fclose(f);
	fprintf(o, "crc32c drivers: %s -> %s\n", drivers[0] ? drivers : "none loaded",
		strstr(drivers, "crc32c-intel") ? "hardware accelerated (crc32c-intel)" :
		"software only");
}

/* The values of the double at offset @off of @n results, sorted */
static void column(double *v, const struct result *rs, int n, size_t off)
{
	int k;

	for (k = 0; k < n; k++)
		memcpy(&v[k], (const char *)&rs[k] + off, sizeof(double));
	qsort(v, n, sizeof(*v), iw_cmp_double);
}

/* The median of the double at offset @off of @n results */
static double med_of(const struct result *rs, int n, size_t off)
{
	double v[MAX_ROUNDS];

	column(v, rs, n, off);
	return iw_median(v, n);
}

/* relative spread (max - min) / median in percent of sorted @v */
static double spread(double *v, int n, double med)
{
	return med > 0 ? (v[n - 1] - v[0]) / med * 100 : 0;
}

/* one table cell: median of the successful rounds, ratio, spread, failures */
static void cell(char *buf, size_t len, const struct result *rs, size_t off, int ok,
		 int rounds, double base)
{
	double v[MAX_ROUNDS], med;
	int n;

	if (!ok) {
		snprintf(buf, len, "FAIL");
		return;
	}
	column(v, rs, ok, off);
	med = iw_median(v, ok);
	n = snprintf(buf, len, "%7.1f %5.2fx +-%.0f%%", med, base > 0 ? med / base : 0,
		     spread(v, ok, med));
	if (ok < rounds && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " F%d", rounds - ok);
}

/* The medians of @ok results of one cell, in one result */
static void cell_medians(struct result *m, const struct result *rs, int ok)
{
	*m = rs[ok - 1];
	m->mbps = med_of(rs, ok, offsetof(struct result, mbps));
	m->msgs_s = med_of(rs, ok, offsetof(struct result, msgs_s));
	m->rtt_med_us = med_of(rs, ok, offsetof(struct result, rtt_med_us));
	m->rtt_mean_us = med_of(rs, ok, offsetof(struct result, rtt_mean_us));
	m->cpu_gb = med_of(rs, ok, offsetof(struct result, cpu_gb));
	m->tick_cpu_gb = med_of(rs, ok, offsetof(struct result, tick_cpu_gb));
	m->rx_cpu_gb = med_of(rs, ok, offsetof(struct result, rx_cpu_gb));
	m->tx_cpu_gb = med_of(rs, ok, offsetof(struct result, tx_cpu_gb));
}

static int run_table(double secs, int rounds)
{
	/* [config][64 B, 1 KiB, MULPDU, RTT][round] */
	static struct result rs[NCFGS][NSIZES + 1][MAX_ROUNDS];
	int ok[NCFGS][NSIZES + 1] = { { 0 } };
	const size_t mb = offsetof(struct result, mbps);
	const size_t rtt = offsetof(struct result, rtt_med_us);
	const size_t cpu = offsetof(struct result, cpu_gb);
	double base[NSIZES + 1], v[MAX_ROUNDS];
	__u32 mulpdu[2], size;
	const char *hdr[NSIZES] = { "64 B", "1 KiB", "MULPDU" };
	int r, s, i, failures = 0;
	FILE *o = json ? stderr : stdout;
	double t0 = iw_now_s();
	struct result m;
	char buf[64];

	print_header(o);
	if (probe_mulpdu(0, &mulpdu[0]) || probe_mulpdu(MPA_F_MARKERS, &mulpdu[1])) {
		fprintf(stderr, "mpa-bench: MPA setup failed: %s\n", errbuf);
		return 1;
	}
	fprintf(o, "MULPDU: %u without markers (also the raw TCP size), %u with markers\n",
		mulpdu[0], mulpdu[1]);
	fprintf(o, "runs: %d rounds, interleaved, %.2g s measured after %.2g s warm-up; medians\n",
		rounds, secs, secs / 4 < 0.5 ? secs / 4 : 0.5);
	fprintf(o, "raw TCP: default options (Nagle on) for throughput, TCP_NODELAY for RTT\n");
	if (sink_cpu < 0 && source_cpu < 0)
		fprintf(o, "RTT: both ends pinned to CPU 0,");
	else
		fprintf(o, "RTT: sender pinned to CPU %d, receiver to CPU %d,",
			run_cpu(source_cpu, 1), run_cpu(sink_cpu, 1));
	fprintf(o, " %.2g s after 0.2 s warm-up\n", secs / 2);
	fflush(o);

	for (r = 0; r < rounds; r++) {
		for (s = 0; s < NSIZES; s++) {
			for (i = 0; i < NCFGS; i++) {
				size = s == 0 ? 64 : s == 1 ? 1024 :
				       mulpdu[cfgs[i].flags & MPA_F_MARKERS ? 1 : 0];
				if (run_one(&cfgs[i], size, 0, secs, &rs[i][s][ok[i][s]])) {
					fprintf(stderr, "mpa-bench: %s size %u: %s\n",
						cfgs[i].name, size, errbuf);
					failures++;
					continue;
				}
				ok[i][s]++;
			}
		}
		for (i = 0; i < NCFGS; i++) {
			if (run_one(&cfgs[i], PP_SIZE, 1, secs / 2,
				    &rs[i][NSIZES][ok[i][NSIZES]])) {
				fprintf(stderr, "mpa-bench: %s ping-pong: %s\n", cfgs[i].name,
					errbuf);
				failures++;
				continue;
			}
			ok[i][NSIZES]++;
		}
		fprintf(stderr, "mpa-bench: round %d/%d done after %.0f s\n", r + 1, rounds,
			iw_now_s() - t0);
	}

	if (json) {
		for (i = 0; i < NCFGS; i++) {
			for (s = 0; s <= NSIZES; s++) {
				if (!ok[i][s])
					continue;
				cell_medians(&m, rs[i][s], ok[i][s]);
				column(v, rs[i][s], ok[i][s], mb);
				print_json(&cfgs[i], s == NSIZES, &m, ok[i][s], v[0],
					   v[ok[i][s] - 1]);
			}
		}
		return failures ? 1 : 0;
	}

	for (s = 0; s < NSIZES; s++)
		base[s] = ok[0][s] ? med_of(rs[0][s], ok[0][s], mb) : 0;
	base[NSIZES] = ok[0][NSIZES] ? med_of(rs[0][NSIZES], ok[0][NSIZES], rtt) : 0;

	printf("\nthroughput in MB/s (10^6 payload octets/s, receiver side), x = ratio to tcp,\n"
	       "+-%% = (max - min) / median over the rounds, Fn = n rounds failed\n\n");
	printf("%-20s", "");
	for (s = 0; s < NSIZES; s++)
		printf(" | %-23s", hdr[s]);
	printf(" | 64 B RTT us: median, x, +-%%, mean\n");
	for (i = 0; i < NCFGS; i++) {
		printf("%-20s", cfgs[i].name);
		for (s = 0; s < NSIZES; s++) {
			cell(buf, sizeof(buf), rs[i][s], mb, ok[i][s], rounds, base[s]);
			printf(" | %-23s", buf);
		}
		cell(buf, sizeof(buf), rs[i][NSIZES], rtt, ok[i][NSIZES], rounds,
		     base[NSIZES]);
		printf(" | %s", buf);
		if (ok[i][NSIZES])
			printf(", mean %.1f", med_of(rs[i][NSIZES], ok[i][NSIZES],
						     offsetof(struct result, rtt_mean_us)));
		printf("\n");
	}
	printf("\nCPU time per GB moved (s/GB: busy CPU of the machine, /proc/stat),\n"
	       "x = ratio to tcp\n\n");
	printf("%-20s", "");
	for (s = 0; s < NSIZES; s++)
		printf(" | %-23s", hdr[s]);
	printf("\n");
	for (s = 0; s < NSIZES; s++)
		base[s] = ok[0][s] ? med_of(rs[0][s], ok[0][s], cpu) : 0;
	for (i = 0; i < NCFGS; i++) {
		printf("%-20s", cfgs[i].name);
		for (s = 0; s < NSIZES; s++) {
			cell(buf, sizeof(buf), rs[i][s], cpu, ok[i][s], rounds, base[s]);
			printf(" | %-23s", buf);
		}
		printf("\n");
	}
	printf("\nMULPDU column: tcp and nomarkers rows send %u-octet messages, markers rows %u.\n",
	       mulpdu[0], mulpdu[1]);
	printf("Total time %.0f s, %d failed run(s) (errors on stderr).\n", iw_now_s() - t0,
	       failures);
	return failures ? 1 : 0;
}

static int rtt_mix_main(double secs)
{
	struct result res[MIX_N];
	int k;

	if (run_rtt_mix(secs, res)) {
		fprintf(stderr, "mpa-bench: --rtt-mix: %s\n", errbuf);
		return 1;
	}
	for (k = 0; k < MIX_N; k++) {
		if (json)
			print_json(&mix_cfgs[k], 1, &res[k], 1, -1, -1);
		else
			printf("%s: 64 B RTT median %.1f us, mean %.1f us, %.3fx TCP (%lu turns)\n",
			       mix_cfgs[k].name, res[k].rtt_med_us, res[k].rtt_mean_us,
			       res[k].rtt_ratio, res[k].turns);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'M' },
		{ "markers", no_argument, NULL, 'm' },
		{ "no-crc", no_argument, NULL, 'n' },
		{ "eor", no_argument, NULL, 'E' },
		{ "batch", required_argument, NULL, 'B' },
		{ "one-call", no_argument, NULL, 'O' },
		{ "recv-lens", no_argument, NULL, 'R' },
		{ "pingpong", no_argument, NULL, 'p' },
		{ "rtt-mix", no_argument, NULL, 'X' },
		{ "table", no_argument, NULL, 'T' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "listen-addr", required_argument, NULL, 'L' },
		{ "connect-addr", required_argument, NULL, 'C' },
		{ "sink-netns", required_argument, NULL, 'N' },
		{ "source-netns", required_argument, NULL, 'S' },
		{ "sink-cpu", required_argument, NULL, 'P' },
		{ "source-cpu", required_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sockaddr_storage ss;
	struct cfg c = { "mpa", 1, 0, 0 };
	int opt, table = 0, pingpong = 0, mix = 0, rounds = 3;
	unsigned long size = 1024;
	double secs = 2;
	char *end, name[64];
	struct result res;
	__u32 mulpdu;

	while ((opt = getopt_long(argc, argv, "6h", lopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (!strcmp(optarg, "mulpdu")) {
				size = SIZE_MULPDU;
				break;
			}
			size = strtoul(optarg, &end, 0);
			if (*end || !size || size > MAX_SIZE)
				goto usage;
			break;
		case 't':
			secs = strtod(optarg, &end);
			if (*end || !(secs >= 0.1 && secs <= 3600))
				goto usage;
			break;
		case 'M':
			if (!strcmp(optarg, "tcp"))
				c.mpa = 0;
			else if (!strcmp(optarg, "mpa"))
				c.mpa = 1;
			else
				goto usage;
			break;
		case 'm':
			c.flags |= MPA_F_MARKERS;
			break;
		case 'n':
			c.flags |= MPA_F_NO_CRC;
			break;
		case 'E':
			c.eor = 1;
			break;
		case 'B':
			batch = strtoul(optarg, &end, 0);
			if (*end || !batch || batch > MAX_BATCH)
				goto usage;
			break;
		case 'O':
			one_call = 1;
			break;
		case 'R':
			recv_lens = 1;
			break;
		case 'p':
			pingpong = 1;
			break;
		case 'X':
			mix = 1;
			break;
		case 'T':
			table = 1;
			break;
		case 'r':
			rounds = strtol(optarg, &end, 0);
			if (*end || rounds < 1 || rounds > MAX_ROUNDS)
				goto usage;
			break;
		case '6':
			family = AF_INET6;
			break;
		case 'V':
			iw_print_version();
			return 0;
		case 'j':
			json = 1;
			break;
		case 'L':
			listen_addr = optarg;
			break;
		case 'C':
			connect_addr = optarg;
			break;
		case 'N':
			sink_netns = optarg;
			break;
		case 'S':
			source_netns = optarg;
			break;
		case 'P':
			if (iw_bench_cpu_arg(optarg, &sink_cpu))
				goto usage;
			break;
		case 'Q':
			if (iw_bench_cpu_arg(optarg, &source_cpu))
				goto usage;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	if (c.mpa && size > 65535 && !table)
		goto usage;
	/* a bad address is a usage error, found before any output */
	iw_bench_addr(family, listen_addr, 0, &ss);
	iw_bench_addr(family, connect_addr, 0, &ss);
	if ((table || mix || (c.mpa && (c.flags & MPA_F_NO_CRC))) &&
	    !iw_bench_no_crc_allowed("no CRC"))
		return 1;
	iw_bench_netns(sink_netns, source_netns, &sink_ns_fd, &source_ns_fd, &orig_ns_fd);
	/* a CPU that cannot be had fails here, not in every run */
	iw_bench_pin(sink_cpu, "sink");
	iw_bench_pin(source_cpu, "source");
	iw_bench_unpin();

	/* one per responder: --rtt-mix has MIX_N at once */
	sh = mmap(NULL, MIX_N * sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mpa-bench: mmap");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (table)
		return run_table(secs, rounds);
	if (mix)
		return rtt_mix_main(secs / 2);

	if (pingpong) {
		size = PP_SIZE;
	} else if (size == SIZE_MULPDU) {
		if (probe_mulpdu(c.mpa ? c.flags & MPA_F_MARKERS : 0, &mulpdu)) {
			fprintf(stderr, "mpa-bench: MULPDU probe: %s\n", errbuf);
			return 1;
		}
		size = mulpdu;
	}
	snprintf(name, sizeof(name), "%s%s%s%s", c.mpa ? "mpa" : "tcp",
		 !c.mpa && c.eor ? " nodelay+eor" : "",
		 !c.mpa ? "" : c.flags & MPA_F_NO_CRC ? " nocrc" : " crc",
		 !c.mpa ? "" : c.flags & MPA_F_MARKERS ? " markers" : " nomarkers");
	c.name = name;
	if (run_one(&c, size, pingpong, pingpong ? secs / 2 : secs, &res)) {
		fprintf(stderr, "mpa-bench: %s: %s\n", name, errbuf);
		return 1;
	}
	if (json)
		print_json(&c, pingpong, &res, 1, res.mbps, res.mbps);
	else if (pingpong)
		printf("%s: 64 B RTT median %.1f us, mean %.1f us (%lu round trips)\n", name,
		       res.rtt_med_us, res.rtt_mean_us, res.nrtt);
	else
		printf("%s: size %u: %.1f MB/s (%llu octets in %.2f s; %llu messages in all),\n"
		       "  CPU %.2f s/GB (sender %.2f, receiver %.2f)\n",
		       name, res.size, res.mbps, (unsigned long long)sh->win_bytes,
		       sh->win_secs, (unsigned long long)sh->rx_msgs, res.cpu_gb,
		       res.tx_cpu_gb, res.rx_cpu_gb);
	return 0;
usage:
	print_usage(stderr);
	return 2;
}
