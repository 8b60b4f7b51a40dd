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
	# at least one per skb: a packet, or an aggregate of HW-GRO
	[ "${STAT[rx0_payload_bufs]}" -ge "$(skbs)" ]
}

@test "header split on: one header buffer per packet, payload in page buffers" {
	hds "$DEVB" on
	# every segment a packet of its own (nsim-xfer.bats: with HW-GRO)
	ethb -K "$DEVB" rx-gro-hw off
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
	skbs0=$(skbs) hdrs0=${STAT[rx0_hdr_bufs]}
	xfer_start "$NSB" 5033 8M 8M -6
	xfer_connect "$NSA" "$IP6B" 5033 8M 8M -6
	xfer_wait
	nsim_snap "$NSB" "$DEVB"
	# a header buffer per skb: a packet, or an aggregate of HW-GRO
	[ $((STAT[rx0_hdr_bufs] - hdrs0)) = $(($(skbs) - skbs0)) ]
}

# skbs: the skbs queue 0 of the last nsim_snap built.
skbs() {
	echo $((STAT[rx0_packets] - STAT[rx0_hw_gro_wire_packets] + STAT[rx0_hw_gro_packets]))
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

# payload_bufs_for BYTES: B's queue-0 payload buffers for one connection
# from A that sends BYTES in one segment (SYN, ACKs and FIN carry none).
payload_bufs_for() {
	local port=$((5040 + RANDOM % 1000)) p0
	p0=$(nsim_stat "$NSB" "$DEVB" rx0_payload_bufs)
	xfer_start "$NSB" "$port" 0 "$1"
	xfer_connect "$NSA" "$IP4B" "$port" "$1" 0 >/dev/null
	xfer_wait
	nsim_settle
	echo $(($(nsim_stat "$NSB" "$DEVB" rx0_payload_bufs) - p0))
}

@test "hds-thresh: 0 (max 1024) by default; set and read back; tcp-data-split unchanged" {
	run hds -t "$DEVB"
	[ "$status" -eq 0 ]
	[ "$output" = "$DEVB: hds-thresh 0 max 1024" ]
	hds "$DEVB" on
	hds -t "$DEVB" 512
	run hds -t "$DEVB"
	[ "$output" = "$DEVB: hds-thresh 512 max 1024" ]
	run hds "$DEVB"
	[ "$output" = "$DEVB: tcp-data-split on" ]
	hds -t "$DEVB" 1024
	run hds -t "$DEVB"
	[ "$output" = "$DEVB: hds-thresh 1024 max 1024" ]
	# ethtool -G of another ring parameter keeps the threshold
	ethb -G "$DEVB" rx 128
	run hds -t "$DEVB"
	[ "$output" = "$DEVB: hds-thresh 1024 max 1024" ]
	hds -t "$DEVB" 0
	run hds -t "$DEVB"
	[ "$output" = "$DEVB: hds-thresh 0 max 1024" ]
}

@test "hds-thresh above the maximum: EINVAL, the threshold unchanged; lo: EOPNOTSUPP" {
	hds -t "$DEVB" 100
	run hds -t "$DEVB" 1025
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: $DEVB: Invalid argument: requested ring size exceeds maximum" ]
	run hds -t "$DEVB" 4294967295
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: $DEVB: Invalid argument: requested ring size exceeds maximum" ]
	run hds -t "$DEVB"
	[ "$output" = "$DEVB: hds-thresh 100 max 1024" ]
	# a device without ring parameters
	run hds -t lo 0
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: lo: Operation not supported" ]
}

@test "hds-thresh: a payload up to it stays whole in the header buffer, a longer one is split" {
	hds "$DEVB" on
	# 0: every payload byte is split off, even one
	run payload_bufs_for 1
	[ "$output" = 1 ]
	hds -t "$DEVB" 512
	run payload_bufs_for 1
	[ "$output" = 0 ]
	run payload_bufs_for 512
	[ "$output" = 0 ]
	run payload_bufs_for 513
	[ "$output" = 1 ]
	# header split off: the threshold means nothing, every packet is
	# one payload buffer (SYN, ACKs and FIN included)
	hds "$DEVB" off
	run payload_bufs_for 100
	[ "$output" -ge 3 ]
}

@test "rings attributes numbered before hds-thresh: rx-push and tx-push-buf-len EOPNOTSUPP, the read-only ones EINVAL" {
	# numbered as in mainline (14-18): no driver here has the push ones
	run hds --raw 14:u8 "$DEVB" 1
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: $DEVB: Operation not supported: setting rx push not supported" ]
	run hds --raw 15:u32 "$DEVB" 64
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: $DEVB: Operation not supported: setting tx push buf len is not supported" ]
	# tx-push-buf-len-max and hds-thresh-max are read-only
	local a
	for a in 16 18; do
		run hds --raw "$a:u32" "$DEVB" 64
		[ "$status" -eq 1 ]
		[ "$output" = "tcp-data-split: $DEVB: Invalid argument: Unsupported attribute" ]
	done
	# 17 is hds-thresh itself
	hds --raw 17:u32 "$DEVB" 32
	run hds -t "$DEVB"
	[ "$output" = "$DEVB: hds-thresh 32 max 1024" ]
}
