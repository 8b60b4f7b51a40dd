# SPDX-License-Identifier: GPL-2.0
#
# A cheaper per-command trap for bats 1.8 (Debian 12's), sourced by
# lib/vm.bash.
#
# To say where a test failed, bats runs a DEBUG trap before every simple
# command of a test, and bats 1.8's formats the whole call stack each time
# (three function calls, a loop over the frames). Under TCG that costs
# about 3 ms a command: a loop of 500 assignments takes 4.4 s instead of
# 0.6, and in exec-bound suites (nsim-steer, devmem-sums) it was a fifth
# to a quarter of their time. The trap here only records the stack, in one
# string; the frames are listed from that record when bats reports a
# failure, exactly as bats would have listed them
# (selftests/host/bats-trace.bats compares the two reports).
#
# bats also times each test (-T) with two execs of date(1); bash's
# EPOCHREALTIME gives the same milliseconds without an exec.
#
# These redefine functions of bats 1.8's own: they apply to bats 1.8 only,
# not under tracing (bats -x), and not with VM_BATS_TRACE=stock in the
# environment; any other bats keeps its own.

if [[ ${BATS_VERSION:-} == 1.8.* && ${BATS_TRACE_LEVEL:-0} == 0 &&
	${VM_BATS_TRACE:-} != stock ]]; then

# The record of the stack at the last command (VM_TRACE_LAST) and at the
# one before (VM_TRACE_PREV): the frame count, then BASH_LINENO, FUNCNAME
# and BASH_SOURCE as the trap sees them, each element ended by \037.
VM_TRACE_LAST= VM_TRACE_PREV=
VM_TRACE_SELF=${BASH_SOURCE[0]}

# No record for the commands of bats' own library and libexec
# directories (bats 1.8 excludes no others without tracing) and of this
# file, which stands in for bats' code. Interrupted or timed out, the
# last record stays.
bats_debug_trap() {
	[[ ${1%/*} != "$BATS_ROOT"/lib/* && ${1%/*} != "$BATS_ROOT"/libexec/* &&
		$1 != "$VM_TRACE_SELF" &&
		! -v BATS_INTERRUPTED && ! -v BATS_TIMED_OUT ]] || return 0
	VM_TRACE_PREV=$VM_TRACE_LAST
	printf -v VM_TRACE_LAST '%s\037' "${#FUNCNAME[@]}" "${BASH_LINENO[@]}" \
		"${FUNCNAME[@]}" "${BASH_SOURCE[@]}"
}

# vm_trace_split RECORD: the record's fields into VM_TRACE_F, its frame
# count into VM_TRACE_N.
vm_trace_split() {
	VM_TRACE_F=()
	VM_TRACE_N=0
	[ -n "$1" ] || return 0
	mapfile -t -d $'\037' VM_TRACE_F <<<"$1"
	VM_TRACE_N=${VM_TRACE_F[0]}
}

# vm_trace_frames VAR RECORD: the stack trace of RECORD into array VAR,
# frame by frame as bats' bats_capture_stack_trace lists it from inside
# the trap: "LINE FUNCTION FILE", innermost first, up to the test
# function (or set-up, tear-down, or the file's top level).
vm_trace_frames() {
	local -n vm_trace_out=$1
	local n i fn src next
	vm_trace_split "$2"
	n=$VM_TRACE_N
	vm_trace_out=()
	for ((i = 1; i < n; i++)); do
		fn=${VM_TRACE_F[1 + n + i]}
		src=${VM_TRACE_F[1 + 2 * n + i]}
		vm_trace_out+=("${VM_TRACE_F[i]} $fn ${src:-$BATS_TEST_SOURCE}")
		case $fn in
		"${BATS_TEST_NAME-}" | setup | teardown | setup_file | teardown_file | setup_suite | teardown_suite)
			break ;;
		esac
		next=
		((i + 1 >= n)) || next=${VM_TRACE_F[2 + 2 * n + i]}
		[[ $next == *bats-exec-file && $fn == source ]] && break
	done
	return 0
}

# As bats': when the command that failed is the one the last record was
# taken for (bash runs the DEBUG trap a second time for some failures,
# with the wrong line), the record before it is the right one.
bats_error_trap() {
	bats_check_status_from_trap
	local IFS=' ' lineno source n
	vm_trace_split "$VM_TRACE_LAST"
	n=$VM_TRACE_N
	lineno="${VM_TRACE_F[*]:1:n}"
	source="${VM_TRACE_F[*]:1 + 2 * n:n}"
	if [[ "${BASH_LINENO[*]}" == "$lineno" && "${BASH_SOURCE[*]}" == "$source" &&
		-z "$BATS_DEBUG_LAST_STACK_TRACE_IS_VALID" ]]; then
		VM_TRACE_LAST=$VM_TRACE_PREV
	fi
	BATS_DEBUG_LAST_STACK_TRACE_IS_VALID=1
}

bats_get_failure_stack_trace() {
	if [[ -n "${BATS_DEBUG_LAST_STACK_TRACE_IS_VALID:-}" ]]; then
		vm_trace_frames "$1" "$VM_TRACE_LAST"
	else
		vm_trace_frames "$1" "$VM_TRACE_PREV"
	fi
}

get_mills_since_epoch() {
	local t=${EPOCHREALTIME/[.,]/}
	printf '%d\n' "$((10#$t / 1000))"
}

fi
