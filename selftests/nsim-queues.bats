#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Queue restart and the fault knobs in debugfs (ports/0/rxq/Q/): restart
# during traffic, rollback when the new queue cannot be built, failed
# buffer allocations, dropped packets, held buffers.

load lib/vm
load lib/nsim

EINVAL="Invalid argument"

# Two queues; B's traffic to UDP port 7100 and TCP port 5100 goes to
# queue 1. IPv4 only, so that only what a test sends is counted.
test_setup() {
	NSIM_NO_IPV6=1 nsim_pair 2
	in_ns "$NSB" ethtool -K "$DEVB" ntuple on
	in_ns "$NSB" ethtool -N "$DEVB" flow-type udp4 dst-port 7100 action 1
	in_ns "$NSB" ethtool -N "$DEVB" flow-type tcp4 dst-port 5100 action 1
	Q1=$DFSB/rxq/1
	udp_sink "$NSB" 7100
}
test_teardown() { nsim_cleanup; }

send_udp() { udp_send "$NSA" "$IP4B" 7100 "$1"; }
q1() { nsim_stat "$NSB" "$DEVB" "rx1_$1"; }

# B has received more than $1 bytes (read through the listener's view of
# its namespace: polling costs no exec).
b_past() { [ "$(netdev_rx_bytes "$XFER_PID" "$DEVB")" -gt "$1" ]; }

# restarted_mid_transfer I: the listener is still receiving after the
# I-th restart; else what the two ends said.
restarted_mid_transfer() {
	kill -0 "$XFER_PID" 2>/dev/null && return 0
	echo "the transfer ended before restart $1 (the host outran ten restarts: raise its size)"
	cat "$XFER_OUT" "$BATS_TEST_TMPDIR/conn"
	return 1
}

@test "restart ten times during a transfer: completes validated, no leak" {
	# One way, large enough to outlast ten restarts (each waits for a
	# MiB of progress) on either kernel, however fast the host.
	xfer_start "$NSB" 5100 0 2G
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p 5100 \
		-s 2G >"$BATS_TEST_TMPDIR/conn" 2>&1 &
	conn=$!
	wait_until 30 b_past $((1 << 20))
	for i in $(seq 10); do
		restarted_mid_transfer "$i"
		echo 1 >"$Q1/restart"
		# The rebuilt queue carries another MiB before the next restart.
		mark=$(netdev_rx_bytes "$XFER_PID" "$DEVB")
		wait_until 60 b_past $((mark + (1 << 20))) ||
			{ echo "no progress after restart $i"; false; }
	done
	wait $conn || { cat "$BATS_TEST_TMPDIR/conn"; false; }
	xfer_wait
	grep -q validated "$XFER_OUT"
	# Queue 1 did the work: at least 2 GiB in 1448-byte segments.
	[ "$(q1 packets)" -gt 1480000 ]
	nsim_cleanup
	nsim_leak_check
}

@test "restart: a failed page-pool creation rolls back to the old queue" {
	echo Y >"$Q1/fail_pool_create"
	run sysfs_write "$Q1/restart" 1
	[ "$status" -eq 1 ]
	[ "$output" = "Cannot allocate memory" ]
	[ "$(cat "$Q1/fail_pool_create")" = N ]
	before=$(q1 packets)
	send_udp 3
	[ "$(q1 packets)" -eq $((before + 3)) ]
	xfer_start "$NSB" 5100 2M 2M
	xfer_connect "$NSA" "$IP4B" 5100 2M 2M
	xfer_wait
	echo 1 >"$Q1/restart"
}

@test "fail_alloc N: exactly N packets dropped as allocation failures" {
	b_pkts=$(q1 packets) b_fail=$(q1 alloc_fail) b_drop=$(q1 drops)
	echo 4 >"$Q1/fail_alloc"
	send_udp 6
	[ "$(q1 alloc_fail)" -eq $((b_fail + 4)) ]
	[ "$(q1 drops)" -eq $((b_drop + 4)) ]
	[ "$(q1 packets)" -eq $((b_pkts + 2)) ]
	[ "$(cat "$Q1/fail_alloc")" = 0 ]
}

