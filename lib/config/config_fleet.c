/* fleet: in the schedule file: where flakyd ships its finished runs (a
 * PostgreSQL URI) and the name of this box there. The URI must not carry
 * a password: credentials come from libpq's own files and environment
 * (PGPASSFILE, the service file, PGPASSWORD), never from a file that is
 * copied between boxes and shown in logs. No message here repeats the
 * URI, since a refused one may hold exactly that secret. */
#include "buildconf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "config/config.h"
#include "config_int.h"

/* The URI's scheme, or NULL when it has none we take. */
static const char *
uri_rest(const char *url)
{
	static const char *const schemes[] = { "postgresql://", "postgres://" };

	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
		if (strncasecmp(url, schemes[i], strlen(schemes[i])) == 0)
			return url + strlen(schemes[i]);
	return NULL;
}

int
cfg_is_uri(const char *s)
{
	return uri_rest(s) != NULL;
}

/* Whether the authority part (before the path) has user:password@. */
static int
authority_has_password(const char *rest)
{
	size_t	 n = strcspn(rest, "/?");
	const char *at, *colon;

	for (at = NULL, colon = rest; colon < rest + n; colon++)
		if (*colon == '@')
			at = colon;
	if (at == NULL)
		return 0;
	return memchr(rest, ':', (size_t)(at - rest)) != NULL;
}

/* Whether the query string (from its '?') has a password key, plain or
 * percent-encoded as libpq decodes it ("pass%77ord=", "PASSWORD="). */
static int
query_has_password(const char *q)
{
	static const char pw[] = "password";
	const char	*k;
	size_t		 o;
	int		 ch;

	for (; q != NULL && *q != '\0'; q = strchr(q + 1, '&')) {
		for (o = 0, k = q + 1; *k != '\0' && *k != '=' && *k != '&';
		    k++, o++) {
			ch = (unsigned char)*k;
			if (ch == '%' && isxdigit((unsigned char)k[1]) &&
			    isxdigit((unsigned char)k[2])) {
				char	 hex[3] = { k[1], k[2], '\0' };

				ch = (int)strtol(hex, NULL, 16);
				k += 2;
			}
			if (o >= sizeof pw - 1 || tolower(ch) != pw[o])
				break;
		}
		if (o == sizeof pw - 1 && *k == '=')
			return 1;
	}
	return 0;
}

/* A URI value of key (fleet: url:, http: database:): postgresql://
 * without a password. No message repeats it: a refused one may hold
 * exactly that secret. */
int
cfg_check_uri(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *url)
{
	const char	*rest;

	if ((rest = uri_rest(url)) == NULL)
		return cfg_err(c, n, "%s: expected a PostgreSQL URI "
		    "starting with postgresql://", key);
	for (const char *p = url; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return cfg_err(c, n, "%s: expected a URI without "
			    "spaces or control characters", key);
	if (authority_has_password(rest) ||
	    query_has_password(strchr(rest, '?')))
		return cfg_err(c, n, "%s: expected a URI without a "
		    "password (give it in ~/.pgpass, PGPASSFILE or a service "
		    "file, see flaky.yaml(5)); the URI is not repeated here",
		    key);
	return 0;
}

/* Does s start as a libpq key=value string ("host=db password=...")? A
 * file of such a name would be a strange one; the string may well hold
 * a password, so it is refused, not taken for a path and printed. */
static int
is_conninfo(const char *s)
{
	static const char *const keys[] = {
		"host", "hostaddr", "port", "dbname", "user", "password",
		"passfile", "service", "sslmode", "connect_timeout",
		"application_name", "options",
	};
	size_t	 n;

	while (isspace((unsigned char)*s))
		s++;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		n = strlen(keys[i]);
		if (strncmp(s, keys[i], n) != 0)
			continue;
		for (s += n; isspace((unsigned char)*s); s++)
			;
		return *s == '=';
	}
	return 0;
}

/* A database: value (the top level's, http:'s): a path, relative to the
 * file, or a postgresql:// URI without a password; a libpq key=value
 * string is refused without repeating it. */
int
cfg_get_db(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, char **ret)
{
	const char	*v;
	int		 r;

	if (n->type == YAML_SCALAR_NODE && !cfg_is_null(n)) {
		v = (const char *)n->data.scalar.value;
		if (is_conninfo(v))
			return cfg_err(c, n, "%s: expected a file or a "
			    "postgresql:// URI, got a libpq key=value string "
			    "(not repeated here; docs/fleet.md)", key);
		if (cfg_is_uri(v) && (r = cfg_check_uri(c, n, key, v)) < 0)
			return r;
	}
	return cfg_get_path(c, n, key, expect, ret);
}

/* The fleet: mapping: url (required) and box (default: the host name,
 * chosen by flakyd). */
int
cfg_parse_fleet(struct ctx *c, const yaml_node_t *n)
{
	static const char *const keys[] = { "url", "box" };
	struct flaky_config *cfg = c->cfg;
	yaml_node_t	*v[2];
	char		 gotbuf[80];
	int		 r;

	if ((r = cfg_get_keys(c, n, "fleet", keys, 2, v)) < 0)
		return r;
	if (v[0] == NULL)
		return cfg_err(c, n, "fleet: expected a url: key (a "
		    "postgresql:// URI)");
	cfg->fleet_line = (int)n->start_mark.line + 1;
	/* Not cfg_get_str: its message would quote the value. */
	if (v[0]->type != YAML_SCALAR_NODE || cfg_is_null(v[0]))
		return cfg_err(c, v[0], "fleet: url: expected a PostgreSQL "
		    "URI, got %s", GOT(v[0]));
	if ((r = cfg_check_uri(c, v[0], "fleet: url",
	    (const char *)v[0]->data.scalar.value)) < 0)
		return r;
	cfg->fleet_url_line = (int)v[0]->start_mark.line + 1;
	cfg->fleet_url_col = (int)v[0]->start_mark.column + 1;
	if ((cfg->fleet_url = strdup((const char *)v[0]->data.scalar.value))
	    == NULL)
		return cfg_nomem(c);
	if (v[1] == NULL)
		return 0;
	if ((r = cfg_get_str(c, v[1], "box", "a box name", &cfg->fleet_box))
	    < 0)
		return r;
	if (!flaky_config_box_ok(cfg->fleet_box))
		return cfg_err(c, v[1], "fleet: box: expected 1 to %d letters, "
		    "digits, '.', '_' or '-', got %s", FLAKY_CONFIG_MAX_NAME,
		    GOT(v[1]));
	/* One box per flakyd: its runs record it and the server files
	 * them under it (box: is read before fleet:). */
	if (cfg->box != NULL && strcmp(cfg->box, cfg->fleet_box) != 0)
		return cfg_err(c, v[1], "fleet: box: expected the box of box: "
		    "(%s) or none, got %s", cfg->box, GOT(v[1]));
	return 0;
}

/* Whether a box name is one a fleet takes: [A-Za-z0-9._-], 1 to 64. */
int
flaky_config_box_ok(const char *name)
{
	return name != NULL && cfg_name_ok(name, "._-");
}
