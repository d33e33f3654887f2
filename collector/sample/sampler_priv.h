/* SPDX-License-Identifier: MIT */
/*
 * sampler_priv.h - the sampler's own state, shared by its two files: sampler.c (opening the
 * events and rings, adding and removing targets) and sampler_drain.c (the time-merged drain of
 * the rings). Not installed, included by no other file.
 */
#ifndef FG_SAMPLER_PRIV_H
#define FG_SAMPLER_PRIV_H

#include "sampler.h"

#include "htab.h"
#include "perfring.h"
#include "pidfilter.h"
#include "switchbpf.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MAX_CPUS 4096
#define MAX_TARGETS 65536 /* processes, SCOPE_CPUS children included */

struct ring {
	int fd; /* the dummy event that owns the buffer */
	int cpu;
	void *map;
	size_t map_len;
	struct perf_event_mmap_page *pg;
	uint8_t *bounce;
	struct perfring_reader rd;
	struct perfring_rec cur;
	bool has_cur;
	uint64_t cur_start; /* ring position of `cur` */
	uint64_t last_time;
	uint64_t *payload; /* off-CPU by BPF: `cur`'s record, copied 8-byte aligned */
};

enum evt_kind { EVT_CPU, EVT_SWITCH, EVT_BPF_OUTPUT };

struct evt {
	int fd;
	pid_t pid; /* the target process */
	enum evt_kind kind;
};

/* Per-thread dedup state (SCOPE_THREADS): the event owner a thread is locked to. */
#define LOCK_EXITED (1ull << 63)

struct sampler {
	struct sampler_info info;
	char bpf_why[SWITCHBPF_WHY_MAX]; /* info.switch_bpf_why when the program was refused */
	struct sampler_stats st;
	struct perfring_format fmt;
	struct perf_event_attr attr;
	struct perf_event_attr sw_attr; /* off-CPU, wall: the sched_switch event per thread, or
					 * the BPF program's output event per CPU */
	int epfd;
	struct ring *rings;
	unsigned int nrings;
	struct evt *evts;
	size_t nevts, capevts;
	struct htab owner;    /* event id -> tid it was opened for */
	struct htab lock;     /* tid -> owner tid, | LOCK_EXITED once it exited */
	struct htab opened;   /* pid << 32 | tid -> 1: threads covered (own or inherited) */
	struct htab targets;  /* pid -> 1 */
	struct htab swids;    /* event id -> 1: a sched_switch event */
	struct htab bpfids;   /* event id -> 1: a BPF output event (off-CPU by BPF) */
	struct pidfilter *pf; /* SCOPE_CPUS: the targets' samples kept in the kernel, or NULL */
	struct switchbpf *sb; /* off-CPU by BPF, or NULL */
	bool disabled;	      /* sampler_disable(): every record is in the rings */
	bool thread_filter;   /* ... which leaves out threads by name */
	uint64_t sched_lo, sched_hi; /* __schedule's text: where a BPF kernel chain starts */
	int cpus[MAX_CPUS];	     /* online CPUs: a ring each */
	char tracefs_dir[64];
	void (*listed)(void *arg, pid_t pid, pid_t tid); /* sampler_opts.listed */
	void *listed_arg;
};

#endif /* FG_SAMPLER_PRIV_H */
