/* Part of store.h (include that, not this): the stacks of a hung run
 * (issue 33, docs/runners.md "Stacks of a hung run"). lib/run takes them
 * before a run is killed at its time limit, lib/diagnose folds them into
 * where the run was stuck, and the store keeps both with the run: tables
 * run_stacks and stack_dumps (stacks.c, docs/schema.md). */
#ifndef FLAKY_STORE_STACKS_H
#define FLAKY_STORE_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;
struct flaky_buf;

/* What one process of the run's group gave. */
struct flaky_stack_dump {
	int		 pid, ppid;
	char		 runtime[12];	/* python, node, go, java, native */
	char		 tool[16];	/* faulthandler, inspector, sigquit,
					 * gdb, eu-stack; "" when none ran */
	char		*command;	/* its command line, cut; or NULL */
	char		*text;		/* the stacks as taken; NULL: none */
	size_t		 len;
	int64_t		 ms;		/* what taking them cost */
	char		*note;		/* why none, or what was cut; NULL */
};

/* Where a hung run was stuck: the fold of its stacks (lib/diagnose/
 * hang.c). Every string may be NULL. */
struct flaky_hang {
	char		*kind;		/* deadlock, blocked, busy, idle */
	char		*func;		/* the innermost frame of the test's
					 * own code: its function, */
	char		*file;		/* its file (relative to the run's
					 * directory when under it), */
	int		 line;		/* its line (0: unknown) */
	char		*call;		/* the frame inside that one: the
					 * call it waits in (Go: the
					 * goroutine's state) */
	char		*code;		/* the source line at file:line */
	char		*site;		/* the key runs are grouped by: the
					 * function and file, no line */
	char		*deadlock;	/* the cycle in words, or NULL */
	char		*frames;	/* that thread's frames, innermost
					 * first, one "func (file:line)" a
					 * line, bounded */
	char		*thread;	/* "MainThread", "goroutine 7", ... */
	int		 pid;		/* of its process; 0: none */
	char		*test;		/* the test its runner ran, as the
					 * runner's id, when the stacks say
					 * (Jest's); not stored: test_id */
};

/* A capture: one dump per process of the group, in the order taken. */
struct flaky_stacks {
	struct flaky_stack_dump *v;
	size_t		 n;
	int64_t		 ms;		/* the whole capture */
	int64_t		 bound_ms;	/* its bound */
	int		 procs;		/* processes the group had */
	char		*note;		/* what the bound cut, or NULL */
	struct flaky_hang hang;		/* the fold (the pipeline's) */
	/* The test running at the kill, as the results name it (the
	 * pipeline's, from the TIMEOUT failure); NULL: none known. */
	const char	*test;
	char		*test_name;	/* read back: the test's name */
};

void	 flaky_stacks_free(struct flaky_stacks *);
void	 flaky_hang_clear(struct flaky_hang *);

/* Bounds of what is stored (the capture keeps to its own, lower ones). */
#define FLAKY_STACKS_STORE_BYTES	(1024 * 1024)	/* text per dump */
#define FLAKY_HANG_FRAMES_BYTES		4096	/* run_stacks.frames */

/* Write a run's stacks (rec->stacks) in the open transaction of
 * flaky_store_run_finish: its row of run_stacks and one row of
 * stack_dumps per process. 0 or a negative errno with err filled. */
struct flaky_run_record;
struct flaky_results;
int	 store_stacks_write(struct flaky_store *,
	    const struct flaky_run_record *, const struct flaky_results *,
	    char *err, size_t errlen);

/* A run's stacks as stored (show, the run page, /api/v1/run/ID): NULL
 * in *ret when it has none. */
int	 flaky_store_run_stacks(struct flaky_store *, int64_t run_id,
	    struct flaky_stacks **ret, char *err, size_t errlen);

/* Where a test hung, over the window of q: each distinct place (the
 * site, else the call) with how many of its stored timeouts stopped
 * there, most first. */
struct flaky_hang_site {
	char		*func, *file;	/* NULL when only the call is known */
	int		 line;		/* the newest run's */
	char		*call;
	char		*code;		/* the newest run's source line */
	char		*kind;
	char		*deadlock;	/* the newest run's, if any */
	int64_t		 count;
	int64_t		 run_id;	/* the newest run stopped there */
};
struct flaky_hangs {
	struct flaky_hang_site *v;
	size_t		 n;
	int64_t		 runs;		/* timeouts with stacks, in all */
	int64_t		 capture_ms_median, capture_ms_max;
	char		*frames;	/* the newest run's hung thread */
	int64_t		 newest_run;
};
int	 flaky_store_test_hangs(struct flaky_store *, int64_t test_id,
	    const struct flaky_query *, struct flaky_hangs *ret,
	    char *err, size_t errlen);
void	 flaky_hangs_clear(struct flaky_hangs *);

#endif
