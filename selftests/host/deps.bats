#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# scripts/deps.sh: what `make deps` installs and what the other targets check.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DEPS=$REPO/scripts/deps.sh

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups bash -s "$@" <"$DEPS"
}

@test "the package list names everything the issue asks for" {
	run "$DEPS" list
	[ "$status" -eq 0 ]
	for p in linux-source-6.1 gcc make flex bison bc libelf-dev libssl-dev \
		 ccache qemu-system-x86 bats iproute2 ethtool socat \
		 libnl-genl-3-dev liburing-dev pkg-config python3 perl; do
		grep -qx "$p" <<<"$output" || { echo "missing $p"; false; }
	done
}

@test "everything is installed here: ensure does nothing" {
	run "$DEPS" missing
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$DEPS" ensure
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "not root and a package missing: one line naming it, exit 1" {
	# the script from standard input: the repository may not be readable
	# by nobody
	DEPS_PACKAGES="bats devmem-no-such-package" run as_nobody ensure
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "deps: missing packages: devmem-no-such-package (install them as root: sudo make deps)" ]]
	DEPS_PACKAGES=bats run as_nobody install
	[ "$status" -eq 1 ]
	[[ $output == *"must be root"* ]]
}
