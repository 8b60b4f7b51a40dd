// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * What the application holds of each receive binding this process made:
 * the buffers behind tokens it was given and has not given back.
 *
 * The kernel cannot say: its page-pool "inflight" counts every buffer not
 * back in the binding, and a buffer whose token comes back goes to its
 * pool's cache, not to the binding, so for a binding no larger than those
 * caches inflight stays at the binding's size whether the flow runs or
 * stalls. The library sees both ends instead: a receive linked to a
 * recycler hands it each fragment it reports (devmem_recycler_note()),
 * and the recycler gives the buffer back here when the token goes back
 * to the kernel, or when the recycler is freed with its socket.
 *
 * A fragment never spans two buffers, and several fragments can share
 * one (a binding with an rx page size above a page packs segments), so
 * each buffer has a count of the fragments held in it; the buffers held
 * are those whose count is not zero.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

struct devmem_held {
	struct devmem_held *next;
	uint32_t id;
	size_t buffers;
	size_t buffer_size;
	uint32_t *refs;		/* fragments held in each buffer */
	uint64_t held;		/* buffers with refs */
	uint64_t tokens;	/* fragments held */
};

static pthread_mutex_t devmem_held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct devmem_held *devmem_held_list;

static struct devmem_held *devmem_held_find(uint32_t id)
{
	struct devmem_held *h;

	for (h = devmem_held_list; h; h = h->next)
		if (h->id == id)
			return h;
	return NULL;
}

int devmem_held_register(uint32_t id, size_t buffers, size_t buffer_size)
{
	struct devmem_held *h;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->refs = calloc(buffers ? buffers : 1, sizeof(*h->refs));
	if (!h->refs) {
		free(h);
		return -ENOMEM;
	}
	h->id = id;
	h->buffers = buffers;
	h->buffer_size = buffer_size;
	pthread_mutex_lock(&devmem_held_lock);
	h->next = devmem_held_list;
	devmem_held_list = h;
	pthread_mutex_unlock(&devmem_held_lock);
	return 0;
}

void devmem_held_unregister(uint32_t id)
{
	struct devmem_held **p, *h = NULL;

	pthread_mutex_lock(&devmem_held_lock);
	for (p = &devmem_held_list; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			h = *p;
			*p = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&devmem_held_lock);
	if (h) {
		free(h->refs);
		free(h);
	}
}

uint32_t devmem_held_take(uint32_t id, uint64_t offset)
{
	uint32_t buf = DEVMEM_HELD_NONE;
	struct devmem_held *h;

	pthread_mutex_lock(&devmem_held_lock);
	h = devmem_held_find(id);
	if (h && offset / h->buffer_size < h->buffers) {
		buf = (uint32_t)(offset / h->buffer_size);
		if (!h->refs[buf]++)
			h->held++;
		h->tokens++;
	}
	pthread_mutex_unlock(&devmem_held_lock);
	return buf;
}

void devmem_held_put(uint32_t id, uint32_t buf)
{
	struct devmem_held *h;

	pthread_mutex_lock(&devmem_held_lock);
	h = devmem_held_find(id);
	if (h && buf < h->buffers && h->refs[buf]) {
		if (!--h->refs[buf])
			h->held--;
		h->tokens--;
	}
	pthread_mutex_unlock(&devmem_held_lock);
}

uint64_t devmem_held_get(uint32_t id, uint64_t *tokens)
{
	struct devmem_held *h;
	uint64_t held = 0;

	pthread_mutex_lock(&devmem_held_lock);
	h = devmem_held_find(id);
	if (h) {
		held = h->held;
		if (tokens)
			*tokens = h->tokens;
	} else if (tokens) {
		*tokens = 0;
	}
	pthread_mutex_unlock(&devmem_held_lock);
	return held;
}

int devmem_held_stalled(const struct devmem_binding *b, unsigned int ms)
{
	uint64_t held, tokens;

	held = devmem_binding_held(b, &tokens);
	if (held < devmem_binding_buffers(b))
		return 0;
	return devmem_fail(-ENOBUFS,
			   "stalled: no data for %u ms, and the application holds all %" PRIu64 " buffers of binding %u (%" PRIu64 " tokens not given back): the card has none to receive into; give tokens back, or bind a larger dma-buf",
			   ms, held, devmem_binding_id(b), tokens);
}

int devmem_stall_check_args(const struct devmem_binding *b, unsigned int ms)
{
	if (b && devmem_binding_is_tx(b))
		return devmem_fail(-EINVAL, "binding %u is for sending",
				   devmem_binding_id(b));
	if (b && (!ms || ms > INT_MAX))
		return devmem_fail(-EINVAL, "a check every %u ms", ms);
	return 0;
}
