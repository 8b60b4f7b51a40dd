// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The configuration, from NCCL_DEVMEM_* in the environment, and the
 * network device it names. A value that cannot be used fails init with
 * a warning that names the variable; NCCL_DEBUG=INFO lists them all.
 */
#include "plugin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NDM_DEFAULT_BUFFER	(64ULL << 20)
#define NDM_DEFAULT_COPY	(8ULL << 20)
#define NDM_DEFAULT_NSOCKS	2

static const struct {
	const char *name, *what;
} ndm_vars[] = {
	{ "NCCL_DEVMEM_IFNAME", "the network device (default: the first one up, not loopback, with an address)" },
	{ "NCCL_DEVMEM_MODE", "auto (default: devmem where the receive set-up works, else copy), devmem or copy" },
	{ "NCCL_DEVMEM_QUEUES", "rx queues to bind, N or FIRST-LAST (default: the device's last)" },
	{ "NCCL_DEVMEM_BUFFER", "what the rx queues are bound to: cuda (default: GPU memory) or udmabuf (host memory)" },
	{ "NCCL_DEVMEM_BUFFER_SIZE", "bytes of the bound buffer, 1M to 4G (default 64M)" },
	{ "NCCL_DEVMEM_RX_PAGE_SIZE", "size of the buffers the card fills, a power of two from 4K (default: the page size)" },
	{ "NCCL_DEVMEM_COPY_BUFFER_SIZE", "bytes of each comm's staging memory in copy mode, 8M to 4G (default 8M)" },
	{ "NCCL_DEVMEM_NSOCKS", "data sockets per comm, 1 to 8 (default 2)" },
	{ "NCCL_DEVMEM_PROXY_COPY", "bytes of a host-memory send NCCL's proxy thread copies into a socket per test(), 0 to 16M, 0 leaving them all to the I/O thread (default: 256K on fewer than 4 CPUs, else 0)" },
	{ "NCCL_DEVMEM_GPU", "CUDA device of the bound buffer (default: the caller's current one)" },
	{ "NCCL_DEVMEM_TRACE", "set: a line per finished send, per finished receive and per consumed one" },
};

void ndm_config_help(void)
{
	size_t i;

	for (i = 0; i < sizeof(ndm_vars) / sizeof(ndm_vars[0]); i++) {
		const char *v = getenv(ndm_vars[i].name);

		NDM_INFO(NCCL_INIT, "%s=%s: %s", ndm_vars[i].name,
			 v ? v : "(unset)", ndm_vars[i].what);
	}
}

static ncclResult_t ndm_bad(const char *var, const char *val, const char *why)
{
	NDM_WARN("%s=%s: %s", var, val, why);
	return ncclInvalidArgument;
}

/* A size: digits with an optional K, M or G (powers of 1024). */
static ncclResult_t ndm_env_size(const char *var, size_t def, size_t min,
				 size_t max, size_t *out)
{
	const char *v = getenv(var);
	unsigned long long n, mul = 1;
	char *end;

	*out = def;
	if (!v)
		return ncclSuccess;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (end == v || errno || *v == '-' || *v == '+')
		return ndm_bad(var, v, "not a size (digits, then K, M or G)");
	switch (*end) {
	case 'K': case 'k': mul = 1ULL << 10; end++; break;
	case 'M': case 'm': mul = 1ULL << 20; end++; break;
	case 'G': case 'g': mul = 1ULL << 30; end++; break;
	}
	if (*end)
		return ndm_bad(var, v, "not a size (digits, then K, M or G)");
	if (n > max / mul || n * mul < min || n * mul > max) {
		char why[96];

		snprintf(why, sizeof(why), "out of range (%zu to %zu bytes)",
			 min, max);
		return ndm_bad(var, v, why);
	}
	if ((n * mul) % 4096)
		return ndm_bad(var, v, "not a multiple of 4096");
	*out = n * mul;
	return ncclSuccess;
}

static ncclResult_t ndm_env_uint(const char *var, const char *v,
				 unsigned long min, unsigned long max,
				 uint32_t *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (end == v || *end || errno || *v == '-' || *v == '+' ||
	    n < min || n > max) {
		char why[64];

		snprintf(why, sizeof(why), "not a number from %lu to %lu",
			 min, max);
		return ndm_bad(var, v, why);
	}
	*out = (uint32_t)n;
	return ncclSuccess;
}

