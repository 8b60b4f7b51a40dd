#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What net.config (the networking of a distribution kernel) costs the
# normal test kernel: builds it from scratch twice, without ccache, with
# base.config alone and with base.config + net.config, then boots each
# kernel ROUNDS times, alternating, in the project's VM.
#
# usage: scripts/kernel/config-cost.sh [ROUNDS]   (default 3)
#
# Build cost is reported as CPU seconds (user + system of the whole make),
# which other load on the host does not change much; the wall time on an
# idle host with N cores is about that divided by N. Boot cost is the
# guest's time from power-on to starting init (its printk clock) and the
# host's wall time of a VM run of "true", medians of ROUNDS boots.
# Needs the prepared source tree: run scripts/kernel/build.sh normal first.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$REPO/build/kernel/src
CFG=$REPO/scripts/kernel/config
ROUNDS=${1:-3}
JOBS=$(nproc)
WORK=$(mktemp -d /tmp/config-cost.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

[ -x "$SRC/scripts/kconfig/merge_config.sh" ] ||
	{ echo "config-cost: no prepared kernel source; run scripts/kernel/build.sh normal" >&2; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# build NAME FRAGMENT...: a cold build into $WORK/NAME; prints the CPU
# seconds, objects built and bzImage size.
build() {
	local name=$1 obj=$WORK/$1 t
	shift
	mkdir -p "$obj"
	make -s -C "$SRC" O="$obj" tinyconfig >/dev/null
	KCONFIG_CONFIG=$obj/.config "$SRC/scripts/kconfig/merge_config.sh" \
		-m -O "$obj" "$obj/.config" "$@" >"$obj/config.log" 2>&1 ||
		{ cat "$obj/config.log" >&2; exit 1; }
	make -s -C "$SRC" O="$obj" olddefconfig >>"$obj/config.log" 2>&1 ||
		{ cat "$obj/config.log" >&2; exit 1; }
	/usr/bin/time -o "$obj/time" -f '%U %S' \
		make -s -C "$SRC" O="$obj" -j"$JOBS" bzImage >"$obj/build.log" 2>&1 ||
		{ tail -n 20 "$obj/build.log" >&2; exit 1; }
	t=$(tail -n1 "$obj/time")
	printf '%s: build %.0f CPU s, %d objects, bzImage %d KiB\n' "$name" \
		"$(awk '{ print $1 + $2 }' <<<"$t")" \
		"$(find "$obj" -name '*.o' ! -name '*.mod.o' | wc -l)" \
		$(($(stat -c %s "$obj/arch/x86/boot/bzImage") / 1024))
}

build base "$CFG/base.config"
build net "$CFG/base.config" "$CFG/net.config"

for ((i = 0; i < ROUNDS; i++)); do
	for name in base net; do
		start=$(date +%s.%N)
		"$REPO/selftests/vm/run" --kernel "$WORK/$name/arch/x86/boot/bzImage" \
			-- true >"$WORK/$name.run" 2>&1
		end=$(date +%s.%N)
		log=$(sed -n 's/.*console log: \(.*\)$/\1/p' "$WORK/$name.run" | tail -n1)
		sed -n 's/^\[ *\([0-9.]*\)\] Run .* as init process.*/\1/p' "$log" \
			>>"$WORK/$name.init"
		awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' >>"$WORK/$name.wall"
	done
done
for name in base net; do
	printf '%s: init started at %s s (guest clock), VM run of "true" %s s (host), medians of %d\n' \
		"$name" "$(median <"$WORK/$name.init")" "$(median <"$WORK/$name.wall")" "$ROUNDS"
done
