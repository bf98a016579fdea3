// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: the pieces mpa-bench and ddp-bench share: CPU time marks and
 * CPU seconds per GB, medians, the JSON members of their --json lines,
 * and the endpoints (addresses, network namespaces, CPUs) of their
 * command lines. The command-line calls print "program: message" and exit
 * on a bad argument, as iw_msg.c does.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "libiwarp.h"

#define IW_NO_CRC_PARAM	"/sys/module/mpa/parameters/allow_no_crc"

/**
 * iw_now_s() - CLOCK_MONOTONIC in seconds
 *
 * Return: the time in seconds, with nanoseconds as the fraction.
 */
double iw_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval t)
{
	return t.tv_sec + t.tv_usec / 1e6;
}

/**
 * iw_cpu_mark() - take a CPU time mark
 * @m: out: the clock, the machine's idle and non-idle time, this process's
 *
 * The machine's times come from the "cpu" line of /proc/stat; @m->busy_s
 * and @m->idle_s are -1 when it cannot be read. @m->self_s is
 * getrusage(RUSAGE_SELF) user plus system time, 0 if that fails.
 */
void iw_cpu_mark(struct iw_cpu_mark *m)
{
	unsigned long long v[7];
	double hz = sysconf(_SC_CLK_TCK);
	struct rusage ru;
	FILE *f;

	m->busy_s = -1;
	m->idle_s = -1;
	m->wall = iw_now_s();
	f = fopen("/proc/stat", "r");
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6]) == 7) {
			m->busy_s = (v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
			m->idle_s = (v[3] + v[4]) / hz;
		}
		fclose(f);
	}
	m->self_s = 0;
	if (!getrusage(RUSAGE_SELF, &ru))
		m->self_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/**
 * iw_cpu_busy() - the machine's busy CPU seconds between two marks
 * @a: the first mark
 * @b: the later mark
 *
 * Taken as CPUs x elapsed - idle: the non-idle fields of /proc/stat are
 * sampled by the timer tick, which under qemu TCG undercounts a busy
 * guest, while idle time is clocked at each idle exit.
 *
 * Return: the seconds (at least 0), or -1 if unknown.
 */
double iw_cpu_busy(const struct iw_cpu_mark *a, const struct iw_cpu_mark *b)
{
	double busy;

	if (a->idle_s < 0 || b->idle_s < 0)
		return -1;
	busy = sysconf(_SC_NPROCESSORS_ONLN) * (b->wall - a->wall) - (b->idle_s - a->idle_s);
	return busy > 0 ? busy : 0;
}

/**
 * iw_cpu_ticks() - the busy CPU seconds from the tick-sampled fields
 * @a: the first mark
 * @b: the later mark
 *
 * Return: the seconds, or -1 if unknown.
 */
double iw_cpu_ticks(const struct iw_cpu_mark *a, const struct iw_cpu_mark *b)
{
	return a->busy_s < 0 || b->busy_s < 0 ? -1 : b->busy_s - a->busy_s;
}

/**
 * iw_cpu_per_gb() - CPU seconds per GB (10^9 octets) moved
 * @cpu_s: CPU seconds, negative if unknown
 * @octets: octets moved in that time
 *
 * Return: the seconds per GB, or -1 if @cpu_s is unknown or @octets is 0.
 */
double iw_cpu_per_gb(double cpu_s, unsigned long long octets)
{
	return octets && cpu_s >= 0 ? cpu_s / (octets / 1e9) : -1;
}

/**
 * iw_cmp_double() - qsort(3) comparison of two doubles, ascending
 * @a: the first double
 * @b: the second double
 *
 * Return: -1, 0 or 1.
 */
int iw_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/**
 * iw_median() - the median of the known values
 * @in: @n values; negative ones are unknown and left out
 * @n: how many, at most IW_MEDIAN_MAX
 *
 * Return: the median (the mean of the middle two for an even count), or
 * -1 if no value is known.
 */
