/* One run of a command: its own process group, stdin from /dev/null, signals
 * reset, stdout and stderr captured through non-blocking pipes with a bound,
 * a timeout that ends the whole group, wall time and rusage.
 *
 * A spawner belongs to one event_base. It watches each child through a
 * pidfd; it owns a SIGCHLD event for kernels without pidfds and, in a
 * subreaper, for the orphans of runs once one outlived its run: then it
 * reaps every child in a WNOHANG loop and finds the run by pid. A run ends
 * when its child is reaped and both pipes reached EOF (or the short drain
 * after the reap ran out). */
#ifndef FLAKY_RUN_H
#define FLAKY_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"
#include "parse/parse.h"
#include "store/store.h"

struct event_base;
struct flaky_spawner;
struct flaky_proc;

#define FLAKY_CAPTURE_DEFAULT	(1024 * 1024)	/* bytes kept per run */
#define FLAKY_GRACE_DEFAULT	(10 * 1000)	/* ms, SIGTERM -> SIGKILL */
#define FLAKY_DRAIN_MS		500		/* pipes after the reap */

/* Stacks of a hung run (issue 33, lib/run/stacks*.c): before a run with
 * a time limit is killed there, each process of its group is asked where
 * it is, in the way its runtime answers (Python's faulthandler, Node's
 * inspector, SIGQUIT for Go and the JVM, gdb or eu-stack for anything
 * else), within one bound for all; then it is killed as before. A run
 * with stacks gets PYTHONPATH and NODE_OPTIONS entries for it (its
 * Python and Node must be ready to answer); docs/runners.md. */
#define FLAKY_STACKS_BOUND_DEFAULT	(10 * 1000)	/* ms, all of it */
#define FLAKY_STACKS_PROC_BYTES		(256 * 1024)	/* one process */
#define FLAKY_STACKS_BYTES		(1024 * 1024)	/* all */
#define FLAKY_STACKS_PROCS		32		/* processes */
struct flaky_stacks_opts {
	int64_t		 bound_ms;	/* 0: FLAKY_STACKS_BOUND_DEFAULT */
	const char	*native;	/* "gdb" or "eu-stack" first; NULL:
					 * gdb, else eu-stack */
};

enum flaky_stream {
	FLAKY_STDOUT = 0,
	FLAKY_STDERR = 1,
};

enum flaky_proc_end {
	FLAKY_PROC_EXITED,	/* exited or killed by a signal on its own */
	FLAKY_PROC_TIMEOUT,	/* ended by us at its time limit */
	FLAKY_PROC_STOPPED,	/* ended by us on request (shutdown) */
};

struct flaky_spawn_opts {
	char *const	*argv;
	const char	*dir;		/* working directory; NULL: ours */
	char *const	*envp;		/* NULL: our environment */
	int64_t		 timeout_ms;	/* 0: none */
	int64_t		 grace_ms;	/* 0: FLAKY_GRACE_DEFAULT */
	size_t		 capture_max;	/* 0: FLAKY_CAPTURE_DEFAULT */
	const char	*tmp_parent;	/* NULL: $TMPDIR, then /tmp */
	const char	*path;		/* argv[0] resolved once by
					 * flaky_resolve_command; NULL: now */
	int		 more;		/* runs that follow soon: their
					 * TMPDIRs are made meanwhile */
	int		 stdin_fd;	/* > 2: the child's stdin (the
					 * caller keeps it); else /dev/null */
	const struct flaky_stacks_opts *stacks;	/* with timeout_ms: take
					 * the stacks first; NULL: no */
};

/* What a finished process left. */
struct flaky_proc_info {
	pid_t		 pid;
	int		 end;		/* enum flaky_proc_end */
	int		 exit_code;	/* -1 when killed by a signal */
	int		 signal;	/* 0 when it exited */
	int64_t		 start_ms;	/* wall clock, unix ms */
	int64_t		 end_ms;
	int64_t		 wall_us;	/* monotonic, spawn to reap */
	int64_t		 user_us;
	int64_t		 sys_us;
	long		 maxrss_kb;
	int		 in_flight;	/* runs of this spawner at start */
	double		 loadavg;	/* 1-minute load average at start */
	uint64_t	 bytes[2];	/* produced per stream */
	uint64_t	 dropped[2];	/* not kept per stream */
	int		 capture_oom;	/* some of dropped: out of memory */
};

/* Called with each chunk read, before the bound applies (a parser sees all
 * of the output). */
