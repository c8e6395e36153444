/* The git revision of a directory, read from .git directly. Spawning
 * `git rev-parse` costs over a millisecond on a virtual machine (1.1-1.3 ms),
 * a noticeable part of a short analyze call; reading the few files HEAD
 * resolves through costs tens of microseconds. We follow git's own discovery
 * (setup.c) and ref lookup (refs/files-backend.c) for the common layouts
 * only: whatever is unusual (environment that moves the repository, bare
 * repositories, reftable, symlinked HEAD, anything malformed) is handed to
 * git itself, so the answer is always git's and never a guess. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run.h"

extern char **environ;

#define REV_FOUND	0	/* hex filled */
#define REV_NONE	1	/* no revision: git rev-parse would fail */
#define REV_GIT		2	/* not sure: ask git */

#define REV_LINE	4096	/* the longest file or line we read */
#define REV_HEXMAX	64	/* SHA-256; SHA-1 ids have 40 digits */
#define REV_DEPTH	5	/* symbolic refs followed (SYMREF_MAXDEPTH) */

/* Environment that changes where git looks; then only git knows. */
static int
rev_env(void)
{
	static const char *const vars[] = {
		"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR",
		"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
		"GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE",
	};

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (getenv(vars[i]) != NULL)
			return 1;
	return 0;
}

/* a + "/" + b into buf; 0, or -ENAMETOOLONG rather than a cut path. */
static int
rev_join(char *buf, size_t size, const char *a, const char *b)
{
	int	 n;

	/* "/" + ".git" must not become "//.git": git never says that. */
	if (strcmp(a, "/") == 0)
		a = "";
	n = snprintf(buf, size, "%s/%s", a, b);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* A small regular file whole and NUL-terminated: 0, -ENOENT when it is
 * not there, -EISDIR for a directory, -EFBIG when it does not fit, or
 * another negative errno. O_NONBLOCK so that a FIFO cannot hang us,
 * O_NOFOLLOW so that a symlinked ref goes to git. */
static int
rev_read(const char *path, char *buf, size_t size, size_t *ret_len)
{
	struct stat	 st;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY);
	if (fd == -1)
		return -errno;
	if (fstat(fd, &st) == -1) {
		r = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size >= size) {
		r = -EFBIG;
		goto out;
	}
	/* Bounded by size even if the file grows under us. */
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == size - 1) {
		r = -EFBIG;
		goto out;
	}
	buf[len] = '\0';
	if (strlen(buf) != len)
		r = -EINVAL;	/* a NUL inside: not a file git wrote */
	*ret_len = len;
out:
	close(fd);
	return r;
}

/* An object id as git writes it: 40 or 64 lower-case hex digits, not the
 * null id (which git reads as a broken ref). */
