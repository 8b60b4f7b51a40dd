#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Linking netdevsim ports: /sys/bus/netdevsim/link and unlink (and the
# mainline names link_device, unlink_device), carrier, drops without a
# peer, and every refused write with its errno, changing nothing.

load lib/vm
load lib/nsim

EINVAL="Invalid argument"
EBUSY="Device or resource busy"

# Two unlinked ports in nsa and nsb, IPv4 only, static neighbours (no
# ARP) and UDP sinks on port 9: counters see exactly what a test sends.
test_setup() {
	NSIM_NO_IPV6=1 nsim_pair 2
	sysfs_write "$NSIM_BUS/unlink" "$NSFDA:$IFA"
	ip -n "$NSA" neigh add "$IP4B" lladdr "$MACB" dev "$DEVA"
	ip -n "$NSB" neigh add "$IP4A" lladdr "$MACA" dev "$DEVB"
	udp_sink "$NSA" 9
	udp_sink "$NSB" 9
}
test_teardown() { nsim_cleanup; }


# send_udp NS ADDR N: N datagrams to port 9 (discard).
send_udp() { udp_send "$1" "$2" 9 "$3"; }

linked() { [ "$(iflink "$NSA" "$DEVA")" = "$IFB" ] && [ "$(iflink "$NSB" "$DEVB")" = "$IFA" ]; }
unlinked() { [ "$(iflink "$NSA" "$DEVA")" = "$IFA" ] && [ "$(iflink "$NSB" "$DEVB")" = "$IFB" ]; }

@test "link: iflink names the peer; carrier stays up, linked or not" {
	unlinked
	[ "$(carrier "$NSA" "$DEVA")" = 1 ]
	nsim_link
	linked
	[ "$(carrier "$NSA" "$DEVA")" = 1 ]
	[ "$(carrier "$NSB" "$DEVB")" = 1 ]
	ip -n "$NSA" link show "$DEVA" | grep -q "$DEVA@if$IFB"
}

@test "link: datagrams cross in both directions, counted exactly" {
	nsim_link
	send_udp "$NSA" "$IP4B" 7
	send_udp "$NSB" "$IP4A" 3
	[ "$(nsim_stat_sum "$NSB" "$DEVB" packets)" = 7 ]
	[ "$(nsim_stat_sum "$NSA" "$DEVA" packets)" = 3 ]
	[ "$(nsim_stat "$NSA" "$DEVA" tx_drop_no_peer)" = 0 ]
}

@test "no peer: transmitted packets are dropped and counted" {
	send_udp "$NSA" "$IP4B" 5
	[ "$(nsim_stat "$NSA" "$DEVA" tx_drop_no_peer)" = 5 ]
	[ "$(nsim_stat_sum "$NSB" "$DEVB" packets)" = 0 ]
	ip -n "$NSA" -s link show "$DEVA" | grep -A1 TX: | tail -1 | awk '{ exit !($4 == 5) }'
}

@test "peer down: packets are dropped and counted" {
	nsim_link
	ip -n "$NSB" link set "$DEVB" down
	send_udp "$NSA" "$IP4B" 4
	[ "$(nsim_stat "$NSA" "$DEVA" tx_drop_peer_down)" = 4 ]
	ip -n "$NSB" link set "$DEVB" up
	send_udp "$NSA" "$IP4B" 2
	[ "$(nsim_stat_sum "$NSB" "$DEVB" packets)" = 2 ]
}

@test "unlink from either side; relink; mainline file names work too" {
	nsim_link
	run sysfs_write "$NSIM_BUS/unlink" "$NSFDB:$IFB"
	[ "$status" -eq 0 ]
	unlinked
	sysfs_write "$NSIM_BUS/link_device" "$NSFDB:$IFB $NSFDA:$IFA"
	linked
	sysfs_write "$NSIM_BUS/unlink_device" "$NSFDA:$IFA"
	unlinked
	send_udp "$NSA" "$IP4B" 1
	[ "$(nsim_stat "$NSA" "$DEVA" tx_drop_no_peer)" = 1 ]
}

