/* flakyctl serve: the dashboard and the API of a database without the
 * daemon, through the server flakyd runs (lib/http). Read-only. */
#include "buildconf.h"

#include <signal.h>
#include <stdio.h>

#include <event2/event.h>

#include "flakyctl.h"
#include "config/config.h"
#include "http/http.h"
#include "store/store.h"

static int	cmd_serve(struct ctl *, int, char **);

static const struct cmd_option serve_options[] = {
	{ "listen", 'l', 0, "ADDR:PORT", "where to listen (default "
	    FLAKY_HTTP_LISTEN "; another address than loopback needs "
	    "--token-file; port 0: any free port)" },
	{ "token-file", 't', 0, "PATH", "a file whose first line is the "
	    "bearer token every request must carry (default none: "
	    "loopback only)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_serve_entry = {
	.name = "serve",
	.usage = "serve [--listen ADDR:PORT] [--token-file PATH]",
	.summary = "Serve the dashboard and the API of a database over HTTP.",
	.example = "flakyctl --db flaky.db serve\n"
	    "flakyctl serve --listen 0.0.0.0:8470 --token-file /etc/flaky/token",
	.options = serve_options,
	.exec = cmd_serve,
};

/* SIGINT, SIGTERM: stop serving. */
static void
serve_signal(evutil_socket_t sig, short ev, void *arg)
{
	(void)sig;
	(void)ev;
	event_base_loopbreak(arg);
}

/* The database went or came back (a server restart, an outage): said
 * once per change; meanwhile the pages answer 503. arg: the database as
 * shown. */
static void
serve_db_state(void *arg, int up, const char *why)
{
	if (up)
		fprintf(stderr, "flakyctl serve: %s: reachable again; serving "
		    "pages\n", (const char *)arg);
	else
		fprintf(stderr, "flakyctl serve: %s; pages and /healthz answer "
		    "503 until it is back, retrying with backoff\n", why);
	fflush(stderr);
}

/* flakyctl serve: serve until a signal. */
static int
cmd_serve(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_http_conf conf = { .listen = FLAKY_HTTP_LISTEN };
	struct flaky_http *h = NULL;
	struct event_base *base;
	struct event	*sig[2] = { NULL, NULL };
	char		 err[1024], shown[256];
	int		 c, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_serve_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'l':
			conf.listen = optarg;
			break;
		case 't':
			conf.token_file = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("serve", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "serve", 1 << FORMAT_TABLE) < 0)
		return EXIT_ERROR;
	conf.db_path = ctl_db_path(ctl);
	conf.db_state = serve_db_state;
	conf.db_state_arg = (void *)flaky_store_shown(conf.db_path, shown,
	    sizeof shown);
	if ((base = event_base_new()) == NULL) {
		fprintf(stderr, "flakyctl serve: out of memory\n");
		return EXIT_ERROR;
	}
	signal(SIGPIPE, SIG_IGN);
	if (flaky_http_start(base, &conf, &h, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl serve: %s\n", err);
		goto out;
	}
	sig[0] = evsignal_new(base, SIGINT, serve_signal, base);
	sig[1] = evsignal_new(base, SIGTERM, serve_signal, base);
	if (sig[0] == NULL || sig[1] == NULL || evsignal_add(sig[0], NULL) < 0 ||
	    evsignal_add(sig[1], NULL) < 0) {
		fprintf(stderr, "flakyctl serve: out of memory\n");
		goto out;
	}
	printf("serving %s at %s\n", shown, flaky_http_url(h));
	fflush(stdout);
	event_base_dispatch(base);
	ret = EXIT_OK;
out:
	flaky_http_free(h);
	for (int i = 0; i < 2; i++)
		if (sig[i] != NULL)
			event_free(sig[i]);
	event_base_free(base);
	return ret;
}
