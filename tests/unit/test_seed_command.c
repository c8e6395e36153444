/* Issue 34: the command of a seeded run (lib/run/seed.c): the seed and the
 * hook in its environment, a project's own seed variable where its
 * marker file is, the words of a reproduce command, and the refusals. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/run.h"
#include "test_helper.h"

/* The value of name in envp, or NULL. */
static const char *
env(char **envp, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* A completed command of argv (runner detected) with envp. */
static void
command(struct flaky_command *c, char **argv, char **envp)
{
	struct flaky_command_opts o = { 0 };
	char	 err[256];

	ck_assert_msg(flaky_command_complete(argv, envp, &o, c, err,
	    sizeof err) == 0, "%s", err);
}

START_TEST(pytest_env)
{
	char	*argv[] = { "pytest", "tests", NULL };
	char	*envp[] = { "PATH=/usr/bin", "PYTHONPATH=/mine",
	    "PYTEST_PLUGINS=other", NULL };
	char	**av, **ev, err[256], hook[4096];
	struct flaky_command c;

	command(&c, argv, envp);
	ck_assert_int_eq(flaky_seed_hook_dir(hook, sizeof hook, err,
	    sizeof err), 0);
	/* the build tree's own hook, beside the sources */
	ck_assert_str_eq(hook, FLAKY_SOURCE_PYTHON_DIR);
	ck_assert_msg(flaky_command_seed(&c, "1804289383", "/tmp", 1, &av, &ev,
	    err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(av[0], "pytest");
	ck_assert_str_eq(env(ev, "FLAKY_SEED"), "1804289383");
	ck_assert_str_eq(env(ev, "PYTHONHASHSEED"), "1804289383");
	ck_assert_str_eq(env(ev, "FLAKY_HEADROOM"), FLAKY_HEADROOM_FILE);
	ck_assert_str_eq(env(ev, "PYTEST_PLUGINS"),
	    "other," FLAKY_SEED_PYTEST_PLUGIN);
	ck_assert_str_eq(env(ev, "PYTHONPATH"), FLAKY_SOURCE_PYTHON_DIR
	    ":/mine");
	/* pytest still prints every outcome */
	ck_assert_ptr_nonnull(env(ev, "PYTEST_ADDOPTS"));
	ck_assert_ptr_null(env(ev, "SKLEARN_TESTS_GLOBAL_RANDOM_SEED"));
	flaky_command_free_vec(av);
	flaky_command_free_vec(ev);
	/* without headroom: no file named */
	ck_assert_int_eq(flaky_command_seed(&c, "7", "/tmp", 0, &av, &ev, err,
	    sizeof err), 0);
	ck_assert_ptr_null(env(ev, "FLAKY_HEADROOM"));
	flaky_command_free_vec(av);
	flaky_command_free_vec(ev);
	/* no seed 0, nothing past 32 bits */
	ck_assert_int_eq(flaky_command_seed(&c, "0", "/tmp", 0, &av, &ev, err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(flaky_command_seed(&c, "4294967296", "/tmp", 0, &av,
	    &ev, err, sizeof err), -EINVAL);
	flaky_command_clear(&c);
}
END_TEST

START_TEST(unittest_and_others)
{
	char	*ut[] = { "python3", "-m", "unittest", "discover", NULL };
	char	*jest[] = { "npx", "jest", NULL };
	char	*envp[] = { "PATH=/usr/bin", NULL };
	char	**av, **ev, err[256];
	struct flaky_command c;

	command(&c, ut, envp);
	ck_assert_int_eq(flaky_command_seed(&c, "5", "/tmp", 1, &av, &ev, err,
	    sizeof err), 0);
	ck_assert_str_eq(env(ev, "PYTHONPATH"), FLAKY_SOURCE_PYTHON_DIR);
	/* unittest's hook is the sitecustomize beside the package */
	ck_assert_ptr_null(env(ev, "PYTEST_PLUGINS"));
	flaky_command_free_vec(av);
	flaky_command_free_vec(ev);
	flaky_command_clear(&c);
	command(&c, jest, envp);
	ck_assert_int_eq(flaky_command_seed(&c, "5", "/tmp", 1, &av, &ev, err,
	    sizeof err), -ENOTSUP);
	ck_assert_str_eq(err, "--perturb seed: jest is not a Python runner: "
	    "the seed hook seeds pytest's and unittest's tests");
	flaky_command_clear(&c);
}
END_TEST

/* scikit-learn's variable, where its marker is: below the directory or
 * the directory being the package itself. */
START_TEST(project_variable)
{
	char	 d[64], p[256], **av, **ev, err[256];
	char	*argv[] = { "pytest", NULL };
	char	*envp[] = { "PATH=/usr/bin", NULL };
	struct flaky_command c;
	struct flaky_buf b;
	FILE	*f;

	tu_tmpdir(d, sizeof d, "seedvar");
	snprintf(p, sizeof p, "%s/sklearn", d);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/sklearn/tests", d);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/sklearn/tests/random_seed.py", d);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	command(&c, argv, envp);
	ck_assert_int_eq(flaky_command_seed(&c, "1804289383", d, 0, &av, &ev,
	    err, sizeof err), 0);
	ck_assert_str_eq(env(ev, "SKLEARN_TESTS_GLOBAL_RANDOM_SEED"), "83");
	ck_assert_str_eq(env(ev, "FLAKY_SEED_IDS"), "global_random_seed=42");
	flaky_command_free_vec(av);
	flaky_command_free_vec(ev);
	snprintf(p, sizeof p, "%s/sklearn/tests", d);
	ck_assert_int_eq(flaky_command_seed(&c, "17", p, 0, &av, &ev, err,
	    sizeof err), 0);
	ck_assert_str_eq(env(ev, "SKLEARN_TESTS_GLOBAL_RANDOM_SEED"), "17");
	flaky_command_free_vec(av);
	flaky_command_free_vec(ev);
	flaky_buf_init(&b);
	flaky_seed_env_words("117", d, "pytest", &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "FLAKY_SEED=117 "
	    "PYTHONHASHSEED=117 PYTHONPATH=" FLAKY_SOURCE_PYTHON_DIR
	    "${PYTHONPATH:+:$PYTHONPATH} PYTEST_PLUGINS="
	    FLAKY_SEED_PYTEST_PLUGIN "${PYTEST_PLUGINS:+,$PYTEST_PLUGINS} "
	    "SKLEARN_TESTS_GLOBAL_RANDOM_SEED=17 "
	    "FLAKY_SEED_IDS=global_random_seed=42 ");
	flaky_buf_reset(&b);
	flaky_seed_env_words("117", "/", "unittest", &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "FLAKY_SEED=117 "
	    "PYTHONHASHSEED=117 PYTHONPATH=" FLAKY_SOURCE_PYTHON_DIR
	    "${PYTHONPATH:+:$PYTHONPATH} ");
	flaky_buf_free(&b);
	flaky_command_clear(&c);
	tu_rmdir(d);
}
END_TEST

/* $FLAKY_SEED_HOOK_DIR wins, and must hold the hook. */
START_TEST(hook_dir)
{
	char	 d[64], buf[4096], err[512];

	tu_tmpdir(d, sizeof d, "seedhook");
	setenv("FLAKY_SEED_HOOK_DIR", d, 1);
	ck_assert_int_eq(flaky_seed_hook_dir(buf, sizeof buf, err,
	    sizeof err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "has no flaky_seed/__init__.py"));
	setenv("FLAKY_SEED_HOOK_DIR", FLAKY_SOURCE_PYTHON_DIR, 1);
	ck_assert_int_eq(flaky_seed_hook_dir(buf, sizeof buf, err,
	    sizeof err), 0);
	unsetenv("FLAKY_SEED_HOOK_DIR");
	tu_rmdir(d);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("seed_command");
	TCase	*tc = tcase_create("seed_command");
	SRunner	*sr;
	int	 failed;

	unsetenv("FLAKY_SEED_HOOK_DIR");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, pytest_env);
	tcase_add_test(tc, unittest_and_others);
	tcase_add_test(tc, project_variable);
	tcase_add_test(tc, hook_dir);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
