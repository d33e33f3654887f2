/* SPDX-License-Identifier: MIT */
/*
 * pidfilter.h - a kernel-side filter of CPU-wide sampling events by process: a BPF program of
 * type BPF_PROG_TYPE_PERF_EVENT attached to each event (PERF_EVENT_IOC_SET_BPF) keeps a sample
 * only when the interrupted task's process (its tgid in the initial PID namespace) is in a
 * hash map the collector fills. The kernel runs it before it walks the call chain or copies
 * the user stack, so other processes' samples cost neither the machine nor the collector.
 *
 * Needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): a collector without them filters in user
 * space instead (pidfilter_open's error says so). The program is bpf/pidfilter.bpf.c, built
 * and loaded like every BPF program here: clang for the BPF target, bpftool's skeleton, libbpf.
 *
 * Not thread-safe: one thread opens, fills and closes it.
 */
#ifndef FG_PIDFILTER_H
#define FG_PIDFILTER_H

#include <stdint.h>

#define PIDFILTER_MAX 65536 /* processes the map holds */

struct pidfilter;

/* Load the map and the program. 0, or a negative errno (-EPERM: not privileged). */
int pidfilter_open(struct pidfilter **out);

/* Filter the samples of perf event perf_fd. 0 or a negative errno. */
int pidfilter_attach(struct pidfilter *f, int perf_fd);

/* Keep (add) or stop keeping (remove) the samples of process tgid. 0 or a negative errno;
 * removing one that is not there is 0. */
int pidfilter_add(struct pidfilter *f, uint32_t tgid);
int pidfilter_remove(struct pidfilter *f, uint32_t tgid);

/* Close it (the events keep the program until they are closed). NULL is fine. */
void pidfilter_close(struct pidfilter *f);

#endif
