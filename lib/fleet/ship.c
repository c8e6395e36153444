/* A box's finished runs into the fleet's server (docs/fleet.md). The box
 * reads a batch into memory; then one server transaction COPYs its runs,
 * tests and messages into temporary staging tables, inserts the names and
 * the runs (a run only when its (box, local_id) is new, RETURNING the
 * server's ids of those), and COPYs their results straight into
 * `results`, with the server's run, test and message ids put in on the
 * box. A batch shipped twice (a crash after the server's commit, before
 * the box took it off its queue) inserts no run the second time, and so
 * no result. Names (targets, tests, messages, outputs) are inserted in one
 * order by every box, so boxes shipping at once wait for each other,
 * never deadlock. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "fleet/fleet.h"
#include "json/json.h"
#include "fleet_ship.h"
#include "util/util.h"

/* Bytes of COPY data sent at once. */
#define SHIP_CHUNK	(256 * 1024)

struct flaky_fleet_ship {
	struct flaky_fleet	*f;
	PGconn			*conn;
	char			*box;
	struct flaky_buf	 runs;		/* COPY text of the runs */
	struct flaky_buf	 tests;		/* ... the batch's tests */
	struct flaky_buf	 msgs;		/* ... and messages */
	struct flaky_buf	 attempts;	/* ... the runs' attempts */
	struct flaky_buf	 polluters;	/* ... polluters found */
	struct ship_result	*res;		/* the batch's results */
	size_t			 nres, capres;
	struct flaky_buf	 tails;		/* ... their COPY text */
	struct flaky_buf	 sigs;		/* ... their signatures */
	struct ship_run		*meta;		/* what rollups need of runs */
	size_t			 nmeta, capmeta;
	struct flaky_buf	 out;		/* COPY of results, unsent */
	int			 copying;	/* COPY results open */
	size_t			 nattempts, npolluters;
};

/* A result as the box read it: its run, test and message by local id
 * (the server's ids are known only once the runs are in), the rest as
 * COPY text: position, duration_us, outcome, signature, message. */
struct ship_result {
	int64_t		 run, test, fp, dur;
	size_t		 off, len;	/* of the text in tails */
	size_t		 sigoff, siglen;	/* of the signature in sigs */
	short		 outcome;
	unsigned char	 has_fp, has_dur, has_sig;
};

/* A run as the rollups see it (struct ship_roll), by local id. */
struct ship_run {
	int64_t		 local, day, wall, cpu;
	int		 counted;
};

/* A local id and the server's, as the text of a PGresult's row (a run's
 * with its started_ms); sorted by key for bsearch. */
struct ship_id {
	int64_t		 key, idv;
	const char	*id, *started;
	int		 idlen, startedlen;
};

/* libpq's message, first line. */
#define LINE(m)		(int)strcspn((m), "\n"), (m)

/* An error of the connection or of a result, -EIO; -ECONNRESET when the
 * connection is gone (the server stopped), so the caller reconnects. */
static int
pq_fail(struct flaky_fleet_ship *sh, PGresult *res, const char *what,
    char *err, size_t errlen)
{
	const char	*m = res != NULL ? PQresultErrorMessage(res) : "";
	int		 code = EIO;

	if (m == NULL || *m == '\0')
		m = PQerrorMessage(sh->conn);
	if (PQstatus(sh->conn) != CONNECTION_OK)
		code = ECONNRESET;
	return flaky_error(err, errlen, code, "fleet: %s: %.*s", what,
	    LINE(m != NULL && *m != '\0' ? m : "no message"));
}

/* Run sql; 0 or the server's error. */
static int
exec_ok(struct flaky_fleet_ship *sh, const char *sql, const char *what,
    char *err, size_t errlen)
{
	PGresult	*res = PQexec(sh->conn, sql);
	ExecStatusType	 st = PQresultStatus(res);
	int		 r = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		r = pq_fail(sh, res, what, err, errlen);
	PQclear(res);
	return r;
}

/* One text field of COPY: NUL dropped, invalid UTF-8 as U+FFFD (the
 * server refuses both in text, and one bad byte must not stop a box's
 * shipping for good), the delimiters escaped. */
