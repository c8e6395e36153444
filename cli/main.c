/* flakyctl: the command-line front of libflaky. */
#include "buildconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "flakyctl.h"
#include "log.h"
#include "store.h"
#include "util.h"

static const struct ctl_command commands[] = {
	{ "analyze", cmd_analyze,
	  "analyze [--runs N] [--jobs J] [--timeout D] [--target NAME] "
	  "[--junit PATH] [--fail-on TIERS] [--no-runner-cache] "
	  "(DIRECTORY | [--] COMMAND...)" },
	{ "report", cmd_report,
	  "report [--since D|DATE] [--until DATE] [--target NAME] "
	  "[--fail-on TIERS] [--sort rate|budget|trend] [--html FILE] "
	  "[--kind K]" },
	{ "scan", cmd_scan,
	  "scan [--format table|json|tsv] [--store --target NAME] PATH..." },
	{ "status", cmd_status,
	  "status [--socket PATH]" },
	{ "run", cmd_run,
	  "run [--runs N] TARGET" },
	{ "reload", cmd_reload,
	  "reload" },
	{ "ingest", cmd_ingest,
	  "ingest --target NAME [--at TIME] [--revision REV] FILE..." },
	{ "trend", cmd_trend,
	  "trend TEST [--weeks N] [--target NAME] [--until DATE]" },
	{ "quarantine", cmd_quarantine,
	  "quarantine add TEST --reason TEXT [--ticket URL] | remove TEST | "
	  "list [--release-after N] | export --format pytest|jest|plain" },
	{ "gate", cmd_gate,
	  "gate [--since D] [--max-critical N] [--max-new-flaky N] "
	  "[--max-worse N] [--max-broken N] [--kind K]" },
	{ "prune", cmd_prune,
	  "prune --older-than D" },
	{ "stats", cmd_stats,
	  "stats" },
	{ "metrics", cmd_metrics,
	  "metrics [--since D] [--target NAME] [--kind K]" },
	{ "show", cmd_show, "show TEST [--since D|all] [--target NAME] [--full]" },
	{ "triage", cmd_triage,
	  "triage [TEST] [--since D|all] [--limit N] [--kind K]" },
	{ "ticket", cmd_ticket, "ticket TEST [--since D|all] [--target NAME]" },
	{ "confirm", cmd_confirm, "confirm [TEST] [--budget D] [--max-runs N]" },
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: flakyctl [--db PATH] [--config FILE] "
	    "[--format table|json|...] COMMAND [options]\n");
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(commands); i++)
		fprintf(f, "       flakyctl %s\n", commands[i].usage);
}

void
ctl_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "flakyctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (size_t i = 0; cmd != NULL && i < FLAKY_ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, cmd) == 0)
			fprintf(stderr, "usage: flakyctl %s\n",
			    commands[i].usage);
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

int
ctl_global_option(struct ctl *ctl, int c, const char *arg)
{
	static const char *const names[] = {
		[FORMAT_TABLE] = "table", [FORMAT_JSON] = "json",
		[FORMAT_CSV] = "csv", [FORMAT_MARKDOWN] = "markdown",
		[FORMAT_TSV] = "tsv",
	};

	switch (c) {
	case CTL_OPT_DB:
		ctl->db = arg;
		return 0;
	case CTL_OPT_CONFIG:
		ctl->config = arg;
		return 0;
	case CTL_OPT_SOCKET:
		ctl->socket = arg;
		return 0;
	case CTL_OPT_KIND:
		return parse_kinds(arg, &ctl->kinds);
	case CTL_OPT_FORMAT:
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(names); i++)
			if (strcmp(arg, names[i]) == 0) {
				ctl->format = (int)i;
				ctl->format_set = 1;
				return 0;
			}
		ctl_usage_error(NULL, "unknown format '%s' (expected table, "
		    "json, csv, markdown or tsv)", arg);
		return -1;
	}
	return -1;
}

int
ctl_check_format(struct ctl *ctl, const char *cmd, int allowed)
{
	static const char *const names[] = {
		"table", "json", "csv", "markdown", "tsv"
	};

	if (allowed & (1 << ctl->format))
		return 0;
	ctl_usage_error(cmd, "--format %s is not available here",
	    names[ctl->format]);
	return -1;
}

/* A top-level "KEY:" from a config file, without the schedule machinery:
 * the first line starting with it, quotes and comments removed, a
 * relative path taken from the file's directory as flakyd does. Returns
 * buf or NULL. */
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
		if (*v != '\0' && *v != '/' && strrchr(path, '/') != NULL)
			snprintf(buf, len, "%.*s/%s",
			    (int)(strrchr(path, '/') - path), path, v);
		else
			snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
	return buf[0] ? buf : NULL;
}

const char *
ctl_config_path(struct ctl *ctl)
{
	const char	*e;

	if (ctl->config != NULL)
		return ctl->config;
	if ((e = getenv("FLAKY_CONFIG")) != NULL && *e != '\0')
		return e;
	if (access(FLAKY_DEFAULT_CONFIG, R_OK) == 0)
		return FLAKY_DEFAULT_CONFIG;
	return NULL;
}

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

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		CTL_GLOBAL_LONGOPTS,
		CTL_KIND_LONGOPT,
		{ NULL, 0, NULL, 0 }
	};
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
			if (c == '?' || ctl_global_option(&ctl, c, optarg) < 0) {
				usage(stderr);
				return EXIT_ERROR;
			}
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[0], commands[i].name) == 0) {
			optind = 0;	/* reset getopt for the command */
			return commands[i].run(&ctl, argc, argv);
		}
	}
	fprintf(stderr, "flakyctl: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return EXIT_ERROR;
}
