# SPDX-License-Identifier: GPL-2.0
#
# Teardown in every order, for any NIC pair: a receiver (devmem-hold)
# holds tokens of a binding while the test closes its socket (sock),
# closes the binding's netlink socket (nl), gives the tokens back
# (tokens), takes the link down (down), changes the channel count (chan),
# deletes the device (del) and deletes the netns (netns), one at a time,
# in the orders that selftests/progs/devmem-hold/orders.awk generates.
# After each event the dma-buf must be exactly as the lifetime rules say
# (docs/design.md, sections 3 and 4): attached to the device and held by
# the binding while the owner or a token is alive, and released (no
# attachment, no reference but devmem-hold's fd) once the owner is gone
# and the last token is back; the binding's page pool must be listed by
# page-pool-get while the queue is bound and open or a token is out, and
# not after; at the end the dma-buf is freed with devmem-hold's fd, and
# the kernel reported nothing. A failure names the order and the step.
#
# devmem-hold owns the binding (its netlink socket, created in nsb) and
# the receiving socket, and lives in init_net: once nsb has no name, only
# those two sockets keep it alive.
#
# A suite loads lib/vm, lib/nsim and this, may set TD_DMABUF (the size
# of devmem-hold's dma-buf, 4M by default), and defines the NIC's part:
#
#   td_setup ORDER  the pair up, header split on B, the flow to $PORT on
#                   queue TD_QUEUE of B, the test's fds on the namespaces
#                   open (nsim_open_nsfds); sets TD_DEVICE (the name of
#                   B's bus device, as the dma-buf's attachment shows it)
#   td_bound        after the bind (the NIC may reset on it)
#   td_held ORDER   after the tokens are held, before the first event
#   td_chan         (only with chan among the events) ethtool's channel
#                   change on B, in $output and $status
#   td_del          delete B
#   td_home         true once B came home to init_net; sets DEVB
#   td_cleanup      everything back as before td_setup
#
# and runs td_orders EVENTS in a test: every order of EVENTS (a subset of
# the seven, in orders.awk's order) that TEARDOWN_ORDERS picks: pairs
# (every two events that can follow each other do so in some order; the
# default), triples, all, or pairs:N / triples:N (see orders.awk).

BYTES=256K
BUFINFO=/sys/kernel/debug/dma_buf/bufinfo

# td_teardown: the test_teardown of a suite of orders.
td_teardown() {
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${ORDER:-}" ]; then
		echo "FAILED: order '$ORDER', step '$STEP'"
	fi
	if [ -n "${SENDER:-}" ]; then
		kill -9 "$SENDER" 2>/dev/null || true
		wait "$SENDER" 2>/dev/null || true
	fi
	td_cleanup
}

