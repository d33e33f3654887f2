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

/*
 * A fixed record's fields in wire order as X(bits, member, offset), little-endian; PUT_FIELD and
 * GET_FIELD move one between the wire at p and the struct at x.
 */
#define PUT_FIELD(bits, m, off) fgle_put##bits(p + (off), x->m);
#define GET_FIELD(bits, m, off) x->m = fgle_get##bits(p + (off));

/*
 * A fixed record, a struct tag whose fields FIELDS lists: ctl_NAME_encode(p, x) writes them, the
 * file's NAME_get(p, x) reads them back (no checks: its caller has the bytes and checks values).
 */
#define CTL_FIXED_RECORD(name, tag, FIELDS)                                                        \
	void ctl_##name##_encode(uint8_t *p, const struct tag *x)                                  \
	{                                                                                          \
		FIELDS(PUT_FIELD)                                                                  \
	}                                                                                          \
	static void name##_get(const uint8_t *p, struct tag *x)                                    \
	{                                                                                          \
		FIELDS(GET_FIELD)                                                                  \
	}

#define CTL_HDR_FIELDS(X)                                                                          \
	X(32, size, 0)                                                                             \
	X(16, kind, 4)                                                                             \
	X(16, flags, 6)                                                                            \
	X(32, host_pid, 8)

CTL_FIXED_RECORD(hdr, ctl_hdr, CTL_HDR_FIELDS)

void ctl_hdr_set_size(uint8_t *p, uint32_t size)
{
	fgle_put32(p, size);
}

