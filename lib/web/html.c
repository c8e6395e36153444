/* The one HTML escaper, query parameters, and the frame of a page: its
 * style (1400 and 400 px wide), the script that sorts and filters the
 * tests table, the navigation. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

/* The style: one column of content; tables scroll sideways inside their
 * box on a narrow screen instead of cutting ids; charts are as wide as
 * their box, their text HTML at a size that reads (12 px) at any width.
 * Text wraps at spaces; only ids, output and messages may break inside a
 * word, and only where a line cannot hold the word (overflow-wrap:
 * anywhere, never word-break: break-all). */
static const char style[] =
    "<style>\n"
    "body{font-family:sans-serif;margin:0;color:#222;background:#fff}\n"
    "header{background:#234;color:#fff;padding:.5em 1em}\n"
    "header a{color:#fff;margin-right:1.2em;text-decoration:none}\n"
    "main{padding:0 1em 2em;max-width:1360px}\n"
    "h1{font-size:1.4em;overflow-wrap:anywhere}"
    "h2{font-size:1.15em;margin-top:1.4em}\n"
    ".scroll{overflow-x:auto;max-width:100%}\n"
    ".nw{white-space:nowrap}\n"
    "table{border-collapse:collapse;font-size:13px}\n"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
    "vertical-align:top;white-space:nowrap}\n"
    "th{background:#eef;cursor:pointer;white-space:nowrap}\n"
    "td.id{overflow-wrap:anywhere;min-width:12em;white-space:normal}\n"
    "td.msg pre{margin:0}tr.msg td{border-top:0}td.msg,td.text"
    "{white-space:normal}\n"
    "td.num{text-align:right;white-space:nowrap}\n"
    ".critical{color:#b00}.warning{color:#b60}.broken{color:#707}"
    ".noise{color:#666}.stable{color:#262}\n"
    ".pass{color:#262}.fail,.error{color:#b00}\n"
    "pre{background:#f6f6f6;padding:.5em;overflow-x:auto;"
    "white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}\n"
    "svg{max-width:100%}\n"
    "form.filters label{margin-right:1em;display:inline-block}\n"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;"
    "gap:2px 1em}dl.facts dd{margin:0;overflow-wrap:anywhere;"
    "min-width:0}\n"
    ".chart{font-size:12px;margin:0 0 1em;max-width:980px}\n"
    ".chart .legend{display:flex;flex-wrap:wrap;gap:.3em 1.5em;"
    "color:#444;margin:.4em 0 0}\n"
    ".key{display:inline-block;width:20px;height:10px;margin-right:6px;"
    "vertical-align:middle}.key.line{height:0;border-top:2px solid #c62828}"
    ".key.band{background:#90caf9}\n"
    ".rate .plot{position:relative;height:220px;margin:.9em 3em 2.4em 3.2em;"
    "border-bottom:1px solid #888}\n"
    ".rate .area{position:absolute;left:0;top:0;width:100%;height:100%;"
    "overflow:visible}\n"
    ".rate .ylab{position:absolute;left:-3.4em;width:2.9em;"
    "text-align:right;transform:translateY(-50%)}\n"
    ".rate .date{position:absolute;top:100%;padding-top:6px;"
    "transform:translateX(-50%);white-space:nowrap}\n"
    ".rate .date::before{content:\"\";position:absolute;left:50%;top:0;"
    "height:5px;border-left:1px solid #888}\n"
    ".rate .pt{position:absolute;width:6px;height:6px;margin:-3px 0 0 -3px;"
    "border-radius:50%;background:#c62828}\n"
    ".rate .legend{margin-left:3.2em}\n"
    ".tiers{max-width:480px}.tiers .bar{display:grid;grid-template-columns:"
    "5.5em 1fr 3em;gap:6px;align-items:center;margin:3px 0}"
    ".tiers .tl{text-align:right}.tiers .tb span{display:block;"
    "height:16px;min-width:1px}\n"
    "@media (max-width:600px){main{padding:0 .4em}"
    "td,th{font-size:12px;padding:2px 3px}header a{margin-right:.6em}"
    ".rate .plot{height:180px}.rate .date.alt{display:none}}\n"
    "</style>\n";

