/* config: placeholder until it lands. */
#include "config.h"
