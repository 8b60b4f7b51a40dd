#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Sending from device memory on a host shared by several users: the send
# memory accounting of merged ranges, who may send from a binding, and
# what one user's bindings may cost (memory cgroup, per-user limit, the
# work of a closing netlink socket). Runs on the debug kernel too.

bats_require_minimum_version 1.5.0

load lib/vm
load lib/nsim
load lib/devmem-tx

PORT=5302

test_setup() {
	nsim_pair 4
}
test_teardown() {
	teardown_owner
	cgroup_done
	nsim_cleanup
}

# The deterministic case: with an MSS of M, the first transmission takes
# ten segments of a send that ends one byte into the next page; the
# byte left over becomes an skb of its own, charged for one byte. The
# next send fills the rest of that page, before any acknowledgement (a
# 200 ms delay): it merges into that skb's frag. Once acknowledged, the
# congestion window sends the 4096 bytes in parts: the first split moves
# more truesize than the skb was charged.
split_after_merge() {
	local mss=$1 q=$(($1 * 10))
	tc -n "$NSA" qdisc add dev "$DEVA" root netem delay 200ms
	sink_start
	run -0 tx send --nagle --mss "$mss" --dev "$IFA" "$IP4B" "$PORT" \
		"$((4096 - q))+$((q + 1)),nowait" "4097+4095,nowait" meminfo
	[ "${lines[2]}" = "meminfo wmem_alloc=0 wmem_queued=0" ]
	wait "$SINK_PID"
	cmp "$SINK_OUT" <(letters 8192 | tail -c $((q + 4096)))
}

@test "a merged send split by the congestion window (MSS 88): the send memory back to zero, every byte" {
	split_after_merge 88
}

@test "a merged send split by the congestion window (MSS 200): the send memory back to zero, every byte" {
	split_after_merge 200
}

@test "send naming another uid's tx binding: EPERM, nothing of it sent; the socket sends on" {
	udmabuf_for_all
	# shellcheck disable=SC2046 # setpriv's words
	hold_tx $(as_uid 1000)
	sink_start
	# shellcheck disable=SC2046
	run -0 in_ns "$NSA" $(as_uid 1001) "$BIN/devmem-tx" send --dev "$IFA" "$IP4B" "$PORT" \
		0+3 "0+5,id=$HELD_ID" 3+3
	teardown_owner
	[ "${lines[0]}" = "0+3 3" ]
	[ "${lines[1]}" = "0+5,id=$HELD_ID EPERM" ]
	[ "${lines[2]}" = "3+3 3" ]
	sink_is abcdef
}

@test "send naming root's tx binding without CAP_NET_ADMIN: EPERM" {
	udmabuf_for_all
	hold_tx
	sink_start
	# shellcheck disable=SC2046
	run -0 in_ns "$NSA" $(as_uid 1001) "$BIN/devmem-tx" send --dev "$IFA" "$IP4B" "$PORT" \
		0+3 "0+5,id=$HELD_ID" 3+3
	teardown_owner
	[ "${lines[1]}" = "0+5,id=$HELD_ID EPERM" ]
	sink_is abcdef
}

@test "send naming another uid's tx binding with CAP_NET_ADMIN over the namespace: allowed" {
	udmabuf_for_all
	# shellcheck disable=SC2046
	hold_tx $(as_uid 1000)
	sink_start
	run -0 tx send --dev "$IFA" "$IP4B" "$PORT" 0+3 "0+5,id=$HELD_ID" 3+3
	teardown_owner
	[ "${lines[1]}" = "0+5,id=$HELD_ID 5" ]
	sink_is abcabcdedef
}

@test "send naming the same uid's tx binding from another network namespace: EPERM" {
	# a binding made in B's namespace, through B's port, by root
	hold_tx --in "$NSB" "$IFB"
	sink_start
	run -0 send 0+3 "0+5,id=$HELD_ID" 3+3
	teardown_owner
	[ "${lines[1]}" = "0+5,id=$HELD_ID EPERM" ]
	sink_is abcdef
}

