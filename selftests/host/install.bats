#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# `make install` at the top, as a user sees it: what lands where under
# DESTDIR with PREFIX=/usr, a program built and linked through pkg-config
# alone (shared and static), the installed programs run, every installed
# man page renders without warnings, and `make uninstall` takes it all
# away again.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup_file() {
	export DEST=$BATS_FILE_TMPDIR/root
	make -s -C "$REPO" install DESTDIR="$DEST" PREFIX=/usr >&2
	# the library's directory: Debian's multiarch one under PREFIX
	local ma
	ma=$(gcc -print-multiarch 2>/dev/null || true)
	export L=$DEST/usr/lib${ma:+/$ma}
}

# pkg-config on the installed copy only: libdevmem.pc from DESTDIR, its
# prefix moved there, and nothing else (devmem.h needs no other package).
dpc() {
	PKG_CONFIG_LIBDIR="$L/pkgconfig" PKG_CONFIG_PATH= \
		pkg-config --define-variable=prefix="$DEST/usr" "$@"
}

@test "make install PREFIX=/usr: library, header, pc file, programs and every man page" {
	local f m
	[ -f "$DEST/usr/include/devmem.h" ]
	[ -f "$L/libdevmem.so.1.4.0" ]
	[ "$(readlink "$L/libdevmem.so.1")" = libdevmem.so.1.4.0 ]
	[ "$(readlink "$L/libdevmem.so")" = libdevmem.so.1 ]
	[ -f "$L/libdevmem.a" ]
	[ -f "$L/pkgconfig/libdevmem.pc" ]
	[ -x "$DEST/usr/bin/ncdevmem" ]
	[ -x "$DEST/usr/sbin/devmemctl" ]
	[ -f "$DEST/usr/share/man/man1/ncdevmem.1" ]
	[ -f "$DEST/usr/share/man/man8/devmemctl.8" ]
	[ -f "$DEST/usr/share/man/man7/libdevmem.7" ]
	[ -f "$L/libnccl-net-devmem.so" ]
	[ -f "$DEST/usr/share/man/man7/nccl-net-devmem.7" ]
	# the examples, as the tree has them, with their Makefile and README
	diff -r "$REPO/libdevmem/examples" "$DEST/usr/share/doc/libdevmem/examples"
	# every page the tree has, and nothing else
	for m in "$REPO"/libdevmem/man/*.3; do
		[ -f "$DEST/usr/share/man/man3/${m##*/}" ]
	done
	run bash -c "cd '$DEST' && find . ! -type d | wc -l"
	[ "$output" -eq $(($(ls "$REPO"/libdevmem/man/*.3 "$REPO"/libdevmem/examples/* | wc -l) + 13)) ]
	grep -qx 'prefix=/usr' "$L/pkgconfig/libdevmem.pc"
	# nothing installed points into the source tree
	run grep -rlF "$REPO" "$DEST/usr/include" "$L/pkgconfig" "$DEST/usr/share/man"
	[ "$status" -eq 1 ]
}

@test "a program builds, links and runs through pkg-config alone (shared and static)" {
	local p=$BATS_TEST_TMPDIR/prog
	run dpc --cflags libdevmem
	[ "$status" -eq 0 ]
	[ "${output% }" = "-I$DEST/usr/include" ]
	run dpc --libs libdevmem
	[ "$status" -eq 0 ]
	[ "${output% }" = "-L$L -ldevmem" ]
	cat >"$p.c" <<-'EOF'
	#include <devmem.h>
	#include <errno.h>
	#include <stdio.h>
	int main(void)
	{
		struct devmem_dmabuf *db;
		struct devmem_rx *rx;

		if (devmem_rx_new(&rx, 0, 0))
			return 1;
		devmem_rx_free(rx);
		if (devmem_dmabuf_new_import(&db, -1) != -EBADF)
			return 1;
		puts(devmem_last_error());
		return 0;
	}
	EOF
	# shared: the installed .so is the one that runs
	gcc -Wall -Werror -o "$p" "$p.c" $(dpc --cflags --libs libdevmem)
	run env LD_LIBRARY_PATH="$L" "$p"
	[ "$status" -eq 0 ]
	[ -n "$output" ]
	run env LD_LIBRARY_PATH="$L" LD_TRACE_LOADED_OBJECTS=1 "$p"
	[[ $output == *"libdevmem.so.1 => $L/libdevmem.so.1"* ]]
	# static: libdevmem.a and its private requirements from the pc file
	gcc -Wall -Werror -o "$p.static" "$p.c" $(dpc --cflags libdevmem) \
		"$L/libdevmem.a" $(dpc --static --libs-only-l libdevmem | sed 's/-ldevmem//')
	run "$p.static"
	[ "$status" -eq 0 ]
	run env LD_TRACE_LOADED_OBJECTS=1 "$p.static"
	[[ $output != *libdevmem* ]]
}

@test "the installed programs run: --help, exit 0" {
	run "$DEST/usr/bin/ncdevmem" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: ncdevmem"* ]]
	run "$DEST/usr/sbin/devmemctl" --help
	[ "$status" -eq 0 ]
	[[ $output == *"devmemctl"* ]]
}

@test "every installed man page renders with man --warnings, silently" {
	local f n=0
	cd "$DEST/usr/share/man"
	for f in man1/*.1 man3/*.3 man7/*.7 man8/*.8; do
		run env MANWIDTH=80 man --warnings -l "$f" \
			2>"$BATS_TEST_TMPDIR/warnings"
		[ "$status" -eq 0 ]
		[ -n "$output" ]
		echo "$f: $(cat "$BATS_TEST_TMPDIR/warnings")"
		[ ! -s "$BATS_TEST_TMPDIR/warnings" ]
		n=$((n + 1))
	done
	[ "$n" -eq $(($(ls "$REPO"/libdevmem/man/*.3 | wc -l) + 4)) ]
}

@test "make uninstall removes every file make install put there" {
	local d=$BATS_TEST_TMPDIR/root
	make -s -C "$REPO" install DESTDIR="$d" PREFIX=/usr >&2
	run bash -c "cd '$d' && find . ! -type d | wc -l"
	[ "$output" -gt 10 ]
	run make -s -C "$REPO" uninstall DESTDIR="$d" PREFIX=/usr
	[ "$status" -eq 0 ]
	run bash -c "cd '$d' && find . ! -type d"
	[ -z "$output" ]
}

@test "install honours BINDIR, SBINDIR, LIBDIR, INCLUDEDIR, MANDIR, DOCDIR" {
	local d=$BATS_TEST_TMPDIR/root
	make -s -C "$REPO" install DESTDIR="$d" PREFIX=/opt/dm BINDIR=/opt/b \
		SBINDIR=/opt/s LIBDIR=/opt/l INCLUDEDIR=/opt/i MANDIR=/opt/m \
		DOCDIR=/opt/d >&2
	[ -x "$d/opt/b/ncdevmem" ]
	[ -x "$d/opt/s/devmemctl" ]
	[ -f "$d/opt/l/libdevmem.so.1.4.0" ]
	[ -f "$d/opt/l/libnccl-net-devmem.so" ]
	[ -f "$d/opt/m/man7/nccl-net-devmem.7" ]
	[ -f "$d/opt/l/pkgconfig/libdevmem.pc" ]
	[ -f "$d/opt/i/devmem.h" ]
	[ -f "$d/opt/m/man3/devmem_recv.3" ]
	[ -f "$d/opt/m/man8/devmemctl.8" ]
	grep -qx 'libdir=/opt/l' "$d/opt/l/pkgconfig/libdevmem.pc"
	grep -qx 'includedir=/opt/i' "$d/opt/l/pkgconfig/libdevmem.pc"
	[ -f "$d/opt/d/examples/recv-checksum.c" ]
	[ ! -e "$d/opt/dm" ]
}

@test "the installed examples build with their own Makefile through pkg-config alone, and print their usage" {
	local ex=$BATS_TEST_TMPDIR/examples
	cp -r "$DEST/usr/share/doc/libdevmem/examples" "$ex"
	# (uring-recv drives a ring of its own: liburing's pc file too)
	PKG_CONFIG_PATH="$L/pkgconfig" make -s -C "$ex" \
		PKG_CONFIG="pkg-config --define-variable=prefix=$DEST/usr" \
		CFLAGS='-O2 -Wall -Wextra -Werror' LDFLAGS="-Wl,-rpath,$L" >&2
	run "$ex/recv-checksum"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: recv-checksum IFNAME ADDRESS PORT QUEUE" ]
	run "$ex/uring-recv"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: uring-recv IFNAME ADDRESS PORT QUEUE > FILE" ]
	run "$ex/nic-setup"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "usage: nic-setup IFNAME ADDRESS PORT QUEUE" ]
	run "$ex/fwd"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: fwd IFNAME ADDRESS PORT QUEUE OUT_IFNAME DEST_ADDRESS DEST_PORT [BUF_SIZE]" ]
	run "$ex/echo-server"
	[ "$status" -eq 2 ]
	[ "$output" = "usage: echo-server IFNAME ADDRESS PORT QUEUE CONNECTIONS" ]
	make -s -C "$ex" clean
	[ ! -e "$ex/recv-checksum" ]
	[ ! -e "$ex/echo-server" ]
}
