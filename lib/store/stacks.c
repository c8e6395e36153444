/* The stacks of hung runs in the database (issue 33): a row of run_stacks
 * per run whose stacks were taken (where it was stuck, the fold of
 * lib/diagnose/hang.c, and the test running at the kill) and a row of
 * stack_dumps per process, its text compressed as output is (sqlar's
 * format; raw on PostgreSQL, which compresses it itself). */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Free what a hang's fold holds (not the struct). */
void
flaky_hang_clear(struct flaky_hang *h)
{
	if (h == NULL)
		return;
	free(h->kind);
	free(h->func);
	free(h->file);
	free(h->call);
	free(h->site);
	free(h->deadlock);
	free(h->frames);
	free(h->thread);
	memset(h, 0, sizeof *h);
}

/* Free a capture; NULL is fine. */
void
flaky_stacks_free(struct flaky_stacks *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].command);
		free(s->v[i].text);
		free(s->v[i].note);
	}
	free(s->v);
	free(s->note);
	flaky_hang_clear(&s->hang);
	free(s);
}
