#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Sites the audit of docs/unreadable-skbs.md found unsafe, fixed by
# net/patches/0025-0028: each test drives packets whose payload is in
# device memory (rx queue 3 of B bound to a udmabuf) into one of them and
# checks that the kernel refuses cleanly: the packet dropped and counted,
# or the call failing with the errno it documents, no kernel report (the
# VM runner fails a test on any oops, WARN or BUG), no uninitialised byte
# sent anywhere: IPv4 and IPv6 refragmentation on a bridge (bridge
# netfilter, and the bridge family's own conntrack), TCP zerocopy
# receive's copy fallback, the IPv6 Redirect's quote of the packet,
# kTLS's receive strparser.
# Packets that are neither TCP nor UDP (IPv6 fragments, ICMPv6) carry
# device memory only with queue 3's csum knob at complete (devmem-csum):
# netdevsim then keeps the first 256 bytes (NSIM_HDR_BUF_SIZE) in host
# memory and puts the rest in device memory.

load lib/vm
load lib/nsim
load lib/devmem

test_setup() { devmem_setup; }
test_teardown() {
	local p
	for p in ${HOLD_PID:-}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	nsim_cleanup
}

# udp6_send NS DST PORT BYTES COUNT: COUNT UDP datagrams of BYTES bytes
# (pattern 0..255 repeated) from NS to [DST]:PORT.
udp6_send() {
	in_ns "$1" python3 - "$2" "$3" "$4" "$5" <<-'EOF_PY'
		import socket, sys
		dst, port, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
		s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
		data = bytes(i & 0xff for i in range(size))
		for _ in range(count):
		    assert s.sendto(data, (dst, port)) == size
	EOF_PY
}

# --- IPv6 refragmentation on a bridge ---------------------------------------

# bridge_setup MODE: B bridges its netdevsim port and two veth ports
# (vb1, vb2, their peers up in B, unaddressed) in br0, with conntrack (and
# so defragmentation) on what it bridges: MODE br_netfilter hands bridged
# IPv6 to the ip6 family's hooks (an ip6 table counts new connections),
# where ip6_fragment() (br_nf_post_routing) refragments what was
# reassembled; MODE bridge_ct tracks it in the bridge family itself
# (nf_conntrack_bridge, a bridge table counts), whose refragmentation is
# nf_br_ip_fragment() / br_ip6_fragment(). Either way a datagram that
# arrived in fragments is reassembled and refragmented for each port it
# leaves through. br0 is promiscuous: a flooded packet then also goes up
# locally, so every port gets a clone (br_flood()), which cannot be sent
# as its original fragments: the payload would be copied into new ones.
# CT_FAMILY: the family of the counting table.
bridge_setup() {
	local nfcall=0
	CT_FAMILY=bridge
	if [ "$1" = br_netfilter ]; then
		nfcall=1
		CT_FAMILY=ip6
	fi
	in_ns "$NSB" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	# the netns-wide switches (on by default) would send bridged IPv4
	# and IPv6 through bridge netfilter whatever the bridge says
	in_ns "$NSB" sysctl -qw net.bridge.bridge-nf-call-iptables=0
	in_ns "$NSB" sysctl -qw net.bridge.bridge-nf-call-ip6tables=0
	ip -n "$NSB" -b - <<-EOF_IP
		link add br0 type bridge nf_call_ip6tables $nfcall nf_call_iptables 0 mcast_snooping 0
		link set $DEVB master br0
		link add vb1 type veth peer name vp1
		link add vb2 type veth peer name vp2
		link set vb1 master br0
		link set vb2 master br0
		link set vp1 up
		link set vp2 up
		link set vb1 up
		link set vb2 up
		link set br0 promisc on
		link set br0 up
	EOF_IP
	in_ns "$NSB" nft -f - <<-EOF_NFT
		table $CT_FAMILY devmem_ct {
			chain pre {
				type filter hook prerouting priority 0;
				ct state new counter
			}
		}
	EOF_NFT
	# A sends to addresses whose MAC the bridge has never seen: flooded
	ip -n "$NSA" neigh add 2001:db8::99 lladdr 02:00:00:00:00:99 dev "$DEVA"
	ip -n "$NSA" neigh add 192.0.2.99 lladdr 02:00:00:00:00:99 dev "$DEVA"
}

