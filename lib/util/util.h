/* Small helpers shared by every part of libflaky: a growable buffer, time and
 * duration parsing. Like the rest of the library: no logging, no exits;
 * functions return 0 or a negative errno. */
#ifndef FLAKY_UTIL_H
#define FLAKY_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define FLAKY_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Room for one more element in an array of n elements of size bytes with
 * *cap allocated: doubled from 16 when full. 0, or -ENOMEM (the array
 * unchanged). */
int	 flaky_array_grow(void *vp, size_t *cap, size_t n, size_t size);
/* The value of a hex digit (either case), or -1. */
int	 flaky_hexval(int c);
/* Is s a target's name: 1 to 128 letters, digits, '.', '_' and '-'? */
int	 flaky_target_name_ok(const char *s);

/* A byte buffer that grows; always NUL-terminated when len > 0 or after
 * flaky_buf_cstr(). An allocation failure sticks: later appends do nothing
 * and buf.oom stays set, so callers check once at the end. */
struct flaky_buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
	int	 oom;
};

void	 flaky_buf_init(struct flaky_buf *);
void	 flaky_buf_free(struct flaky_buf *);
void	 flaky_buf_reset(struct flaky_buf *);
int	 flaky_buf_add(struct flaky_buf *, const void *, size_t);
int	 flaky_buf_addc(struct flaky_buf *, char);
int	 flaky_buf_adds(struct flaky_buf *, const char *);
int	 flaky_buf_printf(struct flaky_buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 flaky_buf_vprintf(struct flaky_buf *, const char *, va_list)
	    __attribute__((format(printf, 2, 0)));
const char *flaky_buf_cstr(struct flaky_buf *);
char	*flaky_buf_steal(struct flaky_buf *);

/* Fill an error message the caller owns; returns -err for tail calls. */
int	 flaky_error(char *err, size_t errlen, int code, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

char	*flaky_strndup(const char *, size_t);

/* Wall clock, unix milliseconds (UTC). */
int64_t	 flaky_now_ms(void);
/* Monotonic clock, microseconds. */
int64_t	 flaky_mono_us(void);

/* "90", "30s", "10m", "1h30m", "2d", "2w", "250ms" -> milliseconds. A bare
 * number is in seconds. Returns 0 or -EINVAL. */
int	 flaky_parse_duration(const char *, int64_t *ret_ms);
/* "2026-11-01", "2026-11-01T12:00", "2026-11-01T12:00:00Z",
 * "2026-11-01 12:00:00+01:00" -> unix ms. Without a zone the time is UTC.
 * Returns 0 or -EINVAL. */
int	 flaky_parse_time(const char *, int64_t *ret_ms);
/* unix ms -> "2026-11-01T12:00:00Z"; buf needs 32 bytes. */
char	*flaky_format_time(int64_t ms, char *buf, size_t len);
/* unix ms -> "2026-11-01"; buf needs 11 bytes. */
char	*flaky_format_day(int64_t ms, char *buf, size_t len);
/* The ending a count's noun takes: "" for 1, "s" (flaky_plural_es:
 * "es") for any other count: "1 test", "0 tests", "13 failures", "1 box",
 * "2 boxes". Every count printed for people agrees through these. */
const char *flaky_plural(long long n);
const char *flaky_plural_es(long long n);
/* milliseconds -> "35 ms", "2.3 s", "2m05s", "?" for NAN. */
char	*flaky_format_ms(double ms, char *buf, size_t len);

/* Decimal integer in [min, max]; 0 or -EINVAL / -ERANGE. */
int	 flaky_parse_int(const char *, long long min, long long max,
	    long long *ret);

/* The decimal integer at s as a server prints it ("-12", no spaces, no
 * "+"), *end after it; saturates like strtoll. For columns read by the
 * thousand: strtoll's locale and base handling were a third of a server
 * report's client time. */
long long flaky_scan_int(const char *s, const char **end);

/* 64-bit FNV-1a, for fingerprints and content hashes. */
uint64_t flaky_hash64(const void *, size_t, uint64_t seed);
#define FLAKY_HASH_SEED	0xcbf29ce484222325ULL

/* A regular file whole, NUL-terminated, of at most max bytes (checked
 * while reading too: the file may grow): 0 with *ret (malloc'd) and
 * *ret_len, or a negative errno with err "PATH: what was expected"
 * (-EISDIR, -EINVAL for a FIFO or device, -EFBIG, -ENOMEM, or open's).
 * Never blocks on a FIFO. The one reader of whole files in the tree. */
int	 flaky_read_file(const char *path, size_t max, char **ret,
	    size_t *ret_len, char *err, size_t errlen);
/* As flaky_read_file, but a file of more than max bytes gives its first
 * max bytes too: -EFBIG with *ret (the caller frees it), *ret_len = max
 * and *ret_size its size, for a message that says where the limit falls
 * in it. */
int	 flaky_read_file_head(const char *path, size_t max, char **ret,
	    size_t *ret_len, size_t *ret_size, char *err, size_t errlen);
/* The checks of flaky_read_file without the reading, for a file read in
 * chunks: 0 with *ret_fd open on a regular file of *ret_size <= max
 * bytes, or a negative errno and err as above. */
int	 flaky_open_file(const char *path, size_t max, int *ret_fd,
	    size_t *ret_size, char *err, size_t errlen);

/* The program execvp(3) would run for word, looked up as a shell does:
 * a word with a slash is taken as it is, relative to dir; otherwise each
 * entry of path_env (NULL: /usr/local/bin:/usr/bin:/bin) in turn, an
 * empty or relative entry under dir (NULL: the working directory). The
 * path goes to buf. Returns 0, or why nothing runs: -EACCES (found, not
 * executable) before -EISDIR before -ENOENT; for a word with a slash also
 * what stat(2) said (-ENOTDIR, -ENAMETOOLONG...). */
int	 flaky_path_find(const char *word, const char *dir,
	    const char *path_env, char *buf, size_t size);

/* Secrets out of stored text: tokens, keys and passwords that a test run
 * printed are replaced by [REDACTED] before anything is written. */

#define FLAKY_REDACTED	"[REDACTED]"

struct flaky_redactor;

int	 flaky_redactor_new(struct flaky_redactor **ret);
void	 flaky_redactor_free(struct flaky_redactor *);
/* A user pattern (POSIX extended regex); each match is replaced whole. */
int	 flaky_redactor_add(struct flaky_redactor *, const char *regex,
	    char *err, size_t errlen);
/* Append s with secrets replaced to out. Returns how many were replaced or
 * -ENOMEM. NUL bytes in s are kept. */
int	 flaky_redact(const struct flaky_redactor *, const char *s, size_t len,
	    struct flaky_buf *out);

/* The box: the build machine a run ran on (issue 15), recorded with every
 * run. A name is 1 to FLAKY_BOX_MAX letters, digits, '.', '-' or '_'. */
#define FLAKY_BOX_MAX	64

/* 0 when name is a valid box name, or -EINVAL with err saying what is
 * wrong with it and what was expected. */
int	 flaky_box_check(const char *name, char *err, size_t errlen);
/* The default box: the host name in its short form (up to the first '.'),
 * other bytes than a name may hold replaced by '_', cut to FLAKY_BOX_MAX;
 * "localhost" without one. buf needs FLAKY_BOX_MAX + 1 bytes (-ENOBUFS). */
int	 flaky_box_default(char *buf, size_t len);
/* The box of a program: opt (--box) when not NULL, else $FLAKY_BOX when
 * set, else conf (box: of the YAML) when not NULL, else the host name;
 * checked: -EINVAL with err naming where the bad name came from. */
int	 flaky_box_resolve(const char *opt, const char *conf, char *buf,
	    size_t len, char *err, size_t errlen);

#endif
