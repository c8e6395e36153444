/* Opening the evidence database: made from the linked image or built by
 * the migrations, brought forward to this schema version, set up (WAL,
 * syncs, the busy handler, the SQL functions), and closed. */
#include "buildconf.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fleet/fleet.h"
#include "util/util.h"
#include "store/store.h"
#include "store_int.h"

static int lite_open(const char *, int, struct sql **, char *, size_t);

extern const char *const flaky_schema_migrations[];
extern const size_t flaky_schema_count;

int
flaky_store_schema_version(void)
{
	return (int)flaky_schema_count;
}

/* The schema version; refuses a database from a newer flaky. */
static int
read_version(struct flaky_store *s, int *ret, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 version;

	if (sql_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQL_OK)
		return store_sql_error(s, err, errlen,
		    "reading the schema version");
	if (sql_step(st) != SQL_ROW) {
		sql_finalize(st);
		return store_sql_error(s, err, errlen,
		    "reading the schema version");
	}
	version = sql_column_int(st, 0);
	sql_finalize(st);
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

/* The first read: a file that is no SQLite database (report.html given
 * as --db), or the database of another program (tables but no schema
 * version of ours), is named as not a flaky database in one line, and
 * nothing is written to it. An empty database is ours to fill. */
static int
check_ours(struct flaky_store *s, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc, tables = 0, version;

	rc = sql_prepare_v2(s->db, "SELECT count(*) FROM sqlite_schema",
	    -1, &st, NULL);
	if (rc == SQL_OK && (rc = sql_step(st)) == SQL_ROW) {
		tables = sql_column_int(st, 0);
		rc = SQL_OK;
	}
	sql_finalize(st);
	if ((rc & 0xff) == SQL_NOTADB ||
	    (sql_extended_errcode(s->db) & 0xff) == SQL_NOTADB)
		return flaky_error(err, errlen, EINVAL, "%s: not a flaky "
		    "database", s->path);
	/* WAL without its side files, in a directory this user may not
	 * write: removed, or left so by an older flaky (writers now keep
	 * them, below) */
	if (rc != SQL_OK && sql_extended_errcode(s->db) ==
	    SQLITE_READONLY_DIRECTORY)
		return flaky_error(err, errlen, EACCES, "%s: cannot be read "
		    "by this user until a writer opens it: its -wal and -shm "
		    "files are missing and its directory is not writable here "
		    "(start flakyd, or run one flakyctl command that writes "
		    "it as its owner)", s->path);
	if (rc != SQL_OK)
		return store_sql_error(s, err, errlen, "reading the schema");
	if ((rc = read_version(s, &version, err, errlen)) < 0)
		return rc;
	if (version == 0 && tables > 0)
		return flaky_error(err, errlen, EINVAL, "%s: not a flaky "
		    "database (an SQLite database of another program)",
		    s->path);
	return 0;
}

/* Move the schema cookie on by one, as SQLite asks after a change made
 * through writable_schema. */
static int
bump_schema_version(struct flaky_store *s, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	long long	 v;
	char		 sql[64];

	if (sql_prepare_v2(s->db, "PRAGMA schema_version", -1, &st,
	    NULL) != SQL_OK || sql_step(st) != SQL_ROW) {
		sql_finalize(st);
		return store_sql_error(s, err, errlen,
		    "reading schema_version");
	}
	v = sql_column_int64(st, 0);
	sql_finalize(st);
	snprintf(sql, sizeof sql, "PRAGMA schema_version = %lld", v + 1);
	return store_exec(s, sql, err, errlen);
}

/* The migrations ran with foreign keys off: refuse to commit one that
 * left a reference dangling. */
static int
foreign_key_check(struct flaky_store *s, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc;

	if (sql_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st,
	    NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "checking foreign keys");
	rc = sql_step(st);
	sql_finalize(st);
	if (rc == SQL_ROW)
		return flaky_error(err, errlen, EPROTO, "%s: migrating left "
		    "a foreign key dangling; nothing changed", s->path);
	if (rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "checking foreign keys");
	return 0;
}

/* Bring the schema forward, all in one transaction; refuse a newer one. */
static int
migrate(struct flaky_store *s, char *err, size_t errlen)
{
	struct sql_stmt	*st;
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
	if ((r = store_exec(s, "PRAGMA foreign_keys = OFF", err, errlen)) < 0)
		return r;
	if ((r = store_exec(s, "BEGIN IMMEDIATE", err, errlen)) < 0)
		goto out;
	/* Another process may have migrated while we waited. */
	if (sql_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQL_OK && sql_step(st) == SQL_ROW)
		version = sql_column_int(st, 0);
	sql_finalize(st);
	/* A migration may edit sqlite_schema in place (0004): connections,
	 * this one too, reread the schema only when its cookie moves. It
	 * moves after each one, so the next (0005 rebuilds runs) sees the
	 * edited tables, not the ones this connection parsed before. */
	for (size_t i = (size_t)version; i < flaky_schema_count; i++) {
		if ((r = store_exec(s, flaky_schema_migrations[i], err,
		    errlen)) < 0 || (r = bump_schema_version(s, err,
		    errlen)) < 0)
			goto fail;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d",
	    (int)flaky_schema_count);
	if ((r = store_exec(s, sql, err, errlen)) < 0)
		goto fail;
	if ((r = foreign_key_check(s, err, errlen)) < 0)
		goto fail;
	if ((r = store_exec(s, "COMMIT", err, errlen)) < 0)
		goto fail;
	r = 0;
	goto out;
fail:
	sql_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
out:
	sql_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
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
	t.name = t.path;
	if ((r = lite_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, &t.db, err, errlen)) < 0)
		goto out;
	/* 0006 moves output with sqlar_compress */
	if (store_output_register(sql_sqlite(t.db)) != SQL_OK) {
		r = store_sql_error(&t, err, errlen, "registering functions");
		goto out;
	}
	if ((r = store_exec(&t, "PRAGMA journal_mode = OFF", err,
	    errlen)) < 0 ||
	    (r = store_exec(&t, "PRAGMA synchronous = OFF", err, errlen)) < 0 ||
	    (r = migrate(&t, err, errlen)) < 0 ||
	    (r = store_exec(&t, "PRAGMA journal_mode = WAL", err, errlen)) < 0)
		goto out;
	r = 0;
out:
	sql_close(t.db);
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
 * passed since this wait began; then the statement fails with SQL_BUSY
 * (-EBUSY from the store). SQLite's own handler sleeps a fixed ladder and
 * is not bounded by the clock. */
/* The stores of this process that yield, and whether one that does not
 * has waited for the lock (flaky_store_others_wait). */
static atomic_int	 yielders;
static atomic_int	 others_waited;

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
	if (!s->yielding)
		atomic_store(&others_waited, 1);
	if (atomic_load(&yielders) > 0) {
		/* a yielding writer commits as soon as it sees us: be there
		 * when it does */
		usleep((useconds_t)(left < 1000 ? left : 1000));
		return 1;
	}
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

void
flaky_store_set_yielding(struct flaky_store *s, int on)
{
	if (!s->yielding == !on)
		return;
	s->yielding = on != 0;
	atomic_fetch_add(&yielders, on ? 1 : -1);
}

int
flaky_store_others_wait(void)
{
	return atomic_exchange(&others_waited, 0);
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

/* Open a SQLite file, wrapped; the error names path. */
static int
lite_open(const char *path, int oflags, struct sql **ret, char *err,
    size_t errlen)
{
	sqlite3	*db = NULL;
	int	 r;

	*ret = NULL;
	if (sqlite3_open_v2(path, &db, oflags, NULL) != SQLITE_OK) {
		if (db == NULL)
			return -ENOMEM;
		r = flaky_error(err, errlen, EACCES, "%s: cannot open: %s",
		    path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return r;
	}
	sqlite3_extended_result_codes(db, 1);
	if ((*ret = sql_wrap_sqlite(db)) == NULL)
		return -ENOMEM;
	return 0;
}

/* A PostgreSQL database (docs/fleet.md): connected through lib/fleet,
 * which keeps credentials out of the URI, and its schema brought forward
 * (the first command against a new database creates it). */
static int
pg_open(struct flaky_store *s, char *err, size_t errlen)
{
	struct flaky_fleet	*f;
	struct sql		*db;
	int			 r;

	if ((r = flaky_fleet_connect(s->path, &f, err, errlen)) < 0)
		return r;
	if ((r = flaky_fleet_migrate(f, NULL, err, errlen)) < 0) {
		flaky_fleet_close(f);
		return r;
	}
	if ((db = sql_wrap_pg(f)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	/* The store's reads are bounded by their window, yet planned at a
	 * cost that starts JIT compilation, which took longer (75 ms) than
	 * the query it sped up; and a window's rollups with their
	 * histograms are sorted in memory, not on disk (4 MB by default). */
	if (sql_exec(db, "SET jit = off; SET work_mem = '64MB'", NULL,
	    NULL, NULL) != SQL_OK) {
		r = flaky_error(err, errlen, EIO, "%s: setting up the "
		    "session: %s", s->name, sql_errmsg(db));
		sql_close(db);
		return r;
	}
	/* A reconnection: what was prepared belongs to the old session. */
	if (s->db != NULL) {
		for (int i = 0; i < ST_COUNT; i++) {
			sql_finalize(s->st[i]);
			s->st[i] = NULL;
		}
		store_output_finalize(&s->output);
		store_output_forget(&s->output);
		store_idcache_clear(&s->tests);
		store_idcache_clear(&s->msgs);
		sql_close(s->db);
	}
	s->db = db;
	return 0;
}

int
flaky_store_lost(const struct flaky_store *s)
{
	return sql_is_pg(s->db) && sql_pg_lost(s->db);
}

int
flaky_store_reconnect(struct flaky_store *s, char *err, size_t errlen)
{
	if (!sql_is_pg(s->db))
		return 0;
	/* its writes went with the old session: the caller must know */
	if (s->in_tx)
		return flaky_error(err, errlen, EBUSY, "%s: a transaction is "
		    "open; roll it back before connecting again", s->name);
	return pg_open(s, err, errlen);
}

int
flaky_store_ping(struct flaky_store *s, char *err, size_t errlen)
{
	if (!sql_is_pg(s->db))
		return 0;
	return store_exec(s, "SELECT 1", err, errlen);
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
	/* A libpq key=value string is no file name: refused, and never
	 * repeated (it may hold password=). */
	if (flaky_fleet_is_conninfo(path) && access(path, F_OK) == -1) {
		r = flaky_error(err, errlen, EINVAL, "the database is a libpq "
		    "key=value connection string (not repeated here); flaky "
		    "takes a postgresql:// URI without a password "
		    "(docs/fleet.md) or a file");
		goto fail;
	}
	if (flaky_fleet_is_uri(path)) {
		char	 shown[256];

		s->name = strdup(flaky_store_shown(path, shown,
		    sizeof shown));
	} else
		s->name = strdup(path);
	if (s->name == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = flaky_redactor_new(&s->redact)) < 0)
		goto fail;
	s->busy_ms = FLAKY_BUSY_TIMEOUT_MS;
	s->rnd = ((uint64_t)flaky_mono_us() * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)getpid() << 32) | 1;
	if (flaky_fleet_is_uri(path)) {
		if ((r = pg_open(s, err, errlen)) < 0)
			goto fail;
		goto opened;
	}
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
	if ((r = lite_open(path, oflags, &s->db, err, errlen)) < 0)
		goto fail;
	sqlite3_busy_handler(sql_sqlite(s->db), busy_wait, s);
	/* The first read tells a corrupt file or a foreign one. */
	if ((r = check_ours(s, err, errlen)) < 0)
		goto fail;
	/* A newer schema is refused before anything is written (even the
	 * journal mode lives in the file header). */
	if ((r = check_version(s, err, errlen)) < 0)
		goto fail;
	if (!(flags & FLAKY_STORE_READONLY)) {
		/* SQLite opens a file we may not write read-only without a
		 * word (and WAL then stays as it is): refuse here, not at the
		 * first write. */
		if (sqlite3_db_readonly(sql_sqlite(s->db), "main") == 1) {
			r = flaky_error(err, errlen, EACCES, "%s: cannot open "
			    "for writing (read-only file or directory)", path);
			goto fail;
		}
		if ((r = store_exec(s, "PRAGMA journal_mode = WAL", err,
		    errlen)) < 0)
			goto fail;
		/* The -wal (emptied) and -shm files outlive the last writer:
		 * SQLite reads a WAL database only with both, and a reader
		 * who may read it but not write its directory (a member of
		 * flakyd's group, 0750) cannot make them. */
		sqlite3_file_control(sql_sqlite(s->db), "main",
		    SQLITE_FCNTL_PERSIST_WAL, &(int){ 1 });
		snprintf(sql, sizeof sql, "PRAGMA synchronous = %s",
		    flags & FLAKY_STORE_BULK ? "NORMAL" : "FULL");
		if ((r = store_exec(s, sql, err, errlen)) < 0)
			goto fail;
		/* Readers that hold on must not grow the WAL for ever. */
		if ((r = store_exec(s, "PRAGMA journal_size_limit = 67108864",
		    err, errlen)) < 0)
			goto fail;
	}
	if ((r = store_exec(s, "PRAGMA foreign_keys = ON", err, errlen)) < 0)
		goto fail;
	if (store_hist_register(sql_sqlite(s->db)) != SQL_OK ||
	    store_output_register(sql_sqlite(s->db)) != SQL_OK) {
		r = store_sql_error(s, err, errlen, "registering functions");
		goto fail;
	}
	if ((r = migrate(s, err, errlen)) < 0)
		goto fail;
opened:
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
	flaky_store_set_yielding(s, 0);
	for (int i = 0; i < ST_COUNT; i++)
		sql_finalize(s->st[i]);
	store_output_finalize(&s->output);
	if (s->db != NULL) {
		if (s->in_tx)
			sql_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		sql_close(s->db);
	}
	store_idcache_clear(&s->tests);
	store_idcache_clear(&s->msgs);
	flaky_redactor_free(s->redact);
	free(s->name);
	free(s->path);
	free(s);
}
