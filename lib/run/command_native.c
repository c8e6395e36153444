/* cargo test, GoogleTest (a test binary, or ctest running it), RSpec and
 * PHPUnit commands: which runner a command runs, what it needs to print
 * every test's outcome, its own shuffling, and how it runs only chosen
 * tests (docs/runners.md). command.c and select.c hand these runners
 * over here. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "command_int.h"
#include "util/util.h"

/* cargo's options whose value is the next word (before "--"). */
static const char *const cargo_valued[] = { "-p", "--package", "--test",
	"--bench", "--bin", "--example", "--features", "-F", "--target",
	"--target-dir", "--manifest-path", "-j", "--jobs", "--color",
	"--message-format", "--profile", "-Z", "--config", "--exclude",
	"--lockfile-path", NULL };
/* libtest's options whose value is the next word (after "--"). */
static const char *const libtest_valued[] = { "--test-threads", "--skip",
	"--logfile", "--format", "--color", "-Z", "--shuffle-seed", NULL };
/* ctest's options whose value is the next word. */
static const char *const ctest_valued[] = { "-R", "--tests-regex", "-E",
	"--exclude-regex", "-C", "--build-config", "--test-dir", "-j",
	"--parallel", "-L", "--label-regex", "-LE", "--label-exclude", "-I",
	"--tests-information", "--timeout", "--repeat", "-O",
	"--output-log", "--output-junit", "--resource-spec-file",
	"--stop-time", "-FA", "-FS", "-FC", NULL };
/* rspec's options whose value is the next word. */
static const char *const rspec_valued[] = { "-e", "--example", "-f",
	"--format", "-o", "--out", "-r", "--require", "-I", "-t", "--tag",
	"--order", "--seed", "-P", "--pattern", "--exclude-pattern",
	"--default-path", "-E", "--example-matches", NULL };

/* Is a one of v? */
static int
one_of(const char *const *v, const char *a)
{
	for (size_t i = 0; v[i] != NULL; i++)
		if (strcmp(v[i], a) == 0)
			return 1;
	return 0;
}

/* `cargo [+toolchain] [options] test`: the index after "test", or 0. */
static size_t
cargo_test(char *const *argv)
{
	for (size_t i = 1; argv[i] != NULL; i++) {
		if (argv[i][0] == '+' || (argv[i][0] == '-' &&
		    !one_of(cargo_valued, argv[i])))
			continue;
		if (argv[i][0] == '-') {
			if (argv[++i] == NULL)
				return 0;
			continue;
		}
		return strcmp(argv[i], "test") == 0 ||
		    strcmp(argv[i], "t") == 0 ? i + 1 : 0;
	}
	return 0;
}

/* `bundle exec rspec`, `php vendor/bin/phpunit`: the word that names the
 * runner behind such a launcher, or 0. */
static size_t
behind(char *const *argv, const char *launcher, const char *name)
{
	size_t	 i = 1;

	if (strcmp(cmd_base(argv[0]), launcher) != 0)
		return 0;
	if (strcmp(launcher, "bundle") == 0) {
		if (argv[1] == NULL || strcmp(argv[1], "exec") != 0)
			return 0;
		i = 2;
	}
	while (argv[i] != NULL && argv[i][0] == '-')
		i++;
	if (argv[i] == NULL)
		return 0;
	if (strcmp(cmd_base(argv[i]), name) == 0 || (strcmp(name,
	    "phpunit") == 0 && strcmp(cmd_base(argv[i]), "phpunit.phar") == 0))
		return i;
	return 0;
}

/* Does argv hold an argument starting with p (before a "--")? */
static int
has_prefix(char *const *argv, size_t from, const char *p)
{
	for (size_t i = from; argv[i] != NULL && strcmp(argv[i], "--"); i++)
		if (strncmp(argv[i], p, strlen(p)) == 0)
			return 1;
	return 0;
}

