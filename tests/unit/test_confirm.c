/* lib/confirm.c: the command for a test alone and when a test is settled,
 * with exact counts from the hypergeometric tail. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/pipeline.h"
#include "util/util.h"

/* A diagnosis as the store would give it, for flaky_confirm_add. */
static void
diag(struct flaky_diagnosis *d, const char *test, int64_t runs,
    int64_t failures, int verdict)
{
	memset(d, 0, sizeof *d);
	d->test_id = 7;
	d->target_id = 1;
	d->test = (char *)test;
	d->target = (char *)"demo";
	d->dir = (char *)"/nonexistent";
	d->runs = d->suite_runs = runs;
	d->failures = d->suite_failures = failures;
	d->verdict = verdict;
}

/* One run's results: the test with this outcome. */
static void
result(struct flaky_results *r, struct flaky_result *x, const char *test,
    int outcome)
{
	memset(r, 0, sizeof *r);
	memset(x, 0, sizeof *x);
	x->test = (char *)test;
	x->outcome = outcome;
	x->duration_us = -1;
	r->v = x;
	r->n = 1;
}

/* Runs alone with outcome until t is settled; how many it took. */
static int
until_settled(struct flaky_confirm *c, int outcome)
{
	struct flaky_confirm_test *t;
	struct flaky_results r;
	struct flaky_result x;
	char *const	*argv, *const *envp;
	int		 n = 0;

	while ((t = flaky_confirm_next(c, NULL, &argv, &envp)) != NULL) {
		ck_assert_str_eq(argv[0], "/bin/sh");
		ck_assert_str_eq(argv[1], "-c");
		result(&r, &x, t->name, outcome);
		ck_assert_int_eq(flaky_confirm_count(c, t, &r), 0);
		n++;
	}
	return n;
}

