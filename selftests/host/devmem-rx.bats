#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/devmem-rx on the host's loopback, in --plain mode (no bound
# queue here): the pattern check agrees with tcpxfer's sender and catches
# a wrong stream or a short one; usage errors. Its device-memory mode
# runs in the VM (selftests/devmem-rx.bats).

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
XFER=$REPO/build/bin/tcpxfer
load lib/plain-rx

setup_file() {
	make -C "$REPO" "$RX" "$XFER"
}

@test "plain receive of tcpxfer's pattern: every byte checked" {
	rx -n 4M --cpu
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 4M -r 0
	rx_status
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "received 4194304 bytes" ]
	[[ ${lines[1]} =~ ^cpu\ [0-9]+\ ns\ for\ 4194304\ bytes,\ [0-9]+\ wakeups,\ [0-9]+\ preemptions$ ]]
}

@test "with --rcvlowat every byte is still received and checked" {
	rx -n 4M --rcvlowat 256K
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 4M -r 0
	rx_status
	[ "$status" -eq 0 ]
	[ "$output" = "received 4194304 bytes" ]
}

@test "another seed's stream is caught at its first byte" {
	rx -n 1M
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 1M -r 0 -S 2 || true
	rx_status
	[ "$status" -eq 1 ]
	[[ $output =~ ^devmem-rx:\ recv:\ byte\ 0\ of\ the\ stream\ is\ 0x[0-9a-f]{2},\ expected\ 0x[0-9a-f]{2}$ ]]
}

@test "a short stream fails with the count" {
	rx -n 2M
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 1M -r 0
	rx_status
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: received 1048576 bytes, expected 2097152" ]
}

@test "usage errors exit 2; no dma-buf outside --plain exits 1" {
	run "$RX"
	[ "$status" -eq 2 ]
	run "$RX" -p 1 -n 1 extra
	[ "$status" -eq 2 ]
	run "$RX" -p 1 -n 1x
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: bad number '1x'" ]
	run "$RX" -p 1 -n 1 --rcvlowat 0
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: --rcvlowat 0: 1 to 2147483647 bytes" ]
	run "$RX" -p 1 -n 1 --rcvlowat 2G
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: --rcvlowat 2G: 1 to 2147483647 bytes" ]
	run "$RX" -p 1 -n 1 --batch 0
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: --batch 0: 1 to 1024 tokens" ]
	run "$RX" -p 1 -n 1 --batch 1025
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: --batch 1025: 1 to 1024 tokens" ]
	run env -u DEVMEM_DMABUF_FD "$RX" -p 1 -n 1
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: no dma-buf: give -d FD or run under netdev-nl bind-rx --run" ]
	run "$RX" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: devmem-rx"* ]]
}
