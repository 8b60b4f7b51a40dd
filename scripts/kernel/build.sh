#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build our 6.1 kernel: Debian's linux-source-6.1 plus the files and patches
# kept in net/, drivers/ and uapi/.
#
#   scripts/kernel/build.sh [normal|debug|prepare|headers [ARCH]]
#
# prepare only brings src/ up to date (base + our files + our patches).
# headers installs the tree's uapi headers for ARCH (default x86) into
# headers/ARCH/include: what user space builds against.
#
# Layout under $BUILD (default: <repo>/build/kernel):
#   base/        pristine extract of the tarball (never modified)
#   src/         working tree = base + our files + our patches
#   obj/         O= output of the normal kernel
#   obj-debug/   O= output of the debug kernel
#   headers/     installed uapi headers, per architecture
#
# Everything is incremental: the tarball is extracted once per base version,
# only files whose contents changed (or, our own files, that are newer than
# their copy) are written into src/, the config is regenerated only when a
# fragment changed, and kbuild does the rest.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$REPO/build/kernel}
TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
FLAVOUR=${1:-normal}
JOBS=${JOBS:-$(( $(nproc) + 1 ))}
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/devmem-tcp/ccache}
export CCACHE_BASEDIR=$REPO
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

die() { echo "kernel: error: $*" >&2; exit 1; }
say() { echo "kernel: $*"; }

case $FLAVOUR in
prepare) ;;
headers) HDR_ARCH=${2:-x86}
	case $HDR_ARCH in
	''|*[!a-z0-9_]*) die "bad architecture '$HDR_ARCH'" ;;
	esac ;;
normal) OBJ=$BUILD/obj
	FRAGMENTS=("$REPO/scripts/kernel/config/base.config"
		   "$REPO/scripts/kernel/config/net.config") ;;
debug)  OBJ=$BUILD/obj-debug
	FRAGMENTS=("$REPO/scripts/kernel/config/base.config"
		   "$REPO/scripts/kernel/config/net.config"
		   "$REPO/scripts/kernel/config/debug.config") ;;
*) die "unknown flavour '$FLAVOUR' (normal, debug, prepare or headers)" ;;
esac

[ -r "$TARBALL" ] || die "$TARBALL missing: run 'make deps' (package linux-source-6.1)"
command -v ccache >/dev/null || die "ccache missing: run 'make deps'"

mkdir -p "$BUILD"
exec 9>"$BUILD/.lock"
flock 9

# --- 1. the pristine base --------------------------------------------------
base_id() {
	local pkg
	pkg=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
	echo "$pkg $(stat -c '%s %Y' "$TARBALL")"
}

want=$(base_id)
have=$(cat "$BUILD/base.stamp" 2>/dev/null || true)
if [ "$want" != "$have" ] || [ ! -d "$BUILD/src" ]; then
	say "extracting $TARBALL (base changed or first build)"
	rm -rf "$BUILD/base" "$BUILD/src" "$BUILD/obj" "$BUILD/obj-debug" \
	       "$BUILD/managed.list" "$BUILD/base.stamp"
	mkdir -p "$BUILD/base.tmp"
	tar -xJf "$TARBALL" -C "$BUILD/base.tmp" --strip-components=1
	mv "$BUILD/base.tmp" "$BUILD/base"
	# src/ starts as hard links to base/: nothing writes into src/ in place
	# (kbuild writes to O=, and the sync below replaces files, never
	# rewrites them), so base/ stays pristine.
	cp -al "$BUILD/base" "$BUILD/src"
	echo "$want" >"$BUILD/base.stamp"
fi
BASE_VERSION=$(make -s -C "$BUILD/base" kernelversion 2>/dev/null) ||
	die "cannot read the kernel version of $BUILD/base (remove $BUILD to start over)"
PKG_VERSION=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)

# --- 2. stage our files and patches ------------------------------------------
. "$REPO/scripts/kernel/files.sh"

