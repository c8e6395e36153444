/* redact: the built-in secret scanners, user regexes, and ordinary text
 * left alone. */
#include "buildconf.h"

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Redact s with r and compare with want; returns the count. */
static int
check(const struct flaky_redactor *r, const char *s, const char *want)
{
	struct flaky_buf b;
	int		 n;

	flaky_buf_init(&b);
	n = flaky_redact(r, s, strlen(s), &b);
	ck_assert_int_ge(n, 0);
	ck_assert_msg(strcmp(flaky_buf_cstr(&b), want) == 0,
	    "'%s' -> '%s', expected '%s'", s, flaky_buf_cstr(&b), want);
	ck_assert_msg(b.len == strlen(want), "'%s': %zu bytes out", s, b.len);
	flaky_buf_free(&b);
	return n;
}

START_TEST(builtin)
{
	static const struct { const char *in, *out; int n; } v[] = {
		{ "login password=hunter2 ok", "login password=[REDACTED] ok",
		  1 },
		{ "DB_PASSWORD = 's3cr3t x'", "DB_PASSWORD = '[REDACTED]'", 1 },
		{ "{\"token\": \"abc.def-123\", \"user\": \"bob\"}",
		  "{\"token\": \"[REDACTED]\", \"user\": \"bob\"}", 1 },
		{ "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc",
		  "Authorization: Bearer [REDACTED]", 1 },
		{ "Authorization: Token 9944b09199c62bcf9418ad846dd0e4bb\n",
		  "Authorization: Token [REDACTED]\n", 1 },
		{ "authorization: Digest username=\"u\", response=\"6629\"",
		  "authorization: Digest [REDACTED]", 1 },
		{ "{\"Authorization\": \"Token abc\"}",
		  "{\"Authorization\": \"[REDACTED]\"}", 1 },
		{ "authorization: Basic dXNlcjpwYXNz\nnext",
		  "authorization: Basic [REDACTED]\nnext", 1 },
		{ "key AKIAIOSFODNN7EXAMPLE in env", "key [REDACTED] in env",
		  1 },
		{ "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 end",
		  "gh [REDACTED] end", 1 },
		{ "postgres://admin:pa55word@db.local:5432/app",
		  "postgres://admin:[REDACTED]@db.local:5432/app", 1 },
		{ "https://user:tok@example.com/x and "
		  "https://example.com:8443/",
		  "https://user:[REDACTED]@example.com/x and "
		  "https://example.com:8443/", 1 },
		{ "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc=\n"
		  "-----END RSA PRIVATE KEY-----\nb",
		  "a\n[REDACTED]\nb", 1 },
		{ "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
		  "-----END OPENSSH PRIVATE KEY-----",
		  "[REDACTED]", 1 },
		{ "{\"password\": \"ab\\\"cd ef\", \"n\": 1}",
		  "{\"password\": \"[REDACTED]\", \"n\": 1}", 1 },
		{ "'token': 'x\\\\', 'u': 'bob'",
		  "'token': '[REDACTED]', 'u': 'bob'", 1 },
		{ "PGPASSWORD=s3cret psql -h db",
		  "PGPASSWORD=[REDACTED] psql -h db", 1 },
		{ "MYSQL_ROOT_PASSWORD: r00t",
		  "MYSQL_ROOT_PASSWORD: [REDACTED]", 1 },
		{ "api_key: k1, secret=k2; token=k3&x=1",
		  "api_key: [REDACTED], secret=[REDACTED]; "
		  "token=[REDACTED]&x=1", 3 },
	};
	/* ordinary text stays as it is */
	static const char *const plain[] = {
		"tokenizer output: 3 tokens", "tokenizer output",
		"=== 3 passed, 1 failed in 0.52s ===", "passed",
		"password reset flow works", "the secret of success",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"see https://example.com:8080/path?a=b", "user@example.com",
		"AKIA is short", "ghp_short", "mask sk-1 ok", "",
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(v); i++)
		ck_assert_int_eq(check(NULL, v[i].in, v[i].out), v[i].n);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(plain); i++)
		ck_assert_int_eq(check(NULL, plain[i], plain[i]), 0);
}
END_TEST

/* Every key and every token prefix of redact.c, in the cases that must
 * match: redact_builtin passes over bytes no rule starts at, so a rule whose
 * first byte is left out of that table would never fire. */
