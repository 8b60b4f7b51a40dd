/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ncdevmem: a netcat for device-memory TCP, on libdevmem.
 *
 * The parts: args.c (the command line, unit-tested on the host through
 * --dry-run), server.c (-l: NIC set-up, bind-rx, devmem receive,
 * validation, token return), client.c (the client's connection and
 * summary, and the plain TCP sender of stdin or of the pattern),
 * client-devmem.c (the client with -f: the stream sent from a dma-buf
 * bound for tx), util.c (messages, time, the pattern), main.c.
 */
#ifndef NCDEVMEM_H
#define NCDEVMEM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROG		"ncdevmem"

/* Exit statuses. */
#define EXIT_PASS	0
#define EXIT_FAIL	1
#define EXIT_USAGE	2
#define EXIT_SKIP	77	/* a capability the run needs is absent */

/* The largest period of the pattern (see pattern_byte()). */
#define PATTERN_MAX_PERIOD	256

enum dmabuf_provider { DMABUF_UDMABUF, DMABUF_HEAP, DMABUF_CUDA };

struct config {
	bool server;			/* -l */
	const char *server_ip;		/* -s */
	const char *client_ip;		/* -c */
	const char *port;		/* -p, validated: 1-65535 */
	unsigned int period;		/* -v; 0: no validation */
	int queues;			/* -q; 1 by default */
	int first_queue;		/* -t; -1: the last -q rx queues */
	const char *ifname;		/* -f */
	bool plain;			/* --plain: the client without devmem */
	bool devmem_tx;			/* client with -f and not --plain */
	bool no_setup;			/* -n */
	bool fail_on_linear;		/* -L */
	uint32_t rx_page_size;		/* -b; 0: not asked for */
	uint64_t bytes;			/* --bytes; see has_bytes */
	bool has_bytes;
	size_t chunk;			/* -z: bytes per send() (plain client),
					 * per iovec (devmem client; 0: any) */
	const char *output;		/* -o: received payload; "-": stdout */
	const char *ready_file;		/* -r */
	const char *trace;		/* --trace: the receive's fragment list */
	enum dmabuf_provider provider;	/* --dmabuf */
	const char *heap;		/* --dmabuf heap:NAME (NULL: system) */
	int cuda_device;		/* --dmabuf cuda:N */
	size_t dmabuf_size;		/* --dmabuf-size */
	bool progress;			/* --progress: also when stderr is no tty */
	bool json;			/* --json: the summary as one JSON object */
	bool dry_run;			/* --dry-run */
};

/*
 * Parse the command line into @cfg. Returns 0 to run; EXIT_USAGE with a
 * message for people in @err (of @errlen bytes); -1 for --help. Uses
 * getopt_long(): resets optind first, so it may be called repeatedly.
 */
int parse_args(int argc, char **argv, struct config *cfg, char *err,
	       size_t errlen);
void usage(FILE *f);
/* --dry-run: the configuration, one "key=value" per line. */
void print_config(FILE *f, const struct config *cfg);
/* "64M" and the like: K, M, G suffixes, powers of 1024. */
int parse_size(const char *s, uint64_t *v);

int run_server(const struct config *cfg);
int run_client(const struct config *cfg);
int run_client_devmem(const struct config *cfg);

/* client.c, for both clients */
struct client_stats {
	uint64_t bytes;			/* sent (devmem: queued) */
	double secs;
	const char *failure;		/* NULL: pass */
	/* devmem */
	uint32_t dmabuf_id;
	uint64_t spans;			/* spans handed to devmem_send() */
	uint64_t completed;		/* bytes the kernel reported done */
};
/* Connected to -s/-p, from -c, through -f; -1 after saying why. */
int client_connect(const struct config *cfg);
/* Shut our side down and wait for the peer to close; -1 after saying
 * why (and setting st->failure).
 */
int client_finish(int fd, struct client_stats *st);
void client_summary(const struct config *cfg, const struct client_stats *st);

/* util.c */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Say a failure on stderr ("skip: " first for EXIT_SKIP); the first one
 * of a run is also kept: its text in @why (of @whylen bytes), *@failure
 * pointing there, *@status set to @status.
 */
void note_failure(const char **failure, int *status, char *why,
		  size_t whylen, int new_status, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));
double now_s(void);
/* Set by SIGINT and SIGTERM (installed by install_signals()). */
extern volatile int stop_requested;
void install_signals(void);
/* Hold SIGINT and SIGTERM back (pending) or let them through again. */
void signals_hold(bool hold);
/* Close memstream @m and write its text to @dst in one write(), so that
 * a summary is never cut by another process's lines on the same terminal.
 */
void emit_block(FILE *dst, FILE *m, char **text, size_t *len);
/* Live throughput on stderr, once a second, when enabled. */
struct progress {
	bool on;
	double start, last;
	uint64_t last_bytes;
};
void progress_init(struct progress *p, bool forced, double start);
void progress_tick(struct progress *p, const char *verb, uint64_t bytes,
		   uint64_t frags, bool with_frags);

/*
 * The pattern of mainline's ncdevmem -v N: stream byte i is
 * (i + 1) % P, or '\n' (0x0a) where that is 0, with P = min(N, 256)
 * (N >= 2). For -v 7 it is "\x01\x02\x03\x04\x05\x06\n" repeated, what
 * `yes "$(printf '\1\2\3\4\5\6')"` writes.
 */
static inline unsigned int pattern_period(unsigned int n)
{
	return n > PATTERN_MAX_PERIOD ? PATTERN_MAX_PERIOD : n;
}

static inline uint8_t pattern_byte(unsigned int period, uint64_t off)
{
	unsigned int s = (off + 1) % period;

	return s ? s : '\n';
}

/* The pattern from offset 0, long enough that (ref + off % P, len) is
 * valid for len <= PATTERN_REF_SPAN.
 */
#define PATTERN_REF_SPAN	(64 * 1024)
struct pattern {
	unsigned int period;
	uint8_t ref[PATTERN_REF_SPAN + PATTERN_MAX_PERIOD];
};
void pattern_init(struct pattern *p, unsigned int period);
/* Bytes [@off, @off + @len) of the stream: a pointer into p->ref. */
static inline const uint8_t *pattern_at(const struct pattern *p, uint64_t off)
{
	return p->ref + off % p->period;
}

/* Validation state of a received stream. */
struct checker {
	struct pattern pat;
	uint64_t mismatches;		/* bytes that differ */
	uint64_t first_bad;		/* offset of the first */
	uint8_t first_got, first_want;
};
/* Check @len bytes at stream offset @off. */
void checker_feed(struct checker *c, uint64_t off, const uint8_t *buf,
		  size_t len);

#endif /* NCDEVMEM_H */
