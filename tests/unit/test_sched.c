/* sched: schedule expressions by round trip, next-time tables with pinned
 * zones and start times across the DST changes of 2026, and bad input.
 * Loading zones is test_tz.c. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "util/util.h"

/* Parse, or fail the test with the parser's message. */
static struct flaky_sched
must_parse(const char *expr)
{
	struct flaky_sched s;
	char	 err[256] = "";

	ck_assert_msg(flaky_sched_parse(expr, &s, err, sizeof err) == 0,
	    "%s: %s", expr, err);
	return s;
}

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

START_TEST(round_trip)
{
	static const struct { const char *in, *out; } t[] = {
		{ "*/15 * * * *", "*/15 * * * *" },
		{ "0 9 * * mon-fri", "0 9 * * 1-5" },
		{ "0 0 * * 7", "0 0 * * 0" },
		{ "0 0 * * SUN", "0 0 * * 0" },
		{ "* * * * mon-sun", "* * * * 0-6" },
		{ "@midnight", "@daily" },
		{ "@daily", "@daily" },
		{ "@hourly", "@hourly" },
		{ "@weekly", "@weekly" },
		{ "@monthly", "@monthly" },
		{ "@annually", "@yearly" },
		{ "@YEARLY", "@yearly" },
		{ "every 90m", "every 1h30m" },
		{ "every  1d", "every 1d" },
		{ "every 30s", "every 30s" },
		{ "every 1h30m15s", "every 1h30m15s" },
		{ "1,2,3,5 * * jan,feb *", "1-3,5 * * 1,2 *" },
		{ "0-30/10 * * * *", "0-30/10 * * * *" },
		{ "5/15 * * * *", "5-50/15 * * * *" },
		{ "  0   0  1 1 * ", "0 0 1 1 *" },
		{ "0 */6 * * *", "0 */6 * * *" },
		{ "*/1 * * * *", "* * * * *" },
		{ "0,30 2 * * *", "0,30 2 * * *" },
		{ "0 0 */2 * 5", "0 0 */2 * 5" },
		{ "0 0 * * */2", "0 0 * * */2" },
		{ "0 0 1-31 * *", "0 0 1-31 * *" },
		{ "59 23 31 dec sat", "59 23 31 12 6" },
	};
	struct flaky_sched s, s2;
	char	 buf[64];

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(t); i++) {
		s = must_parse(t[i].in);
		ck_assert_int_lt(flaky_sched_format(&s, buf, sizeof buf),
		    (int)sizeof buf);
		ck_assert_msg(strcmp(buf, t[i].out) == 0, "%s -> %s, want %s",
		    t[i].in, buf, t[i].out);
		/* The normalized form parses to the same schedule. */
		s2 = must_parse(buf);
		ck_assert_msg(s.minutes == s2.minutes && s.hours == s2.hours &&
		    s.mdays == s2.mdays && s.months == s2.months &&
		    s.wdays == s2.wdays && s.flags == s2.flags &&
		    s.every_ms == s2.every_ms, "%s does not round trip", buf);
	}
}
END_TEST

