/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracefs for the selftests that read the mpa and ddp tracepoints
 * (mpa_stat, ddp_stat): find or mount it, write a control file, read
 * the trace buffer.
 */
#ifndef _IWARP_TRACEFS_UTIL_H
#define _IWARP_TRACEFS_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static int write_file(const char *dir, const char *name, const char *val)
{
	char p[128];
	int fd, ret;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * The tracefs directory, mounted if needed; NULL without tracefs.
 * Task names are not recorded: enabling the first event would otherwise
 * also hook sched_switch and sched_wakeup, which live-patches the
 * scheduler's tracepoint sites while the other CPU runs them. Under qemu
 * TCG that patching crashed the VM twice (an int3 oops in
 * ttwu_do_activate(), an RCU stall in text_poke_bp()); the tests read no
 * task names.
 */
static const char *tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	const char *dir = NULL;
	char p[64];
	unsigned int i;

	for (i = 0; i < 2 && !dir; i++) {
		snprintf(p, sizeof(p), "%s/trace", dirs[i]);
		if (!access(p, F_OK))
			dir = dirs[i];
	}
	if (!dir && !mount("tracefs", dirs[0], "tracefs", 0, NULL))
		dir = dirs[0];
	if (dir)
		write_file(dir, "options/record-cmd", "0");
	return dir;
}

/* The whole trace buffer as one string (caller frees). */
static char *read_trace(const char *dir)
{
	size_t len = 0, cap = 1 << 16;
	char p[128], *buf = malloc(cap);
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/trace", dir);
	fd = open(p, O_RDONLY);
	if (fd < 0 || !buf)
		return NULL;
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
	}
	close(fd);
	if (buf)
		buf[len] = 0;
	return buf;
}

#endif /* _IWARP_TRACEFS_UTIL_H */
