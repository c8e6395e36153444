/* A config becoming the running schedule: what the daemon derives from
 * it (each target's environment, completed command and runner version,
 * held by the runs in flight through a reference), and the targets kept
 * by name across a reload, created, or ended after their last trigger. */
#include "buildconf.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flakyd.h"
#include "log.h"
#include "classify/classify.h"
#include "run/run.h"
#include "sched/sched.h"
#include "store/store.h"

/* The minimal environment of a run: PATH, HOME, LANG, TZ, USER (TMPDIR is
 * the spawner's, per run), then the target's env: over them. */
static char **
make_envp(const struct flaky_config *cfg, const struct flaky_target *t)
{
	struct passwd	*pw = getpwuid(geteuid());
	const char	*path = getenv("PATH"), *home = getenv("HOME");
	const char	*lang = getenv("LANG"), *tz = cfg->timezone;
	const char	*user = pw ? pw->pw_name : getenv("USER");
	char		**v;
	size_t		 n = 0;

	v = xcalloc(6 + t->nenv, sizeof *v);
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	if ((home == NULL || *home == '\0') && pw != NULL)
		home = pw->pw_dir;
	if (lang == NULL || *lang == '\0')
		lang = "C.UTF-8";
	if (tz == NULL)
		tz = getenv("TZ");
	xasprintf(&v[n++], "PATH=%s", path);
	if (home != NULL)
		xasprintf(&v[n++], "HOME=%s", home);
	xasprintf(&v[n++], "LANG=%s", lang);
	if (tz != NULL && *tz != '\0')
		xasprintf(&v[n++], "TZ=%s", tz);
	if (user != NULL)
		xasprintf(&v[n++], "USER=%s", user);
	for (size_t i = 0; i < t->nenv; i++) {
		size_t	 len = strlen(t->env[i].name);
		size_t	 j;

		for (j = 0; j < n; j++)
			if (strncmp(v[j], t->env[i].name, len) == 0 &&
			    v[j][len] == '=')
				break;
		if (j < n)
			free(v[j]);
		else
			n++;
		xasprintf(&v[j], "%s=%s", t->env[i].name, t->env[i].value);
	}
	v[n] = NULL;
	return v;
}

/* A loaded config with the environment of each target. */
struct cfgref *
cfgref_new(struct flaky_config *cfg)
{
	struct cfgref	*c = xcalloc(1, sizeof *c);

	c->cfg = cfg;
	c->refs = 1;
	c->envs = xcalloc(cfg->ntargets + 1, sizeof *c->envs);
	c->cmds = xcalloc(cfg->ntargets + 1, sizeof *c->cmds);
	c->versions = xcalloc(cfg->ntargets + 1, sizeof *c->versions);
	for (size_t i = 0; i < cfg->ntargets; i++) {
		const struct flaky_command_opts co = { .keep_jest_cache = 1 };
		char	 err[512];

		c->envs[i] = make_envp(cfg, &cfg->targets[i]);
		/* The same completion as flakyctl analyze: a YAML command
		 * `pytest tests/` gives every test's outcome too. */
		if (flaky_command_complete(cfg->targets[i].argv, c->envs[i],
		    &co, &c->cmds[i], err, sizeof err) < 0)
			fatalx("target %s: %s", cfg->targets[i].name, err);
		if (c->cmds[i].note != NULL)
			log_info("target %s: %s", cfg->targets[i].name,
			    c->cmds[i].note);
		c->versions[i] = flaky_runner_version(&c->cmds[i],
		    cfg->targets[i].dir ? cfg->targets[i].dir : ".");
	}
	return c;
}

/* perturb: shuffle needs a runner that shuffles (pytest with
 * pytest-random-order, Jest, go test), seed a Python one (pytest,
 * unittest) and the hook: told at the step's place in the file, before
 * anything of the file is applied. */
