/* libFuzzer target for the JUnit XML reader: any bytes give results or a
 * one-line error, never a crash, a leak, a hang or results and an error
 * at once. The stream (flakyctl ingest) gets the same bytes in pieces of
 * sizes taken from the input and must agree: refused or not, and as many
 * testcases. */
#include "buildconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
count(void *arg, const struct flaky_result *r, const struct flaky_attempt *a,
    size_t na, char *err, size_t errlen)
{
	(*(size_t *)arg)++;
	return 0;
}

/* The stream's verdict on data fed in pieces: 0 or -1, testcases in *n. */
static int
stream(const uint8_t *data, size_t size, size_t *n)
{
	struct flaky_junit_stream *js;
	struct flaky_junit_info	 info;
	char			 err[512];
	size_t			 off = 0, piece;
	int			 r;

	*n = 0;
	if (flaky_junit_stream_new(&js, "fuzz.xml", count, n) < 0)
		abort();
	piece = size > 0 ? (size_t)data[0] % 61 + 1 : 1;
	do {
		size_t	 len = size - off < piece ? size - off : piece;

		r = flaky_junit_stream_feed(js, (const char *)data + off, len,
		    off + len == size, err, sizeof err);
		off += len;
	} while (r == 0 && off < size);
	if (r == 0)
		r = flaky_junit_stream_end(js, &info, err, sizeof err);
	flaky_junit_stream_free(js);
	return r < 0 ? -1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flaky_results	 r;
	char			 err[512];

	size_t			 n;
	int			 whole, pieces;

	flaky_results_init(&r);
	err[0] = '\0';
	whole = flaky_parse_junit_buffer("fuzz.xml", (const char *)data, size,
	    &r, err, sizeof err) < 0 ? -1 : 0;
	if (whole < 0) {
		/* refused: nothing kept, and a message on one line */
		if (r.n != 0 || err[0] == '\0' || strchr(err, '\n') != NULL)
			abort();
	}
	pieces = stream(data, size, &n);
	if (pieces != whole || (whole == 0 && n != r.n))
		abort();
	flaky_results_free(&r);
	return 0;
}
