/* A command as people see it: the target name analyze gives it, and the
 * line that can be pasted into a shell (analyze, bisect, verify). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flakyctl.h"
#include "log.h"
#include "run/run.h"
#include "util/util.h"

/* The default target name, "luxon-jest": the project's directory name
 * and its runner, the same whether the suite ran as `analyze .`,
 * `-- npx jest` or `-- npm test` (docs/cli.md, "Targets"). The project is
 * the root directory mode finds from dir (else the git checkout's top,
 * else dir); the runner the command's, else the one directory mode would
 * choose there, else the command's first word. */
char *
default_target(const struct flaky_command *cmd, const char *dir)
{
	extern char	**environ;
	const char	*runner = cmd->runner, *base, *w;
	char		*root = NULL, *t, *word = NULL;

	if (cmd->root != NULL)
		root = xstrdup(cmd->root);
	else if (flaky_command_project(dir, environ, &root, &w) < 0)
		fatalx("out of memory");
	else if (runner == NULL)
		runner = w;
	if (runner == NULL) {
		w = strrchr(cmd->argv[0], '/');
		runner = word = xstrdup(w ? w + 1 : cmd->argv[0]);
	}
	base = strrchr(root, '/');
	base = base != NULL && base[1] != '\0' ? base + 1 :
	    strcmp(root, "/") == 0 ? "root" : root;
	xasprintf(&t, "%s-%s", base, runner);
	free(word);
	free(root);
	/* Keep target names to [A-Za-z0-9._-], as the schedule does. */
	for (char *p = t; *p; p++)
		if (!(*p == '.' || *p == '_' || *p == '-' ||
		    (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')))
			*p = '_';
	return t;
}

/* Quote one word for a shell when it needs it. */
static void
add_word(struct flaky_buf *b, const char *w)
{
	if (w[0] == '\0' || strpbrk(w, " \t\"'\\$`*?[]{}()<>;&|~#") != NULL) {
		flaky_buf_addc(b, '\'');
		for (const char *p = w; *p; p++) {
			if (*p == '\'')
				flaky_buf_adds(b, "'\\''");
			else
				flaky_buf_addc(b, *p);
		}
		flaky_buf_addc(b, '\'');
	} else
		flaky_buf_adds(b, w);
}

/* The command as one line, for people: with the variable flakyctl set
 * ("PYTEST_ADDOPTS=-v pytest"), so that it can be pasted into a shell. */
char *
join_argv(const char *env_set, char **argv)
{
	struct flaky_buf b;
	const char	*eq;

	flaky_buf_init(&b);
	if (env_set != NULL && (eq = strchr(env_set, '=')) != NULL) {
		flaky_buf_add(&b, env_set, (size_t)(eq + 1 - env_set));
		add_word(&b, eq + 1);
		flaky_buf_addc(&b, ' ');
	}
	for (int i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			flaky_buf_addc(&b, ' ');
		add_word(&b, argv[i]);
	}
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

int
ctl_is_dir(const char *s)
{
	struct stat	 st;

	return stat(s, &st) == 0 && S_ISDIR(st.st_mode);
}

int
ctl_dir_operand(int argc, char **argv, const char **dir)
{
	if (optind >= argc || *dir != NULL ||
	    strcmp(argv[optind - 1], "--") == 0 || !ctl_is_dir(argv[optind]))
		return 0;
	*dir = argv[optind++];
	return 1;
}

int
ctl_prepare_command(const char *who, const char *dir, char **argv,
    const struct flaky_command_opts *opts, struct flaky_command *cmd)
{
	extern char	**environ;
	char		  err[2048];
	int		  r;

	if (dir != NULL)
		r = flaky_command_detect(dir, environ, opts, cmd, err,
		    sizeof err);
	else
		r = flaky_command_complete(argv, environ, opts, cmd, err,
		    sizeof err);
	if (r == -ENOMEM)
		fatalx("out of memory");
	if (r < 0)
		fprintf(stderr, "flakyctl: %s: %s\n", who, err);
	return r;
}
