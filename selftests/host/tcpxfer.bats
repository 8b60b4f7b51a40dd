#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# selftests/progs/tcpxfer over loopback on the host (no VM needed): transfers in one
# and both directions, IPv6, each failure a transfer can end in, usage
# errors, and the pattern itself, recomputed independently in Python.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
TCPXFER=$REPO/build/bin/tcpxfer

# "sent N bytes in T s: R Mbit/s" and its "received" twin, for N = $1.
sent_re() { echo "^sent $1 bytes in [0-9]+\.[0-9]{3} s: [0-9]+\.[0-9] Mbit/s\$"; }
recv_re() { echo "^received $1 bytes in [0-9]+\.[0-9]{3} s: [0-9]+\.[0-9] Mbit/s, validated\$"; }

setup_file() {
	# The Makefile's rule names the absolute path: a relative target
	# would not match it and would leave a stale binary in place.
	make -C "$REPO" "$TCPXFER"
}

setup() {
	T=$BATS_TEST_TMPDIR
	LPID=
}

teardown() {
	if [ -n "$LPID" ]; then
		kill "$LPID" 2>/dev/null || true
		wait "$LPID" 2>/dev/null || true
	fi
}

# start_listener ARGS...: run "tcpxfer listen" in the background on a
# random high port (below the ephemeral range) and wait, in short polls,
# for its ready file.  Sets PORT and LPID.  LISTEN_PORT fixes the port;
# otherwise a port found busy is replaced by another.
start_listener() {
	local try i

	for try in 1 2 3 4 5; do
		PORT=${LISTEN_PORT:-$((10000 + RANDOM % 20000))}
		rm -f "$T/ready"
		"$TCPXFER" listen -p "$PORT" -t 60 --ready-file "$T/ready" \
			"$@" >"$T/l.out" 2>"$T/l.err" 3>&- &
		LPID=$!
		for i in $(seq 250); do
			[ -e "$T/ready" ] && return 0
			kill -0 "$LPID" 2>/dev/null || break
			sleep 0.02
		done
		kill "$LPID" 2>/dev/null || true
		wait "$LPID" 2>/dev/null || true
		LPID=
		[ -z "${LISTEN_PORT:-}" ] || break
		grep -q 'bind: Address already in use' "$T/l.err" || break
	done
	echo "listener never got ready:" >&2
	cat "$T/l.err" >&2
	return 1
}

# Wait for the listener; sets LSTATUS, LOUT (stdout) and LERR (stderr).
finish_listener() {
	LSTATUS=0
	wait "$LPID" || LSTATUS=$?
	LPID=
	LOUT=$(cat "$T/l.out")
	LERR=$(cat "$T/l.err")
}

xfer_connect() {
	run "$TCPXFER" connect -a 127.0.0.1 -p "$PORT" -t 60 "$@"
}

# pattern SEED OFFSET COUNT: what --dump prints, computed from the
# definition: byte i is byte i % 8 (little-endian) of
# splitmix64_mix(seed * 0x9E3779B97F4A7C15 + i // 8), 16 bytes a line.
pattern() {
	python3 - "$@" <<'EOF'
import sys

M = (1 << 64) - 1

def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)

seed, off, count = (int(a, 0) for a in sys.argv[1:])
data = [(mix((seed * 0x9E3779B97F4A7C15 + i // 8) & M) >> (8 * (i % 8))) & 0xFF
        for i in range(off, off + count)]
for j in range(0, count, 16):
    print(" ".join("%02x" % b for b in data[j:j + 16]))
EOF
}

@test "one way: 8 MiB sent, received and validated" {
	start_listener -q -r 8M
	xfer_connect -q -s 8M
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} =~ $(sent_re 8388608) ]]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[[ $LOUT =~ $(recv_re 8388608) ]]
	[ -z "$LERR" ]
}

