#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Device memory through a driver and a device model we did not write:
# Linux 6.1's e1000e over QEMU's emulated 82574L (lib/e1000e). With
# tcp-data-split on, the driver uses the controller's packet-split
# descriptors and QEMU's model DMAs each packet's headers into the header
# buffer and its payload into the page pool's buffers: with a dma-buf
# bound to rx queue 0 (the controller's only one), into the dma-buf. The
# controller has no n-tuple filters: a binding takes the whole receive
# path, so ncdevmem runs with -n (the test sets the NIC up) on queue 0.

bats_require_minimum_version 1.5.0

load lib/vm
load lib/nsim
load lib/ncdevmem
load lib/e1000e

PORT=5201
BUFINFO=/sys/kernel/debug/dma_buf/bufinfo

test_setup() {
	e1000e_pair
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() { e1000e_cleanup; }

# hds_on: header split on B; the controller resets, the link comes back.
hds_on() {
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	e1000e_wait_link
}

# srv0_start [ncdevmem args]: the ncdevmem server on B with queue 0
# bound and the NIC as the test set it (-n); returns once it listens and
# the link is back from the bind's reset.
srv0_start() {
	srv_start -n -t 0 -q 1 "$@"
	e1000e_wait_link
}

# flow_ready PERIOD DEBUG_MIB MIB [ncdevmem args]: header split on, the
# server bound to queue 0 and waiting for MIB MiB (DEBUG_MIB on the debug
# kernel) of the pattern of PERIOD; their size in MIB and BYTES.
flow_ready() {
	local period=$1
	MIB=$(on_debug "$2" "$3")
	BYTES=$((MIB << 20))
	shift 3
	hds_on
	srv0_start -v "$period" --bytes "${MIB}M" "$@"
}

# summary_pass BYTES PERIOD: complete, validated, all in device memory,
# every token back.
summary_pass() {
	[ "$SRV_RC" -eq 0 ]
	[ "${SUM[bytes]}" = "$1" ]
	[ "${SUM[devmem bytes]}" = "$1" ]
	[ "${SUM[linear bytes]}" = 0 ]
	[ "${SUM[plain bytes]}" = 0 ]
	[ "${SUM[devmem frags]}" -gt 0 ]
	[ "${SUM[tokens returned]}" = "${SUM[devmem frags]}" ]
	[ "${SUM[validation]}" = "ok, period $2" ]
	[ "${SUM[result]}" = pass ]
}

# rx_validated MTU: ncdevmem receives 256 MiB (32 MiB on the debug
# kernel) at MTU, validated; B's counters show the hardware split every
# packet and wrote the payload into device memory.
rx_validated() {
	local split0 dm0
	flow_ready 7 32 256
	nsim_snap "$NSB" "$DEVB"
	split0=${STAT[rx_header_split]} dm0=${STAT[rx_devmem_bytes]}
	[[ $(cat "$SRV_ERR") == *"$DEVB rx queues 0..0 bound to dma-buf "* ]]
	run send_pattern "$IP4B" 7 "${MIB}M"
	echo "$output"
	[ "$status" -eq 0 ]
	srv_wait
	summary_pass "$BYTES" 7
	nsim_snap "$NSB" "$DEVB"
	echo "rx_header_split +$((STAT[rx_header_split] - split0)), rx_devmem_bytes +$((STAT[rx_devmem_bytes] - dm0))"
	# each full-sized segment is a packet split by the hardware
	[ $((STAT[rx_header_split] - split0)) -ge $((BYTES / ($1 - 52))) ]
	# every payload byte (and any retransmitted one) went to device memory
	[ $((STAT[rx_devmem_bytes] - dm0)) -ge "$BYTES" ]
	nothing_bound 0
}

@test "tcp-data-split: off by default, settable on the 82574, reported by ethtool; A unchanged" {
	run in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split off" ]
	hds_on
	run in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split on" ]
	run in_ns "$NSA" "$BIN/tcp-data-split" "$DEVA"
	[ "$output" = "$DEVA: tcp-data-split off" ]
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" off
	run in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split off" ]
}

@test "bind-rx with header split off: EINVAL, the kernel's message" {
	run in_ns "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 0 udmabuf:4M
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"header split (tcp-data-split) is off on the device"* ]]
	[[ $output == *"Invalid argument"* ]]
	nothing_bound 0
}