# Name the hunk that failed: "Hunk #N FAILED" lines plus that hunk's header.
explain_failure() {
	local patch=$1 log=$2 file n
	echo "kernel: error: patch $(basename "$patch") does not apply to Linux $BASE_VERSION:" >&2
	file=
	while IFS= read -r line; do
		case $line in
		"patching file "*) file=${line#patching file } ;;
		*"Hunk #"*FAILED*)
			n=$(sed -E 's/.*Hunk #([0-9]+) FAILED.*/\1/' <<<"$line")
			hdr=$(awk -v f="$file" -v n="$n" '
				/^\+\+\+ / { p = $2; sub(/^[ab]\//, "", p); cur = (p == f); h = 0 }
				cur && /^@@ / { if (++h == n) { print; exit } }' "$patch")
			echo "kernel: error:   $file: hunk #$n failed: $hdr" >&2 ;;
		*"can't find file"*|*"No file to patch"*|*"Only garbage"*|*"malformed"*)
			echo "kernel: error:   $line" >&2 ;;
		esac
	done <"$log"
}

STAGE=$BUILD/stage
rm -rf "$STAGE"
mkdir -p "$STAGE"
declare -A OURS=()   # kernel path -> 1 for files that are ours verbatim
declare -A PATCHED=() # kernel path -> 1 for files touched by a patch
MANAGED=()

while read -r srcf kpath; do
	mkdir -p "$STAGE/$(dirname "$kpath")"
	cp -p "$srcf" "$STAGE/$kpath"
	OURS[$kpath]=1
	MANAGED+=("$kpath")
done < <(overlay_files)

mapfile -t PATCHES < <(patch_files)
for p in "${PATCHES[@]}"; do
	case $p in
	BAD\ *) die "patch ${p#BAD } must be named NNNN-description.patch" ;;
	DUP\ *) set -- $p; die "patches $2 and $3 share the number $(basename "$2" | cut -c1-4)" ;;
	esac
	while read -r t; do
		[ -n "$t" ] || continue
		if [ -z "${OURS[$t]:-}" ] && [ -z "${PATCHED[$t]:-}" ]; then
			mkdir -p "$STAGE/$(dirname "$t")"
			[ -f "$BUILD/base/$t" ] && cp -p "$BUILD/base/$t" "$STAGE/$t"
			MANAGED+=("$t")
		fi
		PATCHED[$t]=1
	done < <(patch_targets "$p")
	log=$BUILD/patch.log
	if ! patch -d "$STAGE" -p1 -N -f --no-backup-if-mismatch -r - -i "$p" >"$log" 2>&1; then
		explain_failure "$p" "$log"
		exit 1
	fi
done

# --- 3. sync the stage into src/ ----------------------------------------------
changed=0
for k in "${MANAGED[@]}"; do
	s=$STAGE/$k d=$BUILD/src/$k
	if [ ! -e "$s" ]; then
		# a patch deleted it
		[ -e "$d" ] && { rm -f "$d"; changed=$((changed + 1)); }
		continue
	fi
	# Copied when its contents differ or (ours verbatim, like make:
	# touch rebuilds) it is newer than the copy. A copy gets the time of
	# copying, or the file's own if that is later: a file edited while a
	# build ran may be older than the object built from its previous
	# contents, and make must still see the new contents as new.
	if [ -n "${PATCHED[$k]:-}" ]; then
		cmp -s "$s" "$d" && continue
	else
		[ ! "$s" -nt "$d" ] && cmp -s "$s" "$d" && continue
	fi
	mkdir -p "$(dirname "$d")"
	rm -f "$d"
	cp "$s" "$d"
	[ "$s" -nt "$d" ] && touch -r "$s" "$d"
	changed=$((changed + 1))
done

# Files we managed last time but no longer do go back to the base (or away).
if [ -f "$BUILD/managed.list" ]; then
	declare -A NOW=()
	for k in "${MANAGED[@]}"; do NOW[$k]=1; done
	while read -r k; do
		[ -n "$k" ] && [ -z "${NOW[$k]:-}" ] || continue
		if [ -f "$BUILD/base/$k" ]; then
			cmp -s "$BUILD/base/$k" "$BUILD/src/$k" ||
				{ rm -f "$BUILD/src/$k"; cp "$BUILD/base/$k" "$BUILD/src/$k"; }
		else
			rm -f "$BUILD/src/$k"
		fi
		changed=$((changed + 1))
	done <"$BUILD/managed.list"
fi
printf '%s\n' "${MANAGED[@]}" >"$BUILD/managed.list"
rm -rf "$STAGE"
say "base: Linux $BASE_VERSION from linux-source-6.1 $PKG_VERSION; ${#PATCHES[@]} patch(es), $changed file(s) updated"
[ "$FLAVOUR" = prepare ] && exit 0
if [ "$FLAVOUR" = headers ]; then
	[ -d "$BUILD/src/arch/$HDR_ARCH" ] || die "no architecture '$HDR_ARCH' in the tree"
	hdr=$BUILD/headers/$HDR_ARCH
	make -C "$BUILD/src" O="$BUILD/hdr-obj-$HDR_ARCH" ARCH="$HDR_ARCH" -s \
		HOSTCC="ccache gcc" INSTALL_HDR_PATH="$hdr" headers_install
	say "installed $HDR_ARCH uapi headers: ${hdr#"$REPO"/}/include"
	exit 0
