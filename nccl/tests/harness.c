// SPDX-License-Identifier: GPL-2.0
/*
 * Drives libnccl-net-devmem as NCCL's proxy threads do, without NCCL or a
 * GPU: init, devices, getProperties, listen, then connect and accept on
 * two threads until both return a comm, regMr, isend and irecv with
 * tags and several requests in flight, test, iflush, and irecvConsumed
 * in order. NCCL's device unpack is done on the CPU from what accept()
 * handed over: after each finished receive the harness moves its own
 * head on, as NCCL's kernel does, applies that slot's records from the
 * bounce buffer to the destination, and checks every byte of the message
 * against the pattern the sender wrote. CUDA is the test stand-in
 * (libdevmem/tests/fake-cuda), whose device pointers are host pointers.
 *
 *   harness PLUGIN [options]
 *     --api v7|v11        which table to use (default v11)
 *     --sizes LIST        message sizes, comma-separated, K/M suffixes
 *                         (default 1,4096,65536,1M,4M)
 *     --repeat N          send the list N times (default 1)
 *     --inflight N        requests in flight per side, 1-16 (default 4)
 *     --tx-udmabuf        the send buffer is a udmabuf given with
 *                         regMrDmaBuf (devmem sends), not host memory
 *     --close-early N     close both comms with N receives and sends
 *                         still in flight, after the first message
 *     --bad-tag           the receiver posts a tag the sender does not use
 *     --role both|recv|send   both ends on two threads (default), or one
 *                         end per process, as two ranks
 *     --handle FILE       recv writes the listen handle there, send
 *                         waits for it and reads it
 *     --intruder          before the sender connects, strangers connect:
 *                         one silent and one garbling control connection
 *                         and one data connection; the comm must still
 *                         be the sender's
 *     --host-mem          register the buffers as host memory
 *                         (NCCL_PTR_HOST), as NCCL does without
 *                         GPUDirect RDMA
 *     --no-check          send without writing the pattern, receive
 *                         without filling the buffer beforehand, the
 *                         CPU unpack and the byte check (records are
 *                         still counted); prints the
 *                         receive phase, from accept to the last
 *                         message, in seconds and Mbit/s: throughput
 *     --oversize          after connecting, irecv and isend of one byte
 *                         over maxP2pBytes must be refused
 *                         (ncclInvalidUsage)
 * Prints a summary line; exits 0, 1 on a failed check, 2 on bad usage.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <devmem.h>

#include "nccl_abi.h"

#define MAX_SIZES	64
#define SLOT_ROOM	NCCL_UNPACK_MAX_SLICE_SIZE

static ncclNet_v7_t *v7;
static ncclNet_v11_t *v11;
static void *ctx;
static size_t sizes[MAX_SIZES];
static int nsizes, repeat = 1, inflight = 4, close_early = -1, bad_tag;
static int tx_udmabuf, intruder, oversize, no_check, host_mem;
static const char *role = "both", *handle_path;
static void *listen_comm;
static char handle[NCCL_NET_HANDLE_MAXSIZE];
static void *send_comm, *recv_comm;
static ncclNetDeviceHandle_v7_t dev_handle = {
	.netDeviceType = NCCL_NET_DEVICE_UNPACK,
	.netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION,
};
static uint64_t records_seen, bytes_checked, messages;
static struct timespec t_accepted, t_last;	/* the receive phase */
static size_t max_message = SLOT_ROOM;	/* maxP2pBytes (v11) */

