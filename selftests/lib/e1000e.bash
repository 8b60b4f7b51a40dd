# SPDX-License-Identifier: GPL-2.0
#
# The two emulated Intel 82574L NICs that selftests/vm/run gives every
# guest (QEMU's e1000e, both ports on one QEMU hub), driven by Linux's
# e1000e driver: A in netns nsa, B in nsb.
#
#   load lib/vm
#   load lib/nsim          # in_ns, nsim_addr, wait_until, nsim_snap, carrier
#   load lib/e1000e
#   test_setup()    { e1000e_pair; }
#   test_teardown() { e1000e_cleanup; }
#
# After e1000e_pair [MTU]: NSA/NSB, DEVA/DEVB (names), IFA/IFB
# (ifindexes), PCIA/PCIB (PCI addresses), IP4A/IP4B, IP6A/IP6B; both
# ports up with carrier, header split off.
#
# TSO is off on both ports: QEMU 7.2 emulates the 82574's TCP
# segmentation by cutting the large packet into IP fragments, whose
# payload the receiving 82574 does not split from their headers (QEMU
# 8.0 segments properly). The kernel segments in software instead (GSO),
# device memory included.

E1000E_MACA=52:54:00:e1:00:0a
E1000E_MACB=52:54:00:e1:00:0b

# The init_net name of the port with MAC $1, or nothing.
e1000e_by_mac() {
	local d mac
	for d in /sys/class/net/*; do
		read -r mac <"$d/address" 2>/dev/null || continue
		[ "$mac" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# e1000e_rescan MAC...: after a PCI remove, rescan the bus and wait for
# the ports with those MACs to appear in init_net.
e1000e_rescan() {
	local mac
	echo 1 >/sys/bus/pci/rescan
	for mac in "$@"; do
		wait_until 20 e1000e_by_mac "$mac" >/dev/null || return 1
	done
}

e1000e_up() { [ "$(carrier "$NSA" "$DEVA")$(carrier "$NSB" "$DEVB")" = 11 ]; }

# e1000e_wait_link: both ports have carrier (after a reset: tcp-data-split,
# bind, unbind and MTU changes all reset the controller).
e1000e_wait_link() { wait_until 20 e1000e_up; }

e1000e_pair() {
	local mtu=${1:-1500}

	NSA=nsa NSB=nsb
	IP4A=192.0.2.1 IP4B=192.0.2.2 IP6A=2001:db8::1 IP6B=2001:db8::2
	e1000e_by_mac "$E1000E_MACA" >/dev/null &&
		e1000e_by_mac "$E1000E_MACB" >/dev/null ||
		e1000e_rescan "$E1000E_MACA" "$E1000E_MACB"
	DEVA=$(e1000e_by_mac "$E1000E_MACA")
	DEVB=$(e1000e_by_mac "$E1000E_MACB")
	PCIA=$(basename "$(readlink -f "/sys/class/net/$DEVA/device")")
	PCIB=$(basename "$(readlink -f "/sys/class/net/$DEVB/device")")
	ethtool -K "$DEVA" tso off
	ethtool -K "$DEVB" tso off
	"$BIN/tcp-data-split" "$DEVB" off >/dev/null
	move_pair
	# a new namespace has its tunnels' fallback devices: the ports'
	# ifindexes may change on the way in
	IFA=$(ifindex_in "$NSA" "$DEVA")
	IFB=$(ifindex_in "$NSB" "$DEVB")
	nsim_addr "$NSA" "$DEVA" "$IP4A" "$IP6A" "$mtu"
	nsim_addr "$NSB" "$DEVB" "$IP4B" "$IP6B" "$mtu"
	e1000e_wait_link
}

# Background jobs killed; the ports moved back to init_net (a namespace
# may outlive its name for a while: an orphaned TCP socket retrying its FIN
# keeps it), MTU 1500; the namespaces deleted; an unbound driver bound
# again.
e1000e_cleanup() {
	local pids ns batch=
	pids=$(jobs -p)
	if [ -n "$pids" ]; then
		kill -9 $pids 2>/dev/null || true
		wait $pids 2>/dev/null || true
	fi
	[ -e "/run/netns/${NSA:-}" ] && [ -n "${DEVA:-}" ] &&
		ip -n "$NSA" link set "$DEVA" mtu 1500 netns 1 2>/dev/null
	[ -e "/run/netns/${NSB:-}" ] && [ -n "${DEVB:-}" ] &&
		ip -n "$NSB" link set "$DEVB" mtu 1500 netns 1 2>/dev/null
	for ns in ${NSA:-} ${NSB:-}; do
		[ -e "/run/netns/$ns" ] && batch+="netns del $ns"$'\n'
	done
	[ -z "$batch" ] || ip -force -b - <<<"$batch" 2>/dev/null
	e1000e_rebind
	return 0
}

# e1000e_rebind: a port whose driver a test unbound (the teardown
# suite's del) gets it back; its netdev comes up in init_net.
e1000e_rebind() {
	local d
	for d in ${PCIA:-} ${PCIB:-}; do
		[ -e "/sys/bus/pci/devices/$d" ] &&
			[ ! -e "/sys/bus/pci/devices/$d/driver" ] &&
			echo "$d" >/sys/bus/pci/drivers/e1000e/bind
	done
	return 0
}
