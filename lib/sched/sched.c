/* Schedule expressions and their next fire time. Cron fields become bit
 * sets; the next time is searched in local wall-clock time, one stretch of
 * constant UTC offset at a time, so the daylight saving rules only have to
 * look at the edges of those stretches. Zones come from TZif files read
 * here (not from setenv("TZ") + localtime_r, which would change the whole
 * process's zone and re-read the file on every switch). */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched/sched.h"
#include "util/util.h"

#define SCHED_MAX_EXPR	256
/* How far the next fire time is searched: long enough for Feb 29 on any
 * weekday across a skipped leap year (2096 -> 2104), short enough to be a
 * cheap refusal for dates that never come. */
#define SCHED_CAP_S	((int64_t)11 * 366 * 86400)
#define TZ_MAX_FILE	(1024 * 1024)
#define TZ_MAX_TIMES	100000
#define T_MIN		INT64_MIN
#define T_MAX		INT64_MAX

/* ---- civil calendar (proleptic Gregorian, days since 1970-01-01) ---- */

/* Division rounding toward minus infinity, for times before 1970. */
static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t	 q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Days since the epoch of a civil date (H. Hinnant's algorithm). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t	 era, yoe, doy, doe;

	y -= m <= 2;
	era = floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Civil date of a day number. */
static void
civil_from_days(int64_t z, int64_t *ret_y, int *ret_m, int *ret_d)
{
	int64_t	 era, doe, yoe, y, doy, mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*ret_d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*ret_m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*ret_y = y + (*ret_m <= 2);
}

/* 0 = Sunday. */
static int
weekday(int64_t days)
{
	return (int)(((days + 4) % 7 + 7) % 7);
}

/* Gregorian leap year. */
static int
is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days in a month of a year. */
static int
month_days(int64_t y, int m)
{
	static const int n[] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};

	return m == 2 && is_leap(y) ? 29 : n[m - 1];
}

/* ---- parsing ---- */

struct field {
	const char	*name;
	int		 min, max;
	const char *const *names;	/* names[i] is value min + i */
	const char	*expect;
};

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL
};
static const char *const day_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL
};

static const struct field fields[5] = {
	{ "minute", 0, 59, NULL, "0-59" },
	{ "hour", 0, 23, NULL, "0-23" },
	{ "day-of-month", 1, 31, NULL, "1-31" },
	{ "month", 1, 12, month_names, "1-12 or jan-dec" },
	{ "day-of-week", 0, 7, day_names, "0-7 or sun-sat" },
};

static const char *const macro_names[] = {
	NULL, "@hourly", "@daily", "@weekly", "@monthly", "@yearly"
};

/* One value of a field, a number or a name; -1 when it is neither. */
static int
field_value(const struct field *f, const char *s, size_t n, int is_high)
{
	int	 v = 0;

	if (n == 0)
		return -1;
	if (isdigit((unsigned char)s[0])) {
		if (n > 4)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]))
				return -1;
			v = v * 10 + (s[i] - '0');
		}
		return v >= f->min && v <= f->max ? v : -1;
	}
	if (f->names == NULL || n != 3)
		return -1;
	for (int i = 0; f->names[i] != NULL; i++) {
		if (strncasecmp(s, f->names[i], 3) == 0) {
			/* "mon-sun" reads as 1-7. */
			if (f->names == day_names && i == 0 && is_high)
				return 7;
			return f->min + i;
		}
	}
	return -1;
}

/* Parse one field ("1,5-10/2,*"); sets *ret_bits and whether it starts
 * with a star. */
