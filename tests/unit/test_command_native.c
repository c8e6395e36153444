/* lib/run/command_native.c, detect_native.c and lib/diagnose/
 * repro_native.c: cargo test, GoogleTest (and ctest), RSpec and PHPUnit
 * commands completed, shuffled, selected, found in a directory and
 * reproduced; one test per rule of docs/runners.md. No runner runs. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnose/diagnose.h"
#include "run/run.h"

static char	 got[4096];	/* the argv joined by spaces */
static char	 note[2048];	/* the note, or "" */
static char	 runner[32];	/* the runner, or "-" */
static char	 env[512];	/* what shuffle added to the environment */

/* Split words at '|' when there is one, else at blanks; argv[n] NULL. */
static size_t
split(char *s, char **argv, size_t max)
{
	const char *sep = strchr(s, '|') ? "|" : " ";
	char	*save = NULL;
	size_t	 n = 0;

	for (char *w = strtok_r(s, sep, &save); w != NULL && n + 1 < max;
	    w = strtok_r(NULL, sep, &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

/* Join a vector into got. */
static void
join(char **v)
{
	got[0] = '\0';
	for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
		if (i > 0)
			strcat(got, " ");
		strcat(got, v[i]);
	}
}

/* Complete a command: got, note and runner filled. */
static void
complete(const char *words)
{
	struct flaky_command c;
	char	*copy = strdup(words), *argv[64], err[256];
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };

	split(copy, argv, 64);
	ck_assert_int_eq(flaky_command_complete(argv, envp, NULL, &c, err,
	    sizeof err), 0);
	join(c.argv);
	snprintf(note, sizeof note, "%s", c.note ? c.note : "");
	snprintf(runner, sizeof runner, "%s", c.runner ? c.runner : "-");
	flaky_command_clear(&c);
	free(copy);
}

START_TEST(complete_cargo)
{
	complete("cargo test");
	ck_assert_str_eq(got, "cargo test --no-fail-fast");
	ck_assert_str_eq(runner, "cargo");
	ck_assert_str_eq(note, "added --no-fail-fast (without it cargo stops "
	    "at the first test binary with a failure)");
	/* before libtest's "--", and -q gets libtest's pretty format */
	complete("cargo +nightly test -q --release -- --nocapture");
	ck_assert_str_eq(got, "cargo +nightly test -q --release "
	    "--no-fail-fast -- --nocapture --format pretty");
	ck_assert_ptr_nonnull(strstr(note, "-- --format pretty"));
	complete("cargo test --no-fail-fast -- --format terse");
	ck_assert_str_eq(got, "cargo test --no-fail-fast -- --format terse "
	    "--format pretty");
	/* complete already: as given */
	complete("cargo --offline test --no-fail-fast shop -- --exact x");
	ck_assert_str_eq(got, "cargo --offline test --no-fail-fast shop -- "
	    "--exact x");
	ck_assert_str_eq(note, "");
	/* cargo build is no test run */
	complete("cargo build --release");
	ck_assert_str_eq(runner, "-");
	ck_assert_str_eq(got, "cargo build --release");
}
END_TEST

START_TEST(complete_gtest)
{
	complete("./build/shop_test --gtest_brief=1");
	ck_assert_str_eq(got, "./build/shop_test --gtest_brief=1 "
	    "--gtest_brief=0");
	ck_assert_str_eq(runner, "gtest");
	complete("./build/shop_test --gtest_color=no");
	ck_assert_str_eq(got, "./build/shop_test --gtest_color=no");
	ck_assert_str_eq(runner, "gtest");
	ck_assert_str_eq(note, "");
	/* a binary without a GoogleTest option is not known to be one */
	complete("./build/shop_test");
	ck_assert_str_eq(runner, "-");
	/* ctest prints every test */
	complete("ctest --test-dir build -j2");
	ck_assert_str_eq(got, "ctest --test-dir build -j2");
	ck_assert_str_eq(runner, "gtest");
	ck_assert_str_eq(note, "");
}
END_TEST

START_TEST(complete_rspec)
{
	complete("rspec");
	ck_assert_str_eq(got, "rspec --format documentation");
	ck_assert_str_eq(runner, "rspec");
	ck_assert_str_eq(note, "added --format documentation (without it "
	    "RSpec names only failing examples)");
	complete("bundle exec rspec spec/cart_spec.rb");
	ck_assert_str_eq(got, "bundle exec rspec --format documentation "
	    "spec/cart_spec.rb");
	complete("rspec --format progress");
	ck_assert_str_eq(got, "rspec --format documentation --format "
	    "progress");
	complete("rspec -f d spec");
	ck_assert_str_eq(got, "rspec -f d spec");
	complete("rspec -fd");
	ck_assert_str_eq(note, "");
	complete("bundle install");
	ck_assert_str_eq(runner, "-");
}
END_TEST

START_TEST(complete_phpunit)
{
	complete("phpunit");
	ck_assert_str_eq(got, "phpunit --debug -v");
	ck_assert_str_eq(runner, "phpunit");
	ck_assert_str_eq(note, "added --debug -v (without them PHPUnit names "
	    "only the tests that did not pass)");
	complete("php vendor/bin/phpunit --testdox tests");
	ck_assert_str_eq(got, "php vendor/bin/phpunit --debug -v --testdox "
	    "tests");
	complete("vendor/bin/phpunit --debug");
	ck_assert_str_eq(got, "vendor/bin/phpunit -v --debug");
	complete("phpunit --verbose --debug");
	ck_assert_str_eq(note, "");
}
END_TEST

/* Shuffle the completed command: got, env (what the environment gained)
 * filled; the call's return value. */
static int
shuffle(const char *words, const char *seed)
{
	struct flaky_command c;
	char	*copy = strdup(words), *argv[64], err[512], **na, **ne;
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };
	int	 r;

	split(copy, argv, 64);
	ck_assert_int_eq(flaky_command_complete(argv, envp, NULL, &c, err,
	    sizeof err), 0);
	r = flaky_command_shuffle(&c, seed, &na, &ne, err, sizeof err);
	env[0] = got[0] = '\0';
	if (r == 0) {
		join(na);
		for (size_t i = 1; ne[i] != NULL; i++)
			snprintf(env + strlen(env), sizeof env - strlen(env),
			    "%s%s", i > 1 ? " " : "", ne[i]);
		flaky_command_free_vec(na);
		flaky_command_free_vec(ne);
	} else
		snprintf(got, sizeof got, "%s", err);
	flaky_command_clear(&c);
	free(copy);
	return r;
}

