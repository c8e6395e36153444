/* The rules of a fleet's connection string (docs/fleet.md): a
 * postgresql:// URI with no password in it, shown only without its
 * userinfo and password, however they are spelt (percent-encoded keys
 * too); libpq's own words about a URI it cannot read, without the parts
 * of the URI they quote; and a libpq key=value string, which flaky does
 * not take, told apart from a file name so that it is never printed. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

#include "fleet/fleet.h"
#include "fleet_int.h"
#include "util/util.h"

const char fleet_password_hint[] = "give the password in ~/.pgpass "
    "(or the file PGPASSFILE names), a service file (PGSERVICEFILE) or "
    "PGPASSWORD, not in the URI";

/* A PostgreSQL URI rather than a SQLite path. */
int
flaky_fleet_is_uri(const char *s)
{
	return s != NULL && (strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0);
}

/* Does the URI query key k (n bytes, percent-encoded as libpq decodes
 * it) name the password? "pass%77ord" does. */
static int
key_is_password(const char *k, size_t n)
{
	static const char pw[] = "password";
	size_t	 i, o = 0;
	int	 hi, lo, c;

	for (i = 0; i < n; i++, o++) {
		c = (unsigned char)k[i];
		if (c == '%' && i + 2 < n && (hi = flaky_hexval(k[i + 1])) >= 0 &&
		    (lo = flaky_hexval(k[i + 2])) >= 0) {
			c = hi << 4 | lo;
			i += 2;
		}
		if (o >= sizeof pw - 1 || tolower(c) != pw[o])
			return 0;
	}
	return o == sizeof pw - 1;
}

/* The URI without userinfo and password parameter (nor a part of its
 * query that is no key=value), for messages. */
char *
flaky_fleet_redact_uri(const char *uri, char *buf, size_t len)
{
	const char	*p, *auth, *at, *end;
	struct flaky_buf b;
	size_t		 n;
	char		 sep;

	if (len == 0)
		return buf;
	if ((p = strstr(uri, "://")) == NULL) {
		snprintf(buf, len, "%s", "(a connection string)");
		return buf;
	}
	auth = p + 3;
	end = auth + strcspn(auth, "/?");
	if ((at = memchr(auth, '@', (size_t)(end - auth))) != NULL) {
		/* the last '@' ends the userinfo, as libpq reads it */
		while ((p = memchr(at + 1, '@', (size_t)(end - at - 1))) !=
		    NULL)
			at = p;
		at++;
	} else
		at = auth;
	/* Drop userinfo; then copy the rest without a password parameter. */
	flaky_buf_init(&b);
	flaky_buf_add(&b, uri, (size_t)(auth - uri));
	flaky_buf_add(&b, at, (size_t)(end - at));
	p = end + strcspn(end, "?");
	flaky_buf_add(&b, end, (size_t)(p - end));
	for (sep = '?'; *p != '\0'; p += n) {
		n = 1 + strcspn(p + 1, "&");
		/* a part with no '=' is no parameter: who knows what it is */
		if (key_is_password(p + 1, strcspn(p + 1, "=&")) ||
		    memchr(p + 1, '=', n - 1) == NULL)
			continue;
		flaky_buf_addc(&b, sep);
		flaky_buf_add(&b, p + 1, n - 1);
		sep = '&';
	}
	snprintf(buf, len, "%s", b.oom ? "(out of memory)" :
	    flaky_buf_cstr(&b));
	flaky_buf_free(&b);
	return buf;
}

/* Is q (n bytes) a key of the URI's query, "?q=" or "&q="? */
static int
is_query_key(const char *uri, const char *q, size_t n)
{
	const char	*p = strchr(uri, '?');

	for (; p != NULL; p = strchr(p + 1, '&'))
		if (strncmp(p + 1, q, n) == 0 && p[1 + n] == '=')
			return 1;
	return 0;
}

/* libpq's first line about uri, each quoted part that is not one of
 * its query keys made "...": libpq quotes the token it could not read,
 * which may be a password ("invalid percent-encoded token"). */
