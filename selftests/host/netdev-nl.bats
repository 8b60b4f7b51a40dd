#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/netdev-nl on the host: usage errors, and, where the host's own
# kernel has mainline's "netdev" family, that the tool speaks its ABI.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
NL=$REPO/build/bin/netdev-nl

setup_file() {
	make -C "$REPO" "$NL"
}

@test "usage errors exit 2 and say why" {
	run "$NL"
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: no command (see --help)" ]
	run "$NL" frob
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: unknown command 'frob' (see --help)" ]
	run "$NL" dev-get 1 2
	[ "$status" -eq 2 ]
	run "$NL" dev-get x
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: bad ifindex 'x' (see --help)" ]
	run "$NL" queue-get 1 rx
	[ "$status" -eq 2 ]
	run "$NL" queue-get 1 up 0
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: queue type must be rx or tx, not 'up' (see --help)" ]
	run "$NL" raw
	[ "$status" -eq 2 ]
	run "$NL" raw 256
	[ "$status" -eq 2 ]
	run "$NL" raw 1 u32:1
	[ "$status" -eq 2 ]
	run "$NL" raw 1 u8:1=256
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: bad u8 '256' (see --help)" ]
	run "$NL" raw 1 s32:1=5
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: unknown attribute type 's32' (see --help)" ]
	run "$NL" raw --bad-attr
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: raw needs a command number (see --help)" ]
	run "$NL" bind-rx 1 0 udmabuf:4K --run
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: --run needs a command (see --help)" ]
	run "$NL" bind-rx 1 0 udmabuf:4K --hold --run true
	[ "$status" -eq 2 ]
	[ "$output" = "netdev-nl: --run excludes --hold, --snapshot and --cycles (see --help)" ]
	run "$NL" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Usage: netdev-nl COMMAND [ARGS]" ]
}

# The host's kernel, when it is a mainline one with the family: the same
# requests the VM suite sends get mainline's answers.
@test "against the host's mainline kernel: dumps work, a bad request gets EINVAL" {
	run "$NL" dev-get
	if [[ $output == *'has no "netdev" genetlink family'* ]]; then
		skip "the host kernel ($(uname -r)) has no netdev family"
	fi
	[ "$status" -eq 0 ]
	grep -q '^dev ifindex=1\( \|$\)' <<<"$output"
	run "$NL" queue-get 1
	[ "$status" -eq 0 ]
	grep -q '^queue id=0 type=rx ifindex=1' <<<"$output"
	run "$NL" raw 1
	[ "$status" -eq 1 ]
	[[ $output == "Error: Invalid argument"*"(missing attribute 1)" ]]
}

# What the VM suites expect of our kernel where it follows mainline's
# policies and permissions: page-pool ids out of the policy's range or of
# the wrong width, a queue of a device that is down, bind-rx without
# CAP_NET_ADMIN (refused before its attributes are looked at).
@test "against the host's mainline kernel: page-pool id policy, a down device's queue, bind-rx's EPERM" {
	run "$NL" dev-get
	if [[ $output == *'has no "netdev" genetlink family'* ]]; then
		skip "the host kernel ($(uname -r)) has no netdev family"
	fi
	[ "$(id -u)" -eq 0 ] || skip "needs root for a network namespace and to drop privileges"
	for attr in u32:1=0 u64:1=0 u64:1=4294967296 u64:1=18446744073709551615; do
		run "$NL" raw --bad-attr 5 "$attr"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: Numerical result out of range: integer out of range (bad attribute 1)" ]
	done
	for attr in u8:1=1 u16:1=1 str:1=abcde str:1=abcdefghijk; do
		run "$NL" raw --bad-attr 5 "$attr"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: Invalid argument: invalid attribute length (bad attribute 1)" ]
	done
	# lo of a new network namespace is down
	run unshare --net "$NL" queue-get 1 rx 0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: No such file or directory" ]
	local bin=$BATS_FILE_TMPDIR/netdev-nl
	install -m 755 "$NL" "$bin"	# the repository may not be readable
	chmod 755 "$BATS_FILE_TMPDIR"
	for attrs in "" u32:1=0 "u32:1=1 u8:3=1"; do
		run setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" raw 13 $attrs
		[ "$status" -eq 1 ]
		[ "$output" = "Error: Operation not permitted" ]
	done
}
