#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of selftests/vm/scan-log, the kernel-log scanner behind the VM
# runner and the per-test kernel-log check (no VM needed).

SCAN=$BATS_TEST_DIRNAME/../../selftests/vm/scan-log

scan() { run "$SCAN" <<<"$1"; }

@test "clean log: no output, exit 0" {
	scan "[    0.000000] Linux version 6.1.192 (devmem@vm)
[    1.234567] lkdtm: Performing direct entry WARNING
[    1.300000] devmem-selftest: begin rig.bats #1 12.34
[    2.000000] sysrq: Emergency Sync"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "panic is named" {
	scan "[   10.123456] sysrq: Trigger a crash
[   10.123999] Kernel panic - not syncing: sysrq triggered crash"
	[ "$status" -eq 1 ]
	[ "$output" = "panic: Kernel panic - not syncing: sysrq triggered crash" ]
}

@test "WARNING is named, with the first line of the report" {
	scan "[    5.000000] ------------[ cut here ]------------
[    5.000001] WARNING: CPU: 1 PID: 77 at drivers/misc/lkdtm/bugs.c:93 lkdtm_WARNING+0x1b/0x30
[    5.000002] Modules linked in:"
	[ "$status" -eq 1 ]
	[ "$output" = "WARNING: WARNING: CPU: 1 PID: 77 at drivers/misc/lkdtm/bugs.c:93 lkdtm_WARNING+0x1b/0x30" ]
}

@test "KASAN is named before the generic BUG" {
	scan "[    7.1] ==================================================================
[    7.2] BUG: KASAN: slab-use-after-free in skb_release_data+0x1/0x2"
	[ "$status" -eq 1 ]
	[[ $output == "KASAN: BUG: KASAN: slab-use-after-free"* ]]
}

@test "lockdep reports are named lockdep, not WARNING" {
	for l in "WARNING: possible circular locking dependency detected" \
		 "WARNING: possible recursive locking detected" \
		 "WARNING: inconsistent lock state" \
		 "WARNING: suspicious RCU usage" \
		 "WARNING: bad unlock balance detected!" \
		 "INFO: trying to register non-static key."; do
		scan "[    3.000000] $l"
		[ "$status" -eq 1 ]
		[ "$output" = "lockdep: $l" ]
	done
}

@test "kmemleak is named" {
	scan "[   30.000000] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
	[ "$status" -eq 1 ]
	[[ $output == kmemleak:* ]]
	scan "unreferenced object 0xffff888003e4c000 (size 64):"
	[ "$status" -eq 1 ]
	[[ $output == kmemleak:* ]]
}

@test "oops, BUG, UBSAN and hung tasks are named" {
	scan "[    1.0] BUG: kernel NULL pointer dereference, address: 0000000000000000
[    1.1] #PF: supervisor read access in kernel mode"
	[ "$output" = "oops: BUG: kernel NULL pointer dereference, address: 0000000000000000" ]
	scan "[    1.0] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP"
	[[ $output == oops:* ]]
	scan "[    1.0] kernel BUG at net/core/skbuff.c:120!"
	[[ $output == oops:* ]]
	scan "[    1.0] Oops: 0000 [#1] PREEMPT SMP"
	[[ $output == oops:* ]]
	scan "[    1.0] BUG: sleeping function called from invalid context at mm/slab.h:1"
	[[ $output == BUG:* ]]
	scan "[    1.0] UBSAN: shift-out-of-bounds in net/core/dev.c:1:2"
	[[ $output == UBSAN:* ]]
	scan "[  200.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds."
	[[ $output == hung:* ]]
}

@test "the first report in log order wins; caller ids and CRs are stripped" {
	scan $'[    4.000000] [    T1] WARNING: CPU: 0 PID: 1 at a.c:1 f+0x0/0x1\r
[    4.500000] Kernel panic - not syncing: Fatal exception'
	[ "$status" -eq 1 ]
	[ "$output" = "WARNING: WARNING: CPU: 0 PID: 1 at a.c:1 f+0x0/0x1" ]
}

@test "reads files too" {
	printf '[ 1.0] BUG: unable to handle page fault for address: 1\n' >"$BATS_TEST_TMPDIR/log"
	run "$SCAN" "$BATS_TEST_TMPDIR/log"
	[ "$status" -eq 1 ]
	[[ $output == oops:* ]]
}

@test "--after: only lines after the last marker count; no marker exits 2" {
	log="[ 1.0] WARNING: CPU: 0 PID: 1 at before.c:1 f
[ 2.0] devmem-selftest: begin x.bats #1 42
[ 2.5] WARNING: CPU: 0 PID: 1 at during-1.c:1 f
[ 3.0] devmem-selftest: begin x.bats #2 43
[ 3.5] all quiet"
	run "$SCAN" --after "x.bats #2 43" <<<"$log"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$SCAN" --after "x.bats #1 42" <<<"$log"
	[ "$status" -eq 1 ]
	[ "$output" = "WARNING: WARNING: CPU: 0 PID: 1 at during-1.c:1 f" ]
	run "$SCAN" --after "x.bats #3 44" <<<"$log"
	[ "$status" -eq 2 ]
	[ "$output" = "marker not found" ]
}

@test "an announced report is not counted; others, and a second one, are" {
	log="[ 1.0] devmem-selftest: expect WARNING at page_pool_release_page
[ 1.1] page_pool: release of a memory provider's buffer refused
[ 1.2] WARNING: CPU: 0 PID: 9 at net/core/page_pool.c:533 page_pool_release_page+0x1/0x2
[ 1.3] devmem-selftest: expect end"
	run "$SCAN" <<<"$log"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# another function, or another kind, in the window still counts
	run "$SCAN" <<<"${log/page_pool_release_page+/other_fn+}"
	[ "$status" -eq 1 ]
	[ "$output" = "WARNING: WARNING: CPU: 0 PID: 9 at net/core/page_pool.c:533 other_fn+0x1/0x2" ]
	run "$SCAN" <<<"${log/WARNING: CPU/BUG: KASAN: use-after-free in page_pool_release_page CPU}"
	[ "$status" -eq 1 ]
	[[ $output == "KASAN: BUG: KASAN: use-after-free in page_pool_release_page"* ]]
	# a second one in the window counts
	run "$SCAN" <<<"$log
[ 1.4] devmem-selftest: expect WARNING at page_pool_release_page
[ 1.5] WARNING: CPU: 0 PID: 9 at a.c:1 page_pool_release_page+0x1/0x2
[ 1.6] WARNING: CPU: 0 PID: 9 at a.c:1 page_pool_release_page+0x1/0x2
[ 1.7] devmem-selftest: expect end"
	[ "$status" -eq 1 ]
	[ "$output" = "WARNING: WARNING: CPU: 0 PID: 9 at a.c:1 page_pool_release_page+0x1/0x2" ]
	# after the window, the same report counts
	run "$SCAN" <<<"$log
[ 2.0] WARNING: CPU: 0 PID: 9 at net/core/page_pool.c:533 page_pool_release_page+0x1/0x2"
	[ "$status" -eq 1 ]
	# a new test's marker closes a window its predecessor left open
	run "$SCAN" --after "x.bats #2" <<<"[ 1.0] devmem-selftest: expect WARNING at f
[ 2.0] devmem-selftest: begin x.bats #2
[ 2.1] WARNING: CPU: 0 PID: 9 at a.c:1 f+0x1/0x2"
	[ "$status" -eq 1 ]
}
