#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/devmem-rx on the host's loopback, in --plain mode (no bound
# queue here): the pattern check agrees with tcpxfer's sender and catches
# a wrong stream or a short one; usage errors. Its device-memory mode
# runs in the VM (selftests/devmem-rx.bats).

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
RX=$REPO/build/bin/devmem-rx
XFER=$REPO/build/bin/tcpxfer

setup_file() {
	make -C "$REPO" "$RX" "$XFER"
}

setup() {
	RPID=
	PORT=$((30000 + RANDOM % 5000))
}

teardown() {
	[ -z "$RPID" ] || { kill "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; } || true
}

# rx ARGS...: devmem-rx --plain on 127.0.0.1:$PORT in the background;
# returns once it listens.
rx() {
	local ready=$BATS_TEST_TMPDIR/ready
	rm -f "$ready"
	"$RX" --plain -b 127.0.0.1 -p "$PORT" -r "$ready" "$@" \
		>"$BATS_TEST_TMPDIR/out" 2>&1 &
	RPID=$!
	local i
	for i in $(seq 200); do
		[ -e "$ready" ] && return 0
		kill -0 "$RPID" 2>/dev/null || break
		read -rt 0.05 <> <(:) || true
	done
	cat "$BATS_TEST_TMPDIR/out"
	return 1
}

rx_status() {
	local rc=0
	wait "$RPID" || rc=$?
	RPID=
	cat "$BATS_TEST_TMPDIR/out"
	return $rc
}

@test "plain receive of tcpxfer's pattern: every byte checked" {
	rx -n 4M --cpu
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 4M -r 0
	run rx_status
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "received 4194304 bytes" ]
	[[ ${lines[1]} =~ ^cpu\ [0-9]+\ ns\ for\ 4194304\ bytes$ ]]
}

@test "another seed's stream is caught at its first byte" {
	rx -n 1M
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 1M -r 0 -S 2 || true
	run rx_status
	[ "$status" -eq 1 ]
	[[ $output =~ ^devmem-rx:\ recv:\ byte\ 0\ of\ the\ stream\ is\ 0x[0-9a-f]{2},\ expected\ 0x[0-9a-f]{2}$ ]]
}

@test "a short stream fails with the count" {
	rx -n 2M
	"$XFER" connect -q -a 127.0.0.1 -p "$PORT" -s 1M -r 0
	run rx_status
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
	run env -u DEVMEM_DMABUF_FD "$RX" -p 1 -n 1
	[ "$status" -eq 1 ]
	[ "$output" = "devmem-rx: no dma-buf: give -d FD or run under netdev-nl bind-rx --run" ]
	run "$RX" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: devmem-rx"* ]]
}
