/* A progress line on standard error for the commands that run tests
 * (analyze, confirm): drawn from the start, redrawn every second with \r
 * and after each run, with the time elapsed and, once a run has ended, an
 * estimate of the time left; only when standard error is a terminal. */
#ifndef FLAKYCTL_PROGRESS_H
#define FLAKYCTL_PROGRESS_H

#include <stdint.h>

#include "util/util.h"

struct event;
struct event_base;

/* The command's words of the line ("run 3/50 · 0:42 elapsed, ~9:10 left
 * · 1 running"), with progress_times() where the times go. */
typedef void	(*progress_fn)(struct flaky_buf *, void *arg);

struct progress {
	struct event	*tick;
	progress_fn	 words;
	void		*arg;
	int		 on;		/* stderr is a terminal */
	int		 drawn;		/* a line is on the screen */
	int64_t		 t0_us;
	/* Set by the command: units done of total (0: unknown), for the
	 * estimate of the time left. */
	long long	 done, total;
};

/* Start the clock; the line is drawn only when stderr is a terminal. */
void	 progress_start(struct progress *, struct event_base *, progress_fn,
	    void *arg);
/* Draw the line now (after a run started or ended). */
void	 progress_draw(struct progress *);
/* Erase the line and stop the timer, for good. */
void	 progress_end(struct progress *);
/* "0:42 elapsed", and ", ~9:10 left" once done > 0 of total. */
void	 progress_times(struct progress *, struct flaky_buf *);
/* "0:42", "12:05", "1:02:03" */
void	 progress_clock(struct flaky_buf *, int64_t us);

#endif