static int
parse_field(const struct field *f, const char *s, size_t n, uint64_t *ret_bits,
    int *ret_star, char *err, size_t errlen)
{
	uint64_t	 bits = 0;
	size_t		 i = 0;

	*ret_star = n > 0 && s[0] == '*';
	while (i <= n) {
		size_t	 start = i, end = i, vs;
		int	 lo, hi, step = 1;

		while (end < n && s[end] != ',')
			end++;
		if (end == start)
			return flaky_error(err, errlen, EINVAL,
			    "%s field: expected %s, got an empty list item",
			    f->name, f->expect);
		if (s[i] == '*') {
			lo = f->min;
			hi = f->max;
			i++;
		} else {
			vs = i;
			while (i < end && isalnum((unsigned char)s[i]))
				i++;
			if ((lo = field_value(f, s + vs, i - vs, 0)) < 0)
				return flaky_error(err, errlen, EINVAL,
				    "%s field: expected %s, got %.*s", f->name,
				    f->expect,
				    (int)(i > vs ? i - vs : end - vs), s + vs);
			hi = lo;
			if (i < end && s[i] == '-') {
				vs = ++i;
				while (i < end && isalnum((unsigned char)s[i]))
					i++;
				hi = field_value(f, s + vs, i - vs, 1);
				if (hi < 0)
					return flaky_error(err, errlen, EINVAL,
					    "%s field: expected %s, got %.*s",
					    f->name, f->expect,
					    (int)(i > vs ? i - vs : end - vs),
					    s + vs);
				if (hi < lo)
					return flaky_error(err, errlen, EINVAL,
					    "%s field: expected a range "
					    "low-high with low <= high, got "
					    "%.*s", f->name, (int)(i - start),
					    s + start);
			} else if (i < end && s[i] == '/')
				hi = f->max;	/* "5/15" means 5-max/15 */
		}
		if (i < end && s[i] == '/') {
			int	 smax = f->max - f->min + 1;

			if (smax > 7 && f->names == day_names)
				smax = 7;
			vs = ++i;
			while (i < end && isdigit((unsigned char)s[i]))
				i++;
			step = 0;
			if (i == end && i > vs && i - vs <= 3)
				for (size_t k = vs; k < i; k++)
					step = step * 10 + (s[k] - '0');
			if (step < 1 || step > smax)
				return flaky_error(err, errlen, EINVAL,
				    "%s field: expected a step of 1-%d, got "
				    "%.*s", f->name, smax, (int)(end - vs),
				    s + vs);
		}
		if (i != end)
			return flaky_error(err, errlen, EINVAL,
			    "%s field: expected %s, got %.*s", f->name,
			    f->expect, (int)(end - start), s + start);
		/* Day of week 7 is Sunday, 0. */
		for (int v = lo; v <= hi; v += step)
			bits |= (uint64_t)1 <<
			    (f->names == day_names && v == 7 ? 0 : v);
		i = end + 1;
	}
	*ret_bits = bits;
	return 0;
}

/* Fill in the five fields of a cron line. */
static int
parse_cron(const char *expr, struct flaky_sched *s, char *err, size_t errlen)
{
	const char	*tok[6];
	size_t		 len[6];
	int		 n = 0, r, star;
	const char	*p = expr;
	uint64_t	 bits[5];

	while (*p != '\0') {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		if (n < 6)
			tok[n] = p;
		while (*p != '\0' && !isspace((unsigned char)*p))
			p++;
		if (n < 6)
			len[n] = (size_t)(p - tok[n]);
		n++;
	}
	if (n != 5)
		return flaky_error(err, errlen, EINVAL, "expected 5 fields "
		    "(minute hour day-of-month month day-of-week), got %d", n);
	for (int i = 0; i < 5; i++) {
		if ((r = parse_field(&fields[i], tok[i], len[i], &bits[i],
		    &star, err, errlen)) < 0)
			return r;
		if (star)
			s->flags |= 1u << i;
	}
	s->minutes = bits[0];
	s->hours = (uint32_t)bits[1];
	s->mdays = (uint32_t)bits[2];
	s->months = (uint16_t)bits[3];
	s->wdays = (uint8_t)bits[4];
	return 0;
}

