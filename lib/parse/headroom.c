/* The margins of approximate assertions that flaky's seed hook wrote
 * during a run (issue 34; python/flaky_seed/headroom.py writes them, the
 * format is in docs/runners.md, "Seed sweeps"): one tab-separated line
 * per test and call site,
 *
 *   test file line kind quantity bound calls abs_err rel_err tolerance
 *   assertion
 *
 * with \t, \n and \\ escaped. A line of a test the run's results do not
 * hold, or one that does not parse, is passed over: the margins are
 * evidence beside the results, never a reason to lose them. */
#include "buildconf.h"
/* its own header first: it must stand alone */
#include "parse/parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* The file is bounded: a hook gone wrong must not fill memory. */
#define HEADROOM_MAX_BYTES	(64 * 1024 * 1024)
#define NFIELDS			11

int
flaky_headroom_fails(const char *kind, double q, double b)
{
	if (strcmp(kind, "tol") == 0 || strcmp(kind, "le") == 0)
		return q > b;
	if (strcmp(kind, "lt") == 0)
		return q >= b;
	if (strcmp(kind, "gt") == 0)
		return q <= b;
	if (strcmp(kind, "ge") == 0)
		return q < b;
	return 0;
}

/* Undo the hook's escapes in place. */
static void
unescape(char *s)
{
	char	*w = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1] != '\0') {
			s++;
			*w++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		} else
			*w++ = *s;
	}
	*w = '\0';
}

/* A number field: finite or infinite; empty gives NAN when may_empty. */
static int
number(const char *s, int may_empty, double *v)
{
	char	*end;

	if (*s == '\0') {
		*v = NAN;
		return may_empty ? 0 : -1;
	}
	if (strcmp(s, "inf") == 0) {
		*v = INFINITY;
		return 0;
	}
	*v = strtod(s, &end);
	return *end == '\0' && !isnan(*v) ? 0 : -1;
}

/* Sorting result indexes by test id, for the look-up of each line. */
static int
by_test(const void *a, const void *b, void *arg)
{
	const struct flaky_results *r = arg;

	return strcmp(r->v[*(const size_t *)a].test,
	    r->v[*(const size_t *)b].test);
}

/* The result of test, through idx sorted by by_test; -1. */
static long
find_result(const struct flaky_results *r, const size_t *idx,
    const char *test)
{
	size_t	 lo = 0, hi = r->n;

	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;
		int	 c = strcmp(r->v[idx[mid]].test, test);

		if (c == 0)
			return (long)idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* path relative to dir when it lies below it; else as it is. */
static char *
relative(const char *path, const char *dir, const char *real)
{
	const char *d[2] = { dir, real };

	for (int i = 0; i < 2; i++) {
		size_t	 n = d[i] ? strlen(d[i]) : 0;

		while (n > 1 && d[i][n - 1] == '/')
			n--;
		if (n > 0 && strncmp(path, d[i], n) == 0 && path[n] == '/')
			return strdup(path + n + 1);
	}
	return strdup(path);
}

/* One line into o: 0, 1 (passed over), -ENOMEM. */
static int
parse_line(char *line, const struct flaky_results *r, const size_t *idx,
    const char *dir, const char *real, struct flaky_headroom_obs *o)
{
	char	*f[NFIELDS], *p = line;
	long	 res, ln, calls;
	int	 n = 0;

	while (n < NFIELDS) {
		f[n++] = p;
		if ((p = strchr(p, '\t')) == NULL)
			break;
		*p++ = '\0';
	}
	if (n != NFIELDS || p != NULL)
		return 1;
	for (int i = 0; i < NFIELDS; i++)
		unescape(f[i]);
	if ((res = find_result(r, idx, f[0])) < 0)
		return 1;
	memset(o, 0, sizeof *o);
	ln = strtol(f[2], &p, 10);
	if (*p != '\0' || ln <= 0 || ln > INT_MAX || strlen(f[3]) >
	    sizeof o->kind - 1 || !(strcmp(f[3], "tol") == 0 ||
	    strcmp(f[3], "lt") == 0 || strcmp(f[3], "le") == 0 ||
	    strcmp(f[3], "gt") == 0 || strcmp(f[3], "ge") == 0) ||
	    number(f[4], 0, &o->quantity) < 0 || number(f[5], 0,
	    &o->bound) < 0 || !isfinite(o->bound) || number(f[7], 1,
	    &o->abs_err) < 0 || number(f[8], 1, &o->rel_err) < 0 ||
	    *f[1] == '\0')
		return 1;
	calls = strtol(f[6], &p, 10);
	if (*p != '\0' || calls <= 0 || calls > INT_MAX)
		return 1;
	o->result = (size_t)res;
	o->line = (int)ln;
	o->calls = (int)calls;
	snprintf(o->kind, sizeof o->kind, "%s", f[3]);
	if ((o->path = relative(f[1], dir, real)) == NULL ||
	    (*f[9] && (o->tolerance = strdup(f[9])) == NULL) ||
	    (*f[10] && (o->assertion = strdup(f[10])) == NULL)) {
		free(o->path);
		free(o->tolerance);
		return -ENOMEM;
	}
	return 0;
}

int
flaky_parse_headroom(const char *path, const char *rundir,
    struct flaky_results *r, char *err, size_t errlen)
{
	struct flaky_headroom_obs *v = NULL, o;
	char	*buf = NULL, *line, *next, real[PATH_MAX];
	size_t	 len, n = 0, cap = 0, *idx = NULL;
	int	 rc;

	if ((rc = flaky_read_file(path, HEADROOM_MAX_BYTES, &buf, &len, err,
	    errlen)) == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	if (r->n == 0 || len == 0)
		goto out;
	if ((idx = calloc(r->n, sizeof *idx)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->n; i++)
		idx[i] = i;
	qsort_r(idx, r->n, sizeof *idx, by_test, r);
	if (rundir == NULL || realpath(rundir, real) == NULL)
		real[0] = '\0';
	for (line = buf; line != NULL && *line != '\0' &&
	    n < FLAKY_HEADROOM_MAX; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((rc = parse_line(line, r, idx, rundir, real[0] ? real :
		    NULL, &o)) < 0)
			goto out;
		if (rc > 0)
			continue;
		if ((rc = flaky_array_grow(&v, &cap, n, sizeof *v)) < 0) {
			free(o.path);
			free(o.tolerance);
			free(o.assertion);
			goto out;
		}
		v[n++] = o;
	}
	rc = 0;
out:
	if (rc < 0) {
		for (size_t i = 0; i < n; i++) {
			free(v[i].path);
			free(v[i].tolerance);
			free(v[i].assertion);
		}
		free(v);
		if (rc == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
	} else {
		r->headroom = v;
		r->nheadroom = n;
	}
	free(idx);
	free(buf);
	return rc;
}
