// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof - qemu TCG plugin: guest instructions per kernel translation
 * block and per vCPU, written out when the guest asks.
 *
 * Every translation block at a kernel address counts its executions per
 * vCPU (an execution callback, exact but slow); user space is one count.
 * A guest program that calls the code page at INSNPROF_MARK (insnmark)
 * makes the plugin write DIR/snap-N.txt, N = 0, 1, ..., and start from
 * zero again. Each line: "vaddr executions ninsns cpu0 cpu1" in hex and
 * decimal; the first line "user INSNS VCPU". A "rep movs" or "rep stos"
 * counts one per iteration, as TCG runs each one as a block.
 *
 * Argument: out=DIR. Built by tools/vm/insn-profile build.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define INSNPROF_MARK		0x5a5a0000ULL
#define INSNPROF_KERNEL		0xffff800000000000ULL
#define INSNPROF_BUCKETS	1048576u	/* a power of 2 */
#define INSNPROF_CPUS		2

struct tb_count {
	uint64_t vaddr;
	uint64_t cpu[INSNPROF_CPUS];
	uint32_t ninsns;
	struct tb_count *next;
};

static struct tb_count *table[INSNPROF_BUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t user_insns;
static const char *outdir = ".";
static int seq;

/* the count of the block at @vaddr with @n instructions (lock held) */
static struct tb_count *tb_count_of(uint64_t vaddr, uint32_t n)
{
	uint32_t h = (vaddr ^ (vaddr >> 20) ^ n * 0x9e3779b1u) & (INSNPROF_BUCKETS - 1);
	struct tb_count *t;

	for (t = table[h]; t; t = t->next)
		if (t->vaddr == vaddr && t->ninsns == n)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	t->vaddr = vaddr;
	t->ninsns = n;
	t->next = table[h];
	table[h] = t;
	return t;
}

static void snapshot(unsigned int vcpu, void *udata)
{
	char path[4096];
	struct tb_count *t;
	unsigned int i;
	FILE *f;

	pthread_mutex_lock(&lock);
	snprintf(path, sizeof(path), "%s/snap-%d.txt", outdir, seq++);
	f = fopen(path, "w");
	if (f)
		fprintf(f, "user %llu %u\n", (unsigned long long)user_insns, vcpu);
	user_insns = 0;
	for (i = 0; i < INSNPROF_BUCKETS; i++) {
		for (t = table[i]; t; t = t->next) {
			if (f && (t->cpu[0] || t->cpu[1]))
				fprintf(f, "%llx %llu %u %llu %llu\n",
					(unsigned long long)t->vaddr,
					(unsigned long long)(t->cpu[0] + t->cpu[1]),
					t->ninsns, (unsigned long long)t->cpu[0],
					(unsigned long long)t->cpu[1]);
			t->cpu[0] = 0;
			t->cpu[1] = 0;
		}
	}
	if (f)
		fclose(f);
	pthread_mutex_unlock(&lock);
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	struct tb_count *t = udata;

	t->cpu[vcpu % INSNPROF_CPUS]++;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct tb_count *t;

	if (va == INSNPROF_MARK) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, snapshot,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
		return;
	}
	if (va < INSNPROF_KERNEL) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &user_insns, n);
		return;
	}
	pthread_mutex_lock(&lock);
	t = tb_count_of(va, n);
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			outdir = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
