# SPDX-License-Identifier: GPL-2.0
#
# The standard topology of the datapath suites: two netdevsim devices, one
# port each, in network namespaces nsa and nsb, linked by a cable.
#
#   load lib/vm
#   load lib/nsim
#   test_setup()    { nsim_pair 4; }      # 4 queues per port
#   test_teardown() { nsim_cleanup; }
#
# After nsim_pair: NSA/NSB namespaces, DEVA/DEVB port names, IFA/IFB
# ifindexes, MACA/MACB MAC addresses, IDA/IDB netdevsim device ids,
# DFSA/DFSB the ports' debugfs directories, IP4A/IP4B and IP6A/IP6B
# addresses.

BIN=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/bin
NSIM_BUS=/sys/bus/netdevsim

# shellcheck source=poll.bash
source "${BASH_SOURCE[0]%/*}/poll.bash"

IP4A=192.0.2.1
IP4B=192.0.2.2
IP6A=2001:db8::1
IP6B=2001:db8::2

# A free netdevsim device id: the test's own, so leftovers cannot clash.
nsim_new_dev() {
	local id=$1 queues=$2
	local d
	echo "$id 1 $queues" >"$NSIM_BUS/new_device"
	for d in "$NSIM_BUS/devices/netdevsim$id/net/"*; do echo "${d##*/}"; done
}

# The port name of device ID, as init_net sees it.
nsim_new_dev_name() {
	local d
	for d in "$NSIM_BUS/devices/netdevsim$1/net/"*; do echo "${d##*/}"; done
}

# nsim_port_ns ID NS: move device ID's port into netns NS, print its name.
nsim_port_ns() {
	local id=$1 ns=$2 dev
	dev=$(ls "$NSIM_BUS/devices/netdevsim$id/net/")
	ip link set "$dev" netns "$ns"
	echo "$dev"
}

# in_ns NS CMD...: run CMD in netns NS, as `ip netns exec` does, through
# build/bin/in-ns: a static program that costs under TCG half what ip, a
# dynamic one, does (62 ms less a call on the normal kernel, 210 on the
# debug one). Every exec costs about 0.35 s on the debug kernel: helpers
# here keep their number low. Background jobs call "$BIN/in-ns" directly
# instead: it execs CMD, so $! is CMD itself, whereas a function put in
# the background runs in a subshell, and killing that would leave CMD
# running in the namespace.
in_ns() { "$BIN/in-ns" "$@"; }

# One-line `ip -o link` view of DEV in NS.
link_line() { ip -n "$1" -o link show dev "$2"; }
ifindex_in() { link_line "$1" "$2" | cut -d: -f1; }
# The peer's ifindex as `ip` shows it (DEV@ifN), else DEV's own.
iflink() {
	local l
	l=$(link_line "$1" "$2")
	if [[ $l =~ ^[0-9]+:\ [^@:]+@if([0-9]+): ]]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo "${l%%:*}"
	fi
}
carrier() { [[ $(link_line "$1" "$2") == *LOWER_UP* ]] && echo 1 || echo 0; }

# Write STRING to a sysfs/debugfs FILE; on failure print the error text
# (strerror) on stdout and return 1. `run sysfs_write ...` then lets a
# test check the exact errno by its message.
sysfs_write() {
	local out
	if out=$( { printf '%s' "$2" >"$1"; } 2>&1); then
		return 0
	fi
	echo "${out##*: }"
	return 1
}

# udp_sink NS PORT...: one process in NS with UDP sockets (IPv4 and IPv6)
# bound to the PORTs that drop what they get, so datagrams sent there
# cause no ICMP errors. Returns once every port is bound.
udp_sink() {
	local ns=$1 ready
	shift
	ready=$BATS_TEST_TMPDIR/udpsink.$ns.$1
	rm -f "$ready"
	"$BIN/in-ns" "$ns" "$BIN/udpsink" -q --ready-file "$ready" "$@" &
	wait_until 20 test -e "$ready"
}
tcp_bound() { in_ns "$1" ss -Hltn "sport = :$2" | grep -q .; }

# Open fds on both namespaces for the link files (NSFDA, NSFDB).
nsim_open_nsfds() {
	exec {NSFDA}</run/netns/"$NSA" {NSFDB}</run/netns/"$NSB"
}

nsim_link() {
	sysfs_write "$NSIM_BUS/link" "$NSFDA:$IFA $NSFDB:$IFB"
}

