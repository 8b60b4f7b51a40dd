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
load lib/devmem-tx

PORT=5301

test_setup() {
	nsim_pair 4
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() {
	[ -z "${IDO:-}" ] || echo "$IDO" >"$NSIM_BUS/del_device"
	nsim_cleanup
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

# Streams of small and large sends over a path that delays, reorders,
# drops and duplicates: TCP splits, merges and trims the skbs in its
# queues, and their truesize must stay above the bytes they carry, or
# the socket's send memory wraps (refcount_t saturated, the socket never
# freed). Byte I of the stream is 'a' + I % 26.

# stream_over NETEM BYTES CALL: BYTES sent in CALL-byte sends with Nagle
# on, A's port shaped by netem NETEM; every byte arrives and the sender's
# send memory is back to zero once all is acknowledged.
stream_over() {
	# shellcheck disable=SC2086 # NETEM is netem's words
	tc -n "$NSA" qdisc add dev "$DEVA" root netem $1
	sink_start
	run -0 tx send --nagle --size 4M --dev "$IFA" "$IP4B" "$PORT" "stream=$2:$3" meminfo
	[ "${lines[0]}" = "stream=$2:$3 $(numfmt --from=iec "$2")" ]
	[ "${lines[1]}" = "meminfo wmem_alloc=0 wmem_queued=0" ]
	wait "$SINK_PID"
	cmp "$SINK_OUT" <(letters "$(numfmt --from=iec "$2")")
}

@test "1000-byte sends with Nagle over delay, jitter and 5% loss: every byte, the send memory back to zero" {
	stream_over "delay 5ms 2ms loss 5%" 4M 1000
}

@test "64 KiB sends over delay, jitter, 20% duplicates and 2% loss: every byte, the send memory back to zero" {
	stream_over "delay 10ms 3ms duplicate 20% loss 2%" 4M 64K
}

# The socket's cached route reset between sends: the next devmem send
# builds it again, as mainline (6.18) does.
@test "send after IP_TOS, SO_MARK and SO_DONTROUTE reset the route: every send goes" {
	sink_start
	run -0 send 0+3 tos=16 3+3 mark=7 6+3 dontroute=1 9+3 dontroute=0 12+3
	[ "$output" = $'0+3 3\n3+3 3\n6+3 3\n9+3 3\n12+3 3' ]
	sink_is abcdefghijklmno
}

@test "send after IPV6_TCLASS reset the route (IPv6): the send goes" {
	sink_start ",pf=ip6"
	run -0 tx send -6 --dev "$IFA" "$IP6B" "$PORT" 0+3 tos=32 3+3
	[ "$output" = $'0+3 3\n3+3 3' ]
	sink_is abcdef
}

# Sockets whose sends copy from user memory or sign the payload.
@test "send on a TCP_FASTOPEN_CONNECT socket before it connected: EINVAL" {
	# Fast Open without a cookie: connect() waits for the first send
	in_ns "$NSA" sysctl -qw net.ipv4.tcp_fastopen=5
	run -0 tx send --tfo --dev "$IFA" "$IP4B" "$PORT" 0+3
	[ "$output" = "0+3 EINVAL" ]
}

@test "send with MSG_FASTOPEN: EINVAL" {
	run -0 tx send --unconnected --dev "$IFA" "$IP4B" "$PORT" 0+3,fastopen
	[ "$output" = "0+3,fastopen EINVAL" ]
}

@test "send in TCP repair mode: EINVAL; out of it, the socket sends on" {
	sink_start
	run -0 send 0+3 repair=1 0+5 repair=0 3+3
	[ "$output" = $'0+3 3\n0+5 EINVAL\n3+3 3' ]
	sink_is abcdef
}

@test "send on a socket with a TCP-MD5 key: EINVAL" {
	sink_start
	# the key goes on once 0+3 is acknowledged: the sink's unsigned ACK
	# would be dropped after it
	run -0 send 0+3 meminfo md5 0+5
	[ "$output" = $'0+3 3\nmeminfo wmem_alloc=0 wmem_queued=0\n0+5 EINVAL' ]
	# the sink has no key: it drops the signed FIN
	kill "$SINK_PID"
	wait "$SINK_PID" || true
	run -0 cat "$SINK_OUT"
	[ "$output" = abc ]
}

@test "send whose empty first iovec lies beyond the dma-buf: EFAULT, as mainline's; one within it is stepped over" {
	sink_start
	run -0 send 0+3 "1099511627776+0/3+5" "5+0/3+3"
	[ "$output" = $'0+3 3\n1099511627776+0/3+5 EFAULT\n5+0/3+3 3' ]
	sink_is abcdef
}

# Transmit timestamps of a send from device memory come without the
# packet (which nobody may read), as with SOF_TIMESTAMPING_OPT_TSONLY.
@test "transmit timestamps of a devmem send arrive without payload, keyed by OPT_ID" {
	sink_start
	# B's ACKs come late: OPT_ID counts from the first unacknowledged
	# byte, and tstamp waits until 0+3 is acknowledged
	in_ns "$NSB" tc qdisc add dev "$DEVB" root netem delay 100ms
	run -0 send 0+3 tstamp 3+5 tstamps
	echo "$output"
	[ "${lines[1]}" = "3+5 5" ]
	[ "${lines[2]}" = "tstamp sched key=4 payload=0" ]
	[ "${lines[3]}" = "tstamp ack key=4 payload=0" ]
	[ "${#lines[@]}" -eq 4 ]
	sink_is abcdefgh
}

@test "send through a device with transmit checksumming off: EINVAL (nothing else could sum the payload)" {
	"$BIN/in-ns" "$NSA" ethtool -K "$DEVA" tx off
	sink_start
	run -0 send 0+5
	[ "$output" = "0+5 EINVAL" ]
	sink_is ""
}

