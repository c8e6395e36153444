/* The evidence database: open and migrate, and the writes of a run (its
 * row, results, deduplicated messages and daily rollups) in one short
 * transaction each. Reads are in store_query.c. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "classify/classify.h"
#include "util/util.h"
#include "store/store.h"
#include "store_int.h"

extern const char *const flaky_schema_migrations[];
extern const size_t flaky_schema_count;

enum {
	ST_RUN_START,
	ST_RUN_FINISH,
	ST_RUN_INSERT,
	ST_TEST_FIND,
	ST_TEST_ADD,
	ST_MSG_FIND,
	ST_MSG_ADD,
	ST_RESULT_ADD,
	ST_ROLLUP_UPDATE,
	ST_ROLLUP,
	ST_RESULT_MANY,		/* built by many_sql() */
	ST_ROLLUP_MANY,
	ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_RUN_START] =
	    "INSERT INTO runs (target_id, status, trigger, started_ms, "
	    "revision, in_flight, loadavg, kind, owner_boot, owner_pid, "
	    "owner_start) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_RUN_FINISH] =
	    "UPDATE runs SET status = ?, ended_ms = ?, duration_us = ?, "
	    "exit_code = ?, signal = ?, revision = coalesce(?, revision), "
	    "runner = ?, runner_version = ?, seed = ?, tests = ?, "
	    "failures = ?, summary_total = ?, in_flight = coalesce(?, "
	    "in_flight), loadavg = coalesce(?, loadavg), user_us = ?, "
	    "sys_us = ?, maxrss_kb = ?, output_bytes = ?, output_dropped = ?, "
	    "stdout_id = ?, stderr_id = ?, error = ?, content_hash = ?, "
	    "started_ms = ?, trigger = coalesce(?, trigger), kind = ?, "
	    "incomplete = ? WHERE id = ?",
	/* A run stored whole at its end: ST_RUN_FINISH's parameters, the
	 * last one the target. */
	[ST_RUN_INSERT] =
	    "INSERT INTO runs (status, ended_ms, duration_us, exit_code, "
	    "signal, revision, runner, runner_version, seed, tests, failures, "
	    "summary_total, in_flight, loadavg, user_us, sys_us, maxrss_kb, "
	    "output_bytes, output_dropped, stdout_id, stderr_id, error, "
	    "content_hash, started_ms, trigger, kind, incomplete, target_id) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_TEST_FIND] =
	    "SELECT id FROM tests WHERE target_id = ? AND name = ?",
	[ST_TEST_ADD] =
	    "INSERT INTO tests (target_id, name) VALUES (?, ?)",
	[ST_MSG_FIND] =
	    "SELECT id FROM messages WHERE fingerprint = ?",
	[ST_MSG_ADD] =
	    "INSERT INTO messages (fingerprint, normalized) VALUES (?, ?)",
	[ST_RESULT_ADD] =
	    "INSERT INTO results (run_id, position, test_id, outcome, "
	    "duration_us, message_id, signature, message) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_ROLLUP_UPDATE] =
	    "UPDATE rollups SET runs = runs + ?3, failures = failures + ?4, "
	    "skips = skips + ?5, pass_us = pass_us + ?6, "
	    "fail_us = fail_us + ?7, "
	    "pass_hist = CASE WHEN ?8 IS NULL THEN pass_hist "
	    "ELSE flaky_hist_add(pass_hist, ?8) END, "
	    "fail_hist = CASE WHEN ?9 IS NULL THEN fail_hist "
	    "ELSE flaky_hist_add(fail_hist, ?9) END "
	    "WHERE test_id = ?1 AND day = ?2",
	[ST_ROLLUP] =
	    "INSERT INTO rollups (test_id, day, runs, failures, skips, "
	    "pass_us, fail_us, pass_hist, fail_hist) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
	    "flaky_hist_add(NULL, ?8), flaky_hist_add(NULL, ?9)) "
	    "ON CONFLICT (test_id, day) DO UPDATE SET "
	    "runs = runs + ?3, failures = failures + ?4, skips = skips + ?5, "
	    "pass_us = pass_us + ?6, fail_us = fail_us + ?7, "
	    "pass_hist = CASE WHEN ?8 IS NULL THEN pass_hist "
	    "ELSE flaky_hist_add(pass_hist, ?8) END, "
	    "fail_hist = CASE WHEN ?9 IS NULL THEN fail_hist "
	    "ELSE flaky_hist_add(fail_hist, ?9) END",
};

/* Results are written CHUNK at a time with one statement each for the rows
 * and the rollups: a statement's fixed cost (cursors opened, the plan run
 * from the start) is paid once per CHUNK results instead of per result. */
#define CHUNK		64
#define RESULT_COLS	7	/* without the run id */
#define ROLLUP_COLS	8	/* test id, then ?3.. of ST_ROLLUP */

/* Test ids and message ids already looked up, so a run of 1,000 tests
 * does not ask SQLite 1,000 times. Cleared on rollback. */
struct idcache_ent {
	uint64_t	 hash;
	int64_t		 key;	/* target id, or the fingerprint */
	char		*name;	/* NULL for messages */
	int64_t		 id;
};

struct idcache {
	struct idcache_ent *v;
	size_t		 n, cap;	/* cap: a power of two */
};

#define IDCACHE_MAX	(1 << 20)

struct flaky_store {
	sqlite3			*db;
	char			*path;
	int			 flags;
	int			 in_tx;
	int			 busy_ms;	/* the bound of a wait */
	int			 orphans;	/* marked by the open */
	int64_t			 busy_start_us;	/* this wait's start */
	uint64_t		 rnd;		/* backoff jitter */
	sqlite3_stmt		*st[ST_COUNT];
	struct idcache		 tests, msgs;
	struct flaky_redactor	*redact;
	struct store_output	 output;
};

sqlite3 *
store_db(struct flaky_store *s)
{
	return s->db;
}

int
store_in_tx(const struct flaky_store *s)
{
	return s->in_tx;
}

const char *
flaky_store_path(const struct flaky_store *s)
{
	return s->path;
}

int
flaky_store_schema_version(void)
{
	return (int)flaky_schema_count;
}

const char *
flaky_run_status_name(int s)
{
	static const char *const names[] = {
		"running", "done", "timeout", "error", "interrupted", "skipped",
		"stopped"
	};

	if (s < 0 || s > FLAKY_RUN_STOPPED)
		return "unknown";
	return names[s];
}

const char *
flaky_run_kind_name(int k)
{
	static const char *const names[] = { "suite", "alone", "ingested" };

	if (k < 0 || k > FLAKY_KIND_INGESTED)
		return "unknown";
	return names[k];
}

