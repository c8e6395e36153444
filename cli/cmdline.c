/* A command as people see it: the target name analyze gives it, and the
 * line that can be pasted into a shell (analyze, bisect, verify). */
#include "buildconf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flakyctl.h"
#include "log.h"
#include "util/util.h"

/* "shop-pytest": the directory's name (the project root's in directory
 * mode) and the command's first word (the runner's name there). */
char *
default_target(const char *where, const char *cmd)
{
	char	 cwd[PATH_MAX], *dir, *word, *t;
	const char *w;

	if (where != NULL)
		snprintf(cwd, sizeof cwd, "%s", where);
	else if (getcwd(cwd, sizeof cwd) == NULL)
		snprintf(cwd, sizeof cwd, "run");
	dir = strrchr(cwd, '/');
	dir = dir && dir[1] ? dir + 1 : cwd;
	w = strrchr(cmd, '/');
	word = xstrdup(w ? w + 1 : cmd);
	xasprintf(&t, "%s-%s", dir, word);
	free(word);
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
