/* Display widths, shortening and wrapping for the tables of flakyctl. The
 * width of a character comes from wcwidth(3) in the user's LC_CTYPE, used
 * through a locale object of our own: setlocale() would change what the
 * parsers (run in-process by analyze) see as letters. */
#include "buildconf.h"

#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "table.h"

#define ELLIPSIS	"\u2026"

/* The user's LC_CTYPE, or (locale_t)0 when it is not multibyte. */
static locale_t
table_locale(void)
{
	static int	 done;
	static locale_t	 loc;
	locale_t	 old;

	if (done)
		return loc;
	done = 1;
	if ((loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0)) == (locale_t)0)
		return loc;
	old = uselocale(loc);
	if (MB_CUR_MAX == 1) {
		uselocale(old);
		freelocale(loc);
		return loc = (locale_t)0;
	}
	uselocale(old);
	return loc;
}

/* The length in bytes of the character at s (at least 1) and its width
 * in *w: wcwidth in a UTF-8 locale, else 1 per code point. A byte that
 * is no character is one column, as a terminal shows a replacement. */
static size_t
char_next(const char *s, size_t len, int *w)
{
	locale_t	 loc = table_locale(), old;
	mbstate_t	 st;
	wchar_t		 wc;
	size_t		 n;

	if (loc == (locale_t)0) {
		n = 1;
		while (n < len && ((unsigned char)s[n] & 0xc0) == 0x80)
			n++;
		*w = 1;
		return n;
	}
	memset(&st, 0, sizeof st);
	old = uselocale(loc);
	n = mbrtowc(&wc, s, len, &st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		n = 1;
		*w = 1;
	} else if ((*w = wcwidth(wc)) < 0)
		*w = 1;
	uselocale(old);
	return n;
}

size_t
table_width(const char *s)
{
	size_t	 len = strlen(s), i = 0, total = 0;
	int	 w;

	while (i < len) {
		i += char_next(s + i, len - i, &w);
		total += (size_t)w;
	}
	return total;
}

size_t
table_columns(int fd)
{
	struct winsize	 ws;
	const char	*e;
	char		*end;
	long		 n;

	if (!isatty(fd))
		return 0;
	if ((e = getenv("COLUMNS")) != NULL && *e != '\0') {
		n = strtol(e, &end, 10);
		if (*end == '\0' && n > 0 && n < 100000)
			return (size_t)n;
	}
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* The number of bytes of s's longest prefix that fits in w columns, and
 * its width in *used. */
static size_t
prefix_fit(const char *s, size_t len, size_t w, size_t *used)
{
	size_t	 i = 0, n;
	int	 cw;

	*used = 0;
	while (i < len) {
		n = char_next(s + i, len - i, &cw);
		if (*used + (size_t)cw > w)
			break;
		*used += (size_t)cw;
		i += n;
	}
	return i;
}

/* The offset of s's shortest suffix of at most w columns that ends it:
 * the first character from which the rest fits; its width in *used. */
static size_t
suffix_fit(const char *s, size_t len, size_t total, size_t w, size_t *used)
{
	size_t	 i = 0, before = 0;
	int	 cw;

	while (i < len && total - before > w) {
		i += char_next(s + i, len - i, &cw);
		before += (size_t)cw;
	}
	*used = total - before;
	return i;
}

static void
pad(struct flaky_buf *b, size_t n)
{
	while (n-- > 0)
		flaky_buf_addc(b, ' ');
}

void
table_cell(struct flaky_buf *b, const char *s, size_t w, int right)
{
	size_t	 len = strlen(s), total = table_width(s), head, tail, hu, tu;
	size_t	 from;

	if (total <= w) {
		if (right)
			pad(b, w - total);
		flaky_buf_add(b, s, len);
		if (!right)
			pad(b, w - total);
		return;
	}
	if (w == 0)
		return;
	/* the larger half first: the start of an id says where it is */
	tail = (w - 1) / 2;
	head = (w - 1) - tail;
	flaky_buf_add(b, s, prefix_fit(s, len, head, &hu));
	flaky_buf_adds(b, ELLIPSIS);
	from = suffix_fit(s, len, total, tail, &tu);
	flaky_buf_add(b, s + from, len - from);
	/* a wide character that did not fit leaves a column */
	if (hu + tu + 1 < w)
		pad(b, w - 1 - hu - tu);
}

void
table_cut(struct flaky_buf *b, const char *s, size_t w)
{
	size_t	 len = strlen(s), used;

	if (table_width(s) <= w) {
		flaky_buf_add(b, s, len);
		return;
	}
	if (w == 0)
		return;
	flaky_buf_add(b, s, prefix_fit(s, len, w - 1, &used));
	flaky_buf_adds(b, ELLIPSIS);
}

void
table_wrap(struct flaky_buf *b, const char *text, char sep, const char *gap,
    size_t indent, size_t cols)
{
	size_t	 at = indent, gw = table_width(gap), n, w;
	char	*piece;
	int	 first = 1;

	while (*text != '\0') {
		n = strcspn(text, (char[]){ sep, '\0' });
		if ((piece = strndup(text, n)) == NULL)
			return;
		text += n + (text[n] != '\0');
		if (n == 0) {
			free(piece);
			continue;
		}
		w = table_width(piece);
		if (!first && cols > 0 && at + gw + w > cols) {
			flaky_buf_addc(b, '\n');
			pad(b, indent);
			at = indent;
			first = 1;
		}
		if (!first) {
			flaky_buf_adds(b, gap);
			at += gw;
		}
		if (cols > 0 && at + w > cols && cols > at)
			table_cut(b, piece, cols - at);
		else
			flaky_buf_adds(b, piece);
		at += w;
		first = 0;
		free(piece);
	}
	flaky_buf_addc(b, '\n');
}

const char *
plural(long long n)
{
	return flaky_plural(n);
}
