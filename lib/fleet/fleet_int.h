/* Internal to lib/fleet: the migrations compiled in (schema/embed.sh). */
#ifndef FLAKY_FLEET_INT_H
#define FLAKY_FLEET_INT_H

#include <stddef.h>

extern const char *const flaky_pg_schema_migrations[];
extern const char *const flaky_pg_schema_names[];
extern const size_t flaky_pg_schema_count;

#endif
