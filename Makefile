# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of mpa.ko and ddp.ko, and the project's entry points:
#   make          build the modules
#   make demo     install what is needed, boot the VM, show what works
#   make check    install what is needed, static checks, unit tests,
#                 selftests in the VM, on each kernel of KERNELS (6.1 and
#                 6.12 unless KSERIES or KERNELS says otherwise); ends
#                 with "N passed, N failed"
#   make htmldocs  Documentation/ as HTML (Sphinx + kernel-doc), warnings fail it
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
# MDIR=build/k-SERIES/mod, to which the sources are copied first (mtimes
# kept, so the build stays incremental).
MDIR ?= $(CURDIR)
override MDIR := $(abspath $(MDIR))
MSRCS = Kbuild $(wildcard mpa/Kbuild ddp/Kbuild rdmap/Kbuild mpa/*.[ch] ddp/*.[ch] rdmap/*.[ch]) \
	$(wildcard selftests/kmod/Kbuild selftests/kmod/*.[ch]) \
	$(shell find include -name '*.h')
SYNC := $(if $(filter-out $(CURDIR),$(MDIR)),mdir-sync)

all: modules

modules: $(SYNC)
	$(MAKE) -C $(KDIR) M=$(MDIR) modules

mdir-sync:
	mkdir -p $(MDIR)
	cp -p --parents $(MSRCS) $(MDIR)/

# the in-kernel consumers the selftests load (selftests/kmod), linked
# against the symbols of mpa.ko and ddp.ko; C=2 W=1 for "make static"
# modpost does not watch KBUILD_EXTRA_SYMBOLS: when mpa.ko or ddp.ko got
# new symbol versions, drop the test modules' Module.symvers so that it
# runs again and they do not fail to load ("disagrees about version")
test-modules: modules
	@if [ $(MDIR)/Module.symvers -nt $(MDIR)/selftests/kmod/Module.symvers ]; then \
		rm -f $(MDIR)/selftests/kmod/Module.symvers; fi
	$(MAKE) -C $(KDIR) M=$(MDIR)/selftests/kmod \
		KBUILD_EXTRA_SYMBOLS=$(MDIR)/Module.symvers $(KFLAGS) modules

# sparse (C=2 checks every file) and W=1 in one rebuild. Only the objects
# of mpa/, ddp/ and selftests/kmod/ are removed: kbuild's clean with M=
# walks the whole directory and would delete every object and .ko under
# build/ too (siw, the debug kernel's tree, the VM's module copies).
static: $(SYNC)
	find $(MDIR)/mpa $(MDIR)/ddp $(MDIR)/rdmap $(MDIR)/selftests/kmod -maxdepth 1 -name '*.o' -delete
	@mkdir -p build
	$(MAKE) -C $(KDIR) M=$(MDIR) C=2 W=1 modules 2>&1 | tee build/static-$(KSERIES).log
	$(MAKE) -C $(KDIR) M=$(MDIR)/selftests/kmod KBUILD_EXTRA_SYMBOLS=$(MDIR)/Module.symvers \
		C=2 W=1 modules 2>&1 | tee -a build/static-$(KSERIES).log
	@! grep -E 'warning:|error:' build/static-$(KSERIES).log

checkpatch:
	tools/checkpatch-all

deps:
	tools/deps

selftests: modules
	$(MAKE) -C selftests

demo:
	tools/demo

# ------------------------------------------------------------ installing
# make install [DESTDIR=...] [PREFIX=/usr/local] [KDIR=...]: the modules
# under /lib/modules/KVER/updates/iwarp (then depmod), the tools and their
# man pages, libiwarp (shared and static, libiwarp.h, libiwarp.pc, section 3
# man pages: tools/lib/Makefile), the uapi headers and a modules-load.d snippet for ddp.ko
# (which pulls in mpa.ko). mpa.ko alone loads on demand through its
# TCP_ULP alias. dkms.conf and `make deb` package the same for DKMS.
VERSION := 0.9.0
PREFIX ?= /usr/local
KVER ?= $(patsubst /lib/modules/%/build,%,$(KDIR))
TOOLS := mpa-cat mpa-bench ddp-xfer ddp-bench rdmap-peer iwarp-ss
UAPI := mpa.h ddp.h iwarp_wire.h

modules_install: modules
	@case "$(KVER)" in */*|"") echo "set KVER= for KDIR=$(KDIR)" >&2; exit 2;; esac
	$(MAKE) -C $(KDIR) M=$(PWD) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates/iwarp CONFIG_MODULE_SIG_ALL= \
		DEPMOD=true modules_install
	$(if $(DESTDIR),@echo "staged in $(DESTDIR): run depmod $(KVER) on the target",depmod $(KVER))

