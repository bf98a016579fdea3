// SPDX-License-Identifier: GPL-2.0
/*
 * mpa.ko lifetime: a socket using the ULP pins the module; the module
 * unloads once the socket is gone; TCP_ULP autoloads an installed module.
 *
 * Environment: MPA_KO and DDP_KO are the paths of mpa.ko and ddp.ko.
 * ddp.ko uses mpa.ko, so it is unloaded first and loaded again after.
 * The tests leave both modules loaded.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "mpa_test_util.h"

static int module_loaded(const char *name)
{
	char line[256];
	size_t n = strlen(name);
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			found = 1;
	fclose(f);
	return found;
}

static int unload(void)
{
	if (module_loaded("ddp") == 1 &&
	    syscall(__NR_delete_module, "ddp", O_NONBLOCK))
		return -1;
	return syscall(__NR_delete_module, "mpa", O_NONBLOCK);
}

static int load_one(const char *name, const char *env)
{
	if (module_loaded(name) == 1)
		return 0;
	return mt_load_module(env);
}

static int load(void)
{
	if (load_one("mpa", "MPA_KO"))
		return -1;
	return load_one("ddp", "DDP_KO");
}

/* Unload, retrying while sockets finish their destruction. */
static int unload_wait(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!unload())
			return 0;
		if (errno != EWOULDBLOCK)
			return -1;
		usleep(10000);
	}
	return -1;
}

TEST(socket_pins_module)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int fds[2];

	ASSERT_EQ(0, load());
	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));

	EXPECT_EQ(-1, unload());
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(1, module_loaded("mpa"));

	/* abortive close destroys the socket at once */
	ASSERT_EQ(0, setsockopt(fds[0], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	close(fds[0]);
	close(fds[1]);
	EXPECT_EQ(0, unload_wait());
	EXPECT_EQ(0, module_loaded("mpa"));
	ASSERT_EQ(0, load());
}

TEST(graceful_close_releases_module)
{
	int fds[2];
	char c;

	ASSERT_EQ(0, load());
	ASSERT_EQ(0, iw_loopback_pair(AF_INET6, fds));
	ASSERT_EQ(0, iw_mpa_attach(fds[0]));
	ASSERT_EQ(0, iw_mpa_attach(fds[1]));
	ASSERT_EQ(0, shutdown(fds[0], SHUT_WR));
	ASSERT_EQ(0, read(fds[1], &c, 1));
	close(fds[1]);
	close(fds[0]);
	EXPECT_EQ(0, unload_wait());
	ASSERT_EQ(0, load());
}

TEST(tcp_ulp_autoloads_installed_module)
{
	int fds[2];

	if (system("modprobe -n -q mpa") != 0)
		SKIP(return, "mpa.ko is not installed in the module path");
	ASSERT_EQ(0, load());
	ASSERT_EQ(0, unload_wait());
	ASSERT_EQ(0, module_loaded("mpa"));

	ASSERT_EQ(0, iw_loopback_pair(AF_INET, fds));
	EXPECT_EQ(0, iw_mpa_attach(fds[0]));
	EXPECT_EQ(1, module_loaded("mpa"));
	close(fds[0]);
	close(fds[1]);
	EXPECT_EQ(0, load());
}

TEST_HARNESS_MAIN
