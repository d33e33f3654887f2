// SPDX-License-Identifier: MIT
/*
 * pidfilter_skel.c - the calls into the skeleton bpftool generates from bpf/pidfilter.bpf.c,
 * kept in a file of their own: the generated code is libbpf's, not ours, and the static
 * analysis that lints ours (scripts/lint.sh) does not follow its memory through libbpf.
 */
#include "pidfilter_skel.h"

struct pidfilter_bpf *pidfilter_skel_open(void)
{
	return pidfilter_bpf__open();
}

int pidfilter_skel_load(struct pidfilter_bpf *s)
{
	return pidfilter_bpf__load(s);
}

void pidfilter_skel_destroy(struct pidfilter_bpf *s)
{
	pidfilter_bpf__destroy(s);
}
