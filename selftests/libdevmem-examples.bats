#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libdevmem's examples as a user gets them: `make examples` installs the
# library under build/examples and builds the installed examples there
# through pkg-config alone; this runs those binaries on the netdevsim
# pair. Each sets B's port up itself (header split, RSS, an n-tuple rule
# to queue 3), and the device must be exactly as before once it is done.
# The sender in A writes a file of random bytes with socat; what the
# examples print is checked against that file.

load lib/vm
load lib/nsim

PORT=5201
EX=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/examples/share/doc/libdevmem/examples

test_setup() { nsim_pair 4; }
test_teardown() {
	# a second program a test started, if a failure left it running
	[ -z "${EX_PID2:-}" ] || kill -KILL "$EX_PID2" 2>/dev/null || true
	nsim_cleanup
	echo 0 >/proc/sys/vm/nr_hugepages
}

# nic_state: what the examples' set-up touches on B, as one text.
nic_state() {
	in_ns "$NSB" bash -c "'$BIN/tcp-data-split' $DEVB; ethtool -n $DEVB; ethtool -x $DEVB; ethtool -k $DEVB | grep ntuple"
}

listening() { [ -n "$(in_ns "$NSB" ss -Hltn "sport = :$PORT")" ]; }

# example_start NAME ARGS...: the installed example in B, in the
# background, back once it listens; EX_PID, EX_OUT (stdout and stderr).
example_start() {
	[ -x "$EX/$1" ] || { echo "no $EX/$1: run make examples" >&2; return 1; }
	EX_OUT=$BATS_TEST_TMPDIR/$1.out
	# (background processes close bats' fd 3, or bats waits for them)
	"$BIN/in-ns" "$NSB" "$EX/$1" "${@:2}" >"$EX_OUT" 2>&1 3>&- &
	EX_PID=$!
	wait_until 60 listening || { cat "$EX_OUT"; return 1; }
}

# crc_line FILE: its length and CRC-32 as recv-checksum and echo-server
# print them.
crc_line() {
	python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); print("%d bytes, crc32 %08x" % (len(d), zlib.crc32(d)))' "$1"
}

# random_file SIZE: a file of SIZE random bytes, in FILE; its crc_line in
# WANT.
random_file() {
	FILE=$BATS_TEST_TMPDIR/stream
	head -c "$1" /dev/urandom >"$FILE"
	WANT=$(crc_line "$FILE")
}

send_file() {
	in_ns "$NSA" socat -u "FILE:$FILE" "TCP:$IP4B:$PORT"
}

@test "recv-checksum: 16 MiB of random bytes through a 2 MiB dma-buf, mixed receives, the CRC-32 exact, the NIC as before" {
	local before rc=0
	before=$(nic_state)
	# 100 payload bytes of every packet in host memory, the rest in the
	# dma-buf: the checksum follows both in stream order
	echo 100 >"$DFSB/rxq/3/hds_payload"
	random_file 16M
	example_start recv-checksum "$DEVB" "$IP4B" "$PORT" 3
	send_file
	wait "$EX_PID" || rc=$?
	cat "$EX_OUT"
	[ "$rc" -eq 0 ]
	[ "$(cat "$EX_OUT")" = "$WANT" ]
	[ "$(nic_state)" = "$before" ]
}

@test "recv-checksum: no arguments, a bad queue, an unknown device: usage or the library's reason, exit 2" {
	run "$EX/recv-checksum"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: recv-checksum IFNAME ADDRESS PORT QUEUE" ]
	run "$EX/recv-checksum" "$DEVB" 10.0.0.1 1 x
	[ "$status" -eq 2 ]
	[ "$output" = "recv-checksum: bad queue" ]
	run "$EX/recv-checksum" nosuchdev 10.0.0.1 1 3
	[ "$status" -eq 2 ]
	[ "$output" = "recv-checksum: no network device \"nosuchdev\"" ]
}

