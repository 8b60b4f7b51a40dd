// SPDX-License-Identifier: GPL-2.0
/*
 * ncdevmem: a netcat for device-memory TCP, with the options of mainline's
 * tools/testing/selftests/drivers/net/hw/ncdevmem.c, built on libdevmem.
 * See ncdevmem.1 and --help.
 */
#include <stdlib.h>

#include "ncdevmem.h"

int main(int argc, char **argv)
{
	struct config cfg;
	char err[256];
	int ret;

	ret = parse_args(argc, argv, &cfg, err, sizeof(err));
	if (ret < 0) {
		usage(stdout);
		return EXIT_PASS;
	}
	if (ret) {
		msg("%s", err);
		fputs("Try '" PROG " --help'.\n", stderr);
		return EXIT_USAGE;
	}
	if (cfg.dry_run) {
		print_config(stdout, &cfg);
		return EXIT_PASS;
	}
	install_signals();
	if (cfg.server)
		return run_server(&cfg);
	return cfg.devmem_tx ? run_client_devmem(&cfg) : run_client(&cfg);
}
