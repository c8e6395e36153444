/* Internal to lib/fleet: the migrations compiled in (schema/embed.sh), and
 * the URI rules the connection applies (uri.c). */
#ifndef FLAKY_FLEET_INT_H
#define FLAKY_FLEET_INT_H

#include <stddef.h>

extern const char *const flaky_pg_schema_migrations[];
extern const char *const flaky_pg_schema_names[];
extern const size_t flaky_pg_schema_count;

/* Where the password goes, for messages. */
extern const char fleet_password_hint[];
/* Refuse a URI libpq cannot read, one with an option libpq refuses at
 * connect, or one carrying a password (-EINVAL; err does not repeat
 * them); *has_timeout: it sets its own connect_timeout. */
int	 fleet_check_uri(const char *uri, int *has_timeout, char *err,
	    size_t errlen);
/* libpq's first line about uri into buf, each quoted part that is not a
 * key of the URI's query replaced by "...". */
void	 fleet_scrub_message(const char *uri, const char *msg, char *buf,
	    size_t len);

/* Migration 10: outputs that flaky before it stored deflated on the
 * server (direct writes) made whole, before its CHECK (inflate.c). In
 * the migration's transaction; -EIO, -ENOMEM with err. */
struct pg_conn;
int	 fleet_inflate_outputs(struct pg_conn *, const char *where, char *err,
	    size_t errlen);

#endif
