/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * The part of NCCL's network plugin interface this plugin implements,
 * declared from NCCL's published plugin headers (the v7 and v11 net
 * interfaces of NCCL 2.19-2.30, and the layout NCCL's device unpack reads):
 * types, values and member order must match NCCL's exactly, so that NCCL
 * can load the plugin without the plugin linking or including NCCL.
 * Never installed.
 */
#ifndef NCCL_DEVMEM_ABI_H
#define NCCL_DEVMEM_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
} ncclResult_t;

typedef enum {
	NCCL_LOG_NONE = 0,
	NCCL_LOG_VERSION = 1,
	NCCL_LOG_WARN = 2,
	NCCL_LOG_INFO = 3,
	NCCL_LOG_ABORT = 4,
	NCCL_LOG_TRACE = 5,
} ncclDebugLogLevel;

/* Subsystem bits of the logger's flags. */
#define NCCL_INIT	0x1UL
#define NCCL_NET	0x10UL

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level,
				  unsigned long flags, const char *file,
				  int line, const char *fmt, ...);
typedef ncclResult_t (*ncclProfilerCallback_t)(void **ehandle, int type,
					       void *phandle, int64_t plugin_id,
					       void *ext);

#define NCCL_NET_HANDLE_MAXSIZE		128
#define NCCL_PTR_HOST			0x1
#define NCCL_PTR_CUDA			0x2
#define NCCL_PTR_DMABUF			0x4
/* What *request may hold when NCCL calls irecv(): not a request. */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION	0x1

typedef enum {
	NCCL_NET_DEVICE_HOST = 0,
	NCCL_NET_DEVICE_UNPACK = 1,
} ncclNetDeviceType;

#define NCCL_NET_DEVICE_UNPACK_VERSION	0x7

/* The same layout from v7 to v11. */
typedef struct {
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	void *handle;		/* a device pointer */
	size_t size;
	int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int speed;		/* Mbit/s */
	int port;
	float latency;		/* us */
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v7_t;

#define NCCL_NET_MAX_DEVS_PER_NIC	4

typedef struct {
	int ndevs;
	int devs[NCCL_NET_MAX_DEVS_PER_NIC];
} ncclNetVDeviceProps_v11_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v11_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;
} ncclNetProperties_v11_t;

typedef struct {
	int trafficClass;
} ncclNetCommConfig_v11_t;

typedef struct {
	int32_t maxConcurrentPeers;
	int32_t minConcurrentPeers;
	int32_t maxFlowsPerPeer;
	int32_t minFlowsPerPeer;
} ncclNetCommAttr_v11_t;

typedef struct {
	ncclNetCommAttr_v11_t sendCommAttr;
	ncclNetCommAttr_v11_t recvCommAttr;
	uint32_t op;
	uint32_t algo;
	uint32_t proto;
} ncclNetAttr_v11_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logger);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v7_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listen_comm);
	ncclResult_t (*connect)(int dev, void *handle, void **send_comm,
				ncclNetDeviceHandle_v7_t **send_dev);
	ncclResult_t (*accept)(void *listen_comm, void **recv_comm,
			       ncclNetDeviceHandle_v7_t **recv_dev);
	ncclResult_t (*regMr)(void *comm, void *data, int size, int type,
			      void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size,
				    int type, uint64_t offset, int fd,
				    void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *send_comm, void *data, int size, int tag,
			      void *mhandle, void **request);
	ncclResult_t (*irecv)(void *recv_comm, int n, void **data, int *sizes,
			      int *tags, void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recv_comm, int n, void **data, int *sizes,
			       void **mhandles, void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *send_comm);
	ncclResult_t (*closeRecv)(void *recv_comm);
	ncclResult_t (*closeListen)(void *listen_comm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr);
	ncclResult_t (*irecvConsumed)(void *recv_comm, int n, void *request);
} ncclNet_v7_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t comm_id,
			     ncclNetCommConfig_v11_t *config,
			     ncclDebugLogger_t logger,
			     ncclProfilerCallback_t profiler);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v11_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle,
			       void **listen_comm);
	ncclResult_t (*connect)(void *ctx, int dev, void *handle,
				void **send_comm,
				ncclNetDeviceHandle_v7_t **send_dev);
	ncclResult_t (*accept)(void *listen_comm, void **recv_comm,
			       ncclNetDeviceHandle_v7_t **recv_dev);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type,
			      void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size,
				    int type, uint64_t offset, int fd,
				    void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *send_comm, void *data, size_t size, int tag,
			      void *mhandle, void *phandle, void **request);
	ncclResult_t (*irecv)(void *recv_comm, int n, void **data,
			      size_t *sizes, int *tags, void **mhandles,
			      void **phandles, void **request);
	ncclResult_t (*iflush)(void *recv_comm, int n, void **data, int *sizes,
			       void **mhandles, void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *send_comm);
	ncclResult_t (*closeRecv)(void *recv_comm);
	ncclResult_t (*closeListen)(void *listen_comm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr);
	ncclResult_t (*irecvConsumed)(void *recv_comm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v11_t *props);
	ncclResult_t (*finalize)(void *ctx);
	ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v11_t *attr);
} ncclNet_v11_t;

/*
 * Device unpack. For each receive the plugin writes records into one
 * slot of a ring of 16; NCCL's kernel advances its own head before each
 * step and copies, for slot head % 16, cnt[slot] records of
 * bounce_buf + src_off to the step's buffer + dst_off.
 */
#define NCCL_UNPACK_QUEUE_DEPTH		16
#define NCCL_UNPACK_MAX_SLICE_SIZE	(4U << 20)
#define NCCL_UNPACK_PAGE_SIZE		4096U
#define NCCL_UNPACK_MAX_RECORDS \
	(NCCL_UNPACK_MAX_SLICE_SIZE / NCCL_UNPACK_PAGE_SIZE * 2)

struct nccl_unpack_record {
	uint32_t src_off;
	uint32_t len;
	uint64_t dst_off;
} __attribute__((aligned(16)));

struct nccl_unpack_meta {
	struct nccl_unpack_record mem[NCCL_UNPACK_QUEUE_DEPTH]
				    [NCCL_UNPACK_MAX_RECORDS];
	uint64_t cnt[NCCL_UNPACK_QUEUE_DEPTH];
};

struct nccl_unpack_handle {
	struct nccl_unpack_meta *meta;	/* device pointer */
	void *bounce_buf;		/* device pointer */
	uint64_t head;			/* NCCL's; starts one before slot 0 */
};

_Static_assert(sizeof(struct nccl_unpack_record) == 16, "loadMeta");
_Static_assert(sizeof(struct nccl_unpack_handle) == 24,
	       "unpackNetDeviceHandle");
_Static_assert(sizeof(ncclNetDeviceHandle_v7_t) == 32, "device handle");
_Static_assert(sizeof(ncclNetProperties_v11_t) == 112, "v11 properties");
_Static_assert(sizeof(ncclNet_v7_t) == 152, "v7 table");
_Static_assert(sizeof(ncclNet_v11_t) == 176, "v11 table");

#endif /* NCCL_DEVMEM_ABI_H */
