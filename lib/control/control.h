/* The control protocol between flakyd and flakyctl, in one place (as
 * OpenBSD ntpd.h holds ntpd's and ntpctl's): the requests and their wire
 * names, the reply fields, one encoder and one decoder of request lines,
 * and the writing and reading of the one-line JSON replies.
 *
 * On the wire (docs/daemon.md, "Control protocol"): a request is one line,
 * its name and arguments separated by blanks; each gets one line of JSON
 * back, an object whose "ok" says whether it worked and whose "error" then
 * says why. The integration tests speak it by hand, so it does not change
 * lightly. */
#ifndef FLAKY_CONTROL_H
#define FLAKY_CONTROL_H

#include <stddef.h>

#include "json/json.h"
#include "util/util.h"

/* The requests flakyd answers. */
enum flaky_ctl_type {
	FLAKY_CTL_STATUS,	/* status: the daemon and its targets */
	FLAKY_CTL_RUN,		/* run TARGET [RUNS]: a manual trigger */
	FLAKY_CTL_RELOAD,	/* reload: read the schedule file again */
};
#define FLAKY_CTL_NTYPES	3

/* A request line's bound, its newline excluded. */
#define FLAKY_CTL_LINE_MAX	1024
/* The most runs one manual trigger may ask for. */
#define FLAKY_CTL_RUNS_MAX	10000
/* What a client reads of one reply at most, and the reader's bounds on
 * it: a status of tens of thousands of targets fits. */
#define FLAKY_CTL_REPLY_MAX	(32 * 1024 * 1024)
#define FLAKY_CTL_REPLY_DEPTH	16
#define FLAKY_CTL_REPLY_VALUES	(1024 * 1024)

/* One request. target points into the decoded line or the caller's own
 * string; it is not copied. */
struct flaky_ctl_request {
	enum flaky_ctl_type type;
	const char	*target;	/* RUN */
	int		 runs;		/* RUN: 1 to RUNS_MAX; 0: as set */
};

/* A request's wire name ("status"), or NULL for no such request. */
const char *flaky_ctl_request_name(enum flaky_ctl_type);
/* Append the request line, newline included. -EINVAL (with the reason
 * in err) for a target name that could not travel as one word (empty,
 * blanks or control characters in it) or a count out of range;
 * -EMSGSIZE for a line over FLAKY_CTL_LINE_MAX; -ENOMEM. */
int	 flaky_ctl_request_encode(const struct flaky_ctl_request *,
	    struct flaky_buf *, char *err, size_t errlen);
/* Decode one request line (without its newline; it is split in place).
 * -ENODATA for a blank line; -EMSGSIZE for a line over the bound;
 * -EINVAL for anything else wrong. err then holds the message to send
 * back: every request line gets an answer. */
int	 flaky_ctl_request_decode(char *line, struct flaky_ctl_request *ret,
	    char *err, size_t errlen);

/* Reply fields. Times come in pairs: "KEY" (ISO 8601 in the schedule's
 * zone) and "KEY_ms" (UTC milliseconds). */
