#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Device memory lent to a socket comes back when the socket goes: closing
# or killing a receiver that holds tokens returns every buffer (the
# binding's page pool drains and is freed) and leaks nothing. Kept apart
# from devmem-rx.bats so that it runs with kmemleak on the debug kernel
# (selftests/debug-kmemleak-off lists devmem-rx.bats).

load lib/vm
load lib/nsim
load lib/devmem

test_setup() { devmem_setup; }
test_teardown() { nsim_cleanup; }

@test "closing a socket that holds tokens returns every buffer: the pool drains, nothing leaks" {
	# the receiver holds all it gets and exits holding them
	rx_start 8M --hold
	send "$IP4B" 8M
	rx_wait
	summary_is_all_devmem $((8 << 20))
	wait_until 30 no_pools_of "$BIND_ID"

	# killed while holding, mid-stream
	rx_start 64M --hold
	send "$IP4B" 64M &
	local sender=$! bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	wait_until 60 stat_gt "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 2000))
	kill -9 "$(pgrep -P "$RX_PID")"
	wait "$RX_PID" || true
	wait "$sender" || true
	wait_until 30 no_pools_of "$BIND_ID"
	nsim_leak_check
}
