#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks' parts that run without the VM: devmem-tx-cpu's send and
# zerocopy modes on the host's loopback (its devmem mode needs a bound
# device: make bench runs it), the report line bench/devmem-tx-cpu/run
# reads, and both bench scripts' --help and refusal outside the VM.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
TX=$REPO/build/bin/devmem-tx-cpu
load lib/plain-rx
load ../lib/poll

# gone PID: no process PID (any more)
gone() { ! kill -0 "$1" 2>/dev/null; }

setup_file() {
	make -C "$REPO" "$RX" "$TX"
}

# The fields of the report line, for the checks below.
REPORT='^cpu ([0-9]+) ns for 4194304 bytes: ([0-9]+) ns user, ([0-9]+) ns sys, 64 calls, ([0-9]+) reaps, ([0-9]+) waits, ([0-9]+) copied, 0 enobufs, [0-9]+ sleeps, [0-9]+ preemptions$'

@test "devmem-tx-cpu -m send: the receiver checks every byte; one report line, user + sys adding up" {
	rx -n 4M
	run "$TX" -m send -a 127.0.0.1 -p "$PORT" -n 4M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output =~ $REPORT ]]
	[ "${BASH_REMATCH[1]}" -eq $((BASH_REMATCH[2] + BASH_REMATCH[3])) ]
	[ "${BASH_REMATCH[4]}" -eq 0 ]
	[ "${BASH_REMATCH[5]}" -eq 0 ]
	[ "${BASH_REMATCH[6]}" -eq 0 ]
	rx_status
	[ "$status" -eq 0 ]
	[ "$output" = "received 4194304 bytes" ]
}

@test "devmem-tx-cpu -m zerocopy over loopback: every completion report says the kernel copied" {
	rx -n 4M
	run "$TX" -m zerocopy -a 127.0.0.1 -p "$PORT" -n 4M
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output =~ $REPORT ]]
	[ "${BASH_REMATCH[4]}" -gt 0 ]
	# loopback hands the pages to a receiver: the kernel copies them
	[ "${BASH_REMATCH[6]}" -eq "${BASH_REMATCH[4]}" ]
	rx_status
	[ "$status" -eq 0 ]
	[ "$output" = "received 4194304 bytes" ]
}

@test "bench scripts: --help prints the header and exits 0; outside the VM they refuse, exit 2; bad vCPUs and token batches refused" {
	run "$REPO/bench/devmem-tx-cpu/run" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "CPU time of the sending process per GiB"* ]]
	[[ $output == *"  -c CALL     bytes per send call, from a 16 MiB ring (default 64K)"* ]]
	[ "${lines[-1]}" = "What is measured and why: bench/README.md." ]
	run env -u DEVMEM_VM "$REPO/bench/devmem-tx-cpu/run" -n 1
	[ "$status" -eq 2 ]
	[ "$output" = "devmem-tx-cpu: runs inside the test VM (make bench)" ]

	run "$REPO/bench/devmem-rx-cpu" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "CPU time of the receiving process per GiB"* ]]
	[[ $output == *"  -T TOKENS   tokens the devmem receiver gathers before it gives them"* ]]
	[ "${lines[-1]}" = "What is measured and why: bench/README.md." ]
	run env -u DEVMEM_VM "$REPO/bench/devmem-rx-cpu" -n 1
	[ "$status" -eq 2 ]
	[ "$output" = "devmem-rx-cpu: runs inside the test VM (make bench)" ]
	run "$REPO/bench/nccl-throughput" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Device-memory receive through the NCCL plugin against ncdevmem, over" ]
	[ "${lines[-1]}" = "only meaningful as ratios." ]
	run env -u DEVMEM_VM "$REPO/bench/nccl-throughput" -n 1
	[ "$status" -eq 2 ]
	[ "$output" = "nccl-throughput: runs inside the test VM (make bench)" ]
	for s in 3M 0M 256 x; do
		run env DEVMEM_VM=1 "$REPO/bench/nccl-throughput" -s "$s"
		[ "$status" -eq 2 ]
		[ "$output" = "nccl-throughput: bad -s '$s' (an even number of MiB, as 256M)" ]
	done
	run "$REPO/bench/pair-throughput" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "TCP throughput of a linked netdevsim pair against a veth pair, measured" ]
	[[ $output == *"the sender to vCPU S and the receiver to vCPU R; with both on one vCPU"* ]]
	run env -u DEVMEM_VM "$REPO/bench/pair-throughput" -P 0,0
	[ "$status" -eq 2 ]
	[ "$output" = "pair-throughput: runs inside the test VM (make bench)" ]
	# a vCPU the machine does not have: refused before anything is set up
	run env DEVMEM_VM=1 "$REPO/bench/pair-throughput" -P 0,4096
	[ "$status" -eq 2 ]
	[ "$output" = "pair-throughput: -P 0,4096: the guest has no vCPU 4096" ]
	# vCPUs: two, or none
	for b in pair-throughput devmem-rx-cpu; do
		for p in 1 0,1,2 x,1 "" 0,; do
			run env DEVMEM_VM=1 "$REPO/bench/$b" -P "$p"
			[ "$status" -eq 2 ]
			[ "$output" = "$b: bad -P '$p'" ]
		done
	done
	# a batch of tokens: 1 to 1024
	for t in 0 1025 x ""; do
		run env DEVMEM_VM=1 "$REPO/bench/devmem-rx-cpu" -T "$t"
		[ "$status" -eq 2 ]
		[ "$output" = "devmem-rx-cpu: bad -T '$t'" ]
	done
}

