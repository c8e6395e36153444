/* The YAML schedule file (flaky.yaml(5)) read with libyaml into plain
 * structs. Every error is one line, "FILE:LINE:COL: what was expected". */
#ifndef FLAKY_CONF_H
#define FLAKY_CONF_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"

/* Limits on what a file may hold; beyond them it is refused. */
#define FLAKY_CONFIG_MAX_BYTES		(1024 * 1024)
#define FLAKY_CONFIG_MAX_TARGETS	10000
#define FLAKY_CONFIG_MAX_NAME		64

/* flaky_config_load() flags. */
/* Do not check that dir: exists and that the command resolves (for a
 * daemon that records a missing command as an error run instead). */
#define FLAKY_CONFIG_NO_FS_CHECKS	0x01
/* The file is flakyd's: database: must be a local file (flakyd keeps
 * its outbox there; the server goes in fleet:). */
#define FLAKY_CONFIG_DAEMON		0x02

/* A regular expression as written and compiled (REG_EXTENDED|REG_NEWLINE). */
struct flaky_regex {
	char		*src;
	regex_t		 re;
};

/* A user signature: failures matching any pattern get this name. */
struct flaky_user_signature {
	char			*name;
	struct flaky_regex	*patterns;
	size_t			 npatterns;
};

enum flaky_overlap {
	FLAKY_OVERLAP_SKIP = 0,		/* a trigger while running is skipped */
	FLAKY_OVERLAP_QUEUE,		/* at most one waits */
};

struct flaky_env {
	char		*name;
	char		*value;
};

/* perturb: holds at most this many steps */
#define FLAKY_CONFIG_MAX_PERTURB	64

/* runs: of a target with until_settled: true that gives none */
#define FLAKY_CONFIG_SETTLE_RUNS	200

struct flaky_target {
	char		*name;		/* [A-Za-z0-9._-], unique */
	char		**argv;		/* NULL-terminated, argc entries */
	size_t		 argc;
	int		 shell;		/* command: was a string; argv is
					 * { "/bin/sh", "-c", STRING } */
	char		*dir;		/* absolute; default: the file's dir */
	int		 has_schedule;	/* 0: runs only when asked */
	char		*schedule;	/* as written, or NULL */
	struct flaky_sched sched;
	int		 runs;		/* per trigger, default 1 */
	int64_t		 timeout_ms;	/* default 30m */
	struct flaky_env *env;		/* added to the minimal environment */
	size_t		 nenv;
	int64_t		 jitter_ms;	/* default 0 */
	enum flaky_overlap overlap;	/* default skip */
	int		 catch_up;	/* default 1 */
	char		*isolate;	/* template with {test}, or NULL */
	char		*revision;	/* shell command, or NULL: git HEAD */
	int		 confirm;	/* default 0; needs isolate */
	int64_t		 confirm_budget_ms; /* per trigger, default 10m */
	int		 scan;		/* default 0 */
	int		 until_settled;	/* default 0: runs stop once every
					 * failing test's tier is settled,
					 * runs: is then a maximum */
	char		*junit;		/* as written (under dir), or NULL */
	char		*stress;	/* "cpu:2" beside each run, or NULL */
	int		 risky;		/* default 0: every other trigger runs
					 * only the tests with scan findings */
	/* perturb: a cycle over the target's runs (docs/stress.md): each
	 * "calm", "shuffle", "seed" (a seed sweep's run, issue 34) or a
	 * stress as stress: takes it ("cpu:2") */
	char		**perturb;
	size_t		 nperturb;	/* 0: no cycle */
	int		 perturb_line;	/* of its first shuffle, 1-based */
	int		 perturb_col;
	int		 seed_line;	/* of its first seed (issue 34) */
	int		 seed_col;
	int		 line;		/* where the target starts, 1-based */
	int		 stacks;	/* default 1: the stacks of a run it
					 * kills at its timeout first (issue
					 * 33); false: kill at once */
	int64_t		 stacks_bound_ms; /* their time, 0: the default */
};

/* A receiver of alerts (notify:, config_notify.c, docs/alerts.md): a
 * webhook (url) or a command (argv), never both. */
#define FLAKY_NOTIFY_MAX		32
#define FLAKY_NOTIFY_WINDOW_DEFAULT	20	/* runs a tier is judged on */
#define FLAKY_NOTIFY_MIN_RUNS		5	/* before any tier is told */
enum flaky_alert_kind {
	FLAKY_ALERT_FLAKY = 0,		/* tier warning */
	FLAKY_ALERT_CRITICAL,
	FLAKY_ALERT_BROKEN,
	FLAKY_ALERT_RECOVERED,		/* back to stable */
	FLAKY_ALERT_RELEASE,		/* ready to leave quarantine */
	FLAKY_ALERT_NKINDS
};
const char *flaky_alert_kind_name(int);
int	 flaky_alert_kind_from_name(const char *);

