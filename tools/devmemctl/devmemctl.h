/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmemctl: the parts the command's files share. The command line is
 * parsed into a struct cmd by parse.c without touching the kernel; the
 * other files carry it out.
 */
#ifndef DEVMEMCTL_H
#define DEVMEMCTL_H

#include <stdint.h>
#include <stdio.h>

#include <devmem.h>

#define PROG			"devmemctl"
#define DEVMEMCTL_VERSION	"1.0"

/* Exit statuses. */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* the request failed: "Error: ..." */
#define EXIT_USAGE	2	/* the command line is wrong */

/* At most this many queues in one A-B range. */
#define MAX_QUEUES	1024U

/* Where libdevmem keeps a device's set-up state (its default). */
#define STATE_DIR_ENV		"DEVMEM_STATE_DIR"
#define STATE_DIR_DEFAULT	"/run/devmem"
/* Set to 1: print the parsed command as JSON, do nothing (tests). */
#define PARSE_ONLY_ENV		"DEVMEMCTL_PARSE_ONLY"

enum cmd_kind {
	CMD_HELP,		/* help [OBJECT], -h */
	CMD_VERSION,		/* -V */
	CMD_DEV_SHOW,
	CMD_QUEUE_SHOW,
	CMD_POOL_SHOW,
	CMD_SETUP,
	CMD_TEARDOWN,
	CMD_BIND,
};

enum dmabuf_src {
	DMABUF_NONE,
	DMABUF_UDMABUF,
	DMABUF_HEAP,
	DMABUF_FD,
	DMABUF_UDMABUF_HUGE,
};

struct cmd {
	enum cmd_kind kind;
	int json;			/* -j */
	int pretty;			/* -p */
	const char *help_topic;		/* help OBJECT: its name; NULL: all */

	const char *dev;		/* dev IF; NULL: not given */

	int has_queues;			/* queues A[-B] */
	uint32_t first, last;

	int has_flow;			/* flow tcp4|tcp6 ... */
	const char *flow_type;		/* "tcp4" or "tcp6" */
	const char *flow_src;		/* as given; NULL: any source */
	const char *flow_dst;
	struct devmem_flow flow;	/* filled in from the above */

	enum dmabuf_src dmabuf;		/* dmabuf ... */
	uint64_t size;			/* udmabuf, heap: bytes */
	int fd;				/* fd N */
	uint32_t rx_page_size;		/* rx-page-size N; 0: not given */

	int tx;				/* bind tx: for sending, no queues */
};

/*
 * parse.c: fill @c from the arguments after the program name. Touches
 * nothing outside the process. Returns 0, or -1 with the reason (no
 * "Error: " prefix) in @err.
 */
int parse_cmdline(int argc, char **argv, struct cmd *c, char *err,
		  size_t errlen);
/* The usage text: of one object (its name, as help_topic), or all. */
void print_usage(FILE *f, const char *topic);
/* The keyword of @kind ("dev", "bind", ...). */
const char *cmd_name(enum cmd_kind kind);

/* json.c: a streaming JSON writer (compact, or indented by 4). */
#define JW_MAX_DEPTH	16

struct jw {
	FILE *f;
	int pretty;
	int depth;
	int count[JW_MAX_DEPTH];	/* members written at each level */
};

void jw_init(struct jw *w, FILE *f, int pretty);
/* @key: the member's name inside an object; NULL inside an array or at
 * the top.
 */
void jw_obj_open(struct jw *w, const char *key);
void jw_obj_close(struct jw *w);
void jw_arr_open(struct jw *w, const char *key);
void jw_arr_close(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *v);
void jw_uint(struct jw *w, const char *key, uint64_t v);
void jw_int(struct jw *w, const char *key, int64_t v);
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
/* After the top-level value: the closing newline. */
void jw_finish(struct jw *w);
/* @s as a JSON string literal, quotes included: control characters
 * escaped, bytes that are not UTF-8 replaced by U+FFFD.
 */
void json_put_string(FILE *f, const char *s);

/* util.c */
void __attribute__((format(printf, 1, 2))) error_msg(const char *fmt, ...);
/* "Error: <what>: <devmem_last_error()>", or the bare reason when @what is
 * NULL. Returns EXIT_FAIL.
 */
int lib_error(const char *what);

/* Resolve dev IF; on failure prints the error and returns a negative
 * value.
 */
int resolve_dev(const char *dev);
/* The name of device @ifindex in @buf (IF_NAMESIZE bytes); NULL when it is
 * gone.
 */
const char *dev_name(int ifindex, char *buf);

/* show.c, bind.c, setup.c: carry out a command; return the exit status. */
int do_dev_show(const struct cmd *c);
int do_queue_show(const struct cmd *c);
int do_pool_show(const struct cmd *c);
int do_bind(const struct cmd *c);
int do_setup(const struct cmd *c);
int do_teardown(const struct cmd *c);

#endif /* DEVMEMCTL_H */
