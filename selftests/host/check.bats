#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/check's dealing of VM suites to parallel workers (--plan), on a
# scratch tree with made-up suites and weights.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
	T=$BATS_TEST_TMPDIR/tree
	mkdir -p "$T/selftests"
	cp "$REPO/selftests/check" "$T/selftests/check"
	for s in a b c d e; do : >"$T/selftests/$s.bats"; done
	cat >"$T/selftests/weights" <<-EOF
		# suite normal debug
		a.bats 1 400
		b.bats 2 250
		c.bats 1 200
		d.bats 3 150
	EOF
}

plan() { CHECK_JOBS=$1 run "$T/selftests/check" --plan "${@:2}"; }

# Suites of run NAME (e.g. vm-debug.2) in the last plan, one per line.
run_suites() {
	sed -n "s|^$1: ||p" <<<"$output" | tr ' ' '\n' | sed 's|^selftests/||'
}

# dealt STAGE...: the suites the last plan dealt to runs of STAGEs on
# workers 1-3, sorted, on one line.
dealt() {
	local st w
	for st; do
		for w in 1 2 3; do run_suites "$st.$w"; done
	done | sort | tr '\n' ' '
}

@test "one worker: every suite in one run per kernel, heaviest first" {
	plan 1
	[ "$status" -eq 0 ]
	[ "$(run_suites vm-debug.1 | tr '\n' ' ')" = "a.bats e.bats b.bats c.bats d.bats " ]
	[ "$(run_suites vm.1 | sort | tr '\n' ' ')" = "a.bats b.bats c.bats d.bats e.bats " ]
	grep -qx "host.1: the host tests, then this worker's guests" <<<"$output"
	# debug 400+250+200+150+300 (e.bats is not listed: 300 on each
	# kernel), normal 1+2+1+3+300, the host stage 300 (not listed)
	grep -qx 'worker 1: 1907 s' <<<"$output"
}

