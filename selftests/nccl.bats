#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libnccl-net-devmem in devmem mode over the netdevsim pair, as two NCCL
# ranks: nccl/tests/harness receives in B's namespace and sends from A's,
# with libdevmem's stand-in CUDA driver and a udmabuf as the "GPU" buffer
# (NCCL_DEVMEM_BUFFER=udmabuf, 64 MiB: at MTU 1500 each 4 KiB buffer holds
# one packet's payload). The plugin sets B up itself (header split,
# queue 3 out of RSS, the buffer bound to it, a rule per listen); the
# harness applies the unpack records on the CPU and checks every byte.
# Afterwards B is exactly as before, and every token went back.

load lib/vm
load lib/nsim

NCCL_O=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/nccl
FAKE_CUDA=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/libdevmem/tests/fake-cuda

test_setup() {
	[ -x "$NCCL_O/tests/harness" ] || { echo "no $NCCL_O/tests/harness: run make nccl" >&2; return 1; }
	nsim_pair 4
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	HANDLE=$BATS_TEST_TMPDIR/handle
	BEFORE=$(nic_state)
}
test_teardown() {
	nsim_cleanup
	echo 0 >/proc/sys/vm/nr_hugepages
}

# What the plugin's set-up touches on B.
nic_state() {
	in_ns "$NSB" ethtool -g "$DEVB"
	in_ns "$NSB" ethtool -x "$DEVB"
	in_ns "$NSB" ethtool -n "$DEVB"
	in_ns "$NSB" ethtool -k "$DEVB" | grep '^ntuple-filters:'
}

# rank NS DEV HARNESS-ARGS...: the harness as one rank in NS over DEV.
rank() {
	local ns=$1 dev=$2
	shift 2
	in_ns "$ns" env LD_LIBRARY_PATH="$FAKE_CUDA" NCCL_DEVMEM_IFNAME="$dev" \
		NCCL_DEVMEM_BUFFER=udmabuf NCCL_DEVMEM_BUFFER_SIZE=64M \
		DEVMEM_STATE_DIR="$DEVMEM_STATE_DIR" \
		timeout "${NCCL_TIMEOUT:-300}" "$NCCL_O/tests/harness" "$NCCL_O/libnccl-net-devmem.so" "$@"
}

# recv_start HARNESS-ARGS...: rank B receiving in the background
# (RECV_PID, RECV_OUT).
recv_start() {
	RECV_OUT=$BATS_TEST_TMPDIR/recv.$RANDOM
	rank "$NSB" "$DEVB" --role recv --handle "$HANDLE" "$@" >"$RECV_OUT" 2>&1 &
	RECV_PID=$!
}

recv_wait() {
	local rc=0
	wait "$RECV_PID" || rc=$?
	cat "$RECV_OUT"
	return $rc
}

