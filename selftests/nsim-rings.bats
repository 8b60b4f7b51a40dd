#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Rings and header split: ethtool -g/-G, tcp-data-split set over ethtool
# netlink (build/bin/tcp-data-split), and what the per-queue counters show
# with header split on and off.

load lib/vm
load lib/nsim

test_setup() { nsim_pair 1; }
test_teardown() { nsim_cleanup; }

ethb() { in_ns "$NSB" ethtool "$@"; }
hds() { in_ns "$NSB" "$BIN/tcp-data-split" "$@"; }

@test "header split off (default): every buffer a payload buffer, no header buffers" {
	run hds "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split off" ]
	xfer_start "$NSB" 5030 0 4M
	xfer_connect "$NSA" "$IP4B" 5030 4M 0
	xfer_wait
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[rx0_hdr_bufs]}" = 0 ]
	[ "${STAT[rx0_payload_bufs]}" -ge "${STAT[rx0_packets]}" ]
}

@test "header split on: one header buffer per packet, payload in page buffers" {
	hds "$DEVB" on
	run hds "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split on" ]
	run ethb -g "$DEVB"
	[[ $output == *"TCP data split:"*"on"* ]]
	nsim_snap "$NSB" "$DEVB"
	pkts0=${STAT[rx0_packets]} hdrs0=${STAT[rx0_hdr_bufs]} pay0=${STAT[rx0_payload_bufs]}
	xfer_start "$NSB" 5031 0 4M
	xfer_connect "$NSA" "$IP4B" 5031 4M 0
	xfer_wait
	nsim_snap "$NSB" "$DEVB"
	pkts=$((STAT[rx0_packets] - pkts0))
	hdrs=$((STAT[rx0_hdr_bufs] - hdrs0))
	pay=$((STAT[rx0_payload_bufs] - pay0))
	echo "packets $pkts header buffers $hdrs payload buffers $pay"
	[ "$hdrs" = "$pkts" ]
	# 4 MiB of MSS-sized payload: one payload buffer per data packet.
	[ "$pay" -ge 2896 ]
	[ "$pay" -lt "$pkts" ]
}

@test "header split: turning it off again stops header buffers; auto is off" {
	hds "$DEVB" on
	hds "$DEVB" auto
	run hds "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split off" ]
	hds "$DEVB" on
	hds "$DEVB" off
	hdrs0=$(nsim_stat "$NSB" "$DEVB" rx0_hdr_bufs)
	xfer_start "$NSB" 5032 0 1M
	xfer_connect "$NSA" "$IP4B" 5032 1M 0
	xfer_wait
	[ "$(nsim_stat "$NSB" "$DEVB" rx0_hdr_bufs)" = "$hdrs0" ]
}

@test "header split with MTU 9000 and IPv6: data validated both ways" {
	hds "$DEVB" on
	in_ns "$NSA" "$BIN/tcp-data-split" "$DEVA" on
	ip -n "$NSA" link set "$DEVA" mtu 9000
	ip -n "$NSB" link set "$DEVB" mtu 9000
	nsim_snap "$NSB" "$DEVB"
	pkts0=${STAT[rx0_packets]} hdrs0=${STAT[rx0_hdr_bufs]}
	xfer_start "$NSB" 5033 8M 8M -6
	xfer_connect "$NSA" "$IP6B" 5033 8M 8M -6
	xfer_wait
	nsim_snap "$NSB" "$DEVB"
	[ $((STAT[rx0_hdr_bufs] - hdrs0)) = $((STAT[rx0_packets] - pkts0)) ]
}

@test "tcp-data-split on a driver without ring parameters: EOPNOTSUPP" {
	ip -n "$NSB" link add vt0 type veth peer name vt1
	run hds vt0 on
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: vt0: Operation not supported" ]
}

@test "rings: -G rx resizes the ring; 0 and more than the maximum are refused" {
	run ethb -g "$DEVB"
	[[ $output == *"RX:"*"4096"* ]]
	ethb -G "$DEVB" rx 64
	[ "$(ethb -g "$DEVB" | awk '/^RX:/ { v = $2 } END { print v }')" = 64 ]
	run ethb -G "$DEVB" rx 0
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	run ethb -G "$DEVB" rx 4097
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	[ "$(ethb -g "$DEVB" | awk '/^RX:/ { v = $2 } END { print v }')" = 64 ]
	# A small ring still carries a validated transfer.
	xfer_start "$NSB" 5034 2M 2M
	xfer_connect "$NSA" "$IP4B" 5034 2M 2M
	xfer_wait
}

@test "rings: a FIFO shorter than a TSO burst loses its tail, counted; TCP recovers" {
	ethb -G "$DEVB" rx 16
	xfer_start "$NSB" 5035 0 4M
	xfer_connect "$NSA" "$IP4B" 5035 4M 0
	xfer_wait
	grep -q validated "$XFER_OUT"
	# 64 KiB bursts (45 segments) into a 16-packet FIFO: segments lost.
	[ "$(nsim_stat_sum "$NSB" "$DEVB" drops)" -gt 0 ]
	[ "$(nsim_stat "$NSA" "$DEVA" tx_tso_skbs)" -gt 0 ]
}
