/* /api/v1/quarantine and /api/v1/known-tests: what a CI job asks a server
 * before it runs (issue 30, flakyctl ci, docs/api.md): the tests
 * quarantined (so that a quarantine set on the dashboard or with flakyctl
 * quarantine takes effect in the next job without a commit) and the tests
 * a branch knows (so that a test none of its runs reported is new). A
 * target with no run is no error here: a CI job's first upload is still
 * to come, and the lists are empty. */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "json/json.h"
#include "web_int.h"

static const char *const quarantine_params[] = { "target", NULL };
static const char *const known_params[] = { "target", "branch", NULL };

/* GET /api/v1/quarantine[?target=NAME]. */
static int
api_quarantine(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct flaky_quarantine_row *v = NULL;
	char	 target[WEB_PARAM_MAX], t[32];
	size_t	 n = 0;

	target[0] = '\0';
	if (web_api_params(c, query, quarantine_params))
		return 1;
	if (web_param(query, "target", target, sizeof target) < 0)
		return web_api_bad(c, "target", "a target's name", NULL);
	if (flaky_store_quarantine_list(c->st, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, "target");
	flaky_jw_string(w, target[0] ? target : NULL);
	flaky_jw_key(w, "quarantined");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		if (target[0] != '\0' && strcmp(v[i].target, target) != 0)
			continue;
		flaky_jw_object_begin(w);
		flaky_jw_key(w, "target");
		flaky_jw_string(w, v[i].target);
		flaky_jw_key(w, "test");
		flaky_jw_string(w, v[i].test);
		flaky_jw_key(w, "reason");
		flaky_jw_string(w, v[i].reason);
		flaky_jw_key(w, "ticket");
		flaky_jw_string(w, v[i].ticket);
		flaky_jw_key(w, "added");
		flaky_jw_string(w, flaky_format_time(v[i].added_ms, t,
		    sizeof t));
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_quarantine_rows_free(v, n);
	return 0;
}

/* GET /api/v1/known-tests?target=NAME&branch=NAME. */
static int
api_known_tests(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct flaky_branch_tests b;
	char	 target[WEB_PARAM_MAX], branch[WEB_PARAM_MAX];

	if (web_api_params(c, query, known_params))
		return 1;
	if (web_param(query, "target", target, sizeof target) <= 0 ||
	    target[0] == '\0')
		return web_api_bad(c, "target", "a target's name", NULL);
	if (web_param(query, "branch", branch, sizeof branch) <= 0 ||
	    branch[0] == '\0')
		return web_api_bad(c, "branch", "a branch's name (the target's "
		    "default branch)", NULL);
	if (flaky_store_branch_tests(c->st, target, branch, FLAKY_BRANCH_RUNS,
	    &b, c->err, sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, "target");
	flaky_jw_string(w, target);
	flaky_jw_key(w, "branch");
	flaky_jw_string(w, branch);
	flaky_jw_key(w, "runs");
	flaky_jw_int(w, b.runs);
	flaky_jw_key(w, "tests");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < b.n; i++)
		flaky_jw_string(w, b.names[i]);
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_branch_tests_free(&b);
	return 0;
}

int
web_api_ci(struct web_ctx *c, struct flaky_jw *w, const char *path,
    const char *query)
{
	if (strcmp(path, "quarantine") == 0)
		return api_quarantine(c, w, query);
	if (strcmp(path, "known-tests") == 0)
		return api_known_tests(c, w, query);
	return -2;
}

int
web_api_ci_known(const char *path)
{
	return strcmp(path, "quarantine") == 0 ||
	    strcmp(path, "known-tests") == 0;
}
