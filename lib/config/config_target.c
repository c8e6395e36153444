/* One target of a schedule file: its keys and defaults, the command as
 * argv or a shell string, env:, and the checks that span keys or look at
 * the file system (the directory exists, the program is found as execvp
 * would find it). */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "config/config.h"
#include "config_int.h"
#include "sched/sched.h"
#include "util/util.h"

/* Check that the target's argv[0] resolves as execvp would find it in
 * the target's dir: a name with a slash directly (relative to dir), else
 * through PATH (the target's env PATH when it sets one). */
static int
check_command(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	const char	*word = t->argv[0], *path = NULL;
	char		 buf[PATH_MAX];
	int		 r;

	for (size_t i = 0; i < t->nenv; i++)
		if (strcmp(t->env[i].name, "PATH") == 0)
			path = t->env[i].value;
	if (path == NULL && (path = getenv("PATH")) == NULL)
		path = DEFAULT_PATH;
	if ((r = flaky_path_find(word, t->dir, path, buf, sizeof buf)) == 0)
		return 0;
	if (strchr(word, '/') == NULL)
		return cfg_err(c, n, "command: expected a program in PATH, "
		    "\"%s\" was not found", word);
	return cfg_err(c, n, "command: expected an executable file, \"%s\" "
	    "%s", word, r == -EISDIR ? "is a directory" : r == -EACCES ?
	    "is not executable" : "does not exist");
}

static const char *const target_keys[] = {
	"name", "command", "dir", "schedule", "runs", "timeout", "env",
	"jitter", "overlap", "catch_up", "isolate", "revision", "confirm",
	"scan", "junit", "confirm_budget", "until_settled", "stress",
	"risky",
	"perturb",
	"stacks",
	"stacks_bound",
};
enum {
	T_NAME, T_COMMAND, T_DIR, T_SCHEDULE, T_RUNS, T_TIMEOUT, T_ENV,
	T_JITTER, T_OVERLAP, T_CATCH_UP, T_ISOLATE, T_REVISION, T_CONFIRM,
	T_SCAN, T_JUNIT, T_CONFIRM_BUDGET, T_UNTIL_SETTLED, T_STRESS,
	T_RISKY,
	T_PERTURB,
	T_STACKS,
	T_STACKS_BOUND,
	T_NKEYS
};

/* Is s a stress as stress: takes it: cpu, memory, io or all, with
 * :LEVEL (1 to 64)? (issue 18; the daemon hands it to
 * flaky_stress_parse, which config cannot use: run depends on config
 * through the store). */
static int
stress_ok(const char *s)
{
	static const char *const kinds[] = { "cpu", "memory", "io", "all" };
	const char	*colon = strchr(s, ':');
	size_t		 len = colon ? (size_t)(colon - s) : strlen(s);
	long long	 level;
	int		 ok = 0;

	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		ok |= strlen(kinds[i]) == len && strncmp(s, kinds[i], len) == 0;
	return ok && (colon == NULL || flaky_parse_int(colon + 1, 1, 64,
	    &level) == 0);
}

/* stress: a stress beside every run. */
static int
parse_stress(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	char		 gotbuf[80];
	int		 r;

	if ((r = cfg_get_str(c, n, "stress", "cpu, memory, io or all with "
	    "an optional :LEVEL", &t->stress)) < 0)
		return r;
	if (!stress_ok(t->stress))
		return cfg_err(c, n, "stress: expected cpu, memory, io or all, "
		    "with an optional :LEVEL (1 to 64), got %s", GOT(n));
	return 0;
}

#define PERTURB_EXPECT	"calm, shuffle, seed or stress:KIND[:LEVEL] " \
	"(KIND cpu, memory, io or all, LEVEL 1 to 64)"

/* One step of perturb:, kept as "calm", "shuffle", "seed" or the stress
 * ("cpu:2"). The first shuffle's and seed's places are kept: whether the
 * runner can shuffle, or be seeded, is the daemon's check, told there. */
