/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checking that argument errors come before any system call: a case runs
 * in a child that may make none but write() and exit().
 */
#ifndef LIBDEVMEM_TEST_NOSYSCALL_H
#define LIBDEVMEM_TEST_NOSYSCALL_H

#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "test.h"

/* valgrind makes system calls of its own for the program it runs. */
static inline int under_valgrind(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload && strstr(preload, "vgpreload");
}

/*
 * Run @fn in a child that may make no system call but write() and
 * exit() (seccomp strict mode; unconfined without seccomp or under
 * valgrind). Its result is the child's exit status; a system call kills
 * it.
 */
static inline int without_syscalls(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (!under_valgrind())
			prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
		syscall(SYS_exit, fn());
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "killed by signal %d: a system call was made\n",
			WTERMSIG(status));
		return T_FAIL;
	}
	return WEXITSTATUS(status);
}

#endif /* LIBDEVMEM_TEST_NOSYSCALL_H */