@test "the host stage is dealt like a suite: by its weight, to the lighter worker" {
	echo 'host 500' >>"$T/selftests/weights"
	plan 2
	[ "$status" -eq 0 ]
	# host 500 -> w1; debug a 400 -> w2; normal e 300 -> w2 (700);
	# debug e 300 -> w1 (800), b 250 -> w2 (950), c 200 -> w1 (1000),
	# d 150 -> w2 (1100); normal d, b, a, c (3, 2, 1, 1) -> w1 (1007)
	grep -qx "host.1: the host tests, then this worker's guests" <<<"$output"
	[ "$(grep -c '^host\.' <<<"$output")" = 1 ]
	[ "$(run_suites vm.2 | tr '\n' ' ')" = "e.bats " ]
	grep -qx 'worker 1: 1007 s' <<<"$output"
	grep -qx 'worker 2: 1100 s' <<<"$output"
	# without a VM stage it is not dealt
	plan 2 host
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "two workers: each suite once per kernel, heaviest first to the lighter worker" {
	plan 2 vm-debug
	[ "$status" -eq 0 ]
	# a 400 -> w1; e 300 -> w2; b 250 -> w2 (550); c 200 -> w1 (600);
	# d 150 -> w2 (700)
	[ "$(run_suites vm-debug.1 | tr '\n' ' ')" = "a.bats c.bats " ]
	[ "$(run_suites vm-debug.2 | tr '\n' ' ')" = "e.bats b.bats d.bats " ]
	grep -qx 'worker 1: 600 s' <<<"$output"
	grep -qx 'worker 2: 700 s' <<<"$output"
	[ "$(grep -c '^vm\.' <<<"$output")" -eq 0 ]
}

@test "both kernels over three workers: nothing lost, nothing twice" {
	plan 3
	[ "$status" -eq 0 ]
	for st in vm vm-debug; do
		[ "$(dealt "$st")" = "a.bats b.bats c.bats d.bats e.bats " ]
	done
}

@test "more workers than suites: idle workers get nothing" {
	plan 7 vm
	[ "$status" -eq 0 ]
	[ "$(grep -c '^vm\.' <<<"$output")" = 5 ]
	[ "$(grep -c ' 0 s$' <<<"$output")" = 2 ]
}

@test "bad CHECK_JOBS and unknown stages are refused with exit 2" {
	for j in 0 x -1 2x; do
		plan "$j"
		[ "$status" -eq 2 ]
		[[ $output == *"CHECK_JOBS must be a positive number"* ]]
	done
	plan 2 vm bogus
	[ "$status" -eq 2 ]
	[[ $output == *"unknown stage 'bogus'"* ]]
}

# A stand-in for selftests/vm/run: "ok" for every suite named in CMD, except
# that a suite called fail*.bats fails and one called crash*.bats makes
# the runner report a kernel problem (exit 125) after its TAP. CMD must be
# bats under selftests/vm/bats-src, with every suite preprocessed for it.
fake_runner() {
	mkdir -p "$T/selftests/vm"
	cp "$REPO/selftests/vm/bats-src" "$REPO/selftests/vm/bats-preprocess" "$T/selftests/vm/"
	cat >"$T/selftests/vm/run" <<-'EOF_RUN'
		#!/bin/bash
		flav=normal
		while [ "$1" != -- ]; do
			case $1 in
			--debug) flav=debug ;;
			--no-kmemleak) flav+=-nokmemleak ;;
			esac
			shift
		done
		shift  # --
		set -- $1
		[ "$1 $2 $3 $4 $5" = "selftests/vm/bats-src $PWD/build/check/bats-src bats -T --tap" ] ||
			{ echo "fake runner: CMD is not bats under bats-src: $*" >&2; exit 99; }
		shift 5
		for s in "$@"; do
			k=$PWD/$s
			[ -f "$PWD/build/check/bats-src/${k//\//%}.src" ] ||
				{ echo "fake runner: $s was not preprocessed" >&2; exit 99; }
		done
		echo "1..$#"
		n=0 rc=0
		for s in "$@"; do
			n=$((n + 1))
			case ${s##*/} in
			fail*) echo "not ok $n $flav $s"; rc=1
				echo "# (in test file $s, line 3)"
				for k in $(seq 2 25); do echo "# out $k"; done ;;
			crash*) echo "ok $n $flav $s"; rc=125
				echo "vm: FAIL: kernel WARNING: made up" >&2 ;;
			*) echo "ok $n $flav $s" ;;
			esac
		done
		exit $rc
	EOF_RUN
	chmod +x "$T/selftests/vm/run"
}

@test "one and two workers: every suite runs once per kernel and is counted" {
	fake_runner
	for j in 1 2; do
		CHECK_JOBS=$j run "$T/selftests/check" vm vm-debug
		echo "$output"
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = "10 passed, 0 failed" ]
		for s in a b c d e; do
			[ "$(grep -c "^\[vm\.[1-$j]\] ok [0-9]* normal selftests/$s.bats" <<<"$output")" = 1 ]
			[ "$(grep -c "^\[vm-debug\.[1-$j]\] ok [0-9]* debug selftests/$s.bats" <<<"$output")" = 1 ]
		done
		ls "$T/build/check/vm.$j.tap" "$T/build/check/vm-debug.$j.tap"
	done
}

@test "the host stage runs in a worker beside the others' guests; its results are counted once" {
	fake_runner
	mkdir -p "$T/selftests/host"
	printf '@test "h1" { true; }\n@test "h2" { false; }\n@test "h3" { skip "no"; }\n' \
		>"$T/selftests/host/h.bats"
	echo 'host 2000' >>"$T/selftests/weights"
	CHECK_JOBS=2 run "$T/selftests/check"
	echo "$output"
	[ "$status" -eq 1 ]
	# worker 1 runs the host tests and nothing else; worker 2 every suite
	grep -qx '\[host\] ok 1 h1 in [0-9]*ms' <<<"$output"
	grep -qx '\[host\] not ok 2 h2 in [0-9]*ms' <<<"$output"
	grep -qx '== host: [0-9]*s' <<<"$output"
	[ "$(grep -c '^\[vm\.2\] ok [0-9]* normal selftests/' <<<"$output")" = 5 ]
	[ "$(grep -c '^\[vm-debug\.2\] ok [0-9]* debug selftests/' <<<"$output")" = 5 ]
	[ "$(grep -c '^\[vm[^]]*\.1\]' <<<"$output")" = 0 ]
	grep -qx '== host and VM stages: [0-9]*s with 2 worker(s)' <<<"$output"
	grep -qx 'host: not ok 2 h2 in [0-9]*ms' <<<"$output"
	[ "${lines[-1]}" = "11 passed, 1 failed, 1 skipped" ]
	grep -q '^ok 1 h1' "$T/build/check/host.tap"
	# alone, the host stage runs as it is, unprefixed
	run "$T/selftests/check" host
	[ "$status" -eq 1 ]
	grep -qx 'ok 1 h1 in [0-9]*ms' <<<"$output"
	[ "${lines[-1]}" = "1 passed, 1 failed, 1 skipped" ]
}

