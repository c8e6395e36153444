/* flakyctl token: the tokens of the HTTP server (docs/api.md, "Tokens"):
 * create one of a scope, printed once on stdout; list them (never the
 * tokens themselves, which are not kept); revoke one. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"
#include "store/store.h"
#include "util/util.h"

static int	cmd_token(struct ctl *, int, char **);

static const struct cmd_option token_options[] = {
	{ "scope", 's', 0, "SCOPE", "create: upload (POST /api/v1/uploads "
	    "only), read (the dashboard and GET /api/v1) or write (the "
	    "dashboard's actions, and read) (required)" },
	{ "name", 'n', 0, "NAME", "create: what the token is for, unique "
	    "among valid tokens (default the scope and the time)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_token_entry = {
	.name = "token",
	.usage = "token create --scope upload|read|write [--name NAME] | "
	    "list | revoke NAME|PREFIX",
	.summary = "Make, list and revoke the HTTP server's tokens.",
	.example = "flakyctl token create --scope upload --name github-ci\n"
	    "flakyctl token revoke github-ci",
	.options = token_options,
	.exec = cmd_token,
};

/* token list: name, scope, prefix, made, last used, revoked. */
static int
token_list(struct ctl *ctl, const struct flaky_token_row *v, size_t n)
{
	char	 a[32], b[32], c[32];

	if (ctl->format == FORMAT_JSON)
		printf("[");
	else if (n == 0)
		printf("no token: flakyctl token create --scope upload|read|"
		    "write\n");
	for (size_t i = 0; i < n; i++) {
		flaky_format_time(v[i].created_ms, a, sizeof a);
		if (v[i].last_used_ms > 0)
			flaky_format_time(v[i].last_used_ms, b, sizeof b);
		else
			snprintf(b, sizeof b, "never");
		if (v[i].revoked_ms > 0)
			flaky_format_time(v[i].revoked_ms, c, sizeof c);
		if (ctl->format == FORMAT_JSON) {
			printf("%s\n {\"name\": ", i ? "," : "");
			json_string(stdout, v[i].name);
			printf(", \"scope\": \"%s\", \"prefix\": ",
			    flaky_token_scope_name(v[i].scope));
			json_string(stdout, v[i].prefix);
			printf(", \"created\": \"%s\", \"last_used\": ", a);
			if (v[i].last_used_ms > 0)
				printf("\"%s\"", b);
			else
				printf("null");
			printf(", \"revoked\": ");
			if (v[i].revoked_ms > 0)
				printf("\"%s\"}", c);
			else
				printf("null}");
			continue;
		}
		printf("%-24s %-6s %s...  made %s, used %s%s%s\n", v[i].name,
		    flaky_token_scope_name(v[i].scope), v[i].prefix, a, b,
		    v[i].revoked_ms > 0 ? ", REVOKED " : "",
		    v[i].revoked_ms > 0 ? c : "");
	}
	if (ctl->format == FORMAT_JSON)
		printf("%s]\n", n ? "\n" : "");
	return EXIT_OK;
}

/* flakyctl token SUBCOMMAND. */
static int
cmd_token(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_token_row *rows = NULL;
	const char	*sub, *name = NULL;
	char		 err[1024], *tok = NULL, *def = NULL, when[32];
	size_t		 nrows = 0;
	int64_t		 now = flaky_now_ms();
	int		 c, scope = -1, ret = EXIT_ERROR;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		cmd_print_help(stdout, &cmd_token_entry);
		return EXIT_OK;
	}
	if (argc < 2) {
		ctl_usage_error("token", "expected create, list or revoke");
		return EXIT_ERROR;
	}
	sub = argv[1];
	argc--;
	argv++;
	cmd_getopt_init(&g, &cmd_token_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 's':
			if ((scope = flaky_token_scope_parse(optarg)) < 0) {
				ctl_usage_error("token", "--scope: expected "
				    "upload, read or write, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'n':
			name = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (strcmp(sub, "create") == 0) {
		if (scope < 0) {
			ctl_usage_error("token", "create: --scope upload, read "
			    "or write is required");
			return EXIT_ERROR;
		}
		if (name != NULL && (*name == '\0' || strlen(name) > 128)) {
			ctl_usage_error("token", "--name: expected 1 to 128 "
			    "bytes");
			return EXIT_ERROR;
		}
	} else if (strcmp(sub, "list") == 0) {
		if (ctl_check_format(ctl, "token", 1 << FORMAT_TABLE |
		    1 << FORMAT_JSON) < 0)
			return EXIT_ERROR;
	} else if (strcmp(sub, "revoke") != 0) {
		ctl_usage_error("token", "unknown subcommand '%s': expected "
		    "create, list or revoke", sub);
		return EXIT_ERROR;
	}
	if ((strcmp(sub, "revoke") == 0) != (optind == argc - 1) ||
	    optind < argc - 1) {
		ctl_usage_error("token", strcmp(sub, "revoke") == 0 ?
		    "revoke: expected one NAME or PREFIX" :
		    "%s: unexpected argument '%s'", sub,
		    optind < argc ? argv[optind] : "");
		return EXIT_ERROR;
	}
	if (flaky_store_open(ctl_db_path(ctl), sub[0] == 'l' ?
	    FLAKY_STORE_READONLY : 0, &store, err, sizeof err) < 0)
		goto fail;
	if (sub[0] == 'c') {
		if (name == NULL) {
			xasprintf(&def, "%s-%s", flaky_token_scope_name(scope),
			    flaky_format_time(now, when, sizeof when));
			name = def;
		}
		if (flaky_store_token_create(store, name, scope, now, &tok,
		    NULL, err, sizeof err) < 0)
			goto fail;
		/* the token alone on stdout, for $(...) and files */
		printf("%s\n", tok);
		fprintf(stderr, "flakyctl token: %s token '%s' made; it is "
		    "shown once, only its hash is kept\n",
		    flaky_token_scope_name(scope), name);
		ret = EXIT_OK;
		goto out;
	}
	if (sub[0] == 'r') {
		if (flaky_store_token_revoke(store, argv[optind], now, err,
		    sizeof err) < 0)
			goto fail;
		fprintf(stderr, "flakyctl token: revoked '%s'\n", argv[optind]);
		ret = EXIT_OK;
		goto out;
	}
	if (flaky_store_token_list(store, &rows, &nrows, err, sizeof err) < 0)
		goto fail;
	ret = token_list(ctl, rows, nrows);
	goto out;
fail:
	fprintf(stderr, "flakyctl token: %s\n", err);
out:
	if (tok != NULL)
		explicit_bzero(tok, strlen(tok));
	free(tok);
	free(def);
	flaky_token_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