static void
idcache_clear(struct idcache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].name);
	free(c->v);
	memset(c, 0, sizeof *c);
}

static struct idcache_ent *
idcache_slot(struct idcache *c, uint64_t hash, int64_t key, const char *name)
{
	size_t	 mask = c->cap - 1, i;

	for (i = hash & mask;; i = (i + 1) & mask) {
		struct idcache_ent *e = &c->v[i];

		if (e->id == 0)
			return e;
		if (e->hash == hash && e->key == key && (name == NULL ||
		    (e->name != NULL && strcmp(e->name, name) == 0)))
			return e;
	}
}

static int64_t
idcache_get(struct idcache *c, uint64_t hash, int64_t key, const char *name)
{
	if (c->cap == 0)
		return 0;
	return idcache_slot(c, hash, key, name)->id;
}

static int
idcache_put(struct idcache *c, uint64_t hash, int64_t key, const char *name,
    int64_t id)
{
	struct idcache_ent *e;

	if (c->n >= IDCACHE_MAX)
		idcache_clear(c);
	if ((c->n + 1) * 2 > c->cap) {
		struct idcache old = *c;
		size_t	 cap = c->cap ? c->cap * 2 : 1024;

		if ((c->v = calloc(cap, sizeof *c->v)) == NULL) {
			*c = old;
			return -ENOMEM;
		}
		c->cap = cap;
		c->n = 0;
		for (size_t i = 0; i < old.cap; i++) {
			if (old.v[i].id == 0)
				continue;
			*idcache_slot(c, old.v[i].hash, old.v[i].key,
			    old.v[i].name) = old.v[i];
			c->n++;
		}
		free(old.v);
	}
	e = idcache_slot(c, hash, key, name);
	if (e->id == 0) {
		if (name != NULL && (e->name = strdup(name)) == NULL)
			return -ENOMEM;
		e->hash = hash;
		e->key = key;
		c->n++;
	}
	e->id = id;
	return 0;
}

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

/* The sum of two histograms, in canonical form. */
static void
hist_sum(sqlite3_context *ctx, sqlite3_value *a, sqlite3_value *b)
{
	uint64_t	 counts[FLAKY_HIST_BUCKETS];
	unsigned char	 out[FLAKY_HIST_BUCKETS * 11];
	size_t		 n = 0;

	memset(counts, 0, sizeof counts);
	if (sqlite3_value_type(a) == SQLITE_BLOB)
		flaky_hist_merge(sqlite3_value_blob(a),
		    (size_t)sqlite3_value_bytes(a), counts);
	flaky_hist_merge(sqlite3_value_blob(b), (size_t)sqlite3_value_bytes(b),
	    counts);
	for (int i = 0; i < FLAKY_HIST_BUCKETS; i++) {
		if (counts[i] == 0)
			continue;
		out[n++] = (unsigned char)i;
		n += hist_put(out + n, counts[i]);
	}
	sqlite3_result_blob(ctx, out, (int)n, SQLITE_TRANSIENT);
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
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_value(ctx, argv[0]);
		return;
	}
	if (sqlite3_value_type(argv[1]) == SQLITE_BLOB) {
		const unsigned char *h = sqlite3_value_blob(argv[1]);
		int	 hn = sqlite3_value_bytes(argv[1]);

		if (hn != 2 || h[1] != 1 || h[0] >= FLAKY_HIST_BUCKETS) {
			hist_sum(ctx, argv[0], argv[1]);
			return;
		}
		b = h[0];
	} else
		b = flaky_hist_bucket(sqlite3_value_int64(argv[1]));
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		out[0] = (unsigned char)b;
		out[1] = 1;
		sqlite3_result_blob(ctx, out, 2, SQLITE_TRANSIENT);
		return;
	}
	if (sqlite3_value_type(argv[0]) == SQLITE_BLOB &&
	    (n = hist_add_fast(sqlite3_value_blob(argv[0]),
	    (size_t)sqlite3_value_bytes(argv[0]), b, out, sizeof out)) > 0) {
		sqlite3_result_blob(ctx, out, (int)n, SQLITE_TRANSIENT);
		return;
	}
	/* Anything else is decoded and written back in canonical form. */
	memset(counts, 0, sizeof counts);
	if (sqlite3_value_type(argv[0]) == SQLITE_BLOB)
		flaky_hist_merge(sqlite3_value_blob(argv[0]),
		    (size_t)sqlite3_value_bytes(argv[0]), counts);
	counts[b]++;
	for (int i = 0; i < FLAKY_HIST_BUCKETS; i++) {
		if (counts[i] == 0)
			continue;
		out[n++] = (unsigned char)i;
		n += hist_put(out + n, counts[i]);
	}
	sqlite3_result_blob(ctx, out, (int)n, SQLITE_TRANSIENT);
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

/* An error from SQLite, naming the database. */
static int
sql_error(struct flaky_store *s, char *err, size_t errlen, const char *what)
{
	int	 rc = sqlite3_extended_errcode(s->db);
	int	 code = EIO;

	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		return flaky_error(err, errlen, EBUSY, "%s: %s: busy: another "
		    "writer held the database for longer than this one waits "
		    "(%d ms); try again",
		    s->path, what, s->busy_ms);
	else if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_PERM
	    || (rc & 0xff) == SQLITE_CANTOPEN)
		code = EACCES;
	else if ((rc & 0xff) == SQLITE_FULL)
		code = ENOSPC;
	else if ((rc & 0xff) == SQLITE_NOMEM)
		code = ENOMEM;
	return flaky_error(err, errlen, code, "%s: %s: %s", s->path, what,
	    sqlite3_errmsg(s->db));
}

int
store_sql_error(struct flaky_store *s, char *err, size_t errlen,
    const char *what)
{
	return sql_error(s, err, errlen, what);
}

static int
exec(struct flaky_store *s, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sql_error(s, err, errlen, sql);
	return 0;
}

/* The schema version; refuses a database from a newer flaky. */
static int
read_version(struct flaky_store *s, int *ret, char *err, size_t errlen)
{
	sqlite3_stmt	*st;
	int		 version;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK)
		return sql_error(s, err, errlen, "reading the schema version");
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return sql_error(s, err, errlen, "reading the schema version");
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > (int)flaky_schema_count)
		return flaky_error(err, errlen, EPROTO,
		    "%s: schema version %d is newer than this program "
		    "understands (%d); upgrade flaky", s->path, version,
		    (int)flaky_schema_count);
	*ret = version;
	return 0;
}

