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
	"database", "uploads", "max_upload", "uploads_in_flight",
	"uploads_per_token", "uploads_per_minute", "tls_cert", "tls_key",
	"behind_proxy" };

/* The defaults of uploads (off). */
void
flaky_uploads_conf_default(struct flaky_uploads_conf *u)
{
	memset(u, 0, sizeof *u);
	u->max_bytes = FLAKY_UPLOAD_MAX_BYTES;
	u->max_seconds = FLAKY_UPLOAD_MAX_SECONDS;
	u->in_flight = FLAKY_UPLOAD_IN_FLIGHT;
	u->per_token = FLAKY_UPLOAD_PER_TOKEN;
	u->per_minute = FLAKY_UPLOAD_PER_MINUTE;
}

/* uploads:, its limits, TLS and behind_proxy: (values 3 to 10). A
 * listener that is not loopback takes uploads only over TLS, or behind a
 * proxy that says so: a token must not cross a network in clear. */
static int
parse_uploads(struct ctx *c, yaml_node_t **v, const struct flaky_listen *l)
{
	struct flaky_config *cfg = c->cfg;
	struct flaky_uploads_conf *u = &cfg->http_uploads;
	char	 gotbuf[80];
	int	 mib, r;

	if ((v[3] != NULL && (r = cfg_get_bool(c, v[3], "uploads",
	    &u->on)) < 0) || (v[5] != NULL && (r = cfg_get_int(c, v[5],
	    "uploads_in_flight", 1, 1024, &u->in_flight)) < 0) ||
	    (v[6] != NULL && (r = cfg_get_int(c, v[6], "uploads_per_token", 1,
	    1024, &u->per_token)) < 0) || (v[7] != NULL && (r = cfg_get_int(c,
	    v[7], "uploads_per_minute", 1, 100000, &u->per_minute)) < 0) ||
	    (v[10] != NULL && (r = cfg_get_bool(c, v[10], "behind_proxy",
	    &cfg->http_behind_proxy)) < 0))
		return r;
	if (v[4] != NULL) {
		if (v[4]->type != YAML_SCALAR_NODE || sscanf((const char *)
		    v[4]->data.scalar.value, "%dMiB", &mib) != 1 || mib < 1 ||
		    mib > 4096)
			return cfg_err(c, v[4], "max_upload: expected a size of "
			    "1MiB to 4096MiB, got %s", GOT(v[4]));
		u->max_bytes = (int64_t)mib << 20;
	}
	if ((v[8] != NULL) != (v[9] != NULL))
		return cfg_err(c, v[8] != NULL ? v[8] : v[9], "%s: expected "
		    "tls_cert: and tls_key: together", v[8] != NULL ?
		    "tls_cert" : "tls_key");
	if (v[8] != NULL && ((r = cfg_get_path(c, v[8], "tls_cert", "the "
	    "path of a PEM certificate (chain)", &cfg->http_tls_cert)) < 0 ||
	    (r = cfg_get_path(c, v[9], "tls_key", "the path of its PEM "
	    "private key", &cfg->http_tls_key)) < 0))
		return r;
	if (u->on && !l->loopback && cfg->http_tls_cert == NULL &&
	    !cfg->http_behind_proxy)
		return cfg_err(c, v[3], "uploads: %s is not a loopback address: "
		    "expected tls_cert: and tls_key: (uploads carry tokens), or "
		    "behind_proxy: true when a proxy in front serves TLS",
		    cfg->http_listen);
	return 0;
}

/* http: {listen: ADDR:PORT, token_file: PATH, database: PATH or URI,
 * uploads: and its limits, tls_cert:, tls_key:, behind_proxy:}. */
int
cfg_parse_http(struct ctx *c, const yaml_node_t *n)
{
	struct flaky_config *cfg = c->cfg;
	struct flaky_listen l;
	yaml_node_t	*v[FLAKY_ARRAY_SIZE(http_keys)];
	char		 e[256];
	int		 r;

	if ((r = cfg_get_keys(c, n, "http", http_keys,
	    FLAKY_ARRAY_SIZE(http_keys), v)) < 0)
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
	return parse_uploads(c, v, &l);
}
