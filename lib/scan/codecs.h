/* The text codecs a coding cookie may name: the aliases and codec modules
 * of Python 3.11's encodings package, by normalized name. The table is
 * generated at build time (gen-codecs.py) from codecs.txt, which says
 * where the list comes from. Not a public header. */
#ifndef FLAKY_SCAN_CODECS_H
#define FLAKY_SCAN_CODECS_H

#include <stddef.h>

/* What a cookie's codec means for the scan: the bytes must be UTF-8, or
 * ASCII, or the codec decodes anything we tokenize the same (one byte per
 * character, or a multi-byte codec we do not check), or Python cannot
 * decode a source file with it at all. */
enum { ENC_UTF8, ENC_ASCII, ENC_OTHER, ENC_UNKNOWN };

/* Bits of where: the name is an alias (also found with "." read as "_"),
 * a codec module (found only as it is). */
#define CODEC_ALIAS	1
#define CODEC_MODULE	2

struct scan_codec {
	const char	*name;
	unsigned char	 kind;		/* ENC_* */
	unsigned char	 where;		/* CODEC_ALIAS | CODEC_MODULE */
};

/* Sorted byte-wise by name, for bsearch(). */
extern const struct scan_codec	 scan_codecs[];
extern const size_t		 scan_ncodecs;

#endif