@test "link: malformed writes fail with EINVAL and link nothing" {
	for bad in " " "garbage" "$NSFDA:$IFA" "$NSFDA:$IFA $NSFDB" \
		   "$NSFDA:$IFA $NSFDB:x" "$NSFDA:$IFA $NSFDB:$IFB junk" \
		   "$NSFDA-$IFA $NSFDB-$IFB" "-1:$IFA $NSFDB:$IFB" \
		   "$NSFDA:0 $NSFDB:$IFB" "$NSFDA:$IFA $NSFDB:-4"; do
		run sysfs_write "$NSIM_BUS/link" "$bad"
		[ "$status" -eq 1 ] || { echo "accepted: '$bad'"; false; }
		[ "$output" = "$EINVAL" ]
		unlinked
	done
}

@test "link: bad fds, missing and foreign devices, self-link: EINVAL" {
	exec {nullfd}</dev/null
	ifl=$(ifindex_in "$NSA" lo)
	for bad in "2000:$IFA $NSFDB:$IFB" "$NSFDA:$IFA 2000:$IFB" \
		   "$nullfd:$IFA $NSFDB:$IFB" "$NSFDA:$IFA $nullfd:$IFB" \
		   "$NSFDA:9999 $NSFDB:$IFB" "$NSFDA:$IFA $NSFDB:9999" \
		   "$NSFDA:$ifl $NSFDB:$IFB" "$NSFDA:$IFB $NSFDB:$IFB" \
		   "$NSFDA:$IFA $NSFDA:$IFA"; do
		run sysfs_write "$NSIM_BUS/link" "$bad"
		[ "$status" -eq 1 ] || { echo "accepted: '$bad'"; false; }
		[ "$output" = "$EINVAL" ]
		unlinked
	done
	exec {nullfd}<&-
}

@test "link: an already linked port is EBUSY, the first link stays" {
	nsim_link
	IDC=$((IDB + 100))
	devc=$(nsim_new_dev "$IDC" 1)
	ifc=$(cat "/sys/class/net/$devc/ifindex")
	exec {initfd}</proc/self/ns/net
	run sysfs_write "$NSIM_BUS/link" "$NSFDA:$IFA $initfd:$ifc"
	[ "$status" -eq 1 ]
	[ "$output" = "$EBUSY" ]
	run sysfs_write "$NSIM_BUS/link" "$initfd:$ifc $NSFDB:$IFB"
	[ "$status" -eq 1 ]
	[ "$output" = "$EBUSY" ]
	run sysfs_write "$NSIM_BUS/link" "$NSFDA:$IFA $NSFDB:$IFB"
	[ "$status" -eq 1 ]
	[ "$output" = "$EBUSY" ]
	linked
	[ "$(cat "/sys/class/net/$devc/iflink")" = "$ifc" ]
	echo "$IDC" >"$NSIM_BUS/del_device"
}

@test "unlink: not linked, malformed, bad fd, foreign device: EINVAL" {
	exec {nullfd}</dev/null
	ifl=$(ifindex_in "$NSA" lo)
	for bad in "$NSFDA:$IFA" " " "x" "$NSFDA:$IFA $NSFDB:$IFB" \
		   "2000:$IFA" "$nullfd:$IFA" "$NSFDA:$ifl" "$NSFDA:9999"; do
		run sysfs_write "$NSIM_BUS/unlink" "$bad"
		[ "$status" -eq 1 ] || { echo "accepted: '$bad'"; false; }
		[ "$output" = "$EINVAL" ]
	done
	exec {nullfd}<&-
}

@test "link files are write-only for root" {
	for f in link unlink link_device unlink_device; do
		[ "$(stat -c %a "$NSIM_BUS/$f")" = 200 ]
	done
}
