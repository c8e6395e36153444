/* Taking the stacks of a hung run before it is killed (issue 33): at its
 * time limit, spawn.c starts a capture here instead of the kill; the
 * capture's thread asks each process of the run's group for its stacks in
 * the way its runtime answers (Python's faulthandler, Node's inspector,
 * SIGQUIT for Go and the JVM, gdb or eu-stack for anything else), within
 * one bound for all, then tells the loop, which kills as before.
 *
 * Order: the processes that run tests before those that wait for them,
 * the deepest first (a pytest-xdist worker before its controller, the go
 * test binary before the go command, which is never signalled: it relays
 * the binary's dump). Bounds: the whole capture (default 10 s), each
 * process (stacks_int.h), the bytes of each and of all, and at most
 * FLAKY_STACKS_PROCS processes. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "spawn_int.h"
#include "stacks_int.h"

static const char *const runtime_names[] = {
	[RT_NATIVE] = "native", [RT_PYTHON] = "python", [RT_NODE] = "node",
	[RT_GO] = "go", [RT_JAVA] = "java",
};

/* The loop's side: output read while the capture runs, for the dumps of
 * Go and the JVM (they write to their own stderr and stdout). */
void
stacks_window_feed(struct stacks_run *sr, const char *s, size_t n)
{
	pthread_mutex_lock(&sr->lock);
	if (sr->window != NULL && sr->window_len < STACKS_WINDOW_BYTES) {
		size_t	 m = STACKS_WINDOW_BYTES - sr->window_len;

		memcpy(sr->window + sr->window_len, s, n < m ? n : m);
		sr->window_len += n < m ? n : m;
	}
	sr->window_total += n;
	sr->window_last_us = flaky_mono_us();
	pthread_mutex_unlock(&sr->lock);
}

/* The window's count of bytes read and when the last came. */
static void
window_now(struct stacks_run *sr, uint64_t *total, int64_t *last_us)
{
	pthread_mutex_lock(&sr->lock);
	*total = sr->window_total;
	*last_us = sr->window_last_us;
	pthread_mutex_unlock(&sr->lock);
}

/* Go and a JVM without jcmd: SIGQUIT, then the run's output until the
 * dump is over: for Go once the process is gone (the runtime exits after
 * its dump; go test relays it then), for the JVM (which carries on) once
 * the output grew and then stayed still. The part of the window is
 * [*from, *to). */
static int
take_sigquit(struct stacks_run *sr, const struct stacks_member *m,
    int64_t deadline_us, uint64_t *from, uint64_t *to, char *note,
    size_t notelen)
{
	uint64_t	 total;
	int64_t		 last;
	int		 gone = 0;

	window_now(sr, from, &last);
	if (kill(m->pid, SIGQUIT) == -1) {
		snprintf(note, notelen, "signal: %s", strerror(errno));
		*to = *from;
		return -errno;
	}
	while (flaky_mono_us() < deadline_us && !atomic_load(&sr->cancel)) {
		char	 st;

		stacks_nap();
		window_now(sr, &total, &last);
		st = stacks_state(m->pid);
		gone = st == 'X' || st == 'Z';
		if (total > *from && flaky_mono_us() - last >=
		    STACKS_QUIET_MS * 1000 * (m->runtime == RT_JAVA ? 3 : 1) &&
		    (m->runtime == RT_JAVA || gone))
			break;
	}
	window_now(sr, to, &last);
	if (*to == *from) {
		snprintf(note, notelen, "no dump in the output within the "
		    "bound%s", gone ? " (the process ended)" : "");
		return -ETIMEDOUT;
	}
	return 0;
}

/* Native: the lock waits of its threads, then the tool. The waits go
 * after the stacks as "flaky: lock wait:" lines, the fold's evidence of
 * a deadlock. */
static int
take_native(struct stacks_run *sr, const struct stacks_member *m,
    int64_t deadline_us, struct flaky_buf *out, char *note, size_t notelen)
{
	struct stacks_lockwait w[STACKS_LOCKS_MAX];
	int	 nw, r;

	nw = stacks_lockwaits(m->pid, w, STACKS_LOCKS_MAX);
	if (sr->tool == NULL) {
		snprintf(note, notelen, "neither gdb nor eu-stack is "
		    "installed");
		r = -ENOENT;
	} else
		r = stacks_tool(sr->tool, sr->tool_gdb, m->pid, w, (size_t)nw,
		    deadline_us, &sr->cancel, out, note, notelen);
	for (int i = 0; i < nw; i++)
		flaky_buf_printf(out, "flaky: lock wait: thread %d waits for "
		    "mutex 0x%" PRIx64 " held by thread %d\n", (int)w[i].tid,
		    w[i].addr, (int)w[i].owner);
	return nw > 0 ? 0 : r;
}

/* The members' order: not waiting for a child first, then the deepest,
 * then by pid. */
