/* Where a hung run was stuck (issue 33): the fold of the stacks taken
 * before its kill. Of all the threads of all its processes, the one that
 * ran the test: it has frames of the test's own code (files under the
 * run's directory, not the standard library's, site-packages,
 * node_modules, GOROOT or the module cache), and the runner's frames
 * around them; the process taken first (the deepest) wins a tie. Its
 * innermost own frame is where the test waited, the frame inside it the
 * call it waited in. Two threads each holding a lock the other waits for
 * is a deadlock, named with both places and both locks. docs/triage.md
 * says what each kind of hang gets as its first patch. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "stack_int.h"

#define HANG_FRAMES	32	/* of the hung thread kept */
#define CODE_MAX	160	/* bytes of its source line */
#define SOURCE_MAX	(4 << 20)	/* a source file read for it */

struct str {
	const char	*p;
	size_t		 n;
};

/* A piece of a parsed text. */
static struct str
sp(const struct stk_text *t, struct stk_str s)
{
	struct str r = { t->s + s.off, s.len };

	return r;
}

static int
has(struct str s, const char *needle)
{
	size_t	 n = strlen(needle);

	for (size_t i = 0; i + n <= s.n; i++)
		if (memcmp(s.p + i, needle, n) == 0)
			return 1;
	return 0;
}

static int
begins(struct str s, const char *pre)
{
	size_t	 n = strlen(pre);

	return s.n >= n && memcmp(s.p, pre, n) == 0;
}

/* The file as shown: under dir, relative to it; a file:// URL as a
 * path. */
static struct str
rel_file(struct str f, const char *dir)
{
	size_t	 n = dir != NULL ? strlen(dir) : 0;

	if (begins(f, "file://")) {
		f.p += 7;
		f.n -= 7;
	}
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n > 0 && f.n > n + 1 && memcmp(f.p, dir, n) == 0 &&
	    f.p[n] == '/') {
		f.p += n + 1;
		f.n -= n + 1;
	}
	return f;
}

/* Is the frame the test's own code rather than a runtime's, a library's
 * or the runner's? */
static int
own_frame(const struct stk_text *t, int kind, const struct stk_frame *fr,
    const char *dir)
{
	struct str	 file = sp(t, fr->file), func = sp(t, fr->func);
	int		 under;
	static const char *const lib[] = { "/site-packages/",
	    "/dist-packages/", "/node_modules/", "/lib/python", "/go/pkg/mod/",
	    "/usr/lib/go", "/usr/local/go", "/src/runtime/", "/.venv/",
	    "/venv/", NULL };
	static const char *const sys[] = { "/usr/", "/lib/", "/lib64/",
	    "/opt/", "/nix/store/", "/snap/", NULL };

	if (begins(file, "file://")) {
		file.p += 7;
		file.n -= 7;
	}
	under = rel_file(file, dir).p != file.p;
	if (file.n == 0 || file.p[0] == '<' || begins(file, "node:") ||
	    begins(file, "internal/"))
		return 0;
	for (size_t i = 0; lib[i] != NULL; i++)
		if (has(file, lib[i]))
			return 0;
	switch (kind) {
	case STK_GO:
		/* _testmain.go is go test's generated main */
		if (begins(func, "runtime.") || begins(func, "testing.") ||
		    begins(func, "syscall.") || begins(func, "internal/") ||
		    begins(func, "main.main") || has(file, "_testmain.go"))
			return 0;
		break;
	case STK_JAVA:
		if (begins(func, "java.") || begins(func, "javax.") ||
		    begins(func, "jdk.") || begins(func, "sun.") ||
		    begins(func, "com.sun.") || begins(func, "org.junit.") ||
		    begins(func, "junit.") || begins(func, "org.apache.maven") ||
		    begins(func, "org.gradle"))
			return 0;
		return 1;	/* no paths: the class is the test's */
	case STK_NATIVE:
		/* glibc's own sources are relative to its build tree */
		if (begins(file, "./") || begins(file, "../"))
			return 0;
		break;
	}
	/* An absolute path outside the run's directory is the project's
	 * unless the system's (a build tree beside the sources, a package
	 * run from a subdirectory); a relative one is the project's (gdb's,
	 * Go's builds). */
	if (file.p[0] == '/' && !under)
		for (size_t i = 0; sys[i] != NULL; i++)
			if (begins(file, sys[i]))
				return 0;
	return 1;
}

