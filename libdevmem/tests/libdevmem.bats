#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# libdevmem on the host: builds the library and its test programs, runs
# each program (exit 0 pass, 1 fail, 77 skip with the reason it printed),
# then checks the build itself: a second make does nothing, the public
# header stands alone, the shared library exports exactly the public
# functions, and an installed copy works through pkg-config.
#
#   bats libdevmem/tests/libdevmem.bats

setup_file() {
	export LIB="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	export O="$(cd "$LIB/.." && pwd)/build/libdevmem"
	export DEST="$BATS_FILE_TMPDIR/root"
	MULTIARCH=$(gcc -print-multiarch 2>/dev/null || true)
	export PFX=/opt/devmem
	# the library's directory under PFX: Debian's multiarch one
	export LIBSUB="lib${MULTIARCH:+/$MULTIARCH}"
	make -s -C "$LIB" all tests >&2
	make -s -C "$LIB" install DESTDIR="$DEST" PREFIX="$PFX" >&2
}

# Run test program $1; 77 becomes a skip with its "skip: " reason.
run_prog() {
	run "$O/tests/$1" "${@:2}"
	echo "$output"
	if [ "$status" -eq 77 ]; then
		skip "$(sed -n 's/^skip: //p' <<<"$output" | head -n 1)"
	fi
	[ "$status" -eq 0 ]
}

@test "version: the macros, devmem_version(), the pc file and the soname agree" {
	run_prog version
	local major minor
	major=$(sed -n 's/^#define DEVMEM_VERSION_MAJOR[[:space:]]*//p' "$LIB/include/devmem.h")
	minor=$(sed -n 's/^#define DEVMEM_VERSION_MINOR[[:space:]]*//p' "$LIB/include/devmem.h")
	run pkg-config --modversion "$O/libdevmem.pc"
	[ "$output" = "$major.$minor" ]
	run readelf -d "$O/libdevmem.so.$major"
	[[ $output == *"Library soname: [libdevmem.so.$major]"* ]]
	run readelf --dyn-syms --wide "$O/libdevmem.so.$major"
	[[ $output == *" devmem_version@@LIBDEVMEM_$major.0"* ]]
}

@test "errors: every call that can fail leaves its own reason, every success an empty one" {
	run_prog errors
}

@test "cmsg: parsing devmem control messages" {
	run_prog cmsg
}

@test "recv: devmem_recv grows its control buffer, loses nothing" {
	run_prog recv
}

@test "uring: io_uring receive on loopback TCP and against the fake kernel: growth, -EBUSY, EOF, cancel" {
	run_prog uring
	[[ $output == *"ok completion-size"* ]]
}

@test "uring: devmem_urecv on the test's own ring: resubmission after ETOOSMALL, ordered segments, errors, loopback TCP" {
	run_prog uring
	[[ $output == *"ok urecv-args"* ]]
	[[ $output == *"ok urecv-synthetic"* ]]
	[[ $output == *"ok urecv-ring-fake"* ]]
	[[ $output == *"ok urecv-ring-tcp"* ]]
	[[ $output == *"ok urecv-ring-many"* ]]
}

@test "send: cmsg and iovecs, splits at 1024 iovecs and 1 GiB, completion reports in and out of order, ranged, wrapping, refused" {
	run_prog send
	[[ $output == *"ok iov-max"* ]]
	[[ $output == *"ok wrap"* ]]
}

@test "recycle: token batching, merging and splitting" {
	run_prog recycle
}

@test "recycle-socket: SO_DEVMEM_DONTNEED on a loopback TCP socket" {
	run_prog recycle-socket
}

@test "dmabuf: argument checks, import, absent providers" {
	run_prog dmabuf
}

@test "udmabuf: allocate, write, read back" {
	run_prog udmabuf
}

@test "dma-heap: allocate, write, read back" {
	run_prog dma-heap
}

@test "cuda: GPU memory as a dma-buf" {
	run_prog cuda
}

