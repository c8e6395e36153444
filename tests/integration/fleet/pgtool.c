/* pgtool: lib/fleet for the fleet integration tests, until the store
 * speaks PostgreSQL. "pgtool migrate URI": connect, migrate, print the
 * schema version; on failure the library's one-line message, exit 2. */
#include <stdio.h>
#include <string.h>

#include "fleet/fleet.h"

int
main(int argc, char **argv)
{
	struct flaky_fleet *f;
	char	 err[1024];
	int	 version;

	if (argc != 3 || strcmp(argv[1], "migrate") != 0) {
		fprintf(stderr, "usage: pgtool migrate URI\n");
		return 2;
	}
	if (flaky_fleet_connect(argv[2], &f, err, sizeof err) < 0) {
		fprintf(stderr, "pgtool: %s\n", err);
		return 2;
	}
	if (flaky_fleet_migrate(f, &version, err, sizeof err) < 0) {
		fprintf(stderr, "pgtool: %s\n", err);
		flaky_fleet_close(f);
		return 2;
	}
	flaky_fleet_close(f);
	printf("schema version %d\n", version);
	return 0;
}
