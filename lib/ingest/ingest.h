/* Results produced elsewhere stored as runs (flakyctl ingest, the upload
 * endpoint of flakyd and flakyctl serve, flakyctl upload to a file or a
 * server): JUnit XML of any size, parsed and stored as it is read, or raw
 * runner output. Each file is read twice in chunks: once for its hash, so
 * that content stored before is skipped before any work, then to store
 * it. All in the caller's transaction (flaky_store_begin): a batch lands
 * whole or not at all. */
#ifndef FLAKY_INGEST_H
#define FLAKY_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/store.h"

struct flaky_classifier;

/* A file larger than this is refused, JUnit or raw output: no CI report
 * needs more. */
#define FLAKY_INGEST_MAX	(256L * 1024 * 1024)
/* The buffer the calls read with (the caller's, reused). */
#define FLAKY_INGEST_CHUNK	(64 * 1024)

/* What the files of one batch share. */
struct flaky_ingest {
	struct flaky_store	*store;
	const struct flaky_classifier *cls;
	const char		*target;
	int64_t			 target_id;
	int64_t			 at_ms;		/* -1: the file's timestamps,
						 * else now_ms */
	int64_t			 now_ms;
	const char		*revision;
	const char		*box;		/* NULL: the store's */
	/* An upload's: where it came from (run_ci), its row (uploads.id,
	 * 0: none), and what its content hash also covers (the job and its
	 * attempt: the same file from two jobs is two runs). */
	const struct flaky_ci_meta *ci;
	int64_t			 upload_id;
	const char		*hash_salt;
	/* Called after each result of a JUnit file is stored (NULL: never),
	 * with the run being stored: an upload's writer may commit there
	 * (upload.c). Non-zero fails the file with err. */
	int			(*yield)(void *, char *err, size_t errlen);
	void			*yield_arg;
};

/* One file: its path (or an open fd, with path naming it in messages),
 * and once stored what became of it. */
struct flaky_ingest_file {
	const char	*path;
	int		 fd;		/* -1: open path */
	int		 own_fd;	/* close fd when done */
	int		 junit;		/* 1 JUnit, 0 raw, -1 not known */
	off_t		 size;		/* bytes hashed */
	uint64_t	 h;
	char		 hash[48];	/* runs.content_hash */
	/* The outcome. */
	int64_t		 run_id;
	int		 duplicate;	/* stored before as run_id */
	size_t		 tests, attempts;
	int64_t		 failed;
	int64_t		 when_ms;
	/* Why a call failed: 1 the store's error (a refused file is 0). */
	int		 store_failed;
};

/* Open f (unless it has an fd) and hash it, within FLAKY_INGEST_MAX:
 * nothing is parsed or stored. buf: FLAKY_INGEST_CHUNK bytes. 0, or a
 * negative errno with err ("PATH: expected at most 256 MiB"). */
int	 flaky_ingest_hash(const struct flaky_ingest *,
	    struct flaky_ingest_file *, char *buf, char *err, size_t errlen);
/* Store a hashed file as one run in the open transaction, unless a run
 * of its hash is there (f->duplicate, f->run_id that run). The bytes must
 * be the ones hashed ("changed while it was read"). 0, or a negative
 * errno with err and f->store_failed. */
int	 flaky_ingest_store(const struct flaky_ingest *,
	    struct flaky_ingest_file *, char *buf, char *err, size_t errlen);
/* Read a hashed file through its parser without storing anything: 0 when
 * flaky_ingest_store would find nothing wrong with it (JUnit well formed,
 * with a testcase; raw output with results), else a negative errno with
 * err as flaky_ingest_store would say it. */
int	 flaky_ingest_check(const struct flaky_ingest *,
	    struct flaky_ingest_file *, char *buf, char *err, size_t errlen);
/* Close what the file holds open. */
void	 flaky_ingest_file_close(struct flaky_ingest_file *);

/* An upload of files, stored once, whole (upload.c): the files hashed,
 * then in one transaction the upload's row (uploads), the target, the
 * token's use, and each file a run with where it came from (in.ci) and
 * its upload. in.store must be open; in.hash_salt should name the job and
 * attempt (the same file from two jobs is two runs). */
struct flaky_upload {
	struct flaky_ingest	 in;
	const char		*key;		/* Idempotency-Key; NULL: the
						 * files' content, salted */
	int64_t			 token_id;	/* 0: none (a local write) */
	int64_t			 bytes;		/* as received */
	/* Commit in parts whenever another writer of this process waits
	 * for the lock (the server's worker, beside the daemon's loop):
	 * every file is read through first, so that only the store can
	 * fail once a part is committed; the upload is stored (its row's
	 * stored_ms) with its last part. */
	int			 parts;
	int			 committed;	/* a part was */
	/* What became of it. */
	int64_t			 upload_id;
	int			 already;	/* stored before, as upload_id */
	int64_t			*runs;		/* its runs (an upload stored
						 * before: that one's) */
	size_t			 nruns;
	int			 store_failed;	/* the error is the store's */
};
/* 0 (u->already when it was stored before), or a negative errno with
 * err: a file refused (not recognized, malformed, too big:
 * !u->store_failed), -EINPROGRESS when the same upload is being stored
 * (by a writer in parts: try again), or the store's error. buf:
 * FLAKY_INGEST_CHUNK. */
int	 flaky_upload_store(struct flaky_upload *, struct flaky_ingest_file *,
	    size_t n, char *buf, char *err, size_t errlen);
void	 flaky_upload_clear(struct flaky_upload *);
/* Its answer as JSON into b (docs/api.md, "Uploads"): the upload, its
 * runs, and what the store knew of each test that failed in them over the
 * window (flaky_store_known). 0 or -ENOMEM. */
struct flaky_buf;
int	 flaky_upload_reply(struct flaky_buf *, const struct flaky_upload *,
	    const struct flaky_known *, size_t, int window_days);

/* Where a CI job is, from the variables of its CI system (ci_env.c):
 * GitHub Actions, GitLab CI, Jenkins, Buildkite, CircleCI (docs/ci.md).
 * What the system does not set is NULL (attempt 0). The strings live in
 * buf. */
struct flaky_ci_env {
	const char	*ci;		/* "github", "gitlab", ... */
	const char	*revision, *branch, *pr, *job, *job_url;
	const char	*box;		/* the runner or agent's name */
	const char	*project;	/* the repository's name */
	int		 attempt;
	char		 buf[8192];
	size_t		 used;
};
/* 1 when a CI system's variables are in envp (out filled), else 0. */
int	 flaky_ci_from_env(char *const *envp, struct flaky_ci_env *out);

#endif
