/* The words of where a test hung (issue 33), for show, triage, ticket and
 * the dashboard: how often its timeouts stopped at each place, and the
 * first patch that follows (docs/triage.md, "TIMEOUT with stacks"). */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/diagnose.h"

#define SITES_SHOWN	3

/* A place: "`func` (file:line)", or "`call`". */
static void
site_words(const struct flaky_hang_site *s, struct flaky_buf *b)
{
	if (s->func != NULL) {
		flaky_buf_printf(b, "`%s`", s->func);
		if (s->file != NULL && s->line > 0)
			flaky_buf_printf(b, " (%s:%d)", s->file, s->line);
		else if (s->file != NULL)
			flaky_buf_printf(b, " (%s)", s->file);
	} else if (s->call != NULL)
		flaky_buf_printf(b, "`%s`", s->call);
	else
		flaky_buf_adds(b, "an unknown place (no frames)");
}

void
flaky_hang_words(const struct flaky_hangs *h, struct flaky_buf *b)
{
	const struct flaky_hang_site *top;
	size_t	 shown;

	if (h == NULL || h->n == 0)
		return;
	top = &h->v[0];
	if (top->kind != NULL && strcmp(top->kind, "deadlock") == 0)
		flaky_buf_adds(b, "deadlock ");
	else
		flaky_buf_adds(b, "hung ");
	flaky_buf_adds(b, "in ");
	site_words(top, b);
	if (h->runs == 1)
		flaky_buf_adds(b, " in its 1 timeout with stacks");
	else if (top->count == h->runs)
		flaky_buf_printf(b, " in all %lld timeouts", (long long)h->runs);
	else
		flaky_buf_printf(b, " in %lld of %lld timeouts",
		    (long long)top->count, (long long)h->runs);
	for (shown = 1; shown < h->n && shown < SITES_SHOWN; shown++) {
		flaky_buf_printf(b, "; %lld in ", (long long)h->v[shown].count);
		site_words(&h->v[shown], b);
	}
	if (shown < h->n)
		flaky_buf_printf(b, "; %zu more place%s", h->n - shown,
		    h->n - shown == 1 ? "" : "s");
	if (top->deadlock != NULL)
		flaky_buf_printf(b, ": %s", top->deadlock);
}

/* A sleep, not a wait for an event: time.sleep, Thread.sleep,
 * time.Sleep, nanosleep. Its hang is the clock's (the limit too tight
 * for a slow path), not a wait without a bound. */
static int
site_sleeps(const struct flaky_hang_site *s)
{
	return (s->call != NULL && strcasestr(s->call, "sleep") != NULL) ||
	    (s->code != NULL && strcasestr(s->code, "sleep") != NULL);
}

/* How a wait gets a timeout in the language of file. */
static const char *
timeout_idiom(const char *file)
{
	const char *dot = file != NULL ? strrchr(file, '.') : NULL;

	if (dot == NULL)
		return "a bound on the wait (a timeout argument, a deadline)";
	if (strcmp(dot, ".py") == 0)
		return "socket.settimeout(), queue.get(timeout=), "
		    "Event.wait(timeout), Lock.acquire(timeout=), "
		    "Thread.join(timeout), requests' timeout=";
	if (strcmp(dot, ".go") == 0)
		return "a select with time.After, or a context.WithTimeout "
		    "passed down";
	if (strcmp(dot, ".java") == 0)
		return "a timed wait: poll(timeout), await(timeout), "
		    "tryLock(timeout), join(millis)";
	if (strcmp(dot, ".js") == 0 || strcmp(dot, ".ts") == 0 ||
	    strcmp(dot, ".mjs") == 0 || strcmp(dot, ".cjs") == 0)
		return "Promise.race with a timer, AbortSignal.timeout()";
	return "pthread_mutex_timedlock(), pthread_cond_timedwait(), a "
	    "poll() timeout";
}

