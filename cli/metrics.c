/* flakyctl metrics: the current figures in the Prometheus text format, for
 * node_exporter's textfile collector. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "output.h"
#include "store/store.h"
#include "util/util.h"
#include "web/web.h"

static int	cmd_metrics(struct ctl *, int, char **);

static const struct cmd_option metrics_options[] = {
	{ "since", 's', 0, "D|DATE|all", "the window's start (default 7d, "
	    "not report's 30d: a gauge shows the recent state, so a fix "
	    "shows within days; all: from the first run)" },
	{ "target", 'T', 0, "NAME", "only this target's tests (default "
	    "all targets)" },
	CMD_OPTION_KIND,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_metrics_entry = {
	.name = "metrics",
	.usage = "metrics [--since D|all] [--target NAME] [--kind K]",
	.summary = "The current figures in the Prometheus text format.",
	.example = "flakyctl metrics > /var/lib/node_exporter/flaky.prom",
	.options = metrics_options,
	.exec = cmd_metrics,
};

/* flakyctl metrics: the figures of lib/web's writer, the same as
 * flakyd's /metrics. */
static int
cmd_metrics(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt go;
	struct flaky_store *store = NULL;
	struct flaky_query q;
	struct flaky_buf b;
	const char	*since = "7d";
	char		 err[1024];
	int		 c, ret = EXIT_ERROR;

	memset(&q, 0, sizeof q);
	cmd_getopt_init(&go, &cmd_metrics_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&go)) > 0) {
		switch (c) {
		case 's':
			since = optarg;
			break;
		case 'T':
			q.target = optarg;
			break;
		}
	}
	if (c < 0)
		return go.exit;
	if (optind < argc) {
		ctl_usage_error("metrics", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "metrics", 1 << FORMAT_TABLE) < 0 ||
	    parse_window("metrics", since, NULL, &q.since_ms, &q.until_ms) < 0)
		return EXIT_ERROR;
	q.kinds = ctl->kinds;
	flaky_buf_init(&b);
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl metrics: %s\n", err);
		goto out;
	}
	if (ctl_check_target(store, "metrics", q.target) < 0)
		goto out;
	if (flaky_web_metrics(store, &q, &b, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl metrics: %s\n", err);
		goto out;
	}
	fwrite(b.data, 1, b.len, stdout);
	ret = EXIT_OK;
out:
	flaky_buf_free(&b);
	flaky_store_close(store);
	return ret;
}
