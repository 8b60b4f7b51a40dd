// SPDX-License-Identifier: GPL-2.0
/* ncdevmem: messages, time, signals, progress, the pattern. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncdevmem.h"

volatile int stop_requested;

void msg(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* No SA_RESTART: a blocked accept(), connect(), recvmsg() or send()
 * returns EINTR, and the caller winds down (restoring the NIC).
 */
void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void signals_hold(bool hold)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(hold ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

void emit_block(FILE *dst, FILE *m, char **text, size_t *len)
{
	size_t done = 0;
	ssize_t n;

	fclose(m);
	fflush(dst);
	while (*text && done < *len) {
		n = write(fileno(dst), *text + done, *len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	free(*text);
	*text = NULL;
}

void progress_init(struct progress *p, bool forced, double start)
{
	p->on = forced || isatty(STDERR_FILENO);
	p->start = p->last = start;
	p->last_bytes = 0;
}

/* Once a second: "ncdevmem: 3 s: 120.0 MiB received, 0.335 Gbit/s ..." */
void progress_tick(struct progress *p, const char *verb, uint64_t bytes,
		   uint64_t frags, bool with_frags)
{
	double t;

	if (!p->on)
		return;
	t = now_s();
	if (t - p->last < 1.0)
		return;
	if (with_frags)
		fprintf(stderr, PROG ": %.0f s: %.1f MiB %s, %.3f Gbit/s, %llu devmem frags\n",
			t - p->start, bytes / 1048576.0, verb,
			(bytes - p->last_bytes) * 8 / (t - p->last) / 1e9,
			(unsigned long long)frags);
	else
		fprintf(stderr, PROG ": %.0f s: %.1f MiB %s, %.3f Gbit/s\n",
			t - p->start, bytes / 1048576.0, verb,
			(bytes - p->last_bytes) * 8 / (t - p->last) / 1e9);
	p->last = t;
	p->last_bytes = bytes;
}

void pattern_init(struct pattern *p, unsigned int period)
{
	size_t i;

	p->period = period;
	for (i = 0; i < sizeof(p->ref); i++)
		p->ref[i] = pattern_byte(period, i);
}

void checker_feed(struct checker *c, uint64_t off, const uint8_t *buf,
		  size_t len)
{
	size_t n, i;

	while (len) {
		n = len < PATTERN_REF_SPAN ? len : PATTERN_REF_SPAN;
		if (memcmp(buf, pattern_at(&c->pat, off), n)) {
			for (i = 0; i < n; i++) {
				uint8_t want = pattern_byte(c->pat.period, off + i);

				if (buf[i] == want)
					continue;
				if (!c->mismatches++) {
					c->first_bad = off + i;
					c->first_got = buf[i];
					c->first_want = want;
				}
			}
		}
		buf += n;
		off += n;
		len -= n;
	}
}

void note_failure(const char **failure, int *status, char *why,
		  size_t whylen, int new_status, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	msg("%s%s", new_status == EXIT_SKIP ? "skip: " : "", buf);
	if (!*failure) {
		snprintf(why, whylen, "%s", buf);
		*failure = why;
		*status = new_status;
	}
}
