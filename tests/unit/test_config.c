/* config: every fixture under tests/fixtures/config, good ones to their
 * exact values, bad ones to their exact one-line error. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "sched/sched.h"
#include "util/util.h"

#define CONFIG_DIR	FIXTURES "/config"

static char	 base[PATH_MAX];

static struct flaky_config *
must_load(const char *file)
{
	struct flaky_config *cfg;
	char	 path[PATH_MAX], err[512] = "";

	snprintf(path, sizeof path, "%s/%s", CONFIG_DIR, file);
	ck_assert_msg(flaky_config_load(path, 0, &cfg, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_ptr_nonnull(cfg);
	return cfg;
}

static void
assert_regex(const struct flaky_regex *re, const char *src, const char *hit,
    const char *miss)
{
	ck_assert_str_eq(re->src, src);
	ck_assert_int_eq(regexec(&re->re, hit, 0, NULL, 0), 0);
	ck_assert_int_eq(regexec(&re->re, miss, 0, NULL, 0), REG_NOMATCH);
}

START_TEST(good_full)
{
	struct flaky_config *cfg = must_load("good-full.yaml");
	const struct flaky_target *t;
	char	 want[PATH_MAX + 64], buf[64];
	int64_t	 next;

	snprintf(want, sizeof want, "%s/state/flaky.db", base);
	ck_assert_str_eq(cfg->database, want);
	ck_assert_int_eq(cfg->jobs, 3);
	ck_assert_str_eq(cfg->socket, "/tmp/flaky-test.sock");
	ck_assert_str_eq(cfg->timezone, "Europe/Berlin");
	ck_assert_str_eq(flaky_tz_name(cfg->tz), "Europe/Berlin");
	ck_assert_int_eq(cfg->kill_grace_ms, 15000);
	ck_assert_int_eq(cfg->retention_ms, 180LL * 86400 * 1000);

	ck_assert_uint_eq(cfg->nredact, 2);
	assert_regex(&cfg->redact[0], "token=[A-Za-z0-9]+", "x token=abc1 y",
	    "token=");
	assert_regex(&cfg->redact[1], "(password|secret): *[^ ]+",
	    "secret: hunter2", "password:");

	ck_assert_uint_eq(cfg->nsignatures, 2);
	ck_assert_str_eq(cfg->signatures[0].name, "DB_DEADLOCK");
	ck_assert_uint_eq(cfg->signatures[0].npatterns, 2);
	assert_regex(&cfg->signatures[0].patterns[0], "deadlock detected",
	    "ERROR: deadlock detected", "deadlock");
	/* REG_NEWLINE: ^ matches after a newline in a multi-line message. */
	assert_regex(&cfg->signatures[0].patterns[1],
	    "^ERROR: could not serialize", "Traceback\nERROR: could not "
	    "serialize access", "an ERROR: could not serialize");
	ck_assert_str_eq(cfg->signatures[1].name, "TIMEOUT");
	ck_assert_uint_eq(cfg->signatures[1].npatterns, 1);
	assert_regex(&cfg->signatures[1].patterns[0],
	    "took longer than [0-9]+ s", "took longer than 30 s",
	    "took longer than s");

	ck_assert_uint_eq(cfg->ntargets, 4);
	t = &cfg->targets[0];
	ck_assert_str_eq(t->name, "shop-unit");
	ck_assert_uint_eq(t->argc, 3);
	ck_assert_str_eq(t->argv[0], "sh");
	ck_assert_str_eq(t->argv[1], "-c");
	ck_assert_str_eq(t->argv[2], "exit 0");
	ck_assert_ptr_null(t->argv[3]);
	ck_assert_int_eq(t->shell, 0);
	ck_assert_str_eq(t->dir, base);
	ck_assert_int_eq(t->has_schedule, 1);
	ck_assert_str_eq(t->schedule, "*/30 * * * *");
	flaky_sched_format(&t->sched, buf, sizeof buf);
	ck_assert_str_eq(buf, "*/30 * * * *");
	ck_assert_int_eq(t->runs, 5);
	ck_assert_int_eq(t->timeout_ms, 600000);
	ck_assert_uint_eq(t->nenv, 2);
	ck_assert_str_eq(t->env[0].name, "PYTHONHASHSEED");
	ck_assert_str_eq(t->env[0].value, "0");
	ck_assert_str_eq(t->env[1].name, "LANG");
	ck_assert_str_eq(t->env[1].value, "C.UTF-8");
	ck_assert_int_eq(t->jitter_ms, 120000);
	ck_assert_int_eq(t->overlap, FLAKY_OVERLAP_QUEUE);
	ck_assert_int_eq(t->catch_up, 0);
	ck_assert_str_eq(t->isolate, "pytest -v {test}");
	ck_assert_str_eq(t->revision, "cat REVISION");
	ck_assert_int_eq(t->confirm, 1);
	ck_assert_int_eq(t->confirm_budget_ms, 15 * 60 * 1000);
	ck_assert_int_eq(t->scan, 1);
	ck_assert_str_eq(t->junit, "out/junit.xml");
	ck_assert_int_eq(t->stacks, 0);
	ck_assert_int_eq(t->stacks_bound_ms, 3000);
	ck_assert_int_eq(t->line, 19);

	t = &cfg->targets[1];
	ck_assert_str_eq(t->name, "nightly.e2e_2");
	ck_assert_int_eq(t->shell, 1);
	ck_assert_uint_eq(t->argc, 3);
	ck_assert_str_eq(t->argv[0], "/bin/sh");
	ck_assert_str_eq(t->argv[1], "-c");
	ck_assert_str_eq(t->argv[2], "echo hello && true");
	ck_assert_str_eq(t->schedule, "@midnight");
	flaky_sched_format(&t->sched, buf, sizeof buf);
	ck_assert_str_eq(buf, "@daily");
	/* Evaluated in the file's zone: midnight in Berlin. */
	ck_assert_int_eq(flaky_sched_next(&t->sched, cfg->tz, 0,
	    1774738800000LL /* 2026-03-28T23:00:00Z */, &next), 0);
	ck_assert_str_eq(flaky_tz_format(cfg->tz, next, buf, sizeof buf),
	    "2026-03-30T00:00:00+02:00");
	ck_assert_int_eq(t->runs, 1);
	ck_assert_int_eq(t->timeout_ms, 30 * 60 * 1000);
	ck_assert_int_eq(t->catch_up, 1);
	ck_assert_int_eq(t->overlap, FLAKY_OVERLAP_SKIP);
	ck_assert_ptr_null(t->isolate);
	ck_assert_ptr_null(t->revision);
	ck_assert_ptr_null(t->junit);
	ck_assert_int_eq(t->confirm, 0);
	ck_assert_int_eq(t->confirm_budget_ms, 10 * 60 * 1000);
	ck_assert_int_eq(t->scan, 0);
	ck_assert_int_eq(t->stacks, 1);
	ck_assert_int_eq(t->stacks_bound_ms, 0);
	ck_assert_str_eq(t->dir, base);

	t = &cfg->targets[2];
	ck_assert_str_eq(t->name, "every");
	ck_assert_str_eq(t->dir, "/");
	ck_assert_int_eq(t->sched.kind, FLAKY_SCHED_EVERY);
	ck_assert_int_eq(t->sched.every_ms, 90 * 60 * 1000);
	ck_assert_str_eq(t->argv[0], "/bin/true");
	ck_assert_uint_eq(t->argc, 1);

	t = &cfg->targets[3];
	ck_assert_str_eq(t->name, "manual");
	ck_assert_int_eq(t->has_schedule, 0);
	ck_assert_ptr_null(t->schedule);
	/* A plain `true` in a command list is the word, not a boolean. */
	ck_assert_str_eq(t->argv[0], "true");
	snprintf(want, sizeof want, "%s/../config", base);
	ck_assert_str_eq(t->dir, want);

	ck_assert_ptr_eq(flaky_config_target(cfg, "every"), &cfg->targets[2]);
	ck_assert_ptr_null(flaky_config_target(cfg, "nope"));
	flaky_config_free(cfg);
}
END_TEST

