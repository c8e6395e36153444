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
		/* libpq decodes a key: pass%77ord is password (issue 28) */
		{ "postgresql://db/flaky?pass%77ord=s3cret&user=bob",
		  "postgresql://db/flaky?user=bob" },
		{ "postgresql://db/flaky?user=bob&%70assword=s3cret",
		  "postgresql://db/flaky?user=bob" },
		{ "postgresql://db/flaky?PASSWORD=s3cret",
		  "postgresql://db/flaky" },
		{ "postgresql://bob:s3c@ret@db/flaky", "postgresql://db/flaky" },
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

/* Every form a connection string is printed in names neither the
 * password nor a token of the URI libpq could not read (issue 28). */
START_TEST(secrets_never_repeated)
{
	static const char *const refused[] = {
		/* a percent-encoded password key */
		"postgresql:///flaky?host=/nonexistent&pass%77ord=s3cret",
		/* a token libpq cannot decode, inside the password */
		"postgresql://bob:s3%zzcret@/flaky?host=/nonexistent",
		/* libpq quotes a parameter with two '=' whole */
		"postgresql:///flaky?host=/x&password=s3=cret",
		"postgresql:///flaky?host=/x&s3cret",
	};
	struct flaky_fleet *f;
	char	 err[512];

	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ck_assert_int_eq(flaky_fleet_connect(refused[i], &f, err,
		    sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, "s3") == NULL, "%s", err);
		ck_assert_int_eq(flaky_fleet_check_uri(refused[i], err,
		    sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, "s3") == NULL, "%s", err);
	}
	/* what libpq could not read is still said */
	flaky_fleet_check_uri(refused[1], err, sizeof err);
	ck_assert_msg(strstr(err, "invalid percent-encoded token") != NULL,
	    "%s", err);
	ck_assert_int_eq(flaky_fleet_check_uri("postgresql://h/x?bogus=1", err,
	    sizeof err), -EINVAL);
	ck_assert_msg(strstr(err, "\"bogus\"") != NULL, "%s", err);
	ck_assert_int_eq(flaky_fleet_check_uri("postgresql://h:5x/x", err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(flaky_fleet_check_uri("flaky.db", err, sizeof err),
	    -EINVAL);
	ck_assert_int_eq(flaky_fleet_check_uri(
	    "postgresql://bob@db.example/flaky?sslmode=verify-full", err,
	    sizeof err), 0);
}
END_TEST

/* A key=value string is told from a file name. */
START_TEST(is_conninfo)
{
	ck_assert(flaky_fleet_is_conninfo("host=db password=s3cret"));
	ck_assert(flaky_fleet_is_conninfo(" dbname = flaky host=/tmp"));
	ck_assert(!flaky_fleet_is_conninfo("flaky.db"));
	ck_assert(!flaky_fleet_is_conninfo("a=b.db"));
	ck_assert(!flaky_fleet_is_conninfo("./host=db"));
	ck_assert(!flaky_fleet_is_conninfo("postgresql://h/x?host=y"));
	ck_assert(!flaky_fleet_is_conninfo(NULL));
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
	tcase_add_test(tc, secrets_never_repeated);
	tcase_add_test(tc, is_conninfo);
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