/* Does the thread run a test runner's frames (the thread of the test)? */
static int
runner_thread(const struct stk_text *t, const struct stk_thread *th)
{
	static const char *const marks[] = { "_pytest/", "unittest/case.py",
	    "jest-circus", "jest-jasmine", "/mocha/", "node:internal/test_",
	    NULL };

	for (size_t i = 0; i < th->n; i++) {
		const struct stk_frame *fr = &t->f[th->first + i];
		struct str file = sp(t, fr->file), func = sp(t, fr->func);

		if (begins(func, "testing.tRunner") ||
		    begins(func, "org.junit."))
			return 1;
		for (size_t k = 0; marks[k] != NULL; k++)
			if (has(file, marks[k]))
				return 1;
	}
	return 0;
}

/* The index of the innermost own frame of th, or -1. */
static long
innermost_own(const struct stk_text *t, const struct stk_thread *th,
    const char *dir)
{
	for (size_t i = 0; i < th->n; i++)
		if (own_frame(t, th->kind, &t->f[th->first + i], dir))
			return (long)i;
	return -1;
}

/* A native function's name as shown: glibc's internal prefixes off
 * ("__GI___lll_lock_wait", "___pthread_mutex_lock"). */
static struct str
clean_func(struct str f)
{
	if (begins(f, "__GI_")) {
		f.p += 5;
		f.n -= 5;
	}
	while (f.n > 1 && f.p[0] == '_') {
		f.p++;
		f.n--;
	}
	return f;
}

/* "module.func" for a Python frame in a library (socket.py's recv:
 * socket.recv), else the function. */
static char *
call_name(const struct stk_text *t, int kind, const struct stk_frame *fr)
{
	struct str	 func = sp(t, fr->func), file = sp(t, fr->file);
	const char	*b = file.p + file.n;
	char		*s;

	if (kind == STK_NATIVE)
		func = clean_func(func);
	if (kind != STK_PYTHON || file.n < 4 || memcmp(file.p + file.n - 3,
	    ".py", 3) != 0)
		return flaky_strndup(func.p, func.n);
	while (b > file.p && b[-1] != '/')
		b--;
	if (asprintf(&s, "%.*s.%.*s", (int)(file.p + file.n - b - 3), b,
	    (int)func.n, func.p) == -1)
		return NULL;
	return s;
}

/* The head of file (under dir when relative) into *text, or -1. */
static int
source_text(const char *file, const char *dir, char **text, size_t *len)
{
	char	 path[4096], err[64];
	size_t	 size;
	int	 r;

	*text = NULL;
	if (file == NULL)
		return -1;
	if (file[0] == '/')
		snprintf(path, sizeof path, "%s", file);
	else
		snprintf(path, sizeof path, "%s/%s", dir != NULL ? dir : ".",
		    file);
	/* the head of a bigger file holds the line, or not */
	r = flaky_read_file_head(path, SOURCE_MAX, text, len, &size, err,
	    sizeof err);
	if (r < 0 && r != -EFBIG) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

/* The start of line n (from 1) of text, or NULL. */
static const char *
line_at(const char *text, size_t len, int n)
{
	const char *s = text;

	for (int i = 1; i < n && s != NULL; i++)
		if ((s = memchr(s, '\n', len - (size_t)(s - text))) != NULL)
			s++;
	return s != NULL && s < text + len ? s : NULL;
}

/* Line n of file (under dir when relative), trimmed, or NULL. */
static char *
source_line(const char *file, const char *dir, int n)
{
	char	*text, *res = NULL;
	const char *s, *e;
	size_t	 len;

	if (n <= 0 || source_text(file, dir, &text, &len) < 0)
		return NULL;
	if ((s = line_at(text, len, n)) != NULL) {
		while (*s == ' ' || *s == '\t')
			s++;
		e = s;
		while (e < text + len && *e != '\n' && *e != '\r')
			e++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e > s)
			res = flaky_strndup(s, (size_t)(e - s) > CODE_MAX ?
			    CODE_MAX : (size_t)(e - s));
	}
	free(text);
	return res;
}

