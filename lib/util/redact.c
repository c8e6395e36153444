/* Redaction of secrets before storage: built-in rules written as scanners
 * (fast on a megabyte of output, no backtracking), plus user regexes. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

#define USER_MAX	32

struct flaky_redactor {
	regex_t	 re[USER_MAX];
	int	 n;
};

/* Keys whose value is a secret: "password=...", "token: ...", JSON too. */
static const char *const secret_keys[] = {
	"password", "passwd", "secret", "token", "api_key", "apikey",
	"api-key", "access_key", "private_key", "client_secret",
	"authorization", "auth_token", "credentials",
};

/* Prefixes of well-known token formats, and the least length after it. */
static const struct { const char *prefix; size_t min; } token_prefixes[] = {
	{ "AKIA", 16 }, { "ASIA", 16 }, { "ghp_", 30 }, { "gho_", 30 },
	{ "ghs_", 30 }, { "ghu_", 30 }, { "github_pat_", 30 },
	{ "glpat-", 20 }, { "xoxb-", 10 }, { "xoxp-", 10 }, { "sk-", 20 },
};

/* The bytes a rule can start at: a PEM block ('-'), URL credentials (':'),
 * a token prefix's first letter, a key's first letter in either case. The
 * rest of a text is passed over at once: outputs are mostly such bytes, and
 * all of each is scanned. Keep in step with the two tables above (the unit
 * test tries every key and prefix). */
static const unsigned char rule_start[256] = {
	['-'] = 1, [':'] = 1,
	['A'] = 1, ['g'] = 1, ['x'] = 1, ['s'] = 1,
	['a'] = 1, ['c'] = 1, ['p'] = 1, ['t'] = 1,
	['C'] = 1, ['P'] = 1, ['S'] = 1, ['T'] = 1,
};

/* Could a secret key start with these two letters (lower case)? Most
 * words cannot: the key loop then does not run. In step with secret_keys
 * (the unit test tries every key). */
static int
key_may_start(int a, int b)
{
	switch (a) {
	case 'a':
		return b == 'p' || b == 'c' || b == 'u';
	case 'c':
		return b == 'l' || b == 'r';
	case 'p':
		return b == 'a' || b == 'r';
	case 's':
		return b == 'e';
	case 't':
		return b == 'o';
	}
	return 0;
}

int
flaky_redactor_new(struct flaky_redactor **ret)
{
	if ((*ret = calloc(1, sizeof **ret)) == NULL)
		return -ENOMEM;
	return 0;
}

void
flaky_redactor_free(struct flaky_redactor *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < r->n; i++)
		regfree(&r->re[i]);
	free(r);
}

int
flaky_redactor_add(struct flaky_redactor *r, const char *regex, char *err,
    size_t errlen)
{
	char	 msg[256];
	int	 e;

	if (r->n == USER_MAX)
		return flaky_error(err, errlen, E2BIG,
		    "at most %d redaction patterns", USER_MAX);
	if ((e = regcomp(&r->re[r->n], regex, REG_EXTENDED)) != 0) {
		regerror(e, &r->re[r->n], msg, sizeof msg);
		return flaky_error(err, errlen, EINVAL,
		    "redaction pattern '%s': %s", regex, msg);
	}
	r->n++;
	return 0;
}

static int
token_char(int c)
{
	return isalnum(c) || c == '_' || c == '-';
}