START_TEST(every_rule)
{
	static const char *const keys[] = {
		"password", "passwd", "secret", "token", "api_key", "apikey",
		"api-key", "access_key", "private_key", "client_secret",
		"authorization", "auth_token", "credentials",
	};
	static const char *const prefixes[] = {
		"AKIA", "ASIA", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_",
		"glpat-", "xoxb-", "xoxp-", "sk-",
	};
	char	 in[256], want[256], up[64];

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(keys); i++) {
		/* an Authorization value is the rest of its line */
		snprintf(in, sizeof in, "x %s=hunter2 y", keys[i]);
		snprintf(want, sizeof want, "x %s=[REDACTED]%s", keys[i],
		    strcmp(keys[i], "authorization") == 0 ? "" : " y");
		ck_assert_int_eq(check(NULL, in, want), 1);
		/* keys match in any case */
		snprintf(up, sizeof up, "%s", keys[i]);
		for (char *p = up; *p != '\0'; p++)
			*p = (char)toupper((unsigned char)*p);
		snprintf(in, sizeof in, "%s: hunter2", up);
		snprintf(want, sizeof want, "%s: [REDACTED]", up);
		ck_assert_int_eq(check(NULL, in, want), 1);
	}
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(prefixes); i++) {
		snprintf(in, sizeof in, "got %sAbCdEfGhIjKlMnOpQrStUvWxYz0123456789 "
		    "back", prefixes[i]);
		ck_assert_int_eq(check(NULL, in, "got [REDACTED] back"), 1);
	}
}
END_TEST

START_TEST(user)
{
	struct flaky_redactor *r;
	struct flaky_buf b;
	char	 err[256];
	static const char nul[] = "password=x\0internal-42";

	ck_assert_int_eq(flaky_redactor_new(&r), 0);
	ck_assert_int_eq(flaky_redactor_add(r, "internal-[0-9]+", err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_redactor_add(r, "^ACME[A-Z]+", err, sizeof err),
	    0);
	ck_assert_int_eq(check(r, "id internal-42 and internal-7 here",
	    "id [REDACTED] and [REDACTED] here"), 2);
	/* ^ anchors at the start of the text only */
	ck_assert_int_eq(check(r, "ACMEKEY x ACMEKEY",
	    "[REDACTED] x ACMEKEY"), 1);
	/* built-in and user rules together */
	ck_assert_int_eq(check(r, "token=abc internal-1",
	    "token=[REDACTED] [REDACTED]"), 2);
	ck_assert_int_eq(check(r, "nothing to hide", "nothing to hide"), 0);
	/* NUL bytes are kept and end a value; every rule sees the text on
	 * both sides of one */
	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_redact(r, nul, sizeof nul - 1, &b), 2);
	ck_assert_uint_eq(b.len, 30);
	ck_assert(memcmp(b.data, "password=[REDACTED]\0[REDACTED]", 30) == 0);
	flaky_buf_free(&b);
	/* a bad pattern is refused with the regex's reason */
	ck_assert_int_eq(flaky_redactor_add(r, "a(b", err, sizeof err),
	    -EINVAL);
	ck_assert_msg(strstr(err, "redaction pattern 'a(b'") == err, "%s",
	    err);
	/* an empty match does not loop */
	ck_assert_int_eq(flaky_redactor_add(r, "z*", err, sizeof err), 0);
	ck_assert_int_eq(check(r, "abc", "abc"), 0);
	ck_assert_int_eq(flaky_redactor_add(r, "c?$", err, sizeof err), 0);
	ck_assert_int_eq(check(r, "ab", "ab"), 0);
	for (int i = 4; i < 32; i++)
		ck_assert_int_eq(flaky_redactor_add(r, "q", err, sizeof err),
		    0);
	ck_assert_int_eq(flaky_redactor_add(r, "q", err, sizeof err), -E2BIG);
	flaky_redactor_free(r);
	flaky_redactor_free(NULL);
}
END_TEST

START_TEST(large)
{
	size_t		 n = 4 * 1024 * 1024;
	char		*s = malloc(n + 1);
	struct flaky_buf b;

	/* a megabytes-long output with a secret at each end */
	ck_assert_ptr_nonnull(s);
	memset(s, 'a', n);
	for (size_t i = 100; i < n; i += 100)
		s[i] = ' ';
	memcpy(s, "token=abc ", 10);
	memcpy(s + n - 10, " pass:=x y", 10);
	s[n] = '\0';
	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_redact(NULL, s, n, &b), 1);
	ck_assert_uint_eq(b.len, n - 3 + strlen("[REDACTED]"));
	ck_assert(memcmp(b.data, "token=[REDACTED] ", 17) == 0);
	flaky_buf_free(&b);
	free(s);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("redact");
	TCase	*tc = tcase_create("redact");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, builtin);
	tcase_add_test(tc, user);
	tcase_add_test(tc, every_rule);
	tcase_add_test(tc, large);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
