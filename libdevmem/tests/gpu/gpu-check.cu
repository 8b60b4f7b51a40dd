// SPDX-License-Identifier: GPL-2.0
/*
 * libdevmem on a machine with an NVIDIA GPU: the CUDA dma-buf provider on
 * the real driver, the whole chain to the kernel's bind-rx, and the GPU
 * unpack on synthetic batches and on receives recorded in the test VM
 * (ncdevmem --trace), every byte checked.
 *
 *   gpu-check [TRACE...]
 *
 * Exit 0 pass, 1 fail, 77 no usable GPU. Prints one line per check.
 */
#include <cuda_runtime.h>
#include <devmem.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
			return;						\
		}							\
	} while (0)

#define CUDA_OK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		CHECK(e_ == cudaSuccess, "%s", cudaGetErrorString(e_));	\
	} while (0)

/* ncdevmem's -v pattern (mainline's): byte i is (i + 1) % P, or '\n'. */
static uint8_t stream_byte(unsigned int period, uint64_t off)
{
	unsigned int s = (unsigned int)((off + 1) % period);

	return s ? (uint8_t)s : '\n';
}

/* a byte of the synthetic source buffers */
static uint8_t src_byte(uint64_t off)
{
	return (uint8_t)(off * 131 + (off >> 11) * 7 + 3);
}

static std::string fdinfo(int fd, const char *key)
{
	char path[64], line[256];
	std::string v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = line + strlen(key);
			while (!v.empty() && (v.back() == '\n' || v.back() == ' ' ||
					      v.back() == '\t'))
				v.pop_back();
			while (!v.empty() && (v[0] == ' ' || v[0] == '\t'))
				v.erase(0, 1);
		}
	fclose(f);
	return v;
}

static size_t gpu_free(void)
{
	size_t fr = 0, total = 0;

	cudaMemGetInfo(&fr, &total);
	return fr;
}

static void check_provider(void)
{
	const size_t size = 64 << 20;
	struct devmem_dmabuf *db;
	std::vector<uint8_t> in(size), out(size);
	std::string exp;
	void *gpu;
	size_t i;
	int ret;

	ret = devmem_dmabuf_new_cuda(&db, 0, size);
	CHECK(ret == 0, "devmem_dmabuf_new_cuda: %d %s", ret, devmem_last_error());
	exp = fdinfo(devmem_dmabuf_fd(db), "exp_name:");
	printf("provider: 64 MiB exported: fd %d, exporter %s, size %lld\n",
	       devmem_dmabuf_fd(db), exp.c_str(),
	       (long long)lseek(devmem_dmabuf_fd(db), 0, SEEK_END));
	CHECK(exp == "nv_dmabuf", "exporter '%s'", exp.c_str());
	CHECK(lseek(devmem_dmabuf_fd(db), 0, SEEK_END) == (off_t)size, "size");
	CHECK(devmem_dmabuf_size(db) == size, "size");
	CHECK(devmem_dmabuf_kind(db) == DEVMEM_DMABUF_CUDA, "kind");
	gpu = devmem_dmabuf_cuda_addr(db);
	CHECK(gpu && (uintptr_t)gpu % 4096 == 0, "address %p", gpu);
	for (i = 0; i < size; i++)
		in[i] = src_byte(i);
	CUDA_OK(cudaMemcpy(gpu, in.data(), size, cudaMemcpyHostToDevice));
	ret = devmem_dmabuf_read(db, 0, out.data(), size);
	CHECK(ret == 0, "read: %s", devmem_last_error());
	CHECK(in == out, "the bytes read back differ");
	ret = devmem_dmabuf_read(db, size - 4096, out.data(), 4097);
	CHECK(ret == -EINVAL, "read past the end: %d", ret);
	devmem_dmabuf_free(db);
	printf("ok provider: export, exporter nv_dmabuf, size, read back\n");
}

