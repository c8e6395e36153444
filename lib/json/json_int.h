/* What json.c and json_read.c share and no one else needs. */
#ifndef FLAKY_JSON_INT_H
#define FLAKY_JSON_INT_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0: the
 * shortest form only, no surrogates, nothing past U+10FFFF. */
size_t	 json_utf8_len(const unsigned char *s, size_t n);

#endif
