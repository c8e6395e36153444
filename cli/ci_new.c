/* flakyctl ci: where the call is (its branch and the default branch), the
 * tests quarantined (the server's, else the database's, and a file's),
 * and which tests are new (--new-tests): none of the default branch's
 * newest runs reported them, or their file changed since the merge base
 * with it (docs/ci.md, "New tests"). */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "ci.h"
#include "flakyctl.h"
#include "json/json.h"
#include "log.h"
#include "util/util.h"

#define LIST_FILE_MAX	(16 * 1024 * 1024)
#define GO_FILE_MAX	(4 * 1024 * 1024)

static const char jest_sep[] = " \xe2\x80\xba ";	/* " › " */

/* Names in byte order. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
ci_sort_unique(char **v, size_t *n)
{
	size_t	 k = 0;

	if (*n > 1)
		qsort(v, *n, sizeof *v, name_cmp);
	for (size_t i = 0; i < *n; i++) {
		if (k > 0 && strcmp(v[k - 1], v[i]) == 0) {
			free(v[i]);
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
}

/* Is name in the sorted v? */
static int
has(char *const *v, size_t n, const char *name)
{
	return n > 0 && bsearch(&name, v, n, sizeof *v, name_cmp) != NULL;
}

/* Append a copy of s to v. */
static void
push(char ***v, size_t *n, size_t *cap, const char *s, size_t len)
{
	if (flaky_array_grow(v, cap, *n, sizeof **v) < 0)
		fatalx("out of memory");
	(*v)[(*n)++] = flaky_strndup(s, len);
	if ((*v)[*n - 1] == NULL)
		fatalx("out of memory");
}

