#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Bounded fuzzers of the device-memory user interfaces, each with a fixed
# seed and count, so that every run sends the same inputs:
#
# * fuzz-netlink: random requests (commands, flags, header fields,
#   attribute types, lengths and nesting) to every command of the netdev
#   family, do and dump, and to ethtool's rings and channels commands,
#   bind-rx of real udmabufs to random queue lists and bind-tx of them
#   among them. What the request alone decides (skipped, acked, refused
#   by genetlink) must be
#   exactly that; what reaches a handler must succeed or fail with one of
#   that command's errnos; every reply must be well formed, and closing a
#   socket must undo its bindings.
# * fuzz-sockopt: recvmsg(MSG_SOCK_DEVMEM) with random control and data
#   buffer sizes and flags, SO_DEVMEM_DONTNEED with random ranges,
#   lengths and unreadable buffers, on a socket receiving a devmem flow
#   and on sockets without tokens; every result is the documented one,
#   every DONTNEED frees exactly the tokens it names and every byte is
#   the test pattern. Its --returned-token mode is the minimal case of a
#   token given back by another thread while recvmsg waits for more.
# * devmem-tx's fuzz step: sendmsg from device memory with random ranges
#   (merging, crossing and past the dma-buf's end), bad ids, flags and
#   cmsg sizes, sends from host memory among them, socket options between
#   them (cork, Nagle, send buffer, TOS, SO_ZEROCOPY), and rests at which
#   the socket's send memory must be back to zero with every MSG_ZEROCOPY
#   completion read; the receiver's copy of the stream must match what
#   the kernel accepted, byte for byte (POSIX cksum).
#
# The counts these tests compare exactly are those the seed alone
# decides; the programs draw their random numbers independently of the
# kernel's answers. Pass: exit 0 and no kernel report (lib/vm checks the
# log after each test). Replay a failure with the seed and iteration
# count the program prints, e.g.
#   ip netns exec nsb build/bin/fuzz-netlink --seed 1 --iterations N ...

load lib/vm
load lib/nsim
# sink_start; lib/devmem's send (to devmem-rx) replaces its send
load lib/devmem-tx
load lib/devmem

NL_ITER=10000
SO_ITER=3000
TX_ITER=$(on_debug 300 2000)
TX_LOSSY_ITER=$(on_debug 60 400)

test_setup() { devmem_setup; }
test_teardown() {
	nsim_cleanup
	[ -z "${HUGE_OLD:-}" ] || echo "$HUGE_OLD" >/proc/sys/vm/nr_hugepages
	HUGE_OLD=
}

