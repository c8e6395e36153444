/* classify_bench: normalize, fingerprint and classify N failure messages
 * (default 1,000,000), a realistic mix taken from the captured runner
 * output in tests/fixtures (pytest, unittest, Jest, go test), each copy
 * with its own numbers, addresses and temporary paths so no two are the
 * same text. Prints messages/s and MB/s for each step and the whole.
 * Usage: classify_bench [N] [FIXTURES_DIR] */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify/classify.h"
#include "parse/parse.h"
#include "util/util.h"

#define POOL	8192

static const char *const fixtures[] = {
	"pytest/v.txt", "pytest/random_order.txt", "pytest/rA.txt",
	"unittest/v.txt", "jest/verbose-multi.txt", "jest/default-multi.txt",
	"gotest/verbose.txt", "gotest/timeout.txt", "gotest/panic.txt",
};

/* Messages seen in the field that the fixtures lack (infra, races). */
static const char *const extra[] = {
	"requests.exceptions.ConnectionError: HTTPConnectionPool(host='"
	"127.0.0.1', port=8080): Max retries exceeded with url: /api/v1/"
	"users/42 (Caused by NewConnectionError('<urllib3.connection."
	"HTTPConnection object at 0x7f3a2b9c4d90>: Failed to establish a new "
	"connection: [Errno 111] Connection refused'))",
	"E       AssertionError: assert None is not None\n E        +  where "
	"None = <app.Worker object at 0x7f00aa11bb22>.result",
	"TypeError: Cannot read properties of undefined (reading 'id')\n"
	"    at Object.<anonymous> (/tmp/jest_rs/app.test.js:17:23)",
	"sqlite3.OperationalError: database is locked",
	"Failed: Timeout >5.0s",
	"thrown: \"Exceeded timeout of 5000 ms for a test.\"",
	"AssertionError: 0.30000000000000004 != 0.3 within 7 places "
	"(5.551115123125783e-17 difference)",
};

/* Seconds of CPU time of the process. */
static double
now_s(void)
{
	struct timespec ts;

	/* CPU time: the figures should not depend on what else runs */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64: the same mix on every run. */
static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A copy of base with every digit redrawn (so addresses, ports, line
 * numbers and durations differ as they do between runs). */
static char *
vary(const char *base)
{
	char	*s = strdup(base);

	if (s == NULL)
		abort();
	for (char *p = s; *p; p++)
		if (*p >= '0' && *p <= '9')
			*p = (char)('0' + rnd() % 10);
	return s;
}

/* Failure messages of one fixture, appended to v. */
static void
load(const char *dir, const char *name, char ***v, size_t *n, size_t *cap)
{
	struct flaky_results r;
	char	 path[2048];
	FILE	*f;
	char	*buf;
	long	 len;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "classify_bench: %s: cannot open\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	if ((buf = malloc((size_t)len + 1)) == NULL ||
	    fread(buf, 1, (size_t)len, f) != (size_t)len)
		abort();
	fclose(f);
	flaky_results_init(&r);
	if (flaky_parse_buffer(buf, (size_t)len, NULL, &r) < 0)
		abort();
	for (size_t i = 0; i < r.n; i++) {
		if (!FLAKY_FAILED(r.v[i].outcome) || r.v[i].message == NULL ||
		    r.v[i].message[0] == '\0')
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			if ((*v = realloc(*v, *cap * sizeof **v)) == NULL)
				abort();
		}
		(*v)[(*n)++] = strdup(r.v[i].message);
	}
	flaky_results_free(&r);
	free(buf);
}

/* Load, vary, time each step, print. */
int
main(int argc, char **argv)
{
	long	 n = argc > 1 ? atol(argv[1]) : 1000000;
	const char *dir = argc > 2 ? argv[2] : FIXTURES;
	char	**base = NULL, *pool[POOL];
	size_t	 pool_len[POOL], nbase = 0, cap = 0, bytes = 0;
	int	 sig_count[FLAKY_SIG_MAX + 2] = { 0 };
	struct flaky_classifier *cls;
	struct flaky_buf b;
	double	 t0, t_norm, t_cls, t_user;
	uint64_t sink = 0;
	char	 err[256];

	if (n <= 0)
		n = 1000000;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(fixtures); i++)
		load(dir, fixtures[i], &base, &nbase, &cap);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(extra); i++) {
		if (nbase == cap) {
			cap *= 2;
			if ((base = realloc(base, cap * sizeof *base)) == NULL)
				abort();
		}
		base[nbase++] = strdup(extra[i]);
	}
	for (size_t i = 0; i < POOL; i++) {
		pool[i] = vary(base[rnd() % nbase]);
		pool_len[i] = strlen(pool[i]);
	}
	for (long i = 0; i < n; i++)
		bytes += pool_len[i % POOL];

	flaky_buf_init(&b);
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		const char *m = pool[i % POOL];

		flaky_buf_reset(&b);
		flaky_normalize(m, pool_len[i % POOL], &b);
		sink += (uint64_t)flaky_fingerprint(flaky_buf_cstr(&b), b.len);
	}
	t_norm = now_s() - t0;
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		int s = flaky_classify_message(pool[i % POOL],
		    pool_len[i % POOL]);

		sig_count[s]++;
	}
	t_cls = now_s() - t0;
	if (flaky_classifier_new(&cls) < 0 ||
	    flaky_classifier_add(cls, "DB_DEADLOCK", "deadlock detected", err,
	    sizeof err) < 0 ||
	    flaky_classifier_add(cls, "DB_DEADLOCK",
	    "^ERROR: could not serialize", err, sizeof err) < 0 ||
	    flaky_classifier_add(cls, "SLOW", "took longer than [0-9]+ s", err,
	    sizeof err) < 0)
		abort();
	t0 = now_s();
	for (long i = 0; i < n; i++)
		sink += (uint64_t)flaky_classifier_classify(cls,
		    pool[i % POOL], pool_len[i % POOL]);
	t_user = now_s() - t0;
	flaky_classifier_free(cls);
	flaky_buf_free(&b);

	printf("classify_bench: %ld messages, %.1f MB, %zu distinct bases "
	    "from %zu fixtures, mean %.0f bytes\n", n, (double)bytes / 1e6,
	    nbase, FLAKY_ARRAY_SIZE(fixtures), (double)bytes / (double)n);
	printf("%-34s %10s %12s %8s\n", "step", "seconds", "messages/s",
	    "MB/s");
	printf("%-34s %10.3f %12.0f %8.1f\n", "normalize + fingerprint",
	    t_norm, (double)n / t_norm, (double)bytes / 1e6 / t_norm);
	printf("%-34s %10.3f %12.0f %8.1f\n", "classify (built-in patterns)",
	    t_cls, (double)n / t_cls, (double)bytes / 1e6 / t_cls);
	printf("%-34s %10.3f %12.0f %8.1f\n", "both (what the store does)",
	    t_norm + t_cls, (double)n / (t_norm + t_cls),
	    (double)bytes / 1e6 / (t_norm + t_cls));
	printf("%-34s %10.3f %12.0f %8.1f\n", "classify, 3 user regexes first",
	    t_user, (double)n / t_user, (double)bytes / 1e6 / t_user);
	printf("signatures:");
	for (int s = 1; s <= FLAKY_SIG_MAX; s++)
		printf(" %s %d", flaky_signature_name(s), sig_count[s]);
	printf("  (sink %llx)\n", (unsigned long long)(sink & 0xff));
	for (size_t i = 0; i < POOL; i++)
		free(pool[i]);
	for (size_t i = 0; i < nbase; i++)
		free(base[i]);
	free(base);
	return 0;
}
