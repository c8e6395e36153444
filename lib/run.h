/* One run of a target, end to end: spawn, parse both streams as they
 * arrive (and a JUnit file after), hand back a record and results ready for
 * the store. The daemon and flakyctl analyze both run tests through here, so
 * they never disagree on what a run means. */
#ifndef FLAKY_RUN_H
#define FLAKY_RUN_H

#include "parse.h"
#include "spawner.h"
#include "store.h"

struct flaky_run_spec {
	char *const	*argv;
	const char	*dir;
	char *const	*envp;		/* NULL: ours */
	int64_t		 timeout_ms;	/* 0: none */
	int64_t		 grace_ms;	/* 0: default */
	size_t		 capture_max;	/* 0: default */
	const char	*junit_path;	/* a JUnit file the command writes */
	const char	*path;		/* argv[0] resolved, or NULL */
	int		 more;		/* runs that follow (flaky_spawn_opts) */
};

struct flaky_run {
	struct flaky_run_record	 rec;		/* out/err point into the run */
	struct flaky_results	 results;
	void			*priv;
};

typedef void	(*flaky_run_done_cb)(struct flaky_run *, void *arg);

/* Start a run. When the command cannot be started, returns a negative
 * errno with err filled and *ret still set to a finished run (status
 * error, the message in rec.error), so that the caller can store it. */
int	 flaky_run_start(struct flaky_spawner *, const struct flaky_run_spec *,
	    flaky_run_done_cb, void *arg, struct flaky_run **ret,
	    char *err, size_t errlen);
/* Shutdown: end the run's process group; it finishes as interrupted. */
void	 flaky_run_stop(struct flaky_run *);
void	 flaky_run_free(struct flaky_run *);

/* git HEAD of dir when it is a git work tree ("" otherwise, *ret NULL).
 * Read from .git (microseconds); unusual set-ups ask git itself (about a
 * millisecond, synchronous): call it once per trigger or analyze call. */
int	 flaky_revision_git(const char *dir, char **ret);
#endif
