/* The shipper: with fleet: in the config, finished runs go from the local
 * database (the outbox) to the fleet's PostgreSQL server (docs/fleet.md).
 * It is a thread with its own SQLite connection and its own libpq
 * connection, so neither a slow server nor a long COPY ever holds the
 * event loop or the local writes; the loop only wakes it when a run is
 * stored and reads its state for status under a mutex. It retries what
 * fails with backoff and says so once per change of state, not once per
 * attempt. */
#include "buildconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet/fleet.h"
#include "flakyd.h"
#include "log.h"
#include "store/store.h"
#include "util/util.h"

/* A batch: at most this many runs, and results past which no further run
 * is added. */
#define SHIP_BATCH_RUNS		1000
#define SHIP_BATCH_RESULTS	50000
/* Waits between attempts after a failure, doubling. */
#define SHIP_RETRY_FIRST_MS	1000
#define SHIP_RETRY_LAST_MS	(60 * 1000)
/* With nothing to ship, look again this often (a stored run wakes it). */
#define SHIP_IDLE_MS		5000

struct shipper {
	pthread_t		 thread;
	int			 started;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	int			 stop, wake;
	char			*url;
	char			*where;		/* url without userinfo */
	char			*box;
	char			*db_path;
	/* What status shows, under mu. */
	struct ship_status	 st;
	/* The thread's own. */
	struct flaky_store	*store;
	struct flaky_fleet	*f;
	char			 claim[192];
	int64_t			 retry_ms;
};

static struct shipper	*ship;

/* The machine's identity, or "" (/etc/machine-id, one line). */
static void
machine_id(char *buf, size_t len)
{
	FILE	*fp;

	buf[0] = '\0';
	if ((fp = fopen("/etc/machine-id", "re")) == NULL)
		return;
	if (fgets(buf, (int)len, fp) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

/* Change what status shows; log when the state or its reason changed. */
static void
set_state(struct shipper *s, enum ship_state state, const char *err)
{
	int	 changed;

	pthread_mutex_lock(&s->mu);
	changed = s->st.state != state || (err != NULL &&
	    strcmp(s->st.error, err) != 0);
	s->st.state = state;
	snprintf(s->st.error, sizeof s->st.error, "%s", err ? err : "");
	if (changed) {
		s->st.since_ms = flaky_now_ms();
		s->st.attempts = 0;
	}
	if (state != SHIP_UP)
		s->st.attempts++;
	pthread_mutex_unlock(&s->mu);
	if (!changed)
		return;
	if (state == SHIP_UP)
		log_info("fleet: shipping to %s as box %s; %lld finished "
		    "run%s waiting", s->where, s->box,
		    (long long)s->st.backlog.runs,
		    s->st.backlog.runs == 1 ? "" : "s");
	else
		log_warnx("%s; retrying with backoff, runs keep accumulating "
		    "locally", err);
}

/* Wait ms, or less when woken or stopped; 1 when stopping. */
static int
wait_ms(struct shipper *s, int64_t ms)
{
	struct timespec	 ts;
	int		 stop;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&s->mu);
	while (!s->stop && !s->wake)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
			break;
	s->wake = 0;
	stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	return stop;
}

/* A failure: drop the server connection, say so, wait. 1: stopping. */
static int
failed(struct shipper *s, enum ship_state state, const char *err)
{
	flaky_fleet_close(s->f);
	s->f = NULL;
	set_state(s, state, err);
	if (wait_ms(s, s->retry_ms))
		return 1;
	s->retry_ms = s->retry_ms * 2 > SHIP_RETRY_LAST_MS ?
	    SHIP_RETRY_LAST_MS : s->retry_ms * 2;
	return 0;
}

/* Connect, bring the server's schema forward, claim the box name. */
static int
connect_server(struct shipper *s, char *err, size_t errlen)
{
	int	 r;

	if ((r = flaky_fleet_connect(s->url, &s->f, err, errlen)) < 0)
		return r;
	if ((r = flaky_fleet_migrate(s->f, NULL, err, errlen)) < 0 ||
	    (r = flaky_fleet_claim(s->f, s->box, s->claim, err, errlen)) < 0) {
		flaky_fleet_close(s->f);
		s->f = NULL;
	}
	return r;
}

/* One batch from the queue to the server, then off the queue. */
static int
ship_batch(struct shipper *s, struct flaky_ship_batch *b, char *err,
    size_t errlen)
{
	struct flaky_fleet_ship	*sh;
	struct flaky_ship_sink	 k = { flaky_fleet_ship_run,
	    flaky_fleet_ship_result, flaky_fleet_ship_test,
	    flaky_fleet_ship_attempt, flaky_fleet_ship_polluter, NULL };
	long long		 fresh = 0;
	int			 r;

	if ((r = flaky_fleet_ship_begin(s->f, s->box, &sh, err, errlen)) < 0)
		return r;
	k.arg = sh;
	r = flaky_store_ship_read(s->store, SHIP_BATCH_RUNS,
	    SHIP_BATCH_RESULTS, &k, b, err, errlen);
	if (r == 0)
		r = flaky_fleet_ship_commit(sh, &fresh, err, errlen);
	flaky_fleet_ship_abort(sh);
	if (r < 0)
		return r;
	/* On the server: if this fails the batch goes again, and adds
	 * nothing there the second time. */
	if ((r = flaky_store_ship_done(s->store, b, err, errlen)) < 0)
		return r;
	pthread_mutex_lock(&s->mu);
	s->st.last_ms = flaky_now_ms();
	s->st.last_runs = (int64_t)b->runs;
	s->st.last_new = fresh;
	pthread_mutex_unlock(&s->mu);
	log_debug("fleet: shipped %zu run%s (%lld new), %zu result%s, %zu "
	    "attempt%s, %zu polluter%s", b->runs, flaky_plural((long long)
	    b->runs), fresh, b->results, flaky_plural((long long)b->results),
	    b->attempts, flaky_plural((long long)b->attempts), b->polluters,
	    flaky_plural((long long)b->polluters));
	return 0;
}

/* The backlog into status; 0 runs: nothing to do. */
static int
backlog(struct shipper *s, char *err, size_t errlen)
{
	struct flaky_ship_backlog bl;
	int	 r;

	if ((r = flaky_store_ship_backlog(s->store, &bl, err, errlen)) < 0)
		return r;
	pthread_mutex_lock(&s->mu);
	s->st.backlog = bl;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* One round: connected, the backlog read, a batch shipped. 1: stop. */
static int
round_(struct shipper *s)
{
	struct flaky_ship_batch	 b;
	char			 err[1024];
	int			 r;

	if (backlog(s, err, sizeof err) < 0)
		return failed(s, SHIP_DOWN, err);
	if (s->f == NULL) {
		if ((r = connect_server(s, err, sizeof err)) < 0)
			return failed(s, r == -ECONNREFUSED ? SHIP_DOWN :
			    SHIP_REFUSED, err);
		set_state(s, SHIP_UP, NULL);
		s->retry_ms = SHIP_RETRY_FIRST_MS;
	}
	if (s->st.backlog.runs == 0)
		return wait_ms(s, SHIP_IDLE_MS);
	if ((r = ship_batch(s, &b, err, sizeof err)) < 0)
		return failed(s, SHIP_DOWN, err);
	set_state(s, SHIP_UP, NULL);
	s->retry_ms = SHIP_RETRY_FIRST_MS;
	return 0;
}

static void *
ship_main(void *arg)
{
	struct shipper	*s = arg;
	char		 err[1024], box_id[64], mid[64];

	while (flaky_store_open(s->db_path, 0, &s->store, err,
	    sizeof err) < 0 || flaky_store_box_id(s->store, box_id,
	    sizeof box_id, err, sizeof err) < 0) {
		flaky_store_close(s->store);
		s->store = NULL;
		if (failed(s, SHIP_DOWN, err))
			return NULL;
	}
	flaky_store_set_busy_timeout(s->store, FLAKY_BUSY_TIMEOUT_MS);
	machine_id(mid, sizeof mid);
	snprintf(s->claim, sizeof s->claim, "%s/%s", mid, box_id);
	while (round_(s) == 0)
		;
	flaky_fleet_close(s->f);
	flaky_store_close(s->store);
	return NULL;
}

/* Start shipping if the config has fleet:. 0, or -1 with err (a box
 * name that cannot be had). */
int
ship_start(struct flakyd *d, const struct flaky_config *cfg, char *err,
    size_t errlen)
{
	pthread_condattr_t	 ca;
	struct shipper		*s;
	char			 where[256];

	if (cfg->fleet_url == NULL)
		return 0;
	s = xcalloc(1, sizeof *s);
	/* The box the runs record (fleet: box:, box:, $FLAKY_BOX or the
	 * host name; main.c), so the server files them as the box does. */
	s->box = xstrdup(flaky_store_box(d->store));
	s->url = xstrdup(cfg->fleet_url);
	s->where = xstrdup(flaky_fleet_redact_uri(s->url, where,
	    sizeof where));
	s->db_path = xstrdup(d->db_path);
	s->retry_ms = SHIP_RETRY_FIRST_MS;
	s->st.state = SHIP_CONNECTING;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, ship_main, s) != 0)
		fatalx("fleet: cannot start the shipper thread");
	s->started = 1;
	ship = s;
	return 0;
}

