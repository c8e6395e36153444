/* The control socket (OpenBSD ntpd control.c): a Unix stream socket, one
 * request per line, one JSON object per line back, for every line: what
 * is no request gets an error. Peers are checked with SO_PEERCRED: root,
 * our own user, or a member of the socket's group.
 *
 * Nothing a client does may keep others out. Connections are bounded in
 * all and per user; a user at its bound who connects again takes the
 * place of its connection idle longest, so its idle ones cannot keep out
 * its own flakyctl either. A connection without a whole request for a few
 * seconds is closed; one whose reply is still being written is not (the
 * write timeout governs it: every reply is built at once, so a client
 * waiting for one is a client reading slowly). Line lengths are bounded,
 * accept() backs off when we run out of descriptors, and EV_WRITE is
 * asked for only while output is queued (bufferevents do exactly that). */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "control/control.h"
#include "flakyd.h"
#include "log.h"

#define CONTROL_MAX_CLIENTS	32
#define CONTROL_MAX_PER_UID	4
#define CONTROL_MAX_LINE	FLAKY_CTL_LINE_MAX
#define CONTROL_MAX_OUTPUT	(32 * 1024 * 1024)
#define CONTROL_IDLE_SEC	5	/* without a whole request */
#define CONTROL_WRITE_SEC	60	/* a reply without progress */
#define CONTROL_BACKOFF_MS	1000
#define CONTROL_NAG_US		(60 * 1000 * 1000)	/* refusals logged */

struct client {
	struct bufferevent	*bev;
	uid_t			 uid;
	int64_t			 since_us;	/* accepted or last request */
	struct event		*idle_ev;
	int			 closing;	/* free once output is sent */
	LIST_ENTRY(client)	 entry;
};

static struct {
	struct flakyd		*d;
	int			 fd;
	char			*path;
	gid_t			 gid;
	struct event		*ev;
	struct event		*backoff_ev;
	int			 paused;
	int			 nclients;
	int64_t			 nagged_us;	/* last refusal logged */
	LIST_HEAD(, client)	 clients;
} ctl = { .fd = -1 };

static void	control_accept(evutil_socket_t, short, void *);

/* Listen again, unless we are at the connection bound or backing off. */
static void
control_resume(void)
{
	if (ctl.ev == NULL || ctl.nclients >= CONTROL_MAX_CLIENTS ||
	    evtimer_pending(ctl.backoff_ev, NULL))
		return;
	event_add(ctl.ev, NULL);
}

/* Drop a connection; listen again if we were at the bound. */
static void
client_free(struct client *c)
{
	LIST_REMOVE(c, entry);
	event_free(c->idle_ev);
	bufferevent_free(c->bev);
	free(c);
	ctl.nclients--;
	control_resume();
}

/* Queue a reply the protocol's writer built; out of memory is fatal in
 * the programs (xmalloc), and a half-written reply must not go out. */
static void
reply_send(struct client *c, struct flaky_buf *b, int rc)
{
	if (rc < 0 || b->oom)
		fatalx("control: cannot build a reply: %s", strerror(-rc));
	evbuffer_add(bufferevent_get_output(c->bev), b->data, b->len);
	flaky_buf_free(b);
}

/* A failed request's reply. */
static void
reply_error(struct client *c, const char *msg)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	reply_send(c, &b, flaky_ctl_reply_error(&b, msg));
}

/* A time as key_ms and key (ISO 8601 in the schedule's zone), or nulls. */
static void
add_time(struct flaky_jw *w, const char *key_ms, const char *key, int64_t ms)
{
	char	 buf[40];

	flaky_jw_key(w, key_ms);
	if (ms == FLAKY_NO_FIRE || ms <= 0) {
		flaky_jw_null(w);
		flaky_jw_key(w, key);
		flaky_jw_null(w);
		return;
	}
	flaky_tz_format(ctl.d->cur->cfg->tz, ms, buf, sizeof buf);
	flaky_jw_int(w, ms);
	flaky_jw_key(w, key);
	flaky_jw_string(w, buf);
}

