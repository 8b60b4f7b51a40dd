#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Sending from device memory on the netdevsim pair: A binds a udmabuf for
# tx (netdev bind-tx) and sends from it with MSG_ZEROCOPY and an
# SCM_DEVMEM_DMABUF cmsg; netdevsim's wire reads the payload by DMA
# address; B receives it, with plain TCP or into its own dma-buf.

bats_require_minimum_version 1.5.0

load lib/vm
load lib/nsim

PORT=5301

test_setup() {
	nsim_pair 4
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() { nsim_cleanup; }

# sink_start [socat address options]: socat in B listening on PORT, its
# stdout in SINK_OUT; returns once it listens.
sink_start() {
	SINK_OUT=$BATS_TEST_TMPDIR/sink.out
	in_ns "$NSB" socat -u "TCP-LISTEN:$PORT,reuseaddr$1" "OPEN:$SINK_OUT,creat,trunc" 3>&- &
	SINK_PID=$!
	wait_until 20 tcp_bound "$NSB" "$PORT"
}

@test "check_tx: hello and world arrive exactly, sent from device memory" {
	nsim_snap "$NSA" "$DEVA"
	local before=${STAT[tx_devmem_bytes]}
	sink_start
	run -0 in_ns "$NSA" bash -c "printf 'hello\nworld\n' | '$BIN/ncdevmem' -f $DEVA -s $IP4B -p $PORT"
	echo "$output"
	wait "$SINK_PID"
	run -0 cat "$SINK_OUT"
	[ "$output" = $'hello\nworld' ]
	nsim_snap "$NSA" "$DEVA"
	[ "$((STAT[tx_devmem_bytes] - before))" = 12 ]
}

@test "check_tx_chunks: 3-byte iovecs over IPv6" {
	sink_start ",pf=ip6"
	run -0 in_ns "$NSA" bash -c "printf 'hello\nworld\n' | '$BIN/ncdevmem' -f $DEVA -s $IP6B -p $PORT -z 3"
	echo "$output"
	wait "$SINK_PID"
	run -0 cat "$SINK_OUT"
	[ "$output" = $'hello\nworld' ]
}
