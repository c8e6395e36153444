/* Internal to lib/config: the state of one walk over a schedule file's
 * YAML tree and the readers of its nodes (config_node.c), shared by the
 * file's top level (config.c) and its targets (config_target.c). Each
 * reader checks one value and on error fills c->err with FILE:LINE:COL,
 * the key and what was expected. */
#ifndef FLAKY_CONFIG_INT_H
#define FLAKY_CONFIG_INT_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "config/config.h"
#include "config_limits.h"

/* The walk's own bound on nodes looked at, aliases counted: the limits
 * pass (config_limits.c) already refuses more, this keeps the walk safe
 * should the two ever disagree. */
#define MAX_VISITS	CONFIG_MAX_NODES
#define MAX_SCALAR	CONFIG_MAX_SCALAR
#define MAX_REGEX	4096
/* Compiled patterns cost memory and time far beyond their text (about
 * 3 KB and 15 us each for a short one, with glibc): bound them in the
 * whole file, aliases counted, or a list shared by alias is a bomb. */
#define MAX_PATTERNS	1000
#define MAX_PATTERN_BYTES (64 * 1024)
#define MAX_ITEMS	10000		/* argv words, env entries, patterns */
#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

struct ctx {
	const char	*file;		/* for messages */
	char		*basedir;	/* for relative paths */
	yaml_document_t	*doc;
	unsigned	 flags;
	size_t		 visits;
	size_t		 npatterns;	/* compiled so far, and their bytes */
	size_t		 pattern_bytes;
	char		*err;
	size_t		 errlen;
	struct flaky_config *cfg;
};
/* A value as a message shows it; needs a char gotbuf[80] in scope. */
#define GOT(n)	cfg_describe((n), gotbuf, sizeof gotbuf)

/* config_node.c: messages and the readers of one node. */
int	 cfg_err(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	 cfg_nomem(struct ctx *c);
int	 cfg_is_null(const yaml_node_t *n);
const char *cfg_describe(const yaml_node_t *n, char *buf, size_t len);
yaml_node_t *cfg_node_at(struct ctx *c, int index);
int	 cfg_get_text(struct ctx *c, const yaml_node_t *n, const char *key,
	    const char *expect, const char **ret);
int	 cfg_get_str(struct ctx *c, const yaml_node_t *n, const char *key,
	    const char *expect, char **ret);
int	 cfg_get_int(struct ctx *c, const yaml_node_t *n, const char *key,
	    int min, int max, int *ret);
int	 cfg_get_bool(struct ctx *c, const yaml_node_t *n, const char *key,
	    int *ret);
int	 cfg_get_duration(struct ctx *c, const yaml_node_t *n,
	    const char *key, int64_t min_ms, int64_t *ret);
/* Does s start with postgresql:// or postgres:// (config_fleet.c)? */
int	 cfg_is_uri(const char *s);
int	 cfg_get_path(struct ctx *c, const yaml_node_t *n, const char *key,
	    const char *expect, char **ret);
int	 cfg_get_regex(struct ctx *c, const yaml_node_t *n, const char *key,
	    struct flaky_regex *ret);
int	 cfg_get_seq(struct ctx *c, const yaml_node_t *n, const char *key,
	    const char *expect, yaml_node_item_t **ret_items, size_t *ret_n);
int	 cfg_get_keys(struct ctx *c, const yaml_node_t *map, const char *what,
	    const char *const *keys, size_t nkeys, yaml_node_t **values);
int	 cfg_name_ok(const char *s, const char *extra);

/* config_target.c: one target of targets:, and freeing one. */
int	 cfg_parse_target(struct ctx *c, const yaml_node_t *n,
	    struct flaky_target *t);
void	 cfg_target_free(struct flaky_target *t);

/* config_http.c: http: */
int	 cfg_parse_http(struct ctx *c, const yaml_node_t *n);
/* config_notify.c: notify: and its receivers. */
int	 cfg_parse_notify(struct ctx *c, const yaml_node_t *n);
void	 cfg_receivers_free(struct flaky_config *cfg);
void	 cfg_receivers_free_one(struct flaky_receiver *rv);
/* config_fleet.c: the fleet: mapping. */
int	 cfg_parse_fleet(struct ctx *c, const yaml_node_t *n);
/* A URI value of key ("fleet: url", "http: database"): postgresql://,
 * no spaces, no password; refused without repeating it. */
int	 cfg_check_uri(struct ctx *c, const yaml_node_t *n, const char *key,
	    const char *url);
/* A database: value: a path (relative to the file) or such a URI; a
 * libpq key=value string is refused without repeating it. */
int	 cfg_get_db(struct ctx *c, const yaml_node_t *n, const char *key,
	    const char *expect, char **ret);

#endif