@test "both ways at once: 16 MiB each way" {
	start_listener -q -s 16M -r 16M
	xfer_connect -q -s 16M -r 16M
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} =~ $(sent_re 16777216) ]]
	[[ ${lines[1]} =~ $(recv_re 16777216) ]]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[ "$(wc -l <"$T/l.out")" -eq 2 ]
	[[ $(sed -n 1p "$T/l.out") =~ $(sent_re 16777216) ]]
	[[ $(sed -n 2p "$T/l.out") =~ $(recv_re 16777216) ]]
	[ -z "$LERR" ]
}

@test "IPv6 on ::1, with the progress notes on stderr" {
	[ -e /proc/net/if_inet6 ] || skip "no IPv6"
	start_listener -6 -b ::1 -r 4M -s 2M
	run "$TCPXFER" connect -6 -a ::1 -p "$PORT" -t 60 -s 4M -r 2M
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tcpxfer: connected to ::1 port $PORT" ]
	[[ ${lines[1]} =~ $(sent_re 4194304) ]]
	[[ ${lines[2]} =~ $(recv_re 2097152) ]]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[ "$(sed -n 1p "$T/l.err")" = "tcpxfer: listening on ::1 port $PORT" ]
	[[ $(sed -n 2p "$T/l.err") =~ ^"tcpxfer: connection from ::1 port "[0-9]+$ ]]
	[[ $(sed -n 1p "$T/l.out") =~ $(sent_re 2097152) ]]
	[[ $(sed -n 2p "$T/l.out") =~ $(recv_re 4194304) ]]
}

@test "--dstopts: IPv6 with a Destination Options header both ways" {
	[ -e /proc/net/if_inet6 ] || skip "no IPv6"
	start_listener -6 -b ::1 --dstopts -r 1M -s 1M
	run "$TCPXFER" connect -6 -a ::1 -p "$PORT" -t 60 -q --dstopts \
		-s 1M -r 1M
	[ "$status" -eq 0 ]
	[[ ${lines[1]} =~ $(recv_re 1048576) ]]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 20000 --dstopts
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --dstopts needs -6 (see --help)" ]
}

@test "zero bytes both ways: success and no result lines" {
	start_listener -q
	xfer_connect -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[ -z "$LOUT$LERR" ]
}

@test "wrong seed on the receiver: mismatch at offset 0, exit 1" {
	local got expected

	got=$(pattern 1 0 1)
	expected=$(pattern 2 0 1)
	[ "$got" != "$expected" ]
	start_listener -q -r 1M -S 2
	xfer_connect -q -s 1M -S 1
	# the sender may or may not see the reset before it is done
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	finish_listener
	[ "$LSTATUS" -eq 1 ]
	[ -z "$LOUT" ]
	[ "$LERR" = "tcpxfer: data mismatch at offset 0: got 0x$got, expected 0x$expected" ]
}

