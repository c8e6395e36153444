/* Running one command under supervision (tmux job.c, OpenSMTPD smtpd.c):
 * clone and exec into its own process group, non-blocking capture of its
 * pipes, the end seen through a pidfd, group kill at the time limit. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "spawn_int.h"
#include "stacks_int.h"

extern char **environ;

void	(*flaky_spawn_group_hook)(pid_t, int);

static void	proc_check_done(struct flaky_proc *);
static void	proc_close_stream(struct flaky_proc *, int);

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
	if (p->pid == 0 && p->rfd[0] == -1 && p->rfd[1] == -1 &&
	    !p->capturing)
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
			if (p->capturing)
				stacks_window_feed(p->stk, buf, (size_t)n);
			if (p->data_cb != NULL)
				p->data_cb(p->arg, stream, buf, (size_t)n);
			if (capture_feed(&p->cap[stream], buf, (size_t)n) < 0)
				p->info.capture_oom = 1;
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

/* SIGTERM to the group (SIGCONT too: a stopped process must see it),
 * SIGKILL after the grace. */
static void
proc_signal_end(struct flaky_proc *p)
{
	struct timeval	 tv;

	killpg(p->pid, SIGTERM);
	killpg(p->pid, SIGCONT);
	tv.tv_sec = p->grace_ms / 1000;
	tv.tv_usec = (p->grace_ms % 1000) * 1000;
	event_add(p->kill_ev, &tv);
}

/* End the run for why: SIGTERM to the whole group, SIGKILL after the
 * grace. */
static void
proc_terminate(struct flaky_proc *p, int why)
{
	/* Once reaped the run ended on its own; the drain finishes it. */
	if (p->ending || p->done || p->pid == 0)
		return;
	p->ending = why;
	p->info.end = why;
	proc_signal_end(p);
}

static void	proc_after_reap(struct flaky_proc *);

/* The capture of the stacks ended: kill as a time limit does, or finish
 * the reap that came meanwhile. */
static void
proc_stacks_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_proc	*p = arg;

	(void)fd;
	(void)what;
	stacks_capture_finish(p->stk);
	p->capturing = 0;
	if (p->pid > 0)
		proc_signal_end(p);
	else
		proc_after_reap(p);
}

/* The time limit: the stacks first when asked for (issue 33), then the
 * kill. */
static void
proc_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_proc	*p = arg;

	(void)fd;
	(void)what;
	if (p->stk != NULL && !p->ending && !p->done && p->pid > 0 &&
	    stacks_capture_start(p, p->stk, p->sp->base, proc_stacks_cb) ==
	    0) {
		p->ending = FLAKY_PROC_TIMEOUT;
		p->info.end = FLAKY_PROC_TIMEOUT;
		p->capturing = 1;
		return;
	}
	proc_terminate(p, FLAKY_PROC_TIMEOUT);
}

void
flaky_proc_stop(struct flaky_proc *p)
{
	/* A capture stops at its next step; the kill follows it. */
	if (p->capturing) {
		atomic_store(&p->stk->cancel, 1);
		return;
	}
	proc_terminate(p, FLAKY_PROC_STOPPED);
}

struct flaky_stacks *
flaky_proc_take_stacks(struct flaky_proc *p)
{
	return stacks_take(p->stk);
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
	/* The rest waits while the stacks are taken (the go command ends
	 * once its test binary dumped: its group is still the run's). */
	if (!p->capturing)
		proc_after_reap(p);
}

/* After the reap: the group killed, the pipes' last bytes read. */
static void
proc_after_reap(struct flaky_proc *p)
{
	struct timeval	 tv = { 0, FLAKY_DRAIN_MS * 1000 };
	pid_t		 pgid = p->info.pid;

	/* Whatever is left of the group goes now; nothing of a finished run
	 * may keep running. */
	killpg(pgid, SIGKILL);
	if (flaky_spawn_group_hook != NULL)
		flaky_spawn_group_hook(pgid, 0);
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
void
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
	/* The stacks at the time limit (issue 33): their directory and
	 * environment; without them the run still runs, as before. */
	if (o->stacks != NULL && o->timeout_ms > 0 &&
	    stacks_prepare(&p->stk, o->stacks, tmp_parent, env) < 0)
		p->stk = NULL;

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

	if (o->stdin_fd > 2)
		devnull = o->stdin_fd;
	else if ((devnull = sp->devnull) == -1 &&
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
	plan.envp = p->stk != NULL ? p->stk->env : env;
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
	/* The child has its environment: our copy of it goes. */
	if (p->stk != NULL) {
		free(p->stk->env);
		p->stk->env = NULL;
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
	if (flaky_spawn_group_hook != NULL)
		flaky_spawn_group_hook(pid, 1);
	p->next = sp->procs;
	sp->procs = p;
	sp->running++;
	if (proc_watch(p) == -1)
		sigchld_need(sp);
	*ret = p;
	p = NULL;
	r = 0;
out:
	if (devnull != -1 && devnull != sp->devnull && devnull != o->stdin_fd)
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
		if (flaky_spawn_group_hook != NULL)
			flaky_spawn_group_hook(p->pid, 0);
		if (waitpid(p->pid, NULL, 0) == p->pid)
			p->pid = 0;
	}
	if (!p->done && p->sp != NULL) {
		p->done = 1;
		proc_unlink(p);
	}
	if (p->stk != NULL) {
		/* joined first: its thread reads the directory */
		if (p->capturing)
			flaky_proc_stop(p);
		stacks_capture_finish(p->stk);
		if (p->sp != NULL && p->stk->dir != NULL) {
			tidy_later(p->sp, p->stk->dir);
			p->stk->dir = NULL;
		}
		stacks_run_free(p->stk);
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
