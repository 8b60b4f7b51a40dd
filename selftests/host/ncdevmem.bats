#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tools/ncdevmem on the host (no VM): the command line (every usage
# error, --help, the parsed configuration through --dry-run), the pattern
# against mainline's validate_buffer() recomputed in Python, the client
# sending to a plain socat receiver over loopback (byte-exact), and the
# server, which this host cannot run (no /dev/udmabuf, no device that
# takes device memory): it must exit 77 and say why. selftests/ncdevmem.bats
# runs the server in the VM.

bats_require_minimum_version 1.5.0

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
NCD=$REPO/build/bin/ncdevmem

setup_file() {
	# the absolute path: the Makefile's rule names it
	make -C "$REPO" "$NCD" >&2
}

setup() {
	T=$BATS_TEST_TMPDIR
	RPID=
}

teardown() {
	if [ -n "$RPID" ]; then
		kill "$RPID" 2>/dev/null || true
		wait "$RPID" 2>/dev/null || true
	fi
}

# usage_error MESSAGE ARGS...: ncdevmem ARGS exits 2 with exactly
# "ncdevmem: MESSAGE" and the hint on stderr, nothing on stdout.
usage_error() {
	local want=$1
	shift
	run --separate-stderr "$NCD" "$@"
	echo "ncdevmem $*: status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "ncdevmem: $want" ]
	[ "${stderr_lines[1]}" = "Try 'ncdevmem --help'." ]
}

