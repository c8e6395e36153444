/* What a team writes about a test (issue 32): its ticket and its owner
 * (test_notes), quarantine and release, each action recorded with who
 * took it and when (actions); and the rollups per CI branch, added when
 * a run's branch is recorded (branch_rollups). schema/0018-web32.sql. */
#include "buildconf.h"

#include "json/json.h"
#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

static const char *const action_names[FLAKY_ACT_COUNT] = {
	"quarantine", "release", "ticket", "owner",
};

const char *
flaky_action_name(int k)
{
	return k >= 0 && k < FLAKY_ACT_COUNT ? action_names[k] : "unknown";
}

int
flaky_action_parse(const char *s)
{
	for (int k = 0; s != NULL && k < FLAKY_ACT_COUNT; k++)
		if (strcmp(s, action_names[k]) == 0)
			return k;
	return -1;
}

/* Is s printable UTF-8 of 1 to max bytes (no control characters)? */
static int
text_check(const char *what, const char *s, size_t max, char *err,
    size_t errlen)
{
	size_t	 n = strlen(s), i = 0, k;

	if (n == 0 || n > max)
		return flaky_error(err, errlen, EINVAL, "%s: expected 1 to %zu "
		    "bytes, got %zu", what, max, n);
	while (i < n) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return flaky_error(err, errlen, EINVAL, "%s: byte %zu is "
			    "a control character: expected printable text",
			    what, i + 1);
		if ((k = flaky_utf8_len((const unsigned char *)s + i,
		    n - i)) == 0)
			return flaky_error(err, errlen, EINVAL, "%s: byte %zu: "
			    "expected UTF-8", what, i + 1);
		i += k;
	}
	return 0;
}

/* A ticket is a link the pages make clickable: http or https only (no
 * javascript: or data:), no spaces or quotes. */
static int
url_check(const char *s, char *err, size_t errlen)
{
	int	 r;

	if ((r = text_check("ticket", s, FLAKY_ACTION_URL_MAX, err,
	    errlen)) < 0)
		return r;
	if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
		return flaky_error(err, errlen, EINVAL, "ticket: expected an "
		    "http:// or https:// URL, got '%.64s'", s);
	if (strpbrk(s, " \"'<>\\`") != NULL)
		return flaky_error(err, errlen, EINVAL, "ticket: expected a URL "
		    "without spaces, quotes, '<', '>', '\\' or '`'");
	return 0;
}

int
flaky_action_check(int kind, const char *v, char *err, size_t errlen)
{
	int	 empty = v == NULL || *v == '\0';

	switch (kind) {
	case FLAKY_ACT_QUARANTINE:
		if (empty)
			return flaky_error(err, errlen, EINVAL, "reason: "
			    "expected why the test is quarantined");
		return text_check("reason", v, FLAKY_ACTION_TEXT_MAX, err,
		    errlen);
	case FLAKY_ACT_RELEASE:
		return 0;
	case FLAKY_ACT_TICKET:
		return empty ? 0 : url_check(v, err, errlen);
	case FLAKY_ACT_OWNER:
		return empty ? 0 : text_check("owner", v,
		    FLAKY_ACTION_NAME_MAX, err, errlen);
	}
	return flaky_error(err, errlen, EINVAL, "expected an action: "
	    "quarantine, release, ticket or owner");
}

