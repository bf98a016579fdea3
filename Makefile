# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of mpa.ko and ddp.ko, and the project's entry points:
#   make          build the modules
#   make demo     install what is needed, boot the VM, show what works
#   make check    install what is needed, static checks, unit tests,
#                 selftests in the VM; ends with "N passed, N failed"

KDIR ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
PWD := $(CURDIR)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

# sparse (C=2 checks every file) and W=1 in one rebuild
static: clean-modules
	$(MAKE) -C $(KDIR) M=$(PWD) C=2 W=1 modules 2>&1 | tee build/static.log
	@! grep -E 'warning:|error:' build/static.log

checkpatch:
	tools/checkpatch-all

deps:
	tools/deps

selftests: modules
	$(MAKE) -C selftests

demo:
	tools/demo

check:
	tools/check

clean-modules:
	$(MAKE) -C $(KDIR) M=$(PWD) clean

clean: clean-modules
	$(MAKE) -C selftests clean

.PHONY: all modules static checkpatch deps selftests demo check clean clean-modules