static ncclResult_t ndm_env_queues(struct ndm_config *c)
{
	const char *var = "NCCL_DEVMEM_QUEUES", *v = getenv(var);
	char first[16];
	const char *dash;
	size_t n;

	if (!v)
		return ncclSuccess;
	dash = strchr(v, '-');
	if (!dash) {
		if (ndm_env_uint(var, v, 0, 65535, &c->queue_first))
			return ncclInvalidArgument;
		c->queue_last = c->queue_first;
		c->queues_given = true;
		return ncclSuccess;
	}
	n = (size_t)(dash - v);
	if (n == 0 || n >= sizeof(first))
		return ndm_bad(var, v, "not N or FIRST-LAST");
	memcpy(first, v, n);
	first[n] = 0;
	if (ndm_env_uint(var, first, 0, 65535, &c->queue_first) ||
	    ndm_env_uint(var, dash + 1, 0, 65535, &c->queue_last))
		return ncclInvalidArgument;
	if (c->queue_first > c->queue_last)
		return ndm_bad(var, v, "FIRST is above LAST");
	c->queues_given = true;
	return ncclSuccess;
}

static ncclResult_t ndm_env_choice(const char *var, const char *const *names,
				   int n, int def, int *out)
{
	const char *v = getenv(var);
	char why[96];
	int i;

	*out = def;
	if (!v)
		return ncclSuccess;
	for (i = 0; i < n; i++)
		if (!strcmp(v, names[i])) {
			*out = i;
			return ncclSuccess;
		}
	snprintf(why, sizeof(why), "not one of %s", names[0]);
	for (i = 1; i < n; i++)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s",
			 i == n - 1 ? " or " : ", ", names[i]);
	return ndm_bad(var, v, why);
}

/* The device's first IPv4 address, else its first IPv6 one that is not
 * link-local; with no name, the first device up with one.
 */
static ncclResult_t ndm_find_device(struct ndm_config *c)
{
	struct ifaddrs *ifa, *i;
	const char *want = c->ifname[0] ? c->ifname : NULL;
	int pass;

	if (getifaddrs(&ifa)) {
		NDM_WARN("getifaddrs: %s", strerror(errno));
		return ncclSystemError;
	}
	/* pass 0: IPv4; pass 1: IPv6 */
	for (pass = 0; pass < 2; pass++) {
		for (i = ifa; i; i = i->ifa_next) {
			if (!i->ifa_addr || !(i->ifa_flags & IFF_UP))
				continue;
			if (want ? strcmp(i->ifa_name, want) :
			    !!(i->ifa_flags & IFF_LOOPBACK))
				continue;
			if (pass == 0 && i->ifa_addr->sa_family == AF_INET) {
				memcpy(&ndm.addr.in, i->ifa_addr,
				       sizeof(ndm.addr.in));
				goto found;
			}
			if (pass == 1 && i->ifa_addr->sa_family == AF_INET6 &&
			    !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)
						    i->ifa_addr)->sin6_addr)) {
				memcpy(&ndm.addr.in6, i->ifa_addr,
				       sizeof(ndm.addr.in6));
				goto found;
			}
		}
	}
	freeifaddrs(ifa);
	if (want)
		NDM_WARN("NCCL_DEVMEM_IFNAME=%s: no such device up with an IPv4 or IPv6 address",
			 want);
	else
		NDM_WARN("no network device up with an address: set NCCL_DEVMEM_IFNAME");
	return ncclSystemError;

found:
	snprintf(c->ifname, sizeof(c->ifname), "%s", i->ifa_name);
	freeifaddrs(ifa);
	c->ifindex = (int)if_nametoindex(c->ifname);
	if (c->ifindex <= 0) {
		NDM_WARN("%s: %s", c->ifname, strerror(errno));
		return ncclSystemError;
	}
	return ncclSuccess;
}

