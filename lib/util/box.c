/* The box: the build machine a run ran on (issue 15). Its name is checked
 * in one place for every way it is given (box: in the YAML, fleet: of
 * the shipping, --box, $FLAKY_BOX), and defaults to the host name. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

/* A byte a box name may hold. */
static int
box_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

int
flaky_box_check(const char *name, char *err, size_t errlen)
{
	size_t	 len;

	if (name == NULL || (len = strlen(name)) == 0)
		return flaky_error(err, errlen, EINVAL, "box name is empty: "
		    "expected 1 to %d letters, digits, '.', '-' or '_'",
		    FLAKY_BOX_MAX);
	if (len > FLAKY_BOX_MAX)
		return flaky_error(err, errlen, EINVAL, "box name \"%.*s...\" "
		    "is %zu bytes: expected at most %d", 16, name, len,
		    FLAKY_BOX_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (box_byte(c))
			continue;
		if (c >= 0x20 && c < 0x7f)
			return flaky_error(err, errlen, EINVAL, "box name "
			    "\"%.*s\": '%c' at byte %zu: expected letters, "
			    "digits, '.', '-' or '_'", (int)i + 1, name, c,
			    i + 1);
		return flaky_error(err, errlen, EINVAL, "box name: byte %zu "
		    "is 0x%02x: expected letters, digits, '.', '-' or '_'",
		    i + 1, c);
	}
	return 0;
}

int
flaky_box_default(char *buf, size_t len)
{
	char	 host[256];
	size_t	 n = 0;

	if (len < FLAKY_BOX_MAX + 1)
		return -ENOBUFS;
	if (gethostname(host, sizeof host) != 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';
	/* the short form: a box is one machine of the fleet, and its
	 * domain only makes the name longer */
	for (const char *p = host; *p != '\0' && *p != '.' &&
	    n < FLAKY_BOX_MAX; p++)
		buf[n++] = box_byte((unsigned char)*p) ? *p : '_';
	if (n == 0)
		n = strlen(strcpy(buf, "localhost"));
	buf[n] = '\0';
	return 0;
}

int
flaky_box_resolve(const char *opt, const char *conf, char *buf, size_t len,
    char *err, size_t errlen)
{
	const char	*name, *from;
	char		 why[160];

	if (len < FLAKY_BOX_MAX + 1)
		return flaky_error(err, errlen, ENOBUFS, "box name buffer of "
		    "%zu bytes", len);
	if (opt != NULL) {
		name = opt;
		from = "--box";
	} else if ((name = getenv("FLAKY_BOX")) != NULL) {
		from = "$FLAKY_BOX";
	} else if (conf != NULL) {
		name = conf;
		from = "box";
	} else
		return flaky_box_default(buf, len);
	if (flaky_box_check(name, why, sizeof why) < 0)
		return flaky_error(err, errlen, EINVAL, "%s: %s", from, why);
	memcpy(buf, name, strlen(name) + 1);
	return 0;
}
