/* notify: the receivers of alerts (docs/alerts.md). Each is a webhook
 * (url: http:// or https://) or a command (an argv list that reads the
 * event as JSON on stdin), with its own timeout, backoff and events.
 * Names key the deliveries in the database, so they are unique. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "config_int.h"
#include "util/util.h"

static const char *const kind_names[FLAKY_ALERT_NKINDS] = {
	"flaky", "critical", "broken", "recovered", "release",
};

/* The name of an alert kind, as the database and the events say it. */
const char *
flaky_alert_kind_name(int k)
{
	if (k < 0 || k >= FLAKY_ALERT_NKINDS)
		return "unknown";
	return kind_names[k];
}

/* An alert kind by name, or -1. */
int
flaky_alert_kind_from_name(const char *s)
{
	for (int k = 0; k < FLAKY_ALERT_NKINDS; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return k;
	return -1;
}

static const char *const recv_keys[] = {
	"name", "url", "command", "ca_file", "link", "events", "timeout",
	"retry", "retry_max", "give_up",
};
enum {
	R_NAME, R_URL, R_COMMAND, R_CA_FILE, R_LINK, R_EVENTS, R_TIMEOUT,
	R_RETRY, R_RETRY_MAX, R_GIVE_UP, R_NKEYS
};

/* A URL we can POST to: http:// or https://, a host, nothing that a
 * request line or a log line would choke on. *host gets where the host
 * starts (after any user:password@) and *hostlen its length. */
static int
url_ok(const char *u, const char **host, size_t *hostlen)
{
	const char	*p, *end, *at;

	if (strncmp(u, "http://", 7) == 0)
		p = u + 7;
	else if (strncmp(u, "https://", 8) == 0)
		p = u + 8;
	else
		return 0;
	for (const char *q = u; *q != '\0'; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return 0;
	end = p + strcspn(p, "/?#");
	if ((at = memchr(p, '@', (size_t)(end - p))) != NULL)
		p = at + 1;
	*host = p;
	*hostlen = strcspn(p, ":/?#");
	return *hostlen > 0;
}

/* command: a program and its arguments, never a shell string (the event
 * is data on stdin, not something to interpolate). */
static int
parse_argv(struct ctx *c, struct flaky_receiver *rv, const yaml_node_t *n)
{
	yaml_node_item_t *items;
	size_t		 cnt;
	int		 r;

	if ((r = cfg_get_seq(c, n, "command", "a list: a program and its "
	    "arguments", &items, &cnt)) < 0)
		return r;
	if (cnt == 0)
		return cfg_err(c, n, "command: expected a program and its "
		    "arguments, got an empty list");
	if ((rv->argv = calloc(cnt + 1, sizeof *rv->argv)) == NULL)
		return cfg_nomem(c);
	for (size_t i = 0; i < cnt; i++) {
		if ((r = cfg_get_str(c, yaml_document_get_node(c->doc,
		    items[i]), "command", "a word", &rv->argv[i])) < 0)
			return r;
		rv->argc++;
	}
	if (rv->argv[0][0] == '\0')
		return cfg_err(c, n, "command: expected a program name, got "
		    "\"\"");
	return 0;
}

/* events: which kinds this receiver is told; default all. */
static int
parse_events(struct ctx *c, struct flaky_receiver *rv, const yaml_node_t *n)
{
	yaml_node_item_t *items;
	const char	*v;
	char		 gotbuf[80];
	size_t		 cnt;
	int		 r, k;

	if ((r = cfg_get_seq(c, n, "events", "a list of flaky, critical, "
	    "broken, recovered, release", &items, &cnt)) < 0)
		return r;
	rv->events = 0;
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *e = yaml_document_get_node(c->doc, items[i]);

		if ((r = cfg_get_text(c, e, "events", "an event name", &v)) < 0)
			return r;
		if ((k = flaky_alert_kind_from_name(v)) < 0)
			return cfg_err(c, e, "events: expected flaky, "
			    "critical, broken, recovered or release, got %s",
			    GOT(e));
		rv->events |= 1u << k;
	}
	if (rv->events == 0)
		return cfg_err(c, n, "events: expected at least one event, got "
		    "an empty list");
	return 0;
}

/* The name a receiver goes by when it has no name: the URL's host or
 * the command's program, never the URL itself (it may hold a secret). */
static int
default_name(struct ctx *c, struct flaky_receiver *rv)
{
	const char	*host, *slash;
	size_t		 len;

	if (rv->url != NULL) {
		url_ok(rv->url, &host, &len);
		rv->name = flaky_strndup(host, len);
	} else {
		slash = strrchr(rv->argv[0], '/');
		rv->name = strdup(slash != NULL ? slash + 1 : rv->argv[0]);
	}
	return rv->name == NULL ? cfg_nomem(c) : 0;
}

/* The durations of a receiver, each with its default. */
static int
parse_times(struct ctx *c, struct flaky_receiver *rv, yaml_node_t **v)
{
	int	 r;

	rv->timeout_ms = 10 * 1000;
	rv->retry_ms = 30 * 1000;
	rv->retry_max_ms = 3600 * 1000;
	rv->give_up_ms = 3LL * 86400 * 1000;
	if (v[R_TIMEOUT] != NULL && (r = cfg_get_duration(c, v[R_TIMEOUT],
	    "timeout", 1, &rv->timeout_ms)) < 0)
		return r;
	if (v[R_RETRY] != NULL && (r = cfg_get_duration(c, v[R_RETRY],
	    "retry", 1, &rv->retry_ms)) < 0)
		return r;
	if (v[R_RETRY_MAX] != NULL && (r = cfg_get_duration(c, v[R_RETRY_MAX],
	    "retry_max", 1, &rv->retry_max_ms)) < 0)
		return r;
	if (v[R_GIVE_UP] != NULL && (r = cfg_get_duration(c, v[R_GIVE_UP],
	    "give_up", 1, &rv->give_up_ms)) < 0)
		return r;
	if (rv->retry_max_ms < rv->retry_ms)
		return cfg_err(c, v[R_RETRY_MAX], "retry_max: expected at "
		    "least retry: (%lld ms), got %lld ms",
		    (long long)rv->retry_ms, (long long)rv->retry_max_ms);
	return 0;
}

/* One receiver of notify:. */
static int
parse_receiver(struct ctx *c, const yaml_node_t *n, struct flaky_receiver *rv)
{
	struct flaky_config *cfg = c->cfg;
	yaml_node_t	*v[R_NKEYS];
	const char	*host;
	char		 gotbuf[80];
	size_t		 hostlen;
	int		 r;

	rv->line = (int)n->start_mark.line + 1;
	rv->events = (1u << FLAKY_ALERT_NKINDS) - 1;
	if ((r = cfg_get_keys(c, n, "notify", recv_keys, R_NKEYS, v)) < 0)
		return r;
	if ((v[R_URL] == NULL) == (v[R_COMMAND] == NULL))
		return cfg_err(c, n, "notify: expected a receiver with either "
		    "url: or command:");
	if (v[R_URL] != NULL) {
		if ((r = cfg_get_str(c, v[R_URL], "url", "an http:// or "
		    "https:// URL", &rv->url)) < 0)
			return r;
		if (!url_ok(rv->url, &host, &hostlen))
			return cfg_err(c, v[R_URL], "url: expected an http:// "
			    "or https:// URL with a host, got %s",
			    GOT(v[R_URL]));
	} else if ((r = parse_argv(c, rv, v[R_COMMAND])) < 0)
		return r;
	if (v[R_CA_FILE] != NULL) {
		if (rv->url == NULL || strncmp(rv->url, "https:", 6) != 0)
			return cfg_err(c, v[R_CA_FILE], "ca_file: expected "
			    "only beside an https:// url:");
		if ((r = cfg_get_path(c, v[R_CA_FILE], "ca_file", "the path "
		    "of a PEM file of CA certificates", &rv->ca_file)) < 0)
			return r;
		if (!(c->flags & FLAKY_CONFIG_NO_FS_CHECKS) &&
		    access(rv->ca_file, R_OK) == -1)
			return cfg_err(c, v[R_CA_FILE], "ca_file: expected a "
			    "readable file, %s: %s", rv->ca_file,
			    strerror(errno));
	}
	if (v[R_LINK] != NULL && (r = cfg_get_str(c, v[R_LINK], "link",
	    "the base URL of the dashboard", &rv->link)) < 0)
		return r;
	if (v[R_EVENTS] != NULL && (r = parse_events(c, rv, v[R_EVENTS])) < 0)
		return r;
	if ((r = parse_times(c, rv, v)) < 0)
		return r;
	if (v[R_NAME] != NULL) {
		if ((r = cfg_get_str(c, v[R_NAME], "name", "a receiver name",
		    &rv->name)) < 0)
			return r;
		if (!cfg_name_ok(rv->name, "._-"))
			return cfg_err(c, v[R_NAME], "name: expected 1 to %d "
			    "letters, digits, '.', '_' or '-', got %s",
			    FLAKY_CONFIG_MAX_NAME, GOT(v[R_NAME]));
	} else if ((r = default_name(c, rv)) < 0)
		return r;
	for (size_t i = 0; i < cfg->nreceivers; i++)
		if (strcmp(cfg->receivers[i].name, rv->name) == 0)
			return cfg_err(c, v[R_NAME] != NULL ? v[R_NAME] : n,
			    "notify: duplicate receiver name \"%s\" (line %d "
			    "has it): give each a name:", rv->name,
			    cfg->receivers[i].line);
	return 0;
}

/* notify: a list of receivers. */
int
cfg_parse_notify(struct ctx *c, const yaml_node_t *n)
{
	struct flaky_config *cfg = c->cfg;
	yaml_node_item_t *items;
	size_t		 cnt;
	int		 r;

	if (cfg_is_null(n))
		return 0;
	if ((r = cfg_get_seq(c, n, "notify", "a list of receivers", &items,
	    &cnt)) < 0)
		return r;
	if (cnt > FLAKY_NOTIFY_MAX)
		return cfg_err(c, n, "notify: expected at most %d receivers, "
		    "got %zu", FLAKY_NOTIFY_MAX, cnt);
	if ((cfg->receivers = calloc(cnt + 1, sizeof *cfg->receivers)) == NULL)
		return cfg_nomem(c);
	for (size_t i = 0; i < cnt; i++) {
		r = parse_receiver(c, yaml_document_get_node(c->doc, items[i]),
		    &cfg->receivers[i]);
		if (r < 0) {
			/* Half filled: freed with the others. */
			cfg_receivers_free_one(&cfg->receivers[i]);
			return r;
		}
		cfg->nreceivers++;
	}
	return 0;
}

/* Free one receiver's strings. */
void
cfg_receivers_free_one(struct flaky_receiver *rv)
{
	free(rv->name);
	free(rv->url);
	for (size_t i = 0; i < rv->argc; i++)
		free(rv->argv[i]);
	free(rv->argv);
	free(rv->ca_file);
	free(rv->link);
	memset(rv, 0, sizeof *rv);
}

/* Free notify:. */
void
cfg_receivers_free(struct flaky_config *cfg)
{
	for (size_t i = 0; i < cfg->nreceivers; i++)
		cfg_receivers_free_one(&cfg->receivers[i]);
	free(cfg->receivers);
}
