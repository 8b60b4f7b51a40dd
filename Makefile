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
$(RUN_EXIT_SO): tools/make/run-exit.c
	@mkdir -p $(dir $@)
	@gcc -O2 -Wall -Werror -shared -fPIC -o $@ $< 2>/dev/null || \
		echo "make: cannot build $@ yet; 'make vm' will exit 2 on failure" >&2

shquote = '$(subst ','\'',$(1))'

.PHONY: all help deps ensure-deps kernel kernel-debug headers tools libdevmem vm check check-full demo bench clean distclean
.DEFAULT_GOAL := all

all: kernel tools libdevmem

# Userspace helpers: tools/<name>/*.c -> build/bin/<name>. They run in the
# VM from the shared repository, so they link only against the host's libc.
TOOLS := tcpxfer tcp-data-split udpsink netdev-nl xdpq devmem-rx
TOOL_BINS := $(TOOLS:%=$(BUILD)/bin/%)
# uapi/: our new uapi headers (linux/netdev.h) before the host's.
TOOL_CFLAGS := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -I$(REPO)/uapi

tools: $(TOOL_BINS)

# `make build/bin/NAME` works as well as the absolute path.
$(TOOLS:%=build/bin/%): build/bin/%: $(BUILD)/bin/%

.SECONDEXPANSION:
$(BUILD)/bin/%: $$(wildcard tools/%/*.c) $$(wildcard tools/%/*.h) $(wildcard tools/common/*.h)
	@mkdir -p $(dir $@)
	gcc $(TOOL_CFLAGS) -o $@ $(filter %.c,$^)

# devmem-rx uses the device-memory socket ABI, which the host's headers
# lack: it builds against the tree's installed uapi headers, as any
# program written for mainline would.
UAPI_HDRS := $(BUILD)/kernel/headers/x86/include
$(BUILD)/bin/devmem-rx: TOOL_CFLAGS += -I$(UAPI_HDRS)
$(BUILD)/bin/devmem-rx: $(UAPI_HDRS)/linux/uio.h
$(UAPI_HDRS)/linux/uio.h: $(wildcard uapi/patches/*.patch) | ensure-deps
	@tools/kernel/build.sh headers
	@touch $@

# libdevmem: build/libdevmem (the library and its test programs).
libdevmem: $(UAPI_HDRS)/linux/uio.h
	@$(MAKE) -s -C libdevmem all tests

# Programs on libdevmem: tools/<name>/*.c -> build/bin/<name>, linked with
# the static library (the system's libnl and liburing stay shared).
LIB_TOOLS := ncdevmem devmemctl
LIB_TOOL_BINS := $(LIB_TOOLS:%=$(BUILD)/bin/%)
LIBDEVMEM_A := $(BUILD)/libdevmem/libdevmem.a
LIB_TOOL_LIBS = $(shell pkg-config --libs libnl-genl-3.0 liburing) -ldl
tools: $(LIB_TOOL_BINS)
$(LIB_TOOLS:%=build/bin/%): build/bin/%: $(BUILD)/bin/%
$(LIB_TOOL_BINS): $(BUILD)/bin/%: $$(wildcard tools/%/*.c) $$(wildcard tools/%/*.h) $(wildcard tools/common/*.h) $(LIBDEVMEM_A)
	@mkdir -p $(dir $@)
	gcc $(TOOL_CFLAGS) -I$(REPO)/libdevmem/include -o $@ $(filter %.c,$^) $(LIBDEVMEM_A) $(LIB_TOOL_LIBS)
# The sub-make decides whether the library changed; the archive's time
# tells the programs.
$(LIBDEVMEM_A): $(UAPI_HDRS)/linux/uio.h FORCE
	@$(MAKE) -s -C libdevmem all
.PHONY: FORCE
FORCE:

help:
	@echo "make deps          install everything the project needs (apt-get, root)"
	@echo "make kernel        build the test kernel (build/kernel/obj)"
	@echo "make tools         build the userspace helpers (build/bin)"
	@echo "make libdevmem     build libdevmem and its tests (build/libdevmem; install: make -C libdevmem install)"
	@echo "make kernel-debug  build the debug kernel (KASAN, lockdep, kmemleak, LKDTM)"
	@echo "make headers       install the tree's uapi headers (build/kernel/headers/x86/include)"
	@echo "make vm CMD='...'  boot the kernel and run CMD in it (DEBUG=1: debug kernel)"
	@echo "make check         host tests, then the selftests/*.bats in the VM: every suite on the"
	@echo "                   normal kernel, all but selftests/debug-full-only on the debug kernel"
	@echo "make check-full    the same with every suite on the debug kernel too"
	@echo "make bench         in the VM: netdevsim pair vs veth TCP throughput, devmem vs plain receive CPU"
	@echo "make demo          boot the VM: TCP payload lands in a udmabuf (ncdevmem)"
	@echo "make clean         remove build outputs except the extracted kernel tree"

deps:
	@tools/deps.sh install

ensure-deps:
	@tools/deps.sh ensure

kernel: ensure-deps
	@tools/kernel/build.sh normal

kernel-debug: ensure-deps
	@tools/kernel/build.sh debug

# The tree's uapi headers, installed: build/kernel/headers/x86/include.
headers: ensure-deps
	@tools/kernel/build.sh headers

VM_ARGS := $(if $(filter-out 0,$(DEBUG)),--debug)
VM_KERNEL := $(BUILD)/kernel/$(if $(VM_ARGS),obj-debug,obj)/arch/x86/boot/bzImage

# `make vm` builds the kernel only when there is none yet: booting must not
# wait for a no-op kbuild pass. Run `make kernel` after changing the kernel.
$(BUILD)/kernel/obj/arch/x86/boot/bzImage: | ensure-deps
	@tools/kernel/build.sh normal
$(BUILD)/kernel/obj-debug/arch/x86/boot/bzImage: | ensure-deps
	@tools/kernel/build.sh debug

ifeq ($(origin CMD),undefined)
vm:
	@echo "usage: make vm CMD='command' [DEBUG=1] [VM_TIMEOUT=seconds]" >&2; exit 2
else ifneq ($(filter $(RUN_EXIT_SO),$(.LOADED)),)
vm: $(VM_KERNEL)
	$(run-exit tools/vm/run $(VM_ARGS) -- $(call shquote,$(value CMD)))
else
vm: $(VM_KERNEL)
	@tools/vm/run $(VM_ARGS) -- $(call shquote,$(value CMD))
endif

check: ensure-deps tools libdevmem
	@tools/kernel/build.sh normal
	@tools/kernel/build.sh debug
	@tools/check

# Every suite on both kernels (selftests/debug-full-only: what check leaves
# off the debug kernel).
check-full: export CHECK_FULL := 1
check-full: check

# BENCH_ARGS: see tools/bench/pair-throughput --help;
# DEVMEM_BENCH_ARGS: see tools/bench/devmem-rx-cpu --help
bench: ensure-deps tools
	@tools/kernel/build.sh normal
	@VM_APPEND='tsc=reliable $(VM_APPEND)' tools/vm/run -- \
		'tools/bench/pair-throughput $(BENCH_ARGS) && tools/bench/devmem-rx-cpu $(DEVMEM_BENCH_ARGS)'

demo: ensure-deps tools
	@tools/kernel/build.sh normal
	@tools/demo

clean:
	rm -rf $(BUILD)/kernel/obj $(BUILD)/kernel/obj-debug $(BUILD)/vm $(BUILD)/make

distclean:
	rm -rf $(BUILD)
