/* JUnit XML -> results, with expat.
 *
 *	<testsuites>
 *	  <testsuite name="pytest" tests="3">
 *	    <testcase classname="tests.test_x.TestA" name="test_b[p]"
 *	      time="0.01">
 *	      <failure message="assert 1 == 2">traceback</failure>
 *	    </testcase>
 *
 * Test ids: pytest's file (<testsuite name="pytest">) maps back to the node
 * id, "tests/test_x.py::TestA::test_b[p]": the dotted classname is a module
 * path until the first segment that starts with an uppercase letter (a
 * class, by Python convention), or the "file" attribute when pytest wrote
 * one (xunit1). Every other producer gets "classname.name", the usual JUnit
 * reading (Surefire, Gradle, Ant), or just "name" when classname is empty
 * or repeats the name (jest-junit's default templates do that).
 *
 * Reruns: Surefire and pytest-rerunfailures add <flakyFailure>/<flakyError>
 * (failed, then passed on a retry) and <rerunFailure>/<rerunError> (failed
 * every retry). The result keeps the first attempt's outcome: a testcase
 * with only flaky* children failed first, so it is a failure whose message
 * says it passed on retry. flaky_parse_junit_ex() also hands each attempt
 * over, for ingest to store.
 *
 * The file is untrusted: no DTD entities at all (a declaration stops the
 * parser, which also stops billion-laughs expansion), no parameter or
 * external entities, a size bound, a nesting bound and a bound on what
 * expat holds of one tag (JUNIT_MARKUP_MAX). On any error the
 * results stay empty. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <expat.h>

#include "junit_int.h"

#define JUNIT_SIZE_MAX	(256L * 1024 * 1024)
#define JUNIT_DEPTH_MAX	64
/* expat holds a tag with all its attributes (or a comment, a processing
 * instruction) whole until it ends; text it hands over as it goes. So this
 * bounds what expat keeps of any file, whatever its size. */
#define JUNIT_MARKUP_MAX	(1024 * 1024)
#define JUNIT_ATTR_MAX	4096	/* bytes of classname, name kept */
#define JUNIT_ATTEMPT_MSG	1024	/* bytes of an attempt's message */


/* A copy of an attempt's message attribute, bounded; NULL when absent. */
static char *
attempt_msg(const char *m)
{
	if (m == NULL || *m == '\0')
		return NULL;
	return flaky_strndup(m, strnlen(m, JUNIT_ATTEMPT_MSG));
}

/* Forget the open testcase's retries. */
static void
attempts_reset(struct jx *x)
{
	for (int i = 0; i < x->natt; i++)
		free(x->att_msg[i]);
	free(x->primary_msg);
	x->primary_msg = NULL;
	x->natt = 0;
	x->att_flaky = 0;
	x->primary = -1;
}

/* One attempt of result idx into the extra; -ENOMEM. msg is taken. */
static int
attempt_add(struct flaky_junit_extra *e, size_t idx, int n, int outcome,
    char *msg)
{
	if (e->nattempts == e->cap) {
		size_t	 cap = e->cap ? e->cap * 2 : 16;
		void	*v = reallocarray(e->attempts, cap,
		    sizeof *e->attempts);

		if (v == NULL) {
			free(msg);
			return -ENOMEM;
		}
		e->attempts = v;
		e->cap = cap;
	}
	e->attempts[e->nattempts].result = idx;
	e->attempts[e->nattempts].attempt = n;
	e->attempts[e->nattempts].outcome = outcome;
	e->attempts[e->nattempts].message = msg;
	e->nattempts++;
	return 0;
}

/* The testcase's attempts, in the order they ran: flaky* children failed
 * before the pass that the testcase reports; a <failure> came before its
 * rerun* children. */