# dmabuf_state INO: the dma-buf of inode INO as bufinfo shows it, in
# DB_COUNT (its file's reference count), DB_ATTACHED (how many devices are
# attached) and DB_DEVS (their names); DB_COUNT is 0 when it is not listed.
# One awk, not a loop in bash: under bats every bash command runs its
# DEBUG trap, and this runs in every poll of the test's many waits.
dmabuf_state() {
	IFS='|' read -r DB_COUNT DB_ATTACHED DB_DEVS < <(awk -F '\t' -v ino="$1" '
		/^[0-9]+\t/ { cur = $6 + 0 == ino; if (cur) n = $4 + 0; next }
		cur && /^Total [0-9]+ devices attached$/ { split($0, w, " "); att = w[2]; cur = 0; next }
		cur && /^\t/ && $0 != "\tAttached Devices:" { devs = devs (devs == "" ? "" : " ") $2 }
		END { print n + 0 "|" att "|" devs }' "$BUFINFO")
}

# The binding holds the dma-buf: one reference besides the holder's fd,
# attached to B's bus device and nothing else.
dmabuf_held() {
	dmabuf_state "$INO"
	[ "$DB_COUNT" -eq 2 ] && [ "$DB_ATTACHED" = 1 ] &&
		[ "$DB_DEVS" = "$TD_DEVICE" ]
}
# Released: only the holder's fd, no attachment.
dmabuf_released() {
	dmabuf_state "$INO"
	[ "$DB_COUNT" -eq 1 ] && [ "$DB_ATTACHED" = 0 ] && [ -z "$DB_DEVS" ]
}
dmabuf_gone() {
	dmabuf_state "$INO"
	[ "$DB_COUNT" -eq 0 ]
}
dmabuf_show() { echo "dma-buf ino $INO: count $DB_COUNT, attached ${DB_ATTACHED:-?} (${DB_DEVS})"; }

# hold CMD: send CMD to devmem-hold and read its answer into HOLD_LINE.
hold() {
	[ -z "${1:-}" ] || echo "$1" >&"$HOLD_W"
	HOLD_LINE=
	read -r -t 120 HOLD_LINE <&"$HOLD_R" || true
	echo "devmem-hold: $HOLD_LINE"
	[ -n "$HOLD_LINE" ] || cat "$BATS_TEST_TMPDIR/hold.err"
}

# Where B is, for ethtool: in namespace nsb while nsb has a name,
# nothing once B came home to init_net.
on_b() {
	if [ "$HOME_NET" = 1 ]; then "$@"; else in_ns "$NSB" "$@"; fi
}

# pool_state NS: the page pools of the binding that NS lists (NS empty:
# init_net), in PP_COUNT, and the in-flight count of the first in
# PP_INFLIGHT ("" when none); their lines in PP_LINES.
pool_state() {
	local out
	if [ -n "$1" ]; then
		out=$(in_ns "$1" "$BIN/netdev-nl" page-pool-get)
	else
		out=$("$BIN/netdev-nl" page-pool-get)
	fi
	IFS='|' read -r PP_COUNT PP_INFLIGHT PP_LINES < <(awk -v id="$BIND_ID" '
		$NF == "dmabuf=" id {
			lines = lines (n++ ? "; " : "") $0
			for (i = 1; i <= NF && inflight == ""; i++)
				if ($i ~ /^inflight=/) inflight = substr($i, 10)
		}
		END { print n + 0 "|" inflight "|" lines }' <<<"$out")
}
# pools_are NS COUNT [OP N]: NS lists COUNT pools of the binding (and
# the first has in flight OP N buffers, OP -eq or -ge).
pools_are() {
	pool_state "$1"
	[ "$PP_COUNT" -eq "$2" ] || return 1
	[ $# -eq 2 ] || [ "$PP_INFLIGHT" "$3" "$4" ]
}
pools_show() { echo "pools of binding $BIND_ID (want $*): ${PP_LINES:-none}"; }

# order_setup ORDER: the NIC's set-up; devmem-hold bound to queue
# TD_QUEUE of B holding the tokens of $BYTES; the NIC's td_held. Neither
# devmem-hold nor the sender keeps the test's fds on the namespaces: once
# nsb has no name, only devmem-hold's sockets may keep it alive.
order_setup() {
	STEP="set-up"
	td_setup "$1"
	HOME_NET=0
	coproc HOLD { exec "$BIN/devmem-hold" -N "/run/netns/$NSB" -i "$IFB" \
		-q "$TD_QUEUE" -s "${TD_DMABUF:-4M}" -p "$PORT" -n "$BYTES" \
		2>"$BATS_TEST_TMPDIR/hold.err" {NSFDA}<&- {NSFDB}<&-; }
	HOLDER=$HOLD_PID HOLD_R=${HOLD[0]} HOLD_W=${HOLD[1]}
	hold
	[[ $HOLD_LINE =~ ^bound\ id=([0-9]+)\ ino=([0-9]+)$ ]]
	BIND_ID=${BASH_REMATCH[1]} INO=${BASH_REMATCH[2]}
	td_bound
	"$BIN/in-ns" "$NSA" "$BIN/tcpxfer" connect -q -a "$IP4B" -p "$PORT" \
		-s "$BYTES" -t 300 >/dev/null 2>&1 \
		{NSFDA}<&- {NSFDB}<&- {HOLD_R}<&- {HOLD_W}>&- &
	SENDER=$!
	hold
	[[ $HOLD_LINE =~ ^held\ ([0-9]+)\ tokens\ for\ ([0-9]+)\ bytes:\ linear\ ([0-9]+),\ dmabuf\ ([0-9]+)$ ]]
	TOKENS=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" -eq $((256 << 10)) ]
	[ "${BASH_REMATCH[4]}" -gt 0 ]
	[ "$TOKENS" -gt 0 ]
	# One pool draws from the binding: the bound queue's payload pool. It
	# counts every buffer it took from the binding as in flight, those
	# back in its ring too (a segment TCP dropped, say): at least the
	# tokens.
	STEP="set-up: one pool, $TOKENS buffers in flight"
	pool_state "$NSB"
	pools_show 1 -ge "$TOKENS"
	[ "$PP_COUNT" -eq 1 ]
	[ "$PP_INFLIGHT" -ge "$TOKENS" ]
	[[ $PP_LINES == *" inflight=$PP_INFLIGHT inflight-mem=$((PP_INFLIGHT * 4096)) "* ]]
	STEP="set-up: dma-buf held by the binding"
	dmabuf_state "$INO"
	dmabuf_show
	[ "$DB_COUNT" -eq 2 ]
	[ "$DB_ATTACHED" = 1 ]
	[ "$DB_DEVS" = "$TD_DEVICE" ]
	td_held "$1"
}

# event E: apply E and check the dma-buf and the pools against the model
# (NL, SOCK, TOKENS_OUT, UP, DEV, NAMED, HOME_NET).
event() {
	local e=$1 want
	STEP="$e"
	echo "event $e"
	case $e in
	sock)
		hold sock
		[ "$HOLD_LINE" = "sock closed" ]
		SOCK=0 TOKENS_OUT=0 ;;
	nl)
		hold nl
		[ "$HOLD_LINE" = "nl closed" ]
		NL=0 ;;
	tokens)
		hold tokens
		[ "$HOLD_LINE" = "returned $TOKENS tokens" ]
		TOKENS_OUT=0 ;;
	down)
		ip -n "$NSB" link set "$DEVB" down
		UP=0 ;;
	chan)
		td_chan
		echo "$output"
		if [ "$NL" = 1 ] && [ "$DEV" = 1 ] && [ "$HOME_NET" = 0 ]; then
			# still bound: the bound queue stays
			[ "$status" -eq 1 ]
			[[ $output == *"channel count too low for rx queues bound to device memory"* ]]
		else
			[ "$status" -eq 0 ]
		fi ;;
	del)
		td_del
		DEV=0 ;;
	netns)
		ip netns del "$NSB"
		exec {NSFDB}<&-
		NAMED=0 ;;
	esac
	# nsb dies with the last of its name and the two sockets; B, if it
	# is still there, comes home to init_net (down, unbound).
	if [ "$NAMED" = 0 ] && [ "$NL" = 0 ] && [ "$SOCK" = 0 ] &&
		[ "$DEV" = 1 ] && [ "$HOME_NET" = 0 ]; then
		STEP="$e: B comes home to init_net"
		wait_until 60 td_home
		HOME_NET=1
	fi
	# The binding holds the dma-buf while its owner or a buffer of its
	# pool is out: one reference besides devmem-hold's fd, attached to
	# B's bus device and nothing else. Then only devmem-hold's fd.
	if [ "$NL" = 1 ] || [ "$TOKENS_OUT" = 1 ]; then
		STEP="$e: dma-buf held by the binding"
		wait_until 60 dmabuf_held || { dmabuf_show; return 1; }
	else
		STEP="$e: dma-buf released"
		wait_until 60 dmabuf_released || { dmabuf_show; return 1; }
	fi
	# The binding's one pool, the bound queue's, lives while the queue is
	# bound and open (in flight: at least the tokens while they are out),
	# and after that while a token names one of its buffers: destroyed,
	# it emptied its ring, and the tokens are all it has in flight.
	if [ "$NL" = 1 ] && [ "$UP" = 1 ] && [ "$DEV" = 1 ] && [ "$HOME_NET" = 0 ]; then
		want=1
		[ "$TOKENS_OUT" = 0 ] || want="1 -ge $TOKENS"
	elif [ "$TOKENS_OUT" = 1 ]; then
		want="1 -eq $TOKENS"
	else
		want=0
	fi
	# Where the test can see it: in nsb while nsb has a name (the pool
	# moves to nsb's loopback with a deleted B), else in init_net, where
	# B comes home without it.
	if [ "$NAMED" = 1 ]; then
		STEP="$e: pools of the binding in nsb are $want"
		wait_until 60 pools_are "$NSB" $want || { pools_show $want; return 1; }
	else
		STEP="$e: no pool of the binding in init_net"
		wait_until 60 pools_are "" 0 || { pools_show 0; return 1; }
	fi
}

