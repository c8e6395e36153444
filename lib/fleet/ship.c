/* A box's finished runs into the fleet's server (docs/fleet.md). A batch
 * is one server transaction: its results are streamed with COPY into a
 * temporary staging table while the box reads them, its runs follow, and
 * INSERT ... SELECT moves them into the real tables. A run is inserted
 * only when its (box, local_id) is new, and its results only with it, so
 * a batch shipped twice (a crash after the server's commit, before the
 * box took it off its queue) inserts nothing the second time. Names
 * (targets, tests, messages, outputs) are inserted in one order by every
 * box, so boxes shipping at once wait for each other, never deadlock. */
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
	struct flaky_buf	 results;	/* not yet sent */
	int			 copying;	/* COPY ship_results open */
	size_t			 nruns, nresults, nattempts, npolluters;
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
static int
put_text(struct flaky_buf *b, const unsigned char *s, size_t n)
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
			r = put_text(b, (const unsigned char *)v[i], len[i]);
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

	if (PQputCopyEnd(sh->conn, NULL) != 1)
		return pq_fail(sh, NULL, what, err, errlen);
	while ((res = PQgetResult(sh->conn)) != NULL) {
		if (r == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
			r = pq_fail(sh, res, what, err, errlen);
		PQclear(res);
	}
	return r;
}

/* Start COPY into a staging table. */
static int
copy_start(struct flaky_fleet_ship *sh, const char *sql, const char *what,
    char *err, size_t errlen)
{
	PGresult	*res = PQexec(sh->conn, sql);
	int		 r = 0;

	if (PQresultStatus(res) != PGRES_COPY_IN)
		r = pq_fail(sh, res, what, err, errlen);
	PQclear(res);
	return r;
}

/* Begin a batch: a transaction, the staging tables, COPY of results. */
int
flaky_fleet_ship_begin(struct flaky_fleet *f, const char *box,
    struct flaky_fleet_ship **ret, char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh;
	int	 r;

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
	flaky_buf_init(&sh->results);
	/* The box forgets a batch once the server said it committed: that
	 * must hold through a crash of the server, whatever its default
	 * (synchronous_commit = off acknowledges before the WAL is written;
	 * the test of pg_ctl stop -m immediate mid-batch lost batches so). */
	if ((r = exec_ok(sh, "BEGIN; SET LOCAL synchronous_commit TO on",
	    "starting a batch", err, errlen)) < 0 ||
	    (r = exec_ok(sh, fleet_ship_sql_staging, "making the staging "
	    "tables", err, errlen)) < 0 ||
	    (r = copy_start(sh, "COPY ship_results FROM STDIN",
	    "copying results", err, errlen)) < 0) {
		flaky_fleet_ship_abort(sh);
		return r;
	}
	sh->copying = 1;
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

	if (put_row(&sh->runs, v, len, FLEET_SHIP_RUN_NCOLS, bytes) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	sh->nruns++;
	return 0;
}

/* A result of the batch, in the columns of flaky_ship_result_cols. */
int
flaky_fleet_ship_result(void *arg, const char *const *v, const size_t *len,
    char *err, size_t errlen)
{
	struct flaky_fleet_ship *sh = arg;
	if (put_row(&sh->results, v, len, FLEET_SHIP_RESULT_NCOLS, NULL) < 0)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	sh->nresults++;
	if (sh->results.len >= SHIP_CHUNK)
		return copy_send(sh, &sh->results, err, errlen);
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

/* The rows in, then moved into the real tables and committed. Sets
 * *ret_new to the runs the server did not have. */
int
flaky_fleet_ship_commit(struct flaky_fleet_ship *sh, long long *ret_new,
    char *err, size_t errlen)
{
	int		 r;

	*ret_new = 0;
	sh->copying = 0;
	if ((r = copy_send(sh, &sh->results, err, errlen)) < 0 ||
	    (r = copy_end(sh, "copying results", err, errlen)) < 0 ||
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
	    "tests", err, errlen)) < 0)
		return r;
	if ((r = exec_box(sh, fleet_ship_sql_runs, "adding runs", ret_new,
	    err, errlen)) < 0 ||
	    (r = exec_ok(sh, fleet_ship_sql_results, "adding results", err,
	    errlen)) < 0 ||
	    (sh->nattempts > 0 && (r = exec_box(sh, fleet_ship_sql_attempts,
	    "adding attempts", NULL, err, errlen)) < 0) ||
	    (sh->npolluters > 0 && (r = exec_box(sh, fleet_ship_sql_polluters,
	    "adding polluters", NULL, err, errlen)) < 0) ||
	    (r = exec_ok(sh, "COMMIT", "committing the batch", err,
	    errlen)) < 0)
		return r;
	return 0;
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
	free(sh->results.data);
	free(sh->box);
	free(sh);
}
