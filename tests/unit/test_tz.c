/* tz: time zones from TZif files and POSIX TZ strings (lib/sched/tz.c):
 * offsets across changes, the local zone from $TZ, rules after a file's
 * table, and the errors for names that are no zone. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "util/util.h"

static int64_t
must_time(const char *iso)
{
	int64_t	 ms;

	ck_assert_msg(flaky_parse_time(iso, &ms) == 0, "bad time %s", iso);
	return ms;
}

static struct flaky_tz *
must_tz(const char *name)
{
	struct flaky_tz	*tz;
	char	 err[256] = "";

	ck_assert_msg(flaky_tz_load(name, &tz, err, sizeof err) == 0, "%s: %s",
	    name != NULL ? name : "(the local zone)", err);
	return tz;
}

START_TEST(zones)
{
	struct flaky_tz	*tz, *posix;
	char	 err[256], buf[32];
	const char *old = getenv("TZ");

	tz = must_tz("Europe/Berlin");
	ck_assert_str_eq(flaky_tz_name(tz), "Europe/Berlin");
	ck_assert_int_eq(flaky_tz_offset(tz, must_time("2026-03-29T00:59:59Z")
	    / 1000), 3600);
	ck_assert_int_eq(flaky_tz_offset(tz, must_time("2026-03-29T01:00:00Z")
	    / 1000), 7200);
	ck_assert_int_eq(flaky_tz_offset(tz, must_time("1890-01-01") / 1000),
	    3208);	/* local mean time */
	ck_assert_str_eq(flaky_tz_format(tz, must_time("2026-10-25T01:00:00Z"),
	    buf, sizeof buf), "2026-10-25T02:00:00+01:00");
	ck_assert_str_eq(flaky_tz_format(NULL, -1, buf, sizeof buf),
	    "1969-12-31T23:59:59+00:00");

	/* A POSIX TZ string in $TZ gives the same times as the file. */
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	posix = must_tz(NULL);
	for (int64_t t = must_time("2026-01-01") / 1000;
	    t < must_time("2028-01-01") / 1000; t += 1800)
		ck_assert_int_eq(flaky_tz_offset(tz, t),
		    flaky_tz_offset(posix, t));
	flaky_tz_free(posix);
	setenv("TZ", ":America/New_York", 1);
	posix = must_tz("");
	ck_assert_str_eq(flaky_tz_name(posix), "America/New_York");
	ck_assert_int_eq(flaky_tz_offset(posix,
	    must_time("2026-07-01") / 1000), -4 * 3600);
	flaky_tz_free(posix);
	if (old != NULL)
		setenv("TZ", old, 1);
	else
		unsetenv("TZ");
	flaky_tz_free(tz);

	ck_assert_int_eq(flaky_tz_load("Mars/Olympus", &tz, err, sizeof err),
	    -ENOENT);
	ck_assert_ptr_null(tz);
	ck_assert_str_eq(err, "expected a zone name from /usr/share/zoneinfo "
	    "such as Europe/Berlin, got Mars/Olympus");
	ck_assert_int_eq(flaky_tz_load("../etc/passwd", &tz, err, sizeof err),
	    -ENOENT);
	ck_assert_str_eq(err, "expected a zone name such as Europe/Berlin, got "
	    "../etc/passwd");
	ck_assert_int_eq(flaky_tz_load("zone.tab", &tz, err, sizeof err),
	    -EINVAL);
	ck_assert_str_eq(err, "/usr/share/zoneinfo/zone.tab: not a time zone "
	    "file");
	flaky_tz_free(NULL);
}
END_TEST

/* POSIX rules of each date form: Mm.w.d, Jn (no Feb 29) and n (counting
 * Feb 29), and the US rule when a string names no dates. */
START_TEST(posix_rules)
{
	static const struct { const char *tz, *at; int32_t off; } t[] = {
		/* Last Sunday of March at 02:00 local standard time. */
		{ "CET-1CEST,M3.5.0,M10.5.0/3", "2028-03-26T00:59:59Z", 3600 },
		{ "CET-1CEST,M3.5.0,M10.5.0/3", "2028-03-26T01:00:00Z", 7200 },
		/* J60 is March 1 even in a leap year; 59 is Feb 29 in one. */
		{ "AAA-1BBB,J60/0,J300/0", "2028-02-29T22:59:59Z", 3600 },
		{ "AAA-1BBB,J60/0,J300/0", "2028-02-29T23:00:00Z", 7200 },
		{ "AAA-1BBB,59/0,300/0", "2028-02-28T22:59:59Z", 3600 },
		{ "AAA-1BBB,59/0,300/0", "2028-02-28T23:00:00Z", 7200 },
		/* No dates: second Sunday of March, first of November. */
		{ "EST5EDT", "2026-03-08T06:59:59Z", -5 * 3600 },
		{ "EST5EDT", "2026-03-08T07:00:00Z", -4 * 3600 },
		{ "EST5EDT", "2026-11-01T05:59:59Z", -4 * 3600 },
		{ "EST5EDT", "2026-11-01T06:00:00Z", -5 * 3600 },
		/* No daylight saving time at all. */
		{ "<+03>-3", "2026-07-01T00:00:00Z", 3 * 3600 },
	};
	struct flaky_tz	*tz;
	char	 err[256];
	const char *old = getenv("TZ");

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(t); i++) {
		setenv("TZ", t[i].tz, 1);
		tz = must_tz(NULL);
		ck_assert_msg(flaky_tz_offset(tz, must_time(t[i].at) / 1000) ==
		    t[i].off, "%s at %s: %d, want %d", t[i].tz, t[i].at,
		    flaky_tz_offset(tz, must_time(t[i].at) / 1000), t[i].off);
		flaky_tz_free(tz);
	}
	setenv("TZ", "CET-1CEST,M13.5.0,M10.5.0", 1);
	ck_assert_int_eq(flaky_tz_load(NULL, &tz, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "TZ=CET-1CEST,M13.5.0,M10.5.0: expected a zone "
	    "name or a POSIX TZ string");
	if (old != NULL)
		setenv("TZ", old, 1);
	else
		unsetenv("TZ");
}
END_TEST

static Suite *
tz_suite(void)
{
	Suite	*s = suite_create("tz");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, zones);
	tcase_add_test(tc, posix_rules);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	/* Pin the zone files: the tests name their zones. */
	unsetenv("TZDIR");
	sr = srunner_create(tz_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
