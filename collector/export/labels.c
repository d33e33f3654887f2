// SPDX-License-Identifier: MIT
/*
 * labels.c - profile labels as file-name stems, parsed stems and label values (see labels.h).
 */
#include "labels.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

const char *prof_event_title(enum fg_event e)
{
	return evkind_of(e)->title;
}

const char *prof_event_name(enum fg_event e)
{
	return evkind_name((unsigned)e < FG_NEVENTS ? e : FG_EVENT_CPU);
}

const char *prof_event_suffix(enum fg_event e)
{
	return evkind_of(e)->suffix;
}

void prof_labels_set(struct prof_labels *l, const char *service, const char *container_id,
		     uint32_t host_pid, const char *hostname)
{
	copy(l->service, sizeof(l->service), service);
	copy(l->container_id, sizeof(l->container_id), container_id);
	l->host_pid = host_pid;
	copy(l->hostname, sizeof(l->hostname), hostname);
	l->event = FG_EVENT_CPU;
}

const char *prof_labels_service(const struct prof_labels *l, char *buf, size_t cap)
{
	if (l->service[0])
		return l->service;
	snprintf(buf, cap, "pid-%u", l->host_pid);
	return buf;
}

void prof_labels_title(const struct prof_labels *l, char *out, size_t cap)
{
	char sb[24];

	snprintf(out, cap, "%s: %s | container %.12s | PID %u | host %s",
		 evkind_of(l->event)->title, prof_labels_service(l, sb, sizeof(sb)),
		 l->container_id[0] ? l->container_id : "none", l->host_pid, l->hostname);
}

static int alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A stem field: A-Z a-z 0-9 . - kept, the rest '-'; never empty (then "unknown"). */
static size_t field(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; in && *in && n + 1 < cap; in++)
		out[n++] = alnum(*in) || *in == '.' || *in == '-' ? *in : '-';
	if (n == 0)
		n = (size_t)snprintf(out, cap, "unknown");
	out[n] = '\0';
	return n;
}

void prof_labels_stem(const struct prof_labels *l, int64_t start_unix, char *out)
{
	char svc[LABELS_SERVICE_MAX + 1], host[LABELS_HOST_MAX + 1], cid[13], tbuf[20], sb[24];
	time_t t = (time_t)start_unix;
	struct tm tm;

	field(prof_labels_service(l, sb, sizeof(sb)), svc, sizeof(svc));
	field(l->hostname, host, sizeof(host));
	if (l->container_id[0])
		snprintf(cid, sizeof(cid), "%.12s", l->container_id);
	else
		snprintf(cid, sizeof(cid), "host");
	gmtime_r(&t, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, LABELS_STEM_MAX, "%s_%s_%s_%u_%s%s", tbuf, svc, cid, l->host_pid, host,
		 prof_event_suffix(l->event));
}

/* The next '_'-separated field of s[*off..len) into out (cap bytes); 0 or -EINVAL. */
static int next_field(const char *s, size_t len, size_t *off, char *out, size_t cap)
{
	size_t start = *off, n;

	while (*off < len && s[*off] != '_')
		(*off)++;
	n = *off - start;
	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(out, s + start, n);
	out[n] = '\0';
	if (*off < len)
		(*off)++; /* the separator */
	return 0;
}

static int all_of(const char *s, const char *set)
{
	for (; *s; s++)
		if (!alnum(*s) && !strchr(set, *s))
			return 0;
	return 1;
}

int prof_stem_parse(const char *stem, size_t len, struct prof_stem *out)
{
	struct prof_stem p;
	char tbuf[17], pid[11];
	size_t off = 0;
	struct tm tm;
	char *end;
	unsigned long v;

	memset(&p, 0, sizeof(p));
	/* A trailing event suffix (a host name ending so is read as one: hosts do not). */
	for (unsigned e = 1; e < FG_NEVENTS; e++) {
		size_t sl = strlen(evkind_of((enum fg_event)e)->suffix);

		if (len > sl && !memcmp(stem + len - sl, evkind_of((enum fg_event)e)->suffix, sl)) {
			p.event = (enum fg_event)e;
			len -= sl;
			break;
		}
	}
	if (next_field(stem, len, &off, tbuf, sizeof(tbuf)) ||
	    next_field(stem, len, &off, p.service, sizeof(p.service)) ||
	    next_field(stem, len, &off, p.cid12, sizeof(p.cid12)) ||
	    next_field(stem, len, &off, pid, sizeof(pid)) ||
	    next_field(stem, len, &off, p.hostname, sizeof(p.hostname)) || off != len ||
	    stem[len - 1] == '_')
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	end = strptime(tbuf, "%Y%m%dT%H%M%SZ", &tm);
	if (!end || *end || strlen(tbuf) != 16)
		return -EINVAL;
	p.start_unix = (int64_t)timegm(&tm);
	if (!all_of(p.service, ".-") || !all_of(p.hostname, ".-"))
		return -EINVAL;
	if (strcmp(p.cid12, "host") != 0 &&
	    (strlen(p.cid12) != 12 || strspn(p.cid12, "0123456789abcdef") != 12))
		return -EINVAL;
	if (strspn(pid, "0123456789") != strlen(pid) || pid[0] == '0')
		return -EINVAL;
	v = strtoul(pid, &end, 10);
	if (v == 0 || v > UINT32_MAX)
		return -EINVAL;
	p.host_pid = (uint32_t)v;
	*out = p;
	return 0;
}

void prof_label_value(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; in && *in && n + 1 < cap; in++)
		out[n++] = alnum(*in) || *in == '.' || *in == '-' || *in == '_' ? *in : '_';
	if (n == 0)
		n = (size_t)snprintf(out, cap, "unknown");
	out[n] = '\0';
}
