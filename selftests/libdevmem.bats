#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libdevmem on our kernel, which has what the host lacks. The test
# programs (libdevmem/tests, built by make libdevmem) run here and must
# pass: a skip (exit 77) is a failure, since the kernel has everything
# they need.
#
# * dma-buf providers: /dev/udmabuf and the system dma-heap. The programs
#   allocate a buffer, write a pattern through their own mapping of the fd
#   and read it back with devmem_dmabuf_read() (mmap + DMA_BUF_IOCTL_SYNC)
#   and through the library's own mapping (devmem_dmabuf_map()) between
#   begin and end of access.
# * the netdev family: netlink and netlink-layer assert our kernel's
#   errnos and extack texts for what they refuse (the table in
#   libdevmem/tests/netlink.c); bind-vm binds a udmabuf to a netdevsim rx
#   queue through the library and shows each step, checked here field by
#   field.
# * io_uring receive: uring-vm receives a devmem TCP flow (lib/devmem.bash:
#   steered to the bound queue 3) with IORING_OP_RECVMSG and
#   MSG_SOCK_DEVMEM, checks every byte through the udmabuf and hands the
#   tokens back; with the wrong pattern seed it must fail. With
#   --own-ring it receives on its own ring through devmem_urecv. Through
#   a 2 MiB udmabuf, with the recycler linked to the ring, it must not
#   stall.
# * ordered receive: recv-vm receives with devmem_recv() and checks every
#   byte in the order of each receive's segments. netdevsim's hds_payload
#   knob puts the first bytes of every packet's payload in host memory,
#   so that receives mix host bytes and fragments.
# * token recycling: recv-vm streams 64 MiB (16 on the debug kernel)
#   through a 2 MiB udmabuf, and through one of a page per entry of the
#   rx ring, with a recycler made with the binding's buffer count alone;
#   a receive that waits 20 s is a stall.
# * stalls the library tells: undersized-vm binds with
#   devmem_binding_new_rx_flags(), which refuses a dma-buf with fewer
#   buffers than the rx ring has entries; stall-vm keeps every token of a
#   64-buffer binding until devmem_recv() (or, with --uring,
#   devmem_uring_wait()) fails with ENOBUFS, then gives them back and
#   finishes the flow.

load lib/vm
load lib/nsim
load lib/devmem

LIBTESTS=${VM_REPO:-$BATS_TEST_DIRNAME/..}/build/libdevmem/tests
NETNS=libdevmem

test_teardown() {
	nsim_cleanup
	[ ! -e "/run/netns/$NETNS" ] || ip netns del "$NETNS"
}

# prog [--ns NS] NAME [ARGS]: run a libdevmem test program (in netns NS);
# it must pass, not skip.
prog() {
	local ns=() name
	if [ "$1" = --ns ]; then
		ns=("$BIN/in-ns" "$2")
		shift 2
	fi
	name=$1
	shift
	[ -x "$LIBTESTS/$name" ] || { echo "no $LIBTESTS/$name: run make libdevmem" >&2; return 1; }
	run "${ns[@]}" "$LIBTESTS/$name" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *skip* ]]
}

# A namespace of our own with lo up: queue dumps list devices that are up.
own_netns() {
	ip netns add "$NETNS"
	ip -n "$NETNS" link set lo up
}

@test "udmabuf: allocated, filled through its mapping, read back, imported" {
	[ -c /dev/udmabuf ]
	prog udmabuf
}

@test "system dma-heap: allocated, filled through its mapping, read back" {
	[ -c /dev/dma_heap/system ]
	prog dma-heap
}

@test "netlink: dumps, argument checks, bind-rx refused with our errnos and extack texts" {
	own_netns
	prog --ns "$NETNS" netlink
	[[ $output == *"ok bind-refused"* ]]
	[[ $output == *"ok bind-unprivileged"* ]]
	[[ $output == *"ok queue-dump-nodev"* ]]
	prog --ns "$NETNS" netlink-layer
	[[ $output == *"ok extack"* ]]
}

