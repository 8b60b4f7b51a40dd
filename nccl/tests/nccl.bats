#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libnccl-net-devmem on the host, in copy mode (lo has one rx queue, so
# the receive set-up is refused and says why): tests/harness drives the
# plugin as NCCL's proxy does and checks every byte after applying the
# unpack records on the CPU, with libdevmem's stand-in CUDA driver. The
# configuration's refusals, the exported symbols and what the plugin
# needs at run time. selftests/nccl.bats runs devmem mode in the VM.

bats_require_minimum_version 1.5.0

setup_file() {
	local repo
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
	make -s -C "$repo/libdevmem" tests >&2
	make -s -C "$repo/nccl" tests >&2
}

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd -P)
	PLUGIN=$REPO/build/nccl/libnccl-net-devmem.so
	HARNESS=$REPO/build/nccl/tests/harness
	export LD_LIBRARY_PATH=$REPO/build/libdevmem/tests/fake-cuda
	export NCCL_DEVMEM_IFNAME=lo DEVMEM_STATE_DIR=$BATS_TEST_TMPDIR/state
	unset NCCL_PROTO NCCL_ALGO
}

# h ARGS: the harness, stderr (the plugin's log) apart.
h() { run --separate-stderr timeout 120 "$HARNESS" "$PLUGIN" "$@"; }

# records SIZE...: the records copy mode makes, a 4 KiB page each.
records() {
	local n=0 s
	for s in "$@"; do n=$((n + (s + 4095) / 4096)); done
	echo "$n"
}

# bytes LIST REPEAT: the summary line's byte count and records for
# --sizes LIST --repeat REPEAT, LIST in bytes.
summary() {
	local list=$1 repeat=$2 api=${3:-v11} s total=0 recs=0 n=0
	for s in ${list//,/ }; do
		total=$((total + s * repeat))
		recs=$((recs + $(records "$s") * repeat))
		n=$((n + repeat))
	done
	echo "harness: $api, $n messages, $total bytes checked, $recs records"
}

@test "nccl: v11, 1 byte to 4 MiB, 16 in flight, every byte and record" {
	local list=1,4095,4096,4097,65535,65537,1048576,3145728,4194304
	h --sizes "$list" --repeat 8 --inflight 16
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary "$list" 8)" ]
	[[ $stderr == *"comm "*": receiving on 2 socket(s) in copy mode: lo has 1 rx queue(s): one must stay for RSS, device unpack"* ]]
}

@test "nccl: v7, the same messages through the older table" {
	local list=0,1,4097,1048577,4194304
	h --api v7 --sizes "$list" --repeat 4
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary "$list" 4 v7)" ]
}

@test "nccl: host memory (no GPUDirect RDMA) is received in place, with no records" {
	local list=0,1,65537,4194304
	h --host-mem --sizes "$list" --repeat 3 --inflight 16
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "harness: v11, 12 messages, 12779526 bytes checked, 0 records" ]
	NCCL_DEVMEM_NSOCKS=8 h --api v7 --host-mem --sizes "$list" --repeat 2
	[ "$status" -eq 0 ]
	[ "$output" = "harness: v7, 8 messages, 8519684 bytes checked, 0 records" ]
}

@test "nccl: --no-check counts what came and times the receive phase" {
	h --no-check --sizes 1M --repeat 4
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "harness: v11, 4 messages, 4194304 bytes received, 1024 records" ]
	[[ ${lines[1]} =~ ^harness:\ receive\ phase\ [0-9]+\.[0-9]{3}\ s,\ [1-9][0-9]*\ Mbit/s$ ]]
}

@test "nccl: 1 and 8 data sockets, one request in flight and sixteen" {
	local list=1,65536,65537,524289,4194304
	NCCL_DEVMEM_NSOCKS=1 h --sizes "$list" --repeat 3 --inflight 1
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary "$list" 3)" ]
	NCCL_DEVMEM_NSOCKS=8 h --sizes "$list" --repeat 6 --inflight 16
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary "$list" 6)" ]
	[[ $stderr == *"receiving on 8 socket(s)"* ]]
}

# proxied: the trace's sends, and how many of them the proxy copied
# nothing of.
proxied() {
	echo "$(grep -c 'INFO NET/devmem : comm 0x[0-9a-f]*: send [0-9]* (tag [0-9]*) done: [0-9]* bytes, [0-9]* copied by the proxy thread$' <<<"$stderr")" \
		"$(grep -c ' bytes, 0 copied by the proxy thread$' <<<"$stderr")"
}