START_TEST(good_defaults)
{
	struct flaky_config *cfg = must_load("good-minimal.yaml");
	const struct flaky_target *t;

	ck_assert_ptr_null(cfg->database);
	ck_assert_ptr_null(cfg->socket);
	ck_assert_ptr_null(cfg->timezone);
	ck_assert_ptr_nonnull(cfg->tz);
	ck_assert_int_eq(cfg->jobs, 1);
	ck_assert_int_eq(cfg->kill_grace_ms, 10000);
	ck_assert_int_eq(cfg->retention_ms, 0);
	ck_assert_uint_eq(cfg->nredact, 0);
	ck_assert_uint_eq(cfg->nsignatures, 0);
	ck_assert_uint_eq(cfg->ntargets, 1);
	t = &cfg->targets[0];
	ck_assert_str_eq(t->name, "only");
	ck_assert_str_eq(t->dir, base);
	ck_assert_int_eq(t->has_schedule, 0);
	ck_assert_int_eq(t->runs, 1);
	ck_assert_int_eq(t->timeout_ms, 1800000);
	ck_assert_uint_eq(t->nenv, 0);
	ck_assert_int_eq(t->jitter_ms, 0);
	ck_assert_int_eq(t->overlap, FLAKY_OVERLAP_SKIP);
	ck_assert_int_eq(t->catch_up, 1);
	ck_assert_int_eq(t->line, 2);
	flaky_config_free(cfg);

	cfg = must_load("good-no-targets.yaml");
	ck_assert_int_eq(cfg->jobs, 2);
	ck_assert_uint_eq(cfg->ntargets, 0);
	flaky_config_free(cfg);

	cfg = must_load("good-anchors.yaml");
	ck_assert_uint_eq(cfg->ntargets, 3);
	ck_assert_uint_eq(cfg->targets[1].nenv, 2);
	ck_assert_str_eq(cfg->targets[1].env[1].name, "TZ");
	ck_assert_str_eq(cfg->targets[1].env[1].value, "UTC");
	ck_assert_str_eq(cfg->targets[2].schedule, "0 9 * * mon-fri");
	ck_assert_str_eq(cfg->targets[2].argv[2], "exit 1");
	flaky_config_free(cfg);
}
END_TEST

