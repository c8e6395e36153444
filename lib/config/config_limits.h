/* Internal to lib/config*.c: the limits a schedule file must stay within
 * before libyaml builds its tree (docs/limits.md lists them all). */
#ifndef FLAKY_CONFIG_LIMITS_H
#define FLAKY_CONFIG_LIMITS_H

#include <stddef.h>

#include <yaml.h>

#define CONFIG_MAX_DEPTH	64		/* nested sequences, mappings */
#define CONFIG_MAX_SCALAR	65536		/* bytes of one value */
#define CONFIG_MAX_ANCHORS	1000
#define CONFIG_MAX_ALIASES	100000
#define CONFIG_MAX_NODES	1000000		/* aliases expanded */
#define CONFIG_MAX_EXPANDED	(32 * 1024 * 1024) /* value bytes, aliases
						 * expanded */

/* Where a limit was passed, and which. */
struct config_limit_err {
	yaml_mark_t	 mark;
	char		 msg[192];
};

/* Check buf against the limits above in one pass over libyaml's events:
 * 0 when within them (a syntax error is left to the loader, which finds
 * it at the same place), -EINVAL with e filled, or -ENOMEM. */
int	 config_limits_check(const char *buf, size_t len,
	    struct config_limit_err *e);

#endif
