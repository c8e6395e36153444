/* Static scan findings in the evidence database: stored per target (a new
 * scan replaces the last), read back per test. */
#ifndef FLAKY_STORE_SCAN_H
#define FLAKY_STORE_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct flaky_scan_summary {
	size_t		 files, skipped, findings, unseeded;
};

/* Scan paths (files or directories, .py below them) and replace the
 * target's stored findings with the result, in one transaction. Paths are
 * stored relative to dir (the target's directory). A file that cannot be
 * read or parsed is counted as skipped; skipped_cb, when not NULL, hears
 * of each with its reason. */
typedef void	(*flaky_scan_skip_cb)(void *arg, const char *path,
		    const char *reason);
int	 flaky_store_scan(struct flaky_store *, int64_t target_id,
	    const char *dir, char *const *paths, size_t npaths,
	    flaky_scan_skip_cb, void *arg, struct flaky_scan_summary *,
	    char *err, size_t errlen);

/* The target's directory (*ret malloc'd); a target without one gets
 * fallback, which is saved. */
int	 flaky_store_target_dir(struct flaky_store *, int64_t target_id,
	    const char *fallback, char **ret, char *err, size_t errlen);

/* One finding that lies in a test: key is the test id it matches (a
 * pytest node id without parameters, or a unittest id). */
struct flaky_risk {
	char	*target;
	char	*key;
	char	*path;
	int	 line;
	char	*category;
	char	*tolerance;	/* NULL: none */
	int	 seeded;
};

/* Every finding in a test, of one target or all (NULL), two entries per
 * finding (its pytest and its unittest key), sorted by (target, key).
 * A database without findings gives none. */
int	 flaky_store_risks(struct flaky_store *, const char *target,
	    struct flaky_risk **ret, size_t *ret_n, char *err, size_t errlen);
/* The findings of a test id: [*first, *first + count) in v. */
size_t	 flaky_risks_find(const struct flaky_risk *v, size_t n,
	    const char *target, const char *test, size_t *first);
void	 flaky_risks_free(struct flaky_risk *, size_t);

#endif
