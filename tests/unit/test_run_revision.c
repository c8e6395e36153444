/* revision: git HEAD of a work tree read from .git (loose and packed refs,
 * detached, worktrees, gitfiles, subdirectories), and the fallback that
 * asks git itself. */
#include "buildconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <event2/event.h>

#include "run/run.h"
#include "util/util.h"

/* git HEAD of a work tree; nothing outside one; also when SIGCHLD is
 * ignored (inherited through exec), so the child is reaped by the kernel
 * and waitpid() has no status to give. */
START_TEST(revision)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", cmd[256];
	char		*rev = (char *)"x", *again = NULL;
	struct sigaction sa, old;
	FILE		*f;
	char		 want[64] = "";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	ck_assert_ptr_null(rev);
	snprintf(cmd, sizeof cmd, "cd %s && git init -q . && "
	    "git -c user.name=t -c user.email=t@t commit -q --allow-empty "
	    "-m x && git rev-parse HEAD", dir);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	ck_assert_ptr_nonnull(fgets(want, sizeof want, f));
	ck_assert_int_eq(pclose(f), 0);
	want[strcspn(want, "\n")] = '\0';
	ck_assert_uint_eq(strlen(want), 40);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	ck_assert_str_eq(rev, want);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGCHLD, &sa, &old);
	ck_assert_int_eq(flaky_revision_git(dir, &again), 0);
	sigaction(SIGCHLD, &old, NULL);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(again, want);
	free(rev);
	free(again);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

#define GITC	"git -c user.name=t -c user.email=t@t"

