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
#ifndef FLAKY_SPAWN_H
#define FLAKY_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct event_base;
struct flaky_spawner;
struct flaky_proc;

#define FLAKY_CAPTURE_DEFAULT	(1024 * 1024)	/* bytes kept per run */
#define FLAKY_GRACE_DEFAULT	(10 * 1000)	/* ms, SIGTERM -> SIGKILL */
#define FLAKY_DRAIN_MS		500		/* pipes after the reap */

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
/* The run's private TMPDIR. When the proc is freed it is removed by the
 * spawner's helper thread, and at the latest by flaky_spawner_free. */
const char *flaky_proc_tmpdir(const struct flaky_proc *);
/* Free a finished run. A live one is stopped and killed first. */
void	 flaky_proc_free(struct flaky_proc *);

/* Resolve a command the way the child's PATH would: sets *ret (malloc'd)
 * or returns -ENOENT, -EACCES, -EISDIR with err filled. */
int	 flaky_resolve_command(const char *cmd, const char *dir,
	    const char *path_env, char **ret, char *err, size_t errlen);

#endif
