/* The bytes a source file may hold: a BOM, a PEP 263 coding cookie looked
 * up as Python's encodings package does (the codec table is generated, see
 * codecs.h), UTF-8 validity, and the code points Python rejects in
 * identifiers. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/codecs.h"
#include "scan/lex-private.h"

/* Valid UTF-8 (what CPython decodes a file without a coding cookie as);
 * returns 0 or the offset + 1 of the first bad byte. */
size_t
lex_utf8_check(const unsigned char *s, size_t n)
{
	size_t	 i = 0;

	while (i < n) {
		unsigned char	 c = s[i];
		unsigned	 cp;
		size_t		 len;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else
			return i + 1;
		if (len > n - i)
			return i + 1;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i + 1;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i + 1;
		i += len;
	}
	return 0;
}

/* A PEP 263 coding cookie in the first two lines: 1 and its name,
 * normalized as CPython's get_normal_name() does ("utf_8" -> "utf-8",
 * "latin-1" -> "iso-8859-1"), or 0 when there is none. */
static int
coding_cookie(const char *s, size_t n, char *name, size_t namelen)
{
	size_t	 i = 0;

	for (int line = 0; line < 2 && i < n; line++) {
		size_t	 e = i, k;

		while (e < n && s[e] != '\n' && s[e] != '\r')
			e++;
		k = i;
		while (k < e && (s[k] == ' ' || s[k] == '\t' || s[k] == '\f'))
			k++;
		if (k < e && s[k] == '#') {
			for (size_t j = k; j + 7 < e; j++) {
				size_t	 m = 0, v;

				if (memcmp(s + j, "coding", 6) != 0 ||
				    (s[j + 6] != ':' && s[j + 6] != '='))
					continue;
				v = j + 7;
				while (v < e && (s[v] == ' ' || s[v] == '\t'))
					v++;
				/* CPython takes ASCII letters, digits, "-", "_"
				 * and "." here; a name too long for us is no
				 * codec anyway. */
				while (v < e && ((s[v] >= 'a' && s[v] <= 'z') ||
				    (s[v] >= 'A' && s[v] <= 'Z') ||
				    (s[v] >= '0' && s[v] <= '9') || s[v] == '-' ||
				    s[v] == '_' || s[v] == '.')) {
					char	 c = s[v++];

					if (c >= 'A' && c <= 'Z')
						c |= 0x20;
					if (m + 1 < namelen)
						name[m] = c == '_' ? '-' : c;
					m++;
				}
				if (m == 0)
					continue;
				if (m + 1 > namelen) {
					snprintf(name, namelen, "(too long)");
					return 1;
				}
				name[m] = '\0';
				if (strcmp(name, "utf-8") == 0 ||
				    strncmp(name, "utf-8-", 6) == 0)
					snprintf(name, namelen, "utf-8");
				else if (strcmp(name, "latin-1") == 0 ||
				    strcmp(name, "iso-8859-1") == 0 ||
				    strcmp(name, "iso-latin-1") == 0 ||
				    strncmp(name, "latin-1-", 8) == 0 ||
				    strncmp(name, "iso-8859-1-", 11) == 0 ||
				    strncmp(name, "iso-latin-1-", 12) == 0)
					snprintf(name, namelen, "iso-8859-1");
				return 1;
			}
		} else if (k < e)
			return 0;	/* code: no cookie on line 2 */
		i = e;
		if (i < n)
			i += newline_len(s, i, n);
	}
	return 0;
}

/* bsearch() comparison of a name with a scan_codecs entry. */
static int
codec_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* What a cookie's encoding means for the scan, looked up as Python's
 * encodings.search_function() does: non-alphanumerics (but ".") collapse
 * to "_", then an alias, an alias with "." read as "_", or a module. The
 * codecs that cannot decode a source file (UTF-16/32, ...) count as
 * unknown. */
