#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tools/devmemctl on the host: the command line (every usage error, its
# exit status and exact message; help; abbreviations; sizes, ranges and
# flows as parsed, through DEVMEMCTL_PARSE_ONLY=1, which prints the parsed
# command as JSON and does nothing), the JSON writer's escaping, failures
# that need no kernel support, and the show commands against the host's
# own kernel where it has the netdev family. Nothing here changes the
# host: setup is only driven into refusals that come before any change.
# selftests/devmemctl.bats has the rest, in the VM.

bats_require_minimum_version 1.5.0

setup_file() {
	# The Makefile's pattern rule names its targets by absolute path, and
	# make -C resolves the repository with getcwd(): pass the same path.
	local repo
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
	make -s -C "$repo" "$repo/build/bin/devmemctl" >&2
}

setup() {
	CTL=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)/build/bin/devmemctl
	export DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	JSONQ_PID=
}

teardown() {
	[ -z "$JSONQ_PID" ] || { kill "$JSONQ_PID"; wait "$JSONQ_PID" || true; }
}

HINT="Try 'devmemctl help' for the syntax."

# usage_error MESSAGE ARGS...: devmemctl ARGS exits 2 with "Error: MESSAGE"
# and the hint on stderr, nothing on stdout.
usage_error() {
	local want=$1
	shift
	run --separate-stderr "$CTL" "$@"
	if [ "$status" -ne 2 ] || [ -n "$output" ] ||
	   [ "$stderr" != "Error: $want"$'\n'"$HINT" ]; then
		echo "devmemctl $*: status $status"
		echo "stdout: $output"
		echo "stderr: $stderr"
		echo "wanted: Error: $want"
		return 1
	fi
}

# parsed ARGS...: the parsed command's JSON in $output (must exit 0).
parsed() {
	jsonq_start
	run --separate-stderr env DEVMEMCTL_PARSE_ONLY=1 "$CTL" "$@"
	[ "$status" -eq 0 ] || { echo "devmemctl $*: $status $stderr"; return 1; }
	[ -z "$stderr" ]
}

