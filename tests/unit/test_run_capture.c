/* capture: what is kept of a run's output, both streams apart, the head
 * and tail within the bound, the rest counted; the data callback sees
 * every byte; out of memory, the marker says so and stands where the
 * bytes went missing. */
#include "buildconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <event2/event.h>

#include "run/run.h"
#include "util/util.h"
#include "run/spawn_int.h"
#include "run_test.h"

START_TEST(streams)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "printf 'out 1\\n'; printf 'err 1\\n' >&2; printf 'out 2'", NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s;

	ctx_init(&c);
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	ck_assert_str_eq(s, "out 1\nout 2");
	free(s);
	s = output(p, FLAKY_STDERR);
	ck_assert_str_eq(s, "err 1\n");
	free(s);
	ck_assert_int_eq(flaky_proc_info(p)->bytes[0], 11);
	ck_assert_int_eq(flaky_proc_info(p)->bytes[1], 6);
	ck_assert_int_eq(flaky_proc_info(p)->dropped[0], 0);
	ck_assert_int_eq(c.seen[0], 11);
	ck_assert_int_eq(c.seen[1], 6);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* 50 MB of numbered lines: the head and tail are kept exactly, the
 * rest counted, and the data callback saw every byte. */
START_TEST(flood)
{
	const long	 last = 6500000;
	char		 lastarg[32];
	char *const	 argv[] = { "seq", "1", lastarg, NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	const struct flaky_proc_info *pi;
	struct flaky_buf want;
	struct flaky_proc *p;
	struct ctx	 c;
	size_t		 half = FLAKY_CAPTURE_DEFAULT / 4, total = 0;
	struct flaky_buf head, tail;
	char		*s, num[32];
	long		 i;
	size_t		 n;

	/* The expected text without holding 50 MB: the length by digits,
	 * the head forwards, the tail from the number it starts in. */
	snprintf(lastarg, sizeof lastarg, "%ld", last);
	for (long lo = 1, d = 1; lo <= last; lo *= 10, d++)
		total += (size_t)((last < lo * 10 - 1 ? last : lo * 10 - 1) -
		    lo + 1) * (size_t)(d + 1);
	ck_assert_uint_gt(total, 50 * 1000 * 1000);
	flaky_buf_init(&head);
	flaky_buf_init(&tail);
	for (i = 1; head.len < half; i++)
		flaky_buf_printf(&head, "%ld\n", i);
	for (i = last, n = 0; n < half; i--)
		n += (size_t)snprintf(num, sizeof num, "%ld\n", i);
	for (i++; i <= last; i++)
		flaky_buf_printf(&tail, "%ld\n", i);
	flaky_buf_init(&want);
	flaky_buf_add(&want, head.data, half);
	flaky_buf_printf(&want, "\n[... %zu bytes not kept ...]\n",
	    total - 2 * half);
	flaky_buf_add(&want, tail.data + tail.len - half, half);
	ck_assert(!want.oom && !head.oom && !tail.oom);
	flaky_buf_free(&head);
	flaky_buf_free(&tail);

	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->exit_code, 0);
	ck_assert_uint_eq(pi->bytes[0], total);
	ck_assert_uint_eq(pi->dropped[0], total - 2 * half);
	ck_assert_uint_eq(c.seen[0], total);
	s = output(p, FLAKY_STDOUT);
	ck_assert_uint_eq(strlen(s), want.len);
	ck_assert(memcmp(s, want.data, want.len) == 0);
	free(s);
	flaky_buf_free(&want);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* A small bound over many small writes: the tail ring wraps many times. */
START_TEST(small_bound)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "i=1; while [ $i -le 3000 ]; do echo $i; echo e$i >&2; "
	    "i=$((i + 1)); done", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .capture_max = 101 };
	const struct flaky_proc_info *pi;
	struct flaky_buf all, want;
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s;

	/* stdout keeps 50 (25 + 25), stderr 51 (25 + 26) */
	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	for (int stream = 0; stream < 2; stream++) {
		size_t	 cap = stream ? 51 : 50, head = cap / 2;

		flaky_buf_init(&all);
		flaky_buf_init(&want);
		for (int i = 1; i <= 3000; i++)
			flaky_buf_printf(&all, stream ? "e%d\n" : "%d\n", i);
		flaky_buf_add(&want, all.data, head);
		flaky_buf_printf(&want, "\n[... %zu bytes not kept ...]\n",
		    all.len - cap);
		flaky_buf_add(&want, all.data + all.len - (cap - head),
		    cap - head);
		ck_assert_uint_eq(pi->bytes[stream], all.len);
		ck_assert_uint_eq(pi->dropped[stream], all.len - cap);
		s = output(p, stream);
		ck_assert_str_eq(s, flaky_buf_cstr(&want));
		free(s);
		flaky_buf_free(&all);
		flaky_buf_free(&want);
	}
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* Out of memory for a stream's capture: every byte still reaches the data
 * callback and is counted as produced and not kept, the marker says why,
 * and the proc says its output was cut short. */
