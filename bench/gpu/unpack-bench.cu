// SPDX-License-Identifier: GPL-2.0
/*
 * GPU unpack throughput against a device-to-device copy of the same
 * bytes, on an NVIDIA GPU: for each fragment size and batch size, a
 * batch of fragments of a CUDA dma-buf (libdevmem's provider), one per
 * buffer of the next 4 KiB multiple, the buffers in shuffled order as a
 * receive leaves them, gathered with devmem_unpack_gather(); and one
 * cudaMemcpyAsync of the batch's byte count. Both are timed with CUDA
 * events on the same stream, alternating, after a kernel that keeps the
 * GPU busy while the host queues the work (so the host's building of the
 * fragment list is not counted as GPU time, but its copy to the GPU is).
 *
 *   unpack-bench [-r RUNS]      (default 9; medians)
 *
 * Prints one row per case: fragment size, batch, GB/s of each (payload
 * bytes per second), and unpack / copy.
 */
#include <cuda_runtime.h>
#include <devmem.h>

#include <algorithm>
#include <random>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vector>

#define CUDA_OK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess) {				\
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, \
				cudaGetErrorString(e_));		\
			exit(1);					\
		}							\
	} while (0)

static __global__ void spin(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1448, 4096, 8948, 16384 };
	static const size_t batches[] = { 64, 256, 1024, 4096, 16384, 65536 };
	const size_t max_batch = 65536, slot_max = 16384;
	const size_t src_size = max_batch * slot_max;	/* 1 GiB */
	struct devmem_dmabuf *db;
	struct devmem_unpack *up;
	cudaEvent_t e0, e1;
	cudaStream_t st;
	void *dst, *copy_src, *list_host, *list_dev;
	int runs = 9, opt, ret, clock_khz = 0;
	cudaDeviceProp prop;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r' || (runs = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: unpack-bench [-r RUNS]\n");
			return 2;
		}
	}
	ret = devmem_dmabuf_new_cuda(&db, 0, src_size);
	if (ret) {
		fprintf(stderr, "no CUDA dma-buf: %s\n", devmem_last_error());
		return 77;
	}
	ret = devmem_unpack_new(&up, db, max_batch);
	if (ret) {
		fprintf(stderr, "devmem_unpack_new: %s\n", devmem_last_error());
		return 1;
	}
	CUDA_OK(cudaGetDeviceProperties(&prop, 0));
	CUDA_OK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
	CUDA_OK(cudaMemset(devmem_dmabuf_cuda_addr(db), 0x5a, src_size));
	CUDA_OK(cudaMalloc(&dst, src_size));
	CUDA_OK(cudaMalloc(&copy_src, src_size));
	CUDA_OK(cudaMemset(copy_src, 0x33, src_size));
	CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CUDA_OK(cudaMallocHost(&list_host, (max_batch + 1) * 16));
	CUDA_OK(cudaMalloc(&list_dev, (max_batch + 1) * 16));
	CUDA_OK(cudaEventCreate(&e0));
	CUDA_OK(cudaEventCreate(&e1));

	printf("GPU: %s, %d SMs; %d runs per case, medians; GB/s of payload\n",
	       prop.name, prop.multiProcessorCount, runs);
	printf("%8s %8s %12s %12s %12s %8s %9s %9s %9s\n", "frag", "batch", "bytes",
	       "unpack GB/s", "memcpy GB/s", "ratio", "unpack us", "memcpy us",
	       "list us");
	for (uint32_t fs : sizes) {
		size_t stride = (fs + 4095) / 4096 * 4096;

		for (size_t nr : batches) {
			std::vector<struct devmem_frag> frags(nr);
			std::vector<size_t> slot(src_size / stride);
			std::vector<double> tu, tc, tl;
			size_t bytes = nr * fs;
			float ms;

			for (size_t i = 0; i < slot.size(); i++)
				slot[i] = i;
			std::mt19937 rng(fs * 7 + (unsigned int)nr);
			std::shuffle(slot.begin(), slot.end(), rng);
			for (size_t i = 0; i < nr; i++) {
				frags[i].offset = slot[i] * stride;
				frags[i].size = fs;
				frags[i].token = (uint32_t)i;
			}
			for (int r = -2; r < runs; r++) {
				/* busy while the host queues the batch */
				spin<<<1, 1, 0, st>>>((long long)clock_khz * 1);
				CUDA_OK(cudaEventRecord(e0, st));
				if (devmem_unpack_gather(up, frags.data(), nr, dst, st) !=
				    (ssize_t)bytes) {
					fprintf(stderr, "gather: %s\n", devmem_last_error());
					return 1;
				}
				CUDA_OK(cudaEventRecord(e1, st));
				if (devmem_unpack_complete(up, NULL, 1) != 1) {
					fprintf(stderr, "complete: %s\n", devmem_last_error());
					return 1;
				}
				CUDA_OK(cudaEventSynchronize(e1));
				CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
				if (r >= 0)
					tu.push_back(ms);

				spin<<<1, 1, 0, st>>>((long long)clock_khz * 1);
				CUDA_OK(cudaEventRecord(e0, st));
				CUDA_OK(cudaMemcpyAsync(dst, copy_src, bytes,
							cudaMemcpyDeviceToDevice, st));
				CUDA_OK(cudaEventRecord(e1, st));
				CUDA_OK(cudaEventSynchronize(e1));
				CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
				if (r >= 0)
					tc.push_back(ms);

				/* what a copy of the fragment list alone takes */
				spin<<<1, 1, 0, st>>>((long long)clock_khz * 1);
				CUDA_OK(cudaEventRecord(e0, st));
				CUDA_OK(cudaMemcpyAsync(list_dev, list_host, (nr + 1) * 16,
							cudaMemcpyHostToDevice, st));
				CUDA_OK(cudaEventRecord(e1, st));
				CUDA_OK(cudaEventSynchronize(e1));
				CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
				if (r >= 0)
					tl.push_back(ms);
			}
			double gu = bytes / (median(tu) * 1e6);
			double gc = bytes / (median(tc) * 1e6);

			printf("%8u %8zu %12zu %12.1f %12.1f %8.2f %9.1f %9.1f %9.1f\n",
			       fs, nr, bytes, gu, gc, gu / gc, median(tu) * 1e3,
			       median(tc) * 1e3, median(tl) * 1e3);
			fflush(stdout);
		}
	}
	devmem_unpack_free(up);
	devmem_dmabuf_free(db);
	return 0;
}
