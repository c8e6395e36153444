/* flakyd: options, the lock on the database, signals and the lifecycle
 * (start, reload, stop). The schedule and the runs are in scheduler.c,
 * the control socket in control.c. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "classify/classify.h"
#include "fleet/fleet.h"
#include "flakyd.h"
#include "log.h"

#define DEFAULT_DATABASE	"/var/lib/flaky/flaky.db"
#define LOCK_TRIES		20	/* pauses before refusing */
#define LOCK_PAUSE_MS		100

struct flakyd	*flakyd;
static int	 ready_fd = -1;		/* tells the waiting parent */
static int	 exit_code;

/* The synopsis. */
static void
usage(FILE *f)
{
	fprintf(f, "usage: flakyd [--config FILE] [--db PATH] [--foreground] "
	    "[--check-config] [-v]\n");
}

/* Read flakyd's file: the config's checks, then the URIs of fleet: and
 * http: as libpq reads them, so that one it cannot read is refused here
 * (FILE:LINE:COL:) rather than retried for ever. */
static int
config_load(const char *path, unsigned flags, struct flaky_config **ret,
    char *err, size_t errlen)
{
	struct flaky_config *cfg;
	char		 e[512];
	int		 r;

	if ((r = flaky_config_load(path, flags | FLAKY_CONFIG_DAEMON, &cfg,
	    err, errlen)) < 0)
		return r;
	if (cfg->fleet_url != NULL &&
	    flaky_fleet_check_uri(cfg->fleet_url, e, sizeof e) < 0)
		r = flaky_error(err, errlen, EINVAL, "%s:%d:%d: fleet: url: %s",
		    path, cfg->fleet_url_line, cfg->fleet_url_col, e);
	else if (cfg->http_database != NULL &&
	    flaky_store_is_server(cfg->http_database) &&
	    flaky_fleet_check_uri(cfg->http_database, e, sizeof e) < 0)
		r = flaky_error(err, errlen, EINVAL, "%s:%d:%d: http: database: "
		    "%s", path, cfg->http_database_line, cfg->http_database_col,
		    e);
	if (r < 0) {
		flaky_config_free(cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}

/* --check-config: the file with every check, then each target's next
 * fire time in the config's zone. */
static int
check_config(const char *path)
{
	struct flaky_config *cfg;
	char		 err[1024], when[40], src[64];
	int64_t		 now = flaky_now_ms(), next;

	if (config_load(path, 0, &cfg, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (perturb_check_config(cfg, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		flaky_config_free(cfg);
		return 1;
	}
	printf("%s: ok, %zu target%s, zone %s\n", path, cfg->ntargets,
	    cfg->ntargets == 1 ? "" : "s", flaky_tz_name(cfg->tz));
	for (size_t i = 0; i < cfg->ntargets; i++) {
		const struct flaky_target *t = &cfg->targets[i];

		if (!t->has_schedule) {
			printf("%s\tmanual only\n", t->name);
			continue;
		}
		flaky_sched_format(&t->sched, src, sizeof src);
		if (flaky_sched_next(&t->sched, cfg->tz, now, now, &next) < 0)
			printf("%s\tnever\t%s\n", t->name, src);
		else
			printf("%s\t%s\t%s\n", t->name,
			    flaky_tz_format(cfg->tz, next, when, sizeof when),
			    src);
	}
	flaky_config_free(cfg);
	return 0;
}

/* A config file that is not there: say how to make one, in one line,
 * before the daemon detaches (a fresh install has none). */
static int
config_missing(const char *path)
{
	if (access(path, F_OK) == 0 || errno != ENOENT)
		return 0;
	fprintf(stderr, "flakyd: %s: no such file; write one with: flakyctl "
	    "init --output %s PROJECT_DIR\n", path, path);
	return 1;
}

/* One flakyd per database: an flock on DBPATH.lock, held for life. */
static void
take_lock(const char *db)
{
	char	*path, buf[32];
	int	 fd;

	xasprintf(&path, "%s.lock", db);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640)) == -1)
		fatal("%s", path);
	/* A flakyd killed in the middle of a spawn (clone) leaves its lock with
	 * the child until that child execs: allow a short moment for that
	 * (a restart right after a crash) before refusing. */
	for (int i = 0; flock(fd, LOCK_EX | LOCK_NB) == -1; i++) {
		ssize_t n;

		if (errno != EWOULDBLOCK)
			fatal("%s: lock", path);
		if (i < LOCK_TRIES) {
			usleep(LOCK_PAUSE_MS * 1000);
			continue;
		}
		n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		fatalx("%s: another flakyd%s%s already uses this database "
		    "(lock %s held); not starting", db, buf[0] ? " pid " : "",
		    buf, path);
	}
	if (ftruncate(fd, 0) == 0) {
		int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());

		if (pwrite(fd, buf, (size_t)len, 0) != len)
			log_debug("%s: could not write our pid", path);
	}
	free(path);
	/* fd stays open (and locked) until we exit. */
}

/* Read the file again; a bad one leaves the running schedule as it is. */
int
flakyd_reload(struct flakyd *d, char *err, size_t errlen)
{
	struct flaky_config *cfg;
	char		 msg[64];
	int		 r;

	snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%lld",
	    (long long)flaky_mono_us());
	notify_send(msg);
	r = config_load(d->config_path, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    errlen);
	if (r == 0) {
		const struct flaky_config *old = d->cur->cfg;

		if ((cfg->database == NULL) != (old->database == NULL) ||
		    (cfg->database != NULL &&
		    strcmp(cfg->database, old->database) != 0))
			log_warnx("reload: database: changed; that takes a "
			    "restart (still using %s)", d->db_path);
		if ((cfg->socket == NULL) != (old->socket == NULL) ||
		    (cfg->socket != NULL &&
		    strcmp(cfg->socket, old->socket) != 0))
			log_warnx("reload: socket: changed; that takes a "
			    "restart (still on %s)", d->socket_path);
		http_reload_check(d, old, cfg);
		ship_reload_check(old, cfg);
		if ((r = sched_apply(d, cfg, err, errlen)) < 0)
			flaky_config_free(cfg);
		else
			alerts_apply(d);
	}
	if (r < 0)
		log_warnx("reload failed, the old schedule keeps running: %s",
		    err);
	else
		log_info("reloaded %s: %zu target%s", d->config_path,
		    d->ntargets, flaky_plural((long long)d->ntargets));
	notify_send("READY=1");
	return r;
}

