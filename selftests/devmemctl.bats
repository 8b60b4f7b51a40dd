#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# devmemctl (tools/devmemctl, on libdevmem) on a netdevsim pair: queue,
# pool and dev show as text and as JSON, field by field, against what
# netdev-nl (raw netlink, no libdevmem) reports; setup and teardown checked
# with ethtool and tcp-data-split; a binding held in the background until
# SIGINT, seen by the show commands, a second bind of its queue refused
# with the kernel's extack text; and every failure path: "Error: ..." on
# stderr, nothing on stdout, exit 1 (2 for usage errors, which the host
# suite selftests/host/devmemctl.bats covers one by one).

load lib/vm
load lib/nsim

bats_require_minimum_version 1.5.0

test_setup() {
	NSIM_NO_IPV6=1 nsim_pair 4
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
}
test_teardown() {
	[ -z "${UDMABUF_MODE:-}" ] || chmod "$UDMABUF_MODE" /dev/udmabuf
	nsim_cleanup
}

ctl() { in_ns "$NSB" "$BIN/devmemctl" "$@"; }
# The same as uid 65534 with CAP_NET_ADMIN and nothing else: a service
# user given the capability, not root.
ctl_user() {
	in_ns "$NSB" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all,+net_admin --ambient-caps=-all,+net_admin \
		"$BIN/devmemctl" "$@"
}
nl() { in_ns "$NSB" "$BIN/netdev-nl" "$@"; }

# fails EXIT MESSAGE ARGS...: devmemctl ARGS in B exits EXIT with exactly
# "Error: MESSAGE" on stderr and nothing on stdout.
fails() {
	local rc=$1 want="Error: $2"
	shift 2
	run --separate-stderr ctl "$@"
	if [ "$status" -ne "$rc" ] || [ -n "$output" ] || [ "$stderr" != "$want" ]; then
		echo "devmemctl $*: status $status (want $rc)"
		echo "stdout: $output"
		echo "stderr: $stderr"
		echo "wanted: $want"
		return 1
	fi
}

# jget EXPR: Python EXPR over the JSON document in $output (as d), printed
# as JSON.
jget() {
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(json.dumps(eval(sys.argv[2])))' \
		"$output" "$1"
}

# The JSON of queue/pool show in $output, written as devmemctl's text lines
# would be: the test's own oracle of the mapping between the two forms.
JSON_AS_TEXT='
import json, sys
kind, doc = sys.argv[1], json.loads(sys.argv[2])
assert isinstance(doc, list)
names = {"napi_id": "napi-id", "inflight_mem": "inflight-mem",
         "detach_time": "detach-time", "ifname": "dev"}
order = {"queue": ["ifindex", "ifname", "type", "id", "napi_id", "dmabuf"],
         "pool": ["id", "ifindex", "ifname", "napi_id", "inflight",
                  "inflight_mem", "dmabuf", "detach_time"]}[kind]
for o in doc:
    assert set(o) <= set(order), o
    print(" ".join("%s %s" % (names.get(k, k), o[k]) for k in order if k in o))
'
json_as_text() { python3 -c "$JSON_AS_TEXT" "$1" "$output"; }

# netdev-nl's queue-get / page-pool-get lines of B, as devmemctl's text.
nl_queues() {
	nl queue-get "$IFB" | sed -E "s/^queue id=([0-9]+) type=(rx|tx) ifindex=$IFB/ifindex $IFB dev $DEVB type \\2 id \\1/; s/ ([a-z-]+)=/ \\1 /g"
}
nl_pools() {
	nl page-pool-get | grep " ifindex=$IFB " |
		sed -E "s/^page-pool id=([0-9]+) ifindex=$IFB/id \\1 ifindex $IFB dev $DEVB/; s/ ([a-z-]+)=/ \\1 /g"
}

# hold ARGS...: devmemctl ARGS (a bind) in B in the background; HOLD_PID,
# HOLD_OUT (its output file); returns once it printed its first line.
hold() {
	HOLD_OUT=$BATS_TEST_TMPDIR/hold.$RANDOM
	"$BIN/in-ns" "$NSB" "$BIN/devmemctl" "$@" >"$HOLD_OUT" 2>"$HOLD_OUT.err" &
	HOLD_PID=$!
	wait_until 30 eval 'grep -q . "$HOLD_OUT" || ! kill -0 $HOLD_PID 2>/dev/null'
	cat "$HOLD_OUT" "$HOLD_OUT.err"
	[ -s "$HOLD_OUT" ]
	[ ! -s "$HOLD_OUT.err" ]
}