@test "usage errors: each exits 2 with its message" {
	usage_error "-s SERVER_IP is required"
	usage_error "-s SERVER_IP is required" -p 5201
	usage_error "-p PORT is required" -s 127.0.0.1
	usage_error "unknown option '-x'" -x -s 127.0.0.1 -p 1
	usage_error "unknown option '--bogus'" --bogus
	usage_error "option '-p' needs an argument" -s 127.0.0.1 -p
	usage_error "option '--port' needs an argument" -s 127.0.0.1 --port
	usage_error "unexpected argument 'extra'" -s 127.0.0.1 -p 1 extra
	usage_error "bad port '0' (1-65535)" -s 127.0.0.1 -p 0
	usage_error "bad port '65536' (1-65535)" -s 127.0.0.1 -p 65536
	usage_error "bad port 'http' (1-65535)" -s 127.0.0.1 -p http
	usage_error "bad address 'localhost' for -s (IPv4 or IPv6)" -s localhost -p 1
	usage_error "bad address '1.2.3' for -c (IPv4 or IPv6)" -s 127.0.0.1 -c 1.2.3 -p 1
	usage_error "-c ::1 and -s 127.0.0.1 are not of the same address family" \
		-s 127.0.0.1 -c ::1 -p 1
	usage_error "bad validation period '1' (0: off, or 2 or more)" -s 127.0.0.1 -p 1 -v 1
	usage_error "bad validation period '-3' (0: off, or 2 or more)" -s 127.0.0.1 -p 1 -v -3
	usage_error "bad validation period '7x' (0: off, or 2 or more)" -s 127.0.0.1 -p 1 -v 7x
	usage_error "bad queue count '0' (1-65535)" -l -s 127.0.0.1 -p 1 -f lo -q 0
	usage_error "bad first queue 'a' (0-65535)" -l -s 127.0.0.1 -p 1 -f lo -t a
	usage_error "queues 65535..65536: beyond 65535" -l -s 127.0.0.1 -p 1 -f lo -t 65535 -q 2
	usage_error "empty interface name" -l -s 127.0.0.1 -p 1 -f ""
	usage_error "-l needs -f IFNAME" -l -s 127.0.0.1 -p 1
	usage_error "bad size '12Q' for --bytes" -s 127.0.0.1 -p 1 -v 7 --bytes 12Q
	usage_error "bad size '-1' for --bytes" -s 127.0.0.1 -p 1 -v 7 --size -1
	usage_error "--bytes in client mode needs -v PERIOD: it sends SIZE bytes of that pattern" \
		-s 127.0.0.1 -p 1 --bytes 1M
	usage_error "bad chunk size '0' for -z (1 to 16M)" -s 127.0.0.1 -p 1 -z 0
	usage_error "bad chunk size '17M' for -z (1 to 16M)" -s 127.0.0.1 -p 1 -z 17M
	usage_error "-z is a client option (not with -l)" -l -s 127.0.0.1 -p 1 -f lo -z 4K
	usage_error "-o is a server option (needs -l)" -s 127.0.0.1 -p 1 -o /dev/null
	usage_error "-r is a server option (needs -l)" -s 127.0.0.1 -p 1 -r "$T/r"
	usage_error "-L is a server option (needs -l)" -s 127.0.0.1 -p 1 -L
	usage_error "--dmabuf is for the server (-l) or the client with -f: the plain client has no dma-buf" \
		-s 127.0.0.1 -p 1 --dmabuf heap
	usage_error "--dmabuf-size is for the server (-l) or the client with -f: the plain client has no dma-buf" \
		-s 127.0.0.1 -p 1 --dmabuf-size 4K
	usage_error "--dmabuf-size is for the server (-l) or the client with -f: the plain client has no dma-buf" \
		-s 127.0.0.1 -p 1 -f lo --plain --dmabuf-size 4K
	usage_error "--dmabuf cuda is for the server: the client writes its payload into the dma-buf from the CPU (udmabuf or heap)" \
		-s 127.0.0.1 -p 1 -f lo --dmabuf cuda:1
	usage_error "--plain is a client option (not with -l)" -l -s 127.0.0.1 -p 1 -f lo --plain
	usage_error "bad chunk size '0' for -z (1 to 16M)" -s 127.0.0.1 -p 1 -f lo -z 0
	usage_error "--bytes in client mode needs -v PERIOD: it sends SIZE bytes of that pattern" \
		-s 127.0.0.1 -p 1 -f lo --bytes 1M
	usage_error "bad --dmabuf-size '4097' (a multiple of 4K, at most 1T)" \
		-s 127.0.0.1 -p 1 -f lo --dmabuf-size 4097
	usage_error "--trace is a server option (needs -l)" -s 127.0.0.1 -p 1 --trace "$T/t"
	usage_error "bad --dmabuf 'gpu' (udmabuf, heap[:NAME] or cuda[:DEVICE])" \
		-l -s 127.0.0.1 -p 1 -f lo --dmabuf gpu
	usage_error "bad --dmabuf 'heap:' (udmabuf, heap[:NAME] or cuda[:DEVICE])" \
		-l -s 127.0.0.1 -p 1 -f lo --dmabuf heap:
	usage_error "bad --dmabuf 'heap:a/b' (udmabuf, heap[:NAME] or cuda[:DEVICE])" \
		-l -s 127.0.0.1 -p 1 -f lo --dmabuf heap:a/b
	usage_error "bad --dmabuf 'cuda:x' (udmabuf, heap[:NAME] or cuda[:DEVICE])" \
		-l -s 127.0.0.1 -p 1 -f lo --dmabuf cuda:x
	usage_error "bad --dmabuf-size '4097' (a multiple of 4K, at most 1T)" \
		-l -s 127.0.0.1 -p 1 -f lo --dmabuf-size 4097
	usage_error "invalid rx_page_size 'big'" -l -s 127.0.0.1 -p 1 -f lo -b big
	usage_error "invalid rx_page_size '0'" -l -s 127.0.0.1 -p 1 -f lo -b 0
	usage_error "invalid rx_page_size '4G'" -l -s 127.0.0.1 -p 1 -f lo -b 4G
	usage_error "option '-b' needs an argument" -l -s 127.0.0.1 -p 1 -f lo -b
	usage_error "-b above 4K takes a udmabuf of 2M huge pages: --dmabuf-size must be a multiple of 2M" \
		-l -s 127.0.0.1 -p 1 -f lo -b 16K --dmabuf-size 3M
	usage_error "bad --dmabuf-size '0' (a multiple of 4K, at most 1T)" \
		-l -s 127.0.0.1 -p 1 -f lo --dmabuf-size 0
}

@test "--help: exit 0, every option it lists is one the parser takes" {
	run --separate-stderr "$NCD" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == "Usage: ncdevmem -l -s SERVER_IP "* ]]
	run "$NCD" -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: ncdevmem -l -s SERVER_IP "* ]]
	local help=$output opt n=0 arg
	# every long option of the help text parses (with an argument where
	# the text shows one); --help itself exits before --dry-run
	while read -r opt arg; do
		[ "$opt" = --help ] && continue
		case $arg in
		"") [ "$opt" = --bytes ] && set -- "$opt" 4K || set -- "$opt" ;;
		SIZE) set -- "$opt" 4K ;;
		PERIOD) set -- "$opt" 7 ;;
		KIND) set -- "$opt" udmabuf ;;
		IP) set -- "$opt" 127.0.0.1 ;;
		IFNAME) set -- "$opt" lo ;;
		*) set -- "$opt" 1 ;;
		esac
		case $opt in
		--chunk | --plain) run "$NCD" -s 127.0.0.1 -p 1 "$@" --dry-run ;;
		--bytes | --size) run "$NCD" -l -f lo -s 127.0.0.1 -p 1 "$@" --dry-run ;;
		*) run "$NCD" -l -f lo -s 127.0.0.1 -p 1 "$@" --dry-run ;;
		esac
		echo "$* -> $status: $output"
		[ "$status" -eq 0 ]
		n=$((n + 1))
	done < <(grep -oE -- '--[a-z-]+( [A-Z]+)?' <<<"$help" | sort -u)
	echo "$n options"
	[ "$n" -ge 20 ]
	# and the man page documents each of them
	while read -r opt; do
		grep -qF -- "${opt//-/\\-}" "$REPO/tools/ncdevmem/ncdevmem.1"
	done < <(grep -oE -- '--[a-z-]+' <<<"$help" | sort -u)
}

