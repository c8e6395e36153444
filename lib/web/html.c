/* The one HTML escaper, query parameters, and the frame of a page: its
 * style (style.c), its script with the reply's nonce (script.c), the
 * navigation, a tier as an icon and a word. */
#include "buildconf.h"

#include <ctype.h>
#include <sys/random.h>

#include "stats/stats.h"
#include "web_int.h"

/* Is c written as it is? */
static int
plain(unsigned char c)
{
	return (c >= 0x20 || c == '\t' || c == '\n') && c != 0x7f && c != '&' &&
	    c != '<' && c != '>' && c != '"' && c != '\'';
}

void
web_escn(struct flaky_buf *b, const char *s, size_t n)
{
	for (size_t i = 0, j; s != NULL && i < n; i = j + 1) {
		/* the plain bytes up to the next one to escape, at once */
		for (j = i; j < n && plain((unsigned char)s[j]); j++)
			;
		flaky_buf_add(b, s + i, j - i);
		if (j == n)
			break;
		switch (s[j]) {
		case '&': flaky_buf_adds(b, "&amp;"); break;
		case '<': flaky_buf_adds(b, "&lt;"); break;
		case '>': flaky_buf_adds(b, "&gt;"); break;
		case '"': flaky_buf_adds(b, "&quot;"); break;
		case '\'': flaky_buf_adds(b, "&#39;"); break;
		default: flaky_buf_adds(b, "&#xFFFD;"); break;
		}
	}
}

void
web_esc(struct flaky_buf *b, const char *s)
{
	if (s != NULL)
		web_escn(b, s, strlen(s));
}

int
web_param(const char *query, const char *key, char *buf, size_t len)
{
	size_t	 kl = strlen(key), o = 0;
	const char *p = query;

	while (p != NULL && *p != '\0') {
		size_t	 n = strcspn(p, "&;");

		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			for (size_t i = kl + 1; i < n; i++) {
				int	 c = (unsigned char)p[i], h, l;

				if (c == '+')
					c = ' ';
				else if (c == '%') {
					if (i + 2 >= n)
						return -1;
					if ((h = flaky_hexval(p[i + 1])) < 0 ||
					    (l = flaky_hexval(p[i + 2])) < 0)
						return -1;
					c = h * 16 + l;
					i += 2;
				}
				if (c == 0 || o + 1 >= len)
					return -1;
				buf[o++] = (char)c;
			}
			buf[o] = '\0';
			return 1;
		}
		p += n;
		if (*p != '\0')
			p++;
	}
	return 0;
}

void
web_urlenc(struct flaky_buf *b, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || strchr("-_.~", c) != NULL)
			flaky_buf_addc(b, (char)c);
		else
			flaky_buf_printf(b, "%%%02X", c);
	}
}

void
web_doc_begin(struct web_ctx *c, const char *title)
{
	const char *nonce = web_nonce(c);

	flaky_buf_printf(c->b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width, initial-scale=1\">\n"
	    "<meta name=\"color-scheme\" content=\"light dark\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" "
	    "content=\"default-src 'none'; style-src 'unsafe-inline'; "
	    "script-src 'nonce-%s'; img-src data:; connect-src 'self'\">\n"
	    "<title>", nonce);
	web_esc(c->b, title);
	flaky_buf_adds(c->b, "</title>\n");
	flaky_buf_adds(c->b, web_style);
	flaky_buf_printf(c->b, "<script nonce=\"%s\">\n", nonce);
	flaky_buf_adds(c->b, web_script);
	flaky_buf_adds(c->b, "</script>\n</head>\n<body>\n<a class=\"skip\" "
	    "href=\"#main\">Skip to the content</a>\n<header><nav "
	    "aria-label=\"pages\">");
	if (c->single)
		flaky_buf_adds(c->b, "<span class=\"brand\">flaky</span>"
		    "<a href=\"#overview\">Overview</a>"
		    "<a href=\"#tests-page\">Tests</a>");
	else
		flaky_buf_adds(c->b, "<a class=\"brand\" href=\"/\">flaky</a>"
		    "<a href=\"/\">Overview</a>"
		    "<a href=\"/tests\">Tests</a>"
		    "<a href=\"/api/v1/tests\">API</a>"
		    "<a href=\"/metrics\">Metrics</a>");
	flaky_buf_adds(c->b, "</nav></header>\n<main id=\"main\">\n");
}

