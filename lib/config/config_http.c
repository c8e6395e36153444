/* http: of a schedule file, the dashboard's listen address and token file,
 * and the one reader of an ADDR:PORT that flakyd's config and flakyctl
 * serve share. An address other than loopback without a token file is
 * refused here, at load, never found out by a request. */
#include "buildconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "config/config.h"
#include "config_int.h"
#include "util/util.h"

/* Is this numeric address one of the machine's own (127/8, ::1)? */
static int
is_loopback(const char *host)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;

	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

/* ADDR:PORT, [V6]:PORT or localhost:PORT into a numeric host and port. */
int
flaky_listen_parse(const char *s, struct flaky_listen *ret, char *err,
    size_t errlen)
{
	const char	*colon, *h = s;
	size_t		 hlen;
	long long	 port;
	unsigned char	 buf[sizeof(struct in6_addr)];

	memset(ret, 0, sizeof *ret);
	if (s[0] == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			goto bad;
		h = s + 1;
		hlen = colon - h;
		colon++;
	} else {
		/* IPv6 only in brackets: ::1:80 is ambiguous */
		if ((colon = strchr(s, ':')) == NULL ||
		    strchr(colon + 1, ':') != NULL)
			goto bad;
		hlen = colon - s;
	}
	if (hlen == 0 || hlen >= sizeof ret->host ||
	    flaky_parse_int(colon + 1, 0, 65535, &port) < 0)
		goto bad;
	memcpy(ret->host, h, hlen);
	ret->host[hlen] = '\0';
	if (strcmp(ret->host, "localhost") == 0)
		snprintf(ret->host, sizeof ret->host, "127.0.0.1");
	if (inet_pton(AF_INET, ret->host, buf) != 1 &&
	    inet_pton(AF_INET6, ret->host, buf) != 1)
		goto bad;
	ret->port = (uint16_t)port;
	ret->loopback = is_loopback(ret->host);
	return 0;
bad:
	return flaky_error(err, errlen, EINVAL, "expected ADDR:PORT with a "
	    "numeric address (127.0.0.1:8470, [::1]:8470), got \"%s\"", s);
}

static const char *const http_keys[] = { "listen", "token_file",
	"database" };

/* http: {listen: ADDR:PORT, token_file: PATH, database: PATH or URI}. */
int
cfg_parse_http(struct ctx *c, const yaml_node_t *n)
{
	struct flaky_config *cfg = c->cfg;
	struct flaky_listen l;
	yaml_node_t	*v[3];
	char		 e[256];
	int		 r;

	if ((r = cfg_get_keys(c, n, "http", http_keys, 3, v)) < 0)
		return r;
	if (v[2] != NULL) {
		if ((r = cfg_get_db(c, v[2], "http: database", "the path or "
		    "postgresql:// URI of the database the dashboard shows",
		    &cfg->http_database)) < 0)
			return r;
		cfg->http_database_line = (int)v[2]->start_mark.line + 1;
		cfg->http_database_col = (int)v[2]->start_mark.column + 1;
	}
	if (v[1] != NULL && (r = cfg_get_path(c, v[1], "token_file", "the "
	    "path of a file holding the bearer token", &cfg->http_token_file))
	    < 0)
		return r;
	if (v[0] != NULL && (r = cfg_get_str(c, v[0], "listen", "ADDR:PORT",
	    &cfg->http_listen)) < 0)
		return r;
	if (cfg->http_listen == NULL &&
	    (cfg->http_listen = strdup(FLAKY_HTTP_LISTEN)) == NULL)
		return cfg_nomem(c);
	if (flaky_listen_parse(cfg->http_listen, &l, e, sizeof e) < 0)
		return cfg_err(c, v[0], "listen: %s", e);
	if (!l.loopback && cfg->http_token_file == NULL)
		return cfg_err(c, v[0], "listen: %s is not a loopback address: "
		    "expected token_file: beside it (every request must then "
		    "carry its bearer token), or 127.0.0.1", cfg->http_listen);
	return 0;
}
