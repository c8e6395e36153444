/* A box's claim on its name in the fleet (table boxes, schema/pg/
 * 0002-ship15.sql): the first box to connect under a name owns it; any
 * other is refused with a message that names the box. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "fleet/fleet.h"
#include "util/util.h"

/* Claim box for claim, or find it already claimed by the same. */
int
flaky_fleet_claim(struct flaky_fleet *f, const char *box, const char *claim,
    char *err, size_t errlen)
{
	PGconn		*conn = (PGconn *)flaky_fleet_pq(f);
	PGresult	*res;
	char		 now[32];
	const char	*v[3] = { box, claim, now };
	int		 r = 0;

	snprintf(now, sizeof now, "%lld", (long long)flaky_now_ms());
	res = PQexecParams(conn, "INSERT INTO boxes (name, claim, first_ms, "
	    "last_ms) VALUES ($1, $2, $3, $3) ON CONFLICT (name) DO UPDATE "
	    "SET last_ms = excluded.last_ms WHERE boxes.claim = excluded.claim "
	    "RETURNING name", 3, NULL, v, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = flaky_error(err, errlen, PQstatus(conn) == CONNECTION_OK ?
		    EIO : ECONNRESET, "fleet: claiming box %s: %.*s", box,
		    (int)strcspn(PQresultErrorMessage(res), "\n"),
		    PQresultErrorMessage(res));
	else if (PQntuples(res) == 0)
		r = flaky_error(err, errlen, EEXIST, "fleet: box %s is claimed "
		    "by another box (another machine or local database); give "
		    "this one another name in fleet: box:, or if box %s is "
		    "gone for good, release its name on the server (DELETE "
		    "FROM boxes WHERE name = '%s')", box, box, box);
	PQclear(res);
	return r;
}