# unhold SIGNAL: end the holder with SIGNAL; it exits 0, having written
# nothing more.
unhold() {
	local rc=0 before
	before=$(<"$HOLD_OUT")
	kill -"$1" "$HOLD_PID"
	wait "$HOLD_PID" || rc=$?
	[ "$rc" -eq 0 ] || { echo "holder exited $rc: $(cat "$HOLD_OUT.err")"; return 1; }
	[ "$(<"$HOLD_OUT")" = "$before" ]
	[ ! -s "$HOLD_OUT.err" ]
}

bound_lines() { ctl queue show dev "$DEVB" | grep ' dmabuf ' || true; }
no_pools_of() { ! ctl pool show dev "$DEVB" | grep -q " dmabuf $1\\( \\|\$\\)"; }

@test "queue, pool and dev show: text and JSON field by field, as netdev-nl sees them" {
	run --separate-stderr ctl queue show dev "$DEVB"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 8 ]
	for q in 0 1 2 3; do
		[[ ${lines[$q]} =~ ^ifindex\ $IFB\ dev\ $DEVB\ type\ rx\ id\ $q\ napi-id\ [1-9][0-9]*$ ]]
		[[ ${lines[$((q + 4))]} =~ ^ifindex\ $IFB\ dev\ $DEVB\ type\ tx\ id\ $q( napi-id [1-9][0-9]*)?$ ]]
	done
	[ "$output" = "$(nl_queues)" ]
	text=$output
	# abbreviated, by index: the same
	run ctl q s dev "$IFB"
	[ "$output" = "$text" ]
	run ctl queue dev "$DEVB"
	[ "$output" = "$text" ]

	for opt in -j -p; do
		run --separate-stderr ctl "$opt" queue show dev "$DEVB"
		[ "$status" -eq 0 ]
		[ "$(json_as_text queue)" = "$text" ]
	done
	[ "$(jget '[(q["ifindex"], q["ifname"], q["type"], q["id"]) for q in d]')" = \
	  "[[$IFB, \"$DEVB\", \"rx\", 0], [$IFB, \"$DEVB\", \"rx\", 1], [$IFB, \"$DEVB\", \"rx\", 2], [$IFB, \"$DEVB\", \"rx\", 3], [$IFB, \"$DEVB\", \"tx\", 0], [$IFB, \"$DEVB\", \"tx\", 1], [$IFB, \"$DEVB\", \"tx\", 2], [$IFB, \"$DEVB\", \"tx\", 3]]" ]
	[ "$(jget 'any("dmabuf" in q for q in d)')" = false ]
	# every device of B's namespace: lo and B, rx before tx
	run ctl -j queue show
	[ "$(jget 'sorted(set(q["ifname"] for q in d))')" = "[\"$DEVB\", \"lo\"]" ]

	# pools: one per rx queue while up, with the queues' NAPI ids
	run --separate-stderr ctl pool show dev "$DEVB"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 4 ]
	for l in "${lines[@]}"; do
		[[ $l =~ ^id\ [0-9]+\ ifindex\ $IFB\ dev\ $DEVB\ napi-id\ [0-9]+\ inflight\ [0-9]+\ inflight-mem\ [0-9]+$ ]]
	done
	[ "$output" = "$(nl_pools)" ]
	text=$output
	run ctl -p pool show dev "$DEVB"
	[ "$(json_as_text pool)" = "$text" ]
	[ "$(jget 'all(p["ifindex"] == '"$IFB"' and p["ifname"] == "'"$DEVB"'" for p in d)')" = true ]

	# dev show
	run --separate-stderr ctl dev show dev "$DEVB"
	[ "$status" -eq 0 ]
	[ "$output" = "$IFB: $DEVB: rx-queues 4 tx-queues 4" ]
	run ctl -j dev
	[ "$(jget '[x for x in d if x["ifindex"] == '"$IFB"']')" = \
	  "[{\"ifindex\": $IFB, \"ifname\": \"$DEVB\", \"rx_queues\": 4, \"tx_queues\": 4, \"bindings\": []}]" ]
	# down: no queues, no pools, still named
	ip -n "$NSB" link set "$DEVB" down
	run ctl dev show dev "$DEVB"
	[ "$output" = "$IFB: $DEVB: rx-queues 0 tx-queues 0" ]
	run ctl queue show dev "$DEVB"
	[ -z "$output" ]
	run ctl -j queue show dev "$DEVB"
	[ "$output" = "[]" ]
}

