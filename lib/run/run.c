/* spawn -> parse -> a record for the store. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/run.h"

struct run_priv {
	struct flaky_run	*run;
	struct flaky_proc	*proc;
	struct flaky_parser	*parser[2];
	struct flaky_buf	 out, err, error;
	char			*junit;
	char			*dir;
	flaky_run_done_cb	 done_cb;
	void			*arg;
};

static void
run_data(void *arg, int stream, const char *s, size_t n)
{
	struct run_priv	*rp = arg;

	if (rp->parser[stream] != NULL &&
	    flaky_parser_feed(rp->parser[stream], s, n) < 0) {
		/* Out of memory: stop parsing this stream, keep the run. */
		flaky_parser_free(rp->parser[stream]);
		rp->parser[stream] = NULL;
		flaky_buf_adds(&rp->error, "parser ran out of memory; ");
	}
}

/* Results of both streams and the JUnit file, warnings into error. */
static void
run_collect(struct run_priv *rp)
{
	struct flaky_run	*run = rp->run;
	struct flaky_results	 r;
	struct flaky_buf	 warn;
	char			 err[512];
	int			 any = 0, said = 0;

	flaky_buf_init(&warn);

	for (int i = 0; i < 2; i++) {
		if (rp->parser[i] == NULL)
			continue;
		flaky_results_init(&r);
		if (flaky_parser_finish(rp->parser[i], &r) == 0) {
			if (r.n > 0 || r.runner[0] != '\0') {
				/* A recognized stream's warning says why its
				 * results are partial or missing; "no test
				 * result" is no news beside another's reason
				 * (pytest's header on stdout, why it stopped
				 * on stderr). */
				if (r.warning != NULL && (strcmp(r.warning,
				    FLAKY_PARSE_NO_RESULT) != 0 || !said)) {
					if (said < 0)
						flaky_buf_reset(&warn);
					flaky_buf_printf(&warn, "%s: %s; ",
					    r.runner[0] ? r.runner : "output",
					    r.warning);
					said = strcmp(r.warning,
					    FLAKY_PARSE_NO_RESULT) == 0 ? -1 : 1;
				}
				flaky_results_merge(&run->results, &r);
				any = 1;
			}
		}
		flaky_results_free(&r);
	}
	if (rp->junit != NULL) {
		flaky_results_init(&r);
		if (flaky_parse_junit(rp->junit, &r, err, sizeof err) < 0)
			flaky_buf_printf(&rp->error, "%s; ", err);
		else if (r.n > 0) {
			/* The file has durations and every test: prefer it,
			 * but keep what the output said of the runner. */
			struct flaky_results old = run->results;

			run->results = r;
			flaky_results_init(&r);
			if (run->results.version == NULL) {
				run->results.version = old.version;
				old.version = NULL;
			}
			if (run->results.seed == NULL) {
				run->results.seed = old.seed;
				old.seed = NULL;
			}
			flaky_results_free(&old);
			/* The streams' warnings were about the streams. */
			flaky_buf_reset(&warn);
			any = 1;
		}
		flaky_results_free(&r);
	}
	if (warn.len > 0)
		flaky_buf_add(&rp->error, warn.data, warn.len);
	if (warn.oom)
		flaky_buf_adds(&rp->error, "out of memory; ");
	flaky_buf_free(&warn);
	if (!any && run->rec.status == FLAKY_RUN_INTERRUPTED)
		flaky_buf_adds(&rp->error, "interrupted: stopped before it "
		    "ended; ");
	else if (!any)
		flaky_buf_adds(&rp->error, "no known test runner output "
		    "(" FLAKY_PARSE_RUNNERS ") was recognized; ");
	if (rp->error.len >= 2) {
		rp->error.len -= 2;	/* the last "; " */
		rp->error.data[rp->error.len] = '\0';
		run->rec.error = rp->error.data;
	}
}

/* The seed hook's margins, from the run's TMPDIR before it goes. A file
 * that cannot be read is said in the run's error; the results stay. */
static void
run_headroom(struct run_priv *rp, struct flaky_proc *proc)
{
	char	 path[4096], err[512];
	const char *tmp = flaky_proc_tmpdir(proc);

	if (tmp == NULL || snprintf(path, sizeof path, "%s/%s", tmp,
	    FLAKY_HEADROOM_FILE) >= (int)sizeof path)
		return;
	if (flaky_parse_headroom(path, rp->dir, &rp->run->results, err,
	    sizeof err) < 0) {
		flaky_buf_printf(&rp->error, "%sseed hook: %s",
		    rp->error.len ? "; " : "", err);
		rp->run->rec.error = rp->error.data;
	}
}

