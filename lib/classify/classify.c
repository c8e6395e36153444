/* What a failure says, reduced to what stays the same between runs, and
 * which of the triage signatures (docs/triage.md) its evidence points at. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classify/classify.h"

static const char *const sig_names[] = {
	[FLAKY_SIG_NONE] = "NONE",
	[FLAKY_SIG_TIMEOUT] = "TIMEOUT",
	[FLAKY_SIG_RACE] = "RACE",
	[FLAKY_SIG_ORDER_DEPENDENT] = "ORDER_DEPENDENT",
	[FLAKY_SIG_INFRA] = "INFRA",
	[FLAKY_SIG_UNKNOWN] = "UNKNOWN",
	[FLAKY_SIG_SEED] = "SEED",
};

const char *
flaky_signature_name(int s)
{
	if (s > FLAKY_SIG_MAX || s < 0)
		return "UNKNOWN";
	return sig_names[s];
}

int
flaky_signature_from_name(const char *s)
{
	for (int i = 1; i <= FLAKY_SIG_MAX; i++)
		if (strcasecmp(s, sig_names[i]) == 0)
			return i;
	return -EINVAL;
}

static int
is_hex(int c)
{
	return isxdigit((unsigned char)c);
}

/* Length of a UUID at s (8-4-4-4-12 hex), or 0. */
static size_t
uuid_len(const char *s, size_t n)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	size_t	 i = 0;

	for (int g = 0; g < 5; g++) {
		for (int k = 0; k < groups[g]; k++, i++)
			if (i >= n || !is_hex(s[i]))
				return 0;
		if (g < 4) {
			if (i >= n || s[i] != '-')
				return 0;
			i++;
		}
	}
	return i;
}

static int
path_char(int c)
{
	return c != '\0' && !isspace((unsigned char)c) && c != '\'' &&
	    c != '"' && c != ')' && c != ']' && c != ',' && c != ':' &&
	    c != '>';
}