static int
parse_perturb_step(struct ctx *c, struct flaky_target *t, yaml_node_t *n)
{
	const char	*s;
	char		 gotbuf[80];
	int		 r;

	if ((r = cfg_get_text(c, n, "perturb", PERTURB_EXPECT, &s)) < 0)
		return r;
	if (strncmp(s, "stress:", 7) == 0 && stress_ok(s + 7))
		s += 7;
	else if (strcmp(s, "shuffle") == 0) {
		if (t->perturb_line == 0) {
			t->perturb_line = (int)n->start_mark.line + 1;
			t->perturb_col = (int)n->start_mark.column + 1;
		}
	} else if (strcmp(s, "seed") == 0) {
		if (t->seed_line == 0) {
			t->seed_line = (int)n->start_mark.line + 1;
			t->seed_col = (int)n->start_mark.column + 1;
		}
	} else if (strcmp(s, "calm") != 0)
		return cfg_err(c, n, "perturb: expected " PERTURB_EXPECT
		    ", got %s", GOT(n));
	if ((t->perturb[t->nperturb] = strdup(s)) == NULL)
		return cfg_nomem(c);
	t->nperturb++;
	return 0;
}

/* perturb: the cycle of calm, shuffled and stressed runs (issue 18). */
static int
parse_perturb(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	yaml_node_item_t *items;
	size_t		 cnt;
	int		 r;

	if ((r = cfg_get_seq(c, n, "perturb", "a list of " PERTURB_EXPECT,
	    &items, &cnt)) < 0)
		return r;
	if (cnt == 0 || cnt > FLAKY_CONFIG_MAX_PERTURB)
		return cfg_err(c, n, "perturb: expected 1 to %d steps, got "
		    "%zu", FLAKY_CONFIG_MAX_PERTURB, cnt);
	if ((t->perturb = calloc(cnt, sizeof *t->perturb)) == NULL)
		return cfg_nomem(c);
	for (size_t i = 0; i < cnt; i++)
		if ((r = parse_perturb_step(c, t,
		    yaml_document_get_node(c->doc, items[i]))) < 0)
			return r;
	return 0;
}

/* perturb: beside the keys it cannot go with: stress: (every run
 * stressed, or a cycle: one or the other) and until_settled: (a tier is
 * settled on runs alike). */
static int
check_perturb(struct ctx *c, const struct flaky_target *t, yaml_node_t **v)
{
	if (v[T_PERTURB] == NULL)
		return 0;
	if (t->stress != NULL)
		return cfg_err(c, v[T_PERTURB], "perturb: expected no stress: "
		    "beside it (line %zu stresses every run; put "
		    "stress:%s in the cycle instead)",
		    v[T_STRESS]->start_mark.line + 1, t->stress);
	if (t->until_settled)
		return cfg_err(c, v[T_PERTURB], "perturb: expected no "
		    "until_settled: true beside it (line %zu): a tier is "
		    "settled on runs alike, not on a cycle of calm and "
		    "perturbed ones", v[T_UNTIL_SETTLED]->start_mark.line + 1);
	/* A shuffled or stressed run is made from the whole command: on a
	 * risky trigger it would rerun the whole suite, not the risky tests. */
	if (t->risky)
		return cfg_err(c, v[T_PERTURB], "perturb: expected no risky: "
		    "true beside it (line %zu): a perturbed run reruns the "
		    "whole suite, not the risky tests",
		    v[T_RISKY]->start_mark.line + 1);
	return 0;
}