/* The function whose body holds line n of file, when a runner's dump
 * names only the place (pytest's "test_x.py:10: Failed"): the nearest
 * "def NAME(" (Python), "func NAME(" or "func (r T) NAME(" (Go) or
 * "function NAME(" (JavaScript) at or above it. NULL when none. */
static char *
enclosing_function(const char *file, const char *dir, int n)
{
	static const char *const kw[] = { "async def ", "def ", "func ",
	    "function ", "async function " };
	char	*text, *res = NULL;
	size_t	 len;

	if (n <= 0 || source_text(file, dir, &text, &len) < 0)
		return NULL;
	for (int i = n; i > 0 && res == NULL; i--) {
		const char *s = line_at(text, len, i), *e;

		if (s == NULL)
			continue;
		while (*s == ' ' || *s == '\t')
			s++;
		for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++) {
			size_t	 kl = strlen(kw[k]);

			if ((size_t)(text + len - s) <= kl ||
			    strncmp(s, kw[k], kl) != 0)
				continue;
			s += kl;
			/* a Go method: skip its receiver */
			if (*s == '(' && (e = memchr(s, ')', (size_t)(text +
			    len - s))) != NULL)
				for (s = e + 1; *s == ' '; s++)
					;
			for (e = s; e < text + len && (isalnum((unsigned char)
			    *e) || *e == '_' || *e == '$'); e++)
				;
			if (e > s && e < text + len && *e == '(')
				res = flaky_strndup(s, (size_t)(e - s));
			break;
		}
	}
	free(text);
	return res;
}

/* Does the thread wait (blocked), rather than run (busy)? From the
 * thread's state where the runtime gives one, else from its innermost
 * frame and the code there. */
static int
blocked(const struct stk_text *t, const struct stk_thread *th, long own,
    const char *code)
{
	static const char *const calls[] = { "recv", "accept", "acquire",
	    "wait", "join", "get(", "sleep", "select", "poll", "read",
	    "connect", "communicate", "lock", "futex", "cond", "epoll",
	    "Lock", "chan", "IO wait", "semacquire", NULL };
	struct str	 st = sp(t, th->state), top = { "", 0 };

	if (th->kind == STK_GO && st.n > 0)
		return !begins(st, "running") && !begins(st, "runnable");
	if (th->kind == STK_JAVA && st.n > 0)
		return !begins(st, "RUNNABLE");
	if (th->kind == STK_NODE)
		return 0;
	if (own > 0 || th->n == 0)
		return own != 0;
	/* the innermost frame is the test's: what does its line call? */
	if (th->kind == STK_PYTHON && code != NULL) {
		for (size_t k = 0; calls[k] != NULL; k++)
			if (strstr(code, calls[k]) != NULL)
				return 1;
		return 0;
	}
	top = sp(t, t->f[th->first].func);
	for (size_t k = 0; calls[k] != NULL; k++)
		if (has(top, calls[k]))
			return 1;
	return 0;
}

/* The thread's frames, innermost first, "> " before the test's own. */
static char *
hang_frames_text(const struct stk_text *t, const struct stk_thread *th,
    const char *dir)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	for (size_t i = 0; i < th->n && i < HANG_FRAMES &&
	    b.len < FLAKY_HANG_FRAMES_BYTES - 300; i++) {
		const struct stk_frame *fr = &t->f[th->first + i];
		struct str func = sp(t, fr->func);
		struct str file = rel_file(sp(t, fr->file), dir);

		if (th->kind == STK_NATIVE)
			func = clean_func(func);
		flaky_buf_printf(&b, "%s%.*s", own_frame(t, th->kind, fr, dir) ?
		    "> " : "  ", (int)(func.n > 120 ? 120 : func.n), func.n ?
		    func.p : "??");
		if (file.n > 0)
			flaky_buf_printf(&b, " (%.*s:%d)", (int)(file.n > 160 ?
			    160 : file.n), file.p, fr->line);
		flaky_buf_addc(&b, '\n');
	}
	if (b.oom || b.len == 0) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}