@test "ncdevmem over the e1000e pair: 256 MiB (32 MiB debug) DMAed by the device model into a udmabuf, MTU 1500, validated" {
	rx_validated 1500
}

@test "the same at MTU 9000: payload in up to three buffers a packet, validated" {
	in_ns "$NSA" ip link set "$DEVA" mtu 9000
	in_ns "$NSB" ip link set "$DEVB" mtu 9000
	e1000e_wait_link
	rx_validated 9000
}

@test "device memory at both ends: A's client -f sends from a udmabuf through the 82574's DMA into B's, validated" {
	flow_ready 251 16 64
	run send_pattern "$IP4B" 251 "${MIB}M" -f "$DEVA" --dmabuf-size 8M
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"bound for tx on $DEVA" ]]
	[ "${lines[5]}" = "completed bytes: $BYTES" ]
	[ "${lines[8]}" = "result:          pass" ]
	srv_wait
	summary_pass "$BYTES" 251
}

# one_write SIZE: SIZE bytes in one write from A.
one_write() {
	in_ns "$NSA" bash -c "head -c $1 /dev/zero |
		socat -b $1 -u - TCP:$IP4B:$PORT,nodelay"
}

@test "check_rx_hds: payloads of 1 to 8192 bytes, one write each, never arrive as SO_DEVMEM_LINEAR (-L)" {
	local size
	hds_on
	for size in 1 8 16 32 64 128 256 512 1024 2048 4096 8192; do
		srv0_start -L --bytes "$size"
		one_write "$size"
		srv_wait
		[ "$SRV_RC" -eq 0 ]
		[ "${SUM[devmem bytes]}" = "$size" ]
		[ "${SUM[linear bytes]}" = 0 ]
	done
	nothing_bound 0
}

@test "recv without MSG_SOCK_DEVMEM and MSG_PEEK on device data: EFAULT, as on mainline; the devmem reader gets every byte" {
	local out=$BATS_TEST_TMPDIR/rx
	hds_on
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 0 udmabuf:16M \
		--run "$BIN/devmem-rx" -p "$PORT" -n 4M -r "$out.ready" \
		--probe nodevmem,peek,peekdm >"$out" 2>&1 3>&- &
	local pid=$!
	wait_until 30 test -e "$out.ready"
	e1000e_wait_link
	xfer_connect "$NSA" "$IP4B" "$PORT" 4M 0
	wait "$pid"
	cat "$out"
	mapfile -t lines <"$out"
	[ "${lines[1]}" = "probe nodevmem: EFAULT" ]
	[ "${lines[2]}" = "probe peek: EFAULT" ]
	[ "${lines[3]}" = "probe peekdm: data, with frags" ]
	[[ ${lines[-1]} =~ ^received\ 4194304\ bytes:\ linear\ 0,\ dmabuf\ 4194304\ in\ [0-9]+\ frags$ ]]
}

@test "UDP while bound: the device model writes the payload into the dma-buf (read back through its mmap); ARP still resolves" {
	local pat hold=$BATS_TEST_TMPDIR/hold dm0
	# IPv4 only: nothing but ARP and the datagram reaches B
	in_ns "$NSA" sysctl -qw "net.ipv6.conf.$DEVA.disable_ipv6=1"
	hds_on
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 0 udmabuf:4M --hold \
		--snapshot "$hold.snap:4M" >"$hold" 2>&1 3>&- &
	local pid=$!
	wait_until 30 grep -q "^bind-rx id=" "$hold"
	e1000e_wait_link
	# A has to resolve B first: ARP fits the header buffer
	ip -n "$NSA" neigh flush dev "$DEVA"
	dm0=$(nsim_stat "$NSB" "$DEVB" rx_devmem_bytes)
	pat=$(printf 'devmem-%04d-' $(seq 1 100) | head -c 1200)
	in_ns "$NSA" bash -c 'printf %s "$1" >/dev/udp/'"$IP4B"'/9000' _ "$pat"
	wait_until 20 stat_gt "$NSB" "$DEVB" rx_devmem_bytes "$dm0"
	nsim_snap "$NSB" "$DEVB"
	# the hardware split after the UDP header: 1200 bytes of payload
	[ $((STAT[rx_devmem_bytes] - dm0)) -eq 1200 ]
	kill -USR1 "$pid"
	wait_until 20 test -e "$hold.snap.done"
	[ "$(grep -c -a -F -e "$pat" "$hold.snap")" -eq 1 ]
	kill "$pid"
	wait "$pid" || true
}

