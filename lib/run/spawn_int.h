/* Shared by the parts of the spawner, not part of libflaky's interface:
 * spawn.c (the process, its pipes, reaping, the time limit), capture.c (the
 * kept part of the output), tmpdir.c (each run's TMPDIR: the helper thread
 * and reuse) and child.c (the child between clone and exec). */
#ifndef FLAKY_SPAWN_INT_H
#define FLAKY_SPAWN_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "run/run.h"

struct event;
struct event_base;
struct stacks_run;

/* A run's TMPDIR as the run found it: the next run may take it over when it
 * is still so (reuse_take). */
struct dir_seen {
	char		*path;
	dev_t		 dev;
	ino_t		 ino;
	struct timespec	 mtim, ctim;
};

/* The kept part of one stream: a head and a ring for the tail. */
struct capture {
	char		*head;
	size_t		 head_len, head_cap;
	char		*tail;
	size_t		 tail_pos, tail_len, tail_cap;
	uint64_t	 total;
	int		 oom;		/* a part could not be allocated */
};

struct flaky_proc {
	struct flaky_spawner	*sp;
	struct flaky_proc	*next;
	struct flaky_proc_info	 info;
	pid_t			 pid;		/* 0 once reaped */
	int			 pidfd;		/* -1: none, SIGCHLD tells */
	struct event		*pidfd_ev;
	int			 status;	/* wait status */
	int			 rfd[2];	/* our read ends, -1 at EOF */
	struct event		*rev[2];
	int			 wfd[2];	/* our copies of the write ends */
	struct capture		 cap[2];
	struct event		*timeout_ev;	/* time limit */
	struct event		*kill_ev;	/* grace, then SIGKILL */
	struct event		*drain_ev;	/* pipes after the reap */
	int64_t			 start_mono;
	int64_t			 grace_ms;
	int			 ending;	/* 0, TIMEOUT or STOPPED */
	int			 done;
	char			*tmpdir;
	int			 tmp_here;	/* on tmpfs: removed in place */
	int			 more;		/* runs follow (opts) */
	int			 tmp_kept;	/* TMPDIR handed to the spawner */
	int			 seen;		/* tmp_seen holds the TMPDIR */
	struct dir_seen		 tmp_seen;	/* ... at the start, .path unset */
	flaky_proc_data_cb	 data_cb;
	flaky_proc_done_cb	 done_cb;
	void			*arg;
	struct stacks_run	*stk;		/* stacks at the limit, or NULL */
	int			 capturing;	/* stk's capture runs: no kill,
						 * no end yet */
};

/* Run directories off the event loop. A helper thread removes the TMPDIRs
 * of ended runs and, while the caller says more runs follow, keeps a few
 * empty ones made ahead of time: on ext4 an rmdir is a journal update and,
 * mounted with discard, a synchronous discard, and neither should stand
 * between the end of one run and the start of the next. The thread is woken
 * once per few runs, not per directory: on a virtual machine each wake-up
 * of another CPU is an interrupt the hypervisor delivers. Started on first
 * use. */
#define TIDY_SPARE	32	/* made ahead, at most */
#define TIDY_BATCH	16	/* wake the thread at this many to do */

struct tidy {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	pthread_t	 thread;
	int		 started;
	int		 stop;
	char		**gone;		/* to remove */
	size_t		 ngone, capgone;
	char		*want;		/* keep spares under this parent */
	size_t		 wantn;		/* ... this many */
	char		*spare[TIDY_SPARE];
	size_t		 nspare;
};

struct flaky_spawner {
	struct event_base	*base;
	struct event		*sigchld;
	int			 sigchld_on;
	char			*tmpfs_parent;	/* the last parent asked about */
	int			 tmpfs;		/* ... and whether it is tmpfs */
	struct flaky_proc	*procs;		/* live ones */
	int			 running;
	int			 subreaper;	/* asked once */
	struct tidy		 tidy;
	struct dir_seen		 reuse;		/* the last run's TMPDIR */
	int			 devnull;	/* every run's stdin */
	void			*stack;		/* the children's, before exec */
	size_t			 stack_len;
	int			 maxfd;		/* RLIMIT_NOFILE, for old kernels */
	int			 reuse_failed;	/* make spares from then on */
	char			 rbuf[65536];	/* one read of a pipe */
};

/* What the child does between clone and exec, on data the parent made
 * ready: system calls only. It shares our memory with the other threads
 * still running (the tidy thread): no allocation, no lock. */
struct child_plan {
	const char	*path;
	char *const	*argv;
	char *const	*envp;
	const char	*dir;		/* NULL: stay in ours */
	int		 fd[3];		/* to become 0, 1 and 2; each above 2 */
	int		 maxfd;		/* closed up to, without close_range */
	volatile int	 err;		/* what failed, 0 when it exec'd */
};

/* capture.c */
int	 capture_init(struct capture *, size_t max);
int	 capture_feed(struct capture *, const char *, size_t);
void	 capture_free(struct capture *);
int	 capture_output(const struct capture *, struct flaky_buf *);

/* tmpdir.c */
void	 remove_tree(const char *path);
char	*make_run_dir(const char *parent);
int	 on_tmpfs(struct flaky_spawner *, const char *parent);
void	 tidy_later(struct flaky_spawner *, char *path);
char	*tidy_take(struct flaky_spawner *, const char *parent, int more);
void	 tidy_drain(struct flaky_spawner *);
int	 dir_seen_read(const char *path, struct dir_seen *);
void	 reuse_keep(struct flaky_proc *);
char	*reuse_take(struct flaky_spawner *, const char *parent, int here);

/* child.c */
int	 is_cwd(const struct stat *);
char	**make_env(char *const *envp, const char *tmpdir);
void	 free_env(char **);
const char *env_get(char *const *envp, const char *name);
pid_t	 child_start(struct flaky_spawner *, struct child_plan *);
int	 above_streams(int *);

/* spawn.c */
void	 sigchld_need(struct flaky_spawner *);

#endif
