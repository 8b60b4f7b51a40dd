// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The two tables NCCL looks up: ncclNetPlugin_v11 (NCCL 2.28 and later)
 * and ncclNetPlugin_v7 (NCCL 2.19 and later), over one implementation.
 * One device: the network device NCCL_DEVMEM_IFNAME names.
 */
#include "plugin.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ndm_state ndm = { .lock = PTHREAD_MUTEX_INITIALIZER };

void ndm_log(ncclDebugLogLevel level, unsigned long flags, const char *file,
	     int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ndm.logger)
		ndm.logger(level, flags, file, line, "NET/devmem : %s", msg);
	else if (level == NCCL_LOG_WARN)
		fprintf(stderr, "NET/devmem : %s\n", msg);
}

static ncclResult_t ndm_init_common(ncclDebugLogger_t logger)
{
	ncclResult_t res = ncclSuccess;

	pthread_mutex_lock(&ndm.lock);
	if (logger)
		ndm.logger = logger;
	if (!ndm.configured) {
		res = ndm_configure();
		if (res == ncclSuccess)
			res = ndm_gpu_load();
		if (res == ncclSuccess)
			ndm.configured = true;
	}
	if (res == ncclSuccess)
		ndm.users++;
	pthread_mutex_unlock(&ndm.lock);
	return res;
}

static ncclResult_t ndm_finalize(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&ndm.lock);
	if (ndm.users > 0 && --ndm.users == 0) {
		ndm_rx_teardown();
		ndm_gpu_unload();
		ndm.configured = false;
	}
	pthread_mutex_unlock(&ndm.lock);
	return ncclSuccess;
}

/* A process that exits without finalize (NCCL v7 has none) still puts
 * the NIC back.
 */
__attribute__((destructor)) static void ndm_exit(void)
{
	/* A thread that exit() cut short may hold the lock: then the
	 * state files are left for the next run to recover.
	 */
	if (pthread_mutex_trylock(&ndm.lock))
		return;
	ndm_rx_exit();
	pthread_mutex_unlock(&ndm.lock);
}

static ncclResult_t ndm_devices(int *ndev)
{
	*ndev = 1;
	return ncclSuccess;
}

static ncclResult_t ndm_check_dev(int dev)
{
	if (dev == 0)
		return ncclSuccess;
	NDM_WARN("no device %d: the plugin has one (NCCL_DEVMEM_IFNAME)", dev);
	return ncclInvalidArgument;
}

/* The fields v7 and v11 share, in both structs under the same names. */
#define NDM_FILL_PROPERTIES(p)						\
	do {								\
		memset((p), 0, sizeof(*(p)));				\
		(p)->name = ndm.cfg.ifname;				\
		(p)->pciPath = ndm.pci_path[0] ? ndm.pci_path : NULL;	\
		(p)->guid = (uint64_t)ndm.cfg.ifindex;			\
		(p)->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA |	\
				  NCCL_PTR_DMABUF;			\
		(p)->speed = ndm.speed;					\
		(p)->maxComms = 65536;					\
		(p)->maxRecvs = 1;					\
		(p)->netDeviceType = NCCL_NET_DEVICE_UNPACK;		\
		(p)->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;	\
	} while (0)

static ncclResult_t ndm_get_properties_v11(int dev, ncclNetProperties_v11_t *p)
{
	if (ndm_check_dev(dev))
		return ncclInvalidArgument;
	NDM_FILL_PROPERTIES(p);
	p->vProps.ndevs = 1;
	p->vProps.devs[0] = dev;
	/* One receive is one unpack slot. */
	p->maxP2pBytes = ndm.max_msg;
	p->maxCollBytes = ndm.max_msg;
	p->maxMultiRequestSize = 1;
	return ncclSuccess;
}

static ncclResult_t ndm_get_properties_v7(int dev, ncclNetProperties_v7_t *p)
{
	if (ndm_check_dev(dev))
		return ncclInvalidArgument;
	NDM_FILL_PROPERTIES(p);
	return ncclSuccess;
}

static ncclResult_t ndm_listen_v11(void *ctx, int dev, void *handle,
				   void **listen_comm)
{
	(void)ctx;
	if (ndm_check_dev(dev))
		return ncclInvalidArgument;
	return ndm_listen(dev, handle, listen_comm);
}

static ncclResult_t ndm_listen_v7(int dev, void *handle, void **listen_comm)
{
	return ndm_listen_v11(NULL, dev, handle, listen_comm);
}

static ncclResult_t ndm_connect_v11(void *ctx, int dev, void *handle,
				    void **send_comm,
				    ncclNetDeviceHandle_v7_t **send_dev)
{
	(void)ctx;
	(void)send_dev;		/* NCCL asks for none on the send side */
	if (ndm_check_dev(dev))
		return ncclInvalidArgument;
	return ndm_connect(dev, handle, send_comm);
}

static ncclResult_t ndm_connect_v7(int dev, void *handle, void **send_comm,
				   ncclNetDeviceHandle_v7_t **send_dev)
{
	return ndm_connect_v11(NULL, dev, handle, send_comm, send_dev);
}

