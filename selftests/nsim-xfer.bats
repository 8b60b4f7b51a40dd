#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# TCP between two namespaces over a linked netdevsim pair: both directions
# at once, every byte checked against the pattern, IPv4 and IPv6, MTU 1500
# and 9000 - 64 MiB each way (NSIM_XFER_SIZE overrides; 256M was the size
# until make check had to fit CI's time: 64 MiB is sixteen turns of every
# queue's page pool and 45,000 segments each way).
# Then the TSO engine's checksums, checked by receivers that verify them,
# and the software-GSO path for headers the engine does not parse.

load lib/vm
load lib/nsim

SIZE=${NSIM_XFER_SIZE:-64M}

test_teardown() { nsim_cleanup; }

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
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[tx_tso_skbs]}" -gt 0 ]
	[ "${STAT[tx_sw_gso_skbs]}" = 0 ]
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
