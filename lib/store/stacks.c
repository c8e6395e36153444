/* The stacks of hung runs in the database (issue 33): a row of run_stacks
 * per run whose stacks were taken (where it was stuck, the fold of
 * lib/diagnose/hang.c, and the test running at the kill) and a row of
 * stack_dumps per process, its text compressed as output is (sqlar's
 * format; raw on PostgreSQL, which compresses it itself). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "store_int.h"

/* Free what a hang's fold holds (not the struct). */
void
flaky_hang_clear(struct flaky_hang *h)
{
	if (h == NULL)
		return;
	free(h->kind);
	free(h->func);
	free(h->file);
	free(h->call);
	free(h->code);
	free(h->site);
	free(h->deadlock);
	free(h->frames);
	free(h->thread);
	free(h->test);
	memset(h, 0, sizeof *h);
}

/* Free a capture; NULL is fine. */
void
flaky_stacks_free(struct flaky_stacks *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].command);
		free(s->v[i].text);
		free(s->v[i].note);
	}
	free(s->v);
	free(s->note);
	free(s->test_name);
	flaky_hang_clear(&s->hang);
	free(s);
}

/* Bind a text or NULL. */
static void
bind_str(struct sql_stmt *st, int i, const char *s)
{
	if (s == NULL)
		sql_bind_null(st, i);
	else
		sql_bind_text(st, i, s, -1, SQL_TRANSIENT);
}

/* One row of stack_dumps: the text redacted and compressed as output. */
static int
write_dump(struct flaky_store *s, int64_t run_id,
    const struct flaky_stack_dump *d, char *err, size_t errlen)
{
	struct flaky_buf tb, cb;
	struct store_packed p = { 0 };
	struct sql_stmt	*st = NULL;
	const char	*text, *cmd;
	size_t		 len = 0;
	int		 r;

	flaky_buf_init(&tb);
	flaky_buf_init(&cb);
	text = store_redacted(s, d->text, d->text ? (d->len <
	    FLAKY_STACKS_STORE_BYTES ? d->len : FLAKY_STACKS_STORE_BYTES) : 0,
	    &tb, &len);
	cmd = store_redacted(s, d->command, d->command ? strlen(d->command) :
	    0, &cb, NULL);
	if (tb.oom || cb.oom) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if (text != NULL && (r = store_output_pack(&p, text, len,
	    sql_is_pg(store_db(s)), err, errlen)) < 0)
		goto out;
	if ((r = store_prepare(s, "INSERT INTO stack_dumps (run_id, pid, "
	    "ppid, runtime, tool, command, ms, note, size, data) VALUES (?1, "
	    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &st, err, errlen)) < 0)
		goto out;
	sql_bind_int64(st, 1, run_id);
	sql_bind_int64(st, 2, d->pid);
	sql_bind_int64(st, 3, d->ppid);
	bind_str(st, 4, d->runtime);
	bind_str(st, 5, d->tool[0] != '\0' ? d->tool : NULL);
	bind_str(st, 6, cmd);
	sql_bind_int64(st, 7, d->ms);
	bind_str(st, 8, d->note);
	sql_bind_int64(st, 9, text != NULL ? (int64_t)len : 0);
	if (text == NULL)
		sql_bind_null(st, 10);
	else if (p.z != NULL)
		sql_bind_blob(st, 10, p.z, (int)p.zlen, SQL_STATIC);
	else
		sql_bind_blob(st, 10, p.data, (int)p.len, SQL_STATIC);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "storing a run's stacks");
out:
	sql_finalize(st);
	store_output_packed_free(&p);
	flaky_buf_free(&tb);
	flaky_buf_free(&cb);
	return r;
}