@test "bind-vm: bind through the library, queue and pool show it, rebind refused, free unbinds" {
	NSIM_NO_IPV6=1 nsim_pair 4
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	prog --ns "$NSB" bind-vm "$DEVB" 3
	[ "${#lines[@]}" -eq 9 ]
	[[ ${lines[0]} =~ ^bound\ id=([0-9]+)\ ifindex=$IFB\ queue=3$ ]]
	id=${BASH_REMATCH[1]}
	[ "$id" -ge 1 ]
	[[ ${lines[1]} =~ ^queue\ id=3\ type=rx\ ifindex=$IFB\ napi-id=([0-9]+)\ dmabuf=$id$ ]]
	napi=${BASH_REMATCH[1]}
	[ "$napi" -gt 0 ]
	[ "${lines[2]}" = "others-bound=0" ]
	# queue 3's payload pool, with its NAPI, nothing taken yet
	[ "${lines[3]}" = "pool ifindex=$IFB napi-id=$napi inflight=0 inflight-mem=0 dmabuf=$id" ]
	[ "${lines[4]}" = "pools=1" ]
	# net_devmem_bind_dmabuf_to_queue(): the queue has a provider
	[ "${lines[5]}" = "rebind errno=17 reason=rx queue is already bound to a dma-buf" ]
	[ "${lines[6]}" = "still-bound dmabuf=$id" ]
	[ "${lines[7]}" = "unbound dmabuf=0" ]
	[ "${lines[8]}" = "pools-left=0" ]
	# what the kernel shows afterwards, through netdev-nl: nothing bound
	run in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"queue id=3 type=rx ifindex=$IFB "* ]]
	[[ $output != *dmabuf=* ]]
}

@test "bind-vm: refused with header split off, the library passing the kernel's text through" {
	NSIM_NO_IPV6=1 nsim_pair 4
	[ "$(in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB")" = "$DEVB: tcp-data-split off" ]
	# net_devmem_bind_dmabuf_to_queue(): header split must be on
	run "$BIN/in-ns" "$NSB" "$LIBTESTS/bind-vm" "$DEVB" 3
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "bind-vm: bind-rx: Invalid argument: header split (tcp-data-split) is off on the device: turn it on first (devmem_nic_setup() or devmem_nic_header_split(); \"devmemctl setup\"; \"ethtool -G $DEVB tcp-data-split on\")" ]
}

# stream_rx PROG [--own-ring] [-s DMABUF-SIZE] BYTES [SEED]: PROG
# (uring-vm, recv-vm) on queue 3 of B in the background, back once it
# listens; URING_PID, URING_OUT.
stream_rx() {
	local prog=$1 opts=()
	shift
	while [[ $1 == -* ]]; do
		case $1 in
		-s) opts+=("$1" "$2"); shift 2 ;;
		*) opts+=("$1"); shift ;;
		esac
	done
	URING_OUT=$BATS_TEST_TMPDIR/uring.$RANDOM
	# (background processes here close bats' fd 3, or bats waits for them)
	"$BIN/in-ns" "$NSB" "$LIBTESTS/$prog" "${opts[@]}" "$DEVB" 3 "$PORT" "$1" \
		"$URING_OUT.ready" ${2:+"$2"} >"$URING_OUT" 2>&1 3>&- &
	URING_PID=$!
	wait_until 30 test -e "$URING_OUT.ready"
}

