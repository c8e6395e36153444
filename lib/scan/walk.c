/* The files a scan covers: a path, or the *.py files below a directory in
 * a stable order (byte-wise, depth first), symlinked files in, symlinked
 * directories not followed. */
#include "buildconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "util/util.h"

struct pathlist {
	char	**v;
	size_t	  n, cap;
};

/* Append p (owned from now on; freed on failure) to pl. */
static int
pathlist_add(struct pathlist *pl, char *p)
{
	if (p == NULL)
		return -ENOMEM;
	if (pl->n == pl->cap) {
		size_t	 cap = pl->cap ? pl->cap * 2 : 64;
		void	*v;

		if ((v = realloc(pl->v, cap * sizeof(*pl->v))) == NULL) {
			free(p);
			return -ENOMEM;
		}
		pl->v = v;
		pl->cap = cap;
	}
	pl->v[pl->n++] = p;
	return 0;
}

/* qsort() order of directory entries: byte-wise. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir "/" name, without doubling a trailing "/" of dir. */
static char *
path_join(const char *dir, const char *name)
{
	size_t	 n = strlen(dir);
	char	*p;

	if (asprintf(&p, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/",
	    name) == -1)
		return NULL;
	return p;
}

/* Whether a file name ends in ".py". */
static int
has_py_suffix(const char *name)
{
	size_t	 n = strlen(name);

	return n >= 3 && strcmp(name + n - 3, ".py") == 0;
}

/* The .py files below dir, sorted, depth first. depth bounds the walk. */
static int
walk(const char *dir, struct pathlist *pl, flaky_pyscan_walk_error onerror,
    void *arg, int depth)
{
	struct pathlist	 names = { NULL, 0, 0 };
	struct dirent	*de;
	DIR		*d;
	int		 rc = 0;

	if (depth > 256 || (d = opendir(dir)) == NULL) {
		if (onerror != NULL)
			onerror(arg, dir, depth > 256 ? ELOOP : errno);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((rc = pathlist_add(&names, strdup(de->d_name))) < 0)
			break;
	}
	closedir(d);
	/* An empty directory has no array: qsort(NULL, 0) is undefined. */
	if (rc == 0 && names.n > 1)
		qsort(names.v, names.n, sizeof(*names.v), name_cmp);
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		struct stat	 st;
		char		*full = path_join(dir, names.v[i]);

		if (full == NULL) {
			rc = -ENOMEM;
			break;
		}
		if (lstat(full, &st) == -1) {
			if (onerror != NULL)
				onerror(arg, full, errno);
			free(full);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			if (has_py_suffix(names.v[i]) &&
			    stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
				rc = pathlist_add(pl, full);
				continue;
			}
			free(full);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = walk(full, pl, onerror, arg, depth + 1);
			free(full);
			continue;
		}
		if (S_ISREG(st.st_mode) && has_py_suffix(names.v[i])) {
			rc = pathlist_add(pl, full);
			continue;
		}
		free(full);
	}
	flaky_pyscan_paths_free(names.v, names.n);
	return rc;
}

/* The files a scan of path covers (see scan.h). */
int
flaky_pyscan_paths(const char *path, char ***paths, size_t *npaths,
    flaky_pyscan_walk_error onerror, void *arg, char *err, size_t errlen)
{
	struct pathlist	 pl = { *paths, *npaths, *npaths };
	struct stat	 st;
	int		 rc;

	if (stat(path, &st) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	if (S_ISDIR(st.st_mode))
		rc = walk(path, &pl, onerror, arg, 0);
	else
		rc = pathlist_add(&pl, strdup(path));
	*paths = pl.v;
	*npaths = pl.n;
	if (rc < 0)
		return flaky_error(err, errlen, -rc, "out of memory");
	return 0;
}

/* Free what flaky_pyscan_paths() returned. */
void
flaky_pyscan_paths_free(char **paths, size_t npaths)
{
	if (paths == NULL)
		return;
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
}
