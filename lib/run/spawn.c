/* Running one command under supervision (tmux job.c, OpenSMTPD smtpd.c):
 * clone and exec into its own process group, non-blocking capture of its
 * pipes, the end seen through a pidfd, group kill at the time limit. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <event2/event.h>

#include "run/run.h"

extern char **environ;

/* A run's TMPDIR as the run found it: the next run may take it over when it
 * is still so (reuse_take). */
struct dir_seen {
	char		*path;
	dev_t		 dev;
	ino_t		 ino;
	struct timespec	 mtim, ctim;
};

/* The kept part of one stream: a head and a ring for the tail. */
struct capture {
	char		*head;
	size_t		 head_len, head_cap;
	char		*tail;
	size_t		 tail_pos, tail_len, tail_cap;
	uint64_t	 total;
};

struct flaky_proc {
	struct flaky_spawner	*sp;
	struct flaky_proc	*next;
	struct flaky_proc_info	 info;
	pid_t			 pid;		/* 0 once reaped */
	int			 pidfd;		/* -1: none, SIGCHLD tells */
	struct event		*pidfd_ev;
	int			 status;	/* wait status */
	int			 rfd[2];	/* our read ends, -1 at EOF */
	struct event		*rev[2];
	int			 wfd[2];	/* our copies of the write ends */
	struct capture		 cap[2];
	struct event		*timeout_ev;	/* time limit */
	struct event		*kill_ev;	/* grace, then SIGKILL */
	struct event		*drain_ev;	/* pipes after the reap */
	int64_t			 start_mono;
	int64_t			 grace_ms;
	int			 ending;	/* 0, TIMEOUT or STOPPED */
	int			 done;
	char			*tmpdir;
	int			 tmp_here;	/* on tmpfs: removed in place */
	int			 more;		/* runs follow (opts) */
	int			 tmp_kept;	/* TMPDIR handed to the spawner */
	int			 seen;		/* tmp_seen holds the TMPDIR */
	struct dir_seen		 tmp_seen;	/* ... at the start, .path unset */
	flaky_proc_data_cb	 data_cb;
	flaky_proc_done_cb	 done_cb;
	void			*arg;
};

/* Run directories off the event loop. A helper thread removes the TMPDIRs
 * of ended runs and, while the caller says more runs follow, keeps a few
 * empty ones made ahead of time: on ext4 an rmdir is a journal update and,
 * mounted with discard, a synchronous discard, and neither should stand
 * between the end of one run and the start of the next. The thread is woken
 * once per few runs, not per directory: on a virtual machine each wake-up
 * of another CPU is an interrupt the hypervisor delivers. Started on first
 * use. */
#define TIDY_SPARE	32	/* made ahead, at most */
#define TIDY_BATCH	16	/* wake the thread at this many to do */

struct tidy {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	pthread_t	 thread;
	int		 started;
	int		 stop;
	char		**gone;		/* to remove */
	size_t		 ngone, capgone;
	char		*want;		/* keep spares under this parent */
	size_t		 wantn;		/* ... this many */
	char		*spare[TIDY_SPARE];
	size_t		 nspare;
};

struct flaky_spawner {
	struct event_base	*base;
	struct event		*sigchld;
	int			 sigchld_on;
	char			*tmpfs_parent;	/* the last parent asked about */
	int			 tmpfs;		/* ... and whether it is tmpfs */
	struct flaky_proc	*procs;		/* live ones */
	int			 running;
	int			 subreaper;	/* asked once */
	struct tidy		 tidy;
	struct dir_seen		 reuse;		/* the last run's TMPDIR */
	int			 devnull;	/* every run's stdin */
	void			*stack;		/* the children's, before exec */
	size_t			 stack_len;
	int			 maxfd;		/* RLIMIT_NOFILE, for old kernels */
	int			 reuse_failed;	/* make spares from then on */
	char			 rbuf[65536];	/* one read of a pipe */
};

static void	proc_check_done(struct flaky_proc *);
static void	proc_close_stream(struct flaky_proc *, int);
static void	sigchld_need(struct flaky_spawner *);
static int	above_streams(int *);