@test "the default is one worker per CPU, as far as memory holds 4 GiB each" {
	run env -u CHECK_JOBS "$T/selftests/check" --plan vm
	[ "$status" -eq 0 ]
	mem=$(awk '$1 == "MemAvailable:" { print int($2 / (4 * 1024 * 1024)) }' /proc/meminfo)
	[ "$mem" -ge 1 ] || mem=1
	want=$(nproc)
	[ "$want" -le "$mem" ] || want=$mem
	[ "$(grep -c '^worker ' <<<"$output")" = "$want" ]
}

@test "a failing test and a runner's kernel report both fail the check" {
	fake_runner
	: >"$T/selftests/fail1.bats"
	: >"$T/selftests/crash1.bats"
	CHECK_JOBS=2 run "$T/selftests/check" vm-debug
	echo "$output"
	[ "$status" -eq 1 ]
	# 6 ok (crash1 included), fail1 not ok, plus one for the runner's report
	[ "${lines[-1]}" = "6 passed, 2 failed" ]
	grep -q '^vm-debug\.[12]: not ok [0-9]* debug selftests/fail1.bats' <<<"$output"
	grep -q '^vm-debug\.[12]: vm: FAIL: kernel WARNING: made up' <<<"$output"
	# the failures come last, each with its first 4 and last 16 lines of
	# diagnostics
	[[ ${lines[-2]} =~ ^vm-debug\.[12]:\ vm:\ FAIL:\ kernel\ WARNING:\ made\ up$ ]]
	want=$(printf '%s\n' "    # (in test file selftests/fail1.bats, line 3)" \
		"    # out 2" "    # out 3" "    # out 4" "    # (5 lines left out)"
		for k in $(seq 10 25); do echo "    # out $k"; done)
	got=$(awk '/^vm-debug/ { on = / not ok [0-9]+ debug selftests\/fail1.bats$/; next }
		   on' <<<"$output")
	[ "$got" = "$want" ]
}

@test "debug-kmemleak-off: a listed suite's debug run boots with kmemleak off, named with its reason" {
	fake_runner
	printf '# comment\nb.bats  too slow there\n' >"$T/selftests/debug-kmemleak-off"
	plan 2
	[ "$status" -eq 0 ]
	[ "$(dealt vm-debug)" = "a.bats c.bats d.bats e.bats " ]
	[ "$(dealt vm-debug-nokmemleak)" = "b.bats " ]
	[ "$(dealt vm)" = "a.bats b.bats c.bats d.bats e.bats " ]
	grep -qx 'debug kernel with kmemleak=off: b.bats: too slow there' <<<"$output"
	CHECK_JOBS=2 run "$T/selftests/check" vm vm-debug
	echo "$output"
	[ "$status" -eq 0 ]
	# b.bats ran once per kernel: normal, and debug with kmemleak off
	[ "$(grep -c "^\[vm\.[12]\] ok [0-9]* normal selftests/b.bats" <<<"$output")" = 1 ]
	[ "$(grep -c "^\[vm-debug-nokmemleak\.[12]\] ok [0-9]* debug-nokmemleak selftests/b.bats" <<<"$output")" = 1 ]
	[ "$(grep -c "^\[vm-debug\.[12]\] ok [0-9]* debug selftests/b.bats" <<<"$output")" -eq 0 ]
	[ "${lines[-2]}" = "run on the debug kernel with kmemleak=off (selftests/debug-kmemleak-off): b.bats" ]
	[ "${lines[-1]}" = "10 passed, 0 failed" ]
}

@test "debug-full-only: a listed suite runs on the normal kernel only, unless CHECK_FULL=1" {
	fake_runner
	printf '# comment\nc.bats  covered elsewhere\n' >"$T/selftests/debug-full-only"
	printf 'b.bats  too slow there\n' >"$T/selftests/debug-kmemleak-off"
	plan 2
	[ "$status" -eq 0 ]
	[ "$(dealt vm-debug vm-debug-nokmemleak)" = "a.bats b.bats d.bats e.bats " ]
	[ "$(dealt vm)" = "a.bats b.bats c.bats d.bats e.bats " ]
	grep -qx 'not on the debug kernel (CHECK_FULL=1 runs it there): c.bats: covered elsewhere' <<<"$output"
	CHECK_JOBS=1 run "$T/selftests/check" vm vm-debug
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^\[vm\.1\] ok [0-9]* normal selftests/c.bats" <<<"$output")" = 1 ]
	[ "$(grep -c "^\[vm-debug[^]]*\] ok [0-9]* debug[^ ]* selftests/c.bats" <<<"$output")" = 0 ]
	[ "${lines[-2]}" = "not run on the debug kernel (selftests/debug-full-only; CHECK_FULL=1 runs them): c.bats" ]
	[ "${lines[-1]}" = "9 passed, 0 failed" ]
	# a full check runs it on the debug kernel too (kmemleak on: not listed there)
	CHECK_FULL=1 CHECK_JOBS=1 run "$T/selftests/check" vm vm-debug
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^\[vm-debug\.1\] ok [0-9]* debug selftests/c.bats" <<<"$output")" = 1 ]
	[[ $output != *"not run on the debug kernel"* ]]
	[ "${lines[-1]}" = "10 passed, 0 failed" ]
}

