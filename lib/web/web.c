/* Routing a request to its page (web.h). */
#include "buildconf.h"

#include <errno.h>
#include <string.h>

#include "web/web.h"

void
flaky_web_reply_init(struct flaky_web_reply *r)
{
	memset(r, 0, sizeof *r);
	flaky_buf_init(&r->body);
}

void
flaky_web_reply_free(struct flaky_web_reply *r)
{
	flaky_buf_free(&r->body);
	flaky_web_reply_init(r);
}

static int
reply_text(struct flaky_web_reply *r, int status, const char *text)
{
	r->status = status;
	r->content_type = "text/plain; charset=utf-8";
	flaky_buf_reset(&r->body);
	if (flaky_buf_adds(&r->body, text) != 0 ||
	    flaky_buf_addc(&r->body, '\n') != 0)
		return -ENOMEM;
	return 0;
}

int
flaky_web_handle(struct flaky_store *st, const struct flaky_web_opts *o,
    const char *path, const char *query, struct flaky_web_reply *r)
{
	(void)st;
	(void)o;
	(void)query;
	if (strcmp(path, "/healthz") == 0)
		return reply_text(r, 200, "ok");
	return reply_text(r, 404, "not found");
}
