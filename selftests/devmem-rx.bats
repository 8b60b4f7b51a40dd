#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The device-memory receive path, end to end: a TCP flow from A is
# steered (n-tuple rule) to rx queue 3 of B, which is bound to a udmabuf;
# RSS keeps every other flow on queues 0-2 (lib/devmem.bash).
# build/bin/devmem-rx receives it with recvmsg(MSG_SOCK_DEVMEM) under
# `netdev-nl bind-rx --run` and checks every byte against the sender's
# pattern: linear bytes in the user buffer, device bytes through the
# udmabuf's mmap (with DMA_BUF_IOCTL_SYNC), and that the cmsgs account for
# every byte. The sender is build/bin/tcpxfer. The VM runner fails a test
# on any oops, WARN, BUG, KASAN or lockdep report. On the debug kernel
# this suite runs with kmemleak off (allocation-bound); devmem-leak.bats
# covers leaks with kmemleak on.

load lib/vm
load lib/nsim
load lib/devmem

test_setup() { devmem_setup; }
test_teardown() {
	local p
	for p in ${HOLD_PID:-} ${LISTEN_PID:-}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	nsim_cleanup
	[ ! -e /run/netns/nsc ] || ip netns del nsc
}

# tcpext NS FIELD: TcpExt counter FIELD of NS's /proc/net/netstat.
tcpext() {
	in_ns "$1" awk -v f="$2" '$1 == "TcpExt:" {
		if (!n) { for (i = 2; i <= NF; i++) col[$i] = i; n = 1 }
		else print $col[f] }' /proc/net/netstat
}

# The big stream: 256 MiB, four times the udmabuf, so that every buffer is
# reused again and again. On the debug kernel (with kmemleak off) it moves
# 128 MiB, twice the udmabuf, which make check can afford within CI's
# limit. DEVMEM_BIG_MIB says otherwise (1024, the size this test had
# until make check had to fit CI's time: make vm CMD=...).
big_mib() { echo "${DEVMEM_BIG_MIB:-$(on_debug 128 256)}"; }

