/* flakyctl ticket --cluster N: one ticket for tests that fail together
 * ("one cause, one ticket, 14 tests"), with what they share as the hint
 * of the cause and every member's rate. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* Members listed in the title before "and N more". */
#define TITLE_TESTS	2

/* "INFRA flake in 14 tests that fail together: a.py::x, b.py::y and
 * 12 more" */
static void
cluster_ticket_title(const struct flaky_cluster *c, struct flaky_buf *b)
{
	flaky_buf_printf(b, "%s flake in %zu tests that fail together: ",
	    c->signature.value ? c->signature.value : "UNKNOWN", c->n);
	for (size_t m = 0; m < c->n && m < TITLE_TESTS; m++)
		flaky_buf_printf(b, "%s%s", m ? ", " : "", c->members[m].name);
	if (c->n > TITLE_TESTS)
		flaky_buf_printf(b, " and %zu more", c->n - TITLE_TESTS);
}

/* The Markdown body. */
static void
cluster_ticket_body(const struct flaky_cluster *c, size_t nclusters,
    const struct flaky_query *q, struct flaky_buf *b)
{
	struct flaky_buf h;
	char	 t1[32], t2[32];
	const char *sig = c->signature.value ? c->signature.value : "UNKNOWN";

	flaky_buf_init(&h);
	flaky_buf_printf(b, "**Cluster %d** of %zu in target `%s`, runs from "
	    "%s to %s (`flakyctl clusters`).\n\n", c->id, nclusters,
	    c->target, q->since_ms == INT64_MIN ? "the first" :
	    flaky_format_time(q->since_ms, t1, sizeof t1),
	    q->until_ms == INT64_MAX ? "now" :
	    flaky_format_time(q->until_ms, t2, sizeof t2));
	flaky_buf_printf(b, "**Together:** two or more of these %zu tests "
	    "failed in the same run %lld time%s in %lld run%s; one or more in "
	    "%lld. Their failing runs overlap by a Jaccard index of %.2f on "
	    "average (%.2f at least), and the weakest link between two of "
	    "them has a one-sided Fisher p of %.2g (Holm-corrected over "
	    "every pair tested: docs/triage.md).\n\n", c->n,
	    (long long)c->shared_runs, flaky_plural(c->shared_runs),
	    (long long)c->runs, flaky_plural(c->runs),
	    (long long)c->any_runs, c->mean_jaccard, c->min_jaccard,
	    c->p_max);
	cluster_hints(c, "- ", &h);
	flaky_buf_printf(b, "### What they share\n\n%s\n",
	    flaky_buf_cstr(&h));
	flaky_buf_printf(b, "### Tests (%zu)\n\n| test | failures | runs | "
	    "rate |\n|---|---:|---:|---:|\n", c->n);
	for (size_t m = 0; m < c->n; m++) {
		const struct flaky_cluster_member *x = &c->members[m];

		flaky_buf_printf(b, "| `%s` | %lld | %lld | %.1f%% |\n",
		    x->name, (long long)x->failures, (long long)x->runs,
		    x->runs ? 100.0 * (double)x->failures / (double)x->runs :
		    0.0);
	}
	flaky_buf_printf(b, "\n### Likely cause and first patch to try\n\n"
	    "- cause: %s\n- first patch: %s\n- one cause, one fix: once it "
	    "is in, `flakyctl clusters` should no longer list these tests "
	    "together; `flakyctl ticket TEST` gives each test's own "
	    "evidence.\n", flaky_sig_cause(sig), flaky_sig_patch(sig));
	flaky_buf_free(&h);
}

/* Print the ticket of cluster id in the window q; an exit code. */
int
cluster_ticket(struct ctl *ctl, struct flaky_store *s,
    const struct flaky_query *q, long long id)
{
	struct flaky_clusters cs;
	struct flaky_buf title, body;
	const struct flaky_cluster *c;
	int	 ret = EXIT_ERROR;

	if (cluster_read(s, "ticket", q, &cs) < 0)
		return EXIT_ERROR;
	if (cs.n == 0 || id < 1 || (size_t)id > cs.n) {
		if (cs.n == 0)
			fprintf(stderr, "flakyctl ticket: --cluster %lld: no "
			    "cluster in this window (flakyctl clusters)\n", id);
		else
			fprintf(stderr, "flakyctl ticket: --cluster: expected "
			    "a cluster from 1 to %zu of `flakyctl clusters` in "
			    "this window, got %lld\n", cs.n, id);
		flaky_clusters_free(&cs);
		return EXIT_ERROR;
	}
	c = &cs.v[id - 1];
	flaky_buf_init(&title);
	flaky_buf_init(&body);
	cluster_ticket_title(c, &title);
	cluster_ticket_body(c, cs.n, q, &body);
	if (title.oom || body.oom)
		fprintf(stderr, "flakyctl: out of memory\n");
	else if (ctl->format == FORMAT_JSON) {
		printf("{\"title\": ");
		json_string(stdout, flaky_buf_cstr(&title));
		printf(", \"body\": ");
		json_string(stdout, flaky_buf_cstr(&body));
		printf(",\n \"cluster\": ");
		cluster_json(stdout, c);
		printf("}\n");
		ret = EXIT_OK;
	} else {
		printf("## %s\n\n%s", flaky_buf_cstr(&title),
		    flaky_buf_cstr(&body));
		ret = EXIT_OK;
	}
	flaky_buf_free(&title);
	flaky_buf_free(&body);
	flaky_clusters_free(&cs);
	return ret;
}