struct flaky_receiver {
	char		*name;		/* unique; default from url/argv[0] */
	char		*url;		/* http:// or https://, or NULL */
	char		**argv;		/* NULL-terminated, or NULL */
	size_t		 argc;
	char		*ca_file;	/* https: trust this CA, not the system's */
	char		*link;		/* base of the link in each event */
	unsigned	 events;	/* 1 << enum flaky_alert_kind */
	int64_t		 timeout_ms;	/* default 10s */
	int64_t		 retry_ms;	/* first retry, default 30s, doubling */
	int64_t		 retry_max_ms;	/* default 1h */
	int64_t		 give_up_ms;	/* default 3d after the event */
	int		 line;
};

/* Uploads of CI results to the HTTP server (issue 29, docs/api.md):
 * http: uploads: true with its limits, or serve --uploads. */
struct flaky_uploads_conf {
	int		 on;
	int64_t		 max_bytes;	/* a request's body (max_upload:) */
	int		 max_seconds;	/* to send it */
	int		 in_flight;	/* uploads at once in all */
	int		 per_token;	/* at once per token */
	int		 per_minute;	/* a token's rate */
};
#define FLAKY_UPLOAD_MAX_BYTES		(256LL * 1024 * 1024)
#define FLAKY_UPLOAD_MAX_SECONDS	600
#define FLAKY_UPLOAD_IN_FLIGHT		16
#define FLAKY_UPLOAD_PER_TOKEN		4
#define FLAKY_UPLOAD_PER_MINUTE		120
/* The defaults into u (off). */
void	 flaky_uploads_conf_default(struct flaky_uploads_conf *u);

struct flaky_config {
	char		*path;		/* the file name as given */
	char		*database;	/* absolute, or NULL: not set */
	int		 jobs;		/* default 1 */
	char		*socket;	/* absolute, or NULL: not set */
	char		*timezone;	/* as written, or NULL: local zone */
	char		*box;		/* issue 15: checked, or NULL: the
					 * host name (flaky_box_resolve) */
	struct flaky_tz	*tz;		/* always set */
	int64_t		 kill_grace_ms;	/* default 10s */
	int64_t		 retention_ms;	/* 0: keep raw results forever */
	struct flaky_regex *redact;
	size_t		 nredact;
	struct flaky_user_signature *signatures;
	size_t		 nsignatures;
	struct flaky_target *targets;
	size_t		 ntargets;
	struct flaky_uploads_conf http_uploads;	/* http: uploads: ... */
	char		*http_tls_cert;	/* http: tls_cert:, absolute, or NULL */
	char		*http_tls_key;
	int		 http_behind_proxy;	/* http: behind_proxy: true */
	char		*http_listen;	/* http: ADDR:PORT, or NULL: off */
	char		*http_token_file; /* absolute, or NULL: no token */
	char		*http_database;	/* absolute, a URI, or NULL: the
					 * daemon's own */
	int		 http_database_line, http_database_col;
	struct flaky_receiver *receivers;	/* notify: */
	size_t		 nreceivers;
	int		 notify_window;	/* runs; default 20 */
	char		*fleet_url;	/* fleet: url:, no password; or NULL */
	char		*fleet_box;	/* fleet: box:, or NULL: the host's */
	int		 fleet_line;	/* where fleet: starts, 1-based */
	int		 fleet_url_line, fleet_url_col;	/* its url: value */
};

/* Read and check a schedule file. Relative paths in it (dir, database,
 * socket) are taken from the file's directory. Returns 0, -ENOENT/-EACCES
 * and the like when the file cannot be read, -EINVAL for a bad file,
 * -ENOMEM; err holds one line. */
int	 flaky_config_load(const char *path, unsigned flags,
	    struct flaky_config **ret, char *err, size_t errlen);
/* The same from memory; name is used in messages and for relative paths. */
int	 flaky_config_parse_buffer(const char *name, const char *buf,
	    size_t len, unsigned flags, struct flaky_config **ret, char *err,
	    size_t errlen);
void	 flaky_config_free(struct flaky_config *);
/* Whether a box name is one a fleet takes: [A-Za-z0-9._-], 1 to 64. */
int	 flaky_config_box_ok(const char *name);
/* The target with this name, or NULL. */
const struct flaky_target *flaky_config_target(const struct flaky_config *,
	    const char *name);

/* http: where the dashboard listens (config_http.c). */
#define FLAKY_HTTP_LISTEN	"127.0.0.1:8470"
struct flaky_listen {
	char		 host[48];	/* numeric; localhost made 127.0.0.1 */
	uint16_t	 port;		/* 0: any free port */
	int		 loopback;	/* 127/8 or ::1 */
};
/* ADDR:PORT, [V6]:PORT or localhost:PORT; 0 or -EINVAL with err. */
int	 flaky_listen_parse(const char *, struct flaky_listen *, char *err,
	    size_t errlen);

#endif
