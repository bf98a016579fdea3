// SPDX-License-Identifier: GPL-2.0
/*
 * insnmark - run in the VM: the insnprof qemu plugin writes a snapshot of
 * its instruction counts and starts from zero (tools/vm/insn-profile).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define INSNPROF_MARK	0x5a5a0000UL

int main(int argc, char **argv)
{
	unsigned char *p;

	if (argc > 1) {
		fputs("usage: insnmark (in a VM run with the insnprof plugin)\n",
		      strcmp(argv[1], "--help") ? stderr : stdout);
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	p = mmap((void *)INSNPROF_MARK, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		perror("insnmark: mmap");
		return 1;
	}
	p[0] = 0xc3;	/* ret: the plugin acts when this block runs */
	((void (*)(void))p)();
	return 0;
}
