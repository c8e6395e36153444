/* The dashboard of the config's http: (lib/http): started with the
 * daemon, on its loop; the pages render on the server's own threads, so
 * no request delays the schedule. Each request gets a copy of the
 * targets as the scheduler knows them (next fire times included). */
#include "buildconf.h"

#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "flakyd.h"
#include "http/http.h"
#include "log.h"
#include "store/store.h"
#include "web/web.h"

/* The targets, now, for one request (on the loop thread). */
static struct flaky_web_target *
http_targets(void *arg, size_t *ret_n)
{
	struct flakyd	*d = arg;
	struct flaky_web_target *t, *ret;

	*ret_n = 0;
	if (d->ntargets == 0 || (t = calloc(d->ntargets, sizeof *t)) == NULL)
		return NULL;
	for (size_t i = 0; i < d->ntargets; i++) {
		const struct tstate *ts = d->targets[i];

		t[i].name = ts->name;
		t[i].schedule = ts->def != NULL ? ts->def->schedule : NULL;
		t[i].next_fire_ms = ts->fire_ms == FLAKY_NO_FIRE ? 0 :
		    ts->fire_ms;
	}
	if ((ret = flaky_http_targets_pack(t, d->ntargets)) != NULL)
		*ret_n = d->ntargets;
	free(t);
	return ret;
}

/* The database the dashboard shows, as log lines name it. */
static char	http_db_shown[256];
/* The uploads' signatures, the config's at start: the upload worker
 * reads them on its thread, so a reload keeps these (docs/daemon.md). */
static struct flaky_classifier *http_cls;

/* The dashboard's database went or came back (a PostgreSQL server
 * restarted or is gone): logged once per change, not per page. */
static void
http_db_state(void *arg, int up, const char *why)
{
	(void)arg;
	if (up)
		log_info("http: %s: reachable again; serving pages",
		    http_db_shown);
	else
		log_warnx("http: %s; pages and /healthz answer 503 until it "
		    "is back, retrying with backoff", why);
}

/* Listen when the config has http:; a failure stops the start (a
 * server that cannot be reached does not: its pages wait for it). */
int
http_start(struct flakyd *d, const struct flaky_config *cfg, char *err,
    size_t errlen)
{
	struct flaky_http_conf conf;

	if (cfg->http_listen == NULL)
		return 0;
	memset(&conf, 0, sizeof conf);
	conf.listen = cfg->http_listen;
	conf.token_file = cfg->http_token_file;
	conf.db_path = cfg->http_database != NULL ? cfg->http_database :
	    d->db_path;
	/* The schedule's targets are this database's only; another one's
	 * (the fleet's server) come from it. */
	if (cfg->http_database == NULL) {
		conf.targets = http_targets;
		conf.targets_arg = d;
	}
	conf.db_state = http_db_state;
	conf.uploads = cfg->http_uploads;
	conf.tls_cert = cfg->http_tls_cert;
	conf.tls_key = cfg->http_tls_key;
	conf.behind_proxy = cfg->http_behind_proxy;
	if (cfg->http_uploads.on && flaky_classifier_from_config(cfg,
	    &http_cls, err, errlen) < 0)
		return -1;
	conf.cls = http_cls;
	flaky_store_shown(conf.db_path, http_db_shown, sizeof http_db_shown);
	if (flaky_http_start(d->base, &conf, &d->http, err, errlen) < 0)
		return -1;
	log_info("http: dashboard at %s%s%s%s%s", flaky_http_url(d->http),
	    cfg->http_database != NULL ? " of " : "",
	    cfg->http_database != NULL ? http_db_shown : "",
	    cfg->http_token_file != NULL ? " (bearer token required)" : "",
	    cfg->http_uploads.on ? "; uploads at /api/v1/uploads" : "");
	return 0;
}

/* http: as reloaded: a change takes a restart, as socket: does. */
void
http_reload_check(struct flakyd *d, const struct flaky_config *old,
    const struct flaky_config *cfg)
{
	const char *a[3] = { old->http_listen, old->http_token_file,
	    old->http_database };
	const char *b[3] = { cfg->http_listen, cfg->http_token_file,
	    cfg->http_database };

	char	 err[1024];

	for (int i = 0; i < 3; i++)
		if ((a[i] == NULL) != (b[i] == NULL) ||
		    (a[i] != NULL && strcmp(a[i], b[i]) != 0)) {
			log_warnx("reload: http: changed; that takes a "
			    "restart (still as it was)");
			return;
		}
	if (memcmp(&old->http_uploads, &cfg->http_uploads,
	    sizeof cfg->http_uploads) != 0)
		log_warnx("reload: http: uploads changed; that takes a restart "
		    "(still as it was)");
	/* the certificate and key, renewed: read again for new
	 * connections */
	if (d != NULL && d->http != NULL && cfg->http_tls_cert != NULL &&
	    flaky_http_tls_reload(d->http, cfg->http_tls_cert,
	    cfg->http_tls_key, err, sizeof err) < 0)
		log_warnx("reload: http: %s (the old certificate stays)", err);
}

/* Stop serving (at stop: the runs may take a while to end). */
void
http_close(struct flakyd *d)
{
	flaky_http_free(d->http);
	d->http = NULL;
	flaky_classifier_free(http_cls);
	http_cls = NULL;
}
