#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# bind-rx's rx-page-size (mainline 7.3): the kernel cuts the dma-buf into
# receive buffers of that size instead of pages, the queue's page pool
# hands them out and the driver fills each whole. Every refusal with
# mainline's errno and the kernel's extack text; a binding of huge-page
# udmabuf in 16 KiB buffers carrying a stream; page-pool-get counting
# in-flight memory in those buffers; mainline's check_rx_large_niov. The
# huge pages come from a pool reserved for each test.

load lib/vm
load lib/nsim
load lib/devmem

bats_require_minimum_version 1.5.0

test_setup() {
	NSIM_NO_IPV6=1 nsim_pair 4
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	# 64 MiB of 2 MiB pages: ncdevmem's default dma-buf
	echo 32 >/proc/sys/vm/nr_hugepages
	[ "$(cat /proc/sys/vm/nr_hugepages)" -eq 32 ]
}
test_teardown() {
	if [ -n "${RX_PID:-}" ]; then
		kill "$RX_PID" 2>/dev/null || true
		wait "$RX_PID" 2>/dev/null || true
	fi
	nsim_cleanup
	echo 0 >/proc/sys/vm/nr_hugepages
}

nl() { in_ns "$NSB" "$BIN/netdev-nl" "$@"; }

# refused MESSAGE ARGS...: bind-rx ARGS fails with "Error: MESSAGE".
refused() {
	local want="Error: $1"
	shift
	run nl bind-rx "$@"
	echo "$output"
	[ "$status" -eq 1 ] || return 1
	[ "$output" = "$want" ] || return 1
}

# hold QUEUES DMABUF SIZE: bind DMABUF to QUEUES of B in SIZE buffers, in
# the background; HOLD_PID, BIND_ID.
hold() {
	HOLD_OUT=$BATS_TEST_TMPDIR/hold.$RANDOM
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" "$1" "$2" \
		--rx-page-size "$3" --hold >"$HOLD_OUT" 2>&1 &
	HOLD_PID=$!
	wait_until 30 grep -q . "$HOLD_OUT"
	cat "$HOLD_OUT"
	[[ $(<"$HOLD_OUT") =~ ^bind-rx\ id=([0-9]+)$ ]]
	BIND_ID=${BASH_REMATCH[1]}
}
unhold() {
	kill "$HOLD_PID"
	wait "$HOLD_PID"
}

bound_queues() { nl queue-get "$IFB" | grep " type=rx .*dmabuf=" || true; }
pools_of() { nl page-pool-get | grep " ifindex=$IFB .*dmabuf=$1\$" || true; }
no_pools_of() { [ -z "$(pools_of "$1")" ]; }

# udmabuf allocates the huge pages of a memfd nobody faulted in, as
# mainline's does: netdev-nl's huge: makes the udmabuf as mainline's
# ncdevmem does (memfd_create(MFD_HUGETLB), ftruncate, F_SEAL_SHRINK,
# UDMABUF_CREATE_LIST), pages untouched.
hugepages_free() { awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo; }

@test "a udmabuf of an untouched hugetlb memfd: udmabuf allocates its huge pages, which the binding holds" {
	[ "$(hugepages_free)" -eq 32 ]
	hold 3 huge:0+16K,4194304+2M 16384
	# the huge pages of the two ranges, and none between them
	[ "$(hugepages_free)" -eq 30 ]
	unhold
	wait_until 10 eval '[ "$(hugepages_free)" -eq 32 ]'
}

@test "a udmabuf of an untouched hugetlb memfd with no free huge page: ENOMEM, nothing left allocated" {
	echo 0 >/proc/sys/vm/nr_hugepages
	run -1 nl bind-rx "$IFB" 3 huge:2M --rx-page-size 16384
	[ "$output" = "netdev-nl: UDMABUF_CREATE_LIST: Cannot allocate memory" ]
	grep -q '^HugePages_Total: *0$' /proc/meminfo
}

