// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: TCP connections, exact reads and writes, process limits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <linux/tcp.h>

#include "libiwarp.h"

/**
 * iw_now_ms() - CLOCK_MONOTONIC in milliseconds
 *
 * Return: milliseconds since an arbitrary point.
 */
long long iw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/**
 * iw_tcp_open() - a connected TCP socket to or from @host @port
 * @host: name or address (getaddrinfo)
 * @port: service name or number
 * @family: AF_INET, AF_INET6 or AF_UNSPEC
 * @passive: listen on @host @port and accept one connection instead of
 *	connecting
 * @err: on failure, "step: reason" (e.g. "connect: Connection refused")
 * @errlen: size of @err
 *
 * Return: the connected socket, or -1 with errno set (0 for a name
 * resolution failure, whose reason is only in @err).
 */
int iw_tcp_open(const char *host, const char *port, int family, bool passive,
		char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = family,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = passive ? AI_PASSIVE : 0,
	};
	const char *step;
	struct addrinfo *ai;
	int fd, lfd, one = 1, ret;

	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "%s %s: %s", host, port, gai_strerror(ret));
		errno = 0;
		return -1;
	}
	step = "socket";
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0)
		goto fail;
	if (!passive) {
		step = "connect";
		if (connect(fd, ai->ai_addr, ai->ai_addrlen))
			goto fail_close;
		freeaddrinfo(ai);
		return fd;
	}
	lfd = fd;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	step = "bind";
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen))
		goto fail_close;
	step = "listen";
	if (listen(lfd, 1))
		goto fail_close;
	freeaddrinfo(ai);
	fd = accept(lfd, NULL, NULL);
	ret = errno;
	close(lfd);
	if (fd < 0) {
		snprintf(err, errlen, "accept: %s", strerror(ret));
		errno = ret;
	}
	return fd;

fail_close:
	ret = errno;
	close(fd);
	errno = ret;
fail:
	ret = errno;
	freeaddrinfo(ai);
	snprintf(err, errlen, "%s: %s", step, strerror(ret));
	errno = ret;
	return -1;
}

/**
 * iw_loopback_addr() - the loopback address of @family with @port
 * @family: AF_INET or AF_INET6
 * @port: port number in host order (0: any)
 * @ss: the address
 *
 * Return: the length of the address.
 */
socklen_t iw_loopback_addr(int family, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_loopback;
		a6->sin6_port = htons(port);
		return sizeof(*a6);
	}
	a4->sin_family = AF_INET;
	a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a4->sin_port = htons(port);
	return sizeof(*a4);
}

/**
 * iw_sockaddr_port() - the port of an IPv4 or IPv6 address
 * @ss: the address
 *
 * Return: the port in host order.
 */
int iw_sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/**
 * iw_loopback_listen() - a listening socket on the loopback address
 * @family: AF_INET or AF_INET6
 * @addr: the bound address, with the port the kernel chose
 * @alen: its length
 *
 * Return: the socket, or -1 with errno set.
 */
int iw_loopback_listen(int family, struct sockaddr_storage *addr, socklen_t *alen)
{
	int one = 1, err;
	int fd;

	*alen = iw_loopback_addr(family, 0, addr);
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)addr, *alen) ||
	    listen(fd, 512) ||
	    getsockname(fd, (struct sockaddr *)addr, alen)) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * A connected loopback TCP pair whose connecting end fds[0] gets the
 * socket option @level/@name = @val before connect() (none if @val is 0).
 */
static int loopback_pair_opt(int family, int fds[2], int level, int name, int val)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int lfd;

	lfd = iw_loopback_listen(family, &addr, &alen);
	if (lfd < 0)
		return -1;
	fds[0] = socket(family, SOCK_STREAM, 0);
	if (fds[0] < 0 ||
	    (val && setsockopt(fds[0], level, name, &val, sizeof(val))) ||
	    connect(fds[0], (struct sockaddr *)&addr, alen)) {
		close(lfd);
		return -1;
	}
	fds[1] = accept(lfd, NULL, NULL);
	close(lfd);
	return fds[1] < 0 ? -1 : 0;
}

/**
 * iw_loopback_pair_rcvbuf() - a connected loopback TCP pair
 * @family: AF_INET or AF_INET6
 * @fds: fds[0] the connecting end, fds[1] the accepted end
 * @rcvbuf: SO_RCVBUF of fds[0], set before connect (0: the default)
 *
 * Return: 0, or -1 with errno set.
 */
int iw_loopback_pair_rcvbuf(int family, int fds[2], int rcvbuf)
{
	return loopback_pair_opt(family, fds, SOL_SOCKET, SO_RCVBUF, rcvbuf);
}

