/* flakyctl ci (issue 30, docs/ci.md): a CI step's test command run once
 * as analyze runs it, its failed tests retried alone, its new tests rerun,
 * every attempt stored or uploaded, and an exit that never hides a test
 * failing every attempt. The files: ci.c (options, the order of things),
 * ci_run.c (runs on the pipeline, what makes evidence incomplete),
 * ci_new.c (new tests, quarantine, branches), ci_server.c (a server's
 * lists and the upload), ci_print.c (table, JSON, GitHub), ci_junit.c
 * (JUnit: the report and each attempt's file). */
#ifndef FLAKYCTL_CI_H
#define FLAKYCTL_CI_H

#include <stdint.h>
#include <stdio.h>

#include "ingest/ingest.h"
#include "pipeline/pipeline.h"
#include "run/run.h"
#include "store/store.h"

#define CI_MAX_RETRIES		20
#define CI_MAX_NEW_RUNS		1000
#define CI_BUDGET_MIN_MS	10000	/* the default budget's floor */
#define CI_WINDOW_DAYS		30	/* of what is known of a test */

/* One run of the call: the first (round 0) or a round of retries. Its
 * results are copied when it ends: the pipeline frees its run once it is
 * stored. id is 0 until it is stored; selected 0 for the suite; the
 * strings NULL when there is nothing to say. */
struct ci_run {
	int		 round;
	int64_t		 id;
	int		 status;	/* enum flaky_run_status */
	int		 exit_code, signal;
	int64_t		 started_ms;
	int64_t		 wall_us;	/* monotonic */
	int		 selected;	/* tests asked for */
	char		*incomplete;	/* the parser's reason */
	char		*error;		/* why it did not start */
	struct flaky_results res;
	int		 ended;
};

/* What the store or the server knew of a failed test (flaky_known). */
struct ci_known {
	char		*test;
	int64_t		 runs, failures, flips;
	int		 quarantined;
	char		*ticket;
};

/* The call: its options, where it runs, its runs and what it decided.
 * server NULL: the database; tmpdir: an upload's private database;
 * changed: the files changed since the merge base (sorted), go_changed
 * the go test names in them; quarantined: test ids (sorted). */
struct ci {
	struct ctl	*ctl;
	int		 retries, new_runs;
	int64_t		 budget_ms;	/* 0: the default */
	const char	*server;
	int		 http;		/* server is http(s):// */
	const char	*quarantine_file, *default_branch;
	const char	*token_file, *read_token_file, *ca_file;
	const char	*target_arg, *rev_arg;
	struct flaky_ci_meta m;
	struct flaky_ci_env env;
	struct flaky_command cmd;
	const char	*dir;
	char		*target, *command, *revision, *branch;
	char		*tmpdir;
	struct event_base *base;
	struct flaky_spawner *sp;
	struct flaky_store *store;
	struct flaky_pipeline *pl;
	struct flaky_classifier *cls;
	struct flaky_job job;
	struct flaky_run *live;
	struct ci_run	*runs;
	int		 nruns, maxruns;
	int		 signal;
	int		 store_failed;
	struct flaky_retry retry;
	struct flaky_branch_tests known_tests;
	int		 have_known;
	char		**changed, **go_changed, **quarantined;
	size_t		 nchanged, ngo_changed, nquarantined;
	struct ci_known	*known;
	size_t		 nknown;
	const char	*no_retry_why;	/* why no retry ran */
	const char	*stopped;	/* why the rounds stopped */
	char		*incomplete;	/* exit 2: why */
	int64_t		 upload_id;
	int		 exit;
	int64_t		 first_wall_us, retry_wall_us, budget_used_ms;
};

/* ci_run.c: the pipeline and its runs. */
int	 ci_runs_open(struct ci *);
void	 ci_runs_close(struct ci *);
/* Run argv/envp (selected tests, 0: the suite) as run round; the run
 * ends before it returns. 0, or -1 when it could not start (c->runs
 * has it all the same, status error). */
int	 ci_run_one(struct ci *, char *const *argv, char *const *envp,
	    int selected, int round);
/* Why a run's evidence is incomplete (a crash, a timeout, an abort, the
 * parser's reason, an exit code that disagrees with its results), or
 * NULL: malloc'd. */
char	*ci_run_problem(const struct ci *, const struct ci_run *);
/* Every run stored (the pipeline flushed); -1 after saying why. */
int	 ci_runs_flush(struct ci *);

/* ci_new.c: the branches, the new tests, the quarantine. */
void	 ci_branches(struct ci *);
/* Read the quarantine and (--new-tests) the known tests and the changed
 * files, before the first run; -1 after saying why. */
int	 ci_lists(struct ci *);
int	 ci_is_new(const char *test, void *arg);
int	 ci_is_quarantined(const char *test, void *arg);
const struct ci_known *ci_known_of(const struct ci *, const char *test);
void	 ci_lists_free(struct ci *);
/* A sorted copy of the names v[0..n) into c's list (each once). */
void	 ci_sort_unique(char **v, size_t *n);

/* ci_server.c: a server's lists and the upload of every attempt. */
/* GET path?query of the server, its JSON body into *body (malloc'd):
 * 0 with *status, or -1 with err when no answer came. */
int	 ci_server_get(struct ci *, const char *path, const char *query,
	    int *status, char **body, char *err, size_t errlen);
/* Upload each complete run as a JUnit file, one upload; what the server
 * knew of the failed tests into c->known. 0 or -1 (c->incomplete set). */
int	 ci_upload(struct ci *);
/* The local database's: run_ci rows and what it knows. 0 or -1. */
int	 ci_store_local(struct ci *);

/* ci_junit.c */
/* One run's results as a JUnit file at path, each test named by its id
 * (classname empty: flakyctl ingest reads the id back as it is). */
int	 ci_junit_attempt(const struct ci *, const struct ci_run *,
	    const char *path, char *err, size_t errlen);
/* --format junit: every test of the first run, retried ones with
 * Surefire's flakyFailure and rerunFailure. */
void	 ci_junit_report(const struct ci *, FILE *);

/* ci_print.c */
/* The verdict lines and the last line (table), or the JSON, or GitHub's
 * workflow commands and step summary; to out. */
void	 ci_print(const struct ci *, FILE *out);
/* A failed test's line: "flaky: ID: failed, then passed on retry 1 of
 * 3 (known: ...)", into b. */
struct flaky_buf;
void	 ci_verdict_words(const struct ci *,
	    const struct flaky_retry_test *, int verdict, struct flaky_buf *);
/* The first failure message of test in the call's runs, or NULL. */
const char *ci_first_message(const struct ci *, const char *test);

#endif