@test "normal-full-only: a listed suite runs on the debug kernel only, unless CHECK_FULL=1 or the check has no debug stage" {
	fake_runner
	printf '# comment\nd.bats  the same tests there\n' >"$T/selftests/normal-full-only"
	plan 2 vm vm-debug
	[ "$status" -eq 0 ]
	[ "$(dealt vm)" = "a.bats b.bats c.bats e.bats " ]
	[ "$(dealt vm-debug)" = "a.bats b.bats c.bats d.bats e.bats " ]
	grep -qx 'not on the normal kernel (CHECK_FULL=1 runs it there): d.bats: the same tests there' <<<"$output"
	CHECK_JOBS=1 run "$T/selftests/check" vm vm-debug
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^\[vm\.1\] ok [0-9]* normal selftests/d.bats" <<<"$output")" = 0 ]
	[ "$(grep -c "^\[vm-debug\.1\] ok [0-9]* debug selftests/d.bats" <<<"$output")" = 1 ]
	[ "${lines[-2]}" = "not run on the normal kernel (selftests/normal-full-only; CHECK_FULL=1 runs them): d.bats" ]
	[ "${lines[-1]}" = "9 passed, 0 failed" ]
	# a check of the normal kernel alone runs it there
	CHECK_JOBS=1 run "$T/selftests/check" vm
	[ "$status" -eq 0 ]
	[ "$(grep -c "^\[vm\.1\] ok [0-9]* normal selftests/d.bats" <<<"$output")" = 1 ]
	[ "${lines[-1]}" = "5 passed, 0 failed" ]
	# and so does a full check
	CHECK_FULL=1 CHECK_JOBS=1 run "$T/selftests/check" vm vm-debug
	[ "$status" -eq 0 ]
	[ "$(grep -c "^\[vm\.1\] ok [0-9]* normal selftests/d.bats" <<<"$output")" = 1 ]
	[[ $output != *"not run on the normal kernel"* ]]
	[ "${lines[-1]}" = "10 passed, 0 failed" ]
}
