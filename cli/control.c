/* flakyctl status, run and reload: one request line to the live flakyd
 * over its control socket, one JSON line back. Reports and queries read
 * the database directly; only these need the daemon. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "flakyctl.h"
#include "json/json.h"
#include "log.h"
#include "util/util.h"

#define REPLY_TIMEOUT_MS 30000
#define CONNECT_TRIES	3
#define CONNECT_WAIT_SEC 5

/* Send one request, read one reply line into *ret (malloc'd). */
static int
ask(struct ctl *ctl, const char *cmd, const char *req, char **ret)
{
	const char	*path = ctl_socket_path(ctl);
	struct sockaddr_un sun;
	struct flaky_buf b;
	size_t		 len = strlen(req);
	int		 fd, r = -1;

	*ret = NULL;
	flaky_buf_init(&b);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "flakyctl %s: %s: socket path too long\n", cmd,
		    path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		fprintf(stderr, "flakyctl %s: socket: %s\n", cmd,
		    strerror(errno));
		return -1;
	}
	/* A full backlog (the daemon bounds its connections) makes connect
	 * wait up to the send timeout, then EAGAIN: try a few times. */
	{
		struct timeval tv = { CONNECT_WAIT_SEC, 0 };

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	for (int i = 0; connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1;
	    i++) {
		if (errno == EAGAIN && i < CONNECT_TRIES)
			continue;
		if (errno == EAGAIN)
			fprintf(stderr, "flakyctl %s: %s: flakyd accepts no "
			    "connection (too many clients?)\n", cmd, path);
		else if (errno == ENOENT)
			fprintf(stderr, "flakyctl %s: flakyd is not running? "
			    "no socket at %s\n", cmd, path);
		else if (errno == ECONNREFUSED)
			fprintf(stderr, "flakyctl %s: flakyd is not running? "
			    "nothing listens on %s\n", cmd, path);
		else if (errno == EACCES)
			fprintf(stderr, "flakyctl %s: %s: permission denied "
			    "(members of the socket's group may use it)\n",
			    cmd, path);
		else
			fprintf(stderr, "flakyctl %s: %s: %s\n", cmd, path,
			    strerror(errno));
		goto out;
	}
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		fprintf(stderr, "flakyctl %s: %s: %s\n", cmd, path,
		    strerror(errno));
		goto out;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd	 pfd = { fd, POLLIN, 0 };
		char		 buf[65536];
		ssize_t		 n;

		if (poll(&pfd, 1, REPLY_TIMEOUT_MS) == 0) {
			fprintf(stderr, "flakyctl %s: no answer from flakyd "
			    "within %ds\n", cmd, REPLY_TIMEOUT_MS / 1000);
			goto out;
		}
		n = read(fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			fprintf(stderr, "flakyctl %s: %s: %s\n", cmd, path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		flaky_buf_add(&b, buf, (size_t)n);
		/* The bound of the reply, its newline besides. */
		if (b.oom || b.len > FLAKY_CTL_REPLY_MAX + 1) {
			fprintf(stderr, "flakyctl %s: reply too large\n", cmd);
			goto out;
		}
		if (memchr(buf, '\n', (size_t)n) != NULL)
			break;
	}
	if (b.len == 0 || memchr(b.data, '\n', b.len) == NULL) {
		fprintf(stderr, "flakyctl %s: flakyd closed the connection "
		    "without an answer\n", cmd);
		goto out;
	}
	b.data[strcspn(b.data, "\n")] = '\0';
	*ret = flaky_buf_steal(&b);
	r = 0;
out:
	flaky_buf_free(&b);
	close(fd);
	return r;
}

/* Encode req, ask, read the reply with the protocol's reader; prints
 * the daemon's error or why its answer cannot be read, under the
 * command's name (each of these commands is named after its request). */
static int
ask_json(struct ctl *ctl, const struct flaky_ctl_request *req,
    char **ret_raw, struct flaky_json **ret)
{
	const char	*cmd = flaky_ctl_request_name(req->type);
	struct flaky_buf line;
	char		 err[512];
	int		 rc;

	*ret = NULL;
	*ret_raw = NULL;
	flaky_buf_init(&line);
	if ((rc = flaky_ctl_request_encode(req, &line, err, sizeof err)) < 0) {
		if (rc == -ENOMEM)
			fatalx("out of memory");
		ctl_usage_error(cmd, "%s", err);
		flaky_buf_free(&line);
		return -1;
	}
	rc = ask(ctl, cmd, line.data, ret_raw);
	flaky_buf_free(&line);
	if (rc < 0)
		return -1;
	rc = flaky_ctl_reply_parse(*ret_raw, strlen(*ret_raw), ret, err,
	    sizeof err);
	if (rc == -EREMOTEIO)
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
	else if (rc < 0)
		fprintf(stderr, "flakyctl %s: cannot read flakyd's answer: "
		    "%s\n", cmd, err);
	return rc < 0 ? -1 : 0;
}

static int	cmd_status(struct ctl *, int, char **);
static int	cmd_run(struct ctl *, int, char **);
static int	cmd_reload(struct ctl *, int, char **);

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "status [--socket PATH] [--format table|json]",
	.summary = "The live flakyd's targets, next fire times and last "
	    "results.",
	.example = "flakyctl status --format json",
	.exec = cmd_status,
};

