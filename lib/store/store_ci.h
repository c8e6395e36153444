/* Part of store.h (include that, not this): evidence from CI jobs (issue
 * 29, docs/ci.md): where a run came from, the tokens of the HTTP server,
 * uploads stored once (ci.c, tokens.c), and flips, a test that failed and
 * passed on one revision (flips.c). */
#ifndef FLAKY_STORE_CI_H
#define FLAKY_STORE_CI_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;

/* Where a run came from: a row of run_ci. Any string may be NULL;
 * attempt 0 is not known. */
struct flaky_ci_meta {
	const char	*branch;
	const char	*pr;		/* pull or merge request */
	const char	*job;		/* the CI job's name */
	const char	*job_url;
	const char	*ci;		/* github, gitlab, jenkins, ... */
	int		 attempt;	/* 1: the job's first run */
};
/* Bounds of each string (bytes), checked by flaky_ci_meta_check. */
#define FLAKY_CI_FIELD_MAX	256
#define FLAKY_CI_URL_MAX	2048
/* 0, or -EINVAL with err naming the field and what was expected: UTF-8
 * without control characters, within the bounds, attempt 0 to 10000. */
int	 flaky_ci_meta_check(const struct flaky_ci_meta *, char *err,
	    size_t errlen);
/* Set a stored run's row of run_ci with its upload (0: none), in the
 * open transaction or its own. */
int	 flaky_store_run_ci(struct flaky_store *, int64_t run_id,
	    const struct flaky_ci_meta *, int64_t upload_id, char *err,
	    size_t errlen);

/* Tokens of the HTTP server. Only a SHA-256 of each is stored; the token
 * itself is "flaky_" and 32 characters of base64url (192 random bits). */
enum flaky_token_scope {
	FLAKY_SCOPE_UPLOAD = 1,	/* POST /api/v1/uploads only */
	FLAKY_SCOPE_READ = 2,	/* the pages and GET /api/v1 */
	FLAKY_SCOPE_WRITE = 4,	/* the dashboard's actions, and read */
};
#define FLAKY_TOKEN_LEN		38	/* "flaky_" + 32 */
#define FLAKY_TOKEN_PREFIX	10	/* kept to name it: "flaky_Ab3x" */
#define FLAKY_TOKEN_HASH	65	/* hex SHA-256 and its NUL */
const char *flaky_token_scope_name(int);
/* The scope of "upload", "read", "write"; -1. */
int	 flaky_token_scope_parse(const char *);
/* The hex SHA-256 of a token into hash (FLAKY_TOKEN_HASH bytes). */
void	 flaky_token_hash(const char *token, size_t len, char *hash);

struct flaky_token_row {
	int64_t		 id;
	char		*name;
	int		 scope;
	char		*prefix;
	int64_t		 created_ms;
	int64_t		 revoked_ms;	/* 0: valid */
	int64_t		 last_used_ms;	/* 0: never (its last upload) */
};
/* A new token; *ret_token (malloc'd) is shown once and never stored.
 * -EEXIST when a valid token has that name. */
int	 flaky_store_token_create(struct flaky_store *, const char *name,
	    int scope, int64_t now_ms, char **ret_token, int64_t *ret_id,
	    char *err, size_t errlen);
/* Every token, revoked ones too, oldest first. */
int	 flaky_store_token_list(struct flaky_store *,
	    struct flaky_token_row **ret, size_t *ret_n, char *err,
	    size_t errlen);
/* Revoke the valid token of that name or prefix: -ENOENT, or -EINVAL
 * when a prefix names several. */
int	 flaky_store_token_revoke(struct flaky_store *, const char *which,
	    int64_t now_ms, char *err, size_t errlen);
/* The valid tokens' hashes, scopes and ids, for a server that checks
 * each request against them in memory (flaky_token_rows: hash in name). */
int	 flaky_store_token_hashes(struct flaky_store *,
	    struct flaky_token_row **ret, size_t *ret_n, char *err,
	    size_t errlen);
/* Record that the token was used (its upload), in the open transaction. */
int	 flaky_store_token_used(struct flaky_store *, int64_t token_id,
	    int64_t now_ms, char *err, size_t errlen);
void	 flaky_token_rows_free(struct flaky_token_row *, size_t);

/* Uploads, each stored once by its key (an Idempotency-Key, or the hash
 * of its content with the target, job and attempt). */
