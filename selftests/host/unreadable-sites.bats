#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The audit of the helpers that touch frag contents: every call site that
# selftests/host/unreadable-sites finds in the built kernel has exactly
# one verdict in docs/unreadable-skbs.md, and every verdict names a site
# that exists. The first tests need no kernel (the script's parser, and
# a small tree made here); the others read the kernel `make check`
# builds (build/kernel/src and build/kernel/obj) and are skipped without
# it.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
SITES=$REPO/selftests/host/unreadable-sites
DOC=$REPO/docs/unreadable-skbs.md
KSRC=$REPO/build/kernel/src
KOBJ=$REPO/build/kernel/obj

# The kernel's sites, listed once for the tests that read them (the
# small tree's tests cover --check reading a kernel itself).
setup_file() {
	if [ -f "$KOBJ/vmlinux.a" ] && [ -d "$KSRC/net" ]; then
		"$SITES" >"$BATS_FILE_TMPDIR/kernel-sites"
	fi
}

need_kernel() {
	[ -f "$KOBJ/vmlinux.a" ] && [ -d "$KSRC/net" ] ||
		skip "no built kernel in build/kernel (make check builds it)"
	[ -s "$BATS_FILE_TMPDIR/kernel-sites" ]
}

# A tree of two .c files and a header, one of the .c files linked into
# "vmlinux" (the thin archive vmlinux.a), the other a stale object; code
# under CONFIG_MOD (=m) and CONFIG_OFF (unset) is compiled out.
make_tree() {
	local t=$BATS_TEST_TMPDIR
	mkdir -p "$t/src/net" "$t/src/include/net" "$t/obj/net"
	cat >"$t/src/include/net/h.h" <<-'EOF'
	static inline void *hp(struct sk_buff *skb)
	{
		return skb_header_pointer(skb, 0, 1, NULL);
	}
	EOF
	cat >"$t/src/net/a.c" <<-'EOF'
	#include <net/h.h>
	int rx(struct sk_buff *skb)
	{
		if (!pskb_may_pull(skb, 20))
			return -1;
		return skb_copy_bits(skb, 0, NULL, 4) + skb_copy_bits(skb, 4, NULL, 4);
	}
	#ifdef CONFIG_MOD
	int mod(struct sk_buff *skb) { return skb_linearize(skb); }
	#endif
	#if IS_ENABLED(CONFIG_OFF)
	int off(struct sk_buff *skb) { return skb_checksum(skb, 0, 1, 0); }
	#endif
	void tx(struct sk_buff *skb, struct page *p)
	{
		kmap_local_page(skb_frag_page(&skb_shinfo(skb)->frags[0]));
	}
	EOF
	cat >"$t/src/net/stale.c" <<-'EOF'
	int old(struct sk_buff *skb) { return skb_store_bits(skb, 0, NULL, 1); }
	EOF
	printf 'CONFIG_NET=y\nCONFIG_MOD=m\n' >"$t/obj/.config"
	echo x >"$t/obj/net/a.o"
	echo x >"$t/obj/net/stale.o"
	printf 'deps_net/a.o := \\\n  %s/src/include/net/h.h \\\n' "$t" \
		>"$t/obj/net/.a.o.cmd"
	(cd "$t/obj" && ar rcTS vmlinux.a net/a.o)
}

TREE_SITES="include/net/h.h hp skb_header_pointer
net/a.c rx pskb_may_pull
net/a.c rx skb_copy_bits
net/a.c tx kmap_local_page
net/a.c tx skb_frag_page"

# doc KEY...: a document with one sites block holding KEY...
doc() {
	printf '# verdicts\n\nSafe.\n\n<!-- sites\n'
	printf '%s\n' "$@"
	printf -- '-->\n'
}

@test "the parser passes its own samples" {
	run "$SITES" --selftest
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "a small tree: only linked objects, only compiled code, no line numbers" {
	make_tree
	run "$SITES" "$BATS_TEST_TMPDIR/src" "$BATS_TEST_TMPDIR/obj"
	[ "$status" -eq 0 ]
	[ "$output" = "$TREE_SITES" ]
	run "$SITES" --where "$BATS_TEST_TMPDIR/src" "$BATS_TEST_TMPDIR/obj"
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "net/a.c rx skb_copy_bits	net/a.c:6" ]
}

@test "a small tree: a document that gives each site one verdict passes" {
	make_tree
	mapfile -t keys <<<"$TREE_SITES"
	doc "${keys[@]}" >"$BATS_TEST_TMPDIR/doc.md"
	run "$SITES" --check "$BATS_TEST_TMPDIR/doc.md" "$BATS_TEST_TMPDIR/src" "$BATS_TEST_TMPDIR/obj"
	[ "$status" -eq 0 ]
	[ "$output" = "5 sites, each with one verdict" ]
}

@test "a small tree: a verdict for no site, and a site with two, fail and are named" {
	make_tree
	mapfile -t keys <<<"$TREE_SITES"
	doc "${keys[@]}" "net/a.c rx skb_copy_bits" "net/stale.c old skb_store_bits" \
		>"$BATS_TEST_TMPDIR/doc.md"
	run "$SITES" --check "$BATS_TEST_TMPDIR/doc.md" "$BATS_TEST_TMPDIR/src" "$BATS_TEST_TMPDIR/obj"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "no such site: net/stale.c old skb_store_bits" ]
	[ "${lines[1]}" = "two verdicts in $BATS_TEST_TMPDIR/doc.md: net/a.c rx skb_copy_bits" ]
}

@test "the built kernel: every call site has exactly one verdict in docs/unreadable-skbs.md" {
	need_kernel
	run "$SITES" --check "$DOC" --list "$BATS_FILE_TMPDIR/kernel-sites"
	# on failure: the sites without a verdict, the verdicts without a site
	echo "$output"
	[ "$status" -eq 0 ]
	n=$("$SITES" --doc "$DOC" | wc -l)
	[ "$n" -eq "$(wc -l <"$BATS_FILE_TMPDIR/kernel-sites")" ]
	[ "$output" = "$n sites, each with one verdict" ]
}

@test "the built kernel: a site whose verdict is removed fails the check, named" {
	need_kernel
	local key='net/ipv4/tcp_input.c tcp_urg skb_copy_bits'
	local list=$BATS_FILE_TMPDIR/kernel-sites
	grep -qxF "$key" "$list"
	grep -qxF "$key" "$DOC"
	grep -vxF "$key" "$DOC" >"$BATS_TEST_TMPDIR/doc.md"
	run "$SITES" --check "$BATS_TEST_TMPDIR/doc.md" --list "$list"
	[ "$status" -eq 1 ]
	[ "$output" = "no verdict in $BATS_TEST_TMPDIR/doc.md: $key" ]
}
