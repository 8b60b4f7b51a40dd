/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * libnccl-net-devmem internals. Never installed.
 *
 * One process-wide state (the configuration, the network device and, in
 * devmem mode, the receive set-up: the NIC's queues, the bound buffer)
 * and per-connection comms. A connection is one control socket, which
 * carries a 16-byte header per message in host memory, and 1 to 8 data
 * sockets, which carry the payload: a message is cut into one contiguous
 * part per data socket. The receiver's data sockets are steered to the
 * bound queues, so their payload lands in device memory.
 */
#ifndef NCCL_DEVMEM_PLUGIN_H
#define NCCL_DEVMEM_PLUGIN_H

#include <linux/uio.h>
#define __iovec_defined 1

#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <devmem.h>

#include "nccl_abi.h"

#define NDM_EXPORT		__attribute__((visibility("default")))
#define NDM_MAX_SOCKS		8
/* Control connections that have not said who they are, per listen. */
#define NDM_MAX_PENDING		8
/* The most requests of one comm in flight: the unpack ring's depth. */
#define NDM_MAX_REQUESTS	NCCL_UNPACK_QUEUE_DEPTH
/*
 * One devmem receive takes at most this many bytes and fragments, as many
 * as a part of a 2 MiB message at MTU 1500 brings (one fragment a packet):
 * few system calls a message. The linear bytes land in c->scratch.
 */
#define NDM_RECV_CHUNK		(1U << 20)
#define NDM_RECV_FRAGS		1024U
/*
 * CPUs the process may run on from which its threads need not share one:
 * from here a comm's lock spins before it sleeps, and host-memory sends
 * are left to the I/O thread (NCCL_DEVMEM_PROXY_COPY's default is 0).
 * Below it the proxy thread, spinning on test() anyway, copies up to
 * NDM_DEFAULT_PROXY_COPY bytes a socket per test() itself: handing them
 * to the I/O thread costs a wake-up and a switch on a CPU they share.
 */
#define NDM_SPARE_CPUS		4
#define NDM_DEFAULT_PROXY_COPY	(256U << 10)

enum ndm_mode {
	NDM_MODE_AUTO,
	NDM_MODE_DEVMEM,
	NDM_MODE_COPY,
};

enum ndm_buffer {
	NDM_BUFFER_CUDA,
	NDM_BUFFER_UDMABUF,
};

/* NCCL_DEVMEM_* (config.c). */
struct ndm_config {
	char ifname[IF_NAMESIZE];
	int ifindex;
	enum ndm_mode mode;
	uint32_t queue_first, queue_last;
	bool queues_given;
	size_t buffer_size;		/* the bound rx buffer */
	uint32_t rx_page_size;		/* its buffers' size; 0: the page */
	enum ndm_buffer buffer;
	size_t copy_buffer;		/* per comm, copy mode */
	int nsocks;
	int gpu;			/* -1: the caller's current device */
	size_t proxy_copy;		/* host-memory send bytes per test() */
};

/* A CUDA driver, loaded at run time (gpu.c). Calls need the caller's
 * context current, as NCCL's proxy threads have it.
 */
struct ndm_gpu {
	void *lib;
	int (*init)(unsigned int flags);
	int (*ctx_get_device)(int *dev);
	int (*host_alloc)(void **p, size_t size, unsigned int flags);
	int (*free_host)(void *p);
	int (*host_get_device_pointer)(unsigned long long *d, void *p,
				       unsigned int flags);
	int (*host_register)(void *p, size_t size, unsigned int flags);
	int (*host_unregister)(void *p);
	int (*stream_create)(void **stream, unsigned int flags);
	int (*stream_destroy)(void *stream);
	int (*stream_synchronize)(void *stream);
	int (*memcpy_htod_async)(unsigned long long d, const void *s,
				 size_t len, void *stream);
	int (*memcpy_dtoh_async)(void *d, unsigned long long s, size_t len,
				 void *stream);
	int (*get_handle)(void *handle, unsigned long long ptr, size_t size,
			  int type, unsigned long long flags);
	int (*get_error_name)(int res, const char **name);
};

/* Pinned host memory that the GPU reaches at @dev. */
struct ndm_mapped {
	void *host;
	uint64_t dev;
	size_t size;
	bool registered;	/* host memory of ours, registered */
};

/* The receive set-up of devmem mode, made by the first listen (setup.c). */
struct ndm_rx_setup {
	bool tried;
	bool ok;
	char why[256];			/* why not, when !ok */
	struct devmem_nic *nic;
	struct devmem_dmabuf *dmabuf;
	struct devmem_binding *binding;
	struct ndm_mapped mapped;	/* udmabuf: its registered mapping */
	uint64_t bounce_dev;		/* the buffer's device address */
	uint32_t next_queue;
};

/* An IPv4 or IPv6 socket address. */
union ndm_addr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

struct ndm_state {
	pthread_mutex_t lock;
	ncclDebugLogger_t logger;
	int users;			/* init()s without finalize() */
	bool configured;
	struct ndm_config cfg;
	union ndm_addr addr;		/* the device's address, port 0 */
	char pci_path[PATH_MAX];
	int speed;
	int mtu;
	uint32_t max_msg;		/* the largest message (config.c) */
	struct ndm_gpu gpu;
	bool gpu_loaded;
	struct ndm_rx_setup rx;
	uint64_t next_id;
};

extern struct ndm_state ndm;

void ndm_log(ncclDebugLogLevel level, unsigned long flags, const char *file,
	     int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
#define NDM_INFO(flags, ...) \
	ndm_log(NCCL_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define NDM_WARN(...) \
	ndm_log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__)

/* config.c: read NCCL_DEVMEM_* and find the device. */
ncclResult_t ndm_configure(void);
void ndm_config_help(void);

/* gpu.c */
ncclResult_t ndm_gpu_load(void);
void ndm_gpu_unload(void);
ncclResult_t ndm_gpu_check(int res, const char *what);
ncclResult_t ndm_mapped_alloc(struct ndm_mapped *m, size_t size);
ncclResult_t ndm_mapped_register(struct ndm_mapped *m, void *p, size_t size);
void ndm_mapped_free(struct ndm_mapped *m);
ncclResult_t ndm_gpu_export(void *ptr, size_t size, int *fd,
			    uint64_t *offset);
/* Copy between host and memory of @type (NCCL_PTR_*), on *@stream (made
 * by the first copy that needs one; ndm_stream_free() when done).
 */
ncclResult_t ndm_copy_to(void **stream, void *dst, int type, const void *src,
			 size_t len);
ncclResult_t ndm_copy_from(void **stream, void *dst, const void *src, int type,
			   size_t len);
void ndm_stream_free(void **stream);

/* setup.c: devmem mode's receive side. */
ncclResult_t ndm_rx_setup(void);
void ndm_rx_teardown(void);
void ndm_rx_exit(void);

/*
 * Sockets and comms (comm.c)
 */
struct ndm_handle {
	uint32_t magic;
	uint32_t nsocks;
	uint64_t id;
	union ndm_addr ctl;
	union ndm_addr data;
};
_Static_assert(sizeof(struct ndm_handle) <= NCCL_NET_HANDLE_MAXSIZE,
	       "handle too big");

#define NDM_MAGIC		0x6e646d31U	/* "ndm1" */

/* The control socket's first message, from the connecting side. */
struct ndm_hello {
	uint32_t magic;
	uint32_t nsocks;
	uint64_t id;
	uint16_t ports[NDM_MAX_SOCKS];	/* the data sockets' source ports */
};

/* Before each message on the control socket. */
struct ndm_msg_hdr {
	uint32_t magic;
	int32_t tag;
	uint64_t size;
};

struct ndm_mr {
	void *base;
	size_t size;
	int type;			/* NCCL_PTR_* */
	struct devmem_binding *tx;	/* devmem mode: base's dma-buf */
	uint64_t tx_offset;		/* base's offset in it */
	int refs;
	struct ndm_mr *next;		/* the process's registrations */
};

enum ndm_req_kind { NDM_REQ_SEND, NDM_REQ_RECV };

struct ndm_part {
	uint64_t off, len;		/* in the message */
	uint64_t done;			/* bytes moved */
	uint64_t acked;			/* send, devmem: bytes completed */
};

struct ndm_request {
	enum ndm_req_kind kind;
	bool used;
	bool hdr_done;			/* recv: its header read */
	bool complete;			/* test() said done */
	struct ndm_comm *comm;
	uint64_t seq;
	int tag;
	void *data;
	uint64_t size;			/* send: the message; recv: room */
	uint64_t msg_size;		/* recv: the message */
	struct ndm_mr *mr;
	struct ndm_part parts[NDM_MAX_SOCKS];
	int nparts;
	/* recv */
	unsigned int slot;		/* the unpack slot */
	uint32_t records;
	uint64_t ring_off, ring_len;	/* copy mode: its place in the ring */
	struct devmem_frag *frags;	/* devmem mode: tokens to give back */
	uint8_t *frag_sock;		/* the socket of each */
	size_t nr_frags, max_frags;
	uint64_t ring_end;		/* copy mode: the ring's head after it */
	bool direct;			/* copy mode, host memory: received in
					 * place, no records */
	/* send, copy mode: staged bytes */
	uint64_t stage_off, stage_end;
	bool staged;
	bool devmem;			/* send: from mr->tx */
	const char *src;
	uint64_t proxy_copied;		/* send: bytes the proxy copied */
};

/* A ring of mapped memory handed out in request order. */
struct ndm_ring {
	struct ndm_mapped mem;
	uint64_t head, tail;		/* bytes taken / given back, ever */
};

struct ndm_comm {
	enum ndm_req_kind kind;
	uint64_t id;
	int ctl;
	int nsocks;
	int fds[NDM_MAX_SOCKS];
	bool devmem;			/* recv: steered into the binding */
	bool steered;			/* recv: owns the rule at rule_loc */
	uint32_t rule_loc;
	struct ndm_request reqs[NDM_MAX_REQUESTS];
	uint64_t seq_head, seq_tail;	/* oldest live, next new */
	/* recv */
	struct ndm_mapped unpack;	/* nccl_unpack_handle + meta */
	struct nccl_unpack_handle *uh;
	struct nccl_unpack_meta *meta;
	struct ndm_ring ring;		/* copy mode bounce buffer */
	struct devmem_rx *rx[NDM_MAX_SOCKS];
	struct devmem_recycler *rc[NDM_MAX_SOCKS];
	char *scratch;			/* linear bytes of devmem receives */
	uint64_t frags_in;		/* fragments received */
	struct timespec last_data;	/* when a data socket last gave bytes */
	bool warned_stall;
	size_t hdr_got;
	struct ndm_msg_hdr hdr;
	bool warned_plain;
	/* send */
	struct devmem_sender *sender[NDM_MAX_SOCKS];
	struct devmem_binding *send_tx;	/* the binding the senders use */
	struct ndm_ring stage;
	void *stream;			/* the plugin's copies */
	char err[160];			/* the first failure, sticky */
	/*
	 * The comm's I/O thread (io.c) moves the data sockets' bytes; NCCL's
	 * proxy thread posts requests and finds them done, and where moving
	 * bytes copies nothing it moves them too. Everything above is under
	 * @lock, which is dropped around the data sockets' system calls;
	 * @busy[i] says a thread is in one on socket i, which is then that
	 * thread's alone, with its recycler and sender. @efd wakes the I/O
	 * thread.
	 */
	pthread_mutex_t lock;
	pthread_t io;
	bool busy[NDM_MAX_SOCKS];
	bool io_running;
	bool stop;
	int efd;
	/* recv: consumed tokens, for the I/O thread's recyclers */
	struct devmem_frag *giveback[NDM_MAX_SOCKS];
	size_t giveback_n[NDM_MAX_SOCKS], giveback_max[NDM_MAX_SOCKS];
};

struct ndm_listen {
	uint64_t id;
	int ctl_lfd, data_lfd;
	struct ndm_handle handle;
	bool steered;
	uint32_t rule_loc;
	uint32_t queue;
	/* control connections whose hello has not all come */
	struct ndm_pending {
		int fd;
		size_t got;
		struct ndm_hello hello;
		union ndm_addr peer;
	} pend[NDM_MAX_PENDING];
	/* the connection being accepted: its hello came */
	int ctl;
	struct ndm_hello hello;
	union ndm_addr peer;
	int fds[NDM_MAX_SOCKS];
	int nsocks_got;
};

ncclResult_t ndm_listen(int dev, void *handle, void **listen_comm);
ncclResult_t ndm_connect(int dev, void *handle, void **send_comm);
ncclResult_t ndm_accept(void *listen_comm, void **recv_comm,
			ncclNetDeviceHandle_v7_t **recv_dev);
ncclResult_t ndm_close_listen(void *listen_comm);
ncclResult_t ndm_close_comm(void *comm);
void ndm_split(struct ndm_request *r, uint64_t size, int nsocks);
void ndm_unsteer(uint32_t loc);

/* xfer.c */
ncclResult_t ndm_reg_mr(void *comm, void *data, size_t size, int type,
			int fd, uint64_t offset, void **mhandle);
ncclResult_t ndm_dereg_mr(void *comm, void *mhandle);
ncclResult_t ndm_isend(void *send_comm, void *data, size_t size, int tag,
		       void *mhandle, void **request);
ncclResult_t ndm_irecv(void *recv_comm, int n, void **data,
		       const size_t *sizes, const int *tags, void **mhandles,
		       void **request);
ncclResult_t ndm_test(void *request, int *done, int *sizes);
ncclResult_t ndm_consumed(void *recv_comm, int n, void *request);
void ndm_comm_free_requests(struct ndm_comm *c);
bool ndm_send_complete(const struct ndm_request *r);
ncclResult_t ndm_record(struct ndm_comm *c, struct ndm_request *r,
			uint64_t src_off, uint32_t len, uint64_t dst_off);
ncclResult_t ndm_keep_frag(struct ndm_comm *c, struct ndm_request *r,
			   const struct devmem_frag *f, int sock);

/* io.c */
ncclResult_t ndm_io_start(struct ndm_comm *c);
void ndm_io_stop(struct ndm_comm *c);
void ndm_io_kick(struct ndm_comm *c);
bool ndm_io_step(struct ndm_comm *c, short *events, bool *moved,
		 bool proxy);
bool ndm_cpus_to_spare(void);
void ndm_io_giveback_all(struct ndm_comm *c);
int ndm_recv_headers(struct ndm_comm *c);
int ndm_read_full(int fd, void *buf, size_t size, size_t *got);
ncclResult_t ndm_fail(struct ndm_comm *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* NCCL_DEVMEM_PLUGIN_H */
