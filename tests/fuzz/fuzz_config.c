/* libFuzzer target for the YAML schedule reader: any bytes give a config
 * or one FILE:LINE:COL line, never a crash, a leak or a hang. */
#include "buildconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flaky_config	*cfg = NULL;
	char			 err[1024];

	err[0] = '\0';
	if (flaky_config_parse_buffer("fuzz.yaml", (const char *)data, size,
	    FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err, sizeof err) < 0) {
		if (cfg != NULL || strncmp(err, "fuzz.yaml:", 10) != 0 ||
		    strchr(err, '\n') != NULL)
			abort();
		return 0;
	}
	flaky_config_free(cfg);
	return 0;
}
