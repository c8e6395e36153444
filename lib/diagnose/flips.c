/* Flips in words (issue 29): a test that failed and passed on one
 * revision, as report, show, triage, the ticket and the dashboard say it.
 * The store keeps only such revisions (lib/store/flips.c): a test that
 * failed in every run of a revision and passed at the next one is a break
 * and its fix, and nothing here can call it a flip. */
#include "buildconf.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "util/util.h"

/* A revision, short when it is a long hex hash. */
void
flaky_flip_revision(const char *rev, struct flaky_buf *b)
{
	size_t	 n = 0;

	if (rev == NULL) {
		flaky_buf_adds(b, "-");
		return;
	}
	while (isxdigit((unsigned char)rev[n]))
		n++;
	if (rev[n] == '\0' && n >= 12)
		flaky_buf_add(b, rev, 7);
	else
		flaky_buf_adds(b, rev);
}

/* "in 14 days", or "since the first run" for an open window. */
static void
window_words(int64_t since, int64_t until, struct flaky_buf *b)
{
	int64_t	 days;

	if (since == INT64_MIN || until == INT64_MAX) {
		flaky_buf_adds(b, "since the first run");
		return;
	}
	days = (until - since + FLAKY_DAY_MS - 1) / FLAKY_DAY_MS;
	flaky_buf_printf(b, "in %" PRId64 " day%s", days, flaky_plural(days));
}

void
flaky_flip_count_words(int64_t revisions, int64_t since, int64_t until,
    struct flaky_buf *b)
{
	if (revisions <= 0)
		return;
	flaky_buf_printf(b, "flipped on %" PRId64 " revision%s ", revisions,
	    flaky_plural(revisions));
	window_words(since, until, b);
}

/* "job unit#2" or "run 12": where one outcome was seen. with_word 0
 * leaves out "job" when the other side already said it. */
static void
where_words(const char *job, int attempt, int64_t run, int with_word,
    struct flaky_buf *b)
{
	if (job == NULL) {
		flaky_buf_printf(b, "run %" PRId64, run);
		return;
	}
	flaky_buf_printf(b, "%s%s", with_word ? "job " : "", job);
	if (attempt > 0)
		flaky_buf_printf(b, "#%d", attempt);
}

void
flaky_flip_words(const struct flaky_flip *v, size_t n, int64_t since,
    int64_t until, size_t details, struct flaky_buf *b)
{
	if (n == 0)
		return;
	flaky_flip_count_words((int64_t)n, since, until, b);
	for (size_t i = 0; i < n && i < details; i++) {
		const struct flaky_flip *f = &v[i];

		flaky_buf_adds(b, i == 0 ? ": " : "; ");
		flaky_flip_revision(f->revision, b);
		flaky_buf_adds(b, " failed in ");
		where_words(f->fail_job, f->fail_attempt, f->fail_run, 1, b);
		flaky_buf_adds(b, ", passed in ");
		where_words(f->pass_job, f->pass_attempt, f->pass_run,
		    f->fail_job == NULL, b);
	}
	if (n > details)
		flaky_buf_printf(b, "; and %zu more", n - details);
}