static int
rev_ishex(const char *s, size_t n)
{
	int	 zero = 1;

	if (n != 40 && n != REV_HEXMAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if ((s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f'))
			return 0;
		if (s[i] != '0')
			zero = 0;
	}
	return !zero;
}

/* A ref name we can safely make a path of: under refs/ and within git's
 * check_refname_format rules. Others (pseudo-refs, worktree prefixes,
 * anything odd) go to git; this also keeps ".." from leaving the git dir. */
static int
rev_refname(const char *name)
{
	const char	*p;
	size_t		 len = strlen(name);

	if (strncmp(name, "refs/", 5) != 0 || len == 5)
		return 0;
	for (p = name; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f ||
		    strchr("~^:?*[\\", *p) != NULL)
			return 0;
		if (p[0] == '/' && (p[1] == '/' || p[1] == '.' ||
		    p[1] == '\0'))
			return 0;
		if (p[0] == '.' && p[1] == '.')
			return 0;
		if (p[0] == '@' && p[1] == '{')
			return 0;
		if (strncmp(p, ".lock", 5) == 0 && (p[5] == '/' ||
		    p[5] == '\0'))
			return 0;
	}
	return name[len - 1] != '.';
}

/* Refs each worktree keeps for itself (files-backend, is_per_worktree_ref);
 * all others live in the common dir. */
static int
rev_worktree_ref(const char *name)
{
	return strcmp(name, "HEAD") == 0 ||
	    strncmp(name, "refs/bisect/", 12) == 0 ||
	    strncmp(name, "refs/worktree/", 14) == 0 ||
	    strncmp(name, "refs/rewritten/", 15) == 0;
}

/* 1 when path is a directory (following symlinks, as git's access() does). */
static int
rev_isdir(const char *path)
{
	struct stat	 st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Check gitdir the way git's is_git_directory() does (HEAD, objects/ and
 * refs/ of the common dir) and find its common dir: REV_FOUND or REV_GIT. */
static int
rev_gitdir(const char *gitdir, char *common, size_t size)
{
	char		 path[PATH_MAX], buf[REV_LINE];
	struct stat	 st;
	size_t		 len;
	int		 r;

	/* A symlinked HEAD (git before 1.5) is left to git. */
	if (rev_join(path, sizeof path, gitdir, "HEAD") != 0 ||
	    lstat(path, &st) == -1 || !S_ISREG(st.st_mode))
		return REV_GIT;
	if (rev_join(path, sizeof path, gitdir, "commondir") != 0)
		return REV_GIT;
	r = rev_read(path, buf, sizeof buf, &len);
	if (r == -ENOENT) {
		if (strlen(gitdir) >= size)
			return REV_GIT;
		strcpy(common, gitdir);
	} else if (r == 0) {
		/* A linked worktree: "../.." relative to its git dir. */
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		if (len == 0)
			return REV_GIT;
		if (buf[0] == '/') {
			if (len >= size)
				return REV_GIT;
			strcpy(common, buf);
		} else if (rev_join(common, size, gitdir, buf) != 0)
			return REV_GIT;
	} else
		return REV_GIT;
	if (rev_join(path, sizeof path, common, "objects") != 0 ||
	    !rev_isdir(path) ||
	    rev_join(path, sizeof path, common, "refs") != 0 ||
	    !rev_isdir(path))
		return REV_GIT;
	/* reftable keeps refs in binary tables we do not read. */
	if (rev_join(path, sizeof path, common, "reftable") != 0 ||
	    lstat(path, &st) == 0 || errno != ENOENT)
		return REV_GIT;
	return REV_FOUND;
}

/* A .git file ("gitdir: PATH", worktrees and submodules): the git dir it
 * names, relative to top, the directory holding the file. */
static int
rev_gitfile(const char *top, const char *file, char *gitdir, size_t size,
    char *common, size_t csize)
{
	char	 buf[REV_LINE];
	size_t	 len;

	if (rev_read(file, buf, sizeof buf, &len) != 0)
		return REV_GIT;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if (len <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
		return REV_GIT;
	if (buf[8] == '/') {
		if (len - 8 >= size)
			return REV_GIT;
		strcpy(gitdir, buf + 8);
	} else if (rev_join(gitdir, size, top, buf + 8) != 0)
		return REV_GIT;
	return rev_gitdir(gitdir, common, csize);
}

/* Find the git dir of dir as git's setup_git_directory_gently_1() does:
 * from the physical path upward, .git at each level, not across a
 * filesystem boundary. */
static int
rev_discover(const char *dir, char *gitdir, size_t size, char *common,
    size_t csize)
{
	char		 cur[PATH_MAX], path[PATH_MAX], *slash;
	struct stat	 st, up;

	/* git -C resolves symlinks too: it works from getcwd(). */
	if (realpath(dir, cur) == NULL) {
		if (errno == ENOMEM)
			return -ENOMEM;
		if (errno == ENOENT || errno == ENOTDIR)
			return REV_NONE;	/* git -C cannot go there */
		return REV_GIT;
	}
	if (stat(cur, &st) == -1)
		return REV_GIT;
	if (!S_ISDIR(st.st_mode))
		return REV_NONE;
	for (;;) {
		if (rev_join(path, sizeof path, cur, ".git") != 0)
			return REV_GIT;
		if (stat(path, &up) == 0) {
			if (S_ISREG(up.st_mode))
				return rev_gitfile(cur, path, gitdir, size,
				    common, csize);
			/* git would go on past an invalid .git directory;
			 * rare enough to leave to it. */
			if (!S_ISDIR(up.st_mode) || strlen(path) >= size)
				return REV_GIT;
			strcpy(gitdir, path);
			return rev_gitdir(gitdir, common, csize);
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return REV_GIT;
		/* Inside a git dir or a bare repository: git decides. */
		if (rev_join(path, sizeof path, cur, "HEAD") != 0)
			return REV_GIT;
		if (lstat(path, &up) == 0 || errno != ENOENT)
			return REV_GIT;
		if (strcmp(cur, "/") == 0)
			return REV_NONE;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(cur, &up) == -1)
			return REV_GIT;
		/* GIT_DISCOVERY_ACROSS_FILESYSTEM is unset (rev_env). */
		if (up.st_dev != st.st_dev)
			return REV_NONE;
	}
}

/* name in the common dir's packed-refs: REV_FOUND, REV_NONE when it is
 * not there, REV_GIT when the file is not as git writes it. */
static int
rev_packed(const char *common, const char *name, char *hex)
{
	char	 path[PATH_MAX], line[REV_LINE], *sp;
	FILE	*f;
	size_t	 len;
	int	 r = REV_NONE;

	if (rev_join(path, sizeof path, common, "packed-refs") != 0)
		return REV_GIT;
	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOMEM)
			return -ENOMEM;
		return errno == ENOENT ? REV_NONE : REV_GIT;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		len = strlen(line);
		/* Cut by the bound, unterminated, or with a NUL inside. */
		if (len == 0 || line[len - 1] != '\n') {
			r = REV_GIT;
			break;
		}
		line[--len] = '\0';
		/* The header and the peeled ids of annotated tags. */
		if (line[0] == '#' || line[0] == '^')
			continue;
		if ((sp = strchr(line, ' ')) == NULL ||
		    !rev_ishex(line, (size_t)(sp - line))) {
			r = REV_GIT;
			break;
		}
		if (strcmp(sp + 1, name) == 0) {
			memcpy(hex, line, (size_t)(sp - line));
			hex[sp - line] = '\0';
			r = REV_FOUND;
			break;
		}
	}
	if (r == REV_NONE && ferror(f))
		r = REV_GIT;
	fclose(f);
	return r;
}

