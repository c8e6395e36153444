/* JSON strings and numbers on a stream for the report commands. The
 * escaping itself is libflaky's (lib/json.h), the same as flakyd's. */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "flakyctl.h"
#include "json/json.h"
#include "log.h"

/* A JSON string on f, escaped by the tree's one rule (lib/json.h). */
void
json_stringn(FILE *f, const char *s, size_t n)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	if (flaky_json_escape(&b, s, n) < 0)
		fatalx("out of memory");
	fwrite(b.data, 1, b.len, f);
	flaky_buf_free(&b);
}

/* A C string as a JSON string on f, NULL as null. */
void
json_string(FILE *f, const char *s)
{
	if (s == NULL)
		fputs("null", f);
	else
		json_stringn(f, s, strlen(s));
}

/* A number as libflaky's one writer prints it (the shortest text that
 * reads back as v, as the HTTP API's), or null for NaN and infinities. */
void
json_double(FILE *f, double v)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	if (flaky_json_number(&b, v) < 0)
		fatalx("out of memory");
	fwrite(b.data, 1, b.len, f);
	flaky_buf_free(&b);
}