/* All runs ended after a stop: close up and leave the loop. */
void
flakyd_maybe_exit(struct flakyd *d)
{
	if (!d->stopping || d->slots > 0 ||
	    flaky_spawner_running(d->sp) > 0)
		return;
	event_base_loopexit(d->base, NULL);
}

/* Last resort after a stop: runs that did not end in time. */
static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flakyd	*d = arg;

	(void)fd;
	(void)what;
	log_warnx("runs did not end within the grace period; leaving");
	event_base_loopexit(d->base, NULL);
}

/* SIGTERM, SIGINT: stop launching, end the runs, leave when they ended. */
static void
stop(struct flakyd *d, const char *why)
{
	struct timeval	 tv;
	int64_t		 ms;

	if (d->stopping)
		return;
	d->stopping = 1;
	notify_send("STOPPING=1");
	log_info("%s: stopping; %d run%s in flight", why, d->slots,
	    d->slots == 1 ? "" : "s");
	control_close();
	http_close(d);
	sched_shutdown(d);
	alerts_shutdown(d);
	/* The spawner kills at the grace; this is only a last resort. */
	ms = d->cur->cfg->kill_grace_ms + 3000;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	d->deadline_ev = evtimer_new(d->base, deadline_cb, d);
	if (d->deadline_ev != NULL)
		evtimer_add(d->deadline_ev, &tv);
	flakyd_maybe_exit(d);
}

/* SIGHUP, SIGTERM and SIGINT as libevent signal events. */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct flakyd	*d = arg;
	char		 err[1024];

	(void)what;
	switch (sig) {
	case SIGHUP:
		if (!d->stopping)
			flakyd_reload(d, err, sizeof err);
		break;
	case SIGTERM:
		stop(d, "SIGTERM");
		break;
	case SIGINT:
		stop(d, "SIGINT");
		break;
	}
}

/* The systemd watchdog ping. */
static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	notify_send("WATCHDOG=1");
}

/* Outside systemd and without --foreground: detach, and let the parent
 * exit only once we are ready (or failed), with the matching status. */
