/* Stack text read into threads and frames (stack_parse.c), for the fold
 * of a hung run's stacks (hang.c); not part of libflaky's interface. One
 * reader for every format a capture or a runner writes, told apart line
 * by line: Python's faulthandler and tracebacks (pytest-timeout's dump
 * too), Node's stacks, Go's goroutine dumps, the JVM's thread dump, gdb's
 * and eu-stack's backtraces, and the capture's own "flaky: lock wait:"
 * lines. Bounded: lines past STK_LINE_MAX are skipped, and at most
 * STK_THREADS_MAX threads and STK_FRAMES_MAX frames are kept. */
#ifndef FLAKY_STACK_INT_H
#define FLAKY_STACK_INT_H

#include <stddef.h>
#include <stdint.h>

#define STK_LINE_MAX	4096
#define STK_THREADS_MAX	4096
#define STK_FRAMES_MAX	65536
#define STK_LOCKS_MAX	256

enum stk_kind {
	STK_UNKNOWN = 0,
	STK_PYTHON,
	STK_NODE,
	STK_GO,
	STK_JAVA,
	STK_NATIVE,
};

/* A piece of the text: offset and length. */
struct stk_str {
	uint32_t	 off, len;
};

struct stk_frame {
	struct stk_str	 func, file;
	int		 line;		/* 0: unknown */
};

struct stk_thread {
	int		 kind;		/* enum stk_kind */
	struct stk_str	 name;		/* "MainThread", "main", "7", TID */
	struct stk_str	 state;		/* "chan receive", "WAITING", ... */
	long		 tid;		/* native thread id; 0: unknown */
	int		 current;	/* faulthandler's "Current thread" */
	int		 idle;		/* Node: no JavaScript ran */
	size_t		 first, n;	/* its frames, innermost first */
};

/* A thread waiting for a lock another holds (native: the capture's
 * lock wait lines, owner known), or one that holds one (the JVM's
 * "- locked <0x...>": hold 1), or waits for one whose holder is found
 * among the holds (the JVM's "- waiting to lock <0x...>": owner 0). */
struct stk_lock {
	long		 tid, owner;
	uint64_t	 addr;
	int		 hold;
	struct stk_str	 sym;		/* its name (gdb's symbol, the JVM's
					 * class); len 0: none */
};

struct stk_text {
	const char	*s;
	size_t		 len;
	struct stk_thread *t;
	size_t		 nt;
	struct stk_frame *f;
	size_t		 nf;
	struct stk_lock	*l;
	size_t		 nl;
	struct stk_lock	*sym;		/* gdb's names of addresses: addr,
					 * sym */
	size_t		 nsym;
	struct stk_str	 test_file;	/* the capture's "flaky: test file:" */
	struct stk_str	 test_name;	/* ... and "flaky: test name:" */
	int		 java_deadlock;	/* "Found one Java-level deadlock" */
	int		 go_deadlock;	/* "all goroutines are asleep" */
};

/* Read s[0..len) (kept, not copied: the pieces point into it). 0 or
 * -ENOMEM; text that is no stack gives no thread. */
int	 stk_parse(const char *s, size_t len, struct stk_text *);
void	 stk_free(struct stk_text *);

/* hang.c, for hang_lock.c */
struct flaky_hang;
int	 hang_thread(const struct stk_text *, const struct stk_thread *,
	    const char *dir, struct flaky_hang *);
/* hang_lock.c: a deadlock in t names the hang (1), else 0; -ENOMEM. */
int	 hang_deadlock(const struct stk_text *, const char *dir,
	    struct flaky_hang *);

#endif
