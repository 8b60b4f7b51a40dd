#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The kernel build recipe (scripts/kernel/build.sh): how our files and patches
# reach the kernel tree, failing patches, and incremental builds. Runs on
# the host against the tree `make kernel` extracted.

load lib/kernel-scratch

# A scratch repository (just the build recipe) and a scratch build
# directory that borrows the extracted base read-only.
setup() { scratch_kernel_setup; }

prepare() { BUILD=$T/build run "$T/repo/scripts/kernel/build.sh" prepare; }

@test "our files land at their kernel paths; uapi/ goes to include/uapi/" {
	mkdir -p "$T/repo/net/core" "$T/repo/drivers/net/netdevsim" "$T/repo/uapi/linux"
	echo 'int devmem_rig;' >"$T/repo/net/core/rig.c"
	echo 'int nsim_rig;' >"$T/repo/drivers/net/netdevsim/rig.c"
	echo '#define RIG 1' >"$T/repo/uapi/linux/rig.h"
	echo 'not a kernel file' >"$T/repo/net/README.md"
	prepare
	[ "$status" -eq 0 ]
	[[ $output == *"base: Linux 6.1."*"0 patch(es), 3 file(s) updated"* ]]
	cmp "$T/repo/net/core/rig.c" "$T/build/src/net/core/rig.c"
	cmp "$T/repo/drivers/net/netdevsim/rig.c" "$T/build/src/drivers/net/netdevsim/rig.c"
	cmp "$T/repo/uapi/linux/rig.h" "$T/build/src/include/uapi/linux/rig.h"
	[ ! -e "$T/build/src/net/README.md" ]
	[ ! -e "$T/build/src/include/uapi/patches" ]
}

@test "prepare is idempotent; touching a file of ours copies it again" {
	mkdir -p "$T/repo/net/core"
	echo 'int devmem_rig;' >"$T/repo/net/core/rig.c"
	make_patch net/patches/0001-rig.patch net/core/sock.c 3 '/* rig */'
	prepare
	[[ $output == *"1 patch(es), 2 file(s) updated"* ]]
	grep -qx '/\* rig \*/' "$T/build/src/net/core/sock.c"
	prepare
	[[ $output == *"1 patch(es), 0 file(s) updated"* ]]
	touch -d '+1 min' "$T/repo/net/core/rig.c"
	prepare
	[[ $output == *"1 patch(es), 1 file(s) updated"* ]]
	[ ! "$T/repo/net/core/rig.c" -nt "$T/build/src/net/core/rig.c" ]
}

@test "dropping a patch or a file of ours restores the base" {
	mkdir -p "$T/repo/net/core"
	echo 'int devmem_rig;' >"$T/repo/net/core/rig.c"
	make_patch net/patches/0001-rig.patch net/core/sock.c 3 '/* rig */'
	prepare
	rm "$T/repo/net/patches/0001-rig.patch" "$T/repo/net/core/rig.c"
	prepare
	[ "$status" -eq 0 ]
	[[ $output == *"0 patch(es), 2 file(s) updated"* ]]
	cmp "$KBUILD/base/net/core/sock.c" "$T/build/src/net/core/sock.c"
	[ ! -e "$T/build/src/net/core/rig.c" ]
}

@test "patches apply in number order across net/, drivers/ and uapi/" {
	make_patch drivers/patches/0001-first.patch net/core/sock.c 3 '/* first */'
	# the second patch is made against the first one's result
	cp "$KBUILD/base/net/core/sock.c" "$T/s1"
	sed '3a\/* first */' "$T/s1" >"$T/s2"
	sed '4a\/* second */' "$T/s2" >"$T/s3"
	mkdir -p "$T/x/a/net/core" "$T/x/b/net/core"
	cp "$T/s2" "$T/x/a/net/core/sock.c"; cp "$T/s3" "$T/x/b/net/core/sock.c"
	(cd "$T/x" && diff -u a/net/core/sock.c b/net/core/sock.c) >"$T/repo/net/patches/0002-second.patch" ||
		[ $? -eq 1 ]
	prepare
	[ "$status" -eq 0 ]
	cmp "$T/s3" "$T/build/src/net/core/sock.c"
}

