#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/vm/bats-src and selftests/vm/bats-preprocess: the guests of
# make check read the suites as the host's bats preprocessed them, and
# bats runs them exactly as it runs them itself.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
SRC=$REPO/selftests/vm/bats-src
PRE=$REPO/selftests/vm/bats-preprocess
FIX=$BATS_TEST_DIRNAME/fixtures/bats-trace
STOCK=/usr/libexec/bats-core/bats-preprocess

# stock [VAR=VALUE...] SUITE: bats' own preprocess of SUITE
stock() { env BATS_ROOT=/usr "${@:1:$#-1}" "$STOCK" "${@: -1}" 2>/dev/null; }

setup() {
	[ -x "$STOCK" ] || skip "bats 1.8's bats-preprocess is not at $STOCK"
	# a stand-in for bats' own, to see when the cache sends a suite there
	printf '#!/bin/sh\necho "stock preprocess $*"\n' >"$BATS_TEST_TMPDIR/stub"
	chmod +x "$BATS_TEST_TMPDIR/stub"
}

@test "every suite read back byte for byte: the whole source for bats-exec-file, the test lines for bats-exec-suite" {
	local s n=0 suites
	cd "$REPO"
	suites=(selftests/*.bats selftests/host/*.bats "$FIX"/*.bats)
	"$SRC" --prepare "$BATS_TEST_TMPDIR/c" "${suites[@]}"
	for s in "${suites[@]}"; do
		diff <(stock CHECK_BATS_COMMENT_COMMANDS=1 "$s") \
			<(VM_BATS_SRC=$BATS_TEST_TMPDIR/c CHECK_BATS_COMMENT_COMMANDS=1 \
			  VM_BATS_PREPROCESS=$BATS_TEST_TMPDIR/stub "$PRE" "$s")
		# what bats-exec-suite keeps of a line: read -r strips the
		# blanks around it, then it must start "bats_test_function "
		diff <(stock "$s" | while read -r line; do
				[[ $line =~ ^bats_test_function\  ]] && echo "$line"
			done) \
			<(VM_BATS_SRC=$BATS_TEST_TMPDIR/c \
			  VM_BATS_PREPROCESS=$BATS_TEST_TMPDIR/stub "$PRE" "$s" |
			  while read -r line; do echo "$line"; done)
		n=$((n + 1))
	done
	[ "$n" -ge 40 ]
}

@test "a filter, a changed suite, one never prepared, one bats refused, no cache: bats' own preprocess runs" {
	local c=$BATS_TEST_TMPDIR/c t=$BATS_TEST_TMPDIR/t.bats
	cp "$FIX/teardown.bats" "$t"
	printf '# bats test_tags=a,,b\n@test "x" { true; }\n' >"$BATS_TEST_TMPDIR/bad.bats"
	"$SRC" --prepare "$c" "$t" "$BATS_TEST_TMPDIR/bad.bats"
	export VM_BATS_PREPROCESS=$BATS_TEST_TMPDIR/stub
	run env VM_BATS_SRC="$c" "$PRE" "$t"
	[[ $output == "bats_test_function "* ]]
	run env VM_BATS_SRC="$c" BATS_TEST_FILTER=x "$PRE" "$t"
	[ "$output" = "stock preprocess $t" ]
	run env -u VM_BATS_SRC "$PRE" "$t"
	[ "$output" = "stock preprocess $t" ]
	run env VM_BATS_SRC="$c" "$PRE" "$FIX/failures.bats"
	[ "$output" = "stock preprocess $FIX/failures.bats" ]
	run env VM_BATS_SRC="$c" "$PRE" "$BATS_TEST_TMPDIR/bad.bats"
	[ "$output" = "stock preprocess $BATS_TEST_TMPDIR/bad.bats" ]
	echo "# one more line" >>"$t"
	run env VM_BATS_SRC="$c" "$PRE" "$t"
	[ "$output" = "stock preprocess $t" ]
	# --prepare starts from an empty directory
	"$SRC" --prepare "$c" "$FIX/failures.bats"
	run env VM_BATS_SRC="$c" CHECK_BATS_COMMENT_COMMANDS=1 "$PRE" "$FIX/teardown.bats"
	[ "$output" = "stock preprocess $FIX/teardown.bats" ]
}

@test "bats through the cache (a private mount namespace): the same TAP as bats alone, failures and their stack traces included" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for a mount namespace"
	local f stock cached
	cd "$FIX"
	"$SRC" --prepare "$BATS_TEST_TMPDIR/c" *.bats
	for f in failures.bats setup-file.bats teardown.bats; do
		stock=$(bats --tap "$f" 2>&1) || true
		# /run a tmpfs of its own, as in the guest; there the stub
		# stands in for bats' own, and would fail any suite the cache
		# did not answer
		cached=$(DEVMEM_VM=1 unshare -m bash -c '
			mount -t tmpfs tmpfs /run &&
			"$1" "$2" bash -c "cp \"$3\" /run/bats-preprocess && bats --tap \"$4\"" 2>&1
			mountpoint "$5"' \
			- "$SRC" "$BATS_TEST_TMPDIR/c" "$BATS_TEST_TMPDIR/stub" "$f" "$STOCK") || true
		diff <(echo "$stock"; echo "$STOCK is a mountpoint") <(echo "$cached")
		[[ $stock == *"not ok "* ]]
	done
	# the host's bats-preprocess is its own again outside that namespace
	run mountpoint -q "$STOCK"
	[ "$status" -ne 0 ]
}

@test "bats-src: usage errors and installing outside the VM exit 2" {
	run "$SRC" only-one
	[ "$status" -eq 2 ]
	[ "$output" = "usage: bats-src --prepare DIR SUITE... | bats-src DIR CMD..." ]
	run env -u DEVMEM_VM "$SRC" "$BATS_TEST_TMPDIR" true
	[ "$status" -eq 2 ]
	[ "$output" = "bats-src: installs itself only inside the test VM" ]
}