/* Parse "@name", "every DURATION" or five cron fields into bit sets. */
static int
sched_parse(const char *expr, struct flaky_sched *ret, char *err,
    size_t errlen)
{
	static const struct { const char *name; int macro; const char *cron; }
	    macros[] = {
		{ "@hourly", 1, "0 * * * *" },
		{ "@daily", 2, "0 0 * * *" },
		{ "@midnight", 2, "0 0 * * *" },
		{ "@weekly", 3, "0 0 * * 0" },
		{ "@monthly", 4, "0 0 1 * *" },
		{ "@yearly", 5, "0 0 1 1 *" },
		{ "@annually", 5, "0 0 1 1 *" },
	};
	struct flaky_sched s;
	char		 buf[SCHED_MAX_EXPR + 1];
	size_t		 n;
	int		 r;

	memset(&s, 0, sizeof s);
	if (expr == NULL || (n = strlen(expr)) == 0)
		return flaky_error(err, errlen, EINVAL, "expected a schedule "
		    "such as \"*/15 * * * *\", @daily or \"every 10m\", got "
		    "nothing");
	if (n > SCHED_MAX_EXPR)
		return flaky_error(err, errlen, EINVAL, "expected a schedule "
		    "of at most %d characters, got %zu", SCHED_MAX_EXPR, n);
	while (isspace((unsigned char)*expr))
		expr++;
	n = strlen(expr);
	while (n > 0 && isspace((unsigned char)expr[n - 1]))
		n--;
	memcpy(buf, expr, n);
	buf[n] = '\0';
	if (buf[0] == '@') {
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(macros); i++) {
			if (strcasecmp(buf, macros[i].name) != 0)
				continue;
			if ((r = parse_cron(macros[i].cron, &s, err,
			    errlen)) < 0)
				return r;
			s.macro = (uint8_t)macros[i].macro;
			*ret = s;
			return 0;
		}
		return flaky_error(err, errlen, EINVAL, "expected @hourly, "
		    "@daily, @midnight, @weekly, @monthly, @yearly or "
		    "@annually, got %s", buf);
	}
	if (strncasecmp(buf, "every", 5) == 0 &&
	    (buf[5] == '\0' || isspace((unsigned char)buf[5]))) {
		const char *d = buf + 5;

		while (isspace((unsigned char)*d))
			d++;
		s.kind = FLAKY_SCHED_EVERY;
		if (flaky_parse_duration(d, &s.every_ms) < 0 ||
		    s.every_ms < 1000)
			return flaky_error(err, errlen, EINVAL, "every: "
			    "expected a duration of at least 1s such as 10m "
			    "or 1h30m, got %s", *d != '\0' ? d : "nothing");
		*ret = s;
		return 0;
	}
	if ((r = parse_cron(buf, &s, err, errlen)) < 0)
		return r;
	*ret = s;
	return 0;
}

/* The parser, with messages kept to one line of printable text. */
int
flaky_sched_parse(const char *expr, struct flaky_sched *ret, char *err,
    size_t errlen)
{
	int	 r;

	if ((r = sched_parse(expr, ret, err, errlen)) < 0 && err != NULL)
		for (char *p = err; errlen > 0 && *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
	return r;
}

/* ---- formatting ---- */

/* One field back as text, the shortest of *, * / step, a-b / step, or a
 * list of values and ranges. */
static void
format_field(struct flaky_buf *b, uint64_t bits, int min, int max, int star)
{
	int	 vals[64], n = 0, step;

	for (int v = min; v <= max; v++)
		if (bits & ((uint64_t)1 << v))
			vals[n++] = v;
	step = n > 1 ? vals[1] - vals[0] : max - min + 1;
	for (int i = 2; i < n; i++)
		if (vals[i] - vals[i - 1] != step)
			step = 0;
	if (star && step > 0 && vals[0] == min && vals[n - 1] + step > max) {
		if (step == 1)
			flaky_buf_addc(b, '*');
		else
			flaky_buf_printf(b, "*/%d", step);
		return;
	}
	if (n >= 3 && step > 1) {
		flaky_buf_printf(b, "%d-%d/%d", vals[0], vals[n - 1], step);
		return;
	}
	for (int i = 0; i < n;) {
		int	 j = i;

		while (j + 1 < n && vals[j + 1] == vals[j] + 1)
			j++;
		if (i > 0)
			flaky_buf_addc(b, ',');
		if (j - i >= 2) {
			flaky_buf_printf(b, "%d-%d", vals[i], vals[j]);
			i = j + 1;
		} else {
			flaky_buf_printf(b, "%d", vals[i]);
			i++;
		}
	}
}

/* Print a schedule in its normal form, for round trips and --check-config. */
int
flaky_sched_format(const struct flaky_sched *s, char *out, size_t len)
{
	struct flaky_buf b;
	int	 n;

	flaky_buf_init(&b);
	if (s->kind == FLAKY_SCHED_EVERY) {
		static const struct { int64_t ms; const char *unit; } u[] = {
			{ 86400000, "d" }, { 3600000, "h" }, { 60000, "m" },
			{ 1000, "s" }, { 1, "ms" },
		};
		int64_t	 ms = s->every_ms;

		flaky_buf_adds(&b, "every ");
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(u); i++) {
			if (ms >= u[i].ms) {
				flaky_buf_printf(&b, "%lld%s",
				    (long long)(ms / u[i].ms), u[i].unit);
				ms %= u[i].ms;
			}
		}
		if (s->every_ms <= 0)
			flaky_buf_adds(&b, "0s");
	} else if (s->macro > 0 && s->macro < FLAKY_ARRAY_SIZE(macro_names)) {
		flaky_buf_adds(&b, macro_names[s->macro]);
	} else {
		format_field(&b, s->minutes, 0, 59,
		    s->flags & FLAKY_SCHED_MIN_STAR);
		flaky_buf_addc(&b, ' ');
		format_field(&b, s->hours, 0, 23,
		    s->flags & FLAKY_SCHED_HOUR_STAR);
		flaky_buf_addc(&b, ' ');
		format_field(&b, s->mdays, 1, 31,
		    s->flags & FLAKY_SCHED_DOM_STAR);
		flaky_buf_addc(&b, ' ');
		format_field(&b, s->months, 1, 12,
		    s->flags & FLAKY_SCHED_MONTH_STAR);
		flaky_buf_addc(&b, ' ');
		format_field(&b, s->wdays, 0, 6,
		    s->flags & FLAKY_SCHED_DOW_STAR);
	}
	if (b.oom) {
		flaky_buf_free(&b);
		if (len > 0)
			out[0] = '\0';
		return -ENOMEM;
	}
	n = snprintf(out, len, "%s", flaky_buf_cstr(&b));
	flaky_buf_free(&b);
	return n;
}