int
store_stacks_write(struct flaky_store *s, const struct flaky_run_record *rec,
    const struct flaky_results *res, char *err, size_t errlen)
{
	const struct flaky_stacks *k = rec->stacks;
	const struct flaky_hang *h;
	struct sql_stmt	*st = NULL;
	int64_t		 taken = 0;
	int		 r;

	(void)res;
	if (k == NULL)
		return 0;
	h = &k->hang;
	for (size_t i = 0; i < k->n; i++)
		taken += k->v[i].text != NULL;
	if ((r = store_prepare(s, "INSERT INTO run_stacks (run_id, test_id, "
	    "capture_ms, bound_ms, processes, taken, kind, func, file, line, "
	    "call, code, site, deadlock, frames, thread, note) VALUES (?1, "
	    "(SELECT id FROM tests WHERE target_id = ?2 AND name = ?3), ?4, "
	    "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
	    &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, rec->id);
	sql_bind_int64(st, 2, rec->target_id);
	bind_str(st, 3, k->test);
	sql_bind_int64(st, 4, k->ms);
	sql_bind_int64(st, 5, k->bound_ms);
	sql_bind_int64(st, 6, k->procs);
	sql_bind_int64(st, 7, taken);
	bind_str(st, 8, h->kind);
	bind_str(st, 9, h->func);
	bind_str(st, 10, h->file);
	if (h->line > 0)
		sql_bind_int64(st, 11, h->line);
	else
		sql_bind_null(st, 11);
	bind_str(st, 12, h->call);
	bind_str(st, 13, h->code);
	bind_str(st, 14, h->site);
	bind_str(st, 15, h->deadlock);
	bind_str(st, 16, h->frames);
	bind_str(st, 17, h->thread);
	bind_str(st, 18, k->note);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "storing where a run hung");
	sql_finalize(st);
	for (size_t i = 0; r == 0 && i < k->n; i++)
		r = write_dump(s, rec->id, &k->v[i], err, errlen);
	return r;
}

/* A copy of a text column into *ret; -ENOMEM. */
static int
col(struct sql_stmt *st, int i, char **ret)
{
	int	 oom = 0;

	*ret = store_col_dup(st, i, &oom);
	return oom ? -ENOMEM : 0;
}

int
flaky_store_run_stacks(struct flaky_store *s, int64_t run_id,
    struct flaky_stacks **ret, char *err, size_t errlen)
{
	struct flaky_stacks *k = NULL;
	struct sql_stmt	*st = NULL;
	size_t		 cap = 0;
	int		 r, rc, e = 0;

	*ret = NULL;
	if ((r = store_prepare(s, "SELECT capture_ms, bound_ms, processes, "
	    "kind, func, file, line, call, code, site, deadlock, frames, "
	    "thread, note, (SELECT name FROM tests WHERE id = test_id) FROM "
	    "run_stacks WHERE run_id = ?1", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, run_id);
	if ((rc = sql_step(st)) != SQL_ROW) {
		sql_finalize(st);
		return rc == SQL_DONE ? 0 : store_sql_error(s, err, errlen,
		    "reading a run's stacks");
	}
	if ((k = calloc(1, sizeof *k)) == NULL) {
		sql_finalize(st);
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	k->ms = sql_column_int64(st, 0);
	k->bound_ms = sql_column_int64(st, 1);
	k->procs = sql_column_int(st, 2);
	k->hang.line = sql_column_int(st, 6);
	e |= col(st, 3, &k->hang.kind) | col(st, 4, &k->hang.func) |
	    col(st, 5, &k->hang.file) | col(st, 7, &k->hang.call) |
	    col(st, 8, &k->hang.code) | col(st, 9, &k->hang.site) |
	    col(st, 10, &k->hang.deadlock) | col(st, 11, &k->hang.frames) |
	    col(st, 12, &k->hang.thread) | col(st, 13, &k->note) |
	    col(st, 14, &k->test_name);
	sql_finalize(st);
	st = NULL;
	if (e != 0)
		goto oom;
	if ((r = store_prepare(s, sql_is_pg(store_db(s)) ? "SELECT pid, ppid, "
	    "runtime, tool, command, ms, note, data FROM stack_dumps WHERE "
	    "run_id = ?1 ORDER BY id" : "SELECT pid, ppid, runtime, tool, "
	    "command, ms, note, sqlar_uncompress(data, size) FROM stack_dumps "
	    "WHERE run_id = ?1 ORDER BY id", &st, err, errlen)) < 0)
		goto fail;
	sql_bind_int64(st, 1, run_id);
	while ((rc = sql_step(st)) == SQL_ROW) {
		struct flaky_stack_dump *d;
		char	*rt = NULL, *tool = NULL;

		if (flaky_array_grow(&k->v, &cap, k->n + 1, sizeof *k->v) < 0)
			goto oom;
		d = &k->v[k->n++];
		memset(d, 0, sizeof *d);
		d->pid = sql_column_int(st, 0);
		d->ppid = sql_column_int(st, 1);
		d->ms = sql_column_int64(st, 5);
		e |= col(st, 2, &rt) | col(st, 3, &tool) | col(st, 4,
		    &d->command) | col(st, 6, &d->note);
		snprintf(d->runtime, sizeof d->runtime, "%s", rt ? rt : "");
		snprintf(d->tool, sizeof d->tool, "%s", tool ? tool : "");
		free(rt);
		free(tool);
		if (sql_column_type(st, 7) != SQL_NULL) {
			d->len = (size_t)sql_column_bytes(st, 7);
			if ((d->text = flaky_strndup(sql_column_blob(st, 7) ?
			    sql_column_blob(st, 7) : "", d->len)) == NULL)
				e = 1;
		}
		if (e != 0)
			goto oom;
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading a run's stacks");
		goto fail;
	}
	sql_finalize(st);
	*ret = k;
	return 0;
oom:
	r = flaky_error(err, errlen, ENOMEM, "out of memory");
fail:
	sql_finalize(st);
	flaky_stacks_free(k);
	return r;
}

/* One run's row as the query reads it. */
struct hang_row {
	int64_t		 run_id, capture_ms;
	char		*key;
};

/* Capture times, for their median. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sites most counted first, then the newest. */
static int
cmp_site(const void *a, const void *b)
{
	const struct flaky_hang_site *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (y->run_id > x->run_id) - (y->run_id < x->run_id);
}


int
flaky_store_test_hangs(struct flaky_store *s, int64_t test_id,
    const struct flaky_query *q, struct flaky_hangs *h, char *err,
    size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int64_t		*ms = NULL;
	char		**keys = NULL;
	size_t		 cap = 0, mcap = 0, kcap = 0, nms = 0, nkeys;
	int		 r, rc, e = 0;

	memset(h, 0, sizeof *h);
	if ((r = store_prepare(s, "SELECT h.run_id, h.capture_ms, h.site, "
	    "h.call, h.func, h.file, h.line, h.code, h.kind, h.deadlock, "
	    "h.frames FROM run_stacks h JOIN runs ru ON ru.id = h.run_id "
	    "WHERE h.test_id = ?1 AND ru.started_ms >= ?2 AND ru.started_ms "
	    "< ?3 AND (?4 <= 0 OR ru.id >= ?4) AND (?5 <= 0 OR ru.id <= ?5) "
	    "ORDER BY h.run_id DESC LIMIT 10000", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, q->since_ms);
	sql_bind_int64(st, 3, q->until_ms);
	sql_bind_int64(st, 4, q->first_run_id);
	sql_bind_int64(st, 5, q->last_run_id);
	while ((rc = sql_step(st)) == SQL_ROW) {
		const char *site = (const char *)sql_column_text(st, 2);
		const char *call = (const char *)sql_column_text(st, 3);
		const char *key;
		struct flaky_hang_site *x = NULL;

		h->runs++;
		if (flaky_array_grow(&ms, &mcap, nms + 1, sizeof *ms) < 0)
			goto oom;
		ms[nms++] = sql_column_int64(st, 1);
		if (h->newest_run == 0) {
			h->newest_run = sql_column_int64(st, 0);
			if (col(st, 10, &h->frames) < 0)
				goto oom;
		}
		/* by site; without one, by the call; newest first, so the
		 * first row of a place gives its line and code */
		key = site != NULL ? site : call != NULL ? call : "";
		for (size_t i = 0; i < h->n && x == NULL; i++)
			if ((site != NULL) == (h->v[i].func != NULL) &&
			    strcmp(keys[i], key) == 0)
				x = &h->v[i];
		if (x == NULL) {
			if (flaky_array_grow(&h->v, &cap, h->n + 1,
			    sizeof *h->v) < 0 || flaky_array_grow(&keys, &kcap,
			    h->n + 1, sizeof *keys) < 0 ||
			    (keys[h->n] = strdup(key)) == NULL)
				goto oom;
			x = &h->v[h->n++];
			memset(x, 0, sizeof *x);
			x->run_id = sql_column_int64(st, 0);
			x->line = sql_column_int(st, 6);
			e |= col(st, 3, &x->call) | col(st, 7, &x->code) |
			    col(st, 8, &x->kind) | col(st, 9, &x->deadlock);
			if (site != NULL)
				e |= col(st, 4, &x->func) | col(st, 5,
				    &x->file);
			if (e != 0)
				goto oom;
		}
		x->count++;
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading where a test hung");
		goto fail;
	}
	sql_finalize(st);
	nkeys = h->n;
	for (size_t i = 0; i < nkeys; i++)
		free(keys[i]);
	free(keys);
	if (h->n > 1)
		qsort(h->v, h->n, sizeof *h->v, cmp_site);
	if (nms > 0) {
		qsort(ms, nms, sizeof *ms, cmp_i64);
		h->capture_ms_median = nms % 2 ? ms[nms / 2] :
		    (ms[nms / 2 - 1] + ms[nms / 2]) / 2;
		h->capture_ms_max = ms[nms - 1];
	}
	free(ms);
	return 0;
oom:
	r = flaky_error(err, errlen, ENOMEM, "out of memory");
fail:
	sql_finalize(st);
	free(ms);
	/* a key is made with its site: one more when its site failed */
	for (size_t i = 0; keys != NULL && i < h->n; i++)
		free(keys[i]);
	free(keys);
	flaky_hangs_clear(h);
	return r;
}

void
flaky_hangs_clear(struct flaky_hangs *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].func);
		free(h->v[i].file);
		free(h->v[i].call);
		free(h->v[i].code);
		free(h->v[i].kind);
		free(h->v[i].deadlock);
	}
	free(h->v);
	free(h->frames);
	memset(h, 0, sizeof *h);
}
