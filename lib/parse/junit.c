/* JUnit XML -> results. Placeholder until its parser lands. */
#include "config.h"

#include <errno.h>

#include "runner.h"

int
flaky_parse_junit_buffer(const char *name, const char *s, size_t len,
    struct flaky_results *out, char *err, size_t errlen)
{
	(void)s;
	(void)len;
	(void)out;
	return flaky_error(err, errlen, ENOSYS, "%s: JUnit XML not supported yet", name);
}

int
flaky_parse_junit(const char *path, struct flaky_results *out, char *err,
    size_t errlen)
{
	return flaky_parse_junit_buffer(path, "", 0, out, err, errlen);
}
