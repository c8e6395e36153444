/* Part of store.h (include that, not this): a run stored as its results
 * come (ingest.c). */
#ifndef FLAKY_STORE_INGEST_H
#define FLAKY_STORE_INGEST_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;
struct flaky_run_record;
struct flaky_result;
struct flaky_results;
struct flaky_attempt;

/* A run stored as its results come, for inputs of any size (flakyctl
 * ingest): memory stays the same whatever the number of results. All in
 * the open transaction (flaky_store_begin), which the caller commits or
 * rolls back: the run lands whole or not at all. Start adds the row
 * (kind ingested; started_ms until finish says); add stores one result at
 * its position with its attempts (attempts[].result is not read), a test
 * id seen before in the run getting " #2", " #3"; resign sets every
 * classified failure's signature to sig (a run-level rule); finish
 * completes the row from rec and meta (runner, version, seed,
 * summary_total; its results are not read) with the count of results
 * added, and the rollups of the day of rec->started_ms, as
 * flaky_store_run_finish would. Free after finish or to give up (then
 * roll back). */
struct flaky_store_ingest;
int	 flaky_store_ingest_start(struct flaky_store *, int64_t target_id,
	    int64_t started_ms, struct flaky_store_ingest **ret,
	    char *err, size_t errlen);
int64_t	 flaky_store_ingest_run(const struct flaky_store_ingest *);
/* A writer that commits in parts (an upload's, lib/ingest/upload.c): fn is
 * called between the parts of the run's last step (its rollups, a few
 * thousand results each), where it may commit and begin again. */
void	 flaky_store_ingest_set_yield(struct flaky_store_ingest *,
	    int (*fn)(void *, char *, size_t), void *arg);
int	 flaky_store_ingest_add(struct flaky_store_ingest *,
	    const struct flaky_result *, const struct flaky_attempt *attempts,
	    size_t nattempts, char *err, size_t errlen);
int	 flaky_store_ingest_resign(struct flaky_store_ingest *,
	    const char *sig, char *err, size_t errlen);
int	 flaky_store_ingest_finish(struct flaky_store_ingest *,
	    struct flaky_run_record *rec, const struct flaky_results *meta,
	    char *err, size_t errlen);
void	 flaky_store_ingest_free(struct flaky_store_ingest *);

#endif