void
fleet_scrub_message(const char *uri, const char *msg, char *buf, size_t len)
{
	struct flaky_buf b;
	const char	*p = msg, *q, *e;
	size_t		 n = strcspn(msg, "\n"), k;
	int		 plain;

	flaky_buf_init(&b);
	while (p < msg + n) {
		if ((q = memchr(p, '"', (size_t)(msg + n - p))) == NULL ||
		    (e = memchr(q + 1, '"', (size_t)(msg + n - q - 1))) ==
		    NULL) {
			flaky_buf_add(&b, p, (size_t)(msg + n - p));
			break;
		}
		flaky_buf_add(&b, p, (size_t)(q - p + 1));
		k = (size_t)(e - q - 1);
		plain = k > 0 && (isalpha((unsigned char)q[1]) || q[1] == '_');
		for (size_t i = 1; plain && i <= k; i++)
			plain = isalnum((unsigned char)q[i]) || q[i] == '_';
		if (plain && is_query_key(uri, q + 1, k))
			flaky_buf_add(&b, q + 1, k);
		else
			flaky_buf_adds(&b, "...");
		flaky_buf_addc(&b, '"');
		p = e + 1;
	}
	snprintf(buf, len, "%s", b.oom ? "out of memory" :
	    flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

/* The options libpq checks only when it connects (connectOptions2 and
 * connectDBStart of PostgreSQL 15): a bad one fails every attempt the
 * same way, so it is refused before the first. */
static const struct {
	const char	*key;
	const char	*values;	/* "a|b|c", or NULL: an integer */
} checked[] = {
	{ "sslmode", "disable|allow|prefer|require|verify-ca|verify-full" },
	{ "gssencmode", "disable|prefer|require" },
	{ "channel_binding", "disable|prefer|require" },
	{ "target_session_attrs", "any|read-write|read-only|primary|standby|"
	    "prefer-standby" },
	{ "ssl_min_protocol_version", "TLSv1|TLSv1.1|TLSv1.2|TLSv1.3" },
	{ "ssl_max_protocol_version", "TLSv1|TLSv1.1|TLSv1.2|TLSv1.3" },
	{ "connect_timeout", NULL },
	{ "keepalives", NULL },
	{ "keepalives_idle", NULL },
	{ "keepalives_interval", NULL },
	{ "keepalives_count", NULL },
	{ "tcp_user_timeout", NULL },
};

/* Is v one of the '|'-separated words of set? */
static int
one_of(const char *v, const char *set)
{
	size_t	 n = strlen(v), k;

	for (const char *p = set; *p != '\0'; p += k + (p[k] == '|')) {
		k = strcspn(p, "|");
		if (k == n && strncmp(p, v, n) == 0)
			return 1;
	}
	return 0;
}

/* A decimal integer, blanks around it allowed, as libpq's parse_int_param
 * takes it; in [min, max]. */
static int
int_ok(const char *v, size_t n, long min, long max)
{
	char	 buf[32], *end;
	long	 x;

	if (n == 0 || n >= sizeof buf)
		return 0;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtol(buf, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	return errno == 0 && end != buf && *end == '\0' && x >= min &&
	    x <= max;
}

/* The ports (a comma list, one per host, or one for all): each 1 to
 * 65535. */
static int
ports_ok(const char *ports, const char *hosts)
{
	size_t	 np = 1, nh = 1, k;

	for (const char *p = ports; *p != '\0'; p += k + (p[k] == ',')) {
		k = strcspn(p, ",");
		if (k > 0 && !int_ok(p, k, 1, 65535))
			return 0;
		np += p[k] == ',';
	}
	for (const char *p = hosts; p != NULL && (p = strchr(p, ',')) != NULL;
	    p++)
		nh++;
	return np == 1 || np == nh;
}

/* An option libpq would refuse at each connect, or NULL. */
static const char *
option_refused(PQconninfoOption *opts)
{
	const char	*hosts = NULL, *ports = NULL;

	for (PQconninfoOption *o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		if (strcmp(o->keyword, "host") == 0)
			hosts = o->val;
		else if (strcmp(o->keyword, "port") == 0)
			ports = o->val;
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(checked); i++)
			if (strcmp(o->keyword, checked[i].key) == 0 &&
			    (checked[i].values != NULL ?
			    !one_of(o->val, checked[i].values) :
			    !int_ok(o->val, strlen(o->val), INT_MIN, INT_MAX)))
				return checked[i].key;
	}
	if (ports != NULL && !ports_ok(ports, hosts))
		return "port";
	return NULL;
}

/* Refuse a URI libpq cannot read or one with a password in it, and say
 * whether it sets its own connect_timeout. */
int
fleet_check_uri(const char *uri, int *has_timeout, char *err, size_t errlen)
{
	PQconninfoOption	*opts, *o;
	const char		*bad;
	char			*msg = NULL, line[256];
	int			 rc = 0;

	*has_timeout = 0;
	if ((opts = PQconninfoParse(uri, &msg)) == NULL) {
		fleet_scrub_message(uri, msg ? msg : "out of memory", line,
		    sizeof line);
		rc = flaky_error(err, errlen, EINVAL, "%s", line);
		PQfreemem(msg);
		return rc;
	}
	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		if (strcmp(o->keyword, "password") == 0)
			rc = flaky_error(err, errlen, EINVAL, "the URI "
			    "carries a password: %s", fleet_password_hint);
		else if (strcmp(o->keyword, "connect_timeout") == 0)
			*has_timeout = 1;
	}
	if (rc == 0 && (bad = option_refused(opts)) != NULL)
		rc = flaky_error(err, errlen, EINVAL, "invalid %s (libpq "
		    "would refuse every connection; see \"Connection Strings\" "
		    "in PostgreSQL's libpq documentation)", bad);
	PQconninfoFree(opts);
	return rc;
}

/* The URI rules alone, before any connection (flakyd --check-config). */
int
flaky_fleet_check_uri(const char *uri, char *err, size_t errlen)
{
	int	 has_timeout;

	if (!flaky_fleet_is_uri(uri))
		return flaky_error(err, errlen, EINVAL, "expected a URI "
		    "starting with postgresql://");
	return fleet_check_uri(uri, &has_timeout, err, errlen);
}

/* A libpq key=value connection string ("host=db dbname=x"): every word
 * before an '=' one of libpq's keywords, and no "://". */
int
flaky_fleet_is_conninfo(const char *s)
{
	PQconninfoOption	*opts;
	char			*msg = NULL;
	const char		*p = s;

	if (s == NULL || strstr(s, "://") != NULL)
		return 0;
	while (isspace((unsigned char)*p))
		p++;
	if (!isalpha((unsigned char)*p))
		return 0;
	while (isalpha((unsigned char)*p) || *p == '_')
		p++;
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '=')
		return 0;
	if ((opts = PQconninfoParse(s, &msg)) == NULL) {
		PQfreemem(msg);
		return 0;
	}
	PQconninfoFree(opts);
	return 1;
}
