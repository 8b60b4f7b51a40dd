#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# scripts/series: the kernel side as a series for git am. Runs on the host
# against the base tree `make kernel` extracted.

load lib/kernel-scratch

setup() { scratch_kernel_setup; }

series() { BUILD=$T/build run "$T/repo/scripts/series" "$@"; }

# add_line NNNN-SUBJECT FILE N TEXT: net/patches/NNNN-SUBJECT.patch adds
# TEXT after line N of the base's FILE
add_line() { make_patch "net/patches/$1.patch" "$2" "$3" "$4" "${1#*-}"; }

@test "the series applies with git am and gives exactly the tree the kernel is built from" {
	run "$REPO/scripts/series" check
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(ls "$REPO"/{net,drivers,uapi}/patches/*.patch | wc -l)
	[ "${lines[-1]%% apply with*}" = "series: $n patches" ]
}

@test "each new file joins the first patch that builds or includes it" {
	mkdir -p "$T/repo/net/core" "$T/repo/include/net"
	printf '#include <net/rig.h>\n#include "rig_priv.h"\nint rig;\n' >"$T/repo/net/core/rig.c"
	printf 'int rig_priv;\n' >"$T/repo/net/core/rig_priv.h"
	printf 'extern int rig;\n' >"$T/repo/include/net/rig.h"
	add_line 0001-first net/core/sock.c 3 '/* first */'
	add_line 0002-second net/core/Makefile 1 'obj-y += rig.o'
	series list
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "0001 first" ]
	[ "${lines[1]}" = "0002 second [adds include/net/rig.h net/core/rig.c net/core/rig_priv.h]" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "the export is git format-patch output, numbered, with new files as additions" {
	mkdir -p "$T/repo/net/core"
	printf 'int rig;\n' >"$T/repo/net/core/rig.c"
	add_line 0001-first net/core/sock.c 3 '/* first */'
	add_line 0002-second net/core/Makefile 1 'obj-y += rig.o'
	series export "$T/out"
	echo "$output"
	[ "$status" -eq 0 ]
	run ls "$T/out"
	[ "$output" = "$(printf '0001-first.patch\n0002-second.patch')" ]
	grep -qx 'Subject: \[PATCH 1/2\] first' "$T/out/0001-first.patch"
	grep -qx 'From: devmem-tcp developers <devmem-tcp@lists.invalid>' "$T/out/0002-second.patch"
	grep -qx 'new file mode 100644' "$T/out/0002-second.patch"
	grep -qx '+++ b/net/core/rig.c' "$T/out/0002-second.patch"
	grep -qx 'Why.' "$T/out/0002-second.patch"
	# the same every time
	cp -r "$T/out" "$T/out1"
	series export "$T/out"
	[ "$status" -eq 0 ]
	diff -r "$T/out1" "$T/out"
}

@test "a new file that no patch needs is refused, by name" {
	mkdir -p "$T/repo/net/core"
	printf 'int stray;\n' >"$T/repo/net/core/stray.c"
	add_line 0001-first net/core/sock.c 3 '/* first */'
	series list
	[ "$status" -eq 1 ]
	[ "$output" = "series: error: no patch builds or includes these files of ours: net/core/stray.c " ]
}

@test "a patch that does not apply on the ones before it is named" {
	add_line 0001-first net/core/sock.c 3 '/* first */'
	add_line 0002-again net/core/sock.c 3 '/* again */'
	sed -i 's/^ \(.*\)$/ \1 CHANGED/' "$T/repo/net/patches/0002-again.patch"
	series check
	[ "$status" -eq 1 ]
	[[ $output == *"series: error: 0002-again.patch does not apply on the patches before it"* ]]
}

@test "bad commands and flavours are refused with the usage" {
	series frobnicate
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "series: error: unknown command 'frobnicate'" ]
	[[ $output == *"scripts/series check-build"* ]]
	series check-build tiny
	[ "$status" -eq 1 ]
	[ "$output" = "series: error: unknown flavour 'tiny' (normal or debug)" ]
	series export
	[ "$status" -eq 1 ]
	[ "$output" = "series: error: export needs a directory" ]
}

# Hours from a cold ccache, tens of minutes from a warm one: make check-full.
@test "every prefix of the series applies and builds (normal kernel)" {
	[ "${CHECK_FULL:-0}" = 1 ] || skip "a kernel build per patch: make check-full runs it"
	run "$REPO/scripts/series" check-build normal
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[-1]} == "series: every prefix of the "*" patches builds (normal): "* ]]
}
