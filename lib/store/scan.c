/* The static scan's findings in the database: a scan of a target replaces
 * its findings in one transaction; reads join them to tests. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "store_int.h"
#include "store/store.h"
#include "util/util.h"

/* The file's path relative to the target's directory when it lies below
 * it, else as given. */
static char *
relative_path(const char *file, const char *dirreal)
{
	char	 real[PATH_MAX];
	size_t	 n;

	if (dirreal != NULL && realpath(file, real) != NULL) {
		n = strlen(dirreal);
		if (strncmp(real, dirreal, n) == 0 && real[n] == '/')
			return strdup(real + n + 1);
	}
	return strdup(file);
}

/* "a/b/test_x.py", "A.B", "test_y" -> "a/b/test_x.py::A::B::test_y" and
 * "a.b.test_x.A.B.test_y". */
static int
test_ids(const char *rel, const char *classes, const char *test,
    struct flaky_buf *pid, struct flaky_buf *uid)
{
	size_t	 n = strlen(rel);

	flaky_buf_reset(pid);
	flaky_buf_reset(uid);
	flaky_buf_adds(pid, rel);
	if (n > 3 && strcmp(rel + n - 3, ".py") == 0)
		n -= 3;
	for (size_t i = 0; i < n; i++)
		flaky_buf_addc(uid, rel[i] == '/' ? '.' : rel[i]);
	if (classes != NULL && *classes != '\0') {
		flaky_buf_adds(pid, "::");
		for (const char *c = classes; *c; c++) {
			if (*c == '.')
				flaky_buf_adds(pid, "::");
			else
				flaky_buf_addc(pid, *c);
		}
		flaky_buf_printf(uid, ".%s", classes);
	}
	flaky_buf_printf(pid, "::%s", test);
	flaky_buf_printf(uid, ".%s", test);
	return pid->oom || uid->oom ? -ENOMEM : 0;
}

static void
bind_opt(struct sql_stmt *st, int i, const char *s)
{
	if (s == NULL || *s == '\0')
		sql_bind_null(st, i);
	else
		sql_bind_text(st, i, s, -1, SQL_TRANSIENT);
}

/* Store one file's findings. */
static int
store_file(struct flaky_store *s, struct sql_stmt *ins, int64_t target_id,
    int64_t now, const char *rel, const struct flaky_scan_result *res,
    struct flaky_scan_summary *sum, char *err, size_t errlen)
{
	struct flaky_buf pid, uid;
	int		 r = 0;

	flaky_buf_init(&pid);
	flaky_buf_init(&uid);
	for (size_t i = 0; i < res->nfindings; i++) {
		const struct flaky_finding *f = &res->findings[i];
		int	 has_test = f->test != NULL && *f->test != '\0';

		if (has_test && (r = test_ids(rel, f->classes, f->test, &pid,
		    &uid)) < 0)
			break;
		sql_reset(ins);
		sql_bind_int64(ins, 1, target_id);
		sql_bind_int64(ins, 2, now);
		sql_bind_text(ins, 3, rel, -1, SQL_TRANSIENT);
		sql_bind_int(ins, 4, f->line);
		sql_bind_text(ins, 5,
		    flaky_finding_category_name(f->category), -1,
		    SQL_STATIC);
		bind_opt(ins, 6, f->classes);
		bind_opt(ins, 7, f->function);
		bind_opt(ins, 8, f->test);
		bind_opt(ins, 9, f->tolerance);
		bind_opt(ins, 10, f->source);
		sql_bind_int(ins, 11, f->seeded != 0);
		bind_opt(ins, 12, has_test ? flaky_buf_cstr(&pid) : NULL);
		bind_opt(ins, 13, has_test ? flaky_buf_cstr(&uid) : NULL);
		if (sql_step(ins) != SQL_DONE) {
			r = store_sql_error(s, err, errlen, "storing findings");
			break;
		}
		sum->findings++;
		sum->unseeded += !f->seeded;
	}
	flaky_buf_free(&pid);
	flaky_buf_free(&uid);
	return r;
}

