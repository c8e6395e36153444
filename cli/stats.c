/* flakyctl stats: what the database holds and how big it is. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>

#include "flakyctl.h"
#include "store/store.h"
#include "util/util.h"

/* A time, or "-" (table) / null (JSON) when there is none. */
static const char *
when(int64_t ms, char *buf, size_t len)
{
	if (ms == INT64_MIN || ms <= 0)
		return NULL;
	return flaky_format_time(ms, buf, len);
}

/* A day number as a date, or NULL when there is none. */
static const char *
day(int64_t d, char *buf, size_t len)
{
	if (d < 0)
		return NULL;
	return flaky_format_day(d * FLAKY_DAY_MS, buf, len);
}

static int	cmd_stats(struct ctl *, int, char **);

const struct cmd_entry cmd_stats_entry = {
	.name = "stats",
	.usage = "stats",
	.summary = "The database's size, rows and date range.",
	.example = "flakyctl --db /var/lib/flaky/flaky.db stats",
	.exec = cmd_stats,
};

/* flakyctl stats: the figures of flaky_store_db_stats, in words. */
static int
cmd_stats(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_db_stats d;
	const char	*v[5];
	char		 err[1024], b[5][32];
	int		 c, ret = EXIT_ERROR;

	/* No options of its own: only the global ones come back here. */
	cmd_getopt_init(&g, &cmd_stats_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0)
		;
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("stats", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "stats", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0 || flaky_store_db_stats(store, &d, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl stats: %s\n", err);
		goto out;
	}
	v[0] = when(d.first_run_ms, b[0], sizeof b[0]);
	v[1] = when(d.last_run_ms, b[1], sizeof b[1]);
	v[2] = day(d.first_day, b[2], sizeof b[2]);
	v[3] = day(d.last_day, b[3], sizeof b[3]);
	v[4] = when(d.pruned_before_ms, b[4], sizeof b[4]);
	if (ctl->format == FORMAT_JSON) {
		static const char *const k[5] = { "first_run", "last_run",
		    "first_day", "last_day", "pruned_before" };

		printf("{\"path\": ");
		json_string(stdout, flaky_store_name(store));
		printf(", \"schema_version\": %d, \"file_bytes\": %lld, "
		    "\"wal_bytes\": %lld, \"page_size\": %lld, \"pages\": %lld, "
		    "\"free_pages\": %lld,\n \"rows\": {\"targets\": %lld, "
		    "\"tests\": %lld, \"runs\": %lld, \"results\": %lld, "
		    "\"messages\": %lld, \"rollups\": %lld, \"budget\": %lld, "
		    "\"attempts\": %lld, \"quarantined\": %lld}",
		    d.schema_version, (long long)d.file_bytes,
		    (long long)d.wal_bytes, (long long)d.page_size,
		    (long long)d.pages, (long long)d.free_pages,
		    (long long)d.targets, (long long)d.tests, (long long)d.runs,
		    (long long)d.results, (long long)d.messages,
		    (long long)d.rollups, (long long)d.budget,
		    (long long)d.attempts, (long long)d.quarantined);
		for (int i = 0; i < 5; i++) {
			printf(",\n \"%s\": ", k[i]);
			json_string(stdout, v[i]);
		}
		printf("}\n");
	} else {
		printf("database   %s (schema %d)\n", flaky_store_name(store),
		    d.schema_version);
		printf("size       %.1f MiB (+ %.1f MiB WAL), %lld free "
		    "pages\n", (double)d.file_bytes / 1048576.0,
		    (double)d.wal_bytes / 1048576.0, (long long)d.free_pages);
		printf("rows       %lld target%s, %lld test%s, %lld run%s, "
		    "%lld result%s, %lld message%s\n", (long long)d.targets,
		    flaky_plural(d.targets), (long long)d.tests,
		    flaky_plural(d.tests), (long long)d.runs,
		    flaky_plural(d.runs), (long long)d.results,
		    flaky_plural(d.results), (long long)d.messages,
		    flaky_plural(d.messages));
		printf("           %lld rollup%s, %lld budget, %lld attempt%s, "
		    "%lld quarantined\n", (long long)d.rollups,
		    flaky_plural(d.rollups), (long long)d.budget,
		    (long long)d.attempts, flaky_plural(d.attempts),
		    (long long)d.quarantined);
		printf("runs       %s to %s\n", v[0] ? v[0] : "-",
		    v[1] ? v[1] : "-");
		printf("rollups    %s to %s\n", v[2] ? v[2] : "-",
		    v[3] ? v[3] : "-");
		printf("pruned     %s\n", v[4] ? v[4] : "never");
	}
	ret = EXIT_OK;
out:
	flaky_store_close(store);
	return ret;
}