static int
check_version(struct flaky_store *s, char *err, size_t errlen)
{
	int	 version;

	return read_version(s, &version, err, errlen);
}

/* Move the schema cookie on by one, as SQLite asks after a change made
 * through writable_schema. */
static int
bump_schema_version(struct flaky_store *s, char *err, size_t errlen)
{
	sqlite3_stmt	*st;
	long long	 v;
	char		 sql[64];

	if (sqlite3_prepare_v2(s->db, "PRAGMA schema_version", -1, &st,
	    NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return sql_error(s, err, errlen, "reading schema_version");
	}
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	snprintf(sql, sizeof sql, "PRAGMA schema_version = %lld", v + 1);
	return exec(s, sql, err, errlen);
}

/* The migrations ran with foreign keys off: refuse to commit one that
 * left a reference dangling. */
static int
foreign_key_check(struct flaky_store *s, char *err, size_t errlen)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st,
	    NULL) != SQLITE_OK)
		return sql_error(s, err, errlen, "checking foreign keys");
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return flaky_error(err, errlen, EPROTO, "%s: migrating left "
		    "a foreign key dangling; nothing changed", s->path);
	if (rc != SQLITE_DONE)
		return sql_error(s, err, errlen, "checking foreign keys");
	return 0;
}

/* Bring the schema forward, all in one transaction; refuse a newer one. */
static int
migrate(struct flaky_store *s, char *err, size_t errlen)
{
	sqlite3_stmt	*st;
	int		 version, r;
	char		 sql[64];

	if ((r = read_version(s, &version, err, errlen)) < 0)
		return r;
	if (version == (int)flaky_schema_count)
		return 0;
	if (s->flags & FLAKY_STORE_READONLY) {
		/* A reader of an older database brings it forward once, as
		 * a writer would (a new flaky reading its old evidence), when
		 * it may write the file; the reading connection then sees the
		 * new schema. */
		struct flaky_store *w;
		int	 e;

		if ((e = flaky_store_open(s->path, s->flags &
		    ~FLAKY_STORE_READONLY, &w, err, errlen)) < 0)
			return flaky_error(err, errlen, -e,
			    "%s: schema version %d needs migrating to %d, and "
			    "this user cannot write it: %s", s->path, version,
			    (int)flaky_schema_count, strerror(-e));
		flaky_store_close(w);
		return 0;
	}
	/* A migration that rebuilds a table (0005) drops the old one: with
	 * foreign keys on, that would delete every row that references it
	 * (ON DELETE CASCADE). The pragma is a no-op inside a transaction, so
	 * it goes here; the keys are checked before the commit instead. */
	if ((r = exec(s, "PRAGMA foreign_keys = OFF", err, errlen)) < 0)
		return r;
	if ((r = exec(s, "BEGIN IMMEDIATE", err, errlen)) < 0)
		goto out;
	/* Another process may have migrated while we waited. */
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	/* A migration may edit sqlite_schema in place (0004): connections,
	 * this one too, reread the schema only when its cookie moves. It
	 * moves after each one, so the next (0005 rebuilds runs) sees the
	 * edited tables, not the ones this connection parsed before. */
	for (size_t i = (size_t)version; i < flaky_schema_count; i++) {
		if ((r = exec(s, flaky_schema_migrations[i], err, errlen)) < 0 ||
		    (r = bump_schema_version(s, err, errlen)) < 0)
			goto fail;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d",
	    (int)flaky_schema_count);
	if ((r = exec(s, sql, err, errlen)) < 0)
		goto fail;
	if ((r = foreign_key_check(s, err, errlen)) < 0)
		goto fail;
	if ((r = exec(s, "COMMIT", err, errlen)) < 0)
		goto fail;
	r = 0;
	goto out;
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
out:
	sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	return r;
}

/* The empty database of this schema version, made by schema/mkimage from
 * flaky_store_build at build time and linked in as non-zero segments of its
 * pages (each: offset, 4 bytes, and length, 2 bytes, little-endian, then
 * the bytes). Weak: mkimage itself, which makes it, has none. */
extern const unsigned char	flaky_schema_image[] __attribute__((weak));
extern const size_t		flaky_schema_image_len __attribute__((weak));
extern const size_t		flaky_schema_image_size __attribute__((weak));

int
flaky_store_image_linked(void)
{
	return flaky_schema_image != NULL;
}

/* The image's bytes into fd, a new empty file. */
static int
image_write(int fd)
{
	const unsigned char *p = flaky_schema_image;
	const unsigned char *end = p + flaky_schema_image_len;
	size_t		 size = flaky_schema_image_size, off, len, done;
	unsigned char	*buf;
	ssize_t		 n;
	int		 r = -1;

	if ((buf = calloc(1, size)) == NULL)
		return -1;
	while (end - p >= 6) {
		off = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 |
		    (size_t)p[3] << 24;
		len = (size_t)p[4] | (size_t)p[5] << 8;
		p += 6;
		if (len > (size_t)(end - p) || off > size || len > size - off)
			goto out;
		memcpy(buf + off, p, len);
		p += len;
	}
	if (p != end)
		goto out;
	for (done = 0; done < size; done += (size_t)n)
		if ((n = write(fd, buf + done, size - done)) <= 0)
			goto out;
	r = 0;
out:
	free(buf);
	return r;
}

/* A new database at path (an empty file, or none), built by the migrations
 * with no journal and no syncs, in WAL mode. Unsynced: for a file nobody
 * else knows yet. */