START_TEST(bad_files)
{
	static const struct { const char *file, *err; } t[] = {
		{ "bad-alias-bomb.yaml", "441:42: expected at most 33554432 "
		    "bytes of values with aliases expanded (the alias expansion "
		    "limit), got more at *env" },
		{ "bad-deep.yaml", "2:73: expected at most 64 nested sequences "
		    "and mappings (the nesting limit), got more" },
		{ "bad-bool-quoted.yaml",
		    "4:11: scan: expected true or false, got \"true\"" },
		{ "bad-bool.yaml",
		    "4:15: catch_up: expected true or false, got \"sometimes\"" },
		{ "bad-command-dir.yaml", "3:15: command: expected an "
		    "executable file, \"/\" is a directory" },
		{ "bad-command-empty.yaml", "3:14: command: expected a program "
		    "and its arguments, got an empty sequence" },
		{ "bad-command-map.yaml", "3:14: command: expected a program "
		    "and its arguments or a shell command, got a mapping" },
		{ "bad-command-missing-rel.yaml", "3:15: command: expected an "
		    "executable file, \"bin/run-tests\" does not exist" },
		{ "bad-command-noexec.yaml", "3:15: command: expected an "
		    "executable file, \"./good-full.yaml\" is not executable" },
		{ "bad-command.yaml", "3:15: command: expected a program in "
		    "PATH, \"no-such-program-flaky\" was not found" },
		{ "bad-confirm-budget.yaml", "6:21: confirm_budget: expected a "
		    "duration such as 30s, 10m or 1h30m, got \"soon\"" },
		{ "bad-confirm.yaml", "4:14: confirm: expected an isolate: "
		    "template in the same target, confirming reruns tests "
		    "alone" },
		{ "bad-cron-fields.yaml", "4:15: schedule: expected 5 fields "
		    "(minute hour day-of-month month day-of-week), got 4" },
		{ "bad-cron.yaml",
		    "4:15: schedule: minute field: expected 0-59, got 61" },
		{ "bad-dir-file.yaml", "4:10: dir: expected a directory, "
		    "\"/dev/null\" is not one" },
		{ "bad-dir-missing.yaml", "4:10: dir: expected an existing "
		    "directory, \"/nonexistent/flaky-fixture\": No such file or "
		    "directory" },
		{ "bad-dir-null.yaml", "4:9: dir: expected a directory, got "
		    "null" },
		{ "bad-dup-key.yaml",
		    "5:5: target: duplicate key \"runs\", first at line 4" },
		{ "bad-dup-name.yaml", "6:11: name: duplicate target name "
		    "\"shop\", first at line 2" },
		{ "bad-dup-top.yaml",
		    "2:1: duplicate key \"jobs\", first at line 1" },
		{ "bad-duration.yaml", "4:14: timeout: expected a duration such "
		    "as 30s, 10m or 1h30m, got \"10 minutes\"" },
		{ "bad-empty.yaml",
		    "1:1: expected a mapping of settings, got an empty file" },
		{ "bad-env-dup.yaml", "6:7: env: duplicate variable \"A\"" },
		{ "bad-env-value.yaml",
		    "5:10: env: expected a string value, got a sequence" },
		{ "bad-env.yaml", "4:11: env: expected a variable name of "
		    "letters, digits and _, got \"1BAD\"" },
		{ "bad-isolate.yaml", "4:14: isolate: expected a command "
		    "template containing {test}, got \"pytest -v\"" },
		{ "bad-jobs.yaml",
		    "1:7: jobs: expected an integer from 1 to 1024, got \"lots\"" },
		{ "bad-kill-grace.yaml", "1:13: kill_grace: expected a duration "
		    "such as 30s, 10m or 1h30m, got \"soon\"" },
		{ "bad-missing-command.yaml",
		    "2:5: target \"a\": expected a command: key" },
		{ "bad-missing-name.yaml", "2:5: target: expected a name: key" },
		{ "bad-name.yaml", "2:11: name: expected 1 to 64 letters, "
		    "digits, '.', '_' or '-', got \"shop unit\"" },
		{ "bad-never.yaml", "4:15: schedule: expected dates that exist, "
		    "\"0 0 31 2 *\" never fires" },
		{ "bad-overlap.yaml",
		    "4:14: overlap: expected skip or queue, got \"wait\"" },
		{ "bad-redact.yaml", "2:5: redact: expected a POSIX extended "
		    "regular expression, got \"[z-a]\" (Invalid range end)" },
		{ "bad-regex-stacked.yaml", "3:5: redact: expected a regular "
		    "expression without a repetition of a repetition (such as a++ "
		    "or a*{9}), got \"(one|O+++++++++++++++++++++l)\"" },
		{ "bad-regex.yaml", "5:9: patterns: expected a POSIX extended "
		    "regular expression, got \"a(b\" (Unmatched ( or \\()" },
		{ "bad-retention.yaml", "1:12: retention: expected a duration "
		    "such as 30s, 10m or 1h30m, got a sequence" },
		{ "bad-runs-range.yaml",
		    "4:11: runs: expected an integer from 1 to 10000, got \"0\"" },
		{ "bad-runs-type.yaml", "4:11: runs: expected an integer from 1 "
		    "to 10000, got a sequence" },
		{ "bad-sig-dup.yaml",
		    "4:11: name: duplicate signature name \"MINE\"" },
		{ "bad-sig-nopatterns.yaml",
		    "2:5: signature \"MINE\": expected a patterns: list" },
		{ "bad-syntax.yaml", "4:8: YAML syntax error: did not find "
		    "expected ',' or ']' while parsing a flow sequence" },
		{ "bad-tab.yaml", "3:1: YAML syntax error: found a tab "
		    "character that violates indentation while scanning a "
		    "plain scalar" },
		{ "bad-target-scalar.yaml",
		    "2:5: target: expected a mapping, got \"a\"" },
		{ "bad-targets-map.yaml",
		    "2:3: targets: expected a list of targets, got a mapping" },
		{ "bad-timeout-zero.yaml", "4:14: timeout: expected a duration "
		    "above 0 such as 30s, 10m or 1h30m, got \"0s\"" },
		{ "bad-top-seq.yaml", "1:1: expected a mapping of settings at "
		    "the top, got a sequence" },
		{ "bad-two-docs.yaml",
		    "2:1: expected one YAML document, got a second one" },
		{ "bad-tz.yaml", "1:11: timezone: expected a zone name such as "
		    "Europe/Berlin, got \"Mars/Olympus\"" },
		{ "bad-unknown-key.yaml", "3:5: target: unknown key \"comand\", "
		    "expected name, command, dir, schedule, runs, timeout, env, "
		    "jitter, overlap, catch_up, isolate, revision, confirm, "
		    "scan, junit, confirm_budget, until_settled, stress, risky, "
		    "perturb, stacks or stacks_bound" },
		{ "bad-unknown-top.yaml", "1:1: unknown key \"databse\", "
		    "expected database, jobs, socket, timezone, kill_grace, "
		    "retention, redact, signatures, targets, box, http, notify, "
		    "notify_window or fleet" },
		{ "bad-utf8.yaml",
		    "2:14: YAML syntax error: invalid leading UTF-8 octet" },
	};
	struct flaky_config *cfg;
	char	 path[PATH_MAX], want[PATH_MAX + 512], err[1024];

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(t); i++) {
		snprintf(path, sizeof path, "%s/%s", CONFIG_DIR, t[i].file);
		snprintf(want, sizeof want, "%s:%s", path, t[i].err);
		err[0] = '\0';
		cfg = (struct flaky_config *)1;
		ck_assert_msg(flaky_config_load(path, 0, &cfg, err, sizeof err) ==
		    -EINVAL, "%s loaded", t[i].file);
		ck_assert_ptr_null(cfg);
		ck_assert_msg(strcmp(err, want) == 0, "%s:\n got  %s\n want %s",
		    t[i].file, err, want);
		ck_assert_ptr_null(strchr(err, '\n'));
	}
}
END_TEST