int
perturb_check_config(const struct flaky_config *cfg, char *err,
    size_t errlen)
{
	const struct flaky_command_opts co = { .keep_jest_cache = 1 };
	struct flaky_command cmd;
	char		**envp, **av, **ev, why[256];
	const char	*w;
	int		 r = 0;

	for (size_t i = 0; r == 0 && i < cfg->ntargets; i++) {
		const struct flaky_target *t = &cfg->targets[i];

		if (t->perturb_line == 0 && t->seed_line == 0)
			continue;
		memset(&cmd, 0, sizeof cmd);
		why[0] = '\0';
		envp = make_envp(cfg, t);
		if ((r = flaky_command_complete(t->argv, envp, &co, &cmd, why,
		    sizeof why)) == 0 && (t->perturb_line == 0 ||
		    (r = flaky_command_shuffle(&cmd, "1", &av, &ev, why,
		    sizeof why)) == 0)) {
			if (t->perturb_line != 0) {
				flaky_command_free_vec(av);
				flaky_command_free_vec(ev);
			}
			if (t->seed_line != 0 && (r = flaky_command_seed(&cmd,
			    "1", NULL, 0, &av, &ev, why, sizeof why)) == 0) {
				flaky_command_free_vec(av);
				flaky_command_free_vec(ev);
			}
		}
		flaky_command_clear(&cmd);
		flaky_command_free_vec(envp);
		if (r == 0)
			continue;
		/* "--shuffle: unittest cannot ..." is analyze's wording */
		w = strncmp(why, "--shuffle: ", 11) == 0 ? why + 11 : why;
		if (strncmp(why, "--perturb seed: ", 16) == 0)
			r = flaky_error(err, errlen, EINVAL, "%s:%d:%d: "
			    "perturb: seed: %s", cfg->path, t->seed_line,
			    t->seed_col, why + 16);
		else
			r = flaky_error(err, errlen, EINVAL, "%s:%d:%d: "
			    "perturb: shuffle: %s", cfg->path, t->perturb_line,
			    t->perturb_col, w);
	}
	return r;
}

/* Drop a reference; the last frees the config. */
void
cfgref_unref(struct cfgref *c)
{
	if (c == NULL || --c->refs > 0)
		return;
	for (size_t i = 0; i < c->cfg->ntargets; i++) {
		for (char **e = c->envs[i]; *e != NULL; e++)
			free(*e);
		free(c->envs[i]);
		flaky_command_clear(&c->cmds[i]);
		free(c->versions[i]);
	}
	free(c->envs);
	free(c->cmds);
	free(c->versions);
	flaky_config_free(c->cfg);
	free(c);
}

