# SPDX-License-Identifier: GPL-2.0
#
# A scratch checkout for tests of the kernel build recipe and the series
# export: $T/repo holds scripts/kernel and scripts/series and no files or
# patches of ours, $T/build a build directory that borrows the base tree
# `make kernel` extracted, read-only (an empty src/: prepare fills in only
# what it manages).

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
KBUILD=$REPO/build/kernel

scratch_kernel_setup() {
	[ -f "$KBUILD/base.stamp" ] && [ -d "$KBUILD/base" ] ||
		{ echo "run 'make kernel' first" >&2; return 1; }
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/repo/scripts" "$T/repo/net/patches" "$T/repo/drivers/patches" \
		 "$T/repo/uapi" "$T/build/src"
	cp -r "$REPO/scripts/kernel" "$REPO/scripts/series" "$T/repo/scripts/"
	ln -s "$KBUILD/base" "$T/build/base"
	cp "$KBUILD/base.stamp" "$T/build/"
}

# make_patch NAME FILE N TEXT [SUBJECT]: the patch $T/repo/NAME, which adds
# the line TEXT after line N of the base's FILE, with a Subject (default
# "test") and a one-line description
make_patch() {
	local name=$1 file=$2 n=$3 text=$4 subject=${5:-test}
	mkdir -p "$T/a/$(dirname "$file")" "$T/b/$(dirname "$file")"
	cp "$KBUILD/base/$file" "$T/a/$file"
	sed "${n}a\\$text" "$KBUILD/base/$file" >"$T/b/$file"
	{ printf 'From: a <a@b.invalid>\nSubject: [PATCH] %s\n\nWhy.\n---\n' "$subject"
	  (cd "$T" && diff -u "a/$file" "b/$file") || [ $? -eq 1 ]; } >"$T/repo/$name"
	rm -rf "$T/a" "$T/b"
}
