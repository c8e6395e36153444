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
	FORMAT_GITHUB,		/* workflow commands (format_github.c) */
	FORMAT_JUNIT,		/* JUnit XML (format_junit.c) */
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
	int		 wide;		/* --wide: whole ids on a terminal */
	unsigned	 kinds;		/* --kind: FLAKY_KIND_MASK()s, 0: default */
	const char	*box;		/* --box (issue 15), checked */
	int		 writes;	/* CMD_WRITES: no system config */
};

/* The option codes of the global options (below 1000 are letters). */
#define CTL_OPT_DB	1001
#define CTL_OPT_CONFIG	1002
#define CTL_OPT_SOCKET	1003
#define CTL_OPT_FORMAT	1004
#define CTL_OPT_KIND	1005
#define CTL_OPT_HELP	1006
#define CTL_OPT_BOX	1007

/* One option of a command: --name, and -letter when it has one. */
struct cmd_option {
	const char	*name;		/* without "--"; NULL ends a table */
	int		 letter;	/* -letter as well, or 0 */
	int		 code;		/* what cmd_getopt returns; 0: letter */
	const char	*arg;		/* its argument's name; NULL: none */
	const char	*help;		/* one line */
};

/* A command declares itself once, as tmux's cmd_entry does: dispatch,
 * --help, `flakyctl help` and the man page test all read this entry. */
struct cmd_entry {
	const char	*name;
	const char	*usage;		/* the synopsis after "flakyctl " */
	const char	*summary;	/* one line */
	const char	*example;	/* command lines, one a line */
	const struct cmd_option *options;	/* NULL or ends with no name */
	int		 flags;		/* CMD_* */
	int		 (*exec)(struct ctl *, int argc, char **argv);
};
/* Options stop at the first operand ("+" to getopt): what follows it
 * belongs to the command analyze runs. */
#define CMD_STOP_AT_OPERAND	0x1
/* The command writes evidence: its database (and config) come from --db,
 * $FLAKY_DB, --config or $FLAKY_CONFIG only, never from the system's
 * /etc/flaky/flaky.yaml (the daemon's database): main.c sets ctl->writes
 * from it; docs/cli.md, "Targets, configuration, database". */
#define CMD_WRITES		0x2

/* --kind suite|alone|ingested|all (or a comma list) of the query commands
 * that count runs (report, gate, metrics, triage): which runs their rates
 * count; suite and ingested when not given. Put it in a command's option
 * table; the parser sets ctl->kinds through ctl_global_option(). */
#define CMD_OPTION_KIND \
	{ "kind", 0, CTL_OPT_KIND, "K", "which runs count: suite, alone, " \
	    "ingested, all or a comma list (default suite,ingested)" }

/* --box NAME of the commands that write runs (analyze, confirm, ingest):
 * the box they ran on (issue 15); the parser checks it into ctl->box,
 * ctl_store_box() hands it to the store. report's --box (the runs of
 * one box) is its own line with the same code. */
#define CMD_OPTION_BOX \
	{ "box", 0, CTL_OPT_BOX, "NAME", "the box the runs ran on " \
	    "(default $FLAKY_BOX, then box: of the config, then the host " \
	    "name)" }

/* The state of one command's option parsing (cmd.c): getopt_long's
 * arrays built from the entry's table and the global options. */
#define CMD_OPTIONS_MAX	32
struct cmd_getopt {
	const struct cmd_entry *entry;
	struct ctl	*ctl;
	int		 argc;
	char		**argv;
	int		 exit;		/* after -1: EXIT_OK or EXIT_ERROR */
	int		 before;	/* optind before the last option */
	struct option	 longopts[CMD_OPTIONS_MAX + 1];
	char		 shortopts[2 * CMD_OPTIONS_MAX + 4];
};

/* Every command's entry, in the order `flakyctl help` lists them
 * (main.c). */
extern const struct cmd_entry *const cmd_table[];
/* The global options: accepted by every command, before or after it. */
extern const struct cmd_option cmd_global_options[];

/* Start parsing argv (argv[0] is the command) for the entry. */
void	 cmd_getopt_init(struct cmd_getopt *, const struct cmd_entry *,
	    struct ctl *, int argc, char **argv);
/* The next option's code with its value in optarg; 0 at the end, optind
 * at the first operand; -1 after --help (exit EXIT_OK) or an error told
 * with the usage (exit EXIT_ERROR). Global options and --kind are
 * handled here (into ctl), unless the entry's table declares an option of
 * a global one's name: then it is the handler's. */
int	 cmd_getopt(struct cmd_getopt *);
/* A command's usage and options, as --help and `help CMD` print them. */
void	 cmd_print_help(FILE *, const struct cmd_entry *);
/* The entry of a command name, or NULL. */
const struct cmd_entry *cmd_find(const char *name);
/* For "did you mean": the name of names[] (n of them) a word is a
 * mistyping of (a few edits away), or NULL. */
const char *cmd_nearest(const char *word, const char *const *names, size_t n);
/* The nearest command name to a word, or NULL. */
const char *cmd_nearest_command(const char *word);

/* Returns 0 when c was a global option, -1 (after a usage message) when it
 * was not or its value is bad. */