@test "link down and up in the middle of a devmem flow: the queue comes back bound, the stream completes, validated" {
	flow_ready 7 16 128
	send_pattern "$IP4B" 7 "${MIB}M" >"$BATS_TEST_TMPDIR/cli" 2>&1 3>&- &
	local cli=$!
	wait_until 60 stat_gt "$NSB" "$DEVB" rx_devmem_bytes $((BYTES / 8))
	ip -n "$NSB" link set "$DEVB" down
	ip -n "$NSB" link set "$DEVB" up
	e1000e_wait_link
	run in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB"
	echo "$output"
	[[ $output == *"queue id=0 type=rx ifindex=$IFB "*dmabuf=* ]]
	wait "$cli"
	srv_wait
	summary_pass "$BYTES" 7
	nothing_bound 0
}

@test "bind and unbind under a plain flow: its receiver fails with EFAULT once payload lands in device memory; unbound, a new flow is whole" {
	local out=$BATS_TEST_TMPDIR/bind snd hold rc
	hds_on
	xfer_start "$NSB" "$PORT" 0 4G -t 300
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p "$PORT" \
		-s 4G -t 300 >/dev/null 2>&1 3>&- &
	snd=$!
	wait_until 60 stat_gt "$NSB" "$DEVB" rx_bytes $((8 << 20))
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 0 udmabuf:16M \
		--hold >"$out" 2>&1 3>&- &
	hold=$!
	wait_until 30 grep -q "^bind-rx id=" "$out"
	# (not through run: its subshell cannot wait for the receiver)
	rc=0
	wait "$XFER_PID" || rc=$?
	cat "$XFER_OUT"
	[ "$rc" -ne 0 ]
	[ "$(cat "$XFER_OUT")" = "tcpxfer: recv: Bad address" ]
	# the sender ends when the receiver's close resets the connection
	wait "$snd" || true
	kill "$hold"
	wait "$hold" || true
	e1000e_wait_link
	nothing_bound 0
	xfer_start "$NSB" "$PORT" 0 8M
	xfer_connect "$NSA" "$IP4B" "$PORT" 8M 0
	xfer_wait
}

@test "while bound: header split stays on; a ring resize and an MTU change in the middle of a devmem flow keep the queue bound, the stream validated" {
	flow_ready 7 16 64
	run in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" off
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"cannot turn header split off while device memory is bound to an rx queue"* ]]
	[ "$(in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB")" = "$DEVB: tcp-data-split on" ]
	send_pattern "$IP4B" 7 "${MIB}M" >"$BATS_TEST_TMPDIR/cli" 2>&1 3>&- &
	local cli=$!
	wait_until 60 stat_gt "$NSB" "$DEVB" rx_devmem_bytes $((BYTES / 8))
	# the reader stops, the stream stalls on a full window; each change
	# resets the controller and makes the ring anew under it (a binding
	# lost on the way would put the rest in host memory: summary_pass)
	kill -STOP "$SRV_PID"
	in_ns "$NSB" ethtool -G "$DEVB" rx 512
	e1000e_wait_link
	in_ns "$NSB" ip link set "$DEVB" mtu 9000
	e1000e_wait_link
	run in_ns "$NSB" ethtool -g "$DEVB"
	[[ $(sed -n '/^Current/,$p' <<<"$output") =~ RX:[[:space:]]+512 ]]
	run in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB"
	echo "$output"
	[[ $output == *"queue id=0 type=rx ifindex=$IFB "*dmabuf=* ]]
	kill -CONT "$SRV_PID"
	wait "$cli"
	srv_wait
	summary_pass "$BYTES" 7
	nothing_bound 0
}

