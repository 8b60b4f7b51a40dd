// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl dev|queue|pool show: the netdev family's queue and page-pool
 * dumps (libdevmem), as text or JSON. Everything is fetched before
 * anything is printed: a failure prints no partial output.
 *
 * Text keys are hyphenated (napi-id), JSON keys underscored (napi_id), as
 * in iproute2. Attributes the kernel did not send are left out of both.
 */
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "devmemctl.h"

/* The device filter: 0 for all, or the index; -1 after printing why not. */
static int filter(const struct cmd *c)
{
	return c->dev ? resolve_dev(c->dev) : 0;
}

/* A listing is one JSON array with -j, lines of text without. */
static void list_open(const struct cmd *c, struct jw *w)
{
	jw_init(w, stdout, c->pretty);
	if (c->json)
		jw_arr_open(w, NULL);
}

static void list_close(const struct cmd *c, struct jw *w)
{
	if (c->json) {
		jw_arr_close(w);
		jw_finish(w);
	}
}

static const char *qtype(enum devmem_queue_type t)
{
	return t == DEVMEM_QUEUE_RX ? "rx" : t == DEVMEM_QUEUE_TX ? "tx" : "?";
}

/* ifindex, and the name when the device is still there. */
static void text_dev(int ifindex)
{
	char name[IF_NAMESIZE];

	printf("ifindex %d", ifindex);
	if (dev_name(ifindex, name))
		printf(" dev %s", name);
}

static void json_dev(struct jw *w, int ifindex)
{
	char name[IF_NAMESIZE];

	jw_int(w, "ifindex", ifindex);
	if (dev_name(ifindex, name))
		jw_str(w, "ifname", name);
}

int do_queue_show(const struct cmd *c)
{
	struct devmem_queue *q = NULL;
	int ifindex = filter(c);
	ssize_t n, i;
	struct jw w;

	if (ifindex < 0)
		return EXIT_FAIL;
	n = devmem_queue_dump(&q, ifindex);
	if (n < 0)
		return lib_error(NULL);

	list_open(c, &w);
	for (i = 0; i < n; i++) {
		if (c->json) {
			jw_obj_open(&w, NULL);
			json_dev(&w, q[i].ifindex);
			jw_str(&w, "type", qtype(q[i].type));
			jw_uint(&w, "id", q[i].id);
			if (q[i].napi_id)
				jw_uint(&w, "napi_id", q[i].napi_id);
			if (q[i].dmabuf_id)
				jw_uint(&w, "dmabuf", q[i].dmabuf_id);
			jw_obj_close(&w);
			continue;
		}
		text_dev(q[i].ifindex);
		printf(" type %s id %u", qtype(q[i].type), q[i].id);
		if (q[i].napi_id)
			printf(" napi-id %u", q[i].napi_id);
		if (q[i].dmabuf_id)
			printf(" dmabuf %u", q[i].dmabuf_id);
		putchar('\n');
	}
	list_close(c, &w);
	devmem_queue_dump_free(q);
	return EXIT_OK;
}

int do_pool_show(const struct cmd *c)
{
	struct devmem_page_pool *p = NULL;
	int ifindex = filter(c);
	ssize_t n, i;
	struct jw w;

	if (ifindex < 0)
		return EXIT_FAIL;
	n = devmem_page_pool_dump(&p, ifindex);
	if (n < 0)
		return lib_error(NULL);

	list_open(c, &w);
	for (i = 0; i < n; i++) {
		uint32_t has = p[i].has;

		if (c->json) {
			jw_obj_open(&w, NULL);
			jw_uint(&w, "id", p[i].id);
			if (has & DEVMEM_PAGE_POOL_IFINDEX)
				json_dev(&w, p[i].ifindex);
			if (has & DEVMEM_PAGE_POOL_NAPI_ID)
				jw_uint(&w, "napi_id", p[i].napi_id);
			jw_uint(&w, "inflight", p[i].inflight);
			jw_uint(&w, "inflight_mem", p[i].inflight_mem);
			if (has & DEVMEM_PAGE_POOL_DMABUF)
				jw_uint(&w, "dmabuf", p[i].dmabuf_id);
			if (has & DEVMEM_PAGE_POOL_DETACH_TIME)
				jw_uint(&w, "detach_time", p[i].detach_time);
			jw_obj_close(&w);
			continue;
		}
		printf("id %llu", (unsigned long long)p[i].id);
		if (has & DEVMEM_PAGE_POOL_IFINDEX) {
			putchar(' ');
			text_dev(p[i].ifindex);
		}
		if (has & DEVMEM_PAGE_POOL_NAPI_ID)
			printf(" napi-id %u", p[i].napi_id);
		printf(" inflight %llu inflight-mem %llu",
		       (unsigned long long)p[i].inflight,
		       (unsigned long long)p[i].inflight_mem);
		if (has & DEVMEM_PAGE_POOL_DMABUF)
			printf(" dmabuf %u", p[i].dmabuf_id);
		if (has & DEVMEM_PAGE_POOL_DETACH_TIME)
			printf(" detach-time %llu",
			       (unsigned long long)p[i].detach_time);
		putchar('\n');
	}
	list_close(c, &w);
	devmem_page_pool_dump_free(p);
	return EXIT_OK;
}

