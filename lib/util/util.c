/* Growable buffers, error strings, clocks and the parsing of times and
 * durations that every command and the schedule share. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

void
flaky_buf_init(struct flaky_buf *b)
{
	memset(b, 0, sizeof *b);
}

void
flaky_buf_free(struct flaky_buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	memset(b, 0, sizeof *b);
}

void
flaky_buf_reset(struct flaky_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* Make room for n more bytes and the terminating NUL. */
static int
buf_grow(struct flaky_buf *b, size_t n)
{
	size_t	 want, cap;
	char	*p;

	if (b->oom)
		return -ENOMEM;
	if (n > SIZE_MAX - b->len - 1)
		goto oom;
	want = b->len + n + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if ((p = realloc(b->data, cap)) == NULL)
		goto oom;
	b->data = p;
	b->cap = cap;
	return 0;
oom:
	b->oom = 1;
	return -ENOMEM;
}

int
flaky_buf_add(struct flaky_buf *b, const void *p, size_t n)
{
	if (buf_grow(b, n) < 0)
		return -ENOMEM;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
flaky_buf_addc(struct flaky_buf *b, char c)
{
	return flaky_buf_add(b, &c, 1);
}

int
flaky_buf_adds(struct flaky_buf *b, const char *s)
{
	return flaky_buf_add(b, s, strlen(s));
}

int
flaky_buf_vprintf(struct flaky_buf *b, const char *fmt, va_list ap)
{
	va_list	 aq;
	int	 n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	if (buf_grow(b, (size_t)n) < 0)
		return -ENOMEM;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
flaky_buf_printf(struct flaky_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = flaky_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

const char *
flaky_buf_cstr(struct flaky_buf *b)
{
	if (b->data == NULL && buf_grow(b, 0) == 0)
		b->data[0] = '\0';
	return b->data != NULL ? b->data : "";
}

char *
flaky_buf_steal(struct flaky_buf *b)
{
	char	*p;

	flaky_buf_cstr(b);
	if (b->oom) {
		flaky_buf_free(b);
		return NULL;
	}
	p = b->data;
	memset(b, 0, sizeof *b);
	return p;
}

int
flaky_error(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list	 ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code > 0 ? -code : code;
}

char *
flaky_strndup(const char *s, size_t n)
{
	char	*p;

	if ((p = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int64_t
flaky_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
flaky_mono_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int
flaky_parse_duration(const char *s, int64_t *ret_ms)
{
	int64_t	 total = 0, unit;
	const char *p = s;
	int	 parts = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	while (*p != '\0') {
		int64_t	 v = 0;
		int	 digits = 0;

		while (isdigit((unsigned char)*p)) {
			if (v > (INT64_MAX - 9) / 10)
				return -ERANGE;
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		if (digits == 0)
			return -EINVAL;
		if (*p == '\0') {
			/* A bare number is seconds; only alone. */
			if (parts > 0)
				return -EINVAL;
			unit = 1000;
		} else if (p[0] == 'm' && p[1] == 's') {
			unit = 1;
			p += 2;
		} else {
			switch (*p++) {
			case 's': unit = 1000; break;
			case 'm': unit = 60 * 1000; break;
			case 'h': unit = 3600 * 1000; break;
			case 'd': unit = 86400 * 1000; break;
			case 'w': unit = 7 * 86400 * (int64_t)1000; break;
			default:
				return -EINVAL;
			}
		}
		if (v > (INT64_MAX - total) / unit)
			return -ERANGE;
		total += v * unit;
		parts++;
	}
	*ret_ms = total;
	return 0;
}

/* Read exactly n digits. */
static int
digits(const char **pp, int n, int *ret)
{
	int	 v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*pp)[i]))
			return -EINVAL;
		v = v * 10 + ((*pp)[i] - '0');
	}
	*pp += n;
	*ret = v;
	return 0;
}

int
flaky_parse_time(const char *s, int64_t *ret_ms)
{
	struct tm	 tm;
	const char	*p = s;
	int		 y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, off = 0;
	time_t		 t;

	if (s == NULL)
		return -EINVAL;
	if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 ||
	    *p++ != '-' || digits(&p, 2, &d) < 0)
		return -EINVAL;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (digits(&p, 2, &h) < 0 || *p++ != ':' ||
		    digits(&p, 2, &mi) < 0)
			return -EINVAL;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &sec) < 0)
				return -EINVAL;
			if (*p == '.' || *p == ',') {
				int	 scale = 100;

				p++;
				if (!isdigit((unsigned char)*p))
					return -EINVAL;
				while (isdigit((unsigned char)*p)) {
					ms += (*p++ - '0') * scale;
					scale /= 10;
				}
			}
		}
		if (*p == 'Z' || *p == 'z')
			p++;
		else if (*p == '+' || *p == '-') {
			int	 sign = *p++ == '-' ? -1 : 1, oh, om = 0;

			if (digits(&p, 2, &oh) < 0)
				return -EINVAL;
			if (*p == ':')
				p++;
			if (*p != '\0' && digits(&p, 2, &om) < 0)
				return -EINVAL;
			if (oh > 23 || om > 59)
				return -EINVAL;
			off = sign * (oh * 60 + om);
		}
	}
	if (*p != '\0')
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -EINVAL;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	/* timegm normalizes Feb 31 to Mar 3: refuse what moved. */
	if (tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -EINVAL;
	*ret_ms = ((int64_t)t - (int64_t)off * 60) * 1000 + ms;
	return 0;
}

