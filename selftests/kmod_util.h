/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the selftests that drive a test module of selftests/kmod share:
 * loading a module, writing a command to its debugfs ctl file, reading
 * one of its files, and the octets its send commands fill in.
 */
#ifndef _KMOD_UTIL_H
#define _KMOD_UTIL_H

#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/types.h>

/* the octets of the test modules' send and write commands */
static inline void kmod_fill(__u8 *p, size_t len, __u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(i * 7 + seed);
}

/*
 * Load module @name unless it is there: modprobe first (the copy for the
 * running kernel, tools/vm/run --extra-modules), else @rel, a path
 * relative to this program's directory. *@loaded is set when this call
 * loaded it. Return: 0, or -1.
 */
static inline int kmod_load(const char *name, const char *rel, bool *loaded)
{
	char path[512], exe[512], cmd[128];
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (!access(path, F_OK))
		return 0;
	snprintf(cmd, sizeof(cmd), "modprobe -q %s 2>/dev/null", name);
	if (!system(cmd))
		goto loaded;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, "", 0);
	close(fd);
	if (ret && errno != EEXIST)
		return -1;
loaded:
	*loaded = true;
	return 0;
}

/* One command to the ctl file @ctl. Return: 0, the write's errno, or -1. */
static inline int kmod_vctl(const char *ctl, const char *fmt, va_list ap)
{
	char cmd[128];
	int fd, n, ret = 0;

	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	fd = open(ctl, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, cmd, n) != n)
		ret = errno;
	close(fd);
	return ret;
}

/* Up to @len octets of the file @path. Return: octets read, or -1. */
static inline ssize_t kmod_read(const char *path, void *buf, size_t len)
{
	ssize_t n, done = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			break;
		done += n;
	}
	close(fd);
	return done;
}

#endif /* _KMOD_UTIL_H */
