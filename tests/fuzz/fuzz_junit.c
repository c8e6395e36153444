/* libFuzzer target for the JUnit XML reader: any bytes give results or a
 * one-line error, never a crash, a leak, a hang or results and an error
 * at once. */
#include "buildconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flaky_results	 r;
	char			 err[512];

	flaky_results_init(&r);
	err[0] = '\0';
	if (flaky_parse_junit_buffer("fuzz.xml", (const char *)data, size, &r,
	    err, sizeof err) < 0) {
		/* refused: nothing kept, and a message on one line */
		if (r.n != 0 || err[0] == '\0' || strchr(err, '\n') != NULL)
			abort();
	}
	flaky_results_free(&r);
	return 0;
}
