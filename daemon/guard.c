/* The guard: the runs die with flakyd, whatever kills it.
 *
 * Each run is its own process group (lib/run/spawn.c). When flakyd ends
 * cleanly it ends them itself; when it is killed (kill -9, a crash, the
 * OOM killer) nothing would, and a suite would go on for as long as it
 * likes, unsupervised. So at start-up, before any thread, socket or
 * database, flakyd forks a small guard holding the read end of a pipe and
 * tells it each run's process group as it starts and once it is gone:
 *
 *	+PGID\n		a group started
 *	-PGID\n		it is gone (reaped and SIGKILLed)
 *
 * Only flakyd holds the write end, so the guard reads EOF exactly when
 * flakyd is gone, however it went: then it sends SIGKILL to every group
 * still registered and exits. After a clean stop nothing is registered
 * and the guard just exits. It is forked twice, before flakyd becomes a
 * subreaper, so it is not our child: the strays sweep (which kills every
 * child of ours) never sees it and its exit is not ours to reap. It runs
 * in a session of its own and ignores the stop signals, so a Ctrl-C or a
 * kill of flakyd's group does not take it along. Under systemd the cgroup
 * does the same job (docs/daemon.md); the guard costs nothing there. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flakyd.h"
#include "log.h"

#define GUARD_LINE_MAX	32	/* "+PGID\n" */

static int	 guard_fd = -1;		/* our write end */

/* The groups the guard holds. */
struct groups {
	pid_t		*v;
	size_t		 n, cap;
};

/* Note a group that started; a failed allocation leaves it unguarded. */
static void
groups_add(struct groups *g, pid_t pgid)
{
	pid_t	*v;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;

		if ((v = reallocarray(g->v, cap, sizeof *v)) == NULL)
			return;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = pgid;
}

/* Forget a group that is gone. */
static void
groups_del(struct groups *g, pid_t pgid)
{
	for (size_t i = 0; i < g->n; i++) {
		if (g->v[i] == pgid) {
			g->v[i] = g->v[--g->n];
			return;
		}
	}
}

/* One line of flakyd's: "+PGID" or "-PGID"; anything else is ignored. */
static void
groups_line(struct groups *g, const char *line)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(line + 1, &end, 10);
	if (errno != 0 || end == line + 1 || *end != '\0' || v <= 1)
		return;
	if (line[0] == '+')
		groups_add(g, (pid_t)v);
	else if (line[0] == '-')
		groups_del(g, (pid_t)v);
}

/* Stdio to /dev/null but stderr (the log), every other descriptor closed
 * but the pipe: the guard must hold neither the database, its lock, nor
 * the control socket of the flakyd it outlives. */
static void
guard_fds(int rfd)
{
	int	 fd;

	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	for (fd = STDERR_FILENO + 1; fd < rfd; fd++)
		close(fd);
	if (close_range((unsigned)rfd + 1, ~0U, 0) == -1)
		for (fd = rfd + 1; fd < 1024; fd++)
			close(fd);
}

/* Read flakyd's lines until EOF: flakyd is gone. */
static void
guard_read(int rfd, struct groups *g)
{
	char		 buf[4096], line[GUARD_LINE_MAX];
	size_t		 len = 0;
	ssize_t		 n;

	for (;;) {
		n = read(rfd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof line - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			groups_line(g, line);
			len = 0;
		}
	}
}

/* The guard's life: out of flakyd's way, read until EOF, then end what is
 * left. */
static __attribute__((noreturn)) void
guard_main(int rfd, pid_t flakyd_pid)
{
	static const int ignore[] = { SIGHUP, SIGINT, SIGTERM, SIGQUIT,
	    SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
	struct groups	 g = { NULL, 0, 0 };
	int		 killed = 0;
	sigset_t	 none;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ignore); i++)
		signal(ignore[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	prctl(PR_SET_NAME, "flakyd-guard", 0, 0, 0);
	/* Clear of the three streams (flakyd may have started without). */
	if (rfd <= STDERR_FILENO &&
	    (rfd = fcntl(rfd, F_DUPFD, STDERR_FILENO + 1)) == -1)
		_exit(1);
	guard_fds(rfd);
	log_debug("guard %ld: ends the runs of flakyd %ld if it dies",
	    (long)getpid(), (long)flakyd_pid);
	guard_read(rfd, &g);
	for (size_t i = 0; i < g.n; i++)
		if (killpg(g.v[i], SIGKILL) == 0)
			killed++;
	if (killed > 0)
		log_warnx("guard: flakyd is gone; killed %d run%s left running",
		    killed, killed == 1 ? "" : "s");
	_exit(0);
}

/* Fork the guard (twice: it is not our child). Call before any thread,
 * any descriptor worth keeping from it, and before becoming a subreaper. */
void
guard_start(void)
{
	int	 p[2], status;
	pid_t	 pid, self = getpid();

	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("guard: pipe");
		return;
	}
	if ((pid = fork()) == -1) {
		log_warn("guard: fork");
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[1]);
		switch (fork()) {
		case -1:
			_exit(1);
		case 0:
			guard_main(p[0], self);
		default:
			_exit(0);
		}
	}
	close(p[0]);
	/* ECHILD: started with SIGCHLD ignored, the kernel reaped it; a
	 * guard that failed to fork is found at the first write. */
	status = 0;
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_warnx("guard: could not start; runs will outlive a "
		    "killed flakyd");
		close(p[1]);
		return;
	}
	/* A full pipe (a guard that stopped reading) must not stop the
	 * loop: that message is lost instead. */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) == -1)
		log_warn("guard: fcntl");
	guard_fd = p[1];
}

/* A run's process group started (alive 1) or is gone (alive 0): the
 * spawner's hook. */
void
guard_group(pid_t pgid, int alive)
{
	char	 msg[GUARD_LINE_MAX];
	int	 len;

	if (guard_fd == -1)
		return;
	len = snprintf(msg, sizeof msg, "%c%ld\n", alive ? '+' : '-',
	    (long)pgid);
	/* Shorter than PIPE_BUF: written whole or not at all. */
	if (write(guard_fd, msg, (size_t)len) == len)
		return;
	if (errno == EAGAIN) {
		log_warnx("guard: not reading; group %ld not told",
		    (long)pgid);
		return;
	}
	log_warn("guard: gone; runs will outlive a killed flakyd");
	guard_close();
}

/* The runs ended: let the guard go (it exits on EOF). */
void
guard_close(void)
{
	if (guard_fd != -1)
		close(guard_fd);
	guard_fd = -1;
}
