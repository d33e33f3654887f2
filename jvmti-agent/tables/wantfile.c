// SPDX-License-Identifier: MIT
/*
 * wantfile.c - reading and parsing the collector's want file (see wantfile.h).
 */
#include "wantfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocring.h"
#include "fgproto.h"
#include "fgsocket.h"

int wantfile_init(struct wantfile *w, const char *socket_path)
{
	memset(w, 0, sizeof(*w));
	if ((size_t)snprintf(w->path, sizeof(w->path), "%s%s", socket_path, FG_WANT_SUFFIX) >=
	    sizeof(w->path))
		return -ENAMETOOLONG;
	return 0;
}

void wantfile_fini(struct wantfile *w)
{
	free(w->buf);
	w->buf = NULL;
}

int wantfile_read(struct wantfile *w, uint64_t token)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(w->path, &st) != 0 || !S_ISREG(st.st_mode)) {
		w->st.st_ino = 0;
		return 0;
	}
	if (w->st.st_ino && st.st_ino == w->st.st_ino && st.st_size == w->st.st_size &&
	    st.st_mtim.tv_sec == w->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == w->st.st_mtim.tv_nsec)
		return w->answer;
	w->st.st_ino = 0; /* until it is read */
	if (!w->buf && !(w->buf = malloc(FG_WANT_MAX)))
		return 0;
	fd = open(w->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, w->buf, FG_WANT_MAX);
	close(fd);
	if (n < 0) {
		w->st.st_ino = 0;
		return 0;
	}
	w->st = st;
	w->answer = wantfile_listed(w->buf, (size_t)n, token);
	wantfile_events(w->buf, (size_t)n, token, &w->events);
	return w->answer;
}

void wantfile_read_events(struct wantfile *w, uint64_t token, struct want_events *out)
{
	memset(out, 0, sizeof(*out));
	(void)wantfile_read(w, token);
	if (w->st.st_ino)
		*out = w->events;
}

bool wantfile_listed(const char *buf, size_t len, uint64_t token)
{
	char want[17];
	size_t i = 0;

	if (token == 0)
		return false;
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)token);
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;

		if (end - i == 16 && memcmp(buf + i, want, 16) == 0)
			return true;
		i = end + 1;
	}
	return false;
}

/* The decimal number v[0..len) in [lo, hi]: 0 and *out, or -1 (no digits, another byte, out). */
static int parse_dec(const char *v, size_t len, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t n = 0;

	if (len == 0 || len > 19)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (uint64_t)(v[i] - '0');
	}
	if (n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

/* Does word w[0..len) start with key (e.g. "alloc=")? Then *v is what follows. */
static bool word_key(const char *w, size_t len, const char *key, const char **v, size_t *vlen)
{
	size_t k = strlen(key);

	if (len < k || memcmp(w, key, k) != 0)
		return false;
	*v = w + k;
	*vlen = len - k;
	return true;
}

/* Apply one word of an events line to *out; unknown words and bad values change nothing. */
static void events_word(const char *w, size_t len, struct want_events *out)
{
	const char *v;
	size_t vlen;
	uint64_t n;

	if (len == 4 && memcmp(w, "live", 4) == 0) {
		out->on |= FGP_EVM_LIVE;
	} else if (len == 7 && memcmp(w, "vthread", 7) == 0) {
		out->on |= FGP_EVM_VTHREAD;
	} else if (len == 6 && memcmp(w, "vmount", 6) == 0) {
		out->on |= FGP_EVM_VMOUNT;
	} else if (len == 4 && memcmp(w, "vcpu", 4) == 0) {
		out->on |= FGP_EVM_VCPU;
	} else if (len == 4 && memcmp(w, "vtid", 4) == 0) {
		out->on |= FGP_EVM_VTID;
	} else if (len == 10 && memcmp(w, "allocexact", 10) == 0) {
		out->on |= FGP_EVM_EXACT;
	} else if (len == sizeof(ALLOCRING_WANT_WORD) - 1 &&
		   memcmp(w, ALLOCRING_WANT_WORD, len) == 0) {
		out->on |= FGP_EVM_RING;
	} else if (word_key(w, len, "alloc=", &v, &vlen)) {
		if (parse_dec(v, vlen, 1, WANT_ALLOC_MAX, &n) == 0) {
			out->on |= FGP_EVM_ALLOC;
			out->alloc_interval = n;
		}
	} else if (word_key(w, len, "lock=", &v, &vlen)) {
		if (parse_dec(v, vlen, 0, WANT_LOCK_MAX_US, &n) == 0) {
			out->on |= FGP_EVM_LOCK;
			out->lock_ns = n * 1000;
		}
	} else if (word_key(w, len, "depth=", &v, &vlen)) {
		if (parse_dec(v, vlen, 1, FGP_MAX_EVENT_DEPTH, &n) == 0)
			out->depth = (uint32_t)n;
	} else if (word_key(w, len, "budget=", &v, &vlen)) {
		if (parse_dec(v, vlen, 0, WANT_BUDGET_MAX_PPM, &n) == 0)
			out->budget_ppm = (uint32_t)n;
	}
}

void wantfile_events(const char *buf, size_t len, uint64_t token, struct want_events *out)
{
	static const char word[] = " " FG_WANT_EVENTS_WORD;
	const size_t head = 16 + sizeof(word) - 1;
	char want[17];
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (token == 0)
		return;
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)token);
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len, w;

		if (!nl)
			return; /* a cut-off line: the collector is still writing it */
		if (end - i < head || memcmp(buf + i, want, 16) != 0 ||
		    memcmp(buf + i + 16, word, sizeof(word) - 1) != 0 ||
		    (end - i > head && buf[i + head] != ' ')) {
			i = end + 1;
			continue;
		}
		for (w = i + head; w < end;) {
			const char *sp;
			size_t we;

			w++; /* the space before the word */
			sp = memchr(buf + w, ' ', end - w);
			we = sp ? (size_t)(sp - buf) : end;
			events_word(buf + w, we - w, out);
			w = we;
		}
		if (!(out->on & FGP_EVM_ALLOC))
			out->on &= ~FGP_EVM_LIVE; /* live needs alloc= */
		return;
	}
}
