#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Our kernel patches and kernel files pass the base tree's
# scripts/checkpatch.pl --strict.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
CHECKPATCH=$REPO/build/kernel/base/scripts/checkpatch.pl

setup() {
	[ -f "$CHECKPATCH" ] || { echo "run 'make kernel' first (extracts the base tree)" >&2; return 1; }
}

checkpatch() { perl "$CHECKPATCH" --strict --no-tree --terse --show-types "$@"; }

@test "every patch is checkpatch --strict clean and has a description" {
	n=0
	for p in "$REPO"/{net,drivers,uapi}/patches/*.patch; do
		[ -f "$p" ] || continue
		n=$((n + 1))
		echo "# $p"
		checkpatch "$p"
		# a real description: a Subject and at least one line of prose
		grep -q '^Subject: \[PATCH\] ' "$p"
		[ "$(sed -n '/^Subject:/,/^---$/p' "$p" | grep -cv -e '^Subject:' -e '^---$' -e '^$')" -ge 1 ]
	done
	[ "$n" -ge 1 ]
}

@test "every kernel source file of ours is checkpatch --strict clean" {
	while IFS= read -r f; do
		echo "# $f"
		checkpatch -f "$f"
	done < <(cd "$REPO" && find net drivers include uapi -name '*.[ch]' ! -path '*/patches/*')
}
