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

#include "flakyctl.h"
#include "log.h"
#include "util.h"

#define REPLY_MAX	(64 * 1024 * 1024)
#define REPLY_TIMEOUT_MS 30000
#define JSON_DEPTH_MAX	16
#define CONNECT_TRIES	3
#define CONNECT_WAIT_SEC 5

/* A parsed JSON value: enough for the daemon's replies. */
enum { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
	int		 type;
	double		 num;		/* JV_NUM, JV_BOOL */
	char		*str;		/* JV_STR */
	struct jv	*v;		/* JV_ARR, JV_OBJ */
	char		**keys;		/* JV_OBJ */
	size_t		 n;
};

/* Free a parsed value's contents. */
static void
jv_free(struct jv *j)
{
	if (j == NULL)
		return;
	free(j->str);
	for (size_t i = 0; i < j->n; i++) {
		jv_free(&j->v[i]);
		if (j->keys != NULL)
			free(j->keys[i]);
	}
	free(j->v);
	free(j->keys);
	memset(j, 0, sizeof *j);
}

/* Skip JSON white space. */
static void
skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

/* A JSON string at *p (after the quote check) into a new C string;
 * \u escapes below 0x80 are kept, others become '?' (display only). */
static char *
parse_str(const char **p)
{
	struct flaky_buf b;
	const char	*s = *p + 1;

	flaky_buf_init(&b);
	while (*s != '"') {
		if (*s == '\0')
			goto bad;
		if (*s != '\\') {
			flaky_buf_addc(&b, *s++);
			continue;
		}
		s++;
		switch (*s) {
		case 'n': flaky_buf_addc(&b, '\n'); break;
		case 't': flaky_buf_addc(&b, '\t'); break;
		case 'r': flaky_buf_addc(&b, '\r'); break;
		case 'b': flaky_buf_addc(&b, '\b'); break;
		case 'f': flaky_buf_addc(&b, '\f'); break;
		case 'u': {
			unsigned cp = 0;

			for (int i = 1; i <= 4; i++) {
				char	 c = s[i];

				cp <<= 4;
				if (c >= '0' && c <= '9')
					cp |= (unsigned)(c - '0');
				else if (c >= 'a' && c <= 'f')
					cp |= (unsigned)(c - 'a' + 10);
				else if (c >= 'A' && c <= 'F')
					cp |= (unsigned)(c - 'A' + 10);
				else
					goto bad;
			}
			flaky_buf_addc(&b, cp >= 0x20 && cp < 0x7f ?
			    (char)cp : '?');
			s += 4;
			break;
		}
		case '\0':
			goto bad;
		default:
			flaky_buf_addc(&b, *s);
		}
		s++;
	}
	*p = s + 1;
	if (b.oom)
		goto bad;
	return flaky_buf_steal(&b);
bad:
	flaky_buf_free(&b);
	return NULL;
}

/* One JSON value at *p, nested at most JSON_DEPTH_MAX deep. */
static int
parse_value(const char **p, struct jv *out, int depth)
{
	memset(out, 0, sizeof *out);
	skip_ws(p);
	if (depth > JSON_DEPTH_MAX)
		return -1;
	switch (**p) {
	case '"':
		out->type = JV_STR;
		return (out->str = parse_str(p)) ? 0 : -1;
	case '{':
	case '[': {
		int	 obj = **p == '{';
		char	 close = obj ? '}' : ']';
		size_t	 cap = 0;

		out->type = obj ? JV_OBJ : JV_ARR;
		(*p)++;
		skip_ws(p);
		if (**p == close) {
			(*p)++;
			return 0;
		}
		for (;;) {
			char	*key = NULL;

			skip_ws(p);
			if (obj) {
				if (**p != '"' || (key = parse_str(p)) == NULL)
					return -1;
				skip_ws(p);
				if (**p != ':') {
					free(key);
					return -1;
				}
				(*p)++;
			}
			if (out->n == cap) {
				cap = cap ? cap * 2 : 8;
				out->v = xreallocarray(out->v, cap,
				    sizeof *out->v);
				if (obj)
					out->keys = xreallocarray(out->keys,
					    cap, sizeof *out->keys);
			}
			if (obj)
				out->keys[out->n] = key;
			if (parse_value(p, &out->v[out->n], depth + 1) < 0) {
				out->n++;
				return -1;
			}
			out->n++;
			skip_ws(p);
			if (**p == ',') {
				(*p)++;
				continue;
			}
			if (**p != close)
				return -1;
			(*p)++;
			return 0;
		}
	}
	case 't':
		if (strncmp(*p, "true", 4) != 0)
			return -1;
		out->type = JV_BOOL;
		out->num = 1;
		*p += 4;
		return 0;
	case 'f':
		if (strncmp(*p, "false", 5) != 0)
			return -1;
		out->type = JV_BOOL;
		*p += 5;
		return 0;
	case 'n':
		if (strncmp(*p, "null", 4) != 0)
			return -1;
		*p += 4;
		return 0;
	default: {
		char	*end;

		out->type = JV_NUM;
		out->num = strtod(*p, &end);
		if (end == *p)
			return -1;
		*p = end;
		return 0;
	}
	}
}