static void logger(ncclDebugLogLevel level, unsigned long flags,
		   const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (level > NCCL_LOG_INFO)
		return;
	fprintf(stderr, level == NCCL_LOG_WARN ? "WARN " : "INFO ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "harness: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define CALL(what, expr)						\
	do {								\
		ncclResult_t res_ = (expr);				\
		if (res_ != ncclSuccess)				\
			fail("%s: result %d", what, res_);		\
	} while (0)

/* The byte the sender puts at @off of message @m. */
static inline uint8_t pattern(uint64_t m, uint64_t off)
{
	uint64_t x = (m + 1) * 0x9e3779b97f4a7c15ULL + off / 8;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (uint8_t)(x >> (8 * (off % 8)));
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 10);

	if (end == s)
		goto bad;
	if (*end == 'K')
		n <<= 10, end++;
	else if (*end == 'M')
		n <<= 20, end++;
	if (*end)
		goto bad;
	if (n > SLOT_ROOM)
		goto bad;
	return n;
bad:
	fprintf(stderr, "harness: bad size '%s' (at most 4M)\n", s);
	exit(2);
}

static ncclResult_t net_listen(void)
{
	return v11 ? v11->listen(ctx, 0, handle, &listen_comm) :
		     v7->listen(0, handle, &listen_comm);
}

static ncclResult_t net_connect(void **comm)
{
	ncclNetDeviceHandle_v7_t *none = NULL;

	return v11 ? v11->connect(ctx, 0, handle, comm, &none) :
		     v7->connect(0, handle, comm, &none);
}

static ncclResult_t net_accept(void **comm)
{
	ncclNetDeviceHandle_v7_t *dh = &dev_handle;

	return v11 ? v11->accept(listen_comm, comm, &dh) :
		     v7->accept(listen_comm, comm, &dh);
}

static ncclResult_t net_reg(void *comm, void *p, size_t size, int fd,
			    void **mh)
{
	int type = host_mem ? NCCL_PTR_HOST : NCCL_PTR_CUDA;

	if (fd >= 0)
		return v11 ? v11->regMrDmaBuf(comm, p, size, NCCL_PTR_CUDA, 0,
					      fd, mh) :
			     v7->regMrDmaBuf(comm, p, size, NCCL_PTR_CUDA, 0,
					     fd, mh);

	return v11 ? v11->regMr(comm, p, size, type, mh) :
		     v7->regMr(comm, p, (int)size, type, mh);
}

static ncclResult_t net_dereg(void *comm, void *mh)
{
	return v11 ? v11->deregMr(comm, mh) : v7->deregMr(comm, mh);
}

static ncclResult_t net_isend(void *p, size_t size, int tag, void *mh,
			      void **req)
{
	return v11 ? v11->isend(send_comm, p, size, tag, mh, NULL, req) :
		     v7->isend(send_comm, p, (int)size, tag, mh, req);
}

static ncclResult_t net_irecv(void *p, size_t size, int tag, void *mh,
			      void **req)
{
	int isize = (int)size;

	/* As NCCL does for LL and LL128 when it may skip the test. */
	*req = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION;
	if (v11)
		return v11->irecv(recv_comm, 1, &p, &size, &tag, &mh, NULL, req);
	*req = NULL;
	return v7->irecv(recv_comm, 1, &p, &isize, &tag, &mh, req);
}

static ncclResult_t net_test(void *req, int *done, int *size)
{
	return v11 ? v11->test(req, done, size) : v7->test(req, done, size);
}

static ncclResult_t net_consumed(void *req)
{
	return v11 ? v11->irecvConsumed(recv_comm, 1, req) :
		     v7->irecvConsumed(recv_comm, 1, req);
}

static ncclResult_t net_close(void *comm, int send)
{
	if (v11)
		return send ? v11->closeSend(comm) : v11->closeRecv(comm);
	return send ? v7->closeSend(comm) : v7->closeRecv(comm);
}

static uint64_t total_messages(void)
{
	return (uint64_t)nsizes * (uint64_t)repeat;
}

static size_t message_size(uint64_t m)
{
	return sizes[m % (uint64_t)nsizes];
}

/* The sender: a buffer per request slot, the pattern written before each
 * isend, up to --inflight in flight.
 */
static void *sender(void *arg)
{
	struct devmem_dmabuf *db = NULL;
	void *reqs[16] = { 0 }, *mh;
	uint64_t sent = 0, done_n = 0, m;
	size_t room = SLOT_ROOM * (size_t)inflight;
	char *buf;
	int done, size, fd = -1;

	(void)arg;
	while (!send_comm)
		CALL("connect", net_connect(&send_comm));
	if (tx_udmabuf) {
		if (devmem_dmabuf_new_udmabuf(&db, room) ||
		    devmem_dmabuf_map(db, DEVMEM_ACCESS_READ | DEVMEM_ACCESS_WRITE,
				      (void **)&buf))
			fail("udmabuf: %s", devmem_last_error());
		fd = devmem_dmabuf_fd(db);
	} else {
		buf = aligned_alloc(4096, room);
		if (!buf)
			fail("out of memory");
	}
	CALL("regMr (send)", net_reg(send_comm, buf, room, fd, &mh));
	if (oversize) {
		void *req = NULL;

		if (net_isend(buf, max_message + 1, 0, mh, &req) !=
		    ncclInvalidUsage || req)
			fail("isend of maxP2pBytes + 1 was not refused");
	}
	while (done_n < total_messages()) {
		if (sent < total_messages() && sent - done_n < (uint64_t)inflight) {
			int slot = (int)(sent % (uint64_t)inflight);
			char *p = buf + (size_t)slot * SLOT_ROOM;
			size_t k, n = message_size(sent);

			/* --no-check: the bytes are nobody's concern */
			if (!reqs[slot] && !no_check) {
				for (k = 0; k < n; k++)
					p[k] = (char)pattern(sent, k);
			}
			CALL("isend", net_isend(p, n, (int)(sent & 0x7fff),
						mh, &reqs[slot]));
			if (reqs[slot]) {
				sent++;
				if (close_early >= 0 &&
				    sent > (uint64_t)close_early)
					break;
				continue;
			}
			/* Not now: NCCL tests what is in flight meanwhile. */
			if (sent == done_n)
				continue;
		}
		m = done_n;
		CALL("test (send)", net_test(reqs[m % (uint64_t)inflight],
					     &done, &size));
		if (!done) {
			sched_yield();	/* as NCCL's idle proxy thread */
			continue;
		}
		if ((size_t)size != message_size(m))
			fail("send %llu: test says %d bytes, not %zu",
			     (unsigned long long)m, size, message_size(m));
		reqs[m % (uint64_t)inflight] = NULL;
		done_n++;
	}
	if (close_early >= 0)
		return NULL;	/* the main thread closes */
	CALL("deregMr (send)", net_dereg(send_comm, mh));
	CALL("closeSend", net_close(send_comm, 1));
	send_comm = NULL;
	devmem_dmabuf_free(db);
	if (!tx_udmabuf)
		free(buf);
	return NULL;
}

/* What NCCL's kernel does for one step: head on, then the slot's records. */
static void unpack(char *dst, size_t size, uint64_t m)
{
	struct nccl_unpack_handle *uh = dev_handle.handle;
	struct nccl_unpack_meta *meta = uh->meta;
	uint64_t slot, cnt, i, covered = 0;
	const struct nccl_unpack_record *r;
	size_t k;

	uh->head++;
	slot = uh->head % NCCL_UNPACK_QUEUE_DEPTH;
	cnt = __atomic_load_n(&meta->cnt[slot], __ATOMIC_ACQUIRE);
	if (cnt > NCCL_UNPACK_MAX_RECORDS)
		fail("message %llu: %llu records", (unsigned long long)m,
		     (unsigned long long)cnt);
	if (no_check) {
		records_seen += cnt;
		bytes_checked += size;
		return;
	}
	for (i = 0; i < cnt; i++) {
		r = &meta->mem[slot][i];
		if (r->dst_off + r->len > size)
			fail("message %llu: a record past its end",
			     (unsigned long long)m);
		memcpy(dst + r->dst_off, (char *)uh->bounce_buf + r->src_off,
		       r->len);
		covered += r->len;
	}
	records_seen += cnt;
	/* Bytes the plugin copied itself are already there. */
	for (k = 0; k < size; k++)
		if ((uint8_t)dst[k] != pattern(m, k))
			fail("message %llu (%zu bytes): byte %zu is %#x, not %#x (%llu records covered %llu bytes)",
			     (unsigned long long)m, size, k,
			     (uint8_t)dst[k], pattern(m, k),
			     (unsigned long long)cnt,
			     (unsigned long long)covered);
	bytes_checked += size;
}

static void receiver(void)
{
	void *reqs[16] = { 0 }, *mh;
	uint64_t posted = 0, done_n = 0, m;
	size_t room = SLOT_ROOM * (size_t)inflight;
	char *buf = aligned_alloc(4096, room);
	int done, size, flush_done;
	void *flush;

	if (!buf)
		fail("out of memory");
	while (!recv_comm)
		CALL("accept", net_accept(&recv_comm));
	if (dev_handle.size != sizeof(struct nccl_unpack_handle) ||
	    !dev_handle.handle || !dev_handle.needsProxyProgress)
		fail("accept: the device handle is not filled in");
	/* NCCL closes the listen comm once it has accepted. */
	clock_gettime(CLOCK_MONOTONIC, &t_accepted);
	CALL("closeListen", v11 ? v11->closeListen(listen_comm) :
				  v7->closeListen(listen_comm));
	listen_comm = NULL;
	CALL("regMr (recv)", net_reg(recv_comm, buf, room, -1, &mh));
	if (oversize) {
		void *req = NULL;

		if (net_irecv(buf, max_message + 1, 0, mh, &req) !=
		    ncclInvalidUsage || (req && req != (void *)1))
			fail("irecv of maxP2pBytes + 1 was not refused");
	}
	while (done_n < total_messages()) {
		if (posted < total_messages() &&
		    posted - done_n < (uint64_t)inflight) {
			int slot = (int)(posted % (uint64_t)inflight);
			int tag = (int)(posted & 0x7fff);

			/* Bytes nobody wrote would show in the check. */
			if (!no_check)
				memset(buf + (size_t)slot * SLOT_ROOM, 0xa5,
				       message_size(posted));
			if (bad_tag)
				tag ^= 0x4000;
			CALL("irecv", net_irecv(buf + (size_t)slot * SLOT_ROOM,
						max_message, tag, mh,
						&reqs[slot]));
			if (reqs[slot]) {
				posted++;
				if (close_early >= 0 &&
				    posted > (uint64_t)close_early)
					return;
				continue;
			}
			if (posted == done_n)
				continue;
		}
		m = done_n;
		CALL("test (recv)", net_test(reqs[m % (uint64_t)inflight],
					     &done, &size));
		if (!done) {
			sched_yield();	/* as NCCL's idle proxy thread */
			continue;
		}
		if ((size_t)size != message_size(m))
			fail("receive %llu: %d bytes, not %zu",
			     (unsigned long long)m, size, message_size(m));
		flush = &flush;
		CALL("iflush", v11 ? v11->iflush(recv_comm, 1, NULL, &size,
						 &mh, &flush) :
			       v7->iflush(recv_comm, 1, NULL, &size, &mh,
					  &flush));
		if (flush) {
			do
				CALL("test (flush)", net_test(flush, &flush_done,
							      NULL));
			while (!flush_done);
		}
		unpack(buf + (m % (uint64_t)inflight) * SLOT_ROOM,
		       (size_t)size, m);
		CALL("irecvConsumed", net_consumed(reqs[m % (uint64_t)inflight]));
		reqs[m % (uint64_t)inflight] = NULL;
		done_n++;
		messages++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t_last);
	CALL("deregMr (recv)", net_dereg(recv_comm, mh));
	CALL("closeRecv", net_close(recv_comm, 0));
	recv_comm = NULL;
	free(buf);
}

/* The handle goes to the other rank as NCCL's bootstrap would take it. */
static void write_handle(void)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", handle_path);
	f = fopen(tmp, "w");
	if (!f || fwrite(handle, sizeof(handle), 1, f) != 1 || fclose(f) ||
	    rename(tmp, handle_path))
		fail("%s: %s", handle_path, strerror(errno));
}

