/* An upload's body taken apart on disk, in the upload worker: gzip
 * (Content-Encoding, a gzip file or part) inflated with zlib, and
 * multipart/form-data split into its files, each streamed from the spool
 * into a file of its own. Memory stays a few buffers whatever the sizes;
 * every file written is bounded (a gzip bomb stops at the bound). */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <zlib.h>

#include "http_int.h"
#include "util/util.h"

#define BUF	(64 * 1024)

/* Write all of s. */
static int
write_all(int fd, const void *s, size_t n)
{
	const char	*p = s;
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Does the file start with gzip's magic? */
int
http_body_is_gzip(const char *path)
{
	unsigned char	 m[2];
	int		 fd, r = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	r = read(fd, m, 2) == 2 && m[0] == 0x1f && m[1] == 0x8b;
	close(fd);
	return r;
}

/* Inflate the gzip file src into the new file dst, at most max bytes. 0,
 * or a negative errno with err: -EFBIG past max, -EINVAL not gzip. */
int
http_body_gunzip(const char *src, const char *dst, int64_t max, char *err,
    size_t errlen)
{
	z_stream	 z;
	unsigned char	*in = NULL, *out = NULL;
	int64_t		 total = 0;
	ssize_t		 n;
	int		 ifd = -1, ofd = -1, zr = Z_OK, r = 0, inited = 0;

	memset(&z, 0, sizeof z);
	if ((in = malloc(BUF)) == NULL || (out = malloc(BUF)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if ((ifd = open(src, O_RDONLY | O_CLOEXEC)) < 0 ||
	    (ofd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) <
	    0) {
		r = flaky_error(err, errlen, errno, "spool: %s",
		    strerror(errno));
		goto out;
	}
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	inited = 1;
	while (zr != Z_STREAM_END) {
		if (z.avail_in == 0) {
			if ((n = read(ifd, in, BUF)) < 0) {
				r = flaky_error(err, errlen, errno, "spool: %s",
				    strerror(errno));
				goto out;
			}
			if (n == 0)
				break;
			z.next_in = in;
			z.avail_in = (uInt)n;
		}
		z.next_out = out;
		z.avail_out = BUF;
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END) {
			r = flaky_error(err, errlen, EINVAL, "expected gzip "
			    "data: %s", z.msg != NULL ? z.msg : "corrupt");
			goto out;
		}
		total += BUF - z.avail_out;
		if (total > max) {
			r = flaky_error(err, errlen, EFBIG, "inflated past "
			    "%lld MiB", (long long)(max >> 20));
			goto out;
		}
		if ((r = write_all(ofd, out, BUF - z.avail_out)) < 0) {
			r = flaky_error(err, errlen, -r, "spool: %s",
			    strerror(-r));
			goto out;
		}
	}
	if (zr != Z_STREAM_END)
		r = flaky_error(err, errlen, EINVAL, "expected gzip data: it "
		    "ends before its end");
out:
	if (inited)
		inflateEnd(&z);
	if (ifd >= 0)
		close(ifd);
	if (ofd >= 0)
		close(ofd);
	free(in);
	free(out);
	return r;
}

/* The boundary of a multipart Content-Type into b ("--" and it). */
static int
boundary_of(const char *ctype, char *b, size_t len)
{
	const char	*p = strcasestr(ctype, "boundary=");
	size_t		 n;

	if (p == NULL)
		return -1;
	p += 9;
	if (*p == '"') {
		p++;
		n = strcspn(p, "\"");
	} else
		n = strcspn(p, "; \t");
	if (n == 0 || n > 70 || n + 3 > len)
		return -1;
	snprintf(b, len, "--%.*s", (int)n, p);
	return 0;
}

/* A part's headers (up to its empty line) in h: its filename into name,
 * and whether it says gzip. */
static void
part_headers(const char *h, char *name, size_t len, int *gz)
{
	const char	*f = strcasestr(h, "filename=");

	*gz = strcasestr(h, "content-type: application/gzip") != NULL ||
	    strcasestr(h, "content-type: application/x-gzip") != NULL;
	if (f == NULL) {
		snprintf(name, len, "part");
		return;
	}
	f += 9;
	if (*f == '"')
		snprintf(name, len, "%.*s", (int)strcspn(f + 1, "\"\r\n"),
		    f + 1);
	else
		snprintf(name, len, "%.*s", (int)strcspn(f, "; \r\n"), f);
}

/* One more file of the upload: its path in dir. */
static int
part_open(struct http_body *b, const char *name, int gz)
{
	struct http_body_file *f;
	char	 dir[sizeof b->dir];

	if (b->n == HTTP_BODY_FILES)
		return -E2BIG;
	f = &b->f[b->n];
	snprintf(dir, sizeof dir, "%s", b->dir);
	snprintf(f->path, sizeof f->path, "%s/part-%zu", dir, b->n);
	snprintf(f->name, sizeof f->name, "%s", name);
	f->gzip = gz;
	b->n++;
	return open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

/* Split the multipart body at path into b's files. Streamed: a window of
 * the buffer keeps what could still be the start of a delimiter. */
int
http_body_split(const char *path, const char *ctype, struct http_body *b,
    int64_t max, char *err, size_t errlen)
{
	char	 delim[80], hbuf[8192], *buf;
	size_t	 have = 0, dl, hl = 0;
	ssize_t	 n;
	int64_t	 part_bytes = 0;
	int	 fd, out = -1, state = 0, r = 0, gz = 0;

	/* state 0: before the first delimiter; 1: a part's headers; 2: its
	 * data; 3: after the closing delimiter */
	if (boundary_of(ctype, delim + 2, sizeof delim - 2) < 0)
		return flaky_error(err, errlen, EINVAL, "Content-Type: "
		    "multipart/form-data without a boundary=");
	delim[0] = '\r';
	delim[1] = '\n';
	dl = strlen(delim);
	if ((buf = malloc(BUF + 128)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		free(buf);
		return flaky_error(err, errlen, errno, "spool: %s",
		    strerror(errno));
	}
	/* the body starts with the delimiter, without its CRLF */
	buf[0] = '\r';
	buf[1] = '\n';
	have = 2;
	for (;;) {
		char	*p;
		size_t	 used = 0;

		if ((n = read(fd, buf + have, BUF + 128 - have)) < 0) {
			r = flaky_error(err, errlen, errno, "spool: %s",
			    strerror(errno));
			break;
		}
		have += (size_t)n;
		while (used < have && state != 3) {
			if (state == 1) {
				/* headers, up to an empty line */
				char	*e = memmem(buf + used, have - used,
				    "\r\n\r\n", 4);
				size_t	 k = e ? (size_t)(e - buf - used) + 4 :
				    have - used;

				if (hl + k >= sizeof hbuf) {
					r = flaky_error(err, errlen, EINVAL,
					    "a part's headers: expected at "
					    "most 8 KiB");
					goto out;
				}
				memcpy(hbuf + hl, buf + used, k);
				hl += k;
				used += k;
				if (e == NULL)
					break;
				hbuf[hl] = '\0';
				{
					char	 name[256];

					part_headers(hbuf, name, sizeof name,
					    &gz);
					if ((out = part_open(b, name, gz)) < 0) {
						r = flaky_error(err, errlen,
						    E2BIG, "expected at most "
						    "%d files", HTTP_BODY_FILES);
						goto out;
					}
				}
				part_bytes = 0;
				state = 2;
				continue;
			}
			p = memmem(buf + used, have - used, delim, dl);
			if (p == NULL) {
				/* keep what may start a delimiter */
				size_t	 keep = have - used < dl ?
				    have - used : dl - 1;
				size_t	 k = have - used - keep;

				if (state == 2 && k > 0 && ((part_bytes +=
				    (int64_t)k) > max || write_all(out, buf +
				    used, k) < 0)) {
					r = flaky_error(err, errlen, EFBIG,
					    "a file of the upload: expected at "
					    "most %lld MiB", (long long)(max >>
					    20));
					goto out;
				}
				used += k;
				if (n == 0)
					used = have;	/* the end: drop */
				break;
			}
			if (state == 2) {
				size_t	 k = (size_t)(p - buf - used);

				if ((part_bytes += (int64_t)k) > max ||
				    write_all(out, buf + used, k) < 0) {
					r = flaky_error(err, errlen, EFBIG,
					    "a file of the upload: expected at "
					    "most %lld MiB", (long long)(max >>
					    20));
					goto out;
				}
				close(out);
				out = -1;
			}
			used = (size_t)(p - buf) + dl;
			/* "--" closes the body; CRLF starts a part */
			if (have - used < 2 && n > 0) {
				used -= dl;
				break;
			}
			if (have - used >= 2 && buf[used] == '-' &&
			    buf[used + 1] == '-')
				state = 3;
			else {
				state = 1;
				hl = 0;
				while (used < have && buf[used] != '\n')
					used++;
				used++;
			}
		}
		memmove(buf, buf + used, have - used);
		have -= used;
		if (n == 0 || state == 3)
			break;
	}
	if (r == 0 && state != 3)
		r = flaky_error(err, errlen, EINVAL, "multipart/form-data: "
		    "expected the closing delimiter");
out:
	if (out >= 0)
		close(out);
	close(fd);
	free(buf);
	return r;
}