void
web_doc_end(struct web_ctx *c)
{
	flaky_buf_adds(c->b, "</main>\n</body></html>\n");
}

/* The script nonce: the server's for this reply, else (report --html's
 * one file) one made here, from the same random source as tokens. */
const char *
web_nonce(struct web_ctx *c)
{
	if (c->o->nonce != NULL && *c->o->nonce != '\0')
		return c->o->nonce;
	if (c->nonce[0] == '\0' && flaky_web_nonce(c->nonce,
	    sizeof c->nonce) < 0)
		snprintf(c->nonce, sizeof c->nonce, "n%lld",
		    (long long)c->o->now_ms);
	return c->nonce;
}

/* 18 random bytes as 24 base64url characters, a reply's script nonce. */
int
flaky_web_nonce(char *buf, size_t len)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789-_";
	unsigned char r[18];
	size_t	 o = 0;

	if (len < 25 || getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -EIO;
	for (size_t i = 0; i < sizeof r; i += 3) {
		uint32_t v = (uint32_t)r[i] << 16 | (uint32_t)r[i + 1] << 8 |
		    r[i + 2];

		for (int k = 3; k >= 0; k--)
			buf[o++] = b64[(v >> (6 * k)) & 63];
	}
	buf[o] = '\0';
	return 0;
}

/* A tier as an icon and a word, in its colour: never the colour alone. */
void
web_tier_badge(struct flaky_buf *b, int tier)
{
	static const char *const icon[FLAKY_TIER_COUNT] = {
		[FLAKY_TIER_STABLE] = "\xe2\x9c\x93",	/* check */
		[FLAKY_TIER_NOISE] = "\xe2\x80\xa2",		/* bullet */
		[FLAKY_TIER_WARNING] = "\xe2\x96\xb2",	/* triangle */
		[FLAKY_TIER_CRITICAL] = "\xe2\x97\x86",	/* diamond */
		[FLAKY_TIER_BROKEN] = "\xe2\x9c\x96",	/* cross */
		[FLAKY_TIER_SKIPPED] = "\xe2\x80\x93",	/* dash */
		[FLAKY_TIER_NONE] = "?",
	};
	const char *name = flaky_tier_name(tier);

	flaky_buf_printf(b, "<span class=\"tier t-%s\"><span class=\"ic\" "
	    "aria-hidden=\"true\">%s</span> %s</span>", tier ==
	    FLAKY_TIER_NONE ? "none" : name, tier >= 0 && tier <
	    FLAKY_TIER_COUNT ? icon[tier] : "?", name);
}

void
web_esc_id(struct flaky_buf *b, const char *s)
{
	size_t	 i = 0, j = 0;

	for (; s != NULL && s[j] != '\0'; j++) {
		int	 before = s[j] == '[' && j > 0;
		int	 after = s[j] == '/' || s[j] == '.' ||
		    (s[j] == ':' && j > 0 && s[j - 1] == ':');

		if (before || (after && s[j + 1] != '\0')) {
			web_escn(b, s + i, j + after - i);
			flaky_buf_adds(b, "<wbr>");
			i = j + after;
		}
	}
	web_escn(b, s + i, j - i);
}

/* The box form of a page: its choices and the box shown; changing it
 * loads the page again (the rates are the server's to count). */
void
web_box_form(struct web_ctx *c, const char *action, char **boxes, size_t n)
{
	flaky_buf_printf(c->b, "<form id=\"boxes\" class=\"filters\" "
	    "method=\"get\" action=\"%s\">\n<label>box <select name=\"box\">"
	    "<option value=\"\">every box</option>", action);
	for (size_t i = 0; i < n; i++) {
		flaky_buf_adds(c->b, "<option value=\"");
		web_esc(c->b, boxes[i]);
		flaky_buf_printf(c->b, "\"%s>", c->q.box != NULL &&
		    strcmp(boxes[i], c->q.box) == 0 ? " selected" : "");
		web_esc(c->b, boxes[i]);
		flaky_buf_adds(c->b, "</option>");
	}
	flaky_buf_adds(c->b, "</select></label> <button type=\"submit\">show"
	    "</button></form>\n");
}