/**
 * iw_loopback_pair_mss() - a connected loopback TCP pair with a fixed MSS
 * @family: AF_INET or AF_INET6
 * @fds: fds[0] the connecting end, fds[1] the accepted end
 * @mss: TCP_MAXSEG of fds[0], set before connect and announced in its SYN,
 *	so that both ends keep it (on lo the MSS otherwise follows the
 *	window on 6.12); 0: the default
 *
 * Return: 0, or -1 with errno set.
 */
int iw_loopback_pair_mss(int family, int fds[2], int mss)
{
	return loopback_pair_opt(family, fds, IPPROTO_TCP, TCP_MAXSEG, mss);
}

/**
 * iw_loopback_pair() - a connected loopback TCP pair, default buffers
 * @family: AF_INET or AF_INET6
 * @fds: fds[0] the connecting end, fds[1] the accepted end
 *
 * Return: 0, or -1 with errno set.
 */
int iw_loopback_pair(int family, int fds[2])
{
	return iw_loopback_pair_rcvbuf(family, fds, 0);
}

/**
 * iw_close_pair() - close both ends of a pair that are open
 * @fds: two fds, -1 for a closed one; both -1 afterwards
 */
void iw_close_pair(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	fds[0] = -1;
	fds[1] = -1;
}

/**
 * iw_readn() - read exactly @n octets
 * @fd: socket or file
 * @buf: destination
 * @n: octets wanted
 * @ms: the longest wait for each read (-1: no limit)
 *
 * Return: @n, fewer after EOF, an error or @ms without data, or the
 * result of the first read (0 or -1) if nothing was read.
 */
ssize_t iw_readn(int fd, void *buf, size_t n, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		if (poll(&p, 1, ms) != 1)
			break;
		r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return got ? (ssize_t)got : r;
		got += r;
	}
	return got;
}

/**
 * iw_writen() - write all of @buf
 * @fd: socket or file
 * @buf: source
 * @n: octets
 *
 * Return: 0, or -1 (errno set if the write failed, 0 if it wrote nothing).
 */
int iw_writen(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/**
 * iw_so_error() - SO_ERROR of a socket (clears it)
 * @fd: socket
 *
 * Return: the pending error, 0 if none, -1 if the option fails.
 */
int iw_so_error(int fd)
{
	socklen_t len = sizeof(int);
	int v = -1;

	getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &len);
	return v;
}

/* The __u32 at @off in TCP_INFO of @fd, or -1 with errno set */
static long long tcp_info_u32(int fd, size_t off)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	__u32 v;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	if (len < off + sizeof(v)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	memcpy(&v, (const char *)&ti + off, sizeof(v));
	return v;
}

/**
 * iw_tcp_data_segs_out() - data segments TCP has sent on a socket
 * @fd: TCP socket
 *
 * TCP_INFO's tcpi_data_segs_out: segments with data, retransmissions
 * included, as TCP cut them (GSO and TSO cut an skb into several).
 *
 * Return: the count, or -1 with errno set (EOPNOTSUPP when the kernel
 * does not report it).
 */
long long iw_tcp_data_segs_out(int fd)
{
	return tcp_info_u32(fd, offsetof(struct tcp_info, tcpi_data_segs_out));
}

/**
 * iw_tcp_snd_wnd() - the receive window the peer last announced
 * @fd: TCP socket
 *
 * TCP_INFO's tcpi_snd_wnd: what the peer's latest ACK allows this end
 * to send beyond the data it acknowledged, in octets (window scaling
 * applied).
 *
 * Return: the window, or -1 with errno set (EOPNOTSUPP when the kernel
 * does not report it).
 */
long long iw_tcp_snd_wnd(int fd)
{
	return tcp_info_u32(fd, offsetof(struct tcp_info, tcpi_snd_wnd));
}

/**
 * iw_raise_memlock() - raise RLIMIT_MEMLOCK to its hard limit
 * @need: octets about to be registered; 0 raises in any case, otherwise
 *	only when the soft limit is below @need plus 1 MiB
 *
 * Memory registration (DDP_IOC_REG_MR) pins pages and counts them
 * against RLIMIT_MEMLOCK.
 *
 * Return: 0, or -1 with errno set.
 */
int iw_raise_memlock(unsigned long long need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	if (rl.rlim_cur == rl.rlim_max)
		return 0;
	if (need && (rl.rlim_cur == RLIM_INFINITY ||
		     rl.rlim_cur >= need + (1ULL << 20)))
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}