# stream PROG [OPTIONS] BYTES: BYTES through PROG (stream_rx); checks that
# all of it arrived, every byte checked, every token back and the pool
# gone, and leaves the counts in BUFFERS, BATCH, LINEAR, DMABUF, FRAGS,
# RECEIVES, MIXED, PLAIN.
stream() {
	local bytes=${!#} id
	stream_rx "$@"
	# a sender that fails has a receiver that failed first: say why
	send "$IP4B" "$bytes" || {
		wait_pid 60 "$URING_PID" || true
		cat "$URING_OUT"
		in_ns "$NSB" ethtool -S "$DEVB" | grep -E "rx3_" || true
		return 1
	}
	bytes=$(numfmt --from=iec "$bytes")
	local rc=0
	wait_pid 60 "$URING_PID" || rc=$?
	cat "$URING_OUT"
	[ "$rc" -eq 0 ]
	mapfile -t lines <"$URING_OUT"
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[0]} =~ ^bound\ id=([0-9]+)\ ifindex=$IFB\ queue=3\ buffers=([0-9]+)$ ]]
	id=${BASH_REMATCH[1]} BUFFERS=${BASH_REMATCH[2]}
	[[ ${lines[1]} =~ ^recycler\ batch=([0-9]+)$ ]]
	BATCH=${BASH_REMATCH[1]}
	[[ ${lines[2]} =~ ^received\ $bytes\ bytes:\ linear\ ([0-9]+),\ dmabuf\ ([0-9]+)\ in\ ([0-9]+)\ frags,\ ([0-9]+)\ receives,\ ([0-9]+)\ mixed,\ ([0-9]+)\ plain$ ]]
	LINEAR=${BASH_REMATCH[1]} DMABUF=${BASH_REMATCH[2]} FRAGS=${BASH_REMATCH[3]}
	RECEIVES=${BASH_REMATCH[4]} MIXED=${BASH_REMATCH[5]} PLAIN=${BASH_REMATCH[6]}
	[[ ${lines[3]} =~ ^tokens\ freed=$FRAGS\ unknown=0\ calls=[1-9][0-9]*$ ]]
	# every buffer came home: the binding's pool is gone with it
	wait_until 30 no_pools_of "$id"
}

# mixed: the counts of a 16 MiB stream whose packets each left 100 payload
# bytes in host memory.
mixed() {
	# every full-sized packet leaves 100 bytes in host memory
	[ "$LINEAR" -ge $(((16 << 20) / 1448 * 100)) ]
	[ "$((LINEAR + DMABUF))" -eq $((16 << 20)) ]
	[ "$MIXED" -ge 1 ]
	[ "$FRAGS" -ge $(((16 << 20) / 4096)) ]
}

hds_payload_100() {
	echo 100 >"$DFSB/rxq/3/hds_payload"
	[ "$(cat "$DFSB/rxq/3/hds_payload")" = 100 ]
}

@test "uring-vm: a devmem flow through io_uring recvmsg into a bound udmabuf, every byte checked, every token back" {
	[ -x "$LIBTESTS/uring-vm" ]
	devmem_setup
	stream uring-vm 32M
	[ "$BUFFERS" -eq 16384 ]
	# all of it in device memory, none in host memory
	[ "$LINEAR" -eq 0 ]
	[ "$DMABUF" -eq $((32 << 20)) ]
	[ "$PLAIN" -eq 0 ]
	[ "$FRAGS" -ge $(((32 << 20) / 4096)) ]
}

# The program's own ring: uring-vm --own-ring receives through
# devmem_urecv_prep()/_complete(), each receive linked to a timeout that
# fails it as a stall.
@test "uring-vm --own-ring: devmem_urecv on the program's ring, host bytes and fragments mixed, every byte in order" {
	devmem_setup
	hds_payload_100
	stream uring-vm --own-ring 16M
	mixed
}

@test "uring-vm: the same flow checked against another pattern fails at its first byte" {
	devmem_setup
	stream_rx uring-vm 1M 2
	run send "$IP4B" 1M
	local rc=0
	wait_pid 60 "$URING_PID" || rc=$?
	cat "$URING_OUT"
	[ "$rc" -eq 1 ]
	grep -q "^uring-vm: dmabuf: byte 0 of the stream is 0x.., expected 0x..$" "$URING_OUT"
}

@test "recv-vm: headers split off exactly, every receive is fragments alone, in order" {
	devmem_setup
	stream recv-vm 16M
	[ "$LINEAR" -eq 0 ]
	[ "$DMABUF" -eq $((16 << 20)) ]
	[ "$MIXED" -eq 0 ]
	[ "$PLAIN" -eq 0 ]
}

@test "recv-vm: 100 payload bytes of every packet in host memory: receives mix both, every byte in order" {
	devmem_setup
	hds_payload_100
	stream recv-vm 16M
	mixed
}

@test "hds_payload: up to the header buffer's 256 bytes; more, or not a number, is EINVAL" {
	NSIM_NO_IPV6=1 nsim_pair 4
	[ "$(cat "$DFSB/rxq/3/hds_payload")" = 0 ]
	run sysfs_write "$DFSB/rxq/3/hds_payload" 257
	[ "$output" = "Invalid argument" ]
	run sysfs_write "$DFSB/rxq/3/hds_payload" x
	[ "$output" = "Invalid argument" ]
	sysfs_write "$DFSB/rxq/3/hds_payload" 256
	[ "$(cat "$DFSB/rxq/3/hds_payload")" = 256 ]
}

