# SPDX-License-Identifier: GPL-2.0
#
# devmem TCP for Linux 6.1: the one entry point. `make help` lists targets.

SHELL := /bin/bash
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(REPO)/build

# $(run-exit CMD) makes make exit with CMD's own status (see the plugin);
# without it (no compiler yet) `make vm` still works but exits 2 on failure.
RUN_EXIT_SO := $(BUILD)/make/run_exit.so
-load $(RUN_EXIT_SO)
$(RUN_EXIT_SO): scripts/make/run-exit.c
	@mkdir -p $(dir $@)
	@gcc -O2 -Wall -Werror -shared -fPIC -o $@ $< 2>/dev/null || \
		echo "make: cannot build $@ yet; 'make vm' will exit 2 on failure" >&2

shquote = '$(subst ','\'',$(1))'

.PHONY: all help deps ensure-deps kernel kernel-debug headers tools progs libdevmem nccl examples install uninstall gpu bench-progs vm check check-full demo bench clean distclean
.DEFAULT_GOAL := all

all: kernel tools progs libdevmem nccl

# The user ABI as user space sees it (build/uapi/include): the host's 6.1
# headers plus uapi/, no kernel tree needed.
include scripts/uapi.mk

# Test programs: selftests/progs/<name>/*.c -> build/bin/<name>. They run in
# the VM from the shared repository, linked statically: under TCG a
# dynamic exec costs 45 ms on the normal kernel and 150 ms on the debug
# one (ld.so's work), a static one 6 and 73 ms, and tests exec them in
# polls and loops. Those that call getaddrinfo() stay dynamic (a static
# glibc warns that it would need its shared NSS modules at run time).
PROGS := tcpxfer tcp-data-split udpsink netdev-nl xdpq devmem-rx devmem-hold \
	fuzz-netlink fuzz-sockopt tcp-wirefuzz devmem-zc sockmap-pass devmem-tx in-ns
PROGS_SHARED := tcpxfer devmem-rx fuzz-sockopt
PROG_BINS := $(PROGS:%=$(BUILD)/bin/%)
TOOL_CFLAGS := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -I$(UAPI_INC)

progs: $(PROG_BINS)

# `make build/bin/NAME` works as well as the absolute path.
$(PROGS:%=build/bin/%): build/bin/%: $(BUILD)/bin/%

