#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Receive steering of a netdevsim port with the standard ethtool commands:
# n-tuple rules (-K ntuple, -N, -n), RSS (-X, -x), channels (-L), and the
# errno of every refused setting.

load lib/vm
load lib/nsim

test_setup() { nsim_pair 4; }
test_teardown() { nsim_cleanup; }

ethb() { in_ns "$NSB" ethtool "$@"; }

# Per-queue packet counts of B as "q0 q1 q2 q3".
rxq_packets() {
	nsim_snap "$NSB" "$DEVB"
	echo "${STAT[rx0_packets]} ${STAT[rx1_packets]} ${STAT[rx2_packets]} ${STAT[rx3_packets]}"
}

# run_ethb ARGS: ethtool in B; status and stderr in $status/$output.
# (ethtool 6.1 -N exits 0 even when the kernel refuses a rule: tests
# check its message and the rule table.)
run_ethb() { run in_ns "$NSB" ethtool "$@"; }

@test "an n-tuple rule steers a TCP flow to queue 3 (>= 99% of its packets)" {
	ethb -K "$DEVB" ntuple on
	run ethb -N "$DEVB" flow-type tcp4 dst-ip "$IP4B" dst-port 5003 action 3
	[ "$status" -eq 0 ]
	[[ $output == *"Added rule with ID 0"* ]]
	read -r b0 b1 b2 b3 < <(rxq_packets)
	xfer_start "$NSB" 5003 0 16M
	xfer_connect "$NSA" "$IP4B" 5003 16M 0
	xfer_wait
	read -r a0 a1 a2 a3 < <(rxq_packets)
	flow=$(( (a0 - b0) + (a1 - b1) + (a2 - b2) + (a3 - b3) ))
	on3=$((a3 - b3))
	echo "flow packets $flow, on queue 3: $on3"
	[ "$flow" -gt 11000 ]
	[ $((on3 * 100)) -ge $((flow * 99)) ]
}

@test "tcp6, udp4 and udp6 rules steer to their queues, exactly" {
	# RSS sends everything else (neighbour discovery, its probes) to
	# queue 0: queues 1-3 then count the rules' packets alone.
	ethb -X "$DEVB" equal 1
	ethb -K "$DEVB" ntuple on
	ethb -N "$DEVB" flow-type udp4 dst-port 7001 action 1 loc 10
	ethb -N "$DEVB" flow-type udp6 src-ip "$IP6A" dst-port 7002 action 2 loc 11
	ethb -N "$DEVB" flow-type tcp6 dst-port 5004 action 3 loc 12
	udp_sink "$NSB" 7001 7002 7009
	# Neighbour discovery first, so that only the datagrams are counted.
	udp_send "$NSA" "$IP4B" 7009
	udp_send "$NSA" "$IP6B" 7009
	read -r b0 b1 b2 b3 < <(rxq_packets)
	udp_send "$NSA" "$IP4B" 7001 5
	udp_send "$NSA" "$IP6B" 7002 3
	read -r a0 a1 a2 a3 < <(rxq_packets)
	[ $((a1 - b1)) -eq 5 ]
	[ $((a2 - b2)) -eq 3 ]
	xfer_start "$NSB" 5004 0 4M -6
	xfer_connect "$NSA" "$IP6B" 5004 4M 0 -6
	xfer_wait
	read -r c0 c1 c2 c3 < <(rxq_packets)
	[ $((c3 - a3)) -gt 2800 ]
	[ $((c0 - a0 + c1 - a1 + c2 - a2)) -le $(( (c3 - a3) / 100 )) ]
}

@test "rules: list, show by location, delete, lowest location wins" {
	# RSS to queue 0 alone: IPv6 DAD and MLD reports that A sends in its
	# first seconds, outside any rule, would land on queue 1 or 2 (CI).
	ethb -X "$DEVB" equal 1
	ethb -K "$DEVB" ntuple on
	ethb -N "$DEVB" flow-type udp4 dst-port 7005 action 2 loc 20
	ethb -N "$DEVB" flow-type udp4 dst-port 7005 action 1 loc 5
	run ethb -n "$DEVB"
	[[ $output == *"Total 2 rules"* ]]
	[[ $output == *"Filter: 5"* && $output == *"Filter: 20"* ]]
	run ethb -n "$DEVB" rule 20
	[[ $output == *"Dest port: 7005"* && $output == *"Action: Direct to queue 2"* ]]
	udp_sink "$NSB" 7005 7009
	udp_send "$NSA" "$IP4B" 7009
	read -r b0 b1 b2 b3 < <(rxq_packets)
	udp_send "$NSA" "$IP4B" 7005
	read -r a0 a1 a2 a3 < <(rxq_packets)
	[ $((a1 - b1)) -eq 1 ]
	[ $((a2 - b2)) -eq 0 ]
	ethb -N "$DEVB" delete 5
	udp_send "$NSA" "$IP4B" 7005
	read -r c0 c1 c2 c3 < <(rxq_packets)
	[ $((c2 - a2)) -eq 1 ]
	run ethb -n "$DEVB"
	[[ $output == *"Total 1 rules"* ]]
}

@test "action -1 drops the flow, counted as rx_filtered" {
	ethb -K "$DEVB" ntuple on
	ethb -N "$DEVB" flow-type udp4 dst-port 7006 action -1
	udp_sink "$NSB" 7006
	udp_send "$NSA" "$IP4B" 7006 4
	[ "$(nsim_stat "$NSB" "$DEVB" rx_filtered)" = 4 ]
}

