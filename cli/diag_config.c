/* What the diagnosis commands read from the YAML config: a target's
 * isolate: template and the user signatures. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/classify.h"
#include "config/config.h"
#include "diag.h"
#include "store/store.h"

/* The isolate: template of a target in the config, or NULL. */
char *
diag_isolate(struct ctl *ctl, const char *target)
{
	struct flaky_config *cfg = NULL;
	const struct flaky_target *t;
	const char *path = ctl_config_path(ctl);
	char	 err[1024], *s = NULL;

	if (path == NULL || flaky_config_load(path, FLAKY_CONFIG_NO_FS_CHECKS,
	    &cfg, err, sizeof err) < 0)
		return NULL;
	if ((t = flaky_config_target(cfg, target)) != NULL &&
	    t->isolate != NULL)
		s = strdup(t->isolate);
	flaky_config_free(cfg);
	return s;
}

/* The config's signatures as a classifier for the caller (NULL when it
 * has none: the built-ins), and its redact: patterns on the store that
 * will write (when not NULL). */
int
diag_load_signatures(struct ctl *ctl, struct flaky_store *store,
    struct flaky_classifier **ret)
{
	struct flaky_classifier *c = NULL;
	struct flaky_config *cfg = NULL;
	const char *path = ctl_config_path(ctl);
	char	 err[1024];
	int	 r = 0;

	*ret = NULL;
	if (path == NULL)
		return 0;
	if (flaky_config_load(path, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return -1;
	}
	if (flaky_classifier_from_config(cfg, &c, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s: %s\n", path, err);
		r = -1;
	}
	for (size_t i = 0; r == 0 && store != NULL && i < cfg->nredact; i++)
		if (flaky_store_add_redaction(store, cfg->redact[i].src, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl: %s: %s\n", path, err);
			r = -1;
		}
	flaky_config_free(cfg);
	if (r == 0)
		*ret = c;
	else
		flaky_classifier_free(c);
	return r;
}
