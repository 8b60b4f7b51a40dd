// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The GPU side of devmem_unpack_gather(): copy a batch of fragments of a
 * GPU buffer, each at its own offset, to consecutive places of another.
 * Built into a fatbin that libdevmem embeds and loads through the CUDA
 * driver API (src/unpack.c); nothing here is linked into user programs.
 *
 * A group of G threads (a power of two from 32 to 1024, chosen per batch
 * by the host so that small batches still spread over the whole GPU)
 * copies one fragment at a time, the groups striding over the batch. The
 * threads write aligned 16-byte words of the destination; a fragment
 * whose source is not at the same offset modulo 16 builds each word from
 * two aligned source words with a funnel shift, so every load and store
 * stays a full 16-byte access. The few bytes before the destination's
 * first aligned word and after its last are copied one by one.
 *
 * Two entry points differ only in where the fragment list is. The host
 * writes it once into pinned host memory, which the kernel reads in place
 * as it goes (each group loading the next entry while it copies), so no
 * separate copy to the GPU has to finish before the kernel starts. A
 * batch of up to DEVMEM_UNPACK_SMALL fragments travels in the launch's
 * own parameters (4 KiB) instead, which is quicker still.
 */
#include <stdint.h>

/* Fragment i is list[i].src .. +(list[i + 1].dst - list[i].dst) of the
 * source, and goes to list[i].dst of the destination: n + 1 entries, the
 * last carrying only the total.
 */
struct devmem_unpack_ent {
	unsigned long long src;
	unsigned long long dst;
};

#define DEVMEM_UNPACK_SMALL	250

struct devmem_unpack_small {
	struct devmem_unpack_ent list[DEVMEM_UNPACK_SMALL + 1];
};

/* Bytes 4Q + r/8 .. 4Q + r/8 + 15 of the 32 bytes a, b. The index is a
 * template argument so that the eight words stay in registers.
 */
template <unsigned int Q>
static __device__ __forceinline__ uint4 devmem_words(uint4 a, uint4 b,
						     unsigned int r)
{
	const unsigned int w[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };
	uint4 o;

	o.x = __funnelshift_r(w[Q], w[Q + 1], r);
	o.y = __funnelshift_r(w[Q + 1], w[Q + 2], r);
	o.z = __funnelshift_r(w[Q + 2], w[Q + 3], r);
	o.w = __funnelshift_r(w[Q + 3], w[Q + 4], r);
	return o;
}

/* Bytes k .. k + 15 of the 32 bytes a, b. */
static __device__ __forceinline__ uint4 devmem_shift16(uint4 a, uint4 b,
						       unsigned int k)
{
	unsigned int r = (k & 3) * 8;

	switch (k >> 2) {
	case 0:
		return devmem_words<0>(a, b, r);
	case 1:
		return devmem_words<1>(a, b, r);
	case 2:
		return devmem_words<2>(a, b, r);
	default:
		return devmem_words<3>(a, b, r);
	}
}

/* @len bytes from @s to @d by the @g threads of a group, this one @t. */
static __device__ __forceinline__ void
devmem_group_copy(unsigned char *d, const unsigned char *s,
		  unsigned long long len, unsigned int t, unsigned int g)
{
	unsigned long long head = (16 - ((uintptr_t)d & 15)) & 15;
	unsigned long long nvec, i;
	const uint4 *sa;
	uint4 *da;
	unsigned int k;

	if (head > len)
		head = len;
	if (t < head)
		d[t] = s[t];
	d += head;
	s += head;
	len -= head;

	nvec = len / 16;
	k = (uintptr_t)s & 15;
	sa = (const uint4 *)(s - k);
	da = (uint4 *)d;
	if (!k) {
#pragma unroll 4
		for (i = t; i < nvec; i += g)
			da[i] = __ldg(&sa[i]);
	} else {
		/* Word i needs source bytes 16i + k .. 16i + k + 15 from
		 * sa: words i and i + 1, the second never past the aligned
		 * word that holds the fragment's last byte.
		 */
#pragma unroll 4
		for (i = t; i < nvec; i += g)
			da[i] = devmem_shift16(__ldg(&sa[i]), __ldg(&sa[i + 1]), k);
	}

	i = nvec * 16 + t;
	if (i < len)
		d[i] = s[i];
}

static __device__ __forceinline__ void
devmem_unpack(const struct devmem_unpack_ent *list, unsigned int n,
	      const unsigned char *src, unsigned char *dst, unsigned int g)
{
	unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x +
				 threadIdx.x;
	unsigned long long groups = gridDim.x * (unsigned long long)blockDim.x / g;
	unsigned int t = threadIdx.x & (g - 1);
	unsigned long long f;

	unsigned long long src_off, dst_off, end, nsrc = 0, ndst = 0, nend = 0;

	f = tid / g;
	if (f >= n)
		return;
	src_off = list[f].src;
	dst_off = list[f].dst;
	end = list[f + 1].dst;
	for (;;) {
		unsigned long long next = f + groups;

		/* the next entry is on its way while this one is copied */
		if (next < n) {
			nsrc = list[next].src;
			ndst = list[next].dst;
			nend = list[next + 1].dst;
		}
		devmem_group_copy(dst + dst_off, src + src_off, end - dst_off,
				  t, g);
		if (next >= n)
			break;
		f = next;
		src_off = nsrc;
		dst_off = ndst;
		end = nend;
	}
}

extern "C" __global__ void
devmem_unpack_kernel(const struct devmem_unpack_ent *list, unsigned int n,
		     const unsigned char *src, unsigned char *dst,
		     unsigned int g)
{
	devmem_unpack(list, n, src, dst, g);
}

extern "C" __global__ void
devmem_unpack_kernel_small(const __grid_constant__ struct devmem_unpack_small p,
			   unsigned int n, const unsigned char *src,
			   unsigned char *dst, unsigned int g)
{
	devmem_unpack(p.list, n, src, dst, g);
}
