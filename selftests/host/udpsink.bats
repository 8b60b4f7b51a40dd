#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/udpsink on the host's loopback: IPv4 and IPv6 datagrams on several
# ports counted exactly, the ready file, a port already taken, usage errors.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
SINK=$REPO/build/bin/udpsink

setup_file() {
	make -C "$REPO" "$SINK"
}

setup() {
	SPID=
	# Two ports in 20000-29999, below the ephemeral range.
	P1=$((20000 + RANDOM % 5000)) P2=$((25000 + RANDOM % 5000))
}

teardown() {
	[ -z "$SPID" ] || { kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; } || true
}

# start_sink ARGS...: udpsink in the background; returns once its ready
# file exists (or it has died).
start_sink() {
	local ready=$BATS_TEST_TMPDIR/ready i
	rm -f "$ready"
	"$SINK" --ready-file "$ready" "$@" >"$BATS_TEST_TMPDIR/out" 2>&1 &
	SPID=$!
	for i in $(seq 200); do
		[ -e "$ready" ] && return 0
		kill -0 "$SPID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

stop_sink() {
	kill -TERM "$SPID"
	wait "$SPID"
	SPID=
}

@test "counts IPv4 and IPv6 datagrams on every port, then exits 0 on SIGTERM" {
	start_sink "$P1" "$P2"
	for i in 1 2 3; do echo x >"/dev/udp/127.0.0.1/$P1"; done
	echo hello >"/dev/udp/::1/$P2"
	printf 'abc' >"/dev/udp/127.0.0.1/$P2"
	stop_sink
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "received 5 datagrams, 15 bytes" ]
}

@test "-q prints nothing; SIGINT ends it as well" {
	start_sink -q "$P1"
	echo x >"/dev/udp/127.0.0.1/$P1"
	kill -INT "$SPID"
	wait "$SPID"
	SPID=
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "a port that is already bound: exit 1, no ready file" {
	start_sink -q "$P1"
	first=$SPID
	run "$SINK" --ready-file "$BATS_TEST_TMPDIR/ready2" "$P2" "$P1"
	[ "$status" -eq 1 ]
	[ "$output" = "udpsink: bind port $P1: Address already in use" ]
	[ ! -e "$BATS_TEST_TMPDIR/ready2" ]
	kill -0 "$first"
}

@test "usage errors exit 2 and say why" {
	run "$SINK"
	[ "$status" -eq 2 ]
	[ "$output" = "udpsink: no port given (see --help)" ]
	for p in 0 65536 -1 7x ""; do
		run "$SINK" -- "$p"
		[ "$status" -eq 2 ]
		[ "$output" = "udpsink: bad port '$p' (see --help)" ]
	done
	run "$SINK" $(seq 20001 20017)
	[ "$status" -eq 2 ]
	[ "$output" = "udpsink: at most 16 ports (see --help)" ]
	run "$SINK" --bogus 1
	[ "$status" -eq 2 ]
	[[ ${lines[-1]} == "udpsink: bad option (see --help)" ]]
	run "$SINK" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: udpsink "* ]]
}