/* Whether two optional strings differ. */
static int
differ(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* A reload does not move the shipper: say so when fleet: changed. */
void
ship_reload_check(const struct flaky_config *old,
    const struct flaky_config *cfg)
{
	if (differ(old->fleet_url, cfg->fleet_url) ||
	    differ(old->fleet_box, cfg->fleet_box))
		log_warnx("reload: fleet: changed; that takes a restart "
		    "(still %s)", ship != NULL ? "shipping as before" :
		    "not shipping");
}

/* A run was stored: look at the queue now. */
void
ship_wake(void)
{
	if (ship == NULL)
		return;
	pthread_mutex_lock(&ship->mu);
	ship->wake = 1;
	pthread_cond_signal(&ship->cv);
	pthread_mutex_unlock(&ship->mu);
}

/* What status shows; 0 when not shipping. */
int
ship_status(struct ship_status *ret, const char **box, const char **where)
{
	if (ship == NULL)
		return 0;
	pthread_mutex_lock(&ship->mu);
	*ret = ship->st;
	pthread_mutex_unlock(&ship->mu);
	*box = ship->box;
	*where = ship->where;
	return 1;
}

/* The name of a state, as status says it. */
const char *
ship_state_name(enum ship_state st)
{
	static const char *const names[] = { "connecting", "up", "down",
	    "refused" };

	return st <= SHIP_REFUSED ? names[st] : "unknown";
}

/* At exit: stop the thread; one stuck in the server is not waited for
 * long (the server rolls its transaction back when we are gone). */
void
ship_stop(void)
{
	struct timespec	 ts;
	struct shipper	*s = ship;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	if (pthread_timedjoin_np(s->thread, NULL, &ts) != 0) {
		log_warnx("fleet: the shipper did not stop within 5 s; "
		    "leaving without it");
		return;
	}
	ship = NULL;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->url);
	free(s->where);
	free(s->box);
	free(s->db_path);
	free(s);
}
