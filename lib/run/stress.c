/* Stress beside a run (issue 18): CPU, memory and I/O load made by our own
 * threads for as long as a run runs, so that timing races show.
 *
 * Threads rather than stress-ng: nothing to install, they start and stop
 * in microseconds with the run, and no process is added beside the run's
 * process group (a stress-ng child would be taken for an escapee by the
 * strays sweep between runs, and would have to be kept out of the run's
 * rusage). See docs/stress.md. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "run/run.h"
#include "util/util.h"

#define STRESS_MEM_BYTES	(64u << 20)	/* per memory worker */
#define STRESS_IO_BLOCK		(256u << 10)
#define STRESS_IO_FILE		(32u << 20)	/* rewound past this */

struct flaky_stress {
	atomic_int	 stop;
	pthread_t	*t;
	size_t		 nt;
	char		*dir;
};

/* Spin: integer work the compiler cannot drop. */
static void *
cpu_worker(void *arg)
{
	struct flaky_stress *s = arg;
	volatile uint64_t x = 88172645463325252ULL;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed))
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	return NULL;
}

/* Write through a large buffer a cache line at a time: memory bandwidth
 * and cache misses for everyone else. */
static void *
mem_worker(void *arg)
{
	struct flaky_stress *s = arg;
	unsigned char	*p;
	unsigned	 n = 0;

	if ((p = malloc(STRESS_MEM_BYTES)) == NULL)
		return NULL;
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		for (size_t i = 0; i < STRESS_MEM_BYTES; i += 64)
			p[i] = (unsigned char)(n + i);
		n++;
	}
	free(p);
	return NULL;
}

/* Write and sync a file in the directory, rewound when it grows large. */
static void *
io_worker(void *arg)
{
	struct flaky_stress *s = arg;
	char		 path[4096], *buf;
	size_t		 off = 0;
	int		 fd;

	/* the run's directory (its disk), else /tmp rather than no load */
	snprintf(path, sizeof path, "%s/flaky-stress-XXXXXX", s->dir);
	if ((fd = mkstemp(path)) == -1) {
		snprintf(path, sizeof path, "/tmp/flaky-stress-XXXXXX");
		if ((fd = mkstemp(path)) == -1)
			return NULL;
	}
	unlink(path);
	if ((buf = calloc(1, STRESS_IO_BLOCK)) == NULL) {
		close(fd);
		return NULL;
	}
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		if (pwrite(fd, buf, STRESS_IO_BLOCK, (off_t)off) < 0)
			break;
		fdatasync(fd);
		off += STRESS_IO_BLOCK;
		if (off >= STRESS_IO_FILE)
			off = 0;
	}
	free(buf);
	close(fd);
	return NULL;
}

void
flaky_shuffle_seed(char *buf, size_t len)
{
	static unsigned	 n;
	uint32_t	 v;

	if (getrandom(&v, sizeof v, 0) != sizeof v)
		v = (uint32_t)time(NULL) ^ (++n * 2654435761u);
	v &= 0x7fffffff;
	snprintf(buf, len, "%u", v ? v : 1);
}

int
flaky_stress_parse(const char *s, struct flaky_stress_spec *ret, char *err,
    size_t errlen)
{
	static const char *const names[] = { "cpu", "memory", "io", "all" };
	static const int kinds[] = { FLAKY_STRESS_CPU, FLAKY_STRESS_MEMORY,
	    FLAKY_STRESS_IO, FLAKY_STRESS_CPU | FLAKY_STRESS_MEMORY |
	    FLAKY_STRESS_IO };
	const char	*colon = strchr(s, ':');
	size_t		 n = colon ? (size_t)(colon - s) : strlen(s);
	long long	 v;
	long		 ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(ret, 0, sizeof *ret);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0)
			ret->kinds = kinds[i];
	if (ret->kinds == 0)
		return flaky_error(err, errlen, EINVAL, "expected cpu, "
		    "memory, io or all, with an optional :LEVEL (1 to 64), "
		    "got '%s'", s);
	if (colon == NULL)
		ret->level = ncpu > 0 && ncpu <= 64 ? (int)ncpu : 1;
	else if (flaky_parse_int(colon + 1, 1, 64, &v) < 0)
		return flaky_error(err, errlen, EINVAL, "expected a level "
		    "from 1 to 64 after ':', got '%s'", s);
	else
		ret->level = (int)v;
	snprintf(ret->name, sizeof ret->name, "%.*s:%d", (int)n, s,
	    ret->level);
	return 0;
}

int
flaky_stress_start(const struct flaky_stress_spec *spec, const char *dir,
    struct flaky_stress **ret, char *err, size_t errlen)
{
	static void *(*const fn[])(void *) = { cpu_worker, mem_worker,
	    io_worker };
	struct flaky_stress *s;
	int		 r;

	*ret = NULL;
	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->t = calloc(3 * (size_t)spec->level, sizeof *s->t)) == NULL ||
	    (s->dir = strdup(dir ? dir : "/tmp")) == NULL) {
		flaky_stress_stop(s);
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	atomic_init(&s->stop, 0);
	for (int k = 0; k < 3; k++) {
		if (!(spec->kinds & (1 << k)))
			continue;
		for (int i = 0; i < spec->level; i++) {
			if ((r = pthread_create(&s->t[s->nt], NULL, fn[k],
			    s)) != 0) {
				flaky_stress_stop(s);
				return flaky_error(err, errlen, r, "starting "
				    "the %s stressor: %s", spec->name,
				    strerror(r));
			}
			s->nt++;
		}
	}
	*ret = s;
	return 0;
}

void
flaky_stress_stop(struct flaky_stress *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, 1);
	for (size_t i = 0; i < s->nt; i++)
		pthread_join(s->t[i], NULL);
	free(s->t);
	free(s->dir);
	free(s);
}