void
flaky_hang_patch(const struct flaky_hangs *h, struct flaky_buf *b)
{
	const struct flaky_hang_site *s;

	if (h == NULL || h->n == 0)
		return;
	s = &h->v[0];
	if (s->kind != NULL && strcmp(s->kind, "deadlock") == 0) {
		flaky_buf_adds(b, "take the locks in one order everywhere (or "
		    "hold one at a time)");
		if (s->deadlock != NULL)
			flaky_buf_printf(b, ": %s", s->deadlock);
		return;
	}
	if (s->kind != NULL && strcmp(s->kind, "idle") == 0) {
		flaky_buf_adds(b, "an awaited promise never settles and "
		    "nothing runs: give the wait a timeout (");
		flaky_buf_adds(b, timeout_idiom(".js"));
		flaky_buf_adds(b, ") so that the test fails with a message");
		return;
	}
	if (s->kind != NULL && strcmp(s->kind, "busy") == 0 &&
	    s->func != NULL) {
		flaky_buf_adds(b, "the loop in ");
		site_words(s, b);
		if (s->code != NULL)
			flaky_buf_printf(b, " (`%s`)", s->code);
		flaky_buf_adds(b, " never ends: bound it by a deadline, or "
		    "wait on the event it polls instead of spinning");
		return;
	}
	if (site_sleeps(s)) {
		flaky_buf_adds(b, "the test sleeps in ");
		site_words(s, b);
		if (s->code != NULL)
			flaky_buf_printf(b, " (`%s`)", s->code);
		flaky_buf_adds(b, " past its limit: wait on the event it sleeps "
		    "for instead of the clock, or raise the limit with a "
		    "justified bound");
		return;
	}
	if (s->func == NULL) {
		flaky_buf_adds(b, "the test waits in ");
		site_words(s, b);
		flaky_buf_adds(b, " with no frame of its own code on the "
		    "stack: give that wait a timeout where the test starts "
		    "it");
		return;
	}
	/* blocked: the wait has no bound */
	flaky_buf_adds(b, "give the wait in ");
	site_words(s, b);
	if (s->code != NULL)
		flaky_buf_printf(b, ", `%s`,", s->code);
	else if (s->call != NULL)
		flaky_buf_printf(b, " (in `%s`)", s->call);
	flaky_buf_printf(b, " a timeout (%s), so that the test fails with a "
	    "message instead of hanging until the time limit",
	    timeout_idiom(s->file));
}

void
flaky_hang_stack(const char *frames, int max, struct flaky_buf *b)
{
	const char *p = frames, *last_own = NULL;
	int	 n = 0, lines = 0;

	if (frames == NULL)
		return;
	/* up to the outermost frame of the test's own code, and one more */
	for (const char *q = frames; *q != '\0'; q += strcspn(q, "\n"),
	    q += *q == '\n') {
		lines++;
		if (q[0] == '>')
			last_own = q;
	}
	if (last_own != NULL) {
		for (const char *q = frames; q <= last_own; q++)
			n += *q == '\n';
		n += 2;
	} else
		n = max;
	if (n > max)
		n = max;
	for (int i = 0; i < n && *p != '\0'; i++) {
		size_t	 len = strcspn(p, "\n");

		flaky_buf_add(b, p, len);
		flaky_buf_addc(b, '\n');
		p += len + (p[len] == '\n');
	}
	if (*p != '\0')
		flaky_buf_printf(b, "  ... (%d more frame%s)\n", lines - n,
		    lines - n == 1 ? "" : "s");
}

/* The cause of the newest hang in the triage table's words. */
const char *
flaky_hang_cause(const struct flaky_hangs *h)
{
	const char *k;

	if (h == NULL || h->n == 0 || (k = h->v[0].kind) == NULL ||
	    site_sleeps(&h->v[0]))
		return NULL;
	if (strcmp(k, "deadlock") == 0)
		return "a deadlock: two threads each hold a lock the other "
		    "waits for";
	if (strcmp(k, "blocked") == 0)
		return "a wait with no bound whose event never came (a reply, "
		    "a lock, a message)";
	if (strcmp(k, "busy") == 0)
		return "a loop that never ends (polling for a state that "
		    "never comes)";
	if (strcmp(k, "idle") == 0)
		return "an awaited promise that never settles";
	return NULL;
}
