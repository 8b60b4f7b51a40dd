#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Sums over received bytes that may be in device memory, and the one
# stall, that docs/unreadable-skbs.md listed as not safe: each test drives
# packets whose payload is in device memory (rx queue 3 of B bound to a
# udmabuf) into one of them and checks that the kernel refuses cleanly,
# with no kernel report (the VM runner fails a test on any WARN: each of
# these used to warn in __skb_checksum(), or to spin): segmenting a
# forwarded GRO packet for a device without checksum offload (patch 0013),
# MPTCP's DSS checksum (0023), netfilter's NAT of ICMP errors, SCTP CRC
# checks and rewrites, payload writes and IPv6 header sums (0024), RFC 4884
# extensions and IP_CHECKSUM (0025), sockmap's ingress (0026). Where a
# test can, it also sends the same packet small enough to stay in host
# memory and sees the path work, so that a refusal is known to be the
# device memory's.
# Packets that are neither TCP nor UDP carry device memory only with
# queue 3's csum knob at complete or none (devmem-csum): netdevsim then
# keeps their first 256 bytes (NSIM_HDR_BUF_SIZE) in host memory.
# A test counts queue 3's payload buffers from its own start: packets
# that reached queue 3 before setup turned header split on landed whole in
# one each.

load lib/vm
load lib/nsim
load lib/devmem

test_setup() { devmem_setup; }
test_teardown() { nsim_cleanup; }

# icmp_mib NS FIELD: FIELD of the Icmp line of NS's /proc/net/snmp.
icmp_mib() { snmp_mib "$1" Icmp "$2"; }

# --- skb_segment() without checksum offload (0013) --------------------------

# tcp4_burst DST COUNT: COUNT back-to-back TCP segments of 1400 bytes of
# one flow from A to DST:$PORT through B's MAC, DF clear, consecutive IP
# ids and sequence numbers: GRO on B merges them.
tcp4_burst() {
	py_in "$NSA" "$DEVA" "$MACA" "$MACB" "$IP4A" "$1" "$PORT" "$2" <<-'EOF_PY'
		import sys, pkt
		dev, maca, macb, src, dst, port, n = sys.argv[1:8]
		s = pkt.sender(dev)
		for i in range(int(n)):
		    data = bytes((i + j) & 0xff for j in range(1400))
		    seg = pkt.tcp(pkt.pseudo4(src, dst, 6, 20 + len(data)), 40000, int(port),
		                  1000 + 1400 * i, 1, data)
		    f = pkt.eth(macb, maca, 0x800) + pkt.ipv4(src, dst, 6, seg, ident=100 + i)
		    assert s.send(f) == len(f)
	EOF_PY
}

@test "a GRO packet of a bound flow forwarded without DF to a smaller MTU, through a device with scatter-gather and no checksum offload: segmenting it is refused before any sum, nothing leaves, no warning" {
	local dst=198.51.100.1 fwd fails fwd2 fails2 noect
	hold_queue3
	in_ns "$NSB" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$NSB" -b - <<-EOF_IP
		link add vb1 type veth peer name vp1
		link set vb1 mtu 1000
		link set vp1 up
		link set vb1 up
		route add $dst/32 dev vb1
		neigh add $dst lladdr 02:00:00:00:00:99 dev vb1
	EOF_IP
	in_ns "$NSB" ethtool -K vb1 tx off
	run in_ns "$NSB" ethtool -k vb1
	[[ $output == *$'\ntx-checksumming: off\n'* ]]
	[[ $output == *$'\nscatter-gather: on\n'* ]]
	# GRO holds a flow across NAPI polls for up to 200 ms: the burst merges
	in_ns "$NSB" sh -c "echo 200000000 >/sys/class/net/$DEVB/gro_flush_timeout"
	fwd=$(ip_mib "$NSB" ForwDatagrams)
	fails=$(ip_mib "$NSB" FragFails)
	noect=$(snmp_mib "$NSB" IpExt InNoECTPkts)
	tcp4_burst "$dst" 4
	# every segment has reached IP (a GRO skb counts its segments there),
	# those GRO held until its flush timeout too: on a busy host the
	# first can go alone while the others still wait
	wait_until 20 eval '[ $(($(snmp_mib "$NSB" IpExt InNoECTPkts) - noect)) -ge 4 ]'
	nsim_settle
	fwd2=$(ip_mib "$NSB" ForwDatagrams)
	fails2=$(ip_mib "$NSB" FragFails)
	echo "forwarded $((fwd2 - fwd)), fragmentation failures $((fails2 - fails))"
	# all four in device memory
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -ge 4 ]
	# fewer skbs than segments were forwarded: GRO merged some, and a
	# merged one (1400-byte segments, MTU 1000) went to be segmented
	# for vb1, which cannot checksum: refused, it used to be summed
	[ $((fwd2 - fwd)) -lt 4 ]
	# a segment that arrived alone is refused by IPv4 fragmentation
	# (0016); no segment or fragment of either kind left through vb1
	[ $((fails2 - fails)) -lt $((fwd2 - fwd)) ]
	[ "$(in_ns "$NSB" cat /sys/class/net/vp1/statistics/rx_packets)" -eq 0 ]
}