/* ---- time zones ---- */

/* A POSIX TZ rule date: Jn (1-365, no Feb 29), n (0-365), or Mm.w.d. */
struct tz_date {
	char		 kind;		/* 'J', 'D' or 'M' */
	int		 n, m, w, d;
	int32_t		 secs;		/* local time of day of the change */
};

struct flaky_tz {
	char		 name[128];
	int64_t		*trans;		/* transition instants, ascending */
	uint8_t		*idx;		/* offs[] index from trans[i] on */
	size_t		 ntrans;
	int32_t		*offs;
	size_t		 noffs;
	/* After the last transition: the file's POSIX footer, if any. */
	int		 has_rule;
	int32_t		 std_off, dst_off;
	int		 has_dst;
	struct tz_date	 start, end;
};

/* One stretch of constant offset around an instant. */
struct period {
	int64_t	 t0, t1;		/* [t0, t1); T_MIN / T_MAX when open */
	int32_t	 off, off_prev, off_next;
};

/* Big-endian 32-bit field of a TZif file. */
static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Big-endian 64-bit field of a TZif file. */
static int64_t
be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* "hh[:mm[:ss]]" with an optional sign, hours up to maxh. */
static const char *
posix_hms(const char *p, int maxh, int32_t *ret)
{
	int	 sign = 1, part[3] = { 0, 0, 0 }, np = 0;

	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	while (np < 3) {
		int	 v = 0, nd = 0;

		while (isdigit((unsigned char)*p) && nd < 3) {
			v = v * 10 + (*p++ - '0');
			nd++;
		}
		if (nd == 0)
			return NULL;
		part[np++] = v;
		if (*p != ':')
			break;
		p++;
	}
	if (part[0] > maxh || part[1] > 59 || part[2] > 59)
		return NULL;
	*ret = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
	return p;
}

/* A zone abbreviation, "CET" or "<+03>". */
static const char *
posix_name(const char *p)
{
	const char *s = p;

	if (*p == '<') {
		while (*p != '\0' && *p != '>')
			p++;
		return *p == '>' && p - s >= 4 ? p + 1 : NULL;
	}
	while (isalpha((unsigned char)*p))
		p++;
	return p - s >= 3 ? p : NULL;
}

/* The date part of a POSIX TZ rule, "M3.5.0/3", "J60" or "59". */
static const char *
posix_date(const char *p, struct tz_date *dt)
{
	int	 v[3] = { 0, 0, 0 };

	dt->secs = 7200;
	if (*p == 'M') {
		p++;
		for (int i = 0; i < 3; i++) {
			if (!isdigit((unsigned char)*p))
				return NULL;
			while (isdigit((unsigned char)*p) && v[i] < 100)
				v[i] = v[i] * 10 + (*p++ - '0');
			if (i < 2 && *p++ != '.')
				return NULL;
		}
		if (v[0] < 1 || v[0] > 12 || v[1] < 1 || v[1] > 5 || v[2] > 6)
			return NULL;
		dt->kind = 'M';
		dt->m = v[0];
		dt->w = v[1];
		dt->d = v[2];
	} else {
		dt->kind = 'D';
		if (*p == 'J') {
			dt->kind = 'J';
			p++;
		}
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p) && v[0] < 1000)
			v[0] = v[0] * 10 + (*p++ - '0');
		if (v[0] > 365 || (dt->kind == 'J' && v[0] < 1))
			return NULL;
		dt->n = v[0];
	}
	if (*p == '/' && (p = posix_hms(p + 1, 167, &dt->secs)) == NULL)
		return NULL;
	return p;
}