START_TEST(shuffle_native)
{
	ck_assert_int_eq(shuffle("./t --gtest_color=no", "42"), 0);
	ck_assert_str_eq(got, "./t --gtest_color=no --gtest_shuffle "
	    "--gtest_random_seed=42");
	ck_assert_int_eq(shuffle("ctest --test-dir b", "42"), 0);
	ck_assert_str_eq(got, "ctest --test-dir b");
	ck_assert_str_eq(env, "GTEST_SHUFFLE=1 GTEST_RANDOM_SEED=42");
	ck_assert_int_eq(shuffle("rspec spec", "7"), 0);
	ck_assert_str_eq(got, "rspec --order rand:7 --format documentation "
	    "spec");
	ck_assert_int_eq(shuffle("phpunit tests", "7"), 0);
	ck_assert_str_eq(got, "phpunit --order-by=random "
	    "--random-order-seed=7 --debug -v tests");
	/* stable Rust has no seeded shuffle: said, not faked */
	ck_assert_int_eq(shuffle("cargo test", "7"), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(got, "cannot shuffle"));
	ck_assert_ptr_nonnull(strstr(got, "nightly"));
}
END_TEST

/* Select tests (split at '|') from a command completed first. */
static int
sel(const char *words, const char *tests)
{
	struct flaky_command c;
	char	*copy = strdup(words), *tcopy = strdup(tests), *argv[64];
	char	*tv[64], err[512], **na, **ne, *save = NULL;
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };
	size_t	 nt = 0;
	int	 r;

	split(copy, argv, 64);
	for (char *w = strtok_r(tcopy, "|", &save); w != NULL && nt < 63;
	    w = strtok_r(NULL, "|", &save))
		tv[nt++] = w;
	ck_assert_int_eq(flaky_command_complete(argv, envp, NULL, &c, err,
	    sizeof err), 0);
	r = flaky_command_select(&c, NULL, tv, nt, &na, &ne, err, sizeof err);
	got[0] = '\0';
	if (r == 0) {
		join(na);
		flaky_command_free_vec(na);
		flaky_command_free_vec(ne);
	}
	flaky_command_clear(&c);
	free(copy);
	free(tcopy);
	return r;
}

