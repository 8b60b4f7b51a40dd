#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libdevmem's NIC set-up (src/nic.c) on netdevsim, driven by the test
# program nic-vm (libdevmem/tests/nic-vm.c) and checked with ethtool
# field by field: header split (ethtool -g), the RSS carve-out (-x), the
# ntuple feature (-k) and the rules (-n). Set-up and teardown are two
# processes joined by the state files, as devmemctl setup and teardown
# are; after teardown everything must be exactly as before. Two set-ups
# of one device's queues are each their own. Refusals
# carry the kernel's errno, and its extack text where ethtool netlink
# sent one.

load lib/vm
load lib/nsim

LIBTESTS=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/libdevmem/tests

test_setup() {
	nsim_pair 4
	STATE=$BATS_TEST_TMPDIR/nic.state
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() { nsim_cleanup; }

ethb() { in_ns "$NSB" ethtool "$@"; }

# nic ARGS: run nic-vm in B's namespace (status and output in $status and
# $output, shown on failure).
nic() {
	[ -x "$LIBTESTS/nic-vm" ] || { echo "no $LIBTESTS/nic-vm: run make libdevmem" >&2; return 1; }
	run "$BIN/in-ns" "$NSB" "$LIBTESTS/nic-vm" "$@"
	echo "$output"
}

# What set-up touches, as ethtool shows it: rings (with TCP data split),
# the RSS table and key, the rules, and the ntuple feature.
snapshot() {
	ethb -g "$DEVB"
	ethb -x "$DEVB"
	ethb -n "$DEVB"
	ethb -k "$DEVB" | grep '^ntuple-filters:'
}

# The RSS table's entries, one line.
rss_entries() {
	ethb -x "$DEVB" | awk '/^ +[0-9]+:/ { sub(/^ +[0-9]+:/, ""); printf "%s", $0 } END { print "" }' |
		tr -s ' ' | sed 's/^ //'
}

# ethtool -n's lines for rule LOC, tabs and trailing blanks dropped.
rule_lines() {
	ethb -n "$DEVB" rule "$1" | sed -e 's/^\t*//' -e 's/[ \t]*$//' | grep -v '^$'
}

@test "nic: the host program passes on our kernel too (lo's refusals, state files)" {
	[ -x "$LIBTESTS/nic" ] || { echo "no $LIBTESTS/nic: run make libdevmem" >&2; return 1; }
	run "$LIBTESTS/nic"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ok lo-refuses"* ]]
}

@test "setup, then teardown from the saved state in another process: everything back exactly" {
	before=$(snapshot)
	[[ $before == *"TCP data split:"*"off"* ]]
	[[ $before == *"ntuple-filters: off"* ]]
	[[ $before == *"Total 0 rules"* ]]
	[ "$(rss_entries)" = "$(printf '0 1 2 3 %.0s' $(seq 32) | sed 's/ $//')" ]

	nic setup "$DEVB" 2 3 "$IP4B" 5201 any "$STATE"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" = setup ]
	[ "${lines[1]}" = "rule loc=1 queue=3" ]
	[ "${lines[2]}" = "added loc=2" ]
	[ "${lines[3]}" = "deleted loc=2" ]
	[ "${lines[4]}" = saved ]

	# header split on
	run ethb -g "$DEVB"
	[[ $output =~ TCP\ data\ split:[[:space:]]+on ]]
	# queues 2 and 3 out of RSS: 0 1 0 1 ...
	[ "$(rss_entries)" = "$(printf '0 1 %.0s' $(seq 64) | sed 's/ $//')" ]
	# the ntuple feature on, the two rules recorded
	[ "$(ethb -k "$DEVB" | grep '^ntuple-filters:')" = "ntuple-filters: on" ]
	run ethb -n "$DEVB"
	[[ $output == *"Total 2 rules"* ]]
	run rule_lines 0
	echo "$output"
	[ "${lines[0]}" = "Filter: 0" ]
	[ "${lines[1]}" = "Rule Type: TCP over IPv4" ]
	[ "${lines[2]}" = "Src IP addr: 0.0.0.0 mask: 255.255.255.255" ]
	[ "${lines[3]}" = "Dest IP addr: $IP4B mask: 0.0.0.0" ]
	[ "${lines[4]}" = "TOS: 0x0 mask: 0xff" ]
	[ "${lines[5]}" = "Src port: 0 mask: 0xffff" ]
	[ "${lines[6]}" = "Dest port: 5201 mask: 0x0" ]
	[ "${lines[7]}" = "Action: Direct to queue 2" ]
	run rule_lines 1
	echo "$output"
	[ "${lines[0]}" = "Filter: 1" ]
	[ "${lines[1]}" = "Rule Type: TCP over IPv6" ]
	[ "${lines[2]}" = "Src IP addr: $IP6A mask: ::" ]
	[ "${lines[3]}" = "Dest IP addr: $IP6B mask: ::" ]
	[ "${lines[4]}" = "Traffic Class: 0x0 mask: 0xff" ]
	[ "${lines[5]}" = "Src port: 0 mask: 0xffff" ]
	[ "${lines[6]}" = "Dest port: 5202 mask: 0x0" ]
	[ "${lines[7]}" = "Action: Direct to queue 3" ]

	# the state: what was before each change, then the set-up's own
	# queues and rules; the rule added and deleted again is not in it
	cat "$STATE"
	[ "$(cat "$STATE")" = "libdevmem-nic 1
device $IFB $DEVB
header-split off
rss default
ntuple off
queues 2 3
rule 0 2 $IP4B 5201 any
rule 1 3 $IP6B 5202 $IP6A" ]

	# the library's own files say the same: the device's, and the one
	# of the process that set it up (gone now, so the file is unlocked)
	local dev owner
	dev=$DEVMEM_STATE_DIR/netns-$(stat -L -c %i "/run/netns/$NSB")-ifindex-$IFB
	[ "$(cat "$dev")" = "$(sed -n '1,5p' "$STATE")" ]
	owner=("$dev".owner.*)
	[ "${#owner[@]}" -eq 1 ]
	[ "$(cat "${owner[0]}")" = "$(sed -e 3,5d "$STATE")" ]

	# teardown from a copy, in another process
	cp "$STATE" "$STATE.copy"
	nic restore "$STATE.copy"
	[ "$status" -eq 0 ]
	[ "$output" = restored ]
	after=$(snapshot)
	[ "$after" = "$before" ]
}

@test "setup refused half-way undoes what it did; a rule for a queue out of range: EINVAL, nothing left" {
	before=$(snapshot)
	# queue 4 of 4: header split was turned on first, then taken back
	nic setup "$DEVB" 2 4 "$IP4B" 5201 any "$STATE"
	[ "$status" -eq 1 ]
	[ "$output" = "nic-vm: setup: errno=22: $DEVB has 4 rx queues: no queue 4" ]
	nic setup "$DEVB" 0 3 "$IP4B" 5201 any "$STATE"
	[ "$status" -eq 1 ]
	[ "$output" = "nic-vm: setup: errno=22: $DEVB has 4 rx queues: none would be left for RSS" ]
	[ ! -e "$STATE" ]
	[ "$(snapshot)" = "$before" ]

	# the driver refuses the rule (the ioctl has no message: strerror);
	# the ntuple feature it turned on goes back off
	nic rule "$DEVB" 4 "$IP4B" 5300
	[ "$status" -eq 1 ]
	[ "$output" = "nic-vm: rule: errno=22: $DEVB: inserting an n-tuple rule (ETHTOOL_SRXCLSRLINS): Invalid argument" ]
	[ "$(snapshot)" = "$before" ]
	nic rule "$DEVB" 3 "$IP4B" 5300
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "rule loc=0 queue=3" ]
	[ "${lines[1]}" = restored ]
	[ "$(snapshot)" = "$before" ]
}

@test "teardown while device memory is bound: the kernel's extack for header split, the rest undone; a second teardown finishes" {
	before=$(snapshot)
	nic setup "$DEVB" 2 3 "$IP4B" 5201 any "$STATE"
	[ "$status" -eq 0 ]
	# queue 2 bound while teardown runs: header split must stay on
	run "$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 2 udmabuf:1M \
		--run "$LIBTESTS/nic-vm" restore "$STATE"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} =~ ^bind-rx\ id=[0-9]+$ ]]
	[ "${lines[1]}" = "nic-vm: restore: errno=22: cannot turn header split off while device memory is bound to an rx queue" ]
	# everything else went back
	run ethb -g "$DEVB"
	[[ $output =~ TCP\ data\ split:[[:space:]]+on ]]
	[ "$(ethb -k "$DEVB" | grep '^ntuple-filters:')" = "ntuple-filters: off" ]
	run ethb -n "$DEVB"
	[[ $output == *"Total 0 rules"* ]]
	[ "$(rss_entries)" = "$(printf '0 1 2 3 %.0s' $(seq 32) | sed 's/ $//')" ]
	# unbound now: the same state again (the rules are gone: that is
	# fine) brings header split back off
	nic restore "$STATE"
	[ "$status" -eq 0 ]
	[ "$(snapshot)" = "$before" ]
}

@test "two set-ups of one device, each its own queues and rules; teardown takes over both" {
	before=$(snapshot)
	nic setup "$DEVB" 3 3 "$IP4B" 5201 any "$STATE"
	[ "$status" -eq 0 ]
	# another process, queue 2: RSS keeps queues 0 and 1
	nic setup "$DEVB" 2 2 "$IP4B" 5301 any "$STATE.2"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "rule loc=3 queue=2" ]
	[ "$(rss_entries)" = "$(printf '0 1 %.0s' $(seq 64) | sed 's/ $//')" ]
	run ethb -n "$DEVB"
	[[ $output == *"Total 4 rules"* ]]
	# the second one records the device as the first one found it
	[ "$(sed -n 3,5p "$STATE.2")" = "$(sed -n 3,5p "$STATE")" ]
	[ "$(sed -n 6p "$STATE.2")" = "queues 2 2" ]
	# queue 3 is the first one's, for RSS and for a rule
	nic setup "$DEVB" 3 3 "$IP4B" 5401 any "$STATE.3"
	[ "$status" -eq 1 ]
	[[ $output == "nic-vm: setup: errno=16: queue 3 of $DEVB is already set up (state file $DEVMEM_STATE_DIR/netns-"*".owner."*"): run \"devmemctl teardown dev $DEVB\" if no process is using it" ]]
	nic rule "$DEVB" 3 "$IP4B" 5401
	[ "$status" -eq 1 ]
	[[ $output == "nic-vm: rule: errno=16: queue 3 of $DEVB is already set up "* ]]
	[ ! -e "$STATE.3" ]

	# both processes are gone: teardown takes over both
	nic teardown "$DEVB"
	[ "$status" -eq 0 ]
	[ "$output" = restored ]
	[ "$(snapshot)" = "$before" ]
	run ls -A "$DEVMEM_STATE_DIR"
	[ "$output" = "" ]
	nic teardown "$DEVB"
	[ "$status" -eq 1 ]
	[[ $output == "nic-vm: recover: errno=2: $DEVB is not set up (no state file "* ]]
}

@test "state of a device that is gone: ENODEV" {
	nic setup "$DEVB" 3 3 "$IP4B" 5201 "$IP4A" "$STATE"
	[ "$status" -eq 0 ]
	grep -qx "rule 0 3 $IP4B 5201 $IP4A" "$STATE"
	echo "$IDB" >"$NSIM_BUS/del_device"
	nic restore "$STATE"
	[ "$status" -eq 1 ]
	[ "$output" = "nic-vm: load: errno=19: no network device with ifindex $IFB" ]
}