/* A POSIX TZ string, "CET-1CEST,M3.5.0,M10.5.0/3"; 0 or -EINVAL. */
static int
posix_parse(const char *p, struct flaky_tz *tz)
{
	int32_t	 v;

	if ((p = posix_name(p)) == NULL || (p = posix_hms(p, 24, &v)) == NULL)
		return -EINVAL;
	tz->std_off = -v;
	tz->has_rule = 1;
	tz->has_dst = 0;
	if (*p == '\0')
		return 0;
	if ((p = posix_name(p)) == NULL)
		return -EINVAL;
	tz->dst_off = tz->std_off + 3600;
	if (*p != ',' && *p != '\0') {
		if ((p = posix_hms(p, 24, &v)) == NULL)
			return -EINVAL;
		tz->dst_off = -v;
	}
	if (*p == '\0') {
		/* No rule: the US one, as glibc assumes. */
		p = ",M3.2.0,M11.1.0";
	}
	if (*p++ != ',' || (p = posix_date(p, &tz->start)) == NULL ||
	    *p++ != ',' || (p = posix_date(p, &tz->end)) == NULL || *p != '\0')
		return -EINVAL;
	tz->has_dst = 1;
	return 0;
}

/* UTC instant of a rule date in year y, given the offset before it. */
static int64_t
rule_instant(const struct tz_date *dt, int64_t y, int32_t off_before)
{
	int64_t	 day = days_from_civil(y, 1, 1);

	switch (dt->kind) {
	case 'J':
		day += dt->n - 1 + (is_leap(y) && dt->n >= 60);
		break;
	case 'D':
		day += dt->n;
		break;
	default: {
		int64_t	 first = days_from_civil(y, dt->m, 1);
		int	 md = 1 + (dt->d - weekday(first) + 7) % 7 +
		    (dt->w - 1) * 7;

		while (md > month_days(y, dt->m))
			md -= 7;
		day = first + md - 1;
	}
	}
	return day * 86400 + dt->secs - off_before;
}

/* Parse a TZif file (RFC 8536, versions 1-4) into tz. */
static int
tzif_parse(const unsigned char *buf, size_t len, struct flaky_tz *tz)
{
	size_t	 cnt[6], need, off = 0, tsz = 4, i;
	const unsigned char *p;

	for (int pass = 0; pass < 2; pass++) {
		if (len - off < 44 || memcmp(buf + off, "TZif", 4) != 0)
			return -EINVAL;
		for (i = 0; i < 6; i++)
			cnt[i] = be32(buf + off + 20 + 4 * i);
		/* isutcnt isstdcnt leapcnt timecnt typecnt charcnt */
		if (cnt[3] > TZ_MAX_TIMES || cnt[4] == 0 || cnt[4] > 256 ||
		    cnt[2] > 1000 || cnt[5] > 65536 || cnt[0] > 256 ||
		    cnt[1] > 256)
			return -EINVAL;
		need = cnt[3] * (tsz + 1) + cnt[4] * 6 + cnt[5] +
		    cnt[2] * (tsz + 4) + cnt[1] + cnt[0];
		if (len - off - 44 < need)
			return -EINVAL;
		if (pass == 0 && buf[off + 4] >= '2') {
			off += 44 + need;
			tsz = 8;
			continue;
		}
		break;
	}
	p = buf + off + 44;
	tz->ntrans = cnt[3];
	tz->noffs = cnt[4];
	if ((tz->trans = calloc(tz->ntrans + 1, sizeof *tz->trans)) == NULL ||
	    (tz->idx = calloc(tz->ntrans + 1, 1)) == NULL ||
	    (tz->offs = calloc(tz->noffs, sizeof *tz->offs)) == NULL)
		return -ENOMEM;
	for (i = 0; i < tz->ntrans; i++, p += tsz) {
		tz->trans[i] = tsz == 8 ? be64(p) : (int32_t)be32(p);
		if (i > 0 && tz->trans[i] <= tz->trans[i - 1])
			return -EINVAL;
	}
	for (i = 0; i < tz->ntrans; i++, p++) {
		if (*p >= tz->noffs)
			return -EINVAL;
		tz->idx[i] = *p;
	}
	for (i = 0; i < tz->noffs; i++, p += 6) {
		int32_t	 o = (int32_t)be32(p);

		if (o < -25 * 3600 || o > 26 * 3600)
			return -EINVAL;
		tz->offs[i] = o;
	}
	p += cnt[5] + cnt[2] * (tsz + 4) + cnt[1] + cnt[0];
	if (tsz == 8 && p < buf + len && *p == '\n') {
		const unsigned char *e = memchr(p + 1, '\n',
		    (size_t)(buf + len - p - 1));
		char	 footer[128];

		if (e != NULL && e - p - 1 > 0 &&
		    e - p - 1 < (long)sizeof footer) {
			memcpy(footer, p + 1, (size_t)(e - p - 1));
			footer[e - p - 1] = '\0';
			if (posix_parse(footer, tz) < 0)
				tz->has_rule = 0;
		}
	}
	return 0;
}

