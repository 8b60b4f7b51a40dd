// SPDX-License-Identifier: GPL-2.0
/*
 * udpsink: bind UDP ports and discard whatever arrives on them, so that
 * datagrams a test sends there draw no ICMP "port unreachable" back.
 *
 * One process serves up to MAX_PORTS ports, IPv4 and IPv6 alike (a
 * dual-stack socket per port; IPv4 only where the kernel has no IPv6).
 * --ready-file is created once every port is bound, so a caller waits for
 * a file instead of polling the socket table.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROG "udpsink"
#define MAX_PORTS 16

#include "../lib/die.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: udpsink [-q] [--ready-file PATH] PORT...\n"
"\n"
"Bind each UDP PORT (1-65535, at most %d) on every address, IPv4 and IPv6,\n"
"and discard the datagrams that arrive until SIGTERM or SIGINT. Then print\n"
"how many datagrams and bytes arrived, unless -q.\n"
"\n"
"Options:\n"
"	--ready-file PATH  create PATH once every port is bound\n"
"	-q, --quiet        print nothing on exit\n"
"	-h, --help         this text\n"
"\n"
"Exit status: 0 after a signal, 1 when a port cannot be bound or a\n"
"receive fails, 2 on a usage error.\n", MAX_PORTS);
}

static void __attribute__((noreturn)) fatal(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(err));
	exit(1);
}

static int fd_is_inet6(int fd)
{
	int domain;
	socklen_t len = sizeof(domain);

	return !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) &&
	       domain == AF_INET6;
}

static int parse_port(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 65535)
		usage_error("bad port '%s'", s);
	return (int)v;
}

/* A socket bound to PORT on every address: dual-stack where possible. */
static int bind_port(int port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	const int type = SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK;
	int zero = 0, fd, ret;
	char what[32];

	fd = socket(AF_INET6, type, 0);
	if (fd >= 0) {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
			       sizeof(zero)))
			fatal("IPV6_V6ONLY", errno);
	} else if (errno == EAFNOSUPPORT) {
		fd = socket(AF_INET, type, 0);
	}
	if (fd < 0)
		fatal("socket", errno);
	snprintf(what, sizeof(what), "bind port %d", port);
	ret = fd_is_inet6(fd) ?
		bind(fd, (struct sockaddr *)&a6, sizeof(a6)) :
		bind(fd, (struct sockaddr *)&a4, sizeof(a4));
	if (ret)
		fatal(what, errno);
	return fd;
}

/* Read and discard what is queued on FD, counting it. */
static void drain(int fd, unsigned long long *datagrams,
		  unsigned long long *bytes)
{
	static char buf[65536];
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n >= 0) {
			(*datagrams)++;
			*bytes += n;
		} else if (errno != EINTR) {
			break;
		}
	}
	if (errno != EAGAIN)
		fatal("recv", errno);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ready-file",	required_argument,	NULL, 'r' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct pollfd pfd[MAX_PORTS];
	unsigned long long datagrams = 0, bytes = 0;
	const char *ready = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	int quiet = 0, nports, i, c;

	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			ready = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage_error("bad option");
		}
	}
	nports = argc - optind;
	if (nports < 1)
		usage_error("no port given");
	if (nports > MAX_PORTS)
		usage_error("at most %d ports", MAX_PORTS);

	/* No SA_RESTART: a signal ends the poll() below. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	for (i = 0; i < nports; i++) {
		pfd[i].fd = bind_port(parse_port(argv[optind + i]));
		pfd[i].events = POLLIN;
	}
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);

		if (fd < 0 || close(fd))
			fatal(ready, errno);
	}

	while (!stop) {
		if (poll(pfd, nports, -1) < 0) {
			if (errno == EINTR)
				continue;
			fatal("poll", errno);
		}
		for (i = 0; i < nports; i++)
			if (pfd[i].revents & POLLIN)
				drain(pfd[i].fd, &datagrams, &bytes);
	}
	/* What arrived before the signal counts too. */
	for (i = 0; i < nports; i++)
		drain(pfd[i].fd, &datagrams, &bytes);
	if (!quiet)
		printf("received %llu datagrams, %llu bytes\n", datagrams,
		       bytes);
	return 0;
}
