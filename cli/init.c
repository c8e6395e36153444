/* flakyctl init: a commented flaky.yaml for a project, its runner found
 * as directory mode finds it (lib/run/command_detect.c), so that a new
 * user starts from a file flakyd --check-config accepts. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flakyctl.h"
#include "log.h"
#include "run/run.h"
#include "sched/sched.h"
#include "util/util.h"

#define INIT_SCHEDULE	"0 3 * * *"	/* nightly, 03:00 local time */
#define INIT_DB_SYSTEM	"/var/lib/flaky/flaky.db"

static int	cmd_init(struct ctl *, int, char **);

static const struct cmd_option init_options[] = {
	{ "output", 'o', 0, "FILE", "where to write (default DIR/flaky.yaml; "
	    "- for standard output)" },
	{ "force", 'f', 0, NULL, "replace an existing file" },
	{ "target", 'T', 0, "NAME", "the target's name (default the "
	    "directory's name and the runner)" },
	{ "schedule", 's', 0, "EXPR", "when flakyd runs it (default \""
	    INIT_SCHEDULE "\", nightly)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_init_entry = {
	.name = "init",
	.usage = "init [--output FILE|-] [--force] [--target NAME] "
	    "[--schedule EXPR] [DIR]",
	.summary = "Write a commented flaky.yaml for the project in DIR.",
	.example = "flakyctl init\n"
	    "flakyctl init --output /etc/flaky/flaky.yaml /srv/shop",
	.options = init_options,
	.exec = cmd_init,
};

/* What the file says, decided before a byte is written. */
struct init {
	struct flaky_command cmd;
	const char	*out;		/* the file, or NULL: stdout */
	char		 outdir[PATH_MAX];	/* its directory, absolute */
	const char	*target;
	const char	*schedule;
	const char	*db;		/* --db, or NULL */
	int		 local;		/* the file is in the project's root */
};

/* A YAML double-quoted scalar: backslash and double quote escaped. */
static void
yaml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The command as a YAML flow list, each word quoted. */
static void
yaml_argv(FILE *f, char **argv)
{
	fputc('[', f);
	for (int i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			fputs(", ", f);
		yaml_str(f, argv[i]);
	}
	fputc(']', f);
}

/* The value of "-s" (or another flag) in argv, or NULL. */
static const char *
argv_flag(char **argv, const char *flag)
{
	for (int i = 0; argv[i] != NULL; i++)
		if (strcmp(argv[i], flag) == 0)
			return argv[i + 1];
	return NULL;
}

/* s as one shell word in single quotes. */
static char *
sh_quote(const char *s)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	flaky_buf_addc(&b, '\'');
	for (; *s; s++)
		if (*s == '\'')
			flaky_buf_adds(&b, "'\\''");
		else
			flaky_buf_addc(&b, *s);
	flaky_buf_addc(&b, '\'');
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

/* The sed program that escapes a regular expression's metacharacters. */
#define SED_ESCAPE	"sed 's/[][\\\\.^$*+?(){}|]/\\\\&/g'"

/* The command's words from index from on, each quoted for sh, after a
 * blank. */
static void
argv_words(struct flaky_buf *b, char **argv, int from)
{
	for (int i = from; argv[i] != NULL; i++) {
		char	*q = sh_quote(argv[i]);

		flaky_buf_printf(b, "%s%s", b->len > 0 ? " " : "", q);
		free(q);
	}
}

/* The isolate: of Vitest, Playwright, Mocha and node:test, from the
 * command directory mode built: each selects the one test of its id as
 * docs/runners.md ("Selecting tests") says. NULL for another runner. */
static char *
isolate_js(const struct flaky_command *c)
{
	const char	*r = c->runner;
	struct flaky_buf b;

	flaky_buf_init(&b);
	if (strcmp(r, "vitest") == 0) {
		/* "file > describe > test": the file, -t with the titles */
		flaky_buf_adds(&b, "t={test}; n=$(printf '%s' \"${t#* > }\" | "
		    "sed 's/ > / /g' | " SED_ESCAPE ");");
		argv_words(&b, c->argv, 0);
		flaky_buf_adds(&b, " \"${t%% > *}\" -t \"^$n\\$\"");
	} else if (strcmp(r, "playwright") == 0) {
		/* "file:line › [project] › titles" */
		flaky_buf_adds(&b, "t={test}; r=${t#* › }; p=; case $r in "
		    "'['*) p=${r%%] › *}; p=--project=${p#[}; "
		    "r=${r#*] › };; esac; g=$(printf '%s' \"$r\" | "
		    "sed 's/ › / /g' | " SED_ESCAPE ");");
		argv_words(&b, c->argv, 0);
		flaky_buf_adds(&b, " ${p:+\"$p\"} \"${t%% › *}\" "
		    "--grep=\"(^| )$g( @|\\$)\"");
	} else if (strcmp(r, "mocha") == 0) {
		/* the full title */
		argv_words(&b, c->argv, 0);
		flaky_buf_adds(&b, " --grep=\"^$(printf '%s' {test} | "
		    SED_ESCAPE ")\\$\"");
	} else if (strcmp(r, "nodetest") == 0) {
		/* the test's own name, before node's files */
		char	*q = sh_quote(c->argv[0]);

		flaky_buf_printf(&b, "n=$(printf '%%s' {test} | sed "
		    "'s/.* > //' | %s); %s --test-name-pattern=\"^$n\\$\"",
		    SED_ESCAPE, q);
		argv_words(&b, c->argv, 1);
		free(q);
	} else {
		flaky_buf_free(&b);
		return NULL;
	}
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

/* An isolate: template that reruns one test alone, per runner: the
 * runner's own way of selecting a test by its stored id (docs/runners.md
 * has the ids). The id reaches the shell only as {test}. */
static char *
isolate_template(const struct flaky_command *c)
{
	const char	*r = c->runner, *start;
	char		*t = NULL;

	if (strcmp(r, "pytest") == 0)
		xasprintf(&t, "%s -v {test}", c->argv[0]);
	else if (strcmp(r, "unittest") == 0) {
		/* discover -s START without -t imports from START */
		start = argv_flag(c->argv, "-s");
		if (start != NULL && argv_flag(c->argv, "-t") == NULL) {
			char	*q = sh_quote(start);

			xasprintf(&t, "cd %s && %s -m unittest -v {test}", q,
			    c->argv[0]);
			free(q);
		} else
			xasprintf(&t, "%s -m unittest -v {test}", c->argv[0]);
	} else if (strcmp(r, "jest") == 0)
		/* "file › describe › test": the file, and -t with the
		 * title path as one anchored, escaped pattern */
		xasprintf(&t, "t={test}; %s --verbose \"${t%%%% › *}\" -t "
		    "\"^$(printf '%%s' \"${t#* › }\" | sed 's/ › / /g; "
		    "s/[][\\\\.^$*+?(){}|]/\\\\&/g')\\$\"", c->argv[0]);
	else if (strcmp(r, "go") == 0)
		/* "pkg/TestX/sub": go test PKG -run '^TestX$/^sub$' */
		xasprintf(&t, "t={test}; p=${t%%%%/Test*}; go test -v -count=1 "
		    "\"$p\" -run \"^$(printf '%%s' \"${t#\"$p\"/}\" | "
		    "sed 's|/|$/^|g')\\$\"");
	else if (strcmp(r, "cargo") == 0)
		/* libtest's name, exactly (a doctest's cannot be given) */
		xasprintf(&t, "cargo test --no-fail-fast -- --exact {test}");
	else if (strcmp(r, "rspec") == 0)
		/* the full description (-e matches a part of it) */
		xasprintf(&t, "rspec --format documentation -e {test}");
	else if (strcmp(r, "gtest") == 0 || strcmp(r, "phpunit") == 0) {
		/* ctest's name or PHPUnit's, anchored and escaped */
		const char *dir = argv_flag(c->argv, "--test-dir");
		char	*q = dir != NULL ? sh_quote(dir) : NULL;
		int	 ct = strcmp(r, "gtest") == 0;

		xasprintf(&t, "t={test}; %s%s%s %s \"%s$(printf '%%s' \"$t\" | "
		    "sed 's#[][\\\\.^$*+?(){}|/]#\\\\&#g')\\$%s\"",
		    ct ? "ctest --output-on-failure" : c->argv[0],
		    ct && q ? " --test-dir " : ct ? "" : " --debug -v",
		    ct && q ? q : "", ct ? "-R" : "--filter", ct ? "^" : "/^",
		    ct ? "" : "/");
		free(q);
	}
	else
		t = isolate_js(c);
	return t;
}

/* flakyd as the hints name it: by its full path where it is installed
 * (/usr/sbin/flakyd: a user's PATH on Debian has no /usr/sbin). */
static const char *
flakyd_path(void)
{
	return access(FLAKY_SBINDIR "/flakyd", X_OK) == 0 ?
	    FLAKY_SBINDIR "/flakyd" : "flakyd";
}

/* The top of the file: where it came from and how to check it. */
static void
write_head(FILE *f, const struct init *in)
{
	fprintf(f, "# flaky.yaml for %s, written by `flakyctl init` "
	    "(flaky %s).\n", in->cmd.root, FLAKY_VERSION);
	fprintf(f, "# Check it with `%s --check-config --config %s`; "
	    "every key is in\n# flaky.yaml(5). Relative paths are taken "
	    "from this file's directory.\n\n", flakyd_path(),
	    in->out != NULL ? in->out : "FILE");
	fprintf(f, "# The evidence database: flakyd writes it, flakyctl "
	    "reads it (with\n# --config FILE or FLAKY_CONFIG=FILE it finds "
	    "it through this line).\ndatabase: ");
	yaml_str(f, in->db != NULL ? in->db : in->local ? "flaky.db" :
	    INIT_DB_SYSTEM);
	fputc('\n', f);
	if (in->local)
		fprintf(f, "# flakyd's control socket (flakyctl status, run, "
		    "reload); the system\n# default is /run/flaky/flakyd.sock."
		    "\nsocket: flakyd.sock\n");
	fprintf(f, "# Runs in flight at once, all targets together.\njobs: 1\n"
	    "# Raw results older than this are pruned; daily rollups (the "
	    "trends) stay.\nretention: 180d\n\n");
}

/* The one target: the detected command, the nightly schedule, isolate. */
static void
write_target(FILE *f, const struct init *in)
{
	char	*iso = isolate_template(&in->cmd);

	fprintf(f, "targets:\n  - name: ");
	yaml_str(f, in->target);
	fprintf(f, "\n    # %s: %s\n    command: ", in->cmd.runner,
	    in->cmd.note != NULL ? in->cmd.note : "detected");
	yaml_argv(f, in->cmd.argv);
	fprintf(f, "\n    # Where the runs start: the project's root.\n"
	    "    dir: ");
	yaml_str(f, in->local ? "." : in->cmd.root);
	fprintf(f, "\n    # Five cron fields (minute hour day month weekday) "
	    "in local time:\n    # nightly. \"every 30m\" and @hourly work "
	    "too.\n    schedule: ");
	yaml_str(f, in->schedule);
	fprintf(f, "\n    # Runs per trigger: one run tells little about a "
	    "test that fails\n    # once in twenty.\n    runs: 5\n"
	    "    # Per run; then the process group is ended and the run "
	    "stored as timed out.\n    timeout: 30m\n");
	if (iso != NULL) {
		fprintf(f, "    # One test alone ({test} is its id, handed to "
		    "the shell in $FLAKY_TEST,\n    # never pasted into the "
		    "command): order dependence, flakyctl confirm.\n"
		    "    isolate: ");
		yaml_str(f, iso);
		fprintf(f, "\n    # After each trigger, rerun the unsettled "
		    "tests alone with isolate:.\n    confirm: false\n");
	}
	free(iso);
}

/* The one message for an output that is there already. */
static void
exists_error(const char *out)
{
	fprintf(stderr, "flakyctl init: %s exists; expected a new file "
	    "(--force replaces it)\n", out);
}

/* A temporary file beside the output, so that a failed write leaves no
 * half file and an existing one as it was. NULL after a message. */
static FILE *
open_temp(const char *out, char **ret_tmp)
{
	FILE	*f;
	int	 fd;

	xasprintf(ret_tmp, "%s.XXXXXX", out);
	if ((fd = mkostemp(*ret_tmp, O_CLOEXEC)) == -1 ||
	    fchmod(fd, 0644) == -1 || (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "flakyctl init: %s: %s\n", *ret_tmp,
		    strerror(errno));
		if (fd != -1) {
			close(fd);
			unlink(*ret_tmp);
		}
		return NULL;
	}
	return f;
}

/* The temporary file in its place: link(2) refuses an existing output
 * (no race with another writer), rename(2) replaces it with --force. */
static int
commit_temp(const char *tmp, const char *out, int force)
{
	int	 r = force ? rename(tmp, out) : link(tmp, out);

	if (r == -1 && errno == EEXIST)
		exists_error(out);
	else if (r == -1)
		fprintf(stderr, "flakyctl init: %s: %s\n", out,
		    strerror(errno));
	if (!force || r == -1)
		unlink(tmp);
	return r;
}

/* The output's directory, absolute, into in->outdir; is it the root? */
static int
locate_output(struct init *in)
{
	char	 dir[PATH_MAX];
	const char *slash;

	if (in->out == NULL)
		return 0;
	slash = strrchr(in->out, '/');
	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else if (slash == in->out)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - in->out),
		    in->out);
	if (realpath(dir, in->outdir) == NULL) {
		fprintf(stderr, "flakyctl init: %s: %s\n", dir,
		    strerror(errno));
		return -1;
	}
	in->local = strcmp(in->outdir, in->cmd.root) == 0;
	return 0;
}

