/* placeholder */
#include "config.h"

#include "flakyctl.h"

int
cmd_analyze(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	return EXIT_ERROR;
}