/* until_settled: runs: becomes the most a trigger makes, 200 unless
 * given; a value that is not a boolean is refused, naming what was
 * expected. */
START_TEST(until_settled)
{
	struct flaky_config *cfg;
	char	 err[512];
	static const char y[] = "targets:\n"
	    "  - {name: a, command: [sh], until_settled: true}\n"
	    "  - {name: b, command: [sh], until_settled: true, runs: 40}\n"
	    "  - {name: c, command: [sh]}\n";
	static const char bad[] = "targets:\n"
	    "  - {name: a, command: [sh], until_settled: maybe}\n";

	ck_assert_int_eq(flaky_config_parse_buffer("s.yaml", y, sizeof y - 1,
	    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err), 0);
	ck_assert_int_eq(cfg->targets[0].until_settled, 1);
	ck_assert_int_eq(cfg->targets[0].runs, FLAKY_CONFIG_SETTLE_RUNS);
	ck_assert_int_eq(cfg->targets[1].until_settled, 1);
	ck_assert_int_eq(cfg->targets[1].runs, 40);
	ck_assert_int_eq(cfg->targets[2].until_settled, 0);
	ck_assert_int_eq(cfg->targets[2].runs, 1);
	flaky_config_free(cfg);
	ck_assert_int_eq(flaky_config_parse_buffer("s.yaml", bad,
	    sizeof bad - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "until_settled: expected"));
}
END_TEST

