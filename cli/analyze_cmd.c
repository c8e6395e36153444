/* analyze's command: a directory told from a command, and the command
 * built for a directory or completed (lib/run/command.c). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "analyze.h"
#include "log.h"

/* Is s an existing directory (and so not a command)? */
int
analyze_is_dir(const char *s)
{
	struct stat	 st;

	return stat(s, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The command the runs execute: built for a directory, or the user's
 * completed so that the runner prints every test's outcome. */
int
analyze_command(const char *dir, char **argv,
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
		fprintf(stderr, "flakyctl: analyze: %s\n", err);
	return r;
}
