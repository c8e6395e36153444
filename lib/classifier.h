/* User signatures: a classifier object (separate from classify.h so that
 * code reading the YAML, whose conf.h has struct flaky_signature, can use
 * it next to the enum's header). */
#ifndef FLAKY_CLASSIFIER_H
#define FLAKY_CLASSIFIER_H

#include <stddef.h>

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

#endif
