// SPDX-License-Identifier: MIT
/*
 * pidfilter.c - keep a CPU-wide event's samples of the target processes only, in the kernel:
 * the loader of bpf/pidfilter.bpf.c (its skeleton, through libbpf) and the map it reads.
 *
 * libbpf's error space stops here: its calls return -errno (1.x) or NULL with errno set, and
 * its diagnostics are silenced (the caller says what failed).
 */
#include "pidfilter.h"

#include "bpf_skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>

struct pidfilter {
	struct pidfilter_bpf *skel;
	int map_fd;
	int prog_fd;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int pidfilter_open(struct pidfilter **out)
{
	static bool silenced;
	struct pidfilter *f = calloc(1, sizeof(*f));
	int rv;

	if (!f)
		return -ENOMEM;
	if (!silenced) {
		libbpf_set_print(quiet);
		silenced = true;
	}
	f->skel = pidfilter_skel_open();
	if (!f->skel) {
		rv = errno ? -errno : -ENOMEM;
		goto fail;
	}
	/* The program is of type BPF_PROG_TYPE_PERF_EVENT (its SEC("perf_event")). */
	if ((rv = bpf_map__set_max_entries(f->skel->maps.fg_pids, PIDFILTER_MAX)) != 0)
		goto fail;
	if ((rv = pidfilter_skel_load(f->skel)) != 0)
		goto fail;
	f->map_fd = bpf_map__fd(f->skel->maps.fg_pids);
	f->prog_fd = bpf_program__fd(f->skel->progs.fg_pidfilter);
	if (f->map_fd < 0 || f->prog_fd < 0) {
		rv = -EBADF;
		goto fail;
	}
	*out = f;
	return 0;
fail:
	pidfilter_close(f);
	return rv < 0 ? rv : -EINVAL;
}

int pidfilter_attach(struct pidfilter *f, int perf_fd)
{
	return ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, f->prog_fd) < 0 ? -errno : 0;
}

int pidfilter_add(struct pidfilter *f, uint32_t tgid)
{
	uint32_t one = 1;

	return bpf_map_update_elem(f->map_fd, &tgid, &one, BPF_ANY) < 0 ? -errno : 0;
}

int pidfilter_remove(struct pidfilter *f, uint32_t tgid)
{
	if (bpf_map_delete_elem(f->map_fd, &tgid) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

void pidfilter_close(struct pidfilter *f)
{
	if (!f)
		return;
	pidfilter_skel_destroy(f->skel);
	free(f);
}