# jget EXPR: evaluate Python EXPR over the JSON document in $output (as
# d); prints the result's JSON. One Python per test answers them all
# (its start costs half a second, and a test asks dozens of times):
# document and expression go to it NUL-terminated, the answer comes
# back so.
jget() {
	printf '%s\0%s\0' "$output" "$1" >&"${JSONQ[1]}"
	IFS= read -r -d '' JGET <&"${JSONQ[0]}"
	echo "$JGET"
}
# jsonq_start: start jget's Python, once per test, from the test's own
# shell (jget runs in command substitutions).
jsonq_start() {
	[ -z "$JSONQ_PID" ] || return 0
	coproc JSONQ { exec python3 -c '
import json, sys
f = sys.stdin.buffer
while True:
	doc = b"".join(iter(lambda: f.read(1), b"\0"))
	if not doc:
		break
	expr = b"".join(iter(lambda: f.read(1), b"\0"))
	try:
		out = json.dumps(eval(expr, {"d": json.loads(doc)}))
	except Exception as e:
		out = "jget: %r" % e
	sys.stdout.write(out + "\0")
	sys.stdout.flush()
' 3>&-; }
}

@test "usage errors: options, objects, verbs" {
	usage_error "no command given"
	usage_error "no command given" -j
	usage_error "no command given" -j --
	usage_error "unknown option '-x'" -x
	usage_error "unknown option '-x'" -jx dev
	usage_error "unknown option '--frob'" --frob
	usage_error "unknown option '---'" --- dev
	usage_error "unknown object 'frob'" frob
	usage_error "unknown object 'devs'" devs
	usage_error "unknown object '-'" -
	usage_error "unknown object 'frob'" help frob
	usage_error "unexpected argument 'dev' for help" help queue dev
	usage_error "unknown verb 'set' for dev (show, help)" dev set
	usage_error "unknown verb 'shows' for queue (show, help)" queue shows
	usage_error "unknown verb 'x' for pool (show, help)" pool x
}

@test "usage errors: show" {
	usage_error "dev needs a device name or index" dev show dev
	usage_error "dev needs a device name or index" queue dev
	usage_error "dev given twice" pool show dev lo dev lo
	usage_error "'' is not a device name or index" queue show dev ''
	usage_error "'0123456789abcdef' is not a device name or index" queue show dev 0123456789abcdef
	usage_error "unexpected argument 'lo' for queue" queue show lo
	usage_error "unexpected argument 'queues' for dev" dev show queues 1
	usage_error "unexpected argument 'dmabuf' for pool" pool show dmabuf fd 3
}

@test "usage errors: setup and teardown" {
	usage_error "setup needs dev IF" setup
	usage_error "setup needs dev IF" setup queues 1
	usage_error "setup needs queues A[-B]" setup dev lo
	usage_error "queues needs A[-B]" setup dev lo queues
	usage_error "queues given twice" setup dev lo queues 1 queues 2
	usage_error "bad queue range 'x' (A or A-B)" setup dev lo queues x
	usage_error "bad queue range '-1' (A or A-B)" setup dev lo queues -1
	usage_error "bad queue range '1-' (A or A-B)" setup dev lo queues 1-
	usage_error "bad queue range '1-2-3' (A or A-B)" setup dev lo queues 1-2-3
	usage_error "bad queue range '+1' (A or A-B)" setup dev lo queues +1
	usage_error "bad queue range '0x1' (A or A-B)" setup dev lo queues 0x1
	usage_error "bad queue range '4294967296' (A or A-B)" setup dev lo queues 4294967296
	usage_error "bad queue range '3-2' (A above B)" setup dev lo queues 3-2
	usage_error "queue range '0-1024' has more than 1024 queues" setup dev lo queues 0-1024
	usage_error "flow needs tcp4 or tcp6" setup dev lo queues 1 flow
	usage_error "flow must be tcp4 or tcp6, not 'udp4'" setup dev lo queues 1 flow udp4
	usage_error "flow given twice" setup dev lo queues 1 flow tcp4 flow tcp4
	usage_error "dst belongs after flow tcp4|tcp6" setup dev lo queues 1 dst 192.0.2.1
	usage_error "src belongs after flow tcp4|tcp6" setup dev lo queues 1 src 192.0.2.1
	usage_error "port belongs after flow tcp4|tcp6" setup dev lo queues 1 port 80
	usage_error "flow needs dst IP" setup dev lo queues 1 flow tcp4 port 80
	usage_error "flow needs port PORT" setup dev lo queues 1 flow tcp4 dst 192.0.2.1
	usage_error "dst needs an address" setup dev lo queues 1 flow tcp4 dst
	usage_error "port needs a port number" setup dev lo queues 1 flow tcp4 dst 192.0.2.1 port
	usage_error "dst given twice" setup dev lo queues 1 flow tcp4 dst 192.0.2.1 dst 192.0.2.1 port 1
	usage_error "dst '2001:db8::1' is not an IPv4 address (flow tcp4)" \
		setup dev lo queues 1 flow tcp4 dst 2001:db8::1 port 80
	usage_error "dst '192.0.2.1' is not an IPv6 address (flow tcp6)" \
		setup dev lo queues 1 flow tcp6 dst 192.0.2.1 port 80
	usage_error "src '2001:db8::1' is not an IPv4 address (flow tcp4)" \
		setup dev lo queues 1 flow tcp4 src 2001:db8::1 dst 192.0.2.1 port 80
	usage_error "dst '192.0.2.256' is not an IPv4 address (flow tcp4)" \
		setup dev lo queues 1 flow tcp4 dst 192.0.2.256 port 80
	usage_error "bad port '0' (1-65535)" setup dev lo queues 1 flow tcp4 dst 192.0.2.1 port 0
	usage_error "bad port '65536' (1-65535)" setup dev lo queues 1 flow tcp4 dst 192.0.2.1 port 65536
	usage_error "bad port 'http' (1-65535)" setup dev lo queues 1 flow tcp4 dst 192.0.2.1 port http
	usage_error "unexpected argument 'dmabuf' for setup" setup dev lo queues 1 dmabuf fd 3
	usage_error "unexpected argument 'on' for setup" setup dev lo queues 1 on
	usage_error "teardown needs dev IF" teardown
	usage_error "unexpected argument 'queues' for teardown" teardown dev lo queues 1
	usage_error "unexpected argument 'flow' for teardown" teardown dev lo flow tcp4
}

@test "usage errors: bind" {
	usage_error "bind needs dev IF" bind
	usage_error "bind needs dev IF" bind queues 1 dmabuf udmabuf 4K
	usage_error "bind needs queues A[-B]" bind dev lo dmabuf udmabuf 4K
	usage_error "bind needs dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}" bind dev lo queues 1
	usage_error "dmabuf needs udmabuf SIZE, udmabuf-huge SIZE, heap SIZE or fd N" bind dev lo queues 1 dmabuf
	usage_error "dmabuf must be udmabuf, udmabuf-huge, heap or fd, not 'cuda'" bind dev lo queues 1 dmabuf cuda 4K
	usage_error "dmabuf udmabuf needs a SIZE" bind dev lo queues 1 dmabuf udmabuf
	usage_error "dmabuf heap needs a SIZE" bind dev lo queues 1 dmabuf heap
	usage_error "dmabuf fd needs a file descriptor" bind dev lo queues 1 dmabuf fd
	usage_error "dmabuf given twice" bind dev lo queues 1 dmabuf fd 3 dmabuf fd 3
	usage_error "bad size '0' (bytes, or with a K, M or G suffix)" bind dev lo queues 1 dmabuf udmabuf 0
	usage_error "bad size 'K' (bytes, or with a K, M or G suffix)" bind dev lo queues 1 dmabuf udmabuf K
	usage_error "bad size '4T' (bytes, or with a K, M or G suffix)" bind dev lo queues 1 dmabuf udmabuf 4T
	usage_error "bad size '4 K' (bytes, or with a K, M or G suffix)" bind dev lo queues 1 dmabuf udmabuf '4 K'
	usage_error "bad size '-4096' (bytes, or with a K, M or G suffix)" bind dev lo queues 1 dmabuf heap -4096
	usage_error "bad size '17179869184G' (bytes, or with a K, M or G suffix)" \
		bind dev lo queues 1 dmabuf udmabuf 17179869184G
	usage_error "bad size '18446744073709551616' (bytes, or with a K, M or G suffix)" \
		bind dev lo queues 1 dmabuf udmabuf 18446744073709551616
	usage_error "size '1000' is not a multiple of the page size ($(getconf PAGESIZE))" \
		bind dev lo queues 1 dmabuf udmabuf 1000
	usage_error "bad file descriptor '-1'" bind dev lo queues 1 dmabuf fd -1
	usage_error "bad file descriptor 'x'" bind dev lo queues 1 dmabuf fd x
	usage_error "bad file descriptor '2147483648'" bind dev lo queues 1 dmabuf fd 2147483648
	usage_error "unexpected argument 'flow' for bind" bind dev lo queues 1 flow tcp4 dmabuf fd 3
	usage_error "unexpected argument 'hold' for bind" bind dev lo queues 1 dmabuf fd 3 hold
	usage_error "dmabuf udmabuf-huge needs a SIZE" bind dev lo queues 1 dmabuf udmabuf-huge
	usage_error "rx-page-size needs a size in bytes" bind dev lo queues 1 dmabuf fd 3 rx-page-size
	usage_error "bad size '0' (bytes, or with a K, M or G suffix)" \
		bind dev lo queues 1 dmabuf fd 3 rx-page-size 0
	usage_error "size '5000' is not a multiple of the page size ($(getconf PAGESIZE))" \
		bind dev lo queues 1 dmabuf fd 3 rx-page-size 5000
	usage_error "rx-page-size '4G' is above 4G" bind dev lo queues 1 dmabuf fd 3 rx-page-size 4G
	usage_error "rx-page-size given twice" \
		bind dev lo queues 1 dmabuf fd 3 rx-page-size 16K rx-page-size 16K
}

@test "usage errors: bind tx" {
	usage_error "bind tx needs dev IF" bind tx
	usage_error "bind tx needs dev IF" bind tx dmabuf udmabuf 4K
	usage_error "bind tx needs dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}" bind tx dev lo
	usage_error "bind tx takes no queues: it binds the dma-buf to the whole device" \
		bind tx dev lo queues 1 dmabuf udmabuf 4K
	usage_error "bind tx takes no queues: it binds the dma-buf to the whole device" \
		b tx queues 1
	usage_error "dmabuf must be udmabuf, udmabuf-huge, heap or fd, not 'cuda'" bind tx dev lo dmabuf cuda 4K
	usage_error "size '1000' is not a multiple of the page size ($(getconf PAGESIZE))" \
		bind tx dev lo dmabuf heap 1000
	usage_error "bad file descriptor 'x'" bind tx dev lo dmabuf fd x
	usage_error "unexpected argument 'flow' for bind tx" bind tx dev lo flow tcp4 dmabuf fd 3
	usage_error "bind tx takes no rx-page-size: it sends from pages of the dma-buf" \
		bind tx dev lo dmabuf fd 3 rx-page-size 16K
	usage_error "unexpected argument 'tx' for bind" bind dev lo tx dmabuf fd 3
	# the direction is spelled out, and comes first
	usage_error "unexpected argument 't' for bind" bind t dev lo dmabuf fd 3
	usage_error "unexpected argument 'tx' for bind" bind rx tx dev lo dmabuf fd 3
	# rx is bind's first form: it needs its queues
	usage_error "bind needs queues A[-B]" bind rx dev lo dmabuf fd 3
}

@test "help: -h, --help, help, help OBJECT, OBJECT help; -V" {
	for args in -h --help help "-j help" "-h frob" "-h -x"; do
		run --separate-stderr "$CTL" $args
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "${lines[0]}" = "Usage: devmemctl [OPTIONS] OBJECT [VERB] [ARGS]" ]
		# every command and option is in it
		for w in "  dev [show] [dev IF]" "  queue [show] [dev IF]" \
			 "  pool [show] [dev IF]" "  setup dev IF queues A[-B]" \
			 "  teardown dev IF" "  bind dev IF queues A[-B]" \
			 "  bind tx dev IF" "[rx-page-size N]" \
			 "dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}" \
			 "  help [OBJECT]" "  -j, --json" "  -p, --pretty" \
			 "  -V, --version" "  -h, --help" "Exit status:" \
			 "DEVMEM_STATE_DIR"; do
			[[ $output == *"$w"* ]] || { echo "missing: $w"; false; }
		done
	done
	for args in "help bind" "bind help" "b help" "help b" "bind tx help" \
		    "bind rx help"; do
		run "$CTL" $args
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = "Usage: devmemctl [OPTIONS] bind dev IF queues A[-B]" ]
		[ "${lines[1]}" = "          dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}" ]
		[ "${lines[2]}" = "          [rx-page-size N]" ]
		[ "${lines[3]}" = "       devmemctl [OPTIONS] bind tx dev IF" ]
		[ "${lines[4]}" = "          dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}" ]
		[[ $output == *"Bind a dma-buf for sending"* ]]
		[ "${lines[-1]}" = "See 'devmemctl help' for the options and the rest." ]
	done
	for o in queue q dev pool; do
		run "$CTL" "$o" help
		[ "$status" -eq 0 ]
		[[ ${lines[0]} =~ ^Usage:\ devmemctl\ \[OPTIONS\]\ (dev|queue|pool)\ \[show\]\ \[dev\ IF\]$ ]]
	done
	run "$CTL" setup help
	[ "${lines[1]}" = "          [flow {tcp4|tcp6} [src IP] dst IP port PORT]" ]
	for args in -V --version "-V -h" "-V frob"; do
		run --separate-stderr "$CTL" $args
		[ "$status" -eq 0 ]
		[ "$output" = "devmemctl 1.0" ]
	done
}