void
web_page_begin(struct web_ctx *c, const char *id, const char *title)
{
	if (!c->single)
		web_doc_begin(c, title);
	flaky_buf_printf(c->b, "<section id=\"%s\">\n<h1>", id);
	web_esc_id(c->b, title);
	flaky_buf_adds(c->b, "</h1>\n");
}

void
web_page_end(struct web_ctx *c)
{
	flaky_buf_adds(c->b, "</section>\n");
	if (!c->single)
		web_doc_end(c);
}

void
web_href_test(struct web_ctx *c, int64_t id)
{
	flaky_buf_printf(c->b, c->single ? "href=\"#test-%" PRId64 "\"" :
	    "href=\"/test/%" PRId64 "\"", id);
}

void
web_href_run(struct web_ctx *c, int64_t id)
{
	flaky_buf_printf(c->b, c->single ? "href=\"#run-%" PRId64 "\"" :
	    "href=\"/run/%" PRId64 "\"", id);
}

void
web_time(struct flaky_buf *b, int64_t ms)
{
	char	 t[32];

	if (ms == 0 || ms == INT64_MIN || ms == INT64_MAX) {
		flaky_buf_adds(b, "-");
		return;
	}
	flaky_format_time(ms, t, sizeof t);
	/* 2026-11-01T12:00:00.000Z: a space, no milliseconds; kept on one
	 * line (Chromium breaks a date at its hyphens at 400 px) */
	if (strlen(t) >= 19) {
		t[10] = ' ';
		t[19] = '\0';
	}
	flaky_buf_adds(b, "<span class=\"nw\">");
	flaky_buf_adds(b, t);
	flaky_buf_adds(b, "</span>");
}

void
web_dur_us(struct flaky_buf *b, int64_t us)
{
	if (us < 0)
		flaky_buf_adds(b, "-");
	else if (us < 10000)
		flaky_buf_printf(b, "%.1f ms", (double)us / 1e3);
	else if (us < 1000000)
		flaky_buf_printf(b, "%.0f ms", (double)us / 1e3);
	else if (us < 120000000)
		flaky_buf_printf(b, "%.1f s", (double)us / 1e6);
	else
		flaky_buf_printf(b, "%lldm%02llds", (long long)(us / 60000000),
		    (long long)(us / 1000000 % 60));
}

int
web_fail(struct web_ctx *c, int status, const char *msg)
{
	c->status = status;
	flaky_buf_reset(c->b);
	flaky_buf_adds(c->b, msg);
	flaky_buf_addc(c->b, '\n');
	return 0;
}

void
web_window(struct web_ctx *c, int64_t now_ms)
{
	int64_t	 end = (now_ms / FLAKY_DAY_MS + 1) * FLAKY_DAY_MS;

	memset(&c->q, 0, sizeof c->q);
	c->q.until_ms = end;
	c->q.since_ms = end - 30 * FLAKY_DAY_MS;
}

void
web_window_words(struct web_ctx *c, struct flaky_buf *b)
{
	char	 a[16], e[16];

	/* a date never breaks at its hyphens */
	flaky_format_day((c->q.until_ms - 1) / FLAKY_DAY_MS * FLAKY_DAY_MS, e,
	    sizeof e);
	if (c->q.since_ms == INT64_MIN)
		flaky_buf_printf(b, "from the first run to <span class=\"nw\">"
		    "%s</span>", e);
	else
		flaky_buf_printf(b, "from <span class=\"nw\">%s</span> to "
		    "<span class=\"nw\">%s</span>", flaky_format_day(
		    c->q.since_ms, a, sizeof a), e);
	if (c->q.box != NULL) {
		flaky_buf_adds(b, ", runs of box ");
		web_esc(b, c->q.box);
	}
}