/* Length of the valid UTF-8 sequence at s, or 0 (the stored text must stay
 * valid UTF-8 whatever a test printed). */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t	 k;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t j = 1; j < k; j++)
		if ((s[j] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return k;
}

/* Append k bytes when they fit in the bound; -1 when they do not. */
static int
emit(struct flaky_buf *out, size_t start, const char *s, size_t k)
{
	if (out->len - start + k > FLAKY_NORMALIZED_MAX)
		return -1;
	flaky_buf_add(out, s, k);
	return 0;
}

int
flaky_normalize(const char *msg, size_t len, struct flaky_buf *out)
{
	size_t	 start = out->len, i = 0;
	int	 space = 0;

	if (len > FLAKY_CLASSIFY_INPUT_MAX)
		len = FLAKY_CLASSIFY_INPUT_MAX;
	while (i < len && out->len - start < FLAKY_NORMALIZED_MAX) {
		unsigned char c = (unsigned char)msg[i];
		size_t	 k;

		if (isspace(c) || c == '\0') {
			space = 1;
			i++;
			continue;
		}
		if (space && out->len > start && emit(out, start, " ", 1) < 0)
			break;
		space = 0;
		/* Temporary paths differ per run. */
		if (c == '/' && ((len - i >= 5 &&
		    memcmp(msg + i, "/tmp/", 5) == 0) || (len - i >= 13 &&
		    memcmp(msg + i, "/var/folders/", 13) == 0))) {
			if (emit(out, start, "<tmp>", 5) < 0)
				break;
			while (i < len && path_char(msg[i]))
				i++;
			continue;
		}
		if ((k = uuid_len(msg + i, len - i)) > 0 &&
		    (i == 0 || !isalnum((unsigned char)msg[i - 1]))) {
			if (emit(out, start, "<uuid>", 6) < 0)
				break;
			i += k;
			continue;
		}
		if (c == '0' && i + 2 < len && (msg[i + 1] == 'x' ||
		    msg[i + 1] == 'X') && is_hex(msg[i + 2])) {
			if (emit(out, start, "0x?", 3) < 0)
				break;
			for (i += 2; i < len && is_hex(msg[i]); i++)
				;
			continue;
		}
		if (isdigit(c) || (is_hex(c) && (i == 0 ||
		    !isalnum((unsigned char)msg[i - 1])))) {
			/* A run of digits, or a hex word with a digit in it
			 * (ids, hashes): numbers, ports, times all vary. */
			size_t	 j = i;
			int	 digit = 0, alpha = 0;

			while (j < len && (is_hex(msg[j]))) {
				if (isdigit((unsigned char)msg[j]))
					digit = 1;
				else
					alpha = 1;
				j++;
			}
			if (digit && (!alpha || j - i >= 6) &&
			    (j >= len || !isalpha((unsigned char)msg[j]) ||
			    !alpha)) {
				/* 1.5, 12:30:01, 2026-11-01: one token */
				while (j + 1 < len && (msg[j] == '.' ||
				    msg[j] == ':' || msg[j] == '-') &&
				    isdigit((unsigned char)msg[j + 1])) {
					j++;
					while (j < len &&
					    isdigit((unsigned char)msg[j]))
						j++;
				}
				if (emit(out, start, "N", 1) < 0)
					break;
				i = j;
				continue;
			}
			/* an ordinary word: copy it whole, or what fits */
			k = FLAKY_NORMALIZED_MAX - (out->len - start);
			if (j - i > k)
				j = i + k;
			flaky_buf_add(out, msg + i, j - i);
			i = j;
			continue;
		}
		/* Invalid UTF-8 becomes '?'; a character is never split. */
		k = utf8_len((const unsigned char *)msg + i, len - i);
		if (k == 0) {
			if (emit(out, start, "?", 1) < 0)
				break;
			i++;
			continue;
		}
		if (emit(out, start, msg + i, k) < 0)
			break;
		i += k;
	}
	/* no trailing blank where the bound cut a token */
	if (out->len > start && out->data[out->len - 1] == ' ')
		out->data[--out->len] = '\0';
	return out->oom ? -ENOMEM : 0;
}

int64_t
flaky_fingerprint(const char *s, size_t len)
{
	uint64_t h = flaky_hash64(s, len, FLAKY_HASH_SEED);

	/* A signed 64-bit value for SQLite; 0 is kept for "none". */
	if (h == 0)
		h = 1;
	return (int64_t)h;
}

struct pattern {
	const char	*text;
	int		 sig;
};

/* Checked in order: the first match wins. Connection errors come before
 * timeouts, so "ETIMEDOUT" on a socket reads as the network's fault. */
static const struct pattern builtin[] = {
	{ "ECONNREFUSED", FLAKY_SIG_INFRA },
	{ "ECONNRESET", FLAKY_SIG_INFRA },
	{ "ETIMEDOUT", FLAKY_SIG_INFRA },
	{ "EAI_AGAIN", FLAKY_SIG_INFRA },
	{ "ENOTFOUND", FLAKY_SIG_INFRA },
	{ "EHOSTUNREACH", FLAKY_SIG_INFRA },
	{ "ConnectionRefused", FLAKY_SIG_INFRA },
	{ "ConnectionReset", FLAKY_SIG_INFRA },
	{ "ConnectionAborted", FLAKY_SIG_INFRA },
	{ "Connection refused", FLAKY_SIG_INFRA },
	{ "Connection reset", FLAKY_SIG_INFRA },
	{ "connection refused", FLAKY_SIG_INFRA },
	{ "connection reset", FLAKY_SIG_INFRA },
	{ "Temporary failure in name resolution", FLAKY_SIG_INFRA },
	{ "Name or service not known", FLAKY_SIG_INFRA },
	{ "no such host", FLAKY_SIG_INFRA },
	{ "Network is unreachable", FLAKY_SIG_INFRA },
	{ "502 Bad Gateway", FLAKY_SIG_INFRA },
	{ "503 Service Unavailable", FLAKY_SIG_INFRA },
	{ "504 Gateway Time", FLAKY_SIG_INFRA },
	{ "status code 502", FLAKY_SIG_INFRA },
	{ "status code 503", FLAKY_SIG_INFRA },
	{ "status code 504", FLAKY_SIG_INFRA },
	{ "database is locked", FLAKY_SIG_INFRA },
	{ "No space left on device", FLAKY_SIG_INFRA },
	{ "Too many open files", FLAKY_SIG_INFRA },
	{ "BrokenPipeError", FLAKY_SIG_INFRA },
	{ "ECONNABORTED", FLAKY_SIG_INFRA },
	{ "EADDRINUSE", FLAKY_SIG_INFRA },
	{ "Address already in use", FLAKY_SIG_INFRA },
	{ "Connection aborted", FLAKY_SIG_INFRA },
	{ "RemoteDisconnected", FLAKY_SIG_INFRA },
	{ "ServerDisconnectedError", FLAKY_SIG_INFRA },
	{ "getaddrinfo", FLAKY_SIG_INFRA },
	{ "Service Unavailable", FLAKY_SIG_INFRA },
	{ "Bad Gateway", FLAKY_SIG_INFRA },
	{ "SQLITE_BUSY", FLAKY_SIG_INFRA },
	{ "Failed: Timeout", FLAKY_SIG_TIMEOUT },	/* pytest-timeout */
	{ "Exceeded timeout", FLAKY_SIG_TIMEOUT },	/* Jest */
	{ "TimeoutError", FLAKY_SIG_TIMEOUT },
	{ "test timed out after", FLAKY_SIG_TIMEOUT },	/* go test */
	{ "timed out", FLAKY_SIG_TIMEOUT },
	{ "Timeout", FLAKY_SIG_TIMEOUT },
	{ "deadline exceeded", FLAKY_SIG_TIMEOUT },
	{ "DeadlineExceeded", FLAKY_SIG_TIMEOUT },
	{ "None is not None", FLAKY_SIG_RACE },
	{ "UnboundLocalError", FLAKY_SIG_RACE },
	{ "Cannot read propert", FLAKY_SIG_RACE },	/* JS undefined */
	{ "of undefined", FLAKY_SIG_RACE },
	{ "WARNING: DATA RACE", FLAKY_SIG_RACE },	/* go -race */
	{ "concurrent map", FLAKY_SIG_RACE },
	{ "changed size during iteration", FLAKY_SIG_RACE },
	{ "ConcurrentModificationException", FLAKY_SIG_RACE },
	{ "deadlock", FLAKY_SIG_RACE },
	{ "'NoneType' object", FLAKY_SIG_RACE },	/* read before set */
	{ "nil pointer dereference", FLAKY_SIG_RACE },	/* go */
	{ "Cannot access '", FLAKY_SIG_RACE },	/* JS temporal dead zone */
};

#define NBUILTIN	FLAKY_ARRAY_SIZE(builtin)

/* The built-in patterns by their first two bytes, so a message is read
 * once instead of once per pattern (one memmem each was 60 passes). */
static struct {
	uint8_t		 n;
	uint8_t		 idx[NBUILTIN];
} by_first[256];
static uint8_t		 second_ok[256][256 / 8];
static size_t		 builtin_len[NBUILTIN];
static pthread_once_t	 builtin_once = PTHREAD_ONCE_INIT;

/* Fill the first-byte index of the built-in patterns. */
static void
builtin_index(void)
{
	for (size_t i = 0; i < NBUILTIN; i++) {
		const unsigned char *t =
		    (const unsigned char *)builtin[i].text;

		builtin_len[i] = strlen(builtin[i].text);
		by_first[t[0]].idx[by_first[t[0]].n++] = (uint8_t)i;
		second_ok[t[0]][t[1] / 8] |= (uint8_t)(1u << (t[1] % 8));
	}
}

/* The built-in signature of a message, or UNKNOWN. */
int
flaky_classify_message(const char *msg, size_t len)
{
	const unsigned char *m = (const unsigned char *)msg;
	size_t	 best = NBUILTIN;

	if (msg == NULL || len == 0)
		return FLAKY_SIG_UNKNOWN;
	if (len > FLAKY_CLASSIFY_INPUT_MAX)
		len = FLAKY_CLASSIFY_INPUT_MAX;
	/* once, also when threads classify at the same time */
	pthread_once(&builtin_once, builtin_index);
	/* The earliest pattern in the table wins, wherever it matches. */
	for (size_t i = 0; i + 1 < len && best > 0; i++) {
		unsigned c = m[i], d = m[i + 1];

		if (by_first[c].n == 0 ||
		    !(second_ok[c][d / 8] & (1u << (d % 8))))
			continue;
		for (size_t k = 0; k < by_first[c].n; k++) {
			size_t	 p = by_first[c].idx[k];

			if (p < best && builtin_len[p] <= len - i &&
			    memcmp(m + i, builtin[p].text, builtin_len[p]) == 0)
				best = p;
		}
	}
	return best < NBUILTIN ? builtin[best].sig : FLAKY_SIG_UNKNOWN;
}

int
flaky_classify_run(const struct flaky_classifier *c,
    const struct flaky_results *r, const struct flaky_run_evidence *ev,
    int *sigs)
{
	size_t	 failed = 0, last_failed = (size_t)-1;

	for (size_t i = 0; i < r->n; i++) {
		sigs[i] = FLAKY_SIG_NONE;
		if (!FLAKY_FAILED(r->v[i].outcome))
			continue;
		failed++;
		last_failed = i;
		sigs[i] = flaky_classifier_classify(c, r->v[i].message, r->v[i].message ?
		    strlen(r->v[i].message) : 0);
	}
	/* Most of a run failing at once is the environment, not the tests. */
	if (failed >= 5 && failed * 2 > r->n) {
		for (size_t i = 0; i < r->n; i++)
			if (sigs[i] != FLAKY_SIG_NONE)
				sigs[i] = FLAKY_SIG_INFRA;
		return 0;
	}
	/* Killed at its limit: the last test that failed was the one
	 * running. */
	if (ev != NULL && ev->timed_out && last_failed != (size_t)-1)
		sigs[last_failed] = FLAKY_SIG_TIMEOUT;
	return 0;
}

int
flaky_classify_results(const struct flaky_classifier *c,
    struct flaky_results *r, const struct flaky_run_evidence *ev)
{
	int	*sigs;

	if (r->n == 0)
		return 0;
	if ((sigs = calloc(r->n, sizeof *sigs)) == NULL)
		return -ENOMEM;
	flaky_classify_run(c, r, ev, sigs);
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].signature);
		r->v[i].signature = NULL;
		if (sigs[i] == FLAKY_SIG_NONE)
			continue;
		if ((r->v[i].signature = strdup(flaky_classifier_name(c,
		    sigs[i]))) == NULL) {
			free(sigs);
			return -ENOMEM;
		}
	}
	free(sigs);
	return 0;
}

