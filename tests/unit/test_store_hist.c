/* store_hist (lib/store/hist.c): the duration histograms of the rollups:
 * buckets and their values, merging blobs, quantiles, and the SQL function
 * flaky_hist_add on a store's connection, byte for byte. */
#include "buildconf.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "test_db.h"
#include "test_helper.h"

/* Four buckets per doubling from 1 ms; a bucket's value lies in it. */
START_TEST(buckets)
{
	for (int b = 1; b < 60; b++) {
		ck_assert_int_eq(flaky_hist_bucket((int64_t)(
		    flaky_hist_value_ms(b) * 1000)), b);
	}
	ck_assert_int_eq(flaky_hist_bucket(999), 0);
	ck_assert_int_eq(flaky_hist_bucket(0), 0);
	ck_assert_int_eq(flaky_hist_bucket(1000), 1);
	ck_assert_int_eq(flaky_hist_bucket(2000), 5);
	ck_assert_int_eq(flaky_hist_bucket(INT64_MAX), FLAKY_HIST_BUCKETS - 1);
	ck_assert(flaky_hist_value_ms(0) == 0.5);
	ck_assert(flaky_hist_value_ms(-3) == 0.5);
}
END_TEST

/* Blobs add up into counts (varints of any length, buckets out of range
 * skipped); quantiles take the bucket of the rank. */
START_TEST(merge_and_quantile)
{
	static const unsigned char a[] = { 1, 2, 5, 0x96, 0x01 };
	static const unsigned char b[] = { 5, 4, 200, 9, 7, 1 };
	uint64_t	 counts[FLAKY_HIST_BUCKETS];

	memset(counts, 0, sizeof counts);
	ck_assert(isnan(flaky_hist_quantile(counts, .5)));
	ck_assert_int_eq(flaky_hist_merge(a, sizeof a, counts), 0);
	ck_assert_int_eq(flaky_hist_merge(b, sizeof b, counts), 0);
	ck_assert_uint_eq(counts[1], 2);
	ck_assert_uint_eq(counts[5], 154);
	ck_assert_uint_eq(counts[7], 1);
	ck_assert_uint_eq(counts[9], 0);
	/* 157 in all: ranks 1 and 2 in bucket 1, up to 156 in 5, 157 in 7 */
	ck_assert(flaky_hist_quantile(counts, 0) == flaky_hist_value_ms(1));
	ck_assert(flaky_hist_quantile(counts, .01) == flaky_hist_value_ms(1));
	ck_assert(flaky_hist_quantile(counts, .5) == flaky_hist_value_ms(5));
	ck_assert(flaky_hist_quantile(counts, .99) == flaky_hist_value_ms(5));
	ck_assert(flaky_hist_quantile(counts, 1) == flaky_hist_value_ms(7));
}
END_TEST

/* flaky_hist_add(hist, us or one-entry hist) as the rollup writes call
 * it: the canonical blob, edited in place or rebuilt. */
START_TEST(sql_add)
{
	struct flaky_store *s;
	char		 dir[64], path[128], err[512];
	sqlite3		*db;

	tu_tmpdir(dir, sizeof dir, "sthist");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	db = sql_sqlite(store_db(s));
	/* a first duration, one more, a new bucket before and after */
	tu_rows_eq(db, "SELECT hex(flaky_hist_add(NULL, 1000)), "
	    "hex(flaky_hist_add(x'0101', 1000)), "
	    "hex(flaky_hist_add(x'0A01', 1000)), "
	    "hex(flaky_hist_add(x'0105', 5000))",
	    "0101|0102|01010A01|01050A01\n");
	/* a count past one varint byte */
	tu_rows_eq(db, "SELECT hex(flaky_hist_add(x'017F', 1100)), "
	    "hex(flaky_hist_add(x'01FF7F', 1000))", "018001|01808001\n");
	/* NULL adds nothing */
	tu_rows_eq(db, "SELECT hex(flaky_hist_add(x'0103', NULL)), "
	    "flaky_hist_add(NULL, NULL) IS NULL", "0103|1\n");
	/* a histogram as the second argument: added */
	tu_rows_eq(db, "SELECT hex(flaky_hist_add(x'0101', x'0101')), "
	    "hex(flaky_hist_add(x'0102', x'01010A03')), "
	    "hex(flaky_hist_add(NULL, x'0A01')), "
	    "hex(flaky_hist_add(x'0101', x'0103'))",
	    "0102|01030A03|0A01|0104\n");
	/* not canonical (unsorted, repeated): rebuilt */
	tu_rows_eq(db, "SELECT hex(flaky_hist_add(x'0A010101', 1000)), "
	    "hex(flaky_hist_add(x'01010101', 5000))", "01020A01|01020A01\n");
	flaky_store_close(s);
	tu_rmdir(dir);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_hist");
	TCase	*tc = tcase_create("store_hist");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, buckets);
	tcase_add_test(tc, merge_and_quantile);
	tcase_add_test(tc, sql_add);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