# nsim_pair [QUEUES [MTU]]: the standard topology, linked and up, IPv4
# and IPv6 (no DAD) addresses; with NSIM_NO_IPV6=1 IPv4 only, so that
# exact packet counts see nothing but what a test sends.
nsim_pair() {
	local queues=${1:-4} mtu=${2:-1500}

	NSA=nsa NSB=nsb
	IDA=$((1000 + BATS_TEST_NUMBER * 2)) IDB=$((1001 + BATS_TEST_NUMBER * 2))
	DEVA=$(nsim_new_dev "$IDA" "$queues")
	DEVB=$(nsim_new_dev "$IDB" "$queues")
	# A new namespace has only lo: the ports keep their ifindex (and
	# their MAC address). sysfs shows them only while in init_net.
	read -r IFA <"/sys/class/net/$DEVA/ifindex"
	read -r IFB <"/sys/class/net/$DEVB/ifindex"
	read -r MACA <"/sys/class/net/$DEVA/address"
	read -r MACB <"/sys/class/net/$DEVB/address"
	move_pair
	DFSA=/sys/kernel/debug/netdevsim/netdevsim$IDA/ports/0
	DFSB=/sys/kernel/debug/netdevsim/netdevsim$IDB/ports/0
	nsim_open_nsfds
	nsim_link
	nsim_addr "$NSA" "$DEVA" "$IP4A" "$IP6A" "$mtu"
	nsim_addr "$NSB" "$DEVB" "$IP4B" "$IP6B" "$mtu"
}

# move_pair: new namespaces NSA and NSB, DEVA moved into NSA and DEVB
# into NSB.
move_pair() {
	ip -b - <<-EOF_IP
		netns add $NSA
		netns add $NSB
		link set $DEVA netns $NSA
		link set $DEVB netns $NSB
	EOF_IP
}

nsim_addr() {
	local ns=$1 dev=$2 ip4=$3 ip6=$4 mtu=$5 v6

	# No router solicitations: a test counts exactly what it sends.
	v6="net.ipv6.conf.$dev.router_solicitations=0"
	[ "${NSIM_NO_IPV6:-0}" = 1 ] && v6="net.ipv6.conf.$dev.disable_ipv6=1"
	in_ns "$ns" sysctl -qw "$v6"
	ip -n "$ns" -b - <<-EOF_IP
		link set lo up
		link set $dev mtu $mtu
		addr add $ip4/24 dev $dev
		$([ "${NSIM_NO_IPV6:-0}" = 1 ] || echo "addr add $ip6/64 dev $dev nodad")
		link set $dev up
	EOF_IP
}

nsim_cleanup() {
	local id ns batch=
	# The test's background processes first: a namespace lives as long
	# as something runs in it.
	local pids
	pids=$(jobs -p)
	if [ -n "$pids" ]; then
		kill -9 $pids 2>/dev/null || true
		wait $pids 2>/dev/null || true
	fi
	for id in ${IDA:-} ${IDB:-}; do
		[ -e "$NSIM_BUS/devices/netdevsim$id" ] &&
			echo "$id" >"$NSIM_BUS/del_device"
	done
	for ns in ${NSA:-} ${NSB:-}; do
		[ -e "/run/netns/$ns" ] && batch+="netns del $ns"$'\n'
	done
	[ -z "$batch" ] || ip -force -b - <<<"$batch" 2>/dev/null
	return 0
}

# nsim_snap NS DEV: all of DEV's `ethtool -S` counters into STAT[name].
declare -gA STAT
nsim_snap() {
	local name val
	STAT=()
	while read -r name val; do
		[[ $name == *: ]] && STAT[${name%:}]=$val
	done < <(in_ns "$1" ethtool -S "$2")
}

# ethtool -S counter NAME of DEV in NS.
nsim_stat() {
	nsim_snap "$1" "$2"
	[ -n "${STAT[$3]:-}" ] && echo "${STAT[$3]}"
}

# nsim_stat_is NS DEV NAME WANT: NAME of DEV is WANT; if not, it says what
# it is, with the rest of that queue's (or the device's) counters.
nsim_stat_is() {
	local v k
	v=$(nsim_stat "$1" "$2" "$3")
	[ "$v" = "$4" ] && return 0
	echo "$2: $3 is ${v:-missing}, expected $4" >&2
	nsim_snap "$1" "$2"
	for k in "${!STAT[@]}"; do
		[ "${k%%_*}" = "${3%%_*}" ] && echo "  $k ${STAT[$k]}" >&2
	done
	return 1
}

# Sum of rxQ_NAME over all queues.
nsim_stat_sum() {
	local k t=0
	nsim_snap "$1" "$2"
	for k in "${!STAT[@]}"; do
		[[ $k =~ ^rx[0-9]+_$3$ ]] && t=$((t + STAT[$k]))
	done
	echo $t
}

