/* control: every request through the encoder and back through the
 * decoder, the decoder's answers to bad lines, and replies written with
 * the protocol's writer and read back with its reader. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "util/util.h"

/* Encode req, check the line, decode it and compare. */
static void
round_trip(const struct flaky_ctl_request *req, const char *want_line)
{
	struct flaky_ctl_request back;
	struct flaky_buf b;
	char		 err[256] = "";

	flaky_buf_init(&b);
	ck_assert_msg(flaky_ctl_request_encode(req, &b, err, sizeof err) == 0,
	    "encode: %s", err);
	ck_assert_str_eq(flaky_buf_cstr(&b), want_line);
	ck_assert(b.len <= FLAKY_CTL_LINE_MAX + 1);
	b.data[--b.len] = '\0';		/* the daemon reads without it */
	ck_assert_msg(flaky_ctl_request_decode(b.data, &back, err,
	    sizeof err) == 0, "decode '%s': %s", want_line, err);
	ck_assert_int_eq(back.type, req->type);
	if (req->type == FLAKY_CTL_RUN) {
		ck_assert_str_eq(back.target, req->target);
		ck_assert_int_eq(back.runs, req->runs);
	}
	flaky_buf_free(&b);
}

/* Decode line; the code, and the message compared when want is set. */
static int
decode(const char *line, const char *want)
{
	struct flaky_ctl_request req;
	char		 buf[2048], err[512] = "";
	int		 rc;

	snprintf(buf, sizeof buf, "%s", line);
	rc = flaky_ctl_request_decode(buf, &req, err, sizeof err);
	if (want != NULL)
		ck_assert_str_eq(err, want);
	return rc;
}

START_TEST(names)
{
	/* Every request has a distinct wire name; past the last, none. */
	for (int i = 0; i < FLAKY_CTL_NTYPES; i++) {
		const char *n = flaky_ctl_request_name(i);

		ck_assert_ptr_nonnull(n);
		for (int k = 0; k < i; k++)
			ck_assert_str_ne(n, flaky_ctl_request_name(k));
	}
	ck_assert_ptr_null(flaky_ctl_request_name(FLAKY_CTL_NTYPES));
	ck_assert_str_eq(flaky_ctl_request_name(FLAKY_CTL_STATUS), "status");
	ck_assert_str_eq(flaky_ctl_request_name(FLAKY_CTL_RUN), "run");
	ck_assert_str_eq(flaky_ctl_request_name(FLAKY_CTL_RELOAD), "reload");
}
END_TEST

START_TEST(every_request)
{
	struct flaky_ctl_request req;
	char		 name[FLAKY_CTL_LINE_MAX], line[FLAKY_CTL_LINE_MAX + 16];

	for (int i = 0; i < FLAKY_CTL_NTYPES; i++) {
		memset(&req, 0, sizeof req);
		req.type = i;
		if (i == FLAKY_CTL_RUN)
			req.target = "shop-pytest";
		snprintf(line, sizeof line, "%s%s\n",
		    flaky_ctl_request_name(i), i == FLAKY_CTL_RUN ?
		    " shop-pytest" : "");
		round_trip(&req, line);
	}
	/* run with a count, at both ends of its range. */
	req = (struct flaky_ctl_request){ FLAKY_CTL_RUN, "a.b_c-1", 1 };
	round_trip(&req, "run a.b_c-1 1\n");
	req.runs = FLAKY_CTL_RUNS_MAX;
	round_trip(&req, "run a.b_c-1 10000\n");
	/* A name of any bytes but blanks and controls, UTF-8 included. */
	req = (struct flaky_ctl_request){ FLAKY_CTL_RUN, "caf\xc3\xa9/x", 0 };
	round_trip(&req, "run caf\xc3\xa9/x\n");
	/* The longest name that still fits the line. */
	memset(name, 'n', sizeof name);
	name[FLAKY_CTL_LINE_MAX - strlen("run ")] = '\0';
	req = (struct flaky_ctl_request){ FLAKY_CTL_RUN, name, 0 };
	snprintf(line, sizeof line, "run %s\n", name);
	round_trip(&req, line);
}
END_TEST

