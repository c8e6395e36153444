/* Finding a test by a full id or a unique part of one, with the nearest
 * names (edit distance) when nothing matches. */
#include "buildconf.h"

#include "diagnose_int.h"

/* Levenshtein distance in one row, inputs cut at FLAKY_EDIT_MAX bytes. */
size_t
flaky_edit_distance(const char *a, const char *b)
{
	size_t	 row[FLAKY_EDIT_MAX + 1], la = strlen(a), lb = strlen(b);

	if (la > FLAKY_EDIT_MAX)
		la = FLAKY_EDIT_MAX;
	if (lb > FLAKY_EDIT_MAX)
		lb = FLAKY_EDIT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t	 diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t	 up = row[j], best;

			best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The last part of a test id: after "::", '.', '/', '>' or a space. */
static const char *
base_name(const char *s)
{
	const char *b = s;

	for (const char *p = s; *p; p++)
		if (*p == ':' || *p == '.' || *p == '/' || *p == '>' ||
		    *p == ' ')
			b = p + 1;
	return *b ? b : s;
}

struct near {
	size_t	 i, dist;
};

/* Closest names first, then in list order. */
static int
cmp_near(const void *a, const void *b)
{
	const struct near *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Exact id, unique part, whole last part; else candidates or closest. */
int
flaky_find_test(const struct flaky_test_ref *refs, size_t n,
    const char *query, size_t *matches, size_t max, size_t *nmatches)
{
	size_t	 nsub = 0, nbase = 0, nexact = 0, first_sub = 0;
	size_t	 first_base = 0, first_exact = 0;
	struct near *near;

	*nmatches = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(refs[i].name, query) == 0 && nexact++ == 0)
			first_exact = i;
		if (strstr(refs[i].name, query) == NULL)
			continue;
		if (nsub++ == 0)
			first_sub = i;
		if (strcmp(base_name(refs[i].name), query) == 0 &&
		    nbase++ == 0)
			first_base = i;
	}
	if (nexact == 1 || (nexact == 0 && nsub == 1) ||
	    (nexact == 0 && nbase == 1)) {
		matches[0] = nexact ? first_exact : nbase == 1 ? first_base :
		    first_sub;
		*nmatches = 1;
		return FLAKY_FIND_ONE;
	}
	if (nsub > 1) {
		for (size_t i = 0; i < n && *nmatches < max; i++)
			if (strstr(refs[i].name, query) != NULL &&
			    (nexact == 0 || strcmp(refs[i].name, query) == 0))
				matches[(*nmatches)++] = i;
		return FLAKY_FIND_AMBIGUOUS;
	}
	if (n == 0 || max == 0)
		return FLAKY_FIND_NONE;
	if ((near = calloc(n, sizeof *near)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t	 d1 = flaky_edit_distance(query, refs[i].name);
		size_t	 d2 = flaky_edit_distance(query,
		    base_name(refs[i].name));

		near[i].i = i;
		near[i].dist = d1 < d2 ? d1 : d2;
	}
	if (n > 1)
		qsort(near, n, sizeof *near, cmp_near);
	for (size_t i = 0; i < n && *nmatches < max; i++)
		matches[(*nmatches)++] = near[i].i;
	free(near);
	return FLAKY_FIND_NONE;
}
