/* flakyctl ticket TEST: a ready-to-paste Markdown issue for one test:
 * title, failure rate with its interval, signature and evidence, the
 * distinct failure modes, timing, revisions, the suspected polluter and a
 * command that reproduces it. The text is libflaky's (lib/diagnose/
 * ticket.c): the dashboard's test page shows the same. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

static int	cmd_ticket(struct ctl *, int, char **);

static const struct cmd_option ticket_options[] = {
	DIAG_OPTIONS,
	{ "cluster", 0, 'C', "N", "one ticket for cluster N of flakyctl "
	    "clusters in the same window (default: a test)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_ticket_entry = {
	.name = "ticket",
	.usage = "ticket TEST|--cluster N [--since D|all] [--until DATE] "
	    "[--target NAME]",
	.summary = "A ready-to-paste Markdown issue for one test or cluster.",
	.example = "flakyctl ticket test_login_retry > issue.md\n"
	    "flakyctl ticket --cluster 1 --since 14d > issue.md",
	.options = ticket_options,
	.exec = cmd_ticket,
};

/* flakyctl ticket TEST. */
static int
cmd_ticket(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct flaky_store *store = NULL;
	struct flaky_diagnosis *d = NULL;
	struct flaky_buf title, body;
	char	 err[1024], *isolate = NULL;
	int64_t	 id;
	long long cluster = 0;
	int	 c, r, ret = EXIT_ERROR;

	flaky_buf_init(&title);
	flaky_buf_init(&body);
	cmd_getopt_init(&g, &cmd_ticket_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (c == 'C' && flaky_parse_int(optarg, 1, 1000000,
		    &cluster) < 0) {
			ctl_usage_error("ticket", "--cluster: expected a "
			    "cluster number from flakyctl clusters, got '%s'",
			    optarg);
			return EXIT_ERROR;
		}
		(void)diag_option(&o, c, optarg);
	}
	if (c < 0)
		return g.exit;
	if (cluster > 0 && optind != argc) {
		ctl_usage_error("ticket", "a test or --cluster, not both");
		return EXIT_ERROR;
	}
	if (cluster == 0 && optind + 1 != argc) {
		ctl_usage_error("ticket", optind == argc ? "which test?" :
		    "one test at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "ticket", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON | 1 << FORMAT_MARKDOWN) < 0 ||
	    diag_window(&o, "ticket") < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	if (cluster > 0) {
		ret = cluster_ticket(ctl, store, &o.q, cluster);
		goto out;
	}
	if (diag_resolve(store, "ticket", o.target, argv[optind], &id) < 0)
		goto out;
	if (flaky_diagnose_test(store, id, &o.q, &d, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	isolate = diag_isolate(ctl, d->target);
	flaky_ticket_title(d, &title);
	if (ctl->format == FORMAT_JSON)
		r = flaky_ticket_body(store, d, isolate, &body);
	else
		r = flaky_ticket_markdown(store, d, isolate, &body);
	if (r < 0 || title.oom) {
		fprintf(stderr, "flakyctl: out of memory\n");
		goto out;
	}
	if (ctl->format == FORMAT_JSON) {
		printf("{\"title\": ");
		json_string(stdout, flaky_buf_cstr(&title));
		printf(", \"body\": ");
		json_string(stdout, flaky_buf_cstr(&body));
		printf(",\n \"diagnosis\": ");
		diag_json(stdout, d, 0);
		printf("}\n");
	} else
		fputs(flaky_buf_cstr(&body), stdout);
	ret = EXIT_OK;
out:
	free(isolate);
	flaky_buf_free(&title);
	flaky_buf_free(&body);
	flaky_diagnosis_free(d);
	flaky_store_close(store);
	return ret;
}