@test "the man page renders without warnings and covers every command" {
	man=$BATS_TEST_DIRNAME/../../tools/devmemctl/devmemctl.8
	run groff -man -Tutf8 -ww "$man"
	[ "$status" -eq 0 ]
	run bash -c "groff -man -Tutf8 -ww '$man' 2>&1 >/dev/null"
	[ -z "$output" ]
	run env MANWIDTH=80 man -l "$man"
	[ "$status" -eq 0 ]
	for w in "dev show" "queue show" "pool show" "setup dev IF queues" \
		 "teardown dev IF" "bind dev IF queues" "bind tx dev IF" \
		 "for tx" "EXIT STATUS" \
		 "DEVMEM_STATE_DIR" "DEVMEMCTL_PARSE_ONLY"; do
		[[ $output == *"$w"* ]] || { echo "missing: $w"; false; }
	done
	# what bind prints after the queues, quoted as it prints it
	run env MANWIDTH=200 man -l "$man"
	[[ $output == *'followed by " in buffers of N bytes";'* ]]
}

@test "parsed: objects, verbs and their abbreviations; options" {
	for args in "dev" "dev show" "d" "d s" "dev list" "dev ls" "dev l" "de sh"; do
		parsed $args
		[ "$(jget 'd["command"]')" = '"dev"' ]
	done
	for args in "queue" "q" "q s" "queue show dev lo" "qu dev lo"; do
		parsed $args
		[ "$(jget 'd["command"]')" = '"queue"' ]
	done
	for args in "pool" "p" "p show" "po ls"; do
		parsed $args
		[ "$(jget 'd["command"]')" = '"pool"' ]
	done
	parsed s dev lo queues 1
	[ "$(jget 'd["command"]')" = '"setup"' ]
	parsed t dev lo
	[ "$(jget 'd["command"]')" = '"teardown"' ]
	parsed b dev lo queues 1 dmabuf fd 3
	[ "$(jget 'd["command"], d["direction"]')" = '["bind", "rx"]' ]
	parsed b rx queues 1 dmabuf fd 3 dev lo
	[ "$(jget 'd["command"], d["direction"], d["first"]')" = '["bind", "rx", 1]' ]
	parsed -j b tx dev lo dmabuf fd 3
	[ "$(jget 'd["command"], d["direction"], d["json"]')" = '["bind", "tx", true]' ]
	[ "$(jget '"first" in d')" = false ]
	parsed h q
	[ "$(jget 'd["command"], d["topic"]')" = '["help", "queue"]' ]

	parsed queue show dev lo
	[ "$(jget 'd["dev"], d["json"], d["pretty"]')" = '["lo", false, false]' ]
	for opt in -j --json "-j -j"; do
		parsed $opt q
		[ "$(jget 'd["json"], d["pretty"]')" = '[true, false]' ]
	done
	for opt in -p --pretty -jp -pj "-j -p" "--json --pretty"; do
		parsed $opt q
		[ "$(jget 'd["json"], d["pretty"]')" = '[true, true]' ]
	done
	# pretty: indented by 4, one member a line
	parsed -p queue dev lo
	[ "${lines[0]}" = "{" ]
	[ "${lines[1]}" = '    "command": "queue",' ]
	[ "${lines[-1]}" = "}" ]
	# "--" ends the options
	parsed -j -- queue
	[ "$(jget 'd["command"], d["json"]')" = '["queue", true]' ]
}

