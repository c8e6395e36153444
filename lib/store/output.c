/* Kept output in the database: each distinct stream once, in table
 * outputs, deflate-compressed in the format of SQLite's sqlar archives, so
 * that the stock sqlite3 shell (which has sqlar_uncompress built in) reads
 * it through the view run_output with no extension; flaky's connections get
 * the same functions here. Measured against zstd in docs/performance.md. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <zlib.h>

#include "store_int.h"
#include "util/util.h"

/* The content hash: 64-bit FNV-1a, 0 kept for "none" as fingerprints do. */
static int64_t
output_hash(const void *data, size_t len)
{
	uint64_t h = flaky_hash64(data, len, FLAKY_HASH_SEED);

	return (int64_t)(h == 0 ? 1 : h);
}

/* sqlar_compress(X): a blob X deflated by zlib's compress(), or X itself
 * when that is not smaller or X is not a blob; as ext/misc/sqlar.c, so the
 * shell reads ours. */
static void
sql_sqlar_compress(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const Bytef	*in;
	Bytef		*out;
	uLong		 n;
	uLongf		 m;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQL_BLOB) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	in = sqlite3_value_blob(argv[0]);
	n = (uLong)sqlite3_value_bytes(argv[0]);
	m = compressBound(n);
	if ((out = sqlite3_malloc64(m)) == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (n > 0 && compress(out, &m, in, n) == Z_OK && m < n)
		sqlite3_result_blob(ctx, out, (int)m, sqlite3_free);
	else {
		sqlite3_free(out);
		sqlite3_result_value(ctx, argv[0]);
	}
}

/* sqlar_uncompress(X, SZ): X when SZ is not positive or is X's length
 * (stored raw), else X inflated to SZ bytes; as ext/misc/sqlar.c. */
static void
sql_sqlar_uncompress(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3_int64	 sz = sqlite3_value_int64(argv[1]);
	uLong		 n = (uLong)sqlite3_value_bytes(argv[0]);
	uLongf		 m = (uLongf)sz;
	Bytef		*out;

	(void)argc;
	if (sz <= 0 || (uLong)sz == n) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	if (sz > INT_MAX) {
		sqlite3_result_error_toobig(ctx);
		return;
	}
	if ((out = sqlite3_malloc64((sqlite3_uint64)sz)) == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (uncompress(out, &m, sqlite3_value_blob(argv[0]), n) != Z_OK) {
		sqlite3_free(out);
		sqlite3_result_error(ctx, "error in uncompress()", -1);
		return;
	}
	sqlite3_result_blob(ctx, out, (int)m, sqlite3_free);
}

/* flaky_output_hash(X): the hash outputs.hash holds for content X. */
static void
sql_output_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const void	*p;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQL_NULL)
		return;
	p = sqlite3_value_blob(argv[0]);
	sqlite3_result_int64(ctx, output_hash(p ? p : "",
	    (size_t)sqlite3_value_bytes(argv[0])));
}

/* The SQL functions of stored output, on one connection. */
int
store_output_register(sqlite3 *db)
{
	int	 f = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	int	 rc;

	if ((rc = sqlite3_create_function(db, "sqlar_compress", 1, f, NULL,
	    sql_sqlar_compress, NULL, NULL)) != SQL_OK ||
	    (rc = sqlite3_create_function(db, "sqlar_uncompress", 2, f, NULL,
	    sql_sqlar_uncompress, NULL, NULL)) != SQL_OK ||
	    (rc = sqlite3_create_function(db, "flaky_output_hash", 1, f, NULL,
	    sql_output_hash, NULL, NULL)) != SQL_OK)
		return rc;
	return SQL_OK;
}

/* The cached statements go with their connection. */
void
store_output_finalize(struct store_output *o)
{
	sql_finalize(o->find);
	sql_finalize(o->add);
	o->find = o->add = NULL;
}

/* A cached statement, reset and unbound; NULL when it does not prepare. */
static struct sql_stmt *
output_stmt(struct sql *db, struct sql_stmt **st, const char *sql)
{
	if (*st == NULL) {
		if (sql_prepare_v3(db, sql, -1, SQL_PREPARE_PERSISTENT,
		    st, NULL) != SQL_OK)
			return NULL;
	} else {
		sql_reset(*st);
		sql_clear_bindings(*st);
	}
	return *st;
}

/* Does the outputs row under st (columns size, data) hold exactly these
 * bytes? 1 yes, 0 no (a hash collision), -ENOMEM. */