typedef void	(*flaky_proc_data_cb)(void *arg, int stream, const char *,
		    size_t);
/* Called once when the run ended; the proc stays valid until freed. */
typedef void	(*flaky_proc_done_cb)(void *arg, struct flaky_proc *);

int	 flaky_spawner_new(struct event_base *, struct flaky_spawner **ret);
/* Removes the TMPDIRs of freed runs (and a spare); fails with -EBUSY
 * while runs are live. */
int	 flaky_spawner_free(struct flaky_spawner *);
/* Runs live now. */
int	 flaky_spawner_running(const struct flaky_spawner *);
/* Reap now (also done on SIGCHLD). */
void	 flaky_spawner_reap(struct flaky_spawner *);

/* Start a run. Errors (the command not found, not executable, a directory,
 * a missing working directory) return a negative errno with err filled
 * ("pytestx: command not found"); nothing is left running. */
int	 flaky_spawn(struct flaky_spawner *, const struct flaky_spawn_opts *,
	    flaky_proc_data_cb, flaky_proc_done_cb, void *arg,
	    struct flaky_proc **ret, char *err, size_t errlen);
/* End a run early: SIGTERM to its group, SIGKILL after the grace. */
void	 flaky_proc_stop(struct flaky_proc *);
const struct flaky_proc_info *flaky_proc_info(const struct flaky_proc *);
/* The kept output of a stream: the head, a marker naming the bytes not
 * kept, the tail. Appends to out. */
int	 flaky_proc_output(const struct flaky_proc *, int stream,
	    struct flaky_buf *out);
/* The stacks taken at the time limit, handed over (flaky_stacks_free);
 * NULL when none were taken. */
struct flaky_stacks *flaky_proc_take_stacks(struct flaky_proc *);
/* The run's private TMPDIR. When the proc is freed it is removed by the
 * spawner's helper thread, and at the latest by flaky_spawner_free. */
const char *flaky_proc_tmpdir(const struct flaky_proc *);
/* Free a finished run. A live one is stopped and killed first. */
void	 flaky_proc_free(struct flaky_proc *);

/* Told each run's process group once it started (alive 1) and once it is
 * SIGKILLed and reaped (alive 0); flakyd's guard kills the groups still
 * told when flakyd dies. NULL: nobody is told. */
extern void	(*flaky_spawn_group_hook)(pid_t pgid, int alive);

/* Resolve a command the way the child's PATH would: sets *ret (malloc'd)
 * or returns -ENOENT, -EACCES, -EISDIR with err filled. */
int	 flaky_resolve_command(const char *cmd, const char *dir,
	    const char *path_env, char **ret, char *err, size_t errlen);

/* Escapees of runs: a run's processes that left its process group
 * (setsid, a daemonizing double fork) outlive it. A program that is a
 * child subreaper (prctl PR_SET_CHILD_SUBREAPER) inherits them when their
 * parent ends; with no run in flight every live child of ours is one. */

/* Told each stray's pid before it is killed (for a log line). */
typedef void	(*flaky_stray_cb)(long pid, void *arg);

/* SIGKILL every live child of ours and its process group; zombies are left
 * to the caller's reaping. Call only with no run in flight. Returns how
 * many were alive: their own children are reparented to us in turn, so
 * call again (after reaping) until it returns 0. */
int	 flaky_kill_strays(flaky_stray_cb, void *arg);

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
	char		 *runner;	/* "pytest", "unittest", "jest", "go",
					 * "prove", "vitest", "playwright",
					 * "mocha", "nodetest"; NULL when not
					 * recognized */
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

/* The project directory dir belongs to, as directory mode finds it: its
 * root (else the top of its git checkout, else dir) in *root (malloc'd),
 * and the runner directory mode would choose for it ("pytest",
 * "unittest", "jest", "go", "prove"; pytest for a Python project whose
 * pytest is installed, without counting), or NULL. For default target
 * names: one project, one target, whichever form ran it. 0 or -ENOMEM. */
int	 flaky_command_project(const char *dir, char *const *envp,
	    char **root, const char **runner);

/* The version of the command's runner where its installation tells it
 * without running anything (the package.json of Jest, Vitest, Mocha and
 * @playwright/test, go's GOROOT/VERSION, the Python interpreter's name for
 * unittest): "jest 29.7.0", "go1.19.8", "Python 3.11". malloc'd, or NULL.
 * pytest prints its own. */