/* A shell command of a revision test; it must succeed. */
static void
rev_sh(const char *fmt, ...)
{
	char	 cmd[2048];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	ck_assert_int_lt(n, (int)sizeof cmd);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* git's own answer for dir, "" when rev-parse fails. */
static void
rev_want(const char *dir, char *want, size_t size)
{
	char	 cmd[1024];
	FILE	*f;

	snprintf(cmd, sizeof cmd,
	    "git -C '%s' rev-parse --verify -q HEAD 2>/dev/null", dir);
	want[0] = '\0';
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	if (fgets(want, (int)size, f) == NULL)
		want[0] = '\0';
	pclose(f);
	want[strcspn(want, "\n")] = '\0';
}

/* flaky_revision_git() with PATH an empty directory: git cannot be
 * spawned, so only the files can give the answer. */
static char *
rev_nogit(const char *dir)
{
	char	 empty[] = "/tmp/flaky-nopath-XXXXXX", *old, *rev = NULL;

	ck_assert_ptr_nonnull(mkdtemp(empty));
	ck_assert_ptr_nonnull(old = strdup(getenv("PATH")));
	setenv("PATH", empty, 1);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	setenv("PATH", old, 1);
	free(old);
	ck_assert_int_eq(rmdir(empty), 0);
	return rev;
}

/* Our answer equals git's, with git on PATH and, when fast, without it;
 * returns git's answer into want. */
static void
rev_check(const char *dir, int fast, char *want, size_t size)
{
	char	*rev = (char *)"x";

	rev_want(dir, want, size);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	if (want[0] == '\0')
		ck_assert_ptr_null(rev);
	else
		ck_assert_str_eq(rev, want);
	free(rev);
	if (!fast)
		return;
	rev = rev_nogit(dir);
	if (want[0] == '\0')
		ck_assert_ptr_null(rev);
	else
		ck_assert_str_eq(rev, want);
	free(rev);
}

/* rev_check, fast path too, where git finds a SHA-1 revision. */
static void
rev_found(const char *dir, char *want, size_t size)
{
	rev_check(dir, 1, want, size);
	ck_assert_uint_eq(strlen(want), 40);
}

/* A new repository with branch main and n commits in dir/sub. */
static void
rev_repo(const char *dir, const char *sub, int n)
{
	rev_sh("git init -q -b main '%s/%s'", dir, sub);
	for (int i = 0; i < n; i++)
		rev_sh("cd '%s/%s' && " GITC " commit -q --allow-empty -m c%d",
		    dir, sub, i);
}

/* A loose branch ref, and a chain of symbolic refs to it. */
START_TEST(revision_loose)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char		 want[128], first[128];
	struct stat	 st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 2);
	snprintf(path, sizeof path, "%s/r/.git/refs/heads/main", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_found(path, want, sizeof want);
	rev_sh("cd '%s' && git branch -q old HEAD~1 && "
	    "git symbolic-ref refs/heads/alias refs/heads/old && "
	    "git symbolic-ref HEAD refs/heads/alias", path);
	memcpy(first, want, sizeof first);
	rev_found(path, want, sizeof want);
	ck_assert_str_ne(want, first);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A branch only in packed-refs, after pack-refs removed its loose file. */
START_TEST(revision_packed)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char		 want[128];
	struct stat	 st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	rev_sh("cd '%s/r' && " GITC " tag -a -m t v1 && git branch -q other && "
	    "git pack-refs --all", dir);
	snprintf(path, sizeof path, "%s/r/.git/refs/heads/main", dir);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_found(path, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A detached HEAD holds the id itself. */
START_TEST(revision_detached)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128], tip[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 2);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_want(path, tip, sizeof tip);
	rev_sh("cd '%s' && git checkout -q --detach HEAD~1", path);
	rev_found(path, want, sizeof want);
	ck_assert_str_ne(want, tip);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A linked worktree: its own HEAD, the branches of the common dir, loose
 * and then packed. */
START_TEST(revision_worktree)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512], wt[512];
	char	 want[128], mainrev[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	snprintf(path, sizeof path, "%s/r", dir);
	snprintf(wt, sizeof wt, "%s/wt", dir);
	rev_sh("cd '%s' && git worktree add -q '%s' 2>/dev/null && "
	    "cd '%s' && " GITC " commit -q --allow-empty -m w && "
	    "mkdir sub", path, wt, wt);
	rev_check(path, 1, mainrev, sizeof mainrev);
	rev_found(wt, want, sizeof want);
	ck_assert_str_ne(want, mainrev);
	rev_sh("git -C '%s' pack-refs --all", path);
	rev_found(wt, want, sizeof want);
	snprintf(wt, sizeof wt, "%s/wt/sub", dir);
	rev_found(wt, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A .git file naming the git dir elsewhere, absolute and relative. */
START_TEST(revision_gitfile)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_sh("cd '%s' && git init -q -b main --separate-git-dir store wt && "
	    "cd wt && " GITC " commit -q --allow-empty -m x && "
	    "grep -q '^gitdir: /' .git", dir);
	snprintf(path, sizeof path, "%s/wt", dir);
	rev_found(path, want, sizeof want);
	rev_sh("printf 'gitdir: ../store\\n' >'%s/.git'", path);
	rev_found(path, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* From a subdirectory of the work tree, also through a symlink from
 * outside it (git -C works from the physical path). */
START_TEST(revision_subdir)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	rev_sh("mkdir -p '%s/r/a/b/c' '%s/out' && "
	    "ln -s '%s/r/a/b' '%s/out/link'", dir, dir, dir, dir);
	snprintf(path, sizeof path, "%s/r/a/b/c", dir);
	rev_found(path, want, sizeof want);
	snprintf(path, sizeof path, "%s/out/link", dir);
	rev_found(path, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* No revision: an unborn branch, a directory outside any repository, one
 * that does not exist. */
START_TEST(revision_none)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 0);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_check(path, 1, want, sizeof want);
	ck_assert_str_eq(want, "");
	rev_check(dir, 1, want, sizeof want);
	ck_assert_str_eq(want, "");
	snprintf(path, sizeof path, "%s/missing", dir);
	rev_check(path, 1, want, sizeof want);
	ck_assert_str_eq(want, "");
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* What the files do not settle goes to git: environment that moves the
 * repository (also with SIGCHLD ignored), a bare git dir, a reftable
 * directory, an id git accepts but does not write. Without git on PATH
 * these give no revision, which shows git was asked, not guessed for. */
START_TEST(revision_fallback)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char		 gitdir[512], want[128], tip[128], *rev;
	struct sigaction sa, old;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	snprintf(path, sizeof path, "%s/r", dir);
	snprintf(gitdir, sizeof gitdir, "%s/r/.git", dir);
	rev_want(path, tip, sizeof tip);
	ck_assert_uint_eq(strlen(tip), 40);

	/* dir itself is no repository; GIT_DIR names one */
	setenv("GIT_DIR", gitdir, 1);
	rev_check(dir, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(dir));
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGCHLD, &sa, &old);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	sigaction(SIGCHLD, &old, NULL);
	ck_assert_ptr_nonnull(rev);
	ck_assert_str_eq(rev, tip);
	free(rev);
	unsetenv("GIT_DIR");
	ck_assert_ptr_null(rev_nogit(dir));

	/* inside the git dir */
	rev_check(gitdir, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(gitdir));

	/* upper-case hex: git reads it, we do not */
	rev_sh("tr a-f A-F <'%s/refs/heads/main' >'%s/up' && "
	    "mv '%s/up' '%s/refs/heads/main'", gitdir, gitdir, gitdir, gitdir);
	rev_check(path, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(path));

	/* a reftable directory (git 2.39 ignores it without the extension) */
	rev_sh("printf '%%s\\n' '%s' >'%s/refs/heads/main' && "
	    "mkdir '%s/reftable'", tip, gitdir, gitdir);
	rev_check(path, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(path));
	rev_sh("rm -rf '%s'", dir);
}
END_TEST
int
main(void)
{
	Suite	*s;
	TCase	*tc;
	SRunner	*sr;
	int	 failed;

	/* git reads no ~/.gitconfig nor /etc/gitconfig here: the package
	 * builds with HOME elsewhere, and a test must not pass on a
	 * developer's identity */
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	s = suite_create("revision");
	tc = tcase_create("revision");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, revision);
	tcase_add_test(tc, revision_loose);
	tcase_add_test(tc, revision_packed);
	tcase_add_test(tc, revision_detached);
	tcase_add_test(tc, revision_worktree);
	tcase_add_test(tc, revision_gitfile);
	tcase_add_test(tc, revision_subdir);
	tcase_add_test(tc, revision_none);
	tcase_add_test(tc, revision_fallback);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
