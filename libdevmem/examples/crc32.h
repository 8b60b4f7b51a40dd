/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * CRC-32 as zlib's crc32() computes it, for the examples that check what
 * they received: start at 0 and feed each piece in stream order.
 */
#ifndef DEVMEM_EXAMPLE_CRC32_H
#define DEVMEM_EXAMPLE_CRC32_H

#include <stddef.h>
#include <stdint.h>

static uint32_t crc_table[256];

static inline void crc32_init(void)
{
	uint32_t c, i, k;

	for (i = 0; i < 256; i++) {
		for (c = i, k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320 ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static inline uint32_t crc32_update(uint32_t crc, const void *data,
				    size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#endif /* DEVMEM_EXAMPLE_CRC32_H */
