#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The tree's user ABI as user space sees it, without a kernel tree:
#
#   scripts/uapi-headers.sh OUTDIR
#
# OUTDIR gets uapi/'s own headers (linux/netdev.h, ...) and, for every
# installed uapi header that a uapi/patches/NNNN-*.patch changes, the
# host's copy (linux-libc-dev, Linux 6.1 on Debian 12) with that patch
# applied. That is what `make headers` installs from our kernel tree, for
# the files we change; everything else comes from the host's headers as
# usual. Only the x86 view: include/uapi/X becomes X, and
# arch/x86/include/uapi/asm/X becomes asm/X. A hunk that does not apply
# exactly (no fuzz) stops with the patch, the file and patch's message.
#
# Environment: SYSTEM_INCLUDE (default /usr/include), MULTIARCH (default
# x86_64-linux-gnu, where Debian keeps asm/).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
INC=${SYSTEM_INCLUDE:-/usr/include}
MULTIARCH=${MULTIARCH:-x86_64-linux-gnu}

die() { echo "uapi-headers: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: scripts/uapi-headers.sh OUTDIR" >&2; exit 2; }
OUT=$1
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
command -v patch >/dev/null || die "patch missing: run 'make deps'"

# kernel path -> installed path (relative to OUTDIR), or nothing when
# user space on x86 never sees the file.
installed_path() {
	case $1 in
	include/uapi/*) echo "${1#include/uapi/}" ;;
	arch/x86/include/uapi/*) echo "${1#arch/x86/include/uapi/}" ;;
	esac
}

# where the host keeps the unpatched copy of an installed path
host_copy() {
	case $1 in
	asm/*) echo "$INC/$MULTIARCH/$1" ;;
	*) echo "$INC/$1" ;;
	esac
}

mkdir -p "$(dirname "$OUT")"
STAGE=$(mktemp -d "${OUT%/}.tmp.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/out" "$STAGE/tree"

# uapi/'s own files, with their include guards as headers_install
# writes them (_UAPI_X becomes _X)
(cd "$REPO/uapi" && find . -name '*.h' ! -path './patches/*' -print0) |
	while IFS= read -r -d '' f; do
		mkdir -p "$STAGE/out/$(dirname "$f")"
		sed -E 's@^#(ifndef|define|endif[[:space:]]*/[*])[[:space:]]*_UAPI@#\1 @' \
			"$REPO/uapi/$f" >"$STAGE/out/$f"
	done

shopt -s nullglob
for p in "$REPO"/uapi/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	name=$(basename "$p")
	# the patch's sections for files user space sees
	awk -v tree="$STAGE/tree" -v sel="$STAGE/sel.patch" '
		/^diff --git a\// {
			path = $3; sub(/^a\//, "", path)
			keep = (path ~ /^include\/uapi\// || path ~ /^arch\/x86\/include\/uapi\//)
			if (keep) print path > (tree "/.files")
		}
		keep { print > sel }
	' "$p"
	[ -s "$STAGE/tree/.files" ] || continue
	while read -r kpath; do
		ipath=$(installed_path "$kpath")
		[ -e "$STAGE/tree/$kpath" ] && continue
		src=$(host_copy "$ipath")
		[ -r "$src" ] || die "$name changes $kpath, but the host has no $src (package linux-libc-dev)"
		mkdir -p "$STAGE/tree/$(dirname "$kpath")"
		cp "$src" "$STAGE/tree/$kpath"
	done <"$STAGE/tree/.files"
	if ! log=$(patch -d "$STAGE/tree" -p1 -N -F0 --no-backup-if-mismatch -r - \
			-i "$STAGE/sel.patch" 2>&1); then
		die "$name does not apply to the host's installed headers: $(tr '\n' ' ' <<<"$log")"
	fi
	while read -r kpath; do
		ipath=$(installed_path "$kpath")
		mkdir -p "$STAGE/out/$(dirname "$ipath")"
		cp "$STAGE/tree/$kpath" "$STAGE/out/$ipath"
	done <"$STAGE/tree/.files"
	rm -f "$STAGE/tree/.files" "$STAGE/sel.patch"
done

rm -rf "$OUT"
mv "$STAGE/out" "$OUT"
