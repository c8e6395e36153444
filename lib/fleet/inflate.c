/* Migration 10's part in C: on the server, outputs hold the content
 * itself (docs/fleet.md), yet flakyctl's direct writes (--db
 * postgresql://) before it stored them deflated, as on SQLite, and the
 * run page and /api/v1/run/ID could not read them. PostgreSQL has no
 * zlib, so the box that migrates inflates those rows here, in the
 * migration's transaction, before the migration's CHECK holds every
 * writer to length(data) = size. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <zlib.h>

#include "fleet/fleet.h"
#include "fleet_int.h"
#include "util/util.h"

/* Inflate one row (id) in place: read it as binary, write it back. */
static int
inflate_row(PGconn *conn, const char *id, const char *where, char *err,
    size_t errlen)
{
	const char	*vals[2] = { id, NULL };
	int		 lens[2] = { 0, 0 }, fmts[2] = { 0, 1 };
	PGresult	*res;
	unsigned char	*out = NULL;
	long long	 size;
	uLongf		 m;
	int		 r = 0;

	res = PQexecParams(conn, "SELECT size, data FROM outputs WHERE id = $1",
	    1, NULL, vals, NULL, NULL, 1);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		r = flaky_error(err, errlen, EIO, "fleet: %s: migration 10: "
		    "reading output %s: %.*s", where, id,
		    (int)strcspn(PQresultErrorMessage(res), "\n"),
		    PQresultErrorMessage(res));
		goto out;
	}
	/* binary int8: big-endian */
	size = 0;
	for (int i = 0; i < 8; i++)
		size = size << 8 | (unsigned char)PQgetvalue(res, 0, 0)[i];
	if (size <= 0 || size > INT_MAX ||
	    (out = malloc((size_t)size)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "fleet: %s: migration 10: "
		    "output %s: out of memory for %lld bytes", where, id, size);
		goto out;
	}
	m = (uLongf)size;
	if (uncompress(out, &m, (const Bytef *)PQgetvalue(res, 0, 1),
	    (uLong)PQgetlength(res, 0, 1)) != Z_OK || m != (uLongf)size) {
		r = flaky_error(err, errlen, EIO, "fleet: %s: migration 10: "
		    "output %s holds %d bytes for a size of %lld, and they are "
		    "not deflated; fix or delete that row of outputs", where,
		    id, PQgetlength(res, 0, 1), size);
		goto out;
	}
	PQclear(res);
	vals[1] = (const char *)out;
	lens[1] = (int)size;
	res = PQexecParams(conn, "UPDATE outputs SET data = $2 WHERE id = $1",
	    2, NULL, vals, lens, fmts, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		r = flaky_error(err, errlen, EIO, "fleet: %s: migration 10: "
		    "writing output %s: %.*s", where, id,
		    (int)strcspn(PQresultErrorMessage(res), "\n"),
		    PQresultErrorMessage(res));
out:
	PQclear(res);
	free(out);
	return r;
}

/* Every deflated row of outputs made whole. */
int
fleet_inflate_outputs(struct pg_conn *pg, const char *where, char *err,
    size_t errlen)
{
	PGconn		*conn = (PGconn *)pg;
	PGresult	*res;
	int		 r = 0;

	/* length() of a bytea reads its header, not the whole value */
	res = PQexec(conn, "SELECT id FROM outputs WHERE size > 0 AND "
	    "length(data) <> size ORDER BY id");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		r = flaky_error(err, errlen, EIO, "fleet: %s: migration 10: "
		    "finding deflated outputs: %.*s", where,
		    (int)strcspn(PQresultErrorMessage(res), "\n"),
		    PQresultErrorMessage(res));
		PQclear(res);
		return r;
	}
	for (int i = 0; i < PQntuples(res) && r == 0; i++)
		r = inflate_row(conn, PQgetvalue(res, i, 0), where, err,
		    errlen);
	PQclear(res);
	return r;
}
