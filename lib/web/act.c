/* The dashboard's actions as an API (issue 32, docs/api.md "Actions"):
 * POST /api/v1/test/ID/quarantine, release, ticket and owner with a small
 * JSON object, taken on a writable store and recorded with who took them
 * (the token's name) and when. The server checks the token's scope, the
 * origin and the type before a request gets here (lib/http/act.c). */
#include "buildconf.h"

#include "json/json.h"
#include "store/store.h"
#include "web_int.h"

/* The keys each action's object may have; the first is its value. */
static const char *const act_keys[FLAKY_ACT_COUNT][3] = {
	[FLAKY_ACT_QUARANTINE] = { "reason", "ticket", NULL },
	[FLAKY_ACT_RELEASE] = { NULL, NULL, NULL },
	[FLAKY_ACT_TICKET] = { "url", NULL, NULL },
	[FLAKY_ACT_OWNER] = { "owner", NULL, NULL },
};

/* "/api/v1/test/ID/VERB": the id and the action, or -1. */
static int
act_parse_path(const char *path, int64_t *id)
{
	const char *p, *sl;
	char	 num[24];
	long long v;

	if (path == NULL || strncmp(path, "/api/v1/test/", 13) != 0)
		return -1;
	p = path + 13;
	if ((sl = strchr(p, '/')) == NULL || (size_t)(sl - p) >= sizeof num)
		return -1;
	memcpy(num, p, (size_t)(sl - p));
	num[sl - p] = '\0';
	if (flaky_parse_int(num, 1, INT64_MAX, &v) < 0)
		return -1;
	*id = v;
	return flaky_action_parse(sl + 1);
}

int
flaky_web_act_path(const char *path)
{
	int64_t	 id;

	return act_parse_path(path, &id) >= 0;
}

/* The object's members are the action's, strings each: 0, or 1 after a
 * 400 naming the first that is not. */
static int
check_body(struct web_ctx *c, const struct flaky_json *j, int kind)
{
	char	 msg[256];

	if (j->type != FLAKY_JSON_OBJECT)
		return web_api_fail(c, 400, NULL, "a JSON object", "bad "
		    "request: expected a JSON object"), 1;
	for (size_t i = 0; i < j->len; i++) {
		size_t	 k;

		for (k = 0; act_keys[kind][k] != NULL &&
		    strcmp(act_keys[kind][k], j->keys[i]) != 0; k++)
			;
		if (act_keys[kind][k] == NULL) {
			snprintf(msg, sizeof msg, "bad request: %s takes %s%s%s, "
			    "not '%.64s'", flaky_action_name(kind),
			    act_keys[kind][0] ? act_keys[kind][0] : "no members",
			    act_keys[kind][1] ? " and " : "",
			    act_keys[kind][1] ? act_keys[kind][1] : "",
			    j->keys[i]);
			return web_api_fail(c, 400, j->keys[i], "a member the "
			    "action takes", msg), 1;
		}
		if (j->items[i].type != FLAKY_JSON_STRING) {
			snprintf(msg, sizeof msg, "bad request: %s: expected a "
			    "string", j->keys[i]);
			return web_api_fail(c, 400, j->keys[i], "a string",
			    msg), 1;
		}
	}
	return 0;
}

/* The reply of a stored action. */
static void
act_reply(struct web_ctx *c, int64_t id, int kind, const char *value,
    const char *who)
{
	struct flaky_jw	 w;
	char		 t[32];

	flaky_jw_init(&w, c->b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "ok");
	flaky_jw_bool(&w, 1);
	flaky_jw_key(&w, "test_id");
	flaky_jw_int(&w, id);
	flaky_jw_key(&w, "action");
	flaky_jw_string(&w, flaky_action_name(kind));
	flaky_jw_key(&w, "value");
	flaky_jw_string(&w, value != NULL && *value != '\0' ? value : NULL);
	flaky_jw_key(&w, "who");
	flaky_jw_string(&w, who);
	flaky_jw_key(&w, "at");
	flaky_jw_string(&w, flaky_format_time(c->o->now_ms, t, sizeof t));
	flaky_jw_object_end(&w);
	(void)flaky_jw_finish(&w);
	flaky_buf_addc(c->b, '\n');
}

/* The action of path with its JSON body. */
static int
act(struct web_ctx *c, const char *path, const char *body, size_t len,
    const char *who)
{
	struct flaky_json_limits lim = { 16384, 4, 16 };
	struct flaky_json *j = NULL;
	const char *value, *ticket = NULL;
	int64_t	 id;
	int	 kind, r;

	if ((kind = act_parse_path(path, &id)) < 0)
		return web_api_fail(c, 404, NULL, NULL, "not found: actions "
		    "are /api/v1/test/ID/quarantine, release, ticket and "
		    "owner");
	if ((r = flaky_json_parse(body != NULL ? body : "{}", body != NULL ?
	    len : 2, &lim, &j, c->err, sizeof c->err)) < 0) {
		char	 msg[sizeof c->err + 32];

		snprintf(msg, sizeof msg, "bad request: %s", c->err);
		return web_api_fail(c, 400, NULL, "a JSON object", msg);
	}
	if (check_body(c, j, kind)) {
		flaky_json_free(j);
		return 0;
	}
	value = act_keys[kind][0] ? flaky_json_get_str(j, act_keys[kind][0]) :
	    NULL;
	if (kind == FLAKY_ACT_QUARANTINE)
		ticket = flaky_json_get_str(j, "ticket");
	if (ticket != NULL && *ticket == '\0')
		ticket = NULL;
	r = flaky_store_act(c->st, id, kind, value, ticket, who, "http",
	    c->o->now_ms, c->err, sizeof c->err);
	if (r == 0)
		act_reply(c, id, kind, value, who);
	else if (r == -EINVAL)
		web_api_fail(c, 400, act_keys[kind][0], NULL, c->err);
	else if (r == -ENOENT && kind == FLAKY_ACT_RELEASE)
		web_api_fail(c, 409, NULL, NULL, "conflict: the test is not in "
		    "quarantine");
	else if (r == -ENOENT)
		web_api_fail(c, 404, NULL, NULL, "not found: no such test");
	else if (r == -EBUSY)
		web_api_fail(c, 503, NULL, NULL, "busy: the database is "
		    "being written; try again");
	else
		web_api_fail(c, 500, NULL, NULL, c->err);
	flaky_json_free(j);
	return 0;
}

int
flaky_web_act(struct flaky_store *st, const struct flaky_web_opts *o,
    const char *path, const char *body, size_t len, const char *who,
    struct flaky_web_reply *r)
{
	struct flaky_web_opts opts = *o;
	struct web_ctx c;

	web_ctx_begin(&c, st, &opts, r);
	if (act(&c, path, body, len, who) < 0 || r->body.oom)
		return -ENOMEM;
	return web_ctx_end(&c, r, "application/json");
}