static int
attempts_flush(struct jx *x, size_t idx)
{
	int	 n = 0, r = 0;

	if (x->extra == NULL || x->natt == 0)
		return 0;
	if (x->primary >= 0) {
		r = attempt_add(x->extra, idx, n++, x->primary,
		    x->primary_msg);
		x->primary_msg = NULL;
	}
	for (int i = 0; r == 0 && i < x->natt; i++) {
		r = attempt_add(x->extra, idx, n++, x->att_out[i],
		    x->att_msg[i]);
		x->att_msg[i] = NULL;
	}
	if (r == 0 && x->att_flaky && x->primary < 0)
		r = attempt_add(x->extra, idx, n++, FLAKY_PASS, NULL);
	x->natt = 0;
	return r;
}

/* A retry child of the open testcase. */
static void
attempt_child(struct jx *x, int outcome, int flaky, const char *m)
{
	if (x->extra == NULL || x->natt >= JUNIT_ATTEMPTS_MAX)
		return;
	x->att_flaky |= flaky;
	x->att_out[x->natt] = outcome;
	x->att_msg[x->natt++] = attempt_msg(m);
}

/* An attribute's value, or NULL. */
static const char *
attr(const XML_Char **a, const char *key)
{
	for (; a != NULL && a[0] != NULL; a += 2)
		if (strcmp(a[0], key) == 0)
			return a[1];
	return NULL;
}

/* Stop the parser with "FILE:LINE:COL: what". */
static void
stop(struct jx *x, const char *what)
{
	snprintf(x->err, sizeof x->err, "%s:%lu:%lu: %s", x->name,
	    (unsigned long)XML_GetCurrentLineNumber(x->p),
	    (unsigned long)XML_GetCurrentColumnNumber(x->p) + 1, what);
	XML_StopParser(x->p, XML_FALSE);
}

/* An attribute's length within JUNIT_ATTR_MAX, without the blanks around
 * it (jest-junit's default templates leave a leading one). */
static size_t
bounded(const char **sp)
{
	const char	*s = *sp;
	size_t		 n;

	while (*s == ' ')
		s++;
	n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		n--;
	*sp = s;
	return n < JUNIT_ATTR_MAX ? n : JUNIT_ATTR_MAX;
}

/* pytest: "tests.test_x.TestA" + "test_b" ->
 * "tests/test_x.py::TestA::test_b". */
static void
pytest_id(struct flaky_buf *b, const char *cls, const char *name,
    const char *file)
{
	size_t	 cl = bounded(&cls), nl = bounded(&name), i = 0, mod_end = cl;

	if (cl == 0) {
		flaky_buf_add(b, name, nl);
		return;
	}
	if (file != NULL && *file != '\0') {
		/* xunit1: the module part is as many segments as the path. */
		size_t	 segs = 1;

		for (const char *f = file; *f != '\0'; f++)
			segs += *f == '/';
		for (i = 0; i < cl && segs > 0; i++)
			if (cls[i] == '.' && --segs == 0)
				break;
		mod_end = i;
		flaky_buf_adds(b, file);
	} else {
		/* Module segments up to the first capitalised one. */
		for (i = 0; i < cl; i++)
			if ((i == 0 || cls[i - 1] == '.') &&
			    cls[i] >= 'A' && cls[i] <= 'Z') {
				mod_end = i > 0 ? i - 1 : 0;
				break;
			}
		for (i = 0; i < mod_end; i++)
			flaky_buf_addc(b, cls[i] == '.' ? '/' : cls[i]);
		flaky_buf_adds(b, ".py");
	}
	for (i = mod_end; i < cl; i++) {
		if (cls[i] == '.') {
			flaky_buf_adds(b, "::");
			continue;
		}
		flaky_buf_addc(b, cls[i]);
	}
	flaky_buf_adds(b, "::");
	flaky_buf_add(b, name, nl);
}