/* The upload of that key: 1 with *ret_id and its runs' ids (malloc'd,
 * oldest first), 0 when there is none, 2 when it is being stored (by a
 * writer that commits in parts). One whose writer is gone is forgotten
 * (0). */
int	 flaky_store_upload_find(struct flaky_store *, const char *key,
	    int64_t *ret_id, int64_t **ret_runs, size_t *ret_n, char *err,
	    size_t errlen);
/* A new upload row in the open transaction: -EEXIST when its key is
 * there (another request stored it first; roll back and find it). */
int	 flaky_store_upload_add(struct flaky_store *, const char *key,
	    int64_t token_id, int64_t received_ms, int64_t bytes, int files,
	    int64_t *ret_id, char *err, size_t errlen);
/* The upload is whole (uploads.stored_ms), in the open transaction:
 * -ESTALE when its row went meanwhile. */
int	 flaky_store_upload_done(struct flaky_store *, int64_t id, int64_t ms,
	    char *err, size_t errlen);
/* An upload committed in parts that failed: its row goes, an unfinished
 * run of it is interrupted (its own transaction). */
int	 flaky_store_upload_abandon(struct flaky_store *, int64_t id, char *err,
	    size_t errlen);

/* What the store knows of the tests that failed in these runs (an
 * upload's), each test once: its counted runs and failures in the window
 * (the runs themselves included), quarantine, and how many revisions it
 * flipped on since since_ms. */
struct flaky_known {
	int64_t		 test_id;
	char		*test, *target;
	int64_t		 runs, failures, flips;
	int		 quarantined;
	char		*ticket, *reason;	/* the quarantine's, or NULL */
};
int	 flaky_store_known(struct flaky_store *, const int64_t *runs,
	    size_t nruns, int64_t since_ms, int64_t until_ms,
	    struct flaky_known **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_known_free(struct flaky_known *, size_t);

/* Flips (flips.c): the tests of a stored run that failed at its revision
 * in some counted runs and passed in others. Called by the writes of a
 * run (flaky_store_run_finish, ingest) in their transaction, for a
 * counted run (complete, not alone) with a revision. */
int	 store_flips_run(struct flaky_store *, int64_t run_id,
	    int64_t target_id, const char *revision, int64_t started_ms,
	    int64_t failures, char *err, size_t errlen);

/* A test's flips in a window: each revision where it failed and passed,
 * newest first, with a failed and a passed run and their jobs. */
struct flaky_flip {
	char		*revision;
	int64_t		 fails, passes;
	int64_t		 first_ms, last_ms;
	int64_t		 fail_run, pass_run;
	char		*fail_job, *pass_job;	/* NULL: not from CI */
	int		 fail_attempt, pass_attempt;	/* 0: not known */
};
int	 flaky_store_test_flips(struct flaky_store *, int64_t test_id,
	    int64_t since_ms, int64_t until_ms, struct flaky_flip **ret,
	    size_t *ret_n, char *err, size_t errlen);
/* How many revisions each test flipped on in a window, for the tests of
 * a target (0: every target): test ids and counts, ordered by test id. */
struct flaky_flip_count {
	int64_t		 test_id;
	int64_t		 revisions;
	int64_t		 last_ms;
};
int	 flaky_store_flip_counts(struct flaky_store *, int64_t target_id,
	    int64_t since_ms, int64_t until_ms,
	    struct flaky_flip_count **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_flips_free(struct flaky_flip *, size_t);

/* The tests a target's branch knows (issue 30, ci_tests.c): every test
 * its newest max_runs runs reported, runs with no branch recorded
 * counting as the branch's; flakyctl ci --new-tests calls a test none of
 * them reported new. names sorted, each once; runs: how many runs there
 * were (0: none to compare with). A target with no run: 0, none. */
struct flaky_branch_tests {
	char		**names;
	size_t		  n;
	int		  runs;
};
#define FLAKY_BRANCH_RUNS	50
int	 flaky_store_branch_tests(struct flaky_store *, const char *target,
	    const char *branch, int max_runs, struct flaky_branch_tests *,
	    char *err, size_t errlen);
/* Is name among them (bsearch)? */
int	 flaky_branch_tests_has(const struct flaky_branch_tests *,
	    const char *name);
void	 flaky_branch_tests_free(struct flaky_branch_tests *);

#endif
