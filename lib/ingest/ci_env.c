/* Where a CI job is, from the variables its CI system sets (docs/ci.md,
 * "What flakyctl upload reads"): GitHub Actions, GitLab CI, Jenkins,
 * Buildkite and CircleCI. Each system's own names; what one does not set
 * stays NULL, and the command line's options win over all of them. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "util/util.h"

/* getenv over an environment array. */
static const char *
env(char *const *envp, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i][n + 1] != '\0' ? envp[i] + n + 1 : NULL;
	return NULL;
}

/* Keep s (a copy) in the fixed buffer of out; NULL stays NULL. */
static const char *
keep(struct flaky_ci_env *out, const char *s)
{
	size_t	 n;
	char	*p;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	if (out->used + n + 1 > sizeof out->buf)
		return NULL;
	p = out->buf + out->used;
	memcpy(p, s, n + 1);
	out->used += n + 1;
	return p;
}

/* A runner's name as a box name (1 to 64 letters, digits, '.', '-', '_'):
 * GitHub's hosted runners are "GitHub Actions 2", GitLab's descriptions
 * are free text; every other byte becomes one '-' a run, none at either
 * end. NULL when nothing is left. */
static const char *
keep_box(struct flaky_ci_env *out, const char *s)
{
	char	 b[FLAKY_BOX_MAX + 1];
	size_t	 n = 0;

	for (; s != NULL && *s != '\0' && n < FLAKY_BOX_MAX; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			b[n++] = (char)c;
		else if (n > 0 && b[n - 1] != '-')
			b[n++] = '-';
	}
	while (n > 0 && b[n - 1] == '-')
		n--;
	b[n] = '\0';
	return n > 0 ? keep(out, b) : NULL;
}

/* The last part of "owner/name" or a path. */
static const char *
last_part(const char *s)
{
	const char	*p;

	if (s == NULL)
		return NULL;
	p = strrchr(s, '/');
	return p != NULL && p[1] != '\0' ? p + 1 : s;
}

/* A positive number in s, or 0. */
static int
number(const char *s)
{
	long	 v;
	char	*end;

	if (s == NULL)
		return 0;
	v = strtol(s, &end, 10);
	return *end == '\0' && v > 0 && v <= 10000 ? (int)v : 0;
}

/* GitHub Actions: the pull request from refs/pull/N/merge, the branch of
 * a pull request from GITHUB_HEAD_REF. */
static void
github(char *const *e, struct flaky_ci_env *o)
{
	const char	*ref = env(e, "GITHUB_REF"), *srv, *repo, *run, *att;
	char		 b[1024];

	o->ci = "github";
	o->revision = keep(o, env(e, "GITHUB_SHA"));
	o->branch = keep(o, env(e, "GITHUB_HEAD_REF") != NULL ?
	    env(e, "GITHUB_HEAD_REF") : env(e, "GITHUB_REF_NAME"));
	if (ref != NULL && strncmp(ref, "refs/pull/", 10) == 0) {
		snprintf(b, sizeof b, "%.*s", (int)strcspn(ref + 10, "/"),
		    ref + 10);
		o->pr = keep(o, b);
	}
	if (env(e, "GITHUB_WORKFLOW") != NULL && env(e, "GITHUB_JOB") != NULL) {
		snprintf(b, sizeof b, "%s/%s", env(e, "GITHUB_WORKFLOW"),
		    env(e, "GITHUB_JOB"));
		o->job = keep(o, b);
	} else
		o->job = keep(o, env(e, "GITHUB_JOB"));
	srv = env(e, "GITHUB_SERVER_URL");
	repo = env(e, "GITHUB_REPOSITORY");
	run = env(e, "GITHUB_RUN_ID");
	att = env(e, "GITHUB_RUN_ATTEMPT");
	if (srv != NULL && repo != NULL && run != NULL) {
		snprintf(b, sizeof b, "%s/%s/actions/runs/%s%s%s", srv, repo,
		    run, att != NULL ? "/attempts/" : "", att ? att : "");
		o->job_url = keep(o, b);
	}
	o->attempt = number(att);
	o->box = keep_box(o, env(e, "RUNNER_NAME"));
	o->project = keep(o, last_part(repo));
}

/* GitLab CI: a merge request's source branch; a retried job is a new
 * job (its own URL), GitLab numbers no attempts. */
