#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The VM runner (selftests/vm/run, `make vm`) tested from the host: exit status,
# output, and detection of panics, warnings and time-outs. Each test boots a
# VM; the kernels must be built (make check does that first).

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
RUN=$REPO/selftests/vm/run
QEMU=$(command -v qemu-system-x86_64)

setup() {
	export VM_LOG_DIR=$BATS_TEST_TMPDIR/vm
	unset VM_TIMEOUT
}

# the value of "vm: console log: PATH" in $output
console_log() { sed -n 's/^vm: .*console log: //p' <<<"$output" | tail -n 1; }

@test "guest exit status comes back: 0" {
	run "$RUN" -- 'exit 0'
	[ "$status" -eq 0 ]
}

@test "guest exit status comes back: 3, through make vm too" {
	run "$RUN" -- 'exit 3'
	echo "$output"
	[ "$status" -eq 3 ]
	run make -s -C "$REPO" vm CMD='echo "it is $(uname -r)"; exit 3'
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"it is 6.1."* ]]
}

@test "the guest CPU has no ERMS: the kernel copies 8 bytes a step, which TCG runs far faster than rep movsb" {
	run "$RUN" -- 'echo "cpus $(grep -c "^flags" /proc/cpuinfo) erms $(grep -cw erms /proc/cpuinfo)"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *$'\n'"cpus 2 erms 0"$'\n'* ]]
}

@test "command output comes back in order; the console log is kept; VM_BATS_TRACE and VM_BATS_SRC reach the guest" {
	VM_BATS_TRACE=stock VM_BATS_SRC=stock run "$RUN" -- \
		'for i in 1 2 3; do echo line-$i; done; echo to-stderr >&2; uname -r; echo "$VM_BATS_TRACE,$VM_BATS_SRC"'
	[ "$status" -eq 0 ]
	[[ $output == *$'line-1\nline-2\nline-3\nto-stderr\n6.1.'* ]]
	[[ $output == *$'\nstock,stock\n'* ]]
	log=$(console_log)
	[ -f "$log" ]
	grep -q 'Linux version 6\.1\.' "$log"
	grep -q 'guest-init: \[.*\] command exited 0' "$log"
}

@test "a panic fails the run and is named" {
	run "$RUN" -- 'echo c >/proc/sysrq-trigger; sleep 60'
	[ "$status" -eq 125 ]
	[[ $output == *"vm: FAIL: kernel panic: Kernel panic - not syncing: sysrq triggered crash"* ]]
}

@test "a kernel WARNING fails the run even when the command succeeds (debug kernel, LKDTM)" {
	run "$RUN" --debug --no-kmemleak -- 'echo WARNING >/sys/kernel/debug/provoke-crash/DIRECT; exit 0'
	[ "$status" -eq 125 ]
	[[ $output == *"vm: FAIL: kernel WARNING: WARNING: CPU: "*" at "*"drivers/misc/lkdtm/bugs.c:"* ]]
}

# The limit counts from QEMU's start: 6 s end most guests still booting,
# which the runner kills and reports the same way.
@test "a guest that outlives VM_TIMEOUT=6 is killed within 16 s and reported" {
	start=$SECONDS
	VM_TIMEOUT=6 run "$RUN" -- 'sleep 600'
	took=$((SECONDS - start))
	echo "took ${took}s"
	[ "$status" -eq 124 ]
	[ "$took" -lt 16 ]
	[[ $output == *"vm: FAIL: guest outlived VM_TIMEOUT=6s and was killed"* ]]
	run pgrep -f "qemu-system-x86_64.*$BATS_TEST_TMPDIR"
	[ "$status" -ne 0 ]
}

@test "the per-test kernel log check fails exactly the test that warned" {
	run "$RUN" -- "bats --tap $REPO/selftests/host/fixtures/marker.bats"
	[ "$status" -eq 125 ]
	[[ $output == *"ok 1 fixture: clean before"* ]]
	[[ $output == *"not ok 2 fixture: leaves a warning report"* ]]
	[[ $output == *"kernel: WARNING: WARNING: CPU: 0 PID: "*" at fixture/marker.c:1"* ]]
	[[ $output == *"ok 3 fixture: clean after"* ]]
	[[ $output != *"not ok 1"* && $output != *"not ok 3"* ]]
}

