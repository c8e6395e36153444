/* Stack text into threads and frames (stack_int.h): every format a hung
 * run's capture or its runner writes, told apart by the line that starts
 * a thread. Text from a test process is untrusted: nothing here trusts a
 * length, a number or a layout, and tests/fuzz/fuzz_stacks.c holds it to
 * that. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack_int.h"

struct line {
	const char	*p;		/* into the text */
	size_t		 n;
	uint32_t	 off;		/* of p in the text */
};

/* Does l start with the prefix? */
static int
starts(const struct line *l, const char *pre)
{
	size_t	 n = strlen(pre);

	return l->n >= n && memcmp(l->p, pre, n) == 0;
}

/* The first c in l at or after from, or -1. */
static long
find_c(const struct line *l, size_t from, char c)
{
	for (size_t i = from; i < l->n; i++)
		if (l->p[i] == c)
			return (long)i;
	return -1;
}

/* The last c in l[0..to), or -1. */
static long
rfind_c(const struct line *l, size_t to, char c)
{
	for (size_t i = to; i-- > 0;)
		if (l->p[i] == c)
			return (long)i;
	return -1;
}

/* The first occurrence of s in l at or after from, or -1. */
static long
find_s(const struct line *l, size_t from, const char *s)
{
	size_t	 n = strlen(s);

	for (size_t i = from; i + n <= l->n; i++)
		if (memcmp(l->p + i, s, n) == 0)
			return (long)i;
	return -1;
}

/* A piece of l: [a, b). */
static struct stk_str
piece(const struct line *l, size_t a, size_t b)
{
	struct stk_str	 s = { 0, 0 };

	if (a < b && b <= l->n) {
		s.off = l->off + (uint32_t)a;
		s.len = (uint32_t)(b - a);
	}
	return s;
}

/* A decimal number at l[i..]; -1 when none, *end after it. */
static long
num_at(const struct line *l, size_t i, size_t *end)
{
	long	 v = 0;
	size_t	 j = i;

	while (j < l->n && j - i < 9 && l->p[j] >= '0' && l->p[j] <= '9')
		v = v * 10 + (l->p[j++] - '0');
	if (end != NULL)
		*end = j;
	return j > i ? v : -1;
}

/* A hexadecimal number after "0x" at l[i..]; 0 when none. */
static uint64_t
hex_at(const struct line *l, size_t i)
{
	uint64_t v = 0;

	if (i + 2 > l->n || l->p[i] != '0' || l->p[i + 1] != 'x')
		return 0;
	for (i += 2; i < l->n; i++) {
		int	 c = l->p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		v = v << 4 | (uint64_t)d;
	}
	return v;
}

struct parser {
	struct stk_text	*t;
	size_t		 tcap, fcap, lcap, scap;
	struct stk_thread *cur;		/* NULL: not in a thread */
	int		 reverse;	/* frames come outermost first */
	int		 go_func;	/* a Go function line waits for its
					 * file line */
	int		 java_tail;	/* past the JVM's deadlock report */
	int		 repr;		/* the thread is pytest's traceback */
	struct stk_str	 pend;		/* ... that function */
	int		 oom;
};

/* Frames of the thread read most recent last are turned around. */
static void
thread_end(struct parser *ps)
{
	struct stk_thread *th = ps->cur;

	if (th != NULL && ps->reverse)
		for (size_t i = 0, j = th->n; i + 1 < j; i++, j--) {
			struct stk_frame x = ps->t->f[th->first + i];

			ps->t->f[th->first + i] = ps->t->f[th->first + j - 1];
			ps->t->f[th->first + j - 1] = x;
		}
	ps->cur = NULL;
	ps->reverse = 0;
	ps->go_func = 0;
	ps->repr = 0;
}

