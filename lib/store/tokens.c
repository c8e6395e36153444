/* Tokens of the HTTP server (issue 29, docs/api.md "Tokens"): each with a
 * scope, upload, read or write, made by flakyctl token create. The token
 * is shown once; the database keeps its SHA-256, so a copy of the database
 * gives no one a token. A server checks requests against the valid
 * tokens' hashes, which it reads again now and then (flaky_http). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

static const char *const scope_names[] = {
	[FLAKY_SCOPE_UPLOAD] = "upload",
	[FLAKY_SCOPE_READ] = "read",
	[FLAKY_SCOPE_WRITE] = "write",
};

/* "upload", "read", "write", or "?". */
const char *
flaky_token_scope_name(int scope)
{
	if (scope <= 0 || scope > FLAKY_SCOPE_WRITE || (scope & (scope - 1)))
		return "?";
	return scope_names[scope];
}

/* The scope a word names, or -1. */
int
flaky_token_scope_parse(const char *s)
{
	for (int i = FLAKY_SCOPE_UPLOAD; i <= FLAKY_SCOPE_WRITE; i <<= 1)
		if (s != NULL && strcmp(s, scope_names[i]) == 0)
			return i;
	return -1;
}

/* The hex SHA-256 of a token. */
void
flaky_token_hash(const char *token, size_t len, char *hash)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 n = 0;

	if (EVP_Digest(token, len, md, &n, EVP_sha256(), NULL) != 1)
		n = 0;
	for (unsigned i = 0; i < n && i < 32; i++)
		snprintf(hash + 2 * i, 3, "%02x", md[i]);
	hash[2 * (n < 32 ? n : 32)] = '\0';
}

/* 192 random bits as 32 characters of base64url after "flaky_". */
static int
token_make(char *buf)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789-_";
	unsigned char	 r[24];

	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -EIO;
	memcpy(buf, "flaky_", 6);
	for (int i = 0; i < 8; i++) {
		unsigned v = (unsigned)r[3 * i] << 16 |
		    (unsigned)r[3 * i + 1] << 8 | r[3 * i + 2];

		for (int k = 0; k < 4; k++)
			buf[6 + 4 * i + k] = b64[(v >> (18 - 6 * k)) & 63];
	}
	buf[FLAKY_TOKEN_LEN] = '\0';
	return 0;
}