START_TEST(oom_spawn)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "printf hello; printf oops >&2", NULL };
	struct flaky_spawn_opts o = { .argv = argv,
	    .capture_max = CAPTURE_NO_MEMORY };
	const struct flaky_proc_info *pi;
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s;

	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->exit_code, 0);
	ck_assert_int_eq(pi->capture_oom, 1);
	ck_assert_uint_eq(pi->bytes[0], 5);
	ck_assert_uint_eq(pi->dropped[0], 5);
	ck_assert_uint_eq(pi->bytes[1], 4);
	ck_assert_uint_eq(pi->dropped[1], 4);
	ck_assert_uint_eq(c.seen[0], 5);
	ck_assert_uint_eq(c.seen[1], 4);
	s = output(p, FLAKY_STDOUT);
	ck_assert_str_eq(s, "\n[... 5 bytes not kept (out of memory) ...]\n");
	free(s);
	s = output(p, FLAKY_STDERR);
	ck_assert_str_eq(s, "\n[... 4 bytes not kept (out of memory) ...]\n");
	free(s);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* The head was kept, the tail cannot be had: the head stops where the
 * loss begins (nothing later slips into it), so the marker stands where
 * the bytes went missing. -ENOMEM once, then the bytes are only counted. */
START_TEST(oom_tail)
{
	struct capture	 c;
	struct flaky_buf b;

	capture_init(&c, 8);
	c.tail_cap = CAPTURE_NO_MEMORY;
	ck_assert_int_eq(capture_feed(&c, "ab", 2), 0);
	ck_assert_int_eq(capture_feed(&c, "cdefgh", 6), -ENOMEM);
	ck_assert_int_eq(capture_feed(&c, "ijk", 3), 0);
	ck_assert_uint_eq(c.total, 11);
	flaky_buf_init(&b);
	ck_assert_int_eq(capture_output(&c, &b), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b),
	    "abcd\n[... 7 bytes not kept (out of memory) ...]\n");
	flaky_buf_free(&b);
	capture_free(&c);
}
END_TEST

/* No head to be had: what comes goes to the tail, after the marker, and
 * never to a head allocated later. */
START_TEST(oom_head)
{
	struct capture	 c;
	struct flaky_buf b;

	capture_init(&c, 8);
	c.head_cap = CAPTURE_NO_MEMORY;
	ck_assert_int_eq(capture_feed(&c, "abc", 3), -ENOMEM);
	ck_assert_int_eq(capture_feed(&c, "defgh", 5), 0);
	flaky_buf_init(&b);
	ck_assert_int_eq(capture_output(&c, &b), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b),
	    "\n[... 4 bytes not kept (out of memory) ...]\nefgh");
	flaky_buf_free(&b);
	capture_free(&c);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("capture");
	TCase	*tc = tcase_create("capture");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, streams);
	tcase_add_test(tc, flood);
	tcase_add_test(tc, small_bound);
	tcase_add_test(tc, oom_spawn);
	tcase_add_test(tc, oom_tail);
	tcase_add_test(tc, oom_head);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