int
fleet_ship_put_text(struct flaky_buf *b, const unsigned char *s, size_t n)
{
	size_t	 i = 0, k;
	int	 r = 0;

	while (i < n && r == 0) {
		unsigned char c = s[i];

		if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
			r = flaky_buf_addc(b, '\\');
			if (r == 0)
				r = flaky_buf_addc(b, c == '\t' ? 't' :
				    c == '\n' ? 'n' : c == '\r' ? 'r' : '\\');
			i++;
			continue;
		}
		if (c == 0) {
			i++;
			continue;
		}
		if ((k = flaky_utf8_len(s + i, n - i)) == 0) {
			r = flaky_buf_add(b, "\xef\xbf\xbd", 3);
			i++;
			continue;
		}
		r = flaky_buf_add(b, (const char *)s + i, k);
		i += k;
	}
	return r;
}

/* One bytea field of COPY: \\x and hex. */
static int
put_bytes(struct flaky_buf *b, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char	 chunk[512];
	size_t	 o = 0;
	int	 r;

	if ((r = flaky_buf_add(b, "\\\\x", 3)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		chunk[o++] = hex[s[i] >> 4];
		chunk[o++] = hex[s[i] & 15];
		if (o == sizeof chunk) {
			if ((r = flaky_buf_add(b, chunk, o)) < 0)
				return r;
			o = 0;
		}
	}
	return flaky_buf_add(b, chunk, o);
}

/* One row of COPY text; isbytes[i]: column i is bytea. */
static int
put_row(struct flaky_buf *b, const char *const *v, const size_t *len,
    size_t n, const unsigned char *isbytes)
{
	int	 r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		if (i > 0)
			r = flaky_buf_addc(b, '\t');
		if (r < 0)
			break;
		if (v[i] == NULL)
			r = flaky_buf_add(b, "\\N", 2);
		else if (isbytes != NULL && isbytes[i])
			r = put_bytes(b, (const unsigned char *)v[i], len[i]);
		else
			r = fleet_ship_put_text(b, (const unsigned char *)v[i],
			    len[i]);
	}
	if (r == 0)
		r = flaky_buf_addc(b, '\n');
	return r;
}

/* Send what is buffered for the open COPY. */
static int
copy_send(struct flaky_fleet_ship *sh, struct flaky_buf *b, char *err,
    size_t errlen)
{
	if (b->len > 0 && PQputCopyData(sh->conn, b->data, (int)b->len) != 1)
		return pq_fail(sh, NULL, "sending results", err, errlen);
	b->len = 0;
	return 0;
}