int
flaky_store_build(const char *path, char *err, size_t errlen)
{
	struct flaky_store	 t;
	int			 r = -1;

	memset(&t, 0, sizeof t);
	if ((t.path = strdup(path)) == NULL)
		return -ENOMEM;
	if (sqlite3_open_v2(path, &t.db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		r = t.db == NULL ? -ENOMEM : sql_error(&t, err, errlen,
		    "creating");
		goto out;
	}
	/* 0006 moves output with sqlar_compress */
	if (store_output_register(t.db) != SQLITE_OK) {
		r = sql_error(&t, err, errlen, "registering functions");
		goto out;
	}
	if ((r = exec(&t, "PRAGMA journal_mode = OFF", err, errlen)) < 0 ||
	    (r = exec(&t, "PRAGMA synchronous = OFF", err, errlen)) < 0 ||
	    (r = migrate(&t, err, errlen)) < 0 ||
	    (r = exec(&t, "PRAGMA journal_mode = WAL", err, errlen)) < 0)
		goto out;
	r = 0;
out:
	if (t.db != NULL && sqlite3_close(t.db) != SQLITE_OK && r == 0)
		r = flaky_error(err, errlen, EIO, "%s: cannot close", path);
	free(t.path);
	return r;
}

/* A new database is built whole under a temporary name next to path and
 * renamed into place, never replacing a file that appeared meanwhile (two
 * processes may create it at once: the second opens the first one's). It
 * is the linked image written out, else built by the migrations, and
 * needs one sync. The new name is made durable by the first commit: SQLite
 * syncs the directory when it first syncs the WAL it made there, and
 * before that the file holds nothing to lose (a crash may take the name
 * away again; the next open makes a new one). Made in place,
 * SQLite writes its first page through a rollback journal and the schema
 * through the new WAL, ten syncs and a journal file made and removed; and
 * the migrations parse the whole schema twice, 7 M instructions. A crash
 * leaves the temporary file, never a half-made database under path.
 * 0 when path now exists (ours or another's), -1 when the caller should
 * make it in place (say, a file system without RENAME_NOREPLACE). */
static int
store_create(const char *path)
{
	static const char	 b32[] = "abcdefghijklmnopqrstuvwxyz234567";
	unsigned char		 rnd[8];
	char			*tmp = NULL, e[256];
	size_t			 n;
	int			 fd = -1, r = -1;

	if (asprintf(&tmp, "%s.new-XXXXXXXX", path) == -1)
		return -1;
	n = strlen(tmp);
	for (int i = 0; i < 16 && fd == -1; i++) {
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
			goto out;
		for (size_t k = 0; k < sizeof rnd; k++)
			tmp[n - sizeof rnd + k] = b32[rnd[k] & 31];
		/* SQLite's own mode for a new database, less the umask */
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd == -1 && errno != EEXIST)
			goto out;
	}
	if (fd == -1)
		goto out;
	if (flaky_schema_image != NULL ? image_write(fd) < 0 :
	    flaky_store_build(tmp, e, sizeof e) < 0)
		goto out;
	if (fsync(fd) == -1)
		goto out;
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) {
		free(tmp);
		tmp = NULL;
		r = 0;
	} else if (errno == EEXIST)
		r = 0;
out:
	if (fd != -1)
		close(fd);
	if (tmp != NULL) {
		unlink(tmp);
		free(tmp);
	}
	return r;
}

/* SQLite's busy handler: wait for another writer with exponential backoff
 * (1 ms doubling up to 64 ms, each sleep jittered by +-50% so that writers
 * that collided do not wake in step and collide again), until busy_ms have
 * passed since this wait began; then the statement fails with SQLITE_BUSY
 * (-EBUSY from the store). SQLite's own handler sleeps a fixed ladder and
 * is not bounded by the clock. */
static int
busy_wait(void *arg, int count)
{
	struct flaky_store *s = arg;
	int64_t		 now = flaky_mono_us(), left, us;

	if (count == 0)
		s->busy_start_us = now;
	left = (int64_t)s->busy_ms * 1000 - (now - s->busy_start_us);
	if (left <= 0)
		return 0;
	us = 1000LL << (count < 6 ? count : 6);
	/* xorshift: cheap, and each store has its own sequence */
	s->rnd ^= s->rnd << 13;
	s->rnd ^= s->rnd >> 7;
	s->rnd ^= s->rnd << 17;
	us = us / 2 + (int64_t)(s->rnd % (uint64_t)us);
	if (us > left)
		us = left;
	usleep((useconds_t)us);
	return 1;
}

int
flaky_store_set_busy_timeout(struct flaky_store *s, int ms)
{
	if (ms < 0)
		return -EINVAL;
	s->busy_ms = ms;
	return 0;
}

int
flaky_store_busy_timeout(const struct flaky_store *s)
{
	return s->busy_ms;
}

int
flaky_store_orphans_marked(const struct flaky_store *s)
{
	return s->orphans;
}

/* Before SQLite starts: no memory statistics (we never read them), which
 * take a global mutex around each of SQLite's allocations, some 11,000 in
 * benchmark (a). */
static void
sqlite_setup(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
flaky_store_open(const char *path, int flags, struct flaky_store **ret,
    char *err, size_t errlen)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	struct flaky_store	*s;
	struct stat		 st;
	int			 oflags, r;
	char			 sql[128];

	pthread_once(&once, sqlite_setup);
	if ((s = calloc(1, sizeof *s)) == NULL)
		return -ENOMEM;
	s->flags = flags;
	if ((s->path = strdup(path)) == NULL) {
		free(s);
		return -ENOMEM;
	}
	if ((r = flaky_redactor_new(&s->redact)) < 0)
		goto fail;
	if (flags & FLAKY_STORE_READONLY) {
		if (stat(path, &st) == -1) {
			r = flaky_error(err, errlen, errno, "%s: %s", path,
			    errno == ENOENT ? "no such database" :
			    strerror(errno));
			goto fail;
		}
		oflags = SQLITE_OPEN_READONLY;
	} else {
		oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
		/* Made in place only when it cannot be made aside. */
		if (lstat(path, &st) == -1 && errno == ENOENT &&
		    strncmp(path, "file:", 5) != 0 && strcmp(path, ":memory:"))
			store_create(path);
	}
	oflags |= SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(path, &s->db, oflags, NULL) != SQLITE_OK) {
		if (s->db == NULL) {
			r = -ENOMEM;
			goto fail;
		}
		r = flaky_error(err, errlen, EACCES, "%s: cannot open: %s",
		    path, sqlite3_errmsg(s->db));
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	s->busy_ms = FLAKY_BUSY_TIMEOUT_MS;
	s->rnd = ((uint64_t)flaky_mono_us() * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)getpid() << 32) | 1;
	sqlite3_busy_handler(s->db, busy_wait, s);
	/* The first read tells a corrupt file or a foreign one. */
	if ((r = exec(s, "SELECT count(*) FROM sqlite_schema", err,
	    errlen)) < 0)
		goto fail;
	/* A newer schema is refused before anything is written (even the
	 * journal mode lives in the file header). */
	if ((r = check_version(s, err, errlen)) < 0)
		goto fail;
	if (!(flags & FLAKY_STORE_READONLY)) {
		/* SQLite opens a file we may not write read-only without a
		 * word (and WAL then stays as it is): refuse here, not at the
		 * first write. */
		if (sqlite3_db_readonly(s->db, "main") == 1) {
			r = flaky_error(err, errlen, EACCES, "%s: cannot open "
			    "for writing (read-only file or directory)", path);
			goto fail;
		}
		if ((r = exec(s, "PRAGMA journal_mode = WAL", err, errlen)) < 0)
			goto fail;
		snprintf(sql, sizeof sql, "PRAGMA synchronous = %s",
		    flags & FLAKY_STORE_BULK ? "NORMAL" : "FULL");
		if ((r = exec(s, sql, err, errlen)) < 0)
			goto fail;
		/* Readers that hold on must not grow the WAL for ever. */
		if ((r = exec(s, "PRAGMA journal_size_limit = 67108864", err,
		    errlen)) < 0)
			goto fail;
	}
	if ((r = exec(s, "PRAGMA foreign_keys = ON", err, errlen)) < 0)
		goto fail;
	if (sqlite3_create_function(s->db, "flaky_hist_add", 2,
	    SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_hist_add, NULL,
	    NULL) != SQLITE_OK || store_output_register(s->db) != SQLITE_OK) {
		r = sql_error(s, err, errlen, "registering functions");
		goto fail;
	}
	if ((r = migrate(s, err, errlen)) < 0)
		goto fail;
	/* Rows left running by a process that is gone can never finish:
	 * any writer that opens the database says so. Cheap when there are
	 * none (a read of a partial index, no lock). Best effort: a busy
	 * database leaves them for the next writer. */
	if (!(flags & FLAKY_STORE_READONLY)) {
		char	 e[256];

		if ((r = flaky_store_mark_orphans(s, 0, e, sizeof e)) > 0)
			s->orphans = r;
	}
	*ret = s;
	return 0;
