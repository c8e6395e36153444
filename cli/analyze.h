/* What flakyctl analyze keeps apart from cli/analyze.c (analyze_cmd.c). */
#ifndef FLAKYCTL_ANALYZE_H
#define FLAKYCTL_ANALYZE_H

#include "run/run.h"

/* Is s an existing directory (and so not a command)? */
int	 analyze_is_dir(const char *s);
/* The command the runs execute: built for the directory dir, or argv
 * completed so that the runner prints every test's outcome; -1 after
 * saying why on stderr. */
int	 analyze_command(const char *dir, char **argv,
	    const struct flaky_command_opts *, struct flaky_command *);

#endif