static void
gitlab(char *const *e, struct flaky_ci_env *o)
{
	o->ci = "gitlab";
	o->revision = keep(o, env(e, "CI_COMMIT_SHA"));
	o->branch = keep(o, env(e, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") !=
	    NULL ? env(e, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") :
	    env(e, "CI_COMMIT_REF_NAME"));
	o->pr = keep(o, env(e, "CI_MERGE_REQUEST_IID"));
	o->job = keep(o, env(e, "CI_JOB_NAME"));
	o->job_url = keep(o, env(e, "CI_JOB_URL"));
	o->box = keep_box(o, env(e, "CI_RUNNER_DESCRIPTION"));
	o->project = keep(o, env(e, "CI_PROJECT_NAME"));
}

/* Jenkins: the git plugin's GIT_COMMIT and GIT_BRANCH (origin/ dropped),
 * a multibranch pipeline's BRANCH_NAME and CHANGE_ID. */
static void
jenkins(char *const *e, struct flaky_ci_env *o)
{
	const char	*br = env(e, "BRANCH_NAME");

	o->ci = "jenkins";
	o->revision = keep(o, env(e, "GIT_COMMIT"));
	if (br == NULL && (br = env(e, "GIT_BRANCH")) != NULL &&
	    strncmp(br, "origin/", 7) == 0)
		br += 7;
	o->branch = keep(o, br);
	o->pr = keep(o, env(e, "CHANGE_ID"));
	o->job = keep(o, env(e, "JOB_NAME"));
	o->job_url = keep(o, env(e, "BUILD_URL"));
	o->box = keep_box(o, env(e, "NODE_NAME"));
	o->project = keep(o, env(e, "JOB_NAME") != NULL ? last_part(
	    env(e, "JOB_NAME")) : NULL);
}

/* Buildkite: BUILDKITE_PULL_REQUEST is "false" outside one; a retry
 * counts from 0. */
static void
buildkite(char *const *e, struct flaky_ci_env *o)
{
	const char	*pr = env(e, "BUILDKITE_PULL_REQUEST");
	const char	*url = env(e, "BUILDKITE_BUILD_URL");
	const char	*id = env(e, "BUILDKITE_JOB_ID"), *retry;
	char		 b[1024];

	o->ci = "buildkite";
	o->revision = keep(o, env(e, "BUILDKITE_COMMIT"));
	o->branch = keep(o, env(e, "BUILDKITE_BRANCH"));
	o->pr = keep(o, pr != NULL && strcmp(pr, "false") != 0 ? pr : NULL);
	o->job = keep(o, env(e, "BUILDKITE_LABEL") != NULL ?
	    env(e, "BUILDKITE_LABEL") : env(e, "BUILDKITE_STEP_KEY"));
	if (url != NULL && id != NULL) {
		snprintf(b, sizeof b, "%s#%s", url, id);
		o->job_url = keep(o, b);
	}
	if ((retry = env(e, "BUILDKITE_RETRY_COUNT")) != NULL)
		o->attempt = strcmp(retry, "0") == 0 ? 1 : number(retry) > 0 ?
		    number(retry) + 1 : 0;
	o->box = keep_box(o, env(e, "BUILDKITE_AGENT_NAME"));
	o->project = keep(o, env(e, "BUILDKITE_PIPELINE_SLUG"));
}

/* CircleCI: the pull request's number, else the last part of its URL. */
static void
circleci(char *const *e, struct flaky_ci_env *o)
{
	const char	*pr = env(e, "CIRCLE_PR_NUMBER");

	o->ci = "circleci";
	o->revision = keep(o, env(e, "CIRCLE_SHA1"));
	o->branch = keep(o, env(e, "CIRCLE_BRANCH"));
	if (pr == NULL && env(e, "CIRCLE_PULL_REQUEST") != NULL)
		pr = last_part(env(e, "CIRCLE_PULL_REQUEST"));
	o->pr = keep(o, pr);
	o->job = keep(o, env(e, "CIRCLE_JOB"));
	o->job_url = keep(o, env(e, "CIRCLE_BUILD_URL"));
	o->box = keep_box(o, env(e, "CIRCLE_NODE_INDEX") != NULL ?
	    env(e, "HOSTNAME") : NULL);
	o->project = keep(o, env(e, "CIRCLE_PROJECT_REPONAME"));
}

/* Which CI system runs us, and what it says (ingest.h). */
int
flaky_ci_from_env(char *const *envp, struct flaky_ci_env *out)
{
	static const struct {
		const char	*var, *value;
		void		(*fill)(char *const *, struct flaky_ci_env *);
	} systems[] = {
		{ "GITHUB_ACTIONS", "true", github },
		{ "GITLAB_CI", "true", gitlab },
		{ "BUILDKITE", "true", buildkite },
		{ "CIRCLECI", "true", circleci },
		{ "JENKINS_URL", NULL, jenkins },
	};

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) {
		const char *v = env(envp, systems[i].var);

		if (v == NULL || (systems[i].value != NULL &&
		    strcmp(v, systems[i].value) != 0))
			continue;
		systems[i].fill(envp, out);
		return 1;
	}
	return 0;
}
