// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl: device-memory TCP from the command line, on libdevmem, in the
 * manner of iproute2:
 *
 *   devmemctl [-j] [-p] OBJECT [VERB] [ARGS]
 *
 * dev, queue and pool show what the kernel's netdev family reports;
 * setup and teardown prepare a NIC's rx queues and put it back; bind binds
 * a dma-buf to rx queues (or, bind tx, to a device for sending) and holds
 * the binding until it is told to stop.
 * "devmemctl help" and devmemctl(8) have the syntax.
 *
 * Errors go to standard error as "Error: <reason>", with the kernel's own
 * message when it refused a request. Exit status: 0, 1 for a failure, 2
 * for a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "devmemctl.h"

/* DEVMEMCTL_PARSE_ONLY=1: the parsed command as JSON, for the tests. */
static void print_parsed(const struct cmd *c)
{
	static const char *const dmabufs[] = {
		[DMABUF_UDMABUF] = "udmabuf",
		[DMABUF_HEAP] = "heap",
		[DMABUF_FD] = "fd",
		[DMABUF_UDMABUF_HUGE] = "udmabuf-huge",
	};
	char addr[INET6_ADDRSTRLEN];
	struct jw w;

	jw_init(&w, stdout, c->pretty);
	jw_obj_open(&w, NULL);
	jw_str(&w, "command", cmd_name(c->kind));
	jw_bool(&w, "json", c->json);
	jw_bool(&w, "pretty", c->pretty);
	if (c->help_topic)
		jw_str(&w, "topic", c->help_topic);
	if (c->kind == CMD_BIND)
		jw_str(&w, "direction", c->tx ? "tx" : "rx");
	if (c->dev)
		jw_str(&w, "dev", c->dev);
	if (c->has_queues) {
		jw_uint(&w, "first", c->first);
		jw_uint(&w, "last", c->last);
	}
	if (c->has_flow) {
		jw_obj_open(&w, "flow");
		jw_str(&w, "type", c->flow_type);
		jw_int(&w, "family", c->flow.family == AF_INET6 ? 6 : 4);
		if (c->flow.has_src)
			jw_str(&w, "src", inet_ntop(c->flow.family, c->flow.src,
						    addr, sizeof(addr)));
		jw_str(&w, "dst", inet_ntop(c->flow.family, c->flow.dst,
					    addr, sizeof(addr)));
		jw_uint(&w, "port", c->flow.dst_port);
		jw_obj_close(&w);
	}
	if (c->dmabuf != DMABUF_NONE) {
		jw_obj_open(&w, "dmabuf");
		jw_str(&w, "type", dmabufs[c->dmabuf]);
		if (c->dmabuf == DMABUF_FD)
			jw_int(&w, "fd", c->fd);
		else
			jw_uint(&w, "size", c->size);
		jw_obj_close(&w);
	}
	if (c->rx_page_size)
		jw_uint(&w, "rx_page_size", c->rx_page_size);
	jw_obj_close(&w);
	jw_finish(&w);
}

/* Standard output was written in full, or say why not. */
static int close_stdout(int rc)
{
	int err = 0;

	if (fflush(stdout))
		err = errno;
	else if (ferror(stdout))
		err = EIO;
	if (err && rc == EXIT_OK) {
		fprintf(stderr, "Error: writing the output: %s\n", strerror(err));
		rc = EXIT_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *parse_only = getenv(PARSE_ONLY_ENV);
	char err[256];
	struct cmd c;
	int rc;

	if (parse_cmdline(argc - 1, argv + 1, &c, err, sizeof(err))) {
		fflush(stdout);
		fprintf(stderr, "Error: %s\nTry '" PROG " help' for the syntax.\n",
			err);
		return EXIT_USAGE;
	}
	if (parse_only && !strcmp(parse_only, "1")) {
		print_parsed(&c);
		return close_stdout(EXIT_OK);
	}

	switch (c.kind) {
	case CMD_HELP:
		print_usage(stdout, c.help_topic);
		rc = EXIT_OK;
		break;
	case CMD_VERSION:
		printf(PROG " " DEVMEMCTL_VERSION "\n");
		rc = EXIT_OK;
		break;
	case CMD_DEV_SHOW:
		rc = do_dev_show(&c);
		break;
	case CMD_QUEUE_SHOW:
		rc = do_queue_show(&c);
		break;
	case CMD_POOL_SHOW:
		rc = do_pool_show(&c);
		break;
	case CMD_SETUP:
		rc = do_setup(&c);
		break;
	case CMD_TEARDOWN:
		rc = do_teardown(&c);
		break;
	case CMD_BIND:
		rc = do_bind(&c);
		break;
	default:
		fprintf(stderr, "Error: internal: command %d\n", (int)c.kind);
		rc = EXIT_FAIL;
	}
	return close_stdout(rc);
}
