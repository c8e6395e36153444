/* What the first runs ended with, for analyze's "no run produced test
 * results": the reason printed, not a query to run by hand. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "run_why.h"

/* One line per run: status, exit code or signal, and the error, the
 * incomplete reason, or that the output had no test result. */
void
run_why_note(struct run_why *w, int nth, const struct flaky_run_record *r)
{
	char	*s, *nl, code[64];

	if (w->n >= RUN_WHY_MAX || r->status == FLAKY_RUN_INTERRUPTED)
		return;
	if (r->signal > 0)
		snprintf(code, sizeof code, "killed by signal %d", r->signal);
	else
		snprintf(code, sizeof code, "exit code %d", r->exit_code);
	xasprintf(&s, "run %d: %s, %s: %s", nth,
	    flaky_run_status_name(r->status), code, r->error ? r->error :
	    r->incomplete ? r->incomplete : "no test results in its output");
	if ((nl = strchr(s, '\n')) != NULL)
		*nl = '\0';
	w->line[w->n++] = s;
}

/* The lines under one warning. */
void
run_why_tell(const struct run_why *w)
{
	log_warnx("no run produced test results; the first %s:",
	    w->n == 1 ? "run" : "runs");
	for (int i = 0; i < w->n; i++)
		fprintf(stderr, "  %s\n", w->line[i]);
}

void
run_why_free(struct run_why *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->line[i]);
	w->n = 0;
}
