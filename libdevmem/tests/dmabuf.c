// SPDX-License-Identifier: GPL-2.0
/*
 * The dma-buf API where no provider is needed: argument checks that come
 * before any device is touched, import of an fd (a memfd stands in for a
 * dma-buf, so the sync ioctl must fail with ENOTTY), read bounds, the
 * error contract of providers that are absent (CUDA without libcuda, a
 * heap that does not exist), the mapped view and its access calls on a
 * memfd, and the per-thread reason text.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <devmem.h>

#include "test.h"

static int has_reason(void)
{
	return devmem_last_error()[0] != '\0';
}

static int test_bad_sizes(void)
{
	struct devmem_dmabuf *db = NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	CHECK_EQ(devmem_dmabuf_new_udmabuf(&db, 1), -EINVAL);
	CHECK(strstr(devmem_last_error(), "page size"));
	CHECK_EQ(devmem_dmabuf_new_udmabuf(&db, 0), -EINVAL);
	CHECK_EQ(devmem_dmabuf_new_udmabuf(&db, page + 1), -EINVAL);
	CHECK_EQ(devmem_dmabuf_new_heap(&db, NULL, page - 1), -EINVAL);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 3 * page / 2), -EINVAL);
	CHECK(has_reason());
	CHECK_EQ(devmem_dmabuf_new_udmabuf(NULL, page), -EINVAL);
	/* huge pages: whole 2 MiB ones, checked before any system call */
	CHECK_EQ(devmem_dmabuf_new_udmabuf_huge(&db, page), -EINVAL);
	CHECK(!strcmp(devmem_last_error(),
		      "size 4096 is not a positive multiple of 2 MiB"));
	CHECK_EQ(devmem_dmabuf_new_udmabuf_huge(&db, 3 << 20), -EINVAL);
	CHECK_EQ(devmem_dmabuf_new_udmabuf_huge(&db, 0), -EINVAL);
	CHECK(db == NULL);
	return T_PASS;
}

static int test_heap_names(void)
{
	struct devmem_dmabuf *db = NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	CHECK_EQ(devmem_dmabuf_new_heap(&db, "", page), -EINVAL);
	CHECK_EQ(devmem_dmabuf_new_heap(&db, "../udmabuf", page), -EINVAL);
	CHECK(strstr(devmem_last_error(), "../udmabuf"));
	CHECK_EQ(devmem_dmabuf_new_heap(&db, "libdevmem-no-such-heap", page),
		 -ENOENT);
	CHECK(strstr(devmem_last_error(),
		     "/dev/dma_heap/libdevmem-no-such-heap"));
	CHECK(db == NULL);
	return T_PASS;
}

/* Absent here, or present: either way the documented contract. */
static int test_cuda_contract(void)
{
	struct devmem_dmabuf *db = NULL;
	size_t size = 2 << 20;
	int ret;

	CHECK_EQ(devmem_dmabuf_new_cuda(&db, -1, size), -EINVAL);
	ret = devmem_dmabuf_new_cuda(&db, 0, size);
	if (!ret) {
		CHECK(db != NULL);
		CHECK_EQ(devmem_dmabuf_kind(db), DEVMEM_DMABUF_CUDA);
		devmem_dmabuf_free(db);
		return T_PASS;
	}
	CHECK(ret == -ENOENT || ret == -ENODEV || ret == -EOPNOTSUPP ||
	      ret == -EIO || ret == -ENOMEM);
	CHECK(has_reason());
	CHECK(db == NULL);
	printf("CUDA: %s: %s\n", strerror(-ret), devmem_last_error());
	if (access("/dev/nvidiactl", F_OK))
		CHECK(ret == -ENOENT || ret == -ENODEV);
	return T_PASS;
}

