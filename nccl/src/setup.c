// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * devmem mode's receive side, made once per process by the first listen:
 * header split on and the queues out of RSS (libdevmem's per-queue set-up,
 * recorded in its state files so that "devmemctl teardown" undoes it after
 * a crash), a buffer of NCCL_DEVMEM_BUFFER_SIZE bytes bound to the queues,
 * and per listen an n-tuple rule that steers the data port there. When
 * any step is refused, NCCL_DEVMEM_MODE=auto falls back to copy mode and
 * says why; devmem fails.
 */
#include "plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ndm_mode_name(void)
{
	return ndm.cfg.mode == NDM_MODE_DEVMEM ? "devmem" : "auto";
}

/* The device's last rx queue, when NCCL_DEVMEM_QUEUES says nothing. */
static int ndm_default_queue(uint32_t *q)
{
	struct devmem_queue *queues;
	ssize_t n, i;
	uint32_t rx = 0, last = 0;

	n = devmem_queue_dump(&queues, ndm.cfg.ifindex);
	if (n < 0)
		return (int)n;
	for (i = 0; i < n; i++)
		if (queues[i].type == DEVMEM_QUEUE_RX) {
			rx++;
			if (queues[i].id > last)
				last = queues[i].id;
		}
	devmem_queue_dump_free(queues);
	if (rx < 2) {
		snprintf(ndm.rx.why, sizeof(ndm.rx.why),
			 "%s has %u rx queue(s): one must stay for RSS",
			 ndm.cfg.ifname, rx);
		return -1;
	}
	*q = last;
	return 0;
}

static void ndm_rx_undo(void)
{
	struct ndm_rx_setup *rx = &ndm.rx;

	devmem_binding_free(rx->binding);
	rx->binding = NULL;
	ndm_mapped_free(&rx->mapped);
	devmem_dmabuf_free(rx->dmabuf);
	rx->dmabuf = NULL;
	if (rx->nic) {
		if (devmem_nic_restore(rx->nic))
			NDM_WARN("%s: putting the device back: %s (devmemctl teardown dev %s retries)",
				 ndm.cfg.ifname, devmem_last_error(),
				 ndm.cfg.ifname);
		devmem_nic_free(rx->nic);
		rx->nic = NULL;
	}
	rx->ok = false;
}

static int ndm_rx_buffer(void)
{
	struct ndm_rx_setup *rx = &ndm.rx;
	void *addr;
	int err, gpu = ndm.cfg.gpu;

	if (ndm.cfg.buffer == NDM_BUFFER_UDMABUF) {
		/* Buffers above the page size need entries of huge pages. */
		err = ndm.cfg.rx_page_size > 4096 ?
		      devmem_dmabuf_new_udmabuf_huge(&rx->dmabuf,
						     ndm.cfg.buffer_size) :
		      devmem_dmabuf_new_udmabuf(&rx->dmabuf,
						ndm.cfg.buffer_size);
		if (!err)
			err = devmem_dmabuf_map(rx->dmabuf, DEVMEM_ACCESS_READ,
						&addr);
		if (err)
			return err;
		if (ndm_mapped_register(&rx->mapped, addr, ndm.cfg.buffer_size)) {
			snprintf(rx->why, sizeof(rx->why),
				 "the GPU cannot map the udmabuf");
			return -1;
		}
		rx->bounce_dev = rx->mapped.dev;
		return 0;
	}
	if (gpu < 0 && ndm_gpu_check(ndm.gpu.ctx_get_device(&gpu),
				     "cuCtxGetDevice")) {
		snprintf(rx->why, sizeof(rx->why),
			 "no current CUDA device (set NCCL_DEVMEM_GPU)");
		return -1;
	}
	err = devmem_dmabuf_new_cuda(&rx->dmabuf, gpu, ndm.cfg.buffer_size);
	if (err)
		return err;
	rx->bounce_dev = (uintptr_t)devmem_dmabuf_cuda_addr(rx->dmabuf);
	return 0;
}

/* What a run that crashed (or was killed) left on the device: put back. */
static void ndm_rx_recover(void)
{
	struct devmem_nic *old;
	int err;

	if (devmem_nic_new_recover(&old, ndm.cfg.ifindex))
		return;		/* nothing left, or every owner is running */
	err = devmem_nic_restore(old);
	NDM_INFO(NCCL_INIT | NCCL_NET, "%s: what a process that is gone set up %s",
		 ndm.cfg.ifname, err ? "could not all be put back" : "is put back");
	if (err)
		NDM_WARN("%s: %s", ndm.cfg.ifname, devmem_last_error());
	devmem_nic_free(old);
}