# A stream much larger than its dma-buf, with the recycler's defaults
# given the binding's buffer count: it must never stall (recv-vm fails
# after 20 s without data, naming the tokens held back).
# 64 MiB cycle the 2 MiB dma-buf 32 times; on the debug kernel 16 MiB
# (8 times) show the same, at a quarter of the cost.
@test "recv-vm: 64 MiB (16 MiB on the debug kernel) through a 2 MiB dma-buf, default recycler with the binding's buffer count" {
	local mib
	mib=$(on_debug 16 64)
	devmem_setup
	stream recv-vm -s 2M "${mib}M"
	[ "$BUFFERS" -eq 512 ]
	[ "$BATCH" -eq 128 ]
	[ "$DMABUF" -eq $((mib << 20)) ]
}

@test "recv-vm: 64 MiB (16 MiB on the debug kernel) through a dma-buf of one page per entry of the rx ring" {
	local mib ring
	mib=$(on_debug 16 64)
	devmem_setup
	in_ns "$NSB" ethtool -G "$DEVB" rx 256
	ring=$(in_ns "$NSB" ethtool -g "$DEVB" | awk '/^Current/ { c = 1 } c && $1 == "RX:" { print $2; exit }')
	[ "$ring" -eq 256 ]
	stream recv-vm -s $((ring * 4096)) "${mib}M"
	[ "$BUFFERS" -eq "$ring" ]
	[ "$BATCH" -eq 64 ]
	[ "$DMABUF" -eq $((mib << 20)) ]
}

# The io_uring receive with the recycler linked to the socket
# (devmem_uring_set_recycler): a recycler made without the binding's
# buffer count flushes every 64 tokens, and a 64 KiB dma-buf has 16
# buffers, so only the flush before each wait keeps the flow going
# (uring-vm fails after 20 s without a completion).
# (Without the link the flow stalls after 16 buffers: 23 KiB. 4 MiB
# cycle the 16 buffers 180 times; on the debug kernel 1 MiB, 45 times.)
@test "uring-vm: 4 MiB (1 MiB on the debug kernel) through a 64 KiB dma-buf, a recycler that batches 64 tokens linked to the ring: no stall" {
	local mib
	mib=$(on_debug 1 4)
	devmem_setup
	stream uring-vm --unsized -s 64K "${mib}M"
	[ "$BUFFERS" -eq 16 ]
	[ "$BATCH" -eq 64 ]
	[ "$DMABUF" -eq $((mib << 20)) ]
}

# A binding the rx rings can empty stalls its flow with no error anywhere:
# devmem_binding_new_rx_flags() refuses it (the ring has 2048 entries of a
# page: 8 MiB), exactly at the boundary, unless DEVMEM_BIND_UNDERSIZED.
@test "undersized-vm: a dma-buf smaller than the rx ring refused with ENOBUFS and both counts; one buffer more binds; DEVMEM_BIND_UNDERSIZED binds anything" {
	local msg
	devmem_setup
	msg="refused: ENOBUFS: the dma-buf makes 1 buffer of 4096 bytes, fewer than the 2048 its rx rings take (1 queue of 2048 entries): the rings can hold every buffer and leave none for what sockets hold, so the flow stops; give at least 8388608 bytes, or DEVMEM_BIND_UNDERSIZED"
	run "$BIN/in-ns" "$NSB" "$LIBTESTS/undersized-vm" "$DEVB" 3 4K
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "$msg" ]
	run "$BIN/in-ns" "$NSB" "$LIBTESTS/undersized-vm" "$DEVB" 3 4K --undersized
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "bound buffers=1" ]
	in_ns "$NSB" ethtool -G "$DEVB" rx 256
	run "$BIN/in-ns" "$NSB" "$LIBTESTS/undersized-vm" "$DEVB" 3 1020K
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == "refused: ENOBUFS: the dma-buf makes 255 buffers of 4096 bytes, fewer than the 256 its rx rings take (1 queue of 256 entries): "* ]]
	run "$BIN/in-ns" "$NSB" "$LIBTESTS/undersized-vm" "$DEVB" 3 1M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "bound buffers=256" ]
	# nothing stays bound
	[ -z "$(in_ns "$NSB" "$BIN/netdev-nl" queue-get "$IFB" | grep dmabuf=)" ]
}