/* User signatures: names, and patterns pointing at them. */
struct user_pattern {
	regex_t	 re;
	int	 sig;
};

struct flaky_classifier {
	struct user_pattern	 pat[FLAKY_CLASSIFIER_MAX];
	int			 npat;
	char			*names[FLAKY_CLASSIFIER_MAX];	/* code - MAX - 1 */
	int			 nnames;
};

/* An empty classifier. */
int
flaky_classifier_new(struct flaky_classifier **ret)
{
	if ((*ret = calloc(1, sizeof **ret)) == NULL)
		return -ENOMEM;
	return 0;
}

/* Free a classifier (unset as the default); NULL is fine. */
void
flaky_classifier_free(struct flaky_classifier *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->npat; i++)
		regfree(&c->pat[i].re);
	for (int i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c);
}

/* The code for a signature name, adding it when new. */
static int
classifier_code(struct flaky_classifier *c, const char *name, char *err,
    size_t errlen)
{
	size_t	 len = strlen(name);
	int	 b;

	if (len == 0 || len > FLAKY_SIG_NAME_MAX || strspn(name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
	    != len)
		return flaky_error(err, errlen, EINVAL, "signature name: "
		    "expected 1 to %d letters, digits, '_', '-' or '.'",
		    FLAKY_SIG_NAME_MAX);
	if ((b = flaky_signature_from_name(name)) > 0)
		return b;
	for (int i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i], name) == 0)
			return FLAKY_SIG_MAX + 1 + i;
	if (c->nnames == FLAKY_CLASSIFIER_MAX)
		return flaky_error(err, errlen, E2BIG, "at most %d signatures",
		    FLAKY_CLASSIFIER_MAX);
	if ((c->names[c->nnames] = strdup(name)) == NULL)
		return -ENOMEM;
	return FLAKY_SIG_MAX + 1 + c->nnames++;
}