/* A new thread of kind; NULL past the bound. */
static struct stk_thread *
thread_new(struct parser *ps, int kind, int reverse)
{
	struct stk_text	*t = ps->t;
	struct stk_thread *th;

	thread_end(ps);
	if (t->nt >= STK_THREADS_MAX)
		return NULL;
	if (t->nt == ps->tcap) {
		size_t	 nc = ps->tcap ? ps->tcap * 2 : 16;
		void	*v = realloc(t->t, nc * sizeof *t->t);

		if (v == NULL) {
			ps->oom = 1;
			return NULL;
		}
		t->t = v;
		ps->tcap = nc;
	}
	th = &t->t[t->nt++];
	memset(th, 0, sizeof *th);
	th->kind = kind;
	th->first = t->nf;
	ps->cur = th;
	ps->reverse = reverse;
	return th;
}

/* Add a frame to the current thread. */
static void
frame_add(struct parser *ps, struct stk_str func, struct stk_str file,
    long line)
{
	struct stk_text	*t = ps->t;
	struct stk_frame *f;

	if (ps->cur == NULL || t->nf >= STK_FRAMES_MAX)
		return;
	if (t->nf == ps->fcap) {
		size_t	 nc = ps->fcap ? ps->fcap * 2 : 64;
		void	*v = realloc(t->f, nc * sizeof *t->f);

		if (v == NULL) {
			ps->oom = 1;
			return;
		}
		t->f = v;
		ps->fcap = nc;
	}
	f = &t->f[t->nf++];
	f->func = func;
	f->file = file;
	f->line = line > 0 && line < 100000000 ? (int)line : 0;
	ps->cur->n++;
}

/* Room for one more lock at t->l[t->nl] (zeroed; the caller counts it
 * in), or NULL past the bound. */
static struct stk_lock *
lock_new(struct parser *ps)
{
	struct stk_text	*t = ps->t;

	if (t->nl >= STK_LOCKS_MAX)
		return NULL;
	if (t->nl == ps->lcap) {
		size_t	 nc = ps->lcap ? ps->lcap * 2 : 8;
		void	*v = realloc(t->l, nc * sizeof *t->l);

		if (v == NULL) {
			ps->oom = 1;
			return NULL;
		}
		t->l = v;
		ps->lcap = nc;
	}
	memset(&t->l[t->nl], 0, sizeof *t->l);
	return &t->l[t->nl];
}

/* "flaky: lock wait: thread T waits for mutex 0xA held by thread U" */
static void
lock_line(struct parser *ps, const struct line *l)
{
	struct stk_text	*t = ps->t;
	long		 a, b, c;
	struct stk_lock	*k;

	if ((a = find_s(l, 0, "thread ")) < 0 ||
	    (b = find_s(l, (size_t)a, "mutex ")) < 0 ||
	    (c = find_s(l, (size_t)b, "by thread ")) < 0 ||
	    (k = lock_new(ps)) == NULL)
		return;
	k->tid = num_at(l, (size_t)a + 7, NULL);
	k->addr = hex_at(l, (size_t)b + 6);
	k->owner = num_at(l, (size_t)c + 10, NULL);
	if (k->tid > 0 && k->owner > 0 && k->addr != 0)
		t->nl++;
}

/* The JVM's "\t- locked <0xA> (a java.lang.Object)" (hold) and
 * "\t- waiting to lock <0xA> (...)" of the current thread; at is where
 * the address starts. */
static void
java_lock(struct parser *ps, const struct line *l, int hold, size_t at)
{
	struct stk_lock	*k;
	long		 a, b;

	if ((k = lock_new(ps)) == NULL)
		return;
	k->tid = ps->cur->tid;
	k->hold = hold;
	k->addr = hex_at(l, at);
	if ((a = find_s(l, at, "(a ")) > 0 && (b = find_c(l, (size_t)a,
	    ')')) > a)
		k->sym = piece(l, (size_t)a + 3, (size_t)b);
	if (k->tid > 0 && k->addr != 0)
		ps->t->nl++;
}