static const struct cmd_option run_options[] = {
	{ "runs", 'n', 0, "N", "how many runs (default the target's runs:)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "run [--runs N] TARGET",
	.summary = "Ask flakyd to trigger a target now.",
	.example = "flakyctl run --runs 20 shop-pytest",
	.options = run_options,
	.exec = cmd_run,
};

const struct cmd_entry cmd_reload_entry = {
	.name = "reload",
	.usage = "reload",
	.summary = "Make flakyd reread its schedule, as SIGHUP does.",
	.example = "flakyctl reload",
	.exec = cmd_reload,
};

/* The options of the three: run's --runs, and the global ones. Returns
 * the index of the first operand, or -1 with *ret_exit set. */
static int
parse_opts(struct ctl *ctl, const struct cmd_entry *e, int argc,
    char **argv, int *ret_runs, int *ret_exit)
{
	struct cmd_getopt g;
	long long	 v;
	int		 c;

	cmd_getopt_init(&g, e, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (c != 'n')
			continue;
		if (flaky_parse_int(optarg, 1, FLAKY_CTL_RUNS_MAX, &v) < 0) {
			ctl_usage_error(e->name, "--runs: expected a number "
			    "from 1 to %d", FLAKY_CTL_RUNS_MAX);
			*ret_exit = EXIT_ERROR;
			return -1;
		}
		*ret_runs = (int)v;
	}
	if (c < 0) {
		*ret_exit = g.exit;
		return -1;
	}
	return optind;
}

/* An ISO 8601 time as "DATE TIME" in 19 columns, or "-". */
static void
print_time(const char *iso)
{
	/* "2026-11-30T02:10:05+01:00" -> "2026-11-30 02:10:05" */
	if (iso == NULL) {
		printf("%-19s", "-");
		return;
	}
	printf("%.10s %.8s", iso, strlen(iso) > 11 ? iso + 11 : "");
}

/* A string member, or dflt when it is missing or null. */
static const char *
str_or(const struct flaky_json *o, const char *key, const char *dflt)
{
	const char	*s = flaky_json_get_str(o, key);

	return s != NULL ? s : dflt;
}

/* A number member, or NaN (lib/json.h). */
static double
num(const struct flaky_json *o, const char *key)
{
	return flaky_json_get_num(o, key);
}

/* status's fleet line: where runs ship, how it goes, what waits. */
static void
print_status_fleet(const struct flaky_json *st)
{
	const struct flaky_json *f = flaky_json_get(st, FLAKY_CTL_F_FLEET);
	const char	*err;

	if (f == NULL || f->type != FLAKY_JSON_OBJECT)
		return;
	printf("fleet: box %s to %s: %s", str_or(f, FLAKY_CTL_F_BOX, "?"),
	    str_or(f, FLAKY_CTL_F_SERVER, "?"), str_or(f, FLAKY_CTL_F_STATE,
	    "?"));
	if ((err = flaky_json_get_str(f, FLAKY_CTL_F_ERROR)) != NULL) {
		printf(" since ");
		print_time(flaky_json_get_str(f, FLAKY_CTL_F_SINCE));
		printf(" (%s)", err);
	}
	printf("; %.0f finished run%s waiting", num(f, FLAKY_CTL_F_BACKLOG),
	    num(f, FLAKY_CTL_F_BACKLOG) == 1 ? "" : "s");
	if (flaky_json_get_str(f, FLAKY_CTL_F_OLDEST) != NULL) {
		printf(", the oldest ended ");
		print_time(flaky_json_get_str(f, FLAKY_CTL_F_OLDEST));
	}
	printf("; %.0f shipped\n", num(f, FLAKY_CTL_F_SHIPPED));
}

/* status as a table: the daemon, then one line per target. */
static void
print_status_table(const struct flaky_json *st)
{
	const struct flaky_json *targets;
	size_t		 w = 6;

	targets = flaky_json_get(st, FLAKY_CTL_F_TARGETS);
	printf("flakyd %s, pid %.0f, up since ", str_or(st, FLAKY_CTL_F_VERSION,
	    "?"), num(st, FLAKY_CTL_F_PID));
	print_time(flaky_json_get_str(st, FLAKY_CTL_F_STARTED));
	printf(" (%s)\n", str_or(st, FLAKY_CTL_F_TIMEZONE, "?"));
	printf("config %s, database %s\n", str_or(st, FLAKY_CTL_F_CONFIG, "?"),
	    str_or(st, FLAKY_CTL_F_DATABASE, "?"));
	printf("jobs %.0f: %.0f running, %.0f waiting", num(st,
	    FLAKY_CTL_F_JOBS), num(st, FLAKY_CTL_F_RUNNING), num(st,
	    FLAKY_CTL_F_WAITING));
	if (num(st, FLAKY_CTL_F_UNSTORED) > 0)
		printf(", %.0f finished run%s not yet stored",
		    num(st, FLAKY_CTL_F_UNSTORED), num(st,
		    FLAKY_CTL_F_UNSTORED) == 1 ? "" : "s");
	if (num(st, FLAKY_CTL_F_STOPPING) > 0)
		printf(", stopping");
	printf("\n");
	print_status_fleet(st);
	printf("\n");
	if (targets == NULL || targets->type != FLAKY_JSON_ARRAY ||
	    targets->len == 0) {
		printf("no targets\n");
		return;
	}
	for (size_t i = 0; i < targets->len; i++) {
		const char *name = flaky_json_get_str(&targets->items[i],
		    FLAKY_CTL_F_NAME);

		if (name != NULL && strlen(name) > w)
			w = strlen(name);
	}
	printf("%-*s  %-16s  %-19s  %-12s  %-19s  %-11s  %5s  %8s\n", (int)w,
	    "TARGET", "SCHEDULE", "NEXT", "STATE", "LAST RUN", "LAST", "TESTS",
	    "FAILURES");
	for (size_t i = 0; i < targets->len; i++) {
		const struct flaky_json *t = &targets->items[i];
		const struct flaky_json *last = flaky_json_get(t,
		    FLAKY_CTL_F_LAST);
		const char	*state = flaky_json_get_str(t,
		    FLAKY_CTL_F_STATE);
		char		 sbuf[32];

		if (state != NULL && !isnan(num(t, FLAKY_CTL_F_CONFIRM_RUNS))) {
			/* after its runs, tests alone (confirm: true) */
			snprintf(sbuf, sizeof sbuf, "confirm %.0f",
			    num(t, FLAKY_CTL_F_CONFIRM_RUNS));
			state = sbuf;
		} else if (state != NULL &&
		    strcmp(state, FLAKY_CTL_STATE_IDLE) != 0 &&
		    !isnan(num(t, FLAKY_CTL_F_RUNS))) {
			snprintf(sbuf, sizeof sbuf, "%s %.0f/%.0f", state,
			    num(t, FLAKY_CTL_F_RUN), num(t, FLAKY_CTL_F_RUNS));
			state = sbuf;
		}
		printf("%-*s  %-16.16s  ", (int)w, str_or(t, FLAKY_CTL_F_NAME,
		    "?"), str_or(t, FLAKY_CTL_F_SCHEDULE, "manual"));
		print_time(flaky_json_get_str(t, FLAKY_CTL_F_NEXT_FIRE));
		printf("  %-12s  ", state ? state : "?");
		if (last == NULL || last->type != FLAKY_JSON_OBJECT) {
			print_time(NULL);
			printf("  %-11s  %5s  %8s\n", "-", "-", "-");
			continue;
		}
		print_time(flaky_json_get_str(last, FLAKY_CTL_F_STARTED));
		printf("  %-11s  %5.0f  %8.0f\n", str_or(last,
		    FLAKY_CTL_F_STATUS, "?"), num(last, FLAKY_CTL_F_TESTS),
		    num(last, FLAKY_CTL_F_FAILURES));
	}
}

/* A request that takes no argument: flakyd's reply as it came (JSON), or
 * as print puts it for people. */
static int
ask_plain(struct ctl *ctl, const struct cmd_entry *e,
    enum flaky_ctl_type type, int argc, char **argv,
    void (*print)(const struct flaky_json *))
{
	const struct flaky_ctl_request req = { .type = type };
	struct flaky_json *st = NULL;
	char		*raw = NULL;
	int		 r = EXIT_ERROR, i, runs = 0;

	if ((i = parse_opts(ctl, e, argc, argv, &runs, &r)) < 0)
		return r;
	if (i != argc) {
		ctl_usage_error(e->name, "unexpected argument '%s'", argv[i]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, e->name, 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	if (ask_json(ctl, &req, &raw, &st) == 0) {
		if (ctl->format == FORMAT_JSON)
			printf("%s\n", raw);
		else
			print(st);
		r = EXIT_OK;
	}
	flaky_json_free(st);
	free(raw);
	return r;
}

/* flakyctl status: the live daemon's targets and runs. */
static int
cmd_status(struct ctl *ctl, int argc, char **argv)
{
	return ask_plain(ctl, &cmd_status_entry, FLAKY_CTL_STATUS, argc, argv,
	    print_status_table);
}

/* flakyctl run TARGET [--runs N]: trigger a target now. */
static int
cmd_run(struct ctl *ctl, int argc, char **argv)
{
	struct flaky_ctl_request req = { .type = FLAKY_CTL_RUN };
	struct flaky_json *st = NULL;
	char		*raw = NULL;
	int		 r = EXIT_ERROR, i, runs = 0;
	double		 n;

	if ((i = parse_opts(ctl, &cmd_run_entry, argc, argv, &runs, &r)) < 0)
		return r;
	if (argc - i != 1) {
		ctl_usage_error("run", argc == i ? "a target name is needed" :
		    "one target at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "run", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	/* The encoder refuses a name with blanks or line breaks, which
	 * could otherwise smuggle a second request. */
	req.target = argv[i];
	req.runs = runs;
	if (ask_json(ctl, &req, &raw, &st) == 0) {
		n = num(st, FLAKY_CTL_F_RUNS);
		if (ctl->format == FORMAT_JSON)
			printf("%s\n", raw);
		else
			printf("%s: %.0f run%s %s\n", argv[i], n, n == 1 ?
			    "" : "s", num(st, FLAKY_CTL_F_QUEUED) > 0 ?
			    "queued behind the running trigger" :
			    "triggered");
		r = EXIT_OK;
	}
	flaky_json_free(st);
	free(raw);
	return r;
}

/* reload's answer for people. */
static void
print_reloaded(const struct flaky_json *st)
{
	printf("reloaded: %.0f targets\n", num(st, FLAKY_CTL_F_TARGETS));
}

/* flakyctl reload: make flakyd read its schedule file again. */
static int
cmd_reload(struct ctl *ctl, int argc, char **argv)
{
	return ask_plain(ctl, &cmd_reload_entry, FLAKY_CTL_RELOAD, argc, argv,
	    print_reloaded);
}