# --- MPTCP DSS checksums (0023) ---------------------------------------------

@test "MPTCP with DSS checksums, asked for by the peer alone, on a bound flow: the mapping over device memory counts as a checksum failure (MPTcpExtDataCsumErr), the connection falls back to TCP, recv fails with EFAULT, no warning" {
	local out=$BATS_TEST_TMPDIR/mptcp errs
	hold_queue3
	# only A asks for checksums: its MP_CAPABLE's C flag is enough
	in_ns "$NSA" sysctl -qw net.mptcp.checksum_enabled=1
	[ "$(in_ns "$NSB" sysctl -n net.mptcp.checksum_enabled)" = 0 ]
	errs=$(snmp_mib "$NSB" MPTcpExt DataCsumErr)
	py_in "$NSB" "$IP4B" "$PORT" "$out.ready" >"$out" 2>&1 3>&- <<-'EOF_PY' &
		import errno, socket, sys
		s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_MPTCP)
		s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		s.bind((sys.argv[1], int(sys.argv[2])))
		s.listen(1)
		open(sys.argv[3], 'w').close()
		c, _ = s.accept()
		n = 0
		try:
		    while True:
		        d = c.recv(65536)
		        if not d:
		            print('recv: end after %d bytes' % n)
		            break
		        n += len(d)
		except OSError as e:
		    print('recv: %s after %d bytes' % (errno.errorcode[e.errno], n))
	EOF_PY
	local rx=$!
	wait_until 30 test -e "$out.ready"
	py_in "$NSA" "$IP4B" "$PORT" <<-'EOF_PY'
		import socket, sys
		s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_MPTCP)
		s.connect((sys.argv[1], int(sys.argv[2])))
		s.sendall(bytes(range(256)) * 64)
		s.close()
	EOF_PY
	wait "$rx"
	cat "$out"
	[ "$(cat "$out")" = "recv: EFAULT after 0 bytes" ]
	[ "$(snmp_mib "$NSB" MPTcpExt DataCsumErr)" -eq $((errs + 1)) ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -ge 1 ]
}

# --- netfilter (0024) -------------------------------------------------------

@test "nft payload write with a checksum update into the payload of a bound flow: refused before summing (the rule breaks), the bytes arrive unchanged in device memory, no warning" {
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table inet devmem_pw {
			chain pre {
				type filter hook prerouting priority 0;
				tcp dport $PORT @ih,0,32 set 0x01020304 counter
				tcp dport $PORT counter
			}
		}
	EOF_NFT
	# the write asks for the TCP checksum to follow (csum_flags 0x1)
	run in_ns "$NSB" nft --debug=netlink list chain inet devmem_pw pre
	[[ $output == *"@ inner header + 0 csum_type 0 csum_off 0 csum_flags 0x1 ]"* ]]
	rx_start 300000
	send "$IP4B" 300000
	rx_wait
	summary_is_all_devmem 300000
	# the write never completed: the first counter (after it) saw
	# nothing, the second saw the flow
	mapfile -t c < <(nft_packets "$NSB" inet devmem_pw pre)
	[ "${c[0]}" -eq 0 ]
	[ "${c[1]}" -gt 0 ]
}