/* <testcase>: its id and duration. */
static void
case_start(struct jx *x, const XML_Char **a)
{
	const char	*cls = attr(a, "classname"), *name = attr(a, "name");
	const char	*t = attr(a, "time");

	x->in_case = 1;
	x->case_depth = x->depth;
	x->outcome = FLAKY_PASS;
	x->flaky = 0;
	x->duration_us = -1;
	attempts_reset(x);
	flaky_buf_reset(&x->id);
	flaky_buf_reset(&x->msg);
	if (name == NULL)
		name = "";
	if (cls == NULL)
		cls = "";
	if (x->pytest)
		pytest_id(&x->id, cls, name, attr(a, "file"));
	else {
		size_t	 cl = bounded(&cls), nl = bounded(&name);

		if (cl > 0 && !(cl == nl && memcmp(cls, name, cl) == 0)) {
			flaky_buf_add(&x->id, cls, cl);
			flaky_buf_addc(&x->id, '.');
		}
		flaky_buf_add(&x->id, name, nl);
	}
	if (t != NULL) {
		char	*end;
		double	 s = strtod(t, &end);

		if (end != t && s >= 0 && s < 1e9)
			x->duration_us = (int64_t)(s * 1e6 + 0.5);
	}
}

/* <failure>, <error>, <skipped>, <flakyFailure>...: the outcome and the
 * start of the message. */
static void
child_start(struct jx *x, const char *el, const XML_Char **a)
{
	const char	*m = attr(a, "message"), *type = attr(a, "type");
	int		 o = -1, keep = 0;

	if (strcmp(el, "failure") == 0)
		o = FLAKY_FAIL;
	else if (strcmp(el, "error") == 0)
		o = FLAKY_ERROR;
	else if (strcmp(el, "skipped") == 0)
		o = type != NULL && strcmp(type, "pytest.xfail") == 0 ?
		    FLAKY_XFAIL : FLAKY_SKIP;
	else if (strcmp(el, "flakyFailure") == 0 ||
	    strcmp(el, "flakyError") == 0) {
		/* Failed first, passed on a retry: the first attempt counts. */
		static const char retry[] = "failed, then passed on retry: ";

		attempt_child(x, el[5] == 'E' ? FLAKY_ERROR : FLAKY_FAIL, 1, m);
		if (x->outcome == FLAKY_PASS) {
			x->outcome = FLAKY_FAIL;
			x->flaky = 1;
			parse_msg_add(&x->msg, retry, strlen(retry));
			if (m != NULL)
				parse_msg_add(&x->msg, m, strlen(m));
		}
		return;	/* its stack trace is in child elements: not kept */
	} else if (strcmp(el, "rerunFailure") == 0 ||
	    strcmp(el, "rerunError") == 0) {
		attempt_child(x, el[5] == 'E' ? FLAKY_ERROR : FLAKY_FAIL, 0, m);
		return;		/* the <failure> says it already */
	}
	if (o >= 0) {
		/* A real failure beats a flaky one; otherwise first wins. */
		if (x->outcome != FLAKY_PASS && !x->flaky)
			return;
		if (x->flaky) {
			flaky_buf_reset(&x->msg);
			x->flaky = 0;
		}
		x->outcome = o;
		keep = 1;
		if (x->extra != NULL && FLAKY_FAILED(o) && x->primary < 0) {
			x->primary = o;
			x->primary_msg = attempt_msg(m);
		}
	}
	if (!keep)
		return;
	if (m != NULL && *m != '\0') {
		parse_msg_add(&x->msg, m, strlen(m));
		parse_msg_add(&x->msg, "\n", 1);
	}
	x->text_on = 1;
}

/* A stream's testcase, complete: to fn, then forgotten, so that what a
 * stream holds does not grow with the file. */
static void
case_hand_over(struct jx *x)
{
	struct flaky_result *v = &x->res.v[0];
	int		 r;

	v->position = (unsigned)x->ncases++;
	r = x->fn(x->arg, v, x->own.attempts, x->own.nattempts, x->fn_errbuf,
	    x->fn_errlen);
	free(v->test);
	free(v->message);
	free(v->signature);
	x->res.n = 0;
	x->natt_total += x->own.nattempts;
	flaky_junit_extra_free(&x->own);
	if (r < 0) {
		x->fn_err = r;
		XML_StopParser(x->p, XML_FALSE);
	}
}

