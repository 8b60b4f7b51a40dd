#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Sending from device memory on the netdevsim pair: A binds a udmabuf for
# tx (netdev bind-tx) and sends from it with MSG_ZEROCOPY and an
# SCM_DEVMEM_DMABUF cmsg; netdevsim's wire reads the payload by DMA
# address; B receives it, with plain TCP or into its own dma-buf.

bats_require_minimum_version 1.5.0

load lib/vm
load lib/nsim

PORT=5301

test_setup() {
	nsim_pair 4
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() {
	[ -z "${IDO:-}" ] || echo "$IDO" >"$NSIM_BUS/del_device"
	nsim_cleanup
}

# sink_start [socat address options]: socat in B listening on PORT, its
# stdout in SINK_OUT; returns once it listens.
sink_start() {
	SINK_OUT=$BATS_TEST_TMPDIR/sink.out
	in_ns "$NSB" socat -u "TCP-LISTEN:$PORT,reuseaddr$1" "OPEN:$SINK_OUT,creat,trunc" 3>&- &
	SINK_PID=$!
	wait_until 20 tcp_bound "$NSB" "$PORT"
}

@test "check_tx: hello and world arrive exactly, sent from device memory" {
	nsim_snap "$NSA" "$DEVA"
	local before=${STAT[tx_devmem_bytes]}
	sink_start
	run -0 in_ns "$NSA" bash -c "printf 'hello\nworld\n' | '$BIN/ncdevmem' -f $DEVA -s $IP4B -p $PORT"
	echo "$output"
	wait "$SINK_PID"
	run -0 cat "$SINK_OUT"
	[ "$output" = $'hello\nworld' ]
	nsim_snap "$NSA" "$DEVA"
	[ "$((STAT[tx_devmem_bytes] - before))" = 12 ]
}

@test "check_tx_chunks: 3-byte iovecs over IPv6" {
	sink_start ",pf=ip6"
	run -0 in_ns "$NSA" bash -c "printf 'hello\nworld\n' | '$BIN/ncdevmem' -f $DEVA -s $IP6B -p $PORT -z 3"
	echo "$output"
	wait "$SINK_PID"
	run -0 cat "$SINK_OUT"
	[ "$output" = $'hello\nworld' ]
}

# The refusals, as mainline's. build/bin/devmem-tx (selftests/progs/
# devmem-tx) binds a 1M udmabuf whose byte at offset I is 'a' + I % 26
# and sends from it: one line per send, the step and what sendmsg
# returned. Each send waits until the previous ones are acknowledged, so
# that it starts a segment of its own.

DMABUF_SIZE=1048576

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

# other_dev: one more netdevsim port, in A's namespace, up, not linked;
# OTHER_IF its ifindex (deleted by test_teardown).
other_dev() {
	local dev
	IDO=$((3000 + BATS_TEST_NUMBER))
	dev=$(nsim_new_dev "$IDO" 1)
	read -r OTHER_IF <"/sys/class/net/$dev/ifindex"
	# (its name may be A's port's there)
	ip link set "$dev" name devmemtx0 netns "$NSA"
	ip -n "$NSA" link set devmemtx0 up
}

# frags N: the step of N 1-byte ranges, each in a page of its own (at
# k * 4161, so the k-th is the letter 'a' + k), ending in "/" for more.
frags() {
	local k
	for ((k = 0; k < $1; k++)); do printf '%d+1/' $((k * 4161)); done
}

@test "bind-tx: a netdevsim port binds a udmabuf; the reply names the binding" {
	run -0 tx bind-tx "$IFA"
	[[ $output =~ ^bind-tx\ id=[1-9][0-9]*$ ]]
}

@test "bind-tx: no capability needed" {
	run -0 in_ns "$NSA" setpriv --bounding-set -net_admin --inh-caps -net_admin \
		"$BIN/devmem-tx" bind-tx "$IFA"
	[[ $output =~ ^bind-tx\ id=[1-9][0-9]*$ ]]
}

@test "bind-tx without ifindex: EINVAL, the attribute named" {
	run -1 tx bind-tx "$IFA" --no-ifindex
	[ "$output" = "EINVAL: ifindex is required (missing attribute 1)" ]
}

@test "bind-tx without fd: EINVAL, the attribute named" {
	run -1 tx bind-tx "$IFA" --no-fd
	[ "$output" = "EINVAL: dma-buf fd is required (missing attribute 3)" ]
}

@test "bind-tx on an ifindex the namespace has no device for: ENODEV" {
	run -1 tx bind-tx 9999
	[ "$output" = "ENODEV: no network device with this ifindex" ]
	# B's port, in the other namespace
	run -1 tx bind-tx "$IFB"
	[ "$output" = "ENODEV: no network device with this ifindex" ]
}

@test "bind-tx on a device without netmem tx (lo, a veth): EOPNOTSUPP" {
	ip -n "$NSA" link add devmemtxv0 type veth peer name devmemtxv1
	run -1 tx bind-tx 1
	[ "$output" = "EOPNOTSUPP: Driver does not support netmem TX" ]
	run -1 tx bind-tx "$(ifindex_in "$NSA" devmemtxv0)"
	[ "$output" = "EOPNOTSUPP: Driver does not support netmem TX" ]
}

@test "bind-tx of an fd that is not open: EBADF" {
	run -1 tx bind-tx "$IFA" --fd-closed
	[ "$output" = "EBADF: fd is not a dma-buf" ]
}

@test "bind-tx of a regular file: EINVAL" {
	run -1 tx bind-tx "$IFA" --fd-file /etc/passwd
	[ "$output" = "EINVAL: fd is not a dma-buf" ]
}

@test "send: ranges of the dma-buf arrive exactly" {
	sink_start
	run -0 send 0+5 26+3 "$(frags 3)$((DMABUF_SIZE - 2))+2"
	[ "$output" = $'0+5 5\n26+3 3\n0+1/4161+1/8322+1/1048574+2 5' ]
	sink_is abcdeabcabcuv
}

@test "send naming an unknown binding id: EINVAL; the socket sends on" {
	sink_start
	run -0 send 0+3 0+5,id=unknown 3+3
	[ "$output" = $'0+3 3\n0+5,id=unknown EINVAL\n3+3 3' ]
	sink_is abcdef
}

@test "send naming binding id 0: no binding, an ordinary MSG_ZEROCOPY send from user address OFF (EFAULT)" {
	sink_start
	run -0 send 0+3 0+5,id=0 3+3
	[ "$output" = $'0+3 3\n0+5,id=0 EFAULT\n3+3 3' ]
	sink_is abcdef
}

@test "send naming an rx binding: EINVAL; the socket sends on" {
	in_ns "$NSA" "$BIN/tcp-data-split" "$DEVA" on
	sink_start
	run -0 in_ns "$NSA" "$BIN/netdev-nl" bind-rx "$IFA" 3 udmabuf:1M --run \
		"$BIN/devmem-tx" send --dev "$IFA" "$IP4B" "$PORT" 0+3 0+5,id=rx 3+3
	[[ ${lines[0]} =~ ^bind-rx\ id=[1-9][0-9]*$ ]]
	[ "${lines[1]}" = "0+3 3" ]
	[ "${lines[2]}" = "0+5,id=rx EINVAL" ]
	[ "${lines[3]}" = "3+3 3" ]
	[ "${#lines[@]}" -eq 4 ]
	sink_is abcdef
}

@test "send naming another device's tx binding: ENODEV; the socket sends on" {
	other_dev
	sink_start
	run -0 tx send --dev "$IFA" --other "$OTHER_IF" "$IP4B" "$PORT" 0+3 0+5,id=other 3+3
	[ "$output" = $'0+3 3\n0+5,id=other ENODEV\n3+3 3' ]
	sink_is abcdef
}

@test "send on an unconnected socket: ENODEV (no route to match the binding)" {
	run -0 tx send --dev "$IFA" --unconnected "$IP4B" "$PORT" 0+5
	[ "$output" = "0+5 ENODEV" ]
}

@test "send at or beyond the end of the dma-buf: EFAULT; the socket sends on" {
	sink_start
	run -0 send 0+3 "$DMABUF_SIZE+1" "$((DMABUF_SIZE + 4096))+1" 4294967296+1 3+3
	[ "$output" = $'0+3 3\n1048576+1 EFAULT\n1052672+1 EFAULT\n4294967296+1 EFAULT\n3+3 3' ]
	sink_is abcdef
}

@test "send of a range that runs past the end, within one segment: EFAULT, nothing sent" {
	sink_start
	run -0 send 0+3 "$((DMABUF_SIZE - 3))+10" "0+1/$DMABUF_SIZE+1" 3+3
	[ "$output" = $'0+3 3\n1048573+10 EFAULT\n0+1/1048576+1 EFAULT\n3+3 3' ]
	sink_is abcdef
}

@test "send whose range runs past the end after a full segment: the full segment's bytes" {
	# 18 ranges in 18 pages: the first 17 fill an skb's frags, the 18th
	# starts the next skb, which the range past the end empties again
	sink_start
	run -0 send "$(frags 18)$DMABUF_SIZE+1" 0+3
	[ "${lines[0]}" = "$(frags 18)$DMABUF_SIZE+1 17" ]
	[ "${lines[1]}" = "0+3 3" ]
	sink_is abcdefghijklmnopqabc
}

@test "send whose range past the end comes when an skb's frags are full: the full skb is kept, as mainline's" {
	# 17 ranges fill an skb's frags exactly; the range past the end is
	# refused in the next skb, and the 17 bytes go
	sink_start
	run -0 send "$(frags 17)$DMABUF_SIZE+1" 0+3
	[ "${lines[0]}" = "$(frags 17)$DMABUF_SIZE+1 17" ]
	[ "${lines[1]}" = "0+3 3" ]
	sink_is abcdefghijklmnopqabc
}

@test "send without MSG_ZEROCOPY: EINVAL; the socket sends on" {
	sink_start
	run -0 send 0+3 0+5,noflag 3+3
	[ "$output" = $'0+3 3\n0+5,noflag EINVAL\n3+3 3' ]
	sink_is abcdef
}

@test "send without SO_ZEROCOPY: EINVAL; the socket sends once it is set again" {
	sink_start
	run -0 send 0+3 zc=0 0+5 zc=1 3+3
	[ "$output" = $'0+3 3\n0+5 EINVAL\n3+3 3' ]
	sink_is abcdef
}

@test "send with a cmsg payload other than 4 bytes: EINVAL; the socket sends on" {
	sink_start
	run -0 send 0+3 0+5,cmsglen=0 0+5,cmsglen=2 0+5,cmsglen=8 3+3
	[ "$output" = $'0+3 3\n0+5,cmsglen=0 EINVAL\n0+5,cmsglen=2 EINVAL\n0+5,cmsglen=8 EINVAL\n3+3 3' ]
	sink_is abcdef
}

@test "send after the binding's netlink socket closed: EINVAL; what was sent arrives" {
	sink_start
	run -0 send 0+3 unbind 3+3
	[ "$output" = $'0+3 3\n3+3 EINVAL' ]
	sink_is abc
}