@test "parsed: queue ranges, sizes, fds" {
	parsed bind dev eth1 queues 3 dmabuf udmabuf 4096
	[ "$(jget 'd["dev"], d["first"], d["last"], d["dmabuf"]')" = '["eth1", 3, 3, {"type": "udmabuf", "size": 4096}]' ]
	parsed bind dev 7 queues 0-1023 dmabuf heap 64M
	[ "$(jget 'd["dev"], d["first"], d["last"], d["dmabuf"]')" = '["7", 0, 1023, {"type": "heap", "size": 67108864}]' ]
	parsed bind dev eth1 queues 4294967295 dmabuf fd 0
	[ "$(jget 'd["first"], d["last"], d["dmabuf"]')" = '[4294967295, 4294967295, {"type": "fd", "fd": 0}]' ]
	parsed bind dev eth1 queues 4294967294-4294967295 dmabuf fd 2147483647
	[ "$(jget 'd["first"], d["last"], d["dmabuf"]["fd"]')" = '[4294967294, 4294967295, 2147483647]' ]
	# decimal, also with leading zeros; keywords in any order
	parsed bind dmabuf udmabuf 0004096 queues 007-08 dev eth1
	[ "$(jget 'd["first"], d["last"], d["dmabuf"]["size"]')" = '[7, 8, 4096]' ]
	# rx-page-size, in any place; a udmabuf of huge pages
	parsed bind dev eth1 rx-page-size 16K queues 3 dmabuf udmabuf-huge 64M
	[ "$(jget 'd["dmabuf"], d["rx_page_size"]')" = '[{"type": "udmabuf-huge", "size": 67108864}, 16384]' ]
	# the kernel judges it: not a power of two is for it to refuse
	parsed bind dev eth1 queues 3 dmabuf fd 3 rx-page-size 12288
	[ "$(jget 'd["rx_page_size"]')" = '12288' ]
	parsed bind dev eth1 queues 3 dmabuf fd 3
	[ "$(jget '"rx_page_size" in d')" = 'false' ]
	# bind tx: a device and a buffer, in any order
	parsed bind tx dmabuf heap 64M dev eth1
	[ "$(jget 'd["direction"], d["dev"], d["dmabuf"]')" = '["tx", "eth1", {"type": "heap", "size": 67108864}]' ]
	parsed bind tx dev 7 dmabuf fd 0
	[ "$(jget 'd["dev"], d["dmabuf"]')" = '["7", {"type": "fd", "fd": 0}]' ]
	for s in 4K:4096 4k:4096 8K:8192 1M:1048576 2m:2097152 1G:1073741824 \
		 3g:3221225472 65536:65536 16777216G:18014398509481984; do
		parsed bind dev eth1 queues 1 dmabuf udmabuf "${s%%:*}"
		[ "$(jget 'd["dmabuf"]["size"]')" = "${s#*:}" ]
	done
}