double iw_median(const double *in, int n)
{
	double v[IW_MEDIAN_MAX];
	int i, k = 0;

	for (i = 0; i < n && i < IW_MEDIAN_MAX; i++)
		if (in[i] >= 0)
			v[k++] = in[i];
	if (!k)
		return -1;
	qsort(v, k, sizeof(*v), iw_cmp_double);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/**
 * iw_json_str() - print a JSON string member and ", " on stdout
 * @key: the member's name (printed as is)
 * @v: the value; " and \ are escaped, control characters left out
 */
void iw_json_str(const char *key, const char *v)
{
	printf("\"%s\": \"", key);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			putchar('\\');
		if ((unsigned char)*v >= 0x20)
			putchar(*v);
	}
	printf("\", ");
}

/**
 * iw_json_num() - print a JSON number member and ", " on stdout
 * @key: the member's name (printed as is)
 * @v: the value; negative means unknown and prints null
 * @decimals: digits after the decimal point
 */
void iw_json_num(const char *key, double v, int decimals)
{
	if (v < 0)
		printf("\"%s\": null, ", key);
	else
		printf("\"%s\": %.*f, ", key, decimals, v);
}

/**
 * iw_bench_path() - a short name of the path a benchmark measured
 * @family: AF_INET or AF_INET6
 * @listen_addr: the sink's address, NULL for loopback
 * @connect_addr: the source's target, NULL for @listen_addr
 * @sink_netns: the sink's network namespace, NULL for ours
 * @source_netns: the source's network namespace, NULL for ours
 *
 * Return: "lo" or "lo6" for loopback, else "SOURCE->SINK" with the
 * namespace names ("-": ours), in a static buffer.
 */
const char *iw_bench_path(int family, const char *listen_addr, const char *connect_addr,
			  const char *sink_netns, const char *source_netns)
{
	static char buf[300];

	if (!listen_addr && !connect_addr && !sink_netns && !source_netns)
		return family == AF_INET6 ? "lo6" : "lo";
	snprintf(buf, sizeof(buf), "%s->%s", source_netns ? source_netns : "-",
		 sink_netns ? sink_netns : "-");
	return buf;
}

/**
 * iw_bench_addr() - a command line's address with a port
 * @family: AF_INET or AF_INET6
 * @addr: numeric address of @family, NULL for loopback
 * @port: the port, host order
 * @ss: out: the address
 *
 * A bad @addr is a usage error: "not an IPv4 address" (or IPv6) on stderr
 * and exit status 2.
 *
 * Return: the length of the address.
 */
socklen_t iw_bench_addr(int family, const char *addr, int port,
			struct sockaddr_storage *ss)
{
	socklen_t len = iw_loopback_addr(family, port, ss);
	void *in = family == AF_INET6 ?
		   (void *)&((struct sockaddr_in6 *)ss)->sin6_addr :
		   (void *)&((struct sockaddr_in *)ss)->sin_addr;

	if (!addr || inet_pton(family, addr, in) == 1)
		return len;
	iw_msg("not an IPv%c address: %s", family == AF_INET6 ? '6' : '4', addr);
	exit(2);
}