char	*flaky_runner_version(const struct flaky_command *, const char *dir);

/* The command of one shuffled run (issue 18): the runner's own shuffling
 * given seed (pytest-random-order through PYTEST_ADDOPTS, Jest --randomize
 * --seed, go test -shuffle). *argv and *envp are new copies of cmd's with
 * it added (free with flaky_command_free_vec). -ENOTSUP with err filled
 * when the runner cannot shuffle (unittest, TAP, an unrecognized command);
 * -ENOMEM. */
int	 flaky_command_shuffle(const struct flaky_command *, const char *seed,
	    char ***argv, char ***envp, char *err, size_t errlen);
void	 flaky_command_free_vec(char **);
/* A fresh order seed, 1 to 2^31-1 (what Jest, go and pytest all take),
 * from getrandom; buf of at least 12 bytes. */
void	 flaky_shuffle_seed(char *buf, size_t len);

/* The command of a run of only some tests (issue 18, lib/run/select.c):
 * pytest gets the node ids in place of the paths it was given, unittest
 * -k '*ID' per test, Jest each test's file (escaped, anchored at its end)
 * and -t '^(?:TITLES)$', go test -run '^(A|B)$' with the top-level names.
 * (unittest: the suite as its command builds it, load_tests included,
 * restricted to the ids by flaky_unittest_select_py, not -k, which keeps
 * what load_tests added and cannot name a doctest).
 * tests are the ids the parsers give; dir is where the command runs (NULL:
 * ours), to tell pytest's path arguments. *argv and *envp are new copies
 * (flaky_command_free_vec). -ENOTSUP with err filled when the runner cannot
 * select (TAP, a shell command, one not recognized), -E2BIG past the
 * bounds below, -EINVAL for no tests, -ENOMEM. */
/* A Python program that runs the unittest suite its arguments name (as
 * `python -m unittest ARGS` would build it) restricted to the test ids
 * after "--flaky-ids": `python3 -c PROGRAM ARGS --flaky-ids ID...`. */
extern const char flaky_unittest_select_py[];
#define FLAKY_SELECT_MAX_TESTS	4096
#define FLAKY_SELECT_MAX_BYTES	(256 * 1024)
int	 flaky_command_select(const struct flaky_command *, const char *dir,
	    char *const *tests, size_t ntests, char ***argv, char ***envp,
	    char *err, size_t errlen);

/* Frees what a flaky_command holds (not the struct); NULL-safe. */
void	 flaky_command_clear(struct flaky_command *);

/* Stress beside a run (issue 18, lib/run/stress.c): our own threads
 * load the CPU, memory or disk while a run runs. */
#define FLAKY_STRESS_CPU	1
#define FLAKY_STRESS_MEMORY	2
#define FLAKY_STRESS_IO		4
struct flaky_stress_spec {
	int		 kinds;		/* FLAKY_STRESS_* */
	int		 level;		/* workers of each kind */
	char		 name[32];	/* "cpu:2": runs.perturbation */
};
struct flaky_stress;
/* "cpu", "memory", "io" or "all", with ":LEVEL" (1 to 64 workers of each
 * kind; default the online CPUs). 0 or -EINVAL with err filled. */
int	 flaky_stress_parse(const char *, struct flaky_stress_spec *,
	    char *err, size_t errlen);
/* Start the workers; io writes an unlinked file in dir (NULL: /tmp). */
int	 flaky_stress_start(const struct flaky_stress_spec *, const char *dir,
	    struct flaky_stress **ret, char *err, size_t errlen);
/* Stop and join the workers; NULL-safe. */
void	 flaky_stress_stop(struct flaky_stress *);

/* Seed sweeps (issue 34, lib/run/seed.c, docs/runners.md "Seed
 * sweeps"): a run whose Python tests are seeded before each one by the
 * hook flaky ships (python/flaky_seed: random, NumPy, PyTorch, and
 * PYTHONHASHSEED), which also measures the margins of approximate
 * assertions into FLAKY_HEADROOM_FILE of the run's TMPDIR. */
#define FLAKY_SEED_PYTEST_PLUGIN	"flaky_seed.pytest_plugin"
#define FLAKY_HEADROOM_FILE		"flaky-headroom.tsv"
/* The directory that holds the hook (put on PYTHONPATH):
 * $FLAKY_SEED_HOOK_DIR; for a program of the build tree the source
 * tree's python/; DATADIR/flaky/python; PREFIX/share/flaky/python
 * beside the program. 0, or -ENOENT with err naming where it looked. */
