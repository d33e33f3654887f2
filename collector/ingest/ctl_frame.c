// SPDX-License-Identifier: MIT
/*
 * ctl_frame.c - control channel frame codec (see ctl_frame.h).
 *
 * Invariant: every length read from the input is checked against the bytes left before the
 * bytes it announces are touched.
 */
#include "ctl_frame.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "fgle.h"

int ctl_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

void ctl_hdr_encode(uint8_t *p, const struct ctl_hdr *h)
{
	fgle_put32(p, h->size);
	fgle_put16(p + 4, h->kind);
	fgle_put16(p + 6, h->flags);
	fgle_put32(p + 8, h->host_pid);
}

void ctl_hdr_set_size(uint8_t *p, uint32_t size)
{
	fgle_put32(p, size);
}

static void hdr_decode(const uint8_t *p, struct ctl_hdr *h)
{
	h->size = fgle_get32(p);
	h->kind = fgle_get16(p + 4);
	h->flags = fgle_get16(p + 6);
	h->host_pid = fgle_get32(p + 8);
}

int ctl_frame_peek(const uint8_t *buf, size_t len, struct ctl_hdr *h)
{
	struct ctl_hdr x;

	if (len < CTL_HDR_SIZE)
		return 0;
	hdr_decode(buf, &x);
	if (x.size < CTL_HDR_SIZE || x.size > CTL_MAX_FRAME)
		return -EPROTO;
	if (len < x.size)
		return 0;
	*h = x;
	return 1;
}

int ctl_request_decode(const uint8_t *buf, size_t len, struct ctl_hdr *h)
{
	struct ctl_hdr x;

	if (len != CTL_HDR_SIZE)
		return -EPROTO;
	hdr_decode(buf, &x);
	if (x.size != CTL_HDR_SIZE)
		return -EPROTO;
	*h = x;
	return 0;
}

static size_t put_str(uint8_t *p, const char *s)
{
	size_t n = strnlen(s, CTL_STR_MAX);

	fgle_put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return 2 + n;
}

size_t ctl_jvm_encode(uint8_t *buf, const struct jvm_info *ji)
{
	size_t n;

	fgle_put32(buf, ji->ns_pid);
	fgle_put32(buf + 4, ji->hello_flags);
	fgle_put64(buf + 8, ji->start_time);
	fgle_put64(buf + 16, ji->connect_ts);
	fgle_put64(buf + 24, ji->exit_ts);
	buf[32] = ji->connected;
	buf[33] = ji->exited;
	buf[34] = ji->tables ? 2 : 1; /* 0 from older daemons: unknown */
	buf[35] = 0;
	n = CTL_JVM_FIXED;
	n += put_str(buf + n, ji->container_id);
	n += put_str(buf + n, ji->jvm_version);
	n += put_str(buf + n, ji->agent_version);
	n += put_str(buf + n, ji->service);
	return n;
}

static int get_str(const uint8_t **p, const uint8_t *end, char *dst, size_t cap)
{
	uint16_t n;
	size_t k;

	if (end - *p < 2)
		return -EPROTO;
	n = fgle_get16(*p);
	*p += 2;
	if (end - *p < n)
		return -EPROTO;
	k = n < cap - 1 ? n : cap - 1;
	memcpy(dst, *p, k);
	dst[k] = '\0';
	*p += n;
	return 0;
}

int ctl_jvm_decode(const uint8_t *payload, size_t len, uint32_t host_pid, struct jvm_info *out)
{
	const uint8_t *p = payload, *end = payload + len;
	struct jvm_info ji;

	if (len < CTL_JVM_FIXED)
		return -EPROTO;
	memset(&ji, 0, sizeof(ji));
	ji.host_pid = host_pid;
	ji.ns_pid = fgle_get32(p);
	ji.hello_flags = fgle_get32(p + 4);
	ji.start_time = fgle_get64(p + 8);
	ji.connect_ts = fgle_get64(p + 16);
	ji.exit_ts = fgle_get64(p + 24);
	ji.connected = p[32] != 0;
	ji.exited = p[33] != 0;
	/* An older daemon does not say: take the tables as on (it forwards no TABLES). */
	ji.tables = p[34] != 1;
	p += CTL_JVM_FIXED;
	if (get_str(&p, end, ji.container_id, sizeof(ji.container_id)) ||
	    get_str(&p, end, ji.jvm_version, sizeof(ji.jvm_version)) ||
	    get_str(&p, end, ji.agent_version, sizeof(ji.agent_version)))
		return -EPROTO;
	/* Optional: older daemons do not send it; newer fields after it are ignored. */
	if (p < end && get_str(&p, end, ji.service, sizeof(ji.service)))
		return -EPROTO;
	*out = ji;
	return 0;
}