@test "IPv6 neighbour discovery while bound: the 82574 splits each solicitation after the IPv6 header, B drops it as a checksum error and never answers; unbound, A resolves B" {
	local ns0 cs0 na0
	hds_on
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 0 udmabuf:4M --hold \
		>"$BATS_TEST_TMPDIR/bind" 2>&1 3>&- &
	local hold=$!
	wait_until 30 grep -q "^bind-rx id=" "$BATS_TEST_TMPDIR/bind"
	e1000e_wait_link
	ip -n "$NSA" -6 neigh flush dev "$DEVA"
	ns0=$(ip6_mib "$NSA" Icmp6OutNeighborSolicits)
	cs0=$(ip6_mib "$NSB" Icmp6InCsumErrors)
	na0=$(ip6_mib "$NSB" Icmp6OutNeighborAdvertisements)
	# a datagram to B makes A solicit B's address until it gives up
	in_ns "$NSA" bash -c 'echo x >/dev/udp/'"$IP6B"'/9000'
	wait_until 30 eval '[[ $(ip -n "$NSA" -6 neigh show "$IP6B" dev "$DEVA") == *FAILED* ]]'
	# every solicitation reached B's stack and went no further
	[ $(($(ip6_mib "$NSA" Icmp6OutNeighborSolicits) - ns0)) -ge 1 ]
	[ $(($(ip6_mib "$NSB" Icmp6InCsumErrors) - cs0)) -eq $(($(ip6_mib "$NSA" Icmp6OutNeighborSolicits) - ns0)) ]
	[ $(($(ip6_mib "$NSB" Icmp6OutNeighborAdvertisements) - na0)) -eq 0 ]
	kill "$hold"
	wait "$hold" || true
	e1000e_wait_link
	nothing_bound 0
	ip -n "$NSA" -6 neigh flush dev "$DEVA"
	in_ns "$NSA" bash -c 'echo x >/dev/udp/'"$IP6B"'/9000'
	wait_until 30 eval '[[ $(ip -n "$NSA" -6 neigh show "$IP6B" dev "$DEVA") == *REACHABLE* ]]'
}

