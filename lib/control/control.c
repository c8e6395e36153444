/* The control protocol's requests (one table: name, arguments, usage) and
 * the framing of its replies. flakyd decodes what flakyctl encodes with
 * the same table, so neither can accept a request the other cannot say. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"

/* Blanks that separate a request's words; a target name has none. */
#define CTL_BLANKS	" \t\r"

static const struct ctl_entry {
	enum flaky_ctl_type type;
	const char	*name;
	const char	*args;		/* usage of the arguments */
	int		 min_args;
	int		 max_args;
} ctl_table[FLAKY_CTL_NTYPES] = {
	{ FLAKY_CTL_STATUS, "status", "", 0, 0 },
	{ FLAKY_CTL_RUN, "run", "TARGET [RUNS]", 1, 2 },
	{ FLAKY_CTL_RELOAD, "reload", "", 0, 0 },
};

/* The table entry of a request type, or NULL. */
static const struct ctl_entry *
ctl_entry(enum flaky_ctl_type type)
{
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ctl_table); i++)
		if (ctl_table[i].type == type)
			return &ctl_table[i];
	return NULL;
}

/* A request's wire name. */
const char *
flaky_ctl_request_name(enum flaky_ctl_type type)
{
	const struct ctl_entry *e = ctl_entry(type);

	return e != NULL ? e->name : NULL;
}

/* A name that travels as one word: no blank, no control character. */
static int
ctl_word_ok(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

/* Encode a request line (control.h). */
int
flaky_ctl_request_encode(const struct flaky_ctl_request *req,
    struct flaky_buf *b, char *err, size_t errlen)
{
	const struct ctl_entry *e = ctl_entry(req->type);
	size_t		 start = b->len;

	if (e == NULL)
		return flaky_error(err, errlen, EINVAL, "no request %d",
		    (int)req->type);
	flaky_buf_adds(b, e->name);
	if (req->type == FLAKY_CTL_RUN) {
		if (!ctl_word_ok(req->target))
			return flaky_error(err, errlen, EINVAL, "not a target "
			    "name: '%s'", req->target ? req->target : "");
		if (req->runs < 0 || req->runs > FLAKY_CTL_RUNS_MAX)
			return flaky_error(err, errlen, EINVAL, "runs: "
			    "expected a number from 1 to %d",
			    FLAKY_CTL_RUNS_MAX);
		flaky_buf_printf(b, " %s", req->target);
		if (req->runs > 0)
			flaky_buf_printf(b, " %d", req->runs);
	}
	if (b->oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if (b->len - start > FLAKY_CTL_LINE_MAX) {
		b->len = start;
		b->data[start] = '\0';
		return flaky_error(err, errlen, EMSGSIZE, "%s",
		    FLAKY_CTL_ERR_TOO_LONG);
	}
	flaky_buf_addc(b, '\n');
	return b->oom ? flaky_error(err, errlen, ENOMEM, "out of memory") : 0;
}

/* The answer to a request nobody knows: what the table offers. */
static int
ctl_unknown(char *err, size_t errlen)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "unknown request (expected ");
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ctl_table); i++) {
		const struct ctl_entry *e = &ctl_table[i];

		if (i > 0)
			flaky_buf_adds(&b, i + 1 ==
			    FLAKY_ARRAY_SIZE(ctl_table) ? " or " : ", ");
		flaky_buf_printf(&b, "%s%s%s", e->name, *e->args ? " " : "",
		    e->args);
	}
	flaky_buf_addc(&b, ')');
	flaky_error(err, errlen, EINVAL, "%s", b.oom ? "unknown request" :
	    b.data);
	flaky_buf_free(&b);
	return -EINVAL;
}

