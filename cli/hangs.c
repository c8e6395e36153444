/* Where a test's timeouts hung (issue 33), for flakyctl show and the JSON
 * of a diagnosis: the places from their stored stacks, the newest hung
 * thread trimmed, and what taking the stacks cost. */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "evidence.h"
#include "flakyctl.h"

/* show's lines: nothing for a test with no stored stacks. */
void
diag_hang_print(const struct flaky_diagnosis *d, int full)
{
	const struct flaky_hangs *h = &d->hangs;
	struct flaky_buf b;

	if (h->n == 0)
		return;
	flaky_buf_init(&b);
	flaky_hang_words(h, &b);
	printf("stacks: %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_hang_patch(h, &b);
	printf("  first patch: %s\n", flaky_buf_cstr(&b));
	printf("  capture: %lld ms median, %lld ms at most, over %lld "
	    "timeout%s\n", (long long)h->capture_ms_median,
	    (long long)h->capture_ms_max, (long long)h->runs,
	    h->runs == 1 ? "" : "s");
	flaky_buf_reset(&b);
	flaky_hang_stack(h->frames, full ? 1000 : 12, &b);
	if (b.len > 0) {
		const char *p = flaky_buf_cstr(&b);

		printf("  run %lld, the hung thread (> the test's own code):\n",
		    (long long)h->newest_run);
		while (*p != '\0') {
			int	 n = (int)strcspn(p, "\n");

			printf("    %.*s\n", n, p);
			p += n + (p[n] == '\n');
		}
	}
	flaky_buf_free(&b);
}

/* A string member, null for NULL. */
static void
member(FILE *f, const char *k, const char *v)
{
	fprintf(f, ", \"%s\": ", k);
	json_string(f, v);
}

/* The member "hangs" of a diagnosis: null without stored stacks. */
void
diag_json_hangs(FILE *f, const struct flaky_diagnosis *d)
{
	const struct flaky_hangs *h = &d->hangs;
	struct flaky_buf b;

	fprintf(f, ",\n  \"hangs\": ");
	if (h->n == 0) {
		fputs("null", f);
		return;
	}
	flaky_buf_init(&b);
	flaky_hang_words(h, &b);
	fprintf(f, "{\"timeouts\": %lld, \"capture_ms_median\": %lld, "
	    "\"capture_ms_max\": %lld, \"newest_run\": %lld",
	    (long long)h->runs, (long long)h->capture_ms_median,
	    (long long)h->capture_ms_max, (long long)h->newest_run);
	member(f, "summary", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_hang_patch(h, &b);
	member(f, "patch", flaky_buf_cstr(&b));
	member(f, "stack", h->frames);
	fprintf(f, ", \"places\": [");
	for (size_t i = 0; i < h->n; i++) {
		const struct flaky_hang_site *s = &h->v[i];

		fprintf(f, "%s{\"count\": %lld, \"run\": %lld", i ? ", " : "",
		    (long long)s->count, (long long)s->run_id);
		member(f, "kind", s->kind);
		member(f, "function", s->func);
		member(f, "file", s->file);
		if (s->line > 0)
			fprintf(f, ", \"line\": %d", s->line);
		else
			fprintf(f, ", \"line\": null");
		member(f, "call", s->call);
		member(f, "code", s->code);
		member(f, "deadlock", s->deadlock);
		fprintf(f, "}");
	}
	fprintf(f, "]}");
	flaky_buf_free(&b);
}
