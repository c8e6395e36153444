/* flakyctl mark TEST --ticket URL --owner NAME: what a team writes about a
 * test, as the dashboard's actions write it (issue 32); flakyctl actions
 * [TEST]: every action taken (quarantine, release, ticket, owner), who
 * took it and when, from the command line or over HTTP. */
#include "buildconf.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "flakyctl.h"
#include "store/store.h"
#include "util/util.h"

#define ACTIONS_DEFAULT	50

const char *
ctl_who(void)
{
	static char	 who[64];
	struct passwd	*pw;

	if (who[0] != '\0')
		return who;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_name != NULL &&
	    *pw->pw_name != '\0')
		snprintf(who, sizeof who, "%s", pw->pw_name);
	else
		snprintf(who, sizeof who, "uid %u", (unsigned)getuid());
	return who;
}

static int	cmd_mark(struct ctl *, int, char **);
static int	cmd_actions(struct ctl *, int, char **);

static const struct cmd_option mark_options[] = {
	{ "ticket", 't', 0, "URL", "link the ticket that tracks the test (an "
	    "http or https URL; '' unlinks it) (default unchanged)" },
	{ "owner", 'o', 0, "NAME", "who owns the test, beside CODEOWNERS ('' "
	    "clears it) (default unchanged)" },
	{ "target", 'T', 0, "NAME", "the test's target, when several have it "
	    "(default any)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_mark_entry = {
	.name = "mark",
	.usage = "mark TEST [--ticket URL] [--owner NAME] [--target NAME]",
	.summary = "Link a test's ticket or name its owner (recorded as an "
	    "action).",
	.example = "flakyctl mark test_login --owner @shop/web\n"
	    "flakyctl mark test_login --ticket https://t.example/FLAKY-12",
	.options = mark_options,
	.flags = CMD_WRITES,
	.exec = cmd_mark,
};

/* flakyctl mark TEST: each change an action of its own. */
static int
cmd_mark(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	const char	*ticket = NULL, *owner = NULL, *target = NULL;
	char		*name = NULL, *tname = NULL, err[1024];
	int64_t		 id, now = flaky_now_ms();
	int		 c, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_mark_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (c == 't')
			ticket = optarg;
		else if (c == 'o')
			owner = optarg;
		else if (c == 'T')
			target = optarg;
	}
	if (c < 0)
		return g.exit;
	if (optind + 1 != argc) {
		ctl_usage_error("mark", optind == argc ? "which test?" :
		    "one test at a time");
		return EXIT_ERROR;
	}
	if (ticket == NULL && owner == NULL) {
		ctl_usage_error("mark", "expected --ticket URL or --owner NAME "
		    "(or both)");
		return EXIT_ERROR;
	}
	if ((ticket != NULL && flaky_action_check(FLAKY_ACT_TICKET, ticket,
	    err, sizeof err) < 0) || (owner != NULL && flaky_action_check(
	    FLAKY_ACT_OWNER, owner, err, sizeof err) < 0)) {
		ctl_usage_error("mark", "--%s", err);
		return EXIT_ERROR;
	}
	if (flaky_store_open(ctl_db_path(ctl), 0, &store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl mark: %s\n", err);
		return EXIT_ERROR;
	}
	if (diag_resolve_name(store, "mark", target, argv[optind], &id, &name,
	    &tname) < 0)
		goto out;
	if ((ticket != NULL && flaky_store_act(store, id, FLAKY_ACT_TICKET,
	    ticket, NULL, ctl_who(), "cli", now, err, sizeof err) < 0) ||
	    (owner != NULL && flaky_store_act(store, id, FLAKY_ACT_OWNER, owner,
	    NULL, ctl_who(), "cli", now, err, sizeof err) < 0)) {
		fprintf(stderr, "flakyctl mark: %s\n", err);
		goto out;
	}
	if (ticket != NULL)
		printf(*ticket ? "%s (%s): ticket %s\n" : "%s (%s): ticket "
		    "unlinked%s\n", name, tname, ticket);
	if (owner != NULL)
		printf(*owner ? "%s (%s): owned by %s\n" : "%s (%s): owner "
		    "cleared%s\n", name, tname, owner);
	ret = EXIT_OK;
out:
	free(name);
	free(tname);
	flaky_store_close(store);
	return ret;
}

static const struct cmd_option actions_options[] = {
	{ "target", 'T', 0, "NAME", "the test's target, when several have it "
	    "(default any)" },
	{ "limit", 'n', 0, "N", "the newest N actions (default 50)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_actions_entry = {
	.name = "actions",
	.usage = "actions [TEST] [--target NAME] [--limit N]",
	.summary = "The actions taken on tests: who, when, from where.",
	.example = "flakyctl actions test_login_retry",
	.options = actions_options,
	.exec = cmd_actions,
};

/* One action as JSON. */
static void
action_json(const struct flaky_action *a)
{
	char	 t[32];

	printf("{\"target\": ");
	json_string(stdout, a->target);
	printf(", \"test\": ");
	json_string(stdout, a->test);
	printf(", \"action\": \"%s\", \"value\": ", flaky_action_name(a->kind));
	json_string(stdout, a->value);
	printf(", \"who\": ");
	json_string(stdout, a->who);
	printf(", \"via\": ");
	json_string(stdout, a->via);
	printf(", \"at\": \"%s\"}", flaky_format_time(a->at_ms, t, sizeof t));
}

/* flakyctl actions [TEST]: newest first. */
static int
cmd_actions(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_action *v = NULL;
	const char	*target = NULL;
	long long	 limit = ACTIONS_DEFAULT;
	int64_t		 id = 0;
	size_t		 n = 0;
	char		 err[1024], t[32];
	int		 c, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_actions_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (c == 'T')
			target = optarg;
		else if (c == 'n' && flaky_parse_int(optarg, 1, 100000,
		    &limit) < 0) {
			ctl_usage_error("actions", "--limit: expected a count "
			    "from 1 to 100000, got '%s'", optarg);
			return EXIT_ERROR;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind + 1 < argc) {
		ctl_usage_error("actions", "one test at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "actions", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl actions: %s\n", err);
		return EXIT_ERROR;
	}
	if (optind < argc && diag_resolve(store, "actions", target,
	    argv[optind], &id) < 0)
		goto out;
	if (flaky_store_actions(store, id, (size_t)limit, &v, &n, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl actions: %s\n", err);
		goto out;
	}
	if (ctl->format == FORMAT_JSON)
		printf("[");
	else if (n == 0)
		printf("no action taken%s\n", id ? " on this test" : "");
	for (size_t i = 0; i < n; i++) {
		if (ctl->format == FORMAT_JSON) {
			printf("%s\n ", i ? "," : "");
			action_json(&v[i]);
			continue;
		}
		printf("%s  %-10s %s (%s)%s%s  by %s via %s\n",
		    flaky_format_time(v[i].at_ms, t, sizeof t),
		    flaky_action_name(v[i].kind), v[i].test, v[i].target,
		    v[i].value ? ": " : "", v[i].value ? v[i].value : "",
		    v[i].who, v[i].via);
	}
	if (ctl->format == FORMAT_JSON)
		printf("%s]\n", n ? "\n" : "");
	ret = EXIT_OK;
out:
	flaky_actions_free(v, n);
	flaky_store_close(store);
	return ret;
}