@test "JSON: a device name with quotes and backslashes comes back exactly" {
	name='n"s\im{1}'
	ip -n "$NSB" link set "$DEVB" down
	ip -n "$NSB" link set "$DEVB" name "$name"
	ip -n "$NSB" link set "$name" up
	run --separate-stderr ctl -j queue show dev "$name"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jget 'sorted(set(q["ifname"] for q in d))')" = '["n\"s\\im{1}"]' ]
	run ctl -p dev show dev "$IFB"
	[ "$(jget 'd[0]["ifname"]')" = '"n\"s\\im{1}"' ]
	run ctl -j pool show dev "$name"
	[ "$(jget 'sorted(set(p["ifname"] for p in d))')" = '["n\"s\\im{1}"]' ]
	run ctl queue show dev "$name"
	[[ ${lines[0]} == "ifindex $IFB dev $name type rx id 0 "* ]]
}

eth_rss() {
	in_ns "$NSB" ethtool -x "$DEVB" | awk '
		/indirection table/ { on = 1; next }
		/^RSS hash key/ { on = 0 }
		on && /^ +[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' |
		sort -un | tr '\n' ' '
}

@test "setup: header split on, queues out of RSS, the flow steered; teardown puts all back" {
	hds() { in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB"; }
	ntuple() { in_ns "$NSB" ethtool -k "$DEVB" | awk '$1 == "ntuple-filters:" { print $2 }'; }
	[ "$(hds)" = "$DEVB: tcp-data-split off" ]
	[ "$(eth_rss)" = "0 1 2 3 " ]
	rss_before=$(in_ns "$NSB" ethtool -x "$DEVB")
	rules_before=$(in_ns "$NSB" ethtool -n "$DEVB")
	ntuple_before=$(ntuple)
	[ "$ntuple_before" = off ]
	state=$DEVMEM_STATE_DIR/netns-$(stat -L -c %i "/run/netns/$NSB")-ifindex-$IFB

	run --separate-stderr ctl setup dev "$DEVB" queues 2-3 flow tcp4 dst "$IP4B" port 5201
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	[ -z "$output$stderr" ]
	[ -s "$state" ]
	[ "$(hds)" = "$DEVB: tcp-data-split on" ]
	[ "$(eth_rss)" = "0 1 " ]
	[ "$(ntuple)" = on ]
	run in_ns "$NSB" ethtool -n "$DEVB"
	echo "$output"
	[[ $output == *"Total 1 rules"* ]]
	[[ $output == *"Rule Type: TCP over IPv4"* ]]
	[[ $output == *"Dest IP addr: $IP4B mask: 0.0.0.0"* ]]
	[[ $output == *"Dest port: 5201 mask: 0x0"* ]]
	[[ $output == *"Action: Direct to queue 2"* ]]

	# a second setup may not have the first one's queues; another
	# queue is its own, and RSS keeps what neither has
	local owner=("$state".owner.*)
	[ "${#owner[@]}" -eq 1 ]
	fails 1 "queue 2 of $DEVB is already set up (state file ${owner[0]}): run \"devmemctl teardown dev $DEVB\" if no process is using it" \
		setup dev "$DEVB" queues 1-3
	[ "$(eth_rss)" = "0 1 " ]
	ctl setup dev "$DEVB" queues 1
	[ "$(eth_rss)" = "0 " ]
	# the other namespace's device has its own state
	run --separate-stderr in_ns "$NSA" "$BIN/devmemctl" setup dev "$DEVA" queues 3
	[ "$status" -eq 0 ]
	[ -s "$DEVMEM_STATE_DIR/netns-$(stat -L -c %i "/run/netns/$NSA")-ifindex-$IFA" ]

	run --separate-stderr ctl -j teardown dev "$DEVB"
	[ "$status" -eq 0 ]
	[ -z "$output$stderr" ]
	[ ! -e "$state" ]
	[ "$(hds)" = "$DEVB: tcp-data-split off" ]
	[ "$(in_ns "$NSB" ethtool -x "$DEVB")" = "$rss_before" ]
	[ "$(in_ns "$NSB" ethtool -n "$DEVB")" = "$rules_before" ]
	[ "$(ntuple)" = "$ntuple_before" ]
	fails 1 "$DEVB is not set up (no state file $state)" teardown dev "$DEVB"
	# A's set-up was its own
	in_ns "$NSA" "$BIN/devmemctl" teardown dev "$IFA"
	[ -z "$(ls -A "$DEVMEM_STATE_DIR")" ]

	# tcp6 with a source, by index; a flow that cannot be steered fails
	# and leaves nothing behind
	run --separate-stderr ctl setup dev "$IFB" queues 1 flow tcp6 src 2001:db8::1 dst 2001:db8::2 port 443
	echo "$stderr"
	[ "$status" -eq 0 ]
	run in_ns "$NSB" ethtool -n "$DEVB"
	[[ $output == *"Rule Type: TCP over IPv6"* ]]
	[[ $output == *"Action: Direct to queue 1"* ]]
	ctl teardown dev "$IFB"
	[ "$(in_ns "$NSB" ethtool -n "$DEVB")" = "$rules_before" ]
}

@test "setup failures: Error, exit 1, no state left, the device as it was" {
	rss_before=$(in_ns "$NSB" ethtool -x "$DEVB")
	fails 1 "$DEVB has 4 rx queues: no queue 4" setup dev "$DEVB" queues 4
	fails 1 "$DEVB has 4 rx queues: none would be left for RSS" setup dev "$DEVB" queues 0-3
	fails 1 "$DEVB has 4 rx queues: no queue 5" setup dev "$DEVB" queues 3-5 flow tcp4 dst "$IP4B" port 1
	[ -z "$(ls -A "$DEVMEM_STATE_DIR")" ]
	[ "$(in_ns "$NSB" ethtool -x "$DEVB")" = "$rss_before" ]
	[ "$(in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB")" = "$DEVB: tcp-data-split off" ]
	fails 1 "no network device \"$DEVA\"" setup dev "$DEVA" queues 1
	fails 1 "no network device \"$DEVA\"" teardown dev "$DEVA"
	DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/no/such fails 1 "state directory $BATS_TEST_TMPDIR/no/such: No such file or directory" \
		setup dev "$DEVB" queues 1
	# a user with CAP_NET_ADMIN who may not write the state directory
	# (root's, mode 0700, as /run/devmem is): the reason names the
	# directory, root and DEVMEM_STATE_DIR, not a temporary file
	local dir=/run/devmemctl-test.$$
	mkdir -m 700 "$dir"
	DEVMEM_STATE_DIR=$dir run --separate-stderr ctl_user setup dev "$DEVB" queues 1
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: state directory $dir: Permission denied: set-up records what it changes in $dir; run it as root, or set DEVMEM_STATE_DIR to a directory this user can write" ]
	[ -z "$(ls -A "$dir")" ]
	rmdir "$dir"
	[ "$(in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB")" = "$DEVB: tcp-data-split off" ]
}

@test "bind: prints the id, holds until SIGINT; shows see it; a second bind gets the kernel's extack" {
	ctl setup dev "$DEVB" queues 2-3
	hold bind dev "$DEVB" queues 2-3 dmabuf udmabuf 64M
	[[ $(<"$HOLD_OUT") =~ ^bound\ dmabuf\ id\ ([0-9]+)\ to\ dev\ $DEVB\ queues\ 2-3$ ]]
	id=${BASH_REMATCH[1]}
	[ "$id" -ge 1 ]

	# queue show: rx 2 and 3 bound, as netdev-nl sees them
	run ctl queue show dev "$DEVB"
	echo "$output"
	[ "$output" = "$(nl_queues)" ]
	[[ ${lines[0]} != *dmabuf* ]]
	[[ ${lines[1]} != *dmabuf* ]]
	[[ ${lines[2]} =~ ^ifindex\ $IFB\ dev\ $DEVB\ type\ rx\ id\ 2\ napi-id\ ([0-9]+)\ dmabuf\ $id$ ]]
	napi2=${BASH_REMATCH[1]}
	[[ ${lines[3]} =~ ^ifindex\ $IFB\ dev\ $DEVB\ type\ rx\ id\ 3\ napi-id\ ([0-9]+)\ dmabuf\ $id$ ]]
	napi3=${BASH_REMATCH[1]}
	text=$output
	run ctl -j queue show dev "$DEVB"
	[ "$(json_as_text queue)" = "$text" ]
	[ "$(jget '[(q["id"], q.get("dmabuf")) for q in d if q["type"] == "rx"]')" = "[[0, null], [1, null], [2, $id], [3, $id]]" ]

	# pool show: queues 2 and 3 take their payload buffers from it
	run ctl pool show dev "$DEVB"
	echo "$output"
	[ "$output" = "$(nl_pools)" ]
	run grep " dmabuf $id\$" <<<"$output"
	[ "${#lines[@]}" -eq 2 ]
	[[ $output == *" napi-id $napi2 inflight 0 inflight-mem 0 dmabuf $id"* ]]
	[[ $output == *" napi-id $napi3 inflight 0 inflight-mem 0 dmabuf $id"* ]]
	run ctl pool show dev "$DEVB"
	text=$output
	run ctl -j pool show dev "$DEVB"
	[ "$(json_as_text pool)" = "$text" ]
	[ "$(jget 'sorted(p["napi_id"] for p in d if p.get("dmabuf") == '"$id"')')" = "$(python3 -c "print(sorted([$napi2, $napi3]))")" ]

	# dev show: the binding with its queues
	run ctl dev show dev "$DEVB"
	[ "$output" = "$IFB: $DEVB: rx-queues 4 tx-queues 4"$'\n'"    dmabuf $id queues 2-3" ]
	run ctl -j dev show dev "$DEVB"
	[ "$(jget 'd[0]["bindings"]')" = "[{\"dmabuf\": $id, \"queues\": [2, 3]}]" ]

	# the kernel refuses a queue that is bound: its text, exactly
	fails 1 "rx queue is already bound to a dma-buf" bind dev "$DEVB" queues 3 dmabuf udmabuf 1M
	fails 1 "rx queue is already bound to a dma-buf" bind dev "$DEVB" queues 1-2 dmabuf heap 1M
	[ "$(bound_lines | wc -l)" -eq 2 ]

	# SIGINT releases it (a shell's background job starts with SIGINT
	# ignored: devmemctl catches it all the same)
	unhold INT
	[ -z "$(bound_lines)" ]
	wait_until 20 no_pools_of "$id"
	run ctl dev show dev "$DEVB"
	[ "$output" = "$IFB: $DEVB: rx-queues 4 tx-queues 4" ]

	# JSON, from the system heap, one queue; SIGTERM
	hold -j bind dev "$IFB" queues 3 dmabuf heap 1M
	run cat "$HOLD_OUT"
	id2=$(jget 'd["dmabuf"]')
	[ "$id2" -gt "$id" ]
	[ "$(jget '[d[k] for k in ("ifindex", "ifname", "queues", "source", "size")]')" = "[$IFB, \"$DEVB\", [3], \"heap\", 1048576]" ]
	[ "$(bound_lines)" = "$(nl_queues | grep " dmabuf $id2\$")" ]
	unhold TERM
	[ -z "$(bound_lines)" ]
	# -p: indented; SIGHUP
	hold -p bind dev "$DEVB" queues 2 dmabuf udmabuf 4K
	run cat "$HOLD_OUT"
	[ "${lines[0]}" = "{" ]
	[[ ${lines[1]} =~ ^\ {4}\"dmabuf\":\ [0-9]+,$ ]]
	[ "$(jget 'd["queues"], d["source"], d["size"]')" = '[[2], "udmabuf", 4096]' ]
	unhold HUP
	[ -z "$(bound_lines)" ]

	# an inherited dma-buf: netdev-nl binds a udmabuf to queue 1 and runs
	# devmemctl with its fd, which binds the same buffer to queue 2;
	# netdev-nl passes SIGINT on and exits with devmemctl's status
	out=$BATS_TEST_TMPDIR/fd.out
	"$BIN/in-ns" "$NSB" "$BIN/netdev-nl" bind-rx "$IFB" 1 udmabuf:1M --run \
		bash -c 'exec "$0" bind dev "$1" queues 2 dmabuf fd "$DEVMEM_DMABUF_FD"' \
		"$BIN/devmemctl" "$DEVB" >"$out" 2>&1 &
	pid=$!
	wait_until 30 grep -q '^bound ' "$out"
	cat "$out"
	[[ $(sed -n 1p "$out") =~ ^bind-rx\ id=([0-9]+)$ ]]
	id1=${BASH_REMATCH[1]}
	[[ $(sed -n 2p "$out") =~ ^bound\ dmabuf\ id\ ([0-9]+)\ to\ dev\ $DEVB\ queues\ 2$ ]]
	id2=${BASH_REMATCH[1]}
	run bound_lines
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "ifindex $IFB dev $DEVB type rx id 1 "*" dmabuf $id1" ]]
	[[ ${lines[1]} == "ifindex $IFB dev $DEVB type rx id 2 "*" dmabuf $id2" ]]
	kill -INT "$pid"
	wait "$pid"
	[ -z "$(bound_lines)" ]
	ctl teardown dev "$DEVB"
}

@test "bind failures: each prints Error: with the kernel's or the library's reason, exit 1" {
	# header split off: the kernel's reason, and how to turn it on
	fails 1 "header split (tcp-data-split) is off on the device: turn it on first (devmem_nic_setup() or devmem_nic_header_split(); \"devmemctl setup\"; \"ethtool -G $DEVB tcp-data-split on\")" \
		bind dev "$DEVB" queues 3 dmabuf udmabuf 1M
	# /dev/udmabuf that this user may not open: its mode, not the kernel
	UDMABUF_MODE=$(stat -c %a /dev/udmabuf)
	chmod 600 /dev/udmabuf
	run --separate-stderr ctl_user bind dev "$DEVB" queues 3 dmabuf udmabuf 1M
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: /dev/udmabuf (this user may not open it: see its owner and mode): Permission denied" ]
	in_ns "$NSB" "$BIN/tcp-data-split" "$DEVB" on
	fails 1 "rx queue id is out of range" bind dev "$DEVB" queues 4 dmabuf udmabuf 1M
	fails 1 "rx queue id is out of range" bind dev "$DEVB" queues 2-4 dmabuf udmabuf 1M
	fails 1 "no network device \"$DEVA\"" bind dev "$DEVA" queues 1 dmabuf udmabuf 1M
	fails 1 "no network device \"99999\"" bind dev 99999 queues 1 dmabuf udmabuf 1M
	# an fd that is not a dma-buf: the kernel says so
	head -c 8192 /dev/zero >"$BATS_TEST_TMPDIR/plain"
	run --separate-stderr in_ns "$NSB" "$BIN/devmemctl" bind dev "$DEVB" queues 1 dmabuf fd 7 7<"$BATS_TEST_TMPDIR/plain"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "Error: fd is not a dma-buf" ]
	# an fd that is not open
	run --separate-stderr ctl bind dev "$DEVB" queues 1 dmabuf fd 77
	[ "$status" -eq 1 ]
	[[ $stderr == "Error: "*"77"*"Bad file descriptor" ]]
	# no privilege
	run --separate-stderr in_ns "$NSB" setpriv --bounding-set -net_admin --inh-caps -net_admin \
		"$BIN/devmemctl" bind dev "$DEVB" queues 1 dmabuf udmabuf 1M
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: Operation not permitted" ]
	# a device that cannot restart queues
	ip -n "$NSB" link add vb type veth peer name va
	fails 1 "device cannot restart rx queues, which binding needs" bind dev vb queues 0 dmabuf udmabuf 1M
	[ -z "$(bound_lines)" ]
	# and the shows' own failures
	fails 1 "no network device \"$DEVA\"" queue show dev "$DEVA"
	fails 1 "no network device \"$DEVA\"" pool show dev "$DEVA"
	fails 1 "no network device \"$DEVA\"" dev show dev "$DEVA"
	# a usage error in the VM too: exit 2, no kernel call
	run --separate-stderr ctl bind dev "$DEVB" queues 1 dmabuf udmabuf 1000
	[ "$status" -eq 2 ]
	[[ $stderr == "Error: size '1000' is not a multiple of the page size (4096)"* ]]
}

@test "bind tx: prints the id and holds until SIGINT; JSON; a device that cannot send from device memory gets the kernel's text" {
	hold bind tx dev "$DEVB" dmabuf udmabuf 1M
	[[ $(<"$HOLD_OUT") =~ ^bound\ dmabuf\ id\ ([0-9]+)\ to\ dev\ $DEVB\ for\ tx$ ]]
	[ "${BASH_REMATCH[1]}" -ge 1 ]
	unhold INT
	hold -j bind tx dev "$DEVB" dmabuf udmabuf 1M
	[ "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["ifname"], d["direction"], d["ifindex"], d["dmabuf"] >= 1)' "$HOLD_OUT")" = "$DEVB tx $IFB True" ]
	unhold TERM
	run "$BIN/in-ns" "$NSB" "$BIN/devmemctl" bind tx dev lo dmabuf udmabuf 1M
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Driver does not support netmem TX" ]
}
