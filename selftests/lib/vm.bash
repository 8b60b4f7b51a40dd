# SPDX-License-Identifier: GPL-2.0
#
# Common helpers for the Bats suites that run inside the test VM.
#
#   load lib/vm
#
# Every test writes a unique marker to /dev/kmsg before it starts and fails
# if the kernel log after its marker shows a problem report (see
# selftests/vm/scan-log), so a WARNING, KASAN or lockdep report is pinned on the
# test that caused it. A suite that needs its own per-test set-up defines
# test_setup / test_teardown instead of setup / teardown.

VM_SCAN_AWK=${VM_REPO:-$BATS_TEST_DIRNAME/..}/selftests/vm/scan-log.awk

# bats' per-command trap, made cheap enough for TCG (see the file).
source "${BASH_SOURCE[0]%/*}/bats-trace.bash"

# Suites are written for the VM: refuse to run elsewhere rather than poke
# at the host's kernel.
vm_require_guest() {
	if [ "${DEVMEM_VM:-}" != 1 ]; then
		echo "these tests run inside the test VM: make vm CMD='bats $BATS_TEST_FILENAME'" >&2
		return 1
	fi
}

kmsg_mark() {
	KMSG_MARK="devmem-selftest: begin ${BATS_TEST_FILENAME##*/} #$BATS_TEST_NUMBER $$.$RANDOM$RANDOM ---"
	echo "$KMSG_MARK" >/dev/kmsg
}

# Kernel log since this test's marker; "" when the marker is gone.
kmsg_since_mark() {
	dmesg | awk -v m="$KMSG_MARK" 'index($0, m) { on = 1; next } on'
}

kmsg_check() {
	local report rc=0
	# scan-log's awk program itself: an exec of bash less per test.
	report=$(dmesg | awk -v mark="$KMSG_MARK" -f "$VM_SCAN_AWK") || rc=$?
	case $rc in
	0) return 0 ;;
	2) echo "kernel log lost this test's marker (log buffer overrun?)" >&2
	   return 1 ;;
	esac
	echo "kernel: $report" >&2
	echo "--- kernel log since the test started ---" >&2
	kmsg_since_mark | head -n 200 >&2
	return 1
}

# kmsg_expect KIND FUNCTION ... kmsg_expect_end: the test provokes one
# report on purpose in between (e.g. WARNING page_pool_release_page): the
# scanner lets the first KIND report naming FUNCTION pass (scan-log).
kmsg_expect() { echo "devmem-selftest: expect $1 at $2" >/dev/kmsg; }
kmsg_expect_end() { echo "devmem-selftest: expect end" >/dev/kmsg; }

# True when kmemleak tracks allocations: the kernel has it and was not
# booted with kmemleak=off (selftests/vm/run --no-kmemleak).
kmemleak_active() {
	local cmdline
	[ -w /sys/kernel/debug/kmemleak ] || return 1
	read -r cmdline </proc/cmdline
	[[ " $cmdline " != *" kmemleak=off "* ]]
}

# Where kmemleak is active: scan now and fail on any new suspected leak.
# kmemleak ignores objects younger than 5 s, so a test that wants its own
# leaks caught waits for that before calling this.
kmemleak_check() {
	local f=/sys/kernel/debug/kmemleak leaks
	kmemleak_active || return 0
	echo scan >"$f"
	leaks=$(cat "$f")
	[ -z "$leaks" ] && return 0
	echo "kmemleak reports:" >&2
	head -n 100 <<<"$leaks" >&2
	return 1
}

# on_debug DEBUG NORMAL: DEBUG on the debug kernel, else NORMAL (sizes
# of transfers: the debug kernel moves each byte 5-7 times slower).
on_debug() {
	if [ "${VM_FLAVOUR:-normal}" = debug ]; then echo "$1"; else echo "$2"; fi
}

# Every test starts with the WARN_ONCE()/WARN_ON_ONCE() state cleared, so
# that a once-only warning an earlier test of the boot already provoked
# shows again in the test that provokes it next.
setup() {
	vm_require_guest || return 1
	echo 1 >/sys/kernel/debug/clear_warn_once
	kmsg_mark
	if declare -F test_setup >/dev/null; then test_setup; fi
}

teardown() {
	local rc=0
	if declare -F test_teardown >/dev/null; then test_teardown || rc=$?; fi
	kmsg_check || rc=1
	return $rc
}
