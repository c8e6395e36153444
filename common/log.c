/* One place where the programs write their messages (OpenBSD ntpd log.c). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char	*log_name = "flaky";
static int		 log_level_verbose;
static int		 log_journal;
static int		 log_stamp;
static void		(*log_hook)(void);

/* Is stderr the journal stream systemd gave us ("dev:ino")? */
static int
stderr_is_journal(void)
{
	const char	*e = getenv("JOURNAL_STREAM");
	unsigned long	 dev, ino;
	struct stat	 st;

	if (e == NULL || sscanf(e, "%lu:%lu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) == -1)
		return 0;
	return st.st_dev == dev && st.st_ino == ino;
}

void
log_init(const char *progname, int verbose)
{
	log_name = progname;
	log_level_verbose = verbose;
	log_journal = stderr_is_journal();
}

void
log_timestamps(int on)
{
	log_stamp = on;
}

void
log_set_hook(void (*fn)(void))
{
	log_hook = fn;
}

int
log_verbose(void)
{
	return log_level_verbose;
}

/* "2026-12-01T18:05:13.042Z ": when the line was written, in UTC as
 * every time flaky prints. */
static void
log_time(FILE *f)
{
	struct timespec	 ts;
	struct tm	 tm;
	char		 buf[32];

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1 ||
	    gmtime_r(&ts.tv_sec, &tm) == NULL)
		return;
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%03ldZ ", buf, ts.tv_nsec / 1000000);
}

static void
vlog(int pri, const char *fmt, va_list ap, const char *suffix)
{
	char	 msg[4096];

	vsnprintf(msg, sizeof msg, fmt, ap);
	if (log_hook != NULL)
		log_hook();
	if (log_stamp && !log_journal)
		log_time(stderr);
	if (log_journal)
		fprintf(stderr, "<%d>%s%s%s\n", pri, msg,
		    suffix ? ": " : "", suffix ? suffix : "");
	else
		fprintf(stderr, "%s: %s%s%s\n", log_name, msg,
		    suffix ? ": " : "", suffix ? suffix : "");
	fflush(stderr);
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog(4, fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(4, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(6, fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (!log_level_verbose)
		return;
	va_start(ap, fmt);
	vlog(7, fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog(2, fmt, ap, strerror(saved));
	va_end(ap);
	exit(2);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(2, fmt, ap, NULL);
	va_end(ap);
	exit(2);
}

void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n ? n : 1)) == NULL)
		fatal("malloc %zu", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n ? n : 1, size ? size : 1)) == NULL)
		fatal("calloc %zu", n * size);
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	void	*q;

	if ((q = reallocarray(p, n ? n : 1, size ? size : 1)) == NULL)
		fatal("reallocarray %zu", n * size);
	return q;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("asprintf");
	return n;
}
