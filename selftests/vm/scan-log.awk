# SPDX-License-Identifier: GPL-2.0
#
# The kernel-log classifier behind selftests/vm/scan-log (see there); kept
# apart so that the test VM can run it with one exec of awk:
#   dmesg | awk -v mark=MARK -f selftests/vm/scan-log.awk
function classify(l) {
	if (l ~ /Kernel panic - not syncing/)				return "panic"
	if (l ~ /BUG: KASAN:/)						return "KASAN"
	if (l ~ /kmemleak: [0-9]+ new suspected memory leak/ ||
	    l ~ /^unreferenced object 0x/)				return "kmemleak"
	if (l ~ /possible (circular|recursive) locking/ ||
	    l ~ /inconsistent lock state/ ||
	    l ~ /possible irq lock inversion/ ||
	    l ~ /suspicious RCU usage/ ||
	    l ~ /bad unlock balance detected/ ||
	    l ~ /held lock freed/ ||
	    l ~ /lock held when returning to user space/ ||
	    l ~ /lock held at task exit/ ||
	    l ~ /trying to register non-static key/ ||
	    l ~ /BUG: MAX_LOCK/ ||
	    l ~ /debug_locks_off|DEBUG_LOCKS_WARN_ON/)			return "lockdep"
	if (l ~ /^Oops: / || l ~ /general protection fault/ ||
	    l ~ /BUG: unable to handle/ || l ~ /kernel BUG at/ ||
	    l ~ /BUG: kernel NULL pointer dereference/ ||
	    l ~ /^invalid opcode: /)					return "oops"
	if (l ~ /UBSAN: /)						return "UBSAN"
	if (l ~ /INFO: task .* blocked for more than/ ||
	    l ~ /detected stalls on CPU|self-detected stall/)		return "hung"
	if (l ~ /^BUG: /)						return "BUG"
	if (l ~ /^WARNING: /)						return "WARNING"
	return ""
}
# A test that provokes a report on purpose announces it in the log first:
#   devmem-selftest: expect KIND at FUNCTION
# and ends the window with "devmem-selftest: expect end". In the window the
# first KIND report whose line names FUNCTION is not a problem; every
# other report still is.
function expect(l,	s) {
	s = substr(l, index(l, EXPECT) + length(EXPECT))
	sub(/\r$/, "", s)
	want = ""
	if (s == "end" || index(s, " at ") == 0)
		return
	want = substr(s, 1, index(s, " at ") - 1)
	want_at = substr(s, index(s, " at ") + 4)
}
BEGIN { EXPECT = "devmem-selftest: expect " }
mark != "" && index($0, mark) { seen = 1; found = 0; first = ""; want = ""; next }
mark != "" && !seen { next }
index($0, EXPECT) { expect($0); next }
{
	l = $0
	sub(/\r$/, "", l)
	sub(/^\[ *[0-9]+\.[0-9]+\] /, "", l)	# printk time
	sub(/^\[ *[CT][0-9]+\] /, "", l)	# printk caller id
	k = classify(l)
	if (k != "" && want != "" && k == want && index(l, want_at)) {
		want = ""
		next
	}
	if (k != "" && !found) { first = k ": " l; found = 1 }
	if (found && mark == "") exit
}
END {
	if (mark != "" && !seen) { print "marker not found"; exit 2 }
	if (found) print first
	exit found ? 1 : 0
}