/* An fd for the namespace /run/netns/@name (ip-netns(8)). */
static int open_netns(const char *name)
{
	char path[256];
	int fd;

	if (strpbrk(name, "/\"\\")) {
		iw_msg("bad namespace name: %s", name);
		exit(2);
	}
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		iw_msg("%s: %s", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/**
 * iw_bench_netns() - open the network namespaces of a command line
 * @sink_netns: the sink's namespace in /run/netns (ip-netns(8)), or NULL
 * @source_netns: the source's, or NULL
 * @sink_fd: out: an fd for @sink_netns, or -1 if NULL
 * @source_fd: out: an fd for @source_netns, or -1 if NULL
 * @orig_fd: out: an fd for the caller's own namespace (to return to), -1
 *	if both names are NULL
 *
 * A name with "/", '"' or "\" is a usage error (exit status 2); a
 * namespace that cannot be opened exits with status 1, after a message on
 * stderr.
 */
void iw_bench_netns(const char *sink_netns, const char *source_netns,
		    int *sink_fd, int *source_fd, int *orig_fd)
{
	*sink_fd = -1;
	*source_fd = -1;
	*orig_fd = -1;
	if (sink_netns || source_netns) {
		*orig_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (*orig_fd < 0) {
			iw_msg("/proc/self/ns/net: %s", strerror(errno));
			exit(1);
		}
	}
	if (sink_netns)
		*sink_fd = open_netns(sink_netns);
	if (source_netns)
		*source_fd = open_netns(source_netns);
}

/**
 * iw_bench_cpu_arg() - the argument of --sink-cpu or --source-cpu
 * @arg: the argument, a decimal CPU number
 * @cpu: out: the CPU
 *
 * Return: 0, or -1 when @arg is not a number from 0 to CPU_SETSIZE - 1
 * (a usage error of the caller's).
 */
int iw_bench_cpu_arg(const char *arg, int *cpu)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*arg))
		return -1;
	v = strtol(arg, &end, 10);
	if (*end || v >= CPU_SETSIZE)
		return -1;
	*cpu = v;
	return 0;
}

/* the CPUs of the process before its first iw_bench_pin() */
static cpu_set_t own_cpus;
static bool own_cpus_saved;

/**
 * iw_bench_pin() - pin the calling process to one CPU
 * @cpu: the CPU (below CPU_SETSIZE); negative: leave the process alone
 * @who: the process's role, for the message, e.g. "sink"
 *
 * Each end of a benchmark calls it after the fork with its own CPU, so that
 * the two ends of one machine run where the two hosts they model would. The
 * first call keeps the CPUs the process had, for iw_bench_unpin(). A CPU
 * that is offline, missing or outside the caller's cpuset exits with status
 * 1 after "@who: cannot pin to CPU N: ..." on stderr.
 */
void iw_bench_pin(int cpu, const char *who)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	if (!own_cpus_saved) {
		if (sched_getaffinity(0, sizeof(own_cpus), &own_cpus)) {
			iw_msg("sched_getaffinity: %s", strerror(errno));
			exit(1);
		}
		own_cpus_saved = true;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		iw_msg("%s: cannot pin to CPU %d: %s", who, cpu, strerror(errno));
		exit(1);
	}
}

/**
 * iw_bench_unpin() - give the calling process back its own CPUs
 *
 * The CPUs it had before its first iw_bench_pin(); nothing if it never
 * pinned. A benchmark whose parent process pins itself for a run calls it
 * at the end of the run, so that the next run's child, forked from the
 * parent, does not inherit the pin. Exits with status 1 when
 * sched_setaffinity() fails.
 */
void iw_bench_unpin(void)
{
	if (own_cpus_saved && sched_setaffinity(0, sizeof(own_cpus), &own_cpus)) {
		iw_msg("sched_setaffinity: %s", strerror(errno));
		exit(1);
	}
}

/**
 * iw_bench_no_crc_allowed() - whether mpa.ko lets MPA run without CRC
 * @what: how the refusal names the request, e.g. "--no-crc"
 *
 * MPA_START fails with EPERM unless the administrator set
 * mpa.allow_no_crc; this says so before any run, "@what refused: ..." on
 * stderr. A missing parameter file (mpa.ko not loaded) counts as allowed:
 * the runs will tell.
 *
 * Return: true if allowed or unknown, false after the message.
 */
bool iw_bench_no_crc_allowed(const char *what)
{
	const char *p = IW_NO_CRC_PARAM;
	char ch = 0;
	FILE *f = fopen(p, "r");

	if (!f)
		return true;
	if (fread(&ch, 1, 1, f) != 1)
		ch = 0;
	fclose(f);
	if (ch == 'Y' || ch == '1')
		return true;
	iw_msg("%s refused: %s is %c; as root: echo 1 > %s", what, p, ch ? ch : '?', p);
	return false;
}