# nic_setup_start: nic-setup for queue 3 in B, in the background, back
# once it says it is ready; EX_PID, EX_OUT.
nic_setup_start() {
	EX_OUT=$BATS_TEST_TMPDIR/nic-setup.out
	"$BIN/in-ns" "$NSB" "$EX/nic-setup" "$DEVB" "$IP4B" "$PORT" 3 >"$EX_OUT" 2>&1 3>&- &
	EX_PID=$!
	wait_until 60 grep -qx ready "$EX_OUT" || { cat "$EX_OUT"; return 1; }
}

# set_up: B's port as nic-setup leaves it: header split on, a rule for
# the flow to queue 3.
set_up() {
	[ "$(in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB")" = "$DEVB: tcp-data-split on" ]
	in_ns "$NSB" ethtool -n "$DEVB" | grep -q "Action: Direct to queue 3"
}

@test "nic-setup: set up while it runs, put back on SIGTERM" {
	local before rc=0
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	before=$(nic_state)
	nic_setup_start
	set_up
	[ "$(nic_state)" != "$before" ]
	kill -TERM "$EX_PID"
	wait "$EX_PID" || rc=$?
	cat "$EX_OUT"
	[ "$rc" -eq 0 ]
	[ "$(nic_state)" = "$before" ]
	run ls -A "$DEVMEM_STATE_DIR"
	[ "$output" = "" ]
}

@test "nic-setup: killed with SIGKILL, the device stays set up and refuses a second set-up; --recover puts it back" {
	local before rc=0
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	before=$(nic_state)
	nic_setup_start
	# while it runs, the state is its own
	run "$BIN/in-ns" "$NSB" "$EX/nic-setup" --recover "$DEVB"
	[ "$status" -eq 1 ]
	[[ $output == "recover: "* ]]
	[[ $output == *"$DEVMEM_STATE_DIR/netns-"* ]]
	kill -KILL "$EX_PID"
	wait "$EX_PID" || rc=$?
	[ "$rc" -eq 137 ]
	set_up
	# its queue stays its own
	run "$BIN/in-ns" "$NSB" "$EX/nic-setup" "$DEVB" "$IP4B" "$PORT" 3
	[ "$status" -eq 1 ]
	[[ $output == "set-up: queue 3 of $DEVB is already set up (state file "*".owner."*"): run \"devmemctl teardown dev $DEVB\" if no process is using it" ]]
	set_up
	run "$BIN/in-ns" "$NSB" "$EX/nic-setup" --recover "$DEVB"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(nic_state)" = "$before" ]
	run ls -A "$DEVMEM_STATE_DIR"
	[ "$output" = "" ]
	# nothing left to recover
	run "$BIN/in-ns" "$NSB" "$EX/nic-setup" --recover "$DEVB"
	[ "$status" -eq 1 ]
	[[ $output == "recover: "* ]]
}

# B's RSS table: the queues it spreads over, one line.
rss_queues() {
	in_ns "$NSB" ethtool -x "$DEVB" | awk '/^ +[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' |
		sort -un | tr '\n' ' '
}

