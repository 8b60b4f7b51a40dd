#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Receive checksums over device memory and host memory. Each rx queue's
# csum knob (rxq/Q/csum in the port's debugfs) picks what the "NIC"
# reports: CHECKSUM_UNNECESSARY (the default), CHECKSUM_COMPLETE
# (skb->csum summed by its DMA engine over every byte it wrote, device
# memory included) or CHECKSUM_NONE; ethtool -S counts what each queue
# delivered (rxQ_csum_unnecessary, rxQ_csum_complete, rxQ_csum_none).
# With COMPLETE the stack verifies a segment in device memory without
# reading it; with NONE it cannot verify it at all, and TCP drops it as a
# checksum error (TcpInCsumErrors) instead of summing device memory. Host
# memory verifies in software either way. Set-up as in devmem-rx
# (lib/devmem.bash): port 5201 over IPv4 steered to queue 3 of B, bound
# to a udmabuf by rx_start; header split on B, off on A. The VM runner
# fails a test on any WARN, BUG, oops, KASAN or lockdep report.

load lib/vm
load lib/nsim
load lib/devmem

test_setup() { devmem_setup; }
test_teardown() { nsim_cleanup; }

# knob_is FILE VALUE: the knob reads VALUE (no exec).
knob_is() {
	local v
	read -r v <"$1"
	echo "$1: $v"
	[ "$v" = "$2" ]
}

# csum_all MODE: every rx queue of both ports reports MODE.
csum_all() {
	local f
	for f in "$DFSA"/rxq/[0-9]*/csum "$DFSB"/rxq/[0-9]*/csum; do
		echo "$1" >"$f"
	done
}

# rxq_sum NAME: rxQ_NAME summed over the queues of the last nsim_snap.
rxq_sum() {
	local k t=0
	for k in "${!STAT[@]}"; do
		[[ $k =~ ^rx[0-9]+_$1$ ]] && t=$((t + STAT[$k]))
	done
	echo $t
}

# tcp_mib_gt NS FIELD N: that Tcp counter is above N (for wait_until).
tcp_mib_gt() { [ "$(tcp_mib "$1" "$2")" -gt "$3" ]; }

# no_csum_fault: the kernel did not find a reported CHECKSUM_COMPLETE
# wrong (netdev_rx_csum_fault() logs "hw csum failure" and a stack dump,
# which the log scanner does not count as a report).
no_csum_fault() { ! kmsg_since_mark | grep -q "hw csum failure"; }

@test "csum knob: unnecessary by default, settable on a bound queue; bad input is EINVAL and changes nothing" {
	local f=$DFSB/rxq/3/csum bad
	knob_is "$f" unnecessary
	rx_start 1M
	# queue 3 is bound now: every value is taken
	echo complete >"$f"
	knob_is "$f" complete
	echo none >"$f"
	knob_is "$f" none
	for bad in bogus Complete completely "none x" 1 unnecessaryunnecessary; do
		run sysfs_write "$f" "$bad"
		echo "'$bad': $output"
		[ "$status" -eq 1 ]
		[ "$output" = "Invalid argument" ]
		knob_is "$f" none
	done
	echo unnecessary >"$f"
	knob_is "$f" unnecessary
	# the flow the bound queue then receives is intact
	send "$IP4B" 1M
	rx_wait
	summary_is_all_devmem $((1 << 20))
}

@test "CHECKSUM_COMPLETE on the bound queue: verified without reading device memory, every byte checked, IPv4 and IPv6" {
	local mib
	mib=$(on_debug 8 32)
	steer tcp6 "$PORT"
	rx_start "${mib}M"
	echo complete >"$DFSB/rxq/3/csum"
	# IPv6 set-up traffic reached queue 3 before RSS left it out
	nsim_snap "$NSB" "$DEVB"
	local unnec=${STAT[rx3_csum_unnecessary]} none=${STAT[rx3_csum_none]}
	send "$IP4B" "${mib}M"
	rx_wait
	summary_is_all_devmem $((mib << 20))
	rx_start "${mib}M"
	send "$IP6B" "${mib}M" -6
	rx_wait
	summary_is_all_devmem $((mib << 20))
	# queue 3 reported COMPLETE for every packet of both flows
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[rx3_csum_complete]}" -gt $((2 * (mib << 20) / 1500)) ]
	[ "${STAT[rx3_csum_unnecessary]}" -eq "$unnec" ]
	[ "${STAT[rx3_csum_none]}" -eq "$none" ]
	[ "${STAT[rx3_drops]}" -eq 0 ]
	[ "$(tcp_mib "$NSB" InCsumErrors)" -eq 0 ]
	no_csum_fault
}