/* Sorting by a header's column and filtering by the form's fields; the
 * same filters work without it as query parameters. */
static const char script[] =
    "<script>\n"
    "function flakySort(th){var t=th.closest('table'),b=t.tBodies[0],"
    "i=th.cellIndex,d=th.dataset.dir==='a'?'d':'a';th.dataset.dir=d;"
    "var r=Array.prototype.slice.call(b.rows);r.sort(function(x,y){"
    "var p=x.cells[i].dataset.v||x.cells[i].textContent,"
    "q=y.cells[i].dataset.v||y.cells[i].textContent,"
    "a=parseFloat(p),c=parseFloat(q),o;"
    "o=(!isNaN(a)&&!isNaN(c))?a-c:p.localeCompare(q);"
    "return d==='a'?o:-o});r.forEach(function(e){b.appendChild(e)})}\n"
    "function flakyFilter(){var f=document.getElementById('filters');"
    "if(!f)return;var w={target:f.target.value,tier:f.tier.value,"
    "signature:f.signature.value,q:f.q.value.toLowerCase()};"
    "var n=0;document.querySelectorAll('#tests tbody tr').forEach("
    "function(r){var ok=(!w.target||r.dataset.target===w.target)&&"
    "(!w.tier||r.dataset.tier===w.tier)&&(!w.signature||"
    "r.dataset.signature===w.signature)&&(!w.q||r.dataset.test."
    "toLowerCase().indexOf(w.q)>=0);r.hidden=!ok;n+=ok});"
    "var c=document.getElementById('shown');if(c)c.textContent=n}\n"
    "document.addEventListener('DOMContentLoaded',function(){"
    "document.querySelectorAll('th[data-sort]').forEach(function(th){"
    "th.addEventListener('click',function(){flakySort(th)})});"
    "var f=document.getElementById('filters');if(f){"
    "f.addEventListener('input',function(e){if(e.target.name==='box')"
    "f.submit();else flakyFilter()});"
    "if(f.dataset.live)f.addEventListener('submit',function(e){"
    "e.preventDefault();flakyFilter()});flakyFilter()}"
    "var bf=document.getElementById('boxes');if(bf)bf.box."
    "addEventListener('change',function(){bf.submit()});"
    "document.querySelectorAll('button[data-copy]').forEach(function(b){"
    "b.addEventListener('click',function(){var t=document."
    "getElementById(b.dataset.copy).textContent;b.textContent='copied';"
    "if(navigator.clipboard)navigator.clipboard.writeText(t).catch("
    "function(){b.textContent='select the text to copy'})})})});\n"
    "</script>\n";

void
web_doc_begin(struct web_ctx *c, const char *title)
{
	flaky_buf_adds(c->b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width, initial-scale=1\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" "
	    "content=\"default-src 'none'; style-src 'unsafe-inline'; "
	    "script-src 'unsafe-inline'; img-src data:\">\n<title>");
	web_esc(c->b, title);
	flaky_buf_adds(c->b, "</title>\n");
	flaky_buf_adds(c->b, style);
	flaky_buf_adds(c->b, script);
	flaky_buf_adds(c->b, "</head>\n<body>\n<header><nav>");
	if (c->single)
		flaky_buf_adds(c->b, "<a href=\"#overview\">Overview</a>"
		    "<a href=\"#tests-page\">Tests</a>");
	else
		flaky_buf_adds(c->b, "<a href=\"/\">Overview</a>"
		    "<a href=\"/tests\">Tests</a>"
		    "<a href=\"/api/v1/tests\">API</a>"
		    "<a href=\"/metrics\">Metrics</a>");
	flaky_buf_adds(c->b, "</nav></header>\n<main>\n");
}

void
web_doc_end(struct web_ctx *c)
{
	flaky_buf_adds(c->b, "</main>\n</body></html>\n");
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
	/* 2026-11-01T12:00:00.000Z: a space, no milliseconds */
	if (strlen(t) >= 19) {
		t[10] = ' ';
		t[19] = '\0';
	}
	flaky_buf_adds(b, t);
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