/* Keep the head until it is full, then the last tail_cap bytes. */
static int
capture_add(struct capture *c, const char *s, size_t n)
{
	size_t	 k;

	c->total += n;
	if (c->head_len < c->head_cap) {
		k = c->head_cap - c->head_len;
		if (k > n)
			k = n;
		memcpy(c->head + c->head_len, s, k);
		c->head_len += k;
		s += k;
		n -= k;
	}
	if (n == 0 || c->tail_cap == 0)
		return 0;
	if (n >= c->tail_cap) {
		memcpy(c->tail, s + n - c->tail_cap, c->tail_cap);
		c->tail_pos = 0;
		c->tail_len = c->tail_cap;
		return 0;
	}
	while (n > 0) {
		k = c->tail_cap - c->tail_pos;
		if (k > n)
			k = n;
		memcpy(c->tail + c->tail_pos, s, k);
		c->tail_pos = (c->tail_pos + k) % c->tail_cap;
		if (c->tail_len < c->tail_cap)
			c->tail_len = c->tail_len + k > c->tail_cap ?
			    c->tail_cap : c->tail_len + k;
		s += k;
		n -= k;
	}
	return 0;
}

static int
capture_init(struct capture *c, size_t max)
{
	memset(c, 0, sizeof *c);
	c->head_cap = max / 2;
	c->tail_cap = max - c->head_cap;
	/* The buffers grow on demand: most runs print little. */
	return 0;
}

/* Grow lazily: allocate the head and tail on first use. Out of memory,
 * the bytes are still counted, as produced and not kept: the run's
 * output_bytes and output_dropped stay true, and the marker in the kept
 * output says how much is missing. */
static void
capture_feed(struct capture *c, const char *s, size_t n)
{
	if ((c->head == NULL && c->head_cap > 0 &&
	    (c->head = malloc(c->head_cap)) == NULL) ||
	    (c->tail == NULL && c->tail_cap > 0 &&
	    c->total + n > c->head_cap &&
	    (c->tail = malloc(c->tail_cap)) == NULL)) {
		c->total += n;
		return;
	}
	capture_add(c, s, n);
}

static void
capture_free(struct capture *c)
{
	free(c->head);
	free(c->tail);
	memset(c, 0, sizeof *c);
}

int
flaky_proc_output(const struct flaky_proc *p, int stream,
    struct flaky_buf *out)
{
	const struct capture *c = &p->cap[stream];
	uint64_t	 dropped = c->total - c->head_len - c->tail_len;
	size_t		 start;

	flaky_buf_add(out, c->head, c->head_len);
	if (dropped > 0)
		flaky_buf_printf(out, "\n[... %llu bytes not kept ...]\n",
		    (unsigned long long)dropped);
	if (c->tail_len > 0) {
		start = (c->tail_pos + c->tail_cap - c->tail_len) % c->tail_cap;
		if (start + c->tail_len <= c->tail_cap)
			flaky_buf_add(out, c->tail + start, c->tail_len);
		else {
			flaky_buf_add(out, c->tail + start, c->tail_cap - start);
			flaky_buf_add(out, c->tail,
			    c->tail_len - (c->tail_cap - start));
		}
	}
	return out->oom ? -ENOMEM : 0;
}

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

static void
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
static char *
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
static int
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
static void
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
static char *
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
static void
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
static int
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
static void
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
static char *
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

static void
proc_unlink(struct flaky_proc *p)
{
	struct flaky_proc **pp;

	for (pp = &p->sp->procs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			p->sp->running--;
			p->next = NULL;
			return;
		}
	}
}

static void
proc_finish(struct flaky_proc *p)
{
	struct flaky_spawner *sp = p->sp;

	if (p->done)
		return;
	p->done = 1;
	for (int i = 0; i < 2; i++) {
		proc_close_stream(p, i);
		p->info.dropped[i] = p->cap[i].total - p->cap[i].head_len -
		    p->cap[i].tail_len;
		p->info.bytes[i] = p->cap[i].total;
	}
	if (p->timeout_ev != NULL)
		event_del(p->timeout_ev);
	if (p->kill_ev != NULL)
		event_del(p->kill_ev);
	if (p->drain_ev != NULL)
		event_del(p->drain_ev);
	proc_unlink(p);
	reuse_keep(p);
	(void)sp;
	if (p->done_cb != NULL)
		p->done_cb(p->arg, p);
}