# play ORDER-LINE: one order from orders.awk, set-up to check.
play() {
	local line=$1 e
	ORDER=${line%% #*}
	echo "=== order: $line"
	kmsg_mark
	order_setup "$ORDER"
	NL=1 SOCK=1 TOKENS_OUT=1 UP=1 DEV=1 NAMED=1
	for e in $ORDER; do
		event "$e"
	done
	STEP="end: devmem-hold exits"
	kill -9 "$SENDER" 2>/dev/null || true
	wait "$SENDER" 2>/dev/null || true
	SENDER=
	# devmem-hold exits, closing the dma-buf's fd: the udmabuf goes.
	exec {HOLD_W}>&-
	wait "$HOLDER"
	STEP="end: dma-buf freed"
	wait_until 30 dmabuf_gone || { dmabuf_show; return 1; }
	STEP="end: no pool of the binding in init_net"
	pool_state ""
	pools_show 0
	[ "$PP_COUNT" -eq 0 ]
	STEP="end: clean-up"
	td_cleanup
	STEP="end: kernel log"
	kmsg_check
}

# td_orders EVENTS: play every order of EVENTS that TEARDOWN_ORDERS
# picks, then scan for leaks.
td_orders() {
	local mode line n=0
	mode=${TEARDOWN_ORDERS:-pairs}
	mapfile -t ORDERS < <(awk -v mode="$mode" -v events="$1" \
		-f "$BATS_TEST_DIRNAME/progs/devmem-hold/orders.awk")
	[ "${#ORDERS[@]}" -gt 0 ]
	for line in "${ORDERS[@]}"; do
		play "$line"
		n=$((n + 1))
	done
	ORDER=
	echo "$n orders ($mode)"
	[ "$n" -eq "${#ORDERS[@]}" ]
	nsim_leak_check
}
