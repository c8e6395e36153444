/* diagnose, the stacks of hung runs (issue 33): real dumps of each
 * runtime (tests/fixtures/stacks, taken by flaky from examples/hangs, the
 * demo's directory renamed /src/demo) folded into where the test waited,
 * deadlocks named, a runner's own dump read, and the words of a test's
 * timeouts. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "store/store.h"
#include "util/util.h"

/* A capture of one fixture dump as runtime's tool gave it. */
static struct flaky_stacks *
capture(const char *name, const char *runtime, const char *tool)
{
	struct flaky_stacks *s = calloc(1, sizeof *s);
	char	 path[512], err[256];

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(s->v = calloc(1, sizeof *s->v));
	s->n = 1;
	s->procs = 1;
	s->v[0].pid = 4242;
	snprintf(s->v[0].runtime, sizeof s->v[0].runtime, "%s", runtime);
	snprintf(s->v[0].tool, sizeof s->v[0].tool, "%s", tool);
	snprintf(path, sizeof path, "%s/stacks/%s", FIXTURES, name);
	ck_assert_msg(flaky_read_file(path, 1 << 20, &s->v[0].text,
	    &s->v[0].len, err, sizeof err) == 0, "%s", err);
	return s;
}

static int
has(const char *s, const char *sub)
{
	return s != NULL && strstr(s, sub) != NULL;
}

/* Each runtime's dump: the test's thread among all, its innermost own
 * frame, waiting or running. */
START_TEST(fold_each_runtime)
{
	static const struct {
		const char *file, *runtime, *tool, *dir;
		const char *func, *where, *kind, *test;
		int	 line;
	} c[] = {
		{ "pytest-python-faulthandler.txt", "python", "faulthandler",
		  "/src/demo", "wait_for_reply", "test_client.py", "blocked",
		  NULL, 27 },
		{ "unittest-python-faulthandler.txt", "python",
		  "faulthandler", "/src/demo", "wait_for_reply",
		  "test_client.py", "blocked", NULL, 26 },
		{ "go-go-sigquit.txt", "go", "sigquit", "/src/demo",
		  "example.com/hangs.waitForReply", "client_test.go",
		  "blocked", NULL, 32 },
		{ "jest-node-inspector.txt", "node", "inspector", "/src/demo",
		  "spinUntilReady", "__tests__/spin.test.js", "busy",
		  "__tests__/spin.test.js \xe2\x80\xba waits until ready", 9 },
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct flaky_stacks *s = capture(c[i].file, c[i].runtime,
		    c[i].tool);
		const struct flaky_hang *h = &s->hang;
		char	 own[128];

		ck_assert_int_eq(flaky_hang_fold(s, c[i].dir), 0);
		ck_assert_msg(h->func != NULL && strcmp(h->func, c[i].func) ==
		    0, "%s: func %s", c[i].file, h->func);
		ck_assert_msg(h->file != NULL && strcmp(h->file, c[i].where) ==
		    0, "%s: file %s", c[i].file, h->file);
		ck_assert_msg(h->line == c[i].line, "%s: line %d", c[i].file,
		    h->line);
		ck_assert_msg(h->kind != NULL && strcmp(h->kind, c[i].kind) ==
		    0, "%s: kind %s", c[i].file, h->kind);
		ck_assert_ptr_null(h->deadlock);
		ck_assert_int_eq(h->pid, 4242);
		if (c[i].test != NULL)
			ck_assert_str_eq(h->test, c[i].test);
		else
			ck_assert_ptr_null(h->test);
		/* the test's own frame marked (Go's runtime frames come
		 * first: the goroutine parked in them) */
		snprintf(own, sizeof own, "> %s (", c[i].func);
		ck_assert_msg(has(h->frames, own), "%s: %s", c[i].file,
		    h->frames);
		ck_assert_msg(h->site != NULL && has(h->site, c[i].func),
		    "%s: site %s", c[i].file, h->site);
		flaky_stacks_free(s);
	}
}
END_TEST

/* gdb's threads with the lock waits of /proc, the JVM's monitors: a
 * cycle is a deadlock, named with both places and both locks. */
START_TEST(fold_deadlocks)
{
	struct flaky_stacks *s = capture("c-native-gdb.txt", "native", "gdb");
	const struct flaky_hang *h = &s->hang;

	ck_assert_int_eq(flaky_hang_fold(s, "/src/demo/build"), 0);
	ck_assert_str_eq(h->kind, "deadlock");
	ck_assert_msg(has(h->func, "transfer_"), "%s", h->func);
	ck_assert_msg(has(h->deadlock, "`transfer_a_to_b` (/src/demo/bank.c:51)")
	    && has(h->deadlock, "`transfer_b_to_a` (/src/demo/bank.c:64)") &&
	    has(h->deadlock, "holds lock_a and waits for lock_b") &&
	    has(h->deadlock, "holds lock_b and waits for lock_a"), "%s",
	    h->deadlock);
	flaky_stacks_free(s);

	s = capture("java-java-jcmd.txt", "java", "jcmd");
	h = &s->hang;
	ck_assert_int_eq(flaky_hang_fold(s, "/src/demo/build"), 0);
	ck_assert_str_eq(h->kind, "deadlock");
	ck_assert_msg(has(h->deadlock, "`Bank.transferAtoB` (Bank.java:40)") &&
	    has(h->deadlock, "`Bank.transferBtoA` (Bank.java:50)") &&
	    has(h->deadlock, "\"transfer-a-b\"") &&
	    has(h->deadlock, "\"transfer-b-a\""), "%s", h->deadlock);
	flaky_stacks_free(s);
}
END_TEST

