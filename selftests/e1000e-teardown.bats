#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Teardown in every order (lib/teardown) over the e1000e pair
# (lib/e1000e): sock, nl, tokens, down, del and netns with tokens held,
# in the orders orders.awk picks for those six (TEARDOWN_ORDERS, by
# default pairs: 7 orders). The 82574 has one rx queue and no channels to
# change (no chan); del unbinds the e1000e driver from B's PCI function,
# which unregisters B as a removal does without enumerating the device
# again (QEMU 7.2 now and then dies in a PCI rescan). B's dma-buf
# attachment is B's PCI function.
#
# B runs at MTU 9000 and A at 1500: each of B's descriptors has three
# payload buffers, and A's segments fill the first alone. The dma-buf is
# just larger than the ring's buffers (3 MiB: 768 of 4 KiB, the ring takes
# 255 * 3), so the pool runs dry while devmem-hold holds the tokens, and
# the descriptors the segments used wait with their first buffer gone and
# the other two still theirs: every teardown must find those too.

load lib/vm
load lib/nsim
load lib/e1000e
load lib/teardown

PORT=5201
TD_DMABUF=3M

test_teardown() { td_teardown; }

td_setup() {
	TD_QUEUE=0
	e1000e_pair
	nsim_open_nsfds
	in_ns "$NSB" ip link set "$DEVB" mtu 9000
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	e1000e_wait_link
	TD_DEVICE=$PCIB
}
# the bind restarts the queue: the controller resets
td_bound() {
	e1000e_wait_link
	ALLOC_FAILED0=$(nsim_stat "$NSB" "$DEVB" alloc_rx_buff_failed)
}
# the transfer left the ring waiting for buffers
td_held() {
	local failed

	failed=$(nsim_stat "$NSB" "$DEVB" alloc_rx_buff_failed)
	echo "alloc_rx_buff_failed: $ALLOC_FAILED0 -> $failed"
	[ "$failed" -gt "$ALLOC_FAILED0" ]
}
td_del() {
	echo "$PCIB" >/sys/bus/pci/drivers/e1000e/unbind
	[ ! -e "/sys/bus/pci/devices/$PCIB/driver" ]
}
td_home() { DEVB=$(e1000e_by_mac "$E1000E_MACB"); }
td_cleanup() { e1000e_cleanup; }

@test "teardown in every order with tokens held on the 82574, its ring waiting for buffers: the dma-buf is released with the last token, no pool is left" {
	td_orders "sock nl tokens down del netns"
}