# ping NS ADDR SIZE: one ICMP echo of SIZE payload bytes from NS to ADDR;
# prints "reply" or "no reply" (2 s).
ping_once() {
	in_ns "$1" python3 -c '
import socket, struct, sys, select
def csum(d):
    d += b"\0" * (len(d) % 2)
    t = sum(struct.unpack("!%dH" % (len(d) // 2), d))
    while t >> 16:
        t = (t & 0xffff) + (t >> 16)
    return 0xffff - t
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
body = bytes(i % 251 for i in range(int(sys.argv[2])))
h = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1)
h = struct.pack("!BBHHH", 8, 0, csum(h + body), 0x1234, 1)
s.sendto(h + body, (sys.argv[1], 0))
while select.select([s], [], [], 2)[0]:
    p = s.recv(65536)
    ihl = (p[0] & 15) * 4
    if p[ihl] == 0 and p[ihl + 4:ihl + 6] == b"\x12\x34":
        print("reply" if p[ihl + 8:] == body else "bad reply")
        sys.exit(0)
print("no reply")
' "$2" "$3"
}

@test "ICMP while bound: the 82574 splits an echo request after the IP header, its body lands in device memory, B drops it as a checksum error; unbound, B replies" {
	local dm0 in0 err0 cs0
	# IPv4 only: nothing but ARP and the echo reaches B
	in_ns "$NSA" sysctl -qw "net.ipv6.conf.$DEVA.disable_ipv6=1"
	hds_on
	run ping_once "$NSA" "$IP4B" 1000
	[ "$output" = reply ]
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 0 udmabuf:4M --hold \
		>"$BATS_TEST_TMPDIR/bind" 2>&1 3>&- &
	wait_until 30 grep -q "^bind-rx id=" "$BATS_TEST_TMPDIR/bind"
	e1000e_wait_link
	dm0=$(nsim_stat "$NSB" "$DEVB" rx_devmem_bytes)
	in0=$(snmp_mib "$NSB" Icmp InMsgs) err0=$(snmp_mib "$NSB" Icmp InErrors) cs0=$(snmp_mib "$NSB" Icmp InCsumErrors)
	run ping_once "$NSA" "$IP4B" 1000
	[ "$output" = "no reply" ]
	# the ICMP header and the body: 8 + 1000 bytes in device memory
	nsim_snap "$NSB" "$DEVB"
	[ $((STAT[rx_devmem_bytes] - dm0)) -eq 1008 ]
	[ $(($(snmp_mib "$NSB" Icmp InMsgs) - in0)) -eq 1 ]
	[ $(($(snmp_mib "$NSB" Icmp InErrors) - err0)) -eq 1 ]
	[ $(($(snmp_mib "$NSB" Icmp InCsumErrors) - cs0)) -eq 1 ]
}

# The dma-buf of inode $1 as bufinfo shows it: DB_COUNT (file references;
# 0 when not listed) and DB_ATTACHED (devices attached).
dmabuf_state() {
	IFS='|' read -r DB_COUNT DB_ATTACHED < <(awk -F '\t' -v ino="$1" '
		/^[0-9]+\t/ { cur = $6 + 0 == ino; if (cur) n = $4 + 0; next }
		cur && /^Total [0-9]+ devices attached$/ { split($0, w, " "); att = w[2]; cur = 0 }
		END { print n + 0 "|" att + 0 }' "$BUFINFO")
}
dmabuf_released() { dmabuf_state "$1"; [ "$DB_COUNT" -eq 1 ] && [ "$DB_ATTACHED" -eq 0 ]; }

# Last, and B stays removed: QEMU 7.2 now and then dies of SIGSEGV while
# the guest enumerates a PCI device, which a rescan would do. The suites
# after this one in the same guest do not use the 82574s.
@test "PCI removal of B with tokens held: no crash; the tokens go back, the dma-buf is released; A unaffected" {
	local line
	hds_on
	coproc HOLD { exec "$BIN/devmem-hold" -N "/run/netns/$NSB" -i "$IFB" \
		-q 0 -s 4M -p "$PORT" -n 256K 2>"$BATS_TEST_TMPDIR/hold.err"; }
	read -r -t 60 line <&"${HOLD[0]}" || cat "$BATS_TEST_TMPDIR/hold.err"
	echo "$line"
	[[ $line =~ ^bound\ id=([0-9]+)\ ino=([0-9]+)$ ]]
	local ino=${BASH_REMATCH[2]}
	e1000e_wait_link
	# the sender waits for a close that comes only at the end
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p "$PORT" \
		-s 256K -t 60 >/dev/null 2>&1 {HOLD[0]}<&- {HOLD[1]}>&- &
	read -r -t 120 line <&"${HOLD[0]}"
	echo "$line"
	[[ $line =~ ^held\ ([0-9]+)\ tokens\ for\ 262144\ bytes:\ linear\ 0,\ dmabuf\ 262144$ ]]
	local tokens=${BASH_REMATCH[1]}
	dmabuf_state "$ino"
	[ "$DB_COUNT" -eq 2 ]
	[ "$DB_ATTACHED" -eq 1 ]
	echo 1 >"/sys/bus/pci/devices/$PCIB/remove"
	[ ! -e "/sys/bus/pci/devices/$PCIB" ]
	echo tokens >&"${HOLD[1]}"
	read -r -t 60 line <&"${HOLD[0]}"
	echo "$line"
	[ "$line" = "returned $tokens tokens" ]
	echo sock >&"${HOLD[1]}"
	read -r -t 60 line <&"${HOLD[0]}"
	[ "$line" = "sock closed" ]
	echo nl >&"${HOLD[1]}"
	read -r -t 60 line <&"${HOLD[0]}"
	[ "$line" = "nl closed" ]
	wait_until 30 dmabuf_released "$ino"
	[ -e "/sys/bus/pci/devices/$PCIA" ]
	[ "$(carrier "$NSA" "$DEVA")" = 1 ]
}
