/* Tables a person reads: display widths (wcwidth), ids shortened in the
 * middle to fit a terminal, lines wrapped at its width. */
#ifndef FLAKYCTL_TABLE_H
#define FLAKYCTL_TABLE_H

#include <stddef.h>

#include "util/util.h"

/* The columns s takes on a terminal: wcwidth(3) in the user's LC_CTYPE
 * when it is a multibyte one (UTF-8), else one per UTF-8 code point. */
size_t	 table_width(const char *s);
/* The width of the terminal on fd: $COLUMNS, else TIOCGWINSZ, else 80;
 * 0 when fd is not a terminal (nothing is cut or wrapped then). */
size_t	 table_columns(int fd);
/* Append s in exactly w columns, padded with blanks (before it when
 * right) or, when wider, shortened in the middle with an ellipsis. */
void	 table_cell(struct flaky_buf *, const char *s, size_t w, int right);
/* Append s cut at its end with an ellipsis to at most w columns. */
void	 table_cut(struct flaky_buf *, const char *s, size_t w);
/* Append the pieces of text (separated by sep) joined by gap, starting a
 * new line indented by indent blanks before a piece that would pass cols
 * (0: one line, whatever its length); a piece wider than a line is cut.
 * The caller has written the first line's indent; ends with a newline. */
void	 table_wrap(struct flaky_buf *, const char *text, char sep,
	    const char *gap, size_t indent, size_t cols);
/* "s" for a plural count, "" for 1: "1 run", "2 runs". */
const char *plural(long long n);

#endif