/* Run sh -c CMD with FLAKY_TEST=id in dir; its stdout into out. */
static void
sh_run(const char *dir, const char *cmd, const char *id, char *out,
    size_t len)
{
	int	 fd[2], status;
	pid_t	 pid;
	ssize_t	 n;
	size_t	 got = 0;

	ck_assert_int_eq(pipe(fd), 0);
	if ((pid = fork()) == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (chdir(dir) != 0 || setenv("FLAKY_TEST", id, 1) != 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (got + 1 < len && (n = read(fd[0], out + got,
	    len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

/* Test ids are untrusted (they come from the code under test and from
 * CI files): in every quoting context of a template the shell sees the id
 * as one word and runs nothing of it. */
START_TEST(expand)
{
	static const char *const ids[] = {
		"t.py::test_x[a b]", "it's", "b $(touch PWNED)",
		"c `touch PWNED`", "d\" ; touch PWNED ; echo \"",
		"e' ; touch PWNED ; echo '", "f\\\" $(touch PWNED)", "g\nh",
		"*", "$HOME",
	};
	static const char *const tmpls[] = {
		"printf '[%s]' {test}", "printf '[%s]' \"{test}\"",
		"printf '[%s]' '{test}'", "printf '[%s]' \"x {test} y\"",
		"printf '[%s]' 'x {test} y'", "printf '[%s]' \\'{test}",
	};
	static const char *const pre[] = { "", "", "", "x ", "x ", "'" };
	static const char *const post[] = { "", "", "", " y", " y", "" };
	char	 dir[] = "/tmp/flaky-expand-XXXXXX", out[512], want[512];
	char	 pwned[sizeof dir + 8];
	char	*s;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(pwned, sizeof pwned, "%s/PWNED", dir);
	s = flaky_confirm_expand("pytest -v {test}");
	ck_assert_str_eq(s, "pytest -v \"$FLAKY_TEST\"");
	free(s);
	for (size_t t = 0; t < FLAKY_ARRAY_SIZE(tmpls); t++) {
		ck_assert_ptr_nonnull(s = flaky_confirm_expand(tmpls[t]));
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ids); i++) {
			sh_run(dir, s, ids[i], out, sizeof out);
			snprintf(want, sizeof want, "[%s%s%s]", pre[t],
			    ids[i], post[t]);
			ck_assert_msg(strcmp(out, want) == 0,
			    "template %s, id %s: got %s", tmpls[t], ids[i],
			    out);
			ck_assert_msg(access(pwned, F_OK) != 0,
			    "template %s, id %s ran a command", tmpls[t],
			    ids[i]);
		}
		free(s);
	}
	rmdir(dir);
}
END_TEST

/* Passing alone while failing in 5 of 10 suite runs: settled once that is
 * under 1% by chance, C(10,5)/C(10+n,5) < 0.01, first at n = 12. */
START_TEST(passes_alone)
{
	struct flaky_confirm c;
	struct flaky_diagnosis d;

	flaky_confirm_init(&c, 100);
	diag(&d, "t.py::test_fresh", 10, 5, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "pytest -v {test}", "r1"),
	    0);
	ck_assert_int_eq(c.t[0].settled, 0);
	ck_assert_str_eq(c.t[0].revision, "r1");
	ck_assert_int_eq(until_settled(&c, FLAKY_PASS), 12);
	ck_assert_int_eq(c.t[0].alone, 12);
	ck_assert_int_eq(c.t[0].alone_failed, 0);
	flaky_confirm_free(&c);
}
END_TEST

/* The mirror: failing alone while passing in 25 of 50 suite runs,
 * C(50,25)/C(50+n,25) < 0.01 first at n = 8. */
START_TEST(fails_alone)
{
	struct flaky_confirm c;
	struct flaky_diagnosis d;

	flaky_confirm_init(&c, 100);
	diag(&d, "t.py::test_login", 50, 25, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "pytest -v {test}", "r1"),
	    0);
	ck_assert_int_eq(until_settled(&c, FLAKY_FAIL), 8);
	ck_assert_int_eq(c.t[0].alone_failed, 8);
	flaky_confirm_free(&c);
}
END_TEST

/* Broken is never rerun; the cap ends a test that does not settle; a run
 * that does not report the test drops it. */
START_TEST(limits)
{
	struct flaky_confirm c;
	struct flaky_diagnosis d;
	struct flaky_confirm_test *t;
	struct flaky_results r;
	struct flaky_result x;
	char *const	*argv, *const *envp;

	flaky_confirm_init(&c, 5);
	diag(&d, "t.py::test_broken", 10, 10, FLAKY_VERDICT_BROKEN);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "x {test}", "r1"), 0);
	ck_assert_int_eq(c.t[0].settled, 1);
	ck_assert_ptr_null(flaky_confirm_next(&c, NULL, &argv, &envp));
	/* 3 of 10 in the suite, passes and failures alone: the tier stays
	 * open for long, the cap (5) ends it */
	diag(&d, "t.py::test_mixed", 10, 3, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "x {test}", "r1"), 0);
	for (int i = 0; (t = flaky_confirm_next(&c, NULL, &argv, &envp)) != NULL; i++) {
		ck_assert_str_eq(t->name, "t.py::test_mixed");
		result(&r, &x, t->name, i % 2 ? FLAKY_FAIL : FLAKY_PASS);
		ck_assert_int_eq(flaky_confirm_count(&c, t, &r), 0);
	}
	ck_assert_int_eq(c.t[1].alone, 5);
	/* not reported: dropped at once */
	diag(&d, "t.py::test_gone", 10, 5, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "x {test}", "r1"), 0);
	ck_assert_ptr_nonnull(t = flaky_confirm_next(&c, NULL, &argv, &envp));
	ck_assert_str_eq(argv[2], "x \"$FLAKY_TEST\"");
	{
		int	 found = 0;

		for (size_t i = 0; envp[i] != NULL; i++)
			found += strcmp(envp[i], "FLAKY_TEST=t.py::test_gone")
			    == 0;
		ck_assert_int_eq(found, 1);
	}
	result(&r, &x, "t.py::test_other", FLAKY_PASS);
	ck_assert_int_eq(flaky_confirm_count(&c, t, &r), -ENOENT);
	ck_assert_int_eq(t->start_error, 1);
	ck_assert_ptr_null(flaky_confirm_next(&c, NULL, &argv, &envp));
	flaky_confirm_free(&c);
	flaky_confirm_free(NULL);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("confirm");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, expand);
	tcase_add_test(tc, passes_alone);
	tcase_add_test(tc, fails_alone);
	tcase_add_test(tc, limits);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
