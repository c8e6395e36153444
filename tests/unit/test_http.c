/* http: the listen address reader, http: of the config, and the server
 * (lib/http) on a real socket with an in-process evhttp client: the
 * token, the methods, the reply's headers, the targets' copy. The rest
 * (limits, the connection cap, Chromium) is tests/integration/web. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "config/config.h"
#include "http/http.h"
#include "store/store.h"
#include "test_helper.h"
#include "web/web.h"

START_TEST(listen_addresses)
{
	static const struct {
		const char	*in, *host;
		int		 port, loopback;
	} ok[] = {
		{ "127.0.0.1:8470", "127.0.0.1", 8470, 1 },
		{ "localhost:0", "127.0.0.1", 0, 1 },
		{ "127.9.9.9:1", "127.9.9.9", 1, 1 },
		{ "[::1]:9", "::1", 9, 1 },
		{ "0.0.0.0:80", "0.0.0.0", 80, 0 },
		{ "10.1.2.3:65535", "10.1.2.3", 65535, 0 },
		{ "[::]:80", "::", 80, 0 },
	};
	static const char *const bad[] = {
		"nonsense", ":80", "1.2.3.4", "1.2.3.4:70000", "1.2.3.4:-1",
		"[::1]80", "host.example:80", "1.2.3.4:8x", "::1:80", "",
	};
	struct flaky_listen l;
	char		 err[256];

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		ck_assert_msg(flaky_listen_parse(ok[i].in, &l, err,
		    sizeof err) == 0, "%s: %s", ok[i].in, err);
		ck_assert_str_eq(l.host, ok[i].host);
		ck_assert_int_eq(l.port, ok[i].port);
		ck_assert_int_eq(l.loopback, ok[i].loopback);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(flaky_listen_parse(bad[i], &l, err,
		    sizeof err) == -EINVAL, "%s accepted", bad[i]);
		ck_assert_ptr_nonnull(strstr(err, "expected ADDR:PORT"));
	}
}
END_TEST

/* Parse y as /etc/s.yaml; 0 or the error in err. */
static int
parse(const char *y, struct flaky_config **cfg, char *err, size_t len)
{
	return flaky_config_parse_buffer("/etc/s.yaml", y, strlen(y),
	    FLAKY_CONFIG_NO_FS_CHECKS, cfg, err, len);
}