@test "256 MiB (128 MiB on the debug kernel) into a 64M udmabuf, every byte checked; a normal flow on another queue at the same time" {
	local mib bytes
	mib=$(big_mib)
	bytes=$((mib << 20))
	nsim_snap "$NSB" "$DEVB"
	local q3=${STAT[rx3_packets]}
	rx_start "$bytes"
	xfer_start "$NSB" 5202 0 64M
	xfer_connect "$NSA" "$IP4B" 5202 64M 0 &
	local plain=$!
	send "$IP4B" "$bytes" -t 1200
	wait "$plain"
	xfer_wait
	rx_wait
	summary_is_all_devmem "$bytes"
	# the devmem flow went through queue 3, nothing was dropped there
	nsim_snap "$NSB" "$DEVB"
	[ "${STAT[rx3_packets]}" -gt $((q3 + bytes / 1500)) ]
	[ "${STAT[rx3_devmem_drops]}" -eq 0 ]
	[ "${STAT[rx3_drops]}" -eq 0 ]
	# every buffer came home: the binding's pool is gone with it
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "IPv6 (64M, 16M on the debug kernel), and 16M IPv4 on an IPv4-only socket, checked" {
	local mib
	mib=$(on_debug 16 64)
	steer tcp6 "$PORT"
	rx_start "${mib}M"
	send "$IP6B" "${mib}M" -6
	rx_wait
	summary_is_all_devmem $((mib << 20))

	rx_start 16M -b 0.0.0.0
	send "$IP4B" 16M
	rx_wait
	summary_is_all_devmem $((16 << 20))
}

# probes LIST WANT...: a 16M stream received with --probe LIST; the probe
# lines are "probe WANT", in order, and then every byte arrives.
probes() {
	local list=$1 i=1 want
	shift
	rx_start 16M --probe "$list"
	send "$IP4B" 16M
	rx_wait
	for want in "$@"; do
		if [ "${RX_LINES[i]}" != "probe $want" ]; then
			echo "line $i is not 'probe $want'"
			return 1
		fi
		i=$((i + 1))
	done
	summary_is_all_devmem $((16 << 20))
}

@test "recv without MSG_SOCK_DEVMEM, MSG_PEEK, splice, TCP zerocopy and FIONREAD on device data" {
	probes nodevmem,peek,peekdm,splice,zerocopy,fionread \
		"nodevmem: EFAULT" "peek: EFAULT" "peekdm: data, with frags" \
		"splice: 0 bytes" "zerocopy: ok, 0 bytes mapped" \
		"fionread: positive"
}

@test "control buffers of 0, 23 and 60 bytes: ETOOSMALL, ETOOSMALL, one cmsg; no byte or token lost" {
	probes ctrl0,ctrl23,ctrl60,ctrl60 "ctrl0: ETOOSMALL" \
		"ctrl23: ETOOSMALL" "ctrl60: data, 1 cmsg" "ctrl60: data, 1 cmsg"
	# every token came back: the pool is freed with the binding
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "SO_DEVMEM_DONTNEED: 129 ranges and a bad length EINVAL; another socket frees 0; a huge range frees 1024, quickly" {
	probes ranges129,badlen,foreign,huge "ranges129: EINVAL" \
		"badlen: EINVAL" "foreign: freed 0" \
		"huge: freed 1024, all the held tokens in the first 1024, under a second"
}

@test "holding every buffer stalls the flow, counted as pool exhaustion; giving them back resumes it, no byte lost" {
	RX_UDMABUF=8M rx_start 32M --hold
	send "$IP4B" 32M &
	local sender=$!
	# the pool runs dry: the queue counts it and drops, TCP retransmits
	wait_until 120 stat_gt "$NSB" "$DEVB" rx3_alloc_fail 0
	# the sender cannot finish while the receiver holds 8M of 32M
	kill -0 "$sender"
	kill -USR1 "$RX_PID"
	wait "$sender"
	rx_wait
	[[ ${RX_LINES[1]} =~ ^released\ ([0-9]+)\ tokens\ after\ ([0-9]+)\ bytes$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[2]}" -le $((8 << 20)) ]
	summary_is_all_devmem $((32 << 20))
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_devmem_drops)" -eq 0 ]
}

# batches_of BATCH: 4M to a receiver with --batch BATCH, every byte
# checked, every token back (the pool goes with the binding); how many
# times it gave tokens back in BATCHES, its frags (one token each: a
# 4 KiB buffer holds one segment) in FRAGS.
batches_of() {
	rx_start 4M --batch "$1" --cpu
	send "$IP4B" 4M
	rx_wait
	[[ ${RX_LINES[-2]} =~ ^received\ 4194304\ bytes:\ linear\ 0,\ dmabuf\ 4194304\ in\ ([0-9]+)\ frags$ ]]
	FRAGS=${BASH_REMATCH[1]}
	[[ ${RX_LINES[-1]} =~ ,\ ([0-9]+)\ token\ batches$ ]]
	BATCHES=${BASH_REMATCH[1]}
	echo "--batch $1: $BATCHES batches for $FRAGS frags"
	wait_until 30 no_pools_of "$BIND_ID"
}

@test "devmem-rx --batch 1024 gives tokens back 1024 or more at a time; every byte checked, every token back" {
	batches_of 1024
	# each batch but the one at the end of the stream holds 1024 or more
	[ "$BATCHES" -le $((FRAGS / 1024 + 1)) ]
	# one read yields at most 1024 tokens: no batch holds 2048
	[ "$BATCHES" -ge $(((FRAGS + 2046) / 2047)) ]
	# by default each read's tokens (1024 at most) go back after it
	batches_of 1
	[ "$BATCHES" -ge $(((FRAGS + 1023) / 1024)) ]
}

# tcpext_gt NS FIELD N: that counter is above N (for wait_until).
tcpext_gt() { [ "$(tcpext "$1" "$2")" -gt "$3" ]; }

# tap_start PCAP TCPDUMP-ARGS...: tcpdump in B writing PCAP (whole
# packets), in the background; returns once it listens. TAP_PID.
tap_start() {
	local pcap=$1
	shift
	"$BIN/in-ns" "$NSB" tcpdump -nn -s 0 -w "$pcap" "$@" \
		2>"$pcap.log" 3>&- &
	TAP_PID=$!
	wait_until 20 grep -q "listening on" "$pcap.log"
}

# --- the guards, each exercised while device-memory traffic flows ---------

@test "a packet tap on the bound port sees headers only; the flow is intact" {
	local pcap=$BATS_TEST_TMPDIR/tap.pcap
	rx_start 16M
	tap_start "$pcap" -i "$DEVB" -c 200 "tcp dst port $PORT"
	send "$IP4B" 16M
	rx_wait
	summary_is_all_devmem $((16 << 20))
	wait "$TAP_PID"
	# 200 packets; those with payload were cut to their headers (at
	# most 14 + 60 + 60 bytes) though their wire length is larger
	run python3 - "$pcap" <<-'EOF_PY'
		import struct, sys
		d = open(sys.argv[1], 'rb').read()
		off, n, cut, maxcap = 24, 0, 0, 0
		while off < len(d):
		    _, _, cap, orig = struct.unpack_from('<IIII', d, off)
		    n += 1; maxcap = max(maxcap, cap)
		    cut += cap < orig
		    off += 16 + cap
		print(n, cut > 100, maxcap <= 134)
	EOF_PY
	echo "$output"
	[ "$output" = "200 True True" ]
}

@test "urgent data (MSG_OOB) on the bound flow: the byte stays in the stream in device memory, every byte checked" {
	# the urgent byte lands in device memory, which the kernel cannot
	# read to keep it out of band (it used to BUG() trying)
	rx_start 4M
	run send "$IP4B" 4M --urgent 1000000
	echo "$output"
	[ "$status" -eq 0 ]
	rx_wait
	summary_is_all_devmem $((4 << 20))
}

@test "a tiny SO_RCVBUF and a reader that waits: the queue is pruned, device data never collapsed, nothing lost" {
	local pruned
	pruned=$(tcpext "$NSB" PruneCalled)
	# 88-byte segments: each skb's truesize is a whole page or more
	ip -n "$NSB" route replace "${IP4A%.*}.0/24" dev "$DEVB" advmss 88
	rx_start 512K --rcvbuf 4096 --probe pause
	send "$IP4B" 512K &
	local sender=$!
	wait_until 60 tcpext_gt "$NSB" PruneCalled "$pruned"
	kill -USR1 "$RX_PID"
	wait "$sender"
	rx_wait
	[ "${RX_LINES[1]}" = "probe pause: resumed" ]
	summary_is_all_devmem $((512 << 10))
}

@test "tiny segments (MSS 88) and pure ACKs: GRO merges net_iovs, every byte checked" {
	# B advertises a small MSS on the route back to A
	ip -n "$NSB" route replace "${IP4A%.*}.0/24" dev "$DEVB" advmss 88
	# software GRO, not the port's: each segment arrives alone
	in_ns "$NSB" ethtool -K "$DEVB" rx-gro-hw off
	rx_start 2M
	send "$IP4B" 2M
	rx_wait
	summary_is_all_devmem $((2 << 20))
	local last=${RX_LINES[-1]}
	[[ $last =~ in\ ([0-9]+)\ frags$ ]]
	[ "${BASH_REMATCH[1]}" -ge $(((2 << 20) / 88)) ]
}

# hold_queue3 [SIZE]: bind a udmabuf (16M) to queue 3 of B in the
# background for the rest of the test; HOLD_PID. (Background processes
# here close bats' fd 3, or bats waits for them.)
hold_queue3() {
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 \
		"udmabuf:${1:-16M}" --hold >"$BATS_TEST_TMPDIR/bind" 2>&1 3>&- &
	HOLD_PID=$!
	wait_until 30 grep -q "^bind-rx id=" "$BATS_TEST_TMPDIR/bind"
}

# listen_in NS [tcpxfer args]: a tcpxfer listener on $PORT in NS that
# expects 1M, in the background; LISTEN_PID; its output in listen.out.
listen_in() {
	local ns=$1
	shift
	rm -f "$BATS_TEST_TMPDIR/ready"
	"$BIN/in-ns" "$ns" "$BIN/tcpxfer" listen -q -p "$PORT" -r 1M -t 30 "$@" \
		--ready-file "$BATS_TEST_TMPDIR/ready" \
		>"$BATS_TEST_TMPDIR/listen.out" 2>&1 3>&- &
	LISTEN_PID=$!
	wait_until 20 test -e "$BATS_TEST_TMPDIR/ready"
}

# forward_setup: C (netns nsc) behind B on a veth pair, vf0 (B) - vf1
# (C), 10.99.0.0/24 and 2001:db8:99::/64; B forwards both families; A
# routes C's subnets via B. Queue 3 of B bound (hold_queue3), tcp6 on
# $PORT steered there too.
forward_setup() {
	ip netns add nsc
	ip -n "$NSB" link add vf0 type veth peer name vf1 netns nsc
	ip -n "$NSB" addr add 10.99.0.254/24 dev vf0
	ip -n "$NSB" addr add 2001:db8:99::fe/64 dev vf0 nodad
	ip -n "$NSB" link set vf0 up
	ip -n nsc addr add 10.99.0.1/24 dev vf1
	ip -n nsc addr add 2001:db8:99::1/64 dev vf1 nodad
	ip -n nsc link set vf1 up
	ip -n nsc link set lo up
	ip -n nsc route add default via 10.99.0.254
	ip -n nsc -6 route add default via 2001:db8:99::fe
	in_ns "$NSB" sysctl -qw net.ipv4.ip_forward=1
	in_ns "$NSB" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip -n "$NSA" route add 10.99.0.0/24 via "$IP4B"
	ip -n "$NSA" -6 route add 2001:db8:99::/64 via "$IP6B"
	steer tcp6 "$PORT"
	hold_queue3
}

# ip_mib NS TABLE FIELD: counter FIELD of the TABLE line (Ip, Icmp6...)
# in NS's /proc/net/snmp or, for Ip6/Icmp6, /proc/net/snmp6.
ip_mib() {
	case $2 in
	Ip6|Icmp6) in_ns "$1" awk -v f="$2$3" '$1 == f { print $2 }' /proc/net/snmp6 ;;
	*) in_ns "$1" awk -v t="$2:" -v f="$3" '$1 == t {
		if (!n) { for (i = 2; i <= NF; i++) col[$i] = i; n = 1 }
		else print $col[f] }' /proc/net/snmp ;;
	esac
}