fi

# --- 4. config -----------------------------------------------------------------
# NM: kbuild runs nm on every object it builds (check-local-export), cache
# hits included. Plain GNU nm loads every linker plugin in bfd-plugins, and
# where LLVM's is installed each call maps libLLVM: 0.3 s an object, a
# third of a build from a warm ccache. gcc-nm loads GCC's plugin alone and
# prints the same table.
KMAKE=(make -C "$BUILD/src" O="$OBJ" -j"$JOBS" -s
       CC="ccache gcc" HOSTCC="ccache gcc" NM=gcc-nm
       KBUILD_BUILD_USER=devmem KBUILD_BUILD_HOST=vm)
mkdir -p "$OBJ"
# The config depends on the base, the fragments and any Kconfig we patch.
kconfigs=()
for k in "${MANAGED[@]}"; do
	case $k in */Kconfig*) [ -f "$BUILD/src/$k" ] && kconfigs+=("$BUILD/src/$k") ;; esac
done
cfg_id=$(cat <(echo "$want") "${FRAGMENTS[@]}" ${kconfigs[@]+"${kconfigs[@]}"} |
	 sha256sum | cut -d' ' -f1)
if [ ! -f "$OBJ/.config" ] || [ "$(cat "$OBJ/config.stamp" 2>/dev/null)" != "$cfg_id" ]; then
	say "configuring $FLAVOUR kernel (tinyconfig + ${FRAGMENTS[*]##*/})"
	[ -f "$OBJ/.config" ] && cp -p "$OBJ/.config" "$OBJ/.config.prev"
	"${KMAKE[@]}" tinyconfig >"$OBJ/merge.log" 2>&1 ||
		{ cat "$OBJ/merge.log" >&2; die "make tinyconfig failed"; }
	KCONFIG_CONFIG=$OBJ/.config "$BUILD/src/scripts/kconfig/merge_config.sh" \
		-m -O "$OBJ" "$OBJ/.config" "${FRAGMENTS[@]}" >>"$OBJ/merge.log" 2>&1 ||
		{ cat "$OBJ/merge.log" >&2; die "merging the config fragments failed"; }
	"${KMAKE[@]}" olddefconfig >>"$OBJ/merge.log" 2>&1 ||
		{ cat "$OBJ/merge.log" >&2; die "olddefconfig failed"; }
	# Every symbol a fragment asks for must have stuck; a silent drop means a
	# missing dependency and a kernel that lacks what the tests need.
	bad=$(awk '
		FNR == NR { cfg[$0] = 1; next }
		/^CONFIG_[A-Za-z0-9_]+=/ { if (!($0 in cfg)) print; next }
		/^# CONFIG_[A-Za-z0-9_]+ is not set/ {
			s = $2; found = 0
			for (c in cfg) if (index(c, s "=") == 1) found = 1
			if (found) print }' "$OBJ/.config" "${FRAGMENTS[@]}")
	if [ -n "$bad" ]; then
		echo "kernel: error: these fragment settings did not survive olddefconfig (missing dependency?):" >&2
		sed 's/^/kernel: error:   /' <<<"$bad" >&2
		rm -f "$OBJ/config.stamp"
		exit 1
	fi
	if [ -f "$OBJ/.config.prev" ] && cmp -s "$OBJ/.config" "$OBJ/.config.prev"; then
		mv "$OBJ/.config.prev" "$OBJ/.config"   # keep the old mtime
	fi
	rm -f "$OBJ/.config.prev"
	echo "$cfg_id" >"$OBJ/config.stamp"
fi

# --- 5. build ------------------------------------------------------------------
say "building $FLAVOUR kernel in ${OBJ#"$REPO"/} (-j$JOBS, ccache $CCACHE_DIR)"
"${KMAKE[@]}" bzImage
RELEASE=$(make -s -C "$BUILD/src" O="$OBJ" kernelrelease)
# Rewritten only when it changes, and whole: a guest may be reading it
# (make check runs the host tests, which build, beside guests).
cat >"$OBJ/version.tmp" <<EOF
base_version=$BASE_VERSION
base_package=linux-source-6.1 $PKG_VERSION
kernelrelease=$RELEASE
flavour=$FLAVOUR
EOF
if cmp -s "$OBJ/version.tmp" "$OBJ/version"; then
	rm -f "$OBJ/version.tmp"
else
	mv "$OBJ/version.tmp" "$OBJ/version"
fi
say "built $FLAVOUR kernel $RELEASE (base Linux $BASE_VERSION, linux-source-6.1 $PKG_VERSION): ${OBJ#"$REPO"/}/arch/x86/boot/bzImage"
