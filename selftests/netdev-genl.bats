#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The "netdev" generic netlink family: dev-get and queue-get, do and dump,
# per network namespace, and every malformed request refused with its
# errno and an extack message (build/bin/netdev-nl prints them).

load lib/vm
load lib/nsim

test_setup() { NSIM_NO_IPV6=1 nsim_pair 4; }
test_teardown() { nsim_cleanup; }

nl() { in_ns "$1" "$BIN/netdev-nl" "${@:2}"; }

ENODEV="Error: No such device: no network device with this ifindex"
ENOENT_DOWN="Error: No such file or directory: device is down"

@test "dev-get: a dump lists exactly the namespace's devices" {
	run nl "$NSB" dev-get
	echo "$output"
	[ "$status" -eq 0 ]
	want=$(ip -n "$NSB" -o link show | awk -F: '{ print "dev ifindex=" $1 }' | sort)
	[ "$(sort <<<"$output")" = "$want" ]
	grep -qx "dev ifindex=$IFB" <<<"$output"
	[ "$(grep -cx "dev ifindex=$IFA" <<<"$output")" -eq 0 ]
}

@test "dev-get: one device by ifindex; unknown, 0 and missing are refused" {
	run nl "$NSB" dev-get "$IFB"
	[ "$status" -eq 0 ]
	[ "$output" = "dev ifindex=$IFB" ]
	# IFA lives in the other namespace only
	[ "$IFA" != "$IFB" ]
	run nl "$NSB" dev-get "$IFA"
	[ "$status" -eq 1 ]
	[ "$output" = "$ENODEV" ]
	run nl "$NSB" dev-get 0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Numerical result out of range: integer out of range" ]
	run nl "$NSB" raw 1
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: ifindex is required (missing attribute 1)" ]
}

@test "queue-get: a dump shows every rx and tx queue, rx with its own NAPI" {
	run nl "$NSB" queue-get "$IFB"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 8 ]
	declare -A napi
	for q in 0 1 2 3; do
		re="^queue id=$q type=rx ifindex=$IFB napi-id=([0-9]+)\$"
		[[ ${lines[q]} =~ $re ]]
		napi[${BASH_REMATCH[1]}]=1
		[ "${lines[q + 4]}" = "queue id=$q type=tx ifindex=$IFB" ]
	done
	# four distinct NAPI ids, above the CPU ids that busy polling reserves
	[ "${#napi[@]}" -eq 4 ]
	for id in "${!napi[@]}"; do [ "$id" -gt 8 ]; done
	# without a filter: lo's queues too, and the same lines for the port
	run nl "$NSB" queue-get
	[ "$status" -eq 0 ]
	[ "$(grep -c "ifindex=$IFB\( \|\$\)" <<<"$output")" -eq 8 ]
	[ "$(grep -c "ifindex=1\( \|\$\)" <<<"$output")" -eq 2 ]
}

@test "queue-get: one queue by id and type; the napi-id matches the dump" {
	run nl "$NSB" queue-get "$IFB"
	dump=$output
	for q in 0 3; do
		run nl "$NSB" queue-get "$IFB" rx "$q"
		[ "$status" -eq 0 ]
		[ "$output" = "$(grep "^queue id=$q type=rx ifindex=$IFB " <<<"$dump")" ]
		run nl "$NSB" queue-get "$IFB" tx "$q"
		[ "$status" -eq 0 ]
		[ "$output" = "queue id=$q type=tx ifindex=$IFB" ]
	done
}

@test "queue-get: a device that is down has no queues: not in a dump, ENOENT for a do" {
	ip -n "$NSB" link set "$DEVB" down
	run nl "$NSB" queue-get "$IFB"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run nl "$NSB" queue-get
	[ "$status" -eq 0 ]
	[ "$(grep -c "ifindex=$IFB\( \|\$\)" <<<"$output")" -eq 0 ]
	# a do: ENOENT, the ifindex marked (mainline 6.12: ENOENT, no message)
	run nl "$NSB" raw --bad-attr 10 "u32:2=$IFB" u32:3=0 u32:1=1
	[ "$status" -eq 1 ]
	[ "$output" = "$ENOENT_DOWN (bad attribute 2)" ]
	run nl "$NSB" queue-get "$IFB" tx 1
	[ "$status" -eq 1 ]
	[ "$output" = "$ENOENT_DOWN" ]
	# checked before the queue id, as mainline does
	run nl "$NSB" queue-get "$IFB" rx 4
	[ "$status" -eq 1 ]
	[ "$output" = "$ENOENT_DOWN" ]
	# up again, the queue answers
	ip -n "$NSB" link set "$DEVB" up
	run nl "$NSB" queue-get "$IFB" rx 1
	[ "$status" -eq 0 ]
	[[ $output == "queue id=1 type=rx ifindex=$IFB napi-id="* ]]
}

@test "queue-get: channels set the range of valid ids" {
	in_ns "$NSB" ethtool -L "$DEVB" combined 2
	run nl "$NSB" queue-get "$IFB"
	[ "${#lines[@]}" -eq 4 ]
	run nl "$NSB" queue-get "$IFB" rx 2
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: no queue with this id and type on the device" ]
	run nl "$NSB" queue-get "$IFB" tx 2
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: no queue with this id and type on the device" ]
}