static void
proc_check_done(struct flaky_proc *p)
{
	if (p->pid == 0 && p->rfd[0] == -1 && p->rfd[1] == -1)
		proc_finish(p);
}

/* Read what the pipe has: everything goes to the data callback, a bounded
 * part is kept. At most 4 reads a call, so that one chatty run does not
 * hold the loop. 1 when the stream ended (EOF or an error): then the pipe
 * is closed. */
static int
proc_read(struct flaky_proc *p, int stream)
{
	char	*buf = p->sp->rbuf;
	ssize_t	 n;

	for (int i = 0; i < 4; i++) {
		n = read(p->rfd[stream], buf, sizeof p->sp->rbuf);
		if (n > 0) {
			if (p->data_cb != NULL)
				p->data_cb(p->arg, stream, buf, (size_t)n);
			capture_feed(&p->cap[stream], buf, (size_t)n);
		} else if (n == -1 && errno == EINTR)
			continue;
		else if (n == -1 && errno == EAGAIN)
			return 0;
		else {
			proc_close_stream(p, stream);
			return 1;
		}
	}
	return 0;
}

static void
proc_pipe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_proc	*p = arg;

	(void)what;
	if (proc_read(p, fd == p->rfd[1]))
		proc_check_done(p);
}

static void
proc_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_proc	*p = arg;

	(void)fd;
	(void)what;
	if (p->pid > 0)
		killpg(p->pid, SIGKILL);
}

/* SIGTERM to the whole group, SIGKILL after the grace. */
static void
proc_terminate(struct flaky_proc *p, int why)
{
	struct timeval	 tv;

	/* Once reaped the run ended on its own; the drain finishes it. */
	if (p->ending || p->done || p->pid == 0)
		return;
	p->ending = why;
	p->info.end = why;
	killpg(p->pid, SIGTERM);
	killpg(p->pid, SIGCONT);
	tv.tv_sec = p->grace_ms / 1000;
	tv.tv_usec = (p->grace_ms % 1000) * 1000;
	event_add(p->kill_ev, &tv);
}

static void
proc_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	proc_terminate(arg, FLAKY_PROC_TIMEOUT);
}

void
flaky_proc_stop(struct flaky_proc *p)
{
	proc_terminate(p, FLAKY_PROC_STOPPED);
}

/* The drain after the reap ran out: a grandchild holds the pipe. */
static void
proc_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_proc	*p = arg;

	(void)fd;
	(void)what;
	for (int i = 0; i < 2; i++) {
		if (p->rfd[i] != -1) {
			proc_read(p, i);
			proc_close_stream(p, i);
		}
	}
	proc_check_done(p);
}

/* Done with one of the child's streams: its event and our read end. */
static void
proc_close_stream(struct flaky_proc *p, int stream)
{
	if (p->rev[stream] != NULL) {
		event_free(p->rev[stream]);
		p->rev[stream] = NULL;
	}
	if (p->rfd[stream] != -1) {
		close(p->rfd[stream]);
		p->rfd[stream] = -1;
	}
}

static void
proc_close_wfd(struct flaky_proc *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->wfd[i] != -1)
			close(p->wfd[i]);
		p->wfd[i] = -1;
	}
}

static void
proc_close_pidfd(struct flaky_proc *p)
{
	if (p->pidfd_ev != NULL)
		event_del(p->pidfd_ev);
	if (p->pidfd != -1)
		close(p->pidfd);
	p->pidfd = -1;
}

