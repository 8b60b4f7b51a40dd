#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The device-memory TCP user ABI in our tree's uapi headers: installed
# with `make headers`, a user-space build on this host (whose own headers
# lack it) gets mainline's numbers and layouts; the architectures that
# number socket options themselves carry mainline's values too. User
# space builds without a kernel tree (scripts/uapi-headers.sh) against
# the same headers.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
HDR=$REPO/build/kernel/headers/x86/include
SRC=$REPO/build/kernel/src
PROG=$BATS_TEST_DIRNAME/fixtures/devmem-abi.c

setup_file() {
	make -C "$REPO" -s headers >/dev/null
}

@test "a program using the devmem ABI builds against the installed headers" {
	gcc -Wall -Werror -I "$HDR" -o "$BATS_TEST_TMPDIR/abi" "$PROG"
	run "$BATS_TEST_TMPDIR/abi"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "SO_DEVMEM_LINEAR=78 SO_DEVMEM_DMABUF=79 SO_DEVMEM_DONTNEED=80" ]
	[ "${lines[1]}" = "netdev version 1, bind-rx 13" ]
}

@test "scripts/uapi-headers.sh, without a kernel tree, gives what make headers installs" {
	local out=$BATS_TEST_TMPDIR/uapi f
	run "$REPO/scripts/uapi-headers.sh" "$out"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run bash -c "cd '$out' && find . -type f | sort"
	[ "$output" = "$(printf '%s\n' ./asm-generic/socket.h ./linux/ethtool_netlink.h ./linux/netdev.h ./linux/uio.h)" ]
	# file for file what the kernel tree installs
	for f in asm-generic/socket.h linux/ethtool_netlink.h linux/netdev.h linux/uio.h; do
		diff -u "$HDR/$f" "$out/$f"
	done
	gcc -Wall -Werror -I "$out" -o "$BATS_TEST_TMPDIR/abi" "$PROG"
	run "$BATS_TEST_TMPDIR/abi"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "SO_DEVMEM_LINEAR=78 SO_DEVMEM_DMABUF=79 SO_DEVMEM_DONTNEED=80" ]
}

@test "a uapi patch that does not fit the host's headers stops uapi-headers.sh, named" {
	local r=$BATS_TEST_TMPDIR/repo
	mkdir -p "$r/scripts" "$r/uapi/patches"
	cp "$REPO/scripts/uapi-headers.sh" "$r/scripts/"
	cat >"$r/uapi/patches/0099-bad.patch" <<-'EOF'
		Subject: [PATCH] bad

		---
		diff --git a/include/uapi/linux/uio.h b/include/uapi/linux/uio.h
		--- a/include/uapi/linux/uio.h
		+++ b/include/uapi/linux/uio.h
		@@ -1,2 +1,3 @@
		 no such line
		+#define DEVMEM_RIG 1
		 nor this one
	EOF
	run "$r/scripts/uapi-headers.sh" "$r/out"
	[ "$status" -eq 1 ]
	[[ $output == "uapi-headers: error: 0099-bad.patch does not apply to the host's installed headers: "*"include/uapi/linux/uio.h"*"FAILED"* ]]
	# nothing half-made is left behind
	[ ! -e "$r/out" ]
	run bash -c "ls '$r' | grep -c tmp"
	[ "$output" = 0 ]
}

@test "a uapi patch for a header the host lacks is refused, named" {
	local r=$BATS_TEST_TMPDIR/repo
	mkdir -p "$r/scripts" "$r/uapi/patches"
	cp "$REPO/scripts/uapi-headers.sh" "$r/scripts/"
	printf '%s\n' 'diff --git a/include/uapi/linux/devmem-rig.h b/include/uapi/linux/devmem-rig.h' \
		'--- a/include/uapi/linux/devmem-rig.h' '+++ b/include/uapi/linux/devmem-rig.h' \
		'@@ -1 +1,2 @@' ' x' '+y' >"$r/uapi/patches/0099-rig.patch"
	run "$r/scripts/uapi-headers.sh" "$r/out"
	[ "$status" -eq 1 ]
	[ "$output" = "uapi-headers: error: 0099-rig.patch changes include/uapi/linux/devmem-rig.h, but the host has no /usr/include/linux/devmem-rig.h (package linux-libc-dev)" ]
}