/* One target of the status answer. */
static void
status_target(struct flaky_jw *w, struct tstate *ts)
{
	struct trigger	*tr = ts->active;
	const char	*state = FLAKY_CTL_STATE_IDLE;

	if (tr != NULL)
		state = tr->has_slot ? FLAKY_CTL_STATE_RUNNING :
		    FLAKY_CTL_STATE_WAITING;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, FLAKY_CTL_F_NAME);
	flaky_jw_string(w, ts->name);
	flaky_jw_key(w, FLAKY_CTL_F_SCHEDULE);
	flaky_jw_string(w, ts->def && ts->def->has_schedule ?
	    ts->def->schedule : NULL);
	add_time(w, FLAKY_CTL_F_NEXT_FIRE_MS, FLAKY_CTL_F_NEXT_FIRE,
	    ts->fire_ms);
	flaky_jw_key(w, FLAKY_CTL_F_STATE);
	flaky_jw_string(w, state);
	if (tr != NULL) {
		flaky_jw_key(w, FLAKY_CTL_F_TRIGGER);
		flaky_jw_string(w, tr->kind);
		flaky_jw_key(w, FLAKY_CTL_F_RUN);
		flaky_jw_int(w, tr->started);
		flaky_jw_key(w, FLAKY_CTL_F_RUNS);
		flaky_jw_int(w, tr->runs);
	}
	if (tr != NULL && tr->confirm != NULL) {
		flaky_jw_key(w, FLAKY_CTL_F_CONFIRM_RUNS);
		flaky_jw_int(w, tr->confirm_runs);
	}
	flaky_jw_key(w, FLAKY_CTL_F_QUEUED);
	flaky_jw_bool(w, ts->pending != NULL);
	flaky_jw_key(w, FLAKY_CTL_F_LAST);
	if (ts->last.run_id == 0) {
		flaky_jw_null(w);
		flaky_jw_object_end(w);
		return;
	}
	flaky_jw_object_begin(w);
	flaky_jw_key(w, FLAKY_CTL_F_RUN_ID);
	/* A negative id: a run that could not be stored. */
	if (ts->last.run_id > 0)
		flaky_jw_int(w, ts->last.run_id);
	else
		flaky_jw_null(w);
	flaky_jw_key(w, FLAKY_CTL_F_STATUS);
	flaky_jw_string(w, flaky_run_status_name(ts->last.status));
	add_time(w, FLAKY_CTL_F_STARTED_MS, FLAKY_CTL_F_STARTED,
	    ts->last.started_ms);
	flaky_jw_key(w, FLAKY_CTL_F_TESTS);
	flaky_jw_int(w, ts->last.tests);
	flaky_jw_key(w, FLAKY_CTL_F_FAILURES);
	flaky_jw_int(w, ts->last.failures);
	flaky_jw_object_end(w);
	flaky_jw_object_end(w);
}

/* status: the shipper's state and backlog, with fleet: in the config. */
static void
status_fleet(struct flaky_jw *w)
{
	struct ship_status st;
	const char	*box, *where;

	if (!ship_status(&st, &box, &where))
		return;
	flaky_jw_key(w, FLAKY_CTL_F_FLEET);
	flaky_jw_object_begin(w);
	flaky_jw_key(w, FLAKY_CTL_F_BOX);
	flaky_jw_string(w, box);
	flaky_jw_key(w, FLAKY_CTL_F_SERVER);
	flaky_jw_string(w, where);
	flaky_jw_key(w, FLAKY_CTL_F_STATE);
	flaky_jw_string(w, ship_state_name(st.state));
	flaky_jw_key(w, FLAKY_CTL_F_ERROR);
	flaky_jw_string(w, st.error[0] != '\0' ? st.error : NULL);
	add_time(w, FLAKY_CTL_F_SINCE_MS, FLAKY_CTL_F_SINCE, st.since_ms);
	flaky_jw_key(w, FLAKY_CTL_F_ATTEMPTS);
	flaky_jw_int(w, st.attempts);
	flaky_jw_key(w, FLAKY_CTL_F_BACKLOG);
	flaky_jw_int(w, st.backlog.runs);
	add_time(w, FLAKY_CTL_F_OLDEST_MS, FLAKY_CTL_F_OLDEST,
	    st.backlog.oldest_ms);
	flaky_jw_key(w, FLAKY_CTL_F_SHIPPED);
	flaky_jw_int(w, st.backlog.shipped);
	add_time(w, FLAKY_CTL_F_LAST_SHIP_MS, FLAKY_CTL_F_LAST_SHIP,
	    st.last_ms);
	flaky_jw_object_end(w);
}

