#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Device memory lent to a socket comes back when the socket goes: closing
# or killing a receiver that holds tokens returns every buffer (the
# binding's page pool drains and is freed) and leaks nothing; so does
# giving back at once tokens of two page pools of one binding (the queue
# restarted mid-stream), each buffer to its own pool. Kept apart
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

# stopped_at BYTES: the sender (SENDER) stopped itself once it had handed
# BYTES to send() (tcpxfer --stop-at), the receiver acked them all (A's
# Send-Q is empty) and read them all (B's Recv-Q is empty).
stopped_at() {
	local st a b
	read -r _ _ st _ <"/proc/$SENDER/stat"
	a=$(in_ns "$NSA" ss -Htin dst "$IP4B:$PORT")
	b=$(in_ns "$NSB" ss -Htn src "$IP4B:$PORT")
	[ "$st" = T ] && [[ $a =~ ^ESTAB\ +0\ +0\  ]] &&
		[[ $b =~ ^ESTAB\ +0\ +0\  ]] &&
		[[ $a == *" bytes_acked:$(($1 + 1)) "* ]] && return 0
	STOP_SHOW="sender state $st; A: $a; B: $b"
	return 1
}
# wait_stop BYTES: wait for stopped_at BYTES, or say how far it got.
wait_stop() { wait_until 60 stopped_at "$1" || { echo "$STOP_SHOW"; return 1; }; }

# pool_inflight DETACHED|ATTACHED: the in-flight count of the binding's
# pool that has (or has not) a detach-time.
pool_inflight() {
	pools_of "$BIND_ID" | awk -v d="$1" '
		(d == "DETACHED") == / detach-time=/ {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^inflight=/) print substr($i, 10) }'
}

@test "tokens from two page pools of one binding (queue restarted mid-stream) go back together: each pool drains, nothing leaks" {
	# The sender stops itself at a quarter and at half of the stream
	# (tcpxfer --stop-at), and the receiver, which holds every token,
	# has read all it sent by then: the queue restarts at the first
	# stop, so that the second quarter fills buffers of a new pool; at
	# the second the receiver gives its tokens back, those of both
	# pools in one go. A 4 KiB buffer holds one segment: the receiver
	# holds at least bytes / 4096 tokens.
	local mib q1 q2 old new
	mib=$(on_debug 4 16)
	q1=$((mib << 18)) q2=$((mib << 19))
	rx_start "${mib}M" --hold
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p "$PORT" \
		-s "${mib}M" --stop-at "$q1" --stop-at "$q2" &
	SENDER=$!
	wait_stop "$q1"
	# the held buffers stay the old pool's; the queue fills from a new one
	echo 1 >"$DFSB/rxq/3/restart"
	kill -CONT "$SENDER"
	wait_stop "$q2"
	pools_of "$BIND_ID"
	[ "$(pools_of "$BIND_ID" | wc -l)" -eq 2 ]
	old=$(pool_inflight DETACHED)
	new=$(pool_inflight ATTACHED)
	[ "$old" -ge $((q1 / 4096)) ]
	[ "$new" -ge $(((q2 - q1) / 4096)) ]
	# SO_DEVMEM_DONTNEED gives back the tokens of both pools together;
	# the sender goes on once the receiver said so, or the signal could
	# find the receiver reading the stream's next bytes
	kill -USR1 "$RX_PID"
	wait_until 30 grep -q '^released ' "$RX_OUT"
	kill -CONT "$SENDER"
	wait "$SENDER"
	rx_wait
	[[ ${RX_LINES[1]} =~ ^released\ ([0-9]+)\ tokens\ after\ ([0-9]+)\ bytes$ ]]
	[ "${BASH_REMATCH[2]}" -eq "$q2" ]
	[ "${BASH_REMATCH[1]}" -ge $((q2 / 4096)) ]
	summary_is_all_devmem $((mib << 20))
	wait_until 30 no_pools_of "$BIND_ID"
	nsim_leak_check
}