# nat_setup FAMILY ADDR: B source-NATs its UDP to port 9 (to ADDR:40000)
# and counts, in a prerouting chain between conntrack and NAT, what is
# related to a connection (the ICMP errors that come back).
nat_setup() {
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table $1 devmem_nat {
			chain pre {
				type nat hook prerouting priority -100;
			}
			chain post {
				type nat hook postrouting priority 100;
				udp dport 9 snat to $2:40000
			}
			chain watch {
				type filter hook prerouting priority -150;
				ct state related counter
			}
		}
	EOF_NFT
}

# udp_to_a FAMILY ADDR BYTES: one datagram of BYTES from B to ADDR port 9,
# where A has no socket: A answers with an ICMP error quoting it.
udp_to_a() {
	py_in "$NSB" "$1" "$2" "$3" <<-'EOF_PY'
		import socket, sys
		fam = socket.AF_INET6 if sys.argv[1] == 'ip6' else socket.AF_INET
		s = socket.socket(fam, socket.SOCK_DGRAM)
		s.bind(('', 33333))   # one connection: NAT keeps its port 40000
		s.sendto(b'\xa5' * int(sys.argv[3]), (sys.argv[2], 9))
	EOF_PY
}

@test "NAT of ICMP and ICMPv6 errors whose quote is in device memory: the translation, which sums the whole message again, refuses and NAT drops the error; a short error is translated and delivered; no warning" {
	local in4 in6 bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	all_to_queue3
	nat_setup ip "$IP4B"
	nat_setup ip6 "[$IP6B]"
	in4=$(icmp_mib "$NSB" InDestUnreachs)
	in6=$(ip6_mib "$NSB" Icmp6InDestUnreachs)

	# 100 bytes: A's port unreachable is 156 bytes, all in host memory
	udp_to_a ip "$IP4A" 100
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip devmem_nat watch)" = 1 ]'
	wait_until 20 eval '[ "$(icmp_mib "$NSB" InDestUnreachs)" -eq $((in4 + 1)) ]'
	# 1000 bytes: the error quotes 548 of them, 590 bytes on the wire,
	# the last 334 in device memory
	udp_to_a ip "$IP4A" 1000
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip devmem_nat watch)" = 2 ]'
	nsim_settle
	[ "$(icmp_mib "$NSB" InDestUnreachs)" -eq $((in4 + 1)) ]

	udp_to_a ip6 "$IP6A" 100
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip6 devmem_nat watch)" = 1 ]'
	wait_until 20 eval '[ "$(ip6_mib "$NSB" Icmp6InDestUnreachs)" -eq $((in6 + 1)) ]'
	udp_to_a ip6 "$IP6A" 1000
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip6 devmem_nat watch)" = 2 ]'
	nsim_settle
	[ "$(ip6_mib "$NSB" Icmp6InDestUnreachs)" -eq $((in6 + 1)) ]
	nsim_stat_is "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 2))
}

# sctp_init_send BYTES [SPORT]: from A (port SPORT, 5000) to B port 9, one
# SCTP packet with an INIT chunk carrying an unrecognised parameter of
# BYTES bytes (correct CRC).
sctp_init_send() {
	py_in "$NSA" "$DEVA" "$MACA" "$MACB" "$IP4A" "$IP4B" "$1" "${2:-5000}" <<-'EOF_PY'
		import struct, sys, pkt
		dev, maca, macb, src, dst, n, sport = sys.argv[1:8]
		param = struct.pack('!HH', 0x8123, 4 + int(n)) + b'\x5a' * int(n)
		param += b'\0' * (-len(param) % 4)
		init = struct.pack('!IIHHI', 0x1234, 65536, 1, 1, 1) + param
		chunk = struct.pack('!BBH', 1, 0, 4 + len(init)) + init
		f = pkt.eth(macb, maca, 0x800) + pkt.ipv4(src, dst, 132, pkt.sctp(int(sport), 9, 0, chunk))
		assert pkt.sender(dev).send(f) == len(f)
	EOF_PY
}