fail:
	flaky_store_close(s);
	return r;
}

void
flaky_store_close(struct flaky_store *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	store_query_finalize(s);
	store_output_finalize(&s->output);
	if (s->db != NULL) {
		if (s->in_tx)
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(s->db);
	}
	idcache_clear(&s->tests);
	idcache_clear(&s->msgs);
	flaky_redactor_free(s->redact);
	free(s->path);
	free(s);
}

int
flaky_store_add_redaction(struct flaky_store *s, const char *regex,
    char *err, size_t errlen)
{
	return flaky_redactor_add(s->redact, regex, err, errlen);
}

/* The statements that write CHUNK results or rollup rows at once:
 * ?1 the run id (results) or the day (rollups), then each row's values. */
static char *
many_sql(int which)
{
	struct flaky_buf b;
	int		 k = 2;

	flaky_buf_init(&b);
	if (which == ST_RESULT_MANY)
		flaky_buf_adds(&b, "INSERT INTO results (run_id, position, "
		    "test_id, outcome, duration_us, message_id, signature, "
		    "message) VALUES ");
	else
		flaky_buf_adds(&b, "INSERT INTO rollups (test_id, day, runs, "
		    "failures, skips, pass_us, fail_us, pass_hist, fail_hist) "
		    "VALUES ");
	for (int i = 0; i < CHUNK; i++) {
		if (which == ST_RESULT_MANY) {
			flaky_buf_printf(&b, "%s(?1", i ? "," : "");
			for (int j = 0; j < RESULT_COLS; j++)
				flaky_buf_printf(&b, ",?%d", k++);
		} else {
			flaky_buf_printf(&b, "%s(?%d,?1", i ? "," : "", k++);
			for (int j = 0; j < 5; j++)
				flaky_buf_printf(&b, ",?%d", k++);
			flaky_buf_printf(&b, ",?%d,?%d", k, k + 1);
			k += 2;
		}
		flaky_buf_addc(&b, ')');
	}
	if (which == ST_ROLLUP_MANY)
		flaky_buf_adds(&b, " ON CONFLICT (test_id, day) DO UPDATE SET "
		    "runs = runs + excluded.runs, "
		    "failures = failures + excluded.failures, "
		    "skips = skips + excluded.skips, "
		    "pass_us = pass_us + excluded.pass_us, "
		    "fail_us = fail_us + excluded.fail_us, "
		    "pass_hist = CASE WHEN excluded.pass_hist IS NULL "
		    "THEN pass_hist ELSE flaky_hist_add(pass_hist, "
		    "excluded.pass_hist) END, "
		    "fail_hist = CASE WHEN excluded.fail_hist IS NULL "
		    "THEN fail_hist ELSE flaky_hist_add(fail_hist, "
		    "excluded.fail_hist) END");
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}

/* A cached prepared statement, reset and unbound. */
static sqlite3_stmt *
stmt(struct flaky_store *s, int which)
{
	if (s->st[which] == NULL) {
		char	*sql = stmt_sql[which] ? NULL : many_sql(which);
		int	 rc;

		if (stmt_sql[which] == NULL && sql == NULL)
			return NULL;
		rc = sqlite3_prepare_v3(s->db, sql ? sql : stmt_sql[which], -1,
		    SQLITE_PREPARE_PERSISTENT, &s->st[which], NULL);
		free(sql);
		if (rc != SQLITE_OK)
			return NULL;
	} else {
		sqlite3_reset(s->st[which]);
		sqlite3_clear_bindings(s->st[which]);
	}
	return s->st[which];
}

/* Reset every cached statement: one left on a row holds a read
 * transaction open, and a connection whose read snapshot is older than
 * another writer's commit can never take the write lock (SQLITE_BUSY at
 * once, whatever the busy timeout). Done around every transaction. */
static void
stmts_reset(struct flaky_store *s)
{
	for (size_t i = 0; i < ST_COUNT; i++)
		if (s->st[i] != NULL)
			sqlite3_reset(s->st[i]);
}

int
flaky_store_begin(struct flaky_store *s, char *err, size_t errlen)
{
	int	 r;

	if (s->in_tx)
		return flaky_error(err, errlen, EALREADY,
		    "%s: a transaction is already open", s->path);
	stmts_reset(s);
	if ((r = exec(s, "BEGIN IMMEDIATE", err, errlen)) < 0)
		return r;
	s->in_tx = 1;
	return 0;
}

int
flaky_store_commit(struct flaky_store *s, char *err, size_t errlen)
{
	int	 r;

	if (!s->in_tx)
		return 0;
	stmts_reset(s);
	/* Another process may prune the memo's row once it is committed. */
	store_output_forget(&s->output);
	if ((r = exec(s, "COMMIT", err, errlen)) < 0) {
		flaky_store_rollback(s);
		return r;
	}
	s->in_tx = 0;
	return 0;
}

void
flaky_store_rollback(struct flaky_store *s)
{
	if (!s->in_tx)
		return;
	stmts_reset(s);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_tx = 0;
	/* Ids handed out inside the transaction are gone. */
	idcache_clear(&s->tests);
	idcache_clear(&s->msgs);
	store_output_forget(&s->output);
}

static void
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