int	 flaky_seed_hook_dir(char *buf, size_t len, char *err, size_t errlen);
/* The command of a run seeded with seed (1 to 2^32-1) in directory dir:
 * cmd's argv, its envp with FLAKY_SEED, PYTHONHASHSEED, the hook first
 * on PYTHONPATH, pytest's PYTEST_PLUGINS, FLAKY_HEADROOM when headroom,
 * and the seed variable of a project that has one (scikit-learn's). New
 * copies (flaky_command_free_vec). -ENOTSUP with err for a runner that
 * is not pytest or unittest, -ENOENT when the hook is not installed,
 * -EINVAL, -ENOMEM. */
int	 flaky_command_seed(const struct flaky_command *, const char *seed,
	    const char *dir, int headroom, char ***argv, char ***envp,
	    char *err, size_t errlen);
/* The environment words that give a command run in dir the seed again,
 * for a reproduce command: "FLAKY_SEED=N PYTHONHASHSEED=N PYTHONPATH=..."
 * and a space, appended to b. */
void	 flaky_seed_env_words(const char *seed, const char *dir,
	    const char *runner, struct flaky_buf *b);

/* One run of a target, end to end: spawn, parse both streams as they
 * arrive (and a JUnit file after), hand back a record and results ready for
 * the store. The daemon and flakyctl analyze both run tests through here, so
 * they never disagree on what a run means. */

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
	/* Issue 34: read the seed hook's margins from the run's TMPDIR
	 * (FLAKY_HEADROOM_FILE) into results.headroom when it ends. */
	int		 headroom;
	/* Stacks at the time limit: on unless no_stacks; stacks_ms bounds
	 * them (0: FLAKY_STACKS_BOUND_DEFAULT), stacks_native as
	 * flaky_stacks_opts.native. */
	int		 no_stacks;
	int64_t		 stacks_ms;
	const char	*stacks_native;
};

struct flaky_run {
	struct flaky_run_record	 rec;		/* out/err point into the run */
	struct flaky_results	 results;
	struct flaky_stacks	*stacks;	/* taken at the time limit, or
						 * NULL; the run's */
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
 * millisecond, synchronous): call it once per trigger or analyze call.
 * A git that has not answered within flaky_revision_timeout_ms() is
 * killed with its process group: -ETIMEDOUT, *ret NULL. Else 0 or
 * -ENOMEM. */
int	 flaky_revision_git(const char *dir, char **ret);

/* The same in two steps, for an event loop that must not wait for git:
 * flaky_revision_files reads .git only and returns 0 (*ret the revision,
 * or NULL for none), -ENOMEM, or FLAKY_REVISION_ASK_GIT when only git
 * can say; then run the command of flaky_revision_git_argv (NULL-ended)
 * with the timeout and hand its stdout and exit code to
 * flaky_revision_parse (0 with *ret set or NULL, or -ENOMEM). */
#define FLAKY_REVISION_ASK_GIT	1
int	 flaky_revision_files(const char *dir, char **ret);
void	 flaky_revision_git_argv(const char *dir, const char *argv[8]);
int	 flaky_revision_parse(const char *out, size_t len, int exit_code,
	    char **ret);
/* A short command run to its end for what it prints (lib/run/probe.c),
 * synchronously: git when .git does not settle HEAD, a Python runner's
 * count of its tests. In its own process group with stdin from /dev/null;
 * the group is killed at the deadline. */
struct flaky_probe {
	const char *const *argv;	/* argv[0] looked up in PATH */
	char *const	*envp;		/* NULL: ours */
	const char	*dir;		/* NULL: ours */
	int64_t		 timeout_ms;
	int		 stderr_too;	/* stderr into the same pipe, else
					 * /dev/null */
};
/* The first size-1 bytes of stdout in buf (NUL-terminated, *len), the rest
 * drained; *exit_code, -1 when a signal ended it. 0; -ETIMEDOUT (killed);
 * the errno of a command that could not start (-ENOENT). */
int	 flaky_probe_run(const struct flaky_probe *, char *buf, size_t size,
	    size_t *len, int *exit_code);

/* How long git may take: $FLAKY_GIT_TIMEOUT_MS (1 ms to a day), else
 * 10 s. */
#define FLAKY_GIT_TIMEOUT_DEFAULT_MS	10000
int64_t	 flaky_revision_timeout_ms(void);

#endif