static int test_import(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct devmem_dmabuf *db;
	struct stat a, b;
	char buf[16];
	int memfd;

	memfd = memfd_create("libdevmem-test", MFD_CLOEXEC);
	CHECK(memfd >= 0);
	CHECK_EQ(ftruncate(memfd, 3 * page), 0);
	CHECK_EQ(lseek(memfd, 5, SEEK_SET), 5);

	CHECK_EQ(devmem_dmabuf_new_import(&db, memfd), 0);
	CHECK(!has_reason());
	CHECK_EQ(devmem_dmabuf_size(db), 3 * page);
	CHECK_EQ(devmem_dmabuf_kind(db), DEVMEM_DMABUF_IMPORTED);
	/* Its own fd on the same file; the caller's is untouched. */
	CHECK(devmem_dmabuf_fd(db) != memfd);
	CHECK_EQ(fstat(memfd, &a), 0);
	CHECK_EQ(fstat(devmem_dmabuf_fd(db), &b), 0);
	CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	CHECK(fcntl(devmem_dmabuf_fd(db), F_GETFD) & FD_CLOEXEC);
	/* Sizing it left the shared file position where it was. */
	CHECK_EQ(lseek(memfd, 0, SEEK_CUR), 5);

	/* Bounds first, then a memfd is no dma-buf: no sync ioctl. */
	CHECK_EQ(devmem_dmabuf_read(db, 3 * page, buf, 1), -EINVAL);
	CHECK_EQ(devmem_dmabuf_read(db, 3 * page - 8, buf, 9), -EINVAL);
	CHECK_EQ(devmem_dmabuf_read(db, UINT64_MAX, buf, 2), -EINVAL);
	CHECK(has_reason());
	CHECK_EQ(devmem_dmabuf_read(db, 3 * page, buf, 0), 0);
	CHECK_EQ(devmem_dmabuf_read(db, 0, buf, sizeof(buf)), -ENOTTY);
	CHECK(strstr(devmem_last_error(), "DMA_BUF_IOCTL_SYNC"));
	devmem_dmabuf_free(db);
	devmem_dmabuf_free(NULL);

	CHECK(fcntl(memfd, F_GETFD) >= 0);
	close(memfd);
	return T_PASS;
}

/*
 * The mapped view of an imported memfd: one address for every call and
 * thread, writable as the fd is; the access calls check their arguments,
 * then fail as the sync ioctl does on a file that is no dma-buf. A
 * read-only fd maps for reading and refuses write access.
 */
static void *map_in_thread(void *arg)
{
	void *addr = NULL;

	if (devmem_dmabuf_map(arg, DEVMEM_ACCESS_READ, &addr))
		return NULL;
	return addr;
}