static int ndm_sysfs_int(const char *dev, const char *what)
{
	char path[128];
	FILE *f;
	int v = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", dev, what);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * The largest message: one receive is one unpack slot of at most 2048
 * records and 4 MiB, and a device receive makes a record per fragment,
 * about one per packet: at most 2048 packets' payload (the MTU less the
 * IP and TCP headers with timestamps), rounded down to a power of two.
 */
static uint32_t ndm_max_message(int mtu)
{
	uint64_t fit = (uint64_t)NCCL_UNPACK_MAX_RECORDS *
		       (uint64_t)(mtu > 1000 ? mtu - 72 : 1000 - 72);
	uint32_t m = NCCL_UNPACK_MAX_SLICE_SIZE;

	while (m > fit)
		m >>= 1;
	return m;
}

static void ndm_device_facts(const struct ndm_config *c)
{
	char path[128], real[PATH_MAX];
	int speed;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", c->ifname);
	ndm.pci_path[0] = 0;
	if (realpath(path, real))
		snprintf(ndm.pci_path, sizeof(ndm.pci_path), "%s", real);
	speed = ndm_sysfs_int(c->ifname, "speed");
	ndm.speed = speed > 0 ? speed : 10000;
	ndm.mtu = ndm_sysfs_int(c->ifname, "mtu");
	ndm.max_msg = ndm_max_message(ndm.mtu);
}

/*
 * What NCCL may do over this plugin: its kernels run the device unpack in
 * the Simple protocol only (a step of LL or LL128 would wait for bytes
 * left in the bounce buffer), and with NCCL 2.28 Tree steps through an
 * unpack device read the wrong records (measured: wrong sums from the
 * second collective on), so NCCL_PROTO and NCCL_ALGO must allow nothing
 * else. Unset, they are set here (NCCL reads them after the plugin's
 * init); set, they must say Simple (Ring), or exclude the others with ^.
 */
static ncclResult_t ndm_nccl_env(const char *var, const char *only,
				 const char *const *others, int nothers)
{
	const char *v = getenv(var);
	char list[128], why[160], *tok, *save;
	int i, excluded = 0;
	bool only_seen = false, other_seen = false;

	if (!v) {
		setenv(var, only, 0);
		NDM_INFO(NCCL_INIT, "%s=%s: NCCL's device unpack works with nothing else",
			 var, only);
		return ncclSuccess;
	}
	snprintf(list, sizeof(list), "%s", v[0] == '^' ? v + 1 : v);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(tok, only))
			only_seen = true;
		else
			other_seen = true;
		for (i = 0; i < nothers; i++)
			if (!strcasecmp(tok, others[i]))
				excluded++;
	}
	if (v[0] == '^' ? !only_seen && excluded == nothers :
	    only_seen && !other_seen)
		return ncclSuccess;
	snprintf(why, sizeof(why), "NCCL's device unpack needs %s alone (unset it, or set %s or ^%s",
		 only, only, others[0]);
	for (i = 1; i < nothers; i++)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), ",%s",
			 others[i]);
	snprintf(why + strlen(why), sizeof(why) - strlen(why), ")");
	return ndm_bad(var, v, why);
}

static ncclResult_t ndm_nccl_limits(void)
{
	static const char *const protos[] = { "LL", "LL128" };
	static const char *const algos[] = { "Tree" };

	if (ndm_nccl_env("NCCL_PROTO", "Simple", protos, 2) ||
	    ndm_nccl_env("NCCL_ALGO", "Ring", algos, 1))
		return ncclInvalidArgument;
	return ncclSuccess;
}