/* A zone name is a relative path of ordinary characters, never "..". */
static int
zone_name_ok(const char *name)
{
	if (name[0] == '\0' || name[0] == '/' || strlen(name) > 100 ||
	    strstr(name, "..") != NULL)
		return 0;
	for (const char *p = name; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr("/_+-.", *p) == NULL)
			return 0;
	return 1;
}

/* Read and parse one TZif file; -ENOENT when it cannot be read. */
static int
tz_load_file(struct flaky_tz *tz, const char *path)
{
	char		*buf = NULL;
	size_t		 len = 0;
	int		 r;

	if ((r = flaky_read_file(path, TZ_MAX_FILE, &buf, &len, NULL,
	    0)) < 0)
		return r == -EINVAL || r == -EFBIG ? -EINVAL : -ENOENT;
	r = tzif_parse((const unsigned char *)buf, len, tz);
	free(buf);
	return r;
}

/* Load a zone by name, or the local zone, into memory once. */
int
flaky_tz_load(const char *name, struct flaky_tz **ret, char *err,
    size_t errlen)
{
	struct flaky_tz	*tz;
	const char	*dir, *env;
	char		 path[PATH_MAX], link[PATH_MAX];
	ssize_t		 n;
	int		 r = 0;

	*ret = NULL;
	if ((tz = calloc(1, sizeof *tz)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((dir = getenv("TZDIR")) == NULL || *dir == '\0')
		dir = "/usr/share/zoneinfo";
	if (name == NULL || *name == '\0') {
		env = getenv("TZ");
		if (env != NULL && *env == ':')
			env++;
		if (env != NULL && *env != '\0') {
			snprintf(tz->name, sizeof tz->name, "%s", env);
			if (env[0] == '/')
				r = tz_load_file(tz, env);
			else if (zone_name_ok(env) &&
			    (size_t)snprintf(path, sizeof path, "%s/%s", dir,
			    env) < sizeof path &&
			    (r = tz_load_file(tz, path)) == 0)
				;
			else
				r = posix_parse(env, tz);
			if (r < 0) {
				flaky_error(err, errlen, r, "TZ=%s: expected a "
				    "zone name or a POSIX TZ string", env);
				goto fail;
			}
		} else if ((r = tz_load_file(tz, "/etc/localtime")) == 0) {
			snprintf(tz->name, sizeof tz->name, "localtime");
			n = readlink("/etc/localtime", link, sizeof link - 1);
			if (n > 0) {
				const char *z;

				link[n] = '\0';
				if ((z = strstr(link, "zoneinfo/")) != NULL)
					snprintf(tz->name, sizeof tz->name,
					    "%s", z + strlen("zoneinfo/"));
			}
		} else if (r == -ENOENT) {
			/* No local zone configured: UTC, as libc does. */
			r = 0;
			snprintf(tz->name, sizeof tz->name, "UTC");
		} else {
			flaky_error(err, errlen, r, "/etc/localtime: not a "
			    "time zone file");
			goto fail;
		}
		*ret = tz;
		return 0;
	}
	snprintf(tz->name, sizeof tz->name, "%s", name);
	if (!zone_name_ok(name)) {
		r = flaky_error(err, errlen, ENOENT, "expected a zone name "
		    "such as Europe/Berlin, got %s", name);
		goto fail;
	}
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >=
	    sizeof path)
		r = -ENOENT;
	else
		r = tz_load_file(tz, path);
	if (r == -ENOENT && (strcmp(name, "UTC") == 0 ||
	    strcmp(name, "Etc/UTC") == 0 || strcmp(name, "GMT") == 0)) {
		/* Works even without tzdata installed. */
		r = 0;
	}
	if (r < 0) {
		if (r == -ENOENT)
			flaky_error(err, errlen, r, "expected a zone name from "
			    "%s such as Europe/Berlin, got %s", dir, name);
		else if (r == -ENOMEM)
			flaky_error(err, errlen, r, "out of memory");
		else
			flaky_error(err, errlen, r, "%s: not a time zone file",
			    path);
		goto fail;
	}
	*ret = tz;
	return 0;
fail:
	flaky_tz_free(tz);
	return r;
}

/* Free a zone; NULL is fine. */
void
flaky_tz_free(struct flaky_tz *tz)
{
	if (tz == NULL)
		return;
	free(tz->trans);
	free(tz->idx);
	free(tz->offs);
	free(tz);
}

/* The name a zone was loaded as, for messages. */
const char *
flaky_tz_name(const struct flaky_tz *tz)
{
	return tz == NULL ? "UTC" : tz->name;
}

/* Offset in force before the first transition (RFC 8536: type 0). */
static int32_t
tz_first_off(const struct flaky_tz *tz)
{
	if (tz->noffs > 0)
		return tz->offs[0];
	return tz->has_rule ? tz->std_off : 0;
}

/* The stretch of constant offset that holds t, with its neighbours. */
static void
tz_period(const struct flaky_tz *tz, int64_t t, struct period *p)
{
	size_t	 lo, hi, last;

	memset(p, 0, sizeof *p);
	p->t0 = T_MIN;
	p->t1 = T_MAX;
	if (tz == NULL)
		return;
	p->off = p->off_prev = p->off_next = tz_first_off(tz);
	if (tz->ntrans > 0 && t < tz->trans[0]) {
		p->t1 = tz->trans[0];
		p->off_next = tz->offs[tz->idx[0]];
		return;
	}
	if (tz->ntrans > 0) {
		last = tz->ntrans - 1;
		if (t < tz->trans[last]) {
			lo = 0;
			hi = last;	/* trans[lo] <= t < trans[hi] */
			while (hi - lo > 1) {
				size_t mid = lo + (hi - lo) / 2;

				if (tz->trans[mid] <= t)
					lo = mid;
				else
					hi = mid;
			}
			p->t0 = tz->trans[lo];
			p->t1 = tz->trans[hi];
			p->off = tz->offs[tz->idx[lo]];
			p->off_prev = lo > 0 ? tz->offs[tz->idx[lo - 1]] :
			    tz_first_off(tz);
			p->off_next = tz->offs[tz->idx[hi]];
			return;
		}
		p->t0 = tz->trans[last];
		p->off = p->off_next = tz->offs[tz->idx[last]];
		p->off_prev = last > 0 ? tz->offs[tz->idx[last - 1]] :
		    tz_first_off(tz);
		if (!tz->has_rule || !tz->has_dst)
			return;
	} else if (tz->has_rule) {
		p->off = p->off_prev = p->off_next = tz->std_off;
		if (!tz->has_dst)
			return;
	} else
		return;

	/* After the table: the POSIX rule's changes in the years around t,
	 * sorted, ignoring those before the table's last transition. */
	{
		struct { int64_t t; int32_t off; } ch[6], tmp;
		int64_t	 y;
		int	 m, d, n = 0;

		civil_from_days(floor_div(t, 86400), &y, &m, &d);
		for (int64_t yy = y - 1; yy <= y + 1; yy++) {
			ch[n].t = rule_instant(&tz->start, yy, tz->std_off);
			ch[n++].off = tz->dst_off;
			ch[n].t = rule_instant(&tz->end, yy, tz->dst_off);
			ch[n++].off = tz->std_off;
		}
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && ch[j].t < ch[j - 1].t; j--) {
				tmp = ch[j];
				ch[j] = ch[j - 1];
				ch[j - 1] = tmp;
			}
		for (int i = 0; i < n; i++) {
			if (p->t0 != T_MIN && ch[i].t <= p->t0)
				continue;
			if (ch[i].t <= t) {
				p->t0 = ch[i].t;
				p->off_prev = p->off;
				p->off = ch[i].off;
			} else {
				p->t1 = ch[i].t;
				p->off_next = ch[i].off;
				break;
			}
		}
		if (p->t1 == T_MAX)
			p->off_next = p->off;
	}
}