/* git -C dir ARGS as one malloc'd line, or NULL when git failed. */
static char *
git_line(const char *dir, const char *const *args)
{
	char	*out = NULL;

	if (ctl_git(dir, &out, args) != 0 || out == NULL || *out == '\0') {
		free(out);
		return NULL;
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

void
ci_branches(struct ci *c)
{
	static const char *const cur[] = { "rev-parse", "--abbrev-ref", "HEAD",
		NULL };
	static const char *const head[] = { "symbolic-ref", "-q", "--short",
		"refs/remotes/origin/HEAD", NULL };
	char	*s;

	if (c->m.branch == NULL && (s = git_line(c->dir, cur)) != NULL) {
		if (strcmp(s, "HEAD") != 0)
			c->m.branch = c->branch = s;
		else
			free(s);
	}
	if (c->default_branch != NULL)
		return;
	if ((c->default_branch = getenv("CI_DEFAULT_BRANCH")) != NULL &&
	    *c->default_branch != '\0')
		return;
	if ((c->default_branch = getenv("GITHUB_BASE_REF")) != NULL &&
	    *c->default_branch != '\0')
		return;
	c->default_branch = "main";
	if ((s = git_line(c->dir, head)) != NULL) {
		/* "origin/main" */
		static char	 kept[256];
		const char	*p = strchr(s, '/');

		snprintf(kept, sizeof kept, "%s", p != NULL ? p + 1 : s);
		c->default_branch = kept;
		free(s);
	}
}

/* One id a line (the plain export of flakyctl quarantine), '#' comments
 * and blank lines skipped. */
static int
quarantine_file(struct ci *c, size_t *cap)
{
	char	*data, *p, *nl, err[512];
	size_t	 len;

	if (flaky_read_file(c->quarantine_file, LIST_FILE_MAX, &data, &len,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ci: --quarantine-file: %s\n", err);
		return -1;
	}
	for (p = data; p < data + len; p = nl + 1) {
		size_t	 n;

		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL)
			nl = data + len;
		n = (size_t)(nl - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0 || *p == '#')
			continue;
		push(&c->quarantined, &c->nquarantined, cap, p, n);
	}
	free(data);
	return 0;
}

/* GET path?target=TARGET[&branch=BRANCH] of the server as JSON into
 * *j (with limits lim); the array member key into *arr. -1 when no
 * usable answer came, with why into err (status: the HTTP status). */
static int
server_list(struct ci *c, const char *path, const char *branch,
    const struct flaky_json_limits *lim, const char *key,
    struct flaky_json **j, const struct flaky_json **arr, int *status,
    char *err, size_t errlen)
{
	char	*body = NULL, *query, *e1, *e2 = NULL;
	int	 r = -1;

	*j = NULL;
	if ((e1 = evhttp_encode_uri(c->target)) == NULL || (branch != NULL &&
	    (e2 = evhttp_encode_uri(branch)) == NULL))
		fatalx("out of memory");
	xasprintf(&query, "target=%s%s%s", e1, e2 ? "&branch=" : "",
	    e2 ? e2 : "");
	free(e1);
	free(e2);
	if (ci_server_get(c, path, query, status, &body, err, errlen) < 0)
		goto out;
	if (*status != 200) {
		snprintf(err, errlen, "HTTP %d: %.200s", *status, body);
		goto out;
	}
	if (flaky_json_parse(body, strlen(body), lim, j, err, errlen) < 0 ||
	    (*arr = flaky_json_get(*j, key)) == NULL ||
	    (*arr)->type != FLAKY_JSON_ARRAY) {
		snprintf(err, errlen, "the answer is not a list of %s: "
		    "%.200s", key, body);
		goto out;
	}
	r = 0;
out:
	free(body);
	free(query);
	return r;
}

/* The server's quarantine of the target: -1 (said) when it gave none. */
static int
quarantine_server(struct ci *c, size_t *cap)
{
	struct flaky_json *j;
	const struct flaky_json *q;
	char	 err[512];
	int	 status = 0;

	if (server_list(c, "/api/v1/quarantine", NULL, NULL, "quarantined",
	    &j, &q, &status, err, sizeof err) < 0) {
		log_warnx("the server's quarantine was not read (%s): only "
		    "the upload's answer tells which failed tests are "
		    "quarantined", err);
		flaky_json_free(j);
		return -1;
	}
	for (size_t i = 0; i < q->len; i++) {
		const char *t = flaky_json_get_str(&q->items[i], "test");

		if (t != NULL)
			push(&c->quarantined, &c->nquarantined, cap, t,
			    strlen(t));
	}
	flaky_json_free(j);
	return 0;
}

/* The database's quarantine of the target. */
static int
quarantine_store(struct ci *c, size_t *cap)
{
	struct flaky_quarantine_row *v;
	size_t	 n;
	char	 err[512];

	if (flaky_store_quarantine_list(c->store, &v, &n, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl ci: %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].target, c->target) == 0)
			push(&c->quarantined, &c->nquarantined, cap, v[i].test,
			    strlen(v[i].test));
	flaky_quarantine_rows_free(v, n);
	return 0;
}

/* The tests the default branch knows, from the server. */
static int
known_server(struct ci *c)
{
	static const struct flaky_json_limits lim = { 64 << 20, 8, 4 << 20 };
	struct flaky_json *j;
	const struct flaky_json *t;
	char	 err[512];
	size_t	 cap = 0;
	int	 status = 0;

	if (server_list(c, "/api/v1/known-tests", c->default_branch, &lim,
	    "tests", &j, &t, &status, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ci: --new-tests: the server did not "
		    "say which tests %s knows: %s%s\n", c->default_branch, err,
		    status == 401 || status == 403 ? " (a read token: "
		    "$FLAKY_READ_TOKEN or --read-token-file)" : "");
		flaky_json_free(j);
		return -1;
	}
	c->known_tests.runs = (int)flaky_json_get_num(j, "runs");
	for (size_t i = 0; i < t->len; i++)
		if (t->items[i].type == FLAKY_JSON_STRING)
			push(&c->known_tests.names, &c->known_tests.n, &cap,
			    t->items[i].str, strlen(t->items[i].str));
	ci_sort_unique(c->known_tests.names, &c->known_tests.n);
	flaky_json_free(j);
	return 0;
}

/* The top-level go test names that changed _test.go files define
 * ("func TestX("). */
static void
go_names(struct ci *c, const char *file)
{
	char	*path, *data, err[256];
	size_t	 len, cap = c->ngo_changed;

	xasprintf(&path, "%s/%s", c->dir, file);
	if (flaky_read_file(path, GO_FILE_MAX, &data, &len, err,
	    sizeof err) == 0) {
		for (char *p = data; (p = strstr(p, "func Test")) != NULL;
		    p += 9) {
			size_t	 n = strcspn(p + 5, "( \t");

			if ((p == data || p[-1] == '\n') && p[5 + n] == '(')
				push(&c->go_changed, &c->ngo_changed, &cap,
				    p + 5, n);
		}
		free(data);
	}
	free(path);
}

/* The files changed since the merge base with the default branch, as
 * paths relative to where the tests run (git diff --relative), and the go
 * tests in them. A checkout without the base (shallow) is said once. */
static void
changed_files(struct ci *c)
{
	char	 base[300], *mb, *out, *p, *nl;
	const char *verify[] = { "rev-parse", "--verify", "-q", base, NULL };
	const char *merge[] = { "merge-base", "HEAD", base, NULL };
	size_t	 cap = 0;

	snprintf(base, sizeof base, "origin/%s", c->default_branch);
	if ((mb = git_line(c->dir, verify)) == NULL)
		snprintf(base, sizeof base, "%s", c->default_branch);
	free(mb);
	if ((mb = git_line(c->dir, merge)) == NULL) {
		log_warnx("--new-tests: no merge base with %s (not a git "
		    "checkout, or a shallow one: fetch-depth: 0): only the "
		    "tests the store never saw count as new", base);
		return;
	}
	{
		const char *diff[] = { "diff", "--name-only", "--relative",
			mb, NULL };

		if (ctl_git(c->dir, &out, diff) != 0)
			out = NULL;
	}
	free(mb);
	for (p = out; p != NULL && *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if (nl > p)
			push(&c->changed, &c->nchanged, &cap, p,
			    (size_t)(nl - p));
	}
	free(out);
	ci_sort_unique(c->changed, &c->nchanged);
	for (size_t i = 0; i < c->nchanged; i++) {
		size_t	 n = strlen(c->changed[i]);

		if (n > 8 && strcmp(c->changed[i] + n - 8, "_test.go") == 0)
			go_names(c, c->changed[i]);
	}
	ci_sort_unique(c->go_changed, &c->ngo_changed);
}

int
ci_lists(struct ci *c)
{
	size_t	 cap = 0;
	char	 err[512];

	if (c->http) {
		(void)quarantine_server(c, &cap);
	} else if (quarantine_store(c, &cap) < 0)
		return -1;
	if (c->quarantine_file != NULL && quarantine_file(c, &cap) < 0)
		return -1;
	ci_sort_unique(c->quarantined, &c->nquarantined);
	if (c->new_runs == 0)
		return 0;
	if (c->http) {
		if (known_server(c) < 0)
			return -1;
	} else if (flaky_store_branch_tests(c->store, c->target,
	    c->default_branch, FLAKY_BRANCH_RUNS, &c->known_tests, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl ci: %s\n", err);
		return -1;
	}
	c->have_known = 1;
	if (c->known_tests.runs == 0)
		log_warnx("--new-tests: no run of %s on %s to compare with "
		    "yet: "
		    "only the tests in files changed since the merge base "
		    "count as new", c->target, c->default_branch);
	changed_files(c);
	return 0;
}

/* The file a test id names: pytest's and Jest's ids start with it, a
 * unittest id's module is one ("a.b.Class.test": a/b.py). */
static int
id_file(const char *id, char *buf, size_t len)
{
	const char *p, *last, *cls = NULL;
	size_t	 n;

	if ((p = strstr(id, "::")) != NULL)
		n = (size_t)(p - id);
	else if ((p = strstr(id, jest_sep)) != NULL)
		n = (size_t)(p - id);
	else {
		if ((last = strrchr(id, '.')) == NULL || strpbrk(id, " /"))
			return -1;
		for (p = id; p < last; p++)
			if (*p == '.')
				cls = p;
		if (cls == NULL || (size_t)(cls - id) + 4 > len)
			return -1;
		n = (size_t)(cls - id);
		for (size_t i = 0; i < n; i++)
			buf[i] = id[i] == '.' ? '/' : id[i];
		memcpy(buf + n, ".py", 4);
		return 0;
	}
	if (n + 1 > len)
		return -1;
	memcpy(buf, id, n);
	buf[n] = '\0';
	return 0;
}

/* The top-level name of a go id "import/path/TestX/sub", or NULL. */
static const char *
go_top(const char *id, size_t *len)
{
	const char *p = strstr(id, "/Test");

	if (p == NULL)
		return NULL;
	*len = strcspn(p + 1, "/");
	return p + 1;
}

int
ci_is_new(const char *test, void *arg)
{
	struct ci	*c = arg;
	char		 file[1024];
	const char	*g;
	size_t		 n;

	if (c->known_tests.runs > 0 &&
	    !flaky_branch_tests_has(&c->known_tests, test))
		return 1;
	if (strcmp(c->runs[0].res.runner, "gotest") == 0) {
		if ((g = go_top(test, &n)) != NULL) {
			char	*top = flaky_strndup(g, n);
			int	 r = has(c->go_changed, c->ngo_changed, top);

			free(top);
			return r;
		}
		return 0;
	}
	return id_file(test, file, sizeof file) == 0 &&
	    has(c->changed, c->nchanged, file);
}

int
ci_is_quarantined(const char *test, void *arg)
{
	struct ci	*c = arg;

	return has(c->quarantined, c->nquarantined, test);
}

const struct ci_known *
ci_known_of(const struct ci *c, const char *test)
{
	for (size_t i = 0; i < c->nknown; i++)
		if (strcmp(c->known[i].test, test) == 0)
			return &c->known[i];
	return NULL;
}

void
ci_lists_free(struct ci *c)
{
	for (size_t i = 0; i < c->nchanged; i++)
		free(c->changed[i]);
	for (size_t i = 0; i < c->ngo_changed; i++)
		free(c->go_changed[i]);
	for (size_t i = 0; i < c->nquarantined; i++)
		free(c->quarantined[i]);
	for (size_t i = 0; i < c->nknown; i++) {
		free(c->known[i].test);
		free(c->known[i].ticket);
	}
	free(c->changed);
	free(c->go_changed);
	free(c->quarantined);
	free(c->known);
	flaky_branch_tests_free(&c->known_tests);
}