@test "cuda-fake: every driver failure, free order, GPU unpack batches (a fake libcuda)" {
	LD_LIBRARY_PATH="$O/tests/fake-cuda" run_prog cuda-fake
	# with the unpack kernel built (nvcc.vars: "NVCC|ARCHS"), its cases
	# ran; without, the refusal
	if [[ $(cat "$O/nvcc.vars") != "|"* ]]; then
		[[ $output == *"ok unpack: a batch"* ]]
	else
		[[ $output == *"ok unpack: built without nvcc"* ]]
	fi
}

@test "cuda-fake old: a driver before CUDA 11.7 is refused by name" {
	LD_LIBRARY_PATH="$O/tests/fake-cuda-old" run_prog cuda-fake old
	[[ $output == *"ok old driver"* ]]
}

@test "cuda-fake nodriver: no libcuda.so.1 is ENOENT with the loader's reason" {
	LD_LIBRARY_PATH="$BATS_TEST_TMPDIR" run_prog cuda-fake nodriver
	[[ $output == *"ok no driver"* ]]
}

@test "without nvcc the library builds the same API, and GPU unpack says why it is absent" {
	local o=$BATS_TEST_TMPDIR/nonvcc
	make -s -C "$LIB" O="$o" NVCC= all "$o/tests/cuda-fake" "$o/tests/fake-cuda/libcuda.so.1" >&2
	[ ! -e "$o/obj/unpack.fatbin" ]
	run bash -c "nm -D --defined-only '$o/libdevmem.so.1' | grep -c ' T devmem_unpack_'"
	[ "$output" = 4 ]
	run env LD_LIBRARY_PATH="$o/tests/fake-cuda" "$o/tests/cuda-fake"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ok unpack: built without nvcc"* ]]
}

@test "netlink: dumps, device names, bind-rx refused with the kernel's errno and extack" {
	run_prog netlink
}

@test "netlink-layer: extack passed through, acks, dump errors, late answers skipped" {
	run_prog netlink-layer
}

@test "nic: flows parsed, argument checks, state files saved, loaded and refused, lo's refusals" {
	run_prog nic
}

@test "a second make rebuilds nothing" {
	make -s -C "$LIB" all tests
	run make -q -C "$LIB" all tests
	[ "$status" -eq 0 ]
	run make -C "$LIB" all tests
	[ "$status" -eq 0 ]
	[[ "$output" != *"cc "* ]]
	[[ "$output" != *"ar "* ]]
}

