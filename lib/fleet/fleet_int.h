/* Internal to lib/fleet: the migrations compiled in (schema/embed.sh). */
#ifndef FLAKY_FLEET_INT_H
#define FLAKY_FLEET_INT_H

#include <stddef.h>

extern const char *const flaky_pg_schema_migrations[];
extern const char *const flaky_pg_schema_names[];
extern const size_t flaky_pg_schema_count;

/* Migration 10: outputs that flaky before it stored deflated on the
 * server (direct writes) made whole, before its CHECK (inflate.c). In
 * the migration's transaction; -EIO, -ENOMEM with err. */
struct pg_conn;
int	 fleet_inflate_outputs(struct pg_conn *, const char *where, char *err,
	    size_t errlen);

#endif