/* Length of the secret value after a key at s (past ': ', '=', quotes). */
static size_t
value_after_key(const char *s, size_t n, int header, size_t *skip)
{
	size_t	 i = 0, v;
	char	 quote = 0;

	/* "password": "x", password = x, password:x */
	if (i < n && (s[i] == '"' || s[i] == '\''))
		i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i >= n || (s[i] != '=' && s[i] != ':'))
		return 0;
	i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '"' || s[i] == '\''))
		quote = s[i++];
	/* "Authorization: Bearer xyz": keep the scheme word. */
	if (n - i > 7 && (strncasecmp(s + i, "Bearer ", 7) == 0 ||
	    strncasecmp(s + i, "Basic ", 6) == 0))
		i += s[i + 1] == 'e' || s[i + 1] == 'E' ? 7 : 6;
	else if (header && !quote) {
		/* any scheme ("Token abc", "Digest username=..."): the
		 * credentials are the rest of the line */
		size_t	 w = i;

		while (w < n && isalpha((unsigned char)s[w]))
			w++;
		if (w > i && w + 1 < n && s[w] == ' ' &&
		    !isspace((unsigned char)s[w + 1]))
			i = w + 1;
	}
	v = i;
	/* NUL ends a value too: it separates strings (environ dumps). */
	while (i < n && s[i] != '\n' && s[i] != '\r' && s[i] != '\0' &&
	    (quote ? s[i] != quote : header ||
	    (!isspace((unsigned char)s[i]) &&
	    s[i] != ',' && s[i] != ';' && s[i] != '&' && s[i] != '}' &&
	    s[i] != ')'))) {
		/* "a\"b" in JSON: an escaped quote does not end the value
		 * (and "a\\" does) */
		if (quote && s[i] == '\\' && i + 1 < n && s[i + 1] != '\n' &&
		    s[i + 1] != '\r' && s[i + 1] != '\0')
			i++;
		i++;
	}
	if (i == v)
		return 0;
	*skip = v;
	return i - v;
}

/* The built-in rules over s; appends to out. */
static int
redact_builtin(const char *s, size_t n, struct flaky_buf *out)
{
	size_t	 i = 0, copied = 0;
	int	 count = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t	 skip, len, k;

		if (!rule_start[c]) {
			i++;
			continue;
		}

		/* PEM private keys: the whole block. */
		if (c == '-' && n - i > 11 && memcmp(s + i, "-----BEGIN ", 11) ==
		    0) {
			const char *eol = memchr(s + i, '\n', n - i);
			const char *key = memmem(s + i, eol ? (size_t)(eol -
			    (s + i)) : n - i, "PRIVATE KEY-----", 16);
			const char *end;

			if (key != NULL) {
				end = memmem(key + 16, n - (size_t)(key + 16 - s),
				    "-----END ", 9);
				if (end != NULL) {
					const char *e2 = memmem(end, n -
					    (size_t)(end - s), "KEY-----", 8);

					end = e2 ? e2 + 8 : s + n;
				} else
					end = s + n;
				flaky_buf_add(out, s + copied, i - copied);
				flaky_buf_adds(out, FLAKY_REDACTED);
				i = copied = (size_t)(end - s);
				count++;
				continue;
			}
		}
		/* user:password@ in URLs */
		if (c == ':' && n - i > 3 && s[i + 1] == '/' && s[i + 2] == '/') {
			size_t	 j = i + 3, colon = 0;

			while (j < n && j - i < 256 && s[j] != '@' &&
			    s[j] != '/' && !isspace((unsigned char)s[j])) {
				if (s[j] == ':' && colon == 0)
					colon = j;
				j++;
			}
			if (j < n && s[j] == '@' && colon != 0 && colon + 1 < j) {
				flaky_buf_add(out, s + copied, colon + 1 - copied);
				flaky_buf_adds(out, FLAKY_REDACTED);
				i = copied = j;
				count++;
				continue;
			}
		}
		/* Token formats, at a word start. */
		if ((i == 0 || !token_char((unsigned char)s[i - 1])) &&
		    isalpha(c)) {
			for (k = 0; k < FLAKY_ARRAY_SIZE(token_prefixes); k++) {
				const char *pfx = token_prefixes[k].prefix;
				size_t	 pl, j;

				/* the first letter before anything: this runs
				 * at every word of every output */
				if (pfx[0] != c)
					continue;
				pl = strlen(pfx);
				if (n - i < pl || memcmp(s + i, pfx, pl) != 0)
					continue;
				for (j = i + pl; j < n &&
				    token_char((unsigned char)s[j]); j++)
					;
				if (j - i - pl < token_prefixes[k].min)
					continue;
				flaky_buf_add(out, s + copied, i - copied);
				flaky_buf_adds(out, FLAKY_REDACTED);
				i = copied = j;
				count++;
				break;
			}
			if (k < FLAKY_ARRAY_SIZE(token_prefixes))
				continue;
		}
		/* key = value, also at the end of a word (PGPASSWORD=) */
		if (i + 1 < n && key_may_start(c | 0x20,
		    (unsigned char)s[i + 1] | 0x20)) {
			for (k = 0; k < FLAKY_ARRAY_SIZE(secret_keys); k++) {
				const char *key = secret_keys[k];
				size_t	 kl, j;

				/* two letters first: this runs at most bytes */
				if ((c | 0x20) != key[0] || i + 1 >= n ||
				    (s[i + 1] | 0x20) != key[1])
					continue;
				kl = strlen(key);
				if (n - i < kl || strncasecmp(s + i, key, kl) != 0)
					continue;
				/* DB_PASSWORD, secret_key, tokens: a key may
				 * carry a suffix; over-redacting is safe. */
				j = i + kl;
				while (j < n && (isalnum((unsigned char)s[j]) ||
				    s[j] == '_') && j - i < kl + 20)
					j++;
				if ((len = value_after_key(s + j, n - j,
				    strcmp(key, "authorization") == 0,
				    &skip)) == 0)
					continue;
				flaky_buf_add(out, s + copied, j + skip - copied);
				flaky_buf_adds(out, FLAKY_REDACTED);
				i = copied = j + skip + len;
				count++;
				break;
			}
			if (k < FLAKY_ARRAY_SIZE(secret_keys))
				continue;
		}
		i++;
	}
	flaky_buf_add(out, s + copied, n - copied);
	return out->oom ? -ENOMEM : count;
}

