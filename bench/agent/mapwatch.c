// SPDX-License-Identifier: MIT
/*
 * bench/agent/mapwatch.c - fg_bench_mapwatch DIR OUT: when each line of each perf-PID.map in
 * DIR first became visible, for the map's latency in bench/agent/jdks.sh.
 *
 * Watches DIR with inotify (a map replaced by a rename, or appended to) and, at each wake-up,
 * reads every map that changed and writes "PID ADDR_HEX TS_NS" to OUT for each line that its
 * previous read of that map did not have (so a line that comes back, e.g. a method compiled
 * again to the same address with the same size, is reported again). TS_NS is the
 * CLOCK_MONOTONIC time the read ended: a line written during the read is there by then, while
 * a stamp taken before the read could precede the very callback that announced the line's
 * code. Runs until SIGTERM or SIGINT.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "fgclock.h"

#define MAX_PIDS 4096
#define MAX_MAP (64u << 20) /* a map larger than this is read only this far */

struct lineset {
	uint64_t *h; /* open addressing, 0 = empty */
	size_t cap, n;
};

struct seen {
	uint32_t pid;
	struct lineset set[2]; /* the last read's lines and this read's */
	unsigned last;
	char *buf;
	size_t buf_cap;
};

static struct seen pids[MAX_PIDS];
static unsigned n_pids;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t hash_line(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ? h : 1;
}

static bool set_has(const struct lineset *p, uint64_t h)
{
	if (!p->cap)
		return false;
	for (size_t i = h & (p->cap - 1); p->h[i]; i = (i + 1) & (p->cap - 1))
		if (p->h[i] == h)
			return true;
	return false;
}

/* Insert h; 1 if it was new, 0 if known, -ENOMEM. */
static int set_add(struct lineset *p, uint64_t h)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		uint64_t *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t k = 0; k < p->cap; k++) {
			if (!p->h[k])
				continue;
			for (i = p->h[k] & (cap - 1); t[i]; i = (i + 1) & (cap - 1))
				;
			t[i] = p->h[k];
		}
		free(p->h);
		p->h = t;
		p->cap = cap;
	}
	for (i = h & (p->cap - 1); p->h[i]; i = (i + 1) & (p->cap - 1))
		if (p->h[i] == h)
			return 0;
	p->h[i] = h;
	p->n++;
	return 1;
}

static struct seen *pid_state(uint32_t pid)
{
	for (unsigned i = 0; i < n_pids; i++)
		if (pids[i].pid == pid)
			return &pids[i];
	if (n_pids == MAX_PIDS)
		return NULL;
	pids[n_pids].pid = pid;
	return &pids[n_pids++];
}

/* "perf-PID.map" -> PID, else 0. */
static uint32_t map_pid(const char *name)
{
	unsigned long v;
	char *end;

	if (strncmp(name, "perf-", 5) != 0 || name[5] < '0' || name[5] > '9')
		return 0;
	errno = 0;
	v = strtoul(name + 5, &end, 10);
	if (errno || v == 0 || v > UINT32_MAX || strcmp(end, ".map") != 0)
		return 0;
	return (uint32_t)v;
}

/* Read DIR/perf-PID.map and report its new lines, seen when the read ended. */
static void scan(int dfd, uint32_t pid, FILE *out)
{
	struct seen *p = pid_state(pid);
	char name[32];
	struct lineset *cur;
	size_t len = 0;
	uint64_t h, ts;
	ssize_t r;
	int fd;

	if (!p)
		return;
	snprintf(name, sizeof(name), "perf-%" PRIu32 ".map", pid);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		if (len == p->buf_cap) {
			size_t cap = p->buf_cap ? 2 * p->buf_cap : 1u << 16;
			char *b;

			if (cap > MAX_MAP || (b = realloc(p->buf, cap)) == NULL)
				break;
			p->buf = b;
			p->buf_cap = cap;
		}
		r = read(fd, p->buf + len, p->buf_cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	ts = fg_now_ns();
	cur = &p->set[!p->last];
	if (cur->cap)
		memset(cur->h, 0, cur->cap * sizeof(*cur->h));
	cur->n = 0;
	for (size_t at = 0; at < len;) {
		char *nl = memchr(p->buf + at, '\n', len - at);
		size_t n;

		if (!nl)
			break; /* a line still being written: the next read has it whole */
		n = (size_t)(nl - (p->buf + at));
		h = hash_line(p->buf + at, n);
		if (n && set_add(cur, h) == 1 && !set_has(&p->set[p->last], h))
			fprintf(out, "%" PRIu32 " %.*s %" PRIu64 "\n", pid,
				(int)strcspn(p->buf + at, " \n"), p->buf + at, ts);
		at += n + 1;
	}
	p->last = !p->last;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char ev[64 * 1024] __attribute__((aligned(8)));
	uint32_t changed[256];
	FILE *out;
	int in, dfd;

	if (argc != 3) {
		fprintf(stderr, "usage: fg_bench_mapwatch DIR OUT\n");
		return 64;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	in = inotify_init1(IN_CLOEXEC);
	out = fopen(argv[2], "w");
	if (dfd < 0 || in < 0 || !out ||
	    inotify_add_watch(in, argv[1], IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		fprintf(stderr, "fg_bench_mapwatch: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (!stop) {
		struct pollfd pf = { .fd = in, .events = POLLIN };
		unsigned n_changed = 0;
		ssize_t len;

		if (poll(&pf, 1, -1) <= 0)
			continue;
		len = read(in, ev, sizeof(ev));
		for (ssize_t at = 0; at < len;) {
			const struct inotify_event *e = (const void *)(ev + at);
			uint32_t pid = e->len ? map_pid(e->name) : 0;
			unsigned k = 0;

			while (k < n_changed && changed[k] != pid)
				k++;
			if (pid && k == n_changed && n_changed < 256)
				changed[n_changed++] = pid;
			at += (ssize_t)(sizeof(*e) + e->len);
		}
		for (unsigned k = 0; k < n_changed; k++)
			scan(dfd, changed[k], out);
	}
	fclose(out);
	return 0;
}