@test "rx-page-size below a page: ERANGE from the policy; not a power of two: EINVAL; nothing bound" {
	refused "Numerical result out of range: integer out of range" \
		"$IFB" 3 huge:2M --rx-page-size 2048
	refused "Numerical result out of range: integer out of range" \
		"$IFB" 3 huge:2M --rx-page-size 1
	refused "Invalid argument: rx-page-size must be a power of two" \
		"$IFB" 3 huge:2M --rx-page-size 12288
	refused "Invalid argument: rx-page-size must be a power of two" \
		"$IFB" 3 huge:2M --rx-page-size 4294967295
	run bound_queues
	[ -z "$output" ]
}

@test "a dma-buf segment not aligned to rx-page-size: EINVAL naming it; each size a segment allows binds" {
	# segment 0: 16K at the start of a huge page; segment 1: 16K, 4K
	# into the next huge page (no huge page follows another's 16K)
	refused "Invalid argument: dma-buf segment 1 at offset 16384 (16384 bytes) is not 16384-aligned" \
		"$IFB" 3 huge:0+16K,2101248+16K --rx-page-size 16384
	# 4K-aligned, so pages bind it
	hold 3 huge:0+16K,2101248+16K 4096
	unhold
	# segment 0 is 8K long: not a multiple of 16K
	refused "Invalid argument: dma-buf segment 0 at offset 0 (8192 bytes) is not 16384-aligned" \
		"$IFB" 3 huge:0+8K,2097152+16K --rx-page-size 16384
	# a whole huge page is one segment: up to 2M binds, 4M does not
	hold 3 huge:2M 2097152
	unhold
	refused "Invalid argument: dma-buf segment 0 at offset 0 (2097152 bytes) is not 4194304-aligned" \
		"$IFB" 3 huge:2M --rx-page-size 4194304
	run bound_queues
	[ -z "$output" ]
}

@test "a device that does not offer rx-page-size: EOPNOTSUPP; a page still binds there" {
	echo N >"$DFSB/rxq/rx_page_size"
	[ "$(cat "$DFSB/rxq/rx_page_size")" = N ]
	refused "Operation not supported: device does not support: rx_page_size" \
		"$IFB" 3 huge:2M --rx-page-size 16384
	run bound_queues
	[ -z "$output" ]
	hold 3 huge:2M 4096
	unhold
	echo Y >"$DFSB/rxq/rx_page_size"
	hold 3 huge:2M 16384
	unhold
}

@test "a driver that builds pages for a 16K binding: E2BIG from the provider; the queue runs on, unbound" {
	echo Y >"$DFSB/rxq/3/order_ignore"
	refused "Argument list too long: cannot restart the rx queue" \
		"$IFB" 3 huge:2M --rx-page-size 16384
	run bound_queues
	[ -z "$output" ]
	[ -z "$(nl page-pool-get | grep ' dmabuf=' || true)" ]
	# the queue still runs: it restarts on pages
	echo 1 >"$DFSB/rxq/3/restart"
	echo N >"$DFSB/rxq/3/order_ignore"
	hold 3 huge:2M 16384
	unhold
}

@test "buffers of 16K: page-pool-get counts in-flight memory in them; unbound, the pool goes" {
	hold 3 huge:4M 16384
	run bound_queues
	[[ $output == *"queue id=3 type=rx ifindex=$IFB "*" dmabuf=$BIND_ID" ]]
	# the "NIC" takes 5 buffers of the binding out of the pool
	echo 5 >"$DFSB/rxq/3/hold"
	run pools_of "$BIND_ID"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} =~ \ inflight=5\ inflight-mem=81920\ dmabuf=$BIND_ID$ ]]
	echo 0 >"$DFSB/rxq/3/hold"
	unhold
	wait_until 20 no_pools_of "$BIND_ID"
}