START_TEST(select_native)
{
	/* cargo: filters dropped, libtest's options kept, --exact names */
	ck_assert_int_eq(sel("cargo test -p shop --release shop -- "
	    "--test-threads 2 cart", "cart::tests::adds|words::finds"), 0);
	ck_assert_str_eq(got, "cargo test -p shop --release --no-fail-fast "
	    "-- --test-threads 2 --exact cart::tests::adds words::finds");
	/* rustdoc splits filters at blanks: no doctest can be named */
	ck_assert_int_eq(sel("cargo test", "cart::tests::adds|src/lib.rs - "
	    "cart::total (line 27)"), -ENOTSUP);
	ck_assert_int_eq(sel("./t --gtest_color=no --gtest_filter=A.*",
	    "Cart.Adds|Small/Prices.ArePositive/0"), 0);
	ck_assert_str_eq(got, "./t --gtest_color=no "
	    "--gtest_filter=Cart.Adds:Small/Prices.ArePositive/0");
	ck_assert_int_eq(sel("ctest --test-dir b -R old -j2",
	    "Amounts.StartAtZero<int>|Cart.Adds"), 0);
	ck_assert_str_eq(got, "ctest --test-dir b -j2 -R "
	    "^(Amounts\\.StartAtZero<int>|Cart\\.Adds)$");
	ck_assert_int_eq(sel("bundle exec rspec -e old spec",
	    "Cart checkout refunds|Cart#total adds"), 0);
	ck_assert_str_eq(got, "bundle exec rspec --format documentation spec "
	    "-e Cart checkout refunds -e Cart#total adds");
	ck_assert_int_eq(sel("phpunit --filter old tests",
	    "Demo\\CartTest::testCounts with data set \"one item\""), 0);
	ck_assert_str_eq(got, "phpunit --debug -v tests --filter "
	    "/^(?:Demo\\\\CartTest::testCounts with data set \"one "
	    "item\")$/");
	/* a binary not known to be GoogleTest's is not told anything */
	ck_assert_int_eq(sel("./t", "Cart.Adds"), -ENOTSUP);
}
END_TEST

static char	 tmp[64];

/* A project directory: these files (each "path" or "path/" for a
 * directory) under tmp, and bin/ holding fake runners. */
static void
project(const char *const *files, size_t n)
{
	static const char *const bins[] = { "cargo", "ctest", "rspec",
	    "phpunit" };
	char	 p[256];

	snprintf(tmp, sizeof tmp, "/tmp/flaky-native-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(p, sizeof p, "%s/bin", tmp);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bins); i++) {
		int	 fd;

		snprintf(p, sizeof p, "%s/bin/%s", tmp, bins[i]);
		ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0700), 0);
		close(fd);
	}
	for (size_t i = 0; i < n; i++) {
		size_t	 len = strlen(files[i]);

		snprintf(p, sizeof p, "%s/%s", tmp, files[i]);
		if (files[i][len - 1] == '/')
			ck_assert_int_eq(mkdir(p, 0700), 0);
		else
			close(open(p, O_CREAT | O_WRONLY, 0600));
	}
}

/* Directory mode on tmp/sub: got and note filled; the return value. */
static int
detect(const char *sub)
{
	struct flaky_command c;
	char	 path[256], pathenv[128], err[2048];
	char	*envp[] = { pathenv, NULL };
	int	 r;

	snprintf(path, sizeof path, "%s/%s", tmp, sub);
	snprintf(pathenv, sizeof pathenv, "PATH=%s/bin", tmp);
	r = flaky_command_detect(path, envp, NULL, &c, err, sizeof err);
	got[0] = '\0';
	if (r == 0) {
		join(c.argv);
		snprintf(note, sizeof note, "%s", c.note);
		snprintf(runner, sizeof runner, "%s", c.runner);
		flaky_command_clear(&c);
	} else
		snprintf(note, sizeof note, "%s", err);
	return r;
}