static int
encoding_kind(const char *name)
{
	char	 norm[64];
	size_t	 m = 0;
	int	 punct = 0;

	for (const char *p = name; *p != '\0'; p++) {
		char	 c = *p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.') {
			if (m + 3 >= sizeof norm)
				return ENC_UNKNOWN;
			if (punct && m > 0)
				norm[m++] = '_';
			norm[m++] = (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
			punct = 0;
		} else
			punct = 1;
	}
	norm[m] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		const void *hit;

		if (pass == 1) {
			if (strchr(norm, '.') == NULL)
				break;
			for (char *p = norm; *p != '\0'; p++)
				if (*p == '.')
					*p = '_';
		}
		hit = bsearch(norm, scan_codecs, scan_ncodecs,
		    sizeof(scan_codecs[0]), codec_cmp);
		if (hit != NULL) {
			size_t	 i = (size_t)((const char *)hit -
			    (const char *)scan_codecs) / sizeof(scan_codecs[0]);

			if (pass == 0 || (scan_codecs[i].where & CODEC_ALIAS))
				return scan_codecs[i].kind;
		}
	}
	return ENC_UNKNOWN;
}

/* The BOM and the coding cookie of lx->src: where the tokens start (after
 * a BOM) in *start, whether names and strings must be valid UTF-8
 * (lx->check_utf8), or -1 when Python would refuse the file's encoding
 * (the error recorded in lx). */
int
lex_encoding(struct lexer *lx, size_t *start)
{
	char		 encname[32];

	*start = 0;
	if (lx->len >= 3 && memcmp(lx->src, "\xef\xbb\xbf", 3) == 0)
		*start = 3;
	lx->check_utf8 = 1;
	if (coding_cookie(lx->src + *start, lx->len - *start, encname,
	    sizeof encname)) {
		int	 kind = encoding_kind(encname);
		char	 msg[96];

		if (*start > 0 && strcmp(encname, "utf-8") != 0) {
			snprintf(msg, sizeof msg, "encoding problem: %s with BOM",
			    encname);
			lex_error(lx, 1, msg);
			return -1;
		}
		if (kind == ENC_UNKNOWN) {
			snprintf(msg, sizeof msg, "unknown encoding: %s", encname);
			lex_error(lx, 1, msg);
			return -1;
		}
		if (kind == ENC_ASCII) {
			for (size_t i = *start; i < lx->len; i++)
				if ((unsigned char)lx->src[i] >= 0x80) {
					lex_error(lx, 1, "non-ASCII byte in an "
					    "ASCII file");
					return -1;
				}
		}
		lx->check_utf8 = kind == ENC_UTF8;
		/* Only a cookie that reads "utf-8" leaves the bytes alone;
		 * any other makes Python decode the whole file, comments
		 * included. */
		if (kind == ENC_UTF8 && strcmp(encname, "utf-8") != 0 &&
		    lex_utf8_check((const unsigned char *)lx->src + *start,
		    lx->len - *start) != 0) {
			lex_error(lx, 1, "(unicode error) invalid UTF-8");
			return -1;
		}
	}
	return 0;
}

/* Code points Python rejects in identifiers that show up in real files
 * (no-break and other spaces, typographic quotes, currency, symbols,
 * emoji). An approximation of XID_Start/XID_Continue; see docs/scan.md. */
static int
bad_identifier_char(unsigned cp)
{
	if (cp >= 0xa0 && cp <= 0xbf)
		return cp != 0xaa && cp != 0xb5 && cp != 0xba && cp != 0xb7;
	if (cp == 0xd7 || cp == 0xf7)
		return 1;
	if (cp >= 0x2000 && cp <= 0x206f)
		return cp != 0x203f && cp != 0x2040 && cp != 0x2054;
	return (cp >= 0x20a0 && cp <= 0x20cf) ||
	    (cp >= 0x2190 && cp <= 0x23ff) || (cp >= 0x2500 && cp <= 0x27bf) ||
	    (cp >= 0x3000 && cp <= 0x3003) || cp == 0xfeff || cp == 0xfffd ||
	    (cp >= 0x1f300 && cp <= 0x1faff);
}

/* A NAME token with bytes >= 0x80: valid UTF-8 of identifier characters.
 * Returns NULL or the error. */
const char *
lex_check_name(const unsigned char *s, size_t n)
{
	if (lex_utf8_check(s, n) != 0)
		return "invalid UTF-8";
	for (size_t i = 0; i < n;) {
		unsigned	 cp;
		size_t		 len;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		len = (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 : 4;
		cp = s[i] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
		for (size_t k = 1; k < len; k++)
			cp = (cp << 6) | (s[i + k] & 0x3f);
		if (bad_identifier_char(cp))
			return "invalid character";
		i += len;
	}
	return NULL;
}