static void
proc_reaped(struct flaky_proc *p, int status, const struct rusage *ru)
{
	struct timeval	 tv = { 0, FLAKY_DRAIN_MS * 1000 };
	pid_t		 pgid = p->pid;

	p->pid = 0;
	p->status = status;
	p->info.wall_us = flaky_mono_us() - p->start_mono;
	p->info.end_ms = flaky_now_ms();
	p->info.user_us = (int64_t)ru->ru_utime.tv_sec * 1000000 +
	    ru->ru_utime.tv_usec;
	p->info.sys_us = (int64_t)ru->ru_stime.tv_sec * 1000000 +
	    ru->ru_stime.tv_usec;
	p->info.maxrss_kb = ru->ru_maxrss;
	if (WIFEXITED(status)) {
		p->info.exit_code = WEXITSTATUS(status);
		p->info.signal = 0;
	} else if (WIFSIGNALED(status)) {
		p->info.exit_code = -1;
		p->info.signal = WTERMSIG(status);
	}
	/* Whatever is left of the group goes now; nothing of a finished run
	 * may keep running. */
	killpg(pgid, SIGKILL);
	proc_close_wfd(p);
	proc_close_pidfd(p);
	if (p->timeout_ev != NULL)
		event_del(p->timeout_ev);
	event_del(p->kill_ev);
	/* With our write ends closed and the group gone, the pipes most
	 * often hold their last bytes and then EOF: read them now, not on
	 * another turn of the loop. A grandchild that still holds one gets
	 * the drain time. */
	for (int i = 0; i < 2; i++)
		if (p->rfd[i] != -1)
			proc_read(p, i);
	if (p->rfd[0] != -1 || p->rfd[1] != -1)
		event_add(p->drain_ev, &tv);
	proc_check_done(p);
}

void
flaky_spawner_reap(struct flaky_spawner *sp)
{
	struct flaky_proc	*p;
	struct rusage		 ru;
	int			 status;
	pid_t			 pid;

	for (;;) {
		pid = wait4(-1, &status, WNOHANG, &ru);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		for (p = sp->procs; p != NULL; p = p->next)
			if (p->pid == pid)
				break;
		if (p != NULL)
			proc_reaped(p, status, &ru);
		/* else a stray reparented to us: reaped, nothing to do */
	}
}

static void
sigchld_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flaky_spawner_reap(arg);
}

/* Our child ended (its pidfd became readable). */
static void
proc_pidfd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_proc *p = arg;
	struct flaky_spawner *sp = p->sp;
	struct rusage	 ru;
	int		 status;
	pid_t		 pid;

	(void)fd;
	(void)what;
	/* With SIGCHLD watched (strays of a subreaper) reap them too. */
	if (sp->sigchld_on) {
		flaky_spawner_reap(sp);
		return;
	}
	while ((pid = wait4(p->pid, &status, WNOHANG, &ru)) == -1 &&
	    errno == EINTR)
		;
	if (pid == p->pid)
		proc_reaped(p, status, &ru);
	else if (pid == 0)
		event_add(p->pidfd_ev, NULL);	/* not yet: once more */
}

/* Reaping on SIGCHLD: where a child has no pidfd (a kernel before 5.3),
 * and for a subreaper once an orphan outlived its run (orphans have no
 * pidfd of ours); a signal per run costs 13 us here, so not before. Then
 * once on the next turn of the loop: a child that ended before the handler
 * was there sent its signal to nobody. */
static void
sigchld_need(struct flaky_spawner *sp)
{
	if (sp->sigchld_on)
		return;
	if (evsignal_add(sp->sigchld, NULL) == 0) {
		sp->sigchld_on = 1;
		event_active(sp->sigchld, EV_SIGNAL, 1);
	}
}

static int
is_subreaper(void)
{
	int	 on = 0;

	return prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0) == 0 && on;
}

/* Each child is watched through a pidfd, so its end is one readable file
 * descriptor in the event loop: no signal, no handler, no pipe write. */
static int
proc_watch(struct flaky_proc *p)
{
#ifdef SYS_pidfd_open
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
#endif
	if (p->pidfd == -1)
		return -1;
	/* close-on-exec already: pidfd_open(2) sets it */
	p->pidfd_ev = event_new(p->sp->base, p->pidfd, EV_READ, proc_pidfd_cb,
	    p);
	if (p->pidfd_ev == NULL || event_add(p->pidfd_ev, NULL) == -1) {
		proc_close_pidfd(p);
		return -1;
	}
	return 0;
}

