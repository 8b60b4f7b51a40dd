# SPDX-License-Identifier: GPL-2.0
#
# devmem-rx --plain on the host's loopback, for the host suites that
# need a receiver checking every byte: load it, then call rx and
# rx_status. Needs REPO set.

RX=$REPO/build/bin/devmem-rx

setup() {
	RPID=
	PORT=$((30000 + RANDOM % 10000))
}

teardown() {
	[ -z "$RPID" ] || { kill "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; } || true
}

# rx ARGS...: devmem-rx --plain on 127.0.0.1:$PORT in the background;
# returns once it listens.
rx() {
	local ready=$BATS_TEST_TMPDIR/ready i
	rm -f "$ready"
	"$RX" --plain -b 127.0.0.1 -p "$PORT" -r "$ready" "$@" \
		>"$BATS_TEST_TMPDIR/out" 2>&1 &
	RPID=$!
	for i in $(seq 200); do
		[ -e "$ready" ] && return 0
		kill -0 "$RPID" 2>/dev/null || break
		read -rt 0.05 <> <(:) || true
	done
	cat "$BATS_TEST_TMPDIR/out"
	return 1
}

# rx_status: wait for the receiver; its exit status in status, its
# output in output and lines, as `run` sets them (and printed, for a
# failing test's report). Not under `run`: its subshell cannot wait for
# the receiver, and got 127 unless the receiver had exited before.
rx_status() {
	status=0
	wait "$RPID" || status=$?
	RPID=
	output=$(cat "$BATS_TEST_TMPDIR/out")
	mapfile -t lines <<<"$output"
	printf '%s\n' "$output"
}
