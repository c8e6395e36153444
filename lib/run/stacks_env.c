/* What a run with a time limit gets so that its runtimes can say where
 * they are when it hangs (issue 33), and nothing a test would notice:
 *
 * - Python: PYTHONPATH starts with the run's stacks directory, whose
 *   sitecustomize.py registers faulthandler for one real-time signal
 *   (every thread's traceback into a file there, per process and per
 *   fork), takes its directory off sys.path again and runs any other
 *   sitecustomize as Python would have;
 * - Node: NODE_OPTIONS gains --inspect-port=0, so that the inspector
 *   SIGUSR1 opens listens on a free port rather than on 9229, which two
 *   runs (or a developer's debugger) would share.
 *
 * Go and the JVM need nothing: SIGQUIT dumps them. docs/runners.md says
 * what is set; tests/integration/hangs checks that suites run the same. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacks_int.h"

/* The sitecustomize of a run; %d is the signal. Only what is needed runs
 * at every Python start: an open file and a handler, about 0.5 ms of CPU
 * (_signal, not signal: signal's enums cost 4.5 ms per start). The
 * file is opened before anything else can close descriptors (pytest's
 * capture moves fd 2), and again in each forked child, so a dump names
 * its process by its file. A program that handles the signal itself keeps
 * it. Errors are swallowed: a run must start as it would without us. */
static const char sitecustomize_py[] =
"# Written by flaky for one run with a time limit (docs/runners.md,\n"
"# \"Stacks of a hung run\"): when flaky is about to kill the run, signal\n"
"# %d makes faulthandler write every thread's traceback to a file here.\n"
"def _flaky_stacks():\n"
"    import os, sys\n"
"    here = os.path.dirname(os.path.abspath(__file__))\n"
"    while here in sys.path:\n"
"        sys.path.remove(here)\n"
"    try:\n"
"        import faulthandler, _signal\n"
"        if _signal.getsignal(%d) in (_signal.SIG_DFL, None):\n"
"            kept = []\n"
"            def arm():\n"
"                f = open(os.path.join(here, 'py-%%d' %% os.getpid()), 'w')\n"
"                faulthandler.register(%d, file=f, all_threads=True,\n"
"                                      chain=False)\n"
"                kept[:] = [f]\n"
"            arm()\n"
"            os.register_at_fork(after_in_child=arm)\n"
"    except Exception:\n"
"        pass\n"
"    me = sys.modules.pop('sitecustomize', None)\n"
"    try:\n"
"        import sitecustomize\n"
"    except ImportError as e:\n"
"        if e.name != 'sitecustomize':\n"
"            raise\n"
"        if me is not None:\n"
"            sys.modules['sitecustomize'] = me\n"
"_flaky_stacks()\n"
"del _flaky_stacks\n";

/* The text of a run's sitecustomize (malloc'd), or NULL. */
char *
stacks_sitecustomize(void)
{
	char	*s;
	int	 sig = STACKS_PY_SIGNAL;

	if (asprintf(&s, sitecustomize_py, sig, sig, sig) == -1)
		return NULL;
	return s;
}

/* Write the sitecustomize into dir. 0 or -errno. */
static int
write_sitecustomize(const char *dir)
{
	char	 path[4096], *text;
	size_t	 len;
	int	 fd, r = 0;

	if ((size_t)snprintf(path, sizeof path, "%s/sitecustomize.py", dir) >=
	    sizeof path)
		return -ENAMETOOLONG;
	if ((text = stacks_sitecustomize()) == NULL)
		return -ENOMEM;
	len = strlen(text);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) == -1) {
		free(text);
		return -errno;
	}
	if (write(fd, text, len) != (ssize_t)len)
		r = -EIO;
	close(fd);
	free(text);
	return r;
}

/* NAME=VALUE of env, or NULL. */
static const char *
env_value(char **env, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* env with PYTHONPATH and NODE_OPTIONS as a run with stacks has them;
 * the vector and the two strings are sr's. */
static int
make_stacks_env(struct stacks_run *sr, char **env)
{
	const char *pp = env_value(env, "PYTHONPATH");
	const char *no = env_value(env, "NODE_OPTIONS");
	size_t	 n = 0, k = 0;
	int	 r;

	for (n = 0; env[n] != NULL; n++)
		;
	if ((sr->env = calloc(n + 3, sizeof *sr->env)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "PYTHONPATH=", 11) != 0 &&
		    strncmp(env[i], "NODE_OPTIONS=", 13) != 0)
			sr->env[k++] = env[i];
	/* An empty PYTHONPATH stays without an empty entry (which would be
	 * the working directory). */
	if (pp != NULL && *pp != '\0')
		r = asprintf(&sr->env_own[0], "PYTHONPATH=%s:%s", sr->dir, pp);
	else
		r = asprintf(&sr->env_own[0], "PYTHONPATH=%s", sr->dir);
	if (r == -1) {
		sr->env_own[0] = NULL;
		return -ENOMEM;
	}
	if (no != NULL && *no != '\0')
		r = asprintf(&sr->env_own[1], "NODE_OPTIONS=%s "
		    "--inspect-port=0", no);
	else
		r = asprintf(&sr->env_own[1], "NODE_OPTIONS=--inspect-port=0");
	if (r == -1) {
		sr->env_own[1] = NULL;
		return -ENOMEM;
	}
	sr->env[k++] = sr->env_own[0];
	sr->env[k++] = sr->env_own[1];
	sr->env[k] = NULL;
	return 0;
}

/* A run's capture made ready: its directory under parent, the
 * sitecustomize, the environment (env, already the run's, is copied). 0
 * with *ret set, or -errno (nothing left behind). */
int
stacks_prepare(struct stacks_run **ret, const struct flaky_stacks_opts *o,
    const char *parent, char **env)
{
	struct stacks_run *sr;
	int	 r;

	*ret = NULL;
	if ((sr = calloc(1, sizeof *sr)) == NULL)
		return -ENOMEM;
	sr->o = *o;
	if (sr->o.bound_ms <= 0)
		sr->o.bound_ms = FLAKY_STACKS_BOUND_DEFAULT;
	sr->wake[0] = sr->wake[1] = -1;
	pthread_mutex_init(&sr->lock, NULL);
	if (asprintf(&sr->dir, "%s/flaky-stacks-XXXXXX", parent) == -1) {
		sr->dir = NULL;
		stacks_run_free(sr);
		return -ENOMEM;
	}
	if (mkdtemp(sr->dir) == NULL) {
		r = -errno;
		free(sr->dir);
		sr->dir = NULL;
		stacks_run_free(sr);
		return r;
	}
	if ((r = write_sitecustomize(sr->dir)) < 0 ||
	    (r = make_stacks_env(sr, env)) < 0) {
		stacks_run_free(sr);
		return r;
	}
	*ret = sr;
	return 0;
}