int
flaky_spawner_new(struct event_base *base, struct flaky_spawner **ret)
{
	struct flaky_spawner	*sp;
	struct sigaction	 sa;
	struct rlimit		 rl;

	if ((sp = calloc(1, sizeof *sp)) == NULL)
		return -ENOMEM;
	sp->base = base;
	/* Every run's stdin, opened once; without it each spawn opens one. */
	if ((sp->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1 &&
	    above_streams(&sp->devnull) == -1) {
		close(sp->devnull);
		sp->devnull = -1;
	}
	sp->maxfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
	/* A process becomes a subreaper before it starts children (flakyd
	 * does, first thing): asked once. */
	sp->subreaper = is_subreaper();
	pthread_mutex_init(&sp->tidy.lock, NULL);
	pthread_cond_init(&sp->tidy.cond, NULL);
	/* Children we wait for, not ones the kernel reaps for us. */
	if (sigaction(SIGCHLD, NULL, &sa) == 0 && (sa.sa_handler == SIG_IGN ||
	    (sa.sa_flags & SA_NOCLDWAIT))) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGCHLD, &sa, NULL);
	}
	sp->sigchld = evsignal_new(base, SIGCHLD, sigchld_cb, sp);
	if (sp->sigchld == NULL) {
		if (sp->devnull != -1)
			close(sp->devnull);
		pthread_cond_destroy(&sp->tidy.cond);
		pthread_mutex_destroy(&sp->tidy.lock);
		free(sp);
		return -ENOMEM;
	}
	*ret = sp;
	return 0;
}

int
flaky_spawner_free(struct flaky_spawner *sp)
{
	if (sp == NULL)
		return 0;
	tidy_drain(sp);
	if (sp->procs != NULL)
		return -EBUSY;
	event_free(sp->sigchld);	/* deletes it too */
	if (sp->devnull != -1)
		close(sp->devnull);
	if (sp->stack != NULL)
		munmap(sp->stack, sp->stack_len);
	free(sp->tmpfs_parent);
	pthread_cond_destroy(&sp->tidy.cond);
	pthread_mutex_destroy(&sp->tidy.lock);
	free(sp);
	return 0;
}

int
flaky_spawner_running(const struct flaky_spawner *sp)
{
	return sp->running;
}

int
flaky_resolve_command(const char *cmd, const char *dir, const char *path_env,
    char **ret, char *err, size_t errlen)
{
	char	 buf[PATH_MAX];
	int	 r;

	if (cmd == NULL || *cmd == '\0')
		return flaky_error(err, errlen, EINVAL, "empty command");
	if ((r = flaky_path_find(cmd, dir, path_env, buf, sizeof buf)) == 0)
		return (*ret = strdup(buf)) != NULL ? 0 : -ENOMEM;
	if (r == -ENOENT)
		return flaky_error(err, errlen, ENOENT,
		    "%s: command not found", cmd);
	if (r == -EISDIR)
		return flaky_error(err, errlen, EISDIR,
		    "%s: is a directory, not a command", cmd);
	if (r == -EACCES)
		return flaky_error(err, errlen, EACCES,
		    "%s: not executable (permission denied)", cmd);
	return flaky_error(err, errlen, -r, "%s: %s", cmd, strerror(-r));
}

/* Is st (of a directory) our working directory? */
static int
is_cwd(const struct stat *st)
{
	struct stat	 cwd;

	return stat(".", &cwd) == 0 && cwd.st_dev == st->st_dev &&
	    cwd.st_ino == st->st_ino;
}

/* The child's environment: envp with TMPDIR replaced (TMP and TEMP, which
 * some tools read on other systems, are passed on as they are). */
static char **
make_env(char *const *envp, const char *tmpdir)
{
	size_t	 n = 0, k = 0;
	char	**v;

	for (n = 0; envp[n] != NULL; n++)
		;
	if ((v = calloc(n + 2, sizeof *v)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], "TMPDIR=", 7) != 0)
			v[k++] = envp[i];
	if (asprintf(&v[k], "TMPDIR=%s", tmpdir) == -1) {
		free(v);
		return NULL;
	}
	v[k + 1] = NULL;
	return v;
}

static void
free_env(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		;
	if (i > 0)
		free(v[i - 1]);		/* our TMPDIR= string */
	free(v);
}