@test "the man page renders without warnings" {
	run groff -man -Tutf8 -ww "$REPO/tools/ncdevmem/ncdevmem.1"
	[ "$status" -eq 0 ]
	[[ $output == *"netcat for device-memory TCP"* ]]
	run --separate-stderr groff -man -Tutf8 -ww "$REPO/tools/ncdevmem/ncdevmem.1"
	[ -z "$stderr" ]
}

# dry KEY=VALUE... -- ARGS: --dry-run of ARGS has each KEY=VALUE line.
dry() {
	local want=()
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	run --separate-stderr "$NCD" "$@" --dry-run
	echo "$output"
	[ "$status" -eq 0 ]
	local w
	for w in "${want[@]}"; do
		grep -qxF -- "$w" <<<"$output" || { echo "missing: $w"; return 1; }
	done
}

@test "--dry-run: defaults, mainline's option letters, long names, sizes" {
	# mainline's server line
	dry mode=server server=192.0.2.2 client= port=5201 validate=0 period=0 \
		queues=1 first-queue=auto interface=eth1 setup=yes fail-on-linear=no \
		bytes=any dmabuf=udmabuf dmabuf-size=67108864 progress=auto json=no trace= -- \
		-l -s 192.0.2.2 -p 5201 -f eth1
	dry trace=/tmp/t -- -l -s 192.0.2.2 -p 5201 -f eth1 --trace /tmp/t
	# mainline's check_rx_hds line
	dry fail-on-linear=yes setup=yes -- -l -f eth1 -s 192.0.2.2 -p 5201 -L
	dry fail-on-linear=yes -- -l -f eth1 -s 192.0.2.2 -p 5201 --fail-on-linear
	dry mode=server client=192.0.2.1 validate=7 period=7 queues=2 \
		first-queue=4 setup=no bytes=268435456 output=- ready-file=/tmp/r -- \
		-s 192.0.2.2 -c 192.0.2.1 -f eth1 -l -p 5201 -v 7 -q 2 -t 4 -n \
		--bytes 256M -o - -r /tmp/r
	dry mode=server server=2001:db8::2 port=80 queues=3 first-queue=0 \
		setup=no bytes=1024 dmabuf=heap:system dmabuf-size=4096 \
		progress=yes json=yes -- \
		--listen --server 2001:db8::2 --port 80 --interface eth0 \
		--queues 3 --first-queue 0 --no-setup --size 1K --dmabuf heap \
		--dmabuf-size 4K --progress --json
	dry dmabuf=heap:linux,cma -- -l -s ::1 -p 1 -f lo --dmabuf heap:linux,cma
	dry dmabuf=cuda:0 -- -l -s ::1 -p 1 -f lo --dmabuf cuda
	dry dmabuf=cuda:3 bytes=3221225472 -- -l -s ::1 -p 1 -f lo --dmabuf cuda:3 --bytes 3G
	dry send=none chunk=65536 -- -l -s 192.0.2.2 -p 5201 -f eth1
	# mainline's check_rx_large_niov line: -b is the rx page size
	dry rx-page-size=default -- -l -s 192.0.2.2 -p 5201 -f eth1
	dry rx-page-size=16384 bytes=any -- -l -s 192.0.2.2 -p 5201 -f eth1 -v 7 -b 16384
	dry rx-page-size=4096 -- -l -s 192.0.2.2 -p 5201 -f eth1 --rx-page-size 4K
	# the kernel judges the value: not a power of two passes here
	dry rx-page-size=12288 dmabuf-size=4194304 -- \
		-l -s 192.0.2.2 -p 5201 -f eth1 -b 12K --dmabuf-size 4M
	# the client accepts and ignores it, as mainline's
	dry mode=client send=plain rx-page-size=16384 -- -s 192.0.2.2 -p 5201 -b 16K
	# the client: stdin by default, the pattern with -b; without -f plain
	# TCP, -z the bytes of a send()
	dry mode=client send=plain bytes=stdin chunk=65536 interface= -- -s 127.0.0.1 -p 9
	dry mode=client send=plain bytes=1048576 validate=7 chunk=1000 interface= -- \
		-s 127.0.0.1 -p 9 -v 7 --bytes 1M -z 1000
	# with -f, as mainline's client: from device memory, -z the most
	# bytes of an iovec (none by default); its dma-buf as the server's
	dry mode=client send=devmem bytes=stdin chunk=any interface=eth1 \
		dmabuf=udmabuf dmabuf-size=67108864 -- -s 192.0.2.2 -p 5201 -f eth1
	dry mode=client send=devmem bytes=1048576 validate=7 chunk=3 interface=lo \
		client=127.0.0.2 -- -s 127.0.0.1 -c 127.0.0.2 -p 9 -v 7 --bytes 1M -z 3 -f lo
	dry send=devmem dmabuf=heap:system dmabuf-size=2097152 -- \
		-s ::1 -p 9 --interface lo --dmabuf heap --dmabuf-size 2M
	dry send=devmem dmabuf=udmabuf dmabuf-size=4096 -- \
		-s ::1 -p 9 -f lo --dmabuf udmabuf --dmabuf-size 4K
	# --plain: -f only binds the plain client's socket to the device
	dry mode=client send=plain chunk=65536 interface=lo -- -s 127.0.0.1 -p 9 -f lo --plain
	dry send=plain chunk=512 -- --plain -s 127.0.0.1 -p 9 -z 512
	# -q/-t/-n: accepted and ignored by the client (mainline compat)
	dry mode=client queues=2 first-queue=1 setup=no -- -s 127.0.0.1 -p 9 -q 2 -t 1 -n
	# periods above 256 behave as 256 (mainline's unsigned char); 0 is off
	dry validate=1000 period=256 -- -s 127.0.0.1 -p 9 -v 1000
	dry validate=256 period=256 -- -s 127.0.0.1 -p 9 -v 256
	dry validate=2 period=2 -- -s 127.0.0.1 -p 9 -v 2
	dry validate=0 period=0 -- -s 127.0.0.1 -p 9 -v 0
}

