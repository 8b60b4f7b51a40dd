// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl bind: bind a dma-buf to rx queues, or (bind tx) to a device
 * for sending, and hold the binding.
 *
 * The kernel keeps the queues bound exactly as long as the netlink socket
 * that bound them is open, and that socket is the binding object's: the
 * command prints the binding's id, then waits for SIGINT, SIGTERM or
 * SIGHUP (in sigwait(), asleep), frees the binding, which unbinds, and
 * the buffer, and exits 0. Any other end of the process unbinds too.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "devmemctl.h"

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void ignore(int sig)
{
	(void)sig;
}

/*
 * Block the signals that end the hold, so that sigwait() takes them,
 * even one that comes while the binding is being made. A handler of our
 * own replaces an inherited SIG_IGN: a shell starts background jobs with
 * SIGINT ignored, and "kill -INT" must still end the hold.
 */
static int catch_stop_signals(sigset_t *set)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ignore;
	sigemptyset(&sa.sa_mask);
	sigemptyset(set);
	for (i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(set, stop_signals[i]);
	if (sigprocmask(SIG_BLOCK, set, NULL))
		return -errno;
	for (i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		if (sigaction(stop_signals[i], &sa, NULL))
			return -errno;
	return 0;
}

static const char *source_name(enum dmabuf_src s)
{
	switch (s) {
	case DMABUF_UDMABUF: return "udmabuf";
	case DMABUF_HEAP: return "heap";
	case DMABUF_FD: return "fd";
	case DMABUF_UDMABUF_HUGE: return "udmabuf-huge";
	default: return "?";
	}
}

static void print_bound(const struct cmd *c, struct devmem_binding *b,
			struct devmem_dmabuf *db)
{
	int ifindex = devmem_binding_ifindex(b);
	char buf[IF_NAMESIZE];
	const char *name = dev_name(ifindex, buf);
	struct jw w;
	uint32_t q;

	if (!c->json) {
		printf("bound dmabuf id %u to dev %s", devmem_binding_id(b),
		       name ? name : c->dev);
		if (c->tx)
			printf(" for tx");
		else if (c->last != c->first)
			printf(" queues %u-%u", c->first, c->last);
		else
			printf(" queues %u", c->first);
		if (c->rx_page_size)
			printf(" in buffers of %zu bytes",
			       devmem_binding_buffer_size(b));
		putchar('\n');
		return;
	}
	jw_init(&w, stdout, c->pretty);
	jw_obj_open(&w, NULL);
	jw_uint(&w, "dmabuf", devmem_binding_id(b));
	jw_int(&w, "ifindex", ifindex);
	if (name)
		jw_str(&w, "ifname", name);
	jw_str(&w, "direction", c->tx ? "tx" : "rx");
	if (!c->tx) {
		jw_arr_open(&w, "queues");
		for (q = c->first; ; q++) {
			jw_uint(&w, NULL, q);
			if (q == c->last)
				break;
		}
		jw_arr_close(&w);
	}
	jw_str(&w, "source", source_name(c->dmabuf));
	jw_uint(&w, "size", devmem_dmabuf_size(db));
	if (!c->tx)
		jw_uint(&w, "buffer_size", devmem_binding_buffer_size(b));
	jw_obj_close(&w);
	jw_finish(&w);
}

int do_bind(const struct cmd *c)
{
	struct devmem_binding *b = NULL;
	struct devmem_dmabuf *db = NULL;
	size_t nr = (size_t)(c->last - c->first) + 1, i;
	uint32_t *queues = NULL;
	int ifindex, err, sig, rc = EXIT_FAIL;
	sigset_t set;

	err = catch_stop_signals(&set);
	if (err) {
		error_msg("signals: %s", strerror(-err));
		return EXIT_FAIL;
	}
	ifindex = resolve_dev(c->dev);
	if (ifindex < 0)
		return EXIT_FAIL;

	switch (c->dmabuf) {
	case DMABUF_UDMABUF:
		err = devmem_dmabuf_new_udmabuf(&db, c->size);
		break;
	case DMABUF_UDMABUF_HUGE:
		err = devmem_dmabuf_new_udmabuf_huge(&db, c->size);
		break;
	case DMABUF_HEAP:
		err = devmem_dmabuf_new_heap(&db, NULL, c->size);
		break;
	case DMABUF_FD:
		err = devmem_dmabuf_new_import(&db, c->fd);
		break;
	default:
		err = -EINVAL;
	}
	if (err)
		return lib_error(NULL);

	/* a kernel refusal: its extack message, exactly */
	if (c->tx) {
		if (devmem_binding_new_tx(&b, ifindex, devmem_dmabuf_fd(db))) {
			lib_error(NULL);
			goto out;
		}
	} else {
		queues = calloc(nr, sizeof(*queues));
		if (!queues) {
			error_msg("out of memory");
			goto out;
		}
		for (i = 0; i < nr; i++)
			queues[i] = c->first + (uint32_t)i;
		if (devmem_binding_new_rx_sized(&b, ifindex, queues, nr,
						devmem_dmabuf_fd(db),
						c->rx_page_size)) {
			lib_error(NULL);
			goto out;
		}
	}

	print_bound(c, b, db);
	if (fflush(stdout)) {
		error_msg("writing the output: %s", strerror(errno));
		goto out;
	}
	if (ferror(stdout)) {
		error_msg("writing the output: %s", strerror(EIO));
		goto out;
	}
	do {
		err = sigwait(&set, &sig);
	} while (err == EINTR);
	if (err) {
		error_msg("sigwait: %s", strerror(err));
		goto out;
	}
	rc = EXIT_OK;
out:
	devmem_binding_free(b);
	devmem_dmabuf_free(db);
	free(queues);
	return rc;
}
