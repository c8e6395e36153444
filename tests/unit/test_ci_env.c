/* ci_env (lib/ingest/ci_env.c): each CI system's variables, as its
 * documentation names them (docs/ci.md has the table), give the
 * revision, branch, pull request, job, its URL, attempt and runner. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "util/util.h"

/* s, or "-" for NULL. */
static const char *
s_(const char *s)
{
	return s != NULL ? s : "-";
}

/* The fields of out as one line. */
static char *
line(const struct flaky_ci_env *o)
{
	static char	 b[2048];

	snprintf(b, sizeof b, "%s|%s|%s|%s|%s|%s|%d|%s|%s", s_(o->ci),
	    s_(o->revision), s_(o->branch), s_(o->pr), s_(o->job),
	    s_(o->job_url), o->attempt, s_(o->box), s_(o->project));
	return b;
}

START_TEST(github_pull_request)
{
	char	*e[] = { "GITHUB_ACTIONS=true", "GITHUB_SHA=a1b2c3",
	    "GITHUB_REF=refs/pull/42/merge", "GITHUB_REF_NAME=42/merge",
	    "GITHUB_HEAD_REF=fix-login", "GITHUB_WORKFLOW=ci",
	    "GITHUB_JOB=unit", "GITHUB_SERVER_URL=https://github.com",
	    "GITHUB_REPOSITORY=acme/shop", "GITHUB_RUN_ID=99",
	    "GITHUB_RUN_ATTEMPT=2", "RUNNER_NAME=gh-7", NULL };
	struct flaky_ci_env o;

	ck_assert_int_eq(flaky_ci_from_env(e, &o), 1);
	ck_assert_str_eq(line(&o), "github|a1b2c3|fix-login|42|ci/unit|"
	    "https://github.com/acme/shop/actions/runs/99/attempts/2|2|gh-7|"
	    "shop");
}
END_TEST

/* Runner names that are no box names: made into one, not refused (an
 * upload with such a box would be refused whole). */
START_TEST(runner_names)
{
	char	*g[] = { "GITHUB_ACTIONS=true", "RUNNER_NAME=GitHub Actions 2",
	    NULL };
	char	*l[] = { "GITLAB_CI=true",
	    "CI_RUNNER_DESCRIPTION=  shared runner (docker) #3 ", NULL };
	char	*x[] = { "GITLAB_CI=true", "CI_RUNNER_DESCRIPTION=\xc3\xa9 ?",
	    NULL };
	struct flaky_ci_env o;

	ck_assert_int_eq(flaky_ci_from_env(g, &o), 1);
	ck_assert_str_eq(o.box, "GitHub-Actions-2");
	ck_assert_int_eq(flaky_ci_from_env(l, &o), 1);
	ck_assert_str_eq(o.box, "shared-runner-docker-3");
	ck_assert_int_eq(flaky_box_check(o.box, NULL, 0), 0);
	ck_assert_int_eq(flaky_ci_from_env(x, &o), 1);
	ck_assert_ptr_null(o.box);
}
END_TEST

START_TEST(github_push)
{
	char	*e[] = { "GITHUB_ACTIONS=true", "GITHUB_SHA=a1b2c3",
	    "GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main",
	    "GITHUB_HEAD_REF=", "GITHUB_JOB=unit", NULL };
	struct flaky_ci_env o;

	ck_assert_int_eq(flaky_ci_from_env(e, &o), 1);
	ck_assert_str_eq(line(&o), "github|a1b2c3|main|-|unit|-|0|-|-");
}
END_TEST

START_TEST(gitlab_merge_request)
{
	char	*e[] = { "GITLAB_CI=true", "CI_COMMIT_SHA=d4e5",
	    "CI_COMMIT_REF_NAME=refs/merge-requests/7/head",
	    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=feature",
	    "CI_MERGE_REQUEST_IID=7", "CI_JOB_NAME=test: [py3]",
	    "CI_JOB_URL=https://gitlab.example/acme/shop/-/jobs/555",
	    "CI_RUNNER_DESCRIPTION=runner-1", "CI_PROJECT_NAME=shop", NULL };
	struct flaky_ci_env o;

	ck_assert_int_eq(flaky_ci_from_env(e, &o), 1);
	ck_assert_str_eq(line(&o), "gitlab|d4e5|feature|7|test: [py3]|"
	    "https://gitlab.example/acme/shop/-/jobs/555|0|runner-1|shop");
}
END_TEST

START_TEST(others)
{
	char	*j[] = { "JENKINS_URL=https://ci/", "GIT_COMMIT=f00",
	    "GIT_BRANCH=origin/release", "JOB_NAME=shop/unit",
	    "BUILD_URL=https://ci/job/shop/12/", "NODE_NAME=agent-3", NULL };
	char	*b[] = { "BUILDKITE=true", "BUILDKITE_COMMIT=c0ffee",
	    "BUILDKITE_BRANCH=main", "BUILDKITE_PULL_REQUEST=false",
	    "BUILDKITE_LABEL=:pytest: unit",
	    "BUILDKITE_BUILD_URL=https://buildkite.com/acme/shop/builds/8",
	    "BUILDKITE_JOB_ID=01a", "BUILDKITE_RETRY_COUNT=1",
	    "BUILDKITE_AGENT_NAME=bk-2", "BUILDKITE_PIPELINE_SLUG=shop",
	    NULL };
	char	*c[] = { "CIRCLECI=true", "CIRCLE_SHA1=beef",
	    "CIRCLE_BRANCH=dev",
	    "CIRCLE_PULL_REQUEST=https://github.com/acme/shop/pull/31",
	    "CIRCLE_JOB=test", "CIRCLE_BUILD_URL=https://circleci.com/x/9",
	    "CIRCLE_PROJECT_REPONAME=shop", NULL };
	char	*none[] = { "HOME=/root", "GITHUB_ACTIONS=false", NULL };
	struct flaky_ci_env o;

	ck_assert_int_eq(flaky_ci_from_env(j, &o), 1);
	ck_assert_str_eq(line(&o), "jenkins|f00|release|-|shop/unit|"
	    "https://ci/job/shop/12/|0|agent-3|unit");
	ck_assert_int_eq(flaky_ci_from_env(b, &o), 1);
	ck_assert_str_eq(line(&o), "buildkite|c0ffee|main|-|:pytest: unit|"
	    "https://buildkite.com/acme/shop/builds/8#01a|2|bk-2|shop");
	ck_assert_int_eq(flaky_ci_from_env(c, &o), 1);
	ck_assert_str_eq(line(&o), "circleci|beef|dev|31|test|"
	    "https://circleci.com/x/9|0|-|shop");
	ck_assert_int_eq(flaky_ci_from_env(none, &o), 0);
	ck_assert_ptr_null(o.ci);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("ci_env");
	TCase	*tc = tcase_create("ci_env");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, github_pull_request);
	tcase_add_test(tc, github_push);
	tcase_add_test(tc, runner_names);
	tcase_add_test(tc, gitlab_merge_request);
	tcase_add_test(tc, others);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