/* status: the daemon and every target, one line of JSON. */
static void
cmd_status(struct client *c)
{
	struct flakyd	*d = ctl.d;
	struct flaky_buf b;
	struct flaky_jw	 w;

	flaky_buf_init(&b);
	flaky_ctl_reply_begin(&w, &b);
	flaky_jw_key(&w, FLAKY_CTL_F_PID);
	flaky_jw_int(&w, (long long)getpid());
	flaky_jw_key(&w, FLAKY_CTL_F_VERSION);
	flaky_jw_string(&w, FLAKY_VERSION);
	add_time(&w, FLAKY_CTL_F_STARTED_MS, FLAKY_CTL_F_STARTED, d->start_ms);
	flaky_jw_key(&w, FLAKY_CTL_F_CONFIG);
	flaky_jw_string(&w, d->config_path);
	flaky_jw_key(&w, FLAKY_CTL_F_DATABASE);
	flaky_jw_string(&w, d->db_path);
	flaky_jw_key(&w, FLAKY_CTL_F_TIMEZONE);
	flaky_jw_string(&w, flaky_tz_name(d->cur->cfg->tz));
	flaky_jw_key(&w, FLAKY_CTL_F_JOBS);
	flaky_jw_int(&w, d->cur->cfg->jobs);
	flaky_jw_key(&w, FLAKY_CTL_F_RUNNING);
	flaky_jw_int(&w, d->slots);
	flaky_jw_key(&w, FLAKY_CTL_F_WAITING);
	flaky_jw_int(&w, d->nwaiting);
	flaky_jw_key(&w, FLAKY_CTL_F_UNSTORED);
	flaky_jw_int(&w, (long long)flaky_pipeline_waiting(d->pl));
	flaky_jw_key(&w, FLAKY_CTL_F_STOPPING);
	flaky_jw_bool(&w, d->stopping);
	status_fleet(&w);
	flaky_jw_key(&w, FLAKY_CTL_F_TARGETS);
	flaky_jw_array_begin(&w);
	for (size_t i = 0; i < d->ntargets; i++)
		status_target(&w, d->targets[i]);
	flaky_jw_array_end(&w);
	reply_send(c, &b, flaky_ctl_reply_end(&w));
}

/* run TARGET [RUNS]: a manual trigger. */
static void
cmd_run(struct client *c, const struct flaky_ctl_request *req)
{
	struct flaky_buf b;
	struct flaky_jw	 w;
	char		 err[512];
	int		 queued = 0;

	if (sched_manual(ctl.d, req->target, req->runs, &queued, err,
	    sizeof err) < 0) {
		reply_error(c, err);
		return;
	}
	flaky_buf_init(&b);
	flaky_ctl_reply_begin(&w, &b);
	flaky_jw_key(&w, FLAKY_CTL_F_TARGET);
	flaky_jw_string(&w, req->target);
	flaky_jw_key(&w, FLAKY_CTL_F_RUNS);
	flaky_jw_int(&w, req->runs > 0 ? req->runs :
	    sched_find(ctl.d, req->target)->def->runs);
	flaky_jw_key(&w, FLAKY_CTL_F_QUEUED);
	flaky_jw_bool(&w, queued);
	reply_send(c, &b, flaky_ctl_reply_end(&w));
}

/* reload: as SIGHUP, with the error of a bad file in the answer. */
static void
cmd_reload(struct client *c)
{
	struct flaky_buf b;
	struct flaky_jw	 w;
	char		 err[1024];

	if (flakyd_reload(ctl.d, err, sizeof err) < 0) {
		reply_error(c, err);
		return;
	}
	flaky_buf_init(&b);
	flaky_ctl_reply_begin(&w, &b);
	flaky_jw_key(&w, FLAKY_CTL_F_TARGETS);
	flaky_jw_int(&w, (long long)ctl.d->ntargets);
	reply_send(c, &b, flaky_ctl_reply_end(&w));
}

/* One request line: decode it with the protocol's table and answer it. */
static void
client_line(struct client *c, char *line)
{
	struct flaky_ctl_request req;
	char		 err[512];
	int		 rc;

	if ((rc = flaky_ctl_request_decode(line, &req, err, sizeof err)) < 0) {
		reply_error(c, err);
		return;
	}
	switch (req.type) {
	case FLAKY_CTL_STATUS:
		cmd_status(c);
		break;
	case FLAKY_CTL_RUN:
		cmd_run(c, &req);
		break;
	case FLAKY_CTL_RELOAD:
		cmd_reload(c);
		break;
	}
}

