/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * The GPU unpack kernel (cuda/unpack.cu, built by nvcc into a fatbin) as
 * read-only data of the library, for cuModuleLoadData. The Makefile
 * assembles this only where nvcc built the fatbin (DEVMEM_UNPACK_FATBIN
 * is its path).
 */
#define DEVMEM_STR1(x)	#x
#define DEVMEM_STR(x)	DEVMEM_STR1(x)

	.section .rodata
	.balign 64
	.globl devmem_unpack_fatbin
	.hidden devmem_unpack_fatbin
	.type devmem_unpack_fatbin, @object
devmem_unpack_fatbin:
	.incbin DEVMEM_STR(DEVMEM_UNPACK_FATBIN)
	.size devmem_unpack_fatbin, . - devmem_unpack_fatbin

	.section .note.GNU-stack, "", @progbits