/* risky: every other trigger runs the tests with findings; false unless
 * given, and a boolean or refused with the line. */
START_TEST(risky)
{
	struct flaky_config *cfg;
	char	 err[512];
	static const char y[] = "targets:\n"
	    "  - {name: a, command: [sh], risky: true}\n"
	    "  - {name: b, command: [sh]}\n";
	static const char bad[] = "targets:\n"
	    "  - {name: a, command: [sh], risky: often}\n";

	ck_assert_int_eq(flaky_config_parse_buffer("r.yaml", y, sizeof y - 1,
	    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err), 0);
	ck_assert_int_eq(cfg->targets[0].risky, 1);
	ck_assert_int_eq(cfg->targets[1].risky, 0);
	flaky_config_free(cfg);
	ck_assert_int_eq(flaky_config_parse_buffer("r.yaml", bad,
	    sizeof bad - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "r.yaml:2:"));
	ck_assert_ptr_nonnull(strstr(err, "risky: expected"));
}
END_TEST

START_TEST(bad_buffers)
{
	struct flaky_config *cfg;
	struct flaky_buf b;
	char	 err[512];
	size_t	 big = FLAKY_CONFIG_MAX_BYTES + 1;
	char	*huge;
	static const char nul[] = "targets:\n  - name: \"a\\0b\"\n";
	static const char missing[] = "targets:\n  - name: a\n"
	    "    command: [no-such-program-flaky]\n    dir: /nonexistent\n";

	/* Without file system checks a missing command and dir pass. */
	ck_assert_int_eq(flaky_config_parse_buffer("/etc/x.yaml", missing,
	    sizeof missing - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err), 0);
	ck_assert_str_eq(cfg->targets[0].dir, "/nonexistent");
	flaky_config_free(cfg);
	ck_assert_int_eq(flaky_config_parse_buffer("/etc/x.yaml", missing,
	    sizeof missing - 1, 0, &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "/etc/x.yaml:4:10: dir: expected an existing "
	    "directory, \"/nonexistent\": No such file or directory");

	ck_assert_int_eq(flaky_config_parse_buffer("mem.yaml", nul,
	    sizeof nul - 1, 0, &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "mem.yaml:2:11: name: expected a target name, "
	    "got a value with a NUL byte or longer than 65536 bytes");

	/* Long values are cut in messages, on a character boundary. */
	{
		static const char longv[] = "jobs: \"xéééééééééééééééééééé"
		    "éééééééééééééééééééééééééééééééééé\"\n";

		ck_assert_int_eq(flaky_config_parse_buffer("mem.yaml", longv,
		    sizeof longv - 1, 0, &cfg, err, sizeof err), -EINVAL);
		ck_assert_str_eq(err, "mem.yaml:1:7: jobs: expected an integer "
		    "from 1 to 1024, got \"xéééééééééééééééééééééééééééééééééé"
		    "éé...\"");
	}

	huge = calloc(1, big);
	ck_assert_ptr_nonnull(huge);
	memset(huge, '#', big);
	ck_assert_int_eq(flaky_config_parse_buffer("big.yaml", huge, big, 0,
	    &cfg, err, sizeof err), -EINVAL);
	/* The position is where the limit falls. */
	ck_assert_str_eq(err, "big.yaml:1:1048577: expected a file of at "
	    "most 1048576 bytes (the size limit), got 1048577");
	free(huge);

	/* Aliases do not multiply work without bound. */
	flaky_buf_init(&b);
	flaky_buf_adds(&b, "targets:\n  - name: t0\n    command: &c [sh");
	for (int i = 0; i < 2000; i++)
		flaky_buf_adds(&b, ", x");
	flaky_buf_adds(&b, "]\n");
	for (int i = 1; i < 1000; i++)
		flaky_buf_printf(&b, "  - {name: t%d, command: *c}\n", i);
	ck_assert_int_eq(b.oom, 0);
	ck_assert_int_eq(flaky_config_parse_buffer("alias.yaml", b.data, b.len,
	    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "alias.yaml:501:27: expected at most 1000000 "
	    "values with aliases expanded (the node limit), got more at *c");
	flaky_buf_free(&b);

	/* A file past the limit: read up to it, to say where it falls. */
	{
		char	 path[] = "/tmp/flaky-config-XXXXXX";
		FILE	*f;
		int	 fd;

		ck_assert_int_ge(fd = mkstemp(path), 0);
		ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
		for (int i = 0; i < 300000; i++)
			fputs("# x\n", f);
		ck_assert_int_eq(fclose(f), 0);
		ck_assert_int_eq(flaky_config_load(path, 0, &cfg, err,
		    sizeof err), -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, ":262145:1: expected a file "
		    "of at most 1048576 bytes (the size limit), got 1200000"));
		ck_assert_int_eq(strncmp(err, path, strlen(path)), 0);
		unlink(path);
	}

	ck_assert_int_eq(flaky_config_load(CONFIG_DIR "/nope.yaml", 0, &cfg,
	    err, sizeof err), -ENOENT);
	ck_assert_str_eq(err, CONFIG_DIR "/nope.yaml: cannot open: No such "
	    "file or directory");
	ck_assert_int_eq(flaky_config_load(CONFIG_DIR, 0, &cfg, err,
	    sizeof err), -EINVAL);
	ck_assert_str_eq(err, CONFIG_DIR ": expected a file, got a directory");
	flaky_config_free(NULL);
}
END_TEST

/* The hard memory cap for a parse that must be refused cheaply. Under
 * AddressSanitizer or valgrind the address space is theirs to size, so
 * only the time and the message are checked there. */
#define BOMB_AS_LIMIT	(256UL * 1024 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN	1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN	0
#endif

/* Parse buf in a child under RLIMIT_AS; the child exits 0 when the parse
 * was refused with want as the message, 2 when refused otherwise, 3 when
 * accepted. Returns the seconds it took
 * (0 under valgrind). */
static double
refused_in_child(const char *buf, size_t len, const char *want)
{
	struct timespec	 t0, t1;
	pid_t		 pid;
	int		 status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit	 rl = { BOMB_AS_LIMIT, BOMB_AS_LIMIT };
		struct flaky_config *cfg = NULL;
		char		 err[512] = "";
		int		 r;

		if (!UNDER_ASAN && getenv("FLAKY_VALGRIND") == NULL &&
		    setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(4);
		r = flaky_config_parse_buffer("bomb.yaml", buf, len,
		    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err);
		if (r == 0)
			_exit(3);
		if (strcmp(err, want) != 0) {
			fprintf(stderr, "got  %s\nwant %s\n", err, want);
			_exit(2);
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(WIFEXITED(status), "the parse died (signal %d): out of "
	    "memory under a %lu MiB cap?", WIFSIGNALED(status) ?
	    WTERMSIG(status) : 0, BOMB_AS_LIMIT >> 20);
	ck_assert_msg(WEXITSTATUS(status) == 0, "child exit %d",
	    WEXITSTATUS(status));
	/* Under valgrind time means nothing: only the refusal counts. */
	if (getenv("FLAKY_VALGRIND") != NULL)
		return 0.0;
	return (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* The finding of issue 14: targets share an env map by alias, the map's
 * values alias one 64 KB value; accepted at 1.27 GB before the limits. */
START_TEST(limit_alias_bomb)
{
	struct flaky_buf b;
	char	*v;
	double	 secs;

	v = malloc(60001);
	ck_assert_ptr_nonnull(v);
	memset(v, 'x', 60000);
	v[60000] = '\0';
	flaky_buf_init(&b);
	flaky_buf_printf(&b, "targets:\n  - name: t0\n    command: [\"true\"]\n"
	    "    env: &env\n      V0: &v \"%s\"\n", v);
	for (int i = 1; i < 100; i++)
		flaky_buf_printf(&b, "      V%d: *v\n", i);
	for (int i = 1; i < 200; i++)
		flaky_buf_printf(&b, "  - {name: t%d, command: [\"true\"], "
		    "env: *env}\n", i);
	ck_assert_int_eq(b.oom, 0);
	secs = refused_in_child(b.data, b.len, "bomb.yaml:109:40: expected at "
	    "most 33554432 bytes of values with aliases expanded (the alias "
	    "expansion limit), got more at *env");
	ck_assert_msg(secs < 2.0, "refused in %.2f s", secs);
	flaky_buf_free(&b);
	free(v);
}
END_TEST

/* Nested anchors double at each level: 30 levels would be 2^30 values. */
START_TEST(limit_alias_nested)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "a0: &a0 [x, x]\n");
	for (int i = 1; i < 30; i++)
		flaky_buf_printf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i - 1,
		    i - 1);
	ck_assert_int_eq(b.oom, 0);
	refused_in_child(b.data, b.len, "bomb.yaml:18:18: expected at most "
	    "1000000 values with aliases expanded (the node limit), got more "
	    "at *a16");
	flaky_buf_free(&b);
}
END_TEST

/* 100,000 opening brackets took 16 s before the depth limit (libyaml's
 * scanner does work in proportion to the depth on every token). */
START_TEST(limit_deep)
{
	static const struct { const char *first, *open; int line, col; } t[] = {
		{ "targets: ", "[", 1, 10 },
		{ "targets: ", "{a: ", 1, 10 },
		{ "targets:\n", "- ", 2, 1 },	/* block sequences */
	};
	struct flaky_buf b;
	double	 secs;

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(t); k++) {
		char	 want[256];
		size_t	 w = strlen(t[k].open);

		flaky_buf_init(&b);
		flaky_buf_adds(&b, t[k].first);
		for (int i = 0; i < 100000; i++)
			flaky_buf_adds(&b, t[k].open);
		ck_assert_int_eq(b.oom, 0);
		/* The top mapping is level 1: the 64th opening is one too
		 * many. */
		snprintf(want, sizeof want, "bomb.yaml:%d:%zu: expected at "
		    "most 64 nested sequences and mappings (the nesting "
		    "limit), got more", t[k].line, t[k].col + 63 * w);
		secs = refused_in_child(b.data, b.len, want);
		ck_assert_msg(secs < 2.0, "%s: refused in %.2f s", t[k].open,
		    secs);
		flaky_buf_free(&b);
	}
}
END_TEST

/* Values, anchors, aliases: each limit with its message. */
START_TEST(limit_counts)
{
	struct flaky_config *cfg;
	struct flaky_buf b;
	char	 err[512];
	static const char self[] = "a: &a [x, *a]\n";

	ck_assert_int_eq(flaky_config_parse_buffer("m.yaml", self,
	    sizeof self - 1, 0, &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "m.yaml:1:11: expected an alias after the end "
	    "of its anchor, got *a inside &a");

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "jobs: \"");
	for (int i = 0; i < 65537; i++)
		flaky_buf_addc(&b, 'x');
	flaky_buf_adds(&b, "\"\n");
	ck_assert_int_eq(flaky_config_parse_buffer("m.yaml", b.data, b.len, 0,
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "m.yaml:1:7: expected a value of at most 65536 "
	    "bytes (the value size limit), got 65537");
	flaky_buf_free(&b);

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "a:\n");
	for (int i = 0; i < 1001; i++)
		flaky_buf_printf(&b, "- &a%d x\n", i);
	ck_assert_int_eq(flaky_config_parse_buffer("m.yaml", b.data, b.len, 0,
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "m.yaml:1002:3: expected at most 1000 anchors "
	    "(the anchor limit), got more");
	flaky_buf_free(&b);

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "a: [&a x");
	for (int i = 0; i < 100001; i++)
		flaky_buf_adds(&b, ",*a");
	flaky_buf_adds(&b, "]\n");
	ck_assert_int_eq(flaky_config_parse_buffer("m.yaml", b.data, b.len, 0,
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "m.yaml:1:300010: expected at most 100000 "
	    "aliases (the alias limit), got more");
	flaky_buf_free(&b);

	/* Compiled patterns, aliases counted: 2 x 600 is one too many. */
	flaky_buf_init(&b);
	flaky_buf_adds(&b, "signatures:\n  - name: A\n    patterns: &p\n");
	for (int i = 0; i < 600; i++)
		flaky_buf_adds(&b, "      - \"x+y\"\n");
	flaky_buf_adds(&b, "  - {name: B, patterns: *p}\n");
	ck_assert_int_eq(flaky_config_parse_buffer("m.yaml", b.data, b.len, 0,
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "m.yaml:404:9: patterns: expected at most 1000 "
	    "regular expressions in the file (the pattern limit), got more");
	flaky_buf_free(&b);

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "redact:\n");
	for (int i = 0; i < 17; i++) {
		flaky_buf_adds(&b, "  - \"");
		for (int j = 0; j < 4000; j++)
			flaky_buf_addc(&b, 'a' + j % 26);
		flaky_buf_adds(&b, "\"\n");
	}
	ck_assert_int_eq(flaky_config_parse_buffer("m.yaml", b.data, b.len, 0,
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "m.yaml:18:5: redact: expected at most 65536 "
	    "bytes of regular expressions in the file (the pattern size "
	    "limit), got more");
	flaky_buf_free(&b);
}
END_TEST

/* What the limits let through stays linear: one env of 10,000 names
 * shared by 49 targets (half a million values) took 12 s when each name
 * was looked for among the ones before it. */
START_TEST(limit_wide_env)
{
	struct flaky_config *cfg;
	struct flaky_buf b;
	struct timespec	 t0, t1;
	char	 err[512];
	double	 secs;

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "targets:\n  - name: t0\n    command: [\"true\"]\n"
	    "    env: &env\n");
	for (int i = 0; i < 10000; i++)
		flaky_buf_printf(&b, "      V%d: v\n", i);
	for (int i = 1; i < 49; i++)
		flaky_buf_printf(&b, "  - {name: t%d, command: [\"true\"], "
		    "env: *env}\n", i);
	ck_assert_int_eq(b.oom, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(flaky_config_parse_buffer("w.yaml", b.data, b.len,
	    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_uint_eq(cfg->ntargets, 49);
	ck_assert_uint_eq(cfg->targets[48].nenv, 10000);
	ck_assert_str_eq(cfg->targets[48].env[9999].name, "V9999");
	ck_assert_msg(secs < 2.0 || getenv("FLAKY_VALGRIND") != NULL,
	    "parsed in %.2f s", secs);
	flaky_config_free(cfg);
	flaky_buf_free(&b);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite	*s = suite_create("config");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, good_full);
	tcase_add_test(tc, good_defaults);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, bad_buffers);
	tcase_add_test(tc, until_settled);
	tcase_add_test(tc, risky);
	tcase_add_test(tc, limit_alias_bomb);
	tcase_add_test(tc, limit_alias_nested);
	tcase_add_test(tc, limit_deep);
	tcase_add_test(tc, limit_counts);
	tcase_add_test(tc, limit_wide_env);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	unsetenv("TZDIR");
	/* Commands resolve through a known PATH. */
	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
	if (realpath(CONFIG_DIR, base) == NULL)
		return 99;
	sr = srunner_create(config_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