/* command: a list is argv, a string is /bin/sh -c STRING. */
static int
parse_command(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	yaml_node_item_t *items;
	const char	*v;
	size_t		 cnt;
	int		 r;

	if (n->type == YAML_SCALAR_NODE) {
		if ((r = cfg_get_text(c, n, "command", "a program and its "
		    "arguments or a shell command", &v)) < 0)
			return r;
		if (*v == '\0')
			return cfg_err(c, n, "command: expected a shell "
			    "command, got \"\"");
		if ((t->argv = calloc(4, sizeof *t->argv)) == NULL)
			return cfg_nomem(c);
		t->argc = 3;
		t->shell = 1;
		if ((t->argv[0] = strdup("/bin/sh")) == NULL ||
		    (t->argv[1] = strdup("-c")) == NULL ||
		    (t->argv[2] = strdup(v)) == NULL)
			return cfg_nomem(c);
		return 0;
	}
	if ((r = cfg_get_seq(c, n, "command", "a program and its arguments or "
	    "a shell command", &items, &cnt)) < 0)
		return r;
	if (cnt == 0)
		return cfg_err(c, n, "command: expected a program and its "
		    "arguments, got an empty sequence");
	if ((t->argv = calloc(cnt + 1, sizeof *t->argv)) == NULL)
		return cfg_nomem(c);
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *w = yaml_document_get_node(c->doc, items[i]);

		if ((r = cfg_get_str(c, w, "command", "a word",
		    &t->argv[i])) < 0)
			return r;
		t->argc++;
	}
	if (t->argv[0][0] == '\0')
		return cfg_err(c, yaml_document_get_node(c->doc, items[0]),
		    "command: expected a program name, got \"\"");
	return 0;
}

/* A name's hash, for the duplicate check of env: names. */
static size_t
name_hash(const char *s)
{
	uint32_t	 h = 2166136261u;	/* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* env: a mapping of variable names to string values. Duplicates are found
 * through a hash of the names seen: a linear search per name made one
 * env of 10,000 names, shared by alias among 49 targets, cost 12 s. */
static int
parse_env(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	yaml_node_pair_t *p;
	char		 gotbuf[80];
	size_t		 cnt, nslots = 16, *slots = NULL;	/* index + 1 */
	int		 r = 0;

	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(c, n, "env: expected a mapping of variables, "
		    "got %s", GOT(n));
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (cnt > MAX_ITEMS)
		return cfg_err(c, n, "env: expected at most %d variables, got "
		    "%zu", MAX_ITEMS, cnt);
	while (nslots < 2 * cnt)
		nslots *= 2;
	if ((t->env = calloc(cnt + 1, sizeof *t->env)) == NULL ||
	    (slots = calloc(nslots, sizeof *slots)) == NULL)
		return cfg_nomem(c);
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *k = cfg_node_at(c, p->key);
		yaml_node_t *v = cfg_node_at(c, p->value);
		const char *name;
		size_t	 h;

		if (c->visits > MAX_VISITS) {
			r = cfg_err(c, k, "expected a file of at most %d "
			    "values with aliases expanded", MAX_VISITS);
			goto out;
		}
		if (k->type != YAML_SCALAR_NODE || cfg_is_null(k) ||
		    (name = (const char *)k->data.scalar.value,
		    !cfg_name_ok(name, "_")) ||
		    isdigit((unsigned char)name[0])) {
			r = cfg_err(c, k, "env: expected a variable name of "
			    "letters, digits and _, got %s", GOT(k));
			goto out;
		}
		for (h = name_hash(name) & (nslots - 1); slots[h] != 0;
		    h = (h + 1) & (nslots - 1))
			if (strcmp(t->env[slots[h] - 1].name, name) == 0) {
				r = cfg_err(c, k, "env: duplicate variable %s",
				    GOT(k));
				goto out;
			}
		if ((t->env[t->nenv].name = strdup(name)) == NULL) {
			r = cfg_nomem(c);
			goto out;
		}
		slots[h] = ++t->nenv;
		if ((r = cfg_get_str(c, v, "env", "a string value",
		    &t->env[t->nenv - 1].value)) < 0)
			goto out;
	}
out:
	free(slots);
	return r;
}