static void check_provider_errors(void)
{
	struct devmem_dmabuf *db = NULL;
	int ret;

	ret = devmem_dmabuf_new_cuda(&db, 0, 4097);
	printf("provider: size 4097: %d %s\n", ret, devmem_last_error());
	CHECK(ret == -EINVAL, "%d", ret);
	ret = devmem_dmabuf_new_cuda(&db, 99, 4096);
	printf("provider: device 99: %d %s\n", ret, devmem_last_error());
	CHECK(ret == -ENODEV, "%d", ret);
	ret = devmem_dmabuf_new_cuda(&db, 0, (size_t)1 << 40);
	printf("provider: 1 TiB: %d %s\n", ret, devmem_last_error());
	CHECK(ret == -ENOMEM, "%d", ret);
	CHECK(!db, "a buffer after failures");
	printf("ok provider: errors (size, device, memory)\n");
}

/*
 * Another holder of the dma-buf (what a binding is in the kernel) keeps
 * the GPU memory: it comes back only when both the buffer and the holder
 * are gone, in either order.
 */
static void check_free_order(void)
{
	const size_t size = (size_t)1 << 30;
	struct devmem_dmabuf *db;
	size_t before, held, after_first, after_both;
	int order, holder, ret;

	for (order = 0; order < 2; order++) {
		before = gpu_free();
		ret = devmem_dmabuf_new_cuda(&db, 0, size);
		CHECK(ret == 0, "%s", devmem_last_error());
		holder = dup(devmem_dmabuf_fd(db));
		CHECK(holder >= 0, "dup");
		held = gpu_free();
		if (order == 0) {
			devmem_dmabuf_free(db);
			after_first = gpu_free();
			CHECK(fdinfo(holder, "exp_name:") == "nv_dmabuf",
			      "the holder's dma-buf is gone");
			close(holder);
		} else {
			close(holder);
			after_first = gpu_free();
			devmem_dmabuf_free(db);
		}
		after_both = gpu_free();
		printf("free order %s: GPU free MiB: before %zu, exported %zu, "
		       "after the first release %zu, after both %zu\n",
		       order ? "holder first" : "buffer first",
		       before >> 20, held >> 20, after_first >> 20,
		       after_both >> 20);
		CHECK(held + size - (64 << 20) <= before, "1 GiB was not taken");
		/* still taken while the other holds it */
		CHECK(after_first + size - (64 << 20) <= before,
		      "memory came back while the dma-buf was held");
		CHECK(after_both + (64 << 20) >= before, "memory did not come back");
	}
	printf("ok free order: the memory stays until the last holder lets go\n");
}

/* The driver of network device @name ("" when /sys does not say). */
static std::string net_driver(const char *name)
{
	char path[256], target[256];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device/driver", name);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return "";
	target[n] = 0;
	base = strrchr(target, '/');
	return base ? base + 1 : target;
}

/* The machine's own kernel (mainline) through libdevmem: bind-rx of GPU
 * memory on its NIC (a virtio one where there is one), which cannot do
 * device memory.
 */
static void check_bind_rx(void)
{
	struct if_nameindex *ifs, *i;
	struct devmem_binding *b = NULL;
	struct devmem_dmabuf *db;
	uint32_t queue = 0;
	int ifindex = 0, ret;
	std::string name, driver;

	ifs = if_nameindex();
	for (i = ifs; i && i->if_index; i++) {
		std::string d = net_driver(i->if_name);

		if (!strcmp(i->if_name, "lo"))
			continue;
		if (!ifindex || (d == "virtio_net" && driver != "virtio_net")) {
			ifindex = (int)i->if_index;
			name = i->if_name;
			driver = d;
		}
	}
	if_freenameindex(ifs);
	CHECK(ifindex > 0, "no network device but lo");
	ret = devmem_dmabuf_new_cuda(&db, 0, 16 << 20);
	CHECK(ret == 0, "%s", devmem_last_error());
	ret = devmem_binding_new_rx(&b, ifindex, &queue, 1, devmem_dmabuf_fd(db));
	printf("bind-rx of GPU memory on %s (driver %s, ifindex %d) queue 0: %d (%s): %s\n",
	       name.c_str(), driver.empty() ? "none" : driver.c_str(), ifindex,
	       ret, strerror(-ret), devmem_last_error());
	devmem_binding_free(b);
	devmem_dmabuf_free(db);
	CHECK(ret == -EOPNOTSUPP, "%d", ret);
	printf("ok bind-rx: the kernel refuses with EOPNOTSUPP\n");
}