@test "nccl: NCCL_DEVMEM_PROXY_COPY: 0 leaves host-memory sends to the I/O thread; a cap moves the same bytes" {
	local list=1,65537,4194304
	NCCL_DEVMEM_TRACE=1 NCCL_DEVMEM_PROXY_COPY=0 h --host-mem --sizes "$list" --repeat 4
	[ "$status" -eq 0 ]
	[ "$output" = "harness: v11, 12 messages, 17039368 bytes checked, 0 records" ]
	[[ $stderr == *"INFO NET/devmem : host-memory sends: the I/O thread copies them"* ]]
	[ "$(proxied)" = "12 12" ]
	# One CPU: the proxy, which yields to the I/O thread, often finds
	# the socket with room before it runs.
	NCCL_DEVMEM_TRACE=1 NCCL_DEVMEM_PROXY_COPY=4K \
		run --separate-stderr taskset -c 0 timeout 120 "$HARNESS" "$PLUGIN" --host-mem --sizes "$list" --repeat 4 --inflight 16
	[ "$status" -eq 0 ]
	[ "$output" = "harness: v11, 12 messages, 17039368 bytes checked, 0 records" ]
	[[ $stderr == *"INFO NET/devmem : host-memory sends: the proxy thread copies up to 4096 bytes a socket per test(), the I/O thread the rest"* ]]
	[ "$(proxied | cut -d' ' -f1)" -eq 12 ]
	# Staged sends (buffers NCCL registered as GPU memory) too.
	NCCL_DEVMEM_PROXY_COPY=64K run --separate-stderr taskset -c 0 timeout 120 "$HARNESS" "$PLUGIN" --sizes "$list" --repeat 4
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary "$list" 4)" ]
}

@test "nccl: NCCL_DEVMEM_PROXY_COPY's default: 256K on fewer than 4 CPUs, else 0" {
	run --separate-stderr taskset -c 0 timeout 120 "$HARNESS" "$PLUGIN" --sizes 1
	[ "$status" -eq 0 ]
	[[ $stderr == *"INFO NET/devmem : host-memory sends: the proxy thread copies up to 262144 bytes a socket per test(), the I/O thread the rest"* ]]
	# The other default needs a host of 4 CPUs or more.
	[ "$(nproc)" -ge 4 ] || return 0
	run --separate-stderr taskset -c 0-3 timeout 120 "$HARNESS" "$PLUGIN" --sizes 1
	[ "$status" -eq 0 ]
	[[ $stderr == *"INFO NET/devmem : host-memory sends: the I/O thread copies them"* ]]
}

@test "nccl: the smallest copy buffer, 4 MiB messages wait for consumed ones" {
	NCCL_DEVMEM_COPY_BUFFER_SIZE=8M h --sizes 4194304 --repeat 12 --inflight 16
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary 4194304 12)" ]
}

@test "nccl: two ranks, two processes, the handle passed between them" {
	local hf=$BATS_TEST_TMPDIR/handle out=$BATS_TEST_TMPDIR/recv
	timeout 120 "$HARNESS" "$PLUGIN" --role recv --handle "$hf" \
		--sizes 7,4194304 --repeat 5 >"$out" 2>&1 &
	local pid=$!
	h --role send --handle "$hf" --sizes 7,4194304 --repeat 5
	[ "$status" -eq 0 ]
	[ "$output" = "harness: v11, 10 messages sent" ]
	wait "$pid"
	[ "$(tail -n 1 "$out")" = "$(summary 7,4194304 5)" ]
}

@test "nccl: strangers at both ports do not get into the comm" {
	h --intruder --sizes 1,1048576
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$(summary 1,1048576 1)" ]
	[[ $stderr == *"WARN NET/devmem : accept: a control connection without this comm's hello: closed"* ]]
	[[ $stderr =~ "WARN NET/devmem : accept: a data connection from port "[0-9]+" that the peer did not name: closed" ]]
}

@test "nccl: more than 4 MiB in one message is refused at both ends" {
	h --oversize --sizes 1
	[ "$status" -eq 0 ]
	[[ $stderr == *"WARN NET/devmem : isend of 4194305 bytes: a message is at most 4194304 bytes over lo (one unpack slot: 4 MiB, 2048 fragments at MTU 65536)"* ]]
	[[ $stderr == *"WARN NET/devmem : irecv of 4194305 bytes: a message is at most 4194304 bytes over lo (one unpack slot: 4 MiB, 2048 fragments at MTU 65536)"* ]]
}

@test "nccl: a message whose tag no receive posted fails the comm, clearly" {
	h --bad-tag --sizes 1
	[ "$status" -eq 1 ]
	[[ $stderr == *"WARN NET/devmem : comm "*": a message of tag 0 for a receive of tag 16384"* ]]
	[[ $stderr =~ "harness: "(irecv|"test (recv)")": result 2" ]]
}