static void read_handle(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	FILE *f;
	int i;

	for (i = 0; i < 3000 && !(f = fopen(handle_path, "r")); i++)
		nanosleep(&ts, NULL);	/* until the receiver has listened */
	if (!f || fread(handle, sizeof(handle), 1, f) != 1)
		fail("%s: no handle", handle_path);
	fclose(f);
}

/* Strangers at both ports: the handle's addresses are in its bytes 16
 * (control) and 44 (data), as the plugin lays them out.
 */
static void intrude(void)
{
	static const char garbage[64] = "GET / HTTP/1.0";
	struct sockaddr_storage ctl, data;
	socklen_t len;
	int fds[3], i;

	memset(&ctl, 0, sizeof(ctl));
	memset(&data, 0, sizeof(data));
	memcpy(&ctl, handle + 16, 28);
	memcpy(&data, handle + 44, 28);
	len = ctl.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
					 sizeof(struct sockaddr_in6);
	for (i = 0; i < 3; i++) {
		fds[i] = socket(ctl.ss_family, SOCK_STREAM, 0);
		if (fds[i] < 0 ||
		    connect(fds[i], (struct sockaddr *)(i == 2 ? &data : &ctl),
			    len))
			fail("intruder: %s", strerror(errno));
	}
	if (send(fds[1], garbage, sizeof(garbage), 0) != sizeof(garbage))
		fail("intruder: %s", strerror(errno));
	/* fds[0] stays silent and open until the end */
}

