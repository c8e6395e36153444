/* --format junit: the analysis as JUnit XML, for CI systems that show
 * JUnit (GitLab's test report, Jenkins, GitHub actions that read it). Each
 * test is one <testcase>; critical, warning and broken tests hold a
 * <failure> (what all of them display), the others pass; every testcase
 * carries its evidence as <properties> (flaky.tier, flaky.runs, ...). The
 * file is valid XML whatever the ids hold, and flakyctl ingest reads it. */
#include "buildconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "stats/stats.h"
#include "util/util.h"

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t	 n;
	unsigned c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF, U+FFFE/FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff) ||
	    c == 0xfffe || c == 0xffff)
		return 0;
	return n;
}

/* s as XML text or an attribute value: markup escaped, characters XML
 * does not allow (controls, invalid UTF-8) as U+FFFD, and in attributes
 * (attr) tabs and newlines as references so that they survive. */
void
junit_escape(FILE *f, const char *str, int attr)
{
	const unsigned char *s = (const unsigned char *)str;

	while (s != NULL && *s != '\0') {
		size_t	 n = utf8_len(s);

		if (n == 0 || (*s < 0x20 && *s != '\t' && *s != '\n' &&
		    *s != '\r')) {
			fputs("\xef\xbf\xbd", f);
			s++;
			continue;
		}
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\t': fputs(attr ? "&#9;" : "\t", f); break;
		case '\n': fputs(attr ? "&#10;" : "\n", f); break;
		case '\r': fputs("&#13;", f); break;
		default: fwrite(s, 1, n, f);
		}
		s += n;
	}
}

/* s as an attribute value. */
static void
xml_text(FILE *f, const char *s)
{
	junit_escape(f, s, 1);
}

/* One <property name="flaky.NAME" value="..."/>. */
static void
property(const char *name, const char *value)
{
	printf("        <property name=\"flaky.%s\" value=\"", name);
	xml_text(stdout, value);
	printf("\"/>\n");
}

/* A number property. */
static void
property_num(const char *name, double v, int prec)
{
	char	 buf[64];

	snprintf(buf, sizeof buf, "%.*f", prec, v);
	property(name, buf);
}

/* Does the row fail in the XML? */
static int
row_fails(const struct flaky_test_row *r)
{
	int	 t = flaky_tier(r->failures, r->runs);

	return t == FLAKY_TIER_CRITICAL || t == FLAKY_TIER_WARNING ||
	    t == FLAKY_TIER_BROKEN;
}

/* One <testcase>: its evidence as properties, a <failure> for the tiers
 * that need attention, a skip for a test that never ran. */