/* Detect, decide, then write the whole file. */
static int
init_write(struct init *in, const char *dir, int force)
{
	extern char	**environ;
	const struct flaky_command_opts opts = { 0 };
	char		 err[2048], *name = NULL, *def = NULL, *tmp = NULL;
	FILE		*f;
	int		 r, bad;

	if ((r = flaky_command_detect(dir, environ, &opts, &in->cmd, err,
	    sizeof err)) < 0) {
		if (r == -ENOMEM)
			fatalx("out of memory");
		fprintf(stderr, "flakyctl init: %s\n", err);
		return EXIT_ERROR;
	}
	if (in->out != NULL && strcmp(in->out, "-") == 0)
		in->out = NULL;
	else if (in->out == NULL)
		xasprintf(&def, "%s/flaky.yaml", in->cmd.root);
	if (def != NULL)
		in->out = def;
	if (in->target == NULL)
		in->target = name = default_target(&in->cmd, in->cmd.root);
	r = EXIT_ERROR;
	if (locate_output(in) < 0)
		goto out;
	if (in->out != NULL && !force && access(in->out, F_OK) == 0) {
		exists_error(in->out);
		goto out;
	}
	if (in->out == NULL)
		f = stdout;
	else if ((f = open_temp(in->out, &tmp)) == NULL)
		goto out;
	write_head(f, in);
	write_target(f, in);
	bad = fflush(f) != 0 || ferror(f);
	if (f != stdout && fclose(f) != 0)
		bad = 1;
	if (bad) {
		fprintf(stderr, "flakyctl init: %s: %s\n", tmp ? tmp :
		    "stdout", strerror(errno));
		if (tmp != NULL)
			unlink(tmp);
		goto out;
	}
	if (tmp != NULL && commit_temp(tmp, in->out, force) < 0)
		goto out;
	r = EXIT_OK;
	if (in->out != NULL)
		fprintf(stderr, "flakyctl: wrote %s (%s: %s); check it with "
		    "%s --check-config --config %s\n", in->out,
		    in->cmd.runner, in->cmd.note ? in->cmd.note : "detected",
		    flakyd_path(), in->out);
out:
	free(tmp);
	free(name);
	free(def);
	return r;
}

/* flakyctl init [DIR]: the project's flaky.yaml. */
static int
cmd_init(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct init	 in;
	struct flaky_sched sched;
	const char	*dir = ".";
	char		 err[256];
	int		 c, force = 0, r;

	memset(&in, 0, sizeof in);
	in.schedule = INIT_SCHEDULE;
	cmd_getopt_init(&g, &cmd_init_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'o':
			in.out = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'T':
			in.target = optarg;
			break;
		case 's':
			in.schedule = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind < argc)
		dir = argv[optind++];
	if (optind < argc) {
		ctl_usage_error("init", "expected one directory, got also '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "init", 1 << FORMAT_TABLE) < 0)
		return EXIT_ERROR;
	if (flaky_sched_parse(in.schedule, &sched, err, sizeof err) < 0) {
		ctl_usage_error("init", "--schedule: %s", err);
		return EXIT_ERROR;
	}
	in.db = ctl->db;
	r = init_write(&in, dir, force);
	flaky_command_clear(&in.cmd);
	return r;
}
