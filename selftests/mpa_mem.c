// SPDX-License-Identifier: GPL-2.0
/*
 * Memory per MPA connection: N plain TCP pairs, then N MPA pairs in full
 * operation, each pair having exchanged a small and a MULPDU ULPDU in
 * both directions and then idle (MPA's transmit pages released, a
 * second after their last use). /proc/meminfo (MemFree, Slab) and
 * /proc/slabinfo are read before and after each set; the test prints
 * KiB per connection and fails when an idle MPA connection costs more
 * than MPA_MEM_MAX_KIB (default 8) KiB beyond a TCP connection.
 * MPA_MEM_PAIRS (default 1000) sets N. Needs mpa.ko loaded and root
 * (RLIMIT_NOFILE, /proc/slabinfo).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mpa_proto.h"
#include <linux/mpa.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

#include "mpa_sock_util.h"

#define SMALL		100
#define MAX_CACHES	512

static __u8 buf[65536], got[65536];

struct mem {
	long	free_kib;
	long	slab_kib;
	int	ncaches;
	char	name[MAX_CACHES][64];
	long	bytes[MAX_CACHES];
	long	objs[MAX_CACHES];
};

static long read_meminfo(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			v = strtol(line + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

/* memory of each slab cache: slabs * pages per slab */
static void read_slabinfo(struct mem *m)
{
	char line[512], name[64];
	long active, num, size, per, pages, nslabs;
	FILE *f;

	m->ncaches = 0;
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && m->ncaches < MAX_CACHES) {
		char *p = strstr(line, ": slabdata");

		if (line[0] == '#' || !p ||
		    sscanf(line, "%63s %ld %ld %ld %ld %ld", name, &active, &num, &size,
			   &per, &pages) != 6 ||
		    sscanf(p, ": slabdata %*d %ld", &nslabs) != 1)
			continue;
		snprintf(m->name[m->ncaches], sizeof(m->name[0]), "%s", name);
		m->objs[m->ncaches] = active;
		m->bytes[m->ncaches++] = nslabs * pages * 4096;
	}
	fclose(f);
}

static void measure(struct mem *m)
{
	sync();
	usleep(500000);
	m->free_kib = read_meminfo("MemFree");
	m->slab_kib = read_meminfo("Slab");
	read_slabinfo(m);
}

/* the caches that grew most from @a to @b, per connection */
static void print_growth(const char *what, const struct mem *a, const struct mem *b,
			 int conns)
{
	long best[6] = { 0 };
	int idx[6] = { -1, -1, -1, -1, -1, -1 };
	int i, j, k;

	long objs[6] = { 0 };

	for (i = 0; i < b->ncaches; i++) {
		long d = b->bytes[i], o = b->objs[i];

		for (j = 0; j < a->ncaches; j++) {
			if (!strcmp(a->name[j], b->name[i])) {
				d -= a->bytes[j];
				o -= a->objs[j];
			}
		}
		for (k = 0; k < 6; k++) {
			if (d > best[k]) {
				memmove(best + k + 1, best + k, (5 - k) * sizeof(best[0]));
				memmove(idx + k + 1, idx + k, (5 - k) * sizeof(idx[0]));
				memmove(objs + k + 1, objs + k, (5 - k) * sizeof(objs[0]));
				objs[k] = o;
				best[k] = d;
				idx[k] = i;
				break;
			}
		}
	}
	for (k = 0; k < 6 && idx[k] >= 0; k++)
		printf("# %s slab %-24s %8.2f KiB, %5.2f objects per connection\n", what,
		       b->name[idx[k]], best[k] / 1024.0 / conns, (double)objs[k] / conns);
}

/* @len octets each way: a ULPDU for MPA, a stream chunk for TCP */
static int exchange(int fds[2], int len, bool mpa, __u32 seed)
{
	int i;

	for (i = 0; i < 2; i++) {
		int s = fds[i], r = fds[!i];

		mt_fill(buf, len, seed + i);
		if (send(s, buf, len, 0) != len)
			return -1;
		if (mpa ? mt_recv(r, got, sizeof(got), 0, NULL) != len :
			  iw_readn(r, got, len, RAW_TMO_MS) != len)
			return -1;
		if (memcmp(buf, got, len))
			return -1;
	}
	return 0;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v ? atoi(v) : def;
}

