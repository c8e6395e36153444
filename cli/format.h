/* Output for CI systems: GitHub workflow commands with a step summary
 * (format_github.c), and the analysis as JUnit XML (format_junit.c).
 * docs/ci.md says what each prints and why. */
#ifndef FLAKYCTL_FORMAT_H
#define FLAKYCTL_FORMAT_H

#include <stdio.h>

#include "evidence.h"
#include "flakyctl.h"
#include "output.h"
#include "store/store.h"

/* --format github of analyze and report: one ::error (critical, broken)
 * or ::warning (warning) per test with its file and line where known, a
 * plain summary line, and a Markdown summary appended to
 * $GITHUB_STEP_SUMMARY when it is set. */
int	 print_github(const struct report_head *,
	    const struct report_evidence *, const struct flaky_test_row *,
	    size_t);
/* One workflow command: "::LEVEL file=F,line=L,title=T::message" for a
 * test (file and line when known; ev may be NULL), what says why. */
void	 github_annotate(FILE *, const char *level, const char *what,
	    const struct flaky_test_row *, const struct report_evidence *ev);
/* The file of a test id (relative to where flakyctl runs) and the line
 * of its definition (0: not found); -1 when the id names no file. */
int	 github_locate_id(const char *id, char *file, size_t len, int *line);
/* s as one Markdown table cell: pipes escaped, one line. */
void	 github_md_cell(FILE *, const char *s);
/* s escaped for a workflow command's message, or (prop) a property. */
void	 github_escape(FILE *, const char *s, int prop);
/* "::LEVEL title=T::message", both escaped as GitHub reads them. */
void	 github_command(FILE *, const char *level, const char *title,
	    const char *message);
/* $GITHUB_STEP_SUMMARY opened to append, or NULL when unset (a failure to
 * open it is said on stderr: the step goes on). */
FILE	*github_summary_open(void);
/* The Markdown table of the rows above noise (for the step summary). */
void	 github_summary_rows(FILE *, const struct flaky_test_row *, size_t,
	    const struct flaky_history *);

/* s as XML text (attr 0) or an attribute value (attr 1): markup escaped,
 * characters XML does not allow (controls, invalid UTF-8) as U+FFFD, and
 * in attributes tabs and newlines as references (ci's JUnit too). */
void	 junit_escape(FILE *, const char *s, int attr);
/* --format junit of analyze and report: one <testsuite> per target, one
 * <testcase> per test; critical, warning and broken tests fail. */
int	 print_junit(const struct report_head *,
	    const struct report_evidence *, const struct flaky_test_row *,
	    size_t);

#endif
