/* The YAML's signatures: as a classifier (for flakyd and flakyctl). Kept
 * apart from classify.c: conf.h's struct flaky_user_signature and classify.h's
 * enum flaky_signature cannot meet in one file. */
#include "buildconf.h"

#include <errno.h>
#include <stddef.h>

#include "classify/classify.h"
#include "config/config.h"
#include "util/util.h"

/* Every pattern of every signature, in file order. */
int
flaky_classifier_from_config(const struct flaky_config *cfg,
    struct flaky_classifier **ret, char *err, size_t errlen)
{
	struct flaky_classifier *c;
	int	 r;

	*ret = NULL;
	if (cfg->nsignatures == 0)
		return 0;
	if ((r = flaky_classifier_new(&c)) < 0)
		return flaky_error(err, errlen, -r, "out of memory");
	for (size_t i = 0; i < cfg->nsignatures; i++) {
		const struct flaky_user_signature *sig = &cfg->signatures[i];

		for (size_t k = 0; k < sig->npatterns; k++)
			if ((r = flaky_classifier_add(c, sig->name,
			    sig->patterns[k].src, err, errlen)) < 0) {
				flaky_classifier_free(c);
				return r;
			}
	}
	*ret = c;
	return 0;
}
