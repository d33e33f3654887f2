/* SPDX-License-Identifier: MIT */
/*
 * switchbpf_skel.h - the generated skeleton's types (struct switch_bpf: its read-only data,
 * maps and program) and its open, load and destroy, called through switchbpf_skel.c.
 */
#ifndef FG_SWITCHBPF_SKEL_H
#define FG_SWITCHBPF_SKEL_H

#include "switch.skel.h"

/* switch_bpf__open/__load/__destroy (libbpf's contracts: NULL with errno, -errno, NULL ok). */
struct switch_bpf *switchbpf_skel_open(void);
int switchbpf_skel_load(struct switch_bpf *s);
void switchbpf_skel_destroy(struct switch_bpf *s);

#endif