START_TEST(bad_fields)
{
	static const struct { const char *in, *err; } t[] = {
		{ "61 * * * *", "minute field: expected 0-59, got 61" },
		{ "* 24 * * *", "hour field: expected 0-23, got 24" },
		{ "* * 0 * *", "day-of-month field: expected 1-31, got 0" },
		{ "* * 32 * *", "day-of-month field: expected 1-31, got 32" },
		{ "* * * 13 *", "month field: expected 1-12 or jan-dec, got 13" },
		{ "* * * foo *", "month field: expected 1-12 or jan-dec, got foo" },
		{ "* * * * 8", "day-of-week field: expected 0-7 or sun-sat, got 8" },
		{ "* * * * funday",
		    "day-of-week field: expected 0-7 or sun-sat, got funday" },
		{ "*/0 * * * *", "minute field: expected a step of 1-60, got 0" },
		{ "*/x * * * *", "minute field: expected a step of 1-60, got x" },
		{ "* */25 * * *", "hour field: expected a step of 1-24, got 25" },
		{ "5-2 * * * *", "minute field: expected a range low-high with "
		    "low <= high, got 5-2" },
		{ "1,,2 * * * *",
		    "minute field: expected 0-59, got an empty list item" },
		{ "1, * * * *",
		    "minute field: expected 0-59, got an empty list item" },
		{ "*-5 * * * *", "minute field: expected 0-59, got *-5" },
		{ "1-x * * * *", "minute field: expected 0-59, got x" },
		{ "-1 * * * *", "minute field: expected 0-59, got -1" },
		{ "99999 * * * *", "minute field: expected 0-59, got 99999" },
		{ "@x\ny", "expected @hourly, @daily, @midnight, @weekly, "
		    "@monthly, @yearly or @annually, got @x?y" },
		{ "* * * *", "expected 5 fields (minute hour day-of-month month "
		    "day-of-week), got 4" },
		{ "* * * * * *", "expected 5 fields (minute hour day-of-month "
		    "month day-of-week), got 6" },
		{ "@often", "expected @hourly, @daily, @midnight, @weekly, "
		    "@monthly, @yearly or @annually, got @often" },
		{ "@reboot", "expected @hourly, @daily, @midnight, @weekly, "
		    "@monthly, @yearly or @annually, got @reboot" },
		{ "every 10x", "every: expected a duration of at least 1s such "
		    "as 10m or 1h30m, got 10x" },
		{ "every", "every: expected a duration of at least 1s such as "
		    "10m or 1h30m, got nothing" },
		{ "every 0s", "every: expected a duration of at least 1s such "
		    "as 10m or 1h30m, got 0s" },
		{ "", "expected a schedule such as \"*/15 * * * *\", @daily or "
		    "\"every 10m\", got nothing" },
	};
	struct flaky_sched s;
	char	 err[256];

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(t); i++) {
		err[0] = '\0';
		ck_assert_msg(flaky_sched_parse(t[i].in, &s, err, sizeof err) ==
		    -EINVAL, "%s parsed", t[i].in);
		ck_assert_msg(strcmp(err, t[i].err) == 0, "%s: got \"%s\"",
		    t[i].in, err);
	}
	/* Too long is refused before anything else. */
	{
		char	 longexpr[400];

		memset(longexpr, '1', sizeof longexpr - 1);
		longexpr[sizeof longexpr - 1] = '\0';
		ck_assert_int_eq(flaky_sched_parse(longexpr, &s, err,
		    sizeof err), -EINVAL);
		ck_assert_str_eq(err, "expected a schedule of at most 256 "
		    "characters, got 399");
	}
}
END_TEST

/* One row: in zone, expression, after this time -> this local time. */
struct next_case {
	const char	*zone, *expr, *after, *want;
};

static void
check_next(const struct next_case *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct flaky_tz	*tz = must_tz(t[i].zone);
		struct flaky_sched s = must_parse(t[i].expr);
		int64_t	 next;
		char	 buf[32];
		int	 r;

		r = flaky_sched_next(&s, tz, 0, must_time(t[i].after), &next);
		ck_assert_msg(r == 0, "%s %s after %s: %d", t[i].zone,
		    t[i].expr, t[i].after, r);
		flaky_tz_format(tz, next, buf, sizeof buf);
		ck_assert_msg(strcmp(buf, t[i].want) == 0,
		    "%s \"%s\" after %s: got %s, want %s", t[i].zone,
		    t[i].expr, t[i].after, buf, t[i].want);
		flaky_tz_free(tz);
	}
}

