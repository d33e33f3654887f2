/* SPDX-License-Identifier: MIT */
/*
 * pidfilter_skel.h - the generated skeleton's types (struct pidfilter_bpf: its map and program)
 * and its open, load and destroy, called through pidfilter_skel.c.
 */
#ifndef FG_PIDFILTER_SKEL_H
#define FG_PIDFILTER_SKEL_H

#include "pidfilter.skel.h"

/* pidfilter_bpf__open/__load/__destroy (libbpf's contracts: NULL with errno, -errno, NULL ok). */
struct pidfilter_bpf *pidfilter_skel_open(void);
int pidfilter_skel_load(struct pidfilter_bpf *s);
void pidfilter_skel_destroy(struct pidfilter_bpf *s);

#endif