/* Which native runner argv runs (command_int.h). */
int
cmd_native_identify(char *const *argv, size_t *args)
{
	const char *b = cmd_base(argv[0]);
	size_t	 i;

	if (strcmp(b, "cargo") == 0 && (i = cargo_test(argv)) > 0) {
		*args = i;
		return CMD_N_CARGO;
	}
	if (strcmp(b, "ctest") == 0) {
		*args = 1;
		return CMD_N_CTEST;
	}
	if (strcmp(b, "rspec") == 0 || (i = behind(argv, "bundle",
	    "rspec")) > 0 || (i = behind(argv, "ruby", "rspec")) > 0) {
		*args = strcmp(b, "rspec") == 0 ? 1 : i + 1;
		return CMD_N_RSPEC;
	}
	if (strcmp(b, "phpunit") == 0 || strcmp(b, "phpunit.phar") == 0 ||
	    (i = behind(argv, "php", "phpunit")) > 0) {
		*args = i > 0 && strcmp(b, "php") == 0 ? i + 1 : 1;
		return CMD_N_PHPUNIT;
	}
	/* a GoogleTest binary names itself by its options */
	if (has_prefix(argv, 1, "--gtest_")) {
		*args = 1;
		return CMD_N_GTEST;
	}
	return 0;
}

/* The runner's name for a kind. */
const char *
cmd_native_runner(int kind)
{
	switch (kind) {
	case CMD_N_CARGO:
		return "cargo";
	case CMD_N_GTEST:
	case CMD_N_CTEST:
		return "gtest";
	case CMD_N_RSPEC:
		return "rspec";
	case CMD_N_PHPUNIT:
		return "phpunit";
	}
	return NULL;
}

/* The index of "--" from args on, or v->n. */
static size_t
dashdash(const struct cmd_vec *v, size_t args)
{
	for (size_t i = args; i < v->n; i++)
		if (strcmp(v->v[i], "--") == 0)
			return i;
	return v->n;
}

/* cargo: --no-fail-fast (else cargo stops at the first binary with a
 * failure, and the later ones have no outcome); libtest's pretty format
 * when -q or --format terse would print a dot per test. */
static void
complete_cargo(struct cmd_vec *a, size_t args, struct flaky_buf *note)
{
	size_t	 dd = dashdash(a, args);
	int	 quiet = 0, nff = 0;

	for (size_t i = args; i < a->n; i++) {
		const char *s = a->v[i];

		if (i < dd && strcmp(s, "--no-fail-fast") == 0)
			nff = 1;
		if (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0 ||
		    strcmp(s, "--format=terse") == 0 || (strcmp(s,
		    "--format") == 0 && i + 1 < a->n &&
		    strcmp(a->v[i + 1], "terse") == 0))
			quiet = 1;
		if (i > dd && (strcmp(s, "--format=pretty") == 0 ||
		    (strcmp(s, "--format") == 0 && i + 1 < a->n &&
		    strcmp(a->v[i + 1], "pretty") == 0)))
			quiet = 0;
	}
	if (!nff) {
		cmd_vec_insert(a, dd, "--no-fail-fast");
		dd++;
		flaky_buf_adds(note, "added --no-fail-fast (without it cargo "
		    "stops at the first test binary with a failure)");
	}
	if (quiet) {
		if (dd == a->n)
			cmd_vec_add(a, "--");
		cmd_vec_add(a, "--format");
		cmd_vec_add(a, "pretty");
		flaky_buf_printf(note, "%sadded -- --format pretty (with -q "
		    "libtest names only failing tests)", note->len ? "; " :
		    "");
	}
}

/* A GoogleTest binary: --gtest_brief=0 after a --gtest_brief=1 (the last
 * one given wins). */