@test "libdevmem, the tools and the test programs build from a clean tree with no kernel" {
	local c=$BATS_TEST_TMPDIR/clone
	mkdir -p "$c"
	tar -C "$REPO" --exclude=./build --exclude=./.git -cf - . | tar -C "$c" -xf -
	run env KERNEL_TARBALL=/nonexistent make -s -C "$c/libdevmem" all
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$c/build/libdevmem/libdevmem.so.1" ]
	run env KERNEL_TARBALL=/nonexistent make -s -C "$c" tools progs
	echo "$output"
	[ "$status" -eq 0 ]
	[ -x "$c/build/bin/ncdevmem" ]
	[ -x "$c/build/bin/devmem-rx" ]
	# no kernel source was extracted, nor any kernel header installed
	[ ! -e "$c/build/kernel" ]
}

@test "the host's own headers lack it, so the build above used ours" {
	if printf '#include <sys/socket.h>\nint x = SO_DEVMEM_DONTNEED;\n' |
		gcc -x c -c -o /dev/null - 2>/dev/null; then
		skip "this host's own headers already have the devmem ABI"
	fi
	run gcc -Wall -o "$BATS_TEST_TMPDIR/abi" "$PROG"
	[ "$status" -ne 0 ]
}

@test "MSG_SOCK_DEVMEM stays out of the uapi headers, as in mainline" {
	[ -z "$(grep -rlE "define[[:space:]]+MSG_SOCK_DEVMEM" "$HDR")" ]
	grep -q '^#define MSG_SOCK_DEVMEM 0x2000000' "$SRC/include/linux/socket.h"
}

# socket-option values one architecture's uapi asm/socket.h defines
devmem_opts() {
	awk '$1 == "#define" && $2 ~ /^(SO|SCM)_DEVMEM_/ { printf "%s=%s ", $2, $3 }' \
		"$SRC/arch/$1/include/uapi/asm/socket.h"
}

@test "alpha, mips, parisc and sparc number the options as mainline does" {
	same="SO_DEVMEM_LINEAR=78 SCM_DEVMEM_LINEAR=SO_DEVMEM_LINEAR SO_DEVMEM_DMABUF=79 SCM_DEVMEM_DMABUF=SO_DEVMEM_DMABUF SO_DEVMEM_DONTNEED=80 "
	[ "$(devmem_opts alpha)" = "$same" ]
	[ "$(devmem_opts mips)" = "$same" ]
	[ "$(devmem_opts parisc)" = "SO_DEVMEM_LINEAR=0x404E SCM_DEVMEM_LINEAR=SO_DEVMEM_LINEAR SO_DEVMEM_DMABUF=0x404F SCM_DEVMEM_DMABUF=SO_DEVMEM_DMABUF SO_DEVMEM_DONTNEED=0x4050 " ]
	[ "$(devmem_opts sparc)" = "SO_DEVMEM_LINEAR=0x0057 SCM_DEVMEM_LINEAR=SO_DEVMEM_LINEAR SO_DEVMEM_DMABUF=0x0058 SCM_DEVMEM_DMABUF=SO_DEVMEM_DMABUF SO_DEVMEM_DONTNEED=0x0059 " ]
	# every other architecture takes asm-generic's
	for a in "$SRC"/arch/*/include/uapi/asm/socket.h; do
		case $a in */alpha/* | */mips/* | */parisc/* | */sparc/*) continue ;; esac
		grep -q 'asm-generic/socket.h' "$a"
	done
}
