/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What devmem-tx.c shares with the send fuzzer (fuzz.c): the connected
 * socket, the dma-buf's size, sending ranges of it, waiting until the
 * socket is at rest.
 */
#ifndef SELFTESTS_PROGS_DEVMEM_TX_H
#define SELFTESTS_PROGS_DEVMEM_TX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <linux/sock_diag.h>

#define UNKNOWN_ID	0x7ffffff0u

extern int sock, tcp, connected, v6;
/* bytes of the dma-buf; its byte at offset I is 'a' + I % 26 */
extern size_t dmabuf_size;
/* MSG_ZEROCOPY sends whose completion has been read */
extern uint64_t zc_completed;

const char *errname(int err);
void set_int(int level, int name, const char *what, int v);
ssize_t send_ranges(struct iovec *iov, int niov, uint32_t id,
		    size_t cmsglen, int flags);
void drain_completions(int wait_ms);
void wait_acked(void);
void at_rest(uint32_t mem[SK_MEMINFO_VARS], uint64_t zc_sends);
void fuzz_step(const char *step, uint32_t id);

#endif
