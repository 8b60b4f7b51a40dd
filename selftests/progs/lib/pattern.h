/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test stream's pattern, shared by the tools that send and check it:
 *
 *	byte i = byte (i % 8), little-endian, of mix64(base + i / 8)
 *
 * where base = seed * PATTERN_GOLDEN and mix64() is the splitmix64
 * finalizer. It depends only on the seed and the stream offset.
 */
#ifndef TOOLS_COMMON_PATTERN_H
#define TOOLS_COMMON_PATTERN_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PATTERN_GOLDEN	0x9e3779b97f4a7c15ULL

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Word @idx of the stream as it lies in memory (little-endian). */
static inline uint64_t pattern_word(uint64_t base, uint64_t idx)
{
	return htole64(mix64(base + idx));
}

static inline uint8_t pattern_byte(uint64_t base, uint64_t off)
{
	return mix64(base + off / 8) >> (8 * (off % 8));
}

/* Fill @buf with stream bytes [@off, @off + @len). */
static inline void pattern_fill(uint64_t base, uint64_t off, uint8_t *buf, size_t len)
{
	uint64_t w;

	for (; len && off % 8; len--)
		*buf++ = pattern_byte(base, off++);
	for (; len >= 8; len -= 8, buf += 8, off += 8) {
		w = pattern_word(base, off / 8);
		memcpy(buf, &w, 8);
	}
	for (; len; len--)
		*buf++ = pattern_byte(base, off++);
}

/*
 * Check @buf against stream bytes [@off, @off + @len).  Returns the index
 * in @buf of the first wrong byte, or @len if all are right.
 */
static inline size_t pattern_check(uint64_t base, uint64_t off, const uint8_t *buf,
			    size_t len)
{
	size_t i = 0;
	uint64_t w;

	for (; i < len && (off + i) % 8; i++)
		if (buf[i] != pattern_byte(base, off + i))
			return i;
	for (; len - i >= 8; i += 8) {
		memcpy(&w, buf + i, 8);
		if (w != pattern_word(base, (off + i) / 8))
			break;
	}
	for (; i < len; i++)
		if (buf[i] != pattern_byte(base, off + i))
			return i;
	return len;
}

#endif /* TOOLS_COMMON_PATTERN_H */