# receiver PORT FILE [ADDR]: socat writing what one connection sends to
# FILE, in the background (RPID); returns once it listens.
receiver() {
	local port=$1 file=$2 addr=${3:-127.0.0.1} lst=TCP-LISTEN i
	[[ $addr == *:* ]] && lst=TCP6-LISTEN addr="[$addr]"
	socat -u "$lst:$port,bind=$addr,reuseaddr" "OPEN:$file,creat,trunc" 3>&- &
	RPID=$!
	for i in $(seq 250); do
		ss -Hltn "sport = :$port" | grep -q . && return 0
		kill -0 "$RPID" || return 1
		sleep 0.02
	done
	return 1
}

free_port() { echo $((20000 + RANDOM % 20000)); }

# client_summary BYTES: the client's stdout is its summary, exactly.
client_summary() {
	echo "$output"
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" = "ncdevmem: client summary" ]
	[ "${lines[1]}" = "bytes:           $1" ]
	[[ ${lines[2]} =~ ^seconds:\ {9}[0-9]+\.[0-9]{3}$ ]]
	[[ ${lines[3]} =~ ^Gbit/s:\ {10}[0-9]+\.[0-9]{3}$ ]]
	[ "${lines[4]}" = "result:          pass" ]
}

@test "client: 10M of the -v 7 pattern to socat, byte-exact (odd -z chunks); what yes writes" {
	local port
	port=$(free_port)
	receiver "$port" "$T/got"
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" -v 7 --bytes 10M -z 1000
	client_summary $((10 << 20))
	wait "$RPID"
	RPID=
	# mainline's recipe for the same stream
	yes "$(printf '\1\2\3\4\5\6')" | head -c 10M | cmp - "$T/got"
}

# mainline_pattern N BYTES: validate_buffer()'s expectations, byte for
# byte as its loop computes them (an unsigned char seed).
mainline_pattern() {
	python3 -c '
import sys
n, count = int(sys.argv[1]), int(sys.argv[2])
seed, out = 1, bytearray()
for _ in range(count):
    out.append(seed if seed else 10)
    seed = (seed + 1) & 0xff
    if seed == n:
        seed = 0
sys.stdout.buffer.write(out)' "$@"
}

