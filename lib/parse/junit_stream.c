/* JUnit XML as a stream (parse.h, flaky_junit_stream_*): the parser of
 * junit.c with a callback that takes each testcase as it ends, so that
 * nothing of a file is held past its open testcase. flakyctl ingest feeds
 * it files of any size. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "junit_int.h"

/* A stream is a parser that keeps no result: each testcase goes to fn. */
struct flaky_junit_stream {
	struct jx	 x;
};

int
flaky_junit_stream_new(struct flaky_junit_stream **ret, const char *name,
    flaky_junit_fn fn, void *arg)
{
	struct flaky_junit_stream *s;
	int		 e;

	*ret = NULL;
	if ((s = malloc(sizeof *s)) == NULL)
		return -ENOMEM;
	if ((e = jx_init(&s->x, name)) < 0) {
		jx_free(&s->x);
		free(s);
		return e;
	}
	s->x.fn = fn;
	s->x.arg = arg;
	s->x.own.timestamp_ms = -1;
	s->x.extra = &s->x.own;
	*ret = s;
	return 0;
}

int
flaky_junit_stream_feed(struct flaky_junit_stream *s, const char *buf,
    size_t len, int final, char *err, size_t errlen)
{
	struct jx	*x = &s->x;
	int		 e = 0;

	x->fn_errbuf = err;
	x->fn_errlen = errlen;
	/* In chunks, so that the markup bound holds whatever len is. */
	do {
		size_t	 n = len < JUNIT_CHUNK ? len : JUNIT_CHUNK;

		if ((e = jx_feed(x, buf, n, final && n == len, err,
		    errlen)) < 0)
			break;
		buf += n;
		len -= n;
	} while (len > 0);
	x->fn_errbuf = NULL;
	x->fn_errlen = 0;
	return e;
}

int64_t
flaky_junit_stream_timestamp(const struct flaky_junit_stream *s)
{
	return s->x.own.timestamp_ms;
}

int
flaky_junit_stream_end(struct flaky_junit_stream *s,
    struct flaky_junit_info *info, char *err, size_t errlen)
{
	struct jx	*x = &s->x;

	if (x->depth != 0 || x->err[0] != '\0' || x->fn_err < 0)
		return flaky_error(err, errlen, EINVAL, "%s: expected a "
		    "complete document", x->name);
	memset(info, 0, sizeof *info);
	snprintf(info->runner, sizeof info->runner, "%s",
	    x->any_pytest ? "pytest" : "junit");
	info->summary_total = x->root_total >= 0 ? x->root_total :
	    x->suites_seen > 0 ? x->suite_total : -1;
	info->n = x->ncases;
	info->nattempts = x->natt_total;
	info->timestamp_ms = x->own.timestamp_ms;
	return 0;
}

void
flaky_junit_stream_free(struct flaky_junit_stream *s)
{
	if (s == NULL)
		return;
	jx_free(&s->x);
	free(s);
}
