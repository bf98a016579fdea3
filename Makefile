# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of mpa.ko and ddp.ko, and the project's entry points:
#   make          build the modules
#   make demo     install what is needed, boot the VM, show what works
#   make check    install what is needed, static checks, unit tests,
#                 selftests in the VM, on each kernel of KERNELS (6.1 and
#                 6.12 unless KSERIES or KERNELS says otherwise); ends
#                 with "N passed, N failed"
#   make check-debug  the selftests in the VM on a debug kernel (KASAN,
#                 kmemleak, lockdep) built by tools/vm/kernel-debug; slow,
#                 not part of make check (Documentation/testing.rst)

# KSERIES picks the kernel series to build for (6.1 unless told otherwise,
# even when newer headers are installed); KDIR overrides it. "make check"
# runs on every series in KERNELS: 6.1 and 6.12, or only KSERIES when that
# is given on the command line or in the environment.
KSERIES_ORIGIN := $(origin KSERIES)
KSERIES ?= 6.1
KDIR ?= $(shell ls -d /lib/modules/$(KSERIES).*/build 2>/dev/null | sort -V | tail -n 1)
KERNELS ?= $(if $(filter command line environment,$(KSERIES_ORIGIN)),$(KSERIES),6.1 6.12)
export KSERIES
PWD := $(CURDIR)

# MDIR: where kbuild builds (it writes objects next to the sources). The
# default is the source tree; make check builds each kernel in a copy,
# MDIR=build/k-SERIES, to which the sources are copied first (mtimes kept,
# so the build stays incremental).
MDIR ?= $(CURDIR)
override MDIR := $(abspath $(MDIR))
MSRCS = Kbuild $(wildcard mpa/Kbuild ddp/Kbuild mpa/*.[ch] ddp/*.[ch]) \
	$(shell find include -name '*.h')

all: modules

modules: $(if $(filter-out $(CURDIR),$(MDIR)),mdir-sync)
	$(MAKE) -C $(KDIR) M=$(MDIR) modules

mdir-sync:
	mkdir -p $(MDIR)
	cp -p --parents $(MSRCS) $(MDIR)/

# sparse (C=2 checks every file) and W=1 in one rebuild
static: clean-modules $(if $(filter-out $(CURDIR),$(MDIR)),mdir-sync)
	@mkdir -p build
	$(MAKE) -C $(KDIR) M=$(MDIR) C=2 W=1 modules 2>&1 | tee build/static-$(KSERIES).log
	@! grep -E 'warning:|error:' build/static-$(KSERIES).log

checkpatch:
	tools/checkpatch-all

deps:
	tools/deps

selftests: modules
	$(MAKE) -C selftests

demo:
	tools/demo

check:
	KERNELS="$(KERNELS)" tools/check

# The debug kernel's build tree is the KDIR of the modules: mpa/mpa.ko and
# ddp/ddp.ko are rebuilt for it in place (a later "make" rebuilds them for
# the Debian kernel) and copied to build/kdebug-ko for the VM.
KDEBUG := $(CURDIR)/build/kdebug
KDEBUG_TIMEOUT ?= 5400
KDEBUG_TESTS ?=
check-debug:
	tools/vm/kernel-debug
	$(MAKE) -C $(KDEBUG)/linux-source-6.1 M=$(PWD) modules
	$(MAKE) -C selftests
	rm -rf build/kdebug-ko && mkdir -p build/kdebug-ko
	cp mpa/mpa.ko ddp/ddp.ko build/kdebug-ko/
	tools/vm/run --timeout $(KDEBUG_TIMEOUT) \
		--kernel-image $(KDEBUG)/bzImage --modules-dir $(KDEBUG)/modules \
		--extra-modules build/kdebug-ko --slub-debug - --append "acpi=noirq no_timer_check" \
		--env SIW_KO=/nonexistent --env RACE_SECONDS=30 -- \
		$(if $(KDEBUG_TESTS),selftests/run_tests.sh $(KDEBUG_TESTS),make -C selftests run_tests)

clean-modules:
	$(if $(wildcard $(MDIR)/Kbuild),$(MAKE) -C $(KDIR) M=$(MDIR) clean)

clean: clean-modules
	$(MAKE) -C selftests clean

.PHONY: all modules mdir-sync static checkpatch deps selftests demo check check-debug clean clean-modules