/* Called with ndm.lock held. */
ncclResult_t ndm_rx_setup(void)
{
	struct ndm_rx_setup *rx = &ndm.rx;
	uint32_t queues[65536 / 64];
	uint32_t q = 0, n = 0;
	int err;

	if (rx->tried)
		return rx->ok || ndm.cfg.mode != NDM_MODE_DEVMEM ?
		       ncclSuccess : ncclSystemError;
	rx->tried = true;
	rx->why[0] = 0;
	if (ndm.cfg.mode == NDM_MODE_COPY) {
		snprintf(rx->why, sizeof(rx->why), "NCCL_DEVMEM_MODE=copy");
		goto copy;
	}
	if (!ndm.cfg.queues_given) {
		if (ndm_default_queue(&q))
			goto fail;
		ndm.cfg.queue_first = ndm.cfg.queue_last = q;
	}
	if (ndm.cfg.queue_last - ndm.cfg.queue_first >=
	    sizeof(queues) / sizeof(queues[0])) {
		snprintf(rx->why, sizeof(rx->why), "NCCL_DEVMEM_QUEUES: more than %zu queues",
			 sizeof(queues) / sizeof(queues[0]));
		goto fail;
	}
	ndm_rx_recover();
	err = devmem_nic_new(&rx->nic, ndm.cfg.ifindex);
	if (!err)
		err = devmem_nic_setup(rx->nic, ndm.cfg.queue_first,
				       ndm.cfg.queue_last, NULL);
	if (err)
		goto fail;
	if (ndm_rx_buffer())
		goto fail;
	for (q = ndm.cfg.queue_first; q <= ndm.cfg.queue_last; q++)
		queues[n++] = q;
	err = devmem_binding_new_rx_flags(&rx->binding, ndm.cfg.ifindex,
					  queues, n,
					  devmem_dmabuf_fd(rx->dmabuf),
					  ndm.cfg.rx_page_size, 0);
	if (err)
		goto fail;
	rx->ok = true;
	rx->next_queue = ndm.cfg.queue_first;
	NDM_INFO(NCCL_INIT | NCCL_NET,
		 "devmem: rx queues %u-%u of %s bound to %zu MiB of %s memory (binding %u, %zu buffers of %zu bytes)",
		 ndm.cfg.queue_first, ndm.cfg.queue_last, ndm.cfg.ifname,
		 ndm.cfg.buffer_size >> 20,
		 ndm.cfg.buffer == NDM_BUFFER_CUDA ? "GPU" : "host (udmabuf)",
		 devmem_binding_id(rx->binding),
		 devmem_binding_buffers(rx->binding),
		 devmem_binding_buffer_size(rx->binding));
	return ncclSuccess;

fail:
	if (!rx->why[0])
		snprintf(rx->why, sizeof(rx->why), "%s", devmem_last_error());
	ndm_rx_undo();
	if (ndm.cfg.mode == NDM_MODE_DEVMEM) {
		NDM_WARN("NCCL_DEVMEM_MODE=%s: the receive set-up failed: %s",
			 ndm_mode_name(), rx->why);
		return ncclSystemError;
	}
copy:
	NDM_INFO(NCCL_INIT | NCCL_NET, "copy mode for receives: %s", rx->why);
	return ncclSuccess;
}

/* At exit: unbind (closing the binding's socket) and put the device back,
 * but call no CUDA: the driver may already be gone.
 */
void ndm_rx_exit(void)
{
	struct ndm_rx_setup *rx = &ndm.rx;

	devmem_binding_free(rx->binding);
	rx->binding = NULL;
	if (rx->nic) {
		if (devmem_nic_restore(rx->nic))
			NDM_WARN("%s: putting the device back at exit: %s",
				 ndm.cfg.ifname, devmem_last_error());
		devmem_nic_free(rx->nic);
		rx->nic = NULL;
	}
	rx->ok = false;
}

void ndm_rx_teardown(void)
{
	if (ndm.rx.ok)
		NDM_INFO(NCCL_INIT | NCCL_NET, "devmem: %s put back",
			 ndm.cfg.ifname);
	ndm_rx_undo();
	memset(&ndm.rx, 0, sizeof(ndm.rx));
}