# stall_is PROG-OPTIONS: stall-vm (PROG-OPTIONS: --uring or none) on a
# 256 KiB binding (64 buffers) keeps every token: once it holds all 64,
# the wait fails with ENOBUFS and the reason, devmem_binding_held() says
# 64 buffers and the tokens on them; the tokens go back (held 0) and the same socket takes the rest of
# 4 MiB, every byte checked, every token back.
stall_is() {
	local id msg tokens rc=0 sent=0
	devmem_setup
	stream_rx stall-vm "$@" -s 256K 4M
	send "$IP4B" 4M || sent=$?
	wait_pid 60 "$URING_PID" || rc=$?
	cat "$URING_OUT"
	[ "$sent" -eq 0 ]
	[ "$rc" -eq 0 ]
	mapfile -t lines <"$URING_OUT"
	[ "${#lines[@]}" -eq 8 ]
	[[ ${lines[0]} =~ ^bound\ id=([0-9]+)\ ifindex=$IFB\ queue=3\ buffers=64$ ]]
	id=${BASH_REMATCH[1]}
	[ "${lines[1]}" = "recycler batch=16" ]
	[[ ${lines[2]} =~ ^stalled\ after\ [1-9][0-9]*\ bytes:\ (.*)$ ]]
	msg=${BASH_REMATCH[1]}
	# a token per frag received; a receive that ends inside a frag
	# (HW-GRO fills whole buffers) gives the rest another token
	[[ ${lines[3]} =~ ^held\ buffers=64\ tokens=([0-9]+)$ ]]
	tokens=${BASH_REMATCH[1]}
	[ "$tokens" -ge 64 ]
	[ "$msg" = "stalled: no data for 300 ms, and the application holds all 64 buffers of binding $id ($tokens tokens not given back): the card has none to receive into; give tokens back, or bind a larger dma-buf" ]
	[ "${lines[4]}" = "gave back $tokens tokens" ]
	[ "${lines[5]}" = "held buffers=0 tokens=0" ]
	[[ ${lines[6]} =~ ^received\ 4194304\ bytes:\ linear\ 0,\ dmabuf\ 4194304\ in\ ([0-9]+)\ frags ]]
	# (stall-vm checks that the recycler freed every frag's token)
	[[ ${lines[7]} =~ ^tokens\ freed=[1-9][0-9]*\ unknown=0\ calls=[1-9][0-9]*$ ]]
	wait_until 30 no_pools_of "$id"
}

@test "stall-vm: devmem_recv() of an application that holds every buffer fails with ENOBUFS and says why; tokens back, the flow completes" {
	stall_is
}

@test "stall-vm --uring: devmem_uring_wait() of an application that holds every buffer fails with ENOBUFS; tokens back, the request in flight completes" {
	stall_is --uring
}

# The sender: send-vm streams through an 8 MiB udmabuf used as a ring of
# 1 MiB chunks, each rewritten only once everything sent from it has been
# reaped; tcpxfer in B checks every byte.
@test "send-vm: 64 MiB (16 MiB on the debug kernel) through an 8 MiB dma-buf ring, every span reaped once, every byte checked" {
	local mib
	mib=$(on_debug 16 64)
	nsim_pair 4
	xfer_start "$NSB" "$PORT" 0 "${mib}M"
	run "$BIN/in-ns" "$NSA" "$LIBTESTS/send-vm" "$DEVA" "$IP4B" "$PORT" "${mib}M"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} =~ ^bound\ id=[0-9]+\ ifindex=$IFA\ buffers=2048$ ]]
	[[ ${lines[1]} =~ ^sent\ $((mib << 20))\ bytes\ in\ [0-9]+\ sends\ of\ $((mib << 8))\ spans,\ reaped\ [0-9]+\ spans\ in\ [0-9]+\ calls$ ]]
	xfer_wait
}
