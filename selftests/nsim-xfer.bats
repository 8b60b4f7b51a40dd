#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# TCP between two namespaces over a linked netdevsim pair: both directions
# at once, every byte checked against the pattern, IPv4 and IPv6, MTU 1500
# and 9000 - 64 MiB each way (NSIM_XFER_SIZE overrides; 256M was the size
# until make check had to fit CI's time: 64 MiB is sixteen turns of every
# queue's page pool and 45,000 segments each way).
# Then the TSO engine's checksums, checked by receivers that verify them,
# the software-GSO path for headers the engine does not parse, and the
# receiving port's HW-GRO (rx-gro-hw): what it coalesces, what it leaves
# alone, and aggregates forwarded on and segmented again. Last, make
# bench's pair test (bench/pair-throughput), small.

load lib/vm
load lib/nsim

SIZE=${NSIM_XFER_SIZE:-64M}

test_teardown() {
	ip netns del nsc 2>/dev/null || true
	nsim_cleanup
}

# both_ways FAMILY_FLAG ADDR_OF_B
both_ways() {
	local fam=$1 addr=$2
	xfer_start "$NSB" 5001 "$SIZE" "$SIZE" $fam -t 600
	run xfer_connect "$NSA" "$addr" 5001 "$SIZE" "$SIZE" $fam -t 600
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"received "*", validated"* ]]
	xfer_wait
	grep -q "validated" "$XFER_OUT"
	# Everything went through the page-pool path: nothing dropped.
	no_drops "$NSA" "$DEVA"
	no_drops "$NSB" "$DEVB"
}

# no_drops NS DEV: DEV's non-zero counters (for the log), then no rx queue
# dropped anything and some queue received.
no_drops() {
	local k drops=0 pkts=0
	nsim_snap "$1" "$2"
	for k in "${!STAT[@]}"; do
		[ "${STAT[$k]}" = 0 ] || echo "$1 $2 $k: ${STAT[$k]}"
		[[ $k =~ ^rx[0-9]+_drops$ ]] && drops=$((drops + STAT[$k]))
		[[ $k =~ ^rx[0-9]+_packets$ ]] && pkts=$((pkts + STAT[$k]))
	done
	[ "$drops" = 0 ]
	[ "$pkts" -gt 0 ]
}

@test "IPv4, MTU 1500: $SIZE each way, validated" {
	nsim_pair 4 1500
	both_ways "" "$IP4B"
}

@test "IPv6, MTU 1500: $SIZE each way, validated" {
	nsim_pair 4 1500
	both_ways -6 "$IP6B"
}

@test "IPv4, MTU 9000: $SIZE each way, validated" {
	nsim_pair 4 9000
	both_ways "" "$IP4B"
}

@test "IPv6, MTU 9000: $SIZE each way, validated" {
	nsim_pair 4 9000
	both_ways -6 "$IP6B"
}

@test "MTU 9000 frames arrive whole: one rx packet per wire frame" {
	nsim_pair 1 9000
	xfer_start "$NSB" 5002 0 8M
	xfer_connect "$NSA" "$IP4B" 5002 8M 0
	xfer_wait
	nsim_snap "$NSB" "$DEVB"
	pkts=${STAT[rx0_packets]} bytes=${STAT[rx0_bytes]}
	# 8 MiB in frames of at most 9014 bytes: at least 931 frames, and
	# the average frame is large (no fragmentation into 1500-byte ones).
	[ "$pkts" -ge 931 ]
	[ $((bytes / pkts)) -gt 8000 ]
}

# csum_xfer SIZE FAMILY ADDR [tcpxfer args]: SIZE each way with both
# ports' rx-checksumming off, so that TCP checks every checksum the wire
# made.
csum_xfer() {
	local size=$1 fam=$2 addr=$3
	shift 3
	in_ns "$NSA" ethtool -K "$DEVA" rx off
	in_ns "$NSB" ethtool -K "$DEVB" rx off
	xfer_start "$NSB" 5003 "$size" "$size" $fam "$@"
	xfer_connect "$NSA" "$addr" 5003 "$size" "$size" $fam "$@"
	xfer_wait
	[ "$(tcp_mib "$NSA" InCsumErrors)" = 0 ]
	[ "$(tcp_mib "$NSB" InCsumErrors)" = 0 ]
}

@test "TSO engine: receivers that verify checksums accept every segment" {
	nsim_pair 4 1500
	csum_xfer 16M "" "$IP4B"
	csum_xfer 16M -6 "$IP6B"
	nsim_snap "$NSA" "$DEVA"
	[ "${STAT[tx_tso_skbs]}" -gt 0 ]
	[ "${STAT[tx_sw_gso_skbs]}" = 0 ]
	[ "${STAT[tx_errors]}" = 0 ]
	# rx-checksumming off took rx-gro-hw with it: every segment alone
	[ "$(rx_sum hw_gro_packets)" = 0 ]
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[tx_tso_skbs]}" -gt 0 ]
	[ "${STAT[tx_sw_gso_skbs]}" = 0 ]
	[ "$(rx_sum hw_gro_packets)" = 0 ]
}