# udp4_send NS DST PORT BYTES COUNT: as udp6_send, over IPv4 without DF
# (IP_PMTUDISC_DONT): the sender's kernel fragments what exceeds the MTU.
udp4_send() {
	in_ns "$1" python3 - "$2" "$3" "$4" "$5" <<-'EOF_PY'
		import socket, sys
		dst, port, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER, IP_PMTUDISC_DONT
		data = bytes(i & 0xff for i in range(size))
		for _ in range(count):
		    assert s.sendto(data, (dst, port)) == size
	EOF_PY
}

# frag6_send DATAGRAMS: from A's port, DATAGRAMS UDP datagrams over IPv6
# (1584 bytes, to 2001:db8::99 port 9, correct checksum), each as two
# fragments written with a packet socket: the first (offset 0, 184 bytes
# of payload, 246 on the wire) fits netdevsim's header buffer, host
# memory; the second (1400 bytes, 1462 on the wire) puts all but its
# first 256 bytes in device memory.
frag6_send() {
	in_ns "$NSA" python3 - "$DEVA" "$MACA" "$IP6A" "$1" <<-'EOF_PY'
		import socket, struct, sys
		dev, mac, src, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
		dst = '2001:db8::99'
		s6, d6 = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
		eth = bytes.fromhex('020000000099') + bytes.fromhex(mac.replace(':', '')) + b'\x86\xdd'
		def csum(b):
		    if len(b) % 2: b += b'\0'
		    t = sum(struct.unpack('!%dH' % (len(b) // 2), b))
		    while t >> 16: t = (t & 0xffff) + (t >> 16)
		    return t
		s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
		s.bind((dev, 0))
		for i in range(n):
		    data = bytes((i + j) & 0xff for j in range(1576))
		    ulen = 8 + len(data)
		    pseudo = s6 + d6 + struct.pack('!IxxxB', ulen, 17)
		    c = 0xffff - csum(pseudo + struct.pack('!HHHH', 4000, 9, ulen, 0) + data)
		    udp = struct.pack('!HHHH', 4000, 9, ulen, c or 0xffff) + data
		    for off, part, more in ((0, udp[:184], 1), (184, udp[184:], 0)):
		        ip6 = struct.pack('!IHBB', 6 << 28, 8 + len(part), 44, 64) + s6 + d6
		        frag = struct.pack('!BBHI', 17, 0, off | more, 0x1000 + i)
		        assert s.send(eth + ip6 + frag + part) == 14 + 48 + len(part)
	EOF_PY
}

# frag_counts: the counters the bridge test follows, into FC[name].
declare -gA FC
frag_counts() {
	nsim_snap "$NSB" "$DEVB"
	FC[bufs]=${STAT[rx3_payload_bufs]}
	FC[drops]=$((STAT[rx3_drops] + STAT[rx3_devmem_drops]))
	FC[fails]=$(ip6_mib "$NSB" Ip6FragFails)
	FC[creates]=$(ip6_mib "$NSB" Ip6FragCreates)
	FC[fails4]=$(ip_mib "$NSB" FragFails)
	FC[creates4]=$(ip_mib "$NSB" FragCreates)
	FC[ct]=$(in_ns "$NSB" nft list chain "$CT_FAMILY" devmem_ct pre | grep -o "packets [0-9]* bytes [0-9]*")
	declare -p FC
}

# bridge_refrag6 MODE: the IPv6 test of bridge_setup MODE.
bridge_refrag6() {
	local -A before
	bridge_setup "$1"
	all_to_queue3
	frag_counts
	for k in "${!FC[@]}"; do before[$k]=${FC[$k]}; done
	[ "${FC[ct]}" = "packets 0 bytes 0" ]

	# 3 datagrams of 3000 bytes fragmented by A's kernel: 1448, 1448 and
	# 112 bytes of payload, the first two in device memory past their
	# first 256 bytes, so the reassembled head is unreadable
	udp6_send "$NSA" 2001:db8::99 9 3000 3
	nsim_settle
	frag_counts
	[ "${FC[bufs]}" -eq $((before[bufs] + 6)) ]
	[ "${FC[drops]}" -eq "${before[drops]}" ]
	# conntrack saw them reassembled (3048 bytes each; no reply: all new)
	[ "${FC[ct]}" = "packets 3 bytes 9144" ]
	# each refragmented for each port it was flooded to (vb1, vb2), as
	# a clone: refused, a fragmentation failure each, nothing created
	[ "${FC[fails]}" -eq $((before[fails] + 6)) ]
	[ "${FC[creates]}" -eq "${before[creates]}" ]

	# 3 datagrams whose first fragment is all host memory and whose
	# second is device memory (frag6_send): the reassembled head's own
	# bytes are readable, the device memory is on its frag list. It
	# used to BUG() in ip6_frag_next(), copying that fragment.
	frag6_send 3
	nsim_settle
	frag_counts
	[ "${FC[bufs]}" -eq $((before[bufs] + 9)) ]
	[ "${FC[drops]}" -eq "${before[drops]}" ]
	[ "${FC[ct]}" = "packets 6 bytes 14016" ]
	[ "${FC[fails]}" -eq $((before[fails] + 12)) ]
	[ "${FC[creates]}" -eq "${before[creates]}" ]
}

@test "IPv6 datagrams reassembled by bridge netfilter with device-memory fragments and flooded to two ports: refragmenting is refused, counted in Ip6FragFails, no crash" {
	bridge_refrag6 br_netfilter
}

@test "the same through the bridge family's own conntrack (nf_conntrack_bridge): refused, counted in Ip6FragFails, no crash" {
	bridge_refrag6 bridge_ct
}

@test "IPv4 datagrams reassembled by the bridge family's conntrack with device-memory fragments and flooded to two ports: refragmenting is refused, counted in FragFails, no crash" {
	local -A before
	bridge_setup bridge_ct
	all_to_queue3
	frag_counts
	for k in "${!FC[@]}"; do before[$k]=${FC[$k]}; done
	[ "${FC[ct]}" = "packets 0 bytes 0" ]
	# 3 datagrams of 3000 bytes, DF clear, fragmented by A's kernel:
	# 1480, 1480 and 48 bytes of payload, the first two in device memory
	# past their first 256 bytes
	udp4_send "$NSA" 192.0.2.99 9 3000 3
	nsim_settle
	frag_counts
	[ "${FC[bufs]}" -eq $((before[bufs] + 6)) ]
	[ "${FC[drops]}" -eq "${before[drops]}" ]
	# conntrack saw them reassembled (3028 bytes each)
	[ "${FC[ct]}" = "packets 3 bytes 9084" ]
	# refused for each of the two ports: nothing created
	[ "${FC[fails4]}" -eq $((before[fails4] + 6)) ]
	[ "${FC[creates4]}" -eq "${before[creates4]}" ]
}

# --- TCP zerocopy receive's copy fallback (can_map_frag) -------------------

@test "TCP_ZEROCOPY_RECEIVE copying host-memory data queued before page-sized device-memory frags: no crash, the skip hint covers the device data, which recvmsg(MSG_SOCK_DEVMEM) then reads intact" {
	local port=5301 out=$BATS_TEST_TMPDIR/zc fifo=$BATS_TEST_TMPDIR/go w
	# 9000-byte MTU: the 8000-byte segment fills netdevsim's payload
	# buffers page by page, its first frag a whole page at offset 0
	ip -n "$NSA" link set "$DEVA" mtu 9000
	ip -n "$NSB" link set "$DEVB" mtu 9000
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 3 udmabuf:16M \
		--run "$BIN/devmem-zc" -p "$port" -a 4000 -b 8000 -r "$out.ready" \
		>"$out" 2>&1 3>&- &
	local rx=$!
	wait_until 30 test -e "$out.ready"
	mkfifo "$fifo"
	# port 5301 has no n-tuple rule yet: RSS puts it on queues 0-2, host
	# memory, so the first 4000 bytes are a readable skb
	pattern_sender "$port" 4000 8000 "$fifo"
	exec {w}>"$fifo"
	wait_until 20 grep -q "^queued 4000$" "$out"
	# now steered to bound queue 3: the next 8000 bytes are device memory
	steer tcp4 "$port"
	echo go >&$w
	exec {w}>&-
	local rc=0
	wait "$rx" || rc=$?
	cat "$out"
	mapfile -t lines <"$out"
	[ "$rc" -eq 0 ]
	[ "${lines[1]}" = "queued 4000" ]
	# the copy takes the readable 4000 bytes and stops at device memory;
	# the hint (it used to oops on the NULL page of a net_iov frag) skips
	# the whole 8000-byte unreadable skb: none of it can be mapped
	[ "${lines[2]}" = "zerocopy: ret 0, length 0, copybuf_len 4000, recv_skip_hint 8000" ]
	[ "${lines[3]}" = "copybuf: 4000 bytes, pattern ok" ]
	[ "${lines[4]}" = "devmem: 8000 bytes, linear 0, dmabuf 8000" ]
	wait "$SENDER_PID"
	# in device memory, in whole pages: how TCP cut the 8000 bytes into
	# segments decides how many buffers, at least two
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -ge 2 ]
}

# --- IPv6 redirect (ndisc_fill_redirect_hdr_option) ------------------------

# redirect_probe DST: from A's port, one TCP segment over IPv6 (32-byte
# TCP header: 12 bytes of NOP and timestamp options; 1000 bytes of
# payload, 0xa5) to [DST]:$PORT through B's MAC, written with a packet
# socket that also waits (10 s at most) for the ICMPv6 Redirect coming
# back. Prints one line for the Redirect:
#   redirect to T: option L bytes, quoted Q, headers match|differ, nonzero past 72: N
# or "no redirect".
redirect_probe() {
	in_ns "$NSA" python3 - "$DEVA" "$MACA" "$MACB" "$IP6A" "$1" "$PORT" <<-'EOF_PY'
		import select, socket, struct, sys, time
		dev, maca, macb, src, dst, port = sys.argv[1:7]
		s6, d6 = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
		def csum(b):
		    if len(b) % 2: b += b'\0'
		    t = sum(struct.unpack('!%dH' % (len(b) // 2), b))
		    while t >> 16: t = (t & 0xffff) + (t >> 16)
		    return t
		payload = b'\xa5' * 1000
		opts = b'\x01\x01\x08\x0a' + struct.pack('!II', 1, 0)
		tcp = struct.pack('!HHIIBBHHH', 40000, int(port), 1, 1, 8 << 4, 0x18, 1024, 0, 0) + opts
		seg = tcp + payload
		c = 0xffff - csum(s6 + d6 + struct.pack('!IxxxB', len(seg), 6) + seg)
		seg = seg[:16] + struct.pack('!H', c) + seg[18:]
		ip6 = struct.pack('!IHBB', 6 << 28, len(seg), 6, 64) + s6 + d6
		eth = bytes.fromhex(macb.replace(':', '')) + bytes.fromhex(maca.replace(':', '')) + b'\x86\xdd'
		pkt = ip6 + seg
		s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x86dd))
		s.bind((dev, 0x86dd))
		assert s.send(eth + pkt) == 14 + len(pkt)
		end = time.time() + 10
		while time.time() < end:
		    if not select.select([s], [], [], max(0, end - time.time()))[0]:
		        break
		    f, addr = s.recvfrom(65536)
		    if addr[2] == socket.PACKET_OUTGOING or len(f) < 14 + 40 + 40:
		        continue
		    ip, icmp = f[14:54], f[54:]
		    if ip[6] != 58 or icmp[0] != 137:
		        continue
		    target = socket.inet_ntop(socket.AF_INET6, icmp[8:24])
		    o = icmp[40:]
		    while o and o[0] != 4:
		        o = o[8 * o[1]:] if o[1] else b''
		    if not o:
		        print('redirect to %s: no redirected header option' % target)
		        break
		    quoted = o[8:8 * o[1]]
		    match = 'match' if quoted[:72] == pkt[:72] else 'differ'
		    nonzero = sum(1 for b in quoted[72:] if b)
		    print('redirect to %s: option %d bytes, quoted %d, headers %s, nonzero past 72: %d'
		          % (target, 8 * o[1], len(quoted), match, nonzero))
		    break
		else:
		    print('no redirect')
	EOF_PY
}

@test "IPv6 packet of a bound flow forwarded back out its own port: the Redirect quotes its headers and no byte of device memory or of the kernel" {
	local dst=2001:db8::3 out
	steer tcp6 "$PORT"
	hold_queue3
	# B routes: forwarding on, a link-local address for the Redirect's
	# source, dst on the port's own subnet with a known neighbour
	in_ns "$NSB" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip -n "$NSB" -b - <<-EOF_IP
		addr add fe80::2/64 dev $DEVB nodad
		neigh add $dst lladdr 02:00:00:00:00:03 dev $DEVB
	EOF_IP
	# A reaches dst through B
	ip -n "$NSA" -6 route add "$dst/128" via "$IP6B"
	local bufs redirects
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	redirects=$(ip6_mib "$NSB" Icmp6OutRedirects)
	out=$(redirect_probe "$dst")
	echo "$out"
	# the segment's payload landed in device memory on queue 3
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -eq $((bufs + 1)) ]
	[ "$(ip6_mib "$NSB" Icmp6OutRedirects)" -eq $((redirects + 1)) ]
	# the option quotes the 72 bytes of IPv6 and TCP headers (the linear
	# part), as sent; it used to quote 1192 bytes, all but the headers
	# uninitialised kernel memory
	[ "$out" = "redirect to $dst: option 80 bytes, quoted 72, headers match, nonzero past 72: 0" ]
}

# --- kTLS receive (tls_strp) -----------------------------------------------

@test "kTLS receive on a bound flow, 3 bytes queued (less than a record header) under memory pressure: the strparser refuses device memory, recv fails with EFAULT, no warning" {
	local out=$BATS_TEST_TMPDIR/tls
	hold_queue3
	# B: a kTLS receiver (AES-GCM-128, TLS 1.2) on $PORT; once TLS_RX is
	# set it sends one byte, and then reports its first recv(). Its
	# SO_RCVBUF is the minimum: a short queue (less than a header) is
	# copied out by the strparser only under memory pressure, which one
	# skb holding a page of device memory is then
	"$BIN/in-ns" "$NSB" python3 -c '
import errno, socket, struct, sys
SOL_TLS, TLS_RX, TCP_ULP = 282, 2, 31
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
l.bind(("0.0.0.0", int(sys.argv[1])))
l.listen(1)
open(sys.argv[2], "w").close()
c, _ = l.accept()
c.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b"tls")
info = struct.pack("<HH", 0x0303, 51) + bytes(8) + bytes(range(16)) + bytes(4) + bytes(8)
c.setsockopt(SOL_TLS, TLS_RX, info)
c.sendall(b"r")
c.settimeout(10)
try:
    d = c.recv(100)
    print("recv: %d bytes" % len(d))
except socket.timeout:
    print("recv: timed out")
except OSError as e:
    print("recv: %s" % errno.errorcode[e.errno])
' "$PORT" "$out.ready" >"$out" 2>&1 3>&- &
	local rx=$!
	wait_until 20 test -e "$out.ready"
	# A: 3 bytes of payload, in device memory on queue 3, once B is ready
	local bufs
	bufs=$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)
	in_ns "$NSA" python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
assert s.recv(1) == b"r"
s.sendall(b"abc")
s.settimeout(15)
try:
    s.recv(1)
except OSError:
    pass
' "$IP4B" "$PORT" &
	local tx=$!
	local rc=0
	wait "$rx" || rc=$?
	cat "$out"
	[ "$rc" -eq 0 ]
	[ "$(nsim_stat "$NSB" "$DEVB" rx3_payload_bufs)" -eq $((bufs + 1)) ]
	# it used to warn in tls_strp_copyin_frag() (copying device memory
	# into the strparser's pages) and then wait for the rest of a record
	[ "$(cat "$out")" = "recv: EFAULT" ]
	wait "$tx"
}
