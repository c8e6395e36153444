/* config: notify: and notify_window: (docs/alerts.md): receivers with
 * their defaults, names, events; bad entries named by line. The bad
 * files' one-line messages are also checked against flakyd
 * --check-config in tests/integration/daemon/test_alerts.py. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "config/config.h"

static const char good[] =
    "notify_window: 10\n"
    "notify:\n"
    "  - url: \"https://bot:pw@hooks.example.com:8443/T1/B2?x=1\"\n"
    "    ca_file: /etc/ssl/private-ca.pem\n"
    "    events: [critical, recovered]\n"
    "    link: \"https://flaky.example/test/{test_id}\"\n"
    "  - name: tickets\n"
    "    command: [/usr/local/bin/file-ticket, --queue, QA]\n"
    "    timeout: 250ms\n"
    "    retry: 2s\n"
    "    retry_max: 1m\n"
    "    give_up: 1d\n";

START_TEST(receivers)
{
	struct flaky_config *cfg;
	const struct flaky_receiver *w, *c;
	char	 err[512];

	ck_assert_msg(flaky_config_parse_buffer("n.yaml", good,
	    sizeof good - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_int_eq(cfg->notify_window, 10);
	ck_assert_int_eq(cfg->nreceivers, 2);
	w = &cfg->receivers[0];
	c = &cfg->receivers[1];
	/* the host names it, never the URL with its secrets */
	ck_assert_str_eq(w->name, "hooks.example.com");
	ck_assert_str_eq(w->ca_file, "/etc/ssl/private-ca.pem");
	ck_assert_ptr_null(w->argv);
	ck_assert_uint_eq(w->events, 1u << FLAKY_ALERT_CRITICAL |
	    1u << FLAKY_ALERT_RECOVERED);
	ck_assert_int_eq(w->timeout_ms, 10000);
	ck_assert_int_eq(w->retry_ms, 30000);
	ck_assert_int_eq(w->retry_max_ms, 3600000);
	ck_assert_int_eq(w->give_up_ms, 3LL * 86400000);
	ck_assert_str_eq(c->name, "tickets");
	ck_assert_ptr_null(c->url);
	ck_assert_int_eq(c->argc, 3);
	ck_assert_str_eq(c->argv[2], "QA");
	ck_assert_ptr_null(c->argv[3]);
	ck_assert_uint_eq(c->events, (1u << FLAKY_ALERT_NKINDS) - 1);
	ck_assert_int_eq(c->timeout_ms, 250);
	ck_assert_int_eq(c->retry_ms, 2000);
	ck_assert_int_eq(c->retry_max_ms, 60000);
	ck_assert_int_eq(c->give_up_ms, 86400000);
	flaky_config_free(cfg);

	ck_assert_int_eq(flaky_config_parse_buffer("n.yaml", "jobs: 1\n", 8,
	    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err), 0);
	ck_assert_int_eq(cfg->nreceivers, 0);
	ck_assert_int_eq(cfg->notify_window, FLAKY_NOTIFY_WINDOW_DEFAULT);
	flaky_config_free(cfg);
}
END_TEST

START_TEST(bad)
{
	static const struct {
		const char	*yaml, *err;
	} t[] = {
		{ "notify:\n  - url: ftp://x/\n", "n.yaml:2:10: url: expected "
		    "an http:// or https:// URL with a host, got \"ftp://x/\"" },
		{ "notify:\n  - url: http:///path\n", "n.yaml:2:10: url: "
		    "expected an http:// or https:// URL with a host, got "
		    "\"http:///path\"" },
		{ "notify:\n  - name: a\n", "n.yaml:2:5: notify: expected a "
		    "receiver with either url: or command:" },
		{ "notify:\n  - {url: 'http://a/', nam: b}\n", "n.yaml:2:24: "
		    "notify: unknown key \"nam\", expected name, url, command, "
		    "ca_file, link, events, timeout, retry, retry_max or "
		    "give_up" },
		{ "notify:\n  - {command: []}\n", "n.yaml:2:15: command: "
		    "expected a program and its arguments, got an empty list" },
		{ "notify:\n  - {url: 'http://a/', events: []}\n",
		    "n.yaml:2:32: events: expected at least one event, got an "
		    "empty list" },
		{ "notify:\n  - {url: 'http://a/', name: 'a b'}\n",
		    "n.yaml:2:30: name: expected 1 to 64 letters, digits, '.', "
		    "'_' or '-', got \"a b\"" },
		{ "notify:\n  - {url: 'http://a/', timeout: 0s}\n",
		    "n.yaml:2:33: timeout: expected a duration above 0 such as "
		    "30s, 10m or 1h30m, got \"0s\"" },
		{ "notify_window: 0\n", "n.yaml:1:16: notify_window: expected "
		    "an integer from 1 to 10000, got \"0\"" },
		{ "notify: {url: 'http://a/'}\n", "n.yaml:1:9: notify: expected "
		    "a list of receivers, got a mapping" },
	};
	struct flaky_config *cfg;
	char	 err[512];

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		err[0] = '\0';
		ck_assert_int_eq(flaky_config_parse_buffer("n.yaml", t[i].yaml,
		    strlen(t[i].yaml), FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
		    sizeof err), -EINVAL);
		ck_assert_ptr_null(cfg);
		ck_assert_msg(strcmp(err, t[i].err) == 0, "case %zu:\n got  "
		    "%s\n want %s", i, err, t[i].err);
	}
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("config_notify");
	TCase	*tc = tcase_create("notify");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, receivers);
	tcase_add_test(tc, bad);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