int ctl_frame_peek(const uint8_t *buf, size_t len, struct ctl_hdr *h)
{
	struct ctl_hdr x;

	if (len < CTL_HDR_SIZE)
		return 0;
	hdr_get(buf, &x);
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

	if (len < CTL_HDR_SIZE || len > CTL_REQ_MAX)
		return -EPROTO;
	hdr_get(buf, &x);
	if (x.size != len)
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

/* ---- events ---------------------------------------------------------------------------- */

#define CTL_EVWANT_FIELDS(X)                                                                       \
	X(32, on, 0)                                                                               \
	X(32, lock_us, 4)                                                                          \
	X(64, alloc_interval, 8)                                                                   \
	X(32, depth, 16)                                                                           \
	X(32, budget_ppm, 20)

CTL_FIXED_RECORD(evwant, jvm_evwant, CTL_EVWANT_FIELDS)

int ctl_evwant_decode(const uint8_t *p, size_t len, struct jvm_evwant *out)
{
	struct jvm_evwant w;

	if (len != CTL_EVWANT_SIZE)
		return -EPROTO;
	evwant_get(p, &w);
	w.on &= FGP_EVM_ALL;
	if (w.budget_ppm > JVM_EVWANT_MAX_BUDGET)
		w.budget_ppm = JVM_EVWANT_MAX_BUDGET;
	if (w.on & (FGP_EVM_ALLOC | FGP_EVM_LIVE)) {
		if (w.alloc_interval == 0)
			w.alloc_interval = 1;
		if (w.alloc_interval > JVM_EVWANT_MAX_INTERVAL)
			w.alloc_interval = JVM_EVWANT_MAX_INTERVAL;
	}
	if (w.depth > FGP_MAX_EVENT_DEPTH)
		w.depth = FGP_MAX_EVENT_DEPTH;
	*out = w;
	return 0;
}

static size_t put_bytes(uint8_t *p, const char *s, size_t n)
{
	if (n > CTL_STR_MAX)
		n = CTL_STR_MAX;
	fgle_put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return 2 + n;
}

static size_t ev_stack_encode(uint8_t *buf, size_t cap, const struct jvm_event *ev)
{
	size_t n = 4 + CTL_EV_STACK_FIXED,
	       cls = ev->cls.len < CTL_STR_MAX ? ev->cls.len : CTL_STR_MAX;
	uint16_t depth = 0;

	if (cap < n + 2 + cls)
		return 0;
	buf[4] = 1;
	buf[5] = (uint8_t)ev->kind;
	buf[7] = 0;
	fgle_put32(buf + 8, ev->host_tid);
	fgle_put64(buf + 12, ev->ts);
	fgle_put64(buf + 20, ev->value);
	fgle_put64(buf + 28, ev->interval);
	fgle_put64(buf + 36, ev->tag);
	/* after depth: an allocation's gap weight in 48 bits (0: none, or too large to carry) */
	fgle_put16(buf + 46, (uint16_t)(ev->weight >> 48 ? 0 : ev->weight));
	fgle_put32(buf + 48, (uint32_t)(ev->weight >> 48 ? 0 : ev->weight >> 16));
	n += put_bytes(buf + n, ev->cls.ptr, cls);
	for (; depth < ev->depth; depth++) {
		const struct jvm_ev_frame *f = &ev->frames[depth];
		size_t k = f->len < CTL_STR_MAX ? f->len : CTL_STR_MAX;

		if (n + 2 + k + 4 > cap)
			break;
		n += put_bytes(buf + n, f->name, k);
		fgle_put32(buf + n, (uint32_t)f->line);
		n += 4;
	}
	buf[6] = ev->truncated || depth < ev->depth;
	fgle_put16(buf + 44, depth);
	return n;
}

/* A state and a cost event's fields, as CTL_HDR_FIELDS; offsets from the event's kind byte. */
#define EV_STATE_FIELDS(X)                                                                         \
	X(32, state.on, 4)                                                                         \
	X(64, state.ts, 8)                                                                         \
	X(64, state.alloc_interval, 16)                                                            \
	X(64, state.lock_threshold_ns, 24)                                                         \
	X(64, state.dropped_queue, 32)                                                             \
	X(64, state.dropped_other, 40)                                                             \
	X(64, state.lock_short, 48)                                                                \
	X(64, state.lock_short_ns, 56)                                                             \
	X(64, drops.unknown_id, 64)                                                                \
	X(64, drops.unknown_tid, 72)                                                               \
	X(64, drops.unwanted, 80)                                                                  \
	X(64, drops.bad, 88)
#define EV_COST_FIELDS(X)                                                                          \
	X(64, cost.ts, 8)                                                                          \
	X(64, cost.samples, 16)                                                                    \
	X(64, cost.cost_ns, 24)                                                                    \
	X(64, cost.cpu_ns, 32)

/*
 * The head of an event of n bytes in all, not a stack (its size word is the caller's): the
 * kind byte kind, then a zero byte and a zero 16-bit word. n, or 0 when cap cannot hold it.
 */
static size_t ev_head(uint8_t *buf, size_t cap, size_t n, uint8_t kind)
{
	if (n > cap)
		return 0;
	buf[4] = kind;
	buf[5] = 0;
	fgle_put16(buf + 6, 0);
	return n;
}

size_t ctl_event_encode(uint8_t *buf, size_t cap, const struct jvm_event *ev)
{
	uint8_t *p = buf + 4; /* the event's kind byte */
	const struct jvm_event *x = ev;
	size_t n = 0;

	switch (ev->type) {
	case JVM_EV_STACK:
		n = ev_stack_encode(buf, cap, ev);
		break;
	case JVM_EV_FREE:
		if (!ev->ntags || ev->ntags > FGP_MAX_FREE_TAGS ||
		    !(n = ev_head(buf, cap, 4 + 8 + 8 * (size_t)ev->ntags, 2)))
			return 0;
		fgle_put32(buf + 8, ev->ntags);
		for (uint32_t i = 0; i < ev->ntags; i++)
			fgle_put64(buf + 12 + 8 * (size_t)i, ev->tags[i]);
		break;
	case JVM_EV_STATE:
		if (!(n = ev_head(buf, cap, 4 + 8 + 8 * 11, 3)))
			return 0;
		EV_STATE_FIELDS(PUT_FIELD)
		break;
	case JVM_EV_COST:
		if (!(n = ev_head(buf, cap, 4 + 8 + 8 * 4, 4)))
			return 0;
		fgle_put32(buf + 8, 0);
		EV_COST_FIELDS(PUT_FIELD)
		break;
	}
	if (n)
		fgle_put32(buf, (uint32_t)(n - 4));
	return n;
}

static int get_bytes(const uint8_t **p, const uint8_t *end, const char **s, uint16_t *len)
{
	uint16_t n;

	if (end - *p < 2)
		return -EPROTO;
	n = fgle_get16(*p);
	if (n > CTL_STR_MAX || end - *p - 2 < n)
		return -EPROTO;
	*s = (const char *)*p + 2;
	*len = n;
	*p += 2 + n;
	return 0;
}

static int ev_stack_decode(const uint8_t *p, const uint8_t *end, struct jvm_event *ev,
			   struct ctl_ev_buf *b)
{
	const char *cls;
	uint16_t cls_len;

	if (end - p < CTL_EV_STACK_FIXED)
		return -EPROTO;
	ev->kind = p[1];
	ev->truncated = p[2] != 0;
	ev->host_tid = fgle_get32(p + 4);
	ev->ts = fgle_get64(p + 8);
	ev->value = fgle_get64(p + 16);
	ev->interval = fgle_get64(p + 24);
	ev->tag = fgle_get64(p + 32);
	ev->depth = fgle_get16(p + 40);
	ev->weight = ev->kind == FGP_EV_ALLOC
			     ? (uint64_t)fgle_get16(p + 42) | (uint64_t)fgle_get32(p + 44) << 16
			     : 0;
	if ((ev->kind != FGP_EV_ALLOC && ev->kind != FGP_EV_LOCK && ev->kind != FGP_EV_VWAIT &&
	     ev->kind != FGP_EV_VMOUNT) ||
	    ev->depth > FGP_MAX_EVENT_DEPTH)
		return -EPROTO;
	p += CTL_EV_STACK_FIXED;
	if (get_bytes(&p, end, &cls, &cls_len) != 0 || !cls_len)
		return -EPROTO;
	ev->cls = (struct fgp_str){ cls, cls_len };
	for (uint16_t i = 0; i < ev->depth; i++) {
		struct jvm_ev_frame *f = &b->frames[i];

		if (get_bytes(&p, end, &f->name, &f->len) != 0 || end - p < 4)
			return -EPROTO;
		f->line = (int32_t)fgle_get32(p);
		p += 4;
	}
	ev->frames = b->frames;
	return p == end ? 0 : -EPROTO;
}

int ctl_event_decode(const uint8_t **pp, const uint8_t *end, uint32_t host_pid,
		     struct jvm_event *out, struct ctl_ev_buf *b)
{
	const uint8_t *p = *pp, *iend;
	struct jvm_event ev = { .host_pid = host_pid }, *x = &ev;
	uint32_t len;

	if (p == end)
		return 0;
	if (end - p < 8)
		return -EPROTO;
	len = fgle_get32(p);
	if (len < 4 || (size_t)(end - p - 4) < len)
		return -EPROTO;
	p += 4;
	iend = p + len;
	switch (p[0]) {
	case 1:
		ev.type = JVM_EV_STACK;
		if (ev_stack_decode(p, iend, &ev, b) != 0)
			return -EPROTO;
		break;
	case 2:
		ev.type = JVM_EV_FREE;
		if (len < 8)
			return -EPROTO;
		ev.ntags = fgle_get32(p + 4);
		if (!ev.ntags || ev.ntags > FGP_MAX_FREE_TAGS || len != 8 + 8 * (size_t)ev.ntags)
			return -EPROTO;
		for (uint32_t i = 0; i < ev.ntags; i++)
			b->tags[i] = fgle_get64(p + 8 + 8 * (size_t)i);
		ev.tags = b->tags;
		break;
	case 3:
		ev.type = JVM_EV_STATE;
		if (len != 8 + 8 * 11)
			return -EPROTO;
		EV_STATE_FIELDS(GET_FIELD)
		break;
	case 4:
		ev.type = JVM_EV_COST;
		if (len != 8 + 8 * 4)
			return -EPROTO;
		EV_COST_FIELDS(GET_FIELD)
		break;
	default:
		return -EPROTO;
	}
	*out = ev;
	*pp = iend;
	return 1;
}
