/* fleet: the URI rules that hold without a server (a password in a URI is
 * refused before anything is sent; a URI is shown without userinfo). The
 * server side is tests/integration/fleet. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "fleet/fleet.h"

START_TEST(redact)
{
	static const struct { const char *in, *out; } v[] = {
		{ "postgresql:///flaky?host=/tmp/x&user=flaky",
		  "postgresql:///flaky?host=/tmp/x&user=flaky" },
		{ "postgresql://bob:s3cret@db.example:5432/flaky",
		  "postgresql://db.example:5432/flaky" },
		{ "postgres://bob@db/flaky?sslmode=require",
		  "postgres://db/flaky?sslmode=require" },
		{ "postgresql://db/flaky?password=s3cret&user=bob",
		  "postgresql://db/flaky?user=bob" },
		{ "postgresql://db/flaky?user=bob&password=s3cret",
		  "postgresql://db/flaky?user=bob" },
		{ "postgresql://a:b@db", "postgresql://db" },
		{ "host=db password=s3cret", "(a connection string)" },
	};
	char	 buf[128];
	size_t	 i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		flaky_fleet_redact_uri(v[i].in, buf, sizeof buf);
		ck_assert_str_eq(buf, v[i].out);
		ck_assert_ptr_null(strstr(buf, "s3cret"));
	}
	flaky_fleet_redact_uri("postgresql://a:b@db/x", buf, 8);
	ck_assert_str_eq(buf, "postgre");
}
END_TEST

START_TEST(is_uri)
{
	ck_assert(flaky_fleet_is_uri("postgresql:///x"));
	ck_assert(flaky_fleet_is_uri("postgres://h/x"));
	ck_assert(!flaky_fleet_is_uri("flaky.db"));
	ck_assert(!flaky_fleet_is_uri("./postgresql://x"));
	ck_assert(!flaky_fleet_is_uri(NULL));
}
END_TEST

/* Refused before any connection is tried: no server is needed, and the
 * message neither holds the password nor the user's name with it. */
START_TEST(password_refused)
{
	static const char *const uris[] = {
		"postgresql://bob:s3cret@127.0.0.1:1/flaky",
		"postgresql:///flaky?host=/nonexistent&password=s3cret",
	};
	struct flaky_fleet *f = (void *)1;
	char	 err[512];
	size_t	 i;

	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(flaky_fleet_connect(uris[i], &f, err,
		    sizeof err), -EINVAL);
		ck_assert_ptr_null(f);
		ck_assert_msg(strstr(err, "carries a password") != NULL, "%s",
		    err);
		ck_assert_msg(strstr(err, ".pgpass") != NULL, "%s", err);
		ck_assert_msg(strstr(err, "s3cret") == NULL, "%s", err);
	}
}
END_TEST

START_TEST(bad_uri)
{
	struct flaky_fleet *f;
	char	 err[512];

	ck_assert_int_eq(flaky_fleet_connect("postgresql://h/x?bogus=1", &f,
	    err, sizeof err), -EINVAL);
	ck_assert_msg(strstr(err, "bogus") != NULL, "%s", err);
	ck_assert_int_eq(flaky_fleet_connect(
	    "postgresql:///x?host=/nonexistent/dir", &f, err, sizeof err),
	    -ECONNREFUSED);
	ck_assert_msg(strstr(err, "cannot connect to postgresql:///x") !=
	    NULL, "%s", err);
	ck_assert_msg(strchr(err, '\n') == NULL, "%s", err);
	ck_assert_int_ge(flaky_fleet_schema_latest(), 1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("fleet");
	TCase	*tc = tcase_create("fleet");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, redact);
	tcase_add_test(tc, is_uri);
	tcase_add_test(tc, password_refused);
	tcase_add_test(tc, bad_uri);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
