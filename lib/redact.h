/* Secrets out of stored text: tokens, keys and passwords that a test run
 * printed are replaced by [REDACTED] before anything is written. */
#ifndef FLAKY_REDACT_H
#define FLAKY_REDACT_H

#include <stddef.h>

#include "util.h"

#define FLAKY_REDACTED	"[REDACTED]"

struct flaky_redactor;

int	 flaky_redactor_new(struct flaky_redactor **ret);
void	 flaky_redactor_free(struct flaky_redactor *);
/* A user pattern (POSIX extended regex); each match is replaced whole. */
int	 flaky_redactor_add(struct flaky_redactor *, const char *regex,
	    char *err, size_t errlen);
/* Append s with secrets replaced to out. Returns how many were replaced or
 * -ENOMEM. NUL bytes in s are kept. */
int	 flaky_redact(const struct flaky_redactor *, const char *s, size_t len,
	    struct flaky_buf *out);

#endif