@test "parsed: flows, addresses normalised" {
	parsed setup dev eth1 queues 2-3
	[ "$(jget '"flow" in d, d["first"], d["last"]')" = '[false, 2, 3]' ]
	parsed setup dev eth1 queues 2-3 flow tcp4 dst 192.0.2.2 port 5201
	[ "$(jget 'd["flow"]')" = '{"type": "tcp4", "family": 4, "dst": "192.0.2.2", "port": 5201}' ]
	parsed setup dev eth1 queues 2 flow tcp4 port 1 src 192.0.2.1 dst 192.0.2.2
	[ "$(jget 'd["flow"]')" = '{"type": "tcp4", "family": 4, "src": "192.0.2.1", "dst": "192.0.2.2", "port": 1}' ]
	parsed setup flow tcp6 dst 2001:DB8:0:0::2 src 2001:db8::0:1 port 65535 queues 0 dev eth1
	[ "$(jget 'd["flow"]')" = '{"type": "tcp6", "family": 6, "src": "2001:db8::1", "dst": "2001:db8::2", "port": 65535}' ]
}

@test "JSON: device names with quotes, backslashes, control and non-UTF-8 bytes stay valid" {
	# (not i: bats' run assigns that one)
	local names name opt doc=0
	names=('a"b' 'a\b' $'tab\there' $'\x01\x1f\x7f' $'caf\xc3\xa9'
	       $'\xff\xfe' $'\xc3' $'\xe2\x82' $'\xe2\x82x' $'\xed\xa0\x80'
	       $'\xf4\x90\x80\x80' $'\xc0\xaf' $'\xf0\x9f\x98\x80' '\u0041' '{}[],:')
	for name in "${names[@]}"; do
		for opt in -j -p; do
			parsed "$opt" queue show dev "$name"
			printf '%s' "$output" >"$BATS_TEST_TMPDIR/$doc$opt.json"
		done
		doc=$((doc + 1))
	done
	# Each document is UTF-8 JSON, and what a JSON parser reads is what
	# was given, with one U+FFFD for each maximal ill-formed subsequence,
	# as Python decodes. One interpreter checks them all.
	run python3 - "$BATS_TEST_TMPDIR" "${names[@]}" <<-'EOF'
	import json, sys
	bad = 0
	for i, name in enumerate(sys.argv[2:]):
	    want = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
	    for opt in ("-j", "-p"):
	        with open(f"{sys.argv[1]}/{i}{opt}.json", encoding="utf-8") as f:
	            got = json.load(f)["dev"]
	        if got != want:
	            print(f"name {ascii(name)} {opt}: got {ascii(got)}, want {ascii(want)}")
	            bad += 1
	sys.exit(1 if bad else 0)
	EOF
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# the escapes themselves
	parsed -j queue dev $'q"\\\t\n\x01\x7f/'
	[[ $output == *'"dev":"q\"\\\t\n\u0001\u007f/"'* ]]
	parsed -j queue dev $'\xe2\x82\xff\xc3\xa9'
	[[ $output == *'"dev":"\ufffd\ufffd'$'\xc3\xa9''"'* ]]
}

