/* SPDX-License-Identifier: MIT */
/*
 * bpf_skel.h - the generated skeletons' types (struct switch_bpf: the off-CPU program's
 * read-only data, maps and program; struct pidfilter_bpf: the filter's map and program) and
 * their open, load and destroy, called through bpf_skel.c.
 */
#ifndef FG_BPF_SKEL_H
#define FG_BPF_SKEL_H

#include "pidfilter.skel.h"
#include "switch.skel.h"

/*
 * <skeleton>__open/__load/__destroy of bpf/switch.bpf.c and bpf/pidfilter.bpf.c (libbpf's
 * contracts: NULL with errno, -errno, NULL ok).
 */
struct switch_bpf *switchbpf_skel_open(void);
int switchbpf_skel_load(struct switch_bpf *s);
void switchbpf_skel_destroy(struct switch_bpf *s);

struct pidfilter_bpf *pidfilter_skel_open(void);
int pidfilter_skel_load(struct pidfilter_bpf *s);
void pidfilter_skel_destroy(struct pidfilter_bpf *s);

#endif
