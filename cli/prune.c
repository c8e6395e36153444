/* flakyctl prune: retention by hand (flakyd does the same when the config
 * sets "retention:"): raw results and kept output go, rollups stay. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>

#include "flakyctl.h"
#include "store/store.h"
#include "util/util.h"

static int	cmd_prune(struct ctl *, int, char **);

static const struct cmd_option prune_options[] = {
	{ "older-than", 'o', 0, "D", "remove the raw data of runs older than "
	    "D (180d, 26w; required)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_prune_entry = {
	.name = "prune",
	.usage = "prune --older-than D",
	.summary = "Remove raw results older than D; daily rollups stay.",
	.example = "flakyctl prune --older-than 180d",
	.options = prune_options,
	.flags = CMD_WRITES,
	.exec = cmd_prune,
};

/* flakyctl prune: the retention of flakyd's config, by hand. */
static int
cmd_prune(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_prune_stats ps;
	const char	*older = NULL;
	int64_t		 age, before;
	char		 err[1024], t[32];
	int		 c, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_prune_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'o':
			older = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("prune", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (older == NULL) {
		ctl_usage_error("prune", "--older-than D is required");
		return EXIT_ERROR;
	}
	if (flaky_parse_duration(older, &age) < 0 || age <= 0) {
		ctl_usage_error("prune", "--older-than: expected a duration "
		    "(180d, 26w), got '%s'", older);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "prune", 1 << FORMAT_TABLE) < 0)
		return EXIT_ERROR;
	before = flaky_now_ms() - age;
	if (flaky_store_open(ctl_db_path(ctl), 0, &store, err,
	    sizeof err) < 0 || flaky_store_prune(store, before, &ps, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl prune: %s\n", err);
		goto out;
	}
	printf("pruned runs before %s: raw data of %lld run%s, %lld result%s, "
	    "%lld message%s; daily rollups kept\n", flaky_format_time(before,
	    t, sizeof t), (long long)ps.runs, flaky_plural(ps.runs),
	    (long long)ps.results, flaky_plural(ps.results),
	    (long long)ps.messages, flaky_plural(ps.messages));
	ret = EXIT_OK;
out:
	flaky_store_close(store);
	return ret;
}