/* Gather @frags of @db's GPU memory (holding src_byte()s) and compare. */
static void gather_check(struct devmem_unpack *up, struct devmem_dmabuf *db,
			 const std::vector<struct devmem_frag> &frags,
			 const std::vector<uint8_t> &want, void *dst,
			 const char *what)
{
	std::vector<uint8_t> got(want.size());
	ssize_t n;
	int ret;

	(void)db;
	CUDA_OK(cudaMemset(dst, 0xee, want.size()));
	n = devmem_unpack_gather(up, frags.data(), frags.size(), dst, NULL);
	CHECK(n == (ssize_t)want.size(), "%s: gather %zd: %s", what, n,
	      devmem_last_error());
	ret = devmem_unpack_complete(up, NULL, 1);
	CHECK(ret == 1, "%s: complete %d: %s", what, ret, devmem_last_error());
	CUDA_OK(cudaMemcpy(got.data(), dst, got.size(), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < got.size(); i++)
		CHECK(got[i] == want[i], "%s: byte %zu is %u, not %u", what, i,
		      got[i], want[i]);
}

static void check_unpack_synthetic(void)
{
	const size_t size = 256 << 20;
	static const uint32_t sizes[] = { 1, 7, 100, 1448, 4096, 8948, 16384, 65536 };
	struct devmem_dmabuf *db;
	struct devmem_unpack *up;
	std::vector<uint8_t> img(size);
	void *dst;
	unsigned int seed = 1;
	int ret;

	ret = devmem_dmabuf_new_cuda(&db, 0, size);
	CHECK(ret == 0, "%s", devmem_last_error());
	for (size_t i = 0; i < size; i++)
		img[i] = src_byte(i);
	CUDA_OK(cudaMemcpy(devmem_dmabuf_cuda_addr(db), img.data(), size,
			   cudaMemcpyHostToDevice));
	ret = devmem_unpack_new(&up, db, 65536);
	CHECK(ret == 0, "unpack_new: %s", devmem_last_error());
	CUDA_OK(cudaMalloc(&dst, size));

	for (uint32_t fs : sizes) {
		for (size_t nr : { (size_t)1, (size_t)64, (size_t)1000, (size_t)65536 }) {
			std::vector<struct devmem_frag> frags;
			std::vector<uint8_t> want;
			char what[96];

			if ((uint64_t)nr * fs > size / 2)
				continue;
			for (size_t k = 0; k < nr; k++) {
				struct devmem_frag f = {};

				seed = seed * 1103515245 + 12345;
				/* any start: aligned, odd, at the very end */
				f.offset = (k % 5 == 4) ? size - fs :
					   (seed >> 4) % (size - fs);
				if (k % 3 == 0)
					f.offset &= ~4095ULL;
				f.size = fs;
				f.token = (uint32_t)k;
				frags.push_back(f);
				want.insert(want.end(), img.begin() + f.offset,
					    img.begin() + f.offset + fs);
			}
			snprintf(what, sizeof(what), "%zu fragments of %u bytes", nr, fs);
			gather_check(up, db, frags, want, dst, what);
			if (failures)
				goto out;
		}
	}
	printf("ok unpack: synthetic batches (1 to 65536 fragments, 1 to 65536 bytes, any alignment)\n");
out:
	cudaFree(dst);
	devmem_unpack_free(up);
	devmem_dmabuf_free(db);
}

/* A recorded receive: its device fragments, in stream order, replayed in
 * batches in which no two fragments share a page (as in a real receive,
 * where a buffer comes back only after its fragment was used).
 */
static void check_trace(const char *path)
{
	struct devmem_dmabuf *db = NULL;
	struct devmem_unpack *up = NULL;
	std::vector<struct devmem_frag> all;
	std::vector<uint64_t> at;	/* stream offset of each */
	unsigned long long dsize = 0, off = 0, a, b;
	unsigned int period = 0;
	size_t batches = 0, linear = 0, i;
	char line[128], kind;
	void *dst = NULL;
	FILE *f;
	int ret;

	f = fopen(path, "re");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "# ncdevmem trace 1: dmabuf-size %llu period %u",
		   &dsize, &period) != 2) {
		fclose(f);
		CHECK(0, "%s: not an ncdevmem trace", path);
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%c %llu %llu", &kind, &a, &b) == 3 && kind == 'd') {
			struct devmem_frag fr = {};

			fr.offset = a;
			fr.size = (uint32_t)b;
			all.push_back(fr);
			at.push_back(off);
			off += b;
		} else if (sscanf(line, "%c %llu", &kind, &a) == 2 &&
			   (kind == 'l' || kind == 'h')) {
			off += a;
			linear += a;
		}
	}
	fclose(f);
	CHECK(period && dsize && !all.empty(), "%s: empty trace", path);

	ret = devmem_dmabuf_new_cuda(&db, 0, dsize);
	CHECK(ret == 0, "%s", devmem_last_error());
	ret = devmem_unpack_new(&up, db, 4096);
	CHECK(ret == 0, "%s", devmem_last_error());
	CUDA_OK(cudaMalloc(&dst, (size_t)4096 * 65536));
	{
		std::vector<uint8_t> img(dsize);
		std::vector<uint32_t> stamp(dsize / 4096 + 1, 0);

		for (i = 0; i < all.size();) {
			std::vector<struct devmem_frag> batch;
			std::vector<uint8_t> want;

			batches++;
			while (i < all.size() && batch.size() < 4096) {
				const struct devmem_frag &fr = all[i];
				uint64_t p0 = fr.offset / 4096;
				uint64_t p1 = (fr.offset + fr.size - 1) / 4096, p;
				bool clash = false;

				for (p = p0; p <= p1; p++)
					clash |= stamp[p] == batches;
				if (clash)
					break;
				for (p = p0; p <= p1; p++)
					stamp[p] = (uint32_t)batches;
				for (uint32_t k = 0; k < fr.size; k++) {
					img[fr.offset + k] = stream_byte(period, at[i] + k);
					want.push_back(img[fr.offset + k]);
				}
				batch.push_back(fr);
				i++;
			}
			CUDA_OK(cudaMemcpy(devmem_dmabuf_cuda_addr(db), img.data(),
					   dsize, cudaMemcpyHostToDevice));
			gather_check(up, db, batch, want, dst, path);
			if (failures)
				goto out;
		}
	}
	printf("ok trace %s: %zu device fragments (%llu bytes of the stream, %zu linear) in %zu batches, validated\n",
	       path, all.size(), off, linear, batches);
out:
	cudaFree(dst);
	devmem_unpack_free(up);
	devmem_dmabuf_free(db);
}

int main(int argc, char **argv)
{
	struct devmem_dmabuf *db;
	cudaDeviceProp prop;
	int ret, i;

	ret = devmem_dmabuf_new_cuda(&db, 0, 4096);
	if (ret) {
		printf("skip: no CUDA dma-buf: %s\n", devmem_last_error());
		return 77;
	}
	devmem_dmabuf_free(db);
	if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
		printf("GPU: %s, %d SMs, %.1f GiB\n", prop.name,
		       prop.multiProcessorCount,
		       prop.totalGlobalMem / 1073741824.0);

	check_provider();
	check_provider_errors();
	check_free_order();
	check_bind_rx();
	check_unpack_synthetic();
	for (i = 1; i < argc; i++)
		check_trace(argv[i]);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
