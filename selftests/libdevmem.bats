#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libdevmem's dma-buf providers on our kernel, which has what the host
# lacks: /dev/udmabuf and the system dma-heap. The test programs
# (libdevmem/tests, built by make libdevmem) allocate a buffer, write a
# pattern through their own mapping of the fd and read it back with
# devmem_dmabuf_read() (mmap + DMA_BUF_IOCTL_SYNC). Here they must pass:
# a skip (exit 77) is a failure, since the kernel has both providers.

load lib/vm

LIBTESTS=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/libdevmem/tests

# prog NAME: run a libdevmem test program; it must pass, not skip.
prog() {
	[ -x "$LIBTESTS/$1" ] || { echo "no $LIBTESTS/$1: run make libdevmem" >&2; return 1; }
	run "$LIBTESTS/$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *skip* ]]
}

@test "udmabuf: allocated, filled through its mapping, read back, imported" {
	[ -c /dev/udmabuf ]
	prog udmabuf
}

@test "system dma-heap: allocated, filled through its mapping, read back" {
	[ -c /dev/dma_heap/system ]
	prog dma-heap
}