/* </testcase>: the result. */
static void
case_end(struct jx *x)
{
	long	 idx;

	x->in_case = 0;
	if (x->id.oom || x->msg.oom) {
		stop(x, "out of memory");
		return;
	}
	if ((idx = parse_add(&x->ctx, x->id.data ? x->id.data : "",
	    x->id.len, x->outcome, x->duration_us)) < 0) {
		stop(x, "out of memory");
		return;
	}
	if ((FLAKY_FAILED(x->outcome) || x->outcome == FLAKY_XFAIL) &&
	    x->msg.len > 0) {
		size_t	 n = x->msg.len;

		while (n > 0 && (x->msg.data[n - 1] == '\n' ||
		    x->msg.data[n - 1] == ' '))
			n--;
		if (n > 0 && parse_message(&x->ctx, idx, x->msg.data, n) < 0)
			stop(x, "out of memory");
	}
	if (attempts_flush(x, (size_t)idx) < 0)
		stop(x, "out of memory");
	else if (x->fn != NULL)
		case_hand_over(x);
}

/* <testsuite timestamp=>: ISO 8601, UTC when it names no zone (Surefire
 * and pytest before 7 write local time without one: we cannot know it). */
static void
suite_time(struct jx *x, const char *v)
{
	int64_t	 ms;

	if (flaky_parse_time(v, &ms) == 0)
		x->extra->timestamp_ms = ms;
}

/* A tests="N" count, within [0, COUNT_MAX]; the file is untrusted. */
#define COUNT_MAX	1000000000L
static long
count_attr(const char *v)
{
	long	 n = strtol(v, NULL, 10);

	return n < 0 ? 0 : n > COUNT_MAX ? COUNT_MAX : n;
}

/* An element opens: bound the nesting, check the root, dispatch. */
static void XMLCALL
on_start(void *ud, const XML_Char *el, const XML_Char **a)
{
	struct jx	*x = ud;
	const char	*v;

	if (++x->depth > JUNIT_DEPTH_MAX) {
		stop(x, "expected at most 64 nested elements (the depth "
		    "limit), got more");
		return;
	}
	if (x->depth == 1 && strcmp(el, "testsuites") != 0 &&
	    strcmp(el, "testsuite") != 0) {
		stop(x, "expected <testsuites> or <testsuite>");
		return;
	}
	if (x->in_case) {
		if (x->depth == x->case_depth + 1)
			child_start(x, el, a);
		return;
	}
	if (strcmp(el, "testsuites") == 0) {
		if (x->depth == 1 && (v = attr(a, "tests")) != NULL)
			x->root_total = count_attr(v);
	} else if (strcmp(el, "testsuite") == 0) {
		if ((v = attr(a, "name")) != NULL && strcmp(v, "pytest") == 0 &&
		    !x->pytest) {
			x->pytest = x->any_pytest = 1;
			x->pytest_depth = x->depth;
		}
		if (x->extra != NULL && x->extra->timestamp_ms < 0 &&
		    (v = attr(a, "timestamp")) != NULL)
			suite_time(x, v);
		if (x->depth <= 2 && (v = attr(a, "tests")) != NULL) {
			/* Both bounded: the sum cannot overflow. */
			x->suite_total += count_attr(v);
			if (x->suite_total > COUNT_MAX)
				x->suite_total = COUNT_MAX;
			x->suites_seen++;
		}
	} else if (strcmp(el, "testcase") == 0)
		case_start(x, a);
}

/* An element closes. */
static void XMLCALL
on_end(void *ud, const XML_Char *el)
{
	struct jx	*x = ud;

	(void)el;
	if (x->in_case && x->depth == x->case_depth)
		case_end(x);
	else if (x->in_case && x->depth == x->case_depth + 1)
		x->text_on = 0;
	if (x->pytest && x->depth == x->pytest_depth)
		x->pytest = 0;
	x->depth--;
}

/* Text inside <failure>/<error>: the rest of the message. */
static void XMLCALL
on_text(void *ud, const XML_Char *s, int len)
{
	struct jx	*x = ud;

	if (x->text_on && len > 0)
		parse_msg_add(&x->msg, s, (size_t)len);
}

/* Any entity declaration (internal or external, general or parameter) is
 * refused: JUnit files never need one, and this stops entity expansion
 * attacks before they start. */
