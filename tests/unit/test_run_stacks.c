/* spawn, issue 33: at its time limit a run with stacks has them taken
 * before the kill (a Python that waits in a known function gives every
 * thread's traceback through faulthandler, within the bound), and a run
 * without stays as before. Driven by the event loop, no sleeps. */
#include "buildconf.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "store/store.h"
#include "util/util.h"
#include "run_test.h"

/* A Python that waits in wait_here until killed; 2.5 s is far more than
 * it takes to get there on a loaded machine. */
static char *const hang_argv[] = { "/usr/bin/python3", "-c",
    "import threading\n"
    "def wait_here():\n"
    "    threading.Event().wait()\n"
    "print('waiting', flush=True)\n"
    "wait_here()\n", NULL };

START_TEST(python_stacks_before_the_kill)
{
	struct flaky_stacks_opts so = { .bound_ms = 5000 };
	struct flaky_spawn_opts o = { .argv = hang_argv, .timeout_ms = 2500,
	    .grace_ms = 500, .stacks = &so };
	const struct flaky_proc_info *pi;
	struct flaky_stacks *k;
	struct flaky_proc *p;
	struct ctx	 c;
	size_t		 i;

	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->end, FLAKY_PROC_TIMEOUT);
	k = flaky_proc_take_stacks(p);
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->bound_ms, 5000);
	ck_assert_int_le(k->ms, 5000 + 500);
	ck_assert_int_ge(k->procs, 1);
	for (i = 0; i < k->n; i++)
		if (strcmp(k->v[i].runtime, "python") == 0)
			break;
	ck_assert_msg(i < k->n, "no python among %zu dumps", k->n);
	ck_assert_str_eq(k->v[i].tool, "faulthandler");
	ck_assert_msg(k->v[i].text != NULL && strstr(k->v[i].text,
	    "in wait_here") != NULL, "%s", k->v[i].text);
	/* taken, not taken again */
	ck_assert_ptr_null(flaky_proc_take_stacks(p));
	flaky_stacks_free(k);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* Without stacks the time limit kills at once, and nothing is taken. */
START_TEST(no_stacks_kills_at_once)
{
	struct flaky_spawn_opts o = { .argv = hang_argv, .timeout_ms = 1500,
	    .grace_ms = 500 };
	struct flaky_proc *p;
	struct ctx	 c;

	ctx_init(&c);
	p = run(&c, &o);
	ck_assert_int_eq(flaky_proc_info(p)->end, FLAKY_PROC_TIMEOUT);
	ck_assert_int_eq(flaky_proc_info(p)->signal, SIGTERM);
	ck_assert_ptr_null(flaky_proc_take_stacks(p));
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("run_stacks");
	TCase	*tc = tcase_create("run_stacks");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, python_stacks_before_the_kill);
	tcase_add_test(tc, no_stacks_kills_at_once);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