/* Set a column of the test's note (ticket or owner; NULL clears). */
static int
note_set(struct flaky_store *s, int64_t test_id, const char *col,
    const char *v, int64_t now, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	char		 sql[256];
	int		 r;

	snprintf(sql, sizeof sql, "INSERT INTO test_notes (test_id, %s, "
	    "updated_ms) VALUES (?1, ?2, ?3) ON CONFLICT (test_id) DO UPDATE "
	    "SET %s = excluded.%s, updated_ms = excluded.updated_ms", col, col,
	    col);
	if ((r = store_prepare(s, sql, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	if (v != NULL && *v != '\0')
		sql_bind_text(st, 2, v, -1, SQL_STATIC);
	sql_bind_int64(st, 3, now);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "writing a test's note");
	sql_finalize(st);
	return r;
}

/* The action's row. */
static int
action_log(struct flaky_store *s, int64_t test_id, int kind, const char *v,
    const char *who, const char *via, int64_t now, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "INSERT INTO actions (test_id, action, "
	    "value, who, via, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_text(st, 2, flaky_action_name(kind), -1, SQL_STATIC);
	if (v != NULL && *v != '\0')
		sql_bind_text(st, 3, v, -1, SQL_STATIC);
	sql_bind_text(st, 4, who, -1, SQL_STATIC);
	sql_bind_text(st, 5, via, -1, SQL_STATIC);
	sql_bind_int64(st, 6, now);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "recording an action");
	sql_finalize(st);
	return r;
}

/* The action itself, in the open transaction. */
static int
act(struct flaky_store *s, int64_t id, int kind, const char *v,
    const char *ticket, const char *who, const char *via, int64_t now,
    char *err, size_t errlen)
{
	int	 r = 0;

	switch (kind) {
	case FLAKY_ACT_QUARANTINE:
		/* its ticket is linked as the test's, a second action */
		if ((r = flaky_store_quarantine_add(s, id, v, ticket, now, err,
		    errlen)) == 0 && (r = action_log(s, id, kind, v, who, via,
		    now, err, errlen)) == 0 && ticket != NULL &&
		    *ticket != '\0' && (r = note_set(s, id, "ticket", ticket,
		    now, err, errlen)) == 0)
			r = action_log(s, id, FLAKY_ACT_TICKET, ticket, who,
			    via, now, err, errlen);
		return r;
	case FLAKY_ACT_RELEASE:
		r = flaky_store_quarantine_remove(s, id, err, errlen);
		break;
	case FLAKY_ACT_TICKET:
		r = note_set(s, id, "ticket", v, now, err, errlen);
		break;
	case FLAKY_ACT_OWNER:
		r = note_set(s, id, "owner", v, now, err, errlen);
		break;
	}
	if (r == 0)
		r = action_log(s, id, kind, v, who, via, now, err, errlen);
	return r;
}

int
flaky_store_act(struct flaky_store *s, int64_t test_id, int kind,
    const char *value, const char *ticket, const char *who, const char *via,
    int64_t now_ms, char *err, size_t errlen)
{
	int64_t	 found;
	int	 r, own = !store_in_tx(s);

	if ((r = flaky_action_check(kind, value, err, errlen)) < 0 ||
	    (kind == FLAKY_ACT_QUARANTINE && ticket != NULL &&
	    (r = flaky_action_check(FLAKY_ACT_TICKET, ticket, err,
	    errlen)) < 0) || (r = text_check("who", who,
	    FLAKY_ACTION_NAME_MAX, err, errlen)) < 0)
		return r;
	if (strcmp(via, "cli") != 0 && strcmp(via, "http") != 0)
		return flaky_error(err, errlen, EINVAL, "via: expected cli or "
		    "http");
	if (own && (r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if ((r = store_scalar(s, "SELECT count(*) FROM tests WHERE id = ?1",
	    test_id, 0, &found, err, errlen)) == 0 && found == 0)
		r = flaky_error(err, errlen, ENOENT, "no test with id %lld",
		    (long long)test_id);
	if (r == 0)
		r = act(s, test_id, kind, value, ticket, who, via, now_ms, err,
		    errlen);
	if (own) {
		if (r == 0)
			r = flaky_store_commit(s, err, errlen);
		else
			flaky_store_rollback(s);
	}
	return r;
}

void
flaky_actions_free(struct flaky_action *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].value);
		free(v[i].who);
		free(v[i].via);
		free(v[i].target);
		free(v[i].test);
	}
	free(v);
}

int
store_rows(struct flaky_store *s, struct sql_stmt *st, size_t sz,
    void (*fill)(struct sql_stmt *, void *, int *), const char *what,
    void *retp, size_t *ret_n, char *err, size_t errlen)
{
	char	*v = NULL;
	size_t	 n = 0, cap = 0;
	int	 rc = SQL_DONE, oom = 0;

	while (!oom && (rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n + 1, sz) < 0) {
			oom = 1;
			break;
		}
		memset(v + n * sz, 0, sz);
		fill(st, v + n * sz, &oom);
		n++;
	}
	sql_finalize(st);
	memcpy(retp, &v, sizeof v);
	*ret_n = n;
	if (oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if (rc != SQL_DONE)
		return store_sql_error(s, err, errlen, what);
	return 0;
}

/* An action of a row of flaky_store_actions' statement. */
static void
action_fill(struct sql_stmt *st, void *p, int *oom)
{
	struct flaky_action *a = p;

	a->id = sql_column_int64(st, 0);
	a->test_id = sql_column_int64(st, 1);
	a->kind = flaky_action_parse((const char *)sql_column_text(st, 2));
	a->value = store_col_dup(st, 3, oom);
	a->who = store_col_dup(st, 4, oom);
	a->via = store_col_dup(st, 5, oom);
	a->at_ms = sql_column_int64(st, 6);
	a->target = store_col_dup(st, 7, oom);
	a->test = store_col_dup(st, 8, oom);
}

