/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per network namespace counters of mpa.ko and ddp.ko: an array of
 * unsigned long per CPU, shown in /proc/net/<name> as "Name value" lines
 * like /proc/net/tls_stat.
 */
#ifndef _NET_IWARP_STAT_H
#define _NET_IWARP_STAT_H

#include <linux/percpu.h>
#include <linux/seq_file.h>

/* Prints the sums over all CPUs of @n counters named @names. */
static inline void iwarp_stat_show(struct seq_file *seq,
				   const unsigned long __percpu *mib,
				   const char *const *names, unsigned int n)
{
	unsigned long sum;
	unsigned int i;
	int cpu;

	for (i = 0; i < n; i++) {
		sum = 0;
		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(mib, cpu)[i];
		seq_printf(seq, "%-32s\t%lu\n", names[i], sum);
	}
}

#endif /* _NET_IWARP_STAT_H */