# summary LIST REPEAT: the receiving harness's last line, bytes and
# messages (records depend on how the wire cut the stream).
summary_re() {
	local list=$1 repeat=$2 s total=0 n=0
	for s in ${list//,/ }; do
		total=$((total + s * repeat))
		n=$((n + repeat))
	done
	echo "^harness: v11, $n messages, $total bytes checked, [0-9]+ records\$"
}

@test "nccl: devmem mode, 64 MiB in messages of 1 byte to 2 MiB, both ends from device memory, every byte; B as before, every token back" {
	local list=1,4095,4096,65537,1048576,2097152 rc=0
	# 8 in flight, as NCCL's steps: 16 MiB, 11600 buffers at MTU 1500
	NCCL_DEVMEM_MODE=devmem recv_start --sizes "$list" --repeat 21 --inflight 8
	NCCL_DEVMEM_MODE=devmem run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" \
		--sizes "$list" --repeat 21 --inflight 8 --tx-udmabuf
	echo "$output"
	recv_wait || rc=$?
	[ "$status" -eq 0 ]
	[[ $output == *"devmem sends from "*" (tx binding "* ]]
	[ "$rc" -eq 0 ]
	grep -Eq "$(summary_re "$list" 21)" "$RECV_OUT"
	grep -q "devmem: rx queues 3-3 of $DEVB bound to 64 MiB of host (udmabuf) memory" "$RECV_OUT"
	# 2048 records hold 2 MiB at MTU 1500, not 4
	grep -q "device $DEVB (index $IFB, $IP4B, MTU 1500), mode devmem, 2 data socket(s) per comm, messages of up to 2097152 bytes" "$RECV_OUT"
	grep -q "receiving on 2 socket(s) in devmem mode, device unpack" "$RECV_OUT"
	# every fragment's token went back
	[[ $(grep -o 'closed: [0-9]* of [0-9]* tokens' "$RECV_OUT") =~ ^closed:\ ([0-9]+)\ of\ ([0-9]+)\ tokens$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
	grep -q "devmem: $DEVB put back" "$RECV_OUT"
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: devmem mode, the card leaves 100 payload bytes of each packet in host memory: the plugin copies those" {
	local list=1,65537,2097152 rc=0
	echo 100 >"$DFSB/rxq/3/hds_payload"
	NCCL_DEVMEM_MODE=devmem recv_start --sizes "$list" --repeat 3
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes "$list" --repeat 3
	echo "$output"
	recv_wait || rc=$?
	[ "$status" -eq 0 ]
	[ "$rc" -eq 0 ]
	grep -Eq "$(summary_re "$list" 3)" "$RECV_OUT"
	grep -q "receiving on 2 socket(s) in devmem mode" "$RECV_OUT"
	grep -q "data socket [01] gets bytes in host memory (a card that splits late, or a flow not steered to the bound queues): the plugin copies them" "$RECV_OUT"
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: 16 KiB buffers (rx-page-size) of a udmabuf of huge pages" {
	local list=1,65537,2097152 rc=0
	echo 32 >/proc/sys/vm/nr_hugepages
	[ "$(cat /proc/sys/vm/nr_hugepages)" -eq 32 ]
	NCCL_DEVMEM_MODE=devmem NCCL_DEVMEM_RX_PAGE_SIZE=16K recv_start --sizes "$list" --repeat 4
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes "$list" --repeat 4
	echo "$output"
	recv_wait || rc=$?
	[ "$status" -eq 0 ]
	[ "$rc" -eq 0 ]
	grep -q "devmem: rx queues 3-3 of $DEVB bound to 64 MiB of host (udmabuf) memory (binding [0-9]*, 4096 buffers of 16384 bytes)" "$RECV_OUT"
	grep -Eq "$(summary_re "$list" 4)" "$RECV_OUT"
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: one data socket and eight, one request in flight" {
	local list=7,2097152 rc=0
	NCCL_DEVMEM_NSOCKS=8 recv_start --sizes "$list" --repeat 2
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes "$list" --repeat 2
	[ "$status" -eq 0 ]
	recv_wait || rc=$?
	[ "$rc" -eq 0 ]
	grep -q "receiving on 8 socket(s) in devmem mode" "$RECV_OUT"
	grep -Eq "$(summary_re "$list" 2)" "$RECV_OUT"
	rm -f "$HANDLE"
	NCCL_DEVMEM_NSOCKS=1 recv_start --sizes "$list" --repeat 2 --inflight 1
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes "$list" --repeat 2 --inflight 1
	[ "$status" -eq 0 ]
	recv_wait || rc=$?
	[ "$rc" -eq 0 ]
	grep -q "receiving on 1 socket(s) in devmem mode" "$RECV_OUT"
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: MTU 9000, 4 MiB messages; one byte more is refused at both ends" {
	local rc=0
	nsim_cleanup
	nsim_pair 4 9000
	BEFORE=$(nic_state)
	recv_start --sizes 4194304,1 --repeat 4 --oversize
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes 4194304,1 --repeat 4 --oversize
	echo "$output"
	recv_wait || rc=$?
	[ "$status" -eq 0 ]
	[ "$rc" -eq 0 ]
	grep -Eq "$(summary_re 4194304,1 4)" "$RECV_OUT"
	grep -q "WARN NET/devmem : irecv of 4194305 bytes: a message is at most 4194304 bytes over $DEVB (one unpack slot: 4 MiB, 2048 fragments at MTU 9000)" "$RECV_OUT"
	[[ $output == *"WARN NET/devmem : isend of 4194305 bytes: a message is at most 4194304 bytes over $DEVA (one unpack slot: 4 MiB, 2048 fragments at MTU 9000)"* ]]
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: the receiver closes with requests in flight: the sender fails, B is put back" {
	local rc=0
	recv_start --sizes 1048576 --repeat 64 --close-early 4
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes 1048576 --repeat 64
	[ "$status" -eq 1 ]
	echo "$output"
	recv_wait || rc=$?
	[ "$rc" -eq 0 ]
	grep -q "receiving on 2 socket(s) in devmem mode" "$RECV_OUT"
	grep -q "devmem: $DEVB put back" "$RECV_OUT"
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: a receiver killed mid-run: the next run puts B back first, then runs" {
	local rc=0
	recv_start --sizes 2097152 --repeat 64
	wait_until 60 grep -q "devmem: rx queues" "$RECV_OUT"
	pkill -9 -x harness
	wait "$RECV_PID" || true
	[ "$(nic_state)" != "$BEFORE" ]
	rm -f "$HANDLE"
	recv_start --sizes 4096 --repeat 2
	run rank "$NSA" "$DEVA" --role send --handle "$HANDLE" --sizes 4096 --repeat 2
	recv_wait || rc=$?
	[ "$rc" -eq 0 ]
	grep -q "$DEVB: what a process that is gone set up is put back" "$RECV_OUT"
	grep -q "receiving on 2 socket(s) in devmem mode" "$RECV_OUT"
	[ "$(nic_state)" = "$BEFORE" ]
}

@test "nccl: auto mode on a device that cannot be set up falls back to copy mode and says why" {
	# B's loopback: one rx queue, so the set-up is refused
	run in_ns "$NSB" env LD_LIBRARY_PATH="$FAKE_CUDA" NCCL_DEVMEM_IFNAME=lo \
		timeout 120 "$NCCL_O/tests/harness" "$NCCL_O/libnccl-net-devmem.so" \
		--sizes 1,1048576 --repeat 2
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"copy mode for receives: lo has 1 rx queue(s): one must stay for RSS"* ]]
	[[ $output == *"harness: v11, 4 messages, 2097154 bytes checked, 514 records"* ]]
	# NCCL_DEVMEM_MODE=devmem refuses instead
	run in_ns "$NSB" env LD_LIBRARY_PATH="$FAKE_CUDA" NCCL_DEVMEM_IFNAME=lo NCCL_DEVMEM_MODE=devmem \
		"$NCCL_O/tests/harness" "$NCCL_O/libnccl-net-devmem.so" --sizes 1
	[ "$status" -eq 1 ]
	[[ $output == *"WARN NET/devmem : NCCL_DEVMEM_MODE=devmem: the receive set-up failed: lo has 1 rx queue(s): one must stay for RSS"* ]]
	[[ $output == *"harness: listen: result 2"* ]]
}
