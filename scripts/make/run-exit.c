// SPDX-License-Identifier: GPL-2.0
/*
 * A GNU make plugin: $(run-exit COMMAND) runs COMMAND with /bin/sh, with
 * make's standard streams, and when it fails makes make itself exit with
 * COMMAND's exit status. GNU make always exits 2 when a recipe fails;
 * `make vm CMD='exit 3'` must exit 3, so the vm target runs through this.
 */
#include <errno.h>
#include <gnumake.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int plugin_is_GPL_compatible;

static char *run_exit(const char *name, unsigned int argc, char **argv)
{
	pid_t pid;
	int status;

	(void)name;
	(void)argc;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("run-exit: fork");
		exit(2);
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		execl("/bin/sh", "sh", "-c", argv[0], (char *)NULL);
		perror("run-exit: /bin/sh");
		_exit(127);
	}
	/* Let the child have ^C; its status tells make what happened. */
	signal(SIGINT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("run-exit: waitpid");
			exit(2);
		}
	}
	signal(SIGINT, SIG_DFL);
	if (WIFSIGNALED(status))
		exit(128 + WTERMSIG(status));
	if (WEXITSTATUS(status))
		exit(WEXITSTATUS(status));
	return NULL;
}

int run_exit_gmk_setup(const gmk_floc *floc)
{
	(void)floc;
	gmk_add_function("run-exit", run_exit, 1, 1, 0);
	return 1;
}