char *
flaky_format_time(int64_t ms, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

char *
flaky_format_ms(double ms, char *buf, size_t len)
{
	if (ms != ms)	/* NAN, without libm */
		snprintf(buf, len, "?");
	else if (ms < 1000)
		snprintf(buf, len, "%.0f ms", ms);
	else if (ms < 60000)
		snprintf(buf, len, "%.1f s", ms / 1000);
	else
		snprintf(buf, len, "%dm%02ds", (int)(ms / 60000),
		    (int)((long long)(ms / 1000) % 60));
	return buf;
}

const char *
flaky_plural(long long n)
{
	return n == 1 ? "" : "s";
}

const char *
flaky_plural_es(long long n)
{
	return n == 1 ? "" : "es";
}

char *
flaky_format_day(int64_t ms, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d", &tm);
	return buf;
}

int
flaky_parse_int(const char *s, long long min, long long max, long long *ret)
{
	char		*end;
	long long	 v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

long long
flaky_scan_int(const char *s, const char **end)
{
	unsigned long long v = 0;
	const char	*p = s + (*s == '-');
	int		 n = 0;

	while (*p >= '0' && *p <= '9' && n < 18) {
		v = v * 10 + (unsigned)(*p++ - '0');
		n++;
	}
	if (*p >= '0' && *p <= '9') {	/* 19 digits or more: rare */
		char *e;
		long long r = strtoll(s, &e, 10);

		*end = e;
		return r;
	}
	*end = p;
	if (n == 0)
		*end = s;
	return *s == '-' ? -(long long)v : (long long)v;
}

uint64_t
flaky_hash64(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* "PATH: expected at most 256 MiB": the bound as people write it. */
static int
too_big(const char *path, size_t max, char *err, size_t errlen)
{
	if (max >= 1024 * 1024 && max % (1024 * 1024) == 0)
		return flaky_error(err, errlen, EFBIG, "%s: expected at most "
		    "%zu MiB", path, max / (1024 * 1024));
	if (max >= 1024 && max % 1024 == 0)
		return flaky_error(err, errlen, EFBIG, "%s: expected at most "
		    "%zu KiB", path, max / 1024);
	return flaky_error(err, errlen, EFBIG, "%s: expected at most %zu "
	    "bytes", path, max);
}

/* Open a regular file of at most max bytes: its type and size checked
 * before a byte is read. */
int
flaky_open_file(const char *path, size_t max, int *ret_fd, size_t *ret_size,
    char *err, size_t errlen)
{
	struct stat	 st;
	int		 fd, r;

	*ret_fd = -1;
	*ret_size = 0;
	/* O_NONBLOCK: a FIFO in the file's place must not hang us. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	if (fstat(fd, &st) == -1)
		r = flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	else if (S_ISDIR(st.st_mode))
		r = flaky_error(err, errlen, EISDIR, "%s: expected a regular "
		    "file, found a directory", path);
	else if (!S_ISREG(st.st_mode))
		r = flaky_error(err, errlen, EINVAL, "%s: expected a regular "
		    "file", path);
	else if ((uint64_t)st.st_size > max)
		r = too_big(path, max, err, errlen);
	else {
		*ret_fd = fd;
		*ret_size = (size_t)st.st_size;
		return 0;
	}
	close(fd);
	return r;
}

/* Read an open file to EOF into a buffer of at most max bytes. With
 * keep_head, a file past max still gives its first max bytes (-EFBIG). */
static int
read_all(int fd, const char *path, size_t max, size_t size, int keep_head,
    char **ret, size_t *ret_len, char *err, size_t errlen)
{
	char		*buf, *p, c;
	size_t		 len = 0, cap;
	ssize_t		 n;
	int		 r;

	/* The file may grow while it is read: max holds, not its size. */
	cap = (size < max ? size : max) + 1;
	if (cap < 4096)
		cap = max + 1 < 4096 ? max + 1 : 4096;
	if ((buf = malloc(cap)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "%s: out of memory",
		    path);
	for (;;) {
		if (len + 1 == cap && len < max) {
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			if ((p = realloc(buf, cap)) == NULL) {
				r = flaky_error(err, errlen, ENOMEM, "%s: out "
				    "of memory", path);
				goto fail;
			}
			buf = p;
		}
		/* Full: one byte more says whether the file is larger. */
		if (len == max)
			n = read(fd, &c, 1);
		else
			n = read(fd, buf + len, cap - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			r = flaky_error(err, errlen, errno, "%s: %s", path,
			    strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		if (len == max) {
			r = too_big(path, max, err, errlen);
			if (!keep_head)
				goto fail;
			buf[len] = '\0';
			*ret = buf;
			*ret_len = len;
			return r;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
fail:
	free(buf);
	return r;
}

/* A regular file whole, bounded. */
int
flaky_read_file(const char *path, size_t max, char **ret, size_t *ret_len,
    char *err, size_t errlen)
{
	size_t	 size;
	int	 fd, r;

	*ret = NULL;
	*ret_len = 0;
	if ((r = flaky_open_file(path, max, &fd, &size, err, errlen)) < 0)
		return r;
	r = read_all(fd, path, max, size, 0, ret, ret_len, err, errlen);
	close(fd);
	return r;
}

/* A regular file whole, or its first max bytes when it is larger. */
int
flaky_read_file_head(const char *path, size_t max, char **ret,
    size_t *ret_len, size_t *ret_size, char *err, size_t errlen)
{
	size_t	 size;
	int	 fd, r;

	*ret = NULL;
	*ret_len = 0;
	*ret_size = 0;
	/* Unbounded here: read_all stops at max. */
	if ((r = flaky_open_file(path, SIZE_MAX, &fd, &size, err,
	    errlen)) < 0)
		return r;
	r = read_all(fd, path, max, size, 1, ret, ret_len, err, errlen);
	close(fd);
	/* Grown past max while read: at least one byte more than max. */
	*ret_size = r == -EFBIG && size <= max ? max + 1 : size;
	if (r == 0)
		*ret_size = *ret_len;
	return r;
}

/* A target's name (util.h). */
int
flaky_target_name_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n <= 128 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* The value of a hex digit, or -1 (util.h). */
int
flaky_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int
flaky_array_grow(void *vp, size_t *cap, size_t n, size_t size)
{
	void	*v, *p;
	size_t	 nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	/* vp points to a pointer of any object type: copied, not read as
	 * a void *, which its type is not. */
	memcpy(&v, vp, sizeof v);
	if ((p = reallocarray(v, nc, size)) == NULL)
		return -ENOMEM;
	memcpy(vp, &p, sizeof p);
	*cap = nc;
	return 0;
}