static void XMLCALL
on_entity(void *ud, const XML_Char *name, int param, const XML_Char *value,
    int vlen, const XML_Char *base, const XML_Char *sysid,
    const XML_Char *pubid, const XML_Char *notation)
{
	(void)name, (void)param, (void)value, (void)vlen, (void)base;
	(void)sysid, (void)pubid, (void)notation;
	stop(ud, "expected no entity declarations (refused for safety)");
}

/* External entities are never loaded. */
static int XMLCALL
on_external(XML_Parser p, const XML_Char *ctx, const XML_Char *base,
    const XML_Char *sysid, const XML_Char *pubid)
{
	(void)p, (void)ctx, (void)base, (void)sysid, (void)pubid;
	return XML_STATUS_ERROR;	/* never load anything */
}

/* A parser with the safety settings. */
int
jx_init(struct jx *x, const char *name)
{
	memset(x, 0, sizeof *x);
	x->primary = -1;
	x->name = name;
	x->root_total = -1;
	flaky_results_init(&x->res);
	x->ctx.res = &x->res;
	flaky_buf_init(&x->id);
	flaky_buf_init(&x->msg);
	if ((x->p = XML_ParserCreate(NULL)) == NULL)
		return -ENOMEM;
	XML_SetUserData(x->p, x);
	XML_SetElementHandler(x->p, on_start, on_end);
	XML_SetCharacterDataHandler(x->p, on_text);
	XML_SetEntityDeclHandler(x->p, on_entity);
	XML_SetExternalEntityRefHandler(x->p, on_external);
	XML_SetParamEntityParsing(x->p, XML_PARAM_ENTITY_PARSING_NEVER);
	return 0;
}

/* Free the parser and what it collected. */
void
jx_free(struct jx *x)
{
	if (x->p != NULL)
		XML_ParserFree(x->p);
	flaky_results_free(&x->res);
	flaky_buf_free(&x->id);
	flaky_buf_free(&x->msg);
	attempts_reset(x);
	flaky_junit_extra_free(&x->own);
}

/* Feed a chunk; 0, or -EINVAL with err filled. */
int
jx_feed(struct jx *x, const char *s, size_t len, int final, char *err,
    size_t errlen)
{
	if (len > INT32_MAX)
		return flaky_error(err, errlen, EFBIG, "%s: chunk too large",
		    x->name);
	if (XML_Parse(x->p, s, (int)len, final) != XML_STATUS_ERROR) {
		x->fed += (int64_t)len;
		/* What expat still holds starts at its current index: one
		 * unfinished tag, comment or processing instruction. */
		if (x->fed - XML_GetCurrentByteIndex(x->p) <= JUNIT_MARKUP_MAX)
			return 0;
		return flaky_error(err, errlen, EINVAL, "%s:%lu:%lu: expected "
		    "tags, comments and processing instructions of at most %d "
		    "bytes (the markup size limit), got more", x->name,
		    (unsigned long)XML_GetCurrentLineNumber(x->p),
		    (unsigned long)XML_GetCurrentColumnNumber(x->p) + 1,
		    JUNIT_MARKUP_MAX);
	}
	if (x->fn_err < 0)
		return x->fn_err;	/* fn filled err */
	if (x->err[0] != '\0')
		return flaky_error(err, errlen, EINVAL, "%s", x->err);
	return flaky_error(err, errlen, EINVAL, "%s:%lu:%lu: expected "
	    "well-formed XML (%s)", x->name,
	    (unsigned long)XML_GetCurrentLineNumber(x->p),
	    (unsigned long)XML_GetCurrentColumnNumber(x->p) + 1,
	    XML_ErrorString(XML_GetErrorCode(x->p)));
}


/* Hand the results over. */
static int
jx_done(struct jx *x, struct flaky_results *out, char *err, size_t errlen)
{
	if (x->depth != 0 || x->err[0] != '\0')
		return flaky_error(err, errlen, EINVAL, "%s: expected a "
		    "complete document", x->name);
	snprintf(x->res.runner, sizeof x->res.runner, "%s",
	    x->any_pytest ? "pytest" : "junit");
	x->res.summary_total = x->root_total >= 0 ? x->root_total :
	    x->suites_seen > 0 ? x->suite_total : -1;
	if (x->res.n == 0 && (x->res.warning = strdup("the JUnit file "
	    "holds no testcase")) == NULL)
		return -ENOMEM;
	if (parse_dedupe(&x->res) < 0)
		return flaky_error(err, errlen, ENOMEM, "%s: out of memory",
		    x->name);
	*out = x->res;
	flaky_results_init(&x->res);
	return 0;
}

