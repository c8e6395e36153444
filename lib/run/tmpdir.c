/* Each run's private TMPDIR: made, removed off the event loop by a helper
 * thread (with spares made ahead), or handed on to the next run when it is
 * left as it was found. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "spawn_int.h"

/* Remove the run's TMPDIR, whatever the test left in it. */
static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Make a directory the test left read-only or unreadable ours again. An
 * unreadable one was not entered: stop so the walk starts over. */
static int
rm_unlock(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D && type != FTW_DNR)
		return 0;
	if ((st->st_mode & 0700) != 0700)
		chmod(path, (st->st_mode & 07777) | 0700);
	return type == FTW_DNR ? 1 : 0;
}

void
remove_tree(const char *path)
{
	/* Most runs leave their TMPDIR empty: one system call. */
	if (rmdir(path) == 0 || errno == ENOENT)
		return;
	/* bounded: each pass opens at least one more directory */
	for (int i = 0; i < 256; i++)
		if (nftw(path, rm_unlock, 16, FTW_PHYS) != 1)
			break;
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new empty 0700 directory under parent, or NULL with errno set. */
char *
make_run_dir(const char *parent)
{
	char	*dir;
	int	 e;

	if (asprintf(&dir, "%s/flaky-run-XXXXXX", parent) == -1)
		return NULL;
	if (mkdtemp(dir) == NULL) {
		e = errno;
		free(dir);
		errno = e;
		return NULL;
	}
	return dir;
}

/* With the lock held: queue a directory for removal. */
static int
tidy_push(struct tidy *t, char *path)
{
	char	**v;
	size_t	  n;

	if (t->ngone == t->capgone) {
		n = t->capgone ? t->capgone * 2 : 16;
		if ((v = reallocarray(t->gone, n, sizeof *v)) == NULL)
			return -1;
		t->gone = v;
		t->capgone = n;
	}
	t->gone[t->ngone++] = path;
	return 0;
}

static void *
tidy_main(void *arg)
{
	struct tidy	*t = arg;
	char		*gone, *parent, *dir;

	/* Not SCHED_IDLE: on a saturated build box the removal of what the
	 * tests left in /tmp would wait for an idle CPU while the runs went
	 * on making more; and benchmark (a) saw no difference. */
	pthread_mutex_lock(&t->lock);
	for (;;) {
		/* At a stop the rest is the caller's, one directory at a time
		 * until then: a stop never waits for a whole batch. */
		if (t->stop)
			break;
		if (t->ngone > 0) {
			gone = t->gone[--t->ngone];
			pthread_mutex_unlock(&t->lock);
			remove_tree(gone);
			free(gone);
			pthread_mutex_lock(&t->lock);
			continue;
		}
		if (t->want == NULL || t->nspare >= t->wantn) {
			pthread_cond_wait(&t->cond, &t->lock);
			continue;
		}
		parent = strdup(t->want);
		pthread_mutex_unlock(&t->lock);
		dir = parent != NULL ? make_run_dir(parent) : NULL;
		pthread_mutex_lock(&t->lock);
		if (dir == NULL) {
			/* Cannot make one: each spawn makes its own. */
			free(t->want);
			t->want = NULL;
		} else if (t->want != NULL && strcmp(t->want, parent) == 0 &&
		    t->nspare < t->wantn && !t->stop)
			t->spare[t->nspare++] = dir;
		else if (tidy_push(t, dir) < 0) {
			rmdir(dir);
			free(dir);
		}
		free(parent);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* With the lock held: the thread runs (0), or cannot (-1). */
static int
tidy_start(struct tidy *t)
{
	if (!t->started && pthread_create(&t->thread, NULL, tidy_main, t) == 0)
		t->started = 1;
	return t->started ? 0 : -1;
}

/* Is parent on tmpfs? There a directory costs a few microseconds to make
 * and remove, less than waking the thread: then it is done in place. The
 * answer for the last parent is kept. */
int
on_tmpfs(struct flaky_spawner *sp, const char *parent)
{
	struct statfs	 f;

	if (sp->tmpfs_parent != NULL && strcmp(sp->tmpfs_parent, parent) == 0)
		return sp->tmpfs;
	free(sp->tmpfs_parent);
	sp->tmpfs_parent = strdup(parent);
	sp->tmpfs = statfs(parent, &f) == 0 && f.f_type == TMPFS_MAGIC;
	return sp->tmpfs;
}

/* An ended run's TMPDIR (malloc'd), to remove soon: at once when no run is
 * expected to follow, else with the next few. */
void
tidy_later(struct flaky_spawner *sp, char *path)
{
	struct tidy	*t = &sp->tidy;

	pthread_mutex_lock(&t->lock);
	if (tidy_start(t) == 0 && tidy_push(t, path) == 0) {
		path = NULL;
		if (t->want == NULL || t->ngone >= TIDY_BATCH)
			pthread_cond_signal(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	if (path != NULL) {
		/* No thread or no memory: here and now. */
		remove_tree(path);
		free(path);
	}
}

/* A directory made ahead under parent, if one is ready (else NULL). For
 * the more runs that follow the thread keeps some ready, up to TIDY_SPARE. */
char *
tidy_take(struct flaky_spawner *sp, const char *parent, int more)
{
	struct tidy	*t = &sp->tidy;
	char		*dir = NULL, *x;
	size_t		 want = more > 0 ? (size_t)more : 0, keep;
	int		 same, wake = 0;

	if (want > TIDY_SPARE)
		want = TIDY_SPARE;
	pthread_mutex_lock(&t->lock);
	/* Spares made under another parent are of no use. */
	same = t->want != NULL && strcmp(t->want, parent) == 0;
	if (same && t->nspare > 0)
		dir = t->spare[--t->nspare];
	/* Nor are more than the runs that follow will take. */
	keep = same ? want : 0;
	while (t->nspare > keep) {
		x = t->spare[--t->nspare];
		if (tidy_push(t, x) < 0) {
			rmdir(x);
			free(x);
		}
		wake = 1;
	}
	if (!same || want == 0) {
		free(t->want);
		t->want = want > 0 ? strdup(parent) : NULL;
	}
	t->wantn = t->want != NULL ? want : 0;
	if (t->nspare + TIDY_BATCH <= t->wantn ||
	    (t->nspare == 0 && t->wantn > 0))
		wake = 1;
	if (wake && tidy_start(t) == 0)
		pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return dir;
}

/* Stop the thread and finish its work here: nothing is left behind. The
 * thread starts again on the next use. */
void
tidy_drain(struct flaky_spawner *sp)
{
	struct tidy	*t = &sp->tidy;

	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (t->started)
		pthread_join(t->thread, NULL);
	t->started = 0;
	t->stop = 0;
	for (size_t i = 0; i < t->ngone; i++) {
		remove_tree(t->gone[i]);
		free(t->gone[i]);
	}
	free(t->gone);
	t->gone = NULL;
	t->ngone = t->capgone = 0;
	while (t->nspare > 0) {
		rmdir(t->spare[--t->nspare]);
		free(t->spare[t->nspare]);
	}
	free(t->want);
	t->want = NULL;
	t->wantn = 0;
	if (sp->reuse.path != NULL) {
		remove_tree(sp->reuse.path);
		free(sp->reuse.path);
		sp->reuse.path = NULL;
	}
}

/* Reusing a run's TMPDIR for the next run. Making and removing a directory
 * costs 15 and 70 microseconds on ext4 mounted with discard, a tenth of a
 * short run, and 3 to 5 together on tmpfs; checking one, 1.2 to 2. When a
 * run leaves its TMPDIR as it found it, the next run may have it instead of
 * a new one, if that is as safe:
 *
 *  - no process of the last run can still be there: no run is live and we
 *    have no child at all, as a subreaper (flakyd, flakyctl analyze), to
 *    which whatever escaped the run's process group was reparented;
 *  - the directory is the one the run was given (device and inode), ours,
 *    mode 0700, still empty, and its mtime and ctime did not move: nothing
 *    was made in it and removed again, its mode was not changed and back.
 *
 * Anything else (a survivor, a file left, a timestamp moved) and it is
 * removed as before, and the spawner makes directories ahead from then on.
 * The next run sees the same TMPDIR path as the last one. */
int
dir_seen_read(const char *path, struct dir_seen *s)
{
	struct stat	 st;

	if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode))
		return -1;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->mtim = st.st_mtim;
	s->ctim = st.st_ctim;
	return 0;
}

static int
ts_same(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Is s->path still the empty directory seen? */
static int
dir_untouched(const struct dir_seen *s)
{
	union {
		struct dirent64	 d;
		char		 b[2048];
	}		 u;
	struct dirent64	*d;
	struct stat	 st;
	ssize_t		 n = 0;
	int		 fd, ok;

	if ((fd = open(s->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	ok = fstat(fd, &st) == 0 && st.st_dev == s->dev &&
	    st.st_ino == s->ino && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) == 0700 && st.st_nlink == 2 &&
	    ts_same(st.st_mtim, s->mtim) && ts_same(st.st_ctim, s->ctim);
	/* Timestamps tick coarsely (a clock tick): a file made within the
	 * tick the directory was made in moves nothing. Hence the listing. */
	while (ok && (n = getdents64(fd, u.b, sizeof u.b)) > 0)
		for (ssize_t off = 0; ok && off < n; off += d->d_reclen) {
			d = (struct dirent64 *)(void *)(u.b + off);
			ok = strcmp(d->d_name, ".") == 0 ||
			    strcmp(d->d_name, "..") == 0;
		}
	if (n == -1)
		ok = 0;
	close(fd);
	return ok;
}

/* With no run live: have we no child left at all? A child now is a stray,
 * reparented to us: one that ended is reaped here; one alive outlived its
 * run, and SIGCHLD reaps from then on (until then the pidfds do). */
static int
no_children(struct flaky_spawner *sp)
{
	siginfo_t	 si;

	for (int i = 0; i < 64; i++) {
		memset(&si, 0, sizeof si);
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
			return errno == ECHILD;
		if (si.si_pid == 0)
			break;
		waitpid(si.si_pid, NULL, WNOHANG);
	}
	sigchld_need(sp);
	return 0;
}

/* An ended run's TMPDIR, kept for the next run when runs follow. */
void
reuse_keep(struct flaky_proc *p)
{
	struct flaky_spawner *sp = p->sp;

	if (!p->seen || p->more <= 0 || p->tmpdir == NULL ||
	    sp->reuse.path != NULL)
		return;
	sp->reuse = p->tmp_seen;
	if ((sp->reuse.path = strdup(p->tmpdir)) != NULL)
		p->tmp_kept = 1;
}

/* The last run's TMPDIR for a run under parent, if it may have it; else
 * NULL, and the directory goes to be removed (here, on tmpfs). */
char *
reuse_take(struct flaky_spawner *sp, const char *parent, int here)
{
	char	*dir = sp->reuse.path;
	size_t	 n = strlen(parent);
	int	 ok;

	if (dir == NULL)
		return NULL;
	ok = sp->running == 0 && strncmp(dir, parent, n) == 0 &&
	    dir[n] == '/' && strchr(dir + n + 1, '/') == NULL &&
	    no_children(sp) && dir_untouched(&sp->reuse);
	sp->reuse.path = NULL;
	if (ok)
		return dir;
	sp->reuse_failed = 1;
	if (here) {
		remove_tree(dir);
		free(dir);
	} else
		tidy_later(sp, dir);
	return NULL;
}
