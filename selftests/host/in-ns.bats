#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/in-ns, which the VM suites run commands in namespaces
# with, against `ip netns exec` on the host: the same namespace, the same
# /sys and /etc, the same messages and exit statuses.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
INNS=$REPO/build/bin/in-ns

setup_file() {
	make -C "$REPO" "$INNS"
}

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
	NS=in-ns-test-$$
	ip netns add "$NS"
	ip -n "$NS" link add veth-inns type veth peer name peer-inns
}

teardown() {
	[ -z "${NS:-}" ] || ip netns del "$NS" 2>/dev/null || true
	rm -rf "/etc/netns/${NS:-none}"
}

# both CMD...: CMD through ip netns exec and through in-ns; each output
# (stdout and stderr) and status must be the same.
both() {
	local a b sa sb
	a=$(ip netns exec "$@" 2>&1) && sa=0 || sa=$?
	b=$("$INNS" "$@" 2>&1) && sb=0 || sb=$?
	echo "ip netns exec: $sa: $a"
	echo "in-ns:         $sb: $b"
	[ "$a" = "$b" ]
	[ "$sa" = "$sb" ]
}

@test "the command runs in the namespace, with its sysfs on /sys, as ip netns exec runs it" {
	both "$NS" ip -o link show veth-inns
	both "$NS" ls /sys/class/net
	[[ $("$INNS" "$NS" ls /sys/class/net) == *veth-inns* ]]
	# the same netns inode as ip's
	both "$NS" readlink /proc/self/ns/net
	[ "$("$INNS" "$NS" readlink /proc/self/ns/net)" != "$(readlink /proc/self/ns/net)" ]
	both "$NS" sh -c 'exit 7'
	run "$INNS" "$NS" sh -c 'exit 7'
	[ "$status" -eq 7 ]
}

@test "nothing it mounts is seen outside; /etc/netns/NAME files are bound over /etc" {
	local before
	before=$(grep -c " /sys " /proc/self/mountinfo)
	"$INNS" "$NS" true
	[ "$(grep -c " /sys " /proc/self/mountinfo)" -eq "$before" ]
	mkdir -p "/etc/netns/$NS"
	echo "in-ns test $NS" >"/etc/netns/$NS/hostname"
	both "$NS" cat /etc/hostname
	[ "$("$INNS" "$NS" cat /etc/hostname)" = "in-ns test $NS" ]
	[ "$(cat /etc/hostname)" != "in-ns test $NS" ]
}

@test "background: \$! is the command itself, which in-ns became" {
	"$INNS" "$NS" sleep 30 &
	local pid=$!
	# wait until the exec happened (the comm changes)
	for _ in $(seq 100); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	[ "$(cat "/proc/$pid/comm")" = sleep ]
	[ "$(readlink "/proc/$pid/ns/net")" = "$(ip netns exec "$NS" readlink /proc/self/ns/net)" ]
	kill "$pid"
	wait "$pid" || true
}

@test "refusals as ip words them: no such namespace, a bad name, a command that cannot run, usage" {
	both in-ns-no-such-ns true
	run "$INNS" in-ns-no-such-ns true
	[ "$status" -eq 255 ]
	[ "$output" = 'Cannot open network namespace "in-ns-no-such-ns": No such file or directory' ]
	for name in a/b .. . ""; do
		both "$name" true
		run "$INNS" "$name" true
		[ "$status" -eq 255 ]
		[ "$output" = "Invalid netns name \"$name\"" ]
	done
	both "$NS" /nonexistent
	run "$INNS" "$NS" /nonexistent
	[ "$status" -eq 1 ]
	[ "$output" = 'exec of "/nonexistent" failed: No such file or directory' ]
	run "$INNS" "$NS"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: in-ns NAME CMD [ARG...]" ]
}