# large_niov SIZE: mainline's check_rx_large_niov step: ncdevmem -b 16384
# receives SIZE bytes of the -v 7 pattern from the ncdevmem client,
# validated, all of it in device memory, every token back.
large_niov() {
	local out=$BATS_TEST_TMPDIR/srv.$1 ready=$BATS_TEST_TMPDIR/ready.$1
	"$BIN/in-ns" "$NSB" "$BIN/ncdevmem" -l -s "$IP4B" -p 5201 -f "$DEVB" \
		-t 3 -q 1 -b 16384 -v 7 --bytes "$1" -r "$ready" --json \
		>"$out" 2>"$out.err" &
	local srv=$!
	wait_until 60 test -e "$ready"
	run in_ns "$NSA" "$BIN/ncdevmem" -s "$IP4B" -p 5201 -v 7 --bytes "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	wait "$srv"
	cat "$out" "$out.err"
	run python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["bytes"], d["devmem_bytes"], d["linear_bytes"], d["plain_bytes"],
      d["devmem_frags"] == d["tokens_returned"], d["result"])' "$out"
	[ "$output" = "$1 $1 0 0 True pass" ]
}

@test "check_rx_large_niov: 1K to 64K through 16K buffers (sub-buffer, exact and multi-buffer), validated" {
	local size
	for size in 1024 4096 8192 16384 32768 65536; do
		large_niov "$size"
	done
	run bound_queues
	[ -z "$output" ]
}

@test "a 16 MiB stream at MTU 9000 packed into 16K buffers: every one full (1024 when nothing is sent twice); every token back" {
	ip -n "$NSA" link set "$DEVA" mtu 9000
	ip -n "$NSB" link set "$DEVB" mtu 9000
	large_niov $((16 << 20))
	nsim_snap "$NSB" "$DEVB"
	# Segments side by side: every buffer full. A segment that TCP sent
	# twice (a retransmission timer fires when the host starves a vCPU)
	# fills buffers twice: count the payload the queue took, its bytes
	# less the headers (Ethernet, IPv4, TCP with timestamps: 66 bytes,
	# the SYN's options 8 more).
	local payload=$((STAT[rx3_bytes] - 66 * STAT[rx3_packets] - 8))
	echo "queue 3: ${STAT[rx3_packets]} packets, $payload payload bytes, ${STAT[rx3_payload_bufs]} buffers"
	[ "$payload" -ge $((16 << 20)) ]
	[ "${STAT[rx3_payload_bufs]}" -eq $(((payload + 16383) / 16384)) ]
	[ "${STAT[rx3_alloc_fail]}" -eq 0 ]
}

@test "the same with packing off: a 16K buffer per segment of at most 8948 bytes" {
	ip -n "$NSA" link set "$DEVA" mtu 9000
	ip -n "$NSB" link set "$DEVB" mtu 9000
	echo N >"$DFSB/rxq/3/pack"
	# segments as they come: an aggregate of HW-GRO would fill buffers
	in_ns "$NSB" ethtool -K "$DEVB" rx-gro-hw off
	large_niov $((16 << 20))
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[rx3_payload_bufs]}" -ge $(((16 << 20) / 8948)) ]
	[ "${STAT[rx3_alloc_fail]}" -eq 0 ]
}

# paused_rx BYTES: devmem-rx receives BYTES on queue 3, bound in 16K
# buffers, but reads nothing until the whole stream is queued on its
# socket; then one recvmsg takes it all. RX_LINES; FRAGS: its cmsgs.
paused_rx() {
	in_ns "$NSB" ethtool -X "$DEVB" equal 3
	in_ns "$NSB" ethtool -K "$DEVB" ntuple on
	steer tcp4 "$PORT"
	# room for the whole stream in the receive queue
	in_ns "$NSB" sysctl -qw net.ipv4.tcp_rmem="4096 8388608 16777216"
	RX_DMABUF=huge:4M RX_PAGE_SIZE=16384 rx_start "$1" --probe pause
	send "$IP4B" "$1" &
	local sender=$!
	wait_until 60 recvq_has "$1"
	kill -USR1 "$RX_PID"
	wait "$sender"
	rx_wait
	[ "${RX_LINES[1]}" = "probe pause: resumed" ]
	summary_is_all_devmem "$1"
	[[ ${RX_LINES[-1]} =~ in\ ([0-9]+)\ frags$ ]]
	FRAGS=${BASH_REMATCH[1]}
	RETRANS=$(snmp_mib "$NSA" Tcp RetransSegs)
	echo "A retransmitted $RETRANS segments;" \
		"B: $(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs) buffers," \
		"$(nsim_stat "$NSB" "$DEVB" rx3_drops) drops"
}
# recvq_has BYTES: B's connection on $PORT has BYTES queued, or BYTES and
# the peer's FIN.
recvq_has() {
	local q
	q=$(in_ns "$NSB" ss -Htn "( sport = :$PORT )" |
		awk '$1 != "LISTEN" { print $2 }')
	[ "${q:-0}" -ge "$1" ]
}