static int
member_cmp(const void *a, const void *b)
{
	const struct stacks_member *x = a, *y = b;
	int	 wx = x->waits_child || x->skip, wy = y->waits_child || y->skip;

	if (wx != wy)
		return wx - wy;
	if (x->depth != y->depth)
		return y->depth - x->depth;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The jcmd beside the JVM's java (the same JDK), into buf: 0, or -1
 * when there is none (a JRE). */
static int
jcmd_of(const struct stacks_member *m, char *buf, size_t len)
{
	const char	*slash = m->exe != NULL ? strrchr(m->exe, '/') : NULL;

	if (slash == NULL || (size_t)snprintf(buf, len, "%.*s/jcmd",
	    (int)(slash - m->exe), m->exe) >= len)
		return -1;
	return access(buf, X_OK);
}

/* One process's dump into d; bytes of text it added. */
static void
take_one(struct stacks_run *sr, const struct stacks_member *m,
    int64_t deadline_us, struct flaky_stack_dump *d, size_t *seg)
{
	struct flaky_buf out;
	char		 note[256] = "", jcmd[4096];
	int64_t		 t0 = flaky_mono_us(), cap;
	uint64_t	 from = 0, to = 0;

	flaky_buf_init(&out);
	d->pid = (int)m->pid;
	d->ppid = (int)m->ppid;
	snprintf(d->runtime, sizeof d->runtime, "%s",
	    runtime_names[m->runtime]);
	d->command = m->command != NULL ? strdup(m->command) : NULL;
	/* a tool (gdb, jcmd: a JVM of its own) takes longest */
	cap = m->runtime == RT_NODE ? STACKS_NODE_MS : m->runtime ==
	    RT_NATIVE || m->runtime == RT_JAVA ? STACKS_TOOL_MS :
	    STACKS_SIGNAL_MS;
	if (t0 + cap * 1000 < deadline_us)
		deadline_us = t0 + cap * 1000;
	if (m->skip)
		snprintf(note, sizeof note, "the go command: its test binary "
		    "gives the goroutines");
	else if (m->waits_child && m->runtime == RT_NATIVE)
		snprintf(note, sizeof note, "waits for its children");
	else if (m->state == 'T' || m->state == 't')
		snprintf(note, sizeof note, "stopped: it cannot answer");
	else switch (m->runtime) {
	case RT_PYTHON:
		snprintf(d->tool, sizeof d->tool, "faulthandler");
		stacks_python(sr->dir, m->pid, deadline_us, &sr->cancel, &out,
		    note, sizeof note);
		break;
	case RT_NODE:
		snprintf(d->tool, sizeof d->tool, "inspector");
		stacks_node(m->pid, deadline_us, &sr->cancel, &out, note,
		    sizeof note);
		break;
	case RT_JAVA:
		if (jcmd_of(m, jcmd, sizeof jcmd) == 0) {
			snprintf(d->tool, sizeof d->tool, "jcmd");
			stacks_jcmd(jcmd, m->pid, deadline_us, &sr->cancel,
			    &out, note, sizeof note);
			break;
		}
		/* FALLTHROUGH */
	case RT_GO:
		snprintf(d->tool, sizeof d->tool, "sigquit");
		take_sigquit(sr, m, deadline_us, &from, &to, note,
		    sizeof note);
		break;
	default:
		snprintf(d->tool, sizeof d->tool, "%s", sr->tool == NULL ? "" :
		    sr->tool_gdb ? "gdb" : "eu-stack");
		take_native(sr, m, deadline_us, &out, note, sizeof note);
	}
	d->ms = (flaky_mono_us() - t0 + 500) / 1000;
	seg[0] = (size_t)from;
	seg[1] = (size_t)to;
	if (out.len > 0 && !out.oom) {
		d->len = out.len;
		d->text = flaky_buf_steal(&out);
	}
	flaky_buf_free(&out);
	if (note[0] != '\0')
		d->note = strdup(note);
}

/* The capture's thread: every member in order, within the bounds. */
static void *
capture_thread(void *arg)
{
	struct stacks_run *sr = arg;
	struct stacks_member *mv = NULL;
	struct flaky_stacks *res = sr->result;
	int64_t		 deadline = sr->start_us + sr->o.bound_ms * 1000;
	size_t		 n = 0, nm = 0, bytes = 0, left = 0;
	int		 all = 0;

	if (stacks_members(sr->pgid, sr->pgid, sr->dir, &mv, &nm,
	    &all) == 0 && nm > 0)
		qsort(mv, nm, sizeof *mv, member_cmp);
	res->procs = all;
	if ((res->v = calloc(nm > 0 ? nm : 1, sizeof *res->v)) != NULL &&
	    (sr->seg = calloc(2 * (nm > 0 ? nm : 1), sizeof *sr->seg)) !=
	    NULL)
		n = nm;
	for (size_t i = 0; i < n; i++) {
		if (atomic_load(&sr->cancel) || flaky_mono_us() >= deadline ||
		    res->n >= FLAKY_STACKS_PROCS || bytes >=
		    FLAKY_STACKS_BYTES) {
			left = n - i;
			break;
		}
		take_one(sr, &mv[i], deadline, &res->v[res->n],
		    &sr->seg[2 * res->n]);
		bytes += res->v[res->n].len + sr->seg[2 * res->n + 1] -
		    sr->seg[2 * res->n];
		res->n++;
	}
	left += (size_t)all - nm;
	if (left > 0 && asprintf(&res->note, "%zu process%s not taken: %s",
	    left, left == 1 ? "" : "es", atomic_load(&sr->cancel) ?
	    "stopped" : res->n >= FLAKY_STACKS_PROCS ? "too many processes" :
	    bytes >= FLAKY_STACKS_BYTES ? "the bound of bytes was reached" :
	    "the time bound was reached") == -1)
		res->note = NULL;
	stacks_members_free(mv, nm);
	res->ms = (flaky_mono_us() - sr->start_us + 500) / 1000;
	while (write(sr->wake[1], "", 1) == -1 && errno == EINTR)
		;
	return NULL;
}

/* Which tool reads native stacks: the one asked for, else gdb, else
 * eu-stack, from our PATH. */
static void
find_tool(struct stacks_run *sr)
{
	const char	*want[2] = { "gdb", "eu-stack" };
	const char	*path = getenv("PATH");
	char		 buf[4096];

	if (sr->o.native != NULL && strcmp(sr->o.native, "eu-stack") == 0) {
		want[0] = "eu-stack";
		want[1] = "gdb";
	}
	for (int i = 0; i < 2; i++) {
		if (flaky_path_find(want[i], NULL, path != NULL ? path :
		    "/usr/bin:/bin", buf, sizeof buf) == 0) {
			sr->tool = strdup(buf);
			sr->tool_gdb = strcmp(want[i], "gdb") == 0;
			return;
		}
	}
}

/* Start the capture of p's group (the loop's side): its thread, and the
 * event that tells the loop it ended. 0, or -errno (then kill at once). */
int
stacks_capture_start(struct flaky_proc *p, struct stacks_run *sr,
    struct event_base *base, void (*done)(int, short, void *))
{
	pthread_attr_t	 at;
	int		 r;

	if (pipe2(sr->wake, O_CLOEXEC | O_NONBLOCK) == -1)
		return -errno;
	if ((sr->result = calloc(1, sizeof *sr->result)) == NULL ||
	    (sr->window = malloc(STACKS_WINDOW_BYTES)) == NULL ||
	    (sr->wake_ev = event_new(base, sr->wake[0], EV_READ, done,
	    p)) == NULL || event_add(sr->wake_ev, NULL) == -1)
		return -ENOMEM;
	find_tool(sr);
	sr->pgid = p->pid;
	sr->start_us = flaky_mono_us();
	sr->result->bound_ms = sr->o.bound_ms;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	r = pthread_create(&sr->thread, &at, capture_thread, sr);
	pthread_attr_destroy(&at);
	if (r != 0)
		return -r;
	sr->running = 1;
	return 0;
}

/* The thread ended (or must: cancel first): join it, and give the dumps
 * of the output their text from the window. */
void
stacks_capture_finish(struct stacks_run *sr)
{
	struct flaky_stacks *res = sr->result;

	if (!sr->running)
		return;
	pthread_join(sr->thread, NULL);
	sr->running = 0;
	if (sr->wake_ev != NULL)
		event_del(sr->wake_ev);
	for (size_t i = 0; res != NULL && sr->seg != NULL && i < res->n; i++) {
		size_t	 from = sr->seg[2 * i], to = sr->seg[2 * i + 1];

		if (to > sr->window_len)
			to = sr->window_len;
		if (to - from > FLAKY_STACKS_PROC_BYTES)
			to = from + FLAKY_STACKS_PROC_BYTES;
		if (to <= from || res->v[i].text != NULL)
			continue;
		res->v[i].text = flaky_strndup(sr->window + from, to - from);
		res->v[i].len = res->v[i].text != NULL ? to - from : 0;
	}
	free(sr->window);
	sr->window = NULL;
	sr->window_len = 0;
}

/* The capture's result, handed over (NULL: none). */
struct flaky_stacks *
stacks_take(struct stacks_run *sr)
{
	struct flaky_stacks *res;

	if (sr == NULL || sr->running)
		return NULL;
	res = sr->result;
	sr->result = NULL;
	return res;
}

/* Free sr: a capture still running is stopped and joined first (its
 * steps look at cancel every STACKS_POLL_MS or so). The directory is
 * removed unless the caller took it (dir NULL). */
void
stacks_run_free(struct stacks_run *sr)
{
	if (sr == NULL)
		return;
	if (sr->running) {
		atomic_store(&sr->cancel, 1);
		stacks_capture_finish(sr);
	}
	if (sr->wake_ev != NULL)
		event_free(sr->wake_ev);
	for (int i = 0; i < 2; i++)
		if (sr->wake[i] != -1)
			close(sr->wake[i]);
	if (sr->dir != NULL) {
		remove_tree(sr->dir);
		free(sr->dir);
	}
	flaky_stacks_free(sr->result);
	free(sr->seg);
	free(sr->window);
	free(sr->tool);
	free(sr->env);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(sr->env_own); i++)
		free(sr->env_own[i]);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
}
