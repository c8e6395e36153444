/* flakyctl quarantine add|remove|list|export: tests taken out of CI runs
 * while they stay measured; a deselect list for the runner. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "diagnose/diagnose.h"
#include "flakyctl.h"
#include "log.h"
#include "store/store.h"
#include "util/util.h"



/* A word for a POSIX shell, in single quotes. */
static void
shell_quote(const char *s)
{
	putchar('\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

/* The runner an export format's ids must come from (NULL: any). */
static const char *
export_runner(const char *fmt)
{
	if (strcmp(fmt, "pytest") == 0)
		return "pytest";
	if (strcmp(fmt, "jest") == 0)
		return "jest";
	if (strcmp(fmt, "go") == 0)
		return "gotest";
	return NULL;
}

/* Ids of another runner would make a pattern that deselects nothing (or
 * the wrong tests): name them, and the targets they are in. A target
 * whose runner is unknown, or JUnit of another producer than pytest, may
 * be anyone's. */
static int
export_check(const char *fmt, const char *target,
    const struct flaky_quarantine_row *v, size_t n)
{
	const char	*want = export_runner(fmt);
	size_t		 bad = 0;

	for (size_t i = 0; want != NULL && i < n; i++) {
		if ((target != NULL && strcmp(v[i].target, target) != 0) ||
		    v[i].runner == NULL || strcmp(v[i].runner, want) == 0 ||
		    strcmp(v[i].runner, "junit") == 0)
			continue;
		if (bad++ == 0)
			fprintf(stderr, "flakyctl quarantine: export --format "
			    "%s: expected %s tests, but", fmt, want);
		if (bad <= 3)
			fprintf(stderr, "%s '%s' (target %s) is %s's",
			    bad > 1 ? ";" : "", v[i].test, v[i].target,
			    v[i].runner);
	}
	if (bad == 0)
		return 0;
	if (bad > 3)
		fprintf(stderr, "; and %zu more", bad - 3);
	fprintf(stderr, "; give --target NAME of a %s target\n", want);
	return -1;
}

/* quarantine export: the ids as the runner's deselect list. */
static int
q_export(const char *fmt, const char *target,
    const struct flaky_quarantine_row *v, size_t n)
{
	struct flaky_buf b;
	size_t		 k = 0;

	if (export_check(fmt, target, v, n) < 0)
		return EXIT_ERROR;
	flaky_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (target != NULL && strcmp(v[i].target, target) != 0)
			continue;
		if (strcmp(fmt, "plain") == 0)
			printf("%s\n", v[i].test);
		else if (strcmp(fmt, "pytest") == 0) {
			printf("--deselect ");
			shell_quote(v[i].test);
			putchar('\n');
		} else if (strcmp(fmt, "go") == 0) {
			if (k > 0)
				flaky_buf_addc(&b, '|');
			if (flaky_repro_go_pattern(&b, v[i].test) < 0) {
				fprintf(stderr, "flakyctl quarantine: export "
				    "--format go: '%s' names no Go test\n",
				    v[i].test);
				flaky_buf_free(&b);
				return EXIT_ERROR;
			}
		} else {
			flaky_buf_adds(&b, k ? "|" : "^(?!(?:");
			flaky_repro_jest_name(&b, v[i].test);
		}
		k++;
	}
	if (strcmp(fmt, "jest") == 0 && k > 0) {
		flaky_buf_adds(&b, ")$)");
		printf("--testNamePattern=");
		shell_quote(flaky_buf_cstr(&b));
		putchar('\n');
	} else if (strcmp(fmt, "go") == 0 && k > 0) {
		printf("-skip ");
		shell_quote(flaky_buf_cstr(&b));
		putchar('\n');
	}
	flaky_buf_free(&b);
	return EXIT_OK;
}

/* quarantine list: each test, READY once it passed often enough. */
static int
q_list(struct ctl *ctl, struct flaky_store *s, long long fixed,
    const struct flaky_quarantine_row *v, size_t n)
{
	char	 t[32];
	double	 p;

	if (ctl->format == FORMAT_JSON)
		printf("[");
	else if (n == 0)
		printf("no test in quarantine\n");
	for (size_t i = 0; i < n; i++) {
		long long need = flaky_release_after(s, v[i].test_id, fixed, &p);
		long long more = need > v[i].passes ? need - v[i].passes : 0;

		if (ctl->format == FORMAT_JSON) {
			printf("%s\n {\"target\": ", i ? "," : "");
			json_string(stdout, v[i].target);
			printf(", \"test\": ");
			json_string(stdout, v[i].test);
			printf(", \"reason\": ");
			json_string(stdout, v[i].reason);
			printf(", \"ticket\": ");
			json_string(stdout, v[i].ticket);
			printf(", \"added\": \"%s\", \"passes_in_a_row\": %lld, "
			    "\"passes_needed\": %lld, \"more_passes\": %lld, "
			    "\"ready_to_release\": %s}", flaky_format_time(
			    v[i].added_ms, t, sizeof t), (long long)v[i].passes,
			    need, more, more == 0 ? "true" : "false");
			continue;
		}
		printf("%s%s  (%s)  since %s  %lld pass%s in a row",
		    more == 0 ? "READY    " : "", v[i].test,
		    v[i].target, flaky_format_time(v[i].added_ms, t, sizeof t),
		    (long long)v[i].passes, flaky_plural_es(v[i].passes));
		if (more > 0)
			printf(", release after %lld more passing run%s", more,
			    more == 1 ? "" : "s");
		if (p > 0)
			printf(" (p = %.3f: %lld)", p, need);
		printf("\n         %s%s%s\n", v[i].reason,
		    v[i].ticket ? "  " : "", v[i].ticket ? v[i].ticket : "");
	}
	if (ctl->format == FORMAT_JSON)
		printf("%s]\n", n ? "\n" : "");
	return EXIT_OK;
}

/* quarantine add: TEST as every command takes it (a unique part). */
static int
q_add(struct flaky_store *store, const char *target, const char *query,
    const char *reason, const char *ticket)
{
	char	*name = NULL, *tname = NULL, err[1024];
	int64_t	 id;
	int	 ret = EXIT_ERROR;

	if (diag_resolve_name(store, "quarantine", target, query, &id, &name,
	    &tname) < 0)
		return EXIT_ERROR;
	/* an action, recorded with who took it (docs/dashboard.md) */
	if (flaky_store_act(store, id, FLAKY_ACT_QUARANTINE, reason, ticket,
	    ctl_who(), "cli", flaky_now_ms(), err, sizeof err) < 0)
		fprintf(stderr, "flakyctl quarantine: %s\n", err);
	else {
		printf("%s (%s) quarantined\n", name, tname);
		ret = EXIT_OK;
	}
	free(name);
	free(tname);
	return ret;
}

/* Is query a part of one of the names? */
static int
any_contains(const struct flaky_test_ref *refs, size_t n, const char *query)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(refs[i].name, query) != NULL)
			return 1;
	return 0;
}