static void
bind_int_or_null(sqlite3_stmt *st, int i, int64_t v, int null)
{
	if (null)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

int
flaky_store_target(struct flaky_store *s, const char *name,
    const char *command, const char *dir, int64_t *ret_id, char *err,
    size_t errlen)
{
	sqlite3_stmt	*st = NULL;
	int		 r = 0;

	/* On its own, the target's row is committed without a sync of its
	 * own: it is no evidence, and the sync of the next run's commit
	 * (synchronous=FULL) makes the WAL frames before it durable too. A
	 * power cut in between loses a target with no runs. One sync fewer
	 * per analyze call. */
	if (!s->in_tx && !(s->flags & FLAKY_STORE_BULK))
		sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL,
		    NULL);
	if (sqlite3_prepare_v2(s->db,
	    "INSERT INTO targets (name, command, dir, created_ms) "
	    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO UPDATE SET "
	    "command = coalesce(?2, command), dir = coalesce(?3, dir) "
	    "RETURNING id", -1, &st, NULL) != SQLITE_OK)
		return sql_error(s, err, errlen, "saving the target");
	bind_text(st, 1, name);
	bind_text(st, 2, command);
	bind_text(st, 3, dir);
	sqlite3_bind_int64(st, 4, flaky_now_ms());
	if (sqlite3_step(st) != SQLITE_ROW)
		r = sql_error(s, err, errlen, "saving the target");
	else
		*ret_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (!s->in_tx && !(s->flags & FLAKY_STORE_BULK))
		sqlite3_exec(s->db, "PRAGMA synchronous = FULL", NULL, NULL,
		    NULL);
	return r;
}