static void
complete_gtest(struct cmd_vec *a, struct flaky_buf *note)
{
	int	 brief = 0;

	for (size_t i = 1; i < a->n; i++)
		if (strncmp(a->v[i], "--gtest_brief", 13) == 0)
			brief = strcmp(a->v[i], "--gtest_brief=0") != 0;
	if (!brief)
		return;
	cmd_vec_add(a, "--gtest_brief=0");
	flaky_buf_adds(note, "added --gtest_brief=0 (with --gtest_brief "
	    "GoogleTest names only failing tests)");
}

/* rspec: the documentation formatter names every example; the progress
 * formatter (the default) prints a character per example. */
static void
complete_rspec(struct cmd_vec *a, size_t args, struct flaky_buf *note)
{
	for (size_t i = args; i + 1 < a->n; i++)
		if ((strcmp(a->v[i], "-f") == 0 ||
		    strcmp(a->v[i], "--format") == 0) &&
		    (a->v[i + 1][0] == 'd' || strcmp(a->v[i + 1],
		    "RSpec::Core::Formatters::DocumentationFormatter") == 0))
			return;
	for (size_t i = args; i < a->n; i++)
		if (strncmp(a->v[i], "-fd", 3) == 0 ||
		    strncmp(a->v[i], "--format=d", 10) == 0)
			return;
	cmd_vec_insert(a, args, "documentation");
	cmd_vec_insert(a, args, "--format");
	flaky_buf_adds(note, "added --format documentation (without it "
	    "RSpec names only failing examples)");
}

/* phpunit: --debug names each test as it starts, -v lists the skipped
 * and incomplete ones. */
static void
complete_phpunit(struct cmd_vec *a, size_t args, struct flaky_buf *note)
{
	int	 debug = 0, verbose = 0;

	for (size_t i = args; i < a->n; i++) {
		debug |= strcmp(a->v[i], "--debug") == 0;
		verbose |= strcmp(a->v[i], "-v") == 0 ||
		    strcmp(a->v[i], "--verbose") == 0;
	}
	if (!verbose)
		cmd_vec_insert(a, args, "-v");
	if (!debug)
		cmd_vec_insert(a, args, "--debug");
	if (!debug || !verbose)
		flaky_buf_printf(note, "added %s%s%s (without them PHPUnit "
		    "names only the tests that did not pass)", debug ? "" :
		    "--debug", !debug && !verbose ? " " : "", verbose ? "" :
		    "-v");
}

/* Complete a native runner's command (command_int.h). */
const char *
cmd_native_complete(struct cmd_vec *a, int kind, size_t args,
    struct flaky_buf *note)
{
	switch (kind) {
	case CMD_N_CARGO:
		complete_cargo(a, args, note);
		break;
	case CMD_N_GTEST:
		complete_gtest(a, note);
		break;
	case CMD_N_RSPEC:
		complete_rspec(a, args, note);
		break;
	case CMD_N_PHPUNIT:
		complete_phpunit(a, args, note);
		break;
	}
	return cmd_native_runner(kind);
}

/* The kind of a completed command of runner r, its args in *args. */
static int
kind_of(const struct flaky_command *c, size_t *args)
{
	int	 k = cmd_native_identify(c->argv, args);

	/* a binary completed as gtest keeps its name */
	if (k == 0 && c->runner != NULL && strcmp(c->runner, "gtest") == 0) {
		*args = 1;
		k = CMD_N_GTEST;
	}
	return k;
}