@test "CHECKSUM_NONE on the bound queue: TCP cannot verify device memory and drops the data as checksum errors, nothing delivered, no kernel report" {
	local errs inerrs sender rc=0
	rx_start 1M
	echo none >"$DFSB/rxq/3/csum"
	nsim_snap "$NSB" "$DEVB"
	local none=${STAT[rx3_csum_none]}
	errs=$(tcp_mib "$NSB" InCsumErrors)
	inerrs=$(tcp_mib "$NSB" InErrs)
	xfer_connect "$NSA" "$IP4B" "$PORT" 1M 0 -t 10 &
	sender=$!
	wait_until 60 tcp_mib_gt "$NSB" InCsumErrors "$errs"
	# the sender gives up: no byte was acknowledged
	wait "$sender" || rc=$?
	[ "$rc" -ne 0 ]
	kill "$RX_PID"
	rx_wait || true
	[[ ${RX_LINES[-1]} != received* ]]
	# each data segment is a checksum error and an input error of TCP;
	# the queue delivered it (CHECKSUM_NONE), it did not drop it
	[ "$(tcp_mib "$NSB" InCsumErrors)" -gt "$errs" ]
	[ "$(tcp_mib "$NSB" InErrs)" -gt "$inerrs" ]
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[rx3_csum_none]}" -gt "$none" ]
	[ "${STAT[rx3_devmem_drops]}" -eq 0 ]
	[ "${STAT[rx3_drops]}" -eq 0 ]
}

# plain_xfer FAMILY_FLAG ADDR: 16M (4M on the debug kernel) each way
# between A and B on port 5202 (RSS: queues 0-2, host memory), checked.
plain_xfer() {
	local size
	size=$(on_debug 4M 16M)
	xfer_start "$NSB" 5202 "$size" "$size" $1
	xfer_connect "$NSA" "$2" 5202 "$size" "$size" $1
	xfer_wait
}

@test "CHECKSUM_NONE and CHECKSUM_COMPLETE on unbound queues: host memory verified in software or by skb->csum, every byte checked" {
	local pkts
	pkts=$(($(on_debug 4 16) * 2 * (1 << 20) / 1500))
	csum_all none
	plain_xfer "" "$IP4B"
	plain_xfer -6 "$IP6B"
	nsim_snap "$NSB" "$DEVB"
	[ "$(rxq_sum csum_none)" -gt "$pkts" ]
	[ "$(rxq_sum csum_complete)" -eq 0 ]
	nsim_snap "$NSA" "$DEVA"
	[ "$(rxq_sum csum_none)" -gt "$pkts" ]
	[ "$(tcp_mib "$NSA" InCsumErrors)" -eq 0 ]
	[ "$(tcp_mib "$NSB" InCsumErrors)" -eq 0 ]

	csum_all complete
	plain_xfer "" "$IP4B"
	plain_xfer -6 "$IP6B"
	nsim_snap "$NSB" "$DEVB"
	[ "$(rxq_sum csum_complete)" -gt "$pkts" ]
	nsim_snap "$NSA" "$DEVA"
	[ "$(rxq_sum csum_complete)" -gt "$pkts" ]
	[ "$(tcp_mib "$NSA" InCsumErrors)" -eq 0 ]
	[ "$(tcp_mib "$NSB" InCsumErrors)" -eq 0 ]
	no_csum_fault
}