@test "bench/lib/stats.bash: median, spread, and a warning naming a set of runs that spread past BENCH_SPREAD_MAX" {
	source "$REPO/bench/lib/stats.bash"
	run median < <(printf '%s\n' 30 10 20)
	[ "$output" = 20 ]
	run median < <(printf '%s\n' 40 10 20 30)
	[ "$output" = 25.0 ]
	run spread 90 100 110
	[ "$output" = 20 ]
	run spread_check "plain recv" 90 100 110
	[ "$output" = "spread 20%" ]
	run spread_check "plain recv" 5167 6000 53578
	[ "${lines[0]}" = "spread 807%" ]
	[[ ${lines[1]} == "bench: WARNING: plain recv: runs spread 807% (over 20%: the host was busy?"* ]]
	BENCH_SPREAD_MAX=1000 run spread_check x 5167 6000 53578
	[ "$output" = "spread 807%" ]
	# not a number: the default
	BENCH_SPREAD_MAX=lots run spread_check x 90 100 125
	[ "${lines[0]}" = "spread 35%" ]
	[[ ${lines[1]} == "bench: WARNING: x: runs spread 35% (over 20%"* ]]
	BENCH_SCHED=rt BENCH_KEEP_BUSY=1 run bench_sched
	[ "$output" = "bench: host scheduling: SCHED_RR (host load cannot preempt the vCPUs), host CPUs kept busy at SCHED_IDLE" ]
	BENCH_SCHED= BENCH_KEEP_BUSY=0 run bench_sched
	[ "$output" = "bench: host scheduling: normal (a busy host lengthens every figure), host CPUs free to idle" ]
}

@test "keep-busy: one SCHED_IDLE loop per host CPU while the command runs, none after it; the command's exit status" {
	local seen=$BATS_TEST_TMPDIR/seen pid
	# the command lists keep-busy's children (itself and the loops) with
	# their scheduling class
	run "$REPO/bench/keep-busy" bash -c 'ps -o pid=,cls= --ppid "$PPID" >"$1"; exit 3' cmd "$seen"
	cat "$seen"
	[ "$status" -eq 3 ]
	[ "$output" = "" ]
	[ "$(grep -c ' IDL$' "$seen")" -eq "$(nproc)" ]
	[ "$(grep -c ' TS$' "$seen")" -eq 1 ]
	[ "$(wc -l <"$seen")" -eq $(($(nproc) + 1)) ]
	# keep-busy waits for its loops before it returns
	for pid in $(awk '$2 == "IDL" { print $1 }' "$seen"); do
		run kill -0 "$pid"
		[ "$status" -ne 0 ]
	done
	run "$REPO/bench/keep-busy" true
	[ "$status" -eq 0 ]
}

@test "keep-busy: killed itself, its loops end on their own" {
	local seen=$BATS_TEST_TMPDIR/seen kb pid cmd
	"$REPO/bench/keep-busy" bash -c 'ps -o pid=,cls= --ppid "$PPID" >"$1.tmp"; mv "$1.tmp" "$1"; echo $$ >"$1.cmd"; exec sleep 600' \
		cmd "$seen" 3>&- &
	kb=$!
	wait_until 30 test -s "$seen.cmd"
	kill -KILL "$kb"
	wait "$kb" || true
	cmd=$(cat "$seen.cmd")
	kill "$cmd"
	[ "$(grep -c ' IDL$' "$seen")" -eq "$(nproc)" ]
	for pid in $(awk '$2 == "IDL" { print $1 }' "$seen"); do
		wait_until 10 gone "$pid"
	done
}

@test "keep-busy: no command, or none by that name, refused; where SCHED_IDLE is refused the command runs all the same, said on stderr" {
	run "$REPO/bench/keep-busy"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "keep-busy: no command given" ]
	[ "${lines[1]}" = "Run a command while every host CPU is kept busy at the lowest priority" ]
	run "$REPO/bench/keep-busy" no-such-command-here
	[ "$status" -eq 2 ]
	[ "$output" = "keep-busy: no-such-command-here: command not found" ]
	run "$REPO/bench/keep-busy" --help
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "end when CMD does, and on their own should keep-busy itself be killed." ]
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/chrt"
	chmod +x "$BATS_TEST_TMPDIR/bin/chrt"
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" run "$REPO/bench/keep-busy" sh -c 'echo ran; exit 4'
	[ "$status" -eq 4 ]
	[ "${lines[0]}" = "keep-busy: SCHED_IDLE refused here (chrt -i 0): sh runs with the host's CPUs free to idle" ]
	[ "${lines[1]}" = "ran" ]
}