int
flaky_store_run_start(struct flaky_store *s, struct flaky_run_record *rec,
    char *err, size_t errlen)
{
	struct store_owner me;
	sqlite3_stmt	*st;
	int		 r, own = !s->in_tx;

	if (rec->kind < FLAKY_KIND_SUITE || rec->kind > FLAKY_KIND_INGESTED)
		return flaky_error(err, errlen, EINVAL, "%s: run kind %d is "
		    "not one of suite, alone, ingested", s->path, rec->kind);
	if (own && (r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if ((st = stmt(s, ST_RUN_START)) == NULL) {
		r = sql_error(s, err, errlen, "preparing");
		goto fail;
	}
	sqlite3_bind_int64(st, 1, rec->target_id);
	bind_text(st, 2, flaky_run_status_name(FLAKY_RUN_RUNNING));
	bind_text(st, 3, rec->trigger);
	sqlite3_bind_int64(st, 4, rec->started_ms);
	bind_text(st, 5, rec->revision);
	sqlite3_bind_int(st, 6, rec->in_flight);
	if (rec->loadavg >= 0)
		sqlite3_bind_double(st, 7, rec->loadavg);
	bind_text(st, 8, flaky_run_kind_name(rec->kind));
	/* the owner, so that no other writer takes the row for abandoned
	 * while this process lives */
	if (store_owner_self(&me) == 0) {
		sqlite3_bind_text(st, 9, me.boot, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 10, me.pid);
		sqlite3_bind_int64(st, 11, me.start);
	}
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = sql_error(s, err, errlen, "recording the run start");
		goto fail;
	}
	rec->id = sqlite3_last_insert_rowid(s->db);
	if (own && (r = flaky_store_commit(s, err, errlen)) < 0) {
		/* rolled back: a retry inserts the row again */
		rec->id = 0;
		return r;
	}
	return 0;
fail:
	if (own)
		flaky_store_rollback(s);
	return r;
}

/* The id of a test, created on first sight. */
static int
test_id(struct flaky_store *s, int64_t target, const char *name,
    int64_t *ret, char *err, size_t errlen)
{
	uint64_t	 h = flaky_hash64(name, strlen(name), (uint64_t)target);
	sqlite3_stmt	*st;
	int64_t		 id;

	if ((id = idcache_get(&s->tests, h, target, name)) != 0)
		goto done;
	if ((st = stmt(s, ST_TEST_FIND)) == NULL)
		return sql_error(s, err, errlen, "preparing");
	sqlite3_bind_int64(st, 1, target);
	bind_text(st, 2, name);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	/* a statement left on a row holds a read transaction open */
	sqlite3_reset(st);
	if (id == 0) {
		if ((st = stmt(s, ST_TEST_ADD)) == NULL)
			return sql_error(s, err, errlen, "preparing");
		sqlite3_bind_int64(st, 1, target);
		bind_text(st, 2, name);
		if (sqlite3_step(st) != SQLITE_DONE)
			return sql_error(s, err, errlen, "adding a test");
		id = sqlite3_last_insert_rowid(s->db);
	}
	if (idcache_put(&s->tests, h, target, name, id) < 0)
		return -ENOMEM;
done:
	*ret = id;
	return 0;
}

/* The id of a normalized failure text, stored once per fingerprint. */
static int
message_id(struct flaky_store *s, const char *msg, int64_t *ret, char *err,
    size_t errlen)
{
	struct flaky_buf norm;
	sqlite3_stmt	*st;
	int64_t		 fp, id;
	int		 r = 0;

	flaky_buf_init(&norm);
	if (flaky_normalize(msg, strlen(msg), &norm) < 0)
		return -ENOMEM;
	fp = flaky_fingerprint(flaky_buf_cstr(&norm), norm.len);
	if ((id = idcache_get(&s->msgs, (uint64_t)fp, fp, NULL)) != 0)
		goto done;
	if ((st = stmt(s, ST_MSG_FIND)) == NULL) {
		r = sql_error(s, err, errlen, "preparing");
		goto out;
	}
	sqlite3_bind_int64(st, 1, fp);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (id == 0) {
		if ((st = stmt(s, ST_MSG_ADD)) == NULL) {
			r = sql_error(s, err, errlen, "preparing");
			goto out;
		}
		sqlite3_bind_int64(st, 1, fp);
		bind_text(st, 2, flaky_buf_cstr(&norm));
		if (sqlite3_step(st) != SQLITE_DONE) {
			r = sql_error(s, err, errlen, "adding a message");
			goto out;
		}
		id = sqlite3_last_insert_rowid(s->db);
	}
	if (idcache_put(&s->msgs, (uint64_t)fp, fp, NULL, id) < 0) {
		r = -ENOMEM;
		goto out;
	}
done:
	*ret = id;
out:
	flaky_buf_free(&norm);
	return r;
}

/* Redacted copy of a text into b (reset first); NULL stays NULL. */
const char *
redacted(struct flaky_store *s, const char *t, size_t len,
    struct flaky_buf *b, size_t *ret_len)
{
	flaky_buf_reset(b);
	if (t == NULL)
		return NULL;
	if (len == 0) {
		/* most runs print nothing on one stream: no buffer for it */
		if (ret_len != NULL)
			*ret_len = 0;
		return "";
	}
	if (flaky_redact(s->redact, t, len, b) < 0)
		return NULL;
	if (ret_len != NULL)
		*ret_len = b->len;
	return flaky_buf_cstr(b);
}

/* One result on its way in: what the rows of results and rollups need. */
struct pending {
	const struct flaky_result *res;
	int64_t		 tid;
	int64_t		 mid;
};

/* Bind one result's columns from index i (results, without the run id). */
static void
bind_result(sqlite3_stmt *st, int i, const struct pending *p, const char *msg)
{
	const struct flaky_result *res = p->res;
	int		 failed = FLAKY_FAILED(res->outcome);

	sqlite3_bind_int64(st, i, res->position);
	sqlite3_bind_int64(st, i + 1, p->tid);
	sqlite3_bind_int(st, i + 2, res->outcome);
	bind_int_or_null(st, i + 3, res->duration_us, res->duration_us < 0);
	bind_int_or_null(st, i + 4, p->mid, p->mid == 0);
	if (failed)
		bind_text(st, i + 5, res->signature);
	if (msg != NULL)
		sqlite3_bind_text(st, i + 6, msg, -1, SQLITE_TRANSIENT);
}

/* The one-entry histograms {bucket, count 1}, bound as they are: the
 * rollup UPSERT then adds them without a function call per row. */
#define H1(b)	{ (b), 1 }
#define H4(b)	H1(b), H1((b) + 1), H1((b) + 2), H1((b) + 3)
#define H16(b)	H4(b), H4((b) + 4), H4((b) + 8), H4((b) + 12)
static const unsigned char hist_one[FLAKY_HIST_BUCKETS][2] = {
	H16(0), H16(16), H16(32), H16(48), H16(64), H16(80), H16(96),
	H16(112)
};
#undef H1
#undef H4
#undef H16

/* Bind the one-entry histogram of a duration at index i. */
static void
bind_hist(sqlite3_stmt *st, int i, int64_t us)
{
	sqlite3_bind_blob(st, i, hist_one[flaky_hist_bucket(us)], 2,
	    SQLITE_STATIC);
}

/* Bind one result's rollup deltas from index i: runs, failures, skips,
 * pass_us, fail_us, pass and fail histogram of this one (NULL: none). */
static void
bind_rollup(sqlite3_stmt *st, int i, const struct flaky_result *res)
{
	int		 failed = FLAKY_FAILED(res->outcome);
	int		 counted = res->outcome == FLAKY_PASS ||
			    res->outcome == FLAKY_XPASS || failed;
	int		 known = res->duration_us >= 0;

	sqlite3_bind_int(st, i, counted);
	sqlite3_bind_int(st, i + 1, failed);
	sqlite3_bind_int(st, i + 2, !counted);
	sqlite3_bind_int64(st, i + 3, counted && !failed && known ?
	    res->duration_us : 0);
	sqlite3_bind_int64(st, i + 4, failed && known ? res->duration_us : 0);
	if (counted && !failed && known)
		bind_hist(st, i + 5, res->duration_us);
	if (failed && known)
		bind_hist(st, i + 6, res->duration_us);
}

/* The rollup rows of results one at a time: UPDATE first (the day's row
 * exists after a test's first run of the day), INSERT when it did not. */
static int
rollup_one(struct flaky_store *s, int64_t day, const struct pending *p,
    char *err, size_t errlen)
{
	sqlite3_stmt	*st;

	for (int which = ST_ROLLUP_UPDATE; which <= ST_ROLLUP; which++) {
		if ((st = stmt(s, which)) == NULL)
			return sql_error(s, err, errlen, "preparing");
		sqlite3_bind_int64(st, 1, p->tid);
		sqlite3_bind_int64(st, 2, day);
		bind_rollup(st, 3, p->res);
		if (sqlite3_step(st) != SQLITE_DONE)
			break;
		if (which == ST_ROLLUP || sqlite3_changes(s->db) > 0)
			return 0;
	}
	return sql_error(s, err, errlen, "updating the rollups");
}

/* Look up the ids of n results and write their rows: CHUNK of them with
 * one statement, fewer one by one; and their rollups, unless day is -1. */
static int
add_results(struct flaky_store *s, int64_t run_id, int64_t target,
    int64_t day, const struct flaky_result *res, size_t n,
    struct flaky_buf *tmp, char *err, size_t errlen)
{
	struct pending	 p[CHUNK];
	sqlite3_stmt	*st = NULL;
	int		 many = n == CHUNK, r;

	if (many) {
		if ((st = stmt(s, ST_RESULT_MANY)) == NULL)
			return sql_error(s, err, errlen, "preparing");
		sqlite3_bind_int64(st, 1, run_id);
	}
	for (size_t i = 0; i < n; i++) {
		const char *msg = NULL;

		p[i].res = &res[i];
		p[i].mid = 0;
		if (res[i].test == NULL)
			return flaky_error(err, errlen, EINVAL, "%s: result "
			    "%zu of the run has no test id", s->path, i);
		if ((r = test_id(s, target, res[i].test, &p[i].tid, err,
		    errlen)) < 0)
			return r;
		if (FLAKY_FAILED(res[i].outcome) && res[i].message != NULL) {
			msg = redacted(s, res[i].message,
			    strlen(res[i].message), tmp, NULL);
			if (msg == NULL)
				return -ENOMEM;
			if ((r = message_id(s, msg, &p[i].mid, err,
			    errlen)) < 0)
				return r;
		}
		if (!many) {
			if ((st = stmt(s, ST_RESULT_ADD)) == NULL)
				return sql_error(s, err, errlen, "preparing");
			sqlite3_bind_int64(st, 1, run_id);
		}
		bind_result(st, many ? 2 + (int)i * RESULT_COLS : 2, &p[i],
		    msg);
		if (!many && sqlite3_step(st) != SQLITE_DONE)
			return sql_error(s, err, errlen, "adding a result");
	}
	if (many && sqlite3_step(st) != SQLITE_DONE)
		return sql_error(s, err, errlen, "adding results");
	if (day < 0)
		return 0;

	/* One UPSERT for the chunk's rollup rows (a test twice in a chunk,
	 * possible only through the API, conflicts with itself and adds up). */
	if (many) {
		if ((st = stmt(s, ST_ROLLUP_MANY)) == NULL)
			return sql_error(s, err, errlen, "preparing");
		sqlite3_bind_int64(st, 1, day);
		for (size_t i = 0; i < n; i++) {
			int	 k = 2 + (int)i * ROLLUP_COLS;

			sqlite3_bind_int64(st, k, p[i].tid);
			bind_rollup(st, k + 1, p[i].res);
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			return sql_error(s, err, errlen,
			    "updating the rollups");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if ((r = rollup_one(s, day, &p[i], err, errlen)) < 0)
			return r;
	}
	return 0;
}

int
flaky_store_run_finish(struct flaky_store *s, struct flaky_run_record *rec,
    const struct flaky_results *res, char *err, size_t errlen)
{
	struct flaky_buf out, errb, tmp, msg;
	sqlite3_stmt	*st;
	const char	*o, *e, *error, *what = NULL;
	size_t		 olen = 0, elen = 0;
	struct store_packed po = { 0 }, pe = { 0 };
	int64_t		 day, failures = 0, out_id = 0, err_id = 0;
	int		 r, own = !s->in_tx, inserted = 0;

	flaky_buf_init(&out);
	flaky_buf_init(&errb);
	flaky_buf_init(&tmp);
	flaky_buf_init(&msg);
	if (rec->kind < FLAKY_KIND_SUITE || rec->kind > FLAKY_KIND_INGESTED) {
		r = flaky_error(err, errlen, EINVAL, "%s: run kind %d is not "
		    "one of suite, alone, ingested", s->path, rec->kind);
		goto out;
	}
	/* Output is redacted and compressed before the transaction: other
	 * writers wait for the writes only. */
	o = redacted(s, rec->out, rec->out_len, &out, &olen);
	e = redacted(s, rec->err, rec->err_len, &errb, &elen);
	error = redacted(s, rec->error, rec->error ? strlen(rec->error) : 0,
	    &msg, NULL);
	if (out.oom || errb.oom || msg.oom) {
		r = -ENOMEM;
		goto out;
	}
	if ((o != NULL && (r = store_output_pack(&po, o, olen, err,
	    errlen)) < 0) || (e != NULL && (r = store_output_pack(&pe, e, elen,
	    err, errlen)) < 0))
		goto out;
	if (own && (r = flaky_store_begin(s, err, errlen)) < 0)
		goto out;
	if ((o != NULL && (r = store_output_put(s->db, &s->output, &po,
	    &out_id, &what)) < 0) || (e != NULL && (r = store_output_put(s->db,
	    &s->output, &pe, &err_id, &what)) < 0)) {
		r = r == -ENOMEM ? flaky_error(err, errlen, ENOMEM, "out of "
		    "memory") : sql_error(s, err, errlen, what);
		goto fail;
	}
	if (res != NULL) {
		for (size_t i = 0; i < res->n; i++)
			failures += FLAKY_FAILED(res->v[i].outcome);
	}
	/* Not started in the store: one INSERT instead of two statements. */
	if ((st = stmt(s, rec->id == 0 ? ST_RUN_INSERT : ST_RUN_FINISH)) ==
	    NULL) {
		r = sql_error(s, err, errlen, "preparing");
		goto fail;
	}
	bind_text(st, 1, flaky_run_status_name(rec->status));
	sqlite3_bind_int64(st, 2, rec->ended_ms);
	sqlite3_bind_int64(st, 3, rec->duration_us);
	bind_int_or_null(st, 4, rec->exit_code, rec->exit_code < 0 ||
	    rec->status == FLAKY_RUN_ERROR || rec->status == FLAKY_RUN_SKIPPED);
	bind_int_or_null(st, 5, rec->signal, rec->signal == 0);
	bind_text(st, 6, rec->revision);
	if (res != NULL && res->runner[0] != '\0')
		bind_text(st, 7, res->runner);
	bind_text(st, 8, res ? res->version : NULL);
	bind_text(st, 9, res ? res->seed : NULL);
	sqlite3_bind_int64(st, 10, res ? (int64_t)res->n : 0);
	sqlite3_bind_int64(st, 11, failures);
	bind_int_or_null(st, 12, res ? res->summary_total : -1,
	    res == NULL || res->summary_total < 0);
	bind_int_or_null(st, 13, rec->in_flight, rec->in_flight <= 0);
	if (rec->loadavg >= 0)
		sqlite3_bind_double(st, 14, rec->loadavg);
	sqlite3_bind_int64(st, 15, rec->user_us);
	sqlite3_bind_int64(st, 16, rec->sys_us);
	sqlite3_bind_int64(st, 17, rec->maxrss_kb);
	sqlite3_bind_int64(st, 18, (int64_t)rec->output_bytes);
	sqlite3_bind_int64(st, 19, (int64_t)rec->output_dropped);
	bind_int_or_null(st, 20, out_id, o == NULL);
	bind_int_or_null(st, 21, err_id, e == NULL);
	bind_text(st, 22, error);
	bind_text(st, 23, rec->content_hash);
	sqlite3_bind_int64(st, 24, rec->started_ms);
	bind_text(st, 25, rec->trigger);
	bind_text(st, 26, flaky_run_kind_name(rec->kind));
	bind_text(st, 27, rec->incomplete);
	sqlite3_bind_int64(st, 28, rec->id == 0 ? rec->target_id : rec->id);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = sql_error(s, err, errlen, "completing the run");
		goto fail;
	}
	if (rec->id == 0) {
		rec->id = sqlite3_last_insert_rowid(s->db);
		inserted = 1;
	}
	/* Rates count complete suite and ingested runs: a run alone or an
	 * incomplete one keeps its results (the evidence) out of the
	 * rollups. */
	day = rec->kind == FLAKY_KIND_ALONE || rec->incomplete != NULL ? -1 :
	    rec->started_ms / 86400000;
	for (size_t i = 0; res != NULL && i < res->n; i += CHUNK) {
		r = add_results(s, rec->id, rec->target_id, day, &res->v[i],
		    res->n - i < CHUNK ? res->n - i : CHUNK, &tmp,
		    err, errlen);
		if (r < 0)
			goto fail;
	}
	if (own && (r = flaky_store_commit(s, err, errlen)) < 0)
		goto undo;
	r = 0;
	goto out;
fail:
	if (own)
		flaky_store_rollback(s);
undo:
	/* The row is not there: a retry must insert it again. */
	if (inserted && own)
		rec->id = 0;
out:
	store_output_packed_free(&po);
	store_output_packed_free(&pe);
	flaky_buf_free(&out);
	flaky_buf_free(&errb);
	flaky_buf_free(&tmp);
	flaky_buf_free(&msg);
	return r;
}