static void
testcase(const struct report_head *h, const struct report_evidence *ev,
    const struct flaky_test_row *r)
{
	const struct flaky_test_sig *sig = ev ? evidence_sig(ev,
	    r->test_id) : NULL;
	const struct flaky_history_row *hr = h->hist ?
	    flaky_history_find(h->hist, r->test_id) : NULL;
	int	 t = flaky_tier_skips(r->failures, r->runs, r->skips);
	double	 lo, hi, med = r->pass_n > 0 ? r->median_ms_pass :
	    r->median_ms_fail;
	char	 buf[64];

	flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
	printf("    <testcase classname=\"");
	xml_text(stdout, r->target);
	printf("\" name=\"");
	xml_text(stdout, r->test);
	printf("\"");
	if (!isnan(med))
		printf(" time=\"%.3f\"", med / 1000.0);
	printf(">\n      <properties>\n");
	property("tier", flaky_tier_name(t));
	snprintf(buf, sizeof buf, "%lld", (long long)r->runs);
	property("runs", buf);
	snprintf(buf, sizeof buf, "%lld", (long long)r->failures);
	property("failures", buf);
	property_num("fail_rate", r->runs ? (double)r->failures /
	    (double)r->runs : 0.0, 4);
	property_num("ci_low", lo, 4);
	property_num("ci_high", hi, 4);
	if (sig != NULL && sig->signature != NULL)
		property("signature", sig->signature);
	if (sig != NULL && sig->polluter != NULL)
		property("polluter", sig->polluter);
	if (hr != NULL && hr->quarantined)
		property("quarantined", "true");
	printf("      </properties>\n");
	if (r->runs == 0 && r->skips > 0)
		printf("      <skipped message=\"skipped in every run\"/>\n");
	else if (row_fails(r)) {
		printf("      <failure type=\"flaky.%s\" message=\"%s: failed "
		    "%lld of %lld run%s (%.1f%%, 95%% interval %.0f%%-%.0f%%)",
		    flaky_tier_name(t), t == FLAKY_TIER_BROKEN ? "broken" :
		    "flaky", (long long)r->failures, (long long)r->runs,
		    flaky_plural(r->runs), 100.0 *
		    (double)r->failures / (double)r->runs, 100 * lo, 100 * hi);
		if (sig != NULL && sig->signature != NULL) {
			printf(", ");
			xml_text(stdout, sig->signature);
		}
		printf("\">");
		junit_escape(stdout, r->top_message, 0);
		printf("</failure>\n");
	} else if (t == FLAKY_TIER_NOISE)
		printf("      <system-out>flaky: failed %lld of %lld run%s "
		    "(noise, under 5%%)</system-out>\n", (long long)r->failures,
		    (long long)r->runs, flaky_plural(r->runs));
	printf("    </testcase>\n");
}

/* Counts of one target's rows (all when target is NULL). */
static void
count(const struct flaky_test_row *v, size_t n, const char *target,
    size_t *tests, size_t *failures, size_t *skipped)
{
	*tests = *failures = *skipped = 0;
	for (size_t i = 0; i < n; i++) {
		if (target != NULL && strcmp(v[i].target, target) != 0)
			continue;
		(*tests)++;
		if (v[i].runs == 0 && v[i].skips > 0)
			(*skipped)++;
		else if (row_fails(&v[i]))
			(*failures)++;
	}
}

int
print_junit(const struct report_head *h, const struct report_evidence *ev,
    const struct flaky_test_row *v, size_t n)
{
	const char **targets;
	size_t	 tests, failures, skipped, ntargets = 0;
	char	 a[32];

	if ((targets = calloc(n ? n : 1, sizeof *targets)) == NULL) {
		fprintf(stderr, "flakyctl: out of memory\n");
		return -1;
	}
	count(v, n, NULL, &tests, &failures, &skipped);
	printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"flaky\" tests=\"%zu\" failures=\"%zu\" "
	    "errors=\"0\" skipped=\"%zu\">\n", tests, failures, skipped);
	/* one suite per target (targets are few), in the order they first
	 * appear */
	for (size_t i = 0; i < n; i++) {
		int	 seen = 0;

		for (size_t j = 0; j < ntargets && !seen; j++)
			seen = strcmp(targets[j], v[i].target) == 0;
		if (seen)
			continue;
		targets[ntargets++] = v[i].target;
		count(v, n, v[i].target, &tests, &failures, &skipped);
		printf("  <testsuite name=\"");
		xml_text(stdout, v[i].target);
		printf("\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		    "skipped=\"%zu\"", tests, failures, skipped);
		if (h->runs.runs > 0)
			printf(" timestamp=\"%s\"", flaky_format_time(
			    h->runs.last_ms, a, sizeof a));
		printf(">\n");
		if (h->command != NULL) {
			printf("    <properties>\n  ");
			property("command", h->command);
			printf("    </properties>\n");
		}
		for (size_t j = i; j < n; j++)
			if (strcmp(v[j].target, v[i].target) == 0)
				testcase(h, ev, &v[j]);
		printf("  </testsuite>\n");
	}
	printf("</testsuites>\n");
	free(targets);
	return 0;
}