@test "--urgent: that byte goes as TCP urgent data, out of the stream of a plain receiver" {
	local got expected

	# without SO_OOBINLINE the receiver's stream lacks byte 1000: there
	# it finds byte 1001
	got=$(pattern 1 1001 1)
	expected=$(pattern 1 1000 1)
	[ "$got" != "$expected" ]
	start_listener -q -r 4096
	xfer_connect -q -s 4096 --urgent 1000
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	finish_listener
	[ "$LSTATUS" -eq 1 ]
	[ "$LERR" = "tcpxfer: data mismatch at offset 1000: got 0x$got, expected 0x$expected" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 -s 10 --urgent 10
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --urgent: offset 10 is not below --send 10 (see --help)" ]
}

@test "--md5: both sides sign with the same key; a different key gets no connection; key length checked" {
	start_listener -q -r 1M --md5 s3cret
	xfer_connect -q -s 1M --md5 s3cret
	[ "$status" -eq 0 ]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[[ $LOUT =~ $(recv_re 1048576) ]]
	# the listener drops a SYN signed with another key (and one not
	# signed at all): connect cannot complete
	start_listener -q -r 1M -t 10 --md5 s3cret
	run "$TCPXFER" connect -a 127.0.0.1 -p "$PORT" -t 2 -q -s 1M --md5 other
	[ "$status" -eq 1 ]
	run "$TCPXFER" connect -a 127.0.0.1 -p "$PORT" -t 2 -q -s 1M
	[ "$status" -eq 1 ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 --md5 ""
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --md5: the key must be 1 to 80 bytes (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 --md5 "$(printf 'k%.0s' {1..81})"
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --md5: the key must be 1 to 80 bytes (see --help)" ]
}

@test "receiver expects more than is sent: short, names the offset" {
	start_listener -q -r 16M
	xfer_connect -q -s 8M
	# all it sent was read: the sender itself succeeds
	[ "$status" -eq 0 ]
	[[ $output =~ $(sent_re 8388608) ]]
	finish_listener
	[ "$LSTATUS" -eq 1 ]
	[ -z "$LOUT" ]
	[ "$LERR" = "tcpxfer: peer closed the connection at offset 8388608, expected 16777216 bytes" ]
}

@test "receiver expects fewer than are sent: peer sent more" {
	start_listener -q -r 4M
	xfer_connect -q -s 8M
	# The listener's reset may reach the sender before it is done or not,
	# and either direction's thread may see it first (send, shutdown, or
	# the wait for the listener's end of the stream): exit 0, or 1 with
	# every line a reset seen by the sender. A reset that lands after the
	# last send and before shutdown() has already closed the socket, so
	# shutdown() fails with ENOTCONN and the reset's own error is never read.
	echo "$output"
	if [ "$status" -ne 0 ]; then
		[ "$status" -eq 1 ]
		[ -n "$output" ]
		run grep -Ev '^tcpxfer: ((send|shutdown|recv): (Broken pipe|Connection reset by peer)|shutdown: Transport endpoint is not connected)$' <<<"$output"
		[ "$status" -eq 1 ]
	fi
	finish_listener
	[ "$LSTATUS" -eq 1 ]
	[ -z "$LOUT" ]
	[ "$LERR" = "tcpxfer: peer sent more than 4194304 bytes" ]
}

@test "connect retries while refused, until the listener is up" {
	local cpid cstatus=0

	LISTEN_PORT=$((10000 + RANDOM % 20000))
	"$TCPXFER" connect -a 127.0.0.1 -p "$LISTEN_PORT" -w 20 -t 60 -q \
		-s 1M >"$T/c.out" 2>"$T/c.err" 3>&- &
	cpid=$!
	start_listener -q -r 1M
	wait "$cpid" || cstatus=$?
	[ "$cstatus" -eq 0 ]
	[[ $(cat "$T/c.out") =~ $(sent_re 1048576) ]]
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[[ $LOUT =~ $(recv_re 1048576) ]]
}

@test "connect gives up after --wait when refused: exit 1" {
	local port

	# a port that was free a moment ago: nothing listens there
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	run "$TCPXFER" connect -a 127.0.0.1 -p "$port" -w 1 -q -s 1K
	[ "$status" -eq 1 ]
	[ "$output" = "tcpxfer: connect: Connection refused" ]
}

@test "listen times out when nobody connects: exit 1" {
	start_listener -q -t 1
	finish_listener
	[ "$LSTATUS" -eq 1 ]
	[ "$LERR" = "tcpxfer: timed out after 1 s waiting for a connection" ]
}

@test "usage: missing -p exits 2" {
	run "$TCPXFER" listen -r 1M
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: missing -p PORT (see --help)" ]
}

@test "usage: bad size 12Q exits 2" {
	run "$TCPXFER" listen -p 20000 -s 12Q
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: bad size '12Q' for --send (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 20000 --recv=-1
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: bad size '-1' for --recv (see --help)" ]
}

@test "usage: byte counts that do not fit or are not one (the test programs' shared parser) exit 2" {
	local bad
	for bad in 18446744073709551616 17179869184G 16777216T ' 1' '+1' 1KK 'K' '' 0x 1.5M; do
		run "$TCPXFER" listen -p 20000 -s "$bad"
		echo "$bad: $output"
		[ "$status" -eq 2 ]
		[ "$output" = "tcpxfer: bad size '$bad' for --send (see --help)" ]
	done
}

@test "usage: unknown options exit 2" {
	run "$TCPXFER" listen -p 20000 --frobnicate
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: unknown option '--frobnicate' (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 20000 -Z
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: unknown option '-Z' (see --help)" ]
}

@test "usage: port out of range, no mode, wrong side's option exit 2" {
	run "$TCPXFER" listen -p 65536
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: bad port '65536' (1-65535) (see --help)" ]
	run "$TCPXFER" -p 20000
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: missing mode: listen or connect (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 20000 --ready-file "$T/r"
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --ready-file is for listen (see --help)" ]
	[ ! -e "$T/r" ]
}

@test "--help prints the usage and exits 0" {
	run "$TCPXFER" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "NAME" ]
	grep -qxF $'\ttcpxfer listen [-6] [-b ADDR] -p PORT [options]' <<<"$output"
	grep -qxF $'\ttcpxfer connect [-6] -a ADDR -p PORT [options]' <<<"$output"
	run "$TCPXFER" connect -h
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "NAME" ]
}

@test "--dump: the pattern matches its definition" {
	run "$TCPXFER" --dump 0 20
	[ "$status" -eq 0 ]
	[ "$output" = "$(pattern 1 0 20)" ]
	# seed 1, offset 0 pinned by value, not only by the same formula twice
	[ "${lines[0]}" = "af cd 1d 7b 39 a8 20 e2 c1 5c 02 89 ec 2d 0a 91" ]
	# an unaligned offset past 4 GiB, several lines, a hex seed
	run "$TCPXFER" --dump 4294967299 37 -S 0x1234
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "$output" = "$(pattern 0x1234 4294967299 37)" ]
	run "$TCPXFER" --dump 5 3 -S 18446744073709551615
	[ "$status" -eq 0 ]
	[ "$output" = "$(pattern 18446744073709551615 5 3)" ]
}

# stopped PID: PID is stopped.
stopped() {
	local st
	read -r _ _ st _ <"/proc/$1/stat"
	[ "$st" = T ]
}

# The exact offsets are checked in the VM (selftests/devmem-leak.bats,
# by the connection's bytes_acked), where ss has the kernel's sock_diag.
@test "--stop-at: the sender stops at each offset and goes on at SIGCONT; offsets checked" {
	local pid i n
	start_listener -q -r 1M
	"$TCPXFER" connect -q -a 127.0.0.1 -p "$PORT" -t 60 -s 1M \
		--stop-at 256K --stop-at 768K >"$T/c.out" 2>&1 3>&- &
	pid=$!
	for n in 1 2; do
		for i in $(seq 500); do
			stopped "$pid" && break
			sleep 0.02
		done
		stopped "$pid"
		kill -CONT "$pid"
	done
	wait "$pid"
	finish_listener
	[ "$LSTATUS" -eq 0 ]
	[[ $(cat "$T/c.out") =~ $(sent_re 1048576) ]]
	[[ $LOUT =~ $(recv_re 1048576) ]]
	# each offset above the one before, all below --send, at most 8
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 -s 10 --stop-at 0
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --stop-at: 0 is not above 0 (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 -s 10 --stop-at 5 --stop-at 5
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --stop-at: 5 is not above 5 (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 -s 10 --stop-at 10
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --stop-at: offset 10 is not below --send 10 (see --help)" ]
	run "$TCPXFER" connect -a 127.0.0.1 -p 1 -s 10 $(printf -- '--stop-at %d ' $(seq 9))
	[ "$status" -eq 2 ]
	[ "$output" = "tcpxfer: --stop-at: at most 8 times (see --help)" ]
}
