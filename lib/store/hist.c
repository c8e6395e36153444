/* The duration histograms of the rollups: log-spaced buckets (four per
 * doubling from 1 ms), stored as a blob of (bucket byte, count varint)
 * pairs, and the SQL function flaky_hist_add that the rollup writes use. */
#include "buildconf.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* Put v as a varint at p; returns the bytes written (at most 10). */
static size_t
hist_put(unsigned char *p, uint64_t v)
{
	size_t	 n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* The histogram blob with one more count in bucket b, edited in place:
 * the entries are copied as they are and only b's count is rewritten, so
 * the common case (a day's row gets one more run) costs one pass over a
 * few dozen bytes. Returns the new length, or 0 when the blob is not in
 * the canonical form (sorted, no repeats, bounded), for the slow path. */
static size_t
hist_add_fast(const unsigned char *in, size_t len, int b, unsigned char *out,
    size_t outcap)
{
	const unsigned char *p = in, *end = in + len;
	size_t		 n = 0;
	int		 last = -1, done = 0;

	if (len > outcap - 11)
		return 0;
	while (p < end) {
		const unsigned char *start = p;
		int		 bk = *p++;
		uint64_t	 v = 0;
		int		 shift = 0, more = 1;

		while (p < end && shift < 63) {
			v |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
			if (!(*p++ & 0x80)) {
				more = 0;
				break;
			}
		}
		if (more || bk <= last || bk >= FLAKY_HIST_BUCKETS)
			return 0;
		last = bk;
		if (!done && bk > b) {
			out[n++] = (unsigned char)b;
			out[n++] = 1;
			done = 1;
		}
		if (bk == b) {
			out[n++] = (unsigned char)b;
			n += hist_put(out + n, v + 1);
			done = 1;
		} else {
			memcpy(out + n, start, (size_t)(p - start));
			n += (size_t)(p - start);
		}
	}
	if (!done) {
		out[n++] = (unsigned char)b;
		out[n++] = 1;
	}
	return n;
}

/* counts[FLAKY_HIST_BUCKETS] as the result of an SQL function, in
 * canonical form. */
static void
hist_result(sqlite3_context *ctx, const uint64_t *counts)
{
	unsigned char	 out[FLAKY_HIST_BUCKETS * 11];
	size_t		 n = 0;

	for (int i = 0; i < FLAKY_HIST_BUCKETS; i++) {
		if (counts[i] == 0)
			continue;
		out[n++] = (unsigned char)i;
		n += hist_put(out + n, counts[i]);
	}
	sqlite3_result_blob(ctx, out, (int)n, SQL_TRANSIENT);
}

/* The sum of two histograms, in canonical form. */
static void
hist_sum(sqlite3_context *ctx, sqlite3_value *a, sqlite3_value *b)
{
	uint64_t	 counts[FLAKY_HIST_BUCKETS];

	memset(counts, 0, sizeof counts);
	if (sqlite3_value_type(a) == SQL_BLOB)
		flaky_hist_merge(sqlite3_value_blob(a),
		    (size_t)sqlite3_value_bytes(a), counts);
	flaky_hist_merge(sqlite3_value_blob(b), (size_t)sqlite3_value_bytes(b),
	    counts);
	hist_result(ctx, counts);
}

/* SQL function flaky_hist_add(hist BLOB, duration_us): the histogram with
 * one more duration. The blob is a sorted list of (bucket byte, count
 * varint). The second argument may also be a histogram (the rollup UPSERT
 * adds the one-entry histogram of its row), whose counts are added. */
static void
sql_hist_add(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint64_t	 counts[FLAKY_HIST_BUCKETS];
	unsigned char	 out[FLAKY_HIST_BUCKETS * 11];
	size_t		 n = 0;
	int		 b;

	(void)argc;
	if (sqlite3_value_type(argv[1]) == SQL_NULL) {
		if (sqlite3_value_type(argv[0]) == SQL_NULL)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_value(ctx, argv[0]);
		return;
	}
	if (sqlite3_value_type(argv[1]) == SQL_BLOB) {
		const unsigned char *h = sqlite3_value_blob(argv[1]);
		int	 hn = sqlite3_value_bytes(argv[1]);

		if (hn != 2 || h[1] != 1 || h[0] >= FLAKY_HIST_BUCKETS) {
			hist_sum(ctx, argv[0], argv[1]);
			return;
		}
		b = h[0];
	} else
		b = flaky_hist_bucket(sqlite3_value_int64(argv[1]));
	if (sqlite3_value_type(argv[0]) == SQL_NULL) {
		out[0] = (unsigned char)b;
		out[1] = 1;
		sqlite3_result_blob(ctx, out, 2, SQL_TRANSIENT);
		return;
	}
	if (sqlite3_value_type(argv[0]) == SQL_BLOB &&
	    (n = hist_add_fast(sqlite3_value_blob(argv[0]),
	    (size_t)sqlite3_value_bytes(argv[0]), b, out, sizeof out)) > 0) {
		sqlite3_result_blob(ctx, out, (int)n, SQL_TRANSIENT);
		return;
	}
	/* Anything else is decoded and written back in canonical form. */
	memset(counts, 0, sizeof counts);
	if (sqlite3_value_type(argv[0]) == SQL_BLOB)
		flaky_hist_merge(sqlite3_value_blob(argv[0]),
		    (size_t)sqlite3_value_bytes(argv[0]), counts);
	counts[b]++;
	hist_result(ctx, counts);
}

int
flaky_hist_bucket(int64_t us)
{
	double	 ms = (double)us / 1000.0;
	int	 b;

	if (ms < 1.0)
		return 0;
	b = 1 + (int)floor(4.0 * log2(ms));
	return b >= FLAKY_HIST_BUCKETS ? FLAKY_HIST_BUCKETS - 1 : b;
}

double
flaky_hist_value_ms(int b)
{
	if (b <= 0)
		return 0.5;
	return exp2(((double)(b - 1) + 0.5) / 4.0);
}

int
flaky_hist_merge(const void *blob, size_t len, uint64_t *counts)
{
	const unsigned char *p = blob, *end = p + len;

	while (p < end) {
		int		 b = *p++;
		uint64_t	 v = 0;
		int		 shift = 0;

		while (p < end && shift < 64) {
			v |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
			if (!(*p++ & 0x80))
				break;
		}
		if (b < FLAKY_HIST_BUCKETS)
			counts[b] += v;
	}
	return 0;
}

double
flaky_hist_quantile(const uint64_t *counts, double q)
{
	uint64_t	 total = 0, seen = 0, rank;

	for (int i = 0; i < FLAKY_HIST_BUCKETS; i++)
		total += counts[i];
	if (total == 0)
		return NAN;
	rank = (uint64_t)ceil(q * (double)total);
	if (rank == 0)
		rank = 1;
	for (int i = 0; i < FLAKY_HIST_BUCKETS; i++) {
		seen += counts[i];
		if (seen >= rank)
			return flaky_hist_value_ms(i);
	}
	return NAN;
}

/* PostgreSQL's integer[] (schema/pg/0002): "{c1,c2,NULL,...}" or
 * "[lo:hi]={...}", element i the count of bucket i - 1. */
static void
hist_merge_array(const char *t, uint64_t *counts)
{
	long	 i = 1;
	const char *end;

	if (*t == '[') {
		i = (long)flaky_scan_int(t + 1, &end);
		if ((t = strchr(end, '=')) == NULL)
			return;
		t++;
	}
	if (*t++ != '{')
		return;
	for (; *t != '\0' && *t != '}'; i++) {
		if (*t == 'N' && strncmp(t, "NULL", 4) == 0)
			t += 4;
		else {
			long long v = flaky_scan_int(t, &end);

			if (end == t)
				return;
			if (i >= 1 && i <= FLAKY_HIST_BUCKETS && v > 0)
				counts[i - 1] += (uint64_t)v;
			t = end;
		}
		if (*t == ',')
			t++;
	}
}

void
store_hist_merge_col(struct sql_stmt *st, int col, uint64_t *counts)
{
	switch (sql_column_type(st, col)) {
	case SQL_BLOB:
		flaky_hist_merge(sql_column_blob(st, col),
		    (size_t)sql_column_bytes(st, col), counts);
		break;
	case SQL_TEXT:
		hist_merge_array((const char *)sql_column_text(st, col),
		    counts);
		break;
	}
}

int
store_hist_register(sqlite3 *db)
{
	return sqlite3_create_function(db, "flaky_hist_add", 2,
	    SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_hist_add, NULL,
	    NULL);
}
