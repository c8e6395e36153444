/* Schedule expressions and their next fire time. Cron fields become bit
 * sets; the next time is searched in local wall-clock time, one stretch of
 * constant UTC offset at a time (tz.c), so the daylight saving rules only
 * have to look at the edges of those stretches. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sched/sched.h"
#include "sched/sched_int.h"
#include "util/util.h"

#define SCHED_MAX_EXPR	256
/* How far the next fire time is searched: long enough for Feb 29 on any
 * weekday across a skipped leap year (2096 -> 2104), short enough to be a
 * cheap refusal for dates that never come. */
#define SCHED_CAP_S	((int64_t)11 * 366 * 86400)

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

/* ---- next fire time ---- */

/* Does a day match? Either day field will do when both are restricted. */
static int
day_matches(const struct flaky_sched *s, int64_t days, int mday)
{
	int	 dom = (s->mdays >> mday) & 1;
	int	 dow = (s->wdays >> sched_weekday(days)) & 1;

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
	int64_t	 l = sched_floor_div(from + 59, 60) * 60, days, y;
	int	 m, d, h, mi, sod;

	while (l < limit) {
		days = sched_floor_div(l, 86400);
		sched_civil_from_days(days, &y, &m, &d);
		if (!((s->months >> m) & 1)) {
			l = sched_days_from_civil(m == 12 ? y + 1 : y,
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
	from = sched_floor_div(after_ms, 1000) + 1;
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
