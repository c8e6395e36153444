/* The entry points of scan.h: scan a buffer or a regular file, dump the
 * token stream. An invalid file is a skipped result, not an error. */
#include "buildconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan/scan-private.h"
#include "util/util.h"

/* Scan one source buffer (see scan.h). */
int
flaky_pyscan_buffer(const char *src, size_t len,
    struct flaky_scan_result **ret, char *err, size_t errlen)
{
	struct flaky_scan_result *res;
	struct lexer	*lx = NULL;
	struct scan	 sc;
	int		 rc = 0;

	*ret = NULL;
	memset(&sc, 0, sizeof sc);
	if (len > FLAKY_PYSCAN_MAX_BYTES)
		return flaky_error(err, errlen, EFBIG, "larger than %d bytes",
		    FLAKY_PYSCAN_MAX_BYTES);
	if ((res = calloc(1, sizeof(*res))) == NULL ||
	    (lx = calloc(1, sizeof(*lx))) == NULL) {
		rc = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	res->bytes = len;
	if (lex_file(lx, src, len) < 0)
		goto invalid;
	sc.lx = lx;
	sc.res = res;
	if ((sc.memo = malloc(lx->ntoks * sizeof(*sc.memo))) == NULL)
		goto oom;
	memset(sc.memo, 0xff, lx->ntoks * sizeof(*sc.memo));
	if (scan_tokens(&sc) < 0 && !sc.oom)
		goto invalid;
	if (sc.oom || lx->oom || scan_build_result(&sc) < 0)
		goto oom;
	*ret = res;
	res = NULL;
	goto out;
invalid:
	if (lx->oom)
		goto oom;
	/* Not valid Python: a skipped file, not an error. */
	flaky_scan_result_free(res);
	if ((res = calloc(1, sizeof(*res))) == NULL)
		goto oom;
	res->skipped = 1;
	res->bytes = len;
	snprintf(res->reason, sizeof res->reason, "line %d: %s", lx->errline,
	    lx->errmsg);
	*ret = res;
	res = NULL;
	goto out;
oom:
	rc = flaky_error(err, errlen, ENOMEM, "out of memory");
out:
	flaky_scan_result_free(res);
	if (lx != NULL) {
		free(lx->toks);
		free(lx->lines);
		free(lx);
	}
	free(sc.scopes);
	free(sc.finds);
	free(sc.memo);
	free(sc.fixtures);
	return rc;
}

/* The token dump of a source buffer (see scan.h). */
int
flaky_pyscan_tokens(const char *src, size_t len, struct flaky_buf *out,
    char *err, size_t errlen)
{
	static const char *const names[] = { "?", "NAME", "NUMBER", "STRING",
	    "OP", "NEWLINE", "INDENT", "DEDENT", "FSTART", "FEND", "END" };
	struct lexer	*lx;
	int		 rc = 0;

	if (len > FLAKY_PYSCAN_MAX_BYTES)
		return flaky_error(err, errlen, EFBIG, "larger than %d bytes",
		    FLAKY_PYSCAN_MAX_BYTES);
	if ((lx = calloc(1, sizeof(*lx))) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if (lex_file(lx, src, len) < 0) {
		rc = lx->oom ? flaky_error(err, errlen, ENOMEM, "out of memory") :
		    flaky_error(err, errlen, EINVAL, "line %d: %s", lx->errline,
		    lx->errmsg);
		goto out;
	}
	for (size_t i = 0; i < lx->ntoks; i++) {
		const struct tok *t = &lx->toks[i];

		flaky_buf_printf(out, "%d %s", t->line, names[t->type]);
		if (t->type <= T_OP) {
			flaky_buf_addc(out, ' ');
			flaky_buf_add(out, src + t->off, t->len);
		}
		flaky_buf_addc(out, '\n');
	}
	if (out->oom)
		rc = flaky_error(err, errlen, ENOMEM, "out of memory");
out:
	free(lx->toks);
	free(lx->lines);
	free(lx);
	return rc;
}

/* Read a regular file whole and scan it (see scan.h). */
int
flaky_pyscan_file(const char *path, struct flaky_scan_result **ret,
    char *err, size_t errlen)
{
	char		*buf = NULL;
	size_t		 len = 0;
	int		 rc;

	*ret = NULL;
	if ((rc = flaky_read_file(path, FLAKY_PYSCAN_MAX_BYTES, &buf, &len,
	    err, errlen)) < 0)
		return rc;
	if ((rc = flaky_pyscan_buffer(buf, len, ret, err, errlen)) < 0 &&
	    err != NULL && errlen > 0) {
		char	 msg[256];

		snprintf(msg, sizeof msg, "%s", err);
		flaky_error(err, errlen, -rc, "%s: %s", path, msg);
	}
	free(buf);
	return rc;
}
