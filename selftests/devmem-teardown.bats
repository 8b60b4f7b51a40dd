#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Teardown in every order (lib/teardown) over the netdevsim pair: the
# seven events (sock, nl, tokens, down, chan, del as netdevsim's
# del_device, netns) in the orders that
# selftests/progs/devmem-hold/orders.awk generates from their
# permutations (with the events that make no sense after others skipped,
# and why). By default TEARDOWN_ORDERS=pairs, 9 orders, on both kernels
# (about 12 s an order on the normal kernel, 40 s on the debug kernel
# with kmemleak).

load lib/vm
load lib/nsim
load lib/devmem
load lib/teardown

test_teardown() { td_teardown; }

# The pair, header split on B, RSS over queues 0-2 and $PORT steered to
# queue 3.
td_setup() {
	TD_QUEUE=3
	devmem_setup
	TD_DEVICE=netdevsim$IDB
}
td_bound() { :; }
# chan shrinks to 3 queues: the rule to queue 3 would refuse it.
td_held() {
	if [[ " $1 " == *" chan "* ]]; then
		STEP="set-up: delete the n-tuple rule"
		in_ns "$NSB" ethtool -N "$DEVB" delete 0
	fi
}
td_chan() { run on_b ethtool -L "$DEVB" combined 3; }
td_del() {
	echo "$IDB" >"$NSIM_BUS/del_device"
	[ ! -e "$NSIM_BUS/devices/netdevsim$IDB" ]
}
td_home() {
	compgen -G "$NSIM_BUS/devices/netdevsim$IDB/net/*" >/dev/null || return 1
	DEVB=$(nsim_new_dev_name "$IDB")
}
td_cleanup() { nsim_cleanup; }

@test "teardown in every order with tokens held: the dma-buf is released with the last token, no pool is left" {
	td_orders "sock nl tokens down chan del netns"
}