#define FLAKY_CTL_F_OK		"ok"
#define FLAKY_CTL_F_ERROR	"error"
/* status */
#define FLAKY_CTL_F_PID		"pid"
#define FLAKY_CTL_F_VERSION	"version"
#define FLAKY_CTL_F_STARTED	"started"
#define FLAKY_CTL_F_STARTED_MS	"started_ms"
#define FLAKY_CTL_F_CONFIG	"config"
#define FLAKY_CTL_F_DATABASE	"database"
#define FLAKY_CTL_F_TIMEZONE	"timezone"
#define FLAKY_CTL_F_JOBS	"jobs"
#define FLAKY_CTL_F_RUNNING	"running"
#define FLAKY_CTL_F_WAITING	"waiting"
#define FLAKY_CTL_F_UNSTORED	"unstored"
#define FLAKY_CTL_F_STOPPING	"stopping"
#define FLAKY_CTL_F_TARGETS	"targets"	/* and reload: how many */
/* status, each target */
#define FLAKY_CTL_F_NAME	"name"
#define FLAKY_CTL_F_SCHEDULE	"schedule"
#define FLAKY_CTL_F_NEXT_FIRE	"next_fire"
#define FLAKY_CTL_F_NEXT_FIRE_MS "next_fire_ms"
#define FLAKY_CTL_F_STATE	"state"
#define FLAKY_CTL_F_TRIGGER	"trigger"
#define FLAKY_CTL_F_RUN		"run"
#define FLAKY_CTL_F_RUNS	"runs"		/* and run's reply */
#define FLAKY_CTL_F_CONFIRM_RUNS "confirm_runs"
#define FLAKY_CTL_F_QUEUED	"queued"	/* and run's reply */
#define FLAKY_CTL_F_LAST	"last"
/* status, a target's last run */
#define FLAKY_CTL_F_RUN_ID	"run_id"
#define FLAKY_CTL_F_STATUS	"status"
#define FLAKY_CTL_F_TESTS	"tests"
#define FLAKY_CTL_F_FAILURES	"failures"
/* run */
#define FLAKY_CTL_F_TARGET	"target"
/* status, with fleet: in the config (docs/fleet.md): the shipper. Its
 * state is one of connecting, up, down, refused; backlog is the count of
 * finished runs not yet on the server, oldest the end of the oldest. */
#define FLAKY_CTL_F_FLEET	"fleet"
#define FLAKY_CTL_F_BOX		"box"
#define FLAKY_CTL_F_SERVER	"server"
#define FLAKY_CTL_F_SINCE	"since"
#define FLAKY_CTL_F_SINCE_MS	"since_ms"
#define FLAKY_CTL_F_ATTEMPTS	"attempts"	/* failed, this state */
#define FLAKY_CTL_F_BACKLOG	"backlog"
#define FLAKY_CTL_F_OLDEST	"oldest"
#define FLAKY_CTL_F_OLDEST_MS	"oldest_ms"
#define FLAKY_CTL_F_SHIPPED	"shipped"
#define FLAKY_CTL_F_LAST_SHIP	"last_ship"
#define FLAKY_CTL_F_LAST_SHIP_MS "last_ship_ms"

/* A target's "state" in status. */
#define FLAKY_CTL_STATE_IDLE	"idle"
#define FLAKY_CTL_STATE_WAITING	"waiting"
#define FLAKY_CTL_STATE_RUNNING	"running"

/* The errors of lines that are no request: over the bound (the
 * connection is closed after it), blank, or with a NUL byte in it. */
#define FLAKY_CTL_ERR_TOO_LONG	"request line too long"
#define FLAKY_CTL_ERR_EMPTY	"empty request (expected a request name)"
#define FLAKY_CTL_ERR_NUL	"NUL byte in the request line"
/* The errors of a connection flakyd closes after it: the peer's user has
 * too many connections busy with replies; none was idle to make room;
 * or it sent no whole request for a while. */
#define FLAKY_CTL_ERR_BUSY	"too many connections from your user"
#define FLAKY_CTL_ERR_IDLE	"no request in time; closing"
#define FLAKY_CTL_ERR_REPLACED	"idle connection closed to make room for " \
	"a newer one of the same user"

/* Start a successful reply in buf: the object and "ok":true are written,
 * the caller adds its members with the writer. */
void	 flaky_ctl_reply_begin(struct flaky_jw *, struct flaky_buf *);
/* Close the reply and add its newline; 0 or the writer's error. */
int	 flaky_ctl_reply_end(struct flaky_jw *);
/* A whole failed reply: {"ok":false,"error":msg} and a newline. */
int	 flaky_ctl_reply_error(struct flaky_buf *, const char *msg);
/* Read one reply (without its newline) with the reply bounds. 0 for a
 * reply with "ok":true, *ret set; -EREMOTEIO when the daemon said no (its
 * error, or a generic one, in err); -EPROTO for valid JSON that is no
 * reply; the reader's errors otherwise. */
int	 flaky_ctl_reply_parse(const char *s, size_t n,
	    struct flaky_json **ret, char *err, size_t errlen);

#endif