static const char *
env_get(char *const *envp, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* What the child does between clone and exec, on data the parent made
 * ready: system calls only. It shares our memory with the other threads
 * still running (the tidy thread): no allocation, no lock. */
struct child_plan {
	const char	*path;
	char *const	*argv;
	char *const	*envp;
	const char	*dir;		/* NULL: stay in ours */
	int		 fd[3];		/* to become 0, 1 and 2; each above 2 */
	int		 maxfd;		/* closed up to, without close_range */
	volatile int	 err;		/* what failed, 0 when it exec'd */
};

#define CHILD_STACK	(64 * 1024)	/* a child's until it execs */

/* Not instrumented by AddressSanitizer: the child runs on the spawner's
 * stack and never returns, so the poison of its frames would stay behind
 * in the shadow of that stack for the next child to trip on. */
#define CHILD_CODE	__attribute__((no_sanitize_address))

static void	child_exec(struct child_plan *) CHILD_CODE
		    __attribute__((noreturn));

/* Dispositions to default, then its own group, the three streams, the
 * working directory, every other descriptor closed, no signal blocked,
 * exec (STYLE.md, tmux job.c): a suite behaves as in a terminal even when
 * we run under nohup. The signals were all blocked by the parent before
 * the clone, so no handler of ours runs in the child before it is reset.
 * glibc refuses its two internal signals to sigaction; exec resets them. */
static void
child_exec(struct child_plan *c)
{
	struct sigaction sa;
	sigset_t	 none;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	if (setpgid(0, 0) == -1)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (dup2(c->fd[i], i) == -1)
			goto fail;
	if (c->dir != NULL && chdir(c->dir) == -1)
		goto fail;
	if (close_range(3, ~0U, 0) == -1)
		for (int fd = 3; fd < c->maxfd; fd++)
			close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(c->path, c->argv, c->envp);
fail:
	c->err = errno;
	_exit(127);
}

static int	child_main(void *) CHILD_CODE;

static int
child_main(void *arg)
{
	child_exec(arg);
}

/* Start the child of plan c: its pid, or a negative errno (the child, if
 * one was made, is reaped). clone with CLONE_VM and CLONE_VFORK, as
 * glibc's posix_spawn does, on a stack of the spawner's kept for all its
 * children: posix_spawn maps and unmaps one, and allocates its file
 * actions, for each call, 1.8 ms of benchmark (a)'s 146 here. We resume
 * once the child has exec'd or exited, so the stack is free again. (Under
 * valgrind, which runs the child on a copy of our memory, an exec that
 * fails shows as the run's exit status 127.) */
static pid_t
child_start(struct flaky_spawner *sp, struct child_plan *c)
{
	sigset_t	 all, old;
	long		 pg = sysconf(_SC_PAGESIZE);
	void		*st;
	pid_t		 pid;

	if (sp->stack == NULL) {
		/* a guard page below it */
		st = mmap(NULL, CHILD_STACK + (size_t)pg, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (st == MAP_FAILED)
			return -errno;
		if (mprotect(st, (size_t)pg, PROT_NONE) == -1) {
			munmap(st, CHILD_STACK + (size_t)pg);
			return -errno;
		}
		sp->stack = st;
		sp->stack_len = CHILD_STACK + (size_t)pg;
	}
	c->err = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(child_main, (char *)sp->stack + sp->stack_len,
	    CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid == -1)
		return -errno;
	if (c->err != 0) {
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		return -c->err;
	}
	return pid;
}

/* fd, moved above the standard streams (only when ours were closed): the
 * child's dup2 onto 0, 1 and 2 must not overwrite one it still needs. */
static int
above_streams(int *fd)
{
	int	 nfd;

	if (*fd > 2)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

int
flaky_spawn(struct flaky_spawner *sp, const struct flaky_spawn_opts *o,
    flaky_proc_data_cb data_cb, flaky_proc_done_cb done_cb, void *arg,
    struct flaky_proc **ret, char *err, size_t errlen)
{
	struct flaky_proc	*p = NULL;
	struct child_plan	 plan;
	char			*path = NULL, **env = NULL;
	char *const		*envp = o->envp ? o->envp : environ;
	const char		*tmp_parent;
	int			 out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int			 devnull = -1, r;
	struct stat		 st;
	pid_t			 pid;
	size_t			 cap;

	if (o->argv == NULL || o->argv[0] == NULL)
		return flaky_error(err, errlen, EINVAL, "empty command");
	if (o->dir != NULL && (stat(o->dir, &st) == -1 || !S_ISDIR(st.st_mode)))
		return flaky_error(err, errlen, ENOENT,
		    "%s: working directory does not exist", o->dir);
	if (o->path != NULL) {
		if ((path = strdup(o->path)) == NULL)
			return -ENOMEM;
	} else {
		r = flaky_resolve_command(o->argv[0], o->dir,
		    env_get(envp, "PATH"), &path, err, errlen);
		if (r < 0)
			return r;
	}

	if ((p = calloc(1, sizeof *p)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	p->sp = sp;
	p->wfd[0] = p->wfd[1] = -1;
	p->rfd[0] = p->rfd[1] = -1;
	p->pidfd = -1;
	p->grace_ms = o->grace_ms > 0 ? o->grace_ms : FLAKY_GRACE_DEFAULT;
	cap = o->capture_max > 0 ? o->capture_max : FLAKY_CAPTURE_DEFAULT;
	capture_init(&p->cap[0], cap / 2);
	capture_init(&p->cap[1], cap - cap / 2);
	p->data_cb = data_cb;
	p->done_cb = done_cb;
	p->arg = arg;

	tmp_parent = o->tmp_parent;
	if (tmp_parent == NULL && (tmp_parent = getenv("TMPDIR")) == NULL)
		tmp_parent = "/tmp";
	p->tmp_here = on_tmpfs(sp, tmp_parent);
	p->more = o->more;
	/* Even on tmpfs: the check (1.2 us) costs less than a mkdir and an
	 * rmdir there (3 to 5 us, bench/tmpdir_bench). */
	if (sp->subreaper &&
	    (p->tmpdir = reuse_take(sp, tmp_parent, p->tmp_here)) != NULL) {
		p->tmp_seen = sp->reuse;	/* as it was, and is */
		p->seen = 1;
	}
	/* Directories made ahead only where reusing did not do. */
	if (p->tmpdir == NULL && !p->tmp_here &&
	    (!sp->subreaper || sp->reuse_failed))
		p->tmpdir = tidy_take(sp, tmp_parent, o->more);
	if (p->tmpdir == NULL &&
	    (p->tmpdir = make_run_dir(tmp_parent)) == NULL) {
		r = flaky_error(err, errlen, errno,
		    "%s/flaky-run-XXXXXX: %s", tmp_parent, strerror(errno));
		goto out;
	}
	if (sp->subreaper && o->more > 0 && !p->seen)
		p->seen = dir_seen_read(p->tmpdir, &p->tmp_seen) == 0;
	if ((env = make_env(envp, p->tmpdir)) == NULL) {
		r = -ENOMEM;
		goto out;
	}

	/* Both ends close on exec; only our (read) ends are non-blocking: a
	 * test writing to a non-blocking stdout would see EAGAIN. */
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(errp, O_CLOEXEC) == -1) {
		r = flaky_error(err, errlen, errno, "pipe: %s", strerror(errno));
		goto out;
	}
	if (fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(errp[0], F_SETFL, O_NONBLOCK) == -1) {
		r = flaky_error(err, errlen, errno, "fcntl: %s", strerror(errno));
		goto out;
	}

	if ((devnull = sp->devnull) == -1 &&
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		r = flaky_error(err, errlen, errno, "/dev/null: %s",
		    strerror(errno));
		goto out;
	}
	if (above_streams(&out[1]) == -1 || above_streams(&errp[1]) == -1 ||
	    above_streams(&devnull) == -1) {
		r = flaky_error(err, errlen, errno, "fcntl: %s", strerror(errno));
		goto out;
	}
	memset(&plan, 0, sizeof plan);
	plan.path = path;
	plan.argv = o->argv;
	plan.envp = env;
	/* Not when it is ours already (analyze: the current directory): a
	 * path lookup in the child, 2.5 us a run here, for nothing. */
	plan.dir = o->dir != NULL && !is_cwd(&st) ? o->dir : NULL;
	plan.fd[0] = devnull;
	plan.fd[1] = out[1];
	plan.fd[2] = errp[1];
	plan.maxfd = sp->maxfd;

	p->info.start_ms = flaky_now_ms();
	p->start_mono = flaky_mono_us();
	if (getloadavg(&p->info.loadavg, 1) != 1)
		p->info.loadavg = -1;
	p->info.in_flight = sp->running + 1;
	if ((pid = child_start(sp, &plan)) < 0) {
		r = flaky_error(err, errlen, -pid, "%s: %s", o->argv[0],
		    strerror(-pid));
		goto out;
	}
	/* No setpgid from here: CLONE_VFORK returns once the child has
	 * exec'd, so it is in its own group already. */
	p->pid = pid;
	p->info.pid = pid;
	/* Keep the write ends until the reap: the pipes' end then comes with
	 * the child's, in one wake-up instead of two (EOF, then SIGCHLD). */
	p->wfd[0] = out[1];
	p->wfd[1] = errp[1];
	out[1] = errp[1] = -1;

	p->timeout_ev = NULL;
	p->kill_ev = evtimer_new(sp->base, proc_kill_cb, p);
	p->drain_ev = evtimer_new(sp->base, proc_drain_cb, p);
	p->rfd[0] = out[0];
	p->rfd[1] = errp[0];
	out[0] = errp[0] = -1;
	for (int i = 0; i < 2; i++)
		p->rev[i] = event_new(sp->base, p->rfd[i], EV_READ | EV_PERSIST,
		    proc_pipe_cb, p);
	if (o->timeout_ms > 0)
		p->timeout_ev = evtimer_new(sp->base, proc_timeout_cb, p);
	if (p->kill_ev == NULL || p->drain_ev == NULL || p->rev[0] == NULL ||
	    p->rev[1] == NULL || (o->timeout_ms > 0 && p->timeout_ev == NULL) ||
	    event_add(p->rev[0], NULL) == -1 ||
	    event_add(p->rev[1], NULL) == -1) {
		/* Out of memory with a child running: end it at once. */
		killpg(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		p->pid = 0;
		r = -ENOMEM;
		goto out;
	}
	if (o->timeout_ms > 0) {
		struct timeval tv = {
			(time_t)(o->timeout_ms / 1000),
			(suseconds_t)((o->timeout_ms % 1000) * 1000)
		};
		event_add(p->timeout_ev, &tv);
	}
	p->next = sp->procs;
	sp->procs = p;
	sp->running++;
	if (proc_watch(p) == -1)
		sigchld_need(sp);
	*ret = p;
	p = NULL;
	r = 0;
out:
	if (devnull != -1 && devnull != sp->devnull)
		close(devnull);
	for (int i = 0; i < 2; i++) {
		if (out[i] != -1)
			close(out[i]);
		if (errp[i] != -1)
			close(errp[i]);
	}
	free_env(env);
	free(path);
	if (p != NULL) {
		p->sp = NULL;	/* never linked; its TMPDIR goes now */
		flaky_proc_free(p);
	}
	return r;
}

const struct flaky_proc_info *
flaky_proc_info(const struct flaky_proc *p)
{
	return &p->info;
}

const char *
flaky_proc_tmpdir(const struct flaky_proc *p)
{
	return p->tmpdir;
}

void
flaky_proc_free(struct flaky_proc *p)
{
	if (p == NULL)
		return;
	if (p->pid > 0) {
		/* Still running: no callbacks any more, end it now. */
		p->done_cb = NULL;
		p->data_cb = NULL;
		killpg(p->pid, SIGKILL);
		if (waitpid(p->pid, NULL, 0) == p->pid)
			p->pid = 0;
	}
	if (!p->done && p->sp != NULL) {
		p->done = 1;
		proc_unlink(p);
	}
	proc_close_wfd(p);
	proc_close_pidfd(p);
	if (p->pidfd_ev != NULL)
		event_free(p->pidfd_ev);
	for (int i = 0; i < 2; i++) {
		proc_close_stream(p, i);
		capture_free(&p->cap[i]);
	}
	if (p->timeout_ev != NULL)
		event_free(p->timeout_ev);
	if (p->kill_ev != NULL)
		event_free(p->kill_ev);
	if (p->drain_ev != NULL)
		event_free(p->drain_ev);
	if (p->tmpdir != NULL && p->tmp_kept)
		free(p->tmpdir);
	else if (p->tmpdir != NULL) {
		if (p->sp != NULL && p->pid == 0 && !p->tmp_here)
			tidy_later(p->sp, p->tmpdir);
		else {
			remove_tree(p->tmpdir);
			free(p->tmpdir);
		}
	}
	free(p);
}