/* One pattern of a signature; returns its code. */
int
flaky_classifier_add(struct flaky_classifier *c, const char *name,
    const char *regex, char *err, size_t errlen)
{
	char	 msg[256];
	int	 code, e;

	if (c->npat == FLAKY_CLASSIFIER_MAX)
		return flaky_error(err, errlen, E2BIG, "at most %d signature "
		    "patterns", FLAKY_CLASSIFIER_MAX);
	if ((e = regcomp(&c->pat[c->npat].re, regex,
	    REG_EXTENDED | REG_NEWLINE | REG_NOSUB)) != 0) {
		regerror(e, &c->pat[c->npat].re, msg, sizeof msg);
		regfree(&c->pat[c->npat].re);
		return flaky_error(err, errlen, EINVAL, "signature %.64s: "
		    "pattern '%.200s': %s", name, regex, msg);
	}
	if ((code = classifier_code(c, name, err, errlen)) < 0) {
		regfree(&c->pat[c->npat].re);
		return code;
	}
	c->pat[c->npat++].sig = code;
	return code;
}

/* User patterns in order, then the built-ins. */
int
flaky_classifier_classify(const struct flaky_classifier *c, const char *msg,
    size_t len)
{
	struct flaky_buf b;
	int		 sig = -1;

	if (c == NULL || c->npat == 0 || msg == NULL || len == 0)
		return flaky_classify_message(msg, len);
	if (len > FLAKY_CLASSIFY_INPUT_MAX)
		len = FLAKY_CLASSIFY_INPUT_MAX;
	/* regexec stops at NUL: a NUL in a message is a blank here. */
	flaky_buf_init(&b);
	flaky_buf_add(&b, msg, len);
	if (!b.oom) {
		for (size_t i = 0; i < b.len; i++)
			if (b.data[i] == '\0')
				b.data[i] = ' ';
		for (int i = 0; i < c->npat && sig < 0; i++)
			if (regexec(&c->pat[i].re, flaky_buf_cstr(&b), 0, NULL,
			    0) == 0)
				sig = c->pat[i].sig;
	}
	flaky_buf_free(&b);
	return sig >= 0 ? sig : flaky_classify_message(msg, len);
}

/* A code's name, user ones included. */
const char *
flaky_classifier_name(const struct flaky_classifier *c, int sig)
{
	if (sig >= 0 && sig <= FLAKY_SIG_MAX)
		return sig_names[sig];
	if (c != NULL && sig > FLAKY_SIG_MAX &&
	    sig - FLAKY_SIG_MAX - 1 < c->nnames)
		return c->names[sig - FLAKY_SIG_MAX - 1];
	return "UNKNOWN";
}

