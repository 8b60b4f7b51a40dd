# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the device-memory receive suites (devmem-rx, devmem-leak,
# devmem-unsafe, devmem-sums):
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

# rx_start BYTES [devmem-rx args]: bind a udmabuf (RX_UDMABUF, 64M; or
# netdev-nl's dma-buf RX_DMABUF, in buffers of RX_PAGE_SIZE if set) to
# queue 3 of B and receive BYTES on $PORT under it, in the background;
# returns once it listens. RX_PID (netdev-nl, which forwards signals to
# devmem-rx), RX_OUT.
rx_start() {
	local bytes=$1 size=()
	shift
	[ -z "${RX_PAGE_SIZE:-}" ] || size=(--rx-page-size "$RX_PAGE_SIZE")
	RX_OUT=$BATS_TEST_TMPDIR/rx.$RANDOM
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 \
		"${RX_DMABUF:-udmabuf:${RX_UDMABUF:-64M}}" "${size[@]}" \
		--run "$BIN/devmem-rx" -p "$PORT" \
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

# hold_queue3: bind a udmabuf (16M) to queue 3 of B for the rest of the
# test, in the background (HOLD_PID); fd 3 closed, or bats waits for it.
hold_queue3() {
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 \
		udmabuf:16M --hold >"$BATS_TEST_TMPDIR/bind" 2>&1 3>&- &
	HOLD_PID=$!
	wait_until 30 grep -q "^bind-rx id=" "$BATS_TEST_TMPDIR/bind"
}

# all_to_queue3: RSS sends every packet that no n-tuple rule takes to
# queue 3, which reports CHECKSUM_COMPLETE; queue 3 bound.
all_to_queue3() {
	in_ns "$NSB" ethtool -X "$DEVB" weight 0 0 0 1
	echo complete >"$DFSB/rxq/3/csum"
	hold_queue3
}

# pattern_sender PORT HOST_BYTES DEVICE_BYTES FIFO: in A, in the
# background (SENDER_PID), a Python sender to B's $IP4B:PORT: the first
# HOST_BYTES of the test pattern (selftests/progs/lib/pattern.h, seed 1), then,
# after a line arrives on FIFO, the next DEVICE_BYTES, each in one send();
# then it waits for the receiver to close.
pattern_sender() {
	"$BIN/in-ns" "$NSA" python3 -c '
import socket, struct, sys
M = (1 << 64) - 1
def mix64(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
base = 0x9e3779b97f4a7c15
def pattern(off, n):
    w = b"".join(struct.pack("<Q", mix64((base + i) & M)) for i in range(off // 8, (off + n + 7) // 8 + 1))
    return w[off % 8:off % 8 + n]
addr, port, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.create_connection((addr, port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.sendall(pattern(0, a))
sys.stdin.readline()
s.sendall(pattern(a, b))
assert s.recv(1) == b""
' "$IP4B" "$1" "$2" "$3" <"$4" 3>&- &
	SENDER_PID=$!
}

# py_in NS [ARGS...]: the Python program on stdin, in NS, with ARGS and
# selftests/lib/pkt.py importable as pkt; its output unbuffered.
py_in() {
	local ns=$1
	shift
	"$BIN/in-ns" "$ns" env PYTHONPATH="${VM_REPO:-$BATS_TEST_DIRNAME/..}/selftests/lib" \
		python3 -u - "$@"
}

# nft_packets NS FAMILY TABLE CHAIN: the packet count of the chain's
# counters, one line each, in order.
nft_packets() {
	in_ns "$1" nft list chain "$2" "$3" "$4" | grep -o "packets [0-9]*" | cut -d' ' -f2
}
