/* libFuzzer harness for the control protocol's text handling: the JSON
 * reader (with tight and default limits), the reply reader, the request
 * decoder and the escaper, over arbitrary bytes. Nothing may crash, hang,
 * leak or trip a sanitizer, and what they return must hold together: the
 * escaper always writes JSON the reader accepts, a string read back is
 * the valid UTF-8 it was, a decoded request encodes again. Run with
 * scripts/fuzz.sh. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "json/json.h"
#include "util/util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* An invariant: abort() so libFuzzer keeps the input. */
static void
check(int cond)
{
	if (!cond)
		abort();
}

/* The codes the reader documents, and nothing else. */
static int
reader_code(int rc)
{
	return rc == 0 || rc == -EMSGSIZE || rc == -E2BIG || rc == -EILSEQ ||
	    rc == -EBADMSG || rc == -ENOMEM;
}

/* Walk a parsed value: types known, strings as long as they say. */
static size_t
walk(const struct flaky_json *j, int depth)
{
	size_t	 n = 1;

	check(depth <= 64);
	switch (j->type) {
	case FLAKY_JSON_STRING:
		check(j->str != NULL && strlen(j->str) == j->len);
		break;
	case FLAKY_JSON_OBJECT:
		for (size_t i = 0; i < j->len; i++) {
			check(j->keys[i] != NULL);
			check(flaky_json_get(j, j->keys[i]) == &j->items[i]);
		}
		/* FALLTHROUGH */
	case FLAKY_JSON_ARRAY:
		for (size_t i = 0; i < j->len; i++)
			n += walk(&j->items[i], depth + 1);
		break;
	case FLAKY_JSON_NULL:
	case FLAKY_JSON_BOOL:
	case FLAKY_JSON_NUMBER:
		break;
	default:
		check(0);
	}
	return n;
}

/* Escape the input, read it back: always a string; the same bytes when
 * they were valid UTF-8 without NUL. */
static void
escape_round_trip(const char *s, size_t n, int parsed_ok_as_string)
{
	struct flaky_json *j = NULL;
	struct flaky_buf b;
	int		 rc, has_nul;

	flaky_buf_init(&b);
	if (flaky_json_escape(&b, s, n) < 0) {
		flaky_buf_free(&b);
		return;
	}
	rc = flaky_json_parse(b.data, b.len, &(struct flaky_json_limits){
	    SIZE_MAX, 1, 1 }, &j, NULL, 0);
	/* \u0000 is the one thing the escaper writes that the reader does
	 * not take back. */
	has_nul = memchr(s, '\0', n) != NULL;
	check(rc == 0 || rc == -ENOMEM || (has_nul && rc == -EILSEQ));
	if (rc == 0) {
		check(j->type == FLAKY_JSON_STRING);
		if (parsed_ok_as_string)
			check(j->len == n && memcmp(j->str, s, n) == 0);
	}
	flaky_json_free(j);
	flaky_buf_free(&b);
}

/* Decode the input as a request line; what decodes, encodes again and
 * decodes to the same request. */
static void
request_round_trip(const char *s, size_t n)
{
	struct flaky_ctl_request req, again;
	struct flaky_buf b;
	char		*line, *copy;
	int		 rc;

	if ((line = flaky_strndup(s, n)) == NULL)
		return;
	rc = flaky_ctl_request_decode(line, &req, NULL, 0);
	check(rc == 0 || rc == -ENODATA || rc == -EINVAL || rc == -EMSGSIZE);
	if (rc == 0) {
		check(flaky_ctl_request_name(req.type) != NULL);
		flaky_buf_init(&b);
		rc = flaky_ctl_request_encode(&req, &b, NULL, 0);
		/* Bytes the decoder splits on never reach a target; only
		 * other control characters may be refused. */
		check(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
		if (rc == 0) {
			check(b.len > 0 && b.data[b.len - 1] == '\n');
			b.data[--b.len] = '\0';
			copy = b.data;
			check(flaky_ctl_request_decode(copy, &again, NULL,
			    0) == 0);
			check(again.type == req.type && again.runs ==
			    req.runs);
			if (req.type == FLAKY_CTL_RUN)
				check(strcmp(again.target, req.target) == 0);
		}
		flaky_buf_free(&b);
	}
	free(line);
}

/* One input through every reader and round trip. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct flaky_json_limits tight = { 4096, 4, 64 };
	const char	*s = (const char *)data;
	struct flaky_json *j = NULL;
	char		 err[256];
	int		 rc, is_string = 0;

	rc = flaky_json_parse(s, size, NULL, &j, err, sizeof err);
	check(reader_code(rc));
	check((rc == 0) == (j != NULL));
	if (rc == 0) {
		check(walk(j, 0) <= 65536);
		is_string = j->type == FLAKY_JSON_STRING;
		/* A parsed string's bytes escape and read back the same. */
		if (is_string)
			escape_round_trip(j->str, j->len, 1);
		flaky_json_free(j);
	} else
		check(err[0] != '\0');
	rc = flaky_json_parse(s, size, &tight, &j, err, sizeof err);
	check(reader_code(rc));
	if (rc == 0) {
		check(size <= 4096 && walk(j, 0) <= 64);
		flaky_json_free(j);
	}
	rc = flaky_ctl_reply_parse(s, size, &j, err, sizeof err);
	check(rc == 0 || rc == -EREMOTEIO || rc == -EPROTO || reader_code(rc));
	check((rc == 0) == (j != NULL));
	flaky_json_free(j);
	escape_round_trip(s, size, 0);
	request_round_trip(s, size);
	return 0;
}