/* UTC offset of the zone at an instant. */
int32_t
flaky_tz_offset(const struct flaky_tz *tz, int64_t t)
{
	struct period	 p;

	tz_period(tz, t, &p);
	return p.off;
}

/* An instant as local ISO 8601 with its offset, for people. */
char *
flaky_tz_format(const struct flaky_tz *tz, int64_t ms, char *buf, size_t len)
{
	int64_t	 t = floor_div(ms, 1000), local, days, y;
	int32_t	 off = flaky_tz_offset(tz, t), aoff;
	int	 m, d, sod;

	local = t + off;
	days = floor_div(local, 86400);
	sod = (int)(local - days * 86400);
	civil_from_days(days, &y, &m, &d);
	aoff = off < 0 ? -off : off;
	snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d%c%02d:%02d",
	    (long long)y, m, d, sod / 3600, sod / 60 % 60, sod % 60,
	    off < 0 ? '-' : '+', aoff / 3600, aoff / 60 % 60);
	return buf;
}

/* ---- next fire time ---- */

/* Does a day match? Either day field will do when both are restricted. */
static int
day_matches(const struct flaky_sched *s, int64_t days, int mday)
{
	int	 dom = (s->mdays >> mday) & 1;
	int	 dow = (s->wdays >> weekday(days)) & 1;

	if (s->flags & (FLAKY_SCHED_DOM_STAR | FLAKY_SCHED_DOW_STAR))
		return dom && dow;
	return dom || dow;
}

