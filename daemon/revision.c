/* A trigger's git revision without waiting in the loop. .git is read in
 * place (microseconds); when only git can say (run.h), git runs through
 * the spawner as a revision: command does: in its own process group, its
 * output read by the loop, ended at the timeout (FLAKY_GIT_TIMEOUT_MS,
 * 10 s) with SIGTERM and, 100 ms later, SIGKILL to the group. A git hung
 * on a lock or a network file system then costs its trigger a revision,
 * and the other schedules nothing. */
#include "buildconf.h"

#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "flakyd.h"
#include "log.h"

#define REVISION_OUT_MAX	256	/* of git's stdout: one object id */
#define REVISION_GRACE_MS	100

/* git's stdout: its first bytes are enough. */
static void
git_data(void *arg, int stream, const char *s, size_t n)
{
	struct trigger	*tr = arg;

	if (stream == FLAKY_STDOUT && tr->revout.len < REVISION_OUT_MAX)
		flaky_buf_add(&tr->revout, s, n > REVISION_OUT_MAX ?
		    REVISION_OUT_MAX : n);
}

/* git ended: its first line is the revision, if it said one. */
static void
git_done(void *arg, struct flaky_proc *p)
{
	struct trigger	*tr = arg;
	const struct flaky_proc_info *pi = flaky_proc_info(p);

	if (pi->end == FLAKY_PROC_TIMEOUT)
		log_warnx("target %s: git did not answer within %lld ms and "
		    "was killed; runs have no revision", tr->ts->name,
		    (long long)flaky_revision_timeout_ms());
	else if (flaky_revision_parse(flaky_buf_cstr(&tr->revout),
	    tr->revout.len, pi->exit_code, &tr->revision) < 0)
		fatalx("out of memory");
	/* Freed from the next event, not inside the spawner's callback. */
	event_active(tr->next_ev, EV_TIMEOUT, 0);
}

/* Find the trigger's revision: 0 when it is known now (tr->revision, or
 * NULL for none), 1 when git was started and tr->next_ev fires once it
 * is done. */
int
revision_git_start(struct flakyd *d, struct trigger *tr)
{
	struct flaky_spawn_opts o;
	const char	*argv[8];
	char		 err[512];
	int		 r;

	if ((r = flaky_revision_files(tr->def->dir, &tr->revision)) < 0)
		fatalx("out of memory");
	if (r != FLAKY_REVISION_ASK_GIT)
		return 0;
	flaky_revision_git_argv(tr->def->dir, argv);
	memset(&o, 0, sizeof o);
	o.argv = (char *const *)argv;
	o.timeout_ms = flaky_revision_timeout_ms();
	o.grace_ms = REVISION_GRACE_MS;
	o.capture_max = 4096;
	if ((r = flaky_spawn(d->sp, &o, git_data, git_done, tr, &tr->revproc,
	    err, sizeof err)) == 0)
		return 1;
	/* No git at all: no revision, as git would have said. */
	if (r != -ENOENT)
		log_warnx("target %s: git revision: %s", tr->ts->name, err);
	return 0;
}