int
flaky_store_scan(struct flaky_store *s, int64_t target_id, const char *dir,
    char *const *paths, size_t npaths, flaky_scan_skip_cb skip_cb, void *arg,
    struct flaky_scan_summary *sum, char *err, size_t errlen)
{
	struct sql_stmt	*del = NULL, *ins = NULL;
	char		 dirreal[PATH_MAX], ferr[256];
	const char	*dr = NULL;
	int64_t		 now = flaky_now_ms();
	int		 r;

	memset(sum, 0, sizeof *sum);
	if (dir != NULL && realpath(dir, dirreal) != NULL)
		dr = dirreal;
	if ((r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if (sql_prepare_v2(store_db(s),
	    "DELETE FROM scan_findings WHERE target_id = ?", -1, &del,
	    NULL) != SQL_OK || sql_prepare_v2(store_db(s),
	    "INSERT INTO scan_findings (target_id, scanned_ms, path, line, "
	    "category, classes, function, test, tolerance, source, seeded, "
	    "pytest_id, unittest_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?)", -1, &ins, NULL) != SQL_OK) {
		r = store_sql_error(s, err, errlen, "storing findings");
		goto fail;
	}
	sql_bind_int64(del, 1, target_id);
	if (sql_step(del) != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "replacing findings");
		goto fail;
	}
	for (size_t i = 0; i < npaths; i++) {
		char	**files = NULL;
		size_t	 nfiles = 0;

		if (flaky_pyscan_paths(paths[i], &files, &nfiles, NULL, NULL,
		    ferr, sizeof ferr) < 0) {
			sum->skipped++;
			if (skip_cb != NULL)
				skip_cb(arg, paths[i], ferr);
			continue;
		}
		for (size_t k = 0; k < nfiles; k++) {
			struct flaky_scan_result *res = NULL;
			char	*rel;

			sum->files++;
			if (flaky_pyscan_file(files[k], &res, ferr,
			    sizeof ferr) < 0 || res->skipped) {
				sum->skipped++;
				if (skip_cb != NULL)
					skip_cb(arg, files[k], res != NULL ?
					    res->reason : ferr);
				flaky_scan_result_free(res);
				continue;
			}
			if ((rel = relative_path(files[k], dr)) == NULL)
				r = -ENOMEM;
			else
				r = store_file(s, ins, target_id, now, rel,
				    res, sum, err, errlen);
			free(rel);
			flaky_scan_result_free(res);
			if (r < 0) {
				flaky_pyscan_paths_free(files, nfiles);
				goto fail;
			}
		}
		flaky_pyscan_paths_free(files, nfiles);
	}
	sql_finalize(del);
	sql_finalize(ins);
	return flaky_store_commit(s, err, errlen);
fail:
	sql_finalize(del);
	sql_finalize(ins);
	flaky_store_rollback(s);
	return r;
}

int
flaky_store_target_dir(struct flaky_store *s, int64_t target_id,
    const char *fallback, char **ret, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	const unsigned char *d;
	int		 r = 0;

	*ret = NULL;
	if (sql_prepare_v2(store_db(s),
	    "UPDATE targets SET dir = coalesce(dir, ?2) WHERE id = ?1 "
	    "RETURNING dir", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading the target");
	sql_bind_int64(st, 1, target_id);
	sql_bind_text(st, 2, fallback, -1, SQL_STATIC);
	if (sql_step(st) == SQL_ROW &&
	    (d = sql_column_text(st, 0)) != NULL &&
	    (*ret = strdup((const char *)d)) == NULL)
		r = -ENOMEM;
	sql_finalize(st);
	if (r == 0 && *ret == NULL)
		r = store_sql_error(s, err, errlen, "reading the target");
	return r;
}

void
flaky_risks_free(struct flaky_risk *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].target);
		free(v[i].key);
		free(v[i].path);
		free(v[i].category);
		free(v[i].tolerance);
	}
	free(v);
}