START_TEST(next_berlin)
{
	/* 2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST ->
	 * 02:00 CET. */
	static const struct next_case t[] = {
		/* A daily job in the skipped hour runs right after the jump,
		 * once, then at its time again. */
		{ "Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00+01:00",
		    "2026-03-29T03:00:00+02:00" },
		{ "Europe/Berlin", "30 2 * * *", "2026-03-29T01:59:59+01:00",
		    "2026-03-29T03:00:00+02:00" },
		{ "Europe/Berlin", "30 2 * * *", "2026-03-29T03:00:00+02:00",
		    "2026-03-30T02:30:00+02:00" },
		{ "Europe/Berlin", "0,30 2 * * *", "2026-03-29T01:00:00+01:00",
		    "2026-03-29T03:00:00+02:00" },
		{ "Europe/Berlin", "0 2 * * *", "2026-03-29T00:00:00+01:00",
		    "2026-03-29T03:00:00+02:00" },
		{ "Europe/Berlin", "0 3 * * *", "2026-03-29T00:00:00+01:00",
		    "2026-03-29T03:00:00+02:00" },
		{ "Europe/Berlin", "0 3 * * *", "2026-03-29T03:00:00+02:00",
		    "2026-03-30T03:00:00+02:00" },
		{ "Europe/Berlin", "59 1 * * *", "2026-03-29T00:00:00+01:00",
		    "2026-03-29T01:59:00+01:00" },
		/* A daily job in the repeated hour runs once, at the first
		 * occurrence. */
		{ "Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00+02:00",
		    "2026-10-25T02:30:00+02:00" },
		{ "Europe/Berlin", "30 2 * * *", "2026-10-25T02:30:00+02:00",
		    "2026-10-26T02:30:00+01:00" },
		{ "Europe/Berlin", "30 2 * * *", "2026-10-25T02:10:00+01:00",
		    "2026-10-26T02:30:00+01:00" },
		{ "Europe/Berlin", "30 2 * * *", "2026-10-25T02:10:00+02:00",
		    "2026-10-25T02:30:00+02:00" },
		{ "Europe/Berlin", "0 3 * * *", "2026-10-25T02:59:00+01:00",
		    "2026-10-25T03:00:00+01:00" },
		/* Every 15 minutes follows the wall clock: nothing in the
		 * skipped hour, the repeated hour again. */
		{ "Europe/Berlin", "*/15 * * * *", "2026-03-29T01:30:00+01:00",
		    "2026-03-29T01:45:00+01:00" },
		{ "Europe/Berlin", "*/15 * * * *", "2026-03-29T01:45:00+01:00",
		    "2026-03-29T03:00:00+02:00" },
		{ "Europe/Berlin", "*/15 * * * *", "2026-10-25T02:30:00+02:00",
		    "2026-10-25T02:45:00+02:00" },
		{ "Europe/Berlin", "*/15 * * * *", "2026-10-25T02:45:00+02:00",
		    "2026-10-25T02:00:00+01:00" },
		{ "Europe/Berlin", "*/15 * * * *", "2026-10-25T02:00:00+01:00",
		    "2026-10-25T02:15:00+01:00" },
		/* Hourly has a wildcard hour: wall clock too. */
		{ "Europe/Berlin", "@hourly", "2026-10-25T02:00:00+02:00",
		    "2026-10-25T02:00:00+01:00" },
		{ "Europe/Berlin", "@hourly", "2026-03-29T01:00:00+01:00",
		    "2026-03-29T03:00:00+02:00" },
		/* A wildcard minute in a fixed hour: nothing on the day the
		 * hour is skipped. */
		{ "Europe/Berlin", "*/20 2 * * *", "2026-03-29T01:00:00+01:00",
		    "2026-03-30T02:00:00+02:00" },
		{ "Europe/Berlin", "@daily", "2026-10-24T23:59:00+02:00",
		    "2026-10-25T00:00:00+02:00" },
		/* Past the zone file's table: the POSIX footer rule. */
		{ "Europe/Berlin", "30 2 * * *", "2050-03-26T12:00:00+01:00",
		    "2050-03-27T03:00:00+02:00" },
		{ "Europe/Berlin", "30 2 * * *", "2050-10-30T02:30:00+02:00",
		    "2050-10-31T02:30:00+01:00" },
		{ "Europe/Berlin", "*/15 * * * *", "2100-10-31T02:45:00+02:00",
		    "2100-10-31T02:00:00+01:00" },
	};

	check_next(t, FLAKY_ARRAY_SIZE(t));
}
END_TEST

