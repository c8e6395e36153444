/* classify_conf (lib/classify/classify_conf.c): the classifier built from a
 * config's signatures: none without any, user codes and built-in ones by
 * name, every pattern in file order before the built-ins, and the errors
 * of signatures the classifier cannot take. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "config/config.h"
#include "util/util.h"

static struct flaky_config *
parse(const char *yaml)
{
	struct flaky_config *cfg;
	char		 err[512];

	ck_assert_msg(flaky_config_parse_buffer("/etc/flaky.yaml", yaml,
	    strlen(yaml), FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err) ==
	    0, "%s", err);
	return cfg;
}

/* The classifier of a config given as YAML. */
static struct flaky_classifier *
build(const char *yaml)
{
	struct flaky_config *cfg = parse(yaml);
	struct flaky_classifier *c = (struct flaky_classifier *)1;
	char		 err[512];

	ck_assert_msg(flaky_classifier_from_config(cfg, &c, err, sizeof err) ==
	    0, "%s", err);
	flaky_config_free(cfg);
	return c;
}

/* The name of the signature of a message. */
static const char *
sig(const struct flaky_classifier *c, const char *msg)
{
	return flaky_classifier_name(c, flaky_classifier_classify(c, msg,
	    strlen(msg)));
}

/* A config without signatures gives no classifier: the built-ins. */
START_TEST(none)
{
	struct flaky_classifier *c = build("targets:\n  - name: a\n"
	    "    command: [true]\n");

	ck_assert_ptr_null(c);
	ck_assert_str_eq(sig(c, "Connection refused"), "INFRA");
	ck_assert_str_eq(sig(c, "assert 1 == 2"), "UNKNOWN");
}
END_TEST

/* A new name gets a code above the built-ins, one per signature (all its
 * patterns share it); a built-in name gets the built-in code. */
START_TEST(codes_and_names)
{
	struct flaky_classifier *c = build(
	    "signatures:\n"
	    "  - name: DB_DEADLOCK\n"
	    "    patterns:\n"
	    "      - 'deadlock detected'\n"
	    "      - '^ERROR: could not serialize'\n"
	    "  - name: TIMEOUT\n"
	    "    patterns: ['took longer than [0-9]+ s']\n"
	    "  - name: flaky.net-2\n"
	    "    patterns: ['ECONNRESET']\n");
	int	 dl, dl2, net;

	ck_assert_ptr_nonnull(c);
	dl = flaky_classifier_classify(c, "ERROR: deadlock detected", 24);
	ck_assert_int_gt(dl, FLAKY_SIG_MAX);
	ck_assert_str_eq(flaky_classifier_name(c, dl), "DB_DEADLOCK");
	/* REG_NEWLINE: ^ after a newline; the second pattern, the same code */
	dl2 = flaky_classifier_classify(c, "Traceback\nERROR: could not "
	    "serialize access", 42);
	ck_assert_int_eq(dl2, dl);
	ck_assert_int_eq(flaky_classifier_classify(c, "took longer than 30 s",
	    21), FLAKY_SIG_TIMEOUT);
	net = flaky_classifier_classify(c, "read: ECONNRESET", 16);
	ck_assert_int_gt(net, FLAKY_SIG_MAX);
	ck_assert_int_ne(net, dl);
	ck_assert_str_eq(flaky_classifier_name(c, net), "flaky.net-2");
	/* anything else: the built-ins */
	ck_assert_str_eq(sig(c, "took longer than s"), "UNKNOWN");
	ck_assert_str_eq(sig(c, "Connection refused"), "INFRA");
	ck_assert_str_eq(flaky_classifier_name(c, net + 1), "UNKNOWN");
	flaky_classifier_free(c);
}
END_TEST

/* Patterns are tried in file order, user ones before the built-ins. */
START_TEST(order)
{
	static const char ab[] =
	    "signatures:\n"
	    "  - name: FIRST\n"
	    "    patterns: ['deadlock']\n"
	    "  - name: SECOND\n"
	    "    patterns: ['timeout', 'refused']\n";
	static const char ba[] =
	    "signatures:\n"
	    "  - name: SECOND\n"
	    "    patterns: ['timeout', 'refused']\n"
	    "  - name: FIRST\n"
	    "    patterns: ['deadlock']\n";
	struct flaky_classifier *c = build(ab);

	ck_assert_str_eq(sig(c, "deadlock after timeout"), "FIRST");
	ck_assert_str_eq(sig(c, "timeout"), "SECOND");
	/* a built-in INFRA message, taken by a user pattern first */
	ck_assert_str_eq(sig(c, "Connection refused"), "SECOND");
	flaky_classifier_free(c);
	c = build(ba);
	ck_assert_str_eq(sig(c, "deadlock after timeout"), "SECOND");
	ck_assert_str_eq(sig(c, "deadlock"), "FIRST");
	flaky_classifier_free(c);
}
END_TEST

/* What the config takes but the classifier cannot: more patterns than it
 * holds, a name or pattern it refuses. Nothing is returned on error. */
START_TEST(errors)
{
	struct flaky_user_signature us;
	struct flaky_regex	 re[2];
	struct flaky_config	*cfg, hand;
	struct flaky_classifier	*c;
	struct flaky_buf	 y;
	char			 err[512];

	/* 65 patterns, one too many for the classifier */
	flaky_buf_init(&y);
	flaky_buf_adds(&y, "signatures:\n  - name: MANY\n    patterns:\n");
	for (int i = 0; i <= FLAKY_CLASSIFIER_MAX; i++)
		flaky_buf_printf(&y, "      - 'pattern %d'\n", i);
	cfg = parse(flaky_buf_cstr(&y));
	flaky_buf_free(&y);
	ck_assert_uint_eq(cfg->signatures[0].npatterns,
	    FLAKY_CLASSIFIER_MAX + 1);
	c = (struct flaky_classifier *)1;
	ck_assert_int_eq(flaky_classifier_from_config(cfg, &c, err,
	    sizeof err), -E2BIG);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(err, "at most 64 signature patterns");
	flaky_config_free(cfg);

	/* a config made by hand: a good pattern, then a bad one */
	memset(&hand, 0, sizeof hand);
	memset(re, 0, sizeof re);
	re[0].src = "ok";
	re[1].src = "(unclosed";
	us.name = "BROKEN";
	us.patterns = re;
	us.npatterns = 2;
	hand.signatures = &us;
	hand.nsignatures = 1;
	c = (struct flaky_classifier *)1;
	ck_assert_int_eq(flaky_classifier_from_config(&hand, &c, err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strncmp(err, "signature BROKEN: pattern '(unclosed': ",
	    39) == 0, "%s", err);
	us.name = "no spaces";
	us.npatterns = 1;
	ck_assert_int_eq(flaky_classifier_from_config(&hand, &c, err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "signature name") != NULL, "%s", err);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("classify_conf");
	TCase	*tc = tcase_create("classify_conf");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, none);
	tcase_add_test(tc, codes_and_names);
	tcase_add_test(tc, order);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
