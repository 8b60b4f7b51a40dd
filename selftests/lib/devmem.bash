# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the device-memory receive suites (devmem-rx, devmem-leak):
# a TCP flow from A steered (n-tuple rule) to rx queue 3 of B, bound to a
# udmabuf; RSS keeps every other flow on queues 0-2. Load after lib/nsim.

PORT=5201

# devmem_setup: the pair (IPv4 and IPv6), header split on B, RSS over
# queues 0-2, $PORT over IPv4 steered to queue 3.
devmem_setup() {
	nsim_pair 4
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	in_ns "$NSB" ethtool -X "$DEVB" equal 3
	in_ns "$NSB" ethtool -K "$DEVB" ntuple on
	steer tcp4 "$PORT"
}

# steer FLOW-TYPE PORT: that flow to the bound queue, 3.
steer() {
	in_ns "$NSB" ethtool -N "$DEVB" flow-type "$1" dst-port "$2" action 3 >/dev/null
}

# rx_start BYTES [devmem-rx args]: bind a udmabuf (RX_UDMABUF, 64M) to
# queue 3 of B and receive BYTES on $PORT under it, in the background;
# returns once it listens. RX_PID (netdev-nl, which forwards signals to
# devmem-rx), RX_OUT.
rx_start() {
	local bytes=$1
	shift
	RX_OUT=$BATS_TEST_TMPDIR/rx.$RANDOM
	ip netns exec "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 \
		"udmabuf:${RX_UDMABUF:-64M}" --run "$BIN/devmem-rx" -p "$PORT" \
		-n "$bytes" -r "$RX_OUT.ready" "$@" >"$RX_OUT" 2>&1 &
	RX_PID=$!
	wait_until 30 test -e "$RX_OUT.ready"
	[[ $(head -1 "$RX_OUT") =~ ^bind-rx\ id=([0-9]+)$ ]]
	BIND_ID=${BASH_REMATCH[1]}
}

# rx_wait: the receiver's exit status; its output in RX_LINES.
rx_wait() {
	local rc=0
	wait "$RX_PID" || rc=$?
	cat "$RX_OUT"
	mapfile -t RX_LINES <"$RX_OUT"
	return $rc
}

# send ADDR BYTES [tcpxfer args]: the pattern from A to B's ADDR.
send() {
	local addr=$1 bytes=$2
	shift 2
	xfer_connect "$NSA" "$addr" "$PORT" "$bytes" 0 "$@"
}

# summary BYTES: the receiver's last line says BYTES arrived, all in
# device memory, and the cmsgs' sizes add up to BYTES (devmem-rx checks
# the sum itself; the line shows the split).
summary_is_all_devmem() {
	local last=${RX_LINES[-1]}
	echo "summary: $last"
	[[ $last =~ ^received\ $1\ bytes:\ linear\ ([0-9]+),\ dmabuf\ ([0-9]+)\ in\ ([0-9]+)\ frags$ ]]
	[ $((BASH_REMATCH[1] + BASH_REMATCH[2])) -eq "$1" ]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
	[ "${BASH_REMATCH[3]}" -gt 0 ]
}

# Page pools of B drawing from binding $1.
pools_of() { in_ns "$NSB" "$BIN/netdev-nl" page-pool-get | grep " dmabuf=$1\$" || true; }
no_pools_of() { [ -z "$(pools_of "$1")" ]; }