START_TEST(config_http)
{
	struct flaky_config *cfg;
	char		 err[512];

	ck_assert_int_eq(parse("timezone: UTC\n", &cfg, err, sizeof err), 0);
	ck_assert_ptr_null(cfg->http_listen);	/* off by default */
	flaky_config_free(cfg);
	ck_assert_int_eq(parse("http: {}\n", &cfg, err, sizeof err), 0);
	ck_assert_str_eq(cfg->http_listen, FLAKY_HTTP_LISTEN);
	ck_assert_ptr_null(cfg->http_token_file);
	flaky_config_free(cfg);
	ck_assert_int_eq(parse("http:\n  listen: 0.0.0.0:8470\n"
	    "  token_file: tok\n", &cfg, err, sizeof err), 0);
	ck_assert_str_eq(cfg->http_token_file, "/etc/tok");
	flaky_config_free(cfg);

	ck_assert_int_eq(parse("jobs: 1\nhttp:\n  listen: 0.0.0.0:8470\n",
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_msg(strncmp(err, "/etc/s.yaml:3:11: listen: 0.0.0.0:8470 "
	    "is not a loopback address", 51) == 0, "%s", err);
	ck_assert_ptr_nonnull(strstr(err, "token_file"));
	ck_assert_int_eq(parse("http:\n  listen: somewhere\n", &cfg, err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "s.yaml:2:11: listen: expected "
	    "ADDR:PORT"));
	ck_assert_int_eq(parse("http: [1]\n", &cfg, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "http: expected a mapping"));
	ck_assert_int_eq(parse("http:\n  port: 80\n", &cfg, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "unknown key"));
}
END_TEST

/* http: database: the dashboard of another database, a file or the
 * fleet's server; the URI rules of fleet: url: (issue 28). */
START_TEST(config_http_database)
{
	struct flaky_config *cfg;
	char		 err[512];

	ck_assert_int_eq(parse("http: {}\n", &cfg, err, sizeof err), 0);
	ck_assert_ptr_null(cfg->http_database);
	flaky_config_free(cfg);
	ck_assert_int_eq(parse("http:\n  database: other.db\n", &cfg, err,
	    sizeof err), 0);
	ck_assert_str_eq(cfg->http_database, "/etc/other.db");
	flaky_config_free(cfg);
	ck_assert_int_eq(parse("http:\n  database: postgresql:///f?host=/r\n",
	    &cfg, err, sizeof err), 0);
	ck_assert_str_eq(cfg->http_database, "postgresql:///f?host=/r");
	ck_assert_int_eq(cfg->http_database_line, 2);
	ck_assert_int_eq(cfg->http_database_col, 13);
	flaky_config_free(cfg);
	ck_assert_int_eq(parse("http:\n  database: postgresql://u:pw9@h/x\n",
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_msg(strstr(err, "s.yaml:2:13: http: database: expected a "
	    "URI without a password") != NULL, "%s", err);
	ck_assert_ptr_null(strstr(err, "pw9"));
	ck_assert_int_eq(parse("http:\n  database: postgresql:///x?"
	    "pass%77ord=pw9\n", &cfg, err, sizeof err), -EINVAL);
	ck_assert_ptr_null(strstr(err, "pw9"));
}
END_TEST

/* database: as flakyd and flakyctl take it: a libpq key=value string is
 * refused without repeating it; a server URI is flakyctl's only
 * (issue 28). */
START_TEST(config_database)
{
	struct flaky_config *cfg;
	char		 err[512];
	const char	*uri = "timezone: UTC\ndatabase: postgresql:///f?host=/r\n";

	ck_assert_int_eq(parse("database: host=/r password=pw9\n", &cfg,
	    err, sizeof err), -EINVAL);
	ck_assert_msg(strstr(err, "s.yaml:1:11: database: expected a file or "
	    "a postgresql:// URI, got a libpq key=value string") != NULL,
	    "%s", err);
	ck_assert_ptr_null(strstr(err, "pw9"));
	ck_assert_int_eq(parse("database: postgresql:///x?password=pw9\n",
	    &cfg, err, sizeof err), -EINVAL);
	ck_assert_ptr_null(strstr(err, "pw9"));
	ck_assert_int_eq(parse("database: a=b.db\n", &cfg, err, sizeof err),
	    0);
	ck_assert_str_eq(cfg->database, "/etc/a=b.db");
	flaky_config_free(cfg);
	ck_assert_int_eq(parse(uri, &cfg, err, sizeof err), 0);
	flaky_config_free(cfg);
	ck_assert_int_eq(flaky_config_parse_buffer("/etc/s.yaml", uri,
	    strlen(uri), FLAKY_CONFIG_NO_FS_CHECKS | FLAKY_CONFIG_DAEMON, &cfg,
	    err, sizeof err), -EINVAL);
	ck_assert_msg(strstr(err, "s.yaml:2:11: database: expected a local "
	    "SQLite file") != NULL, "%s", err);
}
END_TEST

START_TEST(targets_pack)
{
	char		 name[] = "shop", sched[] = "every 5m";
	struct flaky_web_target t[2] = {
		{ name, sched, 1000 }, { "nosched", NULL, 0 },
	};
	struct flaky_web_target *p = flaky_http_targets_pack(t, 2);

	ck_assert_ptr_nonnull(p);
	name[0] = 'X';
	sched[0] = 'X';
	ck_assert_str_eq(p[0].name, "shop");
	ck_assert_str_eq(p[0].schedule, "every 5m");
	ck_assert_int_eq(p[0].next_fire_ms, 1000);
	ck_assert_str_eq(p[1].name, "nosched");
	ck_assert_ptr_null(p[1].schedule);
	free(p);
}
END_TEST

struct client {
	struct event_base *base;
	int		 left;
	int		 status[4];
	char		 body[4][64];
	char		 csp[4][256];
};

struct one {
	struct client	*c;
	int		 i;
};

static void
reply_cb(struct evhttp_request *req, void *arg)
{
	struct one	*o = arg;
	struct client	*c = o->c;
	const char	*h;
	size_t		 n;

	ck_assert_ptr_nonnull(req);
	c->status[o->i] = evhttp_request_get_response_code(req);
	n = evbuffer_get_length(evhttp_request_get_input_buffer(req));
	if (n >= sizeof c->body[0])
		n = sizeof c->body[0] - 1;
	evbuffer_remove(evhttp_request_get_input_buffer(req), c->body[o->i], n);
	h = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Content-Security-Policy");
	snprintf(c->csp[o->i], sizeof c->csp[0], "%s", h != NULL ? h : "");
	if (--c->left == 0)
		event_base_loopbreak(c->base);
}

/* Ask: no token, a wrong one, the right one, the right one with POST. */
static void
ask(struct client *c, struct evhttp_connection *con, struct one *o)
{
	static const char *const auth[4] = {
		NULL, "Bearer t0ken-x", "Bearer t0ken", "Bearer t0ken",
	};

	for (int i = 0; i < 4; i++) {
		struct evhttp_request *req;

		o[i].c = c;
		o[i].i = i;
		req = evhttp_request_new(reply_cb, &o[i]);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Host", "127.0.0.1");
		if (auth[i] != NULL)
			evhttp_add_header(evhttp_request_get_output_headers(req),
			    "Authorization", auth[i]);
		ck_assert_int_eq(evhttp_make_request(con, req, i == 3 ?
		    EVHTTP_REQ_POST : EVHTTP_REQ_GET, "/healthz"), 0);
	}
	c->left = 4;
}

START_TEST(server_roundtrip)
{
	struct flaky_http_conf conf;
	struct flaky_http *h;
	struct flaky_store *st;
	struct evhttp_connection *con;
	struct client	 c;
	struct one	 o[4];
	char		 dir[128], db[192], tok[192], err[512];
	unsigned	 port;
	FILE		*f;

	tu_tmpdir(dir, sizeof dir, "http");
	snprintf(db, sizeof db, "%s/flaky.db", dir);
	snprintf(tok, sizeof tok, "%s/token", dir);
	ck_assert_int_eq(flaky_store_open(db, 0, &st, err, sizeof err), 0);
	flaky_store_close(st);
	ck_assert_ptr_nonnull(f = fopen(tok, "w"));
	fputs("t0ken\nsecond line ignored\n", f);
	fclose(f);

	memset(&c, 0, sizeof c);
	ck_assert_ptr_nonnull(c.base = event_base_new());
	memset(&conf, 0, sizeof conf);
	conf.listen = "0.0.0.0:0";
	conf.db_path = db;
	ck_assert_int_eq(flaky_http_start(c.base, &conf, &h, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a loopback address"));
	conf.listen = "127.0.0.1:0";
	conf.token_file = tok;
	ck_assert_msg(flaky_http_start(c.base, &conf, &h, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_int_eq(sscanf(flaky_http_url(h), "http://127.0.0.1:%u/",
	    &port), 1);
	con = evhttp_connection_base_new(c.base, NULL, "127.0.0.1", port);
	ask(&c, con, o);
	event_base_dispatch(c.base);
	ck_assert_int_eq(c.left, 0);
	ck_assert_int_eq(c.status[0], 401);
	ck_assert_int_eq(c.status[1], 401);
	ck_assert_int_eq(c.status[2], 200);
	ck_assert_str_eq(c.body[2], "ok\n");
	ck_assert_int_eq(c.status[3], 405);
	for (int i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(strstr(c.csp[i], "default-src 'none'"));
	evhttp_connection_free(con);
	flaky_http_free(h);
	event_base_free(c.base);
	tu_rmdir(dir);
}
END_TEST

static Suite *
http_suite(void)
{
	Suite	*s = suite_create("http");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, listen_addresses);
	tcase_add_test(tc, config_http);
	tcase_add_test(tc, config_http_database);
	tcase_add_test(tc, config_database);
	tcase_add_test(tc, targets_pack);
	tcase_add_test(tc, server_roundtrip);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(http_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