@test "forwarding a bound flow out of another device: dropped at transmit, counted, no crash" {
	forward_setup
	listen_in nsc
	# the handshake is forwarded (no payload); data segments land in
	# device memory on queue 3 and cannot leave through vf0
	run xfer_connect "$NSA" 10.99.0.1 "$PORT" 1M 0 -t 8
	[ "$status" -ne 0 ]
	local dropped
	dropped=$(in_ns "$NSB" awk '$1 == "vf0:" { print $13 }' /proc/net/dev)
	echo "vf0 tx dropped: $dropped"
	[ "$dropped" -gt 0 ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -gt 0 ]
}

@test "forwarding a bound flow that needs IPv4 fragmentation (DF clear): refused, counted in FragFails, no crash" {
	forward_setup
	ip -n "$NSB" link set vf0 mtu 1000
	# A sends without DF: B must fragment the 1500-byte packets for vf0
	in_ns "$NSA" sysctl -qw net.ipv4.ip_no_pmtu_disc=1
	local fails creates
	fails=$(ip_mib "$NSB" Ip FragFails)
	creates=$(ip_mib "$NSB" Ip FragCreates)
	listen_in nsc
	run xfer_connect "$NSA" 10.99.0.1 "$PORT" 1M 0 -t 8
	[ "$status" -ne 0 ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -gt 0 ]
	# it used to BUG() in ip_frag_next()
	[ "$(ip_mib "$NSB" Ip FragFails)" -gt "$fails" ]
	[ "$(ip_mib "$NSB" Ip FragCreates)" -eq "$creates" ]
}