static char *
col_dup(struct sql_stmt *st, int i)
{
	const unsigned char *t = sql_column_text(st, i);

	return t != NULL ? strdup((const char *)t) : NULL;
}

static int
risk_cmp(const void *a, const void *b)
{
	const struct flaky_risk *x = a, *y = b;
	int	 c = strcmp(x->target, y->target);

	if (c != 0)
		return c;
	if ((c = strcmp(x->key, y->key)) != 0)
		return c;
	if ((c = strcmp(x->path, y->path)) != 0)
		return c;
	return x->line - y->line;
}

int
flaky_store_risks(struct flaky_store *s, const char *target,
    struct flaky_risk **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	struct flaky_risk *v = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc;

	*ret = NULL;
	*ret_n = 0;
	/* An old database opened read-only has no such table: no findings. */
	if (sql_prepare_v2(store_db(s),
	    "SELECT tg.name, f.pytest_id, f.unittest_id, f.path, f.line, "
	    "f.category, f.tolerance, f.seeded FROM scan_findings f "
	    "JOIN targets tg ON tg.id = f.target_id "
	    "WHERE f.pytest_id IS NOT NULL AND (tg.name = ?1 OR ?1 IS NULL)",
	    -1, &st, NULL) != SQL_OK)
		return 0;
	if (target != NULL)
		sql_bind_text(st, 1, target, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		for (int k = 1; k <= 2; k++) {
			struct flaky_risk *r;

			if (n == cap) {
				size_t	 nc = cap ? cap * 2 : 64;
				void	*p = realloc(v, nc * sizeof *v);

				if (p == NULL)
					goto oom;
				v = p;
				cap = nc;
			}
			r = &v[n++];
			memset(r, 0, sizeof *r);
			r->target = col_dup(st, 0);
			r->key = col_dup(st, k);
			r->path = col_dup(st, 3);
			r->line = sql_column_int(st, 4);
			r->category = col_dup(st, 5);
			r->tolerance = col_dup(st, 6);
			r->seeded = sql_column_int(st, 7);
			if (r->target == NULL || r->key == NULL ||
			    r->path == NULL || r->category == NULL)
				goto oom;
		}
	}
	sql_finalize(st);
	if (rc != SQL_DONE) {
		flaky_risks_free(v, n);
		return store_sql_error(s, err, errlen, "reading findings");
	}
	if (n > 1)
		qsort(v, n, sizeof *v, risk_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	sql_finalize(st);
	flaky_risks_free(v, n);
	return -ENOMEM;
}

/* The first entry with (target, key) >= the one given. */
static size_t
lower_bound(const struct flaky_risk *v, size_t n, const char *target,
    const char *key, size_t keylen)
{
	size_t	 lo = 0, hi = n;

	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;
		int	 c = strcmp(v[mid].target, target);

		if (c == 0) {
			c = strncmp(v[mid].key, key, keylen);
			if (c == 0 && v[mid].key[keylen] != '\0')
				c = 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t
flaky_risks_find(const struct flaky_risk *v, size_t n, const char *target,
    const char *test, size_t *first)
{
	size_t	 len = strlen(test), i, k;
	const char *br;

	/* "path::test[param]" is found under "path::test". */
	if (len > 0 && test[len - 1] == ']' && (br = strchr(test, '[')) !=
	    NULL && strstr(test, "::") != NULL && br > strstr(test, "::"))
		len = (size_t)(br - test);
	i = lower_bound(v, n, target, test, len);
	for (k = i; k < n && strcmp(v[k].target, target) == 0 &&
	    strlen(v[k].key) == len && strncmp(v[k].key, test, len) == 0; k++)
		;
	*first = i;
	return k - i;
}