START_TEST(next_new_york)
{
	/* 2026-03-08 02:00 EST -> 03:00 EDT; 2026-11-01 02:00 EDT ->
	 * 01:00 EST. */
	static const struct next_case t[] = {
		{ "America/New_York", "30 2 * * *", "2026-03-07T12:00:00-05:00",
		    "2026-03-08T03:00:00-04:00" },
		{ "America/New_York", "30 2 * * *", "2026-03-08T03:00:00-04:00",
		    "2026-03-09T02:30:00-04:00" },
		{ "America/New_York", "30 1 * * *", "2026-10-31T12:00:00-04:00",
		    "2026-11-01T01:30:00-04:00" },
		{ "America/New_York", "30 1 * * *", "2026-11-01T01:30:00-04:00",
		    "2026-11-02T01:30:00-05:00" },
		{ "America/New_York", "30 2 * * *", "2026-10-31T12:00:00-04:00",
		    "2026-11-01T02:30:00-05:00" },
		{ "America/New_York", "*/15 * * * *", "2026-03-08T01:45:00-05:00",
		    "2026-03-08T03:00:00-04:00" },
		{ "America/New_York", "*/15 * * * *", "2026-11-01T01:45:00-04:00",
		    "2026-11-01T01:00:00-05:00" },
		{ "America/New_York", "0 9 * * mon-fri", "2026-11-27T09:00:00-05:00",
		    "2026-11-30T09:00:00-05:00" },
	};

	check_next(t, FLAKY_ARRAY_SIZE(t));
}
END_TEST

START_TEST(next_utc)
{
	static const struct next_case t[] = {
		{ "UTC", "*/15 * * * *", "2026-03-29T01:45:00Z",
		    "2026-03-29T02:00:00+00:00" },
		{ "UTC", "*/15 * * * *", "2026-03-29T01:44:59.999Z",
		    "2026-03-29T01:45:00+00:00" },
		{ "UTC", "30 2 * * *", "2026-03-29T00:00:00Z",
		    "2026-03-29T02:30:00+00:00" },
		{ "UTC", "0 0 29 2 *", "2026-01-01T00:00:00Z",
		    "2028-02-29T00:00:00+00:00" },
		{ "UTC", "0 0 29 2 *", "2097-01-01T00:00:00Z",
		    "2104-02-29T00:00:00+00:00" },
		{ "UTC", "0 9 * * mon-fri", "2026-11-28T00:00:00Z",
		    "2026-11-30T09:00:00+00:00" },
		/* Both days restricted: either matches (Friday the 6th). */
		{ "UTC", "0 0 13 * 5", "2026-11-01T00:00:00Z",
		    "2026-11-06T00:00:00+00:00" },
		/* Day of month starts with '*': both must match. */
		{ "UTC", "0 0 */2 * 5", "2026-11-01T00:00:00Z",
		    "2026-11-13T00:00:00+00:00" },
		{ "UTC", "0 0 31 2 mon", "2026-11-01T00:00:00Z",
		    "2027-02-01T00:00:00+00:00" },
		{ "UTC", "@monthly", "2026-11-30T00:00:00Z",
		    "2026-12-01T00:00:00+00:00" },
		{ "UTC", "@yearly", "2026-11-30T00:00:00Z",
		    "2027-01-01T00:00:00+00:00" },
		{ "UTC", "@weekly", "2026-11-30T00:00:00Z",
		    "2026-12-06T00:00:00+00:00" },
		{ "UTC", "0 12 31 * *", "2026-04-01T00:00:00Z",
		    "2026-05-31T12:00:00+00:00" },
		{ "UTC", "59 23 31 12 *", "2026-12-31T23:59:00Z",
		    "2027-12-31T23:59:00+00:00" },
		{ "UTC", "0 0 1 1 *", "1969-12-31T00:00:00Z",
		    "1970-01-01T00:00:00+00:00" },
	};

	check_next(t, FLAKY_ARRAY_SIZE(t));
}
END_TEST

START_TEST(impossible)
{
	static const char *const t[] = {
		"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "* * 31 2 *",
		"0 0 30,31 feb *",
	};
	struct flaky_tz	*tz = must_tz("Europe/Berlin");
	int64_t	 next = 42;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(t); i++) {
		struct flaky_sched s = must_parse(t[i]);

		ck_assert_int_eq(flaky_sched_next(&s, tz, 0,
		    must_time("2026-01-01"), &next), -ERANGE);
		ck_assert_int_eq(next, 42);
	}
	flaky_tz_free(tz);
}
END_TEST

