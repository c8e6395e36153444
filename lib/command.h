/* The command a run executes. Two jobs:
 *
 * - Complete a user's command so that its runner prints every test's
 *   outcome: pytest gets -v through PYTEST_ADDOPTS, Jest --verbose,
 *   `python -m unittest` -v, `go test` -count=1 and -v; a command that
 *   already prints every outcome is left as it is.
 * - Directory mode: find a project's root and runner from its files and
 *   build the command its parser needs.
 *
 * The rules are in docs/runners.md ("What flakyctl adds to your command",
 * "Directory mode"); tests/unit/test_command.c has one test per rule. */
#ifndef FLAKY_COMMAND_H
#define FLAKY_COMMAND_H

#include <stddef.h>

struct flaky_command_opts {
	/* Point Jest's cache (transforms, haste map) at a kept directory
	 * rather than at the run's private TMPDIR, where it is lost after
	 * every run. 0: leave Jest's cache where Jest puts it. */
	int		 keep_jest_cache;
};

struct flaky_command {
	char		**argv;		/* NULL-terminated */
	char		**envp;		/* the whole environment */
	char		 *dir;		/* directory mode: where to run;
					 * else NULL (the caller's) */
	char		 *runner;	/* "pytest", "unittest", "jest", "go";
					 * NULL when not recognized */
	char		 *note;		/* what was added, or why this
					 * command: one sentence; NULL when
					 * nothing was added */
	char		 *root;		/* directory mode: the project root */
	char		 *env_set;	/* "NAME=VALUE" that envp adds or
					 * changes, to show the command as
					 * run; NULL when envp is as given */
};

/* argv and envp as given, changed only where the runner would not print
 * every test's outcome. The result owns copies of everything. Returns 0,
 * or -ENOMEM / -EINVAL (an empty argv) with err filled. */
int	 flaky_command_complete(char *const *argv, char *const *envp,
	    const struct flaky_command_opts *, struct flaky_command *ret,
	    char *err, size_t errlen);

/* The command for the tests of directory path (relative to the working
 * directory): the project's root and runner from its files, the runner
 * looked up through envp's PATH. Returns 0; -ENOENT when no runner is
 * recognized (err names what was looked for) or Jest is listed but not
 * installed; -ENOTDIR; -ENOMEM. */
int	 flaky_command_detect(const char *path, char *const *envp,
	    const struct flaky_command_opts *, struct flaky_command *ret,
	    char *err, size_t errlen);

/* The version of the command's runner where its installation tells it
 * without running anything (Jest's package.json, go's GOROOT/VERSION, the
 * Python interpreter's name for unittest): "jest 29.7.0", "go1.19.8",
 * "Python 3.11". malloc'd, or NULL. pytest prints its own. */
char	*flaky_runner_version(const struct flaky_command *, const char *dir);

/* Frees what a flaky_command holds (not the struct); NULL-safe. */
void	 flaky_command_clear(struct flaky_command *);

#endif