/* The runner's own shuffling with seed, or why it has none. */
int
cmd_native_shuffle(const struct flaky_command *c, const char *seed,
    char ***argv, char ***envp, char *err, size_t errlen)
{
	struct cmd_vec	 a, e;
	char		 opt[96];
	size_t		 args;
	int		 k = kind_of(c, &args);

	*argv = *envp = NULL;
	if (k == CMD_N_CARGO || k == 0)
		return flaky_error(err, errlen, ENOTSUP, "--shuffle: cargo "
		    "test cannot shuffle its tests' order on a stable Rust "
		    "(libtest's --shuffle-seed needs -Z unstable-options, "
		    "which only nightly and Debian's own builds accept); "
		    "stable runs each binary's tests in name order on "
		    "--test-threads threads");
	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	for (size_t i = 0; c->argv[i] != NULL; i++)
		cmd_vec_add(&a, c->argv[i]);
	for (size_t i = 0; c->envp != NULL && c->envp[i] != NULL; i++)
		cmd_vec_add(&e, c->envp[i]);
	switch (k) {
	case CMD_N_GTEST:
		snprintf(opt, sizeof opt, "--gtest_random_seed=%s", seed);
		cmd_vec_add(&a, "--gtest_shuffle");
		cmd_vec_add(&a, opt);
		break;
	case CMD_N_CTEST:
		/* every GoogleTest binary ctest starts reads these */
		snprintf(opt, sizeof opt, "GTEST_RANDOM_SEED=%s", seed);
		cmd_vec_add(&e, "GTEST_SHUFFLE=1");
		cmd_vec_add(&e, opt);
		break;
	case CMD_N_RSPEC:
		snprintf(opt, sizeof opt, "rand:%s", seed);
		cmd_vec_insert(&a, args, opt);
		cmd_vec_insert(&a, args, "--order");
		break;
	case CMD_N_PHPUNIT:
		snprintf(opt, sizeof opt, "--random-order-seed=%s", seed);
		cmd_vec_insert(&a, args, opt);
		cmd_vec_insert(&a, args, "--order-by=random");
		break;
	}
	return cmd_vec_hand(&a, &e, argv, envp, err, errlen);
}

/* s with the metacharacters of extended regular expressions (ctest's)
 * and PCRE (PHPUnit's) escaped, and the delimiter "/". */
static void
escape(struct flaky_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}/", *s) != NULL)
			flaky_buf_addc(b, '\\');
		flaky_buf_addc(b, *s);
	}
}

/* cargo: the options as given, its test-name filters dropped, and
 * `-- --exact NAME...` (libtest's own options after "--" kept). */
static void
select_cargo(struct cmd_vec *a, char *const *argv, size_t args,
    char *const *tests, size_t n)
{
	size_t	 i;

	for (i = 0; i < args; i++)
		cmd_vec_add(a, argv[i]);
	for (; argv[i] != NULL && strcmp(argv[i], "--") != 0; i++) {
		if (argv[i][0] != '-')
			continue;	/* a filter */
		cmd_vec_add(a, argv[i]);
		if (one_of(cargo_valued, argv[i]) && argv[i + 1] != NULL)
			cmd_vec_add(a, argv[++i]);
	}
	cmd_vec_add(a, "--");
	for (i += argv[i] != NULL; argv[i] != NULL; i++) {
		if (argv[i][0] != '-' || strcmp(argv[i], "--exact") == 0)
			continue;
		cmd_vec_add(a, argv[i]);
		if (one_of(libtest_valued, argv[i]) && argv[i + 1] != NULL)
			cmd_vec_add(a, argv[++i]);
	}
	cmd_vec_add(a, "--exact");
	for (size_t k = 0; k < n; k++)
		cmd_vec_add(a, tests[k]);
}

/* A GoogleTest binary: --gtest_filter=A:B in place of one given. */
static void
select_gtest(struct cmd_vec *a, char *const *argv, char *const *tests,
    size_t n)
{
	struct flaky_buf f;

	flaky_buf_init(&f);
	for (size_t i = 0; argv[i] != NULL; i++)
		if (strncmp(argv[i], "--gtest_filter=", 15) != 0)
			cmd_vec_add(a, argv[i]);
	flaky_buf_adds(&f, "--gtest_filter=");
	for (size_t k = 0; k < n; k++)
		flaky_buf_printf(&f, "%s%s", k ? ":" : "", tests[k]);
	if (f.oom)
		a->oom = 1;
	else
		cmd_vec_add(a, flaky_buf_cstr(&f));
	flaky_buf_free(&f);
}

/* The anchored alternation of the tests, escaped: "^(A|B)$" (ctest) or
 * "/^(?:A|B)$/" (PHPUnit's --filter). */