START_TEST(encode_refuses)
{
	static const char *bad_names[] = { "", "a b", "a\tb", "a\nstatus",
	    "a\r", "\x01", "x\x7f" };
	struct flaky_ctl_request req = { FLAKY_CTL_RUN, NULL, 0 };
	struct flaky_buf b;
	char		 err[256], name[FLAKY_CTL_LINE_MAX + 1];

	flaky_buf_init(&b);
	flaky_buf_adds(&b, "kept");
	ck_assert_int_eq(flaky_ctl_request_encode(&req, &b, err, sizeof err),
	    -EINVAL);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad_names); i++) {
		req.target = bad_names[i];
		ck_assert_int_eq(flaky_ctl_request_encode(&req, &b, err,
		    sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, "not a target name") != NULL, "%s",
		    err);
	}
	req.target = "a";
	req.runs = -1;
	ck_assert_int_eq(flaky_ctl_request_encode(&req, &b, err, sizeof err),
	    -EINVAL);
	req.runs = FLAKY_CTL_RUNS_MAX + 1;
	ck_assert_int_eq(flaky_ctl_request_encode(&req, &b, err, sizeof err),
	    -EINVAL);
	ck_assert_str_eq(err, "runs: expected a number from 1 to 10000");
	/* One byte over the line bound; the buffer is left as it was. */
	memset(name, 'n', sizeof name);
	name[FLAKY_CTL_LINE_MAX - strlen("run ") + 1] = '\0';
	req.target = name;
	req.runs = 0;
	flaky_buf_reset(&b);
	flaky_buf_adds(&b, "kept");
	ck_assert_int_eq(flaky_ctl_request_encode(&req, &b, err, sizeof err),
	    -EMSGSIZE);
	ck_assert_str_eq(flaky_buf_cstr(&b), "kept");
	req = (struct flaky_ctl_request){ FLAKY_CTL_NTYPES, NULL, 0 };
	ck_assert_int_eq(flaky_ctl_request_encode(&req, &b, err, sizeof err),
	    -EINVAL);
	flaky_buf_free(&b);
}
END_TEST

START_TEST(decode_lines)
{
	struct flaky_ctl_request req;
	char		 line[64], big[FLAKY_CTL_LINE_MAX + 2];

	/* Blank lines get an answer too: an error, not silence. */
	ck_assert_int_eq(decode("", FLAKY_CTL_ERR_EMPTY), -ENODATA);
	ck_assert_int_eq(decode(" \t\r", FLAKY_CTL_ERR_EMPTY), -ENODATA);
	/* JSON is no request: its first word is unknown. */
	ck_assert_int_eq(decode("{\"request\":\"status\"}", NULL), -EINVAL);
	/* Words split on blanks, a CR from a telnet-ish client included. */
	snprintf(line, sizeof line, "  run\tmanual  3\r");
	ck_assert_int_eq(flaky_ctl_request_decode(line, &req, NULL, 0), 0);
	ck_assert_int_eq(req.type, FLAKY_CTL_RUN);
	ck_assert_str_eq(req.target, "manual");
	ck_assert_int_eq(req.runs, 3);
	/* The messages the daemon sends back (docs/daemon.md). */
	ck_assert_int_eq(decode("frobnicate", "unknown request (expected "
	    "status, run TARGET [RUNS] or reload)"), -EINVAL);
	ck_assert_int_eq(decode("STATUS", NULL), -EINVAL);
	ck_assert_int_eq(decode("run", "usage: run TARGET [RUNS]"), -EINVAL);
	ck_assert_int_eq(decode("run a 1 2", "usage: run TARGET [RUNS]"),
	    -EINVAL);
	ck_assert_int_eq(decode("status now", "usage: status"), -EINVAL);
	ck_assert_int_eq(decode("reload x y z w", "usage: reload"), -EINVAL);
	ck_assert_int_eq(decode("run manual 0", "runs: expected a number "
	    "from 1 to 10000"), -EINVAL);
	ck_assert_int_eq(decode("run manual 10001", NULL), -EINVAL);
	ck_assert_int_eq(decode("run manual 3x", NULL), -EINVAL);
	ck_assert_int_eq(decode("run manual -1", NULL), -EINVAL);
	memset(big, 'x', sizeof big);
	big[sizeof big - 1] = '\0';
	memcpy(big, "status ", 7);
	ck_assert_int_eq(decode(big, FLAKY_CTL_ERR_TOO_LONG), -EMSGSIZE);
}
END_TEST

