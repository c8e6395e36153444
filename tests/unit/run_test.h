/* Helpers of the run suites (run_test.c): a spawner on its own event
 * loop, driven until a run's callback fired or a deadline passed. */
#ifndef FLAKY_TEST_RUN_TEST_H
#define FLAKY_TEST_RUN_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "run/run.h"

#define DEADLINE_MS	20000

/* A capture bound no malloc can give: each stream's head and tail are an
 * eighth of the address space. The allocator refuses at once. */
#define CAPTURE_NO_MEMORY	(SIZE_MAX / 2)

/* sh: wait until process $p has its own session (setsid has run), so that
 * it has left the run's group before the run ends; else the group kill at
 * the reap may end it first, and a test of escapees would race. */
#define ESCAPED \
	"until [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = $p ]; do :; done; "

struct ctx {
	struct event_base	*base;
	struct flaky_spawner	*sp;
	int			 done;		/* runs finished */
	int			 expired;
	uint64_t		 seen[2];	/* bytes through data_cb */
};

void	 on_data(void *arg, int stream, const char *s, size_t n);
void	 on_done(void *arg, struct flaky_proc *p);
void	 ctx_init(struct ctx *c);
void	 ctx_free(struct ctx *c);
/* Run the loop until *flag reaches want or the deadline passed. */
void	 drive(struct ctx *c, int *flag, int want, int64_t ms);
/* Spawn and wait for it to end; returns the finished proc. */
struct flaky_proc *run(struct ctx *c, struct flaky_spawn_opts *o);
/* The kept output of a stream (malloc'd). */
char	*output(struct flaky_proc *p, int stream);

#endif