static void
daemonize(void)
{
	int	 p[2], fd;
	pid_t	 pid;
	char	 c;

	if (pipe2(p, O_CLOEXEC) == -1)
		fatal("pipe");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid > 0) {
		ssize_t	 n;

		close(p[1]);
		do
			n = read(p[0], &c, 1);
		while (n == -1 && errno == EINTR);
		_exit(n == 1 && c == 'r' ? 0 : 1);
	}
	close(p[0]);
	ready_fd = p[1];
	if (setsid() == -1)
		fatal("setsid");
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

/* The loop with two priorities: the schedule's timer (0) before
 * everything else (1), and a look for it after every 16 callbacks of the
 * rest, so a flood of dashboard clients never makes a trigger late. */
static struct event_base *
daemon_base(void)
{
	struct event_config *cfg;
	struct event_base *base = NULL;

	if ((cfg = event_config_new()) != NULL &&
	    event_config_set_max_dispatch_interval(cfg, NULL, 16, 1) == 0)
		base = event_base_new_with_config(cfg);
	if (cfg != NULL)
		event_config_free(cfg);
	if (base == NULL && (base = event_base_new()) == NULL)
		return NULL;
	if (event_base_priority_init(base, 2) < 0) {
		event_base_free(base);
		return NULL;
	}
	return base;
}

