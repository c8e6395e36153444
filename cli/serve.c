/* flakyctl serve: the dashboard and the API of a database without the
 * daemon, through the server flakyd runs (lib/http). Read-only, but for
 * the uploads of CI jobs with --uploads (docs/api.md, "Uploads"). */
#include "buildconf.h"

#include <signal.h>
#include <stdio.h>

#include <event2/event.h>

#include "classify/classify.h"
#include "config/config.h"
#include "diag.h"
#include "flakyctl.h"
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
	{ "uploads", 'u', 0, NULL, "take CI uploads at /api/v1/uploads, "
	    "with tokens of scope upload (flakyctl token)" },
	{ "max-upload", 0, 'M', "MIB", "the largest upload's body in MiB "
	    "(default 256)" },
	{ "tls-cert", 0, 'c', "PATH", "serve HTTPS with this PEM "
	    "certificate (chain) (default none: HTTP)" },
	{ "tls-key", 0, 'k', "PATH", "its PEM private key (default none)" },
	{ "behind-proxy", 0, 'P', NULL, "uploads on another address than "
	    "loopback without --tls-cert: a proxy in front serves TLS" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_serve_entry = {
	.name = "serve",
	.usage = "serve [--listen ADDR:PORT] [--token-file PATH] [--uploads] "
	    "[--max-upload MIB] [--tls-cert PATH --tls-key PATH] "
	    "[--behind-proxy]",
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
	struct flaky_classifier *cls = NULL;
	struct flaky_http *h = NULL;
	long long	 mib;
	struct event_base *base;
	struct event	*sig[2] = { NULL, NULL };
	char		 err[1024], shown[256];
	int		 c, ret = EXIT_ERROR;

	flaky_uploads_conf_default(&conf.uploads);
	cmd_getopt_init(&g, &cmd_serve_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'l':
			conf.listen = optarg;
			break;
		case 't':
			conf.token_file = optarg;
			break;
		case 'u':
			conf.uploads.on = 1;
			break;
		case 'M':
			if (flaky_parse_int(optarg, 1, 4096, &mib) < 0) {
				ctl_usage_error("serve", "--max-upload: expected "
				    "1 to 4096 (MiB), got '%s'", optarg);
				return EXIT_ERROR;
			}
			conf.uploads.max_bytes = mib << 20;
			break;
		case 'c':
			conf.tls_cert = optarg;
			break;
		case 'k':
			conf.tls_key = optarg;
			break;
		case 'P':
			conf.behind_proxy = 1;
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
	if ((conf.tls_cert == NULL) != (conf.tls_key == NULL)) {
		ctl_usage_error("serve", "--tls-cert and --tls-key go together");
		return EXIT_ERROR;
	}
	/* uploads classify failures with the config's signatures too */
	if (conf.uploads.on && diag_load_signatures(ctl, NULL, &cls) < 0)
		return EXIT_ERROR;
	conf.cls = cls;
	conf.db_path = ctl_db_path(ctl);
	conf.db_state = serve_db_state;
	conf.db_state_arg = (void *)flaky_store_shown(conf.db_path, shown,
	    sizeof shown);
	if ((base = event_base_new()) == NULL) {
		fprintf(stderr, "flakyctl serve: out of memory\n");
		flaky_classifier_free(cls);
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
	printf("serving %s at %s%s\n", shown, flaky_http_url(h),
	    conf.uploads.on ? " (uploads at /api/v1/uploads)" : "");
	fflush(stdout);
	event_base_dispatch(base);
	ret = EXIT_OK;
out:
	flaky_http_free(h);
	flaky_classifier_free(cls);
	for (int i = 0; i < 2; i++)
		if (sig[i] != NULL)
			event_free(sig[i]);
	event_base_free(base);
	return ret;
}