@test "1 MiB + 1000 bytes at MTU 1500 packed into 16K buffers, read in one call: 65 buffers, one token each" {
	paused_rx $(((1 << 20) + 1000))
	nsim_snap "$NSB" "$DEVB"
	# A segment sent twice (a spurious retransmission on a busy host)
	# lands twice and leaves a gap in its buffer: the count is then
	# only a floor.
	if [ "$RETRANS" -eq 0 ]; then
		[ "$FRAGS" -eq 65 ]
		[ "${STAT[rx3_payload_bufs]}" -eq 65 ]
	else
		[ "$FRAGS" -ge 65 ]
		[ "${STAT[rx3_payload_bufs]}" -ge 65 ]
	fi
	# unbound, every buffer is back, the queue's open one (1000 bytes
	# used) too: the pool goes
	wait_until 20 no_pools_of "$BIND_ID"
}

@test "packing off: a buffer and a token per segment (128K: a 16K buffer's truesize each)" {
	echo N >"$DFSB/rxq/3/pack"
	in_ns "$NSB" ethtool -K "$DEVB" rx-gro-hw off
	paused_rx $((128 << 10))
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[rx3_payload_bufs]}" -ge $(((128 << 10) / 1448)) ]
	[ "$FRAGS" -eq "${STAT[rx3_payload_bufs]}" ]
}

# ctl_fails MESSAGE ARGS...: devmemctl ARGS in B exits 1 with exactly
# "Error: MESSAGE" on stderr: the kernel's reason, through libdevmem.
ctl_fails() {
	local want="Error: $1"
	shift
	run --separate-stderr in_ns "$NSB" "$BIN/devmemctl" "$@"
	echo "status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 1 ] || return 1
	[ -z "$output" ] || return 1
	[ "$stderr" = "$want" ] || return 1
}

@test "devmemctl (libdevmem): bind in 16K buffers of a huge-page udmabuf; the kernel's refusals, word for word" {
	local out=$BATS_TEST_TMPDIR/ctl.out pid
	"$BIN/in-ns" "$NSB" "$BIN/devmemctl" -j bind dev "$DEVB" queues 3 \
		dmabuf udmabuf-huge 8M rx-page-size 16K >"$out" 2>"$out.err" &
	pid=$!
	wait_until 30 grep -q . "$out"
	cat "$out" "$out.err"
	run python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["queues"], d["source"], d["size"], d["buffer_size"])' "$out"
	[ "$output" = "[3] udmabuf-huge 8388608 16384" ]
	run bound_queues
	[[ $output == *"queue id=3 type=rx ifindex=$IFB "*" dmabuf="* ]]
	kill -INT "$pid"
	wait "$pid"
	run bound_queues
	[ -z "$output" ]

	ctl_fails "rx-page-size must be a power of two" \
		bind dev "$DEVB" queues 3 dmabuf udmabuf-huge 2M rx-page-size 12K
	# a udmabuf of ordinary pages: its first segment is one page unless
	# the second page follows it in memory; either way not 2M-aligned
	ctl_fails "dma-buf segment 0 at offset 0 (4096 bytes) is not 2097152-aligned" \
		bind dev "$DEVB" queues 3 dmabuf udmabuf 4K rx-page-size 2M
	echo N >"$DFSB/rxq/rx_page_size"
	ctl_fails "device does not support: rx_page_size" \
		bind dev "$DEVB" queues 3 dmabuf udmabuf-huge 2M rx-page-size 16K
}
