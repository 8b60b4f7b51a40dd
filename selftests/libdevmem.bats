#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libdevmem on our kernel, which has what the host lacks. The test
# programs (libdevmem/tests, built by make libdevmem) run here and must
# pass: a skip (exit 77) is a failure, since the kernel has everything
# they need.
#
# * dma-buf providers: /dev/udmabuf and the system dma-heap. The programs
#   allocate a buffer, write a pattern through their own mapping of the fd
#   and read it back with devmem_dmabuf_read() (mmap + DMA_BUF_IOCTL_SYNC).
# * the netdev family: netlink and netlink-layer assert our kernel's
#   errnos and extack texts for what they refuse (the table in
#   libdevmem/tests/netlink.c); bind-vm binds a udmabuf to a netdevsim rx
#   queue through the library and shows each step, checked here field by
#   field.

load lib/vm
load lib/nsim

LIBTESTS=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/libdevmem/tests
NETNS=libdevmem

test_teardown() {
	nsim_cleanup
	[ ! -e "/run/netns/$NETNS" ] || ip netns del "$NETNS"
}

# prog [--ns NS] NAME [ARGS]: run a libdevmem test program (in netns NS);
# it must pass, not skip.
prog() {
	local ns=() name
	if [ "$1" = --ns ]; then
		ns=(ip netns exec "$2")
		shift 2
	fi
	name=$1
	shift
	[ -x "$LIBTESTS/$name" ] || { echo "no $LIBTESTS/$name: run make libdevmem" >&2; return 1; }
	run "${ns[@]}" "$LIBTESTS/$name" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *skip* ]]
}

# A namespace of our own with lo up: queue dumps list devices that are up.
own_netns() {
	ip netns add "$NETNS"
	ip -n "$NETNS" link set lo up
}

@test "udmabuf: allocated, filled through its mapping, read back, imported" {
	[ -c /dev/udmabuf ]
	prog udmabuf
}

@test "system dma-heap: allocated, filled through its mapping, read back" {
	[ -c /dev/dma_heap/system ]
	prog dma-heap
}

@test "netlink: dumps, argument checks, bind-rx refused with our errnos and extack texts" {
	own_netns
	prog --ns "$NETNS" netlink
	[[ $output == *"ok bind-refused"* ]]
	[[ $output == *"ok bind-unprivileged"* ]]
	[[ $output == *"ok queue-dump-nodev"* ]]
	prog --ns "$NETNS" netlink-layer
	[[ $output == *"ok extack"* ]]
}

@test "bind-vm: bind through the library, queue and pool show it, rebind refused, free unbinds" {
	NSIM_NO_IPV6=1 nsim_pair 4
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	prog --ns "$NSB" bind-vm "$DEVB" 3
	[ "${#lines[@]}" -eq 9 ]
	[[ ${lines[0]} =~ ^bound\ id=([0-9]+)\ ifindex=$IFB\ queue=3$ ]]
	id=${BASH_REMATCH[1]}
	[ "$id" -ge 1 ]
	[[ ${lines[1]} =~ ^queue\ id=3\ type=rx\ ifindex=$IFB\ napi-id=([0-9]+)\ dmabuf=$id$ ]]
	napi=${BASH_REMATCH[1]}
	[ "$napi" -gt 0 ]
	[ "${lines[2]}" = "others-bound=0" ]
	# queue 3's payload pool, with its NAPI, nothing taken yet
	[ "${lines[3]}" = "pool ifindex=$IFB napi-id=$napi inflight=0 inflight-mem=0 dmabuf=$id" ]
	[ "${lines[4]}" = "pools=1" ]
	# net_devmem_bind_dmabuf_to_queue(): the queue has a provider
	[ "${lines[5]}" = "rebind errno=17 reason=rx queue is already bound to a dma-buf" ]
	[ "${lines[6]}" = "still-bound dmabuf=$id" ]
	[ "${lines[7]}" = "unbound dmabuf=0" ]
	[ "${lines[8]}" = "pools-left=0" ]
	# what the kernel shows afterwards, through netdev-nl: nothing bound
	run in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"queue id=3 type=rx ifindex=$IFB "* ]]
	[[ $output != *dmabuf=* ]]
}

@test "bind-vm: refused with header split off, the library passing the kernel's text through" {
	NSIM_NO_IPV6=1 nsim_pair 4
	[ "$(in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB")" = "$DEVB: tcp-data-split off" ]
	# net_devmem_bind_dmabuf_to_queue(): header split must be on
	run ip netns exec "$NSB" "$LIBTESTS/bind-vm" "$DEVB" 3
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "bind-vm: bind-rx: Invalid argument: header split (tcp-data-split) is off on the device" ]
}