@test "failures without kernel support: no such device, no state, state refused, bad fd" {
	for cmd in "queue show" "pool show" "dev show" "teardown" "setup" "bind" \
		   "bind tx"; do
		extra=()
		case $cmd in
		setup) extra=(queues 1) ;;
		bind) extra=(queues 1 dmabuf fd 0) ;;
		"bind tx") extra=(dmabuf fd 0) ;;
		esac
		run --separate-stderr "$CTL" $cmd dev devmemctl-none "${extra[@]}"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$stderr" = 'Error: no network device "devmemctl-none"' ]
	done
	ns=$(stat -L -c %i /proc/self/ns/net)
	state=$DEVMEM_STATE_DIR/netns-$ns-ifindex-1
	# teardown of a device that was never set up
	run --separate-stderr "$CTL" teardown dev lo
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: lo is not set up (no state file $state)" ]
	# a device file that is not a state: refused before any change
	mkdir -p "$DEVMEM_STATE_DIR"
	echo keep >"$state"
	run --separate-stderr "$CTL" setup dev lo queues 0
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: $state:1: not a libdevmem NIC state file (no \"libdevmem-nic VERSION\" line)" ]
	[ "$(<"$state")" = keep ]
	rm "$state"
	# queue 0 set up by a process that is gone: refused before any change
	owner=$state.owner.AbC123
	printf 'libdevmem-nic 1\ndevice 1 lo\nqueues 0 0\n' >"$owner"
	run --separate-stderr "$CTL" setup dev lo queues 0
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: queue 0 of lo is already set up (state file $owner): run \"devmemctl teardown dev lo\" if no process is using it" ]
	# by index, the same file
	run --separate-stderr "$CTL" setup dev 1 queues 0
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: queue 0 of lo is already set up (state file $owner): run \"devmemctl teardown dev lo\" if no process is using it" ]
	# held by a running process (flock): setup and teardown say so
	mkfifo "$BATS_TEST_TMPDIR/locked"
	bash -c 'exec 9<"$1"; flock -x 9; echo >"$2"; exec sleep 600' _ \
		"$owner" "$BATS_TEST_TMPDIR/locked" 3>&- &
	holder=$!
	read -r _ <"$BATS_TEST_TMPDIR/locked"
	run --separate-stderr "$CTL" setup dev lo queues 0
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: queue 0 of lo is already set up by a running process (state file $owner is locked)" ]
	run --separate-stderr "$CTL" teardown dev lo
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: lo is set up by a running process (state file $owner is locked)" ]
	kill "$holder"
	wait "$holder" || true
	# a state file that is not one: teardown fails, naming it, and leaves it
	echo keep >"$owner"
	run --separate-stderr "$CTL" teardown dev lo
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: $owner:1: not a libdevmem NIC state file (no \"libdevmem-nic VERSION\" line)" ]
	[ "$(<"$owner")" = keep ]
	# a state directory that cannot be made
	DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/no/such run --separate-stderr "$CTL" setup dev lo queues 0
	[ "$status" -eq 1 ]
	[ "$stderr" = "Error: state directory $BATS_TEST_TMPDIR/no/such: No such file or directory" ]
	# bind of an fd that is not open, or not a dma-buf: no kernel needed
	run --separate-stderr "$CTL" bind dev lo queues 0 dmabuf fd 99
	[ "$status" -eq 1 ]
	[[ $stderr == "Error: "*"fd 99"*"Bad file descriptor" ]]
	run --separate-stderr "$CTL" bind tx dev lo dmabuf fd 99
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "Error: "*"fd 99"*"Bad file descriptor" ]]
}

