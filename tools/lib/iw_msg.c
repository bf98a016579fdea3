// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: diagnostics of the tools, "program: message" on stderr. The
 * only part of the library that prints or exits.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libiwarp.h"

#ifndef IW_VERSION
#define IW_VERSION	"unknown"
#endif

/**
 * iw_vmsg() - print "program: " and a message on stderr
 * @fmt: printf format of the message (no newline)
 * @ap: its arguments
 */
void iw_vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/**
 * iw_msg() - print "program: " and a message on stderr
 * @fmt: printf format of the message (no newline)
 */
void iw_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	iw_vmsg(fmt, ap);
	va_end(ap);
}

/**
 * iw_die_sys() - print "@what: strerror(errno)" and exit with IW_EXIT_SYS
 * @what: the call that failed
 */
void iw_die_sys(const char *what)
{
	iw_msg("%s: %s", what, strerror(errno));
	exit(IW_EXIT_SYS);
}

/**
 * iw_version() - the version of the project the library was built from
 *
 * Return: a string such as "0.9.0", the VERSION of the top Makefile.
 */
const char *iw_version(void)
{
	return IW_VERSION;
}

/**
 * iw_print_version() - print "program version" on stdout, for --version
 */
void iw_print_version(void)
{
	printf("%s (iwarp-mpa-ddp) %s\n", program_invocation_short_name,
	       iw_version());
}
