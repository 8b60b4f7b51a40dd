// SPDX-License-Identifier: GPL-2.0
/*
 * undersized-vm IFNAME QUEUE SIZE [--undersized]: bind a udmabuf of SIZE
 * bytes to rx queue QUEUE of IFNAME with devmem_binding_new_rx_flags()
 * (DEVMEM_BIND_UNDERSIZED when asked), in the test VM
 * (selftests/libdevmem.bats runs it on netdevsim), and unbind.
 *
 * Prints "bound buffers=N", or "refused: ERRNO-NAME: REASON". Exits 0
 * when bound, 1 when refused, 77 without udmabuf, 2 on bad arguments.
 */
#include "vm-stream.h"

int main(int argc, char **argv)
{
	struct devmem_dmabuf *db;
	struct devmem_binding *b;
	unsigned int flags = 0;
	uint32_t queue;
	int ifindex, err;
	char *end;
	size_t size;

	vm_prog = "undersized-vm";
	if (argc == 5 && !strcmp(argv[4], "--undersized"))
		flags = DEVMEM_BIND_UNDERSIZED;
	else if (argc != 4)
		goto err_args;
	ifindex = devmem_ifindex(argv[1]);
	queue = strtoul(argv[2], &end, 10);
	size = vm_parse_bytes(argv[3]);
	if (ifindex < 0 || *end || end == argv[2] || !size)
		goto err_args;

	err = devmem_dmabuf_new_udmabuf(&db, size);
	if (err == -ENOENT)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "udmabuf: %s", devmem_last_error());
	err = devmem_binding_new_rx_flags(&b, ifindex, &queue, 1,
					  devmem_dmabuf_fd(db), 0, flags);
	if (err) {
		printf("refused: %s: %s\n", strerrorname_np(-err),
		       devmem_last_error());
		devmem_dmabuf_free(db);
		return T_FAIL;
	}
	printf("bound buffers=%zu\n", devmem_binding_buffers(b));
	devmem_binding_free(b);
	devmem_dmabuf_free(db);
	return T_PASS;

err_args:
	fprintf(stderr, "%s: bad arguments\n", vm_prog);
	return 2;
}