# The host's kernel: mainline with the netdev family (skip without it).
need_family() {
	run --separate-stderr "$CTL" queue show dev lo
	if [ "$status" -ne 0 ] && [[ $stderr == *amily* ]]; then
		skip "the host kernel ($(uname -r)) has no netdev family: $stderr"
	fi
	[ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
}

@test "host kernel: queue show, text and JSON field by field" {
	jsonq_start
	need_family
	[ "${lines[0]}" = "ifindex 1 dev lo type rx id 0" ] ||
		[[ ${lines[0]} =~ ^ifindex\ 1\ dev\ lo\ type\ rx\ id\ 0\ napi-id\ [0-9]+$ ]]
	[[ ${lines[1]} =~ ^ifindex\ 1\ dev\ lo\ type\ tx\ id\ 0( napi-id [0-9]+)?$ ]]
	[ "${#lines[@]}" -eq 2 ]
	text=("${lines[@]}")
	run --separate-stderr "$CTL" -j queue show dev lo
	[ "$status" -eq 0 ]
	[ "$(jget 'len(d)')" = 2 ]
	[ "$(jget '[d[0][k] for k in ("ifindex", "ifname", "type", "id")]')" = '[1, "lo", "rx", 0]' ]
	[ "$(jget '[d[1][k] for k in ("ifindex", "ifname", "type", "id")]')" = '[1, "lo", "tx", 0]' ]
	[ "$(jget '"dmabuf" in d[0] or "dmabuf" in d[1]')" = false ]
	# the JSON and the text say the same, line by line
	for i in 0 1; do
		line=$(jget "' '.join(['ifindex', str(d[$i]['ifindex']), 'dev', d[$i]['ifname'], 'type', d[$i]['type'], 'id', str(d[$i]['id'])] + (['napi-id', str(d[$i]['napi_id'])] if 'napi_id' in d[$i] else []))")
		[ "$line" = "\"${text[$i]}\"" ]
	done
	# every device: valid JSON, as many queues as text lines
	run "$CTL" queue show
	[ "$status" -eq 0 ]
	n=${#lines[@]}
	run "$CTL" -p queue
	[ "$status" -eq 0 ]
	[ "$(jget 'len(d)')" = "$n" ]
	[ "$(jget 'all(q["type"] in ("rx", "tx") for q in d)')" = true ]
}

@test "host kernel: dev show and pool show, text and JSON" {
	jsonq_start
	need_family
	run --separate-stderr "$CTL" dev show dev lo
	[ "$status" -eq 0 ]
	[ "$output" = "1: lo: rx-queues 1 tx-queues 1" ]
	run --separate-stderr "$CTL" -j dev show dev lo
	[ "$output" = '[{"ifindex":1,"ifname":"lo","rx_queues":1,"tx_queues":1,"bindings":[]}]' ]
	run "$CTL" -p dev
	[ "$status" -eq 0 ]
	[ "$(jget '[x for x in d if x["ifindex"] == 1]')" = '[{"ifindex": 1, "ifname": "lo", "rx_queues": 1, "tx_queues": 1, "bindings": []}]' ]
	# pools: whatever the host has; JSON and text agree on the count
	run --separate-stderr "$CTL" pool show
	[ "$status" -eq 0 ]
	n=0
	[ -z "$output" ] || n=${#lines[@]}
	for l in "${lines[@]}"; do
		[[ $l =~ ^id\ [0-9]+( ifindex [0-9]+( dev [^ ]+)?)?( napi-id [0-9]+)?\ inflight\ [0-9]+\ inflight-mem\ [0-9]+( dmabuf [0-9]+)?( detach-time [0-9]+)?$ ]] ||
			{ echo "bad line: $l"; false; }
	done
	run --separate-stderr "$CTL" -j pool show
	[ "$status" -eq 0 ]
	# (pools may come and go between the two dumps)
	python3 -m json.tool <<<"$output" >/dev/null
	[ "$(jget 'isinstance(d, list) and all("id" in p and "inflight" in p for p in d)')" = true ]
	echo "# pools: text $n, JSON $(jget 'len(d)')" >&3
	# lo has none
	run --separate-stderr "$CTL" -j pool show dev lo
	[ "$output" = "[]" ]
	run --separate-stderr "$CTL" pool show dev lo
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