# A qemu-system-x86_64 first in PATH that dies of SIGSEGV: on its first
# $1 calls before starting the real one, or ("after") once the guest has
# started CMD. It counts its calls in $BATS_TEST_TMPDIR/calls.
crashing_qemu() {
	local real=$QEMU
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/qemu-system-x86_64" <<EOF
#!/bin/bash
ulimit -c 0
n=\$(cat "$BATS_TEST_TMPDIR/calls" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$BATS_TEST_TMPDIR/calls"
if [ "$1" != after ]; then
	# what a real crash leaves: the first lines of the boot
	for a; do [ "\$a" = "\${a#file:}" ] || echo "fake early boot" >"\${a#file:}"; done
	[ "\$n" -ge "$1" ] || kill -SEGV \$\$
	exec "$real" "\$@"
fi
for a; do
	case \$a in local,id=vm,path=*) share=\${a#local,id=vm,path=}; share=\${share%%,*} ;; esac
done
"$real" "\$@" &
q=\$!
while [ ! -e "\$share/started" ]; do kill -0 \$q || exit 1; sleep 0.1; done
kill -KILL \$q
wait \$q
kill -SEGV \$\$
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/qemu-system-x86_64"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

@test "qemu dying of a signal before the guest starts CMD boots again, once; its console log is kept" {
	crashing_qemu 1
	run "$RUN" -- 'exit 3'
	echo "$output"
	[ "$status" -eq 3 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -eq 2 ]
	[[ $output == *"vm: qemu died of signal 11 (SEGV) before the guest started CMD; booting again (console log: "*"/console.boot1.log)"* ]]
	[ "$(cat "$(dirname "$(console_log)")/console.boot1.log")" = "fake early boot" ]
}

@test "qemu dying twice before CMD, or after CMD started, fails the run" {
	crashing_qemu 2
	run "$RUN" -- 'exit 3'
	echo "$output"
	[ "$status" -eq 125 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -eq 2 ]
	[[ $output == *"vm: FAIL: guest stopped before CMD finished (qemu exit 139"* ]]
	rm "$BATS_TEST_TMPDIR/calls"
	VM_BOOT_RETRIES=0 run "$RUN" -- 'exit 3'
	[ "$status" -eq 125 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -eq 1 ]
	crashing_qemu after
	rm "$BATS_TEST_TMPDIR/calls"
	run "$RUN" -- 'sleep 60'
	echo "$output"
	[ "$status" -eq 125 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -eq 1 ]
	[[ $output != *"booting again"* ]]
	[[ $output == *"vm: FAIL: guest stopped before CMD finished (qemu exit 139"* ]]
}

@test "bad usage is refused with a reason and exit 2" {
	VM_TIMEOUT=abc run "$RUN" -- true
	[ "$status" -eq 2 ]
	[[ $output == *"VM_TIMEOUT must be a positive number"* ]]
	VM_BOOT_RETRIES=-1 run "$RUN" -- true
	[ "$status" -eq 2 ]
	[[ $output == *"VM_BOOT_RETRIES must be a number of boots, not '-1'"* ]]
	run "$RUN"
	[ "$status" -eq 2 ]
	run "$RUN" --bogus true
	[ "$status" -eq 2 ]
	[[ $output == *"unknown option --bogus"* ]]
	run "$RUN" --kernel /nonexistent -- true
	[ "$status" -eq 2 ]
	run make -s -C "$REPO" vm
	[ "$status" -eq 2 ]
	[[ $output == *"usage: make vm CMD="* ]]
}

@test "make demo: 256 MiB land in a udmabuf, validated; nothing left bound; the NIC as before" {
	run make -s -C "$REPO" demo
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"== kernel"*"Linux 6.1."* ]]
	# ncdevmem set the port up: header split on, the flow on queue 3
	[[ $output =~ eth[0-9]+:\ tcp-data-split\ on ]]
	[[ $output == *"Dest port: 5201 mask: 0x0"*"Action: Direct to queue 3"* ]]
	# devmemctl: queue 3, and no other, bound to a dma-buf
	[ "$(grep -c ' dmabuf [0-9]' <<<"${output%%== nsa:*}")" -eq 1 ]
	[[ $output =~ type\ rx\ id\ 3\ napi-id\ [0-9]+\ dmabuf\ ([0-9]+) ]]
	id=${BASH_REMATCH[1]}
	# the server's summary: every byte through the dma-buf, validated,
	# every token handed back
	[[ $output == *"devmem bytes:    268435456"* ]]
	[[ $output == *"linear bytes:    0"* ]]
	[[ $output == *"validation:      ok, period 251"* ]]
	[[ $output =~ devmem\ frags:\ +([0-9]+) ]]
	frags=${BASH_REMATCH[1]}
	[ "$frags" -gt 0 ]
	[[ $output == *"tokens returned: $frags"$'\n'* ]]
	[[ $output == *"result:          pass"* ]]
	[[ $output == *"dma-bufs bound: none), pools of dma-buf $id: 0 buffers in flight"* ]]
	[[ $output == *"NIC set-up undone"* ]]
}

@test "killing the runner kills its guest" {
	"$RUN" -- 'sleep 600' >"$BATS_TEST_TMPDIR/out" 2>&1 &
	runner=$!
	# wait until the guest runs the command, then kill the runner
	for _ in $(seq 600); do
		grep -qs 'running command' "$VM_LOG_DIR"/run-*/console.log && break
		sleep 0.1
	done
	kill -TERM "$runner"
	wait "$runner" || status=$?
	[ "$status" -eq 143 ]
	grep -q 'vm: terminated; guest killed' "$BATS_TEST_TMPDIR/out"
	run pgrep -f "qemu-system-x86_64.*$BATS_TEST_TMPDIR"
	[ "$status" -ne 0 ]
}