/* A member of an object, or NULL. */
static const struct jv *
jv_get(const struct jv *o, const char *key)
{
	if (o == NULL || o->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->v[i];
	return NULL;
}

/* A string member, or NULL. */
static const char *
jv_str(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return v != NULL && v->type == JV_STR ? v->str : NULL;
}

/* A number or boolean member, or NAN. */
static double
jv_num(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return v != NULL && (v->type == JV_NUM || v->type == JV_BOOL) ?
	    v->num : NAN;
}

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
		if (b.oom || b.len > REPLY_MAX) {
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

/* Ask, parse, check "ok"; prints the daemon's error. */
static int
ask_json(struct ctl *ctl, const char *cmd, const char *req, char **ret_raw,
    struct jv *ret)
{
	const char	*p;
	const struct jv	*ok;

	memset(ret, 0, sizeof *ret);
	if (ask(ctl, cmd, req, ret_raw) < 0)
		return -1;
	p = *ret_raw;
	if (parse_value(&p, ret, 0) < 0 || ret->type != JV_OBJ) {
		fprintf(stderr, "flakyctl %s: cannot read flakyd's answer\n",
		    cmd);
		return -1;
	}
	ok = jv_get(ret, "ok");
	if (ok == NULL || ok->type != JV_BOOL || !ok->num) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd,
		    jv_str(ret, "error") ? jv_str(ret, "error") :
		    "flakyd refused");
		return -1;
	}
	return 0;
}

static int	cmd_status(struct ctl *, int, char **);
static int	cmd_run(struct ctl *, int, char **);
static int	cmd_reload(struct ctl *, int, char **);

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "status [--socket PATH] [--format table|json]",
	.summary = "The live flakyd's targets, next fire times and last "
	    "results.",
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
	.options = run_options,
	.exec = cmd_run,
};