static void
run_done(void *arg, struct flaky_proc *proc)
{
	struct run_priv			*rp = arg;
	struct flaky_run		*run = rp->run;
	const struct flaky_proc_info	*pi = flaky_proc_info(proc);

	switch (pi->end) {
	case FLAKY_PROC_TIMEOUT:
		run->rec.status = FLAKY_RUN_TIMEOUT;
		break;
	case FLAKY_PROC_STOPPED:
		run->rec.status = FLAKY_RUN_INTERRUPTED;
		break;
	default:
		run->rec.status = FLAKY_RUN_DONE;
	}
	run->rec.started_ms = pi->start_ms;
	run->rec.ended_ms = pi->end_ms;
	run->rec.duration_us = pi->wall_us;
	run->rec.exit_code = pi->exit_code;
	run->rec.signal = pi->signal;
	run->rec.in_flight = pi->in_flight;
	run->rec.loadavg = pi->loadavg;
	run->rec.user_us = pi->user_us;
	run->rec.sys_us = pi->sys_us;
	run->rec.maxrss_kb = pi->maxrss_kb;
	run->rec.output_bytes = pi->bytes[0] + pi->bytes[1];
	run->rec.output_dropped = pi->dropped[0] + pi->dropped[1];
	run->stacks = flaky_proc_take_stacks(proc);
	flaky_proc_output(proc, FLAKY_STDOUT, &rp->out);
	flaky_proc_output(proc, FLAKY_STDERR, &rp->err);
	run->rec.out = rp->out.data;
	run->rec.out_len = rp->out.len;
	run->rec.err = rp->err.data;
	run->rec.err_len = rp->err.len;
	if (run->rec.status == FLAKY_RUN_TIMEOUT)
		flaky_buf_adds(&rp->error, "killed at its time limit; ");
	if (pi->capture_oom)
		flaky_buf_adds(&rp->error,
		    "output not all kept: out of memory; ");
	run_collect(rp);
	if (rp->dir != NULL)
		run_headroom(rp, proc);
	/* The parsers are done; the caller may keep the run a while. */
	for (int i = 0; i < 2; i++) {
		flaky_parser_free(rp->parser[i]);
		rp->parser[i] = NULL;
	}
	/* The process group is gone: its TMPDIR can go too. */
	flaky_proc_free(proc);
	rp->proc = NULL;
	if (rp->done_cb != NULL)
		rp->done_cb(run, rp->arg);
}

int
flaky_run_start(struct flaky_spawner *sp, const struct flaky_run_spec *spec,
    flaky_run_done_cb done_cb, void *arg, struct flaky_run **ret, char *err,
    size_t errlen)
{
	struct flaky_spawn_opts	 o;
	struct flaky_stacks_opts so;
	struct flaky_run	*run;
	struct run_priv		*rp;
	int			 r;

	*ret = NULL;
	if ((run = calloc(1, sizeof *run)) == NULL)
		return -ENOMEM;
	if ((rp = calloc(1, sizeof *rp)) == NULL) {
		free(run);
		return -ENOMEM;
	}
	run->priv = rp;
	rp->run = run;
	rp->done_cb = done_cb;
	rp->arg = arg;
	flaky_results_init(&run->results);
	flaky_buf_init(&rp->out);
	flaky_buf_init(&rp->err);
	flaky_buf_init(&rp->error);
	run->rec.exit_code = -1;
	run->rec.loadavg = -1;
	if (spec->junit_path != NULL) {
		if (spec->junit_path[0] != '/' && spec->dir != NULL)
			r = asprintf(&rp->junit, "%s/%s", spec->dir,
			    spec->junit_path);
		else
			r = (rp->junit = strdup(spec->junit_path)) ? 0 : -1;
		if (r < 0) {
			rp->junit = NULL;
			flaky_run_free(run);
			return -ENOMEM;
		}
		/* A file left by an earlier run must not count for this one. */
		unlink(rp->junit);
	}
	if (spec->headroom && (rp->dir = strdup(spec->dir ? spec->dir :
	    ".")) == NULL) {
		flaky_run_free(run);
		return -ENOMEM;
	}
	for (int i = 0; i < 2; i++) {
		if ((r = flaky_parser_new(&rp->parser[i], spec->dir)) < 0) {
			flaky_run_free(run);
			return r;
		}
	}
	memset(&o, 0, sizeof o);
	o.argv = spec->argv;
	o.dir = spec->dir;
	o.envp = spec->envp;
	o.timeout_ms = spec->timeout_ms;
	o.grace_ms = spec->grace_ms;
	o.capture_max = spec->capture_max;
	o.path = spec->path;
	o.more = spec->more;
	so.bound_ms = spec->stacks_ms;
	so.native = spec->stacks_native;
	if (!spec->no_stacks)
		o.stacks = &so;
	run->rec.started_ms = flaky_now_ms();
	r = flaky_spawn(sp, &o, run_data, run_done, rp, &rp->proc, err,
	    errlen);
	if (r < 0) {
		run->rec.status = FLAKY_RUN_ERROR;
		run->rec.ended_ms = run->rec.started_ms;
		flaky_buf_adds(&rp->error, err);
		run->rec.error = rp->error.data;
		*ret = run;
		return r;
	}
	run->rec.status = FLAKY_RUN_RUNNING;
	run->rec.started_ms = flaky_proc_info(rp->proc)->start_ms;
	run->rec.in_flight = flaky_proc_info(rp->proc)->in_flight;
	run->rec.loadavg = flaky_proc_info(rp->proc)->loadavg;
	*ret = run;
	return 0;
}

void
flaky_run_stop(struct flaky_run *run)
{
	struct run_priv	*rp = run->priv;

	if (rp->proc != NULL)
		flaky_proc_stop(rp->proc);
}

void
flaky_run_free(struct flaky_run *run)
{
	struct run_priv	*rp;

	if (run == NULL)
		return;
	rp = run->priv;
	if (rp != NULL) {
		flaky_proc_free(rp->proc);
		for (int i = 0; i < 2; i++)
			flaky_parser_free(rp->parser[i]);
		flaky_buf_free(&rp->out);
		flaky_buf_free(&rp->err);
		flaky_buf_free(&rp->error);
		free(rp->junit);
		free(rp->dir);
		free(rp);
	}
	flaky_results_free(&run->results);
	flaky_stacks_free(run->stacks);
	free(run);
}