START_TEST(reply_ok)
{
	struct flaky_buf b;
	struct flaky_jw	 w;
	struct flaky_json *j;
	const struct flaky_json *t;
	char		 err[256];

	flaky_buf_init(&b);
	flaky_ctl_reply_begin(&w, &b);
	flaky_jw_key(&w, FLAKY_CTL_F_PID);
	flaky_jw_int(&w, 42);
	flaky_jw_key(&w, FLAKY_CTL_F_STOPPING);
	flaky_jw_bool(&w, 0);
	flaky_jw_key(&w, FLAKY_CTL_F_TARGETS);
	flaky_jw_array_begin(&w);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, FLAKY_CTL_F_NAME);
	flaky_jw_string(&w, "a\"b\xff");
	flaky_jw_key(&w, FLAKY_CTL_F_STATE);
	flaky_jw_string(&w, FLAKY_CTL_STATE_IDLE);
	flaky_jw_key(&w, FLAKY_CTL_F_LAST);
	flaky_jw_null(&w);
	flaky_jw_object_end(&w);
	flaky_jw_array_end(&w);
	ck_assert_int_eq(flaky_ctl_reply_end(&w), 0);
	/* The bytes on the wire: compact, one line. */
	ck_assert_str_eq(flaky_buf_cstr(&b), "{\"ok\":true,\"pid\":42,"
	    "\"stopping\":false,\"targets\":[{\"name\":\"a\\\"b\\ufffd\","
	    "\"state\":\"idle\",\"last\":null}]}\n");
	ck_assert_int_eq(flaky_ctl_reply_parse(b.data, b.len - 1, &j, err,
	    sizeof err), 0);
	ck_assert(flaky_json_get_num(j, FLAKY_CTL_F_PID) == 42);
	t = &flaky_json_get(j, FLAKY_CTL_F_TARGETS)->items[0];
	ck_assert_str_eq(flaky_json_get_str(t, FLAKY_CTL_F_NAME),
	    "a\"b\xef\xbf\xbd");
	ck_assert_int_eq(flaky_json_get(t, FLAKY_CTL_F_LAST)->type,
	    FLAKY_JSON_NULL);
	flaky_json_free(j);
	flaky_buf_free(&b);
}
END_TEST

START_TEST(reply_errors)
{
	struct flaky_buf b;
	struct flaky_json *j = (struct flaky_json *)&j;
	char		 err[256];

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_ctl_reply_error(&b, "no target named 'x'"), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "{\"ok\":false,\"error\":"
	    "\"no target named 'x'\"}\n");
	ck_assert_int_eq(flaky_ctl_reply_parse(b.data, b.len, &j, err,
	    sizeof err), -EREMOTEIO);
	ck_assert_ptr_null(j);
	ck_assert_str_eq(err, "no target named 'x'");
	ck_assert_int_eq(flaky_ctl_reply_parse("{\"ok\":false}", 12, &j, err,
	    sizeof err), -EREMOTEIO);
	ck_assert_str_eq(err, "flakyd refused");
	/* Valid JSON that is no reply. */
	ck_assert_int_eq(flaky_ctl_reply_parse("[true]", 6, &j, err,
	    sizeof err), -EPROTO);
	ck_assert_int_eq(flaky_ctl_reply_parse("{\"ok\":1}", 8, &j, err,
	    sizeof err), -EPROTO);
	/* A reply cut short, or nested past the reply bound. */
	ck_assert_int_eq(flaky_ctl_reply_parse("{\"ok\":true,\"pid\":", 17,
	    &j, err, sizeof err), -EBADMSG);
	flaky_buf_reset(&b);
	flaky_buf_adds(&b, "{\"ok\":true,\"x\":");
	for (int i = 0; i < FLAKY_CTL_REPLY_DEPTH; i++)
		flaky_buf_addc(&b, '[');
	for (int i = 0; i < FLAKY_CTL_REPLY_DEPTH; i++)
		flaky_buf_addc(&b, ']');
	flaky_buf_addc(&b, '}');
	ck_assert_int_eq(flaky_ctl_reply_parse(b.data, b.len, &j, err,
	    sizeof err), -E2BIG);
	flaky_buf_free(&b);
}
END_TEST

/* The errors flakyd closes a connection with, or answers a line that is
 * no request with, are replies flakyctl reads as the daemon's "no". */
START_TEST(reply_refusals)
{
	static const char *const msgs[] = { FLAKY_CTL_ERR_TOO_LONG,
	    FLAKY_CTL_ERR_EMPTY, FLAKY_CTL_ERR_NUL, FLAKY_CTL_ERR_BUSY,
	    FLAKY_CTL_ERR_IDLE, FLAKY_CTL_ERR_REPLACED };
	struct flaky_json *j;
	struct flaky_buf b;
	char		 err[256];

	for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
		flaky_buf_init(&b);
		ck_assert_int_eq(flaky_ctl_reply_error(&b, msgs[i]), 0);
		/* One line: the newline last and only there. */
		ck_assert_ptr_eq(memchr(b.data, '\n', b.len),
		    b.data + b.len - 1);
		ck_assert_int_eq(flaky_ctl_reply_parse(b.data, b.len - 1, &j,
		    err, sizeof err), -EREMOTEIO);
		ck_assert_ptr_null(j);
		ck_assert_str_eq(err, msgs[i]);
		flaky_buf_free(&b);
	}
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("control");
	TCase	*req = tcase_create("requests");
	TCase	*rep = tcase_create("replies");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(req, 30);
	tcase_add_test(req, names);
	tcase_add_test(req, every_request);
	tcase_add_test(req, encode_refuses);
	tcase_add_test(req, decode_lines);
	suite_add_tcase(s, req);
	tcase_set_timeout(rep, 30);
	tcase_add_test(rep, reply_ok);
	tcase_add_test(rep, reply_errors);
	tcase_add_test(rep, reply_refusals);
	suite_add_tcase(s, rep);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
