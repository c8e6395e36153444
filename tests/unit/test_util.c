/* util: durations, times, buffers, reading files, finding programs. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

/* The one reader of whole files: bounded, never waiting on a FIFO, one
 * line naming the file and what was expected. */
START_TEST(read_file)
{
	char	 dir[] = "/tmp/flaky-read-XXXXXX", path[64], err[256], *buf;
	size_t	 len;
	FILE	*f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/f", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	for (int i = 0; i < 3000; i++)
		fputs("0123456789", f);
	fclose(f);
	ck_assert_int_eq(flaky_read_file(path, 30000, &buf, &len, err,
	    sizeof err), 0);
	ck_assert_uint_eq(len, 30000);
	ck_assert_int_eq(buf[len], '\0');
	ck_assert_int_eq(memcmp(buf + 29990, "0123456789", 10), 0);
	free(buf);
	ck_assert_int_eq(flaky_read_file(path, 29999, &buf, &len, err,
	    sizeof err), -EFBIG);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(flaky_read_file(path, 1024 * 1024 * 0 + 20480, &buf,
	    &len, err, sizeof err), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, "/f: expected at most 20 KiB"));
	ck_assert_int_eq(flaky_read_file(dir, 100, &buf, &len, err,
	    sizeof err), -EISDIR);
	unlink(path);
	ck_assert_int_eq(flaky_read_file(path, 100, &buf, &len, err,
	    sizeof err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(flaky_read_file(path, 100, &buf, &len, err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "expected a regular file"));
	unlink(path);
	/* empty */
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fclose(f);
	ck_assert_int_eq(flaky_read_file(path, 100, &buf, &len, NULL, 0), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(buf, "");
	free(buf);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A file past the limit still gives its head, to say where the limit
 * falls; the opener alone checks the same things. */
START_TEST(read_file_head)
{
	char	 dir[] = "/tmp/flaky-head-XXXXXX", path[64], err[256], *buf;
	size_t	 len, size;
	FILE	*f;
	int	 fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/f", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	for (int i = 0; i < 1000; i++)
		fputs("0123456789", f);
	fclose(f);
	ck_assert_int_eq(flaky_read_file_head(path, 10000, &buf, &len, &size,
	    err, sizeof err), 0);
	ck_assert_uint_eq(len, 10000);
	ck_assert_uint_eq(size, 10000);
	free(buf);
	ck_assert_int_eq(flaky_read_file_head(path, 4095, &buf, &len, &size,
	    err, sizeof err), -EFBIG);
	ck_assert_uint_eq(len, 4095);
	ck_assert_uint_eq(size, 10000);
	ck_assert_int_eq(buf[len], '\0');
	ck_assert_int_eq(memcmp(buf + 4090, "01234", 5), 0);
	ck_assert_ptr_nonnull(strstr(err, "/f: expected at most 4095 bytes"));
	free(buf);
	ck_assert_int_eq(flaky_read_file_head(dir, 100, &buf, &len, &size,
	    err, sizeof err), -EISDIR);
	ck_assert_ptr_null(buf);

	ck_assert_int_eq(flaky_open_file(path, 10000, &fd, &size, err,
	    sizeof err), 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(size, 10000);
	close(fd);
	ck_assert_int_eq(flaky_open_file(path, 9999, &fd, &size, err,
	    sizeof err), -EFBIG);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(flaky_open_file(dir, 100, &fd, &size, err,
	    sizeof err), -EISDIR);
	ck_assert_ptr_nonnull(strstr(err, "/flaky-head-"));
	ck_assert_ptr_nonnull(strstr(err, ": expected a regular file, found a "
	    "directory"));
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(flaky_open_file(path, 100, &fd, &size, err,
	    sizeof err), -EINVAL);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Make path an empty file with the given mode. */
static void
touch(const char *path, mode_t mode)
{
	FILE	*f;

	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* PATH lookup as execvp does it: in order, relative entries under dir,
 * a word with a slash as it is, and "not executable" over "is a
 * directory" over "not found". */
START_TEST(path_find)
{
	char	 dir[] = "/tmp/flaky-path-XXXXXX", p[256], want[256];
	char	 path_env[512], buf[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/a", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/b", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/a/tool", dir);
	touch(p, 0755);
	snprintf(p, sizeof p, "%s/b/tool", dir);
	touch(p, 0755);
	snprintf(p, sizeof p, "%s/a/plain", dir);
	touch(p, 0644);
	snprintf(p, sizeof p, "%s/b/sub", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);

	/* The first entry that has it. */
	snprintf(path_env, sizeof path_env, "%s/a:%s/b", dir, dir);
	ck_assert_int_eq(flaky_path_find("tool", NULL, path_env, buf,
	    sizeof buf), 0);
	snprintf(want, sizeof want, "%s/a/tool", dir);
	ck_assert_str_eq(buf, want);
	snprintf(path_env, sizeof path_env, "%s/b:%s/a", dir, dir);
	ck_assert_int_eq(flaky_path_find("tool", NULL, path_env, buf,
	    sizeof buf), 0);
	snprintf(want, sizeof want, "%s/b/tool", dir);
	ck_assert_str_eq(buf, want);

	/* Relative and empty entries are under dir. */
	ck_assert_int_eq(flaky_path_find("tool", dir, "/nonexistent:a", buf,
	    sizeof buf), 0);
	snprintf(want, sizeof want, "%s/a/tool", dir);
	ck_assert_str_eq(buf, want);
	snprintf(p, sizeof p, "%s/a", dir);
	ck_assert_int_eq(flaky_path_find("tool", p, "/nonexistent:", buf,
	    sizeof buf), 0);
	ck_assert_str_eq(buf, want);

	/* A word with a slash: PATH is not looked at. */
	ck_assert_int_eq(flaky_path_find("a/tool", dir, "/nonexistent", buf,
	    sizeof buf), 0);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(flaky_path_find(want, NULL, NULL, buf, sizeof buf),
	    0);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(flaky_path_find("a/plain", dir, NULL, buf,
	    sizeof buf), -EACCES);
	ck_assert_int_eq(flaky_path_find("b/sub", dir, NULL, buf, sizeof buf),
	    -EISDIR);
	ck_assert_int_eq(flaky_path_find("a/none", dir, NULL, buf, sizeof buf),
	    -ENOENT);
	ck_assert_int_eq(flaky_path_find("a/plain/x", dir, NULL, buf,
	    sizeof buf), -ENOTDIR);

	/* Nothing found: the most telling reason, whatever the order. */
	ck_assert_int_eq(flaky_path_find("none", dir, "a:b", buf, sizeof buf),
	    -ENOENT);
	ck_assert_int_eq(flaky_path_find("sub", dir, "a:b", buf, sizeof buf),
	    -EISDIR);
	ck_assert_int_eq(flaky_path_find("plain", dir, "b:a", buf, sizeof buf),
	    -EACCES);
	snprintf(p, sizeof p, "%s/b/plain", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(flaky_path_find("plain", dir, "b:a", buf, sizeof buf),
	    -EACCES);
	ck_assert_int_eq(flaky_path_find("plain", dir, "a:b", buf, sizeof buf),
	    -EACCES);

	/* A path that does not fit is not found (or too long, by name). */
	ck_assert_int_eq(flaky_path_find("tool", dir, "a", buf, 8), -ENOENT);
	ck_assert_int_eq(flaky_path_find("a/tool", dir, NULL, buf, 8),
	    -ENAMETOOLONG);
	/* No PATH: the default one. */
	ck_assert_int_eq(flaky_path_find("sh", NULL, NULL, buf, sizeof buf),
	    0);
	ck_assert_int_eq(buf[0], '/');

	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

START_TEST(durations)
{
	static const struct { const char *s; int64_t ms; } ok[] = {
		{ "90", 90000 }, { "30s", 30000 }, { "10m", 600000 },
		{ "1h30m", 5400000 }, { "2d", 172800000 },
		{ "2w", 1209600000 }, { "250ms", 250 }, { "1m30s", 90000 },
		{ "0s", 0 },
	};
	static const char *const bad[] = {
		"", "m", "10x", "1.5h", "-3m", "10 m", "1h30", "h1",
		"99999999999999999999d",
	};
	int64_t	 ms;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ok); i++) {
		ck_assert_int_eq(flaky_parse_duration(ok[i].s, &ms), 0);
		ck_assert_int_eq(ms, ok[i].ms);
	}
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++)
		ck_assert_int_lt(flaky_parse_duration(bad[i], &ms), 0);
}
END_TEST

START_TEST(times)
{
	static const struct { const char *s; int64_t ms; } ok[] = {
		{ "2026-11-01", 1793491200000LL },
		{ "2026-11-01T12:00", 1793534400000LL },
		{ "2026-11-01T12:00:00Z", 1793534400000LL },
		{ "2026-11-01 13:00:00+01:00", 1793534400000LL },
		{ "2026-11-01T12:00:00.250Z", 1793534400250LL },
		{ "1970-01-01", 0 },
	};
	static const char *const bad[] = {
		"2026-13-01", "2026-02-31", "2026-11-01T25:00", "yesterday",
		"2026-11-01T12:00:00+", "2026-11-1", "",
	};
	char	 buf[32];
	int64_t	 ms;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ok); i++) {
		ck_assert_msg(flaky_parse_time(ok[i].s, &ms) == 0, "%s", ok[i].s);
		ck_assert_int_eq(ms, ok[i].ms);
	}
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++)
		ck_assert_msg(flaky_parse_time(bad[i], &ms) < 0, "%s", bad[i]);
	ck_assert_str_eq(flaky_format_time(1793534400250LL, buf, sizeof buf),
	    "2026-11-01T12:00:00Z");
	ck_assert_str_eq(flaky_format_day(1793534400250LL, buf, sizeof buf),
	    "2026-11-01");
}
END_TEST

START_TEST(buffers)
{
	struct flaky_buf b;
	char	*s;

	flaky_buf_init(&b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "");
	for (int i = 0; i < 1000; i++)
		flaky_buf_printf(&b, "%d,", i);
	ck_assert_int_eq(b.oom, 0);
	ck_assert(strncmp(b.data, "0,1,2,", 6) == 0);
	ck_assert_int_eq(b.len, strlen(b.data));
	s = flaky_buf_steal(&b);
	ck_assert_ptr_null(b.data);
	free(s);
}
END_TEST

START_TEST(ints)
{
	long long v;

	ck_assert_int_eq(flaky_parse_int("50", 1, 100, &v), 0);
	ck_assert_int_eq(v, 50);
	ck_assert_int_eq(flaky_parse_int("0", 1, 100, &v), -ERANGE);
	ck_assert_int_eq(flaky_parse_int("-3", 1, 100, &v), -ERANGE);
	ck_assert_int_eq(flaky_parse_int("5x", 1, 100, &v), -EINVAL);
	ck_assert_int_eq(flaky_parse_int("", 1, 100, &v), -EINVAL);
	ck_assert_int_eq(flaky_parse_int(" 5", 1, 100, &v), -EINVAL);
}
END_TEST

/* The server's integers as strtoll reads them, and where they end. */
START_TEST(scan_ints)
{
	static const char *const in[] = {
		"0", "7", "-7", "123456789012345678", "-123456789012345678",
		"9223372036854775807", "-9223372036854775808",
		"99999999999999999999", "-99999999999999999999", "12.5",
		"3,4}", "", "-", "x", "-x", "007",
	};

	for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
		const char	*end;
		char		*want_end;
		long long	 want = strtoll(in[i], &want_end, 10);

		ck_assert_msg(flaky_scan_int(in[i], &end) == want, "%s", in[i]);
		ck_assert_msg(end == want_end, "%s: end", in[i]);
	}
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("util");
	TCase	*tc = tcase_create("util");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, durations);
	tcase_add_test(tc, times);
	tcase_add_test(tc, buffers);
	tcase_add_test(tc, ints);
	tcase_add_test(tc, scan_ints);
	tcase_add_test(tc, read_file);
	tcase_add_test(tc, read_file_head);
	tcase_add_test(tc, path_find);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