/* gdb's "SYMBOL in section .bss ..." after our "flaky-lock 0xA: " echo
 * names the mutex at A (the lock wait lines come after gdb's output:
 * named once all is read). */
static void
lock_symbol(struct parser *ps, uint64_t addr, const struct line *l)
{
	struct stk_text	*t = ps->t;
	long		 e = find_s(l, 0, " in section ");

	if (e <= 0 || find_c(l, 0, ' ') < e || t->nsym >= STK_LOCKS_MAX)
		return;
	if (t->nsym == ps->scap) {
		size_t	 nc = ps->scap ? ps->scap * 2 : 8;
		void	*v = realloc(t->sym, nc * sizeof *t->sym);

		if (v == NULL) {
			ps->oom = 1;
			return;
		}
		t->sym = v;
		ps->scap = nc;
	}
	memset(&t->sym[t->nsym], 0, sizeof *t->sym);
	t->sym[t->nsym].addr = addr;
	t->sym[t->nsym++].sym = piece(l, 0, (size_t)e);
}

/* Each lock without a name gets gdb's for its address. */
static void
lock_names(struct stk_text *t)
{
	for (size_t i = 0; i < t->nl; i++)
		for (size_t k = 0; t->l[i].sym.len == 0 && k < t->nsym; k++)
			if (t->sym[k].addr == t->l[i].addr)
				t->l[i].sym = t->sym[k].sym;
}

/* A thread's first line, of any format: 1 when it was one. */
static int
thread_line(struct parser *ps, const struct line *l)
{
	struct stk_thread *th;
	long		 a, b;

	if (starts(l, "Thread 0x") || starts(l, "Current thread 0x")) {
		if (find_s(l, 0, "(most recent call first)") < 0)
			return 0;
		if ((th = thread_new(ps, STK_PYTHON, 0)) != NULL) {
			th->current = l->p[0] == 'C';
			a = find_c(l, 0, '0');
			b = find_c(l, (size_t)(a < 0 ? 0 : a), ' ');
			if (a >= 0 && b > a)
				th->name = piece(l, (size_t)a, (size_t)b);
		}
		return 1;
	}
	if (starts(l, "Traceback (most recent call last):")) {
		thread_new(ps, STK_PYTHON, 1);
		return 1;
	}
	if ((a = find_s(l, 0, " Stack of ")) >= 0 && starts(l, "~~") &&
	    (th = thread_new(ps, STK_PYTHON, 1)) != NULL) {
		b = find_c(l, (size_t)a + 10, ' ');
		th->name = piece(l, (size_t)a + 10, b > 0 ? (size_t)b : l->n);
		return 1;
	}
	if (starts(l, "Thread main (JavaScript")) {
		if ((th = thread_new(ps, STK_NODE, 0)) != NULL) {
			th->name = piece(l, 7, 11);
			th->idle = find_s(l, 0, "idle") >= 0;
		}
		return 1;
	}
	if (starts(l, "goroutine ") && l->n > 2 && l->p[l->n - 1] == ':' &&
	    (a = find_c(l, 0, '[')) > 0 &&
	    (th = thread_new(ps, STK_GO, 0)) != NULL) {
		th->name = piece(l, 10, (size_t)a - 1);
		b = find_c(l, (size_t)a, ',');
		if (b < 0)
			b = find_c(l, (size_t)a, ']');
		if (b > a)
			th->state = piece(l, (size_t)a + 1, (size_t)b);
		return 1;
	}
	if (l->n > 2 && l->p[0] == '"' && (a = find_c(l, 1, '"')) > 1 &&
	    find_s(l, (size_t)a, " prio=") >= 0 &&
	    (th = thread_new(ps, STK_JAVA, 0)) != NULL) {
		th->name = piece(l, 1, (size_t)a);
		if ((b = find_s(l, (size_t)a, " nid=0x")) > 0)
			th->tid = (long)hex_at(l, (size_t)b + 5);
		return 1;
	}
	if (starts(l, "Thread ") && (a = find_s(l, 0, "(LWP ")) > 0 &&
	    l->p[l->n - 1] == ':' && (th = thread_new(ps, STK_NATIVE,
	    0)) != NULL) {
		th->tid = num_at(l, (size_t)a + 5, NULL);
		th->name = piece(l, (size_t)a + 5, (size_t)a + 5 +
		    (size_t)(find_c(l, (size_t)a + 5, ')') > a + 5 ?
		    find_c(l, (size_t)a + 5, ')') - a - 5 : 0));
		return 1;
	}
	if (starts(l, "TID ") && l->n > 4 && l->p[l->n - 1] == ':' &&
	    (th = thread_new(ps, STK_NATIVE, 0)) != NULL) {
		th->tid = num_at(l, 4, NULL);
		th->name = piece(l, 4, l->n - 1);
		return 1;
	}
	return 0;
}