/* One device of dev show. */
struct dev_summary {
	int ifindex;
	uint32_t rx, tx;
	/* bound rx queues, sorted by dmabuf id, then queue id */
	struct devmem_queue *bound;
	size_t nr_bound;
};

static int cmp_bound(const void *a, const void *b)
{
	const struct devmem_queue *x = a, *y = b;

	if (x->dmabuf_id != y->dmabuf_id)
		return x->dmabuf_id < y->dmabuf_id ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Queue ids of one binding (sorted) as "0,2-3". */
static void text_ranges(const struct devmem_queue *q, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i; j + 1 < n && q[j + 1].id == q[j].id + 1; j++)
			;
		printf("%s%u", i ? "," : "", q[i].id);
		if (j > i)
			printf("-%u", q[j].id);
		i = j + 1;
	}
}

static void print_dev(const struct cmd *c, struct jw *w,
		      const struct dev_summary *d)
{
	char name[IF_NAMESIZE];
	size_t i, j;

	if (c->json) {
		jw_obj_open(w, NULL);
		json_dev(w, d->ifindex);
		jw_uint(w, "rx_queues", d->rx);
		jw_uint(w, "tx_queues", d->tx);
		jw_arr_open(w, "bindings");
	} else {
		printf("%d: %s: rx-queues %u tx-queues %u\n", d->ifindex,
		       dev_name(d->ifindex, name) ? name : "-", d->rx, d->tx);
	}
	for (i = 0; i < d->nr_bound; i = j) {
		for (j = i; j < d->nr_bound &&
		     d->bound[j].dmabuf_id == d->bound[i].dmabuf_id; j++)
			;
		if (c->json) {
			size_t k;

			jw_obj_open(w, NULL);
			jw_uint(w, "dmabuf", d->bound[i].dmabuf_id);
			jw_arr_open(w, "queues");
			for (k = i; k < j; k++)
				jw_uint(w, NULL, d->bound[k].id);
			jw_arr_close(w);
			jw_obj_close(w);
		} else {
			printf("    dmabuf %u queues ", d->bound[i].dmabuf_id);
			text_ranges(&d->bound[i], j - i);
			putchar('\n');
		}
	}
	if (c->json) {
		jw_arr_close(w);
		jw_obj_close(w);
	}
}

int do_dev_show(const struct cmd *c)
{
	struct devmem_queue *q = NULL, *bound = NULL;
	struct dev_summary d;
	int ifindex = filter(c);
	ssize_t n, i, start;
	struct jw w;

	if (ifindex < 0)
		return EXIT_FAIL;
	n = devmem_queue_dump(&q, ifindex);
	if (n < 0)
		return lib_error(NULL);
	if (n && !(bound = malloc((size_t)n * sizeof(*bound)))) {
		devmem_queue_dump_free(q);
		error_msg("out of memory");
		return EXIT_FAIL;
	}

	list_open(c, &w);
	/* a device's queues are next to each other in the dump */
	for (start = 0; start < n; start = i) {
		memset(&d, 0, sizeof(d));
		d.ifindex = q[start].ifindex;
		d.bound = bound;
		for (i = start; i < n && q[i].ifindex == d.ifindex; i++) {
			if (q[i].type == DEVMEM_QUEUE_TX) {
				d.tx++;
				continue;
			}
			d.rx++;
			if (q[i].dmabuf_id)
				bound[d.nr_bound++] = q[i];
		}
		qsort(bound, d.nr_bound, sizeof(*bound), cmp_bound);
		print_dev(c, &w, &d);
	}
	/* a device that is down has no queues in the dump, but was asked
	 * for by name: show it, empty
	 */
	if (!n && ifindex) {
		memset(&d, 0, sizeof(d));
		d.ifindex = ifindex;
		print_dev(c, &w, &d);
	}
	list_close(c, &w);
	free(bound);
	devmem_queue_dump_free(q);
	return EXIT_OK;
}