static int
output_equal(struct sql_stmt *st, const void *data, size_t len)
{
	sqlite3_int64	 size = sql_column_int64(st, 1);
	const void	*z = sql_column_blob(st, 2);
	size_t		 zlen = (size_t)sql_column_bytes(st, 2);
	unsigned char	*buf;
	uLongf		 m = (uLongf)len;
	int		 r;

	if (size < 0 || (size_t)size != len)
		return 0;
	if (zlen == len)
		return len == 0 || memcmp(z, data, len) == 0;
	if ((buf = malloc(len)) == NULL)
		return -ENOMEM;
	r = uncompress(buf, &m, z, (uLong)zlen) == Z_OK && m == len &&
	    memcmp(buf, data, len) == 0;
	free(buf);
	return r;
}

/* Hash and deflate one output, outside any transaction. */
int
store_output_pack(struct store_packed *p, const void *data, size_t len,
    int raw, char *err, size_t errlen)
{
	uLongf		 zlen;

	memset(p, 0, sizeof *p);
	/* SQLite's blobs, and the shell's sqlar_uncompress, stop at 2 GiB. */
	if (len > INT_MAX)
		return flaky_error(err, errlen, EFBIG, "%zu bytes of output is "
		    "too much to store", len);
	p->data = len > 0 ? data : "";
	p->len = len;
	p->hash = output_hash(p->data, len);
	if (len == 0 || raw)
		return 0;
	zlen = compressBound((uLong)len);
	if ((p->z = malloc(zlen)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	/* Raw where deflate does not make it smaller, as sqlar does: then
	 * length(data) = size tells readers so. */
	if (compress(p->z, &zlen, data, (uLong)len) != Z_OK || zlen >= len) {
		free(p->z);
		p->z = NULL;
		return 0;
	}
	p->zlen = zlen;
	return 0;
}

/* Free what store_output_pack allocated. */
void
store_output_packed_free(struct store_packed *p)
{
	free(p->z);
	p->z = NULL;
}

/* An SQLite error of the step named what: the caller reads the code and
 * message from the connection (the store formats them). */
static int
sql_failed(const char **what, const char *step)
{
	*what = step;
	return -EIO;
}

/* The id of the row holding this output, added when new. */
int
store_output_put(struct sql *db, struct store_output *o,
    const struct store_packed *p, int64_t *ret, const char **what)
{
	struct sql_stmt	*st;
	int		 r, rc, collision = 0;

	if (o->memo_valid && o->memo_len == p->len &&
	    memcmp(o->memo, p->data, p->len) == 0) {
		*ret = o->memo_id;
		return 0;
	}
	/* Identical output is common (an empty or unchanged stderr, a suite
	 * that prints the same every time): stored once. */
	if ((st = output_stmt(db, &o->find, "SELECT id, size, data FROM "
	    "outputs WHERE hash = ?")) == NULL) {
		r = sql_failed(what, "preparing");
		goto out;
	}
	sql_bind_int64(st, 1, p->hash);
	if ((rc = sql_step(st)) == SQL_ROW) {
		if ((r = output_equal(st, p->data, p->len)) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if (r == 1) {
			*ret = sql_column_int64(st, 0);
			r = 0;
			goto memo;
		}
		/* Two contents, one hash: this one is kept without it. */
		collision = 1;
	} else if (rc != SQL_DONE) {
		r = sql_failed(what, "looking up output");
		goto out;
	}
	sql_reset(st);
	if ((st = output_stmt(db, &o->add, "INSERT INTO outputs (hash, size, "
	    "data) VALUES (?, ?, ?)")) == NULL) {
		r = sql_failed(what, "preparing");
		goto out;
	}
	if (!collision)
		sql_bind_int64(st, 1, p->hash);
	sql_bind_int64(st, 2, (sqlite3_int64)p->len);
	/* p->data is never NULL: a NULL pointer would bind NULL, not x'' */
	if (p->z != NULL)
		sql_bind_blob(st, 3, p->z, (int)p->zlen, SQL_STATIC);
	else
		sql_bind_blob(st, 3, p->data, (int)p->len, SQL_STATIC);
	if (sql_step(st) != SQL_DONE) {
		r = sql_failed(what, "adding output");
		goto out;
	}
	*ret = sql_last_insert_rowid(db);
	r = 0;
memo:
	if (p->len <= STORE_OUTPUT_MEMO) {
		memcpy(o->memo, p->data, p->len);
		o->memo_len = p->len;
		o->memo_id = *ret;
		o->memo_valid = 1;
	}
out:
	/* nothing bound may outlive this call */
	if (o->add != NULL)
		sql_reset(o->add);
	if (o->find != NULL)
		sql_reset(o->find);
	return r;
}

void
store_output_forget(struct store_output *o)
{
	o->memo_valid = 0;
}
