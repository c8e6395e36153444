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

/* Whether the query string (after '?') names a password parameter. */
static int
query_has_password(const char *q)
{
	while (q != NULL && *q != '\0') {
		if (strncasecmp(q, "password=", 9) == 0)
			return 1;
		if ((q = strchr(q, '&')) != NULL)
			q++;
	}
	return 0;
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

/* The url: value: a postgresql:// URI without a password. */
static int
check_url(struct ctx *c, const yaml_node_t *n, const char *url)
{
	const char	*rest;

	if ((rest = uri_rest(url)) == NULL)
		return cfg_err(c, n, "fleet: url: expected a PostgreSQL URI "
		    "starting with postgresql://");
	for (const char *p = url; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return cfg_err(c, n, "fleet: url: expected a URI "
			    "without spaces or control characters");
	if (authority_has_password(rest) ||
	    query_has_password(strchr(rest, '?')))
		return cfg_err(c, n, "fleet: url: expected a URI without a "
		    "password (give it in ~/.pgpass, PGPASSFILE or a service "
		    "file, see flaky.yaml(5)); the URI is not repeated here");
	return 0;
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
	if ((r = check_url(c, v[0], (const char *)v[0]->data.scalar.value)) < 0)
		return r;
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