@test "fail_alloc with header split: the header buffer allocation fails too" {
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	b_fail=$(q1 alloc_fail) b_hdr=$(q1 hdr_bufs)
	echo 1 >"$Q1/fail_alloc"
	send_udp 2
	[ "$(q1 alloc_fail)" -eq $((b_fail + 1)) ]
	[ "$(q1 hdr_bufs)" -eq $((b_hdr + 1)) ]
}

@test "drop N: the next N packets on the queue are dropped and counted" {
	b_pkts=$(q1 packets) b_drop=$(q1 drops)
	echo 5 >"$Q1/drop"
	send_udp 8
	[ "$(q1 drops)" -eq $((b_drop + 5)) ]
	[ "$(q1 packets)" -eq $((b_pkts + 3)) ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx0_drops)" = 0 ]
}

@test "hold: held buffers survive a restart and device deletion, no leak" {
	echo 4 >"$Q1/hold"
	[ "$(cat "$Q1/hold")" = 4 ]
	echo 3 >"$Q1/hold"
	[ "$(cat "$Q1/hold")" = 7 ]
	# The old pool waits for its held buffers; the new one serves traffic.
	echo 1 >"$Q1/restart"
	xfer_start "$NSB" 5100 1M 1M
	xfer_connect "$NSA" "$IP4B" 5100 1M 1M
	xfer_wait
	echo 0 >"$Q1/hold"
	[ "$(cat "$Q1/hold")" = 0 ]
	echo 2 >"$Q1/hold"
	nsim_cleanup
	nsim_leak_check
}

@test "knobs: bad values are refused and change nothing" {
	run sysfs_write "$Q1/restart" 0
	[ "$status" -eq 1 ]
	[ "$output" = "$EINVAL" ]
	run sysfs_write "$Q1/restart" banana
	[ "$status" -eq 1 ]
	[ "$output" = "$EINVAL" ]
	for knob in fail_alloc drop; do
		for bad in -1 x 1000001 99999999999999999999; do
			run sysfs_write "$Q1/$knob" "$bad"
			[ "$status" -eq 1 ] || { echo "$knob accepted '$bad'"; false; }
			[ "$(cat "$Q1/$knob")" = 0 ]
		done
	done
	for bad in 65 -1 x; do
		run sysfs_write "$Q1/hold" "$bad"
		[ "$status" -eq 1 ]
		[ "$output" = "$EINVAL" ]
	done
	[ "$(cat "$Q1/hold")" = 0 ]
	for bad in maybe x 2; do
		run sysfs_write "$Q1/fail_pool_create" "$bad"
		[ "$status" -eq 1 ]
		[ "$output" = "$EINVAL" ]
	done
	[ "$(cat "$Q1/fail_pool_create")" = N ]
	echo 64 >"$Q1/hold"
	run sysfs_write "$Q1/hold" 1
	[ "$status" -eq 1 ]
	[ "$output" = "No space left on device" ]
	echo 0 >"$Q1/hold"
}

@test "knobs: a down device or an inactive queue cannot be restarted or hold" {
	in_ns "$NSB" ethtool -N "$DEVB" delete 0
	in_ns "$NSB" ethtool -N "$DEVB" delete 1
	in_ns "$NSB" ethtool -L "$DEVB" combined 1
	run sysfs_write "$Q1/restart" 1
	[ "$status" -eq 1 ]
	[ "$output" = "$EINVAL" ]
	run sysfs_write "$Q1/hold" 1
	[ "$status" -eq 1 ]
	[ "$output" = "Network is down" ]
	ip -n "$NSB" link set "$DEVB" down
	run sysfs_write "$DFSB/rxq/0/restart" 1
	[ "$status" -eq 1 ]
	[ "$output" = "Network is down" ]
	run sysfs_write "$DFSB/rxq/0/hold" 1
	[ "$status" -eq 1 ]
	[ "$output" = "Network is down" ]
	ip -n "$NSB" link set "$DEVB" up
	echo 1 >"$DFSB/rxq/0/restart"
}