# stat_gt NS DEV NAME N: counter NAME (or the sum of rxQ_NAME when NAME
# has no queue prefix) is above N; for wait_until.
stat_gt() {
	local v
	case $3 in
	rx[0-9]*_* | tx_* | rx_*) v=$(nsim_stat "$1" "$2" "$3") ;;
	*) v=$(nsim_stat_sum "$1" "$2" "$3") ;;
	esac
	[ "$v" -gt "$4" ]
}

# netdev_rx_bytes PID DEV: DEV's received bytes as /proc/PID/net/dev
# shows them, PID being a process in DEV's namespace. No exec: cheap
# enough to poll while traffic flows.
netdev_rx_bytes() {
	local line
	local -a f
	while read -r line; do
		if [[ $line == "$2:"* ]]; then
			read -r -a f <<<"${line#*:}"
			echo "${f[0]}"
			return 0
		fi
	done <"/proc/$1/net/dev"
	return 1
}

# nsim_settle: wait until neither port of the pair has receive work in
# hand (rxq/busy reads 0 on both, twice in a row: the poll of one end
# may transmit to the other, an ARP reply releasing a queued datagram),
# so that counters include every packet sent so far. Packets still in a
# qdisc or a timer are not covered.
nsim_idle() {
	local a b
	read -r a <"$DFSA/rxq/busy" && read -r b <"$DFSB/rxq/busy" &&
		[ "$a" = 0 ] && [ "$b" = 0 ]
}
nsim_settle() { wait_until 20 eval 'nsim_idle && nsim_idle'; }

# udp_send NS ADDR PORT [N]: N (1) datagrams "x\n" from NS to ADDR:PORT,
# then nsim_settle.
udp_send() {
	in_ns "$1" bash -c "for i in \$(seq ${4:-1}); do echo x >/dev/udp/$2/$3; done"
	nsim_settle
}

# xfer_start NS_LISTEN PORT SEND RECV [extra tcpxfer args]: background
# listener in NS_LISTEN; returns once it listens. XFER_PID, XFER_OUT.
xfer_start() {
	local ns=$1 port=$2 send=$3 recv=$4
	shift 4
	XFER_OUT=$BATS_TEST_TMPDIR/xfer-listen.$port
	rm -f "$XFER_OUT.ready"
	"$BIN/in-ns" "$ns" "$BIN/tcpxfer" listen -q -p "$port" -s "$send" \
		-r "$recv" --ready-file "$XFER_OUT.ready" "$@" \
		>"$XFER_OUT" 2>&1 &
	XFER_PID=$!
	wait_until 20 test -e "$XFER_OUT.ready"
}

# xfer_wait: the listener's status; its output on failure.
xfer_wait() {
	local rc=0
	wait "$XFER_PID" || rc=$?
	[ "$rc" -eq 0 ] || cat "$XFER_OUT" >&2
	return $rc
}

# xfer NS_CONNECT ADDR PORT SEND RECV [extra]: connect and transfer.
xfer_connect() {
	local ns=$1 addr=$2 port=$3 send=$4 recv=$5
	shift 5
	in_ns "$ns" "$BIN/tcpxfer" connect -q -a "$addr" -p "$port" \
		-s "$send" -r "$recv" "$@"
}

# ip6_mib NS FIELD: FIELD (e.g. Ip6FragFails) of NS's /proc/net/snmp6.
ip6_mib() { in_ns "$1" awk -v f="$2" '$1 == f { print $2 }' /proc/net/snmp6; }

# snmp_mib NS GROUP FIELD: FIELD of the GROUP line (Ip, Icmp, TcpExt,
# MPTcpExt...) of NS's /proc/net/snmp or /proc/net/netstat.
snmp_mib() {
	in_ns "$1" awk -v g="$2:" -v f="$3" '$1 == g && !(FILENAME in n) { for (i = 2; i <= NF; i++) h[i] = $i; n[FILENAME] = 1; next }
		$1 == g { for (i = 2; i <= NF; i++) if (h[i] == f) print $i }' /proc/net/snmp /proc/net/netstat
}

# ip_mib NS FIELD: FIELD (e.g. FragFails) of the Ip line of NS's
# /proc/net/snmp.
ip_mib() { snmp_mib "$1" Ip "$2"; }

# tcp_mib NS FIELD: the Tcp counter FIELD (e.g. InCsumErrors) of NS's
# /proc/net/snmp, which counts IPv4 and IPv6 alike.
tcp_mib() { snmp_mib "$1" Tcp "$2"; }

# kmemleak reports only objects older than 5 s: wait that long, then scan
# (where kmemleak is not active there is nothing to wait for).
nsim_leak_check() {
	kmemleak_active || return 0
	sleep 6
	kmemleak_check
}