FIXTURE(mem)
{
};

FIXTURE_SETUP(mem)
{
}

FIXTURE_TEARDOWN(mem)
{
}

TEST_F_TIMEOUT(mem, idle_connection_cost, 600)
{
	int n = env_int("MPA_MEM_PAIRS", 1000);
	int max_kib = env_int("MPA_MEM_MAX_KIB", 8);
	struct rlimit rl = { .rlim_cur = 4 * n + 64, .rlim_max = 4 * n + 64 };
	static struct mem m0, m1, m2;
	int (*tcp)[2], (*mpa)[2];
	double tcp_kib, mpa_kib, tcp_slab, mpa_slab;
	int i, mulpdu = 0;
	socklen_t len;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	tcp = calloc(n, sizeof(*tcp));
	mpa = calloc(n, sizeof(*mpa));
	ASSERT_NE(NULL, tcp);
	ASSERT_NE(NULL, mpa);

	/* the MULPDU of a loopback MPA connection sets the large size */
	ASSERT_EQ(0, iw_mpa_pair(AF_INET, mpa[0], 0, 0, RAW_TMO_MS));
	len = sizeof(mulpdu);
	ASSERT_EQ(0, getsockopt(mpa[0][0], SOL_MPA, MPA_MULPDU, &mulpdu, &len));
	ASSERT_GE(mulpdu, 128);
	close(mpa[0][0]);
	close(mpa[0][1]);

	measure(&m0);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, iw_loopback_pair(AF_INET, tcp[i]));
		ASSERT_EQ(0, exchange(tcp[i], SMALL, false, i));
		ASSERT_EQ(0, exchange(tcp[i], mulpdu, false, i));
	}
	measure(&m1);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, iw_mpa_pair(AF_INET, mpa[i], 0, 0, RAW_TMO_MS));
		ASSERT_EQ(0, exchange(mpa[i], SMALL, true, i));
		ASSERT_EQ(0, exchange(mpa[i], mulpdu, true, i));
	}
	/* idle: MPA's transmit pages go a second after their last use */
	ASSERT_EQ(0, mt_tx_pages_released(20000));
	measure(&m2);

	tcp_kib = (double)(m0.free_kib - m1.free_kib) / (2 * n);
	mpa_kib = (double)(m1.free_kib - m2.free_kib) / (2 * n);
	tcp_slab = (double)(m1.slab_kib - m0.slab_kib) / (2 * n);
	mpa_slab = (double)(m2.slab_kib - m1.slab_kib) / (2 * n);
	printf("# %d connections each, MULPDU %d\n", 2 * n, mulpdu);
	printf("# plain TCP: %.2f KiB per connection (slab %.2f KiB)\n", tcp_kib, tcp_slab);
	printf("# MPA:       %.2f KiB per connection (slab %.2f KiB)\n", mpa_kib, mpa_slab);
	printf("# MPA adds   %.2f KiB per idle connection, slab %.2f KiB (bound %d KiB)\n",
	       mpa_kib - tcp_kib, mpa_slab - tcp_slab, max_kib);
	print_growth("TCP", &m0, &m1, 2 * n);
	print_growth("MPA", &m1, &m2, 2 * n);
	fflush(stdout);
	EXPECT_LT(mpa_kib - tcp_kib, max_kib);
	EXPECT_LT(mpa_slab - tcp_slab, max_kib);

	/* and they all still work */
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, exchange(mpa[i], SMALL, true, i + 7));
	for (i = 0; i < n; i++) {
		close(tcp[i][0]);
		close(tcp[i][1]);
		close(mpa[i][0]);
		close(mpa[i][1]);
	}
	free(tcp);
	free(mpa);
}

TEST_HARNESS_MAIN