/* Output sent: a closing connection can go now. */
static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct client	*c = arg;

	(void)bev;
	if (c->closing)
		client_free(c);
}

/* A whole request came: the idle clock starts again. */
static void
client_idle_reset(struct client *c)
{
	struct timeval	 tv = { CONTROL_IDLE_SEC, 0 };

	c->since_us = flaky_mono_us();
	evtimer_add(c->idle_ev, &tv);
}

/* Say why a connection is closed, as the last line it reads: it is idle
 * (nothing queued), so the line goes straight to the socket. */
static void
client_bye(int fd, const char *msg)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	if (flaky_ctl_reply_error(&b, msg) == 0 && !b.oom)
		(void)send(fd, b.data, b.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	flaky_buf_free(&b);
}

/* No whole request for CONTROL_IDLE_SEC: close, unless a reply is still
 * being written (the write timeout watches that). */
static void
client_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client	*c = arg;
	struct timeval	 tv = { CONTROL_IDLE_SEC, 0 };

	(void)fd;
	(void)what;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0) {
		evtimer_add(c->idle_ev, &tv);
		return;
	}
	log_debug("control: closing a connection of uid %ld: no request "
	    "for %d s", (long)c->uid, CONTROL_IDLE_SEC);
	client_bye(bufferevent_getfd(c->bev), FLAKY_CTL_ERR_IDLE);
	client_free(c);
}

/* Requests as they come, one per line, with the line bound. */
static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct client	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	struct evbuffer	*out = bufferevent_get_output(bev);
	char		*line;
	size_t		 len;

	while (!c->closing &&
	    (line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		client_idle_reset(c);
		if (len > CONTROL_MAX_LINE) {
			reply_error(c, FLAKY_CTL_ERR_TOO_LONG);
			c->closing = 1;
		} else if (memchr(line, '\0', len) != NULL)
			reply_error(c, FLAKY_CTL_ERR_NUL);
		else
			client_line(c, line);
		free(line);
		if (evbuffer_get_length(out) > CONTROL_MAX_OUTPUT) {
			log_warnx("control: a client does not read its "
			    "replies; closing it");
			client_free(c);
			return;
		}
	}
	if (!c->closing && evbuffer_get_length(in) > CONTROL_MAX_LINE) {
		reply_error(c, FLAKY_CTL_ERR_TOO_LONG);
		c->closing = 1;
	}
	if (c->closing) {
		bufferevent_disable(bev, EV_READ);
		if (evbuffer_get_length(out) == 0)
			client_free(c);
	}
}

/* EOF, error or idle timeout on a connection. */
static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct client	*c = arg;

	(void)bev;
	/* EOF with a reply still queued: send it, then close. */
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0) {
		c->closing = 1;
		bufferevent_disable(c->bev, EV_READ);
		return;
	}
	client_free(c);
}

/* Root, our own user, or a member of the socket's group. */
static int
peer_allowed(int fd, uid_t *ret_uid)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof cred;
	gid_t		 groups[256];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return 0;
	*ret_uid = cred.uid;
	if (cred.uid == 0 || cred.uid == geteuid() || cred.gid == ctl.gid)
		return 1;
#ifdef SO_PEERGROUPS
	len = sizeof groups;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
		for (size_t i = 0; i < len / sizeof groups[0]; i++)
			if (groups[i] == ctl.gid)
				return 1;
	}
#else
	(void)groups;
#endif
	return 0;
}

/* The accept backoff is over. */
static void
backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	control_resume();
}

/* Make room for one more connection of uid: 1 when it is under its
 * bound or its connection idle longest (nothing queued) was closed for
 * it; 0 when all of its connections are busy writing replies. */
