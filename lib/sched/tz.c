/* Time zones for the schedules: TZif files (RFC 8536) and POSIX TZ
 * strings read here, not through setenv("TZ") + localtime_r, which would
 * change the whole process's zone and re-read the file on every switch.
 * A zone is a table of transitions and, after it, the file's POSIX rule;
 * tz_period() answers with the stretch of constant offset around an
 * instant, which is all sched.c needs. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/sched.h"
#include "sched/sched_int.h"
#include "util/util.h"

#define TZ_MAX_FILE	(1024 * 1024)
#define TZ_MAX_TIMES	100000

/* ---- civil calendar (proleptic Gregorian, days since 1970-01-01) ---- */

/* Division rounding toward minus infinity, for times before 1970. */
int64_t
sched_floor_div(int64_t a, int64_t b)
{
	int64_t	 q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Days since the epoch of a civil date (H. Hinnant's algorithm). */
int64_t
sched_days_from_civil(int64_t y, int m, int d)
{
	int64_t	 era, yoe, doy, doe;

	y -= m <= 2;
	era = sched_floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Civil date of a day number. */
void
sched_civil_from_days(int64_t z, int64_t *ret_y, int *ret_m, int *ret_d)
{
	int64_t	 era, doe, yoe, y, doy, mp;

	z += 719468;
	era = sched_floor_div(z, 146097);
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
int
sched_weekday(int64_t days)
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
	int64_t	 day = sched_days_from_civil(y, 1, 1);

	switch (dt->kind) {
	case 'J':
		day += dt->n - 1 + (is_leap(y) && dt->n >= 60);
		break;
	case 'D':
		day += dt->n;
		break;
	default: {
		int64_t	 first = sched_days_from_civil(y, dt->m, 1);
		int	 md = 1 + (dt->d - sched_weekday(first) + 7) % 7 +
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
void
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

		sched_civil_from_days(sched_floor_div(t, 86400), &y, &m, &d);
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
	int64_t	 t = sched_floor_div(ms, 1000), local, days, y;
	int32_t	 off = flaky_tz_offset(tz, t), aoff;
	int	 m, d, sod;

	local = t + off;
	days = sched_floor_div(local, 86400);
	sod = (int)(local - days * 86400);
	sched_civil_from_days(days, &y, &m, &d);
	aoff = off < 0 ? -off : off;
	snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d%c%02d:%02d",
	    (long long)y, m, d, sod / 3600, sod / 60 % 60, sod % 60,
	    off < 0 ? '-' : '+', aoff / 3600, aoff / 60 % 60);
	return buf;
}