@test "the pattern is mainline's: periods 2, 7, 255, 256 and 1000 over IPv6" {
	local port n
	for n in 2 7 255 256 1000; do
		port=$(free_port)
		receiver "$port" "$T/got.$n" ::1
		run "$NCD" -s ::1 -p "$port" -v "$n" --bytes 3000 -z 77
		[ "$status" -eq 0 ]
		wait "$RPID"
		RPID=
		mainline_pattern "$n" 3000 >"$T/want.$n"
		cmp "$T/want.$n" "$T/got.$n"
	done
}

@test "client: stdin to socat unchanged; -c binds the source; --json" {
	local port
	head -c 3000000 /dev/urandom >"$T/in"
	port=$(free_port)
	receiver "$port" "$T/got"
	run --separate-stderr "$NCD" -s 127.0.0.1 -c 127.0.0.1 -p "$port" -z 4096 <"$T/in"
	client_summary 3000000
	wait "$RPID"
	RPID=
	cmp "$T/in" "$T/got"

	port=$(free_port)
	receiver "$port" "$T/got"
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" --json -v 5 --bytes 100
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output =~ ^\{\"mode\":\"client\",\"bytes\":100,\"seconds\":[0-9.]+,\"gbps\":[0-9.]+,\"result\":\"pass\"\}$ ]]
	python3 -c 'import json, sys; json.loads(sys.argv[1])' "$output"
}

@test "client --plain -f lo: the plain client bound to lo (SO_BINDTODEVICE), byte-exact" {
	[ "$(id -u)" -eq 0 ] || skip "SO_BINDTODEVICE needs CAP_NET_RAW"
	local port
	port=$(free_port)
	receiver "$port" "$T/got"
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" -f lo --plain -v 7 --bytes 1M -z 777
	client_summary $((1 << 20))
	[ -z "$stderr" ]
	wait "$RPID"
	RPID=
	yes "$(printf '\1\2\3\4\5\6')" | head -c 1M | cmp - "$T/got"
}

@test "client -f on this host: exit 77 with the missing capability named, before connecting" {
	local port
	port=$(free_port)
	receiver "$port" "$T/got"
	# no /dev/udmabuf or dma-heap here; were there one, lo cannot send
	# from device memory (EOPNOTSUPP): a skip either way
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" -f lo -v 7 --bytes 1M
	echo "status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 77 ]
	[ -z "$output" ]
	[[ $stderr =~ ^ncdevmem:\ skip:\ [a-z] ]]
	if [ ! -e /dev/udmabuf ]; then
		[[ $stderr == "ncdevmem: skip: udmabuf dma-buf of 67108864 bytes: "* ]]
	fi
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" -f lo --dmabuf heap \
		--dmabuf-size 1M </dev/null
	echo "status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 77 ]
	if [ ! -e /dev/dma_heap/system ]; then
		[[ $stderr == "ncdevmem: skip: dma-heap dma-buf of 1048576 bytes: "* ]]
	fi
	# no such device: a failure, before any dma-buf
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" -f ncdevmem-no0 </dev/null
	echo "status $status, stderr '$stderr'"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "ncdevmem: ncdevmem-no0: "* ]]
	# the receiver never saw a connection
	kill -0 "$RPID"
	[ ! -s "$T/got" ]
}

@test "client: nobody listening: exit 1 with the reason, no summary" {
	local port
	port=$(free_port)
	run --separate-stderr "$NCD" -s 127.0.0.1 -p "$port" -v 7 --bytes 1M
	echo "$output / $stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "ncdevmem: connect to 127.0.0.1 port $port: Connection refused" ]
	[ -z "$output" ]
}

@test "server on this host: exit 77 with the missing capability named; or no such device: exit 1" {
	local port
	port=$(free_port)
	# no /dev/udmabuf here; were there one, lo takes no device memory
	# (EOPNOTSUPP); either way a skip, never a run
	run --separate-stderr "$NCD" -l -s 127.0.0.1 -p "$port" -f lo -v 7
	echo "status $status, stdout '$output', stderr '$stderr'"
	[ "$status" -eq 77 ]
	[ -z "$output" ]
	[[ $stderr =~ ^ncdevmem:\ skip:\ [a-z] ]]
	if [ ! -e /dev/udmabuf ]; then
		[[ $stderr == "ncdevmem: skip: udmabuf dma-buf of 67108864 bytes: "* ]]
	fi
	# nobody listened
	! ss -Hltn "sport = :$port" | grep -q .

	run --separate-stderr "$NCD" -l -s 127.0.0.1 -p "$port" -f ncdevmem-no0
	echo "status $status, stderr '$stderr'"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "ncdevmem: ncdevmem-no0: "* ]]
}