headers_install:
	install -d $(DESTDIR)$(PREFIX)/include/linux
	install -m 644 $(addprefix include/uapi/linux/,$(UAPI)) \
		$(DESTDIR)$(PREFIX)/include/linux/

tools_install:
	$(MAKE) -C tools
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(addprefix tools/,$(TOOLS)) $(DESTDIR)$(PREFIX)/bin/
	for p in $(wildcard $(addprefix tools/,$(addsuffix .[1-8],$(TOOLS)))); do \
		d=$(DESTDIR)$(PREFIX)/share/man/man$${p##*.}; \
		install -d $$d && install -m 644 $$p $$d/ || exit 1; \
	done
	$(MAKE) -C tools/lib install PREFIX=$(PREFIX)

install: modules_install headers_install tools_install
	install -D -m 644 packaging/modules-load.conf \
		$(DESTDIR)/etc/modules-load.d/iwarp.conf

deb:
	tools/mkdeb $(VERSION)

check:
	KERNELS="$(KERNELS)" tools/check

# The debug kernel's build tree is the KDIR of the modules, built in their
# own copy (MDIR=build/kdebug/mod, as make check does for each series) and
# copied to build/kdebug-ko for the VM: the tests load mpa.ko and ddp.ko
# from MPA_KO and DDP_KO, the others through modprobe. The debug kernel
# has the RDMA core (rdmap.ko, iwmpa.ko, the RDMA applications) but not
# the project's siw builds: the siw interop tests skip (SIW_KO).
KDEBUG := $(CURDIR)/build/kdebug
KDEBUG_KO := $(CURDIR)/build/kdebug-ko
KDEBUG_TIMEOUT ?= 5400
KDEBUG_TESTS ?=

check-debug:
	tools/vm/kernel-debug
	$(MAKE) KDIR=$(KDEBUG)/linux-source-6.1 MDIR=$(KDEBUG)/mod test-modules
	$(MAKE) -C selftests
	rm -rf $(KDEBUG_KO) && mkdir -p $(KDEBUG_KO)
	cp $(addprefix $(KDEBUG)/mod/,mpa/mpa.ko ddp/ddp.ko rdmap/rdmap.ko rdmap/iwmpa.ko) \
		$(KDEBUG)/mod/selftests/kmod/*.ko $(KDEBUG_KO)/
	tools/vm/run --timeout $(KDEBUG_TIMEOUT) \
		--kernel-image $(KDEBUG)/bzImage --modules-dir $(KDEBUG)/modules \
		--extra-modules $(KDEBUG_KO) --slub-debug - --append "acpi=noirq no_timer_check" \
		--env MPA_KO=$(KDEBUG_KO)/mpa.ko --env DDP_KO=$(KDEBUG_KO)/ddp.ko \
		--env SIW_KO=/nonexistent --env RACE_SECONDS=30 -- \
		$(if $(KDEBUG_TESTS),selftests/run_tests.sh $(KDEBUG_TESTS),make -C selftests run_tests)

# Documentation/ as HTML with Sphinx and the kernel-doc extension from
# linux-source (tools/deps extracts it); any warning fails the build.
htmldocs:
	@test -f build/ksrc/scripts/kernel-doc || tools/deps -q >/dev/null
	sphinx-build -q -W --keep-going -b html -d build/doctrees Documentation build/htmldocs
	@echo "htmldocs: build/htmldocs/index.html"

clean-modules:
	$(if $(wildcard $(MDIR)/Kbuild),$(MAKE) -C $(KDIR) M=$(MDIR) clean)
	$(if $(wildcard $(MDIR)/selftests/kmod/Kbuild),$(MAKE) -C $(KDIR) M=$(MDIR)/selftests/kmod clean)

clean: clean-modules
	$(MAKE) -C selftests clean

.PHONY: all modules mdir-sync test-modules static checkpatch deps selftests demo check check-debug \
	htmldocs clean clean-modules modules_install headers_install tools_install install deb
