/* flakyctl report --html: the dashboard's pages (lib/web) in one
 * self-contained file: the overview, the tests table and the page of each
 * unstable test, linked by anchors; no resource from the network. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "util/util.h"
#include "web/web.h"

int
html_report(const char *path, const struct report_head *h,
    const struct flaky_query *q, char *err, size_t errlen)
{
	struct flaky_web_opts o;
	struct flaky_buf b;
	FILE	*f;
	int	 r;

	memset(&o, 0, sizeof o);
	o.now_ms = h->until_ms != INT64_MAX ? h->until_ms - 1 : 0;
	flaky_buf_init(&b);
	if ((r = flaky_web_report(h->store, &o, q, &b, err, errlen)) < 0) {
		flaky_buf_free(&b);
		return r;
	}
	if ((f = fopen(path, "w")) == NULL) {
		flaky_buf_free(&b);
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	}
	fwrite(b.data, 1, b.len, f);
	flaky_buf_free(&b);
	if (ferror(f) | (fclose(f) != 0))
		return flaky_error(err, errlen, EIO, "%s: write error", path);
	return 0;
}