@test "a patch that does not apply stops the build, naming the patch and the hunk" {
	make_patch net/patches/0001-good.patch net/core/sock.c 3 '/* good */'
	make_patch net/patches/0002-bad.patch net/core/dev.c 40 '/* bad */'
	sed -i 's/^ \(.*\)$/ \1 CHANGED/' "$T/repo/net/patches/0002-bad.patch"
	prepare
	[ "$status" -eq 1 ]
	[[ $output == *"kernel: error: patch 0002-bad.patch does not apply to Linux 6.1."* ]]
	[[ $output == *"kernel: error:   net/core/dev.c: hunk #1 failed: @@ -"* ]]
	# nothing reached the tree
	[ ! -e "$T/build/src/net/core/sock.c" ]
}

@test "badly named or duplicate-numbered patches are refused" {
	make_patch net/patches/fix.patch net/core/sock.c 3 '/* x */'
	prepare
	[ "$status" -eq 1 ]
	[[ $output == *"must be named NNNN-description.patch"* ]]
	rm "$T/repo/net/patches/fix.patch"
	make_patch net/patches/0001-a.patch net/core/sock.c 3 '/* x */'
	make_patch drivers/patches/0001-b.patch net/core/dev.c 3 '/* y */'
	prepare
	[ "$status" -eq 1 ]
	[[ $output == *"share the number 0001"* ]]
}

# CPU time, not wall time: make check runs the host tests beside guests,
# and a busy host stretches wall time at will. The no-op pass costs about
# 35 s of CPU on 2 cores (kbuild walking every directory).
@test "make kernel with nothing changed costs under 60 s of CPU and rewrites nothing" {
	local TIMEFORMAT='%U %S' img=$KBUILD/obj/arch/x86/boot/bzImage cpu
	[ -f "$img" ]
	before=$(stat -c %Y "$img" "$KBUILD/obj/version")
	{ time make -s -C "$REPO" kernel >"$BATS_TEST_TMPDIR/out" 2>&1; } 2>"$BATS_TEST_TMPDIR/cpu"
	cat "$BATS_TEST_TMPDIR/out"
	cpu=$(awk '{ printf "%d", $1 + $2 }' "$BATS_TEST_TMPDIR/cpu")
	echo "CPU: ${cpu}s"
	[ "$cpu" -lt 60 ]
	# neither the image nor the version file a guest reads is rewritten
	[ "$(stat -c %Y "$img" "$KBUILD/obj/version")" = "$before" ]
	grep -q 'built normal kernel 6\.1\..*(base Linux 6\.1\.' "$BATS_TEST_TMPDIR/out"
	grep -q '^base_version=6\.1\.' "$KBUILD/obj/version"
}