@test "forwarding a bound IPv6 flow into a smaller MTU: Packet Too Big, never fragmented, no crash" {
	forward_setup
	ip -n "$NSB" link set vf0 mtu 1280
	local toobig creates
	toobig=$(ip_mib "$NSB" Icmp6 OutPktTooBigs)
	creates=$(ip_mib "$NSB" Ip6 FragCreates)
	listen_in nsc -6
	run xfer_connect "$NSA" 2001:db8:99::1 "$PORT" 1M 0 -6 -t 8
	[ "$status" -ne 0 ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -gt 0 ]
	# a router does not fragment IPv6: B tells A
	[ "$(ip_mib "$NSB" Icmp6 OutPktTooBigs)" -gt "$toobig" ]
	[ "$(ip_mib "$NSB" Ip6 FragCreates)" -eq "$creates" ]
}

@test "TCP-MD5 on a bound flow: every data segment fails verification, counted; MD5 elsewhere works" {
	local failures
	hold_queue3
	# first a flow that RSS keeps off the bound queue: MD5 itself works
	PORT=$((PORT + 1)) listen_in "$NSB" --md5 s3cret
	run xfer_connect "$NSA" "$IP4B" $((PORT + 1)) 1M 0 -t 20 --md5 s3cret
	[ "$status" -eq 0 ]
	wait "$LISTEN_PID"
	failures=$(tcpext "$NSB" TCPMD5Failure)
	listen_in "$NSB" --md5 s3cret
	# the handshake carries no payload and passes; each data segment's
	# payload is in device memory, which cannot be hashed: it used to
	# oops in tcp_md5_hash_skb_data()
	run xfer_connect "$NSA" "$IP4B" "$PORT" 1M 0 -t 8 --md5 s3cret
	[ "$status" -ne 0 ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -gt 0 ]
	[ "$(tcpext "$NSB" TCPMD5Failure)" -gt "$failures" ]
}

