/* scan, the source encoding (encoding.c and the generated codec table):
 * what a coding cookie's name means, checked on a sample of names written
 * out by hand from the table lib/scan/pyscan.c had before the table was
 * generated (and so independent of gen-codecs.py and codecs.txt). */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "util/util.h"

/* What the scan makes of a file whose cookie names name and whose second
 * line holds a byte that is neither ASCII nor UTF-8: "unknown" (not a
 * codec Python decodes source with), "ascii" (the byte is refused), "utf8"
 * (the whole file must be UTF-8) or "other" (a codec that decodes it). */
static const char *
cookie_kind(const char *name)
{
	static char	 reason[200];
	struct flaky_scan_result *r;
	char		 src[160], err[256];
	int		 n;

	n = snprintf(src, sizeof src, "# -*- coding: %s -*-\nx = 1  # \xff\n",
	    name);
	ck_assert(n > 0 && (size_t)n < sizeof src);
	ck_assert_int_eq(flaky_pyscan_buffer(src, (size_t)n, &r, err,
	    sizeof err), 0);
	snprintf(reason, sizeof reason, "%s", r->skipped ? r->reason : "");
	flaky_scan_result_free(r);
	if (reason[0] == '\0')
		return "other";
	if (strstr(reason, "unknown encoding") != NULL)
		return "unknown";
	if (strstr(reason, "non-ASCII byte") != NULL)
		return "ascii";
	if (strstr(reason, "invalid UTF-8") != NULL)
		return "utf8";
	return reason;
}

static const struct {
	const char	*name;
	const char	*kind;
} cookies[] = {
	/* ASCII: the module, its aliases, spelled as cookies spell them. */
	{ "ascii", "ascii" }, { "646", "ascii" }, { "us-ascii", "ascii" },
	{ "ANSI_X3.4-1968", "ascii" }, { "iso_646.irv_1991", "ascii" },
	{ "cp367", "ascii" }, { "csASCII", "ascii" },
	/* UTF-8 by another name: the whole file is decoded. */
	{ "utf8", "utf8" }, { "u8", "utf8" }, { "utf", "utf8" },
	{ "cp65001", "utf8" }, { "utf8-ucs4", "utf8" },
	/* Python cannot decode source with these, or has no such codec. */
	{ "utf-16", "unknown" }, { "utf_32_le", "unknown" },
	{ "u16", "unknown" }, { "unicodebigunmarked", "unknown" },
	{ "punycode", "unknown" }, { "undefined", "unknown" },
	{ "base64", "unknown" }, { "base64_codec", "unknown" },
	{ "rot13", "unknown" }, { "zlib", "unknown" }, { "hex", "unknown" },
	{ "mbcs", "unknown" }, { "oem", "unknown" }, { "klingon", "unknown" },
	/* In Python's aliases with capitals, so never found. */
	{ "csHPRoman8", "unknown" }, { "roman8", "other" },
	/* Text codecs that decode the byte. */
	{ "latin-1", "other" }, { "latin1", "other" }, { "8859", "other" },
	{ "iso8859_1", "other" }, { "cp1252", "other" },
	{ "windows-1252", "other" }, { "shift_jis", "other" },
	{ "euc-jp", "other" }, { "koi8-r", "other" }, { "tis-620", "other" },
	{ "x-mac-japanese", "other" }, { "mac_roman", "other" },
	{ "idna", "other" }, { "raw_unicode_escape", "other" },
	{ "unicode_escape", "other" }, { "utf-7", "other" },
	{ "charmap", "other" }, { "palmos", "other" },
	/* "." read as "_" finds aliases, not module names. */
	{ "ansi_x3.4.1968", "ascii" }, { "windows.1252", "other" },
	{ "iso8859.1", "other" }, { "koi8.r", "unknown" },
	{ "euc.jp", "unknown" }, { "mac.roman", "unknown" },
};

START_TEST(codec_names)
{
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(cookies); i++) {
		const char *got = cookie_kind(cookies[i].name);

		ck_assert_msg(strcmp(got, cookies[i].kind) == 0,
		    "coding: %s: got %s, want %s", cookies[i].name, got,
		    cookies[i].kind);
	}
}
END_TEST

/* A BOM goes with UTF-8 only; a cookie for UTF-8 by its own name leaves
 * comments undecoded. */
START_TEST(bom_and_utf8)
{
	struct flaky_scan_result *r;
	char		 err[256];
	static const char bom_latin[] =
	    "\xef\xbb\xbf# coding: latin-1\nx = 1\n";
	static const char bom_utf8[] =
	    "\xef\xbb\xbf# coding: utf-8\nx = 1\n";
	static const char utf8_comment[] =
	    "# coding: utf-8\nx = 1  # \xff\n";
	static const char utf8_sig_comment[] =
	    "# coding: utf_8_sig\nx = 1  # \xff\n";

	ck_assert_int_eq(flaky_pyscan_buffer(bom_latin, sizeof bom_latin - 1,
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r->skipped, 1);
	ck_assert_str_eq(r->reason, "line 1: encoding problem: iso-8859-1 "
	    "with BOM");
	flaky_scan_result_free(r);
	ck_assert_int_eq(flaky_pyscan_buffer(bom_utf8, sizeof bom_utf8 - 1,
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r->skipped, 0);
	flaky_scan_result_free(r);
	ck_assert_int_eq(flaky_pyscan_buffer(utf8_comment,
	    sizeof utf8_comment - 1, &r, err, sizeof err), 0);
	ck_assert_int_eq(r->skipped, 0);
	flaky_scan_result_free(r);
	/* get_normal_name() turns "utf-8-sig" into "utf-8". */
	ck_assert_int_eq(flaky_pyscan_buffer(utf8_sig_comment,
	    sizeof utf8_sig_comment - 1, &r, err, sizeof err), 0);
	ck_assert_int_eq(r->skipped, 0);
	flaky_scan_result_free(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scan_encoding");
	TCase	*tc = tcase_create("scan_encoding");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, codec_names);
	tcase_add_test(tc, bom_and_utf8);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