@test "touching a kernel .c file of ours rebuilds its object and relinks" {
	# kbuild's command lines hold the tree's absolute path, so the scratch
	# copy of the built kernel must sit at the real path: a private mount
	# namespace puts it there. The object tree is an overlay on the real
	# one, which spares a 2 GB copy, or a copy where overlayfs is missing.
	# One unchanged base .c file that none of our patches touch is claimed
	# as ours (a patched file syncs by content).
	# Two relinks of vmlinux (BTF, kallsyms): ten minutes on 2 cores, a
	# sixth of make check. make check-full runs it.
	[ "${CHECK_FULL:-0}" = 1 ] || skip "two vmlinux relinks: make check-full runs it"
	[ -f "$KBUILD/obj/vmlinux" ] || { echo "run 'make kernel' first" >&2; false; }
	[ "$(id -u)" = 0 ] || skip "needs root for a private mount namespace"
	S=$T/kbuild
	mkdir -p "$S/base"
	cp -al "$KBUILD/src" "$S/" 2>/dev/null || cp -a "$KBUILD/src" "$S/"
	cp -a "$KBUILD/base.stamp" "$KBUILD/managed.list" "$S/"
	mkdir -p "$S/obj" "$T/ovl/upper" "$T/ovl/work"
	# all of our kernel files, so that the sync changes nothing but the
	# claimed file
	for d in net drivers uapi include; do
		[ -d "$REPO/$d" ] && cp -r "$REPO/$d" "$T/repo/"
	done
	mkdir -p "$T/repo/net/core"
	run grep -l '^+++ b/net/core/utils.c$' "$REPO"/*/patches/*.patch
	[ -z "$output" ]
	cp "$KBUILD/base/net/core/utils.c" "$T/repo/net/core/utils.c"
	cat >"$T/steps" <<-EOS
	set -e
	mount --make-rprivate /
	mount -t overlay overlay -o lowerdir="$KBUILD/obj",upperdir="$T/ovl/upper",workdir="$T/ovl/work" "$S/obj" ||
		cp -a "$KBUILD/obj" "$S/"
	mount --bind "$KBUILD/base" "$S/base"
	mount --rbind "$S" "$KBUILD"
	o=$KBUILD/obj/net/core/utils.o v=$KBUILD/obj/vmlinux
	build() { BUILD=$KBUILD "$T/repo/scripts/kernel/build.sh" normal; }
	t0=\$(stat -c %y \$o \$v)
	build
	t1=\$(stat -c %y \$o \$v)
	touch "$T/repo/net/core/utils.c"
	build
	t2=\$(stat -c %y \$o \$v)
	echo "claimed: \$([ "\$t0" != "\$t1" ] && echo rebuilt || echo same)"
	echo "touched: \$(set -- \$t1; a=\$1\$2 b=\$4\$5; set -- \$t2;
		[ "\$a" != "\$1\$2" ] && [ "\$b" != "\$4\$5" ] && echo rebuilt-and-relinked || echo same)"
	EOS
	run unshare -m bash "$T/steps"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"claimed: rebuilt"* ]]
	[[ $output == *"touched: rebuilt-and-relinked"* ]]
	# only utils.o was compiled each time: no full rebuild (that an
	# unchanged tree rebuilds nothing, the test before this one shows)
	[ "$(grep -c '^kernel: built normal kernel' <<<"$output")" -eq 2 ]
}

@test "no kernel file of ours replaces a file the base already has" {
	# Our files are new files: one at a path the base uses would silently
	# drop the base's version (include/net/netdev_queues.h once did).
	# Changes to base files are patches.
	local f clash=
	while read -r f; do
		case $f in
		*/patches/*|*.md) continue ;;
		uapi/*) [ -e "$KBUILD/base/include/$f" ] && clash+=" $f" ;;
		*) [ -e "$KBUILD/base/$f" ] && clash+=" $f" ;;
		esac
	done < <(git -C "$REPO" ls-files net drivers include uapi)
	echo "replaces a base file:${clash:- none}"
	[ -z "$clash" ]
}

# kconfig_with FRAGMENT-LINES...: allnoconfig with the lines set (and
# what they select), on the tree make kernel prepared; the .config in
# $T/kc. One kconfig run: a tinyconfig, merge and olddefconfig took four.
kconfig_with() {
	local frag=$T/frag
	printf '%s\n' CONFIG_64BIT=y CONFIG_NET=y CONFIG_INET=y CONFIG_DEBUG_FS=y "$@" >"$frag"
	make -s -C "$KBUILD/src" O="$T/kc" KCONFIG_ALLCONFIG="$frag" \
		allnoconfig >/dev/null
}

@test "CONFIG_NET_DEVMEM: on exactly when dma-buf and page pools are" {
	# neither has a prompt: SYNC_FILE selects DMA_SHARED_BUFFER, and
	# netdevsim (patch 0038) PAGE_POOL
	kconfig_with CONFIG_SYNC_FILE=y CONFIG_NETDEVICES=y CONFIG_NETDEVSIM=y
	run grep -c '^CONFIG_NET_DEVMEM=y$' "$T/kc/.config"
	[ "$output" = 1 ]
	kconfig_with CONFIG_NETDEVICES=y CONFIG_NETDEVSIM=y
	run grep -c '^CONFIG_PAGE_POOL=y$' "$T/kc/.config"
	[ "$output" = 1 ]
	run grep -c 'CONFIG_NET_DEVMEM' "$T/kc/.config"
	[ "$output" = 0 ]
	kconfig_with CONFIG_SYNC_FILE=y
	run grep -c '^CONFIG_DMA_SHARED_BUFFER=y$' "$T/kc/.config"
	[ "$output" = 1 ]
	run grep -c 'CONFIG_PAGE_POOL=y' "$T/kc/.config"
	[ "$output" = 0 ]
	run grep -c 'CONFIG_NET_DEVMEM' "$T/kc/.config"
	[ "$output" = 0 ]
}