/* Parse JUnit XML held in memory. */
int
flaky_parse_junit_buffer(const char *name, const char *s, size_t len,
    struct flaky_results *out, char *err, size_t errlen)
{
	struct jx	 x;
	int		 e;

	flaky_results_init(out);
	if (len > (size_t)JUNIT_SIZE_MAX)
		return flaky_error(err, errlen, EFBIG, "%s: expected at most "
		    "256 MiB of XML", name);
	if ((e = jx_init(&x, name)) < 0) {
		flaky_error(err, errlen, -e, "%s: out of memory", name);
		goto out;
	}
	/* In chunks, so that the markup bound holds here too. */
	do {
		size_t	 n = len < JUNIT_CHUNK ? len : JUNIT_CHUNK;

		if ((e = jx_feed(&x, s, n, n == len, err, errlen)) < 0)
			goto out;
		s += n;
		len -= n;
	} while (len > 0);
	e = jx_done(&x, out, err, errlen);
out:
	jx_free(&x);
	return e;
}

/* Parse a JUnit XML file, read in chunks so it is never held whole. */
int
flaky_parse_junit(const char *path, struct flaky_results *out, char *err,
    size_t errlen)
{
	return flaky_parse_junit_ex(path, out, NULL, err, errlen);
}

/* Free what flaky_parse_junit_ex handed over; NULL is fine. */
void
flaky_junit_extra_free(struct flaky_junit_extra *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->nattempts; i++)
		free(e->attempts[i].message);
	free(e->attempts);
	e->attempts = NULL;
	e->nattempts = e->cap = 0;
}

/* flaky_parse_junit, and when extra is not NULL the suite's timestamp and
 * each retried test's attempts too. On error both stay empty. */
int
flaky_parse_junit_ex(const char *path, struct flaky_results *out,
    struct flaky_junit_extra *extra, char *err, size_t errlen)
{
	struct jx	 x;
	char		 buf[64 * 1024];
	size_t		 size, total = 0;
	ssize_t		 n;
	int		 fd, e;

	flaky_results_init(out);
	/* Opened as every bounded file is (util.c), read in chunks here. */
	e = flaky_open_file(path, JUNIT_SIZE_MAX, &fd, &size, err, errlen);
	if (e == -EFBIG)
		return flaky_error(err, errlen, EFBIG, "%s: expected at most "
		    "256 MiB of XML", path);
	if (e == -EISDIR)
		return -EINVAL;		/* as any file that is not regular */
	if (e < 0)
		return e;
	if (extra != NULL) {
		memset(extra, 0, sizeof *extra);
		extra->timestamp_ms = -1;
	}
	if ((e = jx_init(&x, path)) < 0) {
		flaky_error(err, errlen, -e, "%s: out of memory", path);
		goto out;
	}
	x.extra = extra;
	for (;;) {
		if ((n = read(fd, buf, sizeof buf)) == -1) {
			if (errno == EINTR)
				continue;
			e = flaky_error(err, errlen, errno, "%s: %s", path,
			    strerror(errno));
			goto out;
		}
		/* The file may grow while we read it. */
		if ((total += (size_t)n) > JUNIT_SIZE_MAX) {
			e = flaky_error(err, errlen, EFBIG, "%s: expected at "
			    "most 256 MiB of XML", path);
			goto out;
		}
		if ((e = jx_feed(&x, buf, (size_t)n, n == 0, err,
		    errlen)) < 0 || n == 0)
			break;
	}
	if (e == 0)
		e = jx_done(&x, out, err, errlen);
out:
	if (e < 0 && extra != NULL) {
		flaky_junit_extra_free(extra);
		extra->timestamp_ms = -1;
	}
	close(fd);
	jx_free(&x);
	return e;
}
