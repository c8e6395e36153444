/* What the parser suites share (parse_test.h). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

void
pt_same(const struct flaky_results *a, const struct flaky_results *b,
    const char *what)
{
	ck_assert_msg(a->n == b->n, "%s: %zu != %zu results", what, a->n, b->n);
	ck_assert_str_eq(a->runner, b->runner);
	ck_assert_msg(tu_str_eq(a->version, b->version), "%s: version", what);
	ck_assert_msg(tu_str_eq(a->seed, b->seed), "%s: seed", what);
	ck_assert_int_eq(a->summary_total, b->summary_total);
	ck_assert_int_eq(a->warning == NULL, b->warning == NULL);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_str_eq(a->v[i].test, b->v[i].test);
		ck_assert_int_eq(a->v[i].outcome, b->v[i].outcome);
		ck_assert_int_eq(a->v[i].duration_us, b->v[i].duration_us);
		ck_assert_uint_eq(a->v[i].position, b->v[i].position);
		ck_assert_msg(tu_str_eq(a->v[i].message, b->v[i].message),
		    "%s: message of %s", what, a->v[i].test);
	}
	ck_assert_msg(a->nattempts == b->nattempts, "%s: %zu != %zu attempts",
	    what, a->nattempts, b->nattempts);
	for (size_t i = 0; i < a->nattempts; i++) {
		ck_assert_uint_eq(a->attempts[i].result, b->attempts[i].result);
		ck_assert_int_eq(a->attempts[i].attempt, b->attempts[i].attempt);
		ck_assert_int_eq(a->attempts[i].outcome, b->attempts[i].outcome);
		ck_assert_msg(tu_str_eq(a->attempts[i].message,
		    b->attempts[i].message), "%s: attempt message", what);
	}
}

void
pt_fixture(const char *rel, const char *rundir, struct flaky_results *out)
{
	static const size_t	 chunks[] = { 1, 7 };
	struct flaky_results	 other;
	size_t			 len;
	char			*buf = tu_slurp(rel, &len);

	tu_parse_chunked(buf, len, 0, rundir, out);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(chunks); i++) {
		tu_parse_chunked(buf, len, chunks[i], rundir, &other);
		pt_same(out, &other, rel);
		flaky_results_free(&other);
	}
	free(buf);
}

void
pt_text(const char *s, struct flaky_results *r)
{
	struct flaky_results	 c;

	tu_parse_chunked(s, strlen(s), 0, NULL, r);
	tu_parse_chunked(s, strlen(s), 1, NULL, &c);
	pt_same(r, &c, s);
	flaky_results_free(&c);
}

void
pt_check(const struct flaky_results *r, const struct want *w, size_t n)
{
	ck_assert_int_eq(r->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct flaky_result *v = &r->v[i];

		ck_assert_str_eq(v->test, w[i].test);
		ck_assert_msg(v->outcome == w[i].outcome, "%s: outcome %s",
		    v->test, flaky_outcome_name(v->outcome));
		ck_assert_uint_eq(v->position, i);
		if (w[i].duration_us != -2)
			ck_assert_msg(v->duration_us == w[i].duration_us,
			    "%s: duration %lld", v->test,
			    (long long)v->duration_us);
		if (w[i].msg == NULL)
			ck_assert_msg(v->message == NULL, "%s: message %s",
			    v->test, v->message);
		else {
			ck_assert_msg(v->message != NULL, "%s: no message",
			    v->test);
			ck_assert_msg(strstr(v->message, w[i].msg) != NULL,
			    "%s: message %s", v->test, v->message);
		}
	}
}

size_t
pt_count(const struct flaky_results *r, int outcome)
{
	size_t	 n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].outcome == outcome;
	return n;
}

const struct flaky_result *
pt_find(const struct flaky_results *r, const char *test)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].test, test) == 0)
			return &r->v[i];
	return NULL;
}

void
pt_assert_has(const struct flaky_results *r, const struct expect *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct flaky_result *v = pt_find(r, e[i].test);

		ck_assert_msg(v != NULL, "missing %s", e[i].test);
		ck_assert_msg(v->outcome == e[i].outcome, "%s: %s, not %s",
		    e[i].test, flaky_outcome_name(v->outcome),
		    flaky_outcome_name(e[i].outcome));
		if (e[i].msg != NULL)
			ck_assert_msg(v->message != NULL &&
			    strstr(v->message, e[i].msg) != NULL,
			    "%s: message %s lacks %s", e[i].test,
			    v->message ? v->message : "(null)", e[i].msg);
		else if (!FLAKY_FAILED(e[i].outcome))
			ck_assert_ptr_null(v->message);
	}
}

void
pt_assert_exact(const struct flaky_results *r, const struct expect *e,
    size_t n)
{
	ck_assert_uint_eq(r->n, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(r->v[i].test, e[i].test);
		ck_assert_uint_eq(r->v[i].position, i);
		ck_assert_int_eq(r->v[i].duration_us, -1);
	}
	pt_assert_has(r, e, n);
}

int
pt_run(const char *name, void (*add)(TCase *))
{
	Suite	*s = suite_create(name);
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	add(tc);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

const struct flaky_result *
pt_find_trimmed(const struct flaky_results *r, const char *id)
{
	char	*t = strdup(id);
	size_t	 n;
	const struct flaky_result *v;

	ck_assert_ptr_nonnull(t);
	n = strlen(t);
	while (n > 0 && t[n - 1] == ' ')
		t[--n] = '\0';
	v = pt_find(r, t);
	free(t);
	return v;
}