/* Remove tmp and everything in it. */
static void
unproject(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(directory_mode)
{
	static const char *const cargo[] = { "Cargo.toml", "src/",
	    "src/lib.rs" };
	static const char *const cmake[] = { "CMakeLists.txt", "build/",
	    "build/CTestTestfile.cmake" };
	static const char *const unbuilt[] = { "CMakeLists.txt" };
	static const char *const rspec[] = { "spec/", "spec/cart_spec.rb",
	    "spec/models/" };
	static const char *const php[] = { "phpunit.xml.dist", "tests/" };

	project(cargo, FLAKY_ARRAY_SIZE(cargo));
	ck_assert_int_eq(detect("src"), 0);
	ck_assert_str_eq(got, "cargo test --no-fail-fast");
	ck_assert_str_eq(runner, "cargo");
	ck_assert_str_eq(note, "found Cargo.toml");
	unproject();

	project(cmake, FLAKY_ARRAY_SIZE(cmake));
	ck_assert_int_eq(detect("."), 0);
	ck_assert_str_eq(got, "ctest --test-dir build --output-on-failure");
	ck_assert_str_eq(runner, "gtest");
	unproject();
	/* configured nowhere: no ctest to run */
	project(unbuilt, FLAKY_ARRAY_SIZE(unbuilt));
	ck_assert_int_eq(detect("."), -ENOENT);
	ck_assert_msg(strstr(note, "Cargo.toml, CMakeLists.txt with a ctest "
	    "build directory") != NULL, "%s", note);
	ck_assert_ptr_nonnull(strstr(note, "Cargo.toml, CMakeLists.txt with "
	    "a ctest build directory"));
	unproject();

	project(rspec, FLAKY_ARRAY_SIZE(rspec));
	ck_assert_int_eq(detect("spec/models"), 0);
	ck_assert_str_eq(got, "rspec --format documentation spec/models");
	ck_assert_str_eq(note, "found spec/*_spec.rb");
	unproject();

	project(php, FLAKY_ARRAY_SIZE(php));
	ck_assert_int_eq(detect("tests"), 0);
	ck_assert_str_eq(got, "phpunit --debug -v tests");
	ck_assert_str_eq(runner, "phpunit");
	unproject();
}
END_TEST

/* The reproduce command of test in a target run by command. */
static void
repro(const char *runner_name, const char *command, const char *test,
    const char *seed)
{
	struct flaky_diagnosis d;
	struct flaky_buf b;

	memset(&d, 0, sizeof d);
	d.runner = (char *)runner_name;
	d.command = (char *)command;
	d.test = (char *)test;
	d.seed = (char *)seed;
	flaky_buf_init(&b);
	flaky_repro(&d, NULL, &b);
	snprintf(got, sizeof got, "%s", flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

START_TEST(reproduce_native)
{
	repro("cargo", "cargo test --no-fail-fast -p shop", "cart::tests::a",
	    NULL);
	ck_assert_str_eq(got, "cargo test -p shop -- --exact cart::tests::a");
	repro("cargo", "cargo test", "src/lib.rs - cart::total (line 27)",
	    NULL);
	ck_assert_str_eq(got, "cargo test --doc -- cart::total\n# rustdoc "
	    "splits a filter at blanks: this runs every doctest whose name "
	    "holds cart::total");
	repro("gtest", "./build/shop_test --gtest_color=no",
	    "Small/Prices.ArePositive/0", NULL);
	ck_assert_str_eq(got, "./build/shop_test "
	    "--gtest_filter=Small/Prices.ArePositive/0");
	repro("gtest", "ctest --test-dir build --output-on-failure",
	    "Amounts.StartAtZero<int>", NULL);
	ck_assert_str_eq(got, "ctest --test-dir build --output-on-failure -R "
	    "'^Amounts\\.StartAtZero<int>$'");
	repro("rspec", "bundle exec rspec --format documentation",
	    "Cart checkout refunds", "3");
	ck_assert_str_eq(got, "bundle exec rspec -e 'Cart checkout refunds' "
	    "--order rand:3");
	repro("phpunit", "php vendor/bin/phpunit --debug -v",
	    "Demo\\CartTest::testA", NULL);
	ck_assert_str_eq(got, "php vendor/bin/phpunit --filter "
	    "'/^Demo\\\\CartTest::testA$/'");
	/* the runner guessed from the command when runs did not say */
	ck_assert_str_eq(flaky_repro_runner(NULL, "ctest -j2"), "gtest");
	ck_assert_str_eq(flaky_repro_runner(NULL, "cargo test"), "cargo");
}
END_TEST

/* The suite. */
static Suite *
command_native_suite(void)
{
	Suite	*s = suite_create("command_native");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, complete_cargo);
	tcase_add_test(tc, complete_gtest);
	tcase_add_test(tc, complete_rspec);
	tcase_add_test(tc, complete_phpunit);
	tcase_add_test(tc, shuffle_native);
	tcase_add_test(tc, select_native);
	tcase_add_test(tc, directory_mode);
	tcase_add_test(tc, reproduce_native);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(command_native_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
