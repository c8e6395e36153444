/* Inside the JUnit parser: shared by junit.c (the parser, whole files)
 * and junit_stream.c (files of any size, testcase by testcase). */
#ifndef FLAKY_JUNIT_INT_H
#define FLAKY_JUNIT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <expat.h>

#include "runner.h"

#define JUNIT_CHUNK	(64 * 1024)	/* bytes fed to expat at a time */
#define JUNIT_ATTEMPTS_MAX	32	/* retries kept per testcase */

/* One parse. */
struct jx {
	XML_Parser		 p;
	const char		*name;
	struct flaky_results	 res;
	struct parse_ctx	 ctx;
	int			 depth;
	int64_t			 fed;		/* bytes given to expat */
	int			 pytest;	/* in pytest's <testsuite> */
	int			 pytest_depth;
	int			 any_pytest;
	long			 root_total;	/* <testsuites tests=> */
	long			 suite_total;	/* top <testsuite tests=> */
	int			 suites_seen;
	/* The open testcase. */
	int			 in_case;
	int			 case_depth;
	int			 outcome;
	int			 flaky;		/* only flaky* children */
	int			 text_on;	/* keep character data */
	int64_t			 duration_us;
	struct flaky_buf	 id;
	struct flaky_buf	 msg;
	char			 err[256];	/* the reason we stopped */
	/* flaky_parse_junit_ex: the retries of the open testcase. */
	struct flaky_junit_extra *extra;
	int			 primary;	/* <failure>/<error> outcome */
	char			*primary_msg;
	int			 natt;
	int			 att_flaky;	/* a flaky* child was seen */
	int			 att_out[JUNIT_ATTEMPTS_MAX];
	char			*att_msg[JUNIT_ATTEMPTS_MAX];
	/* flaky_junit_stream: each testcase handed over as it ends. */
	flaky_junit_fn		 fn;
	void			*arg;
	struct flaky_junit_extra own;	/* x->extra of a stream */
	size_t			 ncases;
	size_t			 natt_total;	/* attempts handed over */
	int			 fn_err;	/* what fn returned */
	char			*fn_errbuf;	/* fn's message goes here */
	size_t			 fn_errlen;
};

/* A parser with the safety settings; 0 or -ENOMEM (free it anyway). */
int	 jx_init(struct jx *, const char *name);
void	 jx_free(struct jx *);
/* Feed a chunk of at most JUNIT_CHUNK bytes (so that the markup bound
 * holds); 0, or a negative errno with err filled. */
int	 jx_feed(struct jx *, const char *, size_t, int final, char *err,
	    size_t errlen);

#endif
