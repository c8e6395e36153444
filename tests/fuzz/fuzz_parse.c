/* libFuzzer target for the runner-output parser: any bytes, whole or in
 * chunks, must parse without a crash, a leak or undefined behaviour, and
 * the chunk size must not change the results (the parser splits lines
 * itself, so where a read() ends is invisible to the runners). */
#include "buildconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Whole-buffer results against chunked ones, field by field. */
static int
same(const struct flaky_results *a, const struct flaky_results *b)
{
	if (a->n != b->n || strcmp(a->runner, b->runner) != 0 ||
	    !same_str(a->version, b->version) || !same_str(a->seed, b->seed) ||
	    a->summary_total != b->summary_total)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].test, b->v[i].test) != 0 ||
		    a->v[i].outcome != b->v[i].outcome ||
		    a->v[i].position != b->v[i].position ||
		    !same_str(a->v[i].message, b->v[i].message))
			return 0;
	/* a runner's own retries (Playwright's, Vitest's) */
	if (a->nattempts != b->nattempts)
		return 0;
	for (size_t i = 0; i < a->nattempts; i++)
		if (a->attempts[i].result != b->attempts[i].result ||
		    a->attempts[i].result >= a->n ||
		    a->attempts[i].attempt != b->attempts[i].attempt ||
		    a->attempts[i].outcome != b->attempts[i].outcome ||
		    !same_str(a->attempts[i].message, b->attempts[i].message))
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flaky_results	 whole, parts;
	struct flaky_parser	*p;
	const char		*s = (const char *)data;
	size_t			 chunk;

	if (flaky_parse_buffer(s, size, "/tmp", &whole) < 0)
		return 0;
	/* The first byte picks a chunk size from 1 to 16. */
	chunk = size > 0 ? (size_t)(data[0] & 15) + 1 : 1;
	if (flaky_parser_new(&p, "/tmp") < 0)
		goto out;
	for (size_t i = 0; i < size; i += chunk)
		if (flaky_parser_feed(p, s + i, size - i < chunk ?
		    size - i : chunk) < 0)
			abort();
	if (flaky_parser_finish(p, &parts) < 0)
		abort();
	flaky_parser_free(p);
	if (!same(&whole, &parts))
		abort();
	flaky_results_free(&parts);
out:
	flaky_results_free(&whole);
	return 0;
}
