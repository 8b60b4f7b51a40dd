#!/usr/bin/awk -f
# SPDX-License-Identifier: GPL-2.0
#
# The orders in which the teardown suites (selftests/lib/teardown.bash)
# tear a binding down.
#
#   awk -v mode=pairs|pairs:N|triples|triples:N|all [-v events=LIST] -f orders.awk
#
# Seven events, each at most once (events: a subset, in this order; by
# default all seven): sock (the receiving socket closes,
# holding tokens), nl (the binding's netlink socket closes), tokens (the
# application gives its tokens back), down (link down), chan (ethtool -L),
# del (the device goes), netns (ip netns del). Every permutation of
# the seven is played through a model of what each event leaves behind; an
# event that makes no sense where it stands is skipped there, with the
# reason:
#
#   tokens  after sock: closing the socket gave them back;
#   down    after del, or after netns: the netns has no name while the
#           sockets of devmem-hold keep it alive, and once it dies the device
#           comes home to init_net down;
#   chan    after del, or after netns while the netns is alive but has no
#           name (once it died, chan acts on the device in init_net).
#
# Permutations that leave the same sequence of events applied are the same
# test: each such sequence is printed once, as
#
#   EVENT... [# skipped: EVENT (reason), ...]
#
# mode=all prints every sequence (1004 of them for the seven). mode=pairs
# prints a subset in which every two events that follow each other in some
# sequence follow each other in a printed one (9 sequences for the seven,
# 7 without chan); mode=triples adds to those until the same holds for
# three events in a row (42 in all for the seven). With :N
# they stop at N sequences in all (mode=triples:N never prints fewer than
# the pairs). Each sequence added is the first (in the order of generation:
# permutations in lexicographic order of the event list above) that covers
# most of what is not yet covered, so the output is the same on every run.

function reason(e) {
	if (e == "tokens" && !sock)
		return "the socket's close gave them back"
	if ((e == "down" || e == "chan") && !dev)
		return "the device is gone"
	if ((e == "down" || e == "chan") && !named && !dead)
		return "nsb has no name and devmem-hold's sockets keep it alive"
	if (e == "down" && dead)
		return "the device came home to init_net down"
	return ""
}

# Play permutation p[1..n]; the applied sequence into seq, the skips into
# why.
function play(p, n,    i, e, r) {
	dev = 1; named = 1; dead = 0; nl = 1; sock = 1
	seq = ""; why = ""
	for (i = 1; i <= n; i++) {
		e = p[i]
		r = reason(e)
		if (r != "") {
			why = why (why == "" ? "" : ", ") e " (" r ")"
			continue
		}
		if (e == "del") dev = 0
		if (e == "netns") named = 0
		if (e == "nl") nl = 0
		if (e == "sock") sock = 0
		if (!named && !nl && !sock) dead = 1
		seq = seq (seq == "" ? "" : " ") e
	}
}

# The runs of k events in a row of sequence s, as keys of out.
function grams(s, k, out,    a, m, i, j, g) {
	delete out
	m = split(s, a, " ")
	for (i = 1; i + k - 1 <= m; i++) {
		g = a[i]
		for (j = 1; j < k; j++)
			g = g " " a[i + j]
		out[g] = 1
	}
}

# Add to the picked sequences, greedily, until every run of k events in
# a row of some sequence is in a picked one, or lim (if not 0) are
# picked: each time the first sequence that adds the most runs not yet
# covered.
function cover(k, lim,    s, x, c, best, bestn, left, want, got, g) {
	left = 0
	for (s = 1; s <= nseq; s++) {
		grams(order[s], k, g)
		for (x in g) {
			if (!(x in want)) { want[x] = 1; left++ }
			if (pick[s] && !(x in got)) { got[x] = 1; left-- }
		}
	}
	while (left > 0 && (!lim || npick < lim)) {
		best = 0; bestn = 0
		for (s = 1; s <= nseq; s++) {
			if (pick[s])
				continue
			grams(order[s], k, g)
			c = 0
			for (x in g)
				if (!(x in got)) c++
			if (c > bestn) { best = s; bestn = c }
		}
		pick[best] = 1
		npick++
		grams(order[best], k, g)
		for (x in g)
			if (!(x in got)) { got[x] = 1; left-- }
	}
}

BEGIN {
	if (events == "")
		events = "sock nl tokens down chan del netns"
	n = split(events, ev, " ")
	for (i = 1; i <= n; i++)
		idx[i] = i
	nseq = 0
	for (;;) {
		for (i = 1; i <= n; i++)
			p[i] = ev[idx[i]]
		play(p, n)
		if (!(seq in seen)) {
			seen[seq] = 1
			order[++nseq] = seq
			skips[nseq] = why
		}
		# next permutation of idx, lexicographic
		for (i = n - 1; i >= 1 && idx[i] > idx[i + 1]; i--)
			;
		if (i < 1)
			break
		for (j = n; idx[j] < idx[i]; j--)
			;
		t = idx[i]; idx[i] = idx[j]; idx[j] = t
		for (a = i + 1; a < n + i + 1 - a; a++) {
			b = n + i + 1 - a
			t = idx[a]; idx[a] = idx[b]; idx[b] = t
		}
	}

	lim = 0
	if (mode ~ /^(pairs|triples):[1-9][0-9]*$/) {
		lim = substr(mode, index(mode, ":") + 1) + 0
		mode = substr(mode, 1, index(mode, ":") - 1)
	}
	if (mode != "all" && mode != "pairs" && mode != "triples") {
		print "orders.awk: mode must be pairs[:N], triples[:N] or all" > "/dev/stderr"
		exit 2
	}
	for (s = 1; s <= nseq; s++)
		pick[s] = mode == "all"
	npick = 0
	if (mode == "pairs")
		cover(2, lim)
	if (mode == "triples") {
		cover(2, 0)
		cover(3, lim)
	}
	for (s = 1; s <= nseq; s++)
		if (pick[s])
			print order[s] (skips[s] == "" ? "" : " # skipped: " skips[s])
}
