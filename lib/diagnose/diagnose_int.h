/* Shared by the files of lib/diagnose/ (order.c, modes.c, signatures.c,
 * find.c and diagnose.c); not part of libflaky's interface. */
#ifndef FLAKY_DIAGNOSE_INT_H
#define FLAKY_DIAGNOSE_INT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "util/util.h"

/* qsort and bsearch order of int64_t values (test ids, durations). */
int	 diag_cmp_i64(const void *, const void *);
/* The name of a test id among refs (a copy), or NULL. */
char	*diag_ref_name(const struct flaky_test_ref *refs, size_t n,
	    int64_t id);
/* RACE from timing: an UNKNOWN dominant signature whose failures go with
 * their durations. */
int	 diag_race_from_timing(const char *dominant,
	    const struct flaky_timing *);
/* Add n to a signature's count in a tally list; 0 or -ENOMEM. */
int	 diag_tally_add(struct flaky_sig_tally **v, size_t *nv,
	    const char *name, int64_t n);
/* The rates per box of n diagnoses (ids their tests), in one query, and
 * INFRA for those that fail on one box only (boxes.c). */
int	 diag_boxes(struct flaky_store *, const struct flaky_query *,
	    const int64_t *ids, size_t n, struct flaky_diagnosis **,
	    char *err, size_t errlen);

/* A diagnosis' seed sweeps (its perturbs read first): SEED evidence and
 * signature, its tolerance headroom (seeds.c). */
int	 diag_seeds(struct flaky_store *, const struct flaky_query *,
	    struct flaky_diagnosis *, char *err, size_t errlen);

/* A reproduce command for cargo, gtest (and ctest), rspec and phpunit
 * tests (repro_native.c): 1 when runner is one of them, b filled. */
int	 diag_repro_native(const struct flaky_diagnosis *, const char *runner,
	    struct flaky_buf *b);
/* The reproduce command of a Vitest, Playwright, Mocha or node:test
 * test (repro_js.c): 1 when runner is one of them (b filled), else 0;
 * and the test's name without its file, or NULL. */
int	 flaky_repro_js(const struct flaky_diagnosis *, const char *runner,
	    struct flaky_buf *b);
const char *flaky_repro_js_short(const char *runner, const char *id);

#endif
