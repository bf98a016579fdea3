/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libiwarp - the user-space side of mpa.ko and ddp.ko: TCP connections,
 * the MPA startup (RFC 5044 section 7.1) through the "mpa" TCP ULP, the
 * /dev/ddp calls (RFC 5041), error names and exit statuses. Linked by the
 * tools (mpa-cat, mpa-bench, ddp-xfer, ddp-bench, rdmap-peer) and by the
 * selftests.
 *
 * Installed as libiwarp.so with this header and libiwarp.pc
 * (`make -C tools/lib install`); the man pages are libiwarp(3),
 * iw_sock(3), iw_mpa(3), iw_ddp(3), iw_msg(3) and iw_bench(3).
 *
 * Every call but those of iw_msg.c and iw_bench.c returns -1 (or a documented
 * sentinel) with errno set on failure and never prints or exits: the
 * caller decides what a failure means. Every name has the iw_ or IW_ prefix, which no kernel symbol
 * of the project uses.
 */
#ifndef _LIBIWARP_H
#define _LIBIWARP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/ddp.h>
#include <linux/mpa.h>

#ifndef TCP_ULP
#define TCP_ULP		31
#endif

/*
 * Exit statuses shared by the tools (each tool documents those it uses).
 * 2 is a bad command line in every tool, C or shell.
 */
enum iw_exit {
	IW_EXIT_OK = 0,
	IW_EXIT_DDP = 1,	/* the DDP stream reported a DDP error */
	IW_EXIT_USAGE = 2,	/* bad command line */
	IW_EXIT_MISMATCH = 3,	/* data verification failed */
	IW_EXIT_PROTO = 4,	/* protocol error, timeout, early close, reject */
	IW_EXIT_TERM = 5,	/* the peer sent an RDMAP Terminate */
	IW_EXIT_LLP = 6,	/* the DDP stream reported an MPA (LLP) error */
	IW_EXIT_SYS = 10,	/* system or network error */
	IW_EXIT_REJECTED = 12,	/* mpa-cat: the Responder rejected the Request */
	IW_EXIT_RULE4 = 13,	/* mpa-cat: the Initiator closed before an FPDU */
	IW_EXIT_MPA = 20,	/* mpa-cat: 20 + the RFC 5044 error code 1..4 */
};

/* struct mpa_info.state and iw_mpa_error() when the option itself fails */
#define IW_MPA_INVALID	0xdead

/* ---- iw_sock.c: TCP, I/O, process ---- */

long long iw_now_ms(void);
int iw_tcp_open(const char *host, const char *port, int family, bool passive,
		char *err, size_t errlen);
socklen_t iw_loopback_addr(int family, int port, struct sockaddr_storage *ss);
int iw_sockaddr_port(const struct sockaddr_storage *ss);
int iw_loopback_listen(int family, struct sockaddr_storage *addr, socklen_t *alen);
int iw_loopback_pair_rcvbuf(int family, int fds[2], int rcvbuf);
int iw_loopback_pair_mss(int family, int fds[2], int mss);
int iw_loopback_pair(int family, int fds[2]);
void iw_close_pair(int fds[2]);
ssize_t iw_readn(int fd, void *buf, size_t n, int ms);
int iw_writen(int fd, const void *buf, size_t n);
int iw_so_error(int fd);
long long iw_tcp_data_segs_out(int fd);
long long iw_tcp_snd_wnd(int fd);
int iw_raise_memlock(unsigned long long need);

/* ---- iw_mpa.c: the "mpa" ULP ---- */

int iw_mpa_attach(int fd);
int iw_mpa_start_ex(int fd, const struct mpa_start *hdr, const void *pd,
		    const void *lsm);
int iw_mpa_start(int fd, __u32 role, __u32 flags, const void *pd, __u16 pd_len,
		 const void *lsm, __u32 lsm_len);