@test "nft log to an nflog listener on the bound flow: it gets the headers; the flow is intact" {
	local pcap=$BATS_TEST_TMPDIR/nflog.pcap
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table inet devmem_log {
			chain in {
				type filter hook input priority 0;
				tcp dport $PORT log group 1
			}
		}
	EOF_NFT
	tap_start "$pcap" -i nflog:1 -c 100
	rx_start 16M
	send "$IP4B" 16M
	rx_wait
	summary_is_all_devmem $((16 << 20))
	# it used to BUG() in nfnetlink_log copying device memory
	wait "$TAP_PID"
	# 100 packets; the IP packet each carries (the NFLOG record's
	# payload TLV, type 9) has its headers (at least 40 bytes) and no
	# more (at most 60 + 60)
	run python3 - "$pcap" <<-'EOF_PY'
		import struct, sys
		d = open(sys.argv[1], 'rb').read()
		off, n, lens = 24, 0, []
		while off < len(d):
		    _, _, cap, _ = struct.unpack_from('<IIII', d, off)
		    rec, t = d[off + 16:off + 16 + cap], 4
		    while t + 4 <= len(rec):
		        tlen, ttype = struct.unpack_from('<HH', rec, t)
		        if ttype == 9:
		            lens.append(tlen - 4)
		        t += (tlen + 3) & ~3 if tlen >= 4 else len(rec)
		    n += 1
		    off += 16 + cap
		print(n, len(lens), min(lens) >= 40, max(lens) <= 120)
	EOF_PY
	echo "$output"
	[ "$output" = "100 100 True True" ]
}

@test "NFQUEUE on the bound flow: the listener gets the headers and the real length, accepts; the flow is intact" {
	local out=$BATS_TEST_TMPDIR/nfq
	"$BIN/in-ns" "$NSB" "$BATS_TEST_DIRNAME/progs/nfq-accept/nfq-accept" 0 \
		>"$out" 2>&1 3>&- &
	LISTEN_PID=$!
	wait_until 20 grep -q "^bound$" "$out"
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table inet devmem_queue {
			chain in {
				type filter hook input priority 0;
				tcp dport $PORT queue num 0
			}
		}
	EOF_NFT
	rx_start 16M
	send "$IP4B" 16M
	rx_wait
	summary_is_all_devmem $((16 << 20))
	kill "$LISTEN_PID"
	wait "$LISTEN_PID"
	cat "$out"
	# the listener's recvmsg used to fail with EFAULT on device memory
	[[ $(tail -1 "$out") =~ ^packets\ ([0-9]+)\ payload\ ([0-9]+)\.\.([0-9]+)\ capped\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[2]}" -ge 40 ]
	[ "${BASH_REMATCH[3]}" -le 120 ]
	[ "${BASH_REMATCH[4]}" -gt 0 ]
}

@test "an xt_u32 match on the bound flow: header words match, payload words cannot; the flow is intact" {
	# u32 word 0 of the TCP payload: any value would do (0:0xFFFFFFFF)
	in_ns "$NSB" iptables -A INPUT -p tcp --dport "$PORT" -m u32 \
		--u32 "0>>22&0x3C@12>>26&0x3C@0=0:0xFFFFFFFF" -j DROP
	# the protocol byte of the IP header: matches every packet
	in_ns "$NSB" iptables -A INPUT -p tcp --dport "$PORT" -m u32 \
		--u32 "6&0xFF=6"
	rx_start 16M
	send "$IP4B" 16M
	rx_wait
	# it used to BUG() in u32_match_it() reading device memory
	summary_is_all_devmem $((16 << 20))
	run in_ns "$NSB" iptables -L INPUT -v -n -x
	echo "$output"
	[[ ${lines[2]} =~ ^\ *([0-9]+)\ .*DROP ]]
	[ "${BASH_REMATCH[1]}" -eq 0 ]
	[[ ${lines[3]} =~ ^\ *([0-9]+)\  ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
}

@test "a mangle rule rewriting DSCP on the bound flow: headers change, payload intact" {
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table ip mangle {
			chain pre {
				type filter hook prerouting priority -150;
				tcp dport $PORT counter ip dscp set af21
			}
		}
	EOF_NFT
	rx_start 16M
	send "$IP4B" 16M
	rx_wait
	summary_is_all_devmem $((16 << 20))
	run in_ns "$NSB" nft list chain ip mangle pre
	echo "$output"
	# (GRO: one counted packet may be many on the wire)
	[[ $output =~ counter\ packets\ [0-9]+\ bytes\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -gt $((16 << 20)) ]
}
