# SPDX-License-Identifier: GPL-2.0
#
# Waiting for a condition without sleeping blind, for the VM suites
# (through lib/nsim) and the host suites alike.

# nap SECS: sleep without an exec (each exec costs 0.1-0.4 s under TCG):
# wait for data on a pipe that nobody writes to.
nap() { read -rt "$1" <> <(:) || true; }

# wait_until SECS CMD...: poll CMD every 0.05 s until it succeeds; fail
# once SECS seconds have passed (time, not tries: a poll that execs costs
# far more on the debug kernel).
wait_until() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		nap 0.05
	done
}

# wait_pid SECS PID: wait for background job PID of this shell and return
# its exit status; one still running after SECS seconds is killed, named
# on stderr, and gives 124 (a test fails instead of hanging until the
# VM's timeout).
wait_pid() {
	local end=$((SECONDS + $1))
	while kill -0 "$2" 2>/dev/null; do
		if [ "$SECONDS" -ge "$end" ]; then
			kill -KILL "$2" 2>/dev/null || true
			wait "$2" 2>/dev/null || true
			echo "wait_pid: process $2 still running after $1 s: killed" >&2
			return 124
		fi
		nap 0.05
	done
	wait "$2"
}
