#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wire: odd TCP from a raw packet socket at a devmem TCP receiver.
# build/bin/tcp-wirefuzz tx in A speaks TCP itself from an address A does
# not own (192.0.2.3, 2001:db8::3; B has static neighbours for them, A
# drops what comes back to them, so nothing resets the flows), to port
# 5201 of B, which is steered to queue 3, bound to a udmabuf. Each
# connection does its handshake, then sends the pattern stream among odd
# segments that a seeded PRNG picks: every TCP option kind with odd
# lengths, MD5 options without a key, bad checksums, acknowledged and
# overlapping retransmits, out-of-order and out-of-window data, urgent
# pointers, IPv4 fragments (overlapping too), window probes, SACK blocks
# with edge values, tiny MSS and segments, old timestamps (PAWS), SYNs and
# inexact RSTs in the window; then ends with FIN, RST, FIN and RST at
# once, or data and RST at once. tcp-wirefuzz rx in B receives each
# connection with recvmsg(MSG_SOCK_DEVMEM) and checks every byte against
# the pattern. Segments with wrong bytes are only those TCP must drop, so
# a wrong byte received fails the test. Pass: both programs exit 0, each
# connection delivers exactly the bytes sent and ends as its last
# segments say (end of stream after a FIN, ECONNRESET after an RST), the
# counters of what must be dropped moved by exactly what was sent (less
# at most the socket backlog's drops for those counted behind it), the
# binding's pool drains, and the kernel log is clean (lib/vm).
#
# Queue 3 reports CHECKSUM_COMPLETE (the csum knob), so that the stack,
# not the "NIC", judges a checksum. IPv4 fragments carry no ports: RSS
# puts them on queues 0-2 (host memory), where they are reassembled; their
# bytes reach the socket as linear data among device-memory ones.
#
# The seed fixes each connection's sequence of actions; what some of them
# send depends on the ACKs seen so far (window, acknowledged offset), so
# byte counts differ from run to run: the tests compare the receiver and
# the counters with what the generator reports it sent.
#
# The debug kernel runs 40% of each group's actions (--percent), the MD5
# and zero-window connections whole. Replay: each test prints the
# generator's command line with its seed; -n ACTIONS shortens a run.

load lib/vm
load lib/nsim
load lib/devmem

SEED=1
SRC4=192.0.2.3
SRC6=2001:db8::3

test_setup() {
	devmem_setup
	steer tcp6 "$PORT"
	echo complete >"$DFSB/rxq/3/csum"
	ip -n "$NSB" -b - <<-EOF_IP
		neigh add $SRC4 lladdr $MACA dev $DEVB
		neigh add $SRC6 lladdr $MACA dev $DEVB
	EOF_IP
}
test_teardown() { nsim_cleanup; }

# The counters of B a test compares: MIB[name] from /proc/net/snmp and
# /proc/net/netstat (Ip, IpExt, Tcp, TcpExt), one exec.
declare -gA MIB
mib_snap() {
	local -a names vals
	local line i pfx last=
	MIB=()
	while read -r line; do
		pfx=${line%%:*}
		if [ -z "${names[*]:-}" ] || [ "$pfx" != "$last" ]; then
			read -r -a names <<<"${line#*:}"
			last=$pfx
			continue
		fi
		read -r -a vals <<<"${line#*:}"
		for i in "${!names[@]}"; do MIB[$pfx.${names[i]}]=${vals[i]}; done
		names=()
	done < <(in_ns "$NSB" cat /proc/net/snmp /proc/net/netstat)
}