START_TEST(every)
{
	struct flaky_sched s = must_parse("every 10m");
	int64_t	 start = must_time("2026-11-30T01:02:03Z"), next;

	ck_assert_int_eq(s.kind, FLAKY_SCHED_EVERY);
	ck_assert_int_eq(s.every_ms, 600000);
	ck_assert_int_eq(flaky_sched_next(&s, NULL, start, start, &next), 0);
	ck_assert_int_eq(next, start + 600000);
	ck_assert_int_eq(flaky_sched_next(&s, NULL, start, start - 1, &next), 0);
	ck_assert_int_eq(next, start);
	ck_assert_int_eq(flaky_sched_next(&s, NULL, start, start + 1500000,
	    &next), 0);
	ck_assert_int_eq(next, start + 1800000);
	ck_assert_int_eq(flaky_sched_next(&s, NULL, start, start + 1799999,
	    &next), 0);
	ck_assert_int_eq(next, start + 1800000);
}
END_TEST

/* Walking a whole year of fire times: strictly increasing, and the count
 * a person would expect (a daily job once a day through both changes). */
START_TEST(whole_year)
{
	static const struct { const char *zone, *expr; int count; } t[] = {
		{ "Europe/Berlin", "30 2 * * *", 365 },
		{ "Europe/Berlin", "0 2 * * *", 365 },
		{ "Europe/Berlin", "*/15 * * * *", 365 * 96 },
		{ "Europe/Berlin", "@hourly", 365 * 24 },
		{ "America/New_York", "30 1 * * *", 365 },
		{ "America/New_York", "0 9 * * mon-fri", 261 },
		{ "UTC", "0 0 29 2 *", 0 },
		{ "UTC", "@weekly", 52 },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(t); i++) {
		struct flaky_tz	*tz = must_tz(t[i].zone);
		struct flaky_sched s = must_parse(t[i].expr);
		int64_t	 end = must_time("2027-01-01T00:00:00Z"), at, next;
		int	 n = 0;

		/* From local midnight of Jan 1 to local midnight of the
		 * next Jan 1. */
		at = must_time("2026-01-01T00:00:00Z") -
		    (int64_t)flaky_tz_offset(tz, 1767225600) * 1000 - 1;
		end -= (int64_t)flaky_tz_offset(tz, 1798761600) * 1000;
		for (;;) {
			ck_assert_int_eq(flaky_sched_next(&s, tz, 0, at, &next),
			    0);
			ck_assert_int_gt(next, at);
			if (next >= end)
				break;
			at = next;
			n++;
		}
		ck_assert_msg(n == t[i].count, "%s %s: %d fires in 2026, want "
		    "%d", t[i].zone, t[i].expr, n, t[i].count);
		flaky_tz_free(tz);
	}
}
END_TEST

/* Random bytes and near-miss expressions never crash the parser, and
 * whatever parses formats to something that parses the same. */
START_TEST(garbage)
{
	static const char alphabet[] = "0123456789*/-, @abcdefghijklmnopqrstuvwxyz\t";
	struct flaky_sched s, s2;
	char	 expr[40], buf[64], err[256];
	unsigned int seed = 12345;

	for (int i = 0; i < 200000; i++) {
		int	 n = rand_r(&seed) % (int)(sizeof expr - 1);

		for (int j = 0; j < n; j++)
			expr[j] = alphabet[rand_r(&seed) %
			    (int)(sizeof alphabet - 1)];
		expr[n] = '\0';
		if (flaky_sched_parse(expr, &s, err, sizeof err) < 0) {
			ck_assert_int_gt(strlen(err), 0);
			continue;
		}
		flaky_sched_format(&s, buf, sizeof buf);
		ck_assert_msg(flaky_sched_parse(buf, &s2, err, sizeof err) == 0,
		    "%s -> %s: %s", expr, buf, err);
		ck_assert_msg(s.minutes == s2.minutes && s.hours == s2.hours &&
		    s.mdays == s2.mdays && s.months == s2.months &&
		    s.wdays == s2.wdays && s.every_ms == s2.every_ms,
		    "%s -> %s", expr, buf);
	}
}
END_TEST

static Suite *
sched_suite(void)
{
	Suite	*s = suite_create("sched");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, bad_fields);
	tcase_add_test(tc, next_berlin);
	tcase_add_test(tc, next_new_york);
	tcase_add_test(tc, next_utc);
	tcase_add_test(tc, impossible);
	tcase_add_test(tc, every);
	tcase_add_test(tc, whole_year);
	tcase_add_test(tc, garbage);
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
	sr = srunner_create(sched_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
