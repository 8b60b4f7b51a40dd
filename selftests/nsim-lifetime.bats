#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Tearing things down under traffic: unlink, device deletion (also while a
# socket still holds page-pool buffers), namespace deletion. The kernel
# must not crash, warn or leak; on the debug kernel KASAN and lockdep watch
# every case, and the last test has kmemleak scan after all of them (one
# scan: each takes a minute under TCG).

load lib/vm
load lib/nsim

test_setup() { nsim_pair 2; }
test_teardown() { nsim_cleanup; }

# Start a long transfer both ways and return once B receives data.
flowing() {
	xfer_start "$NSB" 5200 1G 1G -t 300
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p 5200 \
		-s 1G -r 1G -t 300 >"$BATS_TEST_TMPDIR/conn" 2>&1 &
	CONN=$!
	wait_until 30 stat_gt "$NSB" "$DEVB" packets 200
}

stop_xfers() {
	kill -9 "$CONN" "$XFER_PID" 2>/dev/null || true
	wait "$CONN" "$XFER_PID" 2>/dev/null || true
}

@test "unlink during traffic; relink and the pair carries data again" {
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	flowing
	sysfs_write "$NSIM_BUS/unlink" "$NSFDA:$IFA"
	before=$(nsim_stat "$NSA" "$DEVA" tx_drop_no_peer)
	wait_until 30 stat_gt "$NSA" "$DEVA" tx_drop_no_peer "$before"
	stop_xfers
	nsim_link
	xfer_start "$NSB" 5201 1M 1M
	xfer_connect "$NSA" "$IP4B" 5201 1M 1M
	xfer_wait
}

@test "deleting the receiving device during traffic" {
	flowing
	echo "$IDB" >"$NSIM_BUS/del_device"
	[ ! -e "$NSIM_BUS/devices/netdevsim$IDB" ]
	# The survivor is unlinked: what it sends now is dropped for no peer.
	wait_until 30 stat_gt "$NSA" "$DEVA" tx_drop_no_peer 0
	stop_xfers
}

@test "deleting the sending device during traffic, header split on" {
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	flowing
	echo "$IDA" >"$NSIM_BUS/del_device"
	stop_xfers
}

@test "device deleted while a socket still holds its page-pool buffers" {
	# A receiver that stops reading: its socket keeps the skbs, whose
	# buffers belong to the queue's page pool.
	"$BIN/in-ns" "$NSB" socat -u TCP-LISTEN:5202,reuseaddr \
		EXEC:"sleep 300" &
	sock=$!
	wait_until 20 tcp_bound "$NSB" 5202
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p 5202 \
		-s 64M -t 300 >/dev/null 2>&1 &
	conn=$!
	wait_until 30 stat_gt "$NSB" "$DEVB" payload_bufs 20
	echo "$IDB" >"$NSIM_BUS/del_device"
	# Now the socket gives its buffers back to the destroyed pool.
	kill -9 "$conn" 2>/dev/null || true
	ip netns pids "$NSB" | xargs -r kill -9
	wait 2>/dev/null || true
}

@test "deleting a namespace during traffic: the port comes home to init_net" {
	flowing
	ip netns del "$NSB"
	# The namespace dies with the last process and the last fd on it.
	exec {NSFDB}<&-
	stop_xfers
	# Visible from init_net once the namespace's cleanup has moved it.
	wait_until 30 compgen -G "$NSIM_BUS/devices/netdevsim$IDB/net/*"
	dev=$(nsim_new_dev_name "$IDB")
	[ "$(cat "/sys/class/net/$dev/iflink")" = "$IFA" ]
	NSB=
}

@test "kmemleak: nothing leaked by the tests above" {
	kmemleak_active ||
		skip "kmemleak is not active here (the debug kernel has it, unless booted with kmemleak=off)"
	nsim_leak_check
}
