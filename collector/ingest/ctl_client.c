// SPDX-License-Identifier: MIT
/*
 * ctl_client.c - the record command's side of the control channel (see ctl_client.h).
 *
 * Invariant: a frame is dispatched only once ctl_frame_peek() has seen all of it; the buffer
 * holds at most CTL_MAX_FRAME bytes, so one frame always fits.
 */
#include "ctl_client.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "array.h"
#include "codetab.h"
#include "ctl_frame.h"
#include "fgproto.h"
#include "fgfree.h"

struct pid_tab {
	uint32_t pid;
	struct codetab *tab;
};

struct ctl_client {
	int fd;
	uint8_t *buf; /* CTL_MAX_FRAME */
	size_t len;
	struct pid_tab *tabs;
	size_t n_tabs, cap_tabs;
	struct ctl_ev_buf *evb; /* a decoded event's frames and tags, at the first EVENTS */
};

int ctl_connect(const char *path, struct ctl_client **out)
{
	struct sockaddr_un sa;
	struct ctl_client *c;
	int rv, fd;

	if ((rv = ctl_addr(path, &sa)) != 0)
		return rv;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rv = errno == ECONNREFUSED ? -ENOENT : -errno;
		close(fd);
		return rv;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->buf = malloc(CTL_MAX_FRAME))) {
		free(c);
		close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	*out = c;
	return 0;
}

void ctl_close(struct ctl_client *c)
{
	if (!c)
		return;
	close(c->fd);
	FG_FREE_ALL(c->buf, c->tabs, c->evb, c);
}

int ctl_fd(const struct ctl_client *c)
{
	return c->fd;
}