@test "bind-tx charges the binding to the caller's memory cgroup" {
	cgroup_new
	local before after
	before=$(cat "$CG/memory.current")
	mkfifo "$BATS_TEST_TMPDIR/hold.in"
	# 64 MiB: 16384 buffers, 768 KiB of net_iovs per binding
	in_ns "$NSA" "$BIN/devmem-tx" bind-tx "$IFA" --size 64M --cgroup "$CG" \
		--repeat 4 --hold <"$BATS_TEST_TMPDIR/hold.in" >"$BATS_TEST_TMPDIR/hold.out" 3>&- &
	exec {HOLD_IN}>"$BATS_TEST_TMPDIR/hold.in"
	wait_until 60 eval '[ "$(grep -c "^bind-tx id=" "$BATS_TEST_TMPDIR/hold.out")" -eq 4 ]'
	after=$(cat "$CG/memory.current")
	echo "memory.current $before -> $after"
	[ $((after - before)) -ge $((4 * 786432)) ]
	teardown_owner
	wait
	cgroup_done
}

@test "bind-tx at the caller's memory cgroup's limit: ENOMEM, no OOM kill" {
	cgroup_new
	echo 8M >"$CG/memory.max"
	run -1 in_ns "$NSA" "$BIN/devmem-tx" bind-tx "$IFA" --size 64M --cgroup "$CG" --repeat 64
	echo "$output"
	# whichever allocation meets the limit first, with its extack text
	[ "${lines[-1]%%:*}" = ENOMEM ]
	[ "${lines[-1]}" != ENOMEM ]
	[ "${#lines[@]}" -lt 64 ]
	grep -x "oom_kill 0" "$CG/memory.events"
	[ "$(awk '$1 == "max" { print $2 }' "$CG/memory.events")" -gt 0 ]
}

@test "bind-tx beyond net.core.devmem_tx_bindings_per_user: ENOSPC naming it; other uids bind; a freed binding makes room" {
	[ "$(sysctl -n net.core.devmem_tx_bindings_per_user)" -eq 1024 ]
	udmabuf_for_all
	per_user 3
	# uid 1000 holds 3
	mkfifo "$BATS_TEST_TMPDIR/hold.in"
	# shellcheck disable=SC2046
	in_ns "$NSA" $(as_uid 1000) "$BIN/devmem-tx" bind-tx "$IFA" --repeat 3 --hold \
		<"$BATS_TEST_TMPDIR/hold.in" >"$BATS_TEST_TMPDIR/hold.out" 3>&- &
	exec {HOLD_IN}>"$BATS_TEST_TMPDIR/hold.in"
	wait_until 20 eval '[ "$(grep -c "^bind-tx id=" "$BATS_TEST_TMPDIR/hold.out")" -eq 3 ]'
	# shellcheck disable=SC2046
	run -1 in_ns "$NSA" $(as_uid 1000) "$BIN/devmem-tx" bind-tx "$IFA"
	[ "$output" = "ENOSPC: uid 1000 has 3 tx bindings, the limit (net.core.devmem_tx_bindings_per_user)" ]
	# shellcheck disable=SC2046
	run -0 in_ns "$NSA" $(as_uid 1001) "$BIN/devmem-tx" bind-tx "$IFA" --repeat 3
	# the bindings go once their netlink socket is closed and their
	# last reference dropped (asynchronously): then there is room
	exec {HOLD_IN}>&-
	HOLD_IN=
	wait
	# shellcheck disable=SC2046
	wait_until 10 in_ns "$NSA" $(as_uid 1000) "$BIN/devmem-tx" bind-tx "$IFA" --repeat 3
}

@test "closing generic netlink sockets costs the same with 2000 tx bindings held" {
	# py_close N: open, bind and close N generic netlink sockets; seconds
	py_close() {
		python3 - "$1" <<-'EOF_PY'
			import socket, sys, time
			t = time.monotonic()
			for _ in range(int(sys.argv[1])):
			    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
			    s.bind((0, 0))
			    s.close()
			print(f"{time.monotonic() - t:.3f}")
		EOF_PY
	}
	local base held
	base=$(py_close 2000)
	per_user 2000
	ulimit -n 4096
	mkfifo "$BATS_TEST_TMPDIR/hold.in"
	in_ns "$NSA" "$BIN/devmem-tx" bind-tx "$IFA" --size 4K --repeat 2000 --hold \
		<"$BATS_TEST_TMPDIR/hold.in" >"$BATS_TEST_TMPDIR/hold.out" 3>&- &
	exec {HOLD_IN}>"$BATS_TEST_TMPDIR/hold.in"
	wait_until 120 eval '[ "$(grep -c "^bind-tx id=" "$BATS_TEST_TMPDIR/hold.out")" -eq 2000 ]'
	held=$(py_close 2000)
	teardown_owner
	wait
	echo "2000 closes: ${base} s without bindings, ${held} s with 2000 held"
	python3 -c "import sys; sys.exit(0 if float('$held') < 2 * float('$base') + 0.5 else 1)"
}