ncclResult_t ndm_configure(void)
{
	static const char *const modes[] = { "auto", "devmem", "copy" };
	static const char *const buffers[] = { "cuda", "udmabuf" };
	struct ndm_config c = { .gpu = -1 };
	size_t size;
	const char *v;
	uint32_t n;
	int choice;
	char addr[INET6_ADDRSTRLEN];

	ndm_config_help();
	v = getenv("NCCL_DEVMEM_IFNAME");
	if (v) {
		if (!*v || strlen(v) >= sizeof(c.ifname))
			return ndm_bad("NCCL_DEVMEM_IFNAME", v,
				       "not a device name");
		snprintf(c.ifname, sizeof(c.ifname), "%s", v);
	}
	if (ndm_env_choice("NCCL_DEVMEM_MODE", modes, 3, NDM_MODE_AUTO,
			   &choice))
		return ncclInvalidArgument;
	c.mode = (enum ndm_mode)choice;
	if (ndm_env_choice("NCCL_DEVMEM_BUFFER", buffers, 2, NDM_BUFFER_CUDA,
			   &choice))
		return ncclInvalidArgument;
	c.buffer = (enum ndm_buffer)choice;
	/* Records carry 32-bit offsets into the bound buffer. */
	if (ndm_env_size("NCCL_DEVMEM_BUFFER_SIZE", NDM_DEFAULT_BUFFER,
			 1ULL << 20, 4ULL << 30, &c.buffer_size) ||
	    ndm_env_size("NCCL_DEVMEM_COPY_BUFFER_SIZE", NDM_DEFAULT_COPY,
			 2ULL * NCCL_UNPACK_MAX_SLICE_SIZE, 4ULL << 30,
			 &c.copy_buffer) ||
	    ndm_env_queues(&c))
		return ncclInvalidArgument;
	if (ndm_env_size("NCCL_DEVMEM_RX_PAGE_SIZE", 0, 4096, 2ULL << 20, &size))
		return ncclInvalidArgument;
	if (size & (size - 1))
		return ndm_bad("NCCL_DEVMEM_RX_PAGE_SIZE", getenv("NCCL_DEVMEM_RX_PAGE_SIZE"),
			       "not a power of two");
	c.rx_page_size = (uint32_t)size;
	if (size > 4096 && c.buffer == NDM_BUFFER_UDMABUF &&
	    c.buffer_size % (2U << 20))
		return ndm_bad("NCCL_DEVMEM_BUFFER_SIZE", getenv("NCCL_DEVMEM_BUFFER_SIZE") ?: "64M",
			       "not a multiple of 2M, which a udmabuf of huge pages needs (NCCL_DEVMEM_RX_PAGE_SIZE)");
	c.nsocks = NDM_DEFAULT_NSOCKS;
	v = getenv("NCCL_DEVMEM_NSOCKS");
	if (v) {
		if (ndm_env_uint("NCCL_DEVMEM_NSOCKS", v, 1, NDM_MAX_SOCKS, &n))
			return ncclInvalidArgument;
		c.nsocks = (int)n;
	}
	if (ndm_env_size("NCCL_DEVMEM_PROXY_COPY",
			 ndm_cpus_to_spare() ? 0 : NDM_DEFAULT_PROXY_COPY, 0,
			 16ULL << 20, &c.proxy_copy))
		return ncclInvalidArgument;
	v = getenv("NCCL_DEVMEM_GPU");
	if (v) {
		if (ndm_env_uint("NCCL_DEVMEM_GPU", v, 0, 1023, &n))
			return ncclInvalidArgument;
		c.gpu = (int)n;
	}
	if (ndm_nccl_limits())
		return ncclInvalidArgument;
	if (ndm_find_device(&c))
		return ncclSystemError;
	ndm_device_facts(&c);
	ndm.cfg = c;
	if (ndm.addr.sa.sa_family == AF_INET)
		inet_ntop(AF_INET, &ndm.addr.in.sin_addr, addr, sizeof(addr));
	else
		inet_ntop(AF_INET6, &ndm.addr.in6.sin6_addr, addr, sizeof(addr));
	NDM_INFO(NCCL_INIT | NCCL_NET,
		 "device %s (index %d, %s, MTU %d), mode %s, %d data socket(s) per comm, messages of up to %u bytes",
		 c.ifname, c.ifindex, addr, ndm.mtu, modes[c.mode], c.nsocks,
		 ndm.max_msg);
	if (c.proxy_copy)
		NDM_INFO(NCCL_INIT | NCCL_NET,
			 "host-memory sends: the proxy thread copies up to %zu bytes a socket per test(), the I/O thread the rest",
			 c.proxy_copy);
	else
		NDM_INFO(NCCL_INIT | NCCL_NET,
			 "host-memory sends: the I/O thread copies them");
	return ncclSuccess;
}