int iw_mpa_accept(int fd, const void *pd, __u16 pd_len);
int iw_mpa_info(int fd, struct mpa_info *info);
struct mpa_info iw_mpa_info_of(int fd);
__u32 iw_mpa_error(int fd);
int iw_mpa_stats(int fd, struct mpa_stats *st);
struct mpa_stats iw_mpa_stats_of(int fd);
__u32 iw_mpa_mulpdu(int fd);
int iw_mpa_peer_pd(int fd, void *buf, socklen_t *len);
__u32 iw_mpa_wait_change(int fd, __u32 from, int ms);
int iw_mpa_wait_state(int fd, __u32 state, int ms);
int iw_mpa_wait_startup(int fd, __u32 role, int ms, struct mpa_info *info);
int iw_mpa_respond(int fd, int ms);
int iw_mpa_startup_pair(const int fds[2], __u32 iflags, __u32 rflags, int ms);
int iw_mpa_pair(int family, int fds[2], __u32 iflags, __u32 rflags, int ms);
const char *iw_mpa_err_name(unsigned int code);

/* ---- iw_ddp.c: /dev/ddp ---- */

int iw_ddp_open(void);
int iw_ddp_bind(int pd, int sock, __u32 nqueues);
int iw_ddp_reg_mr(int pd, void *addr, __u64 len, __u64 base_to, __u32 access,
		  int stream_fd, __u32 *stag);
int iw_ddp_invalidate(int pd, __u32 stag);
int iw_ddp_post_recv(int sfd, void *addr, __u64 len, __u32 qn, __u64 cookie);
int iw_ddp_send_tagged(int sfd, const void *buf, __u64 len, __u32 stag, __u64 to,
		       __u8 rsvdulp);
int iw_ddp_send_untagged(int sfd, const void *buf, __u64 len, __u32 qn,
			 const __u8 *rsvdulp);
int iw_ddp_event(int sfd, struct ddp_event *ev, int ms);
int iw_ddp_shutdown(int sfd);
const char *iw_ddp_err_name(unsigned int type, unsigned int code);

/* ---- iw_msg.c: the tools' diagnostics (the only calls that print or exit), command line ---- */

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif
#ifndef __noreturn
#define __noreturn	__attribute__((noreturn))
#endif

__printf(1, 0) void iw_vmsg(const char *fmt, va_list ap);
__printf(1, 2) void iw_msg(const char *fmt, ...);
__printf(2, 3) void iw_msg_if(bool on, const char *fmt, ...);
__noreturn void iw_die_sys(const char *what);
const char *iw_version(void);
void iw_print_version(void);
int iw_usage(void (*usage)(FILE *f), bool help);
int iw_host_port(int argc, char **argv, const char **host, const char **port);
int iw_secs_arg(const char *arg, long min, int *ms);

/* ---- iw_bench.c: what mpa-bench and ddp-bench share (prints, exits on usage errors) ---- */

/* A CPU time mark; see iw_cpu_mark() */
struct iw_cpu_mark {
	double wall;	/* CLOCK_MONOTONIC, s */
	double busy_s;	/* user+nice+system+irq+softirq of all CPUs, s (ticks); < 0: unknown */
	double idle_s;	/* idle+iowait of all CPUs, s; < 0: unknown */
	double self_s;	/* getrusage(RUSAGE_SELF) user+system, s */
};

/* iw_median() looks at no more values */
#define IW_MEDIAN_MAX	64

double iw_now_s(void);
void iw_cpu_mark(struct iw_cpu_mark *m);
double iw_cpu_busy(const struct iw_cpu_mark *a, const struct iw_cpu_mark *b);
double iw_cpu_ticks(const struct iw_cpu_mark *a, const struct iw_cpu_mark *b);
double iw_cpu_per_gb(double cpu_s, unsigned long long octets);
int iw_cmp_double(const void *a, const void *b);
double iw_median(const double *in, int n);
void iw_json_str(const char *key, const char *v);
void iw_json_num(const char *key, double v, int decimals);
const char *iw_bench_path(int family, const char *listen_addr, const char *connect_addr,
			  const char *sink_netns, const char *source_netns);
socklen_t iw_bench_addr(int family, const char *addr, int port,
			struct sockaddr_storage *ss);
void iw_bench_netns(const char *sink_netns, const char *source_netns,
		    int *sink_fd, int *source_fd, int *orig_fd);
int iw_bench_cpu_arg(const char *arg, int *cpu);
void iw_bench_pin(int cpu, const char *who);
void iw_bench_unpin(void);
bool iw_bench_no_crc_allowed(const char *what);

#endif /* _LIBIWARP_H */