# Only the installed include directory, on a host whose headers lack the
# devmem ABI: nothing else may be needed.
@test "devmem.h compiles alone: C99, C11, C++" {
	local inc="$DEST$PFX/include" std
	for std in c99 c11; do
		echo '#include <devmem.h>' |
			gcc -std=$std -Wall -Wextra -Werror -pedantic -I"$inc" \
				-x c -c -o /dev/null -
	done
	for std in c++11 c++17; do
		echo '#include <devmem.h>' |
			g++ -std=$std -Wall -Wextra -Werror -pedantic -I"$inc" \
				-x c++ -c -o /dev/null -
	done
	# It includes no header of ours and no kernel header.
	run grep -E '^#include' "$inc/devmem.h"
	[[ "$output" != *'"'* ]]
	[[ "$output" != *linux/* ]]
}

@test "libdevmem.so exports exactly the functions of devmem.h" {
	local header map exported
	header=$(grep -E '^[a-z]' "$LIB/include/devmem.h" |
		 grep -oE '\bdevmem_[a-z_]+\(' | tr -d '(' | sort -u)
	map=$(sed -n '/global:/,/local:/p' "$LIB/libdevmem.map" |
	      grep -oE '\bdevmem_[a-z_]+' | sort -u)
	exported=$(nm -D --defined-only "$O/libdevmem.so.1" |
		   awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
	echo "header: $header"
	echo "exported: $exported"
	[ -n "$header" ]
	[ "$header" = "$map" ]
	[ "$header" = "$exported" ]
	# Every export carries the version of the map's node that names it,
	# and nothing else leaks.
	run bash -c "nm -D --defined-only '$O/libdevmem.so.1' | grep -v ' A ' | awk '{ print \$3 }' | sort"
	exported=$output
	run awk '/^LIBDEVMEM_/ { node = $1 } /^\t\tdevmem_/ { sub(/;/, ""); print $1 "@@" node }' "$LIB/libdevmem.map"
	[ "$exported" = "$(sort <<<"$output")" ]
	# 1.0 stays as released; 1.1 adds the send side, 1.2 rx page sizes,
	# 1.3 the mapped view and tagged sends, 1.4 the binding size check
	[[ $exported == *"devmem_recv@@LIBDEVMEM_1.0"* ]]
	[[ $exported == *"devmem_send@@LIBDEVMEM_1.1"* ]]
	[[ $exported == *"devmem_binding_new_rx_sized@@LIBDEVMEM_1.2"* ]]
	[[ $exported == *"devmem_dmabuf_map@@LIBDEVMEM_1.3"* ]]
	[[ $exported == *"devmem_send_tagged@@LIBDEVMEM_1.3"* ]]
	[[ $exported == *"devmem_binding_new_rx_flags@@LIBDEVMEM_1.4"* ]]
	run readelf -d "$O/libdevmem.so.1"
	[[ "$output" == *"Library soname: [libdevmem.so.1]"* ]]
}

@test "every page of a function added after 1.0 says since which version; libdevmem(7) names the current one" {
	local node fn n=0 major minor page so other
	while read -r node fn; do
		[ "$node" != LIBDEVMEM_1.0 ] || continue
		page=$LIB/man/$fn.3
		# a page that is another's (.so man3/OTHER.3)
		if read -r so other <"$page" && [ "$so" = .so ]; then
			page=$LIB/man/${other#man3/}
		fi
		echo "$fn: ${node#LIBDEVMEM_} in ${page##*/}"
		grep -qE "^Since libdevmem ${node#LIBDEVMEM_}([^.0-9]|\.$|$)" "$page"
		n=$((n + 1))
	done < <(awk '/^LIBDEVMEM_/ { node = $1 } /^\t\tdevmem_/ { sub(/;/, ""); print node, $1 }' "$LIB/libdevmem.map")
	[ "$n" -ge 10 ]
	major=$(sed -n 's/^#define DEVMEM_VERSION_MAJOR[[:space:]]*//p' "$LIB/include/devmem.h")
	minor=$(sed -n 's/^#define DEVMEM_VERSION_MINOR[[:space:]]*//p' "$LIB/include/devmem.h")
	grep -q "^\.TH LIBDEVMEM 7 .* \"libdevmem $major\.$minor\" " "$LIB/man/libdevmem.7"
}

@test "make install lays out header, libraries, pc file and man pages" {
	local r="$DEST$PFX" f
	[ -f "$r/include/devmem.h" ]
	# the file carries the whole version; the soname and the link
	# programs are built with lead to it
	[ -f "$r/$LIBSUB/libdevmem.so.1.4.0" ]
	[ ! -L "$r/$LIBSUB/libdevmem.so.1.4.0" ]
	[ "$(readlink "$r/$LIBSUB/libdevmem.so.1")" = libdevmem.so.1.4.0 ]
	[ "$(readlink "$r/$LIBSUB/libdevmem.so")" = libdevmem.so.1 ]
	[ -f "$r/$LIBSUB/libdevmem.a" ]
	[ -f "$r/$LIBSUB/pkgconfig/libdevmem.pc" ]
	grep -qx "libdir=\${prefix}/$LIBSUB" "$r/$LIBSUB/pkgconfig/libdevmem.pc"
	[ -f "$r/share/man/man7/libdevmem.7" ]
	# A page for every exported function, rendering without warnings.
	for f in $(sed -n '/global:/,/local:/p' "$LIB/libdevmem.map" |
		   grep -oE '\bdevmem_[a-z_]+'); do
		[ -f "$r/share/man/man3/$f.3" ]
	done
	cd "$r/share/man"
	for f in man3/*.3 man7/*.7; do
		run env MANWIDTH=80 man --warnings -l "$f" \
			2>"$BATS_TEST_TMPDIR/warnings"
		[ "$status" -eq 0 ]
		[ -n "$output" ]
		echo "$f: $(cat "$BATS_TEST_TMPDIR/warnings")"
		[ ! -s "$BATS_TEST_TMPDIR/warnings" ]
	done
}

@test "pkg-config builds and runs a program against the installed copy" {
	local r="$DEST$PFX" prog="$BATS_TEST_TMPDIR/prog" pc="$BATS_TEST_TMPDIR/pc"
	local nl_cflags nl_static libs
	# The installed pc file as if installed at $r (a sysroot would move
	# libnl's paths too).
	mkdir -p "$pc"
	sed "s|^prefix=.*|prefix=$r|" "$r/$LIBSUB/pkgconfig/libdevmem.pc" >"$pc/libdevmem.pc"
	# libnl and liburing are the library's own business: no Requires,
	# their link flags in Libs.private only
	run grep -c '^Requires' "$pc/libdevmem.pc"
	[ "$output" = 0 ]
	nl_static=$(pkg-config --libs libnl-genl-3.0 liburing)
	# pkg-config sees nothing but this pc file, and needs nothing else
	export PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH=
	# (pkg-config ends its output with a space)
	run pkg-config --cflags libdevmem
	[ "$status" -eq 0 ]
	[ "${output% }" = "-I$r/include" ]
	run pkg-config --libs libdevmem
	[ "$status" -eq 0 ]
	[ "${output% }" = "-L$r/$LIBSUB -ldevmem" ]
	run pkg-config --modversion libdevmem
	[ "$output" = 1.4 ]
	cat >"$prog.c" <<-'EOF'
	#include <devmem.h>
	#include <errno.h>
	#include <stdio.h>
	int main(void)
	{
		struct devmem_dmabuf *db;
		struct devmem_queue *q = NULL;
		struct devmem_rx *rx;
		struct devmem_uring *u;
		ssize_t n;
		int err;

		if (devmem_rx_new(&rx, 0, 0))
			return 1;
		devmem_rx_free(rx);
		/* through liburing, where io_uring is allowed */
		err = devmem_uring_new(&u, 1, 0, 0);
		if (!err)
			devmem_uring_free(u);
		else if (err != -ENOSYS && err != -EPERM)
			return 1;
		if (devmem_dmabuf_new_import(&db, -1) != -EBADF)
			return 1;
		puts(devmem_last_error());
		/* through libnl: lo's queues, or no netdev family */
		n = devmem_queue_dump(&q, devmem_ifindex("lo"));
		if (n < 0 && n != -ENOENT)
			return 1;
		devmem_queue_dump_free(q);
		printf("%zd\n", n);
		return 0;
	}
	EOF
	gcc -Wall -Werror -o "$prog" "$prog.c" $(pkg-config --cflags --libs libdevmem)
	run env LD_LIBRARY_PATH="$r/$LIBSUB" "$prog"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ -n "${lines[0]}" ]
	run env LD_LIBRARY_PATH="$r/$LIBSUB" ldd "$prog"
	[[ "$output" == *"libdevmem.so.1 => $r/$LIBSUB/libdevmem.so.1"* ]]
	# The archive, with the private libraries --static adds.
	run pkg-config --static --libs libdevmem
	[ "${output% }" = "-L$r/$LIBSUB -ldevmem -ldl ${nl_static% }" ]
	libs=${output/-ldevmem/}
	gcc -Wall -Werror -o "$prog-static" "$prog.c" \
		$(pkg-config --cflags libdevmem) "$r/$LIBSUB/libdevmem.a" $libs
	run "$prog-static"
	[ "$status" -eq 0 ]
	run ldd "$prog-static"
	[[ "$output" != *libdevmem* ]]
	[[ "$output" == *libnl-genl-3* ]]
	[[ "$output" == *liburing* ]]
}
