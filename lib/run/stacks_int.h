/* Shared by the parts that take the stacks of a hung run (issue 33), not
 * part of libflaky's interface: stacks.c (the capture: its thread, its
 * order and bounds, and what spawn.c calls), stacks_env.c (what a run
 * with a time limit gets so that its runtimes can answer), stacks_proc.c
 * (the process group from /proc: members, runtimes, lock waits),
 * stacks_node.c (Node's inspector) and stacks_tool.c (gdb or eu-stack,
 * and the signals Python, Go and the JVM answer).
 *
 * The capture runs on a thread of its own: it waits (for a dump file to
 * settle, for gdb, for the inspector) and flakyd's loop must not. It never
 * touches the event loop; the loop feeds it the run's output read while it
 * runs (Go and the JVM write their dumps there) and learns of its end
 * through a pipe. */
#ifndef FLAKY_STACKS_INT_H
#define FLAKY_STACKS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "run/run.h"

struct event;
struct flaky_proc;

/* The signal Python's faulthandler is registered for (stacks_env.c's
 * sitecustomize): a real-time one, which nothing else uses by default
 * and whose SigCgt bit tells that the handler is there. */
#define STACKS_PY_SIGNAL	(SIGRTMAX - 3)

/* Bounds of one process's capture, within what is left of the whole. */
#define STACKS_SIGNAL_MS	2000	/* Python, Go, the JVM answer */
#define STACKS_NODE_MS		3000	/* the inspector, connect to pause */
#define STACKS_TOOL_MS		5000	/* gdb or eu-stack */
#define STACKS_QUIET_MS		60	/* a dump is over when it grew and
					 * then stayed still this long */
#define STACKS_POLL_MS		10
#define STACKS_WINDOW_BYTES	(2 * 1024 * 1024)	/* output kept
							 * while taking */
#define STACKS_LOCKS_MAX	64	/* lock waits read per process */

enum stacks_runtime {
	RT_NATIVE = 0,
	RT_PYTHON,
	RT_NODE,
	RT_GO,
	RT_JAVA,
};

/* A member of the run's process group, as /proc shows it. */
struct stacks_member {
	pid_t		 pid, ppid;
	char		 state;		/* R, S, D, T, Z, ... */
	int		 threads;
	int		 depth;		/* from the run's first process */
	int		 runtime;	/* enum stacks_runtime */
	int		 waits_child;	/* one thread, in wait4 */
	int		 skip;		/* the go command: its child answers */
	char		 comm[32];
	char		*exe;		/* /proc/PID/exe, or NULL */
	char		*command;	/* cmdline, spaces between, cut */
};

/* One lock wait of a native thread: tid waits for the mutex at addr,
 * which thread owner holds. */
struct stacks_lockwait {
	pid_t		 tid, owner;
	uint64_t	 addr;
};

/* The capture of one run, owned by its flaky_proc. */
struct stacks_run {
	struct flaky_stacks_opts o;
	char		*dir;		/* the run's: sitecustomize, dumps */
	char		*tool;		/* gdb or eu-stack, resolved; NULL */
	int		 tool_gdb;	/* tool is gdb */
	char		**env;		/* the run's environment, ours */
	char		*env_own[3];	/* the strings we made in it */
	pid_t		 pgid;
	/* the thread */
	pthread_t	 thread;
	int		 running;	/* started, not joined */
	atomic_int	 cancel;
	int		 wake[2];	/* thread -> loop: it ended */
	struct event	*wake_ev;
	int64_t		 start_us;
	/* the output read while it runs, fed by the loop */
	pthread_mutex_t	 lock;
	char		*window;
	size_t		 window_len;	/* kept, at most STACKS_WINDOW_BYTES */
	uint64_t	 window_total;	/* read */
	int64_t		 window_last_us;	/* monotonic, the last read */
	/* what the thread made; dumps of the output name their part of
	 * the window until the loop fills them in */
	struct flaky_stacks *result;
	size_t		*seg;		/* per dump: window start, end */
	/* the root's reap, when it came during the capture */
	int		 reaped;
};

/* stacks.c */
int	 stacks_capture_start(struct flaky_proc *, struct stacks_run *,
	    struct event_base *, void (*done)(int, short, void *));
void	 stacks_capture_finish(struct stacks_run *);
void	 stacks_window_feed(struct stacks_run *, const char *, size_t);
struct flaky_stacks *stacks_take(struct stacks_run *);
void	 stacks_run_free(struct stacks_run *);

/* stacks_env.c */
int	 stacks_prepare(struct stacks_run **, const struct flaky_stacks_opts *,
	    const char *parent, char **env);
char	*stacks_sitecustomize(void);

/* stacks_proc.c */
int	 stacks_members(pid_t pgid, pid_t root, const char *dir,
	    struct stacks_member **ret, size_t *ret_n, int *ret_all);
void	 stacks_members_free(struct stacks_member *, size_t);
int	 stacks_caught(pid_t, int sig);
char	 stacks_state(pid_t);
int	 stacks_lockwaits(pid_t, struct stacks_lockwait *, size_t max);
int	 stacks_is_go(const char *exe);

/* stacks_node.c */
int	 stacks_node(pid_t, int64_t deadline_us, atomic_int *cancel,
	    struct flaky_buf *out, char *note, size_t notelen);

/* stacks_tool.c */
int	 stacks_tool(const char *tool, int gdb, pid_t,
	    const struct stacks_lockwait *, size_t nwaits,
	    int64_t deadline_us, atomic_int *cancel, struct flaky_buf *out,
	    char *note, size_t notelen);
int	 stacks_jcmd(const char *jcmd, pid_t, int64_t deadline_us,
	    atomic_int *cancel, struct flaky_buf *out, char *note,
	    size_t notelen);
int	 stacks_python(const char *dir, pid_t, int64_t deadline_us,
	    atomic_int *cancel, struct flaky_buf *out, char *note,
	    size_t notelen);
void	 stacks_nap(void);

#endif