# wire_run GROUPS SRC [rx args] -- [tx args]: a receiver for as many
# connections as GROUPS names, the generator, both waited for. TX_LINES
# and RX_LINES hold their lines; MIB0 and MIB the counters before and
# after.
declare -gA MIB0
wire_run() {
	local groups=$1 src=$2 dst=$IP4B n k rxargs=() txargs=() rc=0
	shift 2
	[[ $src != *:* ]] || dst=$IP6B
	while [ $# -gt 0 ] && [ "$1" != -- ]; do rxargs+=("$1"); shift; done
	[ $# -eq 0 ] || shift
	txargs=(--percent "$(on_debug 40 100)" "$@")
	n=$(tr , '\n' <<<"$groups" | wc -l)
	mib_snap
	for k in "${!MIB[@]}"; do MIB0[$k]=${MIB[$k]}; done
	RX_OUT=$BATS_TEST_TMPDIR/rx.out
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 udmabuf:64M \
		--run "$BIN/tcp-wirefuzz" rx -p "$PORT" -c "$n" -S "$SEED" \
		-r "$RX_OUT.ready" "${rxargs[@]}" >"$RX_OUT" 2>&1 &
	RX_PID=$!
	wait_until 30 test -e "$RX_OUT.ready"
	[[ $(head -1 "$RX_OUT") =~ ^bind-rx\ id=([0-9]+)$ ]]
	BIND_ID=${BASH_REMATCH[1]}
	echo "tx: ip netns exec $NSA $BIN/tcp-wirefuzz tx -I $DEVA -m $MACB -s $src -d $dst -p $PORT -S $SEED -g $groups ${txargs[*]}"
	in_ns "$NSA" "$BIN/tcp-wirefuzz" tx -I "$DEVA" -m "$MACB" -s "$src" \
		-d "$dst" -p "$PORT" -S "$SEED" -g "$groups" "${txargs[@]}" \
		>"$BATS_TEST_TMPDIR/tx.out" 2>&1 || rc=$?
	cat "$BATS_TEST_TMPDIR/tx.out"
	mapfile -t TX_LINES <"$BATS_TEST_TMPDIR/tx.out"
	if [ "$rc" -ne 0 ]; then
		kill "$RX_PID" 2>/dev/null || true
		wait "$RX_PID" || true
		cat "$RX_OUT"
		return "$rc"
	fi
	rx_wait
	mib_snap
	echo "B lost: TCPBacklogDrop $(delta TcpExt.TCPBacklogDrop), TCPRcvQDrop $(delta TcpExt.TCPRcvQDrop)"
}

# delta NAME: how much counter NAME (e.g. TcpExt.TCPMD5Unexpected) moved.
delta() { echo $((${MIB[$1]:-0} - ${MIB0[$1]:-0})); }

# tx_sum FIELD: FIELD (e.g. csum) added up over the generator's lines.
tx_sum() {
	local l t=0
	for l in "${TX_LINES[@]}"; do
		[[ $l =~ \ $1\ ([0-9]+) ]] && t=$((t + BASH_REMATCH[1]))
	done
	echo $t
}

# counter_is NAME FIELD: counter NAME moved by exactly tx_sum FIELD.
counter_is() {
	local want got
	want=$(tx_sum "$2")
	got=$(delta "$1")
	echo "$1: moved $got, sent $want ($2)"
	[ "$got" -eq "$want" ]
}

# counter_lossy NAME FIELD: for a drop TCP counts after the socket's
# backlog (PAWS, zero window): counter NAME moved by tx_sum FIELD less at
# most what the backlog dropped (TCPBacklogDrop: the receiver held its
# socket while a burst came, which timing decides). Checksum, MD5 and
# reassembly counts come before the backlog and are exact.
counter_lossy() {
	local want got lost
	want=$(tx_sum "$2")
	got=$(delta "$1")
	lost=$(delta TcpExt.TCPBacklogDrop)
	echo "$1: moved $got, sent $want ($2), backlog drops $lost"
	[ "$got" -le "$want" ]
	[ $((got + lost)) -ge "$want" ]
}

# conn_is I END: connection I delivered exactly the bytes the generator
# sent and ended with END (eof or an errno name).
conn_is() {
	local i=$1 end=$2 sent got
	[[ ${TX_LINES[i]} =~ ^conn\ $i\ [a-z0-9-]+:\ sent\ ([0-9]+)\ bytes ]]
	sent=${BASH_REMATCH[1]}
	[[ ${RX_LINES[i + 1]} =~ ^conn\ $i:\ ([0-9]+)\ bytes\ .*,\ end\ ([A-Za-z]+)$ ]]
	got=${BASH_REMATCH[1]}
	echo "conn $i: sent $sent, received $got, end ${BASH_REMATCH[2]}"
	[ "$got" -eq "$sent" ]
	[ "${BASH_REMATCH[2]}" = "$end" ]
}

@test "IPv4: options, checksums, retransmits, urgent, fragments, edges, tiny MSS, a mix: every byte right, exact drops" {
	wire_run options,csum,retrans,urgent,frags,edges,tinymss,mixed "$SRC4" \
		--reply 8192
	[ "${#TX_LINES[@]}" -eq 8 ]
	[ "${#RX_LINES[@]}" -eq 9 ]
	conn_is 0 eof
	conn_is 1 ECONNRESET
	conn_is 2 eof
	conn_is 3 eof
	conn_is 4 ECONNRESET
	conn_is 5 eof
	conn_is 6 ECONNRESET
	conn_is 7 eof
	# every bad checksum counted and dropped (its bytes were wrong)
	counter_is Tcp.InCsumErrors csum
	[ "$(tx_sum csum)" -gt 0 ]
	# MD5 options where no key is set: dropped
	counter_is TcpExt.TCPMD5Unexpected md5opt
	[ "$(tx_sum md5opt)" -gt 0 ]
	counter_lossy TcpExt.PAWSEstab paws
	[ "$(tx_sum paws)" -gt 0 ]
	counter_is Ip.ReasmOKs frags
	[ "$(tx_sum frags)" -gt 0 ]
	counter_is IpExt.ReasmOverlaps overlaps
	[ "$(tx_sum overlaps)" -gt 0 ]
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "IPv6: options, checksums, retransmits, urgent, edges: every byte right, exact drops" {
	wire_run v6 "$SRC6" --reply 8192
	conn_is 0 eof
	counter_is Tcp.InCsumErrors csum
	[ "$(tx_sum csum)" -gt 0 ]
	counter_is TcpExt.TCPMD5Unexpected md5opt
	counter_lossy TcpExt.PAWSEstab paws
	[ "$(tx_sum paws)" -gt 0 ]
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "urgent pointers into device memory without SO_OOBINLINE: the urgent bytes stay in the stream" {
	wire_run strict-urgent "$SRC4" --no-oobinline
	conn_is 0 eof
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "TCP-MD5: device-memory segments fail verification (TCPMD5Failure), fragments in host memory verify, unsigned ones are not found" {
	wire_run md5 "$SRC4" --md5 "$SRC4/wire-md5-key" -- --md5 wire-md5-key
	conn_is 0 ECONNRESET
	[ "$(tx_sum frags)" -eq 10 ]
	# 10 data segments in device memory and 10 wrongly signed ACKs
	counter_is TcpExt.TCPMD5Failure md5bad
	[ "$(tx_sum md5bad)" -eq 20 ]
	counter_is TcpExt.TCPMD5NotFound md5none
	[ "$(tx_sum md5none)" -eq 10 ]
	counter_is Ip.ReasmOKs frags
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "zero window: the receiver stops reading, probes into the shut window are dropped, the stream resumes whole" {
	local resume=$BATS_TEST_TMPDIR/resume
	wire_run zerowin "$SRC4" --pause "0:$resume" -- \
		--resume "$resume"
	conn_is 0 eof
	[ "$(tx_sum zwin)" -eq 1 ]
	counter_lossy TcpExt.TCPZeroWindowDrop zwdrop
	[ "$(tx_sum zwdrop)" -eq 5 ]
	wait_until 30 no_pools_of "$BIND_ID"
}