@test "ntuple off: inserting fails (EOPNOTSUPP), turning it off flushes rules" {
	run_ethb -N "$DEVB" flow-type tcp4 dst-port 5000 action 1
	[[ $output == *"Cannot insert RX class rule: Operation not supported"* ]]
	run ethb -n "$DEVB"
	[[ $output == *"Total 0 rules"* ]]
	ethb -K "$DEVB" ntuple on
	ethb -N "$DEVB" flow-type tcp4 dst-port 5000 action 1
	ethb -K "$DEVB" ntuple off
	ethb -K "$DEVB" ntuple on
	run ethb -n "$DEVB"
	[[ $output == *"Total 0 rules"* ]]
}

@test "bad rules are refused with EINVAL and change nothing" {
	ethb -K "$DEVB" ntuple on
	for bad in "flow-type tcp4 dst-port 5000 action 4" \
		   "flow-type tcp4 dst-port 5000 action 1 loc 128" \
		   "flow-type sctp4 dst-port 5000 action 1" \
		   "flow-type ether dst 00:11:22:33:44:55 action 1" \
		   "flow-type tcp4 tos 4 action 1" \
		   "flow-type ip4 dst-ip $IP4B action 1" \
		   "flow-type tcp4 dst-port 5000 vlan 5 action 1"; do
		run_ethb -N "$DEVB" $bad
		[[ $output == *"Invalid argument"* ]] || { echo "$bad: $output"; false; }
	done
	run ethb -n "$DEVB"
	[[ $output == *"Total 0 rules"* ]]
	run_ethb -N "$DEVB" delete 3
	[[ $output == *"Cannot delete RX class rule: No such file or directory"* ]]
}

@test "RSS: equal 3 on a 4-queue port keeps every other flow off queue 3" {
	ethb -X "$DEVB" equal 3
	run ethb -x "$DEVB"
	[[ $output == *"RSS hash function:"* && $output == *"toeplitz: on"* ]]
	[ "$(grep -Ec '^ +[0-9]+: .*\b3\b' <<<"$output")" -eq 0 ]
	read -r b0 b1 b2 b3 < <(rxq_packets)
	for port in 5010 5011 5012 5013 5014 5015 5016 5017; do
		xfer_start "$NSB" $port 0 512K
		xfer_connect "$NSA" "$IP4B" $port 512K 0
		xfer_wait
	done
	read -r a0 a1 a2 a3 < <(rxq_packets)
	echo "deltas: $((a0 - b0)) $((a1 - b1)) $((a2 - b2)) $((a3 - b3))"
	[ $((a3 - b3)) -eq 0 ]
	# Eight flows over three queues: more than one queue is used.
	used=0
	for d in $((a0 - b0)) $((a1 - b1)) $((a2 - b2)); do
		[ "$d" -gt 100 ] && used=$((used + 1))
	done
	[ "$used" -ge 2 ]
}

@test "RSS: weight and start build the table ethtool asks for" {
	ethb -X "$DEVB" weight 1 0 0 1
	run ethb -x "$DEVB"
	[ "$(grep -Ec '^ +[0-9]+: .*\b[12]\b' <<<"$output")" -eq 0 ]
	grep -Eq '^ +0: +0 +0 ' <<<"$output"
	ethb -X "$DEVB" start 2 equal 2
	run ethb -x "$DEVB"
	[ "$(grep -Ec '^ +[0-9]+: .*\b[01]\b' <<<"$output")" -eq 0 ]
	ethb -X "$DEVB" default
	run ethb -x "$DEVB"
	grep -Eq '^ +0: +0 +1 +2 +3 ' <<<"$output"
}

@test "RSS: bad tables and hash functions are refused" {
	run_ethb -X "$DEVB" equal 5
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	run_ethb -X "$DEVB" hfunc xor
	[ "$status" -ne 0 ]
	[[ $output == *"Operation not supported"* ]]
	run ethb -x "$DEVB"
	grep -Eq '^ +0: +0 +1 +2 +3 ' <<<"$output"
}

@test "channels: -l/-L, shrinking below a rule's or RSS table's queue: EINVAL" {
	run ethb -l "$DEVB"
	[[ $output == *"Combined:"*"4"* ]]
	ethb -L "$DEVB" combined 2
	[ "$(in_ns "$NSB" ethtool -l "$DEVB" | awk '/Combined:/ { v = $2 } END { print v }')" = 2 ]
	# The default RSS table follows the channel count.
	xfer_start "$NSB" 5020 0 1M
	xfer_connect "$NSA" "$IP4B" 5020 1M 0
	xfer_wait
	run ethb -S "$DEVB"
	[[ $output != *rx2_packets* ]]
	ethb -L "$DEVB" combined 4
	ethb -K "$DEVB" ntuple on
	ethb -N "$DEVB" flow-type tcp4 dst-port 5021 action 3
	run_ethb -L "$DEVB" combined 3
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	ethb -N "$DEVB" delete 0
	ethb -X "$DEVB" equal 4
	run_ethb -L "$DEVB" combined 3
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	run_ethb -L "$DEVB" combined 5
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	run_ethb -L "$DEVB" combined 0
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	[ "$(in_ns "$NSB" ethtool -l "$DEVB" | awk '/Combined:/ { v = $2 } END { print v }')" = 4 ]
	xfer_start "$NSB" 5022 2M 2M
	xfer_connect "$NSA" "$IP4B" 5022 2M 2M
	xfer_wait
}
