// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: diagnostics of the tools, "program: message" on stderr, and
 * the command-line pieces every tool repeated (usage, HOST PORT, -t SEC). The
 * only part of the library that prints or exits.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/**
 * iw_msg_if() - iw_msg() when @on, for a tool's verbose output
 * @on: print at all
 * @fmt: printf format of the message (no newline)
 */
void iw_msg_if(bool on, const char *fmt, ...)
{
	va_list ap;

	if (!on)
		return;
	va_start(ap, fmt);
	iw_vmsg(fmt, ap);
	va_end(ap);
}

/**
 * iw_usage() - the end of a tool's option switch: -h or a bad option
 * @usage: prints the tool's usage text to the given stream
 * @help: -h: the usage goes to stdout and the tool exits with 0
 *
 * Return: the tool's exit status: 0 with @help, else IW_EXIT_USAGE after
 * printing the usage on stderr.
 */
int iw_usage(void (*usage)(FILE *f), bool help)
{
	usage(help ? stdout : stderr);
	return help ? 0 : IW_EXIT_USAGE;
}

/**
 * iw_host_port() - the two operands HOST PORT that follow the options
 * @argc: main()'s argc, after getopt() is done
 * @argv: main()'s argv
 * @host: out: the first operand
 * @port: out: the second operand
 *
 * Return: 0, or -1 when there are not exactly two operands.
 */
int iw_host_port(int argc, char **argv, const char **host, const char **port)
{
	if (argc - optind != 2)
		return -1;
	*host = argv[optind];
	*port = argv[optind + 1];
	return 0;
}

/**
 * iw_secs_arg() - an option's argument in whole seconds, as milliseconds
 * @arg: the argument, decimal
 * @min: the smallest number of seconds allowed
 * @ms: out: the value times 1000
 *
 * At most a day (86400 s).
 * Return: 0, or -1 when @arg is not a number from @min to 86400.
 */
int iw_secs_arg(const char *arg, long min, int *ms)
{
	char *end;
	long v;

	v = strtol(arg, &end, 10);
	if (!*arg || *end || v < min || v > 86400)
		return -1;
	*ms = v * 1000;
	return 0;
}