.SECONDEXPANSION:
$(PROG_BINS): $(BUILD)/bin/%: $$(wildcard selftests/progs/%/*.c) $$(wildcard selftests/progs/%/*.h) $$(wildcard selftests/progs/lib/*.h) $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	gcc $(TOOL_CFLAGS) $(if $(filter $*,$(PROGS_SHARED)),,-static) -o $@ $(filter %.c,$^)

# libdevmem: build/libdevmem (the library and its test programs).
libdevmem: $(UAPI_STAMP)
	@$(MAKE) -s -C libdevmem all tests

# The NCCL net plugin and its test harness: build/nccl.
nccl: $(UAPI_STAMP)
	@$(MAKE) -s -C nccl all tests

# What users run: tools/<name>/*.c -> build/bin/<name>, linked with the
# static library (the system's libnl and liburing stay shared).
TOOLS := ncdevmem devmemctl
TOOL_BINS := $(TOOLS:%=$(BUILD)/bin/%)
LIBDEVMEM_A := $(BUILD)/libdevmem/libdevmem.a
TOOL_LIBS = $(shell pkg-config --libs libnl-genl-3.0 liburing) -ldl
tools: $(TOOL_BINS)
$(TOOLS:%=build/bin/%): build/bin/%: $(BUILD)/bin/%
$(TOOL_BINS): $(BUILD)/bin/%: $$(wildcard tools/%/*.c) $$(wildcard tools/%/*.h) $(LIBDEVMEM_A)
	@mkdir -p $(dir $@)
	gcc $(TOOL_CFLAGS) -I$(REPO)/libdevmem/include -o $@ $(filter %.c,$^) $(LIBDEVMEM_A) $(TOOL_LIBS)
# The sub-make decides whether the library changed; the archive's time
# tells the programs.
$(LIBDEVMEM_A): $(UAPI_STAMP) FORCE
	@$(MAKE) -s -C libdevmem all
.PHONY: FORCE
FORCE:

# Benchmark programs: bench/<name>/*.c -> build/bin/<name>, linked with
# the static library like the tools (they run in the VM from the shared
# repository).
BENCH_PROGS := devmem-tx-cpu
BENCH_BINS := $(BENCH_PROGS:%=$(BUILD)/bin/%)
bench-progs: $(BENCH_BINS)
$(BENCH_PROGS:%=build/bin/%): build/bin/%: $(BUILD)/bin/%
$(BENCH_BINS): $(BUILD)/bin/%: $$(wildcard bench/%/*.c) $$(wildcard selftests/progs/lib/*.h) $(LIBDEVMEM_A)
	@mkdir -p $(dir $@)
	gcc $(TOOL_CFLAGS) -I$(REPO)/libdevmem/include -o $@ $(filter %.c,$^) $(LIBDEVMEM_A) $(TOOL_LIBS)

# GPU programs, where nvcc exists: the check of the CUDA provider and the
# GPU unpack, and the unpack benchmark, for a machine with an NVIDIA GPU
# (libdevmem/tests/gpu/README.md). Static but for libc and libdl, so that
# they run where only NVIDIA's driver is installed.
include scripts/nvcc.mk
GPU_BINS := $(BUILD)/gpu/gpu-check $(BUILD)/gpu/unpack-bench
# the GPU they are built for (compute capability x 10; 90: H100, H200)
GPU_ARCH ?= 90
GPU_LIBS = $(LIBDEVMEM_A) $(foreach l,libnl-genl-3.a libnl-3.a liburing.a,$(shell gcc -print-file-name=$(l))) \
	   -ldl -lpthread -lm -Xcompiler -static-libstdc++,-static-libgcc
gpu: $(GPU_BINS)
$(BUILD)/gpu/gpu-check: libdevmem/tests/gpu/gpu-check.cu $(LIBDEVMEM_A)
$(BUILD)/gpu/unpack-bench: bench/gpu/unpack-bench.cu $(LIBDEVMEM_A)
$(GPU_BINS):
	@[ -n "$(NVCC)" ] || { echo "make gpu: no nvcc (CUDA's compiler) here" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -arch=sm_$(GPU_ARCH) \
		-I$(REPO)/libdevmem/include -o $@ $< $(GPU_LIBS)

help:
	@echo "make deps          install everything the project needs (apt-get, root)"
	@echo "make kernel        build the test kernel (build/kernel/obj)"
	@echo "make kernel-debug  build the debug kernel (KASAN, lockdep, kmemleak, LKDTM)"
	@echo "make libdevmem     build libdevmem and its tests (build/libdevmem)"
	@echo "make examples      install libdevmem in build/examples and build its examples there"
	@echo "make tools         build ncdevmem and devmemctl (build/bin)"
	@echo "make nccl          build the NCCL net plugin and its test harness (build/nccl)"
	@echo "make progs         build the test programs of selftests/progs (build/bin)"
	@echo "make install       install libdevmem, its header, pkg-config file and man pages,"
	@echo "                   ncdevmem and devmemctl (PREFIX=/usr/local, DESTDIR, BINDIR, SBINDIR,"
	@echo "                   LIBDIR, INCLUDEDIR, MANDIR, PKGCONFIGDIR); make uninstall removes them"
	@echo "make gpu           build the GPU check and unpack benchmark (build/gpu; needs nvcc)"
	@echo "make headers       install the kernel tree's uapi headers (build/kernel/headers/x86/include)"
	@echo "make vm CMD='...'  boot the kernel and run CMD in it (DEBUG=1: debug kernel)"
	@echo "make check         host tests and the selftests/*.bats in the VM: all but"
	@echo "                   selftests/normal-full-only on the normal kernel, all but"
	@echo "                   selftests/debug-full-only on the debug kernel"
	@echo "make check-full    the same with every suite on the debug kernel too"
	@echo "make bench         in the VM: netdevsim pair vs veth TCP throughput (on one vCPU with header split off,"
	@echo "                   then on; then the vCPUs free), devmem vs plain receive CPU,"
	@echo "                   devmem vs send() vs MSG_ZEROCOPY sender CPU"
	@echo "                   (the VM at real-time priority where root may set it, so that a busy host does not"
	@echo "                   move the figures; BENCH_SCHED=normal: not), and then the host's CPUs kept busy"
	@echo "                   at idle priority so that none idles (BENCH_KEEP_BUSY=0: not)"
	@echo "make demo          boot the VM: TCP payload lands in a udmabuf (ncdevmem)"
	@echo "make clean         remove build outputs except the extracted kernel tree"

# What a user gets: the library (libdevmem's own install), ncdevmem and
# devmemctl with their man pages, and the NCCL net plugin (nccl's own
# install). The programs and the plugin link libdevmem statically.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
include scripts/libdir.mk
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCDIR ?= $(PREFIX)/share/doc/libdevmem
INSTALL_VARS = PREFIX='$(PREFIX)' LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' \
	       MANDIR='$(MANDIR)' PKGCONFIGDIR='$(PKGCONFIGDIR)' DOCDIR='$(DOCDIR)' \
	       DESTDIR='$(DESTDIR)'

install: $(UAPI_STAMP) tools
	@$(MAKE) -s -C libdevmem install $(INSTALL_VARS)
	@$(MAKE) -s -C nccl install $(INSTALL_VARS)
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(SBINDIR)' \
		'$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(MANDIR)/man8'
	install -m 755 $(BUILD)/bin/ncdevmem '$(DESTDIR)$(BINDIR)/'
	install -m 755 $(BUILD)/bin/devmemctl '$(DESTDIR)$(SBINDIR)/'
	install -m 644 tools/ncdevmem/ncdevmem.1 '$(DESTDIR)$(MANDIR)/man1/'
	install -m 644 tools/devmemctl/devmemctl.8 '$(DESTDIR)$(MANDIR)/man8/'

uninstall:
	@$(MAKE) -s -C libdevmem uninstall $(INSTALL_VARS)
	@$(MAKE) -s -C nccl uninstall $(INSTALL_VARS)
	rm -f '$(DESTDIR)$(BINDIR)/ncdevmem' '$(DESTDIR)$(SBINDIR)/devmemctl' \
	      '$(DESTDIR)$(MANDIR)/man1/ncdevmem.1' '$(DESTDIR)$(MANDIR)/man8/devmemctl.8'

deps:
	@scripts/deps.sh install

ensure-deps:
	@scripts/deps.sh ensure

kernel: ensure-deps
	@scripts/kernel/build.sh normal

kernel-debug: ensure-deps
	@scripts/kernel/build.sh debug

# The tree's uapi headers, installed: build/kernel/headers/x86/include.
headers: ensure-deps
	@scripts/kernel/build.sh headers

VM_ARGS := $(if $(filter-out 0,$(DEBUG)),--debug)
VM_KERNEL := $(BUILD)/kernel/$(if $(VM_ARGS),obj-debug,obj)/arch/x86/boot/bzImage

# `make vm` builds the kernel only when there is none yet: booting must not
# wait for a no-op kbuild pass. Run `make kernel` after changing the kernel.
$(BUILD)/kernel/obj/arch/x86/boot/bzImage: | ensure-deps
	@scripts/kernel/build.sh normal
$(BUILD)/kernel/obj-debug/arch/x86/boot/bzImage: | ensure-deps
	@scripts/kernel/build.sh debug

ifeq ($(origin CMD),undefined)
vm:
	@echo "usage: make vm CMD='command' [DEBUG=1] [VM_TIMEOUT=seconds]" >&2; exit 2
else ifneq ($(filter $(RUN_EXIT_SO),$(.LOADED)),)
vm: $(VM_KERNEL)
	$(run-exit selftests/vm/run $(VM_ARGS) -- $(call shquote,$(value CMD)))
else
vm: $(VM_KERNEL)
	@selftests/vm/run $(VM_ARGS) -- $(call shquote,$(value CMD))
endif

# The library's examples as a user builds them: libdevmem installed under
# build/examples, the examples built there from the installed copy through
# pkg-config alone (selftests/libdevmem-examples.bats runs them).
EXAMPLES_PREFIX := $(BUILD)/examples
examples: $(UAPI_STAMP)
	@$(MAKE) -s -C libdevmem all
	@rm -rf $(EXAMPLES_PREFIX)
	@$(MAKE) -s -C libdevmem install PREFIX=$(EXAMPLES_PREFIX) LIBDIR=$(EXAMPLES_PREFIX)/lib
	@PKG_CONFIG_PATH=$(EXAMPLES_PREFIX)/lib/pkgconfig \
		$(MAKE) -s -C $(EXAMPLES_PREFIX)/share/doc/libdevmem/examples \
		CFLAGS='-O2 -g -Wall -Wextra -Werror' \
		LDFLAGS=-Wl,-rpath,$(EXAMPLES_PREFIX)/lib

check: ensure-deps tools progs libdevmem nccl examples
	@scripts/kernel/build.sh normal
	@scripts/kernel/build.sh debug
	@selftests/check

# Every suite on both kernels (selftests/debug-full-only and
# normal-full-only: what check leaves off the debug and the normal kernel).
check-full: export CHECK_FULL := 1
check-full: check

# BENCH_ARGS: see bench/pair-throughput --help (the pair is measured three
# times: sender and receiver both on vCPU 0 with header split off, the same
# with it on, then both where the scheduler puts them; a -P or --hds in
# BENCH_ARGS applies to all three);
# DEVMEM_BENCH_ARGS: see bench/devmem-rx-cpu --help;
# DEVMEM_TX_BENCH_ARGS: see bench/devmem-tx-cpu/run --help;
# NCCL_BENCH_ARGS: see bench/nccl-throughput --help
# BENCH_SCHED: rt, the VM's QEMU under SCHED_RR so that host load does not
# preempt its vCPUs (root or CAP_SYS_NICE; bench/README.md); normal; or
# auto (default): rt where chrt may set it, else normal, said on stderr.
# BENCH_KEEP_BUSY: 1, the VM runs under bench/keep-busy, which keeps every
# host CPU busy at SCHED_IDLE so that none goes idle, quiet host or busy
# (bench/README.md); 0, host CPUs idle when nothing runs on them; auto
# (default): 1 under SCHED_RR, where the loops never take a CPU from the VM,
# 0 at normal priority, where they would take their small share.
# The guest is told the host's TSC frequency (from the host's kernel log):
# under TCG its own calibration often fails, and CPU times fall back to ticks.
BENCH_SCHED ?= auto
BENCH_KEEP_BUSY ?= auto
bench: ensure-deps progs bench-progs nccl
	@case '$(BENCH_SCHED)' in auto|normal|rt) ;; \
	*) echo "make bench: BENCH_SCHED is auto, normal or rt, not '$(BENCH_SCHED)'" >&2; exit 2 ;; esac
	@case '$(BENCH_KEEP_BUSY)' in auto|0|1) ;; \
	*) echo "make bench: BENCH_KEEP_BUSY is auto, 1 or 0, not '$(BENCH_KEEP_BUSY)'" >&2; exit 2 ;; esac
	@scripts/kernel/build.sh normal
	@policy='$(BENCH_SCHED)'; if [ "$$policy" = auto ]; then policy=normal; \
	if chrt -r 1 true 2>/dev/null; then policy=rt; else \
	echo "make bench: no SCHED_RR for the VM here (root or CAP_SYS_NICE): a busy host will lengthen the figures" >&2; fi; fi; \
	sched=; if [ "$$policy" = rt ]; then sched='chrt -r 1'; \
	chrt -r 1 true || { echo "make bench: BENCH_SCHED=rt needs root (CAP_SYS_NICE) for chrt -r" >&2; exit 2; }; fi; \
	khz=$$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\{3\}\) MHz.*/\1\2/p' | head -n 1); \
	keep='$(BENCH_KEEP_BUSY)'; [ "$$keep" != auto ] || { keep=0; [ "$$policy" != rt ] || keep=1; }; \
	busy=; [ "$$keep" = 0 ] || busy=bench/keep-busy; \
	VM_TIMEOUT=$${VM_TIMEOUT:-1500} VM_APPEND="tsc=reliable $${khz:+tsc_early_khz=$$khz} $(VM_APPEND)" $$busy $$sched selftests/vm/run -- \
		"export BENCH_SCHED=$$policy BENCH_KEEP_BUSY=$$keep; "'bench/pair-throughput -P 0,0 $(BENCH_ARGS) && bench/pair-throughput -P 0,0 --hds $(BENCH_ARGS) && bench/pair-throughput $(BENCH_ARGS) && bench/devmem-rx-cpu $(DEVMEM_BENCH_ARGS) && bench/devmem-tx-cpu/run $(DEVMEM_TX_BENCH_ARGS) && bench/nccl-throughput $(NCCL_BENCH_ARGS)'

demo: ensure-deps tools progs
	@scripts/kernel/build.sh normal
	@demo/run

clean:
	rm -rf $(BUILD)/kernel/obj $(BUILD)/kernel/obj-debug $(BUILD)/vm $(BUILD)/make

distclean:
	rm -rf $(BUILD)
