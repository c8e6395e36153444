/* flakyctl: the command-line front of libflaky. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "flakyctl.h"
#include "fleet/fleet.h"
#include "log.h"
#include "store/store.h"
#include "util/util.h"

static int	cmd_help(struct ctl *, int, char **);

/* flakyctl help [COMMAND]: the list, or one command's usage and options. */
static const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.usage = "help [COMMAND]",
	.summary = "List the commands, or print one command's options.",
	.example = "flakyctl help report",
	.exec = cmd_help,
};

/* The commands in the order the help lists them: running tests first,
 * then the queries, the daemon, the upkeep. */
const struct cmd_entry *const cmd_table[] = {
	&cmd_init_entry,
	&cmd_analyze_entry,
	&cmd_report_entry,
	&cmd_triage_entry,
	&cmd_clusters_entry,
	&cmd_show_entry,
	&cmd_ticket_entry,
	&cmd_confirm_entry,
	&cmd_bisect_entry,
	&cmd_verify_entry,
	&cmd_polluter_entry,
	&cmd_trend_entry,
	&cmd_gate_entry,
	&cmd_metrics_entry,
	&cmd_quarantine_entry,
	&cmd_ingest_entry,
	&cmd_token_entry,
	&cmd_upload_entry,
	&cmd_ci_entry,
	&cmd_scan_entry,
	&cmd_status_entry,
	&cmd_run_entry,
	&cmd_reload_entry,
	&cmd_prune_entry,
	&cmd_alerts_entry,
	&cmd_stats_entry,
	&cmd_serve_entry,
	&cmd_help_entry,
	NULL
};