/* Python: '  File "F", line N in FUNC' (faulthandler) or ', in FUNC'. */
static void
python_frame(struct parser *ps, const struct line *l)
{
	long	 q1, q2, ln, in;
	size_t	 e;

	if (!starts(l, "  File \"") || (q1 = 7) < 0 ||
	    (q2 = find_s(l, 8, "\", line ")) < 0)
		return;
	ln = num_at(l, (size_t)q2 + 8, &e);
	if ((in = find_s(l, e, " in ")) < 0)
		return;
	frame_add(ps, piece(l, (size_t)in + 4, l->n), piece(l, (size_t)q1 + 1,
	    (size_t)q2), ln);
}

/* Node: "    at FUNC (FILE:L:C)", "    at FILE:L:C". */
static void
node_frame(struct parser *ps, const struct line *l)
{
	size_t	 i = 0, fb, fe, e;
	long	 c1, c2, ln, sp;
	struct stk_str func = { 0, 0 };

	while (i < l->n && l->p[i] == ' ')
		i++;
	if (l->n - i < 4 || memcmp(l->p + i, "at ", 3) != 0)
		return;
	i += 3;
	fb = i;
	fe = l->n;
	if (l->p[l->n - 1] == ')' && (sp = find_s(l, i, " (")) > 0) {
		func = piece(l, i, (size_t)sp);
		fb = (size_t)sp + 2;
		fe = l->n - 1;
	}
	/* FILE:L:C, FILE may hold colons (node:internal/...) */
	if (fe <= fb || (c2 = rfind_c(l, fe, ':')) <= (long)fb ||
	    (c1 = rfind_c(l, (size_t)c2, ':')) <= (long)fb)
		return;
	ln = num_at(l, (size_t)c1 + 1, &e);
	frame_add(ps, func, piece(l, fb, (size_t)c1), ln);
}

/* Go: "pkg.Func(args)" then "\tFILE:LINE +0x.." */
static void
go_frame(struct parser *ps, const struct line *l)
{
	long	 c, sp, ln;
	size_t	 e;

	if (l->n > 0 && l->p[0] == '\t' && ps->go_func) {
		c = find_c(l, 1, ' ');
		if ((c = rfind_c(l, c > 0 ? (size_t)c : l->n, ':')) > 1) {
			ln = num_at(l, (size_t)c + 1, &e);
			frame_add(ps, ps->pend, piece(l, 1, (size_t)c), ln);
		}
		ps->go_func = 0;
		return;
	}
	ps->go_func = 0;
	if (l->n == 0 || l->p[0] == '\t' || l->p[0] == ' ' ||
	    starts(l, "created by "))
		return;
	if ((sp = rfind_c(l, l->n, '(')) > 0 && l->p[l->n - 1] == ')') {
		ps->pend = piece(l, 0, (size_t)sp);
		ps->go_func = 1;
	}
}

/* The JVM: "\tat pkg.Class.method(File.java:12)" or "(Native Method)",
 * the file after a module ("java.base@17/Thread.java:12"). */