static int test_map(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct devmem_dmabuf *db, *ro;
	unsigned char *addr, *again, buf[2];
	pthread_t th[4];
	void *got;
	char path[64];
	int memfd, rofd, i;

	memfd = memfd_create("libdevmem-test", MFD_CLOEXEC);
	CHECK(memfd >= 0);
	CHECK_EQ(ftruncate(memfd, 2 * page), 0);
	CHECK_EQ(devmem_dmabuf_new_import(&db, memfd), 0);

	/* arguments first */
	CHECK_EQ(devmem_dmabuf_map(NULL, DEVMEM_ACCESS_READ, (void **)&addr), -EINVAL);
	CHECK_EQ(devmem_dmabuf_map(db, DEVMEM_ACCESS_READ, NULL), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "no place for the address"), 0);
	CHECK_EQ(devmem_dmabuf_map(db, 0, (void **)&addr), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "access 0x0: give DEVMEM_ACCESS_READ, DEVMEM_ACCESS_WRITE or both"), 0);
	CHECK_EQ(devmem_dmabuf_map(db, 4, (void **)&addr), -EINVAL);
	CHECK_EQ(devmem_dmabuf_begin_access(db, 0), -EINVAL);
	CHECK_EQ(devmem_dmabuf_end_access(NULL, DEVMEM_ACCESS_READ), -EINVAL);

	/* several threads at once: one mapping */
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, map_in_thread, db), 0);
	CHECK_EQ(devmem_dmabuf_map(db, DEVMEM_ACCESS_READ | DEVMEM_ACCESS_WRITE,
				   (void **)&addr), 0);
	CHECK(!has_reason());
	for (i = 0; i < 4; i++) {
		CHECK_EQ(pthread_join(th[i], &got), 0);
		CHECK(got == addr);
	}
	CHECK_EQ(devmem_dmabuf_map(db, DEVMEM_ACCESS_WRITE, (void **)&again), 0);
	CHECK(again == addr);
	/* shared and writable: the file sees the writes */
	addr[page + 1] = 0x42;
	CHECK_EQ(pread(memfd, buf, 1, page + 1), 1);
	CHECK_EQ(buf[0], 0x42);
	/* devmem_dmabuf_read() uses the same mapping */
	CHECK_EQ(pwrite(memfd, "xy", 2, 7), 2);
	CHECK_EQ(addr[7], 'x');

	/* a memfd has no DMA_BUF_IOCTL_SYNC */
	CHECK_EQ(devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ), -ENOTTY);
	snprintf(path, sizeof(path), "DMA_BUF_IOCTL_SYNC start on fd %d: ",
		 devmem_dmabuf_fd(db));
	CHECK(!strncmp(devmem_last_error(), path, strlen(path)));
	CHECK_EQ(devmem_dmabuf_end_access(db, DEVMEM_ACCESS_READ |
					  DEVMEM_ACCESS_WRITE), -ENOTTY);
	CHECK(strstr(devmem_last_error(), "DMA_BUF_IOCTL_SYNC end on fd "));

	/* the same file through a read-only fd */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	rofd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(rofd >= 0);
	CHECK_EQ(devmem_dmabuf_new_import(&ro, rofd), 0);
	CHECK_EQ(devmem_dmabuf_map(ro, DEVMEM_ACCESS_WRITE, (void **)&again), -EACCES);
	snprintf(path, sizeof(path), "dma-buf fd %d is open read-only: it cannot be written",
		 devmem_dmabuf_fd(ro));
	CHECK_EQ(strcmp(devmem_last_error(), path), 0);
	CHECK_EQ(devmem_dmabuf_begin_access(ro, DEVMEM_ACCESS_WRITE), -EACCES);
	CHECK_EQ(devmem_dmabuf_map(ro, DEVMEM_ACCESS_READ, (void **)&again), 0);
	CHECK_EQ(again[page + 1], 0x42);
	devmem_dmabuf_free(ro);
	close(rofd);

	devmem_dmabuf_free(db);
	close(memfd);
	return T_PASS;
}

static int test_import_bad(void)
{
	struct devmem_dmabuf *db = NULL;
	int memfd, dir, fd;

	CHECK_EQ(devmem_dmabuf_new_import(&db, -1), -EBADF);
	fd = memfd_create("libdevmem-test", MFD_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(devmem_dmabuf_new_import(&db, fd), -EBADF);
	CHECK(has_reason());

	memfd = memfd_create("libdevmem-test", MFD_CLOEXEC);
	CHECK(memfd >= 0);
	CHECK_EQ(devmem_dmabuf_new_import(&db, memfd), -EINVAL);
	CHECK(strstr(devmem_last_error(), "empty"));
	close(memfd);

	dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dir >= 0);
	CHECK_EQ(devmem_dmabuf_new_import(&db, dir), -EINVAL);
	close(dir);
	CHECK_EQ(devmem_dmabuf_new_import(NULL, 0), -EINVAL);
	CHECK(db == NULL);
	return T_PASS;
}

static void *fail_in_thread(void *arg)
{
	struct devmem_dmabuf *db;

	(void)arg;
	devmem_dmabuf_new_import(&db, -1);
	return (void *)devmem_last_error();
}

static int test_reason_per_thread(void)
{
	struct devmem_dmabuf *db;
	const char *theirs;
	pthread_t t;

	CHECK_EQ(devmem_dmabuf_new_udmabuf(&db, 1), -EINVAL);
	CHECK(strstr(devmem_last_error(), "page size"));
	CHECK_EQ(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
	CHECK_EQ(pthread_join(t, (void **)&theirs), 0);
	CHECK(theirs != devmem_last_error());
	CHECK(strstr(devmem_last_error(), "page size"));
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "bad-sizes", test_bad_sizes },
	{ "heap-names", test_heap_names },
	{ "cuda-contract", test_cuda_contract },
	{ "import", test_import },
	{ "map", test_map },
	{ "import-bad", test_import_bad },
	{ "reason-per-thread", test_reason_per_thread },
};

int main(void)
{
	return T_RUN(cases);
}
