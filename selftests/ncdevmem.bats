#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# build/bin/ncdevmem on the netdevsim pair: the server in B (nsb) sets B's
# port up itself through libdevmem (header split, RSS, an n-tuple rule),
# binds a udmabuf to rx queue 3 (the last of 4: mainline's default),
# receives with MSG_SOCK_DEVMEM and checks every byte against mainline's
# -v pattern; the sender in A (nsa) is the ncdevmem client or socat
# writing the same pattern. Each test checks the summary field by field
# and that the NIC is exactly as it was once the server is gone, nothing
# left bound. host/ncdevmem.bats covers the command line and the client.

bats_require_minimum_version 1.5.0

load lib/vm
load lib/nsim
load lib/ncdevmem

PORT=5201

test_setup() {
	nsim_pair 4
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() { nsim_cleanup; }

# nic_state: what ncdevmem's set-up touches on B, as one text: header
# split and hds-thresh, n-tuple rules, the RSS table, the ntuple feature.
nic_state() {
	in_ns "$NSB" bash -c "'$BIN/tcp-data-split' $DEVB; '$BIN/tcp-data-split' -t $DEVB; ethtool -n $DEVB; ethtool -x $DEVB; ethtool -k $DEVB | grep ntuple"
}

# summary_pass BYTES PERIOD: the summary of a complete, validated stream,
# all of it in device memory, every token returned.
summary_pass() {
	[ "$SRV_RC" -eq 0 ]
	[ "${#SRV_LINES[@]}" -eq 11 ]
	[ "${SRV_LINES[0]}" = "ncdevmem: server summary" ]
	[ "${SUM[bytes]}" = "$1" ]
	[ "${SUM[devmem frags]}" -gt 0 ]
	[ $((SUM[devmem bytes] + SUM[linear bytes])) -eq "$1" ]
	[ "${SUM[devmem bytes]}" -gt 0 ]
	[ "${SUM[plain bytes]}" = 0 ]
	[ "${SUM[tokens returned]}" = "${SUM[devmem frags]}" ]
	[[ ${SUM[seconds]} =~ ^[0-9]+\.[0-9]{3}$ ]]
	[[ ${SUM[Gbit/s]} =~ ^[0-9]+\.[0-9]{3}$ ]]
	[ "${SUM[validation]}" = "ok, period $2" ]
	[ "${SUM[result]}" = pass ]
}

@test "ncdevmem server and client: 64 MiB validated, set-up seen while it runs, the NIC as before afterwards" {
	local before during
	before=$(nic_state)
	srv_start -v 7 --bytes 64M
	[[ $(cat "$SRV_ERR") =~ listening\ on\ $IP4B\ port\ $PORT\;\ $DEVB\ rx\ queues\ 3..3\ bound\ to\ dma-buf\ ([0-9]+)$ ]]
	local id=${BASH_REMATCH[1]}
	# while it listens: header split on, one rule to queue 3, queue 3
	# out of RSS, queue 3 bound
	during=$(nic_state)
	echo "$during"
	[[ $during == *"$DEVB: tcp-data-split on"* ]]
	[[ $during == *"Total 1 rules"* ]]
	[[ $during == *"Dest IP addr: $IP4B"* ]]
	[[ $during == *"Action: Direct to queue 3"* ]]
	[[ $(in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB") == *"queue id=3 type=rx ifindex=$IFB "*"dmabuf=$id"* ]]
	run send_pattern "$IP4B" 7 64M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "bytes:           $((64 << 20))" ]
	[ "${lines[4]}" = "result:          pass" ]
	srv_wait
	summary_pass $((64 << 20)) 7
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "device memory at both ends: the client -f sends 256 MiB (32 MiB on the debug kernel) from a udmabuf into the server's, validated" {
	local mib bytes before
	mib=$(on_debug 32 256)
	bytes=$((mib << 20))
	nsim_snap "$NSA" "$DEVA"
	before=${STAT[tx_devmem_bytes]}
	srv_start -v 251 --bytes "${mib}M"
	run send_pattern "$IP4B" 251 "${mib}M" -f "$DEVA" --dmabuf-size 8M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 9 ]
	[[ ${lines[0]} =~ ^ncdevmem:\ sending\ to\ $IP4B\ port\ $PORT\ from\ dma-buf\ [0-9]+\ \(8388608\ bytes\),\ bound\ for\ tx\ on\ $DEVA$ ]]
	[ "${lines[2]}" = "bytes:           $bytes" ]
	[ "${lines[5]}" = "completed bytes: $bytes" ]
	[ "${lines[8]}" = "result:          pass" ]
	srv_wait
	summary_pass "$bytes" 251
	# every payload byte left A's port from device memory (some more
	# than once, when retransmitted)
	nsim_snap "$NSA" "$DEVA"
	[ "$((STAT[tx_devmem_bytes] - before))" -ge "$bytes" ]
}

@test "--trace: every part of the stream in order, matching the summary" {
	local tr=$BATS_TEST_TMPDIR/trace
	srv_start -v 251 --bytes 4M --trace "$tr"
	run send_pattern "$IP4B" 251 4M
	[ "$status" -eq 0 ]
	srv_wait
	summary_pass $((4 << 20)) 251
	head -n 1 "$tr"
	[ "$(head -n 1 "$tr")" = "# ncdevmem trace 1: dmabuf-size $((64 << 20)) period 251" ]
	# d OFFSET SIZE inside the dma-buf, l SIZE; their sums and counts
	# are the summary's; nothing else
	run awk -v max=$((64 << 20)) '
		NR == 1 { next }
		$1 == "d" && NF == 3 && $3 > 0 && $2 + $3 <= max { d++; db += $3; next }
		$1 == "l" && NF == 2 && $2 > 0 { lb += $2; next }
		{ print "bad line " NR ": " $0; exit 1 }
		END { print d + 0, db + 0, lb + 0 }' "$tr"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "${SUM[devmem frags]} ${SUM[devmem bytes]} ${SUM[linear bytes]:-0}" ]
}

@test "ncdevmem server with a socat sender of mainline's pattern (yes | head), flows from A only (-c), the payload written out (-o)" {
	local before
	before=$(nic_state)
	srv_start -c "$IP4A" -v 7 --bytes 32M -o "$BATS_TEST_TMPDIR/got"
	[[ $(in_ns "$NSB" ethtool -n "$DEVB") == *"Src IP addr: $IP4A"* ]]
	in_ns "$NSA" bash -c "yes \"\$(printf '\\1\\2\\3\\4\\5\\6')\" | head -c 32M |
		socat -u - TCP:$IP4B:$PORT"
	srv_wait
	summary_pass $((32 << 20)) 7
	# -o: the payload as it arrived, read back through the dma-buf
	yes "$(printf '\1\2\3\4\5\6')" | head -c 32M | cmp - "$BATS_TEST_TMPDIR/got"
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "IPv6, two queues (-q 2 -t 2), period 256, --json summary" {
	local before
	before=$(nic_state)
	srv_start -s "$IP6B" -q 2 -t 2 -v 256 --bytes 16M --json
	[[ $(cat "$SRV_ERR") == *"rx queues 2..3 bound to dma-buf"* ]]
	local q
	q=$(in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB")
	echo "$q"
	[[ $q == *"queue id=2 type=rx ifindex=$IFB "*dmabuf=* ]]
	[[ $q == *"queue id=3 type=rx ifindex=$IFB "*dmabuf=* ]]
	[[ $(in_ns "$NSB" ethtool -n "$DEVB") == *"Action: Direct to queue 2"* ]]
	run send_pattern "$IP6B" 256 16M
	[ "$status" -eq 0 ]
	srv_wait
	[ "$SRV_RC" -eq 0 ]
	[ "${#SRV_LINES[@]}" -eq 1 ]
	[[ ${SRV_LINES[0]} =~ ^\{\"mode\":\"server\",\"bytes\":16777216,\"devmem_bytes\":([0-9]+),\"devmem_frags\":([0-9]+),\"linear_bytes\":([0-9]+),\"plain_bytes\":0,\"tokens_returned\":([0-9]+),\"seconds\":[0-9.]+,\"gbps\":[0-9.]+,\"validation\":\{\"period\":256,\"mismatches\":0\},\"result\":\"pass\"\}$ ]]
	[ $((BASH_REMATCH[1] + BASH_REMATCH[3])) -eq 16777216 ]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
	[ "${BASH_REMATCH[4]}" = "${BASH_REMATCH[2]}" ]
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "a stream of another period: exit 1, the first mismatch's offset; the NIC restored all the same" {
	local before
	before=$(nic_state)
	srv_start -v 7
	# period 8: 01..07 0a; period 7 has 0a at offset 6
	run send_pattern "$IP4B" 8 4M
	srv_wait
	[ "$SRV_RC" -eq 1 ]
	[ "${SUM[bytes]}" = $((4 << 20)) ]
	[[ ${SUM[validation]} =~ ^FAILED,\ period\ 7:\ ([0-9]+)\ bytes\ differ,\ the\ first\ at\ offset\ 6\ \(0x07,\ expected\ 0x0a\)$ ]]
	[ "${BASH_REMATCH[1]}" -gt $(((4 << 20) / 2)) ]
	[[ ${SUM[result]} =~ ^FAIL:\ validation:\ [0-9]+\ bytes\ differ,\ the\ first\ at\ offset\ 6$ ]]
	[ "${SUM[tokens returned]}" = "${SUM[devmem frags]}" ]
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "a short stream and a long one (-b): exit 1 naming the counts" {
	srv_start -v 7 --bytes 8M
	run send_pattern "$IP4B" 7 3M
	[ "$status" -eq 0 ]
	srv_wait
	[ "$SRV_RC" -eq 1 ]
	[ "${SUM[validation]}" = "ok, period 7" ]
	[ "${SUM[result]}" = "FAIL: received 3145728 bytes, expected 8388608" ]

	# a long one: the server stops at the first byte too many
	srv_start -v 7 --bytes 1M
	run send_pattern "$IP4B" 7 3M
	srv_wait
	[ "$SRV_RC" -eq 1 ]
	[ "${SUM[result]}" = "FAIL: more than the 1048576 bytes expected" ]
	[ "${SUM[bytes]}" -gt $((1 << 20)) ]
}

# one_write SIZE [ADDR]: SIZE zero bytes from A in one write (socat's
# buffer as large, nodelay), as mainline's check_rx_hds sends them.
one_write() {
	in_ns "$NSA" bash -c "head -c $1 /dev/zero |
		socat -b $1 -u - TCP:${2:-$IP4B}:$PORT,nodelay"
}

@test "check_rx_hds: payloads of 1 to 8192 bytes, one write each, never arrive as SO_DEVMEM_LINEAR (-L)" {
	local size
	for size in 1 8 16 32 64 128 256 512 1024 2048 4096 8192; do
		srv_start -L --bytes "$size"
		one_write "$size"
		srv_wait
		[ "$SRV_RC" -eq 0 ]
		[ "${SUM[result]}" = pass ]
		[ "${SUM[devmem bytes]}" = "$size" ]
		[ "${SUM[linear bytes]}" = 0 ]
	done
	nothing_bound
}

@test "a device with hds-thresh above 0: the server takes it to 0 while it runs, and back" {
	in_ns "$NSB" "$BIN/tcp-data-split" -t "$DEVB" 200
	local before during
	before=$(nic_state)
	[[ $before == *"$DEVB: hds-thresh 200 max 1024"* ]]
	srv_start -L -v 7 --bytes 256K
	during=$(nic_state)
	echo "$during"
	[[ $during == *"$DEVB: tcp-data-split on"* ]]
	[[ $during == *"$DEVB: hds-thresh 0 max 1024"* ]]
	# small writes: none kept with the headers
	in_ns "$NSA" bash -c "yes \"\$(printf '\\1\\2\\3\\4\\5\\6')\" | head -c 256K |
		socat -b 100 -u - TCP:$IP4B:$PORT,nodelay"
	srv_wait
	summary_pass $((256 << 10)) 7
	[ "${SUM[linear bytes]}" = 0 ]
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "-L: a payload the device kept with the headers fails the server, naming it" {
	# netdevsim's queue 3 keeps the first 8 payload bytes of each packet
	# in the header buffer, as a device with a split offset would
	echo 8 >"$DFSB/rxq/3/hds_payload"
	srv_start -L --bytes 100
	one_write 100
	srv_wait
	[ "$SRV_RC" -eq 1 ]
	[ "${SUM[linear bytes]}" = 8 ]
	[ "${SUM[result]}" = "FAIL: received SCM_DEVMEM_LINEAR (8 bytes at offset 0) but --fail-on-linear (-L) set" ]
	nothing_bound
	# without -L the same stream passes, 8 bytes linear
	srv_start --bytes 100
	one_write 100
	srv_wait
	[ "$SRV_RC" -eq 0 ]
	[ "${SUM[linear bytes]}" = 8 ]
	[ "${SUM[devmem bytes]}" = 92 ]
}

@test "-n: the test sets the NIC up itself; ncdevmem changes nothing on it, binds queue 3, and validates" {
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	in_ns "$NSB" ethtool -X "$DEVB" equal 3
	in_ns "$NSB" ethtool -K "$DEVB" ntuple on
	in_ns "$NSB" ethtool -N "$DEVB" flow-type tcp4 dst-port "$PORT" action 3 >/dev/null
	local before
	before=$(nic_state)
	srv_start -n -v 7 --bytes 16M
	[[ $(cat "$SRV_ERR") == *"rx queues 3..3 bound to dma-buf "*" (NIC set-up left to the caller)" ]]
	[ "$(nic_state)" = "$before" ]
	run send_pattern "$IP4B" 7 16M
	[ "$status" -eq 0 ]
	srv_wait
	summary_pass $((16 << 20)) 7
	[ "$(nic_state)" = "$before" ]
	[[ $before == *"Total 1 rules"* ]]
	nothing_bound
}

@test "-n without a steering rule: the stream arrives outside device memory, exit 1" {
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	in_ns "$NSB" ethtool -X "$DEVB" equal 3
	srv_start -n -v 7
	run send_pattern "$IP4B" 7 1M
	srv_wait
	[ "$SRV_RC" -eq 1 ]
	[ "${SUM[plain bytes]}" = $((1 << 20)) ]
	[ "${SUM[devmem frags]}" = 0 ]
	[ "${SUM[validation]}" = "ok, period 7" ]
	[ "${SUM[result]}" = "FAIL: 1048576 bytes arrived outside device memory (flow steering)" ]
}

@test "SIGTERM while waiting for a connection: exit 1, no summary, the NIC restored, nothing bound" {
	local before
	before=$(nic_state)
	srv_start -v 7
	[ "$(nic_state)" != "$before" ]
	kill -TERM "$SRV_PID"
	srv_wait
	[ "$SRV_RC" -eq 1 ]
	[ "${#SRV_LINES[@]}" -eq 0 ]
	grep -qx "ncdevmem: interrupted before a connection came" "$SRV_ERR"
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "SIGINT in the middle of an endless stream (--progress lines meanwhile): exit 1, a summary, tokens all back, the NIC restored" {
	local before
	before=$(nic_state)
	srv_start -v 7 --progress
	"$BIN/in-ns" "$NSA" bash -c "yes \"\$(printf '\\1\\2\\3\\4\\5\\6')\" |
		socat -u - TCP:$IP4B:$PORT" 2>/dev/null 3>&- &
	local sender=$!
	# a progress line says data flows: once a second, stderr no tty
	wait_until 60 grep -q "MiB received" "$SRV_ERR"
	kill -INT "$SRV_PID"
	srv_wait
	wait "$sender" || true
	[ "$SRV_RC" -eq 1 ]
	grep -Eq '^ncdevmem: [0-9]+ s: [0-9]+\.[0-9] MiB received, [0-9]+\.[0-9]{3} Gbit/s, [0-9]+ devmem frags$' "$SRV_ERR"
	[ "${SUM[result]}" = "FAIL: interrupted" ]
	[ "${SUM[validation]}" = "ok, period 7" ]
	[ "${SUM[bytes]}" -gt 0 ]
	[ "${SUM[tokens returned]}" = "${SUM[devmem frags]}" ]
	[ "$(nic_state)" = "$before" ]
	nothing_bound
}

@test "kill -9 in the middle of a stream: the set-up outlives it; devmemctl teardown puts everything back exactly" {
	local before during rc=0 state
	before=$(nic_state)
	state=$DEVMEM_STATE_DIR/netns-$(stat -L -c %i "/run/netns/$NSB")-ifindex-$IFB
	srv_start -v 7 --progress
	during=$(nic_state)
	[ "$during" != "$before" ]
	# while the server lives: teardown and a setup of its queue refused,
	# nothing changed
	local owner=("$state".owner.*)
	[ "${#owner[@]}" -eq 1 ]
	run --separate-stderr in_ns "$NSB" "$BIN/devmemctl" teardown dev "$DEVB"
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: $DEVB is set up by a running process (state file ${owner[0]} is locked)" ]
	run --separate-stderr in_ns "$NSB" "$BIN/devmemctl" setup dev "$DEVB" queues 3
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: queue 3 of $DEVB is already set up by a running process (state file ${owner[0]} is locked)" ]
	[ "$(nic_state)" = "$during" ]

	"$BIN/in-ns" "$NSA" bash -c "yes \"\$(printf '\\1\\2\\3\\4\\5\\6')\" |
		socat -u - TCP:$IP4B:$PORT" 2>/dev/null 3>&- &
	local sender=$!
	wait_until 60 grep -q "MiB received" "$SRV_ERR"
	kill -KILL "$SRV_PID"
	wait "$SRV_PID" || rc=$?
	wait "$sender" || true
	[ "$rc" -eq 137 ]
	# nothing was put back; the state files say what to undo
	[ "$(nic_state)" = "$during" ]
	nothing_bound
	cat "$state" "${owner[0]}"
	[ "$(cat "$state")" = "libdevmem-nic 1
device $IFB $DEVB
header-split off
rss default
ntuple off" ]
	[ "$(cat "${owner[0]}")" = "libdevmem-nic 1
device $IFB $DEVB
queues 3 3
rule 0 3 $IP4B $PORT any" ]

	# set-up of its queue after the kill, without teardown: refused,
	# naming teardown
	run --separate-stderr in_ns "$NSB" "$BIN/devmemctl" setup dev "$DEVB" queues 3
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: queue 3 of $DEVB is already set up (state file ${owner[0]}): run \"devmemctl teardown dev $DEVB\" if no process is using it" ]
	run --separate-stderr "$BIN/in-ns" "$NSB" "$BIN/ncdevmem" -l -s "$IP4B" -p "$PORT" -f "$DEVB" -v 7
	echo "$stderr"
	[ "$status" -eq 1 ]
	[[ $stderr == *": queue 3 of $DEVB is already set up (state file ${owner[0]}): run \"devmemctl teardown dev $DEVB\" if no process is using it" ]]
	[ "$(nic_state)" = "$during" ]

	run --separate-stderr in_ns "$NSB" "$BIN/devmemctl" teardown dev "$DEVB"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ -z "$output$stderr" ]
	[ ! -e "$state" ]
	[ ! -e "${owner[0]}" ]
	[ "$(nic_state)" = "$before" ]
	# and the device can be set up again
	srv_start -v 7
	kill -TERM "$SRV_PID"
	srv_wait
	[ "$(nic_state)" = "$before" ]
	[ ! -e "$state" ]
}

@test "a device without device-memory support (lo): exit 77 with the kernel's refusal" {
	# -n: lo has neither header split nor RSS; bind-rx itself refuses
	run --separate-stderr "$BIN/in-ns" "$NSB" "$BIN/ncdevmem" -l -s 127.0.0.1 -p "$PORT" -f lo -t 0 -n
	echo "status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 77 ]
	[ -z "$output" ]
	[[ $stderr == "ncdevmem: skip: bind-rx lo queues 0..0: "* ]]
}