/* The first local wall-clock time (seconds, as if local were UTC) in
 * [from, limit) that the cron fields match; 0 or -ENOENT. */
static int
cron_next_local(const struct flaky_sched *s, int64_t from, int64_t limit,
    int64_t *ret)
{
	int64_t	 l = floor_div(from + 59, 60) * 60, days, y;
	int	 m, d, h, mi, sod;

	while (l < limit) {
		days = floor_div(l, 86400);
		civil_from_days(days, &y, &m, &d);
		if (!((s->months >> m) & 1)) {
			l = days_from_civil(m == 12 ? y + 1 : y,
			    m == 12 ? 1 : m + 1, 1) * 86400;
			continue;
		}
		if (!day_matches(s, days, d)) {
			l = (days + 1) * 86400;
			continue;
		}
		sod = (int)(l - days * 86400);
		h = sod / 3600;
		mi = sod / 60 % 60;
		for (; h < 24; h++, mi = 0) {
			if (!((s->hours >> h) & 1))
				continue;
			while (mi < 60 && !((s->minutes >> mi) & 1))
				mi++;
			if (mi < 60)
				break;
		}
		if (h == 24) {
			l = (days + 1) * 86400;
			continue;
		}
		l = days * 86400 + h * 3600 + mi * 60;
		if (l >= limit)
			break;
		*ret = l;
		return 0;
	}
	return -ENOENT;
}

/* The next fire time after an instant, walking stretches of constant offset. */
int
flaky_sched_next(const struct flaky_sched *s, const struct flaky_tz *tz,
    int64_t start_ms, int64_t after_ms, int64_t *ret_ms)
{
	struct period	 p;
	int64_t		 from, limit, t, l, end;
	int		 fixed;

	if (s->kind == FLAKY_SCHED_EVERY) {
		if (s->every_ms <= 0)
			return -EINVAL;
		if (after_ms < start_ms) {
			*ret_ms = start_ms;
			return 0;
		}
		if ((after_ms - start_ms) / s->every_ms + 1 >
		    (INT64_MAX - start_ms) / s->every_ms)
			return -ERANGE;
		*ret_ms = start_ms + ((after_ms - start_ms) / s->every_ms + 1) *
		    s->every_ms;
		return 0;
	}
	if (s->minutes == 0 || s->hours == 0 || s->months == 0 ||
	    (s->mdays == 0 && s->wdays == 0))
		return -EINVAL;
	fixed = !(s->flags & (FLAKY_SCHED_MIN_STAR | FLAKY_SCHED_HOUR_STAR));
	from = floor_div(after_ms, 1000) + 1;
	limit = from + SCHED_CAP_S;
	for (t = from; t < limit; t = p.t1) {
		tz_period(tz, t, &p);
		/* Entering a stretch after a jump forward: a fixed-time job
		 * due in the skipped local times runs at the jump. */
		if (fixed && t == p.t0 && p.off_prev < p.off &&
		    cron_next_local(s, p.t0 + p.off_prev, p.t0 + p.off,
		    &l) == 0) {
			*ret_ms = p.t0 * 1000;
			return 0;
		}
		end = p.t1 < limit ? p.t1 : limit;
		l = t + p.off;
		while (cron_next_local(s, l, end + p.off, &l) == 0) {
			/* After a jump back, a fixed-time job already ran at
			 * the first occurrence of these local times. */
			if (fixed && p.t0 != T_MIN && p.off_prev > p.off &&
			    l < p.t0 + p.off_prev) {
				l = p.t0 + p.off_prev;
				continue;
			}
			*ret_ms = (l - p.off) * 1000;
			return 0;
		}
		if (p.t1 == T_MAX)
			break;
	}
	return -ERANGE;
}