@test "nic-setup: two programs own queues 3 and 2; teardown takes over the one killed, not the one running" {
	local before rc=0 out2=$BATS_TEST_TMPDIR/nic-setup2.out
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	before=$(nic_state)
	[ "$(rss_queues)" = "0 1 2 3 " ]
	nic_setup_start
	"$BIN/in-ns" "$NSB" "$EX/nic-setup" "$DEVB" "$IP4B" "$((PORT + 1))" 2 >"$out2" 2>&1 3>&- &
	EX_PID2=$!
	wait_until 60 grep -qx ready "$out2" || { cat "$out2"; return 1; }
	[ "$(rss_queues)" = "0 1 " ]
	run in_ns "$NSB" ethtool -n "$DEVB"
	echo "$output"
	[[ $output == *"Total 2 rules"* ]]
	[[ $output == *"Action: Direct to queue 2"* ]]
	set_up

	kill -KILL "$EX_PID2"
	wait "$EX_PID2" || rc=$?
	[ "$rc" -eq 137 ]
	run in_ns "$NSB" "$BIN/devmemctl" teardown dev "$DEVB"
	echo "$output"
	[ "$status" -eq 0 ]
	# the killed one's rule and queue are back; the running one's stay
	[ "$(rss_queues)" = "0 1 2 " ]
	run in_ns "$NSB" ethtool -n "$DEVB"
	echo "$output"
	[[ $output == *"Total 1 rules"* ]]
	[[ $output != *"Action: Direct to queue 2"* ]]
	set_up

	rc=0
	kill -TERM "$EX_PID"
	wait "$EX_PID" || rc=$?
	cat "$EX_OUT"
	[ "$rc" -eq 0 ]
	[ "$(nic_state)" = "$before" ]
	run ls -A "$DEVMEM_STATE_DIR"
	[ "$output" = "" ]
}

@test "uring-recv: on a device devmemctl set up, 16 MiB of random bytes through its own ring, mixed receives, written out exactly" {
	local before rc=0 out=$BATS_TEST_TMPDIR/received
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	before=$(nic_state)
	in_ns "$NSB" "$BIN/devmemctl" setup dev "$DEVB" queues 3 flow tcp4 dst "$IP4B" port "$PORT"
	echo 100 >"$DFSB/rxq/3/hds_payload"
	random_file 16M
	EX_OUT=$BATS_TEST_TMPDIR/uring-recv.err
	"$BIN/in-ns" "$NSB" "$EX/uring-recv" "$DEVB" "$IP4B" "$PORT" 3 >"$out" 2>"$EX_OUT" 3>&- &
	EX_PID=$!
	wait_until 60 listening
	send_file
	wait "$EX_PID" || rc=$?
	cat "$EX_OUT"
	[ "$rc" -eq 0 ]
	[ ! -s "$EX_OUT" ]
	cmp "$FILE" "$out"
	in_ns "$NSB" "$BIN/devmemctl" teardown dev "$DEVB"
	[ "$(nic_state)" = "$before" ]
}

# fwd_run SIZE [BUF_SIZE]: SIZE bytes from A forwarded by B from its
# dma-buf (in BUF_SIZE receive buffers) to a listener in A, 100 bytes of
# each packet received into host memory; byte for byte, the NIC as
# before. The kernel log is scanned after the test: a send memory
# accounting error there (refcount_t saturated) fails it.
fwd_run() {
	local size=$1 before out=$BATS_TEST_TMPDIR/got rc=0
	before=$(nic_state)
	random_file "$size"
	size=$(numfmt --from=iec "$size")
	# 100 payload bytes of each packet stay in host memory: fwd sends
	# those itself, between its sends from device memory
	echo 100 >"$DFSB/rxq/3/hds_payload"
	in_ns "$NSA" socat -u "TCP-LISTEN:5202,bind=$IP4A" "OPEN:$out,creat,trunc" 3>&- &
	local sink=$!
	wait_until 30 tcp_bound "$NSA" 5202
	nsim_snap "$NSB" "$DEVB"
	local tx_before=${STAT[tx_devmem_bytes]}
	example_start fwd "$DEVB" "$IP4B" "$PORT" 3 "$DEVB" "$IP4A" 5202 ${2:+"$2"}
	in_ns "$NSA" socat -u "FILE:$FILE" "TCP:$IP4B:$PORT"
	wait "$EX_PID" || rc=$?
	cat "$EX_OUT"
	[ "$rc" -eq 0 ]
	wait "$sink"
	cmp "$FILE" "$out"
	[[ $(cat "$EX_OUT") =~ ^$size\ bytes\ forwarded,\ ([0-9]+)\ from\ device\ memory$ ]]
	local devmem=${BASH_REMATCH[1]}
	[ "$devmem" -gt $((size * 3 / 4)) ]
	[ "$devmem" -lt "$size" ]
	# what fwd sent from device memory went out of B's port from there
	nsim_snap "$NSB" "$DEVB"
	[ "$((STAT[tx_devmem_bytes] - tx_before))" -ge "$devmem" ]
	[ "$(nic_state)" = "$before" ]
}

