# SPDX-License-Identifier: GPL-2.0
#
# What the kernel side is made of, for scripts/kernel/build.sh and
# scripts/series (sourced; both set REPO): our files at their kernel paths
# and our patches in number order.

# Our own kernel files: net/**, drivers/** and include/** (kernel-internal
# headers) go to the same path, uapi/** goes to include/uapi/**. patches/
# directories and top-level READMEs are not kernel files.
overlay_files() {
	local top dst
	for top in net drivers include uapi; do
		[ -d "$REPO/$top" ] || continue
		case $top in uapi) dst=include/uapi ;; *) dst=$top ;; esac
		(cd "$REPO/$top" && find . -type f ! -path './patches/*' \
			! -name 'README*' ! -name '.*' -printf '%P\n') |
			awk -v s="$REPO/$top/" -v d="$dst/" '{ print s $0 " " d $0 }'
	done | sort -k2
}

# All patches, ordered by their NNNN- number wherever they live.
patch_files() {
	local p
	for p in "$REPO"/net/patches/*.patch "$REPO"/drivers/patches/*.patch \
		 "$REPO"/uapi/patches/*.patch; do
		[ -f "$p" ] && printf '%s %s\n' "$(basename "$p")" "$p"
	done | sort | awk '
		{ n = substr($1, 1, 4)
		  if (n !~ /^[0-9][0-9][0-9][0-9]$/) { print "BAD " $2; next }
		  if (n in seen) { print "DUP " $2 " " seen[n]; next }
		  seen[n] = $2; print $2 }'
}

# Files a patch touches (paths relative to the kernel tree).
patch_targets() {
	awk '/^\+\+\+ / { sub(/^\+\+\+ [ab]\//, ""); sub(/\t.*/, ""); print }' "$1"
}
