/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "http_date.h"

static const char months[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};
static const char days[7][4] = {
	"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed",	/* from 1970-01-01 */
};
static const char *const long_days[7] = {
	"Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday",
	"Wednesday",
};

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil): no time zone, no locale, no libc. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool
leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* n decimal digits at p, into *v. */
static bool
digits(const char *p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		*v = *v * 10 + (p[i] - '0');
	}
	return true;
}

static int
month_of(const char *p)
{
	int i;

	for (i = 0; i < 12; i++)
		if (memcmp(p, months[i], 3) == 0)
			return i + 1;
	return 0;
}

static bool
short_day(const char *p)
{
	int i;

	for (i = 0; i < 7; i++)
		if (memcmp(p, days[i], 3) == 0)
			return true;
	return false;
}

/* "HH:MM:SS" into seconds of the day. */
static bool
time_of_day(const char *p, int64_t *secs)
{
	int h, m, s;

	if (p[2] != ':' || p[5] != ':' || !digits(p, 2, &h) ||
			!digits(p + 3, 2, &m) || !digits(p + 6, 2, &s) ||
			h > 23 || m > 59 || s > 60)
		return false;
	*secs = h * 3600 + m * 60 + s;
	return true;
}

static bool
civil(int64_t y, int m, int d, int64_t secs, int64_t *t)
{
	static const int mdays[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
	};

	if (m < 1 || d < 1 || d > mdays[m - 1] + (m == 2 && leap(y)))
		return false;
	*t = days_from_civil(y, m, d) * 86400 + secs;
	return true;
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
static bool
imf_fixdate(const char *p, int64_t *t)
{
	int64_t secs;
	int d, y;

	return short_day(p) && memcmp(p + 3, ", ", 2) == 0 &&
		digits(p + 5, 2, &d) && p[7] == ' ' && p[11] == ' ' &&
		digits(p + 12, 4, &y) && p[16] == ' ' &&
		time_of_day(p + 17, &secs) && memcmp(p + 25, " GMT", 4) == 0 &&
		civil(y, month_of(p + 8), d, secs, t);
}

/* "Sun Nov  6 08:49:37 1994" */
static bool
asctime_date(const char *p, int64_t *t)
{
	int64_t secs;
	int d, y;

	if (!short_day(p) || p[3] != ' ' || p[7] != ' ' || p[10] != ' ' ||
			p[19] != ' ' || !time_of_day(p + 11, &secs) ||
			!digits(p + 20, 4, &y))
		return false;
	if (p[8] == ' ') {
		if (!digits(p + 9, 1, &d))
			return false;
	} else if (!digits(p + 8, 2, &d)) {
		return false;
	}
	return civil(y, month_of(p + 4), d, secs, t);
}

/* "Sunday, 06-Nov-94 08:49:37 GMT" */
static bool
rfc850_date(const char *p, size_t len, int64_t now, int64_t *t)
{
	int64_t secs, y, now_y;
	int i, d, yy, now_m, now_d;
	size_t n;

	for (i = 0; i < 7; i++) {
		n = strlen(long_days[i]);
		if (len == n + 24 && memcmp(p, long_days[i], n) == 0)
			break;
	}
	if (i == 7)
		return false;
	p += n;
	if (memcmp(p, ", ", 2) != 0 || !digits(p + 2, 2, &d) || p[4] != '-' ||
			p[8] != '-' || !digits(p + 9, 2, &yy) || p[11] != ' ' ||
			!time_of_day(p + 12, &secs) ||
			memcmp(p + 20, " GMT", 4) != 0)
		return false;
	/* RFC 9110 5.6.7: more than 50 years ahead is the century before. */
	civil_from_days(now / 86400, &now_y, &now_m, &now_d);
	y = now_y - now_y % 100 + yy;
	if (y > now_y + 50)
		y -= 100;
	return civil(y, month_of(p + 5), d, secs, t);
}

bool
http_date_parse(const char *p, size_t len, int64_t now, int64_t *t)
{
	if (p == NULL)
		return false;
	if (len == HTTP_DATE_LEN)
		return imf_fixdate(p, t);
	if (len == 24)
		return asctime_date(p, t);
	return len > 24 && rfc850_date(p, len, now, t);
}

static void
two(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

void
http_date_format(int64_t t, char *out)
{
	int64_t z = t / 86400, secs = t % 86400, y;
	int m, d;

	civil_from_days(z, &y, &m, &d);
	memcpy(out, days[z % 7], 3);
	memcpy(out + 3, ", ", 2);
	two(out + 5, d);
	out[7] = ' ';
	memcpy(out + 8, months[m - 1], 3);
	out[11] = ' ';
	two(out + 12, (int)(y / 100));
	two(out + 14, (int)(y % 100));
	out[16] = ' ';
	two(out + 17, (int)(secs / 3600));
	out[19] = ':';
	two(out + 20, (int)(secs / 60 % 60));
	out[22] = ':';
	two(out + 23, (int)(secs % 60));
	memcpy(out + 25, " GMT", 5);
}