/* Options, start-up in order, the loop, and the way out. */
int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'd' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	struct flakyd	 d;
	struct flaky_config *cfg;
	const char	*config = NULL, *db = NULL, *e;
	char		 err[1024], box[FLAKY_BOX_MAX + 1];
	int		 c, check = 0, verbose = 0, r;
	int64_t		 wd_ms;

	memset(&d, 0, sizeof d);
	d.timerfd = -1;
	flakyd = &d;
	while ((c = getopt_long(argc, argv, "c:d:fnvhV", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'f':
			d.foreground = 1;
			break;
		case 'n':
			check = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("flakyd %s\n", FLAKY_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (config == NULL && (e = getenv("FLAKY_CONFIG")) != NULL && *e)
		config = e;
	if (config == NULL)
		config = FLAKY_DEFAULT_CONFIG;
	/* 1 as for any bad file under --check-config, 2 as for any start
	 * that fails */
	if (config_missing(config))
		return check ? 1 : 2;
	if (check)
		return check_config(config);

	log_init("flakyd", verbose);
	log_timestamps(1);
	if (!d.foreground && getenv("NOTIFY_SOCKET") == NULL &&
	    getenv("JOURNAL_STREAM") == NULL)
		daemonize();

	/* Absolute, so that status says which file and a reload finds it
	 * whatever our working directory. */
	if ((d.config_path = realpath(config, NULL)) == NULL)
		d.config_path = xstrdup(config);
	if (config_load(config, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) < 0)
		fatalx("%s", err);
	d.db_path = xstrdup(db ? db : cfg->database ? cfg->database :
	    DEFAULT_DATABASE);
	d.socket_path = xstrdup(cfg->socket ? cfg->socket :
	    FLAKY_DEFAULT_SOCKET);
	/* flakyd writes a local file, its outbox when fleet: ships to a
	 * server: an outage of the server must not stop the runs. */
	if (flaky_store_is_server(d.db_path))
		fatalx("%s: database: flakyd writes a local SQLite file; to "
		    "store its runs on PostgreSQL, name the server in fleet: "
		    "{url: ..., box: ...} (docs/fleet.md)", config);
	/* not a file name: never made one (the lock) nor printed */
	if (flaky_fleet_is_conninfo(d.db_path) && access(d.db_path, F_OK) < 0)
		fatalx("--db: a libpq key=value connection string (not "
		    "repeated here); flakyd writes a local SQLite file, and "
		    "ships to a server named in fleet: (docs/fleet.md)");
	take_lock(d.db_path);
	/* Before any thread, the database and the socket, and before we are
	 * a subreaper: the runs die with us even on kill -9 (guard.c). */
	guard_start();
	flaky_spawn_group_hook = guard_group;

	/* Grandchildren that escape their group with setsid are reparented
	 * to us, not to init, so they can be reaped and ended. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	signal(SIGPIPE, SIG_IGN);
	notify_init();

	if (flaky_store_open(d.db_path, 0, &d.store, err, sizeof err) < 0)
		fatalx("%s", err);
	for (size_t i = 0; i < cfg->nredact; i++)
		if (flaky_store_add_redaction(d.store, cfg->redact[i].src, err,
		    sizeof err) < 0)
			fatalx("%s", err);
	/* Every run records its box (issue 15); read at start, as the
	 * database is. */
	if ((r = flaky_box_resolve(NULL, cfg->box ? cfg->box : cfg->fleet_box,
	    box, sizeof box, err, sizeof err)) < 0 ||
	    (r = flaky_store_set_box(d.store, box, err, sizeof err)) < 0)
		fatalx("%s", err);
	/* The event loop must not wait long on another writer: a write
	 * that stays busy past this bound fails and is retried later. */
	flaky_store_set_busy_timeout(d.store, FLAKY_BUSY_TIMEOUT_LOOP_MS);
	/* Rows whose owner is gone (an earlier flakyd that crashed, a killed
	 * flakyctl analyze); never those of a live analyze or confirm. The
	 * open did this already unless the database was busy. */
	if ((r = flaky_store_mark_orphans(d.store, 0, err, sizeof err)) < 0)
		log_warnx("%s", err);
	else
		r += flaky_store_orphans_marked(d.store);
	if (r > 0)
		log_info("%d run%s left running by a process that is gone "
		    "marked interrupted", r, r == 1 ? "" : "s");

	if ((d.base = daemon_base()) == NULL)
		fatalx("event_base_new failed");
	if (flaky_spawner_new(d.base, &d.sp) < 0)
		fatalx("cannot watch SIGCHLD");
	d.start_ms = flaky_now_ms();
	if (sched_init(&d, err, sizeof err) < 0)
		fatalx("%s", err);
	if (sched_apply(&d, cfg, err, sizeof err) < 0)
		fatalx("%s", err);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(sigs); i++) {
		d.sig_ev[i] = evsignal_new(d.base, sigs[i], signal_cb, &d);
		if (d.sig_ev[i] == NULL || evsignal_add(d.sig_ev[i], NULL) < 0)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	if (control_init(&d, d.socket_path) < 0)
		fatalx("cannot listen on %s", d.socket_path);
	if (http_start(&d, d.cur->cfg, err, sizeof err) < 0)
		fatalx("http: %s", err);
	if ((wd_ms = notify_watchdog_ms()) > 0) {
		struct timeval tv = { wd_ms / 2000, (wd_ms / 2 % 1000) * 1000 };

		d.watchdog_ev = event_new(d.base, -1, EV_PERSIST, watchdog_cb,
		    NULL);
		if (d.watchdog_ev == NULL || event_add(d.watchdog_ev, &tv) < 0)
			fatalx("cannot start the watchdog timer");
	}
	alerts_apply(&d);
	if (ship_start(&d, d.cur->cfg, err, sizeof err) < 0)
		fatalx("%s", err);
	sched_catch_up(&d);
	sched_arm(&d);

	log_info("ready: %zu target%s, database %s, socket %s, jobs %d",
	    d.ntargets, flaky_plural((long long)d.ntargets), d.db_path,
	    d.socket_path, d.cur->cfg->jobs);
	notify_send("READY=1");
	if (ready_fd != -1) {
		if (write(ready_fd, "r", 1) != 1)
			log_debug("readiness pipe");
		close(ready_fd);
		ready_fd = -1;
	}

	if (event_base_dispatch(d.base) < 0)
		fatalx("event loop failed");

	/* Out of the loop: normally nothing is in flight any more. */
	control_close();
	http_close(&d);
	alerts_free(&d);
	ship_stop();
	sched_free(&d);
	sched_sweep_final(&d);
	if (flaky_spawner_free(d.sp) == -EBUSY)
		log_warnx("runs still live at exit");
	else
		d.sp = NULL;
	/* Nothing of ours runs any more; what still does (runs past the
	 * deadline) the guard kills when it reads EOF. */
	guard_close();
	/* Our own runs that did not finish, and any whose owner is gone:
	 * mark them now while we can (never another live process's). */
	if (flaky_store_mark_interrupted(d.store, 0, err, sizeof err) < 0)
		log_warnx("%s", err);
	flaky_store_close(d.store);
	flaky_classifier_free(d.classifier);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(sigs); i++)
		if (d.sig_ev[i] != NULL)
			event_free(d.sig_ev[i]);
	if (d.watchdog_ev != NULL)
		event_free(d.watchdog_ev);
	if (d.deadline_ev != NULL)
		event_free(d.deadline_ev);
	if (d.base != NULL && d.sp == NULL)
		event_base_free(d.base);
	notify_close();
	free(d.db_path);
	free(d.socket_path);
	free(d.config_path);
	log_info("stopped");
	return exit_code;
}
