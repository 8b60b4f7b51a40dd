#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/lib/bats-trace.bash, the cheaper per-command trap the VM suites
# run under: every failure is reported exactly as bats 1.8 reports it.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
LIB=$REPO/selftests/lib/bats-trace.bash
FIX=$BATS_TEST_DIRNAME/fixtures/bats-trace

# same_report FIXTURE FAILURES: the fixture's TAP, stock and with the
# library, are the same, with FAILURES tests failed.
same_report() {
	local stock lite
	cd "$FIX"
	stock=$(bats --tap "$1" 2>&1) || true
	lite=$(BATS_TRACE_LIB=$LIB bats --tap "$1" 2>&1) || true
	diff <(echo "$stock") <(echo "$lite")
	[ "$(grep -c '^not ok' <<<"$stock")" -eq "$2" ]
	[ "$(grep -c '^# (' <<<"$stock")" -eq "$2" ]
}

@test "bats is 1.8, which the library is written for" {
	run bats --version
	[ "$status" -eq 0 ]
	[[ $output == "Bats 1.8."* ]]
}

@test "failures in tests, functions, other files, subshells, pipelines: the same report" {
	same_report failures.bats 11
}

@test "a failing setup_file: the same report" {
	same_report setup-file.bats 1
}

@test "failing setup and teardown: the same report" {
	same_report teardown.bats 3
}

@test "loaded under bats 1.8, it replaces the trap; VM_BATS_TRACE=stock and other versions keep bats' own" {
	local stock
	stock=$(declare -f bats_debug_trap)
	[[ $stock != *VM_TRACE_LAST* ]]
	VM_BATS_TRACE=stock source "$LIB"
	[ "$(declare -f bats_debug_trap)" = "$stock" ]
	BATS_VERSION=1.9.0 source "$LIB"
	[ "$(declare -f bats_debug_trap)" = "$stock" ]
	source "$LIB"
	[[ $(declare -f bats_debug_trap) == *VM_TRACE_LAST* ]]
}

@test "bats -T still times each test, in milliseconds" {
	# (written with printf: bats would take a line that starts with
	# "@test" here for a test of this file)
	printf 'source "%s"\n%s "sleeps 0.3 s" {\n\tsleep 0.3\n}\n' \
		"$LIB" @test >"$BATS_TEST_TMPDIR/t.bats"
	run bats -T --tap "$BATS_TEST_TMPDIR/t.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} =~ ^ok\ 1\ sleeps\ 0.3\ s\ in\ ([0-9]+)ms$ ]]
	[ "${BASH_REMATCH[1]}" -ge 300 ]
	[ "${BASH_REMATCH[1]}" -lt 10000 ]
}