# rx_sum NAME: NAME summed over the rx queues of the last nsim_snap.
rx_sum() {
	local k n=0
	for k in "${!STAT[@]}"; do
		[[ $k =~ ^rx[0-9]+_$1$ ]] && n=$((n + STAT[$k]))
	done
	echo "$n"
}

@test "IPv6 extension headers: software GSO, checksums verified" {
	nsim_pair 4 1500
	# Software GSO costs two slab objects per segment: 4 MiB will do.
	csum_xfer 4M -6 "$IP6B" --dstopts
	nsim_snap "$NSA" "$DEVA"
	[ "${STAT[tx_tso_skbs]}" = 0 ]
	[ "${STAT[tx_sw_gso_skbs]}" -gt 0 ]
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[tx_tso_skbs]}" = 0 ]
	[ "${STAT[tx_sw_gso_skbs]}" -gt 0 ]
}

# --- HW-GRO -------------------------------------------------------------

# one_way SIZE PORT [tcpxfer args]: SIZE from A to B, validated, both
# ports idle after; TX/TXB: A's tx_packets and tx_bytes, then B's counters
# in STAT. (Tests that compare them have no IPv6 on the pair: its
# reports and solicitations leave at times of their own.)
one_way() {
	local size=$1 port=$2
	shift 2
	xfer_start "$NSB" "$port" 0 "$size" "$@"
	xfer_connect "$NSA" "$IP4B" "$port" "$size" 0 "$@"
	xfer_wait
	grep -q validated "$XFER_OUT"
	nsim_settle
	TX=$(in_ns "$NSA" cat "/sys/class/net/$DEVA/statistics/tx_packets")
	TXB=$(in_ns "$NSA" cat "/sys/class/net/$DEVA/statistics/tx_bytes")
	nsim_snap "$NSB" "$DEVB"
	echo "A sent $TX packets, $TXB bytes; B: ${STAT[rx0_packets]} packets, ${STAT[rx0_bytes]} bytes, ${STAT[rx0_drops]} drops, ${STAT[rx0_hw_gro_packets]} aggregates of ${STAT[rx0_hw_gro_wire_packets]}"
}

# features_has NS DEV LINE: `ethtool -k` of DEV shows LINE.
features_has() {
	run in_ns "$1" ethtool -k "$2"
	[[ $output == *$'\n'"$3"$'\n'* ]]
}

@test "HW-GRO, on by default: TSO frames arrive coalesced, every wire packet counted once" {
	NSIM_NO_IPV6=1 nsim_pair 1 1500
	features_has "$NSB" "$DEVB" "rx-gro-hw: on"
	one_way 8M 5004
	[ "${STAT[rx0_hw_gro_packets]}" -gt 0 ]
	# two to 45 (64 KiB of 1448-byte segments) wire packets each
	[ "${STAT[rx0_hw_gro_wire_packets]}" -ge $((2 * STAT[rx0_hw_gro_packets])) ]
	[ "${STAT[rx0_hw_gro_wire_packets]}" -le $((45 * STAT[rx0_hw_gro_packets])) ]
	# counted as if each wire packet had been delivered alone
	[ "${STAT[rx0_packets]}" = "$TX" ]
	[ "${STAT[rx0_bytes]}" = "$TXB" ]
	[ "${STAT[rx0_packets]}" -ge $(((8 << 20) / 1448)) ]
	[ "${STAT[rx0_drops]}" = 0 ]
	# payload fills its pages: far fewer buffers than segments
	[ "${STAT[rx0_payload_bufs]}" -lt $((STAT[rx0_packets] / 2)) ]
}

@test "HW-GRO off, or checksums not reported as verified: every segment its own skb" {
	NSIM_NO_IPV6=1 nsim_pair 1 1500
	in_ns "$NSB" ethtool -K "$DEVB" rx-gro-hw off
	features_has "$NSB" "$DEVB" "rx-gro-hw: off"
	one_way 2M 5005
	[ "${STAT[rx0_hw_gro_packets]}" = 0 ]
	[ "${STAT[rx0_hw_gro_wire_packets]}" = 0 ]
	[ "${STAT[rx0_packets]}" = "$TX" ]
	[ "${STAT[rx0_payload_bufs]}" -ge $(((2 << 20) / 1448)) ]
	in_ns "$NSB" ethtool -K "$DEVB" rx-gro-hw on
	features_has "$NSB" "$DEVB" "rx-gro-hw: on"
	for mode in complete none; do
		echo "$mode" >"$DFSB/rxq/0/csum"
		one_way 1M 5006
		[ "${STAT[rx0_hw_gro_packets]}" = 0 ]
	done
	echo unnecessary >"$DFSB/rxq/0/csum"
	one_way 1M 5007
	[ "${STAT[rx0_hw_gro_packets]}" -gt 0 ]
}