/* One user regex over a NUL-terminated text. */
static int
redact_regex(const regex_t *re, const char *s, struct flaky_buf *out)
{
	regmatch_t	 m;
	const char	*p = s;
	int		 count = 0, flags = 0;

	while (*p != '\0' && regexec(re, p, 1, &m, flags) == 0) {
		if (m.rm_eo == m.rm_so) {
			/* an empty match: step one byte, never past the end
			 * ("$" matches there) */
			if (p[m.rm_so] == '\0')
				break;
			flaky_buf_add(out, p, (size_t)m.rm_so + 1);
			p += m.rm_so + 1;
			flags = REG_NOTBOL;
			continue;
		}
		flaky_buf_add(out, p, (size_t)m.rm_so);
		flaky_buf_adds(out, FLAKY_REDACTED);
		p += m.rm_eo;
		flags = REG_NOTBOL;
		count++;
	}
	flaky_buf_adds(out, p);
	return out->oom ? -ENOMEM : count;
}

int
flaky_redact(const struct flaky_redactor *r, const char *s, size_t len,
    struct flaky_buf *out)
{
	struct flaky_buf a, b;
	int		 count, c;

	if (r == NULL || r->n == 0)
		return redact_builtin(s, len, out);
	flaky_buf_init(&a);
	flaky_buf_init(&b);
	if ((count = redact_builtin(s, len, &a)) < 0)
		goto out;
	/* regexec stops at NUL: each NUL-separated piece is matched on its
	 * own (one NUL must not hide the rest of an output from the rules). */
	for (int i = 0; i < r->n; i++) {
		const char	*p = flaky_buf_cstr(&a), *end = p + a.len;

		flaky_buf_reset(&b);
		for (;;) {
			if ((c = redact_regex(&r->re[i], p, &b)) < 0) {
				count = c;
				goto out;
			}
			count += c;
			p += strlen(p);
			if (p >= end)
				break;
			flaky_buf_addc(&b, '\0');
			p++;
		}
		struct flaky_buf t = a;
		a = b;
		b = t;
	}
	flaky_buf_add(out, a.data, a.len);
	if (out->oom)
		count = -ENOMEM;
out:
	flaky_buf_free(&a);
	flaky_buf_free(&b);
	return count;
}
