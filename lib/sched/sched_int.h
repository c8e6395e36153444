/* What the cron code (sched.c) and the time zone reader (tz.c) share: the
 * civil calendar and the stretches of constant UTC offset that the next
 * fire time is searched in. Internal to lib/sched. */
#ifndef FLAKY_SCHED_INT_H
#define FLAKY_SCHED_INT_H

#include <stdint.h>

#include "sched/sched.h"

#define T_MIN		INT64_MIN
#define T_MAX		INT64_MAX

/* One stretch of constant offset around an instant. */
struct period {
	int64_t	 t0, t1;		/* [t0, t1); T_MIN / T_MAX when open */
	int32_t	 off, off_prev, off_next;
};

/* The civil calendar, proleptic Gregorian, days since 1970-01-01. */
int64_t	 sched_floor_div(int64_t, int64_t);
int64_t	 sched_days_from_civil(int64_t y, int m, int d);
void	 sched_civil_from_days(int64_t, int64_t *ret_y, int *ret_m,
	    int *ret_d);
int	 sched_weekday(int64_t days);

/* The stretch of constant offset of tz (NULL: UTC) that holds t. */
void	 tz_period(const struct flaky_tz *tz, int64_t t, struct period *p);

#endif