/* The place of a thread: its innermost own frame (or its innermost). */
static void
hang_thread_place(const struct stk_text *t, const struct stk_thread *th,
    const char *dir, char **func, char **file, int *line)
{
	long	 own = innermost_own(t, th, dir);
	const struct stk_frame *fr;
	struct str	 f, fl;

	*func = *file = NULL;
	*line = 0;
	if (th->n == 0)
		return;
	fr = &t->f[th->first + (own >= 0 ? (size_t)own : 0)];
	f = sp(t, fr->func);
	if (th->kind == STK_NATIVE)
		f = clean_func(f);
	fl = rel_file(sp(t, fr->file), dir);
	*func = f.n > 0 ? flaky_strndup(f.p, f.n) : NULL;
	*file = fl.n > 0 ? flaky_strndup(fl.p, fl.n) : NULL;
	*line = fr->line;
}

/* The hang of the test's thread th: where, in what call, waiting or
 * running, and its frames. 0 or -ENOMEM. */
int
hang_thread(const struct stk_text *t, const struct stk_thread *th,
    const char *dir, struct flaky_hang *h)
{
	long	 own = innermost_own(t, th, dir);
	struct str name = sp(t, th->name), st = sp(t, th->state);

	hang_thread_place(t, th, dir, &h->func, &h->file, &h->line);
	if (own < 0) {
		/* nothing of the test's: the innermost frame is the call */
		h->call = h->func;
		h->func = NULL;
		free(h->file);
		h->file = NULL;
		h->line = 0;
	} else if (th->kind == STK_GO && st.n > 0)
		/* "chan receive", "select", "sync.Mutex.Lock" */
		h->call = flaky_strndup(st.p, st.n);
	else if (own > 0)
		h->call = call_name(t, th->kind, &t->f[th->first +
		    (size_t)own - 1]);
	if (own >= 0 && th->kind != STK_JAVA)
		h->code = source_line(h->file, dir, h->line);
	if (own >= 0 && (h->func == NULL || *h->func == '\0')) {
		free(h->func);
		h->func = enclosing_function(h->file, dir, h->line);
	}
	h->kind = strdup(th->idle ? "idle" : blocked(t, th, own, h->code) ?
	    "blocked" : "busy");
	h->frames = hang_frames_text(t, th, dir);
	if (th->kind == STK_PYTHON && th->current)
		h->thread = strdup("the current thread");
	else if (name.n > 0)
		h->thread = flaky_strndup(name.p, name.n > 64 ? 64 : name.n);
	if (h->kind == NULL)
		return -ENOMEM;
	return 0;
}

/* One parsed dump and its best thread. */
struct cand {
	struct stk_text	 t;
	long		 best;		/* thread index, -1: none */
	int		 score;
};

/* How likely th is the test's thread. */
static int
thread_score(const struct stk_text *t, size_t i, const char *dir)
{
	const struct stk_thread *th = &t->t[i];
	int	 s = 0;

	if (th->n == 0 && !th->idle)
		return -1;
	if (innermost_own(t, th, dir) >= 0)
		s += 4;
	if (runner_thread(t, th))
		s += 2;
	if (th->current || i == 0)
		s += 1;
	return s;
}