static void
java_frame(struct parser *ps, const struct line *l)
{
	long	 op, sl, c, ln = 0;
	size_t	 fb, e;

	if (!starts(l, "\tat ") || (op = find_c(l, 4, '(')) < 0 ||
	    l->p[l->n - 1] != ')')
		return;
	fb = (size_t)op + 1;
	if ((sl = rfind_c(l, l->n - 1, '/')) > op)
		fb = (size_t)sl + 1;
	if ((c = rfind_c(l, l->n - 1, ':')) > (long)fb)
		ln = num_at(l, (size_t)c + 1, &e);
	else
		c = (long)l->n - 1;
	frame_add(ps, piece(l, 4, (size_t)op), piece(l, fb, (size_t)c), ln);
}

/* gdb: "#N  0xADDR in FUNC (ARGS) at FILE:LINE", "#N  FUNC (ARGS) at
 * FILE:LINE", "... from LIB"; eu-stack: "#N  0xADDR FUNC" and maybe a
 * next line "    FILE:LINE:COL". */
static void
native_frame(struct parser *ps, const struct line *l)
{
	size_t	 i = 1, e;
	long	 in, sp, at, c, ln;
	struct stk_frame *last;

	if (l->n > 4 && memcmp(l->p, "    ", 4) == 0 && ps->cur != NULL &&
	    ps->cur->n > 0 && l->p[4] != ' ') {
		/* eu-stack's source line of the frame above */
		struct line s = { l->p + 4, l->n - 4, l->off + 4 };
		long	 c2 = rfind_c(&s, s.n, ':');

		last = &ps->t->f[ps->t->nf - 1];
		if (last->file.len != 0 || c2 <= 0)
			return;
		if ((c = rfind_c(&s, (size_t)c2, ':')) <= 0)
			c = c2;
		last->file = piece(&s, 0, (size_t)c);
		ln = num_at(&s, (size_t)c + 1, &e);
		last->line = ln > 0 ? (int)ln : 0;
		return;
	}
	if (l->n < 3 || l->p[0] != '#')
		return;
	while (i < l->n && l->p[i] >= '0' && l->p[i] <= '9')
		i++;
	while (i < l->n && l->p[i] == ' ')
		i++;
	if ((in = find_s(l, i, " in ")) > 0 && starts(&(struct line){
	    l->p + i, l->n - i, 0 }, "0x"))
		i = (size_t)in + 4;
	else if (starts(&(struct line){ l->p + i, l->n - i, 0 }, "0x")) {
		/* eu-stack: the address, then the function */
		sp = find_c(l, i, ' ');
		if (sp < 0) {
			frame_add(ps, piece(l, 0, 0), piece(l, 0, 0), 0);
			return;
		}
		frame_add(ps, piece(l, (size_t)sp + 1, l->n), piece(l, 0, 0),
		    0);
		return;
	}
	sp = find_s(l, i, " (");
	e = sp > 0 ? (size_t)sp : l->n;
	if ((at = find_s(l, e, ") at ")) > 0 &&
	    (c = rfind_c(l, l->n, ':')) > at + 5) {
		ln = num_at(l, (size_t)c + 1, NULL);
		frame_add(ps, piece(l, i, e), piece(l, (size_t)at + 5,
		    (size_t)c), ln);
	} else
		frame_add(ps, piece(l, i, e), piece(l, 0, 0), 0);
}

/* pytest's long traceback (a failure's, pytest-timeout's "Failed:
 * Timeout" among them): "path.py:12: in func", outermost first, no
 * header; the test's own entry has no function ("path.py:5: "). 1 when
 * the line was one. */