@test "fwd: 16 MiB from A forwarded by B from its dma-buf to a listener in A, mixed receives, byte for byte, the NIC as before" {
	fwd_run 16M
}

@test "fwd with 16 KiB receive buffers: 8 MiB forwarded byte for byte, merged sends accounted" {
	echo 4 >/proc/sys/vm/nr_hugepages
	fwd_run 8M 16384
}

@test "fwd with 32 KiB receive buffers: 8 MiB forwarded byte for byte, merged sends accounted" {
	echo 4 >/proc/sys/vm/nr_hugepages
	fwd_run 8M 32768
}

# echo-server with four clients in A at once, each a socat that sends a
# file and keeps what comes back. 100 bytes of each packet stay in host
# memory: the server's CRC-32 and echo follow both kinds in stream order.
@test "echo-server: 4 clients at once, 1 to 4 MiB each, echoed from the dma-buf byte for byte, CRC-32s read in place, the NIC as before" {
	local before i rc=0 sizes=(1M 2M 3M 4M) pids=() want=()
	before=$(nic_state)
	echo 100 >"$DFSB/rxq/3/hds_payload"
	nsim_snap "$NSB" "$DEVB"
	local tx_before=${STAT[tx_devmem_bytes]}
	example_start echo-server "$DEVB" "$IP4B" "$PORT" 3 4
	for i in 0 1 2 3; do
		head -c "${sizes[i]}" /dev/urandom >"$BATS_TEST_TMPDIR/in.$i"
		want+=("$(crc_line "$BATS_TEST_TMPDIR/in.$i")")
		"$BIN/in-ns" "$NSA" socat -t 60 \
			"OPEN:$BATS_TEST_TMPDIR/in.$i,rdonly!!CREATE:$BATS_TEST_TMPDIR/out.$i" \
			"TCP:$IP4B:$PORT" 3>&- &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		wait "${pids[i]}"
	done
	wait "$EX_PID" || rc=$?
	cat "$EX_OUT"
	[ "$rc" -eq 0 ]
	for i in 0 1 2 3; do
		cmp "$BATS_TEST_TMPDIR/in.$i" "$BATS_TEST_TMPDIR/out.$i"
	done
	[ "$(grep crc32 "$EX_OUT" | sort)" = "$(printf '%s\n' "${want[@]}" | sort)" ]
	[[ $(tail -n 1 "$EX_OUT") =~ ^4\ connections:\ 10485760\ bytes\ echoed,\ ([0-9]+)\ of\ them\ from\ device\ memory$ ]]
	local devmem=${BASH_REMATCH[1]}
	[ "$devmem" -gt $((10485760 * 3 / 4)) ]
	[ "$devmem" -lt 10485760 ]
	# the echo left B's port from the dma-buf
	nsim_snap "$NSB" "$DEVB"
	[ "$((STAT[tx_devmem_bytes] - tx_before))" -ge "$devmem" ]
	[ "$(nic_state)" = "$before" ]
}

@test "echo-server: no arguments, a bad count, an unknown device: usage or the library's reason, exit 2" {
	run "$EX/echo-server"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: echo-server IFNAME ADDRESS PORT QUEUE CONNECTIONS" ]
	run "$EX/echo-server" "$DEVB" 10.0.0.1 1 3 0
	[ "$status" -eq 2 ]
	[ "$output" = "echo-server: bad number of connections" ]
	run "$EX/echo-server" nosuchdev 10.0.0.1 1 3 1
	[ "$status" -eq 2 ]
	[ "$output" = "echo-server: no network device \"nosuchdev\"" ]
}
