/* An upload taken apart in the upload worker: its query's metadata
 * (strict: a key we do not know is a 400), and its body on disk: gzip
 * (Content-Encoding, a gzip file or part) inflated with zlib, and
 * multipart/form-data split into its files, each streamed from the spool
 * into a file of its own. Memory stays a few buffers whatever the sizes;
 * every file written is bounded (a gzip bomb stops at the bound). What
 * comes from the client here is fuzzed (tests/fuzz/fuzz_upload.c). */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <zlib.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http_int.h"
#include "ingest/ingest.h"
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
		char	*p, *nl;
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
			/* "--" closes the body; the end of the delimiter's line
			 * starts a part */
			nl = memchr(buf + used, '\n', have - used);
			if (have - used >= 2 && buf[used] == '-' &&
			    buf[used + 1] == '-')
				state = 3;
			else if (nl != NULL) {
				state = 1;
				hl = 0;
				used = (size_t)(nl - buf) + 1;
			} else if (n > 0) {
				used -= dl;	/* its line is still coming */
				break;
			} else {
				r = flaky_error(err, errlen, EINVAL, "multipart/"
				    "form-data: a delimiter's line without its "
				    "end");
				goto out;
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

/* The query's metadata, checked (its strings in kv): 0, or -EINVAL with
 * err (a 400). */
int
http_upload_metadata(const char *query, struct evkeyvalq *kv, struct flaky_upload *u,
    struct flaky_ci_meta *m, char *salt, size_t saltlen, char *err,
    size_t errlen)
{
	static const char *const keys[] = { "target", "revision", "branch",
	    "pr", "job", "job_url", "attempt", "box", "at", "ci" };
	struct evkeyval	*e;
	const char	*v;
	long long	 a;

	if (query != NULL && evhttp_parse_query_str(query, kv) < 0)
		return flaky_error(err, errlen, EINVAL, "the query: expected "
		    "key=value pairs");
	TAILQ_FOREACH(e, kv, next) {
		size_t	 i, n = 0;

		for (i = 0; i < FLAKY_ARRAY_SIZE(keys); i++)
			if (strcmp(e->key, keys[i]) == 0)
				break;
		if (i == FLAKY_ARRAY_SIZE(keys))
			return flaky_error(err, errlen, EINVAL, "unknown "
			    "parameter '%.64s': expected target, revision, "
			    "branch, pr, job, job_url, attempt, box, at, ci",
			    e->key);
		for (struct evkeyval *o = TAILQ_FIRST(kv); o != NULL;
		    o = TAILQ_NEXT(o, next))
			n += strcmp(o->key, e->key) == 0;
		if (n > 1)
			return flaky_error(err, errlen, EINVAL, "parameter "
			    "'%s' given %zu times", e->key, n);
	}
	if ((v = evhttp_find_header(kv, "target")) == NULL || *v == '\0' ||
	    !flaky_target_name_ok(v))
		return flaky_error(err, errlen, EINVAL, "target: expected a "
		    "name of letters, digits, '.', '_' and '-'");
	u->in.target = v;
	u->in.revision = evhttp_find_header(kv, "revision");
	m->branch = evhttp_find_header(kv, "branch");
	m->pr = evhttp_find_header(kv, "pr");
	m->job = evhttp_find_header(kv, "job");
	m->job_url = evhttp_find_header(kv, "job_url");
	m->ci = evhttp_find_header(kv, "ci");
	if ((v = evhttp_find_header(kv, "attempt")) != NULL) {
		if (flaky_parse_int(v, 1, 10000, &a) < 0)
			return flaky_error(err, errlen, EINVAL, "attempt: "
			    "expected 1 to 10000");
		m->attempt = (int)a;
	}
	if ((v = evhttp_find_header(kv, "box")) != NULL &&
	    flaky_box_check(v, err, errlen) < 0)
		return -EINVAL;
	u->in.box = v;
	u->in.at_ms = -1;
	if ((v = evhttp_find_header(kv, "at")) != NULL &&
	    flaky_parse_time(v, &u->in.at_ms) < 0)
		return flaky_error(err, errlen, EINVAL, "at: expected an ISO "
		    "8601 time");
	if (u->in.revision != NULL && (strlen(u->in.revision) > 256 ||
	    *u->in.revision == '\0'))
		return flaky_error(err, errlen, EINVAL, "revision: expected 1 "
		    "to 256 bytes");
	if (flaky_ci_meta_check(m, err, errlen) < 0)
		return -EINVAL;
	snprintf(salt, saltlen, "%s\n%d\n%s", m->job ? m->job : "",
	    m->attempt, m->job_url ? m->job_url : "");
	return 0;
}
