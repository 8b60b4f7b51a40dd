# SPDX-License-Identifier: GPL-2.0
#
# build/bin/ncdevmem as the VM suites run it: the server in B (nsb, port
# $PORT, device $DEVB), the client in A (nsa). Load after lib/nsim.

# srv_start [ncdevmem args]: the server on B's IPv4 address (-s in the
# args overrides), in the background; returns once it listens. SRV_PID,
# SRV_OUT (stdout), SRV_ERR (stderr).
srv_start() {
	SRV_OUT=$BATS_TEST_TMPDIR/srv.out SRV_ERR=$BATS_TEST_TMPDIR/srv.err
	rm -f "$BATS_TEST_TMPDIR/ready"
	# (background processes close bats' fd 3, or bats waits for them)
	"$BIN/in-ns" "$NSB" "$BIN/ncdevmem" -l -s "$IP4B" -p "$PORT" -f "$DEVB" \
		-r "$BATS_TEST_TMPDIR/ready" "$@" >"$SRV_OUT" 2>"$SRV_ERR" 3>&- &
	SRV_PID=$!
	wait_until 60 srv_ready || { cat "$SRV_ERR"; return 1; }
	[ -e "$BATS_TEST_TMPDIR/ready" ] || { cat "$SRV_ERR"; return 1; }
}
srv_ready() { [ -e "$BATS_TEST_TMPDIR/ready" ] || ! kill -0 "$SRV_PID" 2>/dev/null; }

# srv_wait: the server's exit status in SRV_RC, its summary in SUM[key]
# ("devmem frags" and the like), its lines in SRV_LINES.
declare -gA SUM
srv_wait() {
	local line
	SRV_RC=0
	wait "$SRV_PID" || SRV_RC=$?
	echo "server exit $SRV_RC; stdout:"
	cat "$SRV_OUT"
	echo "stderr:"
	cat "$SRV_ERR"
	mapfile -t SRV_LINES <"$SRV_OUT"
	SUM=()
	for line in "${SRV_LINES[@]:1}"; do
		[[ $line =~ ^([a-zA-Z/ ]+):\ +(.*)$ ]] &&
			SUM[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done
}

# send_pattern ADDR PERIOD BYTES [args]: the ncdevmem client in A.
send_pattern() {
	local addr=$1 period=$2 bytes=$3
	shift 3
	in_ns "$NSA" "$BIN/ncdevmem" -s "$addr" -p "$PORT" -v "$period" --bytes "$bytes" "$@"
}

# nothing_bound [QUEUE]: no rx queue of B has a dma-buf; queue-get lists
# rx queue QUEUE (default 3).
nothing_bound() {
	run in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"queue id=${1:-3} type=rx ifindex=$IFB "* ]]
	[[ $output != *dmabuf=* ]]
}