int
flaky_store_actions(struct flaky_store *s, int64_t test_id, size_t max,
    struct flaky_action **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT a.id, a.test_id, a.action, a.value, "
	    "a.who, a.via, a.at_ms, tg.name, t.name FROM actions a JOIN tests t "
	    "ON t.id = a.test_id JOIN targets tg ON tg.id = t.target_id WHERE "
	    "?1 = 0 OR a.test_id = ?1 ORDER BY a.at_ms DESC, a.id DESC "
	    "LIMIT ?2", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, (int64_t)max);
	if ((r = store_rows(s, st, sizeof **ret, action_fill, "reading "
	    "actions", ret, ret_n, err, errlen)) < 0) {
		flaky_actions_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

int
flaky_store_token_name(struct flaky_store *s, int64_t id, int scope,
    char **ret, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc, oom = 0;

	*ret = NULL;
	if ((r = store_prepare(s, "SELECT name FROM tokens WHERE id = ?1 AND "
	    "revoked_ms IS NULL AND scope = ?2", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, id);
	sql_bind_text(st, 2, flaky_token_scope_name(scope), -1, SQL_STATIC);
	if ((rc = sql_step(st)) == SQL_ROW)
		*ret = store_col_dup(st, 0, &oom);
	else if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading a token");
	sql_finalize(st);
	if (oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return r < 0 ? r : *ret != NULL;
}

void
flaky_note_clear(struct flaky_note *n)
{
	free(n->ticket);
	free(n->owner);
	memset(n, 0, sizeof *n);
}

void
flaky_notes_free(struct flaky_note *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		flaky_note_clear(&v[i]);
	free(v);
}

/* A note of a row of notes_read's statement. */
static void
note_fill(struct sql_stmt *st, void *p, int *oom)
{
	struct flaky_note *x = p;

	x->test_id = sql_column_int64(st, 0);
	x->ticket = store_col_dup(st, 1, oom);
	x->owner = store_col_dup(st, 2, oom);
	x->updated_ms = sql_column_int64(st, 3);
}

/* Notes of one test (test_id > 0) or all, by test id. */
static int
notes_read(struct flaky_store *s, int64_t test_id, struct flaky_note **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT test_id, ticket, owner, updated_ms "
	    "FROM test_notes WHERE (?1 = 0 OR test_id = ?1) AND (ticket IS "
	    "NOT NULL OR owner IS NOT NULL) ORDER BY test_id", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	if ((r = store_rows(s, st, sizeof **ret, note_fill, "reading notes",
	    ret, ret_n, err, errlen)) < 0) {
		flaky_notes_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

int
flaky_store_notes(struct flaky_store *s, struct flaky_note **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	return notes_read(s, 0, ret, ret_n, err, errlen);
}

int
flaky_store_note(struct flaky_store *s, int64_t test_id,
    struct flaky_note *ret, char *err, size_t errlen)
{
	struct flaky_note *v;
	size_t	 n;
	int	 r;

	memset(ret, 0, sizeof *ret);
	if ((r = notes_read(s, test_id, &v, &n, err, errlen)) < 0)
		return r;
	if (n == 0) {
		free(v);
		return 0;
	}
	*ret = v[0];
	free(v);
	return 1;
}

const struct flaky_note *
flaky_note_find(const struct flaky_note *v, size_t n, int64_t test_id)
{
	size_t	 lo = 0, hi = n;

	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;

		if (v[mid].test_id == test_id)
			return &v[mid];
		if (v[mid].test_id < test_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A finished run's results under the branch of its run_ci row, if it
 * has one: for an upload whose CI row was written before its results
 * (lib/ingest/ingest.c writes it first, when the run is still running
 * and store_branch_rollup adds nothing). */
int
store_branch_rollup_run(struct flaky_store *s, int64_t run_id, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	char		*branch = NULL;
	int		 r, oom = 0;

	if ((r = store_prepare(s, "SELECT branch FROM run_ci WHERE run_id = "
	    "?1 AND branch IS NOT NULL", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, run_id);
	if (sql_step(st) == SQL_ROW)
		branch = store_col_dup(st, 0, &oom);
	sql_finalize(st);
	if (oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	r = store_branch_rollup(s, run_id, branch, err, errlen);
	free(branch);
	return r;
}

/* A counted run's results under its branch, once: the caller writes its
 * run_ci row for the first time with a branch. */
int
store_branch_rollup(struct flaky_store *s, int64_t run_id, const char *branch,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if (branch == NULL || *branch == '\0')
		return 0;
	if ((r = store_prepare(s, "INSERT INTO branch_rollups (day, test_id, "
	    "branch, runs, failures) SELECT ru.started_ms / 86400000, "
	    "r.test_id, ?2, sum(CASE WHEN r.outcome IN (0, 1, 2, 5) THEN 1 "
	    "ELSE 0 END), sum(CASE WHEN r.outcome IN (1, 2) THEN 1 ELSE 0 END) "
	    "FROM runs ru JOIN results r ON r.run_id = ru.id WHERE ru.id = ?1 "
	    "AND ru.kind <> 'alone' AND ru.incomplete IS NULL AND ru.status "
	    "<> 'running' AND r.outcome IN (0, 1, 2, 5) "
	    "GROUP BY ru.started_ms / 86400000, r.test_id "
	    "ON CONFLICT (day, test_id, branch) DO UPDATE SET runs = "
	    "branch_rollups.runs + excluded.runs, failures = "
	    "branch_rollups.failures + excluded.failures", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, run_id);
	sql_bind_text(st, 2, branch, -1, SQL_STATIC);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "adding a run to its "
		    "branch's rollups");
	sql_finalize(st);
	return r;
}
