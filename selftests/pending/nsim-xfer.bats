#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# TCP between two namespaces over a linked netdevsim pair: both directions
# at once, every byte checked against the pattern, IPv4 and IPv6, MTU 1500
# and 9000. NSIM_XFER_SIZE sets the bytes each way: 256M by default, 16M
# on the debug kernel, where every wire packet's allocations are tracked by
# KASAN and kmemleak (about 1 MB/s under TCG): there the suite checks the
# same paths for memory, locking and leak errors, not volume.

load ../lib/vm
load ../lib/nsim

if [ "${VM_FLAVOUR:-}" = debug ]; then
	SIZE=${NSIM_XFER_SIZE:-16M}
else
	SIZE=${NSIM_XFER_SIZE:-256M}
fi

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
	[ "$(nsim_stat_sum "$NSA" "$DEVA" drops)" = 0 ]
	[ "$(nsim_stat_sum "$NSB" "$DEVB" drops)" = 0 ]
	[ "$(nsim_stat_sum "$NSB" "$DEVB" packets)" -gt 0 ]
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
	pkts=$(nsim_stat "$NSB" "$DEVB" rx0_packets)
	bytes=$(nsim_stat "$NSB" "$DEVB" rx0_bytes)
	# 8 MiB in frames of at most 9014 bytes: at least 931 frames, and
	# the average frame is large (no fragmentation into 1500-byte ones).
	[ "$pkts" -ge 931 ]
	[ $((bytes / pkts)) -gt 8000 ]
}