/* quarantine remove: TEST among the quarantined ones, so that --target
 * is needed only when two targets have it in quarantine. */
static int
q_remove(struct flaky_store *store, const char *target, const char *query,
    const struct flaky_quarantine_row *rows, size_t nrows)
{
	struct flaky_test_ref *refs;
	char	 err[1024];
	size_t	 n = 0, i;
	int	 ret = EXIT_ERROR;

	refs = xcalloc(nrows + 1, sizeof *refs);
	for (size_t k = 0; k < nrows; k++) {
		if (target != NULL && strcmp(rows[k].target, target) != 0)
			continue;
		refs[n].id = rows[k].test_id;
		refs[n].target = rows[k].target;
		refs[n].name = rows[k].test;
		n++;
	}
	if (!any_contains(refs, n, query)) {
		/* a test that is there but not quarantined: say that, not
		 * the closest quarantined names */
		fprintf(stderr, "flakyctl quarantine: '%s' is not in "
		    "quarantine%s%s\n", query, target ? " in target " : "",
		    target ? target : "");
		goto out;
	}
	if (diag_resolve_among(refs, n, "quarantine", target, query,
	    "quarantined tests", &i) < 0)
		goto out;
	if (flaky_store_act(store, refs[i].id, FLAKY_ACT_RELEASE, NULL, NULL,
	    ctl_who(), "cli", flaky_now_ms(), err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl quarantine: %s\n", err);
		goto out;
	}
	printf("%s (%s) released\n", refs[i].name, refs[i].target);
	ret = EXIT_OK;
out:
	free(refs);	/* the strings are the rows' */
	return ret;
}

static int	cmd_quarantine(struct ctl *, int, char **);

/* --format is quarantine's own: export has formats of its own. */
static const struct cmd_option quarantine_options[] = {
	{ "reason", 'r', 0, "TEXT", "add: why the test is quarantined "
	    "(required)" },
	{ "ticket", 't', 0, "URL", "add: the ticket that tracks it "
	    "(default none)" },
	{ "target", 'T', 0, "NAME", "the test's target, when several have "
	    "it; export: only this target's (default all targets)" },
	{ "release-after", 'R', 0, "N", "list: READY after N passing runs in "
	    "a row (default: ceil(ln 0.05 / ln(1 - p)), p the test's failure "
	    "rate)" },
	{ "format", 0, CTL_OPT_FORMAT, "FORMAT", "list: table or json "
	    "(default table); export: pytest, jest, go or plain (required)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_quarantine_entry = {
	.name = "quarantine",
	.usage = "quarantine add TEST --reason TEXT [--ticket URL] "
	    "[--target NAME] | remove TEST [--target NAME] | "
	    "list [--release-after N] | "
	    "export --format pytest|jest|go|plain [--target NAME]",
	.summary = "Keep a list of quarantined tests; export it for CI.",
	.example = "flakyctl quarantine add test_login_retry --reason "
	    "'RACE, #123'\nflakyctl quarantine export --format pytest",
	.options = quarantine_options,
	.flags = CMD_WRITES,
	.exec = cmd_quarantine,
};

/* flakyctl quarantine SUBCOMMAND: the subcommand, then its options. */
static int
cmd_quarantine(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_quarantine_row *rows = NULL;
	const char	*sub, *reason = NULL, *ticket = NULL, *target = NULL;
	const char	*xfmt = NULL, *test = NULL;
	long long	 release = 0;
	size_t		 nrows = 0;
	char		 err[1024];
	int		 c, ret = EXIT_ERROR, ro;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		cmd_print_help(stdout, &cmd_quarantine_entry);
		return EXIT_OK;
	}
	if (argc < 2) {
		ctl_usage_error("quarantine", "expected add, remove, list or "
		    "export");
		return EXIT_ERROR;
	}
	sub = argv[1];
	argc--;
	argv++;
	cmd_getopt_init(&g, &cmd_quarantine_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'r':
			reason = optarg;
			break;
		case 't':
			ticket = optarg;
			break;
		case 'T':
			target = optarg;
			break;
		case 'R':
			if (flaky_parse_int(optarg, 1, INT32_MAX,
			    &release) < 0) {
				ctl_usage_error("quarantine", "--release-after: "
				    "expected a count, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case CTL_OPT_FORMAT:
			/* export has formats of its own */
			if (strcmp(sub, "export") == 0) {
				xfmt = optarg;
				break;
			}
			if (ctl_global_option(ctl, c, optarg) < 0)
				return EXIT_ERROR;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (strcmp(sub, "add") == 0 || strcmp(sub, "remove") == 0) {
		if (optind != argc - 1) {
			ctl_usage_error("quarantine", "%s: expected one TEST",
			    sub);
			return EXIT_ERROR;
		}
		test = argv[optind];
		if (sub[0] == 'a' && (reason == NULL || *reason == '\0')) {
			ctl_usage_error("quarantine", "add: --reason TEXT is "
			    "required");
			return EXIT_ERROR;
		}
	} else if (strcmp(sub, "list") == 0 || strcmp(sub, "export") == 0) {
		if (optind != argc) {
			ctl_usage_error("quarantine", "unexpected argument "
			    "'%s'", argv[optind]);
			return EXIT_ERROR;
		}
		if (sub[0] == 'e' && (xfmt == NULL ||
		    (strcmp(xfmt, "pytest") != 0 && strcmp(xfmt, "jest") != 0 &&
		    strcmp(xfmt, "go") != 0 && strcmp(xfmt, "plain") != 0))) {
			ctl_usage_error("quarantine", "export: expected "
			    "--format pytest, jest, go or plain, got '%s'",
			    xfmt ? xfmt : "nothing");
			return EXIT_ERROR;
		}
		if (sub[0] == 'l' && ctl_check_format(ctl, "quarantine",
		    1 << FORMAT_TABLE | 1 << FORMAT_JSON) < 0)
			return EXIT_ERROR;
	} else {
		ctl_usage_error("quarantine", "unknown subcommand '%s'", sub);
		return EXIT_ERROR;
	}
	ro = test == NULL;
	/* list and export read: the system's database is theirs too */
	if (ro)
		ctl->writes = 0;
	if (flaky_store_open(ctl_db_path(ctl), ro ? FLAKY_STORE_READONLY : 0,
	    &store, err, sizeof err) < 0)
		goto fail;
	if (sub[0] == 'a') {
		ret = q_add(store, target, test, reason, ticket);
		goto out;
	}
	if (ctl_check_target(store, "quarantine", target) < 0)
		goto out;
	if (flaky_store_quarantine_list(store, &rows, &nrows, err,
	    sizeof err) < 0)
		goto fail;
	if (sub[0] == 'r') {
		ret = q_remove(store, target, test, rows, nrows);
		goto out;
	}
	ret = sub[0] == 'l' ? q_list(ctl, store, release, rows, nrows) :
	    q_export(xfmt, target, rows, nrows);
	goto out;
fail:
	fprintf(stderr, "flakyctl quarantine: %s\n", err);
out:
	flaky_quarantine_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