static ncclResult_t ndm_reg_mr_v11(void *comm, void *data, size_t size,
				   int type, void **mhandle)
{
	return ndm_reg_mr(comm, data, size, type, -1, 0, mhandle);
}

static ncclResult_t ndm_reg_mr_v7(void *comm, void *data, int size, int type,
				  void **mhandle)
{
	if (size < 0)
		return ncclInvalidArgument;
	return ndm_reg_mr(comm, data, (size_t)size, type, -1, 0, mhandle);
}

static ncclResult_t ndm_reg_mr_dmabuf(void *comm, void *data, size_t size,
				      int type, uint64_t offset, int fd,
				      void **mhandle)
{
	return ndm_reg_mr(comm, data, size, type, fd, offset, mhandle);
}

static ncclResult_t ndm_isend_v11(void *send_comm, void *data, size_t size,
				  int tag, void *mhandle, void *phandle,
				  void **request)
{
	(void)phandle;
	return ndm_isend(send_comm, data, size, tag, mhandle, request);
}

static ncclResult_t ndm_isend_v7(void *send_comm, void *data, int size,
				 int tag, void *mhandle, void **request)
{
	if (size < 0)
		return ncclInvalidArgument;
	return ndm_isend(send_comm, data, (size_t)size, tag, mhandle, request);
}

static ncclResult_t ndm_irecv_v11(void *recv_comm, int n, void **data,
				  size_t *sizes, int *tags, void **mhandles,
				  void **phandles, void **request)
{
	(void)phandles;
	return ndm_irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

static ncclResult_t ndm_irecv_v7(void *recv_comm, int n, void **data,
				 int *sizes, int *tags, void **mhandles,
				 void **request)
{
	size_t size;

	if (n != 1 || sizes[0] < 0) {
		NDM_WARN("irecv: %d receives in one call (the plugin takes 1)", n);
		return ncclInvalidArgument;
	}
	size = (size_t)sizes[0];
	return ndm_irecv(recv_comm, n, data, &size, tags, mhandles, request);
}

/* Nothing to flush: test() said the bytes are where NCCL reads them. */
static ncclResult_t ndm_iflush(void *recv_comm, int n, void **data, int *sizes,
			       void **mhandles, void **request)
{
	(void)recv_comm;
	(void)n;
	(void)data;
	(void)sizes;
	(void)mhandles;
	*request = NULL;
	return ncclSuccess;
}

/* The device unpack reads the bounce buffer itself: no per-buffer handle. */
static ncclResult_t ndm_get_device_mr(void *comm, void *mhandle, void **dptr)
{
	(void)comm;
	(void)mhandle;
	*dptr = NULL;
	return ncclSuccess;
}

static ncclResult_t ndm_init_v11(void **ctx, uint64_t comm_id,
				 ncclNetCommConfig_v11_t *config,
				 ncclDebugLogger_t logger,
				 ncclProfilerCallback_t profiler)
{
	(void)comm_id;
	(void)config;
	(void)profiler;
	*ctx = &ndm;
	return ndm_init_common(logger);
}

static ncclResult_t ndm_init_v7(ncclDebugLogger_t logger)
{
	return ndm_init_common(logger);
}

static ncclResult_t ndm_set_net_attr(void *ctx, ncclNetAttr_v11_t *attr)
{
	(void)ctx;
	(void)attr;
	return ncclSuccess;
}

NDM_EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {
	.name = "devmem",
	.init = ndm_init_v11,
	.devices = ndm_devices,
	.getProperties = ndm_get_properties_v11,
	.listen = ndm_listen_v11,
	.connect = ndm_connect_v11,
	.accept = ndm_accept,
	.regMr = ndm_reg_mr_v11,
	.regMrDmaBuf = ndm_reg_mr_dmabuf,
	.deregMr = ndm_dereg_mr,
	.isend = ndm_isend_v11,
	.irecv = ndm_irecv_v11,
	.iflush = ndm_iflush,
	.test = ndm_test,
	.closeSend = ndm_close_comm,
	.closeRecv = ndm_close_comm,
	.closeListen = ndm_close_listen,
	.getDeviceMr = ndm_get_device_mr,
	.irecvConsumed = ndm_consumed,
	.makeVDevice = NULL,
	.finalize = ndm_finalize,
	.setNetAttr = ndm_set_net_attr,
};

NDM_EXPORT const ncclNet_v7_t ncclNetPlugin_v7 = {
	.name = "devmem",
	.init = ndm_init_v7,
	.devices = ndm_devices,
	.getProperties = ndm_get_properties_v7,
	.listen = ndm_listen_v7,
	.connect = ndm_connect_v7,
	.accept = ndm_accept,
	.regMr = ndm_reg_mr_v7,
	.regMrDmaBuf = ndm_reg_mr_dmabuf,
	.deregMr = ndm_dereg_mr,
	.isend = ndm_isend_v7,
	.irecv = ndm_irecv_v7,
	.iflush = ndm_iflush,
	.test = ndm_test,
	.closeSend = ndm_close_comm,
	.closeRecv = ndm_close_comm,
	.closeListen = ndm_close_listen,
	.getDeviceMr = ndm_get_device_mr,
	.irecvConsumed = ndm_consumed,
};