/* End the open COPY and read its result. */
static int
copy_end(struct flaky_fleet_ship *sh, const char *what, char *err,
    size_t errlen)
{
	PGresult	*res;
	int		 r = 0;

	sh->copying = 0;
	if (PQputCopyEnd(sh->conn, NULL) != 1)
		return pq_fail(sh, NULL, what, err, errlen);
	while ((res = PQgetResult(sh->conn)) != NULL) {
		if (r == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
			r = pq_fail(sh, res, what, err, errlen);
		PQclear(res);
	}
	return r;
}

/* Start COPY into a table. */
static int
copy_start(struct flaky_fleet_ship *sh, const char *sql, const char *what,
    char *err, size_t errlen)
{
	PGresult	*res = PQexec(sh->conn, sql);
	int		 r = 0;

	if (PQresultStatus(res) != PGRES_COPY_IN)
		r = pq_fail(sh, res, what, err, errlen);
	else
		sh->copying = 1;
	PQclear(res);
	return r;
}

/* Begin a batch: nothing on the server until the commit, so that its
 * transaction (and the locks of its names) lasts no longer than the
 * writes. */
int
flaky_fleet_ship_begin(struct flaky_fleet *f, const char *box,
    struct flaky_fleet_ship **ret, char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh;

	*ret = NULL;
	if ((sh = calloc(1, sizeof *sh)) == NULL ||
	    (sh->box = strdup(box)) == NULL) {
		free(sh);
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	}
	sh->f = f;
	sh->conn = (PGconn *)flaky_fleet_pq(f);
	flaky_buf_init(&sh->runs);
	flaky_buf_init(&sh->tests);
	flaky_buf_init(&sh->msgs);
	flaky_buf_init(&sh->attempts);
	flaky_buf_init(&sh->polluters);
	flaky_buf_init(&sh->tails);
	flaky_buf_init(&sh->sigs);
	flaky_buf_init(&sh->out);
	*ret = sh;
	return 0;
}

/* A run of the batch, in the columns of flaky_ship_run_cols. */
int
flaky_fleet_ship_run(void *arg, const char *const *v, const size_t *len,
    char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh = arg;
	static const unsigned char bytes[FLEET_SHIP_RUN_NCOLS] = {
		[FLEET_RUN_STDOUT_DATA] = 1, [FLEET_RUN_STDERR_DATA] = 1,
	};
	struct ship_run	*m;
	const char	*end;

	if (put_row(&sh->runs, v, len, FLEET_SHIP_RUN_NCOLS, bytes) < 0 ||
	    flaky_array_grow(&sh->meta, &sh->capmeta, sh->nmeta,
	    sizeof *sh->meta) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	if (v[0] == NULL || v[FLEET_RUN_STARTED_MS] == NULL ||
	    v[FLEET_RUN_KIND] == NULL)
		return flaky_error(err, errlen, EINVAL, "fleet: a run "
		    "without its id, start or kind");
	m = &sh->meta[sh->nmeta++];
	m->local = flaky_scan_int(v[0], &end);
	m->day = flaky_scan_int(v[FLEET_RUN_STARTED_MS], &end) / 86400000;
	m->counted = strcmp(v[FLEET_RUN_KIND], "alone") != 0 &&
	    v[FLEET_RUN_INCOMPLETE] == NULL;
	m->wall = m->cpu = 0;
	if (v[FLEET_RUN_DURATION_US] != NULL)
		m->wall = flaky_scan_int(v[FLEET_RUN_DURATION_US], &end);
	if (v[FLEET_RUN_USER_US] != NULL)
		m->cpu = flaky_scan_int(v[FLEET_RUN_USER_US], &end);
	if (v[FLEET_RUN_SYS_US] != NULL)
		m->cpu += flaky_scan_int(v[FLEET_RUN_SYS_US], &end);
	return 0;
}

/* A result of the batch, in the columns of flaky_ship_result_cols. */
int
flaky_fleet_ship_result(void *arg, const char *const *v, const size_t *len,
    char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh = arg;
	struct ship_result *x;
	const char	*tv[5] = { v[1], v[4], v[3], v[5], v[6] };
	size_t		 tl[5] = { len[1], len[4], len[3], len[5], len[6] };
	const char	*end;

	if (flaky_array_grow(&sh->res, &sh->capres, sh->nres,
	    sizeof *sh->res) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	x = &sh->res[sh->nres];
	if (v[0] == NULL || v[2] == NULL)
		return flaky_error(err, errlen, EINVAL, "fleet: a result "
		    "without its run or test");
	x->run = flaky_scan_int(v[0], &end);
	x->test = flaky_scan_int(v[2], &end);
	x->outcome = v[3] != NULL ? (short)flaky_scan_int(v[3], &end) : -1;
	if ((x->has_dur = v[4] != NULL))
		x->dur = flaky_scan_int(v[4], &end);
	if ((x->has_fp = v[7] != NULL))
		x->fp = flaky_scan_int(v[7], &end);
	/* the rollups group failures by signature */
	if ((x->has_sig = v[5] != NULL && (x->outcome == 1 ||
	    x->outcome == 2))) {
		x->sigoff = sh->sigs.len;
		x->siglen = len[5];
		if (flaky_buf_add(&sh->sigs, v[5], len[5]) < 0)
			return flaky_error(err, errlen, ENOMEM,
			    "fleet: out of memory");
	}
	x->off = sh->tails.len;
	if (put_row(&sh->tails, tv, tl, 5, NULL) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	x->len = sh->tails.len - x->off;
	sh->nres++;
	return 0;
}

/* A test the batch's results name (or a message, local id NULL). */
int
flaky_fleet_ship_test(void *arg, const char *const *v, const size_t *len,
    char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh = arg;
	int	 r;

	if (v[0] == NULL)
		r = put_row(&sh->msgs, v + 1, len + 1, 2, NULL);
	else
		r = put_row(&sh->tests, v, len, FLEET_SHIP_TEST_NCOLS, NULL);
	if (r < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	return 0;
}

/* An earlier attempt of a result, in the columns of
 * flaky_ship_attempt_cols. */
int
flaky_fleet_ship_attempt(void *arg, const char *const *v, const size_t *len,
    char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh = arg;
	if (put_row(&sh->attempts, v, len, FLEET_SHIP_ATTEMPT_NCOLS, NULL) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	sh->nattempts++;
	return 0;
}

/* A polluter found on the box, in the columns of
 * flaky_ship_polluter_cols. */
int
flaky_fleet_ship_polluter(void *arg, const char *const *v, const size_t *len,
    char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh = arg;
	if (put_row(&sh->polluters, v, len, FLEET_SHIP_POLLUTER_NCOLS,
	    NULL) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	sh->npolluters++;
	return 0;
}

/* COPY a buffer into a staging table; an empty one costs no round trip
 * (most runs have no attempts). */
static int
copy_buf(struct flaky_fleet_ship *sh, const char *sql, struct flaky_buf *b,
    const char *what, char *err, size_t errlen)
{
	int	 r;

	if (b->len == 0)
		return 0;
	if ((r = copy_start(sh, sql, what, err, errlen)) < 0 ||
	    (r = copy_send(sh, b, err, errlen)) < 0 ||
	    (r = copy_end(sh, what, err, errlen)) < 0)
		return r;
	return 0;
}

/* Run sql with the box as $1; *ret_rows (may be NULL): rows it changed. */
static int
exec_box(struct flaky_fleet_ship *sh, const char *sql, const char *what,
    long long *ret_rows, char *err, size_t errlen)
{
	PGresult	*res;
	int		 r = 0;

	res = PQexecParams(sh->conn, sql, 1, NULL,
	    (const char *const []){ sh->box }, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		r = pq_fail(sh, res, what, err, errlen);
	else if (ret_rows != NULL)
		*ret_rows = atoll(PQcmdTuples(res));
	PQclear(res);
	return r;
}

static int
id_cmp(const void *a, const void *b)
{
	int64_t	 x = ((const struct ship_id *)a)->key;
	int64_t	 y = ((const struct ship_id *)b)->key;

	return (x > y) - (x < y);
}

static const struct ship_id *
id_find(const struct ship_id *v, size_t n, int64_t key)
{
	struct ship_id	 k = { .key = key };

	return bsearch(&k, v, n, sizeof *v, id_cmp);
}

/* Rows of res from column c on into v: key, id (and started_ms, when
 * run); sorted. */
static void
id_load(struct ship_id *v, PGresult *res, int from, int n, int c, int run)
{
	const char	*end;

	for (int i = 0; i < n; i++) {
		struct ship_id *x = &v[i];

		x->key = flaky_scan_int(PQgetvalue(res, from + i, c), &end);
		x->id = PQgetvalue(res, from + i, c + 1);
		x->idlen = PQgetlength(res, from + i, c + 1);
		x->idv = flaky_scan_int(x->id, &end);
		if (run) {
			x->started = PQgetvalue(res, from + i, c + 2);
			x->startedlen = PQgetlength(res, from + i, c + 2);
		}
	}
	qsort(v, (size_t)n, sizeof *v, id_cmp);
}

/* Add one field of a result's row and a tab. */
static int
put_field(struct flaky_buf *b, const char *s, int n)
{
	int	 r = flaky_buf_add(b, s, (size_t)n);

	return r < 0 ? r : flaky_buf_addc(b, '\t');
}

static int
meta_cmp(const void *a, const void *b)
{
	int64_t	 x = ((const struct ship_run *)a)->local;
	int64_t	 y = ((const struct ship_run *)b)->local;

	return (x > y) - (x < y);
}

/* A result as the rollups see it. */
static void
roll_of(const struct flaky_fleet_ship *sh, const struct ship_result *x,
    const struct ship_run *meta, const struct ship_id *run,
    const struct ship_id *t, const struct ship_id *m, struct ship_roll *o)
{
	o->day = meta->day;
	o->counted = meta->counted;
	o->wall = meta->wall;
	o->cpu = meta->cpu;
	o->run = run->idv;
	o->test = t->idv;
	o->msg = m != NULL ? m->idv : 0;
	o->outcome = x->outcome;
	o->has_dur = x->has_dur;
	o->dur = x->dur;
	o->sig = !x->has_sig ? NULL : x->siglen > 0 ?
	    sh->sigs.data + x->sigoff : "";
	o->siglen = x->has_sig ? x->siglen : 0;
}

/* The results of the new runs (runs: their ids; maps: the tests' ids,
 * tag 0, and the messages', tag 1) COPYed into results, and each as the
 * rollups see it into rolls (*nroll of them). */
static int
copy_results(struct flaky_fleet_ship *sh, struct ship_id *runs, size_t nrun,
    PGresult *maps, struct ship_roll *rolls, size_t *nroll, char *err,
    size_t errlen)
{
	const struct ship_id *run = NULL, *t, *m;
	const struct ship_run *meta = NULL;
	struct ship_id	*ids;		/* tests, then messages */
	size_t		 nt = 0, nm;
	int		 n = PQntuples(maps), r = 0;

	*nroll = 0;
	if ((ids = calloc((size_t)n + 1, sizeof *ids)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	qsort(sh->meta, sh->nmeta, sizeof *sh->meta, meta_cmp);
	while ((int)nt < n && strcmp(PQgetvalue(maps, (int)nt, 0), "0") == 0)
		nt++;
	nm = (size_t)n - nt;
	id_load(ids, maps, 0, (int)nt, 1, 0);
	id_load(ids + nt, maps, (int)nt, (int)nm, 1, 0);
	if ((r = copy_start(sh, "COPY results (run_id, test_id, message_id, "
	    "started_ms, position, duration_us, outcome, signature, message) "
	    "FROM STDIN", "copying results", err, errlen)) < 0)
		goto out;
	for (size_t i = 0; i < sh->nres && r == 0; i++) {
		const struct ship_result *x = &sh->res[i];

		if (run == NULL || run->key != x->run) {
			struct ship_run k = { .local = x->run };

			run = id_find(runs, nrun, x->run);
			meta = bsearch(&k, sh->meta, sh->nmeta,
			    sizeof *sh->meta, meta_cmp);
		}
		if (run == NULL)
			continue;	/* the server had the run: sent twice */
		if (meta == NULL) {
			r = flaky_error(err, errlen, EPROTO, "fleet: a result "
			    "of run %lld, not in its batch", (long long)x->run);
			break;
		}
		if ((t = id_find(ids, nt, x->test)) == NULL) {
			r = flaky_error(err, errlen, EPROTO, "fleet: a result "
			    "of run %lld names test %lld, not in its batch",
			    (long long)x->run, (long long)x->test);
			break;
		}
		m = x->has_fp ? id_find(ids + nt, nm, x->fp) : NULL;
		roll_of(sh, x, meta, run, t, m, &rolls[(*nroll)++]);
		if ((r = put_field(&sh->out, run->id, run->idlen)) < 0 ||
		    (r = put_field(&sh->out, t->id, t->idlen)) < 0 ||
		    (r = m != NULL ? put_field(&sh->out, m->id, m->idlen) :
		    put_field(&sh->out, "\\N", 2)) < 0 ||
		    (r = put_field(&sh->out, run->started,
		    run->startedlen)) < 0 ||
		    (r = flaky_buf_add(&sh->out, sh->tails.data + x->off,
		    x->len)) < 0) {
			r = flaky_error(err, errlen, ENOMEM,
			    "fleet: out of memory");
			break;
		}
		if (sh->out.len >= SHIP_CHUNK)
			r = copy_send(sh, &sh->out, err, errlen);
	}
	if (r == 0 && (r = copy_send(sh, &sh->out, err, errlen)) == 0)
		r = copy_end(sh, "copying results", err, errlen);
out:
	free(ids);
	return r;
}

/* The batch's new runs: their local ids, the server's and started_ms
 * into *ret (sorted); *ret_res holds the text they point to. */
static int
add_runs(struct flaky_fleet_ship *sh, PGresult **ret_res,
    struct ship_id **ret, size_t *ret_n, char *err, size_t errlen)
{
	PGresult	*res;
	int		 n;

	*ret = NULL;
	*ret_n = 0;
	res = PQexecParams(sh->conn, fleet_ship_sql_runs, 1, NULL,
	    (const char *const []){ sh->box }, NULL, NULL, 0);
	*ret_res = res;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		return pq_fail(sh, res, "adding runs", err, errlen);
	if ((n = PQntuples(res)) == 0)
		return 0;
	if ((*ret = calloc((size_t)n, sizeof **ret)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	id_load(*ret, res, 0, n, 0, 1);
	*ret_n = (size_t)n;
	return 0;
}

/* The sums of the batch's results into the rollups. */
static int
add_sums(struct flaky_fleet_ship *sh, struct ship_roll *rolls, size_t n,
    char *err, size_t errlen)
{
	struct flaky_buf rb, fb;
	int		 r;

	flaky_buf_init(&rb);
	flaky_buf_init(&fb);
	if (fleet_ship_sums(rolls, n, &rb, &fb) < 0)
		r = flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	else if ((r = copy_buf(sh, "COPY ship_rollups FROM STDIN", &rb,
	    "copying rollups", err, errlen)) == 0 &&
	    (r = copy_buf(sh, "COPY ship_failures FROM STDIN", &fb,
	    "copying failure rollups", err, errlen)) == 0)
		r = exec_box(sh, fleet_ship_sql_sums, "adding rollups", NULL,
		    err, errlen);
	flaky_buf_free(&rb);
	flaky_buf_free(&fb);
	return r;
}

/* The test and message ids of the batch: tag 0 tests, 1 messages; tests
 * first. */
static const char sql_maps[] =
    "SELECT 0, local_test, id FROM ship_testmap UNION ALL "
    "SELECT 1, s.fingerprint, m.id FROM ship_messages s "
    "JOIN messages m ON m.fingerprint = s.fingerprint ORDER BY 1";

/* The batch's names and runs in, their results after them, committed.
 * Sets *ret_new to the runs the server did not have. */
int
flaky_fleet_ship_commit(struct flaky_fleet_ship *sh, long long *ret_new,
    char *err, size_t errlen)
{
	PGresult	*runres = NULL, *maps = NULL;
	struct ship_id	*runs = NULL;
	struct ship_roll *rolls = NULL;
	size_t		 nrun = 0, nroll = 0;
	int		 r;

	*ret_new = 0;
	if ((r = exec_ok(sh, fleet_ship_sql_begin, "starting a batch", err,
	    errlen)) < 0 ||
	    (r = exec_ok(sh, fleet_ship_sql_staging, "making the staging "
	    "tables", err, errlen)) < 0 ||
	    (r = copy_buf(sh, "COPY ship_runs FROM STDIN", &sh->runs,
	    "copying runs", err, errlen)) < 0 ||
	    (r = copy_buf(sh, "COPY ship_tests FROM STDIN", &sh->tests,
	    "copying tests", err, errlen)) < 0 ||
	    (r = copy_buf(sh, "COPY ship_messages FROM STDIN", &sh->msgs,
	    "copying messages", err, errlen)) < 0 ||
	    (r = copy_buf(sh, "COPY ship_attempts FROM STDIN", &sh->attempts,
	    "copying attempts", err, errlen)) < 0 ||
	    (r = copy_buf(sh, "COPY ship_polluters FROM STDIN",
	    &sh->polluters, "copying polluters", err, errlen)) < 0 ||
	    (r = exec_ok(sh, fleet_ship_sql_names, "adding targets and "
	    "tests", err, errlen)) < 0 ||
	    (r = add_runs(sh, &runres, &runs, &nrun, err, errlen)) < 0)
		goto out;
	if (nrun > 0 && sh->nres > 0) {
		maps = PQexec(sh->conn, sql_maps);
		if (PQresultStatus(maps) != PGRES_TUPLES_OK)
			r = pq_fail(sh, maps, "reading the batch's test ids",
			    err, errlen);
		else if ((rolls = calloc(sh->nres, sizeof *rolls)) == NULL)
			r = flaky_error(err, errlen, ENOMEM,
			    "fleet: out of memory");
		else if ((r = copy_results(sh, runs, nrun, maps, rolls,
		    &nroll, err, errlen)) == 0 && nroll > 0)
			r = add_sums(sh, rolls, nroll, err, errlen);
		if (r < 0)
			goto out;
	}
	if ((sh->nattempts > 0 && (r = exec_box(sh, fleet_ship_sql_attempts,
	    "adding attempts", NULL, err, errlen)) < 0) ||
	    (sh->npolluters > 0 && (r = exec_box(sh, fleet_ship_sql_polluters,
	    "adding polluters", NULL, err, errlen)) < 0) ||
	    (r = exec_ok(sh, "COMMIT", "committing the batch", err,
	    errlen)) < 0)
		goto out;
	*ret_new = (long long)nrun;
out:
	free(runs);
	free(rolls);
	PQclear(maps);
	PQclear(runres);
	return r;
}

/* Roll a batch back (or only free a committed one). */
void
flaky_fleet_ship_abort(struct flaky_fleet_ship *sh)
{
	PGresult	*res;

	if (sh == NULL)
		return;
	if (sh->copying && PQputCopyEnd(sh->conn, "aborted") == 1)
		while ((res = PQgetResult(sh->conn)) != NULL)
			PQclear(res);
	if (PQtransactionStatus(sh->conn) != PQTRANS_IDLE &&
	    PQstatus(sh->conn) == CONNECTION_OK)
		PQclear(PQexec(sh->conn, "ROLLBACK"));
	free(sh->runs.data);
	free(sh->tests.data);
	free(sh->msgs.data);
	free(sh->attempts.data);
	free(sh->polluters.data);
	free(sh->res);
	free(sh->tails.data);
	free(sh->sigs.data);
	free(sh->meta);
	free(sh->out.data);
	free(sh->box);
	free(sh);
}