@test "queue-get: bad requests fail with their errno and an extack message" {
	# unknown device, also as a dump filter
	run nl "$NSB" queue-get "$IFA" rx 0
	[ "$status" -eq 1 ]
	[ "$output" = "$ENODEV" ]
	run nl "$NSB" queue-get "$IFA"
	[ "$status" -eq 1 ]
	[ "$output" = "$ENODEV" ]
	# type beyond tx (the policy's maximum)
	run nl "$NSB" raw 10 "u32:2=$IFB" u32:3=2 u32:1=0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Numerical result out of range: integer out of range" ]
	# each of ifindex (2), type (3) and id (1) missing in turn
	run nl "$NSB" raw 10 u32:3=0 u32:1=0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: ifindex is required (missing attribute 2)" ]
	run nl "$NSB" raw 10 "u32:2=$IFB" u32:1=0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: queue type is required (missing attribute 3)" ]
	run nl "$NSB" raw 10 "u32:2=$IFB" u32:3=0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: queue id is required (missing attribute 1)" ]
	# a u32 attribute that is one byte long
	run nl "$NSB" raw 10 "u32:2=$IFB" u32:3=0 u8:1=0
	[ "$status" -eq 1 ]
	[[ $output == "Error: Invalid argument"* ]]
}

@test "strict validation: unknown attributes and commands are refused" {
	run nl "$NSB" raw 1 "u32:1=$IFB" u32:9=1
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: Unknown attribute type" ]
	# napi-get (11) and qstats-get (12) are numbered but not implemented
	for cmd in 11 12 14 200; do
		run nl "$NSB" raw "$cmd"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: Operation not supported" ]
	done
}

@test "page-pool-get: two pools per rx queue with its NAPI id; a restart replaces them" {
	run nl "$NSB" page-pool-get
	[ "$status" -eq 0 ]
	mine=$(grep " ifindex=$IFB " <<<"$output")
	[ "$(wc -l <<<"$mine")" -eq 8 ]
	for q in 0 3; do
		napi=$(nl "$NSB" queue-get "$IFB" rx "$q" | sed -n 's/.*napi-id=\([0-9]*\).*/\1/p')
		[ "$(grep -c " napi-id=$napi inflight=0 inflight-mem=0\$" <<<"$mine")" -eq 2 ]
	done
	# restarting queue 3 destroys its two pools and creates two new ones
	old=$(grep " napi-id=$napi " <<<"$mine" | cut -d' ' -f2)
	echo 1 >"$DFSB/rxq/3/restart"
	run nl "$NSB" page-pool-get
	new=$(grep " ifindex=$IFB napi-id=$napi " <<<"$output" | cut -d' ' -f2)
	[ "$(wc -l <<<"$new")" -eq 2 ]
	[ -z "$(comm -12 <(sort <<<"$old") <(sort <<<"$new"))" ]
	# ...which no longer exist
	for id in $old; do
		id=${id#id=}
		run nl "$NSB" page-pool-get "$id"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: No such file or directory: no page pool with this id" ]
	done
	# the other namespace does not see them
	id=$(head -n1 <<<"$new"); id=${id#id=}
	run nl "$NSA" page-pool-get "$id"
	[ "$status" -eq 1 ]
	run nl "$NSB" page-pool-get "$id"
	[ "$status" -eq 0 ]
}

@test "page-pool-get: the id is a uint (4 or 8 bytes) in [1, U32_MAX], as mainline's policy" {
	id=$(nl "$NSB" page-pool-get | grep -m1 " ifindex=$IFB " | sed 's/^page-pool id=\([0-9]*\).*/\1/')
	run nl "$NSB" raw 5 "u64:1=$id"
	[ "$status" -eq 0 ]
	[[ $output == "page-pool id=$id ifindex=$IFB "* ]]
	run nl "$NSB" raw 5 "u32:1=$id"
	[ "$status" -eq 0 ]
	[[ $output == "page-pool id=$id ifindex=$IFB "* ]]
	# 0 and anything above U32_MAX: refused by the policy, not looked up
	for attr in u32:1=0 u64:1=0 u64:1=4294967296 u64:1=18446744073709551615; do
		run nl "$NSB" raw --bad-attr 5 "$attr"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: Numerical result out of range: integer out of range (bad attribute 1)" ]
	done
	# the top of the range is looked up
	run nl "$NSB" raw 5 u64:1=4294967295
	[ "$status" -eq 1 ]
	[ "$output" = "Error: No such file or directory: no page pool with this id" ]
	# neither 4 nor 8 bytes (a string's length counts its NUL)
	for attr in u8:1=1 u16:1=1 str:1=ab str:1=abcde str:1=abcdefghijk; do
		run nl "$NSB" raw --bad-attr 5 "$attr"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: Invalid argument: invalid attribute length (bad attribute 1)" ]
	done
	run nl "$NSB" raw 5
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid argument: page pool id is required (missing attribute 1)" ]
}

@test "page-pool-get: a dump ignores an id, but checks it as a do does (6.1: one policy)" {
	run nl "$NSB" page-pool-get
	[ "$status" -eq 0 ]
	all=$output
	[ -n "$all" ]
	id=$(head -n1 <<<"$all" | sed 's/^page-pool id=\([0-9]*\).*/\1/')
	run nl "$NSB" raw --dump 5 "u64:1=$id"
	[ "$status" -eq 0 ]
	[ "$output" = "$all" ]
	# an id the policy refuses is refused (mainline: no dump policy, ignored)
	run nl "$NSB" raw --dump 5 u32:1=0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Numerical result out of range: integer out of range" ]
}
