/* flakyctl scan: placeholder until pyscan lands. */
#include "config.h"

#include "flakyctl.h"

int
cmd_scan(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	ctl_usage_error("scan", "not implemented yet");
	return EXIT_ERROR;
}