@test "conntrack's SCTP CRC check (CHECKSUM_NONE) over device memory: the packet is invalid, as with a bad CRC; a short one is a new connection; no warning" {
	local bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	all_to_queue3
	echo none >"$DFSB/rxq/3/csum"
	[ "$(in_ns "$NSB" sysctl -n net.netfilter.nf_conntrack_checksum)" = 1 ]
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table ip devmem_sctp {
			chain pre {
				type filter hook prerouting priority -150;
				ct state new counter
				ct state invalid counter
			}
		}
	EOF_NFT
	sctp_init_send 100
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip devmem_sctp pre | paste -sd,)" = 1,0 ]'
	sctp_init_send 1000
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip devmem_sctp pre | paste -sd,)" = 1,1 ]'
	nsim_settle
	nsim_stat_is "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 1))
}

@test "SCTP NAT and nft's SCTP checksum update over device memory: NAT drops the packet and the rewrite breaks the rule, before any sum; short packets are rewritten; no warning" {
	local unk bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	all_to_queue3
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table ip devmem_sctp {
			chain watch {
				type filter hook prerouting priority -150;
				sctp dport 9 counter
			}
			chain nat {
				type nat hook prerouting priority -100;
				sctp dport 9 dnat to $IP4B:10
			}
			chain rewrite {
				type filter hook input priority 0;
				sctp dport 9 counter
				sctp dport 10 sctp sport set 5001 counter
			}
		}
	EOF_NFT
	unk=$(ip_mib "$NSB" InUnknownProtos)
	# host memory: NATed, rewritten, then refused by B (no SCTP stack)
	sctp_init_send 100
	wait_until 20 eval '[ "$(ip_mib "$NSB" InUnknownProtos)" -eq $((unk + 1)) ]'
	[ "$(nft_packets "$NSB" ip devmem_sctp watch)" = 1 ]
	[ "$(nft_packets "$NSB" ip devmem_sctp rewrite | paste -sd,)" = 0,1 ]
	# device memory: NAT cannot recompute the CRC and drops it
	sctp_init_send 1000
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip devmem_sctp watch)" = 2 ]'
	nsim_settle
	[ "$(ip_mib "$NSB" InUnknownProtos)" -eq $((unk + 1)) ]
	[ "$(nft_packets "$NSB" ip devmem_sctp rewrite | paste -sd,)" = 0,1 ]
	# without NAT (a new connection: the first one's NAT stays) the nft
	# rewrite itself meets device memory: the rule breaks before its
	# counter, before writing, and the packet goes on unchanged
	in_ns "$NSB" nft flush chain ip devmem_sctp nat
	in_ns "$NSB" nft add rule ip devmem_sctp watch sctp dport 9 sctp dport set 10 counter
	sctp_init_send 1000 5002
	wait_until 20 eval '[ "$(nft_packets "$NSB" ip devmem_sctp watch | paste -sd,)" = 3,0 ]'
	wait_until 20 eval '[ "$(ip_mib "$NSB" InUnknownProtos)" -eq $((unk + 2)) ]'
	[ "$(nft_packets "$NSB" ip devmem_sctp rewrite | paste -sd,)" = 1,1 ]
	nsim_stat_is "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 2))
}