@test "nccl: comms closed with requests in flight leave nothing of the driver's" {
	h --close-early 3 --sizes 1048576 --repeat 12 --inflight 8
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "harness: v11, 0 messages, 0 bytes checked, 0 records" ]
}

# refused VAR=VALUE MESSAGE: init fails with ncclInvalidArgument (4) and
# the plugin's warning.
refused() {
	env "$1" "$HARNESS" "$PLUGIN" >"$BATS_TEST_TMPDIR/out" 2>&1 && return 1
	grep -Fxq "WARN NET/devmem : $2" "$BATS_TEST_TMPDIR/out" ||
		{ cat "$BATS_TEST_TMPDIR/out"; return 1; }
	grep -Fxq "harness: init: result 4" "$BATS_TEST_TMPDIR/out"
}

@test "nccl: every variable's bad values are refused by name" {
	refused NCCL_DEVMEM_MODE=fast "NCCL_DEVMEM_MODE=fast: not one of auto, devmem or copy"
	refused NCCL_DEVMEM_BUFFER=vram "NCCL_DEVMEM_BUFFER=vram: not one of cuda or udmabuf"
	refused NCCL_DEVMEM_BUFFER_SIZE=64X "NCCL_DEVMEM_BUFFER_SIZE=64X: not a size (digits, then K, M or G)"
	refused NCCL_DEVMEM_BUFFER_SIZE=-1 "NCCL_DEVMEM_BUFFER_SIZE=-1: not a size (digits, then K, M or G)"
	refused NCCL_DEVMEM_BUFFER_SIZE=8G "NCCL_DEVMEM_BUFFER_SIZE=8G: out of range (1048576 to 4294967296 bytes)"
	refused NCCL_DEVMEM_BUFFER_SIZE=1048575 "NCCL_DEVMEM_BUFFER_SIZE=1048575: out of range (1048576 to 4294967296 bytes)"
	refused NCCL_DEVMEM_BUFFER_SIZE=99999999999999999999 "NCCL_DEVMEM_BUFFER_SIZE=99999999999999999999: not a size (digits, then K, M or G)"
	refused NCCL_DEVMEM_BUFFER_SIZE=1049600 "NCCL_DEVMEM_BUFFER_SIZE=1049600: not a multiple of 4096"
	refused NCCL_DEVMEM_RX_PAGE_SIZE=12K "NCCL_DEVMEM_RX_PAGE_SIZE=12K: not a power of two"
	refused NCCL_DEVMEM_RX_PAGE_SIZE=4097 "NCCL_DEVMEM_RX_PAGE_SIZE=4097: not a multiple of 4096"
	refused NCCL_DEVMEM_RX_PAGE_SIZE=4M "NCCL_DEVMEM_RX_PAGE_SIZE=4M: out of range (4096 to 2097152 bytes)"
	NCCL_DEVMEM_BUFFER=udmabuf NCCL_DEVMEM_RX_PAGE_SIZE=16K \
		refused NCCL_DEVMEM_BUFFER_SIZE=3M "NCCL_DEVMEM_BUFFER_SIZE=3M: not a multiple of 2M, which a udmabuf of huge pages needs (NCCL_DEVMEM_RX_PAGE_SIZE)"
	refused NCCL_DEVMEM_COPY_BUFFER_SIZE=4M "NCCL_DEVMEM_COPY_BUFFER_SIZE=4M: out of range (8388608 to 4294967296 bytes)"
	refused NCCL_DEVMEM_NSOCKS=0 "NCCL_DEVMEM_NSOCKS=0: not a number from 1 to 8"
	refused NCCL_DEVMEM_NSOCKS=9 "NCCL_DEVMEM_NSOCKS=9: not a number from 1 to 8"
	refused NCCL_DEVMEM_NSOCKS=2x "NCCL_DEVMEM_NSOCKS=2x: not a number from 1 to 8"
	refused NCCL_DEVMEM_PROXY_COPY=64KB "NCCL_DEVMEM_PROXY_COPY=64KB: not a size (digits, then K, M or G)"
	refused NCCL_DEVMEM_PROXY_COPY=17M "NCCL_DEVMEM_PROXY_COPY=17M: out of range (0 to 16777216 bytes)"
	refused NCCL_DEVMEM_PROXY_COPY=1000 "NCCL_DEVMEM_PROXY_COPY=1000: not a multiple of 4096"
	refused NCCL_DEVMEM_QUEUES=3-1 "NCCL_DEVMEM_QUEUES=3-1: FIRST is above LAST"
	refused NCCL_DEVMEM_QUEUES=-1 "NCCL_DEVMEM_QUEUES=-1: not N or FIRST-LAST"
	refused NCCL_DEVMEM_QUEUES=1-x "NCCL_DEVMEM_QUEUES=x: not a number from 0 to 65535"
	refused NCCL_DEVMEM_QUEUES=70000 "NCCL_DEVMEM_QUEUES=70000: not a number from 0 to 65535"
	refused NCCL_DEVMEM_GPU=one "NCCL_DEVMEM_GPU=one: not a number from 0 to 1023"
	refused NCCL_DEVMEM_IFNAME= "NCCL_DEVMEM_IFNAME=: not a device name"
	refused NCCL_DEVMEM_IFNAME=a-name-far-too-long "NCCL_DEVMEM_IFNAME=a-name-far-too-long: not a device name"
}

