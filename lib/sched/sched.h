/* Schedule expressions ("0 9 * * mon-fri", "@daily", "every 10m") and their
 * next fire time in a named time zone, with cronie's daylight saving rules.
 * Time zones are read from the TZif files under /usr/share/zoneinfo (or
 * $TZDIR) by this module itself, so evaluating a schedule never touches the
 * process's TZ or the C library's zone state. */
#ifndef FLAKY_SCHED_H
#define FLAKY_SCHED_H

#include <stddef.h>
#include <stdint.h>

enum flaky_sched_kind {
	FLAKY_SCHED_CRON = 0,		/* five fields or an @macro */
	FLAKY_SCHED_EVERY,		/* "every DURATION" */
};

/* Which fields were written starting with '*'; as in cron this decides
 * the day-of-month / day-of-week rule and whether a job is a fixed-time job
 * for daylight saving time. */
#define FLAKY_SCHED_MIN_STAR	0x01
#define FLAKY_SCHED_HOUR_STAR	0x02
#define FLAKY_SCHED_DOM_STAR	0x04
#define FLAKY_SCHED_MONTH_STAR	0x08
#define FLAKY_SCHED_DOW_STAR	0x10

/* A parsed schedule: plain data, copy it freely, nothing to free. */
struct flaky_sched {
	enum flaky_sched_kind kind;
	uint64_t	 minutes;	/* bit n: minute n, 0-59 */
	uint32_t	 hours;		/* bit n: hour n, 0-23 */
	uint32_t	 mdays;		/* bit n: day of month n, 1-31 */
	uint16_t	 months;	/* bit n: month n, 1-12 */
	uint8_t		 wdays;		/* bit n: weekday n, 0 = Sunday .. 6 */
	uint8_t		 flags;		/* FLAKY_SCHED_*_STAR */
	uint8_t		 macro;		/* 0, or the @name it was written as */
	int64_t		 every_ms;	/* FLAKY_SCHED_EVERY: interval, > 0 */
};

/* A time zone loaded from a TZif file; opaque. */
struct flaky_tz;

/* Parse a schedule. On error returns -EINVAL and err says which field and
 * what was expected, e.g. "minute field: expected 0-59, got 61". */
int	 flaky_sched_parse(const char *expr, struct flaky_sched *ret,
	    char *err, size_t errlen);

/* The expression back, normalized ("0 9 * * mon-fri" -> "0 9 * * 1-5",
 * "@midnight" -> "@daily", "every 90m" -> "every 1h30m"). Returns the
 * length it needed (like snprintf); 64 bytes are always enough. */
int	 flaky_sched_format(const struct flaky_sched *, char *buf, size_t len);

/* The first fire time strictly after after_ms (unix ms), evaluated in tz
 * (NULL: UTC). Cron schedules fire on whole local minutes; "every"
 * schedules fire at start_ms + k * interval (start_ms is ignored for cron).
 * Daylight saving time as cronie does it: a fixed-time job (neither the
 * minute nor the hour field starts with '*') due in a skipped hour runs at
 * the jump, and in a repeated hour only at its first occurrence; other jobs
 * follow the wall clock (nothing in a skipped hour, again in a repeated
 * one). Returns 0, or -ERANGE when nothing fires within about 11 years
 * ("0 0 31 2 *"). */
int	 flaky_sched_next(const struct flaky_sched *, const struct flaky_tz *,
	    int64_t start_ms, int64_t after_ms, int64_t *ret_ms);

/* Load a zone by name ("Europe/Berlin", "UTC") from $TZDIR or
 * /usr/share/zoneinfo. NULL or "" loads the system's local zone: $TZ when
 * set (a zone name, ":name", an absolute TZif path or a POSIX TZ string
 * such as "CET-1CEST,M3.5.0,M10.5.0/3"), else /etc/localtime, else UTC.
 * Returns 0, -ENOENT for an unknown zone, -EINVAL for a bad file, or
 * -ENOMEM; err explains. Cost: one read of a file of a few KiB; afterwards
 * every lookup is a binary search in memory. */
int	 flaky_tz_load(const char *name, struct flaky_tz **ret, char *err,
	    size_t errlen);
void	 flaky_tz_free(struct flaky_tz *);
/* The zone's name: as loaded, or for the local zone the name behind
 * /etc/localtime when it can tell ("Europe/Berlin"), else "localtime". */
const char *flaky_tz_name(const struct flaky_tz *);
/* Offset from UTC in seconds at an instant (unix seconds). */
int32_t	 flaky_tz_offset(const struct flaky_tz *, int64_t t);
/* unix ms -> local ISO 8601 with offset, "2026-03-29T03:00:00+02:00";
 * buf needs 32 bytes. Returns buf. */
char	*flaky_tz_format(const struct flaky_tz *, int64_t ms, char *buf,
	    size_t len);

#endif