@test "make bench's default scheduling: without SCHED_RR for the VM it says so and boots at normal priority, the host's CPUs free to idle unless BENCH_KEEP_BUSY=1" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "chrt: failed to set pid 0'"'"'s policy: Operation not permitted" >&2\nexit 1\n' \
		>"$BATS_TEST_TMPDIR/bin/chrt"
	chmod +x "$BATS_TEST_TMPDIR/bin/chrt"
	# VM_TIMEOUT=1 ends the guest as it boots.
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" VM_TIMEOUT=1 run make -s -C "$REPO" bench
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"make bench: no SCHED_RR for the VM here (root or CAP_SYS_NICE): a busy host will lengthen the figures"* ]]
	[[ $output == *"vm: booting normal kernel"* ]]
	[[ $output == *"vm: FAIL: guest outlived VM_TIMEOUT=1s and was killed"* ]]
	[[ $output != *"needs root"* ]]
	# at normal priority the host's CPUs are left free to idle...
	[[ $output != *"keep-busy"* ]]
	# ...unless asked for (this chrt refuses SCHED_IDLE as well)
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" VM_TIMEOUT=1 run make -s -C "$REPO" bench BENCH_KEEP_BUSY=1
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"keep-busy: SCHED_IDLE refused here (chrt -i 0): selftests/vm/run runs with the host's CPUs free to idle"* ]]
	[[ $output == *"vm: booting normal kernel"* ]]
}

@test "make bench BENCH_SCHED=: auto, normal or rt, anything else refused before a VM boots; sched-check's bad -s too" {
	run make -s -C "$REPO" bench BENCH_SCHED=fifo
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *"make bench: BENCH_SCHED is auto, normal or rt, not 'fifo'"* ]]
	[[ $output != *"vm: booting"* ]]
	for b in 2 yes ""; do
		run make -s -C "$REPO" bench BENCH_KEEP_BUSY="$b"
		[ "$status" -eq 2 ]
		[[ $output == *"make bench: BENCH_KEEP_BUSY is auto, 1 or 0, not '$b'"* ]]
		[[ $output != *"vm: booting"* ]]
	done
	for s in fifo normal, rt,,normal; do
		run "$REPO/bench/sched-check" -s "$s"
		[ "$status" -eq 2 ]
		[ "$output" = "sched-check: bad -s '$s'" ]
	done
	for o in -s -o; do
		run "$REPO/bench/sched-check" "$o"
		[ "$status" -eq 2 ]
		[ "$output" = "sched-check: $o needs a value" ]
		run "$REPO/bench/sched-check" "$o" ""
		[ "$status" -eq 2 ]
		[ "$output" = "sched-check: $o needs a value" ]
	done
}

@test "sched-check: a log per make bench, numbered, so a scheduling given twice keeps both runs; each run's figures in its own section" {
	local logs=$BATS_TEST_TMPDIR/logs n
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	# a make that stands for make bench: the run's number as its median
	cat >"$BATS_TEST_TMPDIR/bin/make" <<-'MAKE'
	#!/bin/sh
	n=$(($(cat "$COUNT" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$COUNT"
	for a in "$@"; do
		case $a in BENCH_SCHED=*) sched=${a#BENCH_SCHED=} ;; esac
	done
	echo "bench: receiver CPU per GiB, fake, $sched"
	echo "bench:   plain recv: median $n ms/GiB (1 2 3; spread 5%)"
	echo "bench:   devmem: median 1$n ms/GiB (1 2 3; spread 7%), ratio devmem/plain: 0.$n"
	MAKE
	chmod +x "$BATS_TEST_TMPDIR/bin/make"
	COUNT=$BATS_TEST_TMPDIR/count PATH="$BATS_TEST_TMPDIR/bin:$PATH" \
		run "$REPO/bench/sched-check" -s rt,rt -o "$logs"
	echo "$output"
	[ "$status" -eq 0 ]
	for n in 1 3; do
		[ -f "$logs/$n-rt-quiet.log" ]
	done
	for n in 2 4; do
		[ -f "$logs/$n-rt-hog.log" ]
	done
	[ "$(ls "$logs" | wc -l)" -eq 4 ]
	mapfile -t summary < <(grep -v '^sched-check: make bench' <<<"$output")
	[ "${#summary[@]}" -eq 16 ]
	[ "${summary[0]}" = "== BENCH_SCHED=rt, quiet host" ]
	[ "${summary[1]}" = "receiver CPU per GiB, fake, rt" ]
	[ "${summary[2]}" = "  plain recv: 1 (spread 5%)" ]
	[ "${summary[3]}" = "  devmem: 11 (spread 7%), ratio devmem/plain: 0.1" ]
	[ "${summary[4]}" = "== BENCH_SCHED=rt, hog host" ]
	[ "${summary[6]}" = "  plain recv: 2 (spread 5%)" ]
	[ "${summary[8]}" = "== BENCH_SCHED=rt, quiet host" ]
	[ "${summary[10]}" = "  plain recv: 3 (spread 5%)" ]
	[ "${summary[12]}" = "== BENCH_SCHED=rt, hog host" ]
	[ "${summary[15]}" = "  devmem: 14 (spread 7%), ratio devmem/plain: 0.4" ]
}