/* One target: its keys, defaults, and the checks that span keys. */
int
cfg_parse_target(struct ctx *c, const yaml_node_t *n, struct flaky_target *t)
{
	struct flaky_config *cfg = c->cfg;
	yaml_node_t	*v[T_NKEYS];
	char		 gotbuf[80], serr[192];
	const char	*s;
	int64_t		 next;
	int		 r;

	t->runs = 1;
	t->timeout_ms = 30 * 60 * 1000;
	t->stacks = 1;
	t->confirm_budget_ms = 10 * 60 * 1000;
	t->catch_up = 1;
	t->line = (int)n->start_mark.line + 1;
	if ((r = cfg_get_keys(c, n, "target", target_keys, T_NKEYS, v)) < 0)
		return r;
	if (v[T_NAME] == NULL)
		return cfg_err(c, n, "target: expected a name: key");
	if ((r = cfg_get_str(c, v[T_NAME], "name", "a target name",
	    &t->name)) < 0)
		return r;
	if (!cfg_name_ok(t->name, "._-"))
		return cfg_err(c, v[T_NAME], "name: expected 1 to %d letters, "
		    "digits, '.', '_' or '-', got %s", FLAKY_CONFIG_MAX_NAME,
		    GOT(v[T_NAME]));
	for (size_t i = 0; i < cfg->ntargets; i++)
		if (strcmp(cfg->targets[i].name, t->name) == 0)
			return cfg_err(c, v[T_NAME], "name: duplicate target "
			    "name %s, first at line %d", GOT(v[T_NAME]),
			    cfg->targets[i].line);
	if (v[T_COMMAND] == NULL)
		return cfg_err(c, n, "target \"%s\": expected a command: key",
		    t->name);
	if ((r = parse_command(c, t, v[T_COMMAND])) < 0)
		return r;
	if (v[T_DIR] != NULL) {
		if ((r = cfg_get_path(c, v[T_DIR], "dir", "a directory",
		    &t->dir)) < 0)
			return r;
	} else if ((t->dir = strdup(c->basedir)) == NULL)
		return cfg_nomem(c);
	if (v[T_SCHEDULE] != NULL) {
		if ((r = cfg_get_str(c, v[T_SCHEDULE], "schedule", "a schedule "
		    "such as \"*/15 * * * *\", @daily or \"every 10m\"",
		    &t->schedule)) < 0)
			return r;
		if (flaky_sched_parse(t->schedule, &t->sched, serr,
		    sizeof serr) < 0)
			return cfg_err(c, v[T_SCHEDULE], "schedule: %s", serr);
		if (flaky_sched_next(&t->sched, cfg->tz, 0, flaky_now_ms(),
		    &next) == -ERANGE)
			return cfg_err(c, v[T_SCHEDULE], "schedule: expected "
			    "dates that exist, %s never fires",
			    GOT(v[T_SCHEDULE]));
		t->has_schedule = 1;
	}
	if (v[T_RUNS] != NULL &&
	    (r = cfg_get_int(c, v[T_RUNS], "runs", 1, 10000, &t->runs)) < 0)
		return r;
	if (v[T_TIMEOUT] != NULL && (r = cfg_get_duration(c, v[T_TIMEOUT],
	    "timeout", 1, &t->timeout_ms)) < 0)
		return r;
	if (v[T_ENV] != NULL && (r = parse_env(c, t, v[T_ENV])) < 0)
		return r;
	if (v[T_JITTER] != NULL && (r = cfg_get_duration(c, v[T_JITTER],
	    "jitter", 0, &t->jitter_ms)) < 0)
		return r;
	if (v[T_OVERLAP] != NULL) {
		if ((r = cfg_get_text(c, v[T_OVERLAP], "overlap", "skip or "
		    "queue", &s)) < 0)
			return r;
		if (strcmp(s, "skip") == 0)
			t->overlap = FLAKY_OVERLAP_SKIP;
		else if (strcmp(s, "queue") == 0)
			t->overlap = FLAKY_OVERLAP_QUEUE;
		else
			return cfg_err(c, v[T_OVERLAP], "overlap: expected "
			    "skip or queue, got %s", GOT(v[T_OVERLAP]));
	}
	if (v[T_CATCH_UP] != NULL && (r = cfg_get_bool(c, v[T_CATCH_UP],
	    "catch_up", &t->catch_up)) < 0)
		return r;
	if (v[T_ISOLATE] != NULL) {
		if ((r = cfg_get_str(c, v[T_ISOLATE], "isolate", "a command "
		    "template containing {test}", &t->isolate)) < 0)
			return r;
		if (strstr(t->isolate, "{test}") == NULL)
			return cfg_err(c, v[T_ISOLATE], "isolate: expected a "
			    "command template containing {test}, got %s",
			    GOT(v[T_ISOLATE]));
	}
	if (v[T_REVISION] != NULL && (r = cfg_get_str(c, v[T_REVISION],
	    "revision", "a shell command that prints the revision",
	    &t->revision)) < 0)
		return r;
	if (v[T_CONFIRM] != NULL && (r = cfg_get_bool(c, v[T_CONFIRM],
	    "confirm", &t->confirm)) < 0)
		return r;
	if (t->confirm && t->isolate == NULL)
		return cfg_err(c, v[T_CONFIRM], "confirm: expected an isolate: "
		    "template in the same target, confirming reruns tests "
		    "alone");
	if (v[T_CONFIRM_BUDGET] != NULL && (r = cfg_get_duration(c,
	    v[T_CONFIRM_BUDGET], "confirm_budget", 1,
	    &t->confirm_budget_ms)) < 0)
		return r;
	if ((v[T_SCAN] != NULL &&
	    (r = cfg_get_bool(c, v[T_SCAN], "scan", &t->scan)) < 0) ||
	    (v[T_STACKS] != NULL &&
	    (r = cfg_get_bool(c, v[T_STACKS], "stacks", &t->stacks)) < 0) ||
	    (v[T_STACKS_BOUND] != NULL && (r = cfg_get_duration(c,
	    v[T_STACKS_BOUND], "stacks_bound", 1, &t->stacks_bound_ms)) < 0))
		return r;
	/* until_settled: runs: is the most a trigger makes */
	if (v[T_UNTIL_SETTLED] != NULL && (r = cfg_get_bool(c,
	    v[T_UNTIL_SETTLED], "until_settled", &t->until_settled)) < 0)
		return r;
	if (t->until_settled && v[T_RUNS] == NULL)
		t->runs = FLAKY_CONFIG_SETTLE_RUNS;
	if (v[T_JUNIT] != NULL && (r = cfg_get_str(c, v[T_JUNIT], "junit",
	    "the path of a JUnit XML file", &t->junit)) < 0)
		return r;
	if (v[T_STRESS] != NULL && (r = parse_stress(c, t, v[T_STRESS])) < 0)
		return r;
	if (v[T_RISKY] != NULL && (r = cfg_get_bool(c, v[T_RISKY], "risky",
	    &t->risky)) < 0)
		return r;
	if (v[T_PERTURB] != NULL && ((r = parse_perturb(c, t,
	    v[T_PERTURB])) < 0 || (r = check_perturb(c, t, v)) < 0))
		return r;

	if (c->flags & FLAKY_CONFIG_NO_FS_CHECKS)
		return 0;
	{
		struct stat	 st;

		if (stat(t->dir, &st) < 0)
			return cfg_err(c, v[T_DIR] != NULL ? v[T_DIR] : n,
			    "dir: expected an existing directory, \"%s\": %s",
			    t->dir, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cfg_err(c, v[T_DIR] != NULL ? v[T_DIR] : n,
			    "dir: expected a directory, \"%s\" is not one",
			    t->dir);
	}
	if (!t->shell)
		return check_command(c, t, v[T_COMMAND]->type ==
		    YAML_SEQUENCE_NODE ? yaml_document_get_node(c->doc,
		    v[T_COMMAND]->data.sequence.items.start[0]) : v[T_COMMAND]);
	return 0;
}

/* Free what a target owns. */
void
cfg_target_free(struct flaky_target *t)
{
	if (t->argv != NULL)
		for (size_t i = 0; t->argv[i] != NULL; i++)
			free(t->argv[i]);
	free(t->argv);
	free(t->name);
	free(t->dir);
	free(t->schedule);
	for (size_t i = 0; i < t->nenv; i++) {
		free(t->env[i].name);
		free(t->env[i].value);
	}
	free(t->env);
	free(t->isolate);
	free(t->revision);
	free(t->junit);
	free(t->stress);
	for (size_t i = 0; i < t->nperturb; i++)
		free(t->perturb[i]);
	free(t->perturb);
}