@test "fuzz-netlink: $NL_ITER random netdev and ethtool requests: exact refusals, documented errnos, well-formed replies, no binding left" {
	run in_ns "$NSB" "$BIN/fuzz-netlink" --seed 1 --iterations "$NL_ITER" \
		--ifindex "$IFB" --ifname "$DEVB"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fuzz-netlink: seed 1 iterations $NL_ITER" ]
	# the seed alone decides these
	[ "${lines[1]}" = "fuzz-netlink: $NL_ITER requests (2529 ethtool, 3224 dumps) on 380 sockets; by the request alone: 545 skipped, 207 acked, 3821 refused, 5427 to handlers" ]
	local re='^fuzz-netlink: to handlers \(succeeded\): dev-get (693) \(([0-9]+)\), queue-get (638) \(([0-9]+)\), page-pool-get (608) \(([0-9]+)\), bind-rx (1306) \(([0-9]+)\), bind-tx (407) \(([0-9]+)\), rings-get (549) \(([0-9]+)\), rings-set (329) \(([0-9]+)\), channels-get (532) \(([0-9]+)\), channels-set (365) \(([0-9]+)\)$'
	[[ ${lines[2]} =~ $re ]]
	# each command succeeded and failed
	local m=("${BASH_REMATCH[@]}") i
	for i in 1 3 5 7 9 11 13 15 17; do
		[ "${m[i + 1]}" -gt 0 ]
		[ "${m[i + 1]}" -lt "${m[i]}" ]
	done
	[[ ${lines[3]} =~ \;\ bind-rx\ [0-9]+\ tried,\ ([0-9]+)\ bound\; ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${lines[4]}" = "fuzz-netlink: pass" ]
	# what the kernel shows afterwards: no queue bound, no pool of a dma-buf
	run in_ns "$NSB" "$BIN/netdev-nl" queue-get
	[ "$status" -eq 0 ]
	[[ $output != *dmabuf=* ]]
	run in_ns "$NSB" "$BIN/netdev-nl" page-pool-get
	[ "$status" -eq 0 ]
	[[ $output != *dmabuf=* ]]
}

# sockopt_run BYTES ARGS...: fuzz-sockopt ARGS under bind-rx of a 64M
# udmabuf to queue 3 of B, BYTES of the pattern sent to it from A. The
# receiver's output in $output and lines (the first is bind-rx's id line),
# its status in $status, the sender's in $send_status, the binding's id
# in $bind_id.
sockopt_run() {
	local bytes=$1 out=$BATS_TEST_TMPDIR/fuzz-sockopt
	shift
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 udmabuf:64M \
		--run "$BIN/fuzz-sockopt" -p "$PORT" -n "$bytes" -r "$out.ready" \
		"$@" >"$out" 2>&1 &
	local pid=$!
	wait_until 30 test -e "$out.ready"
	send_status=0 status=0
	send "$IP4B" "$bytes" || send_status=$?
	wait "$pid" || status=$?
	output=$(<"$out")
	mapfile -t lines <"$out"
	printf '%s\n' "$output"
	bind_id=
	if [[ ${lines[0]} =~ ^bind-rx\ id=([0-9]+)$ ]]; then
		bind_id=${BASH_REMATCH[1]}
	fi
}

@test "fuzz-sockopt: $SO_ITER random recvmsg and SO_DEVMEM_DONTNEED calls on a devmem flow: documented results, exact frees, every byte and token back" {
	sockopt_run 32M --seed 1 --iterations "$SO_ITER"
	[ "$status" -eq 0 ]
	[ "$send_status" -eq 0 ]
	[ -n "$bind_id" ]
	[ "${lines[1]}" = "fuzz-sockopt: seed 1 iterations $SO_ITER" ]
	[[ ${lines[2]} == "fuzz-sockopt: $SO_ITER iterations: recvmsg 1394 ("* ]]
	# the seed alone decides these
	[ "${lines[3]}" = "fuzz-sockopt: errqueue 67 (ok 0, EAGAIN 67) oob 44 (ok 0, EINVAL 44)" ]
	[ "${lines[4]}" = "fuzz-sockopt: dontneed 1047 (ok 525, EFAULT 122, EINVAL 400) plain-dontneed 448 (ok 115, EBADF 178, EFAULT 46, EINVAL 109)" ]
	[ "${lines[5]}" = "fuzz-sockopt: plain sockets freed 0 tokens in 115 calls" ]
	[[ ${lines[6]} =~ ^fuzz-sockopt:\ received\ 33554432\ bytes:\ linear\ [0-9]+,\ dmabuf\ ([0-9]+)\ in\ [0-9]+\ frags\;\ tokens\ handed\ out\ ([0-9]+),\ returned\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
	[ "${BASH_REMATCH[2]}" -eq "${BASH_REMATCH[3]}" ]
	[ "${lines[7]}" = "fuzz-sockopt: pass" ]
	# every buffer came back: the binding's pools are gone
	wait_until 30 no_pools_of "$bind_id"
	nsim_leak_check
}

# The minimal case of what the fuzzer met first: a DONTNEED range that
# starts at token 0 must not make 0 a token (tokens are 1 to 2^31 - 1,
# the oldest free first; docs/design.md 1.6).
@test "SO_DEVMEM_DONTNEED of a range from token 0: token 1 freed, the next token is 1 again, never 0" {
	sockopt_run 1M --token-zero
	[ "${lines[2]}" = "fuzz-sockopt: token-zero: first token 1; DONTNEED {0, 2} freed 1; next token 1" ]
	[ "$status" -eq 0 ]
	[ "$send_status" -eq 0 ]
	[ "${lines[-1]}" = "fuzz-sockopt: pass" ]
	wait_until 30 no_pools_of "$bind_id"
}

stopped() {
	local st
	read -r _ _ st _ <"/proc/$1/stat"
	[ "$st" = T ]
}

# A recvmsg that waits for more data lets the socket lock go; another
# thread may give back the token it already handed out. The rest of the
# buffer that token lent may not then be added to its cmsg
# (tcp_devmem_extend()): the program would be told it holds bytes that
# the token no longer lends. 16K buffers, which the queue packs, so that
# the second half continues the first in the same buffer.
@test "a token given back while recvmsg waits: the rest of its buffer comes with a token of its own, not in the returned token's cmsg" {
	local out=$BATS_TEST_TMPDIR/returned sender status=0 send_status=0
	HUGE_OLD=$(cat /proc/sys/vm/nr_hugepages)
	echo 2 >/proc/sys/vm/nr_hugepages
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 huge:4M \
		--rx-page-size 16384 --run "$BIN/fuzz-sockopt" -p "$PORT" \
		-n 2048 --returned-token 1024 -r "$out.ready" >"$out" 2>&1 &
	local pid=$!
	wait_until 30 test -e "$out.ready"
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p "$PORT" \
		-s 2048 --stop-at 1024 &
	sender=$!
	wait_until 60 grep -q "token 1 given back" "$out"
	# it stops itself after send(): a SIGCONT before that would be lost
	wait_until 30 stopped "$sender"
	kill -CONT "$sender"
	wait "$sender" || send_status=$?
	wait "$pid" || status=$?
	cat "$out"
	mapfile -t lines <"$out"
	[ "$status" -eq 0 ]
	[ "$send_status" -eq 0 ]
	[ "${lines[2]}" = "fuzz-sockopt: returned-token: token 1 given back while recvmsg waits" ]
	[ "${lines[3]}" = "fuzz-sockopt: returned-token: 2048 bytes in [+0, 1024 bytes, token 1] [+1024, 1024 bytes, token 1]" ]
	[ "${lines[-1]}" = "fuzz-sockopt: pass" ]
}

# txfuzz_run ITERATIONS[:MAXLEN] [devmem-tx send options]: devmem-tx's
# fuzz step (seed 2: with the merge charge of net_devmem_fill_skb()
# taken out, it saturates the send memory within 1500 iterations on the
# plain path and 150 on the lossy one) from A into a sink in B, over a
# 4M dma-buf bound to A; its output in lines, the sink's copy's cksum in
# SINK_SUM.
txfuzz_run() {
	local iter=$1
	shift
	sink_start
	run in_ns "$NSA" "$BIN/devmem-tx" send --size 4M --dev "$IFA" "$@" \
		"$IP4B" "$PORT" "fuzz=2:$iter"
	printf '%s\n' "$output"
	wait "$SINK_PID"
	SINK_SUM=$(cksum <"$SINK_OUT")
	echo "sink: $SINK_SUM"
}

# txfuzz_check ITERATIONS DRAWN: the fuzzer passed, drew exactly DRAWN
# (the seed's), rested once more than it drew rests, and the sink got
# exactly the stream it says the kernel accepted.
txfuzz_check() {
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fuzz seed=2 iterations=${1%%:*}" ]
	[ "${lines[1]}" = "fuzz drawn $2" ]
	[[ $2 =~ \ rest=([0-9]+)$ ]]
	local rests=$((BASH_REMATCH[1] + 1))
	[[ ${lines[2]} =~ ^fuzz\ results\ whole=([0-9]+)\ partial=[0-9]+\ efault=([0-9]+)\ einval=([0-9]+)\ eagain=[0-9]+\ enobufs=[0-9]+\ zerocopy=([0-9]+)\ rests=([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
	[ "${BASH_REMATCH[3]}" -gt 0 ]
	[ "${BASH_REMATCH[4]}" -gt 0 ]
	[ "${BASH_REMATCH[5]}" -eq "$rests" ]
	[[ ${lines[3]} =~ ^fuzz\ sent=([0-9]+)\ cksum=([0-9]+)$ ]]
	[ "$SINK_SUM" = "${BASH_REMATCH[2]} ${BASH_REMATCH[1]}" ]
	[ "${#lines[@]}" -eq 4 ]
}

@test "fuzz-send: $TX_ITER random sends from device and host memory, socket options and rests: documented results, send memory zero at every rest, every completion, the stream whole" {
	txfuzz_run "$TX_ITER"
	txfuzz_check "$TX_ITER" "$(on_debug \
		'devmem=91 burst=18 fault=34 badid=15 noflag=12 cmsglen=11 id0=7 plain=47 sockopt=59 rest=6' \
		'devmem=696 burst=110 fault=173 badid=86 noflag=69 cmsglen=59 id0=58 plain=249 sockopt=435 rest=65')"
}

# What splits and merges send skbs most: segments lost, duplicated and
# reordered (retransmits cut skbs, tcp_trim_head() trims acked heads),
# Nagle holding small sends back so that later ranges merge into them,
# and an MSS of 200 bytes.
@test "fuzz-send over a path that delays, loses and duplicates (Nagle on, MSS 200, ranges up to 8K): the same rules, send memory zero at every rest" {
	tc -n "$NSA" qdisc add dev "$DEVA" root netem delay 5ms 2ms loss 5% duplicate 10%
	txfuzz_run "$TX_LOSSY_ITER:8192" --nagle --mss 200
	txfuzz_check "$TX_LOSSY_ITER" "$(on_debug \
		'devmem=21 burst=2 fault=5 badid=3 noflag=2 cmsglen=0 id0=1 plain=10 sockopt=15 rest=1' \
		'devmem=124 burst=22 fault=50 badid=21 noflag=15 cmsglen=12 id0=9 plain=59 sockopt=79 rest=9')"
}
