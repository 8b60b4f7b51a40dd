#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/deps.sh install   install every package the project needs (root)
# scripts/deps.sh ensure    install only if something is missing; not root and
#                         something missing: one-line error, exit 1
# scripts/deps.sh missing   print the missing packages, one a line
# scripts/deps.sh list      print every package the project needs
set -euo pipefail

PACKAGES=(
	# kernel base and build
	linux-source-6.1 gcc make flex bison bc libelf-dev libssl-dev ccache
	patch xz-utils cpio kmod
	# VM and tests
	qemu-system-x86 bats iproute2 ethtool socat procps util-linux
	tcpdump nftables iptables python3 perl
	# userspace
	libnl-genl-3-dev liburing-dev pkg-config g++ binutils man-db groff-base
	# the static libc the test programs link (selftests/progs)
	libc6-dev
)
# DEPS_PACKAGES replaces the list (the tests use it to see a missing one).
[ -n "${DEPS_PACKAGES:-}" ] && read -r -a PACKAGES <<<"$DEPS_PACKAGES"

missing() {
	local p st
	for p in "${PACKAGES[@]}"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || echo "$p"
	done
}

install() {
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q "$@"
}

case ${1:-ensure} in
list) printf '%s\n' "${PACKAGES[@]}" ;;
missing) missing ;;
install)
	[ "$(id -u)" = 0 ] || { echo "deps: must be root to install packages (try: sudo make deps)" >&2; exit 1; }
	install "${PACKAGES[@]}" ;;
ensure)
	mapfile -t need < <(missing)
	[ ${#need[@]} -eq 0 ] && exit 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing packages: ${need[*]} (install them as root: sudo make deps)" >&2
		exit 1
	fi
	echo "deps: installing ${need[*]}"
	install "${need[@]}" ;;
*) echo "usage: scripts/deps.sh [install|ensure|missing|list]" >&2; exit 2 ;;
esac