static int
uid_room(uid_t uid)
{
	struct client	*c, *oldest = NULL;
	int		 n = 0;

	LIST_FOREACH(c, &ctl.clients, entry) {
		if (c->uid != uid)
			continue;
		n++;
		if (c->closing ||
		    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
			continue;
		if (oldest == NULL || c->since_us < oldest->since_us)
			oldest = c;
	}
	if (n < CONTROL_MAX_PER_UID)
		return 1;
	if (oldest == NULL)
		return 0;
	log_debug("control: uid %ld has %d connections; closing the one "
	    "idle longest", (long)uid, n);
	client_bye(bufferevent_getfd(oldest->bev), FLAKY_CTL_ERR_REPLACED);
	client_free(oldest);
	return 1;
}

/* Refuse a connection of a user at its bound, with the reason. */
static void
uid_refuse(int fd, uid_t uid)
{
	int64_t		 now = flaky_mono_us();

	/* Said once a minute: a loop of refusals must not fill the log. */
	if (ctl.nagged_us == 0 || now - ctl.nagged_us > CONTROL_NAG_US) {
		log_warnx("control: refused a connection from uid %ld: %d "
		    "connections busy with replies already", (long)uid,
		    CONTROL_MAX_PER_UID);
		ctl.nagged_us = now;
	}
	client_bye(fd, FLAKY_CTL_ERR_BUSY);
	close(fd);
}

/* A new connection: check the peer, then read its requests. */
static void
control_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct client	*c;
	uid_t		 uid = (uid_t)-1;
	int		 fd;

	(void)what;
	(void)arg;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* Out of descriptors: the listener stays readable, so
			 * stop listening for a while instead of spinning. */
			struct timeval tv = { CONTROL_BACKOFF_MS / 1000, 0 };

			log_warn("control: accept");
			event_del(ctl.ev);
			evtimer_add(ctl.backoff_ev, &tv);
		}
		return;
	}
	if (!peer_allowed(fd, &uid)) {
		log_warnx("control: refused a connection from uid %ld "
		    "(not root, our user or group %ld)", (long)uid,
		    (long)ctl.gid);
		close(fd);
		return;
	}
	if (!uid_room(uid)) {
		uid_refuse(fd, uid);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->uid = uid;
	if ((c->bev = bufferevent_socket_new(ctl.d->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		free(c);
		return;
	}
	if ((c->idle_ev = evtimer_new(ctl.d->base, client_idle_cb, c)) ==
	    NULL)
		fatalx("out of memory");
	{
		struct timeval tv = { CONTROL_WRITE_SEC, 0 };

		bufferevent_set_timeouts(c->bev, NULL, &tv);
	}
	client_idle_reset(c);
	bufferevent_setcb(c->bev, client_read_cb, client_write_cb,
	    client_event_cb, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, CONTROL_MAX_LINE * 4);
	bufferevent_enable(c->bev, EV_READ);
	LIST_INSERT_HEAD(&ctl.clients, c, entry);
	if (++ctl.nclients >= CONTROL_MAX_CLIENTS)
		event_del(ctl.ev);
}

/* Listen on path, mode 0660, replacing a stale socket only. */
int
control_init(struct flakyd *d, const char *path)
{
	struct sockaddr_un sun;
	struct stat	 st;
	mode_t		 old;
	int		 fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		log_warnx("%s: socket path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("socket");
		return -1;
	}
	/* A socket someone answers on is not stale: another flakyd. */
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0) {
		log_warnx("%s: another flakyd is listening there", path);
		close(fd);
		return -1;
	}
	close(fd);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("socket");
		return -1;
	}
	if (unlink(path) == -1 && errno != ENOENT) {
		log_warn("%s: removing the stale socket", path);
		close(fd);
		return -1;
	}
	/* Mode 0660 from the start: no window where others may connect. */
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		log_warn("%s: bind", path);
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if (chmod(path, 0660) == -1 || stat(path, &st) == -1 ||
	    listen(fd, 16) == -1) {
		log_warn("%s", path);
		close(fd);
		unlink(path);
		return -1;
	}
	ctl.d = d;
	ctl.fd = fd;
	ctl.gid = st.st_gid;
	ctl.path = xstrdup(path);
	LIST_INIT(&ctl.clients);
	ctl.ev = event_new(d->base, fd, EV_READ | EV_PERSIST, control_accept,
	    NULL);
	ctl.backoff_ev = evtimer_new(d->base, backoff_cb, NULL);
	if (ctl.ev == NULL || ctl.backoff_ev == NULL)
		fatalx("out of memory");
	event_add(ctl.ev, NULL);
	return 0;
}

/* Close every connection and the socket, and remove its file. */
void
control_close(void)
{
	struct client	*c;

	if (ctl.fd == -1)
		return;
	while ((c = LIST_FIRST(&ctl.clients)) != NULL)
		client_free(c);
	event_free(ctl.ev);
	ctl.ev = NULL;
	event_free(ctl.backoff_ev);
	ctl.backoff_ev = NULL;
	close(ctl.fd);
	ctl.fd = -1;
	unlink(ctl.path);
	free(ctl.path);
	ctl.path = NULL;
}