static void usage(void)
{
	fprintf(stderr, "usage: harness PLUGIN [--api v7|v11] [--sizes LIST] [--repeat N] [--inflight N] [--tx-udmabuf] [--close-early N] [--bad-tag] [--role both|recv|send --handle FILE] [--intruder] [--oversize] [--no-check] [--host-mem]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	ncclNetProperties_v11_t p11;
	ncclNetProperties_v7_t p7;
	const char *api = "v11", *list = "1,4096,65536,1M,4M";
	void *lib, *cuda;
	int (*outstanding)(void);
	pthread_t th;
	int i, ndev, ptr, type, version, max_recvs;
	double secs;
	char *copy, *tok, *save;
	ncclNetCommConfig_v11_t cfg = { .trafficClass = -1 };

	if (argc < 2)
		usage();
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--api") && i + 1 < argc)
			api = argv[++i];
		else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--inflight") && i + 1 < argc)
			inflight = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--close-early") && i + 1 < argc)
			close_early = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tx-udmabuf"))
			tx_udmabuf = 1;
		else if (!strcmp(argv[i], "--bad-tag"))
			bad_tag = 1;
		else if (!strcmp(argv[i], "--role") && i + 1 < argc)
			role = argv[++i];
		else if (!strcmp(argv[i], "--handle") && i + 1 < argc)
			handle_path = argv[++i];
		else if (!strcmp(argv[i], "--intruder"))
			intruder = 1;
		else if (!strcmp(argv[i], "--oversize"))
			oversize = 1;
		else if (!strcmp(argv[i], "--no-check"))
			no_check = 1;
		else if (!strcmp(argv[i], "--host-mem"))
			host_mem = 1;
		else
			usage();
	}
	if (repeat < 1 || inflight < 1 || inflight > 16 ||
	    (strcmp(role, "both") && strcmp(role, "recv") &&
	     strcmp(role, "send")))
		usage();
	copy = strdup(list);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nsizes == MAX_SIZES)
			usage();
		sizes[nsizes++] = parse_size(tok);
	}
	free(copy);
	if (!nsizes)
		usage();

	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "harness: %s\n", dlerror());
		return 1;
	}
	if (!strcmp(api, "v11"))
		v11 = dlsym(lib, "ncclNetPlugin_v11");
	else if (!strcmp(api, "v7"))
		v7 = dlsym(lib, "ncclNetPlugin_v7");
	else
		usage();
	if (!v11 && !v7)
		fail("no ncclNetPlugin_%s in %s", api, argv[1]);
	if (v11)
		CALL("init", v11->init(&ctx, 1, &cfg, logger, NULL));
	else
		CALL("init", v7->init(logger));
	CALL("devices", v11 ? v11->devices(&ndev) : v7->devices(&ndev));
	if (ndev != 1)
		fail("devices: %d", ndev);
	if (v11) {
		CALL("getProperties", v11->getProperties(0, &p11));
		ptr = p11.ptrSupport;
		type = p11.netDeviceType;
		version = p11.netDeviceVersion;
		max_recvs = p11.maxRecvs;
		if (!p11.maxP2pBytes || p11.maxP2pBytes > SLOT_ROOM ||
		    p11.maxCollBytes != p11.maxP2pBytes)
			fail("maxP2pBytes %zu, maxCollBytes %zu", p11.maxP2pBytes,
			     p11.maxCollBytes);
		max_message = p11.maxP2pBytes;
	} else {
		CALL("getProperties", v7->getProperties(0, &p7));
		ptr = p7.ptrSupport;
		type = p7.netDeviceType;
		version = p7.netDeviceVersion;
		max_recvs = p7.maxRecvs;
	}
	if (type != NCCL_NET_DEVICE_UNPACK || version != 7 || max_recvs != 1 ||
	    !(ptr & NCCL_PTR_CUDA))
		fail("properties: device type %d version %d maxRecvs %d ptrSupport %#x",
		     type, version, max_recvs, ptr);

	if (strcmp(role, "send")) {
		CALL("listen", net_listen());
		if (handle_path)
			write_handle();
		if (intruder)
			intrude();
	} else if (handle_path) {
		read_handle();
	} else {
		usage();
	}
	if (!strcmp(role, "both")) {
		if (pthread_create(&th, NULL, sender, NULL))
			fail("pthread_create");
		receiver();
		pthread_join(th, NULL);
	} else if (!strcmp(role, "recv")) {
		receiver();
	} else {
		sender(NULL);
	}
	if (close_early >= 0) {
		if (recv_comm)
			CALL("closeRecv", net_close(recv_comm, 0));
		if (send_comm)
			CALL("closeSend", net_close(send_comm, 1));
	}
	if (v11)
		CALL("finalize", v11->finalize(ctx));
	/* Everything the plugin took from the (stand-in) driver is back. */
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	outstanding = cuda ? (int (*)(void))dlsym(cuda, "fake_cuda_outstanding") :
			     NULL;
	if (outstanding && outstanding())
		fail("%d allocations of the CUDA driver left", outstanding());
	if (!strcmp(role, "send")) {
		printf("harness: %s, %llu messages sent\n", api,
		       (unsigned long long)total_messages());
		return 0;
	}
	printf("harness: %s, %llu messages, %llu bytes %s, %llu records\n",
	       api, (unsigned long long)messages,
	       (unsigned long long)bytes_checked,
	       no_check ? "received" : "checked",
	       (unsigned long long)records_seen);
	if (no_check && messages) {
		secs = (double)(t_last.tv_sec - t_accepted.tv_sec) +
		       (double)(t_last.tv_nsec - t_accepted.tv_nsec) / 1e9;
		printf("harness: receive phase %.3f s, %.0f Mbit/s\n", secs,
		       secs > 0 ? (double)bytes_checked * 8 / secs / 1e6 : 0);
	}
	return 0;
}
