// SPDX-License-Identifier: GPL-2.0
/*
 * ncdevmem client: the connection and the summary of both clients, and
 * the plain one (no -f, or --plain): TCP to the server, sending stdin
 * until its end or, with -b SIZE, SIZE bytes of the -v pattern. Then it
 * shuts its side down and waits for the peer to close, so that a clean
 * exit means the peer took everything.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ncdevmem.h"

void client_summary(const struct config *cfg, const struct client_stats *st)
{
	double gbps = st->secs > 0 ? st->bytes * 8 / st->secs / 1e9 : 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	if (cfg->json) {
		fprintf(f, "{\"mode\":\"client\",\"bytes\":%llu,",
			(unsigned long long)st->bytes);
		if (cfg->devmem_tx)
			fprintf(f, "\"devmem_dmabuf\":%u,\"devmem_spans\":%llu,"
				"\"completed_bytes\":%llu,", st->dmabuf_id,
				(unsigned long long)st->spans,
				(unsigned long long)st->completed);
		fprintf(f, "\"seconds\":%.3f,\"gbps\":%.3f,\"result\":\"%s\"}\n",
			st->secs, gbps, st->failure ? "fail" : "pass");
	} else {
		fprintf(f, PROG ": client summary\n");
		fprintf(f, "%-16s %llu\n", "bytes:", (unsigned long long)st->bytes);
		if (cfg->devmem_tx) {
			fprintf(f, "%-16s %u\n", "devmem dmabuf:", st->dmabuf_id);
			fprintf(f, "%-16s %llu\n", "devmem spans:",
				(unsigned long long)st->spans);
			fprintf(f, "%-16s %llu\n", "completed bytes:",
				(unsigned long long)st->completed);
		}
		fprintf(f, "%-16s %.3f\n", "seconds:", st->secs);
		fprintf(f, "%-16s %.3f\n", "Gbit/s:", gbps);
		if (st->failure)
			fprintf(f, "%-16s FAIL: %s\n", "result:", st->failure);
		else
			fprintf(f, "%-16s pass\n", "result:");
	}
	emit_block(stdout, f, &text, &len);
}

int client_connect(const struct config *cfg)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *srv, *loc = NULL;
	int fd, err;

	err = getaddrinfo(cfg->server_ip, cfg->port, &hints, &srv);
	if (err) {
		msg("%s port %s: %s", cfg->server_ip, cfg->port, gai_strerror(err));
		return -1;
	}
	fd = socket(srv->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		msg("socket: %s", strerror(errno));
		goto err_free;
	}
	if (cfg->ifname &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, cfg->ifname,
		       strlen(cfg->ifname) + 1)) {
		msg("SO_BINDTODEVICE %s: %s", cfg->ifname, strerror(errno));
		goto err_close;
	}
	if (cfg->client_ip) {
		hints.ai_flags |= AI_PASSIVE;
		err = getaddrinfo(cfg->client_ip, "0", &hints, &loc);
		if (err) {
			msg("%s: %s", cfg->client_ip, gai_strerror(err));
			goto err_close;
		}
		if (bind(fd, loc->ai_addr, loc->ai_addrlen)) {
			msg("bind to %s: %s", cfg->client_ip, strerror(errno));
			goto err_close;
		}
	}
	if (connect(fd, srv->ai_addr, srv->ai_addrlen)) {
		msg("connect to %s port %s: %s", cfg->server_ip, cfg->port,
		    strerror(errno));
		goto err_close;
	}
	if (loc)
		freeaddrinfo(loc);
	freeaddrinfo(srv);
	return fd;

err_close:
	close(fd);
err_free:
	if (loc)
		freeaddrinfo(loc);
	freeaddrinfo(srv);
	return -1;
}

int client_finish(int fd, struct client_stats *st)
{
	char drain[4096];
	ssize_t n;

	/* our end; then the peer's close says it has everything */
	if (shutdown(fd, SHUT_WR)) {
		msg("shutdown: %s", strerror(errno));
		st->failure = "shutdown failed";
		return -1;
	}
	for (;;) {
		n = recv(fd, drain, sizeof(drain), 0);
		if (n < 0 && errno == EINTR && !stop_requested)
			continue;
		if (n < 0) {
			msg("waiting for the peer to close: %s",
			    stop_requested ? "interrupted" : strerror(errno));
			st->failure = stop_requested ? "interrupted" :
				      "the connection failed at the end";
			return -1;
		}
		if (!n)
			return 0;
	}
}

/* All of @len bytes; -1 (with a message) on failure or a stop request. */
static int send_all(int fd, const uint8_t *buf, size_t len,
		    struct client_stats *st, struct progress *pr)
{
	ssize_t n;

	while (len) {
		if (stop_requested) {
			st->failure = "interrupted";
			return -1;
		}
		n = send(fd, buf, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			msg("send: %s", strerror(errno));
			st->failure = "send failed";
			return -1;
		}
		buf += n;
		len -= n;
		st->bytes += n;
		progress_tick(pr, "sent", st->bytes, 0, false);
	}
	return 0;
}

int run_client(const struct config *cfg)
{
	struct client_stats st = { 0 };
	struct progress pr;
	uint8_t *buf;
	size_t i, len, room;
	ssize_t n;
	double t0;
	int fd;

	/* the pattern from any phase: chunk bytes from ref + (off % P) */
	room = cfg->chunk + PATTERN_MAX_PERIOD;
	buf = malloc(room);
	if (!buf) {
		msg("out of memory");
		return EXIT_FAIL;
	}
	if (cfg->has_bytes)
		for (i = 0; i < room; i++)
			buf[i] = pattern_byte(pattern_period(cfg->period), i);

	fd = client_connect(cfg);
	if (fd < 0) {
		free(buf);
		return EXIT_FAIL;
	}
	t0 = now_s();
	progress_init(&pr, cfg->progress, t0);

	if (cfg->has_bytes) {
		unsigned int period = pattern_period(cfg->period);

		while (st.bytes < cfg->bytes) {
			len = cfg->bytes - st.bytes;
			if (len > cfg->chunk)
				len = cfg->chunk;
			if (send_all(fd, buf + st.bytes % period, len, &st, &pr))
				goto out;
		}
	} else {
		for (;;) {
			n = read(STDIN_FILENO, buf, cfg->chunk);
			if (n < 0 && errno == EINTR && !stop_requested)
				continue;
			if (n < 0) {
				msg("stdin: %s", stop_requested ? "interrupted" :
				    strerror(errno));
				st.failure = stop_requested ? "interrupted" :
					     "reading stdin failed";
				goto out;
			}
			if (!n)
				break;
			if (send_all(fd, buf, n, &st, &pr))
				goto out;
		}
	}

	client_finish(fd, &st);
out:
	st.secs = now_s() - t0;
	close(fd);
	free(buf);
	client_summary(cfg, &st);
	return st.failure ? EXIT_FAIL : EXIT_PASS;
}