# echo6_destopts OPTBYTES: from A, an ICMPv6 echo request to B behind a
# destination options header of OPTBYTES (a multiple of 8, PadN inside).
echo6_destopts() {
	py_in "$NSA" "$DEVA" "$MACA" "$MACB" "$IP6A" "$IP6B" "$1" <<-'EOF_PY'
		import struct, sys, pkt
		dev, maca, macb, src, dst, n = sys.argv[1:7]
		n = int(n)
		opts, left = struct.pack('!BB', 58, n // 8 - 1), n - 2
		while left:   # PadN options of at most 257 bytes, Pad1 for one
		    k = 1 if left == 1 else min(left, 257) - (left - min(left, 257) == 1)
		    opts += b'\0' if k == 1 else bytes([1, k - 2]) + b'\0' * (k - 2)
		    left -= k
		echo = struct.pack('!BBHHH', 128, 0, 0, 1, 1) + b'\x33' * 64
		c = pkt.csum(pkt.pseudo6(src, dst, 58, len(echo)) + echo)
		echo = echo[:2] + struct.pack('!H', c) + echo[4:]
		f = pkt.eth(macb, maca, 0x86dd) + pkt.ipv6(src, dst, 60, opts + echo)
		assert pkt.sender(dev).send(f) == len(f)
	EOF_PY
}

@test "REJECT of an ICMPv6 packet whose extension headers run into device memory: the sum of those headers is refused as not verified, no unreachable is sent; with short headers one is; no warning" {
	local out bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	all_to_queue3
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table inet devmem_rj {
			chain in {
				type filter hook input priority 0;
				ip6 saddr $IP6A ip6 nexthdr 60 meta l4proto icmpv6 counter reject
			}
		}
	EOF_NFT
	out=$(ip6_mib "$NSB" Icmp6OutDestUnreachs)
	echo6_destopts 8
	wait_until 20 eval '[ "$(ip6_mib "$NSB" Icmp6OutDestUnreachs)" -eq $((out + 1)) ]'
	# 512 bytes of options: the ICMPv6 header is at 566 on the wire
	echo6_destopts 512
	wait_until 20 eval '[ "$(nft_packets "$NSB" inet devmem_rj in)" = 2 ]'
	nsim_settle
	[ "$(ip6_mib "$NSB" Icmp6OutDestUnreachs)" -eq $((out + 1)) ]
	nsim_stat_is "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 1))
}

# --- RFC 4884 and IP_CHECKSUM (0025) ----------------------------------------

# unreach_rfc4884 EXTBYTES: from A to B, an ICMP port unreachable quoting
# a UDP datagram from B:40001 to A:9 (128 bytes, RFC 4884 length 32
# words) followed by an extension structure of EXTBYTES (version 2, one
# object, correct checksum).
unreach_rfc4884() {
	py_in "$NSA" "$DEVA" "$MACA" "$MACB" "$IP4A" "$IP4B" "$1" <<-'EOF_PY'
		import struct, sys, pkt
		dev, maca, macb, src, dst, n = sys.argv[1:7]
		n = int(n)
		quote = pkt.ipv4(dst, src, 17, struct.pack('!HHHH', 40001, 9, 108, 0) + b'\0' * 100)
		obj = struct.pack('!HBB', n - 4, 1, 1) + b'\x77' * (n - 8)
		ext = struct.pack('!BBH', 0x20, 0, 0) + obj
		ext = ext[:2] + struct.pack('!H', pkt.csum(ext)) + ext[4:]
		icmp = struct.pack('!BBHBBH', 3, 3, 0, 0, 32, 0) + quote + ext
		icmp = icmp[:2] + struct.pack('!H', pkt.csum(icmp)) + icmp[4:]
		f = pkt.eth(macb, maca, 0x800) + pkt.ipv4(src, dst, 1, icmp)
		assert pkt.sender(dev).send(f) == len(f)
	EOF_PY
}

@test "ICMP error with an RFC 4884 extension in device memory, for a socket with IP_RECVERR_RFC4884: reported invalid (it cannot be verified); the same in host memory is valid; no warning" {
	local out=$BATS_TEST_TMPDIR/err bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	all_to_queue3
	py_in "$NSB" "$IP4B" "$out.ready" >"$out" 2>"$out.err" 3>&- <<-'EOF_PY' &
		import select, socket, struct, sys
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.setsockopt(socket.SOL_IP, 11, 1)   # IP_RECVERR
		s.setsockopt(socket.SOL_IP, 26, 1)   # IP_RECVERR_RFC4884
		s.bind((sys.argv[1], 40001))
		open(sys.argv[2], 'w').close()
		p = select.poll()
		p.register(s, select.POLLERR)
		got = 0
		while got < 2:
		    if not p.poll(20000):
		        print('no error')
		        break
		    try:
		        _, anc, _, _ = s.recvmsg(64, 512, socket.MSG_ERRQUEUE)
		    except BlockingIOError:
		        # udp_err() queues the error, which wakes us, and only
		        # then sets sk_err: reading the queue first leaves
		        # POLLERR with nothing queued. SO_ERROR clears it.
		        print('sk_err without a queued error', file=sys.stderr)
		        s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
		        continue
		    got += 1
		    for lvl, typ, data in anc:
		        if lvl == socket.SOL_IP and typ == 11:
		            ee_errno, origin, ee_type, code = struct.unpack_from('=IBBB', data)
		            length, flags = struct.unpack_from('=HB', data, 12)
		            print('errno %d type %d code %d rfc4884 len %d flags %d'
		                  % (ee_errno, ee_type, code, length, flags))
	EOF_PY
	local rx=$!
	wait_until 30 test -e "$out.ready"
	# 64 bytes of extension: 14 + 20 + 8 + 128 + 64 = 234 on the wire
	unreach_rfc4884 64
	wait_until 20 grep -q "^errno" "$out"
	# 400: the extension runs from 170 to 570, the last 314 bytes in
	# device memory
	unreach_rfc4884 400
	local st=0
	wait "$rx" || st=$?
	cat "$out" "$out.err"
	[ "$st" -eq 0 ]
	mapfile -t lines <"$out"
	# len: the 128 quoted bytes less the 28 of IP and UDP header
	[ "${lines[0]}" = "errno 111 type 3 code 3 rfc4884 len 100 flags 0" ]
	[ "${lines[1]}" = "errno 111 type 3 code 3 rfc4884 len 100 flags 1" ]
	[ "${#lines[@]}" -eq 2 ]
	nsim_stat_is "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 1))
}

@test "IP_CHECKSUM on a UDP datagram in device memory peeked at an offset (SO_PEEK_OFF, empty buffer): no IP_CHECKSUM cmsg rather than a sum of device memory; at offset 0 the NIC's sum is given; no warning" {
	local out=$BATS_TEST_TMPDIR/peek port=5301 bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	steer udp4 "$port"
	echo complete >"$DFSB/rxq/3/csum"
	hold_queue3
	py_in "$NSB" "$IP4B" "$port" "$out.ready" >"$out" 2>&1 3>&- <<-'EOF_PY' &
		import select, socket, struct, sys
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.setsockopt(socket.SOL_IP, 23, 1)   # IP_CHECKSUM
		s.bind((sys.argv[1], int(sys.argv[2])))
		open(sys.argv[3], 'w').close()
		if not select.select([s], [], [], 20)[0]:
		    sys.exit('nothing received')
		for off in (100, 0):
		    s.setsockopt(socket.SOL_SOCKET, 42, off)   # SO_PEEK_OFF
		    data, anc, flags, _ = s.recvmsg(0, 512, socket.MSG_PEEK)
		    names = ['IP_CHECKSUM' if (l, t) == (socket.SOL_IP, 23) else '%d/%d' % (l, t)
		             for l, t, _ in anc]
		    print('offset %d: %d bytes, truncated %d, cmsgs [%s]'
		          % (off, len(data), bool(flags & socket.MSG_TRUNC), ' '.join(names)))
	EOF_PY
	local rx=$!
	wait_until 30 test -e "$out.ready"
	in_ns "$NSA" python3 -c 'import socket, sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"\x42" * 1000, (sys.argv[1], int(sys.argv[2])))' "$IP4B" "$port"
	wait "$rx"
	cat "$out"
	mapfile -t lines <"$out"
	[ "${lines[0]}" = "offset 100: 0 bytes, truncated 1, cmsgs []" ]
	[ "${lines[1]}" = "offset 0: 0 bytes, truncated 1, cmsgs [IP_CHECKSUM]" ]
	nsim_stat_is "$NSB" "$DEVB" rx3_payload_bufs $((bufs + 1))
}

# --- sockmap ingress (0026) -------------------------------------------------

@test "sockmap verdict passing a bound flow's skbs to the socket's ingress: device memory is a hard error, the socket gets EFAULT (from recv, or POLLERR and SO_ERROR) instead of the psock retrying forever; no warning" {
	local out=$BATS_TEST_TMPDIR/sockmap fifo=$BATS_TEST_TMPDIR/go w
	hold_queue3
	in_ns "$NSB" "$BIN/sockmap-pass" -p "$PORT" -r "$out.ready" -t 20 >"$out" 2>&1 3>&- &
	local rx=$!
	wait_until 20 tcp_bound "$NSB" "$PORT"
	mkfifo "$fifo"
	pattern_sender "$PORT" 0 65536 "$fifo"
	exec {w}>"$fifo"
	wait_until 20 test -e "$out.ready"
	echo go >&$w
	exec {w}>&-
	wait "$rx"
	cat "$out"
	# the psock sets the error on the socket: recv() returns it, or poll()
	# reports POLLERR first and SO_ERROR reads it
	grep -Eqx '(recv:|socket error) EFAULT after 0 bytes' "$out"
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -ge 1 ]
}
