/* flakyctl: one file per command; main.c finds the command and the
 * global options. */
#ifndef FLAKYCTL_H
#define FLAKYCTL_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

enum ctl_format {
	FORMAT_TABLE,
	FORMAT_JSON,
	FORMAT_CSV,
	FORMAT_MARKDOWN,
	FORMAT_TSV,
};

/* Exit codes: 0 ok, 1 a gate or check found something, 2 usage or error. */
#define EXIT_OK		0
#define EXIT_FOUND	1
#define EXIT_ERROR	2

struct event_base;

struct ctl {
	const char	*db;		/* --db */
	const char	*config;	/* --config */
	const char	*socket;	/* --socket */
	int		 format;	/* enum ctl_format */
	int		 format_set;
	int		 color;		/* terminal and no NO_COLOR */
	int		 tty;		/* stdout is a terminal */
	unsigned	 kinds;		/* --kind: FLAKY_KIND_MASK()s, 0: default */
};

/* The global options every command accepts, before or after its name:
 * put CTL_GLOBAL_LONGOPTS at the end of a command's option array (before
 * the zero entry) and send unknown option codes to ctl_global_option(). */
#define CTL_OPT_DB	1001
#define CTL_OPT_CONFIG	1002
#define CTL_OPT_SOCKET	1003
#define CTL_OPT_FORMAT	1004
#define CTL_OPT_KIND	1005
#define CTL_GLOBAL_LONGOPTS \
	{ "db", required_argument, NULL, CTL_OPT_DB }, \
	{ "config", required_argument, NULL, CTL_OPT_CONFIG }, \
	{ "socket", required_argument, NULL, CTL_OPT_SOCKET }, \
	{ "format", required_argument, NULL, CTL_OPT_FORMAT }

/* --kind suite|alone|ingested|all (or a comma list) of the query commands
 * that count runs (report, gate, metrics, triage): which runs their rates
 * count; suite and ingested when not given. Put it in a command's option
 * array beside CTL_GLOBAL_LONGOPTS; ctl_global_option() sets ctl->kinds. */
#define CTL_KIND_LONGOPT \
	{ "kind", required_argument, NULL, CTL_OPT_KIND }

/* Returns 0 when c was a global option, -1 (after a usage message) when it
 * was not or its value is bad. */
int	 ctl_global_option(struct ctl *, int c, const char *arg);
/* Allowed formats for a command: a mask of (1 << FORMAT_x). */
int	 ctl_check_format(struct ctl *, const char *cmd, int allowed);
/* The config file: --config, $FLAKY_CONFIG, then /etc/flaky/flaky.yaml
 * when it exists; NULL when none. */
const char *ctl_config_path(struct ctl *);
/* The database path by the documented search order. Never NULL. */
const char *ctl_db_path(struct ctl *);
/* A new event base for running tests (poll, not epoll); exits on failure. */
struct event_base *ctl_event_base(void);
/* The socket path by the documented search order. Never NULL. */
const char *ctl_socket_path(struct ctl *);
void	 ctl_usage_error(const char *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

struct ctl_command {
	const char	*name;
	int		 (*run)(struct ctl *, int argc, char **argv);
	const char	*usage;
};

/* Each command's file defines one entry point. argv[0] is the command. */
int	 cmd_analyze(struct ctl *, int, char **);
int	 cmd_report(struct ctl *, int, char **);
int	 cmd_scan(struct ctl *, int, char **);
/* control.c: requests to the live flakyd */
int	 cmd_status(struct ctl *, int, char **);
int	 cmd_run(struct ctl *, int, char **);
int	 cmd_reload(struct ctl *, int, char **);
/* history over weeks (docs/history.md) */
int	 cmd_ingest(struct ctl *, int, char **);
int	 cmd_trend(struct ctl *, int, char **);
int	 cmd_quarantine(struct ctl *, int, char **);
int	 cmd_gate(struct ctl *, int, char **);
int	 cmd_prune(struct ctl *, int, char **);
int	 cmd_stats(struct ctl *, int, char **);
int	 cmd_metrics(struct ctl *, int, char **);
/* diagnosis (show.c, triage.c, ticket.c) */
int	 cmd_show(struct ctl *, int, char **);
int	 cmd_triage(struct ctl *, int, char **);
int	 cmd_ticket(struct ctl *, int, char **);
int	 cmd_confirm(struct ctl *, int, char **);

/* --since and --until as the report commands take them (report.c). */
int	 parse_window(const char *cmd, const char *since, const char *until,
	    int64_t *ret_since, int64_t *ret_until);

/* JSON output helpers (json.c). */
void	 json_string(FILE *, const char *);
void	 json_stringn(FILE *, const char *, size_t);
void	 json_double(FILE *, double);

#endif
