/* unittest output -> results. Placeholder until its parser lands. */
#include "config.h"

#include "runner.h"

static int
detect(const char *line, size_t len)
{
	(void)line;
	(void)len;
	return 0;
}

static int
line(struct parse_ctx *ctx, const char *s, size_t len)
{
	(void)ctx;
	(void)s;
	(void)len;
	return 0;
}

const struct runner runner_unittest = {
	.name = "unittest",
	.detect = detect,
	.line = line,
};
