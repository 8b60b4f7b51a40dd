# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the send suites (devmem-tx, devmem-tx-shared): a sink in B,
# build/bin/devmem-tx in A (its udmabuf's byte at offset I is
# 'a' + I % 26), bindings held by other uids, a memory cgroup, the
# per-user limit. Needs lib/nsim's pair (NSA, NSB, IFA, IP4B) and PORT.

# sink_start [socat address options]: socat in B listening on PORT, its
# stdout in SINK_OUT; returns once it listens.
sink_start() {
	SINK_OUT=$BATS_TEST_TMPDIR/sink.out
	in_ns "$NSB" socat -u "TCP-LISTEN:$PORT,reuseaddr$1" "OPEN:$SINK_OUT,creat,trunc" 3>&- &
	SINK_PID=$!
	wait_until 20 tcp_bound "$NSB" "$PORT"
}

tx() { in_ns "$NSA" "$BIN/devmem-tx" "$@"; }
# send STEP...: connect to B's sink and send, bound on A's port.
send() { tx send --dev "$IFA" "$IP4B" "$PORT" "$@"; }

# sink_is TEXT: the sink ended (the sender closed) and got exactly TEXT.
sink_is() {
	wait "$SINK_PID"
	local got
	got=$(cat "$SINK_OUT")
	echo "sink got: $got"
	[ "$got" = "$1" ]
}

# letters N: the first N bytes of the stream whose byte I is 'a' + I % 26
letters() { yes abcdefghijklmnopqrstuvwxyz | tr -d '\n' | head -c "$1"; }

# Who may send from a binding: its owner's network namespace, and the
# uid that bound it or CAP_NET_ADMIN there. Unprivileged uids get
# /dev/udmabuf for the test (bind-tx needs no capability).

# hold_tx [--in NS IFINDEX] AS...: devmem-tx bind-tx through A's port
# (IFINDEX in NS), run as AS (a setpriv, or nothing for root), holding
# its binding until HOLD_IN is closed; HELD_ID its id.
hold_tx() {
	local out=$BATS_TEST_TMPDIR/hold.out ns=$NSA ifindex=$IFA
	if [ "$1" = --in ]; then
		ns=$2 ifindex=$3
		shift 3
	fi
	mkfifo "$BATS_TEST_TMPDIR/hold.in"
	in_ns "$ns" "$@" "$BIN/devmem-tx" bind-tx "$ifindex" --hold \
		<"$BATS_TEST_TMPDIR/hold.in" >"$out" 3>&- &
	exec {HOLD_IN}>"$BATS_TEST_TMPDIR/hold.in"
	wait_until 20 grep -q '^bind-tx id=' "$out"
	HELD_ID=$(sed -n 's/^bind-tx id=//p' "$out")
}

as_uid() { echo setpriv --reuid "$1" --regid "$1" --clear-groups --inh-caps=-all; }

udmabuf_for_all() {
	UDMABUF_MODE=$(stat -c %a /dev/udmabuf)
	chmod 666 /dev/udmabuf
}

teardown_owner() {
	[ -z "${HOLD_IN:-}" ] || exec {HOLD_IN}>&-
	HOLD_IN=
	[ -z "${PER_USER_OLD:-}" ] || sysctl -qw net.core.devmem_tx_bindings_per_user="$PER_USER_OLD"
	PER_USER_OLD=
	[ -z "${UDMABUF_MODE:-}" ] || chmod "$UDMABUF_MODE" /dev/udmabuf
	UDMABUF_MODE=
}

# What one user's tx bindings may cost the host: their memory is charged
# to the caller's memory cgroup, and each uid may hold
# net.core.devmem_tx_bindings_per_user of them at once.

CG=
cgroup_new() {
	local root=$BATS_TEST_TMPDIR/cgroup2
	mkdir -p "$root"
	mount -t cgroup2 none "$root"
	echo +memory >"$root/cgroup.subtree_control"
	CG=$root/devmemtx
	mkdir "$CG"
}
cgroup_done() {
	[ -n "$CG" ] || return 0
	rmdir "$CG" 2>/dev/null || true
	umount "$(dirname "$CG")"
	CG=
}

# per_user N: net.core.devmem_tx_bindings_per_user N until the test ends.
per_user() {
	PER_USER_OLD=${PER_USER_OLD:-$(sysctl -n net.core.devmem_tx_bindings_per_user)}
	sysctl -qw net.core.devmem_tx_bindings_per_user="$1"
}