/* A new token of that name and scope (store_ci.h). */
int
flaky_store_token_create(struct flaky_store *s, const char *name, int scope,
    int64_t now_ms, char **ret_token, int64_t *ret_id, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	char		 tok[FLAKY_TOKEN_LEN + 1], hash[FLAKY_TOKEN_HASH];
	char		 prefix[FLAKY_TOKEN_PREFIX + 1];
	int64_t		 n = 0;
	int		 r;

	*ret_token = NULL;
	if (flaky_token_scope_name(scope)[0] == '?')
		return flaky_error(err, errlen, EINVAL, "expected a scope of "
		    "upload, read or write");
	if ((r = store_scalar_text(s, "SELECT count(*) FROM tokens WHERE name "
	    "= ?1 AND revoked_ms IS NULL", name, 0, &n, err, errlen)) < 0)
		return r;
	if (n > 0)
		return flaky_error(err, errlen, EEXIST, "a token named '%s' "
		    "exists: revoke it first, or give another --name", name);
	if (token_make(tok) < 0)
		return flaky_error(err, errlen, EIO, "no random bytes: %s",
		    strerror(errno));
	flaky_token_hash(tok, FLAKY_TOKEN_LEN, hash);
	/* its first characters, to tell tokens apart in a list */
	memcpy(prefix, tok, sizeof prefix - 1);
	prefix[sizeof prefix - 1] = '\0';
	if ((r = store_prepare(s, "INSERT INTO tokens (name, scope, hash, "
	    "prefix, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_text(st, 1, name, -1, SQL_STATIC);
	sql_bind_text(st, 2, flaky_token_scope_name(scope), -1, SQL_STATIC);
	sql_bind_text(st, 3, hash, -1, SQL_STATIC);
	sql_bind_text(st, 4, prefix, -1, SQL_STATIC);
	sql_bind_int64(st, 5, now_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "adding a token");
	else if (ret_id != NULL)
		*ret_id = sql_last_insert_rowid(store_db(s));
	sql_finalize(st);
	if (r < 0)
		return r;
	if ((*ret_token = strdup(tok)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return 0;
}

/* The rows of a query over tokens (id, name or hash, scope, prefix,
 * created, revoked, used). */
static int
token_rows(struct flaky_store *s, const char *sql,
    struct flaky_token_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_token_row *v = NULL;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 r, rc;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, sql, &st, err, errlen)) < 0)
		return r;
	while ((rc = sql_step(st)) == SQL_ROW) {
		struct flaky_token_row *t;
		const char *name = (const char *)sql_column_text(st, 1);
		const char *prefix = (const char *)sql_column_text(st, 3);

		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0)
			goto oom;
		t = &v[n++];
		memset(t, 0, sizeof *t);
		t->id = sql_column_int64(st, 0);
		t->name = strdup(name ? name : "");
		t->scope = flaky_token_scope_parse(
		    (const char *)sql_column_text(st, 2));
		t->prefix = strdup(prefix ? prefix : "");
		t->created_ms = sql_column_int64(st, 4);
		t->revoked_ms = sql_column_int64(st, 5);
		t->last_used_ms = sql_column_int64(st, 6);
		if (t->name == NULL || t->prefix == NULL)
			goto oom;
	}
	sql_finalize(st);
	if (rc != SQL_DONE) {
		flaky_token_rows_free(v, n);
		return store_sql_error(s, err, errlen, "reading the tokens");
	}
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	sql_finalize(st);
	flaky_token_rows_free(v, n);
	return flaky_error(err, errlen, ENOMEM, "out of memory");
}

int
flaky_store_token_list(struct flaky_store *s, struct flaky_token_row **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	return token_rows(s, "SELECT id, name, scope, prefix, created_ms, "
	    "coalesce(revoked_ms, 0), coalesce(last_used_ms, 0) FROM tokens "
	    "ORDER BY id", ret, ret_n, err, errlen);
}

int
flaky_store_token_hashes(struct flaky_store *s, struct flaky_token_row **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	return token_rows(s, "SELECT id, hash, scope, prefix, created_ms, 0, "
	    "0 FROM tokens WHERE revoked_ms IS NULL ORDER BY id", ret, ret_n,
	    err, errlen);
}

/* Revoke by name, else by prefix (store_ci.h). */
int
flaky_store_token_revoke(struct flaky_store *s, const char *which,
    int64_t now_ms, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 changed = 0;
	int		 r;

	if ((r = store_prepare(s, "UPDATE tokens SET revoked_ms = ?2 WHERE "
	    "revoked_ms IS NULL AND (name = ?1 OR (prefix = substr(?1, 1, "
	    "length(prefix)) AND length(?1) >= 8 AND NOT EXISTS (SELECT 1 "
	    "FROM tokens WHERE name = ?1 AND revoked_ms IS NULL))) AND "
	    "(SELECT count(*) FROM tokens WHERE revoked_ms IS NULL AND (name "
	    "= ?1 OR prefix = substr(?1, 1, length(prefix)))) = 1", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_text(st, 1, which, -1, SQL_STATIC);
	sql_bind_int64(st, 2, now_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "revoking a token");
	else
		changed = sql_changes(store_db(s));
	sql_finalize(st);
	if (r < 0)
		return r;
	if (changed == 1)
		return 0;
	if ((r = store_scalar_text(s, "SELECT count(*) FROM tokens WHERE "
	    "revoked_ms IS NULL AND (name = ?1 OR prefix = substr(?1, 1, "
	    "length(prefix)))", which, 0, &changed, err, errlen)) < 0)
		return r;
	if (changed > 1)
		return flaky_error(err, errlen, EINVAL, "'%s' names %lld "
		    "tokens: give the name", which, (long long)changed);
	return flaky_error(err, errlen, ENOENT, "no valid token is named "
	    "'%s' or starts with it (flakyctl token list)", which);
}

int
flaky_store_token_used(struct flaky_store *s, int64_t token_id,
    int64_t now_ms, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "UPDATE tokens SET last_used_ms = ?2 WHERE "
	    "id = ?1", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, token_id);
	sql_bind_int64(st, 2, now_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "recording a token's use");
	sql_finalize(st);
	return r;
}

void
flaky_token_rows_free(struct flaky_token_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].name);
		free(v[i].prefix);
	}
	free(v);
}