@test "HW-GRO follows rx-checksumming: off with it, back with it" {
	NSIM_NO_IPV6=1 nsim_pair 1 1500
	in_ns "$NSB" ethtool -K "$DEVB" rx off
	features_has "$NSB" "$DEVB" "rx-gro-hw: off [requested on]"
	one_way 1M 5008
	[ "${STAT[rx0_hw_gro_packets]}" = 0 ]
	in_ns "$NSB" ethtool -K "$DEVB" rx on
	features_has "$NSB" "$DEVB" "rx-gro-hw: on"
	one_way 1M 5009
	[ "${STAT[rx0_hw_gro_packets]}" -gt 0 ]
}

@test "HW-GRO with header split: one header buffer per skb, aggregate or not" {
	NSIM_NO_IPV6=1 nsim_pair 1 1500
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	one_way 4M 5010
	local skbs=$((STAT[rx0_packets] - STAT[rx0_hw_gro_wire_packets] + STAT[rx0_hw_gro_packets]))
	echo "packets ${STAT[rx0_packets]}, aggregates ${STAT[rx0_hw_gro_packets]} of ${STAT[rx0_hw_gro_wire_packets]}, header buffers ${STAT[rx0_hdr_bufs]}"
	[ "${STAT[rx0_hw_gro_packets]}" -gt 0 ]
	[ "${STAT[rx0_hdr_bufs]}" = "$skbs" ]
	[ "${STAT[rx0_packets]}" = "$TX" ]
}

# fwd_setup: B forwards to C (namespace nsc) over a veth pair, vb1 in B
# without transmit checksumming (what leaves is segmented and summed in
# software) and vc1 in C without receive checksumming (C's TCP checks
# every sum). C is 198.51.100.1 and 2001:db8:c::1.
fwd_setup() {
	ip netns add nsc
	ip -n "$NSB" link add vb1 type veth peer name vc1 netns nsc
	ip -n "$NSB" -b - <<-EOF_IP
		addr add 198.51.100.2/24 dev vb1
		addr add 2001:db8:c::2/64 dev vb1 nodad
		link set vb1 up
	EOF_IP
	ip -n nsc -b - <<-EOF_IP
		addr add 198.51.100.1/24 dev vc1
		addr add 2001:db8:c::1/64 dev vc1 nodad
		link set vc1 up
		link set lo up
		route add default via 198.51.100.2
		route add ::/0 via 2001:db8:c::2
	EOF_IP
	ip -n "$NSA" route add 198.51.100.0/24 via "$IP4B"
	ip -n "$NSA" route add 2001:db8:c::/64 via "$IP6B"
	in_ns "$NSB" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	in_ns "$NSB" ethtool -K vb1 tx off
	in_ns nsc ethtool -K vc1 rx off
}

@test "HW-GRO aggregates forwarded to a device without checksum offload: segmented and summed again, every byte and sum right" {
	nsim_pair 1 1500
	fwd_setup
	xfer_start nsc 5011 0 4M
	xfer_connect "$NSA" 198.51.100.1 5011 4M 0
	xfer_wait
	grep -q validated "$XFER_OUT"
	xfer_start nsc 5012 0 4M -6
	xfer_connect "$NSA" 2001:db8:c::1 5012 4M 0 -6
	xfer_wait
	grep -q validated "$XFER_OUT"
	[ "$(tcp_mib nsc InCsumErrors)" = 0 ]
	[ "$(tcp_mib nsc InErrs)" = 0 ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx0_hw_gro_packets)" -gt 0 ]
	# the segments as vb1 sent them: as many as crossed the wire
	[ "$(in_ns nsc cat /sys/class/net/vc1/statistics/rx_packets)" -ge $((2 * (4 << 20) / 1448)) ]
}

# make bench's pair test, small: what it prints, and its -P taking hold
# (the script checks where its receiver runs and fails otherwise).
@test "bench/pair-throughput -P 1,0: both pairs cross on the vCPUs asked for; the layout named; the ratio printed" {
	run "${VM_REPO:-$BATS_TEST_DIRNAME/..}/bench/pair-throughput" -P 1,0 -n 1 -s 4M
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"vCPUs (sender,receiver) 1,0, 1 runs"* ]]
	[[ $output =~ "bench: ratio netdevsim/veth: "[0-9]+\.[0-9]{2} ]]
}

@test "bench/pair-throughput, vCPUs free: the layout named, and a line saying the ratio follows the host" {
	run "${VM_REPO:-$BATS_TEST_DIRNAME/..}/bench/pair-throughput" -n 1 -s 1M
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"vCPUs as the scheduler places them, 1 runs"* ]]
	[[ $output =~ "bench: ratio netdevsim/veth: "[0-9]+\.[0-9]{2} ]]
	[ "${lines[-1]}" = "bench: vCPUs free, this ratio also follows how the host runs the guest's vCPUs side by side; compare runs with -P (bench/README.md, \"One vCPU and two\")" ]
}
