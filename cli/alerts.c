/* flakyctl alerts: the events flakyd told the receivers of notify: (a
 * test became flaky, critical or broken, recovered, may leave quarantine)
 * and how each delivery stands (docs/alerts.md). */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "flakyctl.h"
#include "store/store.h"
#include "util/util.h"

static int	cmd_alerts(struct ctl *, int, char **);

static const char *const states[] = { "pending", "delivered", "failed" };

static const struct cmd_option alerts_options[] = {
	{ "since", 's', 0, "D", "events of the last D, or since a date "
	    "(default 7d)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_alerts_entry = {
	.name = "alerts",
	.usage = "alerts [--since D] [--format table|json]",
	.summary = "List the alerts flakyd sent and their delivery state.",
	.example = "flakyctl alerts --since 2d\n"
	    "flakyctl alerts --format json",
	.options = alerts_options,
	.exec = cmd_alerts,
};

/* One event per line, then one indented line per receiver. */
static void
alerts_table(const struct flaky_alert *v, size_t n)
{
	char	 t[32];

	if (n == 0)
		printf("no alerts in the window\n");
	for (size_t i = 0; i < n; i++) {
		printf("%s  %-9s  %s  (%s)  %lld/%lld run%s failed\n",
		    flaky_format_time(v[i].created_ms, t, sizeof t),
		    flaky_alert_kind_name(v[i].kind), v[i].test, v[i].target,
		    (long long)v[i].failures, (long long)v[i].runs,
		    flaky_plural(v[i].runs));
		for (size_t j = 0; j < v[i].nd; j++)
			printf("    %-9s  %s, %lld attempt%s%s%s\n",
			    states[v[i].d[j].state], v[i].d[j].receiver,
			    (long long)v[i].d[j].attempts,
			    v[i].d[j].attempts == 1 ? "" : "s",
			    v[i].d[j].error != NULL && v[i].d[j].state != 1 ?
			    ": " : "", v[i].d[j].error != NULL &&
			    v[i].d[j].state != 1 ? v[i].d[j].error : "");
	}
}

/* The same as a JSON array (docs/json.md). */
static void
alerts_json(const struct flaky_alert *v, size_t n)
{
	char	 t[32];

	printf("[");
	for (size_t i = 0; i < n; i++) {
		printf("%s\n {\"id\": %lld, \"event\": \"%s\", \"target\": ",
		    i ? "," : "", (long long)v[i].id,
		    flaky_alert_kind_name(v[i].kind));
		json_string(stdout, v[i].target);
		printf(", \"test\": ");
		json_string(stdout, v[i].test);
		printf(", \"runs\": %lld, \"failures\": %lld, "
		    "\"run_id\": %lld, \"at\": \"%s\", ", (long long)v[i].runs,
		    (long long)v[i].failures, (long long)v[i].run_id,
		    flaky_format_time(v[i].at_ms, t, sizeof t));
		printf("\"created\": \"%s\", \"deliveries\": [",
		    flaky_format_time(v[i].created_ms, t, sizeof t));
		for (size_t j = 0; j < v[i].nd; j++) {
			printf("%s{\"receiver\": ", j ? ", " : "");
			json_string(stdout, v[i].d[j].receiver);
			printf(", \"state\": \"%s\", \"attempts\": %lld, "
			    "\"error\": ", states[v[i].d[j].state],
			    (long long)v[i].d[j].attempts);
			json_string(stdout, v[i].d[j].error);
			printf("}");
		}
		printf("]}");
	}
	printf("%s]\n", n ? "\n" : "");
}

/* flakyctl alerts: recent events and their deliveries. */
static int
cmd_alerts(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_alert *v = NULL;
	const char	*since = "7d";
	int64_t		 since_ms, until_ms;
	size_t		 n = 0;
	char		 err[1024];
	int		 c, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_alerts_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (c == 's')
			since = optarg;
	}
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("alerts", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "alerts", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0 ||
	    parse_window("alerts", since, NULL, &since_ms, &until_ms) < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0 || flaky_store_alerts_list(store, since_ms,
	    &v, &n, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl alerts: %s\n", err);
		goto out;
	}
	if (ctl->format == FORMAT_JSON)
		alerts_json(v, n);
	else
		alerts_table(v, n);
	ret = EXIT_OK;
out:
	flaky_alerts_free(v, n);
	flaky_store_close(store);
	return ret;
}
