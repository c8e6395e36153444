/* Helpers of the run suites: see run_test.h. */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "run/run.h"
#include "util/util.h"
#include "run_test.h"

void
on_data(void *arg, int stream, const char *s, size_t n)
{
	struct ctx	*c = arg;

	(void)s;
	c->seen[stream] += n;
}

void
on_done(void *arg, struct flaky_proc *p)
{
	struct ctx	*c = arg;

	(void)p;
	c->done++;
}

static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct ctx	*c = arg;

	(void)fd;
	(void)what;
	c->expired = 1;
	event_base_loopbreak(c->base);
}

void
ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof *c);
	ck_assert_ptr_nonnull(c->base = event_base_new());
	ck_assert_int_eq(flaky_spawner_new(c->base, &c->sp), 0);
}

void
ctx_free(struct ctx *c)
{
	ck_assert_int_eq(flaky_spawner_running(c->sp), 0);
	ck_assert_int_eq(flaky_spawner_free(c->sp), 0);
	event_base_free(c->base);
}

/* Run the loop until *flag reaches want or the deadline passed. */
void
drive(struct ctx *c, int *flag, int want, int64_t ms)
{
	struct event	*t = evtimer_new(c->base, on_deadline, c);
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	c->expired = 0;
	evtimer_add(t, &tv);
	while (*flag < want && !c->expired)
		event_base_loop(c->base, EVLOOP_ONCE);
	event_free(t);
	ck_assert_msg(*flag >= want, "deadline of %lld ms passed",
	    (long long)ms);
}

/* Spawn argv and wait for it to end; returns the finished proc. */
struct flaky_proc *
run(struct ctx *c, struct flaky_spawn_opts *o)
{
	struct flaky_proc *p;
	char		 err[256];
	int		 before = c->done;

	ck_assert_msg(flaky_spawn(c->sp, o, on_data, on_done, c, &p, err,
	    sizeof err) == 0, "%s", err);
	drive(c, &c->done, before + 1, DEADLINE_MS);
	return p;
}

char *
output(struct flaky_proc *p, int stream)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_proc_output(p, stream, &b), 0);
	return flaky_buf_steal(&b);
}

/* Under AddressSanitizer a malloc larger than memory returns NULL, as
 * glibc's does, rather than ending the test: the suites ask for such a
 * capture bound to see a run's output meet out of memory. */
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
