/* The progress line of analyze and confirm. Nothing of it reaches a pipe
 * or a file: it is drawn only when standard error is a terminal, and a log
 * line erases it first (log.c's hook), so that the two never share a
 * line. */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "progress.h"
#include "table.h"

/* The line on the screen, for the log hook; one at a time. */
static struct progress	*progress_shown;

/* Before a log line: take the progress line off the screen (the next
 * tick draws it again under the log line). */
static void
progress_erase(void)
{
	if (progress_shown != NULL && progress_shown->drawn) {
		fputs("\r\033[K", stderr);
		progress_shown->drawn = 0;
	}
}

void
progress_clock(struct flaky_buf *b, int64_t us)
{
	long long s = us / 1000000;

	if (s >= 3600)
		flaky_buf_printf(b, "%lld:%02lld:%02lld", s / 3600,
		    s / 60 % 60, s % 60);
	else
		flaky_buf_printf(b, "%lld:%02lld", s / 60, s % 60);
}

/* The timer: the clock moves even while no run ends. */
static void
progress_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	progress_draw(arg);
}

void
progress_start(struct progress *p, struct event_base *base, progress_fn fn,
    void *arg)
{
	struct timeval	 one = { 1, 0 };

	memset(p, 0, sizeof *p);
	p->words = fn;
	p->arg = arg;
	p->t0_us = flaky_mono_us();
	if (!(p->on = isatty(STDERR_FILENO)))
		return;
	if ((p->tick = event_new(base, -1, EV_PERSIST, progress_tick, p)) ==
	    NULL) {
		p->on = 0;
		return;
	}
	event_add(p->tick, &one);
	progress_shown = p;
	log_set_hook(progress_erase);
}

void
progress_times(struct progress *p, struct flaky_buf *b)
{
	int64_t	 el = flaky_mono_us() - p->t0_us;

	progress_clock(b, el);
	flaky_buf_adds(b, " elapsed");
	if (p->done > 0 && p->total > p->done) {
		flaky_buf_adds(b, ", ~");
		progress_clock(b, (int64_t)((double)el / (double)p->done *
		    (double)(p->total - p->done)));
		flaky_buf_adds(b, " left");
	}
}

void
progress_draw(struct progress *p)
{
	struct flaky_buf b, line;
	size_t		 cols;

	if (!p->on)
		return;
	flaky_buf_init(&b);
	flaky_buf_init(&line);
	p->words(&b, p->arg);
	/* one column spare: a full last column would wrap the cursor */
	cols = table_columns(STDERR_FILENO);
	table_cut(&line, flaky_buf_cstr(&b), cols > 1 ? cols - 1 : 79);
	fprintf(stderr, "\r%s\033[K", flaky_buf_cstr(&line));
	fflush(stderr);
	p->drawn = 1;
	flaky_buf_free(&b);
	flaky_buf_free(&line);
}

void
progress_end(struct progress *p)
{
	if (!p->on)
		return;
	if (p->tick != NULL)
		event_free(p->tick);
	p->tick = NULL;
	progress_erase();
	fflush(stderr);
	log_set_hook(NULL);
	progress_shown = NULL;
	p->on = 0;
}