/* pytest-timeout's failure names only file:line: the function is the
 * def around that line in the test's file. */
START_TEST(runner_dump)
{
	static const char msg[] = "Failed: Timeout >0.2s\n"
	    "test_timeout.py:10: Failed";
	struct flaky_stacks *s = flaky_hang_from_text(msg, sizeof msg - 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(flaky_hang_fold(s, FIXTURES "/../../examples/"
	    "diagnose"), 0);
	ck_assert_str_eq(s->hang.func, "test_fetch_report");
	ck_assert_str_eq(s->hang.file, "test_timeout.py");
	ck_assert_int_eq(s->hang.line, 10);
	ck_assert_msg(has(s->hang.code, "time.sleep("), "%s", s->hang.code);
	flaky_stacks_free(s);
	/* text with no stack in it is no capture */
	ck_assert_ptr_null(flaky_hang_from_text("AssertionError: 1 != 2", 22));
}
END_TEST

/* A place of hangs: func NULL for a call only. */
static void
site(struct flaky_hang_site *x, const char *func, const char *file, int line,
    const char *call, const char *code, const char *kind, int64_t count)
{
	memset(x, 0, sizeof *x);
	x->func = func ? strdup(func) : NULL;
	x->file = file ? strdup(file) : NULL;
	x->line = line;
	x->call = call ? strdup(call) : NULL;
	x->code = code ? strdup(code) : NULL;
	x->kind = strdup(kind);
	x->count = count;
}

/* The sentence of the issue, and the first patch of each kind. */
START_TEST(words_and_patch)
{
	struct flaky_hangs h = { 0 };
	struct flaky_buf b;

	flaky_buf_init(&b);
	flaky_hang_words(&h, &b);
	ck_assert_uint_eq(b.len, 0);		/* nothing without stacks */
	ck_assert_ptr_null(flaky_hang_cause(&h));
	h.v = calloc(2, sizeof *h.v);
	h.n = 2;
	h.runs = 8;
	site(&h.v[0], "wait_for_reply", "client.py", 88, NULL,
	    "return sock.recv(64)", "blocked", 7);
	site(&h.v[1], NULL, NULL, 0, "socket.recv", NULL, "blocked", 1);
	flaky_hang_words(&h, &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "hung in `wait_for_reply` "
	    "(client.py:88) in 7 of 8 timeouts; 1 in `socket.recv`");
	flaky_buf_reset(&b);
	flaky_hang_patch(&h, &b);
	ck_assert_msg(has(flaky_buf_cstr(&b), "give the wait in "
	    "`wait_for_reply` (client.py:88), `return sock.recv(64)`, a "
	    "timeout (socket.settimeout()"), "%s", flaky_buf_cstr(&b));
	ck_assert_ptr_nonnull(flaky_hang_cause(&h));

	/* a sleep past the limit: the clock's, no timeout to give */
	free(h.v[0].code);
	h.v[0].code = strdup("time.sleep(1.0)");
	flaky_buf_reset(&b);
	flaky_hang_patch(&h, &b);
	ck_assert_msg(has(flaky_buf_cstr(&b), "the test sleeps in "
	    "`wait_for_reply`"), "%s", flaky_buf_cstr(&b));
	ck_assert_ptr_null(flaky_hang_cause(&h));

	/* a deadlock: a lock order */
	free(h.v[0].kind);
	h.v[0].kind = strdup("deadlock");
	h.v[0].deadlock = strdup("`a` holds x and waits for y; `b` holds y "
	    "and waits for x");
	flaky_buf_reset(&b);
	flaky_hang_words(&h, &b);
	ck_assert_msg(has(flaky_buf_cstr(&b), "deadlock in `wait_for_reply`")
	    && has(flaky_buf_cstr(&b), ": `a` holds x"), "%s",
	    flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_hang_patch(&h, &b);
	ck_assert_msg(has(flaky_buf_cstr(&b), "take the locks in one order"),
	    "%s", flaky_buf_cstr(&b));
	flaky_hangs_clear(&h);
	flaky_buf_free(&b);
}
END_TEST

/* The hung thread trimmed after the outermost frame of the test's own
 * code, and said how much was left out. */
START_TEST(stack_trimmed)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	flaky_hang_stack("> f (a.py:1)\n> g (a.py:9)\n  h (lib.py:3)\n"
	    "  i (lib.py:4)\n  j (lib.py:5)\n", 12, &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "> f (a.py:1)\n> g (a.py:9)\n"
	    "  h (lib.py:3)\n  ... (2 more frames)\n");
	flaky_buf_free(&b);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("diagnose_hang");
	TCase	*tc = tcase_create("diagnose_hang");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fold_each_runtime);
	tcase_add_test(tc, fold_deadlocks);
	tcase_add_test(tc, runner_dump);
	tcase_add_test(tc, words_and_patch);
	tcase_add_test(tc, stack_trimmed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