/* The top-level usage: the global options, then one line per command. */
static void
usage(FILE *f)
{
	fprintf(f, "usage: flakyctl [--db PATH] [--config FILE] [--socket PATH] "
	    "[--format F]\n                COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; cmd_table[i] != NULL; i++)
		fprintf(f, "  %-12s %s\n", cmd_table[i]->name,
		    cmd_table[i]->summary);
	fprintf(f, "\n`flakyctl help COMMAND` or `flakyctl COMMAND --help`: "
	    "its options.\n");
}

/* One line of print_all_options: tab-separated command, --name, -x or
 * "-", and the argument's name or "-". */
static void
print_option_line(const char *cmd, const struct cmd_option *o)
{
	printf("%s\t--%s\t", cmd, o->name);
	if (o->letter != 0)
		printf("-%c", o->letter);
	else
		printf("-");
	printf("\t%s\n", o->arg != NULL ? o->arg : "-");
}

/* Every option of every command, one a line, for the man page and help
 * tests: "global" for the global options; a command without options has
 * a line of its name alone. */
static void
print_all_options(void)
{
	for (const struct cmd_option *o = cmd_global_options; o->name; o++)
		print_option_line("global", o);
	for (size_t i = 0; cmd_table[i] != NULL; i++) {
		const struct cmd_option *o = cmd_table[i]->options;

		printf("%s\n", cmd_table[i]->name);
		for (; o != NULL && o->name != NULL; o++)
			print_option_line(cmd_table[i]->name, o);
	}
}

/* "unknown command 'reprot'; did you mean 'report'?" */
static void
unknown_command(const char *cmd, const char *word)
{
	const char	*near = cmd_nearest_command(word);

	if (near != NULL)
		ctl_usage_error(cmd, "unknown command '%s'; did you mean "
		    "'%s'?", word, near);
	else
		ctl_usage_error(cmd, "unknown command '%s'", word);
}

/* flakyctl help [COMMAND]; the hidden --all-options feeds the man page
 * test and is no promise to users. */
static int
cmd_help(struct ctl *ctl, int argc, char **argv)
{
	const struct cmd_entry *e;

	(void)ctl;
	if (argc == 2 && strcmp(argv[1], "--all-options") == 0) {
		print_all_options();
		return EXIT_OK;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		cmd_print_help(stdout, &cmd_help_entry);
		return EXIT_OK;
	}
	if (argc > 2) {
		ctl_usage_error("help", "one command at a time");
		return EXIT_ERROR;
	}
	if (argc == 1) {
		usage(stdout);
		return EXIT_OK;
	}
	if ((e = cmd_find(argv[1])) == NULL) {
		unknown_command("help", argv[1]);
		return EXIT_ERROR;
	}
	cmd_print_help(stdout, e);
	return EXIT_OK;
}

/* "flakyctl CMD: message", then CMD's usage: every usage error is one
 * line and the synopsis. */
void
ctl_usage_error(const char *cmd, const char *fmt, ...)
{
	const struct cmd_entry *e = cmd != NULL ? cmd_find(cmd) : NULL;
	va_list	 ap;

	fprintf(stderr, "flakyctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (e != NULL)
		fprintf(stderr, "usage: flakyctl %s\n", e->usage);
}

/* "unknown target 'shp'; did you mean 'shop'?" or the names there are:
 * one line about name, not among names[0..n). */
static void
unknown_name(const char *cmd, const char *what, const char *name,
    char **names, size_t n)
{
	struct flaky_buf b;
	const char	*near;

	flaky_buf_init(&b);
	if ((near = cmd_nearest(name, (const char *const *)names, n)) != NULL)
		flaky_buf_printf(&b, "; did you mean '%s'?", near);
	else if (n == 0)
		flaky_buf_printf(&b, " (the database has no %ss)", what);
	else {
		flaky_buf_adds(&b, " (the database has ");
		for (size_t i = 0; i < n && i < 5; i++)
			flaky_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
		flaky_buf_adds(&b, n > 5 ? ", ...)" : ")");
	}
	fprintf(stderr, "flakyctl %s: unknown %s '%s'%s\n", cmd, what, name,
	    flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

/* Is name among names[0..n)? */
static int
name_in(const char *name, char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* An unknown --target is an error everywhere (a typo would otherwise
 * read as "0 runs"): 0 when target is NULL or in the database, else -1
 * after one line naming the nearest target or those there are. */
int
ctl_check_target(struct flaky_store *s, const char *cmd, const char *target)
{
	char		**names = NULL, err[1024];
	size_t		 n = 0;
	int		 ok;

	if (target == NULL)
		return 0;
	if (flaky_store_target_names(s, &names, &n, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
		return -1;
	}
	if (!(ok = name_in(target, names, n)))
		unknown_name(cmd, "target", target, names, n);
	flaky_store_names_free(names);
	return ok ? 0 : -1;
}

/* The same for --box: a box no run was stored of (runs.box; NULL is the
 * store's own box) is a typo, not an empty report. */
int
ctl_check_box(struct flaky_store *s, const char *cmd, const char *box)
{
	char		**names = NULL, err[1024];
	size_t		 n = 0;
	int		 r;

	if (box == NULL)
		return 0;
	if ((r = flaky_store_box_known(s, box, err, sizeof err)) == 1)
		return 0;
	if (r < 0 || flaky_store_box_names(s, INT64_MIN, &names, &n, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
		return -1;
	}
	unknown_name(cmd, "box", box, names, n);
	flaky_store_names_free(names);
	return -1;
}

/* --kind: suite, alone, ingested or all, or a comma list of them. */
static int
parse_kinds(const char *arg, unsigned *ret)
{
	const char	*p = arg;
	unsigned	 k = 0;

	while (*p != '\0') {
		size_t	 n = strcspn(p, ",");
		int	 found = 0;

		if (n == 3 && strncmp(p, "all", 3) == 0) {
			k |= FLAKY_KIND_MASK(FLAKY_KIND_SUITE) |
			    FLAKY_KIND_MASK(FLAKY_KIND_ALONE) |
			    FLAKY_KIND_MASK(FLAKY_KIND_INGESTED);
			found = 1;
		}
		for (int i = FLAKY_KIND_SUITE; !found &&
		    i <= FLAKY_KIND_INGESTED; i++)
			if (strlen(flaky_run_kind_name(i)) == n &&
			    strncmp(p, flaky_run_kind_name(i), n) == 0) {
				k |= FLAKY_KIND_MASK(i);
				found = 1;
			}
		if (!found) {
			ctl_usage_error(NULL, "--kind: expected suite, alone, "
			    "ingested or all, got '%s'", arg);
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (k == 0) {
		ctl_usage_error(NULL, "--kind: expected suite, alone, ingested "
		    "or all");
		return -1;
	}
	*ret = k;
	return 0;
}

/* A config file named on purpose must be there: ignoring it would run
 * with another database or socket without a word. 0, or -1 after one
 * line. */
static int
config_readable(const char *path, const char *how)
{
	struct stat	 st;
	int		 fd;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "flakyctl: %s %s: is a directory, expected a "
		    "configuration file\n", how, path);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "flakyctl: %s %s: %s\n", how, path,
		    strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Take one global option's value into ctl. */
int
ctl_global_option(struct ctl *ctl, int c, const char *arg)
{
	static const char *const names[] = {
		[FORMAT_TABLE] = "table", [FORMAT_JSON] = "json",
		[FORMAT_CSV] = "csv", [FORMAT_MARKDOWN] = "markdown",
		[FORMAT_TSV] = "tsv", [FORMAT_GITHUB] = "github",
		[FORMAT_JUNIT] = "junit",
	};
	char		 why[160];

	switch (c) {
	case CTL_OPT_DB:
		ctl->db = arg;
		return 0;
	case CTL_OPT_CONFIG:
		if (config_readable(arg, "--config") < 0)
			return -1;
		ctl->config = arg;
		return 0;
	case CTL_OPT_SOCKET:
		ctl->socket = arg;
		return 0;
	case CTL_OPT_KIND:
		return parse_kinds(arg, &ctl->kinds);
	case CTL_OPT_BOX:
		if (flaky_box_check(arg, why, sizeof why) < 0) {
			ctl_usage_error(NULL, "--box: %s", why);
			return -1;
		}
		ctl->box = arg;
		return 0;
	case CTL_OPT_FORMAT:
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(names); i++)
			if (strcmp(arg, names[i]) == 0) {
				ctl->format = (int)i;
				ctl->format_set = 1;
				return 0;
			}
		ctl_usage_error(NULL, "unknown format '%s' (expected table, "
		    "json, csv, markdown, tsv, github or junit)", arg);
		return -1;
	}
	return -1;
}

/* Refuse a --format the command does not print. */
int
ctl_check_format(struct ctl *ctl, const char *cmd, int allowed)
{
	static const char *const names[] = {
		"table", "json", "csv", "markdown", "tsv", "github", "junit"
	};

	if (allowed & (1 << ctl->format))
		return 0;
	ctl_usage_error(cmd, "--format %s is not available here",
	    names[ctl->format]);
	return -1;
}

/* A top-level "KEY:" from a config file, without the schedule machinery:
 * the first line starting with it, quotes and comments removed, a
 * relative path taken from the file's directory as flakyd does (unless
 * the key's value is a name: box). Returns buf or NULL. */
static const char *
config_value(const char *path, const char *key, char *buf, size_t len)
{
	char		 line[4096];
	size_t		 klen = strlen(key);
	FILE		*f;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	buf[0] = '\0';
	while (fgets(line, sizeof line, f) != NULL) {
		char	*v, *e;

		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		v = line + klen + 1;
		v += strspn(v, " \t");
		if ((e = strchr(v, '#')) != NULL)
			*e = '\0';
		e = v + strlen(v);
		while (e > v && strchr(" \t\r\n", e[-1]) != NULL)
			*--e = '\0';
		if (e > v && (*v == '"' || *v == '\'') && e[-1] == *v) {
			e[-1] = '\0';
			v++;
		}
		/* a key=value string stays as it is, for the store to
		 * refuse without printing it */
		if (*v != '\0' && *v != '/' && strrchr(path, '/') != NULL &&
		    strcmp(key, "box") != 0 && !flaky_store_is_server(v) &&
		    !flaky_fleet_is_conninfo(v))
			snprintf(buf, len, "%.*s/%s",
			    (int)(strrchr(path, '/') - path), path, v);
		else
			snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
	return buf[0] ? buf : NULL;
}

/* The system's config (the daemon's): /etc/flaky/flaky.yaml, unless
 * $FLAKYCTL_SYSTEM_CONFIG names another file (empty: none). The tests
 * set it (tests/conftest.py), so that they never read the machine's; not
 * FLAKY_*, which test helpers clear to drop the caller's settings. */
static const char *
system_config(void)
{
	const char	*e = getenv("FLAKYCTL_SYSTEM_CONFIG");

	if (e != NULL)
		return *e != '\0' ? e : NULL;
	return FLAKY_DEFAULT_CONFIG;
}

/* The config file a command reads, when there is one. A command that
 * writes evidence takes only the one it is given: the system's would
 * have it write into the daemon's database (ad-hoc runs mixed into the
 * schedule's evidence, or "readonly database" for others). One that
 * reads takes the system's too, unless the directory has its own
 * flaky.db: the report of the runs analyze just made there. */
const char *
ctl_config_path(struct ctl *ctl)
{
	const char	*e;

	if (ctl->config != NULL)
		return ctl->config;
	if ((e = getenv("FLAKY_CONFIG")) != NULL && *e != '\0') {
		if (config_readable(e, "$FLAKY_CONFIG") < 0)
			exit(EXIT_ERROR);
		return e;
	}
	if (!ctl->writes && access("flaky.db", F_OK) == -1 &&
	    (e = system_config()) != NULL && access(e, R_OK) == 0)
		return e;
	return NULL;
}

/* The database a command opens. */
const char *
ctl_db_path(struct ctl *ctl)
{
	static char	 value[4096];
	const char	*e, *cfg;

	if (ctl->db != NULL)
		return ctl->db;
	if ((e = getenv("FLAKY_DB")) != NULL && *e != '\0')
		return e;
	if ((cfg = ctl_config_path(ctl)) != NULL &&
	    (e = config_value(cfg, "database", value, sizeof value)) != NULL)
		return e;
	return "flaky.db";
}

/* The local box (issue 15) into the store: the box its runs record
 * (writes: --box first), and what runs.box NULL reads as. A bad name
 * is fatal, named with where it came from. */
void
ctl_store_box(struct ctl *ctl, struct flaky_store *s, int writes)
{
	char		 value[256], box[FLAKY_BOX_MAX + 1], err[256];
	const char	*cfg, *conf = NULL, *opt = writes ? ctl->box : NULL;

	if ((cfg = ctl_config_path(ctl)) != NULL)
		conf = config_value(cfg, "box", value, sizeof value);
	if (flaky_box_resolve(opt, conf, box, sizeof box, err,
	    sizeof err) == 0 && flaky_store_set_box(s, box, err,
	    sizeof err) == 0)
		return;
	fprintf(stderr, "flakyctl: %s%s%s\n", opt == NULL &&
	    getenv("FLAKY_BOX") == NULL ? cfg : "", opt == NULL &&
	    getenv("FLAKY_BOX") == NULL ? ": " : "", err);
	exit(EXIT_ERROR);
}

/* The event base of the commands that run tests (analyze, confirm). Their
 * descriptors change with every run (two pipes and a pidfd) and are few:
 * poll(2) takes them as they are, where epoll needs two epoll_ctl calls
 * for each, six a run (0.9 ms of benchmark (a)'s 150). flakyd, with its
 * control socket and many targets, keeps libevent's default. */
struct event_base *
ctl_event_base(void)
{
	struct event_config	*cfg;
	struct event_base	*base = NULL;

	if ((cfg = event_config_new()) != NULL) {
		event_config_avoid_method(cfg, "epoll");
		base = event_base_new_with_config(cfg);
		event_config_free(cfg);
	}
	if (base == NULL && (base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	return base;
}

/* "socket:" is read the same way as "database:". */
const char *
ctl_socket_path(struct ctl *ctl)
{
	static char	 value[4096];
	const char	*e, *cfg;

	if (ctl->socket != NULL)
		return ctl->socket;
	if ((e = getenv("FLAKY_SOCKET")) != NULL && *e != '\0')
		return e;
	if ((cfg = ctl_config_path(ctl)) != NULL &&
	    (e = config_value(cfg, "socket", value, sizeof value)) != NULL)
		return e;
	return FLAKY_DEFAULT_SOCKET;
}

/* The global options before the command, then the command's entry. */
int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "db", required_argument, NULL, CTL_OPT_DB },
		{ "config", required_argument, NULL, CTL_OPT_CONFIG },
		{ "socket", required_argument, NULL, CTL_OPT_SOCKET },
		{ "format", required_argument, NULL, CTL_OPT_FORMAT },
		{ "kind", required_argument, NULL, CTL_OPT_KIND },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd_entry *e;
	struct ctl	 ctl;
	const char	*nc;
	int		 c;

	memset(&ctl, 0, sizeof ctl);
	log_init("flakyctl", 0);
	ctl.tty = isatty(STDOUT_FILENO);
	nc = getenv("NO_COLOR");
	ctl.color = ctl.tty && (nc == NULL || *nc == '\0') &&
	    (getenv("TERM") == NULL || strcmp(getenv("TERM"), "dumb") != 0);

	/* Global options before the command; "+" stops at the command. */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("flakyctl %s\n", FLAKY_VERSION);
			return EXIT_OK;
		default:
			if (c == '?') {
				usage(stderr);
				return EXIT_ERROR;
			}
			/* a bad value: its one line is said */
			if (ctl_global_option(&ctl, c, optarg) < 0)
				return EXIT_ERROR;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return EXIT_ERROR;
	}
	if ((e = cmd_find(argv[0])) == NULL) {
		unknown_command(NULL, argv[0]);
		if (cmd_nearest_command(argv[0]) == NULL)
			usage(stderr);
		return EXIT_ERROR;
	}
	optind = 0;	/* reset getopt for the command */
	ctl.writes = (e->flags & CMD_WRITES) != 0;
	return e->exec(&ctl, argc, argv);
}
