/* A deadlock in the stacks of a hung run (issue 33): threads each holding
 * a lock the next one waits for, round to the first. The edges come from
 * the capture's lock wait lines of native threads (a futex wait on a
 * glibc mutex, and the thread its owner field names) and from the JVM's
 * "- locked" and "- waiting to lock" monitors; the JVM's and Go's own
 * verdicts are taken as they are. Named with each thread's place and the
 * locks, gdb's symbol for a mutex when it had one. */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "stack_int.h"

#define CYCLE_MAX	16

struct edge {
	long		 tid, owner;
	uint64_t	 addr;
	struct stk_str	 sym;
};

/* The wait edges of t: tid waits for addr, which owner holds. */
static size_t
edges(const struct stk_text *t, struct edge *e, size_t max)
{
	size_t	 n = 0;

	for (size_t i = 0; i < t->nl && n < max; i++) {
		const struct stk_lock *l = &t->l[i];
		long	 owner = l->owner;

		if (l->hold)
			continue;
		for (size_t k = 0; owner == 0 && k < t->nl; k++)
			if (t->l[k].hold && t->l[k].addr == l->addr &&
			    t->l[k].tid != l->tid)
				owner = t->l[k].tid;
		if (owner <= 0)
			continue;
		e[n].tid = l->tid;
		e[n].owner = owner;
		e[n].addr = l->addr;
		e[n].sym = l->sym;
		/* the JVM names the class on the holder's line too */
		for (size_t k = 0; e[n].sym.len == 0 && k < t->nl; k++)
			if (t->l[k].addr == l->addr)
				e[n].sym = t->l[k].sym;
		n++;
	}
	return n;
}

/* The edge of tid, or NULL. */
static const struct edge *
edge_of(const struct edge *e, size_t n, long tid)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].tid == tid)
			return &e[i];
	return NULL;
}

/* The thread of tid in t, or NULL. */
static const struct stk_thread *
thread_of(const struct stk_text *t, long tid)
{
	for (size_t i = 0; i < t->nt; i++)
		if (t->t[i].tid == tid)
			return &t->t[i];
	return NULL;
}

/* A lock as named: gdb's symbol of a mutex, else its address; a JVM
 * monitor by its class and address. */
static void
lock_name(const struct stk_text *t, int java, const struct edge *e,
    struct flaky_buf *b)
{
	if (java && e->sym.len > 0)
		flaky_buf_printf(b, "the %.*s <0x%" PRIx64 ">",
		    (int)e->sym.len, t->s + e->sym.off, e->addr);
	else if (e->sym.len > 0)
		flaky_buf_printf(b, "%.*s", (int)e->sym.len, t->s + e->sym.off);
	else
		flaky_buf_printf(b, "the %s at 0x%" PRIx64, java ? "monitor" :
		    "mutex", e->addr);
}

/* A thread as named: the JVM's name, else its id. */
static void
thread_name(const struct stk_text *t, const struct stk_thread *th,
    long tid, struct flaky_buf *b)
{
	if (th != NULL && th->kind == STK_JAVA && th->name.len > 0)
		flaky_buf_printf(b, "thread \"%.*s\"", (int)th->name.len,
		    t->s + th->name.off);
	else
		flaky_buf_printf(b, "thread %ld", tid);
}

/* A cycle of edges through the thread of e[start], lowest tid first:
 * its length (2 or more), or 0. */
static size_t
cycle(const struct edge *e, size_t n, size_t start, long *tids)
{
	long	 cur = e[start].tid;
	size_t	 k = 0, low = 0;

	while (k < CYCLE_MAX) {
		const struct edge *x = edge_of(e, n, cur);

		if (x == NULL)
			return 0;
		tids[k++] = cur;
		cur = x->owner;
		if (cur == e[start].tid)
			break;
	}
	if (cur != e[start].tid || k < 2)
		return 0;
	for (size_t i = 1; i < k; i++)
		if (tids[i] < tids[low])
			low = i;
	/* rotate: the lowest thread id first, for one text per deadlock */
	for (size_t r = 0; r < low; r++) {
		long	 first = tids[0];

		memmove(tids, tids + 1, (k - 1) * sizeof *tids);
		tids[k - 1] = first;
	}
	return k;
}

/* Name the deadlock of the threads tids[0..k) into h. */
static int
name_cycle(const struct stk_text *t, const struct edge *e, size_t n,
    const long *tids, size_t k, const char *dir, struct flaky_hang *h)
{
	const struct stk_thread *th0 = thread_of(t, tids[0]);
	struct flaky_buf b, b2;
	int	 r, java = th0 != NULL && th0->kind == STK_JAVA;

	if (th0 != NULL && (r = hang_thread(t, th0, dir, h)) < 0)
		return r;
	flaky_buf_init(&b);
	for (size_t i = 0; i < k; i++) {
		const struct stk_thread *th = thread_of(t, tids[i]);
		const struct edge *wants = edge_of(e, n, tids[i]);
		const struct edge *held = edge_of(e, n, tids[(i + k - 1) % k]);
		struct flaky_hang p = { 0 };

		if (th != NULL && hang_thread(t, th, dir, &p) < 0) {
			flaky_hang_clear(&p);
			flaky_buf_free(&b);
			return -ENOMEM;
		}
		if (i > 0)
			flaky_buf_adds(&b, "; ");
		if (p.func != NULL)
			flaky_buf_printf(&b, "`%s` (%s:%d) in ", p.func,
			    p.file ? p.file : "?", p.line);
		thread_name(t, th, tids[i], &b);
		flaky_buf_adds(&b, " holds ");
		lock_name(t, java, held, &b);
		flaky_buf_adds(&b, " and waits for ");
		lock_name(t, java, wants, &b);
		flaky_hang_clear(&p);
	}
	free(h->kind);
	h->kind = strdup("deadlock");
	free(h->thread);
	flaky_buf_init(&b2);
	thread_name(t, th0, tids[0], &b2);
	h->thread = b2.oom ? NULL : flaky_buf_steal(&b2);
	flaky_buf_free(&b2);
	h->deadlock = b.oom ? NULL : flaky_buf_steal(&b);
	flaky_buf_free(&b);
	return h->kind == NULL || h->deadlock == NULL ? -ENOMEM : 1;
}

int
hang_deadlock(const struct stk_text *t, const char *dir,
    struct flaky_hang *h)
{
	struct edge	 e[STK_LOCKS_MAX];
	long		 tids[CYCLE_MAX];
	size_t		 n = edges(t, e, STK_LOCKS_MAX), k;

	for (size_t i = 0; i < n; i++)
		if ((k = cycle(e, n, i, tids)) >= 2)
			return name_cycle(t, e, n, tids, k, dir, h);
	if (!t->java_deadlock && !t->go_deadlock)
		return 0;
	h->kind = strdup("deadlock");
	h->deadlock = strdup(t->go_deadlock ? "all goroutines are asleep "
	    "(the Go runtime's deadlock)" : "the JVM found a Java-level "
	    "deadlock");
	return h->kind == NULL || h->deadlock == NULL ? -ENOMEM : 1;
}