/* Decode a request line (control.h). */
int
flaky_ctl_request_decode(char *line, struct flaky_ctl_request *ret,
    char *err, size_t errlen)
{
	const struct ctl_entry *e = NULL;
	char		*argv[4], *p, *save = NULL;
	int		 argc = 0;
	long long	 n;

	memset(ret, 0, sizeof *ret);
	if (strlen(line) > FLAKY_CTL_LINE_MAX)
		return flaky_error(err, errlen, EMSGSIZE, "%s",
		    FLAKY_CTL_ERR_TOO_LONG);
	/* One word more than any request takes, to see there are too many. */
	for (p = strtok_r(line, CTL_BLANKS, &save); p != NULL &&
	    argc < (int)FLAKY_ARRAY_SIZE(argv);
	    p = strtok_r(NULL, CTL_BLANKS, &save))
		argv[argc++] = p;
	if (argc == 0)
		return flaky_error(err, errlen, ENODATA, "%s",
		    FLAKY_CTL_ERR_EMPTY);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ctl_table); i++)
		if (strcmp(argv[0], ctl_table[i].name) == 0)
			e = &ctl_table[i];
	if (e == NULL)
		return ctl_unknown(err, errlen);
	if (argc - 1 < e->min_args || argc - 1 > e->max_args)
		return flaky_error(err, errlen, EINVAL, "usage: %s%s%s",
		    e->name, *e->args ? " " : "", e->args);
	ret->type = e->type;
	if (e->type == FLAKY_CTL_RUN) {
		ret->target = argv[1];
		if (argc > 2 && flaky_parse_int(argv[2], 1, FLAKY_CTL_RUNS_MAX,
		    &n) < 0)
			return flaky_error(err, errlen, EINVAL, "runs: "
			    "expected a number from 1 to %d",
			    FLAKY_CTL_RUNS_MAX);
		ret->runs = argc > 2 ? (int)n : 0;
	}
	return 0;
}

/* Start a successful reply. */
void
flaky_ctl_reply_begin(struct flaky_jw *w, struct flaky_buf *b)
{
	flaky_jw_init(w, b);
	flaky_jw_object_begin(w);
	flaky_jw_key(w, FLAKY_CTL_F_OK);
	flaky_jw_bool(w, 1);
}

/* Close a reply: one object, one line. */
int
flaky_ctl_reply_end(struct flaky_jw *w)
{
	int	 rc;

	flaky_jw_object_end(w);
	if ((rc = flaky_jw_finish(w)) < 0)
		return rc;
	return flaky_buf_addc(w->buf, '\n');
}

/* A failed reply. */
int
flaky_ctl_reply_error(struct flaky_buf *b, const char *msg)
{
	struct flaky_jw	 w;

	flaky_jw_init(&w, b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, FLAKY_CTL_F_OK);
	flaky_jw_bool(&w, 0);
	flaky_jw_key(&w, FLAKY_CTL_F_ERROR);
	flaky_jw_string(&w, msg);
	return flaky_ctl_reply_end(&w);
}

/* Read a reply (control.h). */
int
flaky_ctl_reply_parse(const char *s, size_t n, struct flaky_json **ret,
    char *err, size_t errlen)
{
	const struct flaky_json_limits lim = { FLAKY_CTL_REPLY_MAX,
	    FLAKY_CTL_REPLY_DEPTH, FLAKY_CTL_REPLY_VALUES };
	const struct flaky_json *ok;
	struct flaky_json *j;
	const char	*why;
	int		 rc;

	*ret = NULL;
	if ((rc = flaky_json_parse(s, n, &lim, &j, err, errlen)) < 0)
		return rc;
	ok = flaky_json_get(j, FLAKY_CTL_F_OK);
	if (j->type != FLAKY_JSON_OBJECT || ok == NULL ||
	    ok->type != FLAKY_JSON_BOOL) {
		flaky_json_free(j);
		return flaky_error(err, errlen, EPROTO, "not a reply: no "
		    "\"%s\" in it", FLAKY_CTL_F_OK);
	}
	if (!ok->boolean) {
		why = flaky_json_get_str(j, FLAKY_CTL_F_ERROR);
		flaky_error(err, errlen, EREMOTEIO, "%s", why != NULL ? why :
		    "flakyd refused");
		flaky_json_free(j);
		return -EREMOTEIO;
	}
	*ret = j;
	return 0;
}
