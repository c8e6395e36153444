/* Finding the program a command names, as execvp(3) and a shell would:
 * the one PATH lookup, for the spawner (which must know before it forks)
 * and the schedule file's check of each target's command. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

/* Is path an executable regular file? 0, -EISDIR, -EACCES, or what
 * stat(2) said. */
static int
exec_ok(const char *path)
{
	struct stat	 st;

	if (stat(path, &st) == -1)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) == -1)
		return -EACCES;
	return 0;
}

/* One entry of PATH (len bytes at p) joined with word into buf; an empty
 * or relative entry is under dir. -ENAMETOOLONG when it does not fit. */
static int
join(char *buf, size_t size, const char *dir, const char *p, size_t len,
    const char *word)
{
	int	 w;

	if (len == 0)
		w = snprintf(buf, size, "%s/%s", dir != NULL ? dir : ".",
		    word);
	else if (p[0] != '/' && dir != NULL)
		w = snprintf(buf, size, "%s/%.*s/%s", dir, (int)len, p, word);
	else
		w = snprintf(buf, size, "%.*s/%s", (int)len, p, word);
	return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}

/* The program word runs, looked up in path_env from dir. */
int
flaky_path_find(const char *word, const char *dir, const char *path_env,
    char *buf, size_t size)
{
	const char	*p, *e;
	size_t		 len;
	int		 r, best = -ENOENT;

	if (strchr(word, '/') != NULL) {
		if (word[0] == '/' || dir == NULL)
			r = snprintf(buf, size, "%s", word);
		else
			r = snprintf(buf, size, "%s/%s", dir, word);
		if (r < 0 || (size_t)r >= size)
			return -ENAMETOOLONG;
		return exec_ok(buf);
	}
	if (path_env == NULL)
		path_env = DEFAULT_PATH;
	for (p = path_env;; p = e + 1) {
		e = strchr(p, ':');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if ((r = join(buf, size, dir, p, len, word)) == 0 &&
		    (r = exec_ok(buf)) == 0)
			return 0;
		/* "Not executable" over "not found", as a shell says. */
		if (r == -EACCES || (r == -EISDIR && best == -ENOENT))
			best = r;
		if (e == NULL)
			break;
	}
	if (size > 0)
		buf[0] = '\0';
	return best;
}
