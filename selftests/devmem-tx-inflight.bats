#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Sends from device memory still in flight when the world changes: the
# binding is unbound, the sender dies, the device is deleted, its
# namespace goes away. A's port sends from a udmabuf (txhold-vm, driven a
# command at a time); B's port is taken down first, so that nothing is
# acked and every byte sent stays in A's queues. The binding's mapping
# must last exactly as long as some skb still holds it: the udmabuf's
# attachment (debugfs dma_buf/bufinfo) is the witness.

bats_require_minimum_version 1.5.0

load lib/vm
load lib/nsim

PORT=5311
LIBTESTS=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/libdevmem/tests
BUFINFO=/sys/kernel/debug/dma_buf/bufinfo

test_setup() {
	NSIM_NO_IPV6=1 nsim_pair 4
}
test_teardown() {
	exec 5>&- 2>/dev/null || true
	nsim_cleanup
}

# attached: the devices attached to the (only) udmabuf, from bufinfo;
# "none" once no udmabuf is left (the binding held its last reference).
attached() {
	awk '/udmabuf/ { on = 1 } on && /^Total [0-9]+ devices attached/ { n = $2; exit }
	     END { print on ? n : "none" }' "$BUFINFO"
}

# hold_start: txhold-vm in A, fed through fd 5; answers in HOLD_OUT.
hold_start() {
	HOLD_OUT=$BATS_TEST_TMPDIR/hold.out
	mkfifo "$BATS_TEST_TMPDIR/hold.in"
	"$BIN/in-ns" "$NSA" "$LIBTESTS/txhold-vm" "$DEVA" "$IP4B" "$PORT" \
		<"$BATS_TEST_TMPDIR/hold.in" >"$HOLD_OUT" 2>&1 3>&- &
	HOLD_PID=$!
	exec 5>"$BATS_TEST_TMPDIR/hold.in"
	wait_until 30 grep -q '^ready id=' "$HOLD_OUT"
}

# hold CMD: run CMD in txhold-vm; its answer in REPLY.
hold() {
	local n
	n=$(wc -l <"$HOLD_OUT")
	echo "$1" >&5
	wait_until 90 eval "[ \$(wc -l <'$HOLD_OUT') -gt $n ]"
	REPLY=$(sed -n "$((n + 1))p" "$HOLD_OUT")
	echo "$1 -> $REPLY"
}

# 256 KiB sent while B is down: all of it queued, none of it acked.
send_unacked() {
	xfer_start "$NSB" "$PORT" 0 256K
	hold_start
	ip -n "$NSB" link set "$DEVB" down
	hold "send 262144"
	[ "$REPLY" = "sent 262144" ]
	hold pending
	[ "$REPLY" = "pending 262144" ]
	[ "$(attached)" = 1 ]
}

@test "unbind with sends in flight: the mapping stays until the last byte is acked, every byte arrives" {
	send_unacked
	hold unbind
	[ "$REPLY" = unbound ]
	# the frags hold the binding
	[ "$(attached)" = 1 ]
	hold "send 4096"
	[ "$REPLY" = "send: EINVAL" ]
	ip -n "$NSB" link set "$DEVB" up
	hold "reap 60"
	[ "$REPLY" = "reaped 262144 pending 0" ]
	wait_until 10 eval '[ "$(attached)" = 0 ]'
	hold close
	[ "$REPLY" = closed ]
	xfer_wait
}

@test "the sender killed with sends in flight: the kernel finishes the stream, then lets the mapping go" {
	send_unacked
	kill -9 "$HOLD_PID"
	wait "$HOLD_PID" || true
	# the orphaned socket's skbs still hold the binding
	[ "$(attached)" = 1 ]
	ip -n "$NSB" link set "$DEVB" up
	xfer_wait
	wait_until 30 eval '[ "$(attached)" = none ]'
}

@test "the device deleted with sends in flight: nothing more goes out, the abort frees the mapping" {
	send_unacked
	nsim_snap "$NSA" "$DEVA"
	echo "$IDA" >"$NSIM_BUS/del_device"
	IDA=
	hold pending
	[ "$REPLY" = "pending 262144" ]
	# the route went with the device and cannot be built again
	hold "send 4096"
	[ "$REPLY" = "send: EHOSTUNREACH" ]
	hold abort
	[ "$REPLY" = aborted ]
	# still bound: the binding's own reference
	[ "$(attached)" = 1 ]
	hold unbind
	[ "$REPLY" = unbound ]
	wait_until 10 eval '[ "$(attached)" = 0 ]'
	kill "$XFER_PID"
}

@test "the namespace deleted with sends in flight: its device leaves the binding, the stream finishes" {
	send_unacked
	ip netns del "$NSA"
	exec {NSFDA}<&-
	NSA=
	kill -9 "$HOLD_PID"
	wait "$HOLD_PID" || true
	ip -n "$NSB" link set "$DEVB" up
	xfer_wait
	# the namespace dies with the orphaned socket; the port comes home
	# to init_net (renamed), and the binding lets the udmabuf go
	wait_until 60 compgen -G "$NSIM_BUS/devices/netdevsim$IDA/net/*"
	wait_until 30 eval '[ "$(attached)" = none ]'
}