static int send_req_payload(struct ctl_client *c, uint16_t kind, uint32_t pid,
			    const uint8_t *payload, size_t len)
{
	struct ctl_hdr h = { (uint32_t)(CTL_HDR_SIZE + len), kind, 0, pid };
	uint8_t f[CTL_REQ_MAX];
	size_t off = 0;

	if (len > CTL_REQ_MAX - CTL_HDR_SIZE)
		return -EINVAL;
	ctl_hdr_encode(f, &h);
	if (len)
		memcpy(f + CTL_HDR_SIZE, payload, len);
	while (off < h.size) {
		ssize_t n = send(c->fd, f + off, h.size - off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

static int send_req(struct ctl_client *c, uint16_t kind, uint32_t pid)
{
	return send_req_payload(c, kind, pid, NULL, 0);
}

int ctl_subscribe(struct ctl_client *c, uint32_t host_pid)
{
	return send_req(c, CTL_SUBSCRIBE, host_pid);
}

int ctl_events(struct ctl_client *c, const struct jvm_evwant *w)
{
	uint8_t p[CTL_EVWANT_SIZE];

	ctl_evwant_encode(p, w);
	return send_req_payload(c, CTL_EVENTS_REQ, 0, p, sizeof(p));
}

/* An EVENTS frame: every item to h->ev; a malformed rest is counted once in *bad. */
static int dispatch_events(struct ctl_client *c, uint32_t pid, const uint8_t *p, size_t len,
			   const struct ctl_handler *h, uint64_t *bad)
{
	const uint8_t *end = p + len;
	struct jvm_event ev;
	int rv;

	if (!h->ev)
		return 0;
	if (!c->evb && !(c->evb = malloc(sizeof(*c->evb))))
		return -ENOMEM;
	while ((rv = ctl_event_decode(&p, end, pid, &ev, c->evb)) == 1)
		h->ev(h->arg, &ev);
	if (rv < 0 && bad)
		(*bad)++;
	return 0;
}

/* Drop the frame h at the start of the buffer. */
static void consume(struct ctl_client *c, const struct ctl_hdr *h)
{
	memmove(c->buf, c->buf + h->size, c->len - h->size);
	c->len -= h->size;
}

static int fill(struct ctl_client *c, int timeout_ms)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	ssize_t n;
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	n = read(c->fd, c->buf + c->len, CTL_MAX_FRAME - c->len);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	c->len += (size_t)n;
	return 0;
}

int ctl_list(struct ctl_client *c, struct jvm_info *out, size_t max, size_t *n, int timeout_ms)
{
	size_t got = 0;
	int rv;

	if ((rv = send_req(c, CTL_LIST, 0)) != 0)
		return rv;
	for (;;) {
		struct ctl_hdr h;

		while ((rv = ctl_frame_peek(c->buf, c->len, &h)) == 1) {
			if (h.kind == CTL_LIST_END) {
				consume(c, &h);
				*n = got;
				return 0;
			}
			if (h.kind == CTL_JVM) {
				struct jvm_info ji;

				if (ctl_jvm_decode(c->buf + CTL_HDR_SIZE, h.size - CTL_HDR_SIZE,
						   h.host_pid, &ji) != 0)
					return -EPROTO;
				if (got < max)
					out[got] = ji;
				got++;
			}
			consume(c, &h);
		}
		if (rv < 0)
			return rv;
		if ((rv = fill(c, timeout_ms)) != 0)
			return rv;
	}
}

static struct codetab **tab_slot(struct ctl_client *c, uint32_t pid, bool create)
{
	for (size_t i = 0; i < c->n_tabs; i++)
		if (c->tabs[i].pid == pid)
			return &c->tabs[i].tab;
	if (!create)
		return NULL;
	if (ARRAY_GROW(c->tabs, c->cap_tabs, c->n_tabs + 1) != 0)
		return NULL;
	c->tabs[c->n_tabs] = (struct pid_tab){ .pid = pid };
	return &c->tabs[c->n_tabs++].tab;
}

void ctl_forget(struct ctl_client *c, uint32_t host_pid)
{
	for (size_t i = 0; i < c->n_tabs; i++)
		if (c->tabs[i].pid == host_pid) {
			c->tabs[i] = c->tabs[--c->n_tabs];
			return;
		}
}

static int dispatch(struct ctl_client *c, const struct ctl_hdr *fh, const struct ctl_handler *h,
		    uint64_t *bad)
{
	const uint8_t *payload = c->buf + CTL_HDR_SIZE;
	size_t len = fh->size - CTL_HDR_SIZE;
	uint32_t pid = fh->host_pid;
	struct codetab **slot;

	if (fh->kind == CTL_JVM) {
		struct jvm_info ji;

		if (ctl_jvm_decode(payload, len, pid, &ji) != 0)
			return -EPROTO;
		slot = tab_slot(c, pid, true);
		if (!slot)
			return -ENOMEM;
		*slot = h->jvm ? h->jvm(h->arg, &ji) : NULL;
	} else if (fh->kind == CTL_GONE) {
		if (h->gone)
			h->gone(h->arg, pid, (fh->flags & CTL_GONE_EXITED) != 0);
	} else if (fh->kind == CTL_EVENTS) {
		return dispatch_events(c, pid, payload, len, h, bad);
	} else if (fh->kind == CTL_RECORDS) {
		struct fgp_reader r;
		struct fgp_record rec;
		int rv;

		slot = tab_slot(c, pid, false);
		if (!slot || !*slot)
			return 0;
		if (fgp_reader_init(&r, payload, len) != 0)
			return -EPROTO;
		while ((rv = fgp_next(&r, &rec)) != 0) {
			if (rv < 0) {
				if (bad)
					(*bad)++;
				continue;
			}
			if (rec.type == FGP_DROPPED && h->dropped)
				h->dropped(h->arg, pid, &rec.u.dropped);
			if (rec.type == FGP_TABLES && h->tables)
				h->tables(h->arg, pid, rec.u.tables.on != 0);
			codetab_apply(*slot, &rec);
		}
	}
	return 0;
}

int ctl_pump(struct ctl_client *c, int timeout_ms, const struct ctl_handler *h,
	     uint64_t *bad_records)
{
	int frames = 0, rv;

	for (;;) {
		struct ctl_hdr fh;

		while ((rv = ctl_frame_peek(c->buf, c->len, &fh)) == 1) {
			if ((rv = dispatch(c, &fh, h, bad_records)) != 0)
				return rv;
			consume(c, &fh);
			frames++;
		}
		if (rv < 0)
			return rv;
		if (frames > 0 && timeout_ms < 0)
			timeout_ms = 0;
		rv = fill(c, timeout_ms);
		if (rv == -ETIMEDOUT)
			return frames;
		if (rv < 0)
			return rv;
		if (timeout_ms > 0)
			timeout_ms = 0; /* after the first arrival, take only what is there */
	}
}