@test "nccl: a device that is not there, and no CUDA driver, fail init" {
	NCCL_DEVMEM_IFNAME=nosuch0 h
	[ "$status" -eq 1 ]
	[ "$output" = "" ]
	[[ $stderr == *"WARN NET/devmem : NCCL_DEVMEM_IFNAME=nosuch0: no such device up with an IPv4 or IPv6 address"* ]]
	[[ $stderr == *"harness: init: result 2"* ]]
	if ldconfig -p | grep -q 'libcuda\.so\.1 '; then
		skip "this host has a CUDA driver"
	fi
	LD_LIBRARY_PATH=$BATS_TEST_TMPDIR h
	[ "$status" -eq 1 ]
	[[ $stderr == *"WARN NET/devmem : no CUDA driver: libcuda.so.1: cannot open shared object file"* ]]
}

@test "nccl: NCCL_PROTO and NCCL_ALGO: set to Simple and Ring, or refused" {
	h --sizes 1
	[ "$status" -eq 0 ]
	[[ $stderr == *"INFO NET/devmem : NCCL_PROTO=Simple: NCCL's device unpack works with nothing else"* ]]
	[[ $stderr == *"INFO NET/devmem : NCCL_ALGO=Ring: NCCL's device unpack works with nothing else"* ]]
	NCCL_PROTO=simple NCCL_ALGO=^Tree h --sizes 1
	[ "$status" -eq 0 ]
	NCCL_PROTO=^LL128,LL NCCL_ALGO=ring h --sizes 1
	[ "$status" -eq 0 ]
	refused NCCL_PROTO=LL "NCCL_PROTO=LL: NCCL's device unpack needs Simple alone (unset it, or set Simple or ^LL,LL128)"
	refused NCCL_PROTO=^LL "NCCL_PROTO=^LL: NCCL's device unpack needs Simple alone (unset it, or set Simple or ^LL,LL128)"
	refused NCCL_PROTO=Simple,LL128 "NCCL_PROTO=Simple,LL128: NCCL's device unpack needs Simple alone (unset it, or set Simple or ^LL,LL128)"
	refused NCCL_ALGO=Tree "NCCL_ALGO=Tree: NCCL's device unpack needs Ring alone (unset it, or set Ring or ^Tree)"
	refused NCCL_ALGO=Ring,Tree "NCCL_ALGO=Ring,Tree: NCCL's device unpack needs Ring alone (unset it, or set Ring or ^Tree)"
}

@test "nccl: NCCL_DEBUG=INFO lists every variable" {
	h --sizes 1
	[ "$status" -eq 0 ]
	local v
	for v in IFNAME MODE QUEUES BUFFER BUFFER_SIZE RX_PAGE_SIZE COPY_BUFFER_SIZE NSOCKS PROXY_COPY GPU TRACE; do
		[[ $stderr == *"INFO NET/devmem : NCCL_DEVMEM_$v="* ]]
	done
	[[ $stderr == *"INFO NET/devmem : device lo (index 1, 127.0.0.1, MTU 65536), mode auto, 2 data socket(s) per comm, messages of up to 4194304 bytes"* ]]
}

@test "nccl: the plugin exports NCCL's two tables alone and links no CUDA or NCCL" {
	run nm -D --defined-only "$PLUGIN"
	[ "$status" -eq 0 ]
	[ "$(awk '{ print $3 }' <<<"$output" | sort | tr '\n' ' ')" = "ncclNetPlugin_v11 ncclNetPlugin_v7 " ]
	run readelf -d "$PLUGIN"
	[ "$status" -eq 0 ]
	[[ $output != *libcuda* ]]
	[[ $output != *libnccl.so* ]]
	[[ $output != *libdevmem* ]]
}