int	 ctl_global_option(struct ctl *, int c, const char *arg);
/* 0 when target is NULL or a target of the database; -1 after a message
 * (main.c). */
struct flaky_store;
int	 ctl_check_target(struct flaky_store *, const char *cmd,
	    const char *target);
/* An unknown --box: 0 when box is NULL or a box of the stored runs, else
 * -1 after one line naming the nearest box or those there are. */
int	 ctl_check_box(struct flaky_store *, const char *cmd, const char *box);
/* Allowed formats for a command: a mask of (1 << FORMAT_x). */
int	 ctl_check_format(struct ctl *, const char *cmd, int allowed);
/* The config file: --config, $FLAKY_CONFIG, then /etc/flaky/flaky.yaml
 * when it exists, for a command that only reads (not ctl->writes) in a
 * directory without a flaky.db; NULL when none. */
const char *ctl_config_path(struct ctl *);
/* The database path by the documented search order. Never NULL. */
const char *ctl_db_path(struct ctl *);
/* The local box into the store (issue 15): --box when writes, then
 * $FLAKY_BOX, the config's box:, the host name. Exits on a bad name. */
void	 ctl_store_box(struct ctl *, struct flaky_store *, int writes);
/* A new event base for running tests (poll, not epoll); exits on failure. */
struct event_base *ctl_event_base(void);
/* The socket path by the documented search order. Never NULL. */
const char *ctl_socket_path(struct ctl *);
void	 ctl_usage_error(const char *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* analyze.c, for bisect too: a target's default name ("shop-pytest")
 * and a command as one line with the variable flakyctl set. */
struct flaky_command;
char	*default_target(const struct flaky_command *, const char *dir);
/* ingest.c, for upload too: files stored as runs into db, in one
 * transaction; EXIT_OK or EXIT_ERROR having said why. */
struct flaky_ingest;
struct flaky_ingest_file;
int	 ingest_files(struct ctl *, const char *db, const char *who,
	    struct flaky_ingest *, struct flaky_ingest_file *, size_t n);
char	*join_argv(const char *env_set, char **argv);
/* cmdline.c, for analyze and ci: is s an existing directory (and so not
 * a command)? The command the runs execute: built for directory dir, or
 * argv completed so that the runner prints every test's outcome; 0, or
 * -1 after "flakyctl: WHO: why" on stderr. */
struct flaky_command_opts;
int	 ctl_is_dir(const char *s);
/* Is the next operand a directory (not after --)? Then it is taken into
 * *dir (once) and options may follow it: `analyze tests/ --runs 50`. */
int	 ctl_dir_operand(int argc, char **argv, const char **dir);
int	 ctl_prepare_command(const char *who, const char *dir, char **argv,
	    const struct flaky_command_opts *, struct flaky_command *);
/* git.c: git -C dir ARGS (NULL-ended), run to its end: its exit status
 * (-1: it did not run), its stdout without the last newline in *out
 * when out is not NULL. ctl_git_commit: the full hash of rev, or NULL. */
int	 ctl_git(const char *dir, char **out, const char *const *args);
char	*ctl_git_commit(const char *dir, const char *rev);

/* Each command's file declares its entry. */
extern const struct cmd_entry cmd_analyze_entry;
extern const struct cmd_entry cmd_bisect_entry;
extern const struct cmd_entry cmd_verify_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_scan_entry;
/* control.c: requests to the live flakyd */
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_reload_entry;
/* history over weeks (docs/history.md) */
extern const struct cmd_entry cmd_ingest_entry;
/* token.c, upload.c: CI evidence (docs/ci.md, docs/api.md) */
extern const struct cmd_entry cmd_token_entry;
extern const struct cmd_entry cmd_upload_entry;
/* ci.c: the retry button that keeps the evidence (docs/ci.md) */
extern const struct cmd_entry cmd_ci_entry;
extern const struct cmd_entry cmd_trend_entry;
extern const struct cmd_entry cmd_quarantine_entry;
extern const struct cmd_entry cmd_gate_entry;
extern const struct cmd_entry cmd_prune_entry;
extern const struct cmd_entry cmd_serve_entry;
extern const struct cmd_entry cmd_alerts_entry;
extern const struct cmd_entry cmd_stats_entry;
extern const struct cmd_entry cmd_metrics_entry;
/* diagnosis (show.c, triage.c, ticket.c, confirm.c) */
extern const struct cmd_entry cmd_show_entry;
extern const struct cmd_entry cmd_triage_entry;
extern const struct cmd_entry cmd_ticket_entry;
extern const struct cmd_entry cmd_confirm_entry;
extern const struct cmd_entry cmd_clusters_entry;
/* init.c: a flaky.yaml to start from */
extern const struct cmd_entry cmd_init_entry;

extern const struct cmd_entry cmd_polluter_entry;

/* --since and --until as the report commands take them (report.c). */
int	 parse_window(const char *cmd, const char *since, const char *until,
	    int64_t *ret_since, int64_t *ret_until);

/* JSON output helpers (json.c). */
void	 json_string(FILE *, const char *);
void	 json_stringn(FILE *, const char *, size_t);
void	 json_double(FILE *, double);

#endif