/* The command as stored in targets.command. */
static char *
command_text(const struct flaky_target *t)
{
	struct flaky_buf b;

	if (t->shell)
		return xstrdup(t->argv[2]);
	flaky_buf_init(&b);
	for (size_t i = 0; i < t->argc; i++)
		flaky_buf_printf(&b, "%s%s", i ? " " : "", t->argv[i]);
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

/* Free a target's state (its waiting trigger too). */
void
tstate_free(struct tstate *ts)
{
	if (ts == NULL)
		return;
	trigger_free(ts->pending);
	free(ts->name);
	free(ts);
}

/* Fill a new target state from the store: its id, last run. */
static struct tstate *
tstate_new(struct flakyd *d, const struct flaky_target *t, char *err,
    size_t errlen)
{
	struct tstate	*ts = xcalloc(1, sizeof *ts);
	char		*cmd = command_text(t);
	int		 r;

	ts->name = xstrdup(t->name);
	ts->def = t;
	ts->due_ms = ts->fire_ms = FLAKY_NO_FIRE;
	r = flaky_store_target(d->store, t->name, cmd, t->dir, &ts->id, err,
	    errlen);
	free(cmd);
	if (r == 0)
		r = flaky_store_last_run(d->store, ts->id, &ts->last, err,
		    errlen);
	if (r < 0) {
		tstate_free(ts);
		return NULL;
	}
	return ts;
}

/* Make cfg the running schedule: targets kept by name (their triggers and
 * history undisturbed), new ones created in the store, removed ones ended
 * after their running trigger. On error nothing changed and the caller
 * still owns cfg. */
int
sched_apply(struct flakyd *d, struct flaky_config *cfg, char *err,
    size_t errlen)
{
	struct tstate	**nv, *ts;
	struct cfgref	*old = d->cur;
	struct flaky_classifier *cls = NULL;
	int64_t		 now = flaky_now_ms();
	size_t		 i, j;
	int		 r;

	/* The config's signatures first: a bad one refuses the file before
	 * anything changed. */
	if ((r = flaky_classifier_from_config(cfg, &cls, err, errlen)) < 0)
		return r;
	if ((r = perturb_check_config(cfg, err, errlen)) < 0) {
		flaky_classifier_free(cls);
		return r;
	}
	nv = xcalloc(cfg->ntargets + 1, sizeof *nv);
	/* New targets in one transaction: a thousand rows, one sync. */
	if ((r = flaky_store_begin(d->store, err, errlen)) < 0) {
		free(nv);
		return r;
	}
	for (i = 0; i < cfg->ntargets; i++) {
		if ((nv[i] = sched_find(d, cfg->targets[i].name)) != NULL) {
			/* Kept: its command or directory may have changed. */
			char	*cmd = command_text(&cfg->targets[i]);
			int64_t	 id;

			r = flaky_store_target(d->store, nv[i]->name, cmd,
			    cfg->targets[i].dir, &id, err, errlen);
			free(cmd);
			if (r < 0)
				goto fail;
			continue;
		}
		nv[i] = tstate_new(d, &cfg->targets[i], err, errlen);
		if (nv[i] == NULL) {
			r = -EIO;
			goto fail;
		}
		nv[i]->def = NULL;	/* marks it new below */
	}
	if ((r = flaky_store_commit(d->store, err, errlen)) < 0)
		goto fail;

	d->cur = cfgref_new(cfg);
	/* Runs finishing from now on are classified with the new file. */
	flaky_pipeline_set_classifier(d->pl, cls);
	flaky_classifier_free(d->classifier);
	d->classifier = cls;
	cls = NULL;
	for (i = 0; i < cfg->ntargets; i++) {
		const struct flaky_target *t = &cfg->targets[i];
		char	 src[64];
		int	 same;

		ts = nv[i];
		flaky_sched_format(&t->sched, src, sizeof src);
		same = ts->def != NULL && ts->due_ms != FLAKY_NO_FIRE &&
		    t->has_schedule && strcmp(src, ts->sched_src) == 0 &&
		    t->jitter_ms == ts->jitter_ms;
		ts->def = t;
		if (!same)
			sched_next_fire(d, ts, now);
	}
	/* Targets no longer in the file: their history stays in the store;
	 * a running trigger ends normally, anything queued is dropped. */
	for (i = 0; i < d->ntargets; i++) {
		ts = d->targets[i];
		for (j = 0; j < cfg->ntargets; j++)
			if (nv[j] == ts)
				break;
		if (j < cfg->ntargets)
			continue;
		trigger_free(ts->pending);
		ts->pending = NULL;
		ts->def = NULL;
		ts->removed = 1;
		if (ts->active != NULL && !ts->active->has_slot) {
			TAILQ_REMOVE(&d->waitq, ts->active, wait);
			d->nwaiting--;
			trigger_free(ts->active);
			ts->active = NULL;
		}
		if (ts->active == NULL)
			tstate_free(ts);
		else
			LIST_INSERT_HEAD(&d->gone, ts, gone);
	}
	free(d->targets);
	d->targets = nv;
	d->ntargets = cfg->ntargets;
	cfgref_unref(old);
	d->armed_ms = -1;	/* force a re-arm */
	sched_arm(d);
	sched_kick(d);
	return 0;
fail:
	flaky_store_rollback(d->store);
	for (i = 0; i < cfg->ntargets; i++)
		if (nv[i] != NULL && sched_find(d, nv[i]->name) != nv[i])
			tstate_free(nv[i]);
	free(nv);
	flaky_classifier_free(cls);
	return r;
}