static char *
alternation(char *const *tests, size_t n, int pcre)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	flaky_buf_adds(&b, pcre ? "/^(?:" : "^(");
	for (size_t k = 0; k < n; k++) {
		if (k > 0)
			flaky_buf_addc(&b, '|');
		escape(&b, tests[k]);
	}
	flaky_buf_adds(&b, pcre ? ")$/" : ")$");
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}

/* Copy argv from `from` without the options in drop (and their values),
 * then add opt and its value. */
static void
replace_opt(struct cmd_vec *a, char *const *argv, size_t from,
    const char *const *drop, const char *const *valued, const char *opt,
    const char *value)
{
	for (size_t i = from; argv[i] != NULL; i++) {
		size_t	 eq = strcspn(argv[i], "=");
		int	 gone = 0;

		for (size_t k = 0; drop[k] != NULL; k++)
			if (strncmp(argv[i], drop[k], eq) == 0 &&
			    drop[k][eq] == '\0')
				gone = 1;
		if (gone) {
			i += argv[i][eq] == '\0' && argv[i + 1] != NULL;
			continue;
		}
		cmd_vec_add(a, argv[i]);
		if (valued != NULL && one_of(valued, argv[i]) &&
		    argv[i + 1] != NULL)
			cmd_vec_add(a, argv[++i]);
	}
	cmd_vec_add(a, opt);
	if (value == NULL)
		a->oom = 1;
	else
		cmd_vec_add(a, value);
}

/* A doctest's name as rustdoc gives it: "src/lib.rs - item (line 7)". */
static int
doctest(const char *id)
{
	return strstr(id, " - ") != NULL && strstr(id, "(line ") != NULL;
}

/* The command of a run of only these tests (command_int.h). */
int
cmd_native_select(const struct flaky_command *c, char *const *tests,
    size_t n, struct cmd_vec *a, char *err, size_t errlen)
{
	static const char *const ctest_re[] = { "-R", "--tests-regex", NULL };
	static const char *const rspec_e[] = { "-e", "--example", NULL };
	static const char *const php_f[] = { "--filter", NULL };
	size_t	 args;
	char	*re;

	switch (kind_of(c, &args)) {
	case CMD_N_CARGO:
		for (size_t k = 0; k < n; k++)
			if (doctest(tests[k]))
				return flaky_error(err, errlen, ENOTSUP,
				    "cargo cannot select the doctest \"%s\": "
				    "rustdoc splits its filters at blanks, "
				    "and a doctest's name holds them",
				    tests[k]);
		select_cargo(a, c->argv, args, tests, n);
		return 0;
	case CMD_N_GTEST:
		select_gtest(a, c->argv, tests, n);
		return 0;
	case CMD_N_CTEST:
		cmd_vec_add(a, c->argv[0]);
		re = alternation(tests, n, 0);
		replace_opt(a, c->argv, 1, ctest_re, ctest_valued, "-R", re);
		free(re);
		return 0;
	case CMD_N_RSPEC:
		/* -e matches a part of the full description: each is one */
		for (size_t i = 0; i < args; i++)
			cmd_vec_add(a, c->argv[i]);
		replace_opt(a, c->argv, args, rspec_e, rspec_valued, "-e",
		    tests[0]);
		for (size_t k = 1; k < n; k++) {
			cmd_vec_add(a, "-e");
			cmd_vec_add(a, tests[k]);
		}
		return 0;
	case CMD_N_PHPUNIT:
		for (size_t i = 0; i < args; i++)
			cmd_vec_add(a, c->argv[i]);
		re = alternation(tests, n, 1);
		replace_opt(a, c->argv, args, php_f, NULL, "--filter", re);
		free(re);
		return 0;
	}
	return flaky_error(err, errlen, ENOTSUP, "%s: the command is not one "
	    "flakyctl can select tests of", c->runner ? c->runner : "?");
}
