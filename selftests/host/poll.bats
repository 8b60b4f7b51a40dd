#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/lib/poll.bash, which the VM suites wait with: wait_until's
# bound, and wait_pid's exit status, bound and kill.

load ../lib/poll

@test "wait_until: succeeds once the command does; fails once the time is up" {
	local flag=$BATS_TEST_TMPDIR/flag
	(nap 0.3; touch "$flag") &
	wait_until 10 test -e "$flag"
	run wait_until 1 false
	[ "$status" -eq 1 ]
}

@test "wait_pid: a job's exit status, 0 and not" {
	true &
	wait_pid 10 $!
	(exit 3) &
	local pid=$! rc=0
	wait_pid 10 "$pid" || rc=$?
	[ "$rc" -eq 3 ]
}

@test "wait_pid: a job still running after SECS is killed and named, status 124" {
	sleep 600 &
	local pid=$! rc=0 start=$SECONDS
	wait_pid 1 "$pid" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
	[ "$rc" -eq 124 ]
	[ "$((SECONDS - start))" -le 3 ]
	[ "$(cat "$BATS_TEST_TMPDIR/err")" = "wait_pid: process $pid still running after 1 s: killed" ]
	# gone, and reaped
	run kill -0 "$pid"
	[ "$status" -ne 0 ]
}
