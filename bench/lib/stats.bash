# SPDX-License-Identifier: GPL-2.0
#
# Figures of repeated runs, shared by the bench scripts.
#
# BENCH_SPREAD_MAX (percent, default 20): a set of runs whose spread
# (largest minus smallest, over the median) passes it is reported as not
# to be trusted. On a busy host, guest CPU time takes in the host's
# preemptions; make bench BENCH_SCHED=rt keeps the host from preempting
# the guest's vCPUs.

# median: the median of the numbers on standard input, one per line.
median() {
	sort -n | awk '{ v[NR] = $1 }
		END { m = int((NR + 1) / 2)
		      if (NR % 2) print v[m]; else printf "%.1f\n", (v[m] + v[m + 1]) / 2 }'
}

# spread VALUE...: (max - min) / median of VALUEs, in whole percent.
spread() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
		END { m = int((NR + 1) / 2)
		      med = NR % 2 ? v[m] : (v[m] + v[m + 1]) / 2
		      printf "%.0f\n", (med > 0 ? (v[NR] - v[1]) * 100 / med : 0) }'
}

# spread_check WHAT VALUE...: "spread N%"; and a warning naming WHAT on
# standard error when N passes BENCH_SPREAD_MAX.
spread_check() {
	local what=$1 s max=${BENCH_SPREAD_MAX:-20} hint="try make bench BENCH_SCHED=rt"
	shift
	[ "${BENCH_SCHED:-}" != rt ] || hint="more runs (-n) narrow the median"
	s=$(spread "$@")
	echo "spread $s%"
	case $max in ''|*[!0-9]*) max=20 ;; esac
	if [ "$s" -gt "$max" ]; then
		echo "bench: WARNING: $what: runs spread $s% (over $max%: the host was busy?" \
			"its median is not a figure to quote; $hint)" >&2
	fi
}

# bench_sched: one line saying how the host scheduled the guest's vCPUs
# and whether its CPUs were kept from idling (make bench passes
# BENCH_SCHED and BENCH_KEEP_BUSY).
bench_sched() {
	local busy="host CPUs kept busy at SCHED_IDLE"
	[ "${BENCH_KEEP_BUSY:-}" = 1 ] || busy="host CPUs free to idle"
	if [ "${BENCH_SCHED:-}" = rt ]; then
		echo "bench: host scheduling: SCHED_RR (host load cannot preempt the vCPUs), $busy"
	else
		echo "bench: host scheduling: normal (a busy host lengthens every figure), $busy"
	fi
}
