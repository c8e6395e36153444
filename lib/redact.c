/* redact: placeholder until it lands. */
#include "config.h"