/* HEAD to an object id: loose refs first (per-worktree ones in the git
 * dir), then packed-refs, following symbolic refs as git does. */
static int
rev_resolve(const char *gitdir, const char *common, char *hex)
{
	char	 name[REV_LINE] = "HEAD", path[PATH_MAX], buf[REV_LINE];
	size_t	 len;
	int	 r, linked = strcmp(gitdir, common) != 0;

	for (int depth = 0; depth < REV_DEPTH; depth++) {
		if (rev_join(path, sizeof path, rev_worktree_ref(name) ?
		    gitdir : common, name) != 0)
			return REV_GIT;
		r = rev_read(path, buf, sizeof buf, &len);
		if (r == -ENOENT || r == -EISDIR) {
			/* Per-worktree refs are never packed in the common
			 * dir; one missing in a linked worktree is odd. */
			if (depth == 0 || (linked && rev_worktree_ref(name)))
				return REV_GIT;
			/* Not there either: an unborn branch, which
			 * rev-parse --verify rejects. */
			return rev_packed(common, name, hex);
		}
		if (r != 0 || len == 0 || buf[len - 1] != '\n')
			return REV_GIT;
		buf[--len] = '\0';
		if (rev_ishex(buf, len)) {
			memcpy(hex, buf, len + 1);
			return REV_FOUND;
		}
		if (strncmp(buf, "ref: ", 5) != 0 || !rev_refname(buf + 5))
			return REV_GIT;
		memcpy(name, buf + 5, len - 5 + 1);
	}
	return REV_GIT;		/* a loop, or deeper than git follows */
}

/* How long git may take (FLAKY_GIT_TIMEOUT_MS, run.h). */
int64_t
flaky_revision_timeout_ms(void)
{
	const char	*s = getenv("FLAKY_GIT_TIMEOUT_MS");
	long long	 n;

	if (s != NULL && flaky_parse_int(s, 1, 24LL * 3600 * 1000, &n) == 0)
		return n;
	return FLAKY_GIT_TIMEOUT_DEFAULT_MS;
}

/* The git command that answers for dir (run.h). */
void
flaky_revision_git_argv(const char *dir, const char *argv[8])
{
	const char	*const a[] = { "git", "-C", dir != NULL ? dir : ".",
	    "rev-parse", "--verify", "-q", "HEAD", NULL };

	memcpy(argv, a, sizeof a);
}

/* git's answer (run.h): its first line, when it exited 0. */
int
flaky_revision_parse(const char *out, size_t len, int exit_code, char **ret)
{
	size_t	 n = 0;

	*ret = NULL;
	while (n < len && out[n] != '\0' && out[n] != '\r' && out[n] != '\n')
		n++;
	if (exit_code != 0 || n == 0)
		return 0;
	if ((*ret = strndup(out, n)) == NULL)
		return -ENOMEM;
	return 0;
}

/* Ask git itself, for the setups the files alone do not settle (a git
 * hung on a lock or a network file system is killed with its process
 * group at the timeout: then there is no revision). */
static int
rev_spawn(const char *dir, char **ret)
{
	const char	*argv[8];
	struct flaky_probe pr = { argv, NULL, NULL, 0, 0 };
	char		 buf[128];
	size_t		 len = 0;
	int		 code, r;

	*ret = NULL;
	flaky_revision_git_argv(dir, argv);
	pr.timeout_ms = flaky_revision_timeout_ms();
	if ((r = flaky_probe_run(&pr, buf, sizeof buf, &len, &code)) ==
	    -ETIMEDOUT)
		return r;
	if (r < 0)
		return 0;	/* no git: no revision */
	return flaky_revision_parse(buf, len, code, ret);
}

/* git HEAD of dir from the files (run.h): FLAKY_REVISION_ASK_GIT when
 * only git can say. */
int
flaky_revision_files(const char *dir, char **ret)
{
	char	 gitdir[PATH_MAX], common[PATH_MAX], hex[REV_HEXMAX + 1];
	int	 r;

	*ret = NULL;
	if (rev_env())
		return FLAKY_REVISION_ASK_GIT;
	r = rev_discover(dir != NULL ? dir : ".", gitdir, sizeof gitdir,
	    common, sizeof common);
	if (r == REV_FOUND)
		r = rev_resolve(gitdir, common, hex);
	if (r < 0)
		return r;
	if (r == REV_NONE)
		return 0;
	if (r == REV_GIT)
		return FLAKY_REVISION_ASK_GIT;
	if ((*ret = strdup(hex)) == NULL)
		return -ENOMEM;
	return 0;
}

/* git HEAD of dir: from the files when the layout is a common one, from
 * git otherwise. */
int
flaky_revision_git(const char *dir, char **ret)
{
	int	 r;

	if ((r = flaky_revision_files(dir, ret)) != FLAKY_REVISION_ASK_GIT)
		return r;
	return rev_spawn(dir, ret);
}
