#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/tcp-data-split on the host kernel: usage, error reporting and the
# answers for devices that cannot do header split (no VM needed).

setup_file() {
	# The Makefile's pattern rule names its targets by absolute path, and
	# make -C resolves the repository with getcwd(): pass the same path.
	local repo
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
	make -s -C "$repo" "$repo/build/bin/tcp-data-split" >&2
}

setup() {
	TDS=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)/build/bin/tcp-data-split
}

@test "--help and -h: usage on stdout, exit 0" {
	for opt in --help -h; do
		run "$TDS" "$opt"
		[ "$status" -eq 0 ]
		[[ $output == *"usage: tcp-data-split DEV"* ]]
		[[ $output == *"on|off|auto"* ]]
		[[ $output == *"-t DEV BYTES"* ]]
	done
}

@test "usage errors exit 2" {
	run "$TDS"
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: missing DEV (see --help)" ]
	run "$TDS" lo maybe
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: bad value 'maybe' (want on, off or auto) (see --help)" ]
	run "$TDS" lo on extra
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: too many arguments (see --help)" ]
	run "$TDS" abcdefghijklmnopqrst
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: device name 'abcdefghijklmnopqrst' too long (at most 15 characters) (see --help)" ]
	run "$TDS" abcdefghijklmnopqrst on
	[ "$status" -eq 2 ]
	run "$TDS" ""
	[ "$status" -eq 2 ]
	run "$TDS" --bogus lo
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: unknown option '--bogus' (see --help)" ]
}

@test "-t: usage errors exit 2; bytes from 0 to 2^32-1" {
	local v
	for v in -1 on 1k 4294967296 ""; do
		run "$TDS" -t lo "$v"
		[ "$status" -eq 2 ]
		[ "$output" = "tcp-data-split: bad value '$v' (want bytes, 0 to 4294967295) (see --help)" ]
	done
	run "$TDS" --hds-thresh
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: missing DEV (see --help)" ]
	# 2^32-1 parses: lo's refusal comes from the kernel, not from us
	run "$TDS" -t lo 4294967295
	[ "$status" -eq 1 ]
	[[ $output == "tcp-data-split: lo: "* ]]
}

@test "--raw: usage errors exit 2" {
	local r
	for r in 0:u8 14 14:u16 x:u8 65536:u32 :u8; do
		run "$TDS" --raw "$r" lo 1
		[ "$status" -eq 2 ]
		[ "$output" = "tcp-data-split: bad --raw '$r' (want ATTR:u8 or ATTR:u32) (see --help)" ]
	done
	run "$TDS" --raw 14:u8 lo 256
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: bad value '256' (want 0 to 255) (see --help)" ]
	run "$TDS" --raw 15:u32 lo 4294967296
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: bad value '4294967296' (want 0 to 4294967295) (see --help)" ]
	run "$TDS" --raw 14:u8 lo
	[ "$status" -eq 2 ]
	[ "$output" = "tcp-data-split: --raw needs a VALUE (see --help)" ]
}

@test "-t: get on lo: the kernel has no ring parameters for it, exit 1" {
	run "$TDS" --hds-thresh lo
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: lo: Operation not supported" ]
}

@test "a 15-character name is accepted and reaches the kernel" {
	run "$TDS" abcdefghijklmno
	[ "$status" -eq 1 ]
	[[ $output == "tcp-data-split: abcdefghijklmno: No such device"* ]]
}

@test "nonexistent device: No such device, exit 1" {
	run "$TDS" nosuchdev0
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	# the kernel's extack ("no device matches name") follows
	[[ $output == "tcp-data-split: nosuchdev0: No such device"* ]]
}

@test "get on lo: the kernel has no ring parameters for it, exit 1" {
	# loopback has no get_ringparam: RINGS_GET fails with EOPNOTSUPP and
	# no extack text
	run "$TDS" lo
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: lo: Operation not supported" ]
}

@test "set on lo: Operation not supported, exit 1" {
	for v in on off auto; do
		run "$TDS" lo "$v"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		case $output in
		# the kernel knows the attribute; lo's driver cannot do it
		"tcp-data-split: lo: Operation not supported"*) ;;
		# a stock 6.1 kernel: the attribute is not in its RINGS_SET
		# policy, so strict validation refuses it before any driver
		"tcp-data-split: lo: Invalid argument: Unsupported attribute") ;;
		*) echo "unexpected: $output"; false ;;
		esac
	done
}

@test "set as a user: Operation not permitted, exit 1" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to drop privileges"
	local bin=$BATS_FILE_TMPDIR/tcp-data-split
	install -m 755 "$TDS" "$bin"	# the repository may not be readable
	chmod 755 "$BATS_FILE_TMPDIR"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" lo on
	[ "$status" -eq 1 ]
	[ "$output" = "tcp-data-split: lo: Operation not permitted" ]
}

@test "get on a device with ring parameters prints one line" {
	local dev
	for dev in $(ls /sys/class/net); do
		[ ${#dev} -le 15 ] || continue
		run "$TDS" "$dev"
		[ "$status" -eq 0 ] && break
	done
	[ "$status" -eq 0 ] || skip "no device here reports ring parameters"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output =~ ^"$dev: tcp-data-split "(on|off|unknown)$ ]]
}