const struct cmd_entry cmd_reload_entry = {
	.name = "reload",
	.usage = "reload",
	.summary = "Make flakyd reread its schedule, as SIGHUP does.",
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
		if (flaky_parse_int(optarg, 1, 10000, &v) < 0) {
			ctl_usage_error(e->name, "--runs: expected a number "
			    "from 1 to 10000");
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

/* status as a table: the daemon, then one line per target. */
static void
print_status_table(const struct jv *st)
{
	const struct jv	*targets = jv_get(st, "targets");
	size_t		 w = 6;

	printf("flakyd %s, pid %.0f, up since ", jv_str(st, "version") ?
	    jv_str(st, "version") : "?", jv_num(st, "pid"));
	print_time(jv_str(st, "started"));
	printf(" (%s)\n", jv_str(st, "timezone") ? jv_str(st, "timezone") :
	    "?");
	printf("config %s, database %s\n", jv_str(st, "config") ?
	    jv_str(st, "config") : "?", jv_str(st, "database") ?
	    jv_str(st, "database") : "?");
	printf("jobs %.0f: %.0f running, %.0f waiting", jv_num(st, "jobs"),
	    jv_num(st, "running"), jv_num(st, "waiting"));
	if (jv_num(st, "unstored") > 0)
		printf(", %.0f finished runs not yet stored",
		    jv_num(st, "unstored"));
	if (jv_num(st, "stopping") > 0)
		printf(", stopping");
	printf("\n\n");
	if (targets == NULL || targets->type != JV_ARR || targets->n == 0) {
		printf("no targets\n");
		return;
	}
	for (size_t i = 0; i < targets->n; i++) {
		const char *name = jv_str(&targets->v[i], "name");

		if (name != NULL && strlen(name) > w)
			w = strlen(name);
	}
	printf("%-*s  %-16s  %-19s  %-12s  %-19s  %-11s  %5s  %8s\n", (int)w,
	    "TARGET", "SCHEDULE", "NEXT", "STATE", "LAST RUN", "LAST", "TESTS",
	    "FAILURES");
	for (size_t i = 0; i < targets->n; i++) {
		const struct jv	*t = &targets->v[i];
		const struct jv	*last = jv_get(t, "last");
		const char	*state = jv_str(t, "state");
		char		 sbuf[32];

		if (state != NULL && !isnan(jv_num(t, "confirm_runs"))) {
			/* after its runs, tests alone (confirm: true) */
			snprintf(sbuf, sizeof sbuf, "confirm %.0f",
			    jv_num(t, "confirm_runs"));
			state = sbuf;
		} else if (state != NULL && strcmp(state, "idle") != 0 &&
		    !isnan(jv_num(t, "runs"))) {
			snprintf(sbuf, sizeof sbuf, "%s %.0f/%.0f", state,
			    jv_num(t, "run"), jv_num(t, "runs"));
			state = sbuf;
		}
		printf("%-*s  %-16.16s  ", (int)w, jv_str(t, "name") ?
		    jv_str(t, "name") : "?", jv_str(t, "schedule") ?
		    jv_str(t, "schedule") : "manual");
		print_time(jv_str(t, "next_fire"));
		printf("  %-12s  ", state ? state : "?");
		if (last == NULL || last->type != JV_OBJ) {
			print_time(NULL);
			printf("  %-11s  %5s  %8s\n", "-", "-", "-");
			continue;
		}
		print_time(jv_str(last, "started"));
		printf("  %-11s  %5.0f  %8.0f\n", jv_str(last, "status") ?
		    jv_str(last, "status") : "?", jv_num(last, "tests"),
		    jv_num(last, "failures"));
	}
}

/* flakyctl status: the live daemon's targets and runs. */
static int
cmd_status(struct ctl *ctl, int argc, char **argv)
{
	struct jv	 st;
	char		*raw = NULL;
	int		 r = EXIT_ERROR, i, runs = 0;

	if ((i = parse_opts(ctl, &cmd_status_entry, argc, argv, &runs,
	    &r)) < 0)
		return r;
	if (i != argc) {
		ctl_usage_error("status", "unexpected argument '%s'", argv[i]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "status", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	if (ask_json(ctl, "status", "status\n", &raw, &st) == 0) {
		if (ctl->format == FORMAT_JSON)
			printf("%s\n", raw);
		else
			print_status_table(&st);
		r = EXIT_OK;
	}
	jv_free(&st);
	free(raw);
	return r;
}

/* flakyctl run TARGET [--runs N]: trigger a target now. */
static int
cmd_run(struct ctl *ctl, int argc, char **argv)
{
	struct jv	 st;
	char		*raw = NULL, *req = NULL;
	int		 r = EXIT_ERROR, i, runs = 0;

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
	/* Names are [A-Za-z0-9._-]: nothing to quote, but no line breaks
	 * or spaces may smuggle a second request either. */
	if (argv[i][strcspn(argv[i], " \t\r\n")] != '\0' ||
	    argv[i][0] == '\0') {
		ctl_usage_error("run", "not a target name: '%s'", argv[i]);
		return EXIT_ERROR;
	}
	if (runs > 0)
		xasprintf(&req, "run %s %d\n", argv[i], runs);
	else
		xasprintf(&req, "run %s\n", argv[i]);
	if (ask_json(ctl, "run", req, &raw, &st) == 0) {
		if (ctl->format == FORMAT_JSON)
			printf("%s\n", raw);
		else
			printf("%s: %.0f run%s %s\n", argv[i],
			    jv_num(&st, "runs"), jv_num(&st, "runs") == 1 ?
			    "" : "s", jv_num(&st, "queued") > 0 ?
			    "queued behind the running trigger" :
			    "triggered");
		r = EXIT_OK;
	}
	jv_free(&st);
	free(raw);
	free(req);
	return r;
}

/* flakyctl reload: make flakyd read its schedule file again. */
static int
cmd_reload(struct ctl *ctl, int argc, char **argv)
{
	struct jv	 st;
	char		*raw = NULL;
	int		 r = EXIT_ERROR, i, runs = 0;

	if ((i = parse_opts(ctl, &cmd_reload_entry, argc, argv, &runs,
	    &r)) < 0)
		return r;
	if (i != argc) {
		ctl_usage_error("reload", "unexpected argument '%s'", argv[i]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "reload", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	if (ask_json(ctl, "reload", "reload\n", &raw, &st) == 0) {
		if (ctl->format == FORMAT_JSON)
			printf("%s\n", raw);
		else
			printf("reloaded: %.0f targets\n",
			    jv_num(&st, "targets"));
		r = EXIT_OK;
	}
	jv_free(&st);
	free(raw);
	return r;
}