int
flaky_hang_fold(struct flaky_stacks *s, const char *dir)
{
	struct cand	*c;
	struct flaky_hang *h = &s->hang;
	long		 bd = -1;
	int		 r = 0;

	flaky_hang_clear(h);
	if (s->n == 0)
		return 0;
	if ((c = calloc(s->n, sizeof *c)) == NULL)
		return -ENOMEM;
	for (size_t d = 0; d < s->n; d++) {
		c[d].best = -1;
		c[d].score = -1;
		if (s->v[d].text == NULL || stk_parse(s->v[d].text, s->v[d].len,
		    &c[d].t) < 0)
			continue;
		for (size_t i = 0; i < c[d].t.nt; i++) {
			int sc = thread_score(&c[d].t, i, dir);

			if (sc > c[d].score) {
				c[d].score = sc;
				c[d].best = (long)i;
			}
		}
		if (c[d].best >= 0 && (bd < 0 || c[d].score > c[bd].score))
			bd = (long)d;
	}
	/* a deadlock anywhere names the hang */
	for (size_t d = 0; d < s->n && h->kind == NULL; d++)
		if ((r = hang_deadlock(&c[d].t, dir, h)) < 0)
			goto out;
		else if (r > 0)
			h->pid = s->v[d].pid;
	if (h->kind == NULL && bd >= 0)
		r = hang_thread(&c[bd].t, &c[bd].t.t[c[bd].best], dir, h);
	if (h->pid == 0 && bd >= 0)
		h->pid = s->v[bd].pid;
	/* the test the capture named (Jest's): "file › title path" */
	for (size_t d = 0; d < s->n && h->test == NULL; d++) {
		const struct stk_text *t = &c[d].t;
		struct str f = rel_file(sp(t, t->test_file), dir);
		struct str nm = sp(t, t->test_name);

		if (nm.n > 0 && f.n > 0 && asprintf(&h->test,
		    "%.*s \xe2\x80\xba %.*s", (int)f.n, f.p, (int)nm.n,
		    nm.p) == -1) {
			h->test = NULL;
			r = -ENOMEM;
		}
	}
	/* the key of the place: no line, no directory outside the run's
	 * (two checkouts of one project group together) */
	if (h->func != NULL && h->file != NULL && h->site == NULL &&
	    asprintf(&h->site, "%s@%s", h->func, h->file[0] == '/' &&
	    strrchr(h->file, '/') != NULL ? strrchr(h->file, '/') + 1 :
	    h->file) == -1) {
		h->site = NULL;
		r = -ENOMEM;
	}
out:
	for (size_t d = 0; d < s->n; d++)
		stk_free(&c[d].t);
	free(c);
	return r < 0 ? r : 0;
}

/* A runner's own dump of a hung test, when no stacks were taken: a
 * capture of one process holding text's stacks (pytest-timeout's "Stack
 * of" blocks and the failure's traceback, go test -timeout's goroutines),
 * or NULL when text has none. */
struct flaky_stacks *
flaky_hang_from_text(const char *text, size_t len)
{
	struct flaky_stacks *s;
	struct stk_text	 t;
	size_t		 frames = 0;
	int		 kind = STK_UNKNOWN;

	if (text == NULL || len == 0 || stk_parse(text, len, &t) < 0)
		return NULL;
	for (size_t i = 0; i < t.nt; i++) {
		frames += t.t[i].n;
		if (kind == STK_UNKNOWN && t.t[i].n > 0)
			kind = t.t[i].kind;
	}
	stk_free(&t);
	if (frames == 0 || (kind != STK_PYTHON && kind != STK_GO))
		return NULL;
	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->v = calloc(1, sizeof *s->v)) == NULL ||
	    (s->v[0].text = flaky_strndup(text, len > FLAKY_STACKS_STORE_BYTES ?
	    FLAKY_STACKS_STORE_BYTES : len)) == NULL) {
		flaky_stacks_free(s);
		return NULL;
	}
	s->n = 1;
	s->procs = 1;
	s->v[0].len = strlen(s->v[0].text);
	snprintf(s->v[0].runtime, sizeof s->v[0].runtime, "%s",
	    kind == STK_GO ? "go" : "python");
	snprintf(s->v[0].tool, sizeof s->v[0].tool, "%s", kind == STK_GO ?
	    "go test" : "pytest-timeout");
	return s;
}
