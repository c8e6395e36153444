#ifndef FLAKY_CLASSIFY_H
#define FLAKY_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "parse/parse.h"
#include "util/util.h"

/* User signatures (the YAML's signatures:), checked before the built-ins.
 * A user signature with a built-in name (TIMEOUT, ...) gets that code;
 * any other name gets a code above FLAKY_SIG_MAX, which
 * flaky_classifier_name() turns back into the name. There is no process-
 * wide classifier: whoever classifies (the run lifecycle, ingest) is
 * handed one. */
#define FLAKY_CLASSIFIER_MAX	64	/* user patterns */
#define FLAKY_SIG_NAME_MAX	64
struct flaky_classifier;
int	 flaky_classifier_new(struct flaky_classifier **ret);
void	 flaky_classifier_free(struct flaky_classifier *);
/* Add one pattern (POSIX extended, REG_NEWLINE) of the signature name.
 * Returns the signature's code, or -EINVAL (bad name or regex: err says
 * which), -E2BIG, -ENOMEM. */
int	 flaky_classifier_add(struct flaky_classifier *, const char *name,
	    const char *regex, char *err, size_t errlen);
/* The user signature that matches first, else the built-in one. */
int	 flaky_classifier_classify(const struct flaky_classifier *,
	    const char *msg, size_t len);
/* The name of a code, user ones included ("UNKNOWN" when out of range). */
const char *flaky_classifier_name(const struct flaky_classifier *, int sig);
/* A classifier of a config's signatures: (NULL when it has none). The
 * programs call this on load and reload and hand it to the run
 * lifecycle (flaky_pipeline_set_classifier); free the old one after. */
struct flaky_config;
int	 flaky_classifier_from_config(const struct flaky_config *,
	    struct flaky_classifier **ret, char *err, size_t errlen);

/* Failure message -> normalized text, fingerprint and signature. */

enum flaky_signature {
	FLAKY_SIG_NONE = 0,	/* not a failure */
	FLAKY_SIG_TIMEOUT,
	FLAKY_SIG_RACE,
	FLAKY_SIG_ORDER_DEPENDENT,
	FLAKY_SIG_INFRA,
	FLAKY_SIG_UNKNOWN,
	/* Issue 34: fails for some seeds of a seed sweep, passes for
	 * others (given by the sweep's evidence, never by a message). */
	FLAKY_SIG_SEED,
};
#define FLAKY_SIG_MAX	FLAKY_SIG_SEED

/* Normalized text is at most this long. */
#define FLAKY_NORMALIZED_MAX	1024
/* Only this much of a message is looked at. */
#define FLAKY_CLASSIFY_INPUT_MAX (64 * 1024)

const char *flaky_signature_name(int);		/* "TIMEOUT", ... */
int	 flaky_signature_from_name(const char *);

/* Replace what varies between runs of the same failure (numbers, hex
 * addresses, UUIDs, temporary paths, timestamps, ports, durations) and fold
 * white space. Appends at most FLAKY_NORMALIZED_MAX bytes to out. */
int	 flaky_normalize(const char *msg, size_t len, struct flaky_buf *out);
/* 64-bit fingerprint of a normalized text (never 0). */
int64_t	 flaky_fingerprint(const char *normalized, size_t len);
/* The signature the message's text suggests: a built-in pattern, or
 * FLAKY_SIG_UNKNOWN. */
int	 flaky_classify_message(const char *msg, size_t len);

/* Run-level evidence, decided when a run is stored: every failing result's
 * signature, into sigs[n] (FLAKY_SIG_NONE for the rest). */
struct flaky_run_evidence {
	int		 timed_out;	/* the run was killed at its limit */
};
int	 flaky_classify_run(const struct flaky_classifier *,
	    const struct flaky_results *, const struct flaky_run_evidence *,
	    int *sigs);
/* The same, written into each failed result's signature (its name, as the
 * classifier names it); the others' is cleared. -ENOMEM. */
int	 flaky_classify_results(const struct flaky_classifier *,
	    struct flaky_results *, const struct flaky_run_evidence *);

#endif