static int
pytest_repr_frame(struct parser *ps, const struct line *l)
{
	long	 c, py, ln, sp;
	size_t	 e;

	if (l->n < 6 || (py = find_s(l, 0, ".py:")) <= 0 ||
	    ((sp = find_c(l, 0, ' ')) >= 0 && sp < py) || (c = py + 3) < 0 ||
	    (ln = num_at(l, (size_t)c + 1, &e)) < 0 || e + 1 > l->n ||
	    l->p[e] != ':')
		return 0;
	if (ps->cur == NULL || !ps->repr)
		if (thread_new(ps, STK_PYTHON, 1) == NULL)
			return 1;
	ps->repr = 1;
	/* no function: the test's own entry, or the exception's line */
	if (e + 5 <= l->n && memcmp(l->p + e, ": in ", 5) == 0)
		frame_add(ps, piece(l, e + 5, l->n), piece(l, 0, (size_t)c),
		    ln);
	else
		frame_add(ps, piece(l, 0, 0), piece(l, 0, (size_t)c), ln);
	return 1;
}

/* One line of the text. */
static void
parse_line(struct parser *ps, const struct line *l, uint64_t *echo_addr)
{
	if (*echo_addr != 0) {
		lock_symbol(ps, *echo_addr, l);
		*echo_addr = 0;
		return;
	}
	if (starts(l, "flaky: lock wait: ")) {
		thread_end(ps);
		lock_line(ps, l);
		return;
	}
	if (starts(l, "flaky: test file: ")) {
		ps->t->test_file = piece(l, 18, l->n);
		return;
	}
	if (starts(l, "flaky: test name: ")) {
		ps->t->test_name = piece(l, 18, l->n);
		return;
	}
	if (starts(l, "flaky-lock 0x")) {
		*echo_addr = hex_at(l, 11);
		return;
	}
	if (starts(l, "Found one Java-level deadlock")) {
		/* its own listing of the threads follows: not threads */
		thread_end(ps);
		ps->t->java_deadlock = 1;
		ps->java_tail = 1;
	}
	if (ps->java_tail)
		return;
	if (find_s(l, 0, "all goroutines are asleep - deadlock") >= 0)
		ps->t->go_deadlock = 1;
	if (thread_line(ps, l) || pytest_repr_frame(ps, l) ||
	    ps->cur == NULL)
		return;
	switch (ps->cur->kind) {
	case STK_PYTHON:
		python_frame(ps, l);
		break;
	case STK_NODE:
		node_frame(ps, l);
		break;
	case STK_GO:
		go_frame(ps, l);
		break;
	case STK_JAVA:
		if (starts(l, "   java.lang.Thread.State: "))
			ps->cur->state = piece(l, 27, l->n);
		else if (starts(l, "\t- locked <0x"))
			java_lock(ps, l, 1, 11);
		else if (starts(l, "\t- waiting to lock <0x"))
			java_lock(ps, l, 0, 20);
		else
			java_frame(ps, l);
		break;
	default:
		native_frame(ps, l);
	}
}

int
stk_parse(const char *s, size_t len, struct stk_text *t)
{
	struct parser	 ps;
	uint64_t	 echo = 0;
	size_t		 i = 0;

	memset(t, 0, sizeof *t);
	memset(&ps, 0, sizeof ps);
	t->s = s;
	/* offsets are 32 bits: the capture keeps far less than 4 GiB */
	t->len = len > UINT32_MAX ? UINT32_MAX : len;
	ps.t = t;
	while (i < t->len && !ps.oom) {
		const char	*nl = memchr(s + i, '\n', t->len - i);
		struct line	 l;

		l.p = s + i;
		l.n = nl != NULL ? (size_t)(nl - (s + i)) : t->len - i;
		l.off = (uint32_t)i;
		i += l.n + 1;
		if (l.n > 0 && l.p[l.n - 1] == '\r')
			l.n--;
		if (l.n > STK_LINE_MAX)
			continue;
		parse_line(&ps, &l, &echo);
	}
	thread_end(&ps);
	lock_names(t);
	if (ps.oom) {
		stk_free(t);
		return -ENOMEM;
	}
	return 0;
}

void
stk_free(struct stk_text *t)
{
	free(t->t);
	free(t->f);
	free(t->l);
	free(t->sym);
	memset(t, 0, sizeof *t);
}
