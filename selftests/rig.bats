#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The test VM itself: what every other suite relies on being there.

load lib/vm

fstype() { awk -v m="$1" '$2 == m { t = $3 } END { print t }' /proc/mounts; }
mountopts() { awk -v m="$1" '$2 == m { o = $4 } END { print o }' /proc/mounts; }

@test "root filesystem is the host's, read-only over 9p" {
	[ "$(fstype /)" = 9p ]
	[[ ",$(mountopts /)," == *,ro,* ]]
	run touch /devmem-rig-write-test
	[ "$status" -ne 0 ]
	[ -x /bin/bash ]
	[ -x /usr/bin/bats ]
}

@test "tmpfs on /tmp, /run and /var/tmp; proc, sysfs, debugfs, devtmpfs" {
	[ "$(fstype /tmp)" = tmpfs ]
	[ "$(fstype /run)" = tmpfs ]
	[ "$(fstype /var/tmp)" = tmpfs ]
	[ "$(fstype /proc)" = proc ]
	[ "$(fstype /sys)" = sysfs ]
	[ "$(fstype /sys/kernel/debug)" = debugfs ]
	[ "$(fstype /dev)" = devtmpfs ]
	echo data >/tmp/rig-write
	[ "$(cat /tmp/rig-write)" = data ]
}

@test "repository is visible at its host path" {
	[ -n "$VM_REPO" ]
	[ "$BATS_TEST_DIRNAME" = "$VM_REPO/selftests" ]
	[ -f "$VM_REPO/Makefile" ]
	[ -x "$VM_REPO/selftests/vm/run" ]
	[ "$(fstype "$VM_REPO")" = 9p ]
}

@test "runs as root on 2 vCPUs with at least 2 GiB" {
	[ "$(id -u)" = 0 ]
	[ "$(nproc)" = 2 ]
	mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	[ "$mem_kb" -ge $((2 * 1024 * 1024 - 256 * 1024)) ]
}

@test "boots the kernel we built, of the flavour asked for" {
	case $VM_FLAVOUR in
	normal) v=$VM_REPO/build/kernel/obj/version ;;
	debug) v=$VM_REPO/build/kernel/obj-debug/version ;;
	*) false ;;
	esac
	[ "$(uname -r)" = "$(sed -n 's/^kernelrelease=//p' "$v")" ]
	[[ $(uname -r) == 6.1.* ]]
}

@test "debug facilities match the kernel flavour" {
	if [ "$VM_FLAVOUR" = debug ]; then
		[ -e /sys/kernel/debug/provoke-crash/DIRECT ]
		[ -e /sys/kernel/debug/kmemleak ]
		[ -e /proc/lockdep ]
		dmesg | grep -q 'KernelAddressSanitizer initialized'
	else
		[ ! -e /sys/kernel/debug/provoke-crash ]
		[ ! -e /sys/kernel/debug/kmemleak ]
		[ ! -e /proc/lockdep ]
	fi
}

@test "netdevsim devices can be created and deleted" {
	[ -w /sys/bus/netdevsim/new_device ]
	echo "731 2" >/sys/bus/netdevsim/new_device
	dev=/sys/bus/netdevsim/devices/netdevsim731
	[ -d "$dev" ]
	ports=$(ls "$dev/net")
	[ "$(wc -w <<<"$ports")" = 2 ]
	for p in $ports; do
		ip link show dev "$p" >/dev/null
		ip link set dev "$p" up
	done
	echo 731 >/sys/bus/netdevsim/del_device
	[ ! -e "$dev" ]
	for p in $ports; do
		run ip link show dev "$p"
		[ "$status" -ne 0 ]
	done
}

@test "/dev/udmabuf and the system dma-buf heap exist" {
	[ -c /dev/udmabuf ]
	[ -c /dev/dma_heap/system ]
}

@test "page pool, io_uring and ethtool netlink are built in" {
	grep -qw page_pool_create /proc/kallsyms
	grep -qw io_uring_setup /proc/kallsyms
	grep -qw ethnl_default_doit /proc/kallsyms
}

@test "network namespaces with a veth pair" {
	ip netns add rig-a
	ip netns add rig-b
	ip link add rig0 netns rig-a type veth peer name rig1 netns rig-b
	ip -n rig-a addr add 192.0.2.1/24 dev rig0
	ip -n rig-b addr add 192.0.2.2/24 dev rig1
	ip -n rig-a link set rig0 up
	ip -n rig-b link set rig1 up
	ip netns exec rig-b socat -u TCP-LISTEN:5000,bind=192.0.2.2 OPEN:/tmp/rig-rx,creat &
	for _ in $(seq 100); do
		ip netns exec rig-b ss -Htln 'sport = :5000' | grep -q 5000 && break
		sleep 0.1
	done
	head -c 1048576 /dev/urandom >/tmp/rig-tx
	ip netns exec rig-a socat -u OPEN:/tmp/rig-tx TCP:192.0.2.2:5000
	wait
	cmp /tmp/rig-tx /tmp/rig-rx
}

test_teardown() {
	ip netns del rig-a 2>/dev/null
	ip netns del rig-b 2>/dev/null
	[ -e /sys/bus/netdevsim/devices/netdevsim731 ] && echo 731 >/sys/bus/netdevsim/del_device
	return 0
}

@test "under make check, bats reads this suite as the host's bats preprocessed it" {
	[ -n "${VM_BATS_SRC:-}" ] || skip "not run through selftests/vm/bats-src (make check runs it so)"
	local pre key
	pre=$(cd "$(dirname "$(readlink -f "$(command -v bats-preprocess)")")" && pwd)/bats-preprocess
	run mountpoint "$pre"
	[ "$status" -eq 0 ]
	# this very file, byte for byte the copy the host preprocessed
	key=$VM_BATS_SRC/${BATS_TEST_FILENAME//\//%}
	cmp "$BATS_TEST_FILENAME" "$key.bats"
	[ -s "$key.src" ]
	grep -q "^bats_test_function .*test_under_make_check" "$key.tests"
}
